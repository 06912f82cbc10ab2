/* io_json.c -- the strict streaming JSON reader of fg_json.h. A file is read in fixed chunks
 * (JSON written by Python's json.dump is one line, 100 MB for Yelp's class_map: a line reader
 * would hold it whole); positions are kept as line and byte column for messages. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>

#include "io/fg_io_internal.h"
#include "io/fg_json.h"

#define JSON_CHUNK 65536

fg_status fg_json_open(fg_json *J, const char *path) {
  fg_status st = FG_OK;
  memset(J, 0, sizeof *J);
  J->name = path;
  J->line = J->col = 1;
  J->f = fopen(path, "rb");
  FG_REQUIRE(J->f, FG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  FG_ALLOC(J->chunk, JSON_CHUNK);
  J->p = J->end = J->chunk;
cleanup:
  if (st != FG_OK) fg_json_close(J);
  return st;
}

fg_status fg_json_open_mem(fg_json *J, const void *buf, size_t len, const char *name) {
  memset(J, 0, sizeof *J);
  J->name = name;
  J->line = J->col = 1;
  J->p = buf;
  J->end = J->p + len;
  J->eof = 1;
  return FG_OK;
}

void fg_json_close(fg_json *J) {
  if (!J) return;
  if (J->f) fclose(J->f);
  free(J->chunk);
  memset(J, 0, sizeof *J);
}

/* The next byte, not consumed (-1 at the end). */
static fg_status refill(fg_json *J, int *c);
static inline fg_status peek_byte(fg_json *J, int *c) {
  if (J->p < J->end) { /* the common case, inline */
    *c = *J->p;
    return FG_OK;
  }
  return refill(J, c);
}

static fg_status refill(fg_json *J, int *c) {
  fg_status st = FG_OK;
  if (J->p == J->end && !J->eof) {
    size_t n = fread(J->chunk, 1, JSON_CHUNK, J->f);
    FG_REQUIRE(!ferror(J->f), FG_ERR_IO, "%s:%lld:%lld: read error: %s", J->name,
               (long long)J->line, (long long)J->col, strerror(errno));
    if (n == 0) J->eof = 1;
    J->p = J->chunk;
    J->end = J->chunk + n;
  }
  *c = J->p < J->end ? *J->p : -1;
cleanup:
  return st;
}

static inline void advance(fg_json *J) {
  if (*J->p == '\n') {
    J->line++;
    J->col = 1;
  } else {
    J->col++;
  }
  J->p++;
}

/* How a message shows byte c (-1: the end). */
static const char *show_byte(int c, char *out, size_t cap) {
  if (c < 0) snprintf(out, cap, "the end of the file");
  else if (c >= 0x20 && c < 0x7f && c != '\'') snprintf(out, cap, "'%c'", c);
  else snprintf(out, cap, "byte 0x%02x", (unsigned)c);
  return out;
}

static fg_status skip_ws(fg_json *J, int *c) {
  fg_status st = FG_OK;
  for (;;) {
    FG_CHECK(peek_byte(J, c));
    if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r') break;
    advance(J);
  }
cleanup:
  return st;
}

fg_status fg_json_peek(fg_json *J, int *c) {
  return skip_ws(J, c);
}

const char *fg_json_where(fg_json *J, char *out, size_t cap) {
  int c;
  if (skip_ws(J, &c) != FG_OK) fg_error_clear();
  snprintf(out, cap, "%s:%lld:%lld", J->name, (long long)J->line, (long long)J->col);
  return out;
}

fg_status fg_json_mark(fg_json *J, fg_json_pos *at) {
  int c;
  fg_status st = skip_ws(J, &c);
  at->line = J->line;
  at->col = J->col;
  return st;
}

#define JFAIL(code, ...) FG_FAIL(code, "%s:%lld:%lld: " __VA_ARGS__)
#define JPOS J->name, (long long)J->line, (long long)J->col

fg_status fg_json_begin(fg_json *J, int open, const char *what) {
  fg_status st = FG_OK;
  int c;
  char b[24];
  FG_CHECK(skip_ws(J, &c));
  if (c != open)
    JFAIL(FG_ERR_FORMAT, "expected %s ('%c'), found %s", JPOS, what, open,
          show_byte(c, b, sizeof b));
  if (J->depth >= FG_JSON_MAX_DEPTH)
    JFAIL(FG_ERR_FORMAT, "containers nested more than %d deep", JPOS, FG_JSON_MAX_DEPTH);
  advance(J);
  J->depth++;
cleanup:
  return st;
}

