/* test_io_shipped.c -- readers for datasets as they ship (issue 19): GraphSAINT's layout
 * (tests/corpus/saint) with its JSON reader, and OGB's binary raw layout (tests/corpus/ogbbin).
 *   - the JSON reader alone: values it takes, refusals with line:column;
 *   - every corpus case: the exact status and a message naming the file and what was wrong,
 *     through the directory reader and (the JSON maps, the .npz pair) the memory readers;
 *   - the good cases' exact contents;
 *   - Cora re-encoded in each layout (make_saint.py, make_ogbbin.py) loads to exactly the dataset
 *     of data/cora (fingerprint, CSR, features, labels, split) and trains to the same losses bit
 *     for bit; the multi-label class_map gives Cora's classes one-hot; NaN labels unlabelled;
 *   - the memory budget stops both readers before they allocate past it. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fullgraph.h"
#include "graph/fg_graph.h"
#include "io/fg_io.h"
#include "io/fg_io_internal.h"
#include "io/fg_json.h"
#include "testutil.h"

#define EPOCHS 3

/* ---- the JSON reader ------------------------------------------------------------------------ */

static fg_status json_skip_all(const char *text) {
  fg_json J;
  fg_json_open_mem(&J, text, strlen(text), "t.json");
  fg_status st = fg_json_skip(&J);
  if (st == FG_OK) st = fg_json_end(&J);
  fg_json_close(&J);
  return st;
}

static void test_json(void) {
  /* every kind of value, escapes and a surrogate pair, whitespace of all four kinds */
  EXPECT_OK(json_skip_all(" {\"a\" :[1,-2.5e3, 0, -0.0e-1, \"x\\u00e9\\ud83d\\ude00\\n\\/\","
                          "true,false,null,{},[]],\r\n\t\"\\u0000\":{}} "));
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"[1,]", "t.json:1:4: ']' after a comma"},
      {"[01]", "t.json:1:3: leading zero"},
      {"[1.]", "t.json:1:4: expected a digit after a decimal point, found ']'"},
      {"[-]", "t.json:1:3: expected a digit after '-'"},
      {"[1e]", "t.json:1:4: expected a digit after an exponent"},
      {"[+1]", "t.json:1:2: expected a value, found '+'"},
      {"[NaN]", "t.json:1:2: expected a value, found 'N'"},
      {"[nul]", "t.json:1:2: expected a value, found a word that is not 'null'"},
      {"{\"a\" 1}", "t.json:1:6: expected ':' after a key, found '1'"},
      {"{1: 2}", "t.json:1:2: expected a key (a string), found '1'"},
      {"[1 2]", "t.json:1:4: expected ',' or ']' after an element, found '2'"},
      {"[\"a\\x\"]", "t.json:1:5: invalid escape '\\' followed by 'x'"},
      {"[\"\\ud800\"]", "t.json:1:3: \\ud800 (a high surrogate) is not followed by a low one"},
      {"[\"\\udc00\"]", "t.json:1:3: \\udc00 is a lone low surrogate"},
      {"[\"\\u12g4\"]", "t.json:1:7: expected a hex digit in a \\u escape, found 'g'"},
      {"[\"\xe0\x80\x80\"]", "t.json:1:3: invalid UTF-8 sequence"},
      {"[\"\xff\"]", "t.json:1:3: byte 0xff in a string is not UTF-8"},
      {"\n\n  [\"abc", "t.json:3:8: unterminated string (it starts at 3:4)"},
      {"[1] [", "t.json:1:5: '[' after the end of the document"},
      {"", "t.json:1:1: expected a value, found the end of the file"},
      {"[1, // c\n 2]", "t.json:1:5: expected a value, found '/'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    fg_error_clear();
    fg_status st = json_skip_all(bad[i].text);
    EXPECT_MSG(st == FG_ERR_FORMAT, "case %zu: status %d", i, (int)st);
    EXPECT_MSG(fg_test_error_contains(bad[i].msg), "case %zu", i);
  }
  /* nesting: 64 deep is taken, 65 is not */
  char deep[200];
  memset(deep, '[', 64);
  memset(deep + 64, ']', 64);
  deep[128] = '\0';
  EXPECT_OK(json_skip_all(deep));
  memset(deep, '[', 65);
  memset(deep + 65, ']', 65);
  deep[130] = '\0';
  EXPECT(json_skip_all(deep) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("t.json:1:65: containers nested more than 64 deep"));
  /* numbers: integers as such, the rest as doubles; a number longer than 64 characters */
  fg_json J;
  fg_json_num n;
  const char *nums = "[9223372036854775807, 9223372036854775808, -17, 2.5E-1]";
  fg_json_open_mem(&J, nums, strlen(nums), "n.json");
  int64_t count = 0;
  int more;
  EXPECT_OK(fg_json_begin(&J, '[', "a list"));
  EXPECT_OK(fg_json_next(&J, '[', &count, &more));
  EXPECT_OK(fg_json_number(&J, &n, "a number"));
  EXPECT(n.is_int && n.i == INT64_MAX);
  EXPECT_OK(fg_json_next(&J, '[', &count, &more));
  EXPECT_OK(fg_json_number(&J, &n, "a number"));
  EXPECT(!n.is_int && n.d == 9223372036854775808.0);
  EXPECT_OK(fg_json_next(&J, '[', &count, &more));
  EXPECT_OK(fg_json_number(&J, &n, "a number"));
  EXPECT(n.is_int && n.i == -17);
  EXPECT_OK(fg_json_next(&J, '[', &count, &more));
  EXPECT_OK(fg_json_number(&J, &n, "a number"));
  EXPECT(!n.is_int && n.d == 0.25 && strcmp(n.text, "2.5E-1") == 0);
  EXPECT_OK(fg_json_next(&J, '[', &count, &more));
  EXPECT(!more && count == 4);
  EXPECT_OK(fg_json_end(&J));
  fg_json_close(&J);
  char longnum[100];
  memset(longnum, '1', 80);
  longnum[80] = '\0';
  EXPECT(json_skip_all(longnum) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("t.json:1:65: number longer than 64 characters"));
  /* a string too long for the caller's buffer */
  fg_json_open_mem(&J, "\"abcdef\"", 8, "s.json");
  char small[4];
  EXPECT(fg_json_string(&J, small, sizeof small, NULL, "a key") == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("s.json:1:1: a key is too long (more than 3 bytes)"));
  fg_json_close(&J);
}

