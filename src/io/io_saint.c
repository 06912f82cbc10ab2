/* io_saint.c -- GraphSAINT's directory layout (Flickr, Reddit, PPI, Yelp, Amazon, ogbn-arxiv as
 * GraphSAINT ships them):
 *   adj_full.npz    scipy.sparse CSR matrix, N x N: the whole graph (read by io_scipy.c)
 *   feats.npy       N x F float features
 *   class_map.json  {"<node id>": class, ...} or {"<node id>": [0/1 x T], ...}, every node once
 *   role.json       {"tr": [ids], "va": [ids], "te": [ids]}
 * adj_train.npz (the training subgraph GraphSAINT's sampler draws from) is ignored: full-graph
 * training uses adj_full and masks the loss with the split. The JSON maps are streamed (Yelp's
 * class_map is ~100 MB of one line); what they fill is weighed against the budget first. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <sys/stat.h>

#include "io/fg_io_internal.h"
#include "io/fg_json.h"

/* "file:line:column" of a position marked earlier (fg_json_mark), for a message */
#define AT(p) J->name, (long long)(p).line, (long long)(p).col

static const char *const role_key[3] = {"tr", "va", "te"};

/* FG_ERR_MEMLIMIT unless `more` bytes fit beside held. */
static fg_status saint_hold(const char *name, double held, double more, const char *what) {
  fg_status st = FG_OK;
  char a[32], b[32];
  FG_REQUIRE(!fg_io_over_limit(held + more), FG_ERR_MEMLIMIT,
             "%s: %s needs %s, %s in all with what the read holds, but %s", name, what,
             fg_format_bytes(more, a, sizeof a), fg_format_bytes(held + more, b, sizeof b),
             fg_io_limit_text());
cleanup:
  return st;
}

/* A member's key naming a node id in [0, n): decimal digits, no sign or leading zero. *at: the
 * key's position. */
static fg_status node_key(fg_json *J, int64_t n, const char *what, int64_t *id,
                          fg_json_pos *at) {
  fg_status st = FG_OK;
  char key[40], show[64];
  FG_CHECK(fg_json_mark(J, at));
  FG_CHECK(fg_json_key(J, key, sizeof key, what));
  const char *e = NULL;
  int64_t v = -1;
  const size_t len = strlen(key);
  const int digits = len > 0 && strspn(key, "0123456789") == len && (key[0] != '0' || len == 1);
  FG_REQUIRE(digits && fg_parse_i64(key, &e, &v) == 0, FG_ERR_FORMAT,
             "%s:%lld:%lld: key '%s' is not a node id (a decimal integer without sign or leading "
             "zeros)", AT(*at), fg_printable(key, len, show, sizeof show));
  FG_REQUIRE(v < n, FG_ERR_FORMAT, "%s:%lld:%lld: key '%s': node id out of range [0, %lld)",
             AT(*at), key, (long long)n);
  *id = v;
cleanup:
  return st;
}

/* The first list of a multi-label class_map: its 0/1 values into *first (grown here), *T its
 * length. */
static fg_status first_list(fg_json *J, int64_t node, int8_t **first, int64_t *T) {
  fg_status st = FG_OK;
  int64_t count = 0, cap = 0;
  int more;
  char where[512];
  int8_t *v = NULL;
  FG_CHECK(fg_json_begin(J, '[', "a list"));
  for (;;) {
    FG_CHECK(fg_json_next(J, '[', &count, &more));
    if (!more) break;
    fg_json_num x;
    fg_json_where(J, where, sizeof where);
    FG_CHECK(fg_json_number(J, &x, "a 0 or 1"));
    FG_REQUIRE(x.is_int && (x.i == 0 || x.i == 1), FG_ERR_FORMAT,
               "%s: node %lld: target %lld is %s, expected 0 or 1", where, (long long)node,
               (long long)count - 1, x.text);
    FG_REQUIRE(count <= FG_IO_MAX_CLASSES, FG_ERR_FORMAT,
               "%s: node %lld: more than %lld targets", where, (long long)node,
               (long long)FG_IO_MAX_CLASSES);
    if (count > cap) {
      cap = cap ? cap * 2 : 64;
      int8_t *nv = realloc(v, (size_t)cap);
      FG_REQUIRE(nv, FG_ERR_NOMEM, "out of memory reading a list");
      v = nv;
    }
    v[count - 1] = (int8_t)x.i;
  }
  FG_REQUIRE(count > 0, FG_ERR_FORMAT, "%s: node %lld: an empty list of targets", J->name,
             (long long)node);
  *first = v;
  v = NULL;
  *T = count;
cleanup:
  free(v);
  return st;
}

