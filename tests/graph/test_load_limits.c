/* test_load_limits.c -- hostile inputs against the loader's memory budget: every reader stops at
 * the budget with FG_ERR_MEMLIMIT and a message naming the file, where it stopped and the limit
 * (a gzip stream that inflates without bound, a long line, a growing table, a Matrix Market nnz,
 * a deflated .npz member, a .npy edge array), and fg_dataset_load weighs the whole load before
 * allocating it (a SNAP header of 2^31 - 2 nodes, a Matrix Market size line, node ids up to
 * 2^31 - 2), quickly and without touching that memory. Inputs too large for the corpus are made
 * here, in memory. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "graph/fg_graph.h"
#include "io/fg_io_internal.h"
#include "testutil.h"

static void set_budget(double limit, double edge_bytes) {
  fg_io_budget b = {.limit = limit, .edge_bytes = edge_bytes};
  snprintf(b.what, sizeof b.what, "the test's limit is %.0f bytes", limit);
  fg_io_set_budget(&b);
}

/* `copies` gzip members, each of `chunk` bytes of "1 2\n" lines: a few kB that inflate to
 * copies * chunk bytes (gzip -c a a a > b writes such a file). */
static unsigned char *gzip_bomb(size_t chunk, int copies, size_t *len) {
  char *text = malloc(chunk);
  unsigned char *one = NULL, *all = NULL;
  z_stream zs;
  if (!text) return NULL;
  for (size_t i = 0; i < chunk; i++) text[i] = "1 2\n"[i % 4];
  memset(&zs, 0, sizeof zs);
  const size_t cap = chunk / 100 + 4096;
  one = malloc(cap);
  if (one && deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK) {
    zs.next_in = (unsigned char *)text;
    zs.avail_in = (uInt)chunk;
    zs.next_out = one;
    zs.avail_out = (uInt)cap;
    const int r = deflate(&zs, Z_FINISH);
    const size_t n = cap - zs.avail_out;
    deflateEnd(&zs);
    if (r == Z_STREAM_END && (all = malloc(n * (size_t)copies)) != NULL) {
      for (int k = 0; k < copies; k++) memcpy(all + (size_t)k * n, one, n);
      *len = n * (size_t)copies;
    }
  }
  free(text);
  free(one);
  return all;
}