/* ---- the corpus ----------------------------------------------------------------------------- */

typedef struct corpus_case {
  int ogb;          /* 0: GraphSAINT, 1: OGB binary */
  const char *rel;  /* under FG_CORPUS */
  fg_status want;
  const char *msg;  /* substring of the message */
} corpus_case;

static const corpus_case cases[] = {
    {0, "saint/ok_tiny", FG_OK, NULL},
    {0, "saint/ok_multi", FG_OK, NULL},
    {0, "saint/ok_extra", FG_OK, NULL},
    {0, "saint/ok_f16", FG_OK, NULL},
    {0, "saint/missing_adj", FG_ERR_IO, "saint/missing_adj: missing adj_full.npz"},
    {0, "saint/missing_role", FG_ERR_IO, "saint/missing_role: missing role.json"},
    {0, "saint/adj_not_square", FG_ERR_FORMAT,
     "adj_not_square/adj_full.npz[shape.npy]: the matrix is 6 x 7, not square"},
    {0, "saint/feats_rows", FG_ERR_FORMAT,
     "feats_rows/feats.npy: 5 rows, but adj_full.npz has 6 nodes"},
    {0, "saint/feats_1d", FG_ERR_FORMAT, "feats_1d/feats.npy: expected shape (N, F), got 1"},
    {0, "saint/feats_nan", FG_ERR_NUMERIC,
     "feats_nan/feats.npy: row 3, column 1: value nan is not finite"},
    {0, "saint/cm_missing_node", FG_ERR_FORMAT,
     "cm_missing_node/class_map.json: node 4 has no entry (5 of the 6 nodes of adj_full.npz "
     "have one)"},
    {0, "saint/cm_not_int", FG_ERR_FORMAT,
     "cm_not_int/class_map.json:1:15: node 1: class 1.5 is not an integer"},
    {0, "saint/cm_string_value", FG_ERR_FORMAT,
     "cm_string_value/class_map.json:1:15: expected a class id (a number), found a string"},
    {0, "saint/cm_negative", FG_ERR_FORMAT,
     "cm_negative/class_map.json:1:15: node 1: class -1 out of range [0, 1048576)"},
    {0, "saint/cm_dup_key", FG_ERR_FORMAT, "cm_dup_key/class_map.json:1:42: node 1 appears twice"},
    {0, "saint/cm_bad_key", FG_ERR_FORMAT,
     "cm_bad_key/class_map.json:1:10: key 'x1' is not a node id"},
    {0, "saint/cm_key_range", FG_ERR_FORMAT,
     "cm_key_range/class_map.json:1:42: key '6': node id out of range [0, 6)"},
    {0, "saint/cm_leading_zero", FG_ERR_FORMAT,
     "cm_leading_zero/class_map.json:1:10: key '01' is not a node id"},
    {0, "saint/cm_mixed", FG_ERR_FORMAT,
     "cm_mixed/class_map.json:1:15: node 1's value is a list, but node 0's was a class id"},
    {0, "saint/cm_list_len", FG_ERR_FORMAT,
     "cm_list_len/class_map.json:1:40: node 2: more than 2 targets (node 0's list has 2)"},
    {0, "saint/cm_list_value", FG_ERR_FORMAT,
     "cm_list_value/class_map.json:1:24: node 1: target 1 is 2, expected 0 or 1"},
    {0, "saint/cm_trailing_comma", FG_ERR_FORMAT,
     "cm_trailing_comma/class_map.json:1:49: '}' after a comma (trailing commas are not JSON)"},
    {0, "saint/cm_unterminated", FG_ERR_FORMAT,
     "cm_unterminated/class_map.json:1:44: unterminated string (it starts at 1:42)"},
    {0, "saint/cm_garbage_after", FG_ERR_FORMAT,
     "cm_garbage_after/class_map.json:2:1: '}' after the end of the document"},
    {0, "saint/cm_empty", FG_ERR_FORMAT,
     "cm_empty/class_map.json:1:1: expected an object mapping node ids to classes ('{'), found "
     "the end of the file"},
    {0, "saint/cm_control_byte", FG_ERR_FORMAT,
     "cm_control_byte/class_map.json:1:12: control byte 0x09 in a string"},
    {0, "saint/cm_bad_utf8", FG_ERR_FORMAT,
     "cm_bad_utf8/class_map.json:1:11: invalid UTF-8 sequence in a string"},
    {0, "saint/cm_nan", FG_ERR_FORMAT,
     "cm_nan/class_map.json:1:15: expected a class id (a number), found 'N'"},
    {0, "saint/cm_sparse_classes", FG_ERR_FORMAT,
     "cm_sparse_classes/class_map.json: element 5: label 99999 makes 100000 classes"},
    {0, "saint/role_range", FG_ERR_FORMAT,
     "role_range/role.json:1:26: 'va' element 1: node id 6 out of range [0, 6)"},
    {0, "saint/role_two_roles", FG_ERR_FORMAT,
     "role_two_roles/role.json:1:40: node 1 is in 'te' and in 'tr' too"},
    {0, "saint/role_twice", FG_ERR_FORMAT,
     "role_twice/role.json:1:15: node 0 is in 'tr' and listed twice there"},
    {0, "saint/role_missing_te", FG_ERR_FORMAT, "role_missing_te/role.json: no 'te' list"},
    {0, "saint/role_dup_key", FG_ERR_FORMAT, "role_dup_key/role.json:1:27: 'tr' appears twice"},
    {0, "saint/role_not_list", FG_ERR_FORMAT,
     "role_not_list/role.json:1:8: expected a list of node ids ('['), found '0'"},
    {0, "saint/role_syntax", FG_ERR_FORMAT,
     "role_syntax/role.json:3:12: expected ',' or ']' after an element, found '3'"},
    {0, "saint/role_deep", FG_ERR_FORMAT,
     "role_deep/role.json:1:103: containers nested more than 64 deep"},
    {0, "saint/role_not_object", FG_ERR_FORMAT,
     "role_not_object/role.json:1:1: expected an object with lists 'tr', 'va' and 'te'"},

    {1, "ogbbin/ok_tiny", FG_OK, NULL},
    {1, "ogbbin/ok_nolabel", FG_OK, NULL},
    {1, "ogbbin/ok_f16_nan", FG_OK, NULL},
    {1, "ogbbin/ok_multi", FG_OK, NULL},
    {1, "ogbbin/edge_shape", FG_ERR_FORMAT,
     "edge_shape/raw/data.npz[edge_index.npy]: expected shape (2, E) (sources, then targets), "
     "got (6, 2)"},
    {1, "ogbbin/edge_range", FG_ERR_FORMAT,
     "edge_range/raw/data.npz[edge_index.npy]: element (1, 3): node id 9 out of range [0, 6)"},
    {1, "ogbbin/edge_float", FG_ERR_FORMAT,
     "edge_float/raw/data.npz[edge_index.npy]: expected an integer array, got dtype '<f8'"},
    {1, "ogbbin/edge_missing", FG_ERR_FORMAT,
     "edge_missing/raw/data.npz: member edge_index.npy is missing"},
    {1, "ogbbin/edges_count", FG_ERR_FORMAT,
     "edges_count/raw/data.npz[edge_index.npy]: 6 edges, but num_edges_list says 7"},
    {1, "ogbbin/nodes_count", FG_ERR_FORMAT,
     "nodes_count/raw/data.npz[edge_index.npy]: element (1, 4): node id 5 out of range [0, 5) "
     "(num_nodes_list)"},
    {1, "ogbbin/nodes_feat_rows", FG_ERR_FORMAT,
     "nodes_feat_rows/raw/data.npz[node_feat.npy]: expected shape (6, F) (one row per node), "
     "got (5, 3)"},
    {1, "ogbbin/nodes_two_graphs", FG_ERR_UNSUPPORTED,
     "nodes_two_graphs/raw/data.npz[num_nodes_list.npy]: 2 graphs"},
    {1, "ogbbin/feat_nan", FG_ERR_NUMERIC,
     "feat_nan/raw/data.npz[node_feat.npy]: row 1, column 1: value nan is not finite"},
    {1, "ogbbin/label_rows", FG_ERR_FORMAT,
     "label_rows/raw/node-label.npz[node_label.npy]: expected shape (6, 1) or (6, T) (one row "
     "per node), got (5, 1)"},
    {1, "ogbbin/label_fraction", FG_ERR_FORMAT,
     "label_fraction/raw/node-label.npz[node_label.npy]: node 3: label 0.5 is not a class id"},
    {1, "ogbbin/label_target_value", FG_ERR_FORMAT,
     "label_target_value/raw/node-label.npz[node_label.npy]: node 2, task 1: target 2 is not 0 "
     "or 1"},
    {1, "ogbbin/label_missing_member", FG_ERR_FORMAT,
     "label_missing_member/raw/node-label.npz: member node_label.npy is missing"},
    {1, "ogbbin/split_unlabelled", FG_ERR_FORMAT,
     "split_unlabelled/split/s/valid.csv.gz: line 1: node 2 is in the valid split but has no "
     "label"},
    {1, "ogbbin/both_layouts", FG_ERR_FORMAT,
     "both_layouts: both raw/data.npz and "},
    {1, "ogbbin/data_truncated", FG_ERR_FORMAT,
     "data_truncated/raw/data.npz: not a zip archive (no end-of-central-directory record; "
     "truncated?)"},
};