/* class_map.json over n nodes: labels (integer values) or targets (lists), every node once. */
static fg_status read_class_map(fg_json *J, int64_t n, double held, fg_raw *r) {
  fg_status st = FG_OK;
  uint8_t *seen = NULL;
  int8_t *first = NULL;
  int64_t count = 0, present = 0, maxl = -1, first_node = -1;
  int more, mode = 0; /* 1: class ids, 2: lists */
  FG_CHECK(saint_hold(J->name, held, (double)n, "a mark per node"));
  FG_CALLOC(seen, n);
  held += (double)n;
  FG_CHECK(fg_json_begin(J, '{', "an object mapping node ids to classes"));
  for (;;) {
    FG_CHECK(fg_json_next(J, '{', &count, &more));
    if (!more) break;
    int64_t v = 0;
    fg_json_pos at;
    FG_CHECK(node_key(J, n, "a node id", &v, &at));
    FG_REQUIRE(!seen[v], FG_ERR_FORMAT, "%s:%lld:%lld: node %lld appears twice", AT(at),
               (long long)v);
    int c;
    FG_CHECK(fg_json_mark(J, &at));
    FG_CHECK(fg_json_peek(J, &c));
    seen[v] = 1;
    present++;
    const int is_list = c == '[';
    if (!mode) {
      mode = is_list ? 2 : 1;
      first_node = v;
      if (mode == 1) {
        FG_CHECK(saint_hold(J->name, held, 4.0 * (double)n, "the labels"));
        FG_ALLOC(r->labels, n);
        for (int64_t i = 0; i < n; i++) r->labels[i] = -1;
        held += 4.0 * (double)n;
      }
    } else {
      FG_REQUIRE((mode == 2) == is_list, FG_ERR_FORMAT,
                 "%s:%lld:%lld: node %lld's value is %s, but node %lld's was %s: the values must "
                 "be all class ids or all lists of 0/1 (multi-label)", AT(at), (long long)v,
                 is_list ? "a list" : "not a list", (long long)first_node,
                 is_list ? "a class id" : "a list");
    }
    if (mode == 1) {
      fg_json_num x;
      FG_CHECK(fg_json_number(J, &x, "a class id"));
      FG_REQUIRE(x.is_int, FG_ERR_FORMAT, "%s:%lld:%lld: node %lld: class %s is not an integer",
                 AT(at), (long long)v, x.text);
      FG_REQUIRE(x.i >= 0 && x.i < FG_IO_MAX_CLASSES, FG_ERR_FORMAT,
                 "%s:%lld:%lld: node %lld: class %s out of range [0, %lld)", AT(at), (long long)v,
                 x.text, (long long)FG_IO_MAX_CLASSES);
      r->labels[v] = (int32_t)x.i;
      if (x.i > maxl) maxl = x.i;
    } else if (!r->targets) {
      int64_t T = 0;
      FG_CHECK(first_list(J, v, &first, &T));
      FG_REQUIRE((double)T * (double)n < 9e18, FG_ERR_FORMAT, "%s: %lld x %lld targets overflow",
                 J->name, (long long)n, (long long)T);
      char what[96];
      snprintf(what, sizeof what, "the targets (%lld nodes x %lld tasks, a byte each)",
               (long long)n, (long long)T);
      FG_CHECK(saint_hold(J->name, held, (double)n * (double)T, what));
      FG_ALLOC(r->targets, n * T);
      memset(r->targets, -1, (size_t)(n * T));
      held += (double)n * (double)T;
      r->num_tasks = T;
      memcpy(r->targets + v * T, first, (size_t)T);
    } else {
      const int64_t T = r->num_tasks;
      int8_t *row = r->targets + v * T;
      int64_t k = 0;
      FG_CHECK(fg_json_begin(J, '[', "a list of 0/1 targets"));
      for (;;) {
        FG_CHECK(fg_json_next(J, '[', &k, &more));
        if (!more) break;
        fg_json_num x;
        fg_json_pos el;
        FG_CHECK(fg_json_mark(J, &el));
        FG_REQUIRE(k <= T, FG_ERR_FORMAT,
                   "%s:%lld:%lld: node %lld: more than %lld targets (node %lld's list has %lld)",
                   AT(el), (long long)v, (long long)T, (long long)first_node, (long long)T);
        FG_CHECK(fg_json_number(J, &x, "a 0 or 1"));
        FG_REQUIRE(x.is_int && (x.i == 0 || x.i == 1), FG_ERR_FORMAT,
                   "%s:%lld:%lld: node %lld: target %lld is %s, expected 0 or 1", AT(el),
                   (long long)v, (long long)k - 1, x.text);
        row[k - 1] = (int8_t)x.i;
      }
      FG_REQUIRE(k == T, FG_ERR_FORMAT, "%s:%lld:%lld: node %lld: %lld targets, but node %lld's "
                 "list has %lld", AT(at), (long long)v, (long long)k, (long long)first_node,
                 (long long)T);
    }
  }
  FG_CHECK(fg_json_end(J));
  if (present < n) {
    int64_t miss = 0;
    while (seen[miss]) miss++;
    FG_FAIL(FG_ERR_FORMAT, "%s: node %lld has no entry (%lld of the %lld nodes of adj_full.npz "
            "have one): class_map.json must map every node", J->name, (long long)miss,
            (long long)present, (long long)n);
  }
  if (mode == 1) {
    r->num_classes = maxl + 1;
    FG_CHECK(fg_raw_check_classes(r, J->name, 0));
  }
cleanup:
  free(seen);
  free(first);
  return st;
}

