/* test_core_text.c -- fg_printable: file text made safe for messages (kept, escaped, cut), the
 * readers' token quoting that goes through it, and each reader refusing a file with escape
 * sequences in the text it quotes without echoing them. */
#include <string.h>
#include <zlib.h>

#include "core/fg_core.h"
#include "io/fg_io_internal.h"
#include "testutil.h"

/* fg_printable of s[0, n) into a buffer of cap bytes equals want (and the bytes after the NUL
 * are untouched). */
static void expect_printable(const char *s, size_t n, size_t cap, const char *want) {
  char out[256];
  memset(out, 'Z', sizeof out);
  const char *got = fg_printable(s, n, out, cap);
  EXPECT(got == out);
  EXPECT_MSG(strcmp(out, want) == 0, "cap %zu: got '%s', want '%s'", cap, out, want);
  EXPECT_MSG(strlen(out) < cap, "cap %zu: %zu bytes written", cap, strlen(out));
  if (cap < sizeof out) EXPECT(out[cap] == 'Z');
}

/* No byte below 0x20, no DEL, and no byte at all outside printable ASCII except the ellipsis. */
static int clean(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == 0xe2 && p[1] == 0x80 && p[2] == 0xa6 && p[3] == '\0') return 1;
    if (*p < 0x20 || *p > 0x7e) return 0;
  }
  return 1;
}

/* A message holds no byte below 0x20 and no DEL (UTF-8 such as the ellipsis may occur). */
static int clean_message(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return 0;
  return 1;
}

static void test_escapes(void) {
  expect_printable("gemm_flops", 10, 64, "gemm_flops");
  expect_printable("", 0, 64, "");
  expect_printable("a b~", 4, 64, "a b~");
  /* ESC [2J (clear the screen), ESC ] 0; title BEL (set the window title), CSI as one byte */
  expect_printable("\033[2J", 4, 64, "\\x1b[2J");
  expect_printable("\033]0;t\007", 6, 64, "\\x1b]0;t\\x07");
  expect_printable("\x9b" "31m", 4, 64, "\\x9b31m");
  expect_printable("a\tb\r\n", 5, 64, "a\\x09b\\x0d\\x0a");
  expect_printable("\x7f\xff", 2, 64, "\\x7f\\xff");
  /* a NUL inside the length is shown, not an end */
  expect_printable("a\0b", 3, 64, "a\\x00b");
  /* n, not the NUL, ends the text */
  expect_printable("abcdef", 3, 64, "abc");
  /* a backslash is doubled, so "\x1b" in a file reads differently from the byte */
  expect_printable("\\x1b", 4, 64, "\\\\x1b");
  /* UTF-8 is shown as its bytes: a message never carries a C1 control as U+0080..U+009F */
  expect_printable("caf\xc3\xa9", 5, 64, "caf\\xc3\\xa9");
  expect_printable("\xc2\x9b", 2, 64, "\\xc2\\x9b");
}

static void test_cuts(void) {
  /* exactly fits: no ellipsis */
  expect_printable("abcde", 5, 6, "abcde");
  /* one byte too long: cut to leave room for the 3-byte ellipsis */
  expect_printable("abcdef", 6, 6, "ab\xe2\x80\xa6");
  expect_printable("abcdefghij", 10, 8, "abcd\xe2\x80\xa6");
  /* an escape is never cut in half */
  expect_printable("ab\033cdef", 7, 9, "ab\xe2\x80\xa6");
  expect_printable("ab\033cdef", 7, 10, "ab\\x1b\xe2\x80\xa6");
  expect_printable("\\\\\\", 3, 6, "\\\\\xe2\x80\xa6");
  /* room for the ellipsis alone; too small for it: a plain cut; cap 1 holds only the NUL */
  expect_printable("abcdef", 6, 4, "\xe2\x80\xa6");
  expect_printable("abcdef", 6, 3, "ab");
  expect_printable("\033abc", 4, 4, "\xe2\x80\xa6");
  expect_printable("\033abc", 4, 3, "");
  expect_printable("abcdef", 6, 1, "");
  /* cap 0 writes nothing */
  char one = 'Z';
  EXPECT(fg_printable("abc", 3, &one, 0) == &one && one == 'Z');
  /* a long line of escapes stays within cap and clean */
  char line[600], out[80];
  for (size_t i = 0; i < sizeof line; i++) line[i] = (char)(i % 256);
  fg_printable(line, sizeof line, out, sizeof out);
  EXPECT(strlen(out) < sizeof out && clean(out));
  EXPECT(strcmp(out + strlen(out) - 3, "\xe2\x80\xa6") == 0);
  for (size_t cap = 1; cap < sizeof out; cap++) {
    fg_printable(line, sizeof line, out, cap);
    EXPECT_MSG(strlen(out) < cap && clean(out), "cap %zu", cap);
  }
}

/* The readers' token quoting (io/): up to a stop byte, through fg_printable. */
static void test_tokens(void) {
  char out[48], list[32] = "";
  EXPECT(strcmp(fg_token_text("12x 34", " ", out, sizeof out), "12x") == 0);
  EXPECT(strcmp(fg_token_text("\033[2J,7", ",", out, sizeof out), "\\x1b[2J") == 0);
  char longtok[100];
  memset(longtok, 'a', sizeof longtok - 1);
  longtok[sizeof longtok - 1] = '\0';
  fg_token_text(longtok, " ", out, sizeof out);
  EXPECT(strlen(out) == sizeof out - 1 && strcmp(out + strlen(out) - 3, "\xe2\x80\xa6") == 0);
  fg_list_append(list, sizeof list, 0, "edges.npy");
  fg_list_append(list, sizeof list, 1, "\033[2J.npy");
  EXPECT_MSG(strcmp(list, "edges.npy, \\x1b[2J.npy") == 0, "'%s'", list);
  fg_list_append(list, sizeof list, 2, "more_than_fits.npy");
  EXPECT_MSG(strlen(list) < sizeof list && clean(list), "'%s'", list);
}

