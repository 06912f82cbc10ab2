/* io_ogb.c -- the OGB node-property raw layout:
 *   dir/raw/{num-node-list,num-edge-list,edge,node-feat,node-label}.csv[.gz]
 *   dir/split/<name>/{train,valid,test}.csv[.gz]
 * and the csv table parsers behind it. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "io/fg_io_internal.h"

static const char *const split_files[3] = {"train", "valid", "test"};

static int64_t count_fields(const char *s) {
  int64_t n = 1;
  for (; *s; s++) n += *s == ',';
  return n;
}

static const char *skip_blanks(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

static const char *show_token(const char *p, char *out, size_t cap) {
  p = skip_blanks(p);
  if (*p == ',' || *p == '\0') return "(empty)";
  return fg_token_text(p, ", \t", out, cap);
}

/* Grow a row-major table to hold at least need rows (capped by expect_rows when >= 0, and by
 * most, the rows the memory budget allows). */
static fg_status table_grow(fg_lines *L, void **data, int64_t *cap, int64_t need, int64_t width,
                            size_t elem, int64_t expect_rows, int64_t most) {
  fg_status st = FG_OK;
  if (need <= *cap) goto cleanup;
  /* The first block holds at most ~64K values (or one row), later ones double: memory stays
   * within twice what the rows present need, whatever the file declares. */
  int64_t nc = *cap ? *cap * 2 : FG_MAX(1, FG_MIN(1024, 65536 / width));
  if (expect_rows >= 0 && nc > expect_rows) nc = expect_rows;
  if (nc > most) nc = most;
  if (nc < need) nc = need;
  FG_REQUIRE((uint64_t)nc <= SIZE_MAX / elem / (uint64_t)width, FG_ERR_NOMEM,
             "%s: table too large (%lld rows of %lld values)", L->name, (long long)nc,
             (long long)width);
  void *nd = realloc(*data, (size_t)nc * (size_t)width * elem);
  FG_REQUIRE(nd, FG_ERR_NOMEM, "%s: out of memory for %lld rows of %lld values", L->name,
             (long long)nc, (long long)width);
  *data = nd;
  *cap = nc;
cleanup:
  return st;
}

/* FG_ERR_MEMLIMIT unless row `rows` + 1 is within most, the rows the budget allows beside what
 * the reader holds already (held bytes) at row_bytes a row. */
static fg_status table_room(const fg_lines *L, int64_t rows, int64_t most, double held,
                            double row_bytes) {
  fg_status st = FG_OK;
  char need[32];
  FG_REQUIRE(rows < most, FG_ERR_MEMLIMIT,
             "%s: line %lld: the %lld rows read so far need about %s to load (%.0f bytes a row%s), "
             "but %s%s",
             L->name, (long long)L->lineno, (long long)rows + 1,
             fg_format_bytes(held + (double)(rows + 1) * row_bytes, need, sizeof need), row_bytes,
             held > 0 ? ", with what the files before it hold" : "", fg_io_limit_text(),
             L->gzip ? " (the size of gzip data is known only at its end: reading stopped at the "
                       "limit)" : "");
cleanup:
  return st;
}

/* Rows of `width` real numbers (width < 0: any width, equal across rows), stored as float
 * (as_float) or double. expect_rows >= 0: exactly that many rows in the file. Rejects NaN/Inf.
 * L may be a piece of the file (parallel `prepare`): row0 rows come before it, and only the
 * last piece checks the total. */
static fg_status csv_real_table(fg_lines *L, int64_t row0, int last, int64_t width,
                                int64_t expect_rows, int as_float, double held, void **out,
                                int64_t *rows_out, int64_t *width_out) {
  fg_status st = FG_OK;
  void *data = NULL;
  int64_t rows = 0, cap = 0, most = -1;
  size_t elem = as_float ? sizeof(float) : sizeof(double);
  char tok[48];
  *out = NULL;
  *rows_out = 0;
  for (;;) {
    char *s;
    FG_CHECK(fg_lines_next(L, &s, NULL));
    if (!s) break;
    long long ln = (long long)L->lineno;
    if (width < 0) width = count_fields(s);
    FG_REQUIRE(expect_rows < 0 || row0 + rows < expect_rows, FG_ERR_FORMAT,
               "%s: line %lld: more rows than the %lld expected", L->name, ln,
               (long long)expect_rows);
    if (most < 0) most = fg_io_items_allowed(held, (double)width * (double)elem);
    FG_CHECK(table_room(L, rows, most, held, (double)width * (double)elem));
    FG_CHECK(table_grow(L, &data, &cap, rows + 1, width, elem,
                        expect_rows < 0 ? -1 : expect_rows - row0, most));
    float *frow = as_float ? (float *)data + rows * width : NULL;
    double *drow = as_float ? NULL : (double *)data + rows * width;
    const char *p = s;
    for (int64_t c = 0;; c++) {
      const char *e = NULL;
      double v = 0.0;
      FG_REQUIRE(c < width, FG_ERR_FORMAT, "%s: line %lld: expected %lld values, found %lld",
                 L->name, ln, (long long)width, (long long)count_fields(s));
      int bad = fg_parse_f64(p, &e, &v);
      if (!bad) {
        e = skip_blanks(e);
        bad = *e != ',' && *e != '\0';
      }
      FG_REQUIRE(!bad, FG_ERR_FORMAT, "%s: line %lld, column %lld: '%s' is not a number",
                 L->name, ln, (long long)c + 1, show_token(p, tok, sizeof tok));
      FG_REQUIRE(isfinite(v) && (!as_float || isfinite((float)v)), FG_ERR_NUMERIC,
                 "%s: line %lld, column %lld: value '%s' is not finite", L->name, ln,
                 (long long)c + 1, show_token(p, tok, sizeof tok));
      if (as_float) frow[c] = (float)v;
      else drow[c] = v;
      if (*e == '\0') {
        FG_REQUIRE(c + 1 == width, FG_ERR_FORMAT,
                   "%s: line %lld: expected %lld values, found %lld", L->name, ln,
                   (long long)width, (long long)c + 1);
        break;
      }
      p = e + 1;
    }
    rows++;
  }
  FG_REQUIRE(!last || expect_rows < 0 || row0 + rows == expect_rows, FG_ERR_FORMAT,
             "%s: %lld rows, expected %lld", L->name, (long long)(row0 + rows),
             (long long)expect_rows);
  *out = data;
  data = NULL;
  *rows_out = rows;
  if (width_out) *width_out = width < 0 ? 0 : width;
cleanup:
  free(data);
  return st;
}

