/* io_lines.c -- the line reader (plain or gzip, file or memory), whole-file reads, number
 * parsing and small helpers shared by the readers. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fg_io_internal.h"

#define FG_LINES_INITIAL (1u << 18)
#define FG_LINE_MAX ((size_t)1 << 30)
#define FG_ZCHUNK ((size_t)1 << 30) /* zlib counts in uInt */

/* ---- the reader's memory budget ----------------------------------------------------------- */

static _Thread_local fg_io_budget io_budget = {0.0, 16.0, ""};

void fg_io_set_budget(const fg_io_budget *b) {
  if (b && b->limit > 0) {
    io_budget = *b;
    io_budget.what[sizeof io_budget.what - 1] = '\0';
  } else {
    memset(&io_budget, 0, sizeof io_budget);
  }
  if (!(io_budget.edge_bytes >= 16.0)) io_budget.edge_bytes = 16.0;
}

void fg_io_get_budget(fg_io_budget *b) { *b = io_budget; }

void fg_io_set_alloc_limit(int64_t bytes) {
  fg_io_budget b = {.limit = (double)FG_MAX(bytes, 0), .edge_bytes = 16.0};
  char lim[32];
  snprintf(b.what, sizeof b.what, "the reader's limit is %s",
           fg_format_bytes(b.limit, lim, sizeof lim));
  fg_io_set_budget(&b);
}

double fg_io_limit(void) { return io_budget.limit; }
int fg_io_over_limit(double bytes) { return io_budget.limit > 0 && bytes > io_budget.limit; }
double fg_io_edge_bytes(void) { return io_budget.edge_bytes; }
const char *fg_io_limit_text(void) { return io_budget.what; }

int64_t fg_io_items_allowed(double held, double item_bytes) {
  if (io_budget.limit <= 0) return INT64_MAX;
  if (held >= io_budget.limit) return 0;
  const double k = (io_budget.limit - held) / FG_MAX(item_bytes, 1.0);
  return k >= 9.0e18 ? INT64_MAX : (int64_t)k;
}

void fg_raw_free(fg_raw *r) {
  if (!r) return;
  free(r->src);
  free(r->dst);
  free(r->features);
  free(r->labels);
  free(r->targets);
  free(r->split);
  free(r->ids);
  memset(r, 0, sizeof *r);
}

fg_status fg_raw_check_classes(const fg_raw *r, const char *name, int by_line) {
  fg_status st = FG_OK;
  uint64_t *seen = NULL;
  const int64_t C = r->num_classes;
  if (!r->labels || C <= FG_CLASSES_ALWAYS_OK) return FG_OK;
  FG_REQUIRE(C <= FG_IO_MAX_CLASSES, FG_ERR_INTERNAL, "%s: %lld classes", name, (long long)C);
  FG_CALLOC(seen, (size_t)((C + 63) / 64));
  int64_t distinct = 0, labelled = 0, at = -1;
  for (int64_t i = 0; i < r->num_nodes; i++) {
    const int32_t y = r->labels[i];
    if (y < 0) continue;
    labelled++;
    if (y == C - 1 && at < 0) at = i;
    const uint64_t bit = UINT64_C(1) << (y & 63);
    if (!(seen[y >> 6] & bit)) distinct++;
    seen[y >> 6] |= bit;
  }
  FG_CHECK(fg_check_class_use(name, by_line, C, distinct, labelled, at));
cleanup:
  free(seen);
  return st;
}

fg_status fg_check_class_use(const char *name, int by_line, int64_t C, int64_t distinct,
                             int64_t labelled, int64_t at) {
  fg_status st = FG_OK;
  if (C <= FG_CLASSES_ALWAYS_OK) return FG_OK;
  FG_REQUIRE(C <= 2 * distinct, FG_ERR_FORMAT,
             "%s: %s %lld: label %lld makes %lld classes (0..%lld), but only %lld distinct labels "
             "occur among the %lld labelled nodes: more than half of the class ids would never be "
             "used, and each would cost every node a logit. Relabel the classes 0..K-1 (e.g. "
             "numpy.unique(labels, return_inverse=True)); label sets of up to %d classes are "
             "taken as they are",
             name, by_line ? "line" : "element", (long long)(by_line ? at + 1 : at),
             (long long)C - 1, (long long)C, (long long)C - 1, (long long)distinct,
             (long long)labelled, FG_CLASSES_ALWAYS_OK);
cleanup:
  return st;
}

/* ---- line reader ---------------------------------------------------------------------- */

