/* io_edgelist.c -- text edge lists: Matrix Market coordinate files and SNAP edge lists
 * (reader and writer), plain or gzip. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/fg_io_internal.h"

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

static const char *skip_blanks(const char *p) {
  while (is_blank(*p)) p++;
  return p;
}

/* Next whitespace-separated word of s (modified in place), or NULL. */
static char *next_word(char **s) {
  char *p = *s;
  while (is_blank(*p)) p++;
  if (!*p) return NULL;
  char *w = p;
  while (*p && !is_blank(*p)) p++;
  if (*p) *p++ = '\0';
  *s = p;
  return w;
}

/* A whitespace-delimited word for messages (at most cap - 1 bytes, printable). */
static const char *word_text(const char *p, char *out, size_t cap) {
  return fg_token_text(p, " \t\v\f", out, cap);
}

/* An integer that must be followed by a blank or the end of the line. */
static int word_i64(const char *p, const char **end, int64_t *v) {
  int r = fg_parse_i64(p, end, v);
  if (r == 0 && **end && !is_blank(**end)) r = 1;
  return r;
}

/* Growable edge list. */
typedef struct edgebuf {
  int64_t *src, *dst;
  int64_t n, cap;
  int64_t most; /* a declared count it will not pass (-1: none) */
} edgebuf;

/* Append (u, v) read on line L->lineno, growing geometrically within the reader's budget: the
 * edges held may cost the load fg_io_edge_bytes() each (the graph build's share included), so
 * the reader stops at the first edge that could not be loaded. */
static fg_status edgebuf_push(edgebuf *e, const fg_lines *L, int64_t u, int64_t v) {
  fg_status st = FG_OK;
  if (e->n == e->cap) {
    const double eb = fg_io_edge_bytes();
    const int64_t allowed = fg_io_items_allowed(0.0, eb);
    char need[32];
    FG_REQUIRE(e->n < allowed, FG_ERR_MEMLIMIT,
               "%s: line %lld: the %lld edges read so far need about %s to load (%.0f bytes an "
               "edge: the edge list and the graph build), but %s%s",
               L->name, (long long)L->lineno, (long long)e->n + 1,
               fg_format_bytes((double)(e->n + 1) * eb, need, sizeof need), eb,
               fg_io_limit_text(),
               L->gzip ? " (the size of gzip data is known only at its end: reading stopped at "
                         "the limit)" : "");
    int64_t nc = e->cap ? e->cap * 2 : 1024;
    if (e->most >= 0) nc = FG_MIN(nc, FG_MAX(e->most, e->n + 1));
    nc = FG_MIN(nc, allowed);
    FG_REQUIRE(nc <= INT64_MAX / 16, FG_ERR_NOMEM, "edge list too long");
    int64_t *ns = realloc(e->src, (size_t)nc * sizeof *ns);
    if (ns) e->src = ns;
    int64_t *nd = ns ? realloc(e->dst, (size_t)nc * sizeof *nd) : NULL;
    if (nd) e->dst = nd;
    FG_REQUIRE(ns && nd, FG_ERR_NOMEM, "out of memory growing an edge list to %lld edges",
               (long long)nc);
    e->cap = nc;
  }
  e->src[e->n] = u;
  e->dst[e->n] = v;
  e->n++;
cleanup:
  return st;
}

/* ---- Matrix Market ------------------------------------------------------------------------- */