/* The message of the last failure is free of control bytes and holds want. */
static void expect_clean_message(fg_status st, const char *want) {
  EXPECT_MSG(st != FG_OK, "accepted; expected '%s'", want);
  EXPECT_MSG(clean_message(fg_last_error()), "'%s'", fg_last_error());
  EXPECT(fg_test_error_contains(want));
}

static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  put16(p, v & 0xffff);
  put16(p + 2, v >> 16);
}

/* A zip archive in out (returns its size) with one stored member called name holding data. */
static size_t zip_one(unsigned char *out, const char *name, const unsigned char *data,
                      size_t len) {
  const size_t nlen = strlen(name);
  const uint32_t crc = (uint32_t)crc32(0, data, (uInt)len);
  size_t p = 0;
  memset(out, 0, 30);
  put32(out, 0x04034b50u); /* local header */
  put16(out + 4, 20);
  put32(out + 14, crc);
  put32(out + 18, (uint32_t)len);
  put32(out + 22, (uint32_t)len);
  put16(out + 26, (unsigned)nlen);
  memcpy(out + 30, name, nlen);
  memcpy(out + 30 + nlen, data, len);
  p = 30 + nlen + len;
  const size_t cd = p;
  memset(out + p, 0, 46);
  put32(out + p, 0x02014b50u); /* central directory entry */
  put16(out + p + 4, 20);
  put16(out + p + 6, 20);
  put32(out + p + 16, crc);
  put32(out + p + 20, (uint32_t)len);
  put32(out + p + 24, (uint32_t)len);
  put16(out + p + 28, (unsigned)nlen);
  memcpy(out + p + 46, name, nlen);
  p += 46 + nlen;
  memset(out + p, 0, 22);
  put32(out + p, 0x06054b50u); /* end of central directory */
  put16(out + p + 8, 1);
  put16(out + p + 10, 1);
  put32(out + p + 12, (uint32_t)(p - cd));
  put32(out + p + 16, (uint32_t)cd);
  return p + 22;
}

/* A .npy (version 1.0) with the given header dict and no data. */
static size_t npy_with(unsigned char *out, const char *dict) {
  size_t h = strlen(dict);
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  put16(out + 8, (unsigned)h);
  memcpy(out + 10, dict, h);
  return 10 + h;
}

static void test_readers(void) {
  unsigned char buf[1024], npy[256];
  fg_raw r;
  /* text readers: a bad token with escapes */
  const char snap[] = "0 1\n1 \033[2J\033]0;x\007\n";
  expect_clean_message(fg_read_snap_mem(snap, strlen(snap), "e.txt", &r),
                       "line 2: expected two node ids 'u v' but found '\\x1b[2J\\x1b]0;x\\x07'");
  fg_raw_free(&r);
  const char mtx[] = "%%MatrixMarket matrix coordinate pattern \033[31mgeneral\n";
  expect_clean_message(fg_read_mtx_mem(mtx, strlen(mtx), "e.mtx", &r),
                       "symmetry '\\x1b[31mgeneral'");
  fg_raw_free(&r);
  const char csv[] = "1,2\n3,\0334\n";
  double *v = NULL;
  int64_t rows = 0;
  expect_clean_message(fg_read_csv_mem(csv, strlen(csv), "e.csv", 2, -1, &v, &rows),
                       "line 2, column 2: '\\x1b4' is not a number");
  free(v);
  /* .npy: an unknown key and a dtype with escapes */
  size_t n = npy_with(npy, "{'\033[2J': 1, }\n");
  expect_clean_message(fg_read_npy_edges_mem(npy, n, "e.npy", &r), "unknown key '\\x1b[2J'");
  fg_raw_free(&r);
  n = npy_with(npy, "{'descr': '\033[2J<f4', 'fortran_order': False, 'shape': (0, 2), }\n");
  expect_clean_message(fg_read_npy_edges_mem(npy, n, "e.npy", &r), "dtype '\\x1b[2J<f4'");
  fg_raw_free(&r);
  /* .npz: a member name with escapes, listed, and quoted when its data is bad */
  const unsigned char junk[] = "not a npy";
  n = zip_one(buf, "\033[2J\033[H.npy", junk, sizeof junk - 1);
  expect_clean_message(fg_read_npz_mem(buf, n, "e.npz", 0, &r), "members: \\x1b[2J\\x1b[H.npy");
  fg_raw_free(&r);
  n = zip_one(buf, "edges.npy", junk, sizeof junk - 1);
  buf[30 + 9] ^= 1; /* the CRC no longer matches */
  expect_clean_message(fg_read_npz_mem(buf, n, "e.npz", 0, &r), "member 'edges.npy'");
  fg_raw_free(&r);
}

int main(void) {
  test_escapes();
  test_cuts();
  test_tokens();
  test_readers();
  return fg_test_finish("test_core_text");
}