fg_status fg_lines_open_piece(fg_lines *L, const void *buf, size_t len, const char *name,
                              int64_t first_line) {
  fg_status st = FG_OK;
  const unsigned char *b = buf; /* the gzip magic would switch the line reader to inflate */
  FG_REQUIRE(!(len >= 2 && b[0] == 0x1f && b[1] == 0x8b), FG_ERR_FORMAT,
             "%s: line %lld: starts with bytes 1f 8b (binary data in a text file?)", name,
             (long long)first_line + 1);
  FG_CHECK(fg_lines_open_mem(L, buf, len, name));
  L->lineno = first_line; /* messages count the file's lines, not the piece's */
cleanup:
  return st;
}

fg_status fg_lines_open(fg_lines *L, const char *path) {
  fg_status st = FG_OK;
  struct stat sb;
  memset(L, 0, sizeof *L);
  L->name = path;
  FG_REQUIRE(stat(path, &sb) == 0, FG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  FG_REQUIRE(!S_ISDIR(sb.st_mode), FG_ERR_IO, "%s: is a directory, expected a file", path);
  errno = 0;
  L->gz = gzopen(path, "rb");
  FG_REQUIRE(L->gz, FG_ERR_IO, "%s: cannot open: %s", path,
             errno ? strerror(errno) : "out of memory");
  gzbuffer(L->gz, 1u << 17);
  /* a pipe or device has no size: nothing bounds what it yields */
  L->source_bytes = S_ISREG(sb.st_mode) ? (double)sb.st_size : -1.0;
  L->gzip = S_ISREG(sb.st_mode) && !gzdirect(L->gz); /* looks at the first bytes */
  L->cap = FG_LINES_INITIAL;
  FG_ALLOC(L->buf, L->cap);
cleanup:
  if (st != FG_OK) fg_lines_close(L);
  return st;
}

fg_status fg_lines_open_mem(fg_lines *L, const void *buf, size_t len, const char *name) {
  fg_status st = FG_OK;
  const unsigned char *b = buf;
  memset(L, 0, sizeof *L);
  L->name = name;
  L->mem = b;
  L->mem_len = b ? len : 0;
  if (L->mem_len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    int zr = inflateInit2(&L->zs, 16 + MAX_WBITS);
    FG_REQUIRE(zr == Z_OK, FG_ERR_NOMEM, "%s: cannot start gzip decoder (zlib error %d)", name,
               zr);
    L->zs_active = 1;
    L->gzip = 1;
    L->zs.next_in = (unsigned char *)(uintptr_t)b; /* zlib does not write through next_in */
    L->zs.avail_in = 0;
  }
  L->source_bytes = (double)L->mem_len;
  L->cap = FG_LINES_INITIAL;
  FG_ALLOC(L->buf, L->cap);
cleanup:
  if (st != FG_OK) fg_lines_close(L);
  return st;
}

double fg_lines_max_bytes(const fg_lines *L) {
  if (L->source_bytes < 0) return 1e300;
  return L->gzip ? L->source_bytes * 1032.0 + 1024.0 : L->source_bytes;
}

void fg_lines_close(fg_lines *L) {
  if (!L) return;
  if (L->gz) gzclose(L->gz);
  if (L->zs_active) inflateEnd(&L->zs);
  free(L->buf);
  memset(L, 0, sizeof *L);
}

/* Inflate gzip bytes from memory into dst[0, room). */
static fg_status lines_inflate(fg_lines *L, char *dst, size_t room, size_t *got) {
  fg_status st = FG_OK;
  z_stream *zs = &L->zs;
  const unsigned char *mem_end = L->mem + L->mem_len;
  *got = 0;
  zs->next_out = (unsigned char *)dst;
  zs->avail_out = (uInt)(room > FG_ZCHUNK ? FG_ZCHUNK : room);
  while (zs->avail_out > 0 && !L->zs_done) {
    if (zs->avail_in == 0) {
      size_t left = (size_t)(mem_end - zs->next_in);
      FG_REQUIRE(left > 0, FG_ERR_FORMAT,
                 "%s: truncated gzip data (unexpected end after %zu compressed bytes)", L->name,
                 L->mem_len);
      zs->avail_in = (uInt)(left > FG_ZCHUNK ? FG_ZCHUNK : left);
    }
    int zr = inflate(zs, Z_NO_FLUSH);
    if (zr == Z_STREAM_END) {
      /* Another gzip member may follow (as gzip -c a b > c writes); anything else ends it. */
      size_t left = (size_t)(mem_end - zs->next_in);
      if (left >= 2 && zs->next_in[0] == 0x1f && zs->next_in[1] == 0x8b) {
        const unsigned char *next = zs->next_in;
        inflateReset(zs);
        zs->next_in = (unsigned char *)(uintptr_t)next;
        zs->avail_in = 0;
      } else {
        L->zs_done = 1;
      }
    } else if (zr == Z_BUF_ERROR) {
      continue; /* needs more input: the next round supplies it or reports truncation */
    } else if (zr != Z_OK) {
      size_t at = (size_t)(zs->next_in - L->mem);
      FG_FAIL(zr == Z_MEM_ERROR ? FG_ERR_NOMEM : FG_ERR_FORMAT,
              "%s: corrupt gzip data near compressed byte %zu (%s)", L->name, at,
              zs->msg ? zs->msg : "inflate failed");
    }
  }
  *got = (size_t)((char *)zs->next_out - dst);
cleanup:
  return st;
}

/* Append more bytes to buf[end, cap - 1); sets eof when the source is exhausted. */
static fg_status lines_fill(fg_lines *L) {
  fg_status st = FG_OK;
  size_t room = L->cap - 1 - L->end, got = 0;
  if (L->gz) {
    unsigned want = (unsigned)(room > FG_ZCHUNK ? FG_ZCHUNK : room);
    int errnum = Z_OK;
    errno = 0;
    int n = gzread(L->gz, L->buf + L->end, want);
    const char *zmsg = gzerror(L->gz, &errnum);
    if (n < 0 || errnum != Z_OK) {
      if (errnum == Z_ERRNO)
        FG_FAIL(FG_ERR_IO, "%s: read error: %s", L->name, strerror(errno));
      if (errnum == Z_BUF_ERROR)
        FG_FAIL(FG_ERR_FORMAT, "%s: truncated gzip data (unexpected end of file)", L->name);
      if (errnum == Z_MEM_ERROR) FG_FAIL(FG_ERR_NOMEM, "%s: out of memory in zlib", L->name);
      /* zlib's message starts with the path; keep only what follows it */
      size_t nl = strlen(L->name);
      if (zmsg && strncmp(zmsg, L->name, nl) == 0 && strncmp(zmsg + nl, ": ", 2) == 0)
        zmsg += nl + 2;
      FG_FAIL(FG_ERR_FORMAT, "%s: corrupt gzip data (%s)", L->name, zmsg ? zmsg : "?");
    }
    got = (size_t)n;
    if (n == 0) L->eof = 1;
  } else if (L->zs_active) {
    FG_CHECK(lines_inflate(L, L->buf + L->end, room, &got));
    if (got == 0 && L->zs_done) L->eof = 1;
  } else {
    size_t left = L->mem_len - L->mem_pos;
    got = left < room ? left : room;
    if (got) memcpy(L->buf + L->end, L->mem + L->mem_pos, got);
    L->mem_pos += got;
    if (got == 0) L->eof = 1;
  }
  L->end += got;
cleanup:
  return st;
}

static fg_status lines_emit(fg_lines *L, size_t n, char **line, size_t *len) {
  fg_status st = FG_OK;
  char *s = L->buf + L->pos;
  s[n] = '\0';
  L->lineno++;
  if (n > 0 && s[n - 1] == '\r') s[--n] = '\0';
  FG_REQUIRE(memchr(s, '\0', n) == NULL, FG_ERR_FORMAT,
             "%s: line %lld: contains a NUL byte (binary data in a text file?)", L->name,
             (long long)L->lineno);
  *line = s;
  if (len) *len = n;
cleanup:
  return st;
}

fg_status fg_lines_next(fg_lines *L, char **line, size_t *len) {
  fg_status st = FG_OK;
  *line = NULL;
  if (len) *len = 0;
  for (;;) {
    if (L->scan < L->pos) L->scan = L->pos;
    char *nl = NULL;
    if (L->end > L->scan) nl = memchr(L->buf + L->scan, '\n', L->end - L->scan);
    if (nl) {
      size_t n = (size_t)(nl - (L->buf + L->pos));
      FG_CHECK(lines_emit(L, n, line, len));
      L->pos += n + 1;
      goto cleanup;
    }
    L->scan = L->end;
    if (L->eof) {
      if (L->end > L->pos) {
        size_t n = L->end - L->pos;
        FG_CHECK(lines_emit(L, n, line, len));
        L->pos = L->end;
      }
      goto cleanup;
    }
    if (L->pos > 0) { /* move the partial line to the front */
      size_t keep = L->end - L->pos;
      memmove(L->buf, L->buf + L->pos, keep);
      L->scan -= L->pos;
      L->end = keep;
      L->pos = 0;
    }
    if (L->end + 1 >= L->cap) {
      FG_REQUIRE(L->cap < FG_LINE_MAX, FG_ERR_FORMAT, "%s: line %lld is longer than %zu bytes",
                 L->name, (long long)L->lineno + 1, FG_LINE_MAX);
      FG_REQUIRE(!fg_io_over_limit(3.0 * (double)L->cap), FG_ERR_MEMLIMIT,
                 "%s: line %lld is longer than %zu bytes: a buffer for it would pass the memory "
                 "limit (%s)", L->name, (long long)L->lineno + 1, L->cap - 1, fg_io_limit_text());
      char *nb = realloc(L->buf, L->cap * 2);
      FG_REQUIRE(nb, FG_ERR_NOMEM, "%s: out of memory for a line of %zu bytes", L->name,
                 L->cap * 2);
      L->buf = nb;
      L->cap *= 2;
    }
    FG_CHECK(lines_fill(L));
  }
cleanup:
  return st;
}

fg_status fg_file_slurp(const char *path, unsigned char **buf, size_t *len) {
  fg_status st = FG_OK;
  FILE *f = NULL;
  unsigned char *b = NULL;
  struct stat sb;
  *buf = NULL;
  *len = 0;
  f = fopen(path, "rb");
  FG_REQUIRE(f, FG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  FG_REQUIRE(fstat(fileno(f), &sb) == 0, FG_ERR_IO, "%s: cannot stat: %s", path,
             strerror(errno));
  FG_REQUIRE(S_ISREG(sb.st_mode), FG_ERR_IO, "%s: not a regular file", path);
  FG_REQUIRE((uint64_t)sb.st_size < (uint64_t)SIZE_MAX, FG_ERR_NOMEM, "%s: too large", path);
  {
    char size[32];
    FG_REQUIRE(!fg_io_over_limit((double)sb.st_size), FG_ERR_MEMLIMIT,
               "%s: the file is %lld bytes (%s), read whole into memory, but %s", path,
               (long long)sb.st_size, fg_format_bytes((double)sb.st_size, size, sizeof size),
               fg_io_limit_text());
  }
  size_t n = (size_t)sb.st_size;
  FG_ALLOC(b, n + 1);
  size_t got = n ? fread(b, 1, n, f) : 0;
  FG_REQUIRE(got == n && !ferror(f), FG_ERR_IO, "%s: read error after %zu of %zu bytes%s%s",
             path, got, n, ferror(f) ? ": " : "", ferror(f) ? strerror(errno) : "");
  *buf = b;
  *len = n;
  b = NULL;
cleanup:
  if (f) fclose(f);
  free(b);
  return st;
}

void fg_list_append(char *out, size_t cap, int64_t i, const char *name) {
  size_t used = strlen(out);
  if (i && used + 3 < cap) used += (size_t)snprintf(out + used, cap - used, ", ");
  if (used + 1 < cap) fg_printable(name, strlen(name), out + used, cap - used);
}

void fg_remove_partial(const char *path) {
  struct stat sb;
  if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(path);
}

/* ---- numbers ---------------------------------------------------------------------------- */

static int is_blank(char c) { return c == ' ' || c == '\t'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

int fg_parse_i64(const char *p, const char **end, int64_t *v) {
  while (is_blank(*p)) p++;
  int neg = 0;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  if (!is_digit(*p)) {
    *end = p;
    return 1;
  }
  uint64_t x = 0;
  const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  int over = 0;
  while (is_digit(*p)) {
    unsigned d = (unsigned)(*p - '0');
    if (x > (lim - d) / 10) over = 1;
    else x = x * 10 + d;
    p++;
  }
  *end = p;
  if (over) return 2;
  if (neg) *v = x == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)x;
  else *v = (int64_t)x;
  return 0;
}

int fg_parse_f64(const char *p, const char **end, double *v) {
  /* Exact powers of ten: m / 10^k is correctly rounded when m < 2^53 and k <= 22 (both
   * operands exact), so it equals what strtod returns. */
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  while (is_blank(*p)) p++;
  const char *s = p;
  int neg = 0;
  if (*s == '-' || *s == '+') neg = *s++ == '-';
  uint64_t m = 0;
  int nd = 0, frac = 0, dot = 0; /* digits, those after the point, whether a point was seen */
  for (; is_digit(*s) || (*s == '.' && !dot); s++) {
    if (*s == '.') {
      dot = 1;
      continue;
    }
    if (nd < 18) m = m * 10 + (uint64_t)(*s - '0');
    nd++;
    frac += dot;
  }
  if (nd > 0 && nd <= 15 && frac <= 22 && *s != 'e' && *s != 'E' && *s != 'x' && *s != 'X') {
    double d = (double)m / pow10[frac];
    *v = neg ? -d : d;
    *end = s;
    return 0;
  }
  char *e = NULL;
  errno = 0;
  double d = strtod(p, &e);
  *end = e;
  if (e == p) return 1;
  *v = d; /* ERANGE overflow gives +-HUGE_VAL (Inf), which the caller rejects */
  return 0;
}

const char *fg_token_text(const char *p, const char *stops, char *out, size_t cap) {
  size_t n = 0;
  while (p[n] && !strchr(stops, p[n]) && n < cap) n++; /* cap bytes or more: cut anyway */
  return fg_printable(p, n, out, cap);
}
