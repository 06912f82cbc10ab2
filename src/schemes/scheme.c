/* scheme.c -- choosing a scheme, and what every scheme shares. */
#include <string.h>

#include "schemes/fg_scheme.h"

fg_status fg_scheme_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                           fg_scheme **out) {
  fg_status st = FG_OK;
  const char *name = cfg->name ? cfg->name : (dist->size == 1 ? "serial" : "1d-sa");
  *out = NULL;
  FG_REQUIRE(!cfg->reorder || strcmp(cfg->reorder, "none") == 0 ||
                 strcmp(cfg->reorder, "auto") == 0 || strcmp(name, "serial") == 0,
             FG_ERR_INVALID_ARG,
             "--reorder %s applies to --scheme serial (one process); this run uses %s "
             "(use --order for the layout over ranks)", cfg->reorder, name);
  if (strcmp(name, "serial") == 0) {
    FG_REQUIRE(dist->size == 1, FG_ERR_INVALID_ARG,
               "--scheme serial runs on one process, but %d were started; "
               "use --scheme 1d or 1d-sa", dist->size);
    FG_CHECK(fg_scheme_serial_create(dist, ds, cfg, out));
  } else if (strcmp(name, "1d") == 0) {
    FG_CHECK(fg_scheme_1d_create(dist, ds, cfg, out));
  } else if (strcmp(name, "1d-sa") == 0) {
    FG_CHECK(fg_scheme_1d_sa_create(dist, ds, cfg, out));
  } else {
    FG_FAIL(FG_ERR_INVALID_ARG, "unknown scheme '%s' (available: serial, 1d, 1d-sa)", name);
  }
cleanup:
  return st;
}

void fg_scheme_destroy(fg_scheme **s) {
  if (!s || !*s) return;
  if ((*s)->ops && (*s)->ops->destroy) (*s)->ops->destroy(*s);
  free((*s)->global_ids);
  if (!(*s)->features_borrowed) free((*s)->features);
  free((*s)->labels);
  free((*s)->split);
  free(*s);
  *s = NULL;
}

fg_status fg_scheme_fill_local(fg_scheme *s, const fg_dataset *ds, const int64_t *gids,
                               int64_t n_local, int normalize_features) {
  fg_status st = FG_OK;
  const int64_t F = ds->num_features;
  s->n_global = ds->num_nodes;
  s->n_local = n_local;
  s->num_features = F;
  s->num_classes = ds->num_classes;
  int64_t same = n_local == ds->num_nodes;
  for (int64_t i = 0; same && i < n_local; i++) same = gids[i] == i;
  FG_ALLOC(s->global_ids, n_local);
  FG_ALLOC(s->labels, n_local);
  FG_ALLOC(s->split, n_local);
  if (!normalize_features) {
    /* the dataset's matrix as it is: borrow it rather than hold it twice (the largest input
     * of a run; fg_train_memory counts it once in this case); rows in another order are read
     * through global_ids (the model's input pass gathers them) */
    s->features = ds->features;
    s->features_borrowed = 1;
    s->feature_rows = same ? NULL : s->global_ids;
  } else {
    s->features = fg_malloc_huge((size_t)(n_local * F) * sizeof(float));
    FG_REQUIRE(s->features != NULL, FG_ERR_NOMEM, "out of memory for %lld x %lld features",
               (long long)n_local, (long long)F);
  }
  for (int64_t i = 0; i < n_local; i++) {
    const int64_t g = gids[i];
    s->global_ids[i] = g;
    if (!s->features_borrowed)
      memcpy(s->features + i * F, ds->features + g * F, (size_t)F * sizeof(float));
    s->labels[i] = ds->labels ? ds->labels[g] : -1;
    s->split[i] = ds->split ? ds->split[g] : FG_SPLIT_NONE;
  }
  if (normalize_features) fg_row_normalize(s->features, n_local, F);
cleanup:
  return st;
}

void fg_scheme_count_spmm(fg_scheme *s, const fg_csr *A, int64_t f) {
  s->spmm_bytes += (double)A->nnz * 8.0 + (double)A->nnz * (double)f * 4.0 +
                   (double)A->nrows * (double)f * 4.0;
}

int fg_agg_first(int agg_order, int l, int64_t w_in, int64_t w_out) {
  /* Aggregating first costs an SpMM at width w_in forward and (except layer 0, whose input
   * gradient is not needed) one backward; aggregating last costs SpMMs at width w_out both
   * ways. */
  if (agg_order == FG_AGG_FIRST) return 1;
  if (agg_order == FG_AGG_LAST) return 0;
  return l == 0 ? w_in < 2 * w_out : w_in < w_out;
}