fg_status fg_json_next(fg_json *J, int open, int64_t *count, int *more) {
  fg_status st = FG_OK;
  int c;
  char b[24];
  const int close = open == '{' ? '}' : ']';
  const char *elem = open == '{' ? "a member" : "an element";
  *more = 0;
  FG_CHECK(skip_ws(J, &c));
  if (c == close) {
    advance(J);
    J->depth--;
    goto cleanup;
  }
  if (*count > 0) {
    if (c != ',')
      JFAIL(FG_ERR_FORMAT, "expected ',' or '%c' after %s, found %s", JPOS, close, elem,
            show_byte(c, b, sizeof b));
    advance(J);
    FG_CHECK(skip_ws(J, &c));
    if (c == close) JFAIL(FG_ERR_FORMAT, "'%c' after a comma (trailing commas are not JSON)",
                          JPOS, close);
  }
  (*count)++;
  *more = 1;
cleanup:
  return st;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Four hex digits after "\u" (the "\u" consumed). */
static fg_status read_hex4(fg_json *J, unsigned *v) {
  fg_status st = FG_OK;
  int c;
  char b[24];
  *v = 0;
  for (int k = 0; k < 4; k++) {
    FG_CHECK(peek_byte(J, &c));
    int h = c < 0 ? -1 : hexval(c);
    if (h < 0) JFAIL(FG_ERR_FORMAT, "expected a hex digit in a \\u escape, found %s", JPOS,
                     show_byte(c, b, sizeof b));
    *v = *v << 4 | (unsigned)h;
    advance(J);
  }
cleanup:
  return st;
}

/* Append the n bytes of s to out[cap] at *len, failing (string too long for what) past cap - 1;
 * out == NULL drops them. */
static fg_status put(fg_json *J, char *out, size_t cap, size_t *len, const char *s, size_t n,
                     const char *what, int64_t line, int64_t col) {
  fg_status st = FG_OK;
  if (!out) goto cleanup;
  FG_REQUIRE(*len + n < cap, FG_ERR_FORMAT, "%s:%lld:%lld: %s is too long (more than %zu bytes)",
             J->name, (long long)line, (long long)col, what, cap - 1);
  memcpy(out + *len, s, n);
  *len += n;
cleanup:
  return st;
}

static size_t utf8_encode(unsigned cp, char *o) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | cp >> 12);
    o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | cp >> 18);
  o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
  o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

