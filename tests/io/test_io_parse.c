/* test_io_parse.c -- the pieces under the readers: number parsing (the fast decimal path must
 * equal strtod bit for bit), the line reader across buffer refills, long lines, CRLF, gzip in
 * memory and on disk (several members), and zip64 / .npy corner cases. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "io/fg_io.h"
#include "io/fg_io_internal.h"
#include "testutil.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void test_numbers(void) {
  char s[64];
  int mismatches = 0;
  for (int i = 0; i < 200000; i++) {
    int digits = 1 + (int)(next_u64() % 17), point = (int)(next_u64() % (digits + 1));
    int k = 0;
    if (next_u64() & 1) s[k++] = '-';
    for (int d = 0; d < digits; d++) {
      if (d == point && d > 0) s[k++] = '.';
      s[k++] = (char)('0' + next_u64() % 10);
    }
    if (i % 7 == 0) k += snprintf(s + k, sizeof s - (size_t)k, "e%d", (int)(next_u64() % 80) - 40);
    s[k] = '\0';
    const char *e = NULL;
    double v = 0, w = strtod(s, NULL);
    if (fg_parse_f64(s, &e, &v) != 0 || *e != '\0' || memcmp(&v, &w, sizeof v) != 0) {
      if (mismatches++ < 5) fprintf(stderr, "'%s': %.17g vs strtod %.17g\n", s, v, w);
    }
  }
  EXPECT(mismatches == 0);
  const char *e = NULL;
  double v = 0;
  EXPECT(fg_parse_f64("  0.1,", &e, &v) == 0 && v == 0.1 && *e == ',');
  EXPECT(fg_parse_f64("nan", &e, &v) == 0 && v != v);
  EXPECT(fg_parse_f64("x", &e, &v) == 1);
  EXPECT(fg_parse_f64("", &e, &v) == 1);
  EXPECT(fg_parse_f64("-", &e, &v) == 1);
  int64_t x = 0;
  EXPECT(fg_parse_i64("9223372036854775807", &e, &x) == 0 && x == INT64_MAX);
  EXPECT(fg_parse_i64("-9223372036854775808", &e, &x) == 0 && x == INT64_MIN);
  EXPECT(fg_parse_i64("9223372036854775808", &e, &x) == 2);
  EXPECT(fg_parse_i64(" +12x", &e, &x) == 0 && x == 12 && *e == 'x');
  EXPECT(fg_parse_i64("-", &e, &x) == 1);
}

/* A csv of `rows` rows of `width` values, built in memory. */
static char *make_csv(int64_t rows, int64_t width, const char *eol, size_t *len) {
  size_t cap = (size_t)(rows * width * 12 + 16), n = 0;
  char *b = malloc(cap);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < width; c++)
      n += (size_t)snprintf(b + n, cap - n, "%lld%s", (long long)(r * width + c) % 1000,
                            c + 1 < width ? "," : eol);
  *len = n;
  return b;
}

static void check_table(const double *v, int64_t rows, int64_t width) {
  int64_t bad = 0;
  for (int64_t i = 0; i < rows * width; i++) bad += v[i] != (double)(i % 1000);
  EXPECT_MSG(bad == 0, "%lld wrong values", (long long)bad);
}

static unsigned char *gzip_mem(const void *src, size_t n, size_t *out_len) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  size_t cap = deflateBound(&zs, (uLong)n) + 64;
  unsigned char *out = malloc(cap);
  zs.next_in = (unsigned char *)(uintptr_t)src;
  zs.avail_in = (uInt)n;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  deflate(&zs, Z_FINISH);
  *out_len = zs.total_out;
  deflateEnd(&zs);
  return out;
}