/* Rows of ncols (1 or 2) integers in [lo, hi), one column array each; a row costs the load
 * row_bytes (at least its 8 * ncols), beside the held bytes of what was read before. A piece
 * of the file as csv_real_table's (row0, last). */
static fg_status csv_int_table(fg_lines *L, int64_t row0, int last, int ncols,
                               int64_t expect_rows, int64_t lo, int64_t hi, const char *what,
                               double held, double row_bytes, int64_t **cols,
                               int64_t *rows_out) {
  fg_status st = FG_OK;
  int64_t *col[2] = {NULL, NULL};
  int64_t rows = 0, cap[2] = {0, 0};
  char tok[48];
  assert(ncols == 1 || ncols == 2);
  row_bytes = FG_MAX(row_bytes, 8.0 * ncols);
  const int64_t most = fg_io_items_allowed(held, row_bytes);
  for (;;) {
    char *s;
    FG_CHECK(fg_lines_next(L, &s, NULL));
    if (!s) break;
    long long ln = (long long)L->lineno;
    FG_REQUIRE(expect_rows < 0 || row0 + rows < expect_rows, FG_ERR_FORMAT,
               "%s: line %lld: more rows than the %lld expected", L->name, ln,
               (long long)expect_rows);
    FG_CHECK(table_room(L, rows, most, held, row_bytes));
    for (int k = 0; k < ncols; k++) {
      void *d = col[k];
      FG_CHECK(table_grow(L, &d, &cap[k], rows + 1, 1, sizeof(int64_t),
                          expect_rows < 0 ? -1 : expect_rows - row0, most));
      col[k] = d;
    }
    const char *p = s;
    for (int c = 0; c < ncols; c++) {
      const char *e = NULL;
      int64_t v = 0;
      int r = fg_parse_i64(p, &e, &v);
      if (r == 0) {
        e = skip_blanks(e);
        if (*e != (c + 1 < ncols ? ',' : '\0')) r = *e == ',' || *e == '\0' ? 3 : 1;
      }
      FG_REQUIRE(r != 3, FG_ERR_FORMAT, "%s: line %lld: expected %d value%s, found %lld",
                 L->name, ln, ncols, ncols > 1 ? "s" : "", (long long)count_fields(s));
      FG_REQUIRE(r != 2, FG_ERR_FORMAT, "%s: line %lld, column %d: %s '%s' is too large",
                 L->name, ln, c + 1, what, show_token(p, tok, sizeof tok));
      FG_REQUIRE(r == 0, FG_ERR_FORMAT, "%s: line %lld, column %d: '%s' is not an integer",
                 L->name, ln, c + 1, show_token(p, tok, sizeof tok));
      FG_REQUIRE(v >= lo && v < hi, FG_ERR_FORMAT, "%s: line %lld: %s %lld out of range [%lld, %lld)",
                 L->name, ln, what, (long long)v, (long long)lo, (long long)hi);
      col[c][rows] = v;
      p = e + 1;
    }
    rows++;
  }
  FG_REQUIRE(!last || expect_rows < 0 || row0 + rows == expect_rows, FG_ERR_FORMAT,
             "%s: %lld rows, expected %lld", L->name, (long long)(row0 + rows),
             (long long)expect_rows);
  for (int k = 0; k < ncols; k++) {
    cols[k] = col[k];
    col[k] = NULL;
  }
  *rows_out = rows;
cleanup:
  free(col[0]);
  free(col[1]);
  return st;
}

static int is_nan_word(const char *s) {
  return strcasecmp(s + (*s == '-' || *s == '+'), "nan") == 0;
}

/* Trim blanks at both ends of p in place; returns the start. */
static char *trim_field(char *p, size_t *len) {
  while (*p == ' ' || *p == '\t') p++;
  size_t k = strlen(p);
  while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t')) p[--k] = '\0';
  *len = k;
  return p;
}

/* Row `row` of multi-label targets from line s of T comma-separated fields: 0, 1 (or an
 * integral real such as "1.0"), and an empty field or "nan" for a missing target (-1). */
static fg_status parse_targets(fg_lines *L, char *s, int64_t T, int8_t *out) {
  fg_status st = FG_OK;
  char tok[48];
  const long long ln = (long long)L->lineno;
  const int64_t have = count_fields(s);
  FG_REQUIRE(have == T, FG_ERR_FORMAT,
             "%s: line %lld: expected %lld target values (the first line's columns), found %lld",
             L->name, ln, (long long)T, (long long)have);
  char *p = s;
  for (int64_t t = 0; t < T; t++) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    size_t k = 0;
    char *f = trim_field(p, &k);
    int8_t y = -1;
    if (k > 0 && !is_nan_word(f)) {
      const char *e = NULL;
      double v = 0.0;
      FG_REQUIRE(fg_parse_f64(f, &e, &v) == 0 && *e == '\0', FG_ERR_FORMAT,
                 "%s: line %lld, column %lld: target '%s' is not a number", L->name, ln,
                 (long long)t + 1, show_token(f, tok, sizeof tok));
      FG_REQUIRE(v == 0.0 || v == 1.0, FG_ERR_FORMAT,
                 "%s: line %lld, column %lld: target '%s' is not 0 or 1 (a multi-label target "
                 "is 0, 1, or empty or nan when missing)",
                 L->name, ln, (long long)t + 1, show_token(f, tok, sizeof tok));
      y = (int8_t)v;
    }
    out[t] = y;
    p = comma ? comma + 1 : p + strlen(p);
  }
