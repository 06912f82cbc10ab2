/* io_npy.c -- NumPy .npy: the parser (format versions 1.0, 2.0, 3.0), conversions, the edge
 * array reader and the float32 writer. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/fg_io_internal.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static uint64_t load_le(const unsigned char *p, int n) {
  uint64_t x = 0;
  for (int k = n - 1; k >= 0; k--) x = x << 8 | p[k];
  return x;
}

/* ---- header: a Python dict literal ----------------------------------------------------------- */

typedef struct hdr_cursor {
  const char *p, *end;
  const char *file; /* where the .npy starts: messages give byte offsets from it */
  const char *name;
} hdr_cursor;

static void hdr_ws(hdr_cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static size_t hdr_off(const hdr_cursor *c) { return (size_t)(c->p - c->file); }

/* A quoted Python string into out (NUL-terminated; too long fails). */
static fg_status hdr_string(hdr_cursor *c, char *out, size_t cap) {
  fg_status st = FG_OK;
  hdr_ws(c);
  FG_REQUIRE(c->p < c->end && (*c->p == '\'' || *c->p == '"'), FG_ERR_FORMAT,
             "%s: byte %zu: bad .npy header: expected a quoted string", c->name, hdr_off(c));
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    FG_REQUIRE(n + 1 < cap, FG_ERR_FORMAT, "%s: byte %zu: bad .npy header: string too long",
               c->name, hdr_off(c));
    out[n++] = *c->p++;
  }
  FG_REQUIRE(c->p < c->end, FG_ERR_FORMAT, "%s: byte %zu: bad .npy header: unterminated string",
             c->name, hdr_off(c));
  c->p++;
  out[n] = '\0';
cleanup:
  return st;
}

/* Skip blanks; if w follows, step over it and return 1. */
static int hdr_word(hdr_cursor *c, const char *w) {
  hdr_ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
    c->p += n;
    return 1;
  }
  return 0;
}

static fg_status hdr_expect(hdr_cursor *c, char ch, const char *what) {
  fg_status st = FG_OK;
  const char w[2] = {ch, '\0'};
  FG_REQUIRE(hdr_word(c, w), FG_ERR_FORMAT, "%s: byte %zu: bad .npy header: expected '%c' %s",
             c->name, hdr_off(c), ch, what);
cleanup:
  return st;
}

static fg_status hdr_shape(hdr_cursor *c, fg_npy *a) {
  fg_status st = FG_OK;
  FG_CHECK(hdr_expect(c, '(', "to open the shape"));
  a->ndim = 0;
  for (;;) {
    if (hdr_word(c, ")")) break;
    FG_REQUIRE(c->p < c->end && *c->p >= '0' && *c->p <= '9', FG_ERR_FORMAT,
               "%s: byte %zu: bad .npy header: expected a dimension in the shape", c->name,
               hdr_off(c));
    uint64_t d = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      FG_REQUIRE(d <= (uint64_t)(INT64_MAX / 10 - 9), FG_ERR_FORMAT,
                 "%s: byte %zu: .npy shape dimension too large", c->name, hdr_off(c));
      d = d * 10 + (uint64_t)(*c->p++ - '0');
    }
    if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 long literal */
    FG_REQUIRE(a->ndim < FG_NPY_MAX_DIMS, FG_ERR_UNSUPPORTED,
               "%s: .npy array with more than %d dimensions", c->name, FG_NPY_MAX_DIMS);
    a->shape[a->ndim++] = (int64_t)d;
    if (hdr_word(c, ",")) continue;
    FG_CHECK(hdr_expect(c, ')', "to close the shape"));
    break;
  }
cleanup:
  return st;
}

/* "<f4" and friends: byte order, kind, item size. allow_text: accept 'S' (bytes, |Sn) and
 * 'U' (UCS-4, <Un) for fg_npy_read_text; every other caller refuses string arrays. */