static void test_reader_budgets(void) {
  fg_raw r;
  size_t len = 0;

  /* 16 MB of edge lines in ~16 kB of gzip: the reader stops at the first edge the budget cannot
   * load (8 MB at 40 bytes an edge: edge 200001), not at the end of the stream */
  unsigned char *bomb = gzip_bomb((size_t)1 << 20, 16, &len);
  EXPECT(bomb != NULL && len < 200000);
  if (bomb) {
    set_budget(8e6, 40.0);
    const double t0 = fg_now();
    EXPECT(fg_read_snap_mem(bomb, len, "bomb.txt.gz", &r) == FG_ERR_MEMLIMIT);
    EXPECT(fg_test_error_contains(
        "bomb.txt.gz: line 200001: the 200001 edges read so far need about 8.00 MB to load (40 "
        "bytes an edge: the edge list and the graph build), but the test's limit is 8000000 "
        "bytes (the size of gzip data is known only at its end"));
    EXPECT(r.src == NULL && r.num_edges == 0);
    EXPECT(fg_now() - t0 < 5.0);
    /* without a limit the same stream is 4M edges (what an unbounded reader would hold) */
    set_budget(0.0, 0.0);
    EXPECT_OK(fg_read_snap_mem(bomb, len, "bomb.txt.gz", &r));
    EXPECT(r.num_edges == ((int64_t)16 << 20) / 4 && r.num_nodes == 3);
    fg_raw_free(&r);
    free(bomb);
  }

  /* one line longer than the budget allows a buffer for */
  {
    const size_t n = (size_t)1 << 20;
    char *line = malloc(n);
    EXPECT(line != NULL);
    if (line) {
      memset(line, '7', n);
      set_budget(300000.0, 16.0);
      EXPECT(fg_read_snap_mem(line, n, "long.txt", &r) == FG_ERR_MEMLIMIT);
      EXPECT(fg_test_error_contains("long.txt: line 1 is longer than 262143 bytes: a buffer for "
                                    "it would pass the memory limit (the test's limit is"));
      free(line);
    }
  }

  /* a table growing past the budget: 100,000 rows of 3 doubles (2.4 MB) under 1 MB */
  {
    const size_t n = 100000 * 6;
    char *csv = malloc(n + 1);
    double *v = NULL;
    int64_t rows = 0;
    EXPECT(csv != NULL);
    if (csv) {
      for (size_t i = 0; i < n; i += 6) memcpy(csv + i, "1,2,3\n", 6);
      set_budget(1e6, 16.0);
      EXPECT(fg_read_csv_mem(csv, n, "t.csv", 3, -1, &v, &rows) == FG_ERR_MEMLIMIT);
      EXPECT(fg_test_error_contains("t.csv: line 41667: the 41667 rows read so far need about "
                                    "1.00 MB to load (24 bytes a row), but the test's limit"));
      EXPECT(v == NULL);
      free(csv);
    }
  }

  /* a Matrix Market nnz the file could hold, but the budget could not load */
  {
    char mtx[512];
    int at = snprintf(mtx, sizeof mtx, "%%%%MatrixMarket matrix coordinate pattern general\n"
                                       "20 20 20\n");
    for (int i = 1; i <= 20; i++) at += snprintf(mtx + at, sizeof mtx - (size_t)at, "%d 1\n", i);
    set_budget(500.0, 40.0);
    EXPECT(fg_read_mtx_mem(mtx, (size_t)at, "m.mtx", &r) == FG_ERR_MEMLIMIT);
    EXPECT(fg_test_error_contains("m.mtx: line 2 declares 20 entries: loading them needs about "
                                  "800 B (40 bytes an entry: the edge list and the graph build), "
                                  "but the test's limit is 500 bytes"));
    set_budget(800.0, 40.0);
    EXPECT_OK(fg_read_mtx_mem(mtx, (size_t)at, "m.mtx", &r));
    EXPECT(r.num_edges == 20);
    fg_raw_free(&r);
  }

  /* OGB: declared edges the file could hold but the budget could not load, refused up front */
  set_budget(250.0, 40.0);
  EXPECT(fg_read_ogb(FG_CORPUS "/ogb/ok", NULL, &r) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("ogb/ok/raw/edge.csv: num-edge-list declares 7 edges: loading "
                                "them needs about 280 B (40 bytes an edge: the edge list and the "
                                "graph build), but the test's limit is 250 bytes"));
  set_budget(340.0, 40.0); /* the edges fit (280 B); the features' sixth row does not */
  EXPECT(fg_read_ogb(FG_CORPUS "/ogb/ok", NULL, &r) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("ogb/ok/raw/node-feat.csv: line 6: the 6 rows read so far need "
                                "about 352 B to load (12 bytes a row, with what the files before "
                                "it hold), but the test's limit is 340"));

  /* .npz: a deflated member whose declared size passes the budget; .npy: its edges */
  {
    unsigned char *buf = NULL;
    set_budget(0.0, 0.0);
    if (fg_file_slurp(FG_CORPUS "/npz/ok_csr_deflate.npz", &buf, &len) == FG_OK) {
      set_budget((double)len + 100.0, 16.0);
      EXPECT(fg_read_npz_mem(buf, len, "d.npz", 0, &r) == FG_ERR_MEMLIMIT);
      EXPECT(fg_test_error_contains("d.npz: member 'adj_shape.npy' inflates to 144 bytes"));
      EXPECT(fg_test_error_contains("but the test's limit is"));
      free(buf);
    } else {
      fg_test_failures++;
    }
    set_budget(0.0, 0.0);
    if (fg_file_slurp(FG_CORPUS "/npy/ok_i64.npy", &buf, &len) == FG_OK) {
      set_budget((double)len + 100.0, 40.0);
      EXPECT(fg_read_npy_edges_mem(buf, len, "e.npy", &r) == FG_ERR_MEMLIMIT);
      EXPECT(fg_test_error_contains("e.npy: its 4 edges need about 352 B to load (the file, and "
                                    "40 bytes an edge"));
      set_budget((double)len + 160.0, 40.0);
      EXPECT_OK(fg_read_npy_edges_mem(buf, len, "e.npy", &r));
      EXPECT(r.num_edges == 4 && r.num_nodes == 8);
      fg_raw_free(&r);
      free(buf);
    } else {
      fg_test_failures++;
    }
  }
  set_budget(0.0, 0.0);
}