cleanup:
  return st;
}

/* One label per row: an integer >= 0 (or an integral real such as "3.0"); -1, an empty field
 * or "nan" mark an unlabelled node. A file whose first line has several columns holds
 * multi-label targets instead (ogbn-proteins: 112 columns of 0/1): T = its columns, every row
 * T of them (parse_targets), into *targets (n x T) with *num_tasks = T and no labels. A piece
 * of the file as csv_real_table's (row0, last), with tasks the T of the file's first line (-1:
 * this piece holds it); *num_classes is then the piece's largest label + 1. */
static fg_status csv_labels(fg_lines *L, int64_t row0, int last, int64_t tasks, int64_t n,
                            double held, int32_t **out, int64_t *num_classes, int8_t **targets,
                            int64_t *num_tasks) {
  fg_status st = FG_OK;
  int32_t *lab = NULL;
  int8_t *tgt = NULL;
  int64_t rows = 0, cap = 0, maxl = -1, T = 0, most = 0;
  char tok[48];
  for (;;) {
    char *s;
    FG_CHECK(fg_lines_next(L, &s, NULL));
    if (!s) break;
    long long ln = (long long)L->lineno;
    FG_REQUIRE(row0 + rows < n, FG_ERR_FORMAT, "%s: line %lld: more labels than the %lld nodes",
               L->name, ln, (long long)n);
    if (rows == 0) { /* the file's first line decides: one class id, or T targets */
      T = tasks >= 0 ? tasks : strchr(s, ',') ? count_fields(s) : 0;
      most = fg_io_items_allowed(held, T > 0 ? (double)T : (double)sizeof *lab);
    }
    if (T > 0) {
      void *d = tgt;
      FG_CHECK(table_room(L, rows, most, held, (double)T));
      FG_CHECK(table_grow(L, &d, &cap, rows + 1, T, 1, n - row0, most));
      tgt = d;
      FG_CHECK(parse_targets(L, s, T, tgt + rows * T));
      rows++;
      continue;
    }
    FG_CHECK(table_room(L, rows, most, held, sizeof *lab));
    void *d = lab;
    FG_CHECK(table_grow(L, &d, &cap, rows + 1, 1, sizeof *lab, n - row0, most));
    lab = d;
    FG_REQUIRE(strchr(s, ',') == NULL, FG_ERR_FORMAT,
               "%s: line %lld: several label columns (%lld), but line 1 has one (one class id a "
               "line, or the same number of 0/1 target columns on every line)",
               L->name, ln, (long long)count_fields(s));
    size_t k = 0;
    char *p = trim_field(s, &k);
    int64_t label = -1;
    if (k > 0 && !is_nan_word(p)) {
      const char *e = NULL;
      double v = 0.0;
      FG_REQUIRE(fg_parse_f64(p, &e, &v) == 0 && *e == '\0', FG_ERR_FORMAT,
                 "%s: line %lld: label '%s' is not a number", L->name, ln,
                 show_token(p, tok, sizeof tok));
      FG_REQUIRE(isfinite(v) && v == floor(v), FG_ERR_FORMAT,
                 "%s: line %lld: label '%s' is not an integer", L->name, ln,
                 show_token(p, tok, sizeof tok));
      FG_REQUIRE(v >= -1.0 && v < (double)FG_IO_MAX_CLASSES, FG_ERR_FORMAT,
                 "%s: line %lld: label %s out of range (0 <= label < %lld, or -1 for none)",
                 L->name, ln, show_token(p, tok, sizeof tok), (long long)FG_IO_MAX_CLASSES);
      label = (int64_t)v;
    }
    lab[rows++] = (int32_t)label;
    if (label > maxl) maxl = label;
  }
  FG_REQUIRE(!last || row0 + rows == n, FG_ERR_FORMAT,
             "%s: %lld labels, expected one per node (%lld)", L->name, (long long)(row0 + rows),
             (long long)n);
  if (rows == 0 && tasks > 0) T = tasks; /* an empty piece of a multi-label file */
  if (T > 0) {
    *targets = tgt;
    *num_tasks = T;
    tgt = NULL;
  } else {
    *out = lab;
    lab = NULL;
    *num_classes = maxl + 1;
  }
cleanup:
  free(lab);
  free(tgt);
  return st;
}

fg_status fg_read_csv_mem(const void *buf, size_t len, const char *name, int64_t width,
                          int64_t expect_rows, double **values, int64_t *rows) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  void *v = NULL;
  *values = NULL;
  *rows = 0;
  FG_REQUIRE(width == -1 || width > 0, FG_ERR_INVALID_ARG, "csv width must be > 0 or -1, got %lld",
             (long long)width);
  FG_CHECK(fg_lines_open_mem(&L, buf, len, name));
  FG_CHECK(csv_real_table(&L, 0, 1, width, expect_rows, 0, 0.0, &v, rows, NULL));
  *values = v;
cleanup:
  fg_lines_close(&L);
  return st;
}

/* ---- the directory layout ------------------------------------------------------------------ */