static fg_status mtx_read(fg_lines *L, fg_raw *out) {
  fg_status st = FG_OK;
  edgebuf eb = {.most = -1};
  char *s = NULL, tok[48], size[32];
  memset(out, 0, sizeof *out);

  FG_CHECK(fg_lines_next(L, &s, NULL));
  FG_REQUIRE(s, FG_ERR_FORMAT, "%s: empty file (expected a %%%%MatrixMarket banner)", L->name);
  char *rest = s;
  char *w0 = next_word(&rest), *obj = next_word(&rest), *fmt = next_word(&rest);
  char *field = next_word(&rest), *sym = next_word(&rest);
  FG_REQUIRE(w0 && strcasecmp(w0, "%%MatrixMarket") == 0, FG_ERR_FORMAT,
             "%s: line 1: bad banner '%s' (expected %%%%MatrixMarket matrix coordinate ...)",
             L->name, word_text(w0 ? w0 : "", tok, sizeof tok));
  FG_REQUIRE(obj && strcasecmp(obj, "matrix") == 0, FG_ERR_FORMAT,
             "%s: line 1: bad banner: object '%s', expected 'matrix'", L->name,
             word_text(obj ? obj : "", tok, sizeof tok));
  FG_REQUIRE(fmt && (strcasecmp(fmt, "coordinate") == 0 || strcasecmp(fmt, "array") == 0),
             FG_ERR_FORMAT, "%s: line 1: bad banner: format '%s', expected 'coordinate'",
             L->name, word_text(fmt ? fmt : "", tok, sizeof tok));
  FG_REQUIRE(strcasecmp(fmt, "array") != 0, FG_ERR_UNSUPPORTED,
             "%s: line 1: dense 'array' Matrix Market files are not supported (coordinate only)",
             L->name);
  FG_REQUIRE(field, FG_ERR_FORMAT, "%s: line 1: bad banner: no field (pattern, real, integer)",
             L->name);
  FG_REQUIRE(strcasecmp(field, "complex") != 0, FG_ERR_UNSUPPORTED,
             "%s: line 1: complex matrices are not supported", L->name);
  int has_value = strcasecmp(field, "pattern") != 0;
  int is_int = strcasecmp(field, "integer") == 0;
  FG_REQUIRE(!has_value || is_int || strcasecmp(field, "real") == 0, FG_ERR_FORMAT,
             "%s: line 1: bad banner: field '%s', expected pattern, real or integer", L->name,
             word_text(field, tok, sizeof tok));
  FG_REQUIRE(sym, FG_ERR_FORMAT, "%s: line 1: bad banner: no symmetry (general, symmetric)",
             L->name);
  FG_REQUIRE(strcasecmp(sym, "skew-symmetric") != 0 && strcasecmp(sym, "hermitian") != 0,
             FG_ERR_UNSUPPORTED, "%s: line 1: %s matrices are not supported (general or "
             "symmetric only)", L->name, word_text(sym, tok, sizeof tok));
  int symmetric = strcasecmp(sym, "symmetric") == 0;
  FG_REQUIRE(symmetric || strcasecmp(sym, "general") == 0, FG_ERR_FORMAT,
             "%s: line 1: bad banner: symmetry '%s', expected general or symmetric", L->name,
             word_text(sym, tok, sizeof tok));

  /* Comments, then the size line. */
  int64_t sz[3] = {0, 0, 0};
  for (;;) {
    FG_CHECK(fg_lines_next(L, &s, NULL));
    FG_REQUIRE(s, FG_ERR_FORMAT, "%s: line %lld: end of file before the size line", L->name,
               (long long)L->lineno + 1);
    const char *p = skip_blanks(s);
    if (*p == '%' || *p == '\0') continue;
    const char *e = p;
    for (int k = 0; k < 3; k++) {
      const char *at = skip_blanks(e);
      int r = word_i64(at, &e, &sz[k]);
      FG_REQUIRE(r != 2, FG_ERR_FORMAT, "%s: line %lld: size '%s' too large", L->name,
                 (long long)L->lineno, word_text(at, tok, sizeof tok));
      FG_REQUIRE(r == 0 && sz[k] >= 0, FG_ERR_FORMAT,
                 "%s: line %lld: bad size line (expected 'rows columns entries')", L->name,
                 (long long)L->lineno);
    }
    break;
  }
  long long sline = (long long)L->lineno;
  FG_REQUIRE(sz[0] == sz[1], FG_ERR_UNSUPPORTED,
             "%s: line %lld: the matrix is %lld x %lld; a graph needs a square matrix", L->name,
             sline, (long long)sz[0], (long long)sz[1]);
  FG_REQUIRE(sz[0] > 0 && sz[0] <= FG_IO_MAX_NODES, FG_ERR_FORMAT,
             "%s: line %lld: number of nodes %lld out of range [1, %lld]", L->name, sline,
             (long long)sz[0], (long long)FG_IO_MAX_NODES);
  int64_t nn = sz[0], nnz = sz[2];
  /* the entries declared against the bytes that could hold them ("i j" and a newline: 4 bytes
   * at least), then against the memory, before reading them */
  {
    const double most = fg_lines_max_bytes(L), fit = floor((most + 1.0) / 4.0);
    if (L->gzip)
      FG_REQUIRE((double)nnz <= fit, FG_ERR_FORMAT,
                 "%s: line %lld declares %lld entries, but %.0f bytes of gzip data (which "
                 "inflate to at most %.0f) can hold at most %.0f (an entry takes 4 bytes or more)",
                 L->name, sline, (long long)nnz, L->source_bytes, most, fit);
    else
      FG_REQUIRE((double)nnz <= fit, FG_ERR_FORMAT,
                 "%s: line %lld declares %lld entries, but the file's %.0f bytes can hold at most "
                 "%.0f (an entry takes 4 bytes or more)",
                 L->name, sline, (long long)nnz, most, fit);
    const double eb_bytes = fg_io_edge_bytes();
    FG_REQUIRE(!fg_io_over_limit((double)nnz * eb_bytes), FG_ERR_MEMLIMIT,
               "%s: line %lld declares %lld entries: loading them needs about %s (%.0f bytes an "
               "entry: the edge list and the graph build), but %s",
               L->name, sline, (long long)nnz,
               fg_format_bytes((double)nnz * eb_bytes, size, sizeof size), eb_bytes,
               fg_io_limit_text());
  }
  eb.most = nnz;

  for (;;) {
    FG_CHECK(fg_lines_next(L, &s, NULL));
    if (!s) break;
    const char *p = skip_blanks(s);
    if (*p == '%' || *p == '\0') continue;
    long long ln = (long long)L->lineno;
    FG_REQUIRE(eb.n < nnz, FG_ERR_FORMAT,
               "%s: line %lld: more entries than the %lld declared on line %lld", L->name, ln,
               (long long)nnz, sline);
    int64_t ij[2];
    const char *e = p;
    for (int k = 0; k < 2; k++) {
      const char *at = skip_blanks(e);
      int r = word_i64(at, &e, &ij[k]);
      FG_REQUIRE(r == 0, FG_ERR_FORMAT, "%s: line %lld: expected '%s' but found '%s'", L->name,
                 ln, has_value ? "row column value" : "row column",
                 *at ? word_text(at, tok, sizeof tok) : "(end of line)");
      FG_REQUIRE(ij[k] >= 1 && ij[k] <= nn, FG_ERR_FORMAT,
                 "%s: line %lld: %s index %lld out of range [1, %lld]", L->name, ln,
                 k ? "column" : "row", (long long)ij[k], (long long)nn);
    }
    if (has_value) {
      const char *at = skip_blanks(e);
      int64_t iv;
      double dv;
      int r = is_int ? word_i64(at, &e, &iv) : fg_parse_f64(at, &e, &dv);
      if (r == 0 && *e && !is_blank(*e)) r = 1;
      FG_REQUIRE(r == 0, FG_ERR_FORMAT, "%s: line %lld: expected a%s value but found '%s'",
                 L->name, ln, is_int ? "n integer" : " real",
                 *at ? word_text(at, tok, sizeof tok) : "(end of line)");
    }
    FG_CHECK(edgebuf_push(&eb, L, ij[0] - 1, ij[1] - 1));
  }
  FG_REQUIRE(eb.n == nnz, FG_ERR_FORMAT, "%s: %lld entries, but line %lld declares %lld", L->name,
             (long long)eb.n, sline, (long long)nnz);
  out->num_nodes = nn;
  out->num_edges = eb.n;
  out->src = eb.src;
  out->dst = eb.dst;
  out->directed = !symmetric;
  memset(&eb, 0, sizeof eb);
cleanup:
  free(eb.src);
  free(eb.dst);
  return st;
}