static float tiny_x(int64_t i, int64_t j) {
  return (float)(i * 3 + j) / 4.0f;
}

static int raw_empty(const fg_raw *r) {
  return !r->src && !r->dst && !r->features && !r->labels && !r->targets && !r->split &&
         r->num_nodes == 0;
}

/* The 6-node graph's contents: edges i -> i + 1 (mod 6), GraphSAINT's in both directions. */
static void check_tiny(const char *rel, const fg_raw *r, int saint) {
  EXPECT_MSG(r->num_nodes == 6, "%s: %lld nodes", rel, (long long)r->num_nodes);
  if (r->num_nodes != 6) return;
  EXPECT_MSG(r->num_edges == (saint ? 12 : 6), "%s: %lld edges", rel, (long long)r->num_edges);
  EXPECT(r->directed == saint);
  int64_t have[6][6];
  memset(have, 0, sizeof have);
  for (int64_t e = 0; e < r->num_edges; e++) have[r->src[e]][r->dst[e]]++;
  for (int i = 0; i < 6; i++) {
    EXPECT_MSG(have[i][(i + 1) % 6] == 1, "%s: edge %d -> %d", rel, i, (i + 1) % 6);
    if (saint) EXPECT_MSG(have[(i + 1) % 6][i] == 1, "%s: edge %d -> %d", rel, (i + 1) % 6, i);
  }
  const int no_feat = strstr(rel, "ok_nolabel") != NULL;
  EXPECT(no_feat ? !r->features && r->num_features == 0 : r->features && r->num_features == 3);
  for (int64_t i = 0; r->features && i < 18; i++)
    EXPECT_MSG(r->features[i] == tiny_x(i / 3, i % 3), "%s: feature %lld", rel, (long long)i);
}