char *fg_path_join(const char *dir, const char *base) {
  size_t n = strlen(dir) + strlen(base) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, base);
  return p;
}

static int is_dir(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}
static int is_file(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

/* Close L and free *path (both from an earlier call, or zeroed), then open dir/sub/base.csv.gz
 * or dir/sub/base.csv in L, its path in *path (L->name); *path = NULL if neither exists and
 * !required. */
static fg_status open_csv(const char *dir, const char *sub, const char *base, int required,
                          fg_lines *L, char **path) {
  fg_status st = FG_OK;
  size_t n = strlen(dir) + strlen(sub) + strlen(base) + 16;
  fg_lines_close(L);
  free(*path);
  FG_ALLOC(*path, n);
  snprintf(*path, n, "%s/%s/%s.csv.gz", dir, sub, base);
  if (!is_file(*path)) snprintf(*path, n, "%s/%s/%s.csv", dir, sub, base);
  if (is_file(*path)) {
    FG_CHECK(fg_lines_open(L, *path));
  } else {
    FG_REQUIRE(!required, FG_ERR_IO, "%s: missing %s/%s.csv[.gz]", dir, sub, base);
    free(*path);
    *path = NULL;
  }
cleanup:
  return st;
}

/* A file holding one count per line (one graph: one line). */
static fg_status read_count(fg_lines *L, int64_t hi, const char *what, int64_t *value) {
  fg_status st = FG_OK;
  int64_t *col[1] = {NULL}, rows = 0;
  FG_CHECK(csv_int_table(L, 0, 1, 1, -1, 0, hi, what, 0.0, 8.0, col, &rows));
  FG_REQUIRE(rows > 0, FG_ERR_FORMAT, "%s: empty, expected the %s", L->name, what);
  FG_REQUIRE(rows == 1, FG_ERR_UNSUPPORTED,
             "%s: %lld lines (a dataset of several graphs): only single-graph node-property "
             "datasets are supported", L->name, (long long)rows);
  *value = col[0][0];
cleanup:
  free(col[0]);
  return st;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the folders under dir/split. */
static fg_status list_splits(const char *splitdir, char ***names, int *count) {
  fg_status st = FG_OK;
  DIR *d = NULL;
  char **v = NULL;
  int n = 0, cap = 0;
  *names = NULL;
  *count = 0;
  d = opendir(splitdir);
  if (!d) goto cleanup; /* no split folder: no split */
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    if (de->d_name[0] == '.') continue;
    char *full = fg_path_join(splitdir, de->d_name);
    FG_REQUIRE(full, FG_ERR_NOMEM, "out of memory");
    int dir = is_dir(full);
    free(full);
    if (!dir) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 8;
      char **nv = realloc(v, (size_t)cap * sizeof *nv);
      FG_REQUIRE(nv, FG_ERR_NOMEM, "out of memory");
      v = nv;
    }
    v[n] = strdup(de->d_name);
    FG_REQUIRE(v[n], FG_ERR_NOMEM, "out of memory");
    n++;
  }
  if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_str);
  *names = v;
  *count = n;
  v = NULL;
cleanup:
  if (d) closedir(d);
  if (v)
    for (int i = 0; i < n; i++) free(v[i]);
  free(v);
  return st;
}

/* Whether node v has a label: a class id, or a target not missing. */
static int has_label(const fg_raw *r, int64_t v) {
  if (r->labels) return r->labels[v] >= 0;
  for (int64_t t = 0; r->targets && t < r->num_tasks; t++)
    if (r->targets[v * r->num_tasks + t] >= 0) return 1;
  return 0;
}

/* Read split/<name>/{train,valid,test}: ids in range, labelled, no id twice. multi: the
 * labels are multi-label targets (for the message; r may hold them as labels >= 0 where a
 * node has one). */
static fg_status read_split(const char *dir, const char *name, const fg_raw *r, int multi,
                            double held, int8_t **out) {
  fg_status st = FG_OK;
  char *sub = NULL, *path = NULL;
  int64_t *ids[1] = {NULL};
  int8_t *split = NULL;
  fg_lines L = {0};
  const int64_t n = r->num_nodes;
  const int labels = r->labels || r->targets;
  sub = fg_path_join("split", name);
  FG_REQUIRE(sub, FG_ERR_NOMEM, "out of memory");
  /* n was checked against the label file's rows; without labels any split id fails below,
   * so nothing of size n is allocated on the word of num-node-list alone. */
  if (labels) {
    FG_ALLOC(split, n);
    memset(split, FG_SPLIT_NONE, (size_t)n);
  }
  for (int k = 0; k < 3; k++) {
    int64_t rows = 0;
    FG_CHECK(open_csv(dir, sub, split_files[k], 1, &L, &path));
    FG_CHECK(csv_int_table(&L, 0, 1, 1, -1, 0, n, "node id",
                           held + (labels ? (double)n : 0.0), 8.0, ids, &rows));
    /* csv_int_table counted lines; with one id per line, line i + 1 holds ids[0][i]. */
    for (int64_t i = 0; i < rows; i++) {
      int64_t v = ids[0][i];
      FG_REQUIRE(labels && has_label(r, v), FG_ERR_FORMAT,
                 "%s: line %lld: node %lld is in the %s split but has no label%s", path,
                 (long long)i + 1, (long long)v, split_files[k],
                 !labels ? " (there is no node-label file)"
                 : multi ? " (every target missing)" : "");
      FG_REQUIRE(split[v] == FG_SPLIT_NONE, FG_ERR_FORMAT,
                 "%s: line %lld: node %lld is already in the %s split%s", path,
                 (long long)i + 1, (long long)v, split_files[split[v]],
                 split[v] == k ? " (listed twice)" : "");
      split[v] = (int8_t)k;
    }
    free(ids[0]);
    ids[0] = NULL;
  }
  *out = split;
  split = NULL;
cleanup:
  fg_lines_close(&L);
  free(ids[0]);
  free(path);
  free(sub);
  free(split);
  return st;
}