/* Run a reader over the lines of buf[0, len) (from_mem) or of the file name; who names the
 * public function for a NULL path. */
static fg_status read_lines(fg_status (*read)(fg_lines *, fg_raw *), const char *who,
                            const char *name, int from_mem, const void *buf, size_t len,
                            fg_raw *out) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  memset(out, 0, sizeof *out);
  if (from_mem) {
    FG_CHECK(fg_lines_open_mem(&L, buf, len, name ? name : "(buffer)"));
  } else {
    FG_REQUIRE(name, FG_ERR_INVALID_ARG, "%s: path is NULL", who);
    FG_CHECK(fg_lines_open(&L, name));
  }
  FG_CHECK(read(&L, out));
cleanup:
  fg_lines_close(&L);
  return st;
}

fg_status fg_read_mtx_mem(const void *buf, size_t len, const char *name, fg_raw *out) {
  return read_lines(mtx_read, NULL, name, 1, buf, len, out);
}

fg_status fg_read_mtx(const char *path, fg_raw *out) {
  return read_lines(mtx_read, __func__, path, 0, NULL, 0, out);
}

/* ---- SNAP ---------------------------------------------------------------------------------- */

/* N from a comment of SNAP's header form "# Nodes: N Edges: M" ("Nodes: N" anywhere in it,
 * case as SNAP writes it), 0 if there is none or N is not a usable count. */