/* Renumbering a few edges over a huge id span sorts the ids (a bit per id would take 375 MB). */
static void test_renumber_sorted(void) {
  const char *txt = "2000000000 5\n5 7\n0 2000000000\n7 7\n";
  fg_raw r;
  EXPECT_OK(fg_read_snap_mem(txt, strlen(txt), "s.txt", &r));
  set_budget(1e6, 40.0);
  EXPECT_OK(fg_raw_renumber(&r));
  EXPECT(r.num_nodes == 4 && r.id_span == 2000000001 && r.ids);
  if (r.ids) EXPECT(r.ids[0] == 0 && r.ids[1] == 5 && r.ids[2] == 7 && r.ids[3] == 2000000000);
  static const int64_t src[4] = {3, 1, 0, 2}, dst[4] = {1, 2, 3, 2};
  EXPECT(memcmp(r.src, src, sizeof src) == 0 && memcmp(r.dst, dst, sizeof dst) == 0);
  fg_raw_free(&r);
  /* beyond the budget (the edge list, the sorted copy, the ids kept): refused, the limit named */
  txt = "0 1\n1 2\n3 2\n4 1\n5 20000\n";
  EXPECT_OK(fg_read_snap_mem(txt, strlen(txt), "b.txt", &r));
  set_budget(200.0, 40.0);
  EXPECT(fg_raw_renumber(&r) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("renumbering the node ids of 5 edges (ids up to 20000) needs "
                                "about 160 B beside the edge list, but the test's limit is 200"));
  fg_raw_free(&r);
  set_budget(0.0, 0.0);
}

/* A temporary file of n bytes whose name ends in suffix (the loader picks its reader by it). */
static void write_temp(char *path, const char *suffix, const void *data, size_t n) {
  char tmp[64];
  strcpy(tmp, "/tmp/fg_test_limits_XXXXXX");
  int fd = mkstemp(tmp);
  EXPECT(fd >= 0);
  if (fd < 0) return;
  EXPECT(write(fd, data, n) == (ssize_t)n);
  close(fd);
  snprintf(path, 80, "%s%s", tmp, suffix);
  EXPECT(rename(tmp, path) == 0);
}

/* A declared count the loader must weigh before allocating anything of it: refused at once. */
static void expect_refused(const char *path, const fg_load_config *c, const char *msg) {
  fg_dataset *ds = NULL;
  const double t0 = fg_now();
  EXPECT_MSG(fg_dataset_load(path, c, &ds) == FG_ERR_MEMLIMIT && ds == NULL, "%s", path);
  EXPECT_MSG(fg_test_error_contains(msg), "%s", path);
  EXPECT_MSG(fg_test_error_contains(path), "%s", path);
  EXPECT_MSG(fg_now() - t0 < 5.0, "%s: %.1f s to refuse", path, fg_now() - t0);
  fg_dataset_destroy(&ds);
}