/* The split that split_name names under dir/split (NULL: the only one; none when there is no
 * folder), read into *out (NULL when there is none); r, multi as read_split's. */
static fg_status choose_split(const char *dir, const char *split_name, const fg_raw *r,
                              int multi, double held, int8_t **out) {
  fg_status st = FG_OK;
  char *splitdir = NULL, **names = NULL;
  int nnames = 0;
  *out = NULL;
  splitdir = fg_path_join(dir, "split");
  FG_REQUIRE(splitdir, FG_ERR_NOMEM, "out of memory");
  FG_CHECK(list_splits(splitdir, &names, &nnames));
  char list[1024] = "";
  for (int i = 0; i < nnames; i++) fg_list_append(list, sizeof list, i, names[i]);
  const char *use = NULL;
  if (split_name) {
    for (int i = 0; i < nnames; i++)
      if (strcmp(names[i], split_name) == 0) use = names[i];
    FG_REQUIRE(use, FG_ERR_INVALID_ARG, "%s: no split named '%s' (found: %s)", splitdir,
               split_name, nnames ? list : "none");
  } else if (nnames == 1) {
    use = names[0];
  } else {
    FG_REQUIRE(nnames == 0, FG_ERR_INVALID_ARG, "%s: several splits (%s): choose one by name",
               splitdir, list);
  }
  if (use) FG_CHECK(read_split(dir, use, r, multi, held, out));
cleanup:
  free(splitdir);
  for (int i = 0; i < nnames; i++) free(names[i]);
  free(names);
  return st;
}

/* raw/num-node-list and raw/num-edge-list of dir: one graph's node (> 0) and edge counts. */
static fg_status read_counts(const char *dir, fg_lines *L, char **path, int64_t *n,
                             int64_t *m) {
  fg_status st = FG_OK;
  FG_CHECK(open_csv(dir, "raw", "num-node-list", 1, L, path));
  FG_CHECK(read_count(L, FG_IO_MAX_NODES + 1, "number of nodes", n));
  FG_REQUIRE(*n > 0, FG_ERR_FORMAT, "%s: the graph has no nodes", *path);
  FG_CHECK(open_csv(dir, "raw", "num-edge-list", 1, L, path));
  FG_CHECK(read_count(L, INT64_MAX / 32, "number of edges", m));
cleanup:
  return st;
}

static fg_status read_binary_raw(const char *dir, fg_raw *r, double *held);

fg_status fg_read_ogb(const char *dir, const char *split_name, fg_raw *out) {
  fg_status st = FG_OK;
  fg_raw r = {0};
  fg_lines L = {0};
  char *path = NULL;
  int64_t *cols[2] = {NULL, NULL};
  double held = 0.0;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(dir, FG_ERR_INVALID_ARG, "fg_read_ogb: dir is NULL");
  FG_REQUIRE(is_dir(dir), FG_ERR_IO, "%s: not a directory", dir);
  path = fg_path_join(dir, "raw");
  FG_REQUIRE(path, FG_ERR_NOMEM, "out of memory");
  FG_REQUIRE(is_dir(path), FG_ERR_IO, "%s: no raw/ folder (not an OGB node-property dataset)",
             dir);
  free(path);
  path = NULL;

  /* the binary raw layout (ogbn-papers100M): raw/data.npz in place of the csv tables */
  path = fg_path_join(dir, "raw/data.npz");
  FG_REQUIRE(path, FG_ERR_NOMEM, "out of memory");
  if (is_file(path)) {
    FG_CHECK(open_csv(dir, "raw", "edge", 0, &L, &path));
    FG_REQUIRE(!path, FG_ERR_FORMAT, "%s: both raw/data.npz and %s (the binary and the csv raw "
               "layouts): remove one", dir, path);
    FG_CHECK(read_binary_raw(dir, &r, &held));
    goto split;
  }
  free(path);
  path = NULL;

  FG_CHECK(read_counts(dir, &L, &path, &r.num_nodes, &r.num_edges));

  /* Rows are counted against the declared sizes as they are read, and arrays grow with the
   * rows present, so a small file declaring a huge graph fails before allocating it. */
  FG_CHECK(open_csv(dir, "raw", "edge", 1, &L, &path));
  {
    /* declared edges the file could hold ("u,v" and a newline: 4 bytes at least) that the
     * memory could not load: refused before reading them. (More than the file could hold is a
     * lie that reading reports, naming the line where the rows run out or go wrong.) */
    char need[32];
    const double fit = floor((fg_lines_max_bytes(&L) + 1.0) / 4.0), eb = fg_io_edge_bytes();
    FG_REQUIRE((double)r.num_edges > fit || !fg_io_over_limit((double)r.num_edges * eb),
               FG_ERR_MEMLIMIT,
               "%s: num-edge-list declares %lld edges: loading them needs about %s (%.0f bytes "
               "an edge: the edge list and the graph build), but %s",
               path, (long long)r.num_edges,
               fg_format_bytes((double)r.num_edges * eb, need, sizeof need), eb,
               fg_io_limit_text());
  }
  int64_t rows = 0;
  /* what each file holds counts against the budget beside the files before it: an edge costs
   * the load fg_io_edge_bytes() (the graph build's share included) */
  FG_CHECK(csv_int_table(&L, 0, 1, 2, r.num_edges, 0, r.num_nodes, "node id", 0.0,
                         fg_io_edge_bytes(), cols, &rows));
  r.src = cols[0];
  r.dst = cols[1];
  cols[0] = cols[1] = NULL;
  r.directed = 0;
  held = (double)rows * fg_io_edge_bytes();

  FG_CHECK(open_csv(dir, "raw", "node-feat", 0, &L, &path));
  if (path) {
    void *f = NULL;
    FG_CHECK(csv_real_table(&L, 0, 1, -1, r.num_nodes, 1, held, &f, &rows, &r.num_features));
    r.features = f;
    held += (double)rows * (double)r.num_features * sizeof(float);
  }

  FG_CHECK(open_csv(dir, "raw", "node-label", 0, &L, &path));
  if (path) {
    FG_CHECK(csv_labels(&L, 0, 1, -1, r.num_nodes, held, &r.labels, &r.num_classes,
                        &r.targets, &r.num_tasks));
    FG_CHECK(fg_raw_check_classes(&r, path, 1));
    held += (r.targets ? (double)r.num_tasks : 4.0) * (double)r.num_nodes;
  }

split:
  FG_CHECK(choose_split(dir, split_name, &r, r.targets != NULL, held, &r.split));

  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_lines_close(&L);
  free(path);
  free(cols[0]);
  free(cols[1]);
  fg_raw_free(&r);
  return st;
}