static void test_lines(void) {
  /* one very long line (larger than the reader's first buffer) */
  size_t len = 0;
  char *csv = make_csv(1, 300000, "\n", &len);
  double *v = NULL;
  int64_t rows = 0;
  EXPECT_OK(fg_read_csv_mem(csv, len, "long.csv", -1, 1, &v, &rows));
  if (v) check_table(v, 1, 300000);
  free(v);
  free(csv);
  /* many rows across refills, CRLF endings, no final newline */
  csv = make_csv(50000, 9, "\r\n", &len);
  len -= 2;
  EXPECT_OK(fg_read_csv_mem(csv, len, "crlf.csv", 9, 50000, &v, &rows));
  EXPECT(rows == 50000);
  if (v) check_table(v, rows, 9);
  free(v);
  /* the same, gzip-compressed in memory, and as two concatenated gzip members */
  size_t glen = 0;
  unsigned char *gz = gzip_mem(csv, len, &glen);
  EXPECT_OK(fg_read_csv_mem(gz, glen, "crlf.csv.gz", 9, 50000, &v, &rows));
  if (v) check_table(v, rows, 9);
  free(v);
  size_t cut = 0;
  for (size_t i = len / 2; i < len; i++)
    if (csv[i] == '\n') {
      cut = i + 1;
      break;
    }
  size_t l1 = 0, l2 = 0;
  unsigned char *g1 = gzip_mem(csv, cut, &l1), *g2 = gzip_mem(csv + cut, len - cut, &l2);
  unsigned char *both = malloc(l1 + l2);
  memcpy(both, g1, l1);
  memcpy(both + l1, g2, l2);
  EXPECT_OK(fg_read_csv_mem(both, l1 + l2, "two.csv.gz", 9, 50000, &v, &rows));
  if (v) check_table(v, rows, 9);
  free(v);
  /* the same two members as a file, through gzopen */
  const char *tmp = "test_io_parse_two.txt.gz";
  FILE *f = fopen(tmp, "wb");
  EXPECT(f && fwrite(both, 1, l1 + l2, f) == l1 + l2);
  if (f) fclose(f);
  fg_lines L;
  EXPECT_OK(fg_lines_open(&L, tmp));
  int64_t lines = 0;
  char *s;
  size_t n;
  for (;;) {
    if (fg_lines_next(&L, &s, &n) != FG_OK || !s) break;
    lines++;
  }
  EXPECT_MSG(lines == 50000, "%lld lines", (long long)lines);
  fg_lines_close(&L);
  unlink(tmp);
  /* a truncated gzip in memory */
  EXPECT(fg_read_csv_mem(gz, glen / 2, "cut.csv.gz", 9, -1, &v, &rows) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("cut.csv.gz: truncated gzip data"));
  EXPECT(v == NULL);
  free(g1);
  free(g2);
  free(both);
  free(gz);
  free(csv);
  /* a missing file and a directory */
  EXPECT(fg_lines_open(&L, "no/such/file.csv") == FG_ERR_IO);
  EXPECT(fg_test_error_contains("no/such/file.csv: cannot open"));
  EXPECT(fg_lines_open(&L, FG_CORPUS) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("is a directory"));
}

static void test_npy_parse(void) {
  /* Fortran order of a 2 x 3 float array reads back in C order */
  static const char hdr[] = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
  unsigned char buf[256];
  size_t hl = 118;
  memset(buf, ' ', sizeof buf);
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)hl;
  buf[9] = 0;
  memcpy(buf + 10, hdr, sizeof hdr - 1);
  buf[10 + hl - 1] = '\n';
  double colmajor[6] = {1, 4, 2, 5, 3, 6}; /* [[1,2,3],[4,5,6]] */
  memcpy(buf + 128, colmajor, sizeof colmajor);
  fg_npy a;
  float y[6];
  EXPECT_OK(fg_npy_parse(buf, 128 + sizeof colmajor, "f.npy", &a));
  EXPECT_OK(fg_npy_to_f32(&a, "f.npy", y));
  for (int i = 0; i < 6; i++) EXPECT(y[i] == (float)(i + 1));
  /* integers are not converted from floats */
  int64_t iv[6];
  EXPECT(fg_npy_to_i64(&a, "f.npy", iv) == FG_ERR_FORMAT);
  /* every prefix of a valid file fails cleanly */
  for (size_t cut = 0; cut < 128 + sizeof colmajor; cut++)
    EXPECT_MSG(fg_npy_parse(buf, cut, "f.npy", &a) != FG_OK, "prefix of %zu bytes", cut);
}

/* The OGB csv pieces (parallel `prepare`): lines and rows numbered from first_line, the row
 * counts checked against the file's, only the last piece checks the total. */
