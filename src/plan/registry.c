/* registry.c -- the table of schemes. One row a scheme; see fg_registry.h. */
#include <stdio.h>
#include <string.h>

#include "plan/fg_plan.h"
#include "graph/fg_order.h"
#include "plan/fg_registry.h"

static int default_one_rank(int ranks) { return ranks == 1; }
static int default_many_ranks(int ranks) { return ranks > 1; }

static const fg_scheme_info registry[] = {
    {.name = "serial",
     .summary = "one process holds the whole graph; aggregation is one SpMM",
     .create = fg_scheme_serial_create,
     .options = FG_SOPT_REORDER | FG_SOPT_AGG_LAST | FG_SOPT_LABEL_PROP,
     .max_ranks = 1,
     .is_default = default_one_rank,
     .predict = fg_plan_predict_1d,
     .volume = FG_VOLUME_NONE,
     .borrows_features = 1,
     .rows16 = 1,
     .plan_min_ranks = 1},
    {.name = "1d",
     .summary = "block rows, staged broadcasts of whole blocks (MG-GCN)",
     .create = fg_scheme_1d_create,
     .options = FG_SOPT_ORDER_RANDOM | FG_SOPT_ORDER_METIS | FG_SOPT_OVERLAP | FG_SOPT_AGG_LAST |
                FG_SOPT_LABEL_PROP,
     .predict = fg_plan_predict_1d,
     .volume = FG_VOLUME_BCAST,
     .plan_min_ranks = 2},
    {.name = "1d-sa",
     .summary = "block rows, exchange of only the referenced rows (sparsity-aware)",
     .create = fg_scheme_1d_sa_create,
     .options = FG_SOPT_ORDER_RANDOM | FG_SOPT_ORDER_METIS | FG_SOPT_OVERLAP | FG_SOPT_AGG_LAST |
                FG_SOPT_LABEL_PROP,
     .is_default = default_many_ranks,
     .predict = fg_plan_predict_1d,
     .volume = FG_VOLUME_HALO,
     .rows16 = 1, /* (not with --overlap) */
     .plan_min_ranks = 2},
    {.name = "1.5d",
     .summary = "P/c block rows on c replicas each, the referenced rows of a 1/c share of the "
                "block columns, an all-reduce over the replicas (sparsity-aware 1.5D)",
     .create = fg_scheme_1p5d_create,
     .options = FG_SOPT_ORDER_RANDOM | FG_SOPT_ORDER_METIS | FG_SOPT_OVERLAP | FG_SOPT_AGG_LAST |
                FG_SOPT_LABEL_PROP | FG_SOPT_REPLICATE,
     .predict = fg_plan_predict_1d,
     .volume = FG_VOLUME_HALO,
     .replicate = 1,
     .plan_min_ranks = 2},
    {.name = "halo",
     .summary = "vertex partition, a vertex cover of each cut sent pre- or post-aggregated, "
                "optionally int8/4/2 rows (SuperGCN)",
     .create = fg_scheme_halo_create,
     .options = FG_SOPT_ORDER_RANDOM | FG_SOPT_ORDER_METIS | FG_SOPT_AGG_LAST |
                FG_SOPT_AGGREGATION | FG_SOPT_QUANTIZE | FG_SOPT_LABEL_PROP,
     .predict = fg_plan_predict_1d,
     .volume = FG_VOLUME_COVER,
     .plan_min_ranks = 2,
     .default_order = "metis"},
    {.name = "3d",
     .summary = "an X x Y x Z grid, rows and columns cut in two dimensions (Plexus)",
     .create = fg_scheme_3d_create,
     .options = FG_SOPT_ORDER_RANDOM | FG_SOPT_GRID | FG_SOPT_DOUBLE_PERM | FG_SOPT_AGG_BLOCKS |
                FG_SOPT_LEARN_FEATURES | FG_SOPT_LABEL_PROP,
     .predict = fg_plan_predict_3d,
     .grid = 1,
     .plan_min_ranks = 1},
};

enum { N_SCHEMES = (int)(sizeof registry / sizeof registry[0]) };

int fg_scheme_registry_size(void) { return N_SCHEMES; }

const fg_scheme_info *fg_scheme_registry_at(int i) {
  return i >= 0 && i < N_SCHEMES ? &registry[i] : NULL;
}

uint32_t fg_scheme_bit(const fg_scheme_info *e) {
  return e && e >= registry && e < registry + N_SCHEMES ? 1u << (e - registry) : 0u;
}

const fg_scheme_info *fg_scheme_lookup(const char *name) {
  for (int i = 0; name && i < N_SCHEMES; i++)
    if (strcmp(registry[i].name, name) == 0) return &registry[i];
  return NULL;
}

/* The names of the rows that take option bit (0: of every row), comma-separated. */
static void join_names(unsigned bit, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < N_SCHEMES && k < len; i++)
    if (!bit || (registry[i].options & bit))
      k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ", " : "", registry[i].name);
}

const char *fg_scheme_names(void) {
  static char names[256];
  if (!names[0]) join_names(0, names, sizeof names);
  return names;
}

static const char *const option_flags[FG_SOPT_COUNT] = {
    "--order random", "--order metis|hypergraph|volume",
    "--overlap",      "--reorder",     "--agg-order last",
    "--grid",         "--double-perm", "--agg-blocks", "--learn-features", "--aggregation",
    "--quantize",     "--label-prop",  "--replicate"};