/* with_split: 0 for the memory readers of the .npz pair (the split is csv files) */
static void check_good(const corpus_case *c, const fg_raw *r, int with_split) {
  check_tiny(c->rel, r, !c->ogb);
  static const int32_t y[6] = {0, 1, 2, 0, 1, 2};
  static const int8_t split[6] = {0, 0, 1, 1, 2, 2};
  const int multi = strstr(c->rel, "ok_multi") != NULL;
  if (strstr(c->rel, "ok_nolabel")) {
    EXPECT(!r->labels && !r->targets && !r->split && r->num_classes == 0 && r->num_tasks == 0);
    return;
  }
  if (multi) {
    EXPECT(!r->labels && r->num_classes == 0 && r->targets && r->num_tasks == 3);
    if (!r->targets || r->num_tasks != 3) return;
    /* make_saint.py: [class 0, class 1, i odd]; make_ogbbin.py: the literal table */
    static const int8_t og[18] = {0, 1, 1, 1, 0, -1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0};
    for (int i = 0; i < 6; i++)
      for (int t = 0; t < 3; t++) {
        const int8_t want = c->ogb ? og[i * 3 + t]
                            : (int8_t)(t == 0 ? y[i] == 0 : t == 1 ? y[i] == 1 : i % 2);
        EXPECT_MSG(r->targets[i * 3 + t] == want, "%s: node %d task %d: %d", c->rel, i, t,
                   r->targets[i * 3 + t]);
      }
  } else {
    EXPECT(r->labels && !r->targets && r->num_classes == 3 && r->num_tasks == 0);
    const int nan5 = strstr(c->rel, "ok_f16_nan") != NULL;
    for (int i = 0; r->labels && i < 6; i++)
      EXPECT_MSG(r->labels[i] == (nan5 && i == 5 ? -1 : y[i]), "%s: label %d", c->rel, i);
  }
  if (!with_split) return;
  EXPECT(r->split != NULL);
  const int extra = strstr(c->rel, "ok_extra") != NULL, nan5 = strstr(c->rel, "ok_f16_nan") != NULL;
  for (int i = 0; r->split && i < 6; i++) {
    const int want = (extra && i == 3) || (nan5 && i == 5) ? FG_SPLIT_NONE : split[i];
    EXPECT_MSG(r->split[i] == want, "%s: split of node %d: %d", c->rel, i, r->split[i]);
  }
}