/* ---- pieces of the csv layout (parallel `prepare`) ---------------------------------------- */

/* Each rank parses the lines of its byte range with the serial reader's table functions: the
 * same checks and messages, lines numbered as in the file, and a row's index is the lines
 * before it (every line of these tables is a row). */

int64_t fg_csv_first_fields(const void *buf, size_t len) {
  if (len == 0) return 0;
  const char *p = buf, *nl = memchr(p, '\n', len);
  const size_t k = nl ? (size_t)(nl - p) : len;
  int64_t n = 1;
  for (size_t i = 0; i < k; i++) n += p[i] == ',';
  return n;
}

fg_status fg_read_ogb_counts(const char *dir, int64_t *nodes, int64_t *edges) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  char *path = NULL;
  FG_CHECK(read_counts(dir, &L, &path, nodes, edges));
cleanup:
  fg_lines_close(&L);
  free(path);
  return st;
}

fg_status fg_read_ogb_edge_piece(const void *buf, size_t len, const char *name,
                                 int64_t first_line, int last, int64_t num_nodes,
                                 int64_t num_edges, int64_t **src, int64_t **dst,
                                 int64_t *rows) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  int64_t *cols[2] = {NULL, NULL};
  *src = *dst = NULL;
  *rows = 0;
  FG_CHECK(fg_lines_open_piece(&L, buf, len, name, first_line));
  FG_CHECK(csv_int_table(&L, first_line, last, 2, num_edges, 0, num_nodes, "node id", 0.0,
                         fg_io_edge_bytes(), cols, rows));
  *src = cols[0];
  *dst = cols[1];
cleanup:
  fg_lines_close(&L);
  return st;
}

fg_status fg_read_ogb_feat_piece(const void *buf, size_t len, const char *name,
                                 int64_t first_line, int last, int64_t num_nodes, int64_t width,
                                 float **features, int64_t *rows) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  void *f = NULL;
  *features = NULL;
  *rows = 0;
  FG_CHECK(fg_lines_open_piece(&L, buf, len, name, first_line));
  FG_CHECK(csv_real_table(&L, first_line, last, width > 0 ? width : -1, num_nodes, 1, 0.0, &f,
                          rows, NULL));
  *features = f;
cleanup:
  fg_lines_close(&L);
  return st;
}

fg_status fg_read_ogb_label_piece(const void *buf, size_t len, const char *name,
                                  int64_t first_line, int last, int64_t num_nodes,
                                  int64_t tasks, int32_t **labels, int64_t *max_label,
                                  int8_t **targets, int64_t *rows) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  int64_t classes = 0, T = 0;
  *labels = NULL;
  *targets = NULL;
  *max_label = -1;
  *rows = 0;
  FG_CHECK(fg_lines_open_piece(&L, buf, len, name, first_line));
  FG_CHECK(csv_labels(&L, first_line, last, tasks, num_nodes, 0.0, labels, &classes, targets,
                      &T));
  *rows = L.lineno - first_line; /* every line a row */
  *max_label = classes - 1;
cleanup:
  fg_lines_close(&L);
  return st;
}

fg_status fg_read_ogb_split(const char *dir, const char *split_name, int64_t n,
                            int32_t *labelled, int multi, int8_t **split) {
  fg_raw r = {0};
  r.num_nodes = n;
  r.labels = labelled; /* lent: >= 0 where a node has a label (or a target) */
  return choose_split(dir, split_name, &r, multi, 0.0, split);
}

/* ---- the binary raw layout (ogbn-papers100M) ----------------------------------------------- */

/* "(a, b, c)" for a message. */
static const char *shape_text(const fg_npy *a, char *out, size_t cap) {
  size_t k = (size_t)snprintf(out, cap, "(");
  for (int d = 0; d < a->ndim && k < cap; d++)
    k += (size_t)snprintf(out + k, cap - k, "%s%lld", d ? ", " : "", (long long)a->shape[d]);
  if (k < cap) snprintf(out + k, cap - k, a->ndim == 1 ? ",)" : ")");
  return out;
}

