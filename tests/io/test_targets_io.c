/* test_targets_io.c -- multi-label targets from the readers: an OGB node-label file with
 * several columns (the corpus's ogb/ml_* cases: values, missing fields, rows of the wrong
 * width, values other than 0/1, a split node without any target) and a .npz whose label
 * member is 2-D (built here: bool, integers with -1 missing, a value 2, floats, a split node
 * without targets); then the whole load: tasks as the logits, no labels, the split generated
 * over the nodes with a target, the fingerprint, `info`'s lines. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "graph/fg_graph.h"
#include "io/fg_io.h"
#include "testutil.h"

/* ---- OGB ---- */

typedef struct bad_case {
  const char *rel;
  fg_status want;
  const char *msg;
} bad_case;

static void test_ogb(void) {
  static const bad_case bad[] = {
      {"ogb/ml_few_cols", FG_ERR_FORMAT,
       "ml_few_cols/raw/node-label.csv: line 4: expected 3 target values (the first line's "
       "columns), found 2"},
      {"ogb/ml_many_cols", FG_ERR_FORMAT,
       "raw/node-label.csv: line 2: expected 3 target values (the first line's columns), found 4"},
      {"ogb/ml_value_two", FG_ERR_FORMAT,
       "raw/node-label.csv: line 2, column 2: target '2' is not 0 or 1 (a multi-label target is "
       "0, 1, or empty or nan when missing)"},
      {"ogb/ml_negative", FG_ERR_FORMAT,
       "raw/node-label.csv: line 5, column 2: target '-1' is not 0 or 1"},
      {"ogb/ml_junk", FG_ERR_FORMAT,
       "raw/node-label.csv: line 3, column 2: target 'yes' is not a number"},
      {"ogb/ml_split_missing", FG_ERR_FORMAT,
       "split/planetoid/valid.csv: line 1: node 2 is in the valid split but has no label (every "
       "target missing)"},
      {"ogb/ml_rows", FG_ERR_FORMAT, "raw/node-label.csv: line 7: more labels than the 6 nodes"},
  };
  char path[1024];
  fg_raw r;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(path, sizeof path, "%s/%s", FG_CORPUS, bad[i].rel);
    const fg_status st = fg_read_ogb(path, NULL, &r);
    EXPECT_MSG(st == bad[i].want, "%s: status %d, expected %d (%s)", bad[i].rel, (int)st,
               (int)bad[i].want, fg_last_error());
    EXPECT_MSG(fg_test_error_contains(bad[i].msg), "%s", bad[i].rel);
    fg_raw_free(&r);
  }
  snprintf(path, sizeof path, "%s/ogb/ml_ok", FG_CORPUS);
  EXPECT_OK(fg_read_ogb(path, NULL, &r));
  static const int8_t want[18] = {1, 0, 1, 0, -1, 1, 1, 1, -1, 0, 0, 0, 1, 0, 1, -1, 1, 0};
  EXPECT(r.num_tasks == 3 && r.targets && !r.labels && r.num_classes == 0 && r.split);
  EXPECT(r.targets && memcmp(r.targets, want, sizeof want) == 0);
  fg_raw_free(&r);
  /* one column stays one class id a node */
  snprintf(path, sizeof path, "%s/ogb/ok", FG_CORPUS);
  EXPECT_OK(fg_read_ogb(path, NULL, &r));
  EXPECT(r.num_tasks == 0 && !r.targets && r.labels && r.num_classes == 3);
  fg_raw_free(&r);
}

/* ---- .npz ---- */

typedef struct buf {
  unsigned char *p;
  size_t n, cap;
} buf;

static void put(buf *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) exit(2);
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void put16(buf *b, unsigned v) {
  unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
  put(b, c, 2);
}
static void put32(buf *b, unsigned long v) {
  unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  put(b, c, 4);
}

/* A .npy (v1.0) of dtype descr and shape text ("(6, 3)") holding n bytes of data. */
static buf npy(const char *descr, const char *shape, const void *data, size_t n) {
  buf b = {0};
  char dict[160];
  int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
  const int total = ((10 + len + 1 + 63) / 64) * 64; /* header padded to 64 with '\n' last */
  put(&b, "\x93NUMPY\x01\x00", 8);
  put16(&b, (unsigned)(total - 10));
  put(&b, dict, (size_t)len);
  for (int i = 10 + len; i < total - 1; i++) put(&b, " ", 1);
  put(&b, "\n", 1);
  put(&b, data, n);
  return b;
}