static fg_status parse_descr(const char *d, const char *name, int allow_text, fg_npy *a) {
  fg_status st = FG_OK;
  char order = '|';
  const char *p = d;
  fg_printable(d, strlen(d), a->descr, sizeof a->descr); /* the messages quote this */
  if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
  char kind = *p ? *p++ : '?';
  long size = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9' && size < 1000000) {
    size = size * 10 + (*p++ - '0');
    digits++;
  }
  FG_REQUIRE(kind != 'O', FG_ERR_UNSUPPORTED, "%s: object arrays (dtype '%s') are not supported",
             name, a->descr);
  if (allow_text && (kind == 'S' || kind == 'U') && digits > 0 && *p == '\0' && size >= 1 &&
      size <= 1024 && !(kind == 'U' && order == '>')) {
    a->kind = kind;
    a->itemsize = (int)(kind == 'U' ? 4 * size : size);
    return FG_OK;
  }
  FG_REQUIRE(kind != 'U' && kind != 'S' && kind != 'a', FG_ERR_UNSUPPORTED,
             "%s: string arrays (dtype '%s') are not supported", name, a->descr);
  /* float16 (mag240M's features) is widened to float32 exactly by fg_npy_to_f32 */
  int ok = digits > 0 && *p == '\0' &&
           ((kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
            ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
            (kind == 'b' && size == 1));
  FG_REQUIRE(ok, FG_ERR_UNSUPPORTED,
             "%s: dtype '%s' is not supported (float16/32/64, int8-64, uint8-64, bool)", name,
             a->descr);
  FG_REQUIRE(!(order == '>' && size > 1), FG_ERR_UNSUPPORTED,
             "%s: big-endian dtype '%s' is not supported (convert with .astype('<%c%ld'))", name,
             a->descr, kind, size);
  a->kind = kind;
  a->itemsize = (int)size;
cleanup:
  return st;
}

/* buf[0, len) holds the first len of the .npy's total bytes (len == total: all of it; else
 * only the header is parsed and a->data is NULL). */