const char *fg_scheme_option_flag(unsigned bit) {
  for (int k = 0; k < FG_SOPT_COUNT; k++)
    if (bit == 1u << k) return option_flags[k];
  return "?";
}

unsigned fg_scheme_options_of(const fg_train_config *c) {
  unsigned o = 0;
  if (c->order && strcmp(c->order, "random") == 0) o |= FG_SOPT_ORDER_RANDOM;
  /* the partitioner orders: a scheme that takes one takes them all */
  if (c->order && (strcmp(c->order, "metis") == 0 || strcmp(c->order, "hypergraph") == 0 ||
                   strcmp(c->order, "volume") == 0))
    o |= FG_SOPT_ORDER_METIS;
  if (c->overlap) o |= FG_SOPT_OVERLAP;
  if (c->reorder && strcmp(c->reorder, "none") != 0 && strcmp(c->reorder, "auto") != 0)
    o |= FG_SOPT_REORDER;
  if (c->agg_order == FG_AGG_LAST) o |= FG_SOPT_AGG_LAST;
  if (c->grid) o |= FG_SOPT_GRID;
  if (c->double_perm) o |= FG_SOPT_DOUBLE_PERM;
  if (c->agg_blocks > 1) o |= FG_SOPT_AGG_BLOCKS;
  if (c->learn_features) o |= FG_SOPT_LEARN_FEATURES;
  if (c->aggregation) o |= FG_SOPT_AGGREGATION;
  if (c->quantize && strcmp(c->quantize, "none") != 0) o |= FG_SOPT_QUANTIZE;
  if (c->label_prop > 0) o |= FG_SOPT_LABEL_PROP;
  if (c->replicate != 0) o |= FG_SOPT_REPLICATE;
  return o;
}

const char *fg_scheme_order(const fg_scheme_info *e, const char *given) {
  fg_order_kind k;
  if (given) return given;
  if (e && e->default_order && fg_order_parse(e->default_order, &k) == FG_OK)
    return e->default_order;
  return NULL;
}

/* The first option of `given` that row e does not take (0: none). */
static unsigned refused(const fg_scheme_info *e, unsigned given) {
  const unsigned bad = given & ~e->options;
  return bad ? bad & (~bad + 1u) : 0u;
}

fg_status fg_scheme_resolve(const char *name, unsigned options, int ranks,
                            const fg_scheme_info **out, uint32_t *candidates) {
  fg_status st = FG_OK;
  char who[128];
  *out = NULL;
  *candidates = 0;
  if (name && strcmp(name, "auto") == 0) {
    unsigned all = 0;
    for (int i = 0; i < N_SCHEMES; i++) {
      all |= registry[i].options;
      if (!refused(&registry[i], options) &&
          (registry[i].max_ranks == 0 || ranks <= registry[i].max_ranks))
        *candidates |= 1u << i;
    }
    FG_REQUIRE(!(options & ~all), FG_ERR_INVALID_ARG, "%s is not an option of any scheme",
               fg_scheme_option_flag(options & ~all & (~(options & ~all) + 1u)));
    FG_REQUIRE(*candidates != 0, FG_ERR_INVALID_ARG,
               "--scheme auto: no scheme takes every option given on %d rank(s); drop one of "
               "them or name the scheme", ranks);
    return FG_OK;
  }
  if (!name) {
    for (int i = 0; i < N_SCHEMES && !*out; i++)
      if (registry[i].is_default && registry[i].is_default(ranks)) *out = &registry[i];
    FG_REQUIRE(*out != NULL, FG_ERR_INTERNAL, "no default scheme for %d ranks", ranks);
  } else {
    *out = fg_scheme_lookup(name);
    FG_REQUIRE(*out != NULL, FG_ERR_INVALID_ARG, "unknown scheme '%s' (available: %s, auto)",
               name, fg_scheme_names());
  }
  if (refused(*out, options)) {
    const unsigned bit = refused(*out, options);
    join_names(bit, who, sizeof who);
    FG_FAIL(FG_ERR_INVALID_ARG, "--scheme %s does not take %s (%s: %s)", (*out)->name,
            fg_scheme_option_flag(bit), who[0] ? "it is an option of" : "no scheme takes it",
            who[0] ? who : "-");
  }
  FG_REQUIRE((*out)->max_ranks == 0 || ranks <= (*out)->max_ranks, FG_ERR_INVALID_ARG,
             "--scheme %s runs on %s%d process%s, but %d were started; name another scheme "
             "(%s)", (*out)->name, (*out)->max_ranks == 1 ? "" : "at most ",
             (*out)->max_ranks, (*out)->max_ranks == 1 ? "" : "es", ranks, fg_scheme_names());
cleanup:
  if (st != FG_OK) *out = NULL;
  return st;
}

fg_status fg_scheme_create(fg_dist *d, const fg_dataset *ds, const fg_scheme_config *cfg,
                           fg_scheme **out) {
  fg_status st = FG_OK;
  const fg_scheme_info *e = NULL;
  uint32_t any = 0;
  *out = NULL;
  st = fg_scheme_resolve(cfg->name, 0, d->size, &e, &any);
  if (st == FG_OK && !e)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "name the scheme to create");
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(e->create(d, ds, cfg, out));
cleanup:
  return st;
}