/* num_nodes_list / num_edges_list: one integer (one graph) in [lo, hi]. */
static fg_status npz_count(fg_npz *c, const char *base, int64_t lo, int64_t hi, int64_t *value) {
  fg_status st = FG_OK;
  fg_npy a;
  const char *label = NULL;
  char sh[96];
  FG_CHECK(fg_npz_get(c, base, 1, &a, &label));
  FG_REQUIRE(a.kind == 'i' || a.kind == 'u', FG_ERR_FORMAT,
             "%s: expected an integer array, got dtype '%s'", label, a.descr);
  FG_REQUIRE(a.ndim == 1 && a.count > 0, FG_ERR_FORMAT, "%s: expected shape (1,), got %s", label,
             shape_text(&a, sh, sizeof sh));
  FG_REQUIRE(a.count == 1, FG_ERR_UNSUPPORTED,
             "%s: %lld graphs (a dataset of several graphs): only single-graph node-property "
             "datasets are supported", label, (long long)a.count);
  int ok;
  int64_t v = fg_npy_int_at(&a, 0, &ok);
  FG_REQUIRE(ok && v >= lo && v <= hi, FG_ERR_FORMAT, "%s: %s %lld out of range [%lld, %lld]",
             label, base, (long long)v, (long long)lo, (long long)hi);
  *value = v;
cleanup:
  return st;
}

/* raw/data.npz: the edges, the node count and the features. */
static fg_status npz_graph(fg_npz *c, fg_raw *r) {
  fg_status st = FG_OK;
  fg_npy a;
  const char *label = NULL;
  char sh[96];
  int64_t *ev = NULL, n = 0, m = 0;
  FG_CHECK(npz_count(c, "num_nodes_list", 1, FG_IO_MAX_NODES, &n));
  FG_CHECK(npz_count(c, "num_edges_list", 0, INT64_MAX / 32, &m));
  FG_CHECK(fg_npz_get(c, "edge_index", 1, &a, &label));
  FG_REQUIRE(a.kind == 'i' || a.kind == 'u', FG_ERR_FORMAT,
             "%s: expected an integer array, got dtype '%s'", label, a.descr);
  FG_REQUIRE(a.ndim == 2 && a.shape[0] == 2, FG_ERR_FORMAT,
             "%s: expected shape (2, E) (sources, then targets), got %s", label,
             shape_text(&a, sh, sizeof sh));
  FG_REQUIRE(a.shape[1] == m, FG_ERR_FORMAT, "%s: %lld edges, but num_edges_list says %lld",
             label, (long long)a.shape[1], (long long)m);
  {
    char what[96];
    snprintf(what, sizeof what, "the edge list of its %lld edges, and their graph build",
             (long long)m);
    FG_CHECK(fg_npz_hold(c, (double)m * fg_io_edge_bytes(), label, what));
  }
  FG_CHECK(fg_npz_ints(c, &a, label, &ev)); /* (2 x m) in C order: sources, then targets */
  FG_ALLOC(r->src, FG_MAX(m, 1));
  FG_ALLOC(r->dst, FG_MAX(m, 1));
  for (int64_t e = 0; e < m; e++) {
    for (int k = 0; k < 2; k++) {
      const int64_t v = ev[k * m + e];
      FG_REQUIRE(v >= 0 && v < n, FG_ERR_FORMAT,
                 "%s: element (%d, %lld): node id %lld out of range [0, %lld) (num_nodes_list)",
                 label, k, (long long)e, (long long)v, (long long)n);
    }
    r->src[e] = ev[e];
    r->dst[e] = ev[m + e];
  }
  free(ev);
  ev = NULL;
  fg_npz_release(c, 16.0 * (double)m);
  r->num_nodes = n;
  r->num_edges = m;
  r->directed = 0; /* as the csv layout: OGB lists each edge once */

  FG_CHECK(fg_npz_get(c, "node_feat", 0, &a, &label));
  if (label) {
    FG_REQUIRE(a.kind == 'f' || a.kind == 'i' || a.kind == 'u' || a.kind == 'b', FG_ERR_FORMAT,
               "%s: expected a numeric array, got dtype '%s'", label, a.descr);
    FG_REQUIRE(a.ndim == 2 && a.shape[0] == n && a.shape[1] > 0, FG_ERR_FORMAT,
               "%s: expected shape (%lld, F) (one row per node), got %s", label, (long long)n,
               shape_text(&a, sh, sizeof sh));
    FG_CHECK(fg_npz_hold_dense(c, label, n, a.shape[1]));
    FG_ALLOC(r->features, a.count);
    FG_CHECK(fg_npy_to_f32(&a, label, r->features));
    r->num_features = a.shape[1];
  }
cleanup:
  if (ev) fg_npz_release(c, 16.0 * (double)m);
  free(ev);
  return st;
}

/* raw/node-label.npz: node_label of shape (N,) or (N, 1): class ids, NaN or -1 unlabelled;
 * (N, T) with T > 1: multi-label targets 0/1, NaN or -1 missing. Integral values only. */