static fg_status npy_parse(const void *buf, size_t len, size_t total, const char *name,
                           int allow_text, fg_npy *a) {
  fg_status st = FG_OK;
  const unsigned char *b = buf;
  int have_descr = 0, have_fortran = 0, have_shape = 0;
  char key[32], descr[32];
  memset(a, 0, sizeof *a);
  FG_REQUIRE(len >= 10, FG_ERR_FORMAT, "%s: truncated .npy: %zu bytes, shorter than the preamble",
             name, len);
  FG_REQUIRE(memcmp(b, npy_magic, 6) == 0, FG_ERR_FORMAT,
             "%s: byte 0: bad magic (not a .npy file)", name);
  int major = b[6], minor = b[7];
  FG_REQUIRE(major >= 1 && major <= 3, FG_ERR_UNSUPPORTED,
             "%s: byte 6: .npy format version %d.%d is not supported", name, major, minor);
  /* Version 1.0 has a 2-byte header length, 2.0 and 3.0 a 4-byte one. */
  size_t hstart = major == 1 ? 10 : 12;
  FG_REQUIRE(len >= hstart, FG_ERR_FORMAT,
             "%s: truncated .npy: %zu bytes, shorter than the preamble", name, len);
  size_t hlen = (size_t)load_le(b + 8, (int)hstart - 8);
  FG_REQUIRE(hlen <= total - hstart, FG_ERR_FORMAT,
             "%s: truncated .npy: header of %zu bytes at offset %zu, but the file has %zu bytes",
             name, hlen, hstart, total);
  FG_REQUIRE(hlen <= len - hstart, FG_ERR_UNSUPPORTED,
             "%s: .npy header of %zu bytes is longer than the %zu bytes read ahead of it", name,
             hlen, len);
  hdr_cursor c = {(const char *)b + hstart, (const char *)b + hstart + hlen, (const char *)b, name};
  FG_CHECK(hdr_expect(&c, '{', "to open the header dict"));
  for (;;) {
    if (hdr_word(&c, "}")) break;
    size_t at = hdr_off(&c);
    FG_CHECK(hdr_string(&c, key, sizeof key));
    FG_CHECK(hdr_expect(&c, ':', "after a key"));
    hdr_ws(&c);
    if (strcmp(key, "descr") == 0) {
      FG_REQUIRE(!have_descr, FG_ERR_FORMAT, "%s: byte %zu: 'descr' given twice", name, at);
      FG_REQUIRE(c.p < c.end && *c.p != '[', FG_ERR_UNSUPPORTED,
                 "%s: structured dtypes are not supported", name);
      FG_CHECK(hdr_string(&c, descr, sizeof descr));
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      FG_REQUIRE(!have_fortran, FG_ERR_FORMAT, "%s: byte %zu: 'fortran_order' given twice", name,
                 at);
      if (hdr_word(&c, "True")) a->fortran = 1;
      else if (hdr_word(&c, "False")) a->fortran = 0;
      else
        FG_FAIL(FG_ERR_FORMAT, "%s: byte %zu: bad .npy header: fortran_order must be True or "
                "False", name, hdr_off(&c));
      have_fortran = 1;
    } else if (strcmp(key, "shape") == 0) {
      FG_REQUIRE(!have_shape, FG_ERR_FORMAT, "%s: byte %zu: 'shape' given twice", name, at);
      FG_CHECK(hdr_shape(&c, a));
      have_shape = 1;
    } else {
      char shown[64];
      FG_FAIL(FG_ERR_FORMAT, "%s: byte %zu: bad .npy header: unknown key '%s'", name, at,
              fg_printable(key, strlen(key), shown, sizeof shown));
    }
    if (hdr_word(&c, ",")) continue;
    FG_CHECK(hdr_expect(&c, '}', "to close the header dict"));
    break;
  }
  FG_REQUIRE(have_descr && have_fortran && have_shape, FG_ERR_FORMAT,
             "%s: bad .npy header: missing '%s'", name,
             !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
  FG_CHECK(parse_descr(descr, name, allow_text, a));
  FG_REQUIRE(!a->fortran || a->ndim <= 2, FG_ERR_UNSUPPORTED,
             "%s: Fortran-order arrays with %d dimensions are not supported", name, a->ndim);

  /* Every size against the bytes present. */
  size_t doff = hstart + hlen;
  uint64_t count = 1;
  for (int i = 0; i < a->ndim; i++) {
    uint64_t d = (uint64_t)a->shape[i];
    FG_REQUIRE(d == 0 || count <= (uint64_t)INT64_MAX / d, FG_ERR_FORMAT,
               "%s: .npy shape overflows", name);
    count *= d;
  }
  size_t avail = total - doff;
  FG_REQUIRE(count <= avail / (size_t)a->itemsize, FG_ERR_FORMAT,
             "%s: truncated .npy data: shape needs %llu bytes from offset %zu, only %zu present",
             name, (unsigned long long)count * (unsigned long long)a->itemsize, doff, avail);
  size_t nbytes = (size_t)count * (size_t)a->itemsize;
  FG_REQUIRE(nbytes == avail, FG_ERR_FORMAT,
             "%s: %zu unexpected bytes after the .npy data (which ends at offset %zu)", name,
             avail - nbytes, doff + nbytes);
  a->count = (int64_t)count;
  a->data = len == total ? b + doff : NULL;
  a->data_offset = doff;
cleanup:
  return st;
}

fg_status fg_npy_parse(const void *buf, size_t len, const char *name, fg_npy *a) {
  return npy_parse(buf, len, len, name, 0, a);
}

fg_status fg_npy_parse_header(const void *buf, size_t len, size_t total, const char *name,
                              fg_npy *a) {
  fg_status st = FG_OK;
  FG_REQUIRE(len <= total, FG_ERR_INTERNAL, "%s: %zu bytes of a .npy of %zu", name, len, total);
  FG_CHECK(npy_parse(buf, len, total, name, 0, a));
cleanup:
  return st;
}

fg_status fg_npy_read_text(const void *buf, size_t len, const char *name, char *out, size_t cap,
                           fg_npy *a) {
  fg_status st = FG_OK;
  out[0] = '\0';
  FG_CHECK(npy_parse(buf, len, len, name, 1, a));
  FG_REQUIRE(a->kind == 'S' || a->kind == 'U', FG_ERR_FORMAT,
             "%s: expected a string, got dtype '%s'", name, a->descr);
  FG_REQUIRE(a->count == 1, FG_ERR_FORMAT, "%s: expected one string, got %lld", name,
             (long long)a->count);
  /* fixed width, padded with NULs; 'U' holds little-endian UCS-4 code points */
  const int width = a->kind == 'U' ? a->itemsize / 4 : a->itemsize;
  size_t n = 0;
  for (int k = 0; k < width; k++) {
    uint32_t cp = a->kind == 'U' ? (uint32_t)load_le(a->data + 4 * k, 4) : a->data[k];
    if (cp == 0) break;
    /* anything beyond ASCII cannot be a name the readers know: shown as '?' */
    if (n + 1 < cap) out[n++] = cp < 128 ? (char)cp : '?';
  }
  out[n] = '\0';
cleanup:
  return st;
}

/* ---- element access ------------------------------------------------------------------------ */

/* IEEE 754 binary16 to float, exactly (every half is a float): subnormals m * 2^-24, Inf and
 * NaN kept as such for the finiteness check to name. */
static float half_to_float(uint16_t h) {
  const unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 0x400), (int)e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Storage index of C-order element i. */
static int64_t npy_storage_index(const fg_npy *a, int64_t i) {
  if (!a->fortran || a->ndim < 2) return i;
  int64_t rows = a->shape[0], cols = a->shape[1];
  return (i % cols) * rows + i / cols;
}

/* Integer element (kind i/u/b); *ok = 0 for a uint64 beyond int64. */
static int64_t npy_int_at(const fg_npy *a, int64_t s, int *ok) {
  const unsigned char *p = a->data + (size_t)s * (size_t)a->itemsize;
  uint64_t x = load_le(p, a->itemsize);
  *ok = 1;
  if (a->kind == 'b') return x != 0;
  if (a->kind == 'u') {
    if (x > (uint64_t)INT64_MAX) *ok = 0;
    return (int64_t)x;
  }
  int bits = 8 * a->itemsize;
  if (bits < 64 && (x >> (bits - 1)) & 1u) x |= ~(uint64_t)0 << bits; /* sign-extend */
  int64_t v;
  memcpy(&v, &x, sizeof v);
  return v;
}

static double npy_real_at(const fg_npy *a, int64_t s) {
  const unsigned char *p = a->data + (size_t)s * (size_t)a->itemsize;
  if (a->kind == 'f') {
    uint64_t x = load_le(p, a->itemsize);
    if (a->itemsize == 2) return half_to_float((uint16_t)x);
    if (a->itemsize == 4) {
      uint32_t x32 = (uint32_t)x;
      float f;
      memcpy(&f, &x32, sizeof f);
      return f;
    }
    double d;
    memcpy(&d, &x, sizeof d);
    return d;
  }
  int ok;
  int64_t v = npy_int_at(a, s, &ok);
  return ok ? (double)v : (double)(uint64_t)v;
}

double fg_npy_real_at(const fg_npy *a, int64_t i) {
  return npy_real_at(a, npy_storage_index(a, i));
}

int64_t fg_npy_int_at(const fg_npy *a, int64_t i, int *ok) {
  return npy_int_at(a, npy_storage_index(a, i), ok);
}

fg_status fg_npy_to_i64(const fg_npy *a, const char *name, int64_t *dst) {
  fg_status st = FG_OK;
  FG_REQUIRE(a->kind != 'f', FG_ERR_FORMAT, "%s: expected an integer array, got dtype '%s'",
             name, a->descr);
  for (int64_t i = 0; i < a->count; i++) {
    int ok;
    dst[i] = npy_int_at(a, npy_storage_index(a, i), &ok);
    FG_REQUIRE(ok, FG_ERR_FORMAT, "%s: element %lld is too large (%llu)", name, (long long)i,
               (unsigned long long)dst[i]);
  }
cleanup:
  return st;
}

fg_status fg_npy_to_f32(const fg_npy *a, const char *name, float *dst) {
  fg_status st = FG_OK;
  int64_t cols = a->ndim >= 2 ? a->shape[a->ndim - 1] : 1;
  for (int64_t i = 0; i < a->count; i++) {
    double v = npy_real_at(a, npy_storage_index(a, i));
    float f = (float)v;
    if (!isfinite(f)) {
      if (a->ndim >= 2)
        FG_FAIL(FG_ERR_NUMERIC, "%s: row %lld, column %lld: value %g is not finite%s", name,
                (long long)(i / cols), (long long)(i % cols), v,
                isfinite(v) ? " as float32" : "");
      FG_FAIL(FG_ERR_NUMERIC, "%s: element %lld: value %g is not finite%s", name, (long long)i,
              v, isfinite(v) ? " as float32" : "");
    }
    dst[i] = f;
  }
cleanup:
  return st;
}

/* ---- edge arrays --------------------------------------------------------------------------- */

fg_status fg_raw_edge_pairs(const int64_t *ev, int64_t m, int64_t n, const char *name, fg_raw *r) {
  fg_status st = FG_OK;
  int64_t mx = -1;
  FG_ALLOC(r->src, m);
  FG_ALLOC(r->dst, m);
  for (int64_t e = 0; e < m; e++) {
    int64_t u = ev[2 * e], v = ev[2 * e + 1];
    FG_REQUIRE(u >= 0 && u < n && v >= 0 && v < n, FG_ERR_FORMAT,
               "%s: edge %lld: node id %lld out of range [0, %lld)", name, (long long)e,
               (long long)(u >= 0 && u < n ? v : u), (long long)n);
    r->src[e] = u;
    r->dst[e] = v;
    mx = FG_MAX(mx, FG_MAX(u, v));
  }
  r->num_nodes = mx + 1;
  r->num_edges = m;
cleanup:
  return st;
}

fg_status fg_read_npy_edges_mem(const void *buf, size_t len, const char *name, fg_raw *out) {
  fg_status st = FG_OK;
  fg_npy a;
  fg_raw r = {0};
  char need[32];
  int64_t mx = -1;
  memset(out, 0, sizeof *out);
  FG_CHECK(fg_npy_parse(buf, len, name, &a));
  FG_REQUIRE(a.kind != 'f' && a.kind != 'b', FG_ERR_FORMAT,
             "%s: an edge array must hold integers, got dtype '%s'", name, a.descr);
  FG_REQUIRE(a.ndim == 2 && a.shape[1] == 2, FG_ERR_FORMAT,
             "%s: an edge array must have shape (E, 2), got %d dimension(s)%s", name, a.ndim,
             a.ndim == 2 ? " with a second dimension other than 2" : "");
  int64_t m = a.shape[0];
  FG_REQUIRE(m > 0, FG_ERR_FORMAT, "%s: the edge array is empty", name);
  /* the file's bytes (in memory) and the edges with what their graph build will need */
  const double eb = fg_io_edge_bytes(), bytes = (double)len + (double)m * eb;
  FG_REQUIRE(!fg_io_over_limit(bytes), FG_ERR_MEMLIMIT,
             "%s: its %lld edges need about %s to load (the file, and %.0f bytes an edge: the edge "
             "list and the graph build), but %s",
             name, (long long)m, fg_format_bytes(bytes, need, sizeof need), eb,
             fg_io_limit_text());
  FG_ALLOC(r.src, m);
  FG_ALLOC(r.dst, m);
  /* element (e, k) straight from the file's bytes: no int64 copy of the whole array */
  for (int64_t e = 0; e < m; e++) {
    int64_t uv[2];
    for (int k = 0; k < 2; k++) {
      int ok;
      uv[k] = npy_int_at(&a, npy_storage_index(&a, 2 * e + k), &ok);
      FG_REQUIRE(ok, FG_ERR_FORMAT, "%s: element %lld is too large (%llu)", name,
                 (long long)(2 * e + k), (unsigned long long)uv[k]);
    }
    const int64_t u = uv[0], v = uv[1];
    FG_REQUIRE(u >= 0 && u < FG_IO_MAX_NODES && v >= 0 && v < FG_IO_MAX_NODES, FG_ERR_FORMAT,
               "%s: edge %lld: node id %lld out of range [0, %lld)", name, (long long)e,
               (long long)(u >= 0 && u < FG_IO_MAX_NODES ? v : u), (long long)FG_IO_MAX_NODES);
    r.src[e] = u;
    r.dst[e] = v;
    mx = FG_MAX(mx, FG_MAX(u, v));
  }
  r.num_nodes = mx + 1;
  r.num_edges = m;
  r.directed = 1;
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_raw_free(&r);
  return st;
}

fg_status fg_read_npy_edges(const char *path, fg_raw *out) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t len = 0;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(path, FG_ERR_INVALID_ARG, "fg_read_npy_edges: path is NULL");
  FG_CHECK(fg_file_slurp(path, &buf, &len));
  FG_CHECK(fg_read_npy_edges_mem(buf, len, path, out));
cleanup:
  free(buf);
  return st;
}

