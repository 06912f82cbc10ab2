/* scheme_serial.c -- one process holds the whole graph; aggregation is one local SpMM. */
#include <string.h>

#include "graph/fg_order.h"
#include "schemes/fg_scheme.h"

typedef struct serial_impl {
  fg_csr A;   /* Â: the run's operator (fg_adj_operator) */
  fg_csr At;  /* Âᵀ when Â is not symmetric (its values: a row-normalized Â is not) */
  int symmetric;
} serial_impl;

static fg_status serial_aggregate(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  serial_impl *im = s->impl;
  return fg_scheme_spmm(s, &im->A, in, f, out, 0);
}

/* bf16 rows as they are: aggregate would round their widened values back to the same rows */
static fg_status serial_aggregate16(fg_scheme *s, int l, const fg_bf16 *in, float *out,
                                    int64_t f) {
  serial_impl *im = s->impl;
  fg_scheme_spmm_bf16(s, &im->A, in, f, out, 0);
  return FG_OK;
}

static fg_status serial_aggregate_t(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  serial_impl *im = s->impl;
  return fg_scheme_spmm(s, im->symmetric ? &im->A : &im->At, in, f, out, 0);
}

static fg_status serial_aggregate16_t(fg_scheme *s, int l, const fg_bf16 *in, float *out,
                                      int64_t f) {
  serial_impl *im = s->impl;
  (void)l;
  fg_scheme_spmm_bf16(s, im->symmetric ? &im->A : &im->At, in, f, out, 0);
  return FG_OK;
}

static fg_status serial_aggregate16_rows(fg_scheme *s, int l, int t, const fg_bf16 *in,
                                         int64_t f, int64_t block, fg_rows_sink sink,
                                         void *ctx) {
  serial_impl *im = s->impl;
  (void)l;
  return fg_scheme_spmm_rows(s, t && !im->symmetric ? &im->At : &im->A, in, f, block, sink,
                             ctx);
}

static void serial_destroy(fg_scheme *s) {
  serial_impl *im = s->impl;
  fg_csr_free(&im->A);
  fg_csr_free(&im->At);
}

static const fg_scheme_ops serial_ops = {
    .name = "serial",
    .shape = fg_scheme_shape_rows,
    .aggregate = serial_aggregate,
    .aggregate16 = serial_aggregate16,
    .aggregate_t = serial_aggregate_t,
    .aggregate16_t = serial_aggregate16_t,
    .aggregate16_rows = serial_aggregate16_rows,
    .reduce_grads = fg_scheme_allreduce_grads,
    .agg_last_ok = 1,
    .destroy = serial_destroy,
};

fg_status fg_scheme_serial_create(fg_dist *dist, const fg_dataset *ds,
                                  const fg_scheme_config *cfg, fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  serial_impl *im = NULL;
  int64_t *ids = NULL, *inv = NULL;
  fg_reorder_kind reorder = FG_REORDER_NONE;
  fg_csr N; /* Â in the dataset's numbering */
  memset(&N, 0, sizeof N);
  FG_REQUIRE(ds != NULL, FG_ERR_INVALID_ARG, "serial scheme: no dataset");
  FG_CHECK(fg_reorder_parse(cfg->reorder, &reorder));
  FG_CALLOC(s, 1);
  FG_CALLOC(im, 1);
  s->ops = &serial_ops;
  s->dist = dist;
  s->impl = im;
  FG_ALLOC(ids, ds->num_nodes);
  if (reorder == FG_REORDER_AUTO) {
    /* the order whose gathers hit a simulated cache most; ids holds it */
    fg_reorder_choice choice;
    FG_CHECK(fg_reorder_auto(&ds->adj, 4 * FG_MAX(cfg->reorder_width, 1), fg_cache_bytes(), ids,
                             &choice));
    fg_reorder_describe(&choice, s->note, sizeof s->note);
    reorder = choice.kind;
  } else if (reorder != FG_REORDER_NONE) {
    FG_CHECK(fg_reorder_compute(&ds->adj, reorder, ids));
  }
  s->reorder_used = fg_reorder_name(reorder);
  FG_CHECK(fg_adj_operator(&ds->adj, cfg->adj, &N));
  if (reorder == FG_REORDER_NONE) {
    for (int64_t i = 0; i < ds->num_nodes; i++) ids[i] = i;
    im->A = N;
    memset(&N, 0, sizeof N);
  } else {
    /* --reorder: rows and columns in the new order; row k keeps its original id ids[k]
     * (dropout masks, outputs, and the features it reads from the dataset), so nothing
     * visible changes */
    FG_ALLOC(inv, ds->num_nodes);
    fg_order_invert(ids, ds->num_nodes, inv);
    FG_CHECK(fg_csr_permute(&N, ids, inv, &im->A));
  }
  /* the backward reuses Â when its values are symmetric, which needs a symmetric pattern */
  im->symmetric = ds->symmetric && fg_csr_is_symmetric(&im->A);
  if (!im->symmetric) FG_CHECK(fg_csr_transpose(&im->A, &im->At));
  FG_CHECK(fg_scheme_fill_local(s, ds, ids, ds->num_nodes, cfg->normalize_features,
                                cfg->features16));
  s->local_nnz = im->A.nnz;
  *out = s;
  s = NULL;
cleanup:
  fg_csr_free(&N);
  free(ids);
  free(inv);
  fg_scheme_destroy(&s);
  return st;
}
