/* test_dataset.c -- fg_dataset_load on the bundled Cora (OGB layout), on a generated R-MAT
 * SNAP file, on sparse SNAP ids and on shared SNAP data; configuration checks; fg_dataset_print_info. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/fg_graph.h"
#include "testutil.h"

static void test_config(void) {
  fg_load_config c = fg_load_config_default();
  EXPECT(c.undirected == 1 && c.dedup == 1 && c.self_loops == 1 && c.split_index == 0);
  EXPECT(c.gen_features == 128 && c.gen_classes == 32 && c.seed == 0 && !c.split_name);
  EXPECT(c.train_frac == 0.6 && c.valid_frac == 0.2);

  fg_dataset *ds = NULL;
  EXPECT(fg_dataset_load("/nonexistent/graph.txt", NULL, &ds) == FG_ERR_IO && ds == NULL);
  EXPECT(fg_test_error_contains("/nonexistent/graph.txt: no such file or directory"));

  c.train_frac = 0.8;
  c.valid_frac = 0.3;
  EXPECT(fg_dataset_load(FG_DEMO_DATA, &c, &ds) == FG_ERR_INVALID_ARG && ds == NULL);
  EXPECT(fg_test_error_contains("must not exceed 1"));
  c = fg_load_config_default();
  c.gen_features = 0;
  EXPECT(fg_dataset_load(FG_DEMO_DATA, &c, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("width of generated features"));
  c = fg_load_config_default();
  c.valid_frac = -0.5;
  EXPECT(fg_dataset_load(FG_DEMO_DATA, &c, &ds) == FG_ERR_INVALID_ARG);
  c = fg_load_config_default();
  c.gen_classes = -3;
  EXPECT(fg_dataset_load(FG_DEMO_DATA, &c, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("classes"));
  EXPECT(fg_dataset_load(NULL, NULL, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_dataset_load(FG_DEMO_DATA, NULL, NULL) == FG_ERR_INVALID_ARG);

  /* a directory without raw/ */
  EXPECT(fg_dataset_load(FG_DEMO_DATA "/split", NULL, &ds) == FG_ERR_FORMAT && ds == NULL);
  EXPECT(fg_test_error_contains("raw/"));

  /* destroy is NULL-safe and clears the handle */
  fg_dataset_destroy(NULL);
  fg_dataset_destroy(&ds);
  EXPECT(ds == NULL);
  EXPECT(fg_dataset_num_nodes(NULL) == 0 && fg_dataset_split_size(NULL, 0) == 0);
}

/* print_info into a string */
static char *info_text(const fg_dataset *ds) {
  char *buf = NULL;
  FILE *f = tmpfile();
  if (!f) return NULL;
  EXPECT_OK(fg_dataset_print_info(ds, f));
  long len = ftell(f);
  if (len > 0 && (buf = calloc((size_t)len + 1, 1)) != NULL) {
    rewind(f);
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) buf[0] = '\0';
  }
  fclose(f);
  return buf;
}