static unsigned char *slurp(const char *dir, const char *base, size_t *len) {
  char path[1024];
  unsigned char *buf = NULL;
  snprintf(path, sizeof path, "%s/%s", dir, base);
  *len = 0;
  if (!fg_test_exists(path)) return NULL;
  if (fg_file_slurp(path, &buf, len) != FG_OK) {
    fprintf(stderr, "%s: %s\n", path, fg_last_error());
    fg_test_failures++;
  }
  return buf;
}

/* The memory readers over the case's files: the JSON maps (n = 6), the .npz pair. Cases whose
 * fault is elsewhere (a missing file, the split csv, feats.npy, the adjacency) are skipped. */
static void run_mem(const corpus_case *c, const char *dir) {
  fg_raw r;
  size_t la = 0, lb = 0;
  unsigned char *a, *b;
  fg_status st;
  const char *base = strrchr(c->rel, '/') + 1;
  if (!c->ogb) {
    if (strncmp(base, "cm_", 3) && strncmp(base, "role_", 5) && strncmp(base, "ok_", 3)) return;
    a = slurp(dir, "class_map.json", &la);
    b = slurp(dir, "role.json", &lb);
    fg_error_clear();
    st = fg_read_saint_maps_mem(a ? a : (const unsigned char *)"", la,
                                b ? b : (const unsigned char *)"", lb, 6, &r);
  } else {
    if (strstr(base, "split_") || strstr(base, "both_")) return;
    a = slurp(dir, "raw/data.npz", &la);
    b = slurp(dir, "raw/node-label.npz", &lb);
    fg_error_clear();
    st = fg_read_ogb_npz_mem(a, la, b, lb, dir, &r);
  }
  EXPECT_MSG(st == c->want, "%s (memory): status %d, expected %d: %s", c->rel, (int)st,
             (int)c->want, fg_last_error());
  if (st != FG_OK && c->msg) {
    /* the memory readers name the files without the folder (the maps) or as given */
    const char *m = c->msg, *slash = strchr(m, '/');
    EXPECT_MSG(fg_test_error_contains(c->ogb || !slash ? m : slash + 1), "%s (memory)", c->rel);
  }
  if (st == FG_OK && c->ogb) check_good(c, &r, 0);
  if (st != FG_OK) EXPECT_MSG(raw_empty(&r), "%s (memory): output not cleared", c->rel);
  fg_raw_free(&r);
  free(a);
  free(b);
}

