/* test_data.c -- see test_data.h. */
#include "test_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fg_order.h"

const char *test_data_name(int which) {
  static const char *const names[] = {"cora", "rmat9-directed", "tiny4", "rmat8-directed",
                                      "path5"};
  return which >= 0 && which < TEST_DATA_COUNT ? names[which] : "?";
}

/* A dataset over a CSR built from edges, with generated features (and labels and split unless
 * given). */
static fg_status from_edges(int64_t n, const int64_t *src, const int64_t *dst, int64_t m,
                            int undirected, int64_t F, int64_t C, fg_dataset **out) {
  fg_status st = FG_OK;
  fg_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) return FG_ERR_NOMEM;
  ds->num_nodes = n;
  st = fg_csr_from_edges(n, src, dst, m, undirected, 1, 1, &ds->adj);
  if (st == FG_OK) {
    ds->symmetric = fg_csr_is_symmetric(&ds->adj);
    ds->num_features = F;
    ds->num_classes = C;
    st = fg_generate_features(n, F, 5, &ds->features);
  }
  if (st == FG_OK) st = fg_generate_labels(&ds->adj, C, 5, &ds->labels);
  if (st == FG_OK) st = fg_generate_split(n, ds->labels, 0.5, 0.25, 5, &ds->split);
  if (st != FG_OK) fg_dataset_destroy(&ds);
  *out = ds;
  return st;
}

fg_status test_data_make(int which, fg_dataset **out) {
  fg_status st = FG_OK;
  *out = NULL;
  if (which == TEST_DATA_CORA) {
    fg_load_config lc = fg_load_config_default();
    st = fg_dataset_load(FG_DEMO_DATA, &lc, out);
  } else if (which == TEST_DATA_RMAT) {
    int64_t *src = NULL, *dst = NULL, m = 0;
    st = fg_rmat_edges(9, 8, 3, &src, &dst, &m);
    if (st == FG_OK) st = from_edges(512, src, dst, m, 0, 24, 4, out);
    free(src);
    free(dst);
  } else if (which == TEST_DATA_TINY) {
    const int64_t src[3] = {0, 1, 2}, dst[3] = {1, 2, 3};
    st = from_edges(4, src, dst, 3, 1, 3, 2, out);
    if (st == FG_OK) {
      /* fixed labels and split: two training nodes of different classes */
      const int32_t labels[4] = {0, 1, 0, 1};
      const int8_t split[4] = {FG_SPLIT_TRAIN, FG_SPLIT_TRAIN, FG_SPLIT_VALID, FG_SPLIT_TEST};
      memcpy((*out)->labels, labels, sizeof labels);
      memcpy((*out)->split, split, sizeof split);
    }
  } else if (which == TEST_DATA_RMAT8) {
    int64_t *src = NULL, *dst = NULL, m = 0;
    st = fg_rmat_edges(8, 8, 7, &src, &dst, &m);
    if (st == FG_OK) st = from_edges(256, src, dst, m, 0, 20, 5, out);
    free(src);
    free(dst);
  } else if (which == TEST_DATA_PATH5) {
    const int64_t src[4] = {0, 1, 2, 3}, dst[4] = {1, 2, 3, 4};
    st = from_edges(5, src, dst, 4, 1, 3, 2, out);
    if (st == FG_OK) {
      const int32_t labels[5] = {0, 1, 0, 1, 1};
      const int8_t split[5] = {FG_SPLIT_TRAIN, FG_SPLIT_TRAIN, FG_SPLIT_VALID, FG_SPLIT_TEST,
                               FG_SPLIT_TRAIN};
      memcpy((*out)->labels, labels, sizeof labels);
      memcpy((*out)->split, split, sizeof split);
    }
  } else {
    st = FG_ERR_INVALID_ARG;
  }
  return st;
}

int test_have_metis(void) {
  fg_order_kind k;
  return fg_order_parse("metis", &k) == FG_OK;
}

fg_status test_cora_prepared(const char *base, const char *name, int directed, int64_t blocks,
                             uint64_t seed, int write, fg_dataset **ds, char *dir, size_t size) {
  fg_status st = FG_OK;
  snprintf(dir, size, "%s/%s", base, name);
  if (!*ds) {
    fg_load_config lc = fg_load_config_default();
    lc.undirected = !directed;
    lc.dedup = 1;
    st = fg_dataset_load(FG_DEMO_DATA, &lc, ds);
  }
  if (st == FG_OK && write) {
    fg_prepare_config pc = fg_prepare_config_default();
    pc.blocks = (int)blocks;
    pc.order = "random";
    pc.seed = seed;
    st = fg_dataset_prepare(*ds, &pc, dir);
  }
  return st;
}