static void test_cora(void) {
  if (!fg_test_exists(FG_DEMO_DATA "/raw")) {
    fprintf(stderr, "note: bundled cora missing at %s\n", FG_DEMO_DATA);
    fg_test_failures++;
    return;
  }
  fg_dataset *ds = NULL;
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, NULL, &ds));
  if (!ds) return;
  EXPECT(fg_dataset_num_nodes(ds) == 2708);
  EXPECT(fg_dataset_num_features(ds) == 1433);
  EXPECT(fg_dataset_num_classes(ds) == 7);
  /* 5278 undirected edges (no duplicates, no loops in the file), both ways, plus A + I */
  EXPECT_MSG(fg_dataset_num_edges(ds) == 2 * 5278 + 2708, "nnz %lld",
             (long long)fg_dataset_num_edges(ds));
  EXPECT(fg_dataset_split_size(ds, FG_SPLIT_TRAIN) == 140);
  EXPECT(fg_dataset_split_size(ds, FG_SPLIT_VALID) == 500);
  EXPECT(fg_dataset_split_size(ds, FG_SPLIT_TEST) == 1000);
  EXPECT(fg_dataset_split_size(ds, 3) == 0);
  EXPECT(ds->symmetric == 1);
  EXPECT(!ds->features_generated && !ds->labels_generated && !ds->split_generated);
  EXPECT(ds->source && strcmp(ds->source, FG_DEMO_DATA) == 0);
  fg_degree_stats s;
  fg_degree_stats_compute(&ds->adj, &s);
  EXPECT(s.max == 168 && s.min == 1 && s.isolated == 0);
  EXPECT(fabs(s.mean - 2.0 * 5278 / 2708) < 1e-9);
  char *txt = info_text(ds);
  EXPECT(txt != NULL);
  if (txt) {
    EXPECT(strstr(txt, "2708") && strstr(txt, "13264") && strstr(txt, "symmetric"));
    EXPECT(strstr(txt, "train 140") && strstr(txt, "valid 500") && strstr(txt, "test 1000"));
    EXPECT(strstr(txt, "3:818")); /* per-class count of the largest class */
    EXPECT(strstr(txt, "max 168"));
    if (fg_test_failures) fputs(txt, stderr);
  }
  free(txt);
  fg_dataset_destroy(&ds);
  EXPECT(ds == NULL);

  /* no self loops added, directed: the file's edges one way only */
  fg_load_config c = fg_load_config_default();
  c.self_loops = 0;
  c.undirected = 0;
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &c, &ds));
  if (ds) {
    EXPECT(fg_dataset_num_edges(ds) == 5278);
    EXPECT(ds->symmetric == 0);
  }
  fg_dataset_destroy(&ds);
}

/* R-MAT written as SNAP, read back: features, labels and split generated. */
static void test_rmat_roundtrip(void) {
  char path[] = "/tmp/fg_test_rmat_XXXXXX";
  int fd = mkstemp(path);
  EXPECT(fd >= 0);
  if (fd < 0) return;
  close(fd);
  EXPECT_OK(fg_generate_rmat(10, 8, 3, path));
  fg_load_config c = fg_load_config_default();
  c.gen_features = 16;
  c.gen_classes = 8;
  c.seed = 5;
  fg_dataset *ds = NULL;
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  int64_t *src = NULL, *dst = NULL, m = 0;
  fg_csr A;
  memset(&A, 0, sizeof A);
  EXPECT_OK(fg_rmat_edges(10, 8, 3, &src, &dst, &m));
  if (ds && src) {
    int64_t n = 0;
    for (int64_t e = 0; e < m; e++) n = FG_MAX(n, FG_MAX(src[e], dst[e]) + 1);
    /* the writer declares "Nodes: 1024", which keeps R-MAT's isolated vertices */
    EXPECT(ds->num_nodes == 1024 && ds->ids == NULL && n <= 1024);
    EXPECT_OK(fg_csr_from_edges(ds->num_nodes, src, dst, m, 1, 1, 1, &A));
    EXPECT(A.nnz == fg_dataset_num_edges(ds));
    EXPECT(A.nnz == ds->adj.nnz && memcmp(A.col, ds->adj.col, (size_t)A.nnz * sizeof *A.col) == 0);
    EXPECT(ds->symmetric);
    EXPECT(ds->features_generated && ds->labels_generated && ds->split_generated);
    EXPECT(fg_dataset_num_features(ds) == 16 && fg_dataset_num_classes(ds) == 8);
    const int64_t tr = fg_dataset_split_size(ds, 0), va = fg_dataset_split_size(ds, 1),
                  te = fg_dataset_split_size(ds, 2);
    EXPECT(tr + va + te == ds->num_nodes);
    EXPECT(fabs((double)tr / (double)ds->num_nodes - 0.6) < 0.06);
    char *txt = info_text(ds);
    EXPECT(txt && strstr(txt, "generated") && strstr(txt, "features labels split"));
    free(txt);
  }
  fg_csr_free(&A);
  free(src);
  free(dst);
  fg_dataset_destroy(&ds);
  remove(path);
}