/* Whether node v has a label (a class, or any target not missing). */
static int labelled(const fg_raw *r, int64_t v) {
  if (r->labels) return r->labels[v] >= 0;
  if (!r->targets) return 0;
  for (int64_t t = 0; t < r->num_tasks; t++)
    if (r->targets[v * r->num_tasks + t] >= 0) return 1;
  return 0;
}

/* role.json over n nodes into split (n, FG_SPLIT_NONE where no role names a node). Keys other
 * than the three roles are skipped (checked as JSON). */
static fg_status read_role(fg_json *J, int64_t n, const fg_raw *r, int8_t *split) {
  fg_status st = FG_OK;
  int64_t count = 0;
  int more, have[3] = {0, 0, 0};
  char key[64], where[512];
  memset(split, FG_SPLIT_NONE, (size_t)n);
  FG_CHECK(fg_json_begin(J, '{', "an object with lists 'tr', 'va' and 'te'"));
  for (;;) {
    FG_CHECK(fg_json_next(J, '{', &count, &more));
    if (!more) break;
    fg_json_where(J, where, sizeof where);
    FG_CHECK(fg_json_key(J, key, sizeof key, "a role name"));
    int k = -1;
    for (int i = 0; i < 3; i++)
      if (strcmp(key, role_key[i]) == 0) k = i;
    if (k < 0) {
      FG_CHECK(fg_json_skip(J));
      continue;
    }
    FG_REQUIRE(!have[k], FG_ERR_FORMAT, "%s: '%s' appears twice", where, role_key[k]);
    have[k] = 1;
    int64_t m = 0;
    FG_CHECK(fg_json_begin(J, '[', "a list of node ids"));
    for (;;) {
      FG_CHECK(fg_json_next(J, '[', &m, &more));
      if (!more) break;
      fg_json_num x;
      fg_json_pos at;
      FG_CHECK(fg_json_mark(J, &at));
      FG_CHECK(fg_json_number(J, &x, "a node id"));
      FG_REQUIRE(x.is_int && x.i >= 0 && x.i < n, FG_ERR_FORMAT,
                 "%s:%lld:%lld: '%s' element %lld: node id %s out of range [0, %lld)", AT(at),
                 role_key[k], (long long)m - 1, x.text, (long long)n);
      const int64_t v = x.i;
      FG_REQUIRE(split[v] == FG_SPLIT_NONE, FG_ERR_FORMAT,
                 "%s:%lld:%lld: node %lld is in '%s' and %s", AT(at), (long long)v, role_key[k],
                 split[v] == k ? "listed twice there" : split[v] == 0 ? "in 'tr' too"
                 : split[v] == 1 ? "in 'va' too" : "in 'te' too");
      FG_REQUIRE(labelled(r, v), FG_ERR_FORMAT,
                 "%s:%lld:%lld: node %lld is in '%s' but has no label", AT(at), (long long)v,
                 role_key[k]);
      split[v] = (int8_t)k;
    }
  }
  FG_CHECK(fg_json_end(J));
  for (int k = 0; k < 3; k++)
    FG_REQUIRE(have[k], FG_ERR_FORMAT, "%s: no '%s' list (role.json names the nodes of each role: "
               "'tr' train, 'va' validation, 'te' test)", J->name, role_key[k]);
cleanup:
  return st;
}

/* The two maps (class_map, then role) over n nodes, from open JSON streams. */
static fg_status read_maps(fg_json *cm, fg_json *role, int64_t n, double held, fg_raw *r) {
  fg_status st = FG_OK;
  FG_CHECK(read_class_map(cm, n, held, r));
  held += r->labels ? 4.0 * (double)n : (double)n * (double)r->num_tasks;
  FG_CHECK(saint_hold(role->name, held, (double)n, "the split"));
  FG_ALLOC(r->split, n);
  FG_CHECK(read_role(role, n, r, r->split));
cleanup:
  return st;
}