static void test_dataset_budget(void) {
  fg_load_config c = fg_load_config_default();
  fg_dataset *ds = NULL;
  fg_io_budget before, after;
  char path[80];
  c.gen_features = 4;
  EXPECT(c.mem_limit == 0.0);
  fg_io_get_budget(&before);

  /* 2^31 - 2 nodes declared over two edge lines: set aside by default ... */
  const char *huge = FG_CORPUS "/snap/nodes_huge.txt";
  EXPECT_OK(fg_dataset_load(huge, &c, &ds));
  if (ds) EXPECT(ds->num_nodes == 3 && ds->nodes_set_aside == 2147483646);
  fg_dataset_destroy(&ds);
  /* ... and with --keep-ids weighed against the available memory, then a given limit */
  c.keep_ids = 1;
  c.gen_features = 128;
  expect_refused(huge, &c, "snap/nodes_huge.txt: the header declares 2147483646 nodes (kept by "
                           "--keep-ids), for 2 edges: loading needs about 1.20 TB (the graph "
                           "25.8 GB, its build's edge list and sort 25.8 GB, generated features "
                           "1.10 TB, labels, split and ids 10.7 GB) but ");
  c.mem_limit = 1e9;
  expect_refused(huge, &c, "loading needs about 1.20 TB");
  expect_refused(huge, &c, "but --mem-limit is 1.00 GB");
  /* no limit at all is the caller's choice; not tried here */
  c.keep_ids = 0;
  c.gen_features = 4;

  /* a Matrix Market size line of 2^31 - 1 nodes */
  {
    const char *t = "%%MatrixMarket matrix coordinate pattern general\n"
                    "2147483647 2147483647 1\n1 2\n";
    write_temp(path, ".mtx", t, strlen(t));
    expect_refused(path, &c, "the size line declares 2147483647 nodes, for 1 edges: loading needs "
                             "about");
    remove(path);
  }
  /* a .npy edge array with an id of 2^31 - 2: max id + 1 nodes */
  {
    static const char head[] = "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }";
    unsigned char npy[128 + 16];
    memset(npy, ' ', 128);
    memcpy(npy, "\x93NUMPY\x01\x00\x76\x00", 10);
    memcpy(npy + 10, head, sizeof head - 1);
    npy[127] = '\n';
    const int64_t e[2] = {0, 2147483646};
    memcpy(npy + 128, e, sizeof e);
    write_temp(path, ".npy", npy, sizeof npy);
    expect_refused(path, &c, "node ids up to 2147483646 make 2147483647 nodes, for 1 edges");
    remove(path);
  }

  /* an OGB directory of one edge whose num-node-list declares 2e9 nodes */
  {
    char dir[64] = "/tmp/fg_test_ogb_XXXXXX", sub[128];
    static const char *const files[3][2] = {
        {"num-node-list.csv", "2000000000\n"}, {"num-edge-list.csv", "1\n"}, {"edge.csv", "0,1\n"}};
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof sub, "%s/raw", dir);
    EXPECT(mkdir(sub, 0700) == 0);
    for (int k = 0; k < 3; k++) {
      snprintf(sub, sizeof sub, "%s/raw/%s", dir, files[k][0]);
      FILE *f = fopen(sub, "w");
      EXPECT(f && fputs(files[k][1], f) >= 0 && fclose(f) == 0);
    }
    expect_refused(dir, &c, "the num-node-list file declares 2000000000 nodes, for 1 edges: "
                            "loading needs about");
    for (int k = 0; k < 3; k++) {
      snprintf(sub, sizeof sub, "%s/raw/%s", dir, files[k][0]);
      remove(sub);
    }
    snprintf(sub, sizeof sub, "%s/raw", dir);
    rmdir(sub);
    rmdir(dir);
  }

  /* a small limit stops the OGB reader in the feature table, naming the line */
  c.mem_limit = 2e6;
  EXPECT(fg_dataset_load(FG_DEMO_DATA, &c, &ds) == FG_ERR_MEMLIMIT && ds == NULL);
  EXPECT(fg_test_error_contains("raw/node-feat.csv.gz: line "));
  EXPECT(fg_test_error_contains("rows read so far need about"));
  EXPECT(fg_test_error_contains("with what the files before it hold), but --mem-limit is 2.00 MB"));
  /* a limit big enough, and none */
  c.mem_limit = 200e6;
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &c, &ds));
  EXPECT(ds && ds->num_nodes == 2708);
  fg_dataset_destroy(&ds);
  c.mem_limit = -1.0;
  EXPECT_OK(fg_dataset_load(FG_CORPUS "/ogb/ok", &c, &ds));
  EXPECT(ds && ds->num_nodes == 6);
  fg_dataset_destroy(&ds);
  c.mem_limit = 0.0 / 0.0;
  EXPECT(fg_dataset_load(FG_CORPUS "/ogb/ok", &c, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("mem_limit must be a number of bytes"));
  c.mem_limit = 0.0;

  /* labels: one label of 99999 is refused by the loader, fast */
  EXPECT(fg_dataset_load(FG_CORPUS "/ogb/label_sparse", &c, &ds) == FG_ERR_FORMAT && !ds);
  EXPECT(fg_test_error_contains("label_sparse/raw/node-label.csv: line 6: label 99999 makes "
                                "100000 classes"));
  EXPECT(fg_test_error_contains("Relabel the classes 0..K-1"));

  /* the caller's budget is back after every load */
  fg_io_get_budget(&after);
  EXPECT(after.limit == before.limit && after.edge_bytes == before.edge_bytes);
  /* nothing above came near the memory it refused: 2^31 nodes would be 17 GB of row pointers */
  EXPECT_MSG(fg_peak_rss_bytes() < ((int64_t)1 << 30), "peak RSS %lld bytes",
             (long long)fg_peak_rss_bytes());
}

int main(void) {
  test_reader_budgets();
  test_renumber_sorted();
  test_dataset_budget();
  return fg_test_finish("test_load_limits");
}