static void test_shared_snap(void) {
  const char *path = FG_SHARED_DATA "/snap/facebook_combined.txt.gz";
  if (!fg_test_exists(path)) {
    printf("note: %s absent, shared SNAP check skipped\n", path);
    return;
  }
  fg_dataset *ds = NULL;
  EXPECT_OK(fg_dataset_load(path, NULL, &ds));
  if (!ds) return;
  EXPECT(fg_dataset_num_nodes(ds) == 4039);
  EXPECT(fg_dataset_num_edges(ds) == 2 * 88234 + 4039);
  EXPECT(fg_dataset_num_features(ds) == 128 && fg_dataset_num_classes(ds) == 32);
  fg_dataset_destroy(&ds);
}

/* Write text to a temporary file; returns its path in buf (empty on failure). */
static void write_temp(char *buf, const char *text) {
  strcpy(buf, "/tmp/fg_test_ids_XXXXXX");
  int fd = mkstemp(buf);
  EXPECT(fd >= 0);
  if (fd < 0) {
    buf[0] = '\0';
    return;
  }
  const size_t n = strlen(text);
  EXPECT(write(fd, text, n) == (ssize_t)n);
  close(fd);
}

/* 1 if node u of ds has v among its neighbours */
static int has_edge(const fg_dataset *ds, int64_t u, int64_t v) {
  for (int64_t k = ds->adj.rowptr[u]; k < ds->adj.rowptr[u + 1]; k++)
    if (ds->adj.col[k] == v) return 1;
  return 0;
}

/* SNAP ids: sparse ids renumbered in increasing order, a "# Nodes:" declaration honoured when
 * the ids fit under it, --keep-ids, and the reader-level fields. */