fg_status fg_read_saint_maps_mem(const void *class_map, size_t cm_len, const void *role,
                                 size_t role_len, int64_t n, fg_raw *out) {
  fg_status st = FG_OK;
  fg_json a, b;
  fg_raw r = {0};
  memset(out, 0, sizeof *out);
  FG_REQUIRE(n > 0 && n <= FG_IO_MAX_NODES, FG_ERR_INVALID_ARG,
             "fg_read_saint_maps_mem: %lld nodes", (long long)n);
  fg_json_open_mem(&a, class_map, cm_len, "class_map.json");
  fg_json_open_mem(&b, role, role_len, "role.json");
  r.num_nodes = n;
  FG_CHECK(read_maps(&a, &b, n, 0.0, &r));
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_raw_free(&r);
  return st;
}

/* dir/base must be a file: *path its name (freed by the caller). */
static fg_status need_file(const char *dir, const char *base, char **path) {
  fg_status st = FG_OK;
  struct stat sb;
  *path = fg_path_join(dir, base);
  FG_REQUIRE(*path, FG_ERR_NOMEM, "out of memory");
  FG_REQUIRE(stat(*path, &sb) == 0 && S_ISREG(sb.st_mode), FG_ERR_IO,
             "%s: missing %s (the GraphSAINT layout: adj_full.npz, feats.npy, class_map.json, "
             "role.json)", dir, base);
cleanup:
  return st;
}

/* feats.npy: n rows of float features. */
static fg_status read_feats(const char *path, int64_t n, double held, fg_raw *r) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t len = 0;
  fg_npy a;
  struct stat sb;
  FG_REQUIRE(stat(path, &sb) == 0, FG_ERR_IO, "%s: cannot stat", path);
  FG_CHECK(saint_hold(path, held, (double)sb.st_size, "reading the file whole"));
  FG_CHECK(fg_file_slurp(path, &buf, &len));
  held += (double)len;
  FG_CHECK(fg_npy_parse(buf, len, path, &a));
  FG_REQUIRE(a.kind == 'f' || a.kind == 'i' || a.kind == 'u' || a.kind == 'b', FG_ERR_FORMAT,
             "%s: expected a numeric array, got dtype '%s'", path, a.descr);
  FG_REQUIRE(a.ndim == 2, FG_ERR_FORMAT, "%s: expected shape (N, F), got %d dimension(s)", path,
             a.ndim);
  FG_REQUIRE(a.shape[0] == n, FG_ERR_FORMAT,
             "%s: %lld rows, but adj_full.npz has %lld nodes (one row per node)", path,
             (long long)a.shape[0], (long long)n);
  FG_REQUIRE(a.shape[1] > 0 && a.shape[1] < FG_IO_MAX_NODES, FG_ERR_FORMAT,
             "%s: feature width %lld out of range [1, %lld)", path, (long long)a.shape[1],
             (long long)FG_IO_MAX_NODES);
  {
    char what[96];
    snprintf(what, sizeof what, "a dense %lld x %lld float32 feature matrix", (long long)n,
             (long long)a.shape[1]);
    FG_CHECK(saint_hold(path, held, 4.0 * (double)a.count, what));
  }
  FG_ALLOC(r->features, a.count);
  FG_CHECK(fg_npy_to_f32(&a, path, r->features));
  r->num_features = a.shape[1];
cleanup:
  free(buf);
  return st;
}

fg_status fg_read_saint(const char *dir, fg_raw *out) {
  fg_status st = FG_OK;
  fg_raw r = {0};
  fg_json cm = {0}, role = {0};
  char *adj = NULL, *feats = NULL, *cmp = NULL, *rolep = NULL;
  unsigned char *buf = NULL;
  size_t len = 0;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(dir, FG_ERR_INVALID_ARG, "fg_read_saint: dir is NULL");
  /* every file is looked for first: a missing one is named before anything is read */
  FG_CHECK(need_file(dir, "adj_full.npz", &adj));
  FG_CHECK(need_file(dir, "feats.npy", &feats));
  FG_CHECK(need_file(dir, "class_map.json", &cmp));
  FG_CHECK(need_file(dir, "role.json", &rolep));

  FG_CHECK(fg_file_slurp(adj, &buf, &len));
  FG_CHECK(fg_read_scipy_sparse_mem(buf, len, adj, 0.0, &r));
  free(buf);
  buf = NULL;
  const int64_t n = r.num_nodes;
  FG_REQUIRE(n > 0, FG_ERR_FORMAT, "%s: the graph has no nodes (shape 0 x 0)", adj);
  double held = (double)r.num_edges * fg_io_edge_bytes();

  FG_CHECK(read_feats(feats, n, held, &r));
  held += 4.0 * (double)n * (double)r.num_features;

  FG_CHECK(fg_json_open(&cm, cmp));
  FG_CHECK(fg_json_open(&role, rolep));
  FG_CHECK(read_maps(&cm, &role, n, held, &r));
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_json_close(&cm);
  fg_json_close(&role);
  free(buf);
  free(adj);
  free(feats);
  free(cmp);
  free(rolep);
  fg_raw_free(&r);
  return st;
}