static fg_status npz_node_labels(fg_npz *c, int64_t n, fg_raw *r) {
  fg_status st = FG_OK;
  fg_npy a;
  const char *label = NULL;
  char sh[96];
  FG_CHECK(fg_npz_get(c, "node_label", 1, &a, &label));
  FG_REQUIRE(a.kind == 'f' || a.kind == 'i' || a.kind == 'u' || a.kind == 'b', FG_ERR_FORMAT,
             "%s: expected a numeric array, got dtype '%s'", label, a.descr);
  FG_REQUIRE((a.ndim == 1 || a.ndim == 2) && a.shape[0] == n && (a.ndim == 1 || a.shape[1] > 0),
             FG_ERR_FORMAT, "%s: expected shape (%lld, 1) or (%lld, T) (one row per node), got %s",
             label, (long long)n, (long long)n, shape_text(&a, sh, sizeof sh));
  const int64_t T = a.ndim == 1 ? 1 : a.shape[1];
  if (T == 1) {
    int64_t mx = -1;
    FG_CHECK(fg_npz_hold(c, 4.0 * (double)n, label, "the labels"));
    FG_ALLOC(r->labels, n);
    for (int64_t i = 0; i < n; i++) {
      const double v = fg_npy_real_at(&a, i);
      int64_t y = -1;
      if (!isnan(v)) {
        FG_REQUIRE(v == floor(v) && v >= -1.0 && v < (double)FG_IO_MAX_CLASSES, FG_ERR_FORMAT,
                   "%s: node %lld: label %g is not a class id (an integer in [0, %lld), or -1 or "
                   "NaN for none)", label, (long long)i, v, (long long)FG_IO_MAX_CLASSES);
        y = (int64_t)v;
      }
      r->labels[i] = (int32_t)y;
      if (y > mx) mx = y;
    }
    r->num_classes = mx + 1;
    FG_CHECK(fg_raw_check_classes(r, label, 0));
  } else {
    FG_REQUIRE(T <= FG_IO_MAX_CLASSES, FG_ERR_FORMAT, "%s: %lld tasks, at most %lld", label,
               (long long)T, (long long)FG_IO_MAX_CLASSES);
    char what[96];
    snprintf(what, sizeof what, "the targets (%lld nodes x %lld tasks, a byte each)",
             (long long)n, (long long)T);
    FG_CHECK(fg_npz_hold(c, (double)n * (double)T, label, what));
    FG_ALLOC(r->targets, a.count);
    for (int64_t i = 0; i < a.count; i++) {
      const double v = fg_npy_real_at(&a, i);
      FG_REQUIRE(isnan(v) || v == 0.0 || v == 1.0 || v == -1.0, FG_ERR_FORMAT,
                 "%s: node %lld, task %lld: target %g is not 0 or 1 (or -1 or NaN for missing)",
                 label, (long long)(i / T), (long long)(i % T), v);
      r->targets[i] = (int8_t)(isnan(v) ? -1 : (int)v);
    }
    r->num_tasks = T;
  }
cleanup:
  return st;
}

fg_status fg_read_ogb_npz_mem(const void *data, size_t data_len, const void *label,
                              size_t label_len, const char *name, fg_raw *out) {
  fg_status st = FG_OK;
  fg_raw r = {0};
  fg_npz *c = NULL;
  char dn[512], ln[512];
  memset(out, 0, sizeof *out);
  if (!name) name = "(buffer)";
  snprintf(dn, sizeof dn, "%s/raw/data.npz", name);
  snprintf(ln, sizeof ln, "%s/raw/node-label.npz", name);
  FG_CHECK(fg_npz_open(data, data_len, dn, 0.0, &c));
  FG_CHECK(npz_graph(c, &r));
  /* the edges and features are kept; the archive and what was inflated from it go */
  const double held = (double)r.num_edges * fg_io_edge_bytes() +
                      4.0 * (double)r.num_nodes * (double)r.num_features;
  fg_npz_close(c);
  c = NULL;
  if (label) {
    FG_CHECK(fg_npz_open(label, label_len, ln, held, &c));
    FG_CHECK(npz_node_labels(c, r.num_nodes, &r));
  }
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_npz_close(c);
  fg_raw_free(&r);
  return st;
}

/* raw/data.npz (and raw/node-label.npz when present) of dir into r; *held: what r holds. */
static fg_status read_binary_raw(const char *dir, fg_raw *r, double *held) {
  fg_status st = FG_OK;
  char *dpath = NULL, *lpath = NULL;
  unsigned char *dbuf = NULL, *lbuf = NULL;
  size_t dlen = 0, llen = 0;
  dpath = fg_path_join(dir, "raw/data.npz");
  lpath = fg_path_join(dir, "raw/node-label.npz");
  FG_REQUIRE(dpath && lpath, FG_ERR_NOMEM, "out of memory");
  FG_CHECK(fg_file_slurp(dpath, &dbuf, &dlen));
  /* read one archive at a time: data.npz is freed before node-label.npz is read */
  {
    fg_npz *c = NULL;
    st = fg_npz_open(dbuf, dlen, dpath, 0.0, &c);
    if (st == FG_OK) st = npz_graph(c, r);
    fg_npz_close(c);
    if (st != FG_OK) {
      fg_error_trace(__FILE__, __LINE__);
      goto cleanup;
    }
  }
  free(dbuf);
  dbuf = NULL;
  *held = (double)r->num_edges * fg_io_edge_bytes() +
          4.0 * (double)r->num_nodes * (double)r->num_features;
  if (is_file(lpath)) {
    char need[32];
    struct stat sb;
    FG_REQUIRE(stat(lpath, &sb) == 0, FG_ERR_IO, "%s: cannot stat", lpath);
    FG_REQUIRE(!fg_io_over_limit(*held + (double)sb.st_size), FG_ERR_MEMLIMIT,
               "%s: the file (%s, read whole) does not fit beside the edges and features: %s",
               lpath, fg_format_bytes((double)sb.st_size, need, sizeof need),
               fg_io_limit_text());
    FG_CHECK(fg_file_slurp(lpath, &lbuf, &llen));
    fg_npz *c = NULL;
    st = fg_npz_open(lbuf, llen, lpath, *held, &c);
    if (st == FG_OK) st = npz_node_labels(c, r->num_nodes, r);
    fg_npz_close(c);
    if (st != FG_OK) {
      fg_error_trace(__FILE__, __LINE__);
      goto cleanup;
    }
    *held += r->labels ? 4.0 * (double)r->num_nodes
                       : (double)r->num_nodes * (double)r->num_tasks;
  }
cleanup:
  free(dbuf);
  free(lbuf);
  free(dpath);
  free(lpath);
  return st;
}