fg_status fg_json_string(fg_json *J, char *out, size_t cap, size_t *len_out, const char *what) {
  fg_status st = FG_OK;
  int c;
  char b[24], enc[4];
  size_t len = 0;
  FG_CHECK(skip_ws(J, &c));
  if (c != '"') JFAIL(FG_ERR_FORMAT, "expected %s (a string), found %s", JPOS, what,
                      show_byte(c, b, sizeof b));
  const int64_t line0 = J->line, col0 = J->col;
  advance(J);
  for (;;) {
    const int64_t line = J->line, col = J->col;
    FG_CHECK(peek_byte(J, &c));
    if (c < 0) JFAIL(FG_ERR_FORMAT, "unterminated string (it starts at %lld:%lld)", JPOS,
                     (long long)line0, (long long)col0);
    if (c == '"') {
      advance(J);
      break;
    }
    if (c < 0x20) JFAIL(FG_ERR_FORMAT, "control byte 0x%02x in a string (it must be escaped)",
                        JPOS, (unsigned)c);
    if (c == '\\') {
      advance(J);
      FG_CHECK(peek_byte(J, &c));
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      const char *k = c > 0 ? strchr(from, c) : NULL;
      if (k) {
        advance(J);
        FG_CHECK(put(J, out, cap, &len, &to[k - from], 1, what, line0, col0));
        continue;
      }
      if (c != 'u') JFAIL(FG_ERR_FORMAT, "invalid escape '\\' followed by %s", JPOS,
                          show_byte(c, b, sizeof b));
      advance(J);
      unsigned cp, lo;
      FG_CHECK(read_hex4(J, &cp));
      if (cp >= 0xdc00 && cp <= 0xdfff)
        FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: \\u%04x is a lone low surrogate", J->name,
                (long long)line, (long long)col, cp);
      if (cp >= 0xd800 && cp <= 0xdbff) {
        FG_CHECK(peek_byte(J, &c));
        if (c != '\\') FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: \\u%04x (a high surrogate) is not "
                               "followed by a low one", J->name, (long long)line,
                               (long long)col, cp);
        advance(J);
        FG_CHECK(peek_byte(J, &c));
        if (c != 'u') FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: \\u%04x (a high surrogate) is not "
                              "followed by a low one", J->name, (long long)line,
                              (long long)col, cp);
        advance(J);
        FG_CHECK(read_hex4(J, &lo));
        if (lo < 0xdc00 || lo > 0xdfff)
          FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: \\u%04x (a high surrogate) is followed by "
                  "\\u%04x, not a low surrogate", J->name, (long long)line, (long long)col, cp,
                  lo);
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      }
      if (cp == 0 && out)
        FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: \\u0000 in %s", J->name, (long long)line,
                (long long)col, what);
      FG_CHECK(put(J, out, cap, &len, enc, utf8_encode(cp, enc), what, line0, col0));
      continue;
    }
    /* raw bytes: ASCII, or one well-formed UTF-8 sequence (no overlong forms, surrogates or
     * code points past U+10FFFF) */
    int more = 0;
    unsigned cp = (unsigned)c, min = 0;
    if (c < 0x80) more = 0;
    else if (c >= 0xc2 && c < 0xe0) more = 1, cp &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c < 0xf0) more = 2, cp &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c < 0xf5) more = 3, cp &= 0x07, min = 0x10000;
    else JFAIL(FG_ERR_FORMAT, "byte 0x%02x in a string is not UTF-8", JPOS, (unsigned)c);
    enc[0] = (char)c;
    advance(J);
    for (int k = 1; k <= more; k++) {
      FG_CHECK(peek_byte(J, &c));
      if (c < 0 || (c & 0xc0) != 0x80)
        FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: invalid UTF-8 sequence in a string", J->name,
                (long long)line, (long long)col);
      cp = cp << 6 | ((unsigned)c & 0x3f);
      enc[k] = (char)c;
      advance(J);
    }
    if (more && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
      FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: invalid UTF-8 sequence in a string", J->name,
              (long long)line, (long long)col);
    FG_CHECK(put(J, out, cap, &len, enc, (size_t)more + 1, what, line0, col0));
  }
  if (out) out[len] = '\0';
  if (len_out) *len_out = len;
cleanup:
  return st;
}