static void run_case(const corpus_case *c) {
  char dir[1024];
  fg_raw r;
  snprintf(dir, sizeof dir, "%s/%s", FG_CORPUS, c->rel);
  fg_error_clear();
  fg_status st = c->ogb ? fg_read_ogb(dir, NULL, &r) : fg_read_saint(dir, &r);
  EXPECT_MSG(st == c->want, "%s: status %d, expected %d: %s", c->rel, (int)st, (int)c->want,
             fg_last_error());
  if (st != FG_OK && c->msg) EXPECT_MSG(fg_test_error_contains(c->msg), "%s", c->rel);
  if (st == FG_OK && c->want == FG_OK) check_good(c, &r, 1);
  if (st != FG_OK) EXPECT_MSG(raw_empty(&r), "%s: output not cleared on failure", c->rel);
  fg_raw_free(&r);
  run_mem(c, dir);
}

/* ---- Cora in each layout -------------------------------------------------------------------- */

/* Copy from to to, inflating gzip data (gzread copies anything else as it is). */
static int copy_file(const char *from, const char *to) {
  gzFile in = gzopen(from, "rb");
  FILE *out = fopen(to, "wb");
  char buf[65536];
  int ok = in && out;
  for (int k; ok && (k = gzread(in, buf, sizeof buf)) > 0;)
    ok = fwrite(buf, 1, (size_t)k, out) == (size_t)k;
  if (in) gzclose(in);
  if (out && fclose(out) != 0) ok = 0;
  if (!ok) {
    fprintf(stderr, "copying %s to %s failed\n", from, to);
    fg_test_failures++;
  }
  return ok;
}

/* A GraphSAINT folder in tmp: saint/cora with feats.npy inflated, and over it the files of
 * overlay (NULL: none). */
static void make_saint_dir(const char *tmp, const char *overlay) {
  static const char *const files[3] = {"adj_full.npz", "class_map.json", "role.json"};
  char from[1024], to[1024];
  for (int i = 0; i < 3; i++) {
    snprintf(from, sizeof from, "%s/saint/cora/%s", FG_CORPUS, files[i]);
    snprintf(to, sizeof to, "%s/%s", tmp, files[i]);
    copy_file(from, to);
  }
  snprintf(from, sizeof from, "%s/saint/cora/feats.npy.gz", FG_CORPUS);
  snprintf(to, sizeof to, "%s/feats.npy", tmp);
  copy_file(from, to);
  if (overlay) {
    snprintf(from, sizeof from, "%s/saint/%s/class_map.json", FG_CORPUS, overlay);
    snprintf(to, sizeof to, "%s/class_map.json", tmp);
    copy_file(from, to);
  }
}

