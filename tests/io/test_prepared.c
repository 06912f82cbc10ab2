/* test_prepared.c -- prepared datasets (io/io_prepared.c, graph/graph_prepared.c): a dataset
 * prepared in B blocks and read back whole is the dataset (pattern, features, labels or targets,
 * split, fingerprint), for several B and orders, a directed graph and multi-label targets; the
 * manifest encodes and parses back to itself, and every single-byte change of it is refused;
 * opening per rank gives the sizes and the source's fingerprint without the data. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fullgraph.h"
#include "graph/fg_graph.h"
#include "io/fg_prepared.h"
#include "testutil.h"

static char tmpdir[256];

static int same_fp(const fg_ds_fingerprint *a, const fg_ds_fingerprint *b) {
  return a->nodes == b->nodes && a->entries == b->entries && a->features == b->features &&
         a->classes == b->classes && a->graph == b->graph && a->feature_hash == b->feature_hash &&
         a->labels == b->labels && a->split == b->split;
}

/* ds prepared in `blocks` blocks in `order`, read back whole: the same dataset. */
static void round_trip(const fg_dataset *ds, int blocks, const char *order, const char *tag) {
  char dir[512];
  fg_prepare_config pc = fg_prepare_config_default();
  fg_dataset *back = NULL, *open = NULL;
  fg_ds_fingerprint a, b;
  snprintf(dir, sizeof dir, "%s/%s_%d_%s", tmpdir, tag, blocks, order);
  pc.blocks = blocks;
  pc.order = order;
  pc.seed = 5;
  EXPECT_OK(fg_dataset_prepare(ds, &pc, dir));
  EXPECT(fg_dataset_is_prepared(dir));
  EXPECT_OK(fg_dataset_load_prepared(dir, &back));
  if (!back) return;
  const int64_t n = ds->num_nodes, F = ds->num_features, T = ds->num_tasks;
  EXPECT(back->num_nodes == n && back->num_features == F && back->num_classes == ds->num_classes &&
         back->num_tasks == T && back->symmetric == ds->symmetric);
  EXPECT(back->adj.nnz == ds->adj.nnz);
  EXPECT(memcmp(back->adj.rowptr, ds->adj.rowptr, (size_t)(n + 1) * 8) == 0);
  EXPECT(memcmp(back->adj.col, ds->adj.col, (size_t)ds->adj.nnz * 4) == 0);
  EXPECT(memcmp(back->features, ds->features, (size_t)(n * F) * 4) == 0);
  if (T > 0)
    EXPECT(memcmp(back->targets, ds->targets, (size_t)(n * T)) == 0);
  else
    EXPECT(memcmp(back->labels, ds->labels, (size_t)n * 4) == 0);
  EXPECT(memcmp(back->split, ds->split, (size_t)n) == 0);
  EXPECT(back->prep_blocks == blocks && strcmp(back->prep_order, order) == 0 &&
         back->prep_seed == 5);
  fg_dataset_fingerprint(ds, &a);
  fg_dataset_fingerprint(back, &b);
  EXPECT_MSG(same_fp(&a, &b), "%s: fingerprint after the round trip", dir);
  /* per rank: the sizes and the fingerprint, no arrays */
  EXPECT_OK(fg_dataset_open_prepared(dir, &open));
  if (open) {
    fg_dataset_fingerprint(open, &b);
    EXPECT(same_fp(&a, &b) && open->num_nodes == n && open->adj.nnz == ds->adj.nnz &&
           open->adj.rowptr == NULL && open->features == NULL && open->prep_dir != NULL);
  }
  fg_dataset_destroy(&open);
  fg_dataset_destroy(&back);
}

/* Every single-byte change of a manifest is refused (its CRC-32 covers every byte), and the
 * encoding parses back to what was encoded. */