static void test_ogb_pieces(void) {
  const char edges[] = "0,1\n2,3\n";
  int64_t *src = NULL, *dst = NULL, rows = 0;
  EXPECT_OK(fg_read_ogb_edge_piece(edges, strlen(edges), "edge.csv", 5, 0, 4, 9, &src, &dst,
                                   &rows));
  EXPECT(rows == 2 && src && dst && src[1] == 2 && dst[1] == 3);
  free(src);
  free(dst);
  /* rows 5, 6 of a file of 7: the last piece is short by one; then one row too many */
  EXPECT(fg_read_ogb_edge_piece(edges, strlen(edges), "edge.csv", 5, 1, 4, 8, &src, &dst,
                                &rows) != FG_OK &&
         fg_test_error_contains("edge.csv: 7 rows, expected 8"));
  EXPECT(fg_read_ogb_edge_piece(edges, strlen(edges), "edge.csv", 5, 0, 4, 6, &src, &dst,
                                &rows) != FG_OK &&
         fg_test_error_contains("edge.csv: line 7: more rows than the 6 expected"));
  EXPECT(fg_read_ogb_edge_piece(edges, strlen(edges), "edge.csv", 5, 0, 3, 9, &src, &dst,
                                &rows) != FG_OK &&
         fg_test_error_contains("edge.csv: line 7: node id 3 out of range [0, 3)"));
  const char feat[] = "1,2\n3,x\n";
  float *f = NULL;
  EXPECT(fg_csv_first_fields(feat, strlen(feat)) == 2 && fg_csv_first_fields(feat, 0) == 0);
  EXPECT(fg_read_ogb_feat_piece(feat, strlen(feat), "node-feat.csv", 10, 0, 20, 2, &f, &rows) !=
             FG_OK &&
         fg_test_error_contains("node-feat.csv: line 12, column 2: 'x' is not a number"));
  EXPECT(fg_read_ogb_feat_piece(feat, 4, "node-feat.csv", 10, 0, 20, 3, &f, &rows) != FG_OK &&
         fg_test_error_contains("node-feat.csv: line 11: expected 3 values, found 2"));
  EXPECT_OK(fg_read_ogb_feat_piece(feat, 4, "node-feat.csv", 10, 0, 20, 2, &f, &rows));
  EXPECT(rows == 1 && f && f[0] == 1.0f && f[1] == 2.0f);
  free(f);
  /* labels: one class id a line (tasks 0), or the first line's T targets on every line */
  const char lab[] = "3\n\n7\n", tgt[] = "1,0,\n0,1,1\n";
  int32_t *y = NULL;
  int8_t *t = NULL;
  int64_t maxl = 0;
  EXPECT_OK(fg_read_ogb_label_piece(lab, strlen(lab), "node-label.csv", 2, 1, 5, 0, &y, &maxl,
                                    &t, &rows));
  EXPECT(rows == 3 && y && !t && y[0] == 3 && y[1] == -1 && y[2] == 7 && maxl == 7);
  free(y);
  y = NULL;
  EXPECT_OK(fg_read_ogb_label_piece(tgt, strlen(tgt), "node-label.csv", 0, 0, 5, 3, &y, &maxl,
                                    &t, &rows));
  EXPECT(rows == 2 && !y && t && t[2] == -1 && t[5] == 1);
  free(t);
  t = NULL;
  EXPECT(fg_read_ogb_label_piece(tgt, strlen(tgt), "node-label.csv", 4, 0, 9, 0, &y, &maxl, &t,
                                 &rows) != FG_OK &&
         fg_test_error_contains("node-label.csv: line 5: several label columns (3), but line 1"));
  EXPECT(fg_read_ogb_label_piece(lab, strlen(lab), "node-label.csv", 2, 0, 9, 2, &y, &maxl, &t,
                                 &rows) != FG_OK &&
         fg_test_error_contains("node-label.csv: line 3: expected 2 target values"));
  EXPECT(fg_read_ogb_label_piece("\x1f\x8b", 2, "node-label.csv", 4, 0, 9, 0, &y, &maxl, &t,
                                 &rows) != FG_OK &&
         fg_test_error_contains("node-label.csv: line 5: starts with bytes 1f 8b"));
}

int main(void) {
  test_numbers();
  test_lines();
  test_npy_parse();
  test_ogb_pieces();
  return fg_test_finish("test_io_parse");
}