/* ---- writer ------------------------------------------------------------------------------- */

/* One little-endian .npy v1.0 file of rows x cols elements of esize bytes (cols < 0: a 1-D
 * array of rows), dtype descr ("<f4", "<i8"). */
static fg_status npy_write(const char *path, const void *data, size_t esize, const char *descr,
                           int64_t rows, int64_t cols) {
  fg_status st = FG_OK;
  fg_out out = {0};
  unsigned char *chunk = NULL;
  const unsigned char *src = data;
  const int64_t c = cols < 0 ? 1 : cols;
  FG_REQUIRE(path, FG_ERR_INVALID_ARG, "npy writer: path is NULL");
  FG_REQUIRE(rows >= 0, FG_ERR_INVALID_ARG, "%s: bad shape (%lld, %lld)", path,
             (long long)rows, (long long)cols);
  FG_REQUIRE(c == 0 || rows <= INT64_MAX / (int64_t)esize / c, FG_ERR_INVALID_ARG,
             "%s: shape (%lld, %lld) too large", path, (long long)rows, (long long)cols);
  int64_t n = rows * c;
  FG_REQUIRE(data || n == 0, FG_ERR_INVALID_ARG, "%s: no data to write", path);

  /* Header: magic, version 1.0, length, dict padded with spaces to a multiple of 64 bytes
   * overall and ended by '\n' (as numpy writes it). */
  char shape[48];
  if (cols < 0) snprintf(shape, sizeof shape, "(%lld,)", (long long)rows);
  else snprintf(shape, sizeof shape, "(%lld, %lld)", (long long)rows, (long long)cols);
  unsigned char head[256] = {[6] = 1}; /* version 1.0 */
  memcpy(head, npy_magic, 6);
  int dl = snprintf((char *)head + 10, sizeof head - 10,
                    "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  size_t total = 10 + (size_t)dl + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t hlen = padded - 10;
  head[8] = (unsigned char)(hlen & 0xff);
  head[9] = (unsigned char)(hlen >> 8);
  memset(head + 10 + dl, ' ', hlen - (size_t)dl - 1);
  head[padded - 1] = '\n';

  FG_CHECK(fg_out_open(&out, path));
  FG_REQUIRE(fwrite(head, 1, padded, out.f) == padded, FG_ERR_IO, "%s: write error: %s", path,
             strerror(errno));
  /* Data in little-endian byte order whatever the host's. */
  enum { CH = 16384 };
  FG_ALLOC(chunk, (size_t)CH * esize);
  for (int64_t i = 0; i < n; i += CH) {
    int64_t k = FG_MIN((int64_t)CH, n - i);
    for (int64_t j = 0; j < k; j++) {
      uint64_t x = 0;
      if (esize == 4) {
        uint32_t x4;
        memcpy(&x4, src + (size_t)(i + j) * 4, 4);
        x = x4;
      } else {
        memcpy(&x, src + (size_t)(i + j) * 8, 8);
      }
      for (size_t b = 0; b < esize; b++) chunk[esize * (size_t)j + b] = (unsigned char)(x >> (8 * b));
    }
    FG_REQUIRE(fwrite(chunk, esize, (size_t)k, out.f) == (size_t)k, FG_ERR_IO,
               "%s: write error: %s", path, strerror(errno));
  }
  FG_CHECK(fg_out_commit(&out));
cleanup:
  if (st != FG_OK) fg_out_abort(&out);
  free(chunk);
  return st;
}

fg_status fg_npy_write_f32(const char *path, const float *data, int64_t rows, int64_t cols) {
  if (cols < 0) return fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                                    "fg_npy_write_f32: bad shape (%lld, %lld)", (long long)rows,
                                    (long long)cols);
  return npy_write(path, data, 4, "<f4", rows, cols);
}

fg_status fg_npy_write_i64(const char *path, const int64_t *data, int64_t n) {
  return npy_write(path, data, 8, "<i8", n, -1);
}