static void manifest_bytes(const char *dir) {
  fg_prep_manifest m, again;
  unsigned char *buf = NULL, *enc = NULL;
  size_t len = 0, elen = 0;
  char path[600];
  FILE *f;
  memset(&m, 0, sizeof m);
  memset(&again, 0, sizeof again);
  EXPECT_OK(fg_prep_manifest_read(dir, &m));
  EXPECT_OK(fg_prep_manifest_encode(&m, &enc, &elen));
  snprintf(path, sizeof path, "%s/manifest.fgprep", dir);
  f = fopen(path, "rb");
  EXPECT(f != NULL);
  if (f) {
    buf = malloc(elen + 1);
    len = fread(buf, 1, elen + 1, f);
    fclose(f);
  }
  EXPECT(buf && len == elen && memcmp(buf, enc, len) == 0);
  EXPECT_OK(fg_prep_manifest_parse(enc, elen, "enc", &again));
  EXPECT(again.n == m.n && again.nnz == m.nnz && again.B == m.B && again.nfiles == m.nfiles &&
         memcmp(again.offs, m.offs, (size_t)(m.B + 1) * 8) == 0 &&
         memcmp(again.files, m.files, (size_t)m.nfiles * sizeof *m.files) == 0);
  fg_prep_manifest_free(&again);
  for (size_t k = 0; buf && k < len; k++) {
    fg_prep_manifest bad;
    buf[k] ^= 0x41;
    const fg_status st = fg_prep_manifest_parse(buf, len, "flipped", &bad);
    EXPECT_MSG(st == FG_ERR_FORMAT, "byte %zu changed: status %d", k, (int)st);
    if (st == FG_OK) fg_prep_manifest_free(&bad);
    buf[k] ^= 0x41;
  }
  /* cut short and one byte long */
  if (buf) {
    fg_prep_manifest bad;
    EXPECT(fg_prep_manifest_parse(buf, len - 1, "short", &bad) == FG_ERR_FORMAT);
    EXPECT(fg_prep_manifest_parse(buf, 10, "tiny", &bad) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("shorter than a manifest"));
  }
  free(buf);
  free(enc);
  fg_prep_manifest_free(&m);
}

int main(void) {
  fg_load_config lc = fg_load_config_default();
  fg_dataset *cora = NULL, *dir = NULL;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fg_test_prepared.XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &cora));
  if (cora) {
    round_trip(cora, 1, "natural", "cora");
    round_trip(cora, 3, "natural", "cora");
    round_trip(cora, 7, "random", "cora");
    if (fg_order_is_available("metis")) round_trip(cora, 4, "metis", "cora");
    {
      char d[512];
      snprintf(d, sizeof d, "%s/cora_7_random", tmpdir);
      manifest_bytes(d);
    }
  }
  /* a directed graph with multi-label targets, its duplicates kept */
  {
    const int64_t src[] = {0, 1, 2, 3, 4, 5, 0, 0, 2};
    const int64_t dst[] = {1, 2, 3, 4, 5, 0, 3, 1, 2};
    const int8_t targets[6 * 3] = {1, 0, -1, 0, 0, 1, 1, 1, 1, -1, -1, 0, 0, 1, 0, 1, -1, -1};
    const int8_t split[6] = {0, 0, 1, 2, -1, 2};
    fg_arrays a;
    fg_load_config dc = fg_load_config_default();
    memset(&a, 0, sizeof a);
    a.num_nodes = 6;
    a.num_edges = 9;
    a.src = src;
    a.dst = dst;
    a.targets = targets;
    a.num_tasks = 3;
    a.split = split;
    dc.undirected = 0;
    dc.dedup = 0;
    dc.gen_features = 5;
    EXPECT_OK(fg_dataset_from_arrays(&a, &dc, &dir));
    if (dir) {
      EXPECT(!dir->symmetric && dir->num_tasks == 3);
      round_trip(dir, 1, "natural", "directed");
      round_trip(dir, 3, "random", "directed");
      round_trip(dir, 6, "random", "directed");
    }
  }
  /* refusals of fg_dataset_prepare */
  if (cora) {
    fg_prepare_config pc = fg_prepare_config_default();
    char d[512];
    snprintf(d, sizeof d, "%s/refused", tmpdir);
    pc.blocks = 0;
    EXPECT(fg_dataset_prepare(cora, &pc, d) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("--blocks 0"));
    pc.blocks = 1025;
    EXPECT(fg_dataset_prepare(cora, &pc, d) == FG_ERR_INVALID_ARG);
    pc.blocks = 2;
    pc.order = "sideways";
    EXPECT(fg_dataset_prepare(cora, &pc, d) != FG_OK);
  }
  fg_dataset_destroy(&cora);
  fg_dataset_destroy(&dir);
  {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    EXPECT(system(cmd) == 0);
  }
  return fg_test_finish("test_prepared");
}