/* A stored (uncompressed) zip of `count` members. */
static buf zip(const char *const *names, const buf *members, int count) {
  buf z = {0}, cd = {0};
  for (int i = 0; i < count; i++) {
    const unsigned long crc = crc32(0L, members[i].p, (uInt)members[i].n);
    const unsigned long off = (unsigned long)z.n;
    const size_t nl = strlen(names[i]);
    put32(&z, 0x04034b50UL);
    put16(&z, 20);
    put16(&z, 0);
    put16(&z, 0);
    put16(&z, 0);
    put16(&z, 0);
    put32(&z, crc);
    put32(&z, (unsigned long)members[i].n);
    put32(&z, (unsigned long)members[i].n);
    put16(&z, (unsigned)nl);
    put16(&z, 0);
    put(&z, names[i], nl);
    put(&z, members[i].p, members[i].n);
    put32(&cd, 0x02014b50UL);
    put16(&cd, 20);
    put16(&cd, 20);
    put16(&cd, 0);
    put16(&cd, 0);
    put16(&cd, 0);
    put16(&cd, 0);
    put32(&cd, crc);
    put32(&cd, (unsigned long)members[i].n);
    put32(&cd, (unsigned long)members[i].n);
    put16(&cd, (unsigned)nl);
    put16(&cd, 0);
    put16(&cd, 0);
    put16(&cd, 0);
    put16(&cd, 0);
    put32(&cd, 0);
    put32(&cd, off);
    put(&cd, names[i], nl);
  }
  const unsigned long cd_off = (unsigned long)z.n;
  put(&z, cd.p, cd.n);
  put32(&z, 0x06054b50UL);
  put16(&z, 0);
  put16(&z, 0);
  put16(&z, (unsigned)count);
  put16(&z, (unsigned)count);
  put32(&z, (unsigned long)cd.n);
  put32(&z, cd_off);
  put16(&z, 0);
  free(cd.p);
  return z;
}

/* The dense layout of 6 nodes with labels of dtype descr and shape, data lab (n bytes). */
static buf dense(const char *descr, const char *shape, const void *lab, size_t n) {
  static const float feat[6][2] = {{1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2}, {0.25f, -1}};
  static const int64_t edges[7][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}};
  static const unsigned char tr[6] = {1, 1, 0, 0, 0, 0}, va[6] = {0, 0, 1, 1, 0, 0},
                             te[6] = {0, 0, 0, 0, 1, 1};
  const char *names[6] = {"node_features.npy", "node_labels.npy", "edges.npy",
                          "train_masks.npy",   "val_masks.npy",   "test_masks.npy"};
  buf m[6] = {npy("<f4", "(6, 2)", feat, sizeof feat), npy(descr, shape, lab, n),
              npy("<i8", "(7, 2)", edges, sizeof edges), npy("|b1", "(6,)", tr, 6),
              npy("|b1", "(6,)", va, 6), npy("|b1", "(6,)", te, 6)};
  buf z = zip(names, m, 6);
  for (int i = 0; i < 6; i++) free(m[i].p);
  return z;
}

static void test_npz(void) {
  fg_raw r;
  /* int8 with -1 missing */
  const int8_t t3[18] = {1, 0, -1, 0, 1, 1, -1, -1, 1, 0, 0, 0, 1, 1, 1, 0, -1, 0};
  buf z = dense("|i1", "(6, 3)", t3, sizeof t3);
  EXPECT_OK(fg_read_npz_mem(z.p, z.n, "t.npz", 0, &r));
  EXPECT(r.num_tasks == 3 && r.targets && !r.labels && r.split);
  EXPECT(r.targets && memcmp(r.targets, t3, sizeof t3) == 0);
  fg_raw_free(&r);
  free(z.p);
  /* bool */
  const unsigned char b2[12] = {1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1};
  z = dense("|b1", "(6, 2)", b2, sizeof b2);
  EXPECT_OK(fg_read_npz_mem(z.p, z.n, "b.npz", 0, &r));
  EXPECT(r.num_tasks == 2 && r.targets && r.targets[4] == 1 && r.targets[6] == 0);
  fg_raw_free(&r);
  free(z.p);
  /* a value 2 */
  int64_t v2[12] = {1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1};
  v2[7] = 2;
  z = dense("<i8", "(6, 2)", v2, sizeof v2);
  EXPECT(fg_read_npz_mem(z.p, z.n, "v.npz", 0, &r) == FG_ERR_FORMAT &&
         fg_test_error_contains("v.npz[node_labels.npy]: node 3, task 1: target 2 is not 0 or 1 "
                                "(or -1 when missing)"));
  fg_raw_free(&r);
  free(z.p);
  /* floats */
  const float f2[12] = {0};
  z = dense("<f4", "(6, 2)", f2, sizeof f2);
  EXPECT(fg_read_npz_mem(z.p, z.n, "f.npz", 0, &r) == FG_ERR_FORMAT &&
         fg_test_error_contains("f.npz[node_labels.npy]: multi-label targets must be bool or "
                                "integers (0, 1; -1 missing), got dtype '<f4'"));
  fg_raw_free(&r);
  free(z.p);
  /* a split node (node 2, validation) with every target missing */
  int8_t m3[18];
  memcpy(m3, t3, sizeof m3);
  m3[6] = m3[7] = m3[8] = -1;
  z = dense("|i1", "(6, 3)", m3, sizeof m3);
  EXPECT(fg_read_npz_mem(z.p, z.n, "m.npz", 0, &r) == FG_ERR_FORMAT &&
         fg_test_error_contains("m.npz[val_masks.npy]: node 2 of split 0 has no label (every "
                                "target missing)"));
  fg_raw_free(&r);
  free(z.p);
  /* a 3-D member */
  z = dense("|i1", "(6, 3, 1)", t3, sizeof t3);
  EXPECT(fg_read_npz_mem(z.p, z.n, "d.npz", 0, &r) == FG_ERR_FORMAT &&
         fg_test_error_contains("d.npz[node_labels.npy]: expected shape (N,) or (N, T), got 3 "
                                "dimension(s)"));
  fg_raw_free(&r);
  free(z.p);
}