static int64_t nodes_comment(const char *p) {
  const char *at = strstr(p, "Nodes:");
  if (!at) return 0;
  int64_t v = 0;
  const char *end = NULL;
  if (fg_parse_i64(at + 6, &end, &v) != 0 || (*end && !is_blank(*end))) return 0;
  return v > 0 && v <= FG_IO_MAX_NODES ? v : 0;
}

/* The edge lines of L; whole_file: a file must hold an edge (a piece of one need not). */
static fg_status snap_parse(fg_lines *L, fg_raw *out, int whole_file) {
  fg_status st = FG_OK;
  edgebuf eb = {.most = -1};
  char *s = NULL, tok[48];
  int64_t mx = -1, declared = 0;
  memset(out, 0, sizeof *out);
  for (;;) {
    FG_CHECK(fg_lines_next(L, &s, NULL));
    if (!s) break;
    const char *p = skip_blanks(s);
    if (*p == '#' || *p == '%') {
      declared = FG_MAX(declared, nodes_comment(p));
      continue;
    }
    if (*p == '\0') continue;
    long long ln = (long long)L->lineno;
    int64_t uv[2];
    const char *e = p;
    for (int k = 0; k < 2; k++) {
      const char *at = skip_blanks(e);
      int r = word_i64(at, &e, &uv[k]);
      FG_REQUIRE(r != 2 && !(r == 0 && uv[k] >= FG_IO_MAX_NODES), FG_ERR_FORMAT,
                 "%s: line %lld: node id %s too large (ids must be < %lld)", L->name, ln,
                 word_text(at, tok, sizeof tok), (long long)FG_IO_MAX_NODES);
      FG_REQUIRE(r == 0, FG_ERR_FORMAT,
                 "%s: line %lld: expected two node ids 'u v' but found '%s'", L->name, ln,
                 *at ? word_text(at, tok, sizeof tok) : "(end of line)");
      FG_REQUIRE(uv[k] >= 0, FG_ERR_FORMAT, "%s: line %lld: negative node id %lld", L->name, ln,
                 (long long)uv[k]);
      if (uv[k] > mx) mx = uv[k];
    }
    FG_CHECK(edgebuf_push(&eb, L, uv[0], uv[1]));
  }
  FG_REQUIRE(eb.n > 0 || !whole_file, FG_ERR_FORMAT, "%s: no edges found", L->name);
  out->id_span = mx + 1;
  out->declared_nodes = declared;
  out->ids_inferred = declared <= mx;
  out->num_nodes = out->ids_inferred ? mx + 1 : declared;
  out->num_edges = eb.n;
  out->src = eb.src;
  out->dst = eb.dst;
  out->directed = 1;
  memset(&eb, 0, sizeof eb);
cleanup:
  free(eb.src);
  free(eb.dst);
  return st;
}

static fg_status snap_read(fg_lines *L, fg_raw *out) { return snap_parse(L, out, 1); }

fg_status fg_read_snap_piece(const void *buf, size_t len, const char *name, int64_t first_line,
                             fg_raw *out) {
  fg_status st = FG_OK;
  fg_lines L = {0};
  memset(out, 0, sizeof *out);
  FG_CHECK(fg_lines_open_piece(&L, buf, len, name, first_line));
  FG_CHECK(snap_parse(&L, out, 0));
cleanup:
  fg_lines_close(&L);
  return st;
}

fg_status fg_read_snap_mem(const void *buf, size_t len, const char *name, fg_raw *out) {
  return read_lines(snap_read, NULL, name, 1, buf, len, out);
}

fg_status fg_read_snap(const char *path, fg_raw *out) {
  return read_lines(snap_read, __func__, path, 0, NULL, 0, out);
}

static int cmp_i64(const void *pa, const void *pb) {
  const int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return (a > b) - (a < b);
}

/* The ids that occur, sorted, and each endpoint's rank among them by binary search: for a few
 * edges over a huge id span, where a bit per id would outweigh the edge list. */