fg_status fg_json_key(fg_json *J, char *out, size_t cap, const char *what) {
  fg_status st = FG_OK;
  int c;
  char b[24];
  FG_CHECK(fg_json_string(J, out, cap, NULL, what));
  FG_CHECK(skip_ws(J, &c));
  if (c != ':') JFAIL(FG_ERR_FORMAT, "expected ':' after a key, found %s", JPOS,
                      show_byte(c, b, sizeof b));
  advance(J);
cleanup:
  return st;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* Take byte c into the number's text. */
static fg_status num_take(fg_json *J, fg_json_num *n, size_t *k, int c) {
  fg_status st = FG_OK;
  if (*k >= FG_JSON_MAX_NUMBER)
    JFAIL(FG_ERR_FORMAT, "number longer than %d characters", JPOS, FG_JSON_MAX_NUMBER);
  n->text[(*k)++] = (char)c;
  advance(J);
cleanup:
  return st;
}

/* Digits (at least one): *c is the byte after them. */
static fg_status num_digits(fg_json *J, fg_json_num *n, size_t *k, int *c, const char *after) {
  fg_status st = FG_OK;
  char b[24];
  FG_CHECK(peek_byte(J, c));
  if (!is_digit(*c)) JFAIL(FG_ERR_FORMAT, "expected a digit after %s, found %s", JPOS, after,
                           show_byte(*c, b, sizeof b));
  while (is_digit(*c)) {
    FG_CHECK(num_take(J, n, k, *c));
    FG_CHECK(peek_byte(J, c));
  }
cleanup:
  return st;
}

fg_status fg_json_number(fg_json *J, fg_json_num *n, const char *what) {
  fg_status st = FG_OK;
  int c;
  size_t k = 0;
  char b[24];
  n->is_int = 0;
  n->i = 0;
  n->d = 0.0;
  FG_CHECK(skip_ws(J, &c));
  if (c != '-' && !is_digit(c)) {
    if (c == '"' || c == '{' || c == '[' || c == 't' || c == 'f' || c == 'n')
      JFAIL(FG_ERR_FORMAT, "expected %s (a number), found %s", JPOS, what,
            c == '"' ? "a string" : c == '{' ? "an object" : c == '[' ? "a list" : "a literal");
    JFAIL(FG_ERR_FORMAT, "expected %s (a number), found %s", JPOS, what, show_byte(c, b, sizeof b));
  }
  if (c == '-') {
    FG_CHECK(num_take(J, n, &k, c));
    FG_CHECK(peek_byte(J, &c));
  }
  if (c == '0') {
    FG_CHECK(num_take(J, n, &k, c));
    FG_CHECK(peek_byte(J, &c));
    if (is_digit(c)) JFAIL(FG_ERR_FORMAT, "leading zero in a number", JPOS);
  } else {
    FG_CHECK(num_digits(J, n, &k, &c, "'-'"));
  }
  int integral = 1;
  if (c == '.') {
    integral = 0;
    FG_CHECK(num_take(J, n, &k, c));
    FG_CHECK(num_digits(J, n, &k, &c, "a decimal point"));
  }
  if (c == 'e' || c == 'E') {
    integral = 0;
    FG_CHECK(num_take(J, n, &k, c));
    FG_CHECK(peek_byte(J, &c));
    if (c == '+' || c == '-') FG_CHECK(num_take(J, n, &k, c));
    FG_CHECK(num_digits(J, n, &k, &c, "an exponent"));
  }
  n->text[k] = '\0';
  const char *e = NULL;
  if (integral && k <= 18) { /* at most 18 digits: exact in int64, no overflow */
    int64_t v = 0;
    const char *q = n->text + (n->text[0] == '-');
    for (; *q; q++) v = v * 10 + (*q - '0');
    n->i = n->text[0] == '-' ? -v : v;
    n->is_int = 1;
    n->d = (double)n->i;
    goto cleanup;
  }
  if (fg_parse_f64(n->text, &e, &n->d) != 0 || *e != '\0')
    JFAIL(FG_ERR_INTERNAL, "number '%s' not parsed", JPOS, n->text);
  if (integral) {
    int64_t v = 0;
    n->is_int = fg_parse_i64(n->text, &e, &v) == 0 && *e == '\0';
    n->i = v;
  }
cleanup:
  return st;
}

static fg_status literal(fg_json *J, const char *word) {
  fg_status st = FG_OK;
  int c;
  const int64_t line = J->line, col = J->col;
  for (const char *w = word; *w; w++) {
    FG_CHECK(peek_byte(J, &c));
    if (c != *w)
      FG_FAIL(FG_ERR_FORMAT, "%s:%lld:%lld: expected a value, found a word that is not '%s'",
              J->name, (long long)line, (long long)col, word);
    advance(J);
  }
cleanup:
  return st;
}

fg_status fg_json_skip(fg_json *J) {
  fg_status st = FG_OK;
  int c, more;
  char b[24];
  int64_t count = 0;
  FG_CHECK(skip_ws(J, &c));
  switch (c) {
    case '{':
      FG_CHECK(fg_json_begin(J, '{', "an object"));
      for (;;) {
        FG_CHECK(fg_json_next(J, '{', &count, &more));
        if (!more) break;
        FG_CHECK(fg_json_key(J, NULL, 0, "a key"));
        FG_CHECK(fg_json_skip(J));
      }
      break;
    case '[':
      FG_CHECK(fg_json_begin(J, '[', "a list"));
      for (;;) {
        FG_CHECK(fg_json_next(J, '[', &count, &more));
        if (!more) break;
        FG_CHECK(fg_json_skip(J));
      }
      break;
    case '"': FG_CHECK(fg_json_string(J, NULL, 0, NULL, "a string")); break;
    case 't': FG_CHECK(literal(J, "true")); break;
    case 'f': FG_CHECK(literal(J, "false")); break;
    case 'n': FG_CHECK(literal(J, "null")); break;
    default:
      if (c == '-' || is_digit(c)) {
        fg_json_num n;
        FG_CHECK(fg_json_number(J, &n, "a value"));
      } else {
        JFAIL(FG_ERR_FORMAT, "expected a value, found %s", JPOS, show_byte(c, b, sizeof b));
      }
  }
cleanup:
  return st;
}

fg_status fg_json_end(fg_json *J) {
  fg_status st = FG_OK;
  int c;
  char b[24];
  FG_CHECK(skip_ws(J, &c));
  if (c >= 0) JFAIL(FG_ERR_FORMAT, "%s after the end of the document", JPOS,
                    show_byte(c, b, sizeof b));
cleanup:
  return st;
}