static void remove_saint_dir(const char *tmp) {
  static const char *const files[4] = {"adj_full.npz", "class_map.json", "role.json",
                                       "feats.npy"};
  char p[1024];
  for (int i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s/%s", tmp, files[i]);
    unlink(p);
  }
}

/* ds equals ref part by part (labels optionally skipped: compared by the caller). */
static void same_dataset(const char *what, const fg_dataset *ref, const fg_dataset *ds,
                         int labels) {
  fg_ds_fingerprint a, b;
  fg_dataset_fingerprint(ref, &a);
  fg_dataset_fingerprint(ds, &b);
  const int64_t n = ref->num_nodes;
  EXPECT_MSG(ds->num_nodes == n && ds->adj.nnz == ref->adj.nnz, "%s: %lld nodes, %lld entries",
             what, (long long)ds->num_nodes, (long long)ds->adj.nnz);
  if (ds->num_nodes != n || ds->adj.nnz != ref->adj.nnz) return;
  EXPECT_MSG(memcmp(ds->adj.rowptr, ref->adj.rowptr, (size_t)(n + 1) * sizeof *ds->adj.rowptr) == 0,
             "%s: row offsets differ", what);
  EXPECT_MSG(memcmp(ds->adj.col, ref->adj.col, (size_t)ref->adj.nnz * sizeof *ds->adj.col) == 0,
             "%s: columns differ", what);
  EXPECT_MSG(a.graph == b.graph && a.entries == b.entries, "%s: graph hash", what);
  EXPECT(ds->num_features == ref->num_features);
  if (ds->num_features == ref->num_features) {
    EXPECT_MSG(memcmp(ds->features, ref->features,
                      (size_t)(n * ref->num_features) * sizeof(float)) == 0,
               "%s: features differ", what);
    EXPECT(a.feature_hash == b.feature_hash);
  }
  EXPECT_MSG(memcmp(ds->split, ref->split, (size_t)n) == 0, "%s: split differs", what);
  EXPECT(a.split == b.split);
  if (labels) {
    EXPECT_MSG(ds->labels && memcmp(ds->labels, ref->labels, (size_t)n * sizeof(int32_t)) == 0,
               "%s: labels differ", what);
    EXPECT_MSG(memcmp(&a, &b, sizeof a) == 0, "%s: fingerprints differ", what);
  }
  EXPECT(!ds->features_generated && !ds->labels_generated && !ds->split_generated);
}

static void train_losses(const fg_dataset *ds, double *loss) {
  fg_train_config c = fg_train_config_default();
  fg_train_result res;
  c.epochs = EPOCHS;
  c.verbose = 0;
  c.loss_history = loss;
  EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &res));
}