static void test_sparse_ids(void) {
  char path[64];
  fg_load_config c = fg_load_config_default();
  c.gen_features = 4;
  c.gen_classes = 2;
  fg_dataset *ds = NULL;

  write_temp(path, "# ids 5 7 100 3000000\n100 7\n7 5\n5 100\n3000000\t7\n");
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) {
    EXPECT(ds->num_nodes == 4 && ds->id_span == 3000001 && ds->ids != NULL);
    if (ds->ids)
      EXPECT(ds->ids[0] == 5 && ds->ids[1] == 7 && ds->ids[2] == 100 && ds->ids[3] == 3000000);
    /* 100-7 = 2-1, 7-5 = 1-0, 5-100 = 0-2, 3000000-7 = 3-1; plus self loops */
    EXPECT(ds->adj.nnz == 2 * 4 + 4);
    EXPECT(has_edge(ds, 2, 1) && has_edge(ds, 1, 0) && has_edge(ds, 0, 2) && has_edge(ds, 3, 1));
    EXPECT(has_edge(ds, 1, 3) && !has_edge(ds, 3, 0) && !has_edge(ds, 3, 2));
    char *txt = info_text(ds);
    EXPECT(txt && strstr(txt, "4 of the ids in [0, 3000001) occur in an edge"));
    free(txt);
  }
  fg_dataset_destroy(&ds);
  c.keep_ids = 1;
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) {
    EXPECT(ds->num_nodes == 3000001 && ds->ids == NULL);
    EXPECT(has_edge(ds, 3000000, 7) && has_edge(ds, 100, 5));
  }
  fg_dataset_destroy(&ds);
  c.keep_ids = 2;
  EXPECT(fg_dataset_load(path, &c, &ds) == FG_ERR_INVALID_ARG && ds == NULL);
  EXPECT(fg_test_error_contains("keep_ids must be 0 or 1"));
  c.keep_ids = 0;
  remove(path);

  /* a declaration every id fits under, within what the 5 edge lines can name (10 nodes):
   * isolated nodes 6..9 kept, nothing renumbered */
  write_temp(path, "# Directed graph\n# Nodes: 10 Edges: 5\n0 3\n3 2\n2 1\n1 5\n5 3\n");
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) {
    EXPECT(ds->num_nodes == 10 && ds->ids == NULL && has_edge(ds, 3, 2));
    EXPECT(ds->nodes_set_aside == 0);
  }
  fg_dataset_destroy(&ds);
  remove(path);

  /* more nodes than the edge lines can name: the header is set aside (and says so), unless
   * --keep-ids */
  write_temp(path, "# Nodes: 10 Edges: 2\n0 3\n3 2\n");
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) {
    EXPECT(ds->num_nodes == 3 && ds->ids && ds->ids[2] == 3 && ds->nodes_set_aside == 10);
    char *txt = info_text(ds);
    EXPECT(txt && strstr(txt, "the header's '# Nodes: 10' was set aside: 2 edge lines name at "
                              "most 4 nodes (--keep-ids keeps it)"));
    free(txt);
  }
  fg_dataset_destroy(&ds);
  c.keep_ids = 1;
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) EXPECT(ds->num_nodes == 10 && ds->ids == NULL && ds->nodes_set_aside == 0);
  fg_dataset_destroy(&ds);
  c.keep_ids = 0;
  remove(path);

  /* a declaration the ids exceed (SNAP's own ca-AstroPh header), or junk after "Nodes:":
   * renumbered */
  write_temp(path, "# Nodes: 3 Edges: 2\n# Nodes: many\n10 30\n30 20\n");
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) {
    EXPECT(ds->num_nodes == 3 && ds->ids && ds->ids[2] == 30);
    EXPECT(has_edge(ds, 0, 2) && has_edge(ds, 2, 1) && !has_edge(ds, 0, 1));
  }
  fg_dataset_destroy(&ds);
  remove(path);

  /* ids already 0..n-1: nothing moves */
  write_temp(path, "2 0\n1 2\n");
  EXPECT_OK(fg_dataset_load(path, &c, &ds));
  if (ds) EXPECT(ds->num_nodes == 3 && ds->ids == NULL && has_edge(ds, 0, 2));
  fg_dataset_destroy(&ds);
  remove(path);

  /* the reader alone: the declaration, the span, and renumbering as a separate step */
  const char *txt = "# Nodes: 6\n9 2\n";
  fg_raw r;
  EXPECT_OK(fg_read_snap_mem(txt, strlen(txt), "mem", &r));
  EXPECT(r.ids_inferred == 1 && r.num_nodes == 10 && r.id_span == 10 && r.ids == NULL);
  EXPECT_OK(fg_raw_renumber(&r));
  EXPECT(r.num_nodes == 2 && r.ids && r.ids[0] == 2 && r.ids[1] == 9);
  EXPECT(r.src[0] == 1 && r.dst[0] == 0 && r.id_span == 10);
  EXPECT_OK(fg_raw_renumber(&r)); /* a second call changes nothing */
  EXPECT(r.num_nodes == 2 && r.src[0] == 1);
  fg_raw_free(&r);
  txt = "# Nodes: 16\n9 2\n";
  EXPECT_OK(fg_read_snap_mem(txt, strlen(txt), "mem", &r));
  EXPECT(r.ids_inferred == 0 && r.num_nodes == 16 && r.id_span == 10);
  EXPECT_OK(fg_raw_renumber(&r));
  EXPECT(r.num_nodes == 16 && r.ids == NULL && r.src[0] == 9);
  fg_raw_free(&r);

  /* SNAP's ca-AstroPh: 18,772 nodes with ids up to 133,279 */
  const char *astro = FG_SHARED_DATA "/snap/ca-AstroPh.txt";
  if (!fg_test_exists(astro)) return;
  EXPECT_OK(fg_dataset_load(astro, &c, &ds));
  if (ds) EXPECT(ds->num_nodes == 18772 && ds->id_span == 133280 && ds->adj.nnz == 414872);
  fg_dataset_destroy(&ds);
  c.keep_ids = 1;
  EXPECT_OK(fg_dataset_load(astro, &c, &ds));
  if (ds) EXPECT(ds->num_nodes == 133280 && ds->adj.nnz == 529380);
  fg_dataset_destroy(&ds);
}

int main(void) {
  test_config();
  test_cora();
  test_rmat_roundtrip();
  test_shared_snap();
  test_sparse_ids();
  return fg_test_finish("test_dataset");
}