/* ---- the whole load ---- */

static void test_load(void) {
  char path[1024], *text = NULL;
  size_t len = 0;
  fg_dataset *ds = NULL, *one = NULL;
  fg_load_config lc = fg_load_config_default();
  snprintf(path, sizeof path, "%s/ogb/ml_ok", FG_CORPUS);
  EXPECT_OK(fg_dataset_load(path, &lc, &ds));
  if (!ds) return;
  EXPECT(fg_dataset_num_tasks(ds) == 3 && fg_dataset_num_classes(ds) == 3 && !ds->labels &&
         !ds->labels_generated && !ds->split_generated);
  FILE *f = open_memstream(&text, &len);
  EXPECT_OK(fg_dataset_print_info(ds, f));
  fclose(f);
  EXPECT_MSG(strstr(text, "tasks        3 binary tasks (multi-label targets") &&
                 strstr(text, "targets      6 labelled (a target present), 0 unlabelled; 3 of "
                              "18 targets missing") &&
                 strstr(text, "positive rate per task min 0.4000 (task 1), mean 0.5333, max "
                              "0.6000 (task 0)"),
             "info:\n%s", text);
  free(text);
  /* the fingerprint: the targets in the labels' place, not a hash of nothing */
  fg_ds_fingerprint a, b;
  fg_dataset_fingerprint(ds, &a);
  ds->targets[0] = 0;
  fg_dataset_fingerprint(ds, &b);
  EXPECT(a.labels != b.labels && a.graph == b.graph && a.classes == 3);
  /* without a split of its own: the split is drawn over the nodes with a target */
  snprintf(path, sizeof path, "%s/ogb/ml_ok", FG_CORPUS);
  fg_dataset_destroy(&ds);
  snprintf(path, sizeof path, "%s/ogb/ok", FG_CORPUS);
  EXPECT_OK(fg_dataset_load(path, &lc, &one));
  EXPECT(one && fg_dataset_num_tasks(one) == 0 && one->labels && one->num_classes == 3);
  fg_dataset_destroy(&one);
}

/* ---- arrays in memory (fg_dataset_from_arrays, the Python binding) ---- */

static void test_arrays(void) {
  const int64_t src[4] = {0, 1, 2, 3}, dst[4] = {1, 2, 3, 0};
  int8_t t2[8] = {1, 0, 0, -1, 1, 1, -1, -1};
  const int32_t labels[4] = {0, 1, 0, 1};
  fg_arrays a = {.num_nodes = 4, .num_edges = 4, .src = src, .dst = dst, .targets = t2,
                 .num_tasks = 2};
  fg_load_config lc = fg_load_config_default();
  fg_dataset *ds = NULL;
  EXPECT_OK(fg_dataset_from_arrays(&a, &lc, &ds));
  if (ds) {
    int8_t back[8];
    int32_t lab[4];
    const fg_dataset_buffers b = {.targets = back, .labels = lab};
    EXPECT(fg_dataset_num_tasks(ds) == 2 && fg_dataset_num_classes(ds) == 2);
    EXPECT_OK(fg_dataset_copy_arrays(ds, &b));
    EXPECT(memcmp(back, t2, sizeof back) == 0 && lab[0] == -1 && lab[3] == -1);
    /* node 3 has no target: the generated split leaves it out */
    EXPECT(ds->split[3] == FG_SPLIT_NONE);
  }
  fg_dataset_destroy(&ds);
  t2[5] = 3;
  EXPECT(fg_dataset_from_arrays(&a, &lc, &ds) == FG_ERR_FORMAT &&
         fg_test_error_contains("arrays: targets[2, 1] = 3 is not 0 or 1 (or -1 when missing)"));
  t2[5] = 1;
  a.labels = labels;
  EXPECT(fg_dataset_from_arrays(&a, &lc, &ds) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("arrays: both labels and targets given"));
  a.labels = NULL;
  a.num_tasks = 0;
  EXPECT(fg_dataset_from_arrays(&a, &lc, &ds) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("arrays: num_tasks 0 out of range [1, "));
}

int main(void) {
  test_arrays();
  test_ogb();
  test_npz();
  test_load();
  return fg_test_finish("test_targets_io");
}