static fg_status renumber_sorted(fg_raw *r) {
  fg_status st = FG_OK;
  int64_t *ids = NULL;
  const int64_t m = r->num_edges;
  FG_ALLOC(ids, 2 * m);
  memcpy(ids, r->src, (size_t)m * sizeof *ids);
  memcpy(ids + m, r->dst, (size_t)m * sizeof *ids);
  qsort(ids, (size_t)(2 * m), sizeof *ids, cmp_i64);
  int64_t k = 0;
  for (int64_t i = 0; i < 2 * m; i++)
    if (k == 0 || ids[i] != ids[k - 1]) ids[k++] = ids[i];
  if (k == r->num_nodes) goto cleanup; /* ids already 0..k-1 */
  int64_t *shrunk = realloc(ids, (size_t)k * sizeof *ids);
  if (shrunk) ids = shrunk;
  for (int64_t e = 0; e < m; e++) {
    int64_t *end[2] = {&r->src[e], &r->dst[e]};
    for (int s = 0; s < 2; s++) {
      int64_t lo = 0, hi = k - 1; /* the id is present: ids[lo..hi] holds it */
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < *end[s]) lo = mid + 1;
        else hi = mid;
      }
      *end[s] = lo;
    }
  }
  r->ids = ids;
  ids = NULL;
  r->num_nodes = k;
cleanup:
  free(ids);
  return st;
}

fg_status fg_raw_renumber(fg_raw *r) {
  fg_status st = FG_OK;
  uint64_t *seen = NULL;
  uint32_t *below = NULL; /* k <= FG_IO_MAX_NODES < 2^31 */
  int64_t *ids = NULL;
  char need[32];
  if (!r || !r->ids_inferred || r->ids || r->num_nodes <= 0) return FG_OK;
  const int64_t span = r->num_nodes, words = (span + 63) / 64;
  /* the bit per id and a count per word, or (when that outweighs the edge list) a sorted copy
   * of the endpoints; either beside the edge list and the ids kept (at most 2m) */
  const double bitmap = 12.0 * (double)words, sorted = 16.0 * (double)r->num_edges;
  const double kept = 8.0 * (double)FG_MIN(span, 2 * r->num_edges);
  const double extra = FG_MIN(bitmap, sorted) + kept;
  FG_REQUIRE(!fg_io_over_limit(16.0 * (double)r->num_edges + extra), FG_ERR_MEMLIMIT,
             "renumbering the node ids of %lld edges (ids up to %lld) needs about %s beside the "
             "edge list, but %s",
             (long long)r->num_edges, (long long)span - 1,
             fg_format_bytes(extra, need, sizeof need), fg_io_limit_text());
  if (sorted < bitmap) return renumber_sorted(r);
  /* a present-bit per id, then the count of present ids before each 64-id word: the new id of
   * v is below[v / 64] + popcount(the bits of its word under v) */
  FG_CALLOC(seen, (size_t)words);
  for (int64_t e = 0; e < r->num_edges; e++) {
    seen[r->src[e] >> 6] |= UINT64_C(1) << (r->src[e] & 63);
    seen[r->dst[e] >> 6] |= UINT64_C(1) << (r->dst[e] & 63);
  }
  FG_ALLOC(below, (size_t)words);
  int64_t k = 0;
  for (int64_t w = 0; w < words; w++) {
    below[w] = (uint32_t)k;
    k += __builtin_popcountll(seen[w]);
  }
  if (k == span) goto cleanup; /* ids already 0..k-1 */
  FG_ALLOC(ids, (size_t)k);
  for (int64_t w = 0, i = 0; w < words; w++)
    for (uint64_t b = seen[w]; b; b &= b - 1) ids[i++] = w * 64 + __builtin_ctzll(b);
  for (int64_t e = 0; e < r->num_edges; e++) {
    const int64_t u = r->src[e], v = r->dst[e];
    const uint64_t lo_u = (UINT64_C(1) << (u & 63)) - 1, lo_v = (UINT64_C(1) << (v & 63)) - 1;
    r->src[e] = (int64_t)below[u >> 6] + __builtin_popcountll(seen[u >> 6] & lo_u);
    r->dst[e] = (int64_t)below[v >> 6] + __builtin_popcountll(seen[v >> 6] & lo_v);
  }
  r->ids = ids;
  ids = NULL;
  r->num_nodes = k;
cleanup:
  free(seen);
  free(below);
  free(ids);
  return st;
}

