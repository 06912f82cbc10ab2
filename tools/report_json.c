/* report_json.c -- a strict JSON parser (RFC 8259) for one metrics line of `fullgraph report`.
 *
 * Recursive descent over a byte range, depth-limited (RJ_MAX_DEPTH), building a tree of
 * rj_value. Strict on purpose: a metrics file is written by a program, so anything that is not
 * JSON is a damaged file, and the report says where (the byte offset, which the caller turns
 * into line:column) instead of guessing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Objects hold a few dozen keys; duplicates are found by a linear scan, so the count is bounded
 * to keep a hostile line from costing quadratic time. */
enum { RJ_MAX_KEYS = 4096 };

typedef struct parser {
  const char *s;
  size_t n, i;
  int depth;
  rj_error *err;
} parser;

static int fail(parser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(parser *p, size_t at, const char *fmt, ...) {
  va_list ap;
  p->err->offset = at;
  va_start(ap, fmt);
  vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

/* What the byte at i is, for a message: "'x'", "byte 0x01", "the end of the line". */
static const char *what_at(const parser *p, size_t i, char *buf, size_t cap) {
  if (i >= p->n) return "the end of the line";
  const unsigned char c = (unsigned char)p->s[i];
  if (c >= 0x21 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
  else snprintf(buf, cap, "byte 0x%02x", c);
  return buf;
}

static void skip_ws(parser *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                         p->s[p->i] == '\r'))
    p->i++;
}

void rj_free(rj_value *v) {
  if (!v) return;
  if (v->kind == RJ_STRING) free(v->string);
  if (v->kind == RJ_ARRAY || v->kind == RJ_OBJECT) {
    for (size_t k = 0; k < v->len; k++) {
      rj_free(&v->items[k]);
      if (v->keys) free(v->keys[k]);
    }
    free(v->items);
    free(v->keys);
  }
  memset(v, 0, sizeof *v);
}

/* Append c (a code point, already checked) to buf as UTF-8. */
static void put_utf8(char *buf, size_t *len, unsigned c) {
  if (c < 0x80) {
    buf[(*len)++] = (char)c;
  } else if (c < 0x800) {
    buf[(*len)++] = (char)(0xc0 | (c >> 6));
    buf[(*len)++] = (char)(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    buf[(*len)++] = (char)(0xe0 | (c >> 12));
    buf[(*len)++] = (char)(0x80 | ((c >> 6) & 0x3f));
    buf[(*len)++] = (char)(0x80 | (c & 0x3f));
  } else {
    buf[(*len)++] = (char)(0xf0 | (c >> 18));
    buf[(*len)++] = (char)(0x80 | ((c >> 12) & 0x3f));
    buf[(*len)++] = (char)(0x80 | ((c >> 6) & 0x3f));
    buf[(*len)++] = (char)(0x80 | (c & 0x3f));
  }
}

size_t rj_utf8_len(const unsigned char *s, size_t n, unsigned *cp) {
  unsigned c;
  size_t k;
  if (s[0] >= 0xc2 && s[0] <= 0xdf) k = 2, c = s[0] & 0x1fu;
  else if (s[0] >= 0xe0 && s[0] <= 0xef) k = 3, c = s[0] & 0x0fu;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4) k = 4, c = s[0] & 0x07u;
  else return 0;
  if (n < k) return 0;
  for (size_t j = 1; j < k; j++) {
    if ((s[j] & 0xc0) != 0x80) return 0;
    c = (c << 6) | (s[j] & 0x3fu);
  }
  /* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
  if ((k == 3 && c < 0x800) || (k == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
      c > 0x10ffff)
    return 0;
  if (cp) *cp = c;
  return k;
}

static int hex4(parser *p, size_t at, unsigned *out) {
  unsigned v = 0;
  if (at + 4 > p->n) return fail(p, at, "a \\u escape needs four hex digits");
  for (int k = 0; k < 4; k++) {
    const char c = p->s[at + (size_t)k];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return fail(p, at, "a \\u escape needs four hex digits");
  }
  *out = v;
  return 0;
}

/* A string at p->i (the opening quote) into a malloc'ed UTF-8 buffer. Escapes never grow the
 * text (a 6-byte \uXXXX gives at most 3 bytes, a 12-byte pair 4), so the raw length bounds it. */
static int parse_string(parser *p, char **out, size_t *out_len) {
  const size_t start = p->i;
  size_t end = start + 1, len = 0;
  char *buf;
  char what[16];
  /* find the closing quote first, to size the buffer */
  while (end < p->n && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
  if (end >= p->n) return fail(p, start, "a string that does not end on its line");
  buf = malloc(end - start);
  if (!buf) return fail(p, start, "out of memory for a string of %zu bytes", end - start);
  p->i++;
  while (p->i < end) {
    const unsigned char c = (unsigned char)p->s[p->i];
    if (c < 0x20) {
      free(buf);
      return fail(p, p->i, "a raw control character (%s) in a string; JSON writes it as \\u00%02x",
                  what_at(p, p->i, what, sizeof what), c);
    }
    if (c >= 0x80) {
      const size_t k = rj_utf8_len((const unsigned char *)p->s + p->i, end - p->i, NULL);
      if (k == 0) {
        free(buf);
        return fail(p, p->i, "bytes that are not valid UTF-8 in a string");
      }
      memcpy(buf + len, p->s + p->i, k);
      len += k;
      p->i += k;
      continue;
    }
    if (c != '\\') {
      buf[len++] = (char)c;
      p->i++;
      continue;
    }
    const size_t esc = p->i;
    const char e = p->s[p->i + 1]; /* p->i + 1 < end: the scan above skipped it */
    const char *simple = strchr("\"\\/bfnrt", e);
    p->i += 2;
    if (e != '\0' && simple) {
      buf[len++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
      continue;
    }
    if (e != 'u') {
      const unsigned char u = (unsigned char)e;
      if (u >= 0x21 && u < 0x7f) fail(p, esc, "an unknown escape \\%c in a string", u);
      else fail(p, esc, "a backslash before %s in a string", what_at(p, esc + 1, what, sizeof what));
      free(buf);
      return -1;
    }
    unsigned cp, lo = 0;
    if (hex4(p, p->i, &cp) != 0) {
      free(buf);
      return -1;
    }
    p->i += 4;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      fail(p, esc, "a \\u%04x low surrogate without a high one before it", cp);
      free(buf);
      return -1;
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (p->i + 6 > end || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' ||
          hex4(p, p->i + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff) {
        fail(p, esc, "a \\u%04x high surrogate without a low one after it", cp);
        free(buf);
        return -1;
      }
      p->i += 6;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    put_utf8(buf, &len, cp);
  }
  buf[len] = '\0';
  p->i = end + 1;
  *out = buf;
  *out_len = len;
  return 0;
}

/* A number: the RFC's grammar checked here (strtod alone would take "0x1p3", "inf", " 1",
 * "01"), then converted by strtod on a copy. */
static int parse_number(parser *p, double *out) {
  const size_t start = p->i;
  size_t i = p->i;
  char tmp[400], *end;
  char what[16];
  if (i < p->n && p->s[i] == '-') i++;
  if (i < p->n && p->s[i] == '0') {
    i++;
  } else if (i < p->n && p->s[i] >= '1' && p->s[i] <= '9') {
    while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
  } else {
    return fail(p, i, "expected a digit, found %s", what_at(p, i, what, sizeof what));
  }
  if (i < p->n && p->s[i] == '.') {
    i++;
    if (i >= p->n || p->s[i] < '0' || p->s[i] > '9')
      return fail(p, i, "expected a digit after the decimal point, found %s",
                  what_at(p, i, what, sizeof what));
    while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
  }
  if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
    i++;
    if (i < p->n && (p->s[i] == '+' || p->s[i] == '-')) i++;
    if (i >= p->n || p->s[i] < '0' || p->s[i] > '9')
      return fail(p, i, "expected a digit in the exponent, found %s",
                  what_at(p, i, what, sizeof what));
    while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
  }
  if (i - start >= sizeof tmp) return fail(p, start, "a number of more than %zu characters",
                                           sizeof tmp - 1);
  memcpy(tmp, p->s + start, i - start);
  tmp[i - start] = '\0';
  errno = 0;
  *out = strtod(tmp, &end);
  /* underflow to zero or a denormal is a fine value; overflow to infinity is not */
  if (errno == ERANGE && (*out > 1.0 || *out < -1.0))
    return fail(p, start, "a number out of the range of a double (%s)", tmp);
  p->i = i;
  return 0;
}

static int parse_value(parser *p, rj_value *v);

/* Grow a container's arrays to hold one more element. */
static int grow(parser *p, rj_value *v, size_t *cap, int keys) {
  if (v->len < *cap) return 0;
  const size_t nc = *cap ? *cap * 2 : 8;
  rj_value *items = realloc(v->items, nc * sizeof *items);
  if (!items) return fail(p, p->i, "out of memory");
  v->items = items;
  if (keys) {
    char **k = realloc(v->keys, nc * sizeof *k);
    if (!k) return fail(p, p->i, "out of memory");
    v->keys = k;
  }
  *cap = nc;
  return 0;
}

static int parse_container(parser *p, rj_value *v, int object) {
  const char close = object ? '}' : ']';
  size_t cap = 0;
  char what[16];
  v->kind = object ? RJ_OBJECT : RJ_ARRAY;
  if (++p->depth > RJ_MAX_DEPTH)
    return fail(p, p->i, "nested deeper than %d arrays and objects", RJ_MAX_DEPTH);
  p->i++;
  skip_ws(p);
  if (p->i < p->n && p->s[p->i] == close) {
    p->i++;
    p->depth--;
    return 0;
  }
  for (;;) {
    char *key = NULL;
    size_t klen = 0;
    skip_ws(p);
    if (object) {
      const size_t at = p->i;
      if (p->i >= p->n || p->s[p->i] != '"')
        return fail(p, p->i, "expected a key (a string) in an object, found %s",
                    what_at(p, p->i, what, sizeof what));
      if (parse_string(p, &key, &klen) != 0) return -1;
      if (strlen(key) != klen) {
        free(key);
        return fail(p, at, "a key holding \\u0000");
      }
      for (size_t k = 0; k < v->len; k++)
        if (strcmp(v->keys[k], key) == 0) {
          fail(p, at, "the key \"%.60s\" appears twice in one object", key);
          free(key);
          return -1;
        }
      if (v->len >= RJ_MAX_KEYS) {
        free(key);
        return fail(p, at, "an object of more than %d keys", RJ_MAX_KEYS);
      }
      skip_ws(p);
      if (p->i >= p->n || p->s[p->i] != ':') {
        free(key);
        return fail(p, p->i, "expected ':' after a key, found %s",
                    what_at(p, p->i, what, sizeof what));
      }
      p->i++;
    }
    if (grow(p, v, &cap, object) != 0) {
      free(key);
      return -1;
    }
    memset(&v->items[v->len], 0, sizeof v->items[0]);
    if (object) v->keys[v->len] = key;
    v->len++; /* counted before it is parsed, so rj_free reclaims a half-built element */
    if (parse_value(p, &v->items[v->len - 1]) != 0) return -1;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == ',') {
      p->i++;
      skip_ws(p);
      if (p->i < p->n && p->s[p->i] == close)
        return fail(p, p->i, "a trailing comma before '%c'", close);
      continue;
    }
    if (p->i < p->n && p->s[p->i] == close) {
      p->i++;
      p->depth--;
      return 0;
    }
    return fail(p, p->i, "expected ',' or '%c' in %s, found %s", close,
                object ? "an object" : "an array", what_at(p, p->i, what, sizeof what));
  }
}

static int literal(parser *p, const char *word) {
  const size_t k = strlen(word);
  if (p->n - p->i < k || memcmp(p->s + p->i, word, k) != 0) return 0;
  p->i += k;
  return 1;
}

static int parse_value(parser *p, rj_value *v) {
  char what[16];
  memset(v, 0, sizeof *v);
  skip_ws(p);
  if (p->i >= p->n) return fail(p, p->i, "expected a value, found the end of the line");
  switch (p->s[p->i]) {
    case '{': return parse_container(p, v, 1);
    case '[': return parse_container(p, v, 0);
    case '"':
      v->kind = RJ_STRING;
      return parse_string(p, &v->string, &v->len);
    case 't':
      if (!literal(p, "true")) break;
      v->kind = RJ_BOOL;
      v->boolean = 1;
      return 0;
    case 'f':
      if (!literal(p, "false")) break;
      v->kind = RJ_BOOL;
      return 0;
    case 'n':
      if (!literal(p, "null")) break;
      v->kind = RJ_NULL;
      return 0;
    default:
      if (p->s[p->i] == '-' || (p->s[p->i] >= '0' && p->s[p->i] <= '9')) {
        v->kind = RJ_NUMBER;
        return parse_number(p, &v->number);
      }
      break;
  }
  return fail(p, p->i, "expected a value, found %s", what_at(p, p->i, what, sizeof what));
}

int rj_parse(const char *text, size_t len, rj_value *out, rj_error *err) {
  parser p = {text, len, 0, 0, err};
  char what[16];
  memset(out, 0, sizeof *out);
  if (parse_value(&p, out) != 0) {
    rj_free(out);
    return -1;
  }
  skip_ws(&p);
  if (p.i < p.n) {
    fail(&p, p.i, "text after the value: %s", what_at(&p, p.i, what, sizeof what));
    rj_free(out);
    return -1;
  }
  return 0;
}

const rj_value *rj_get(const rj_value *v, const char *key) {
  if (!v || v->kind != RJ_OBJECT) return NULL;
  for (size_t k = 0; k < v->len; k++)
    if (strcmp(v->keys[k], key) == 0) return &v->items[k];
  return NULL;
}

int rj_get_number(const rj_value *v, const char *key, double *x) {
  const rj_value *m = rj_get(v, key);
  if (!m || m->kind == RJ_NULL) return 0;
  if (m->kind != RJ_NUMBER) return -1;
  *x = m->number;
  return 1;
}