static void test_cora(void) {
  char tmp[] = "/tmp/fg_shipped_XXXXXX", path[1024];
  fg_dataset *ref = NULL, *ds = NULL;
  fg_load_config lc = fg_load_config_default();
  double ref_loss[EPOCHS], loss[EPOCHS];
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    fg_test_failures++;
    return;
  }
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ref));
  if (!ref) return;
  train_losses(ref, ref_loss);

  /* the raw reads agree with the csv layout's before any graph build */
  fg_raw csv, r;
  EXPECT_OK(fg_read_ogb(FG_DEMO_DATA, NULL, &csv));
  make_saint_dir(tmp, NULL);
  EXPECT_OK(fg_read_saint(tmp, &r));
  EXPECT(r.num_nodes == 2708 && r.num_edges == 2 * 5278 && r.num_features == 1433 &&
         r.num_classes == 7);
  if (r.features && csv.features && r.labels && r.split)
    EXPECT(memcmp(r.features, csv.features, 2708 * 1433 * sizeof(float)) == 0 &&
           memcmp(r.labels, csv.labels, 2708 * sizeof(int32_t)) == 0 &&
           memcmp(r.split, csv.split, 2708) == 0);
  fg_raw_free(&r);

  /* GraphSAINT, then OGB's binary layout with float32 and float16 features */
  const char *dirs[3] = {tmp, "ogbbin/cora", "ogbbin/cora_f16"};
  for (int k = 0; k < 3; k++) {
    if (k) snprintf(path, sizeof path, "%s/%s", FG_CORPUS, dirs[k]);
    const char *p = k ? path : tmp;
    EXPECT_OK(fg_dataset_load(p, &lc, &ds));
    if (!ds) continue;
    same_dataset(k ? dirs[k] : "saint/cora", ref, ds, 1);
    train_losses(ds, loss);
    for (int e = 0; e < EPOCHS; e++)
      EXPECT_MSG(loss[e] == ref_loss[e], "%s epoch %d: loss %.9g, data/cora %.9g", p, e + 1,
                 loss[e], ref_loss[e]);
    fg_dataset_destroy(&ds);
  }

  /* multi-label: Cora's classes one-hot as 7 tasks */
  make_saint_dir(tmp, "cora_multi");
  EXPECT_OK(fg_read_saint(tmp, &r));
  EXPECT(r.num_tasks == 7 && r.targets && !r.labels && r.num_classes == 0);
  if (r.targets && r.num_tasks == 7 && csv.labels) {
    int64_t wrong = 0;
    for (int64_t i = 0; i < 2708; i++)
      for (int t = 0; t < 7; t++) wrong += r.targets[i * 7 + t] != (csv.labels[i] == t);
    EXPECT_MSG(wrong == 0, "%lld targets are not Cora's classes one-hot", (long long)wrong);
    EXPECT(r.split && memcmp(r.split, csv.split, 2708) == 0);
  }
  fg_raw_free(&r);
  EXPECT_OK(fg_dataset_load(tmp, &lc, &ds));
  if (ds) {
    EXPECT(ds->num_tasks == 7 && ds->targets && ds->num_classes == 7);
    same_dataset("saint/cora_multi", ref, ds, 0);
    /* the targets train as a multi-label task (sigmoid BCE, the default for targets) */
    train_losses(ds, loss);
    for (int e = 0; e < EPOCHS; e++)
      EXPECT_MSG(isfinite(loss[e]) && loss[e] > 0 && (e == 0 || loss[e] < loss[e - 1]),
                 "cora_multi epoch %d: loss %.9g", e + 1, loss[e]);
    fg_dataset_destroy(&ds);
  }
  /* the path of adj_full.npz names the folder it is in */
  snprintf(path, sizeof path, "%s/adj_full.npz", tmp);
  EXPECT_OK(fg_dataset_load(path, &lc, &ds));
  EXPECT(ds && ds->num_tasks == 7);
  fg_dataset_destroy(&ds);

  /* NaN labels: nodes 700..709 unlabelled, everything else Cora's; no node_feat: generated */
  snprintf(path, sizeof path, "%s/ogbbin/cora_nan", FG_CORPUS);
  EXPECT_OK(fg_read_ogb(path, NULL, &r));
  EXPECT(r.labels && !r.features && r.num_classes == 7);
  for (int64_t i = 0; r.labels && csv.labels && i < 2708; i++)
    EXPECT_MSG(r.labels[i] == (i >= 700 && i < 710 ? -1 : csv.labels[i]), "cora_nan: node %lld",
               (long long)i);
  EXPECT(r.split && memcmp(r.split, csv.split, 2708) == 0);
  fg_raw_free(&r);

  /* the budget: each reader stops before it allocates past the limit */
  fg_io_set_alloc_limit(4 << 20);
  make_saint_dir(tmp, NULL);
  EXPECT(fg_read_saint(tmp, &r) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("feats.npy: reading the file whole needs"));
  snprintf(path, sizeof path, "%s/ogbbin/cora", FG_CORPUS);
  EXPECT(fg_read_ogb(path, NULL, &r) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("raw/data.npz: member 'node_feat.npy' inflates to 15522384 bytes"));
  fg_io_set_alloc_limit(0);
  lc.mem_limit = 10e6;
  EXPECT(fg_dataset_load(tmp, &lc, &ds) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("feats.npy: reading the file whole needs 15.5 MB, 15.9 MB in all "
                                "with what the read holds, but --mem-limit is 10.0 MB"));

  fg_raw_free(&csv);
  remove_saint_dir(tmp);
  rmdir(tmp);
  fg_dataset_destroy(&ref);
}

int main(void) {
  test_json();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  if (fg_init() != FG_OK) {
    fprintf(stderr, "fg_init: %s\n", fg_last_error());
    return 1;
  }
  test_cora();
  fg_finalize();
  return fg_test_finish("test_io_shipped");
}