/* ---- SNAP writer --------------------------------------------------------------------------- */

typedef struct text_out {
  const char *path;
  fg_out out; /* the file being written */
  FILE *f;    /* out.f for plain text, NULL for gzip */
  gzFile gz;
  char buf[1 << 16];
  size_t used;
} text_out;

static fg_status out_flush(text_out *o) {
  fg_status st = FG_OK;
  if (o->used == 0) goto cleanup;
  if (o->gz) {
    int w = gzwrite(o->gz, o->buf, (unsigned)o->used);
    int errnum = Z_OK;
    const char *zmsg = gzerror(o->gz, &errnum);
    FG_REQUIRE(w == (int)o->used, FG_ERR_IO, "%s: write error: %s", o->path,
               errnum == Z_ERRNO ? strerror(errno) : zmsg);
  } else {
    FG_REQUIRE(fwrite(o->buf, 1, o->used, o->f) == o->used, FG_ERR_IO, "%s: write error: %s",
               o->path, strerror(errno));
  }
  o->used = 0;
cleanup:
  return st;
}

static fg_status out_bytes(text_out *o, const char *s, size_t n) {
  fg_status st = FG_OK;
  while (n > 0) {
    if (o->used == sizeof o->buf) FG_CHECK(out_flush(o));
    size_t k = FG_MIN(n, sizeof o->buf - o->used);
    memcpy(o->buf + o->used, s, k);
    o->used += k;
    s += k;
    n -= k;
  }
cleanup:
  return st;
}

/* Decimal digits of a non-negative v into the end of buf; returns the start. */
static char *fmt_u64(uint64_t v, char *end) {
  do {
    *--end = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return end;
}

fg_status fg_write_snap(const char *path, const int64_t *src, const int64_t *dst, int64_t m,
                        const char *comment) {
  fg_status st = FG_OK;
  text_out *o = NULL;
  FG_REQUIRE(path, FG_ERR_INVALID_ARG, "fg_write_snap: path is NULL");
  FG_REQUIRE(m >= 0 && (m == 0 || (src && dst)), FG_ERR_INVALID_ARG,
             "fg_write_snap: bad edge list (m = %lld)", (long long)m);
  for (int64_t e = 0; e < m; e++)
    FG_REQUIRE(src[e] >= 0 && dst[e] >= 0, FG_ERR_INVALID_ARG,
               "fg_write_snap: edge %lld has a negative node id", (long long)e);
  FG_CALLOC(o, 1);
  o->path = path;
  FG_CHECK(fg_out_open(&o->out, path));
  size_t plen = strlen(path);
  if (plen >= 3 && strcmp(path + plen - 3, ".gz") == 0) {
    /* gzip writes to its own descriptor of the same open file; the commit below syncs it */
    int fd = dup(fileno(o->out.f));
    errno = 0;
    o->gz = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
    if (!o->gz && fd >= 0) close(fd);
    FG_REQUIRE(o->gz, FG_ERR_IO, "%s: cannot create: %s", path,
               errno ? strerror(errno) : "out of memory");
  } else {
    o->f = o->out.f;
  }
  for (const char *c = comment; c && *c;) { /* each line of the comment as "# line" */
    size_t k = strcspn(c, "\n");
    FG_CHECK(out_bytes(o, "# ", 2));
    FG_CHECK(out_bytes(o, c, k));
    FG_CHECK(out_bytes(o, "\n", 1));
    c += k + (c[k] == '\n');
  }
  for (int64_t e = 0; e < m; e++) {
    char line[48], *end = line + sizeof line;
    *--end = '\n';
    char *p = fmt_u64((uint64_t)dst[e], end);
    *--p = ' ';
    p = fmt_u64((uint64_t)src[e], p);
    FG_CHECK(out_bytes(o, p, (size_t)(line + sizeof line - p)));
  }
  FG_CHECK(out_flush(o));
  if (o->gz) {
    int rc = gzclose(o->gz);
    o->gz = NULL;
    FG_REQUIRE(rc == Z_OK, FG_ERR_IO, "%s: write error on close: %s", path,
               rc == Z_ERRNO ? strerror(errno) : "zlib error");
  }
  o->f = NULL;
  FG_CHECK(fg_out_commit(&o->out));
cleanup:
  if (o) {
    if (o->gz) gzclose(o->gz);
    fg_out_abort(&o->out); /* (nothing left to do after a commit) */
    free(o);
  }
  return st;
}
