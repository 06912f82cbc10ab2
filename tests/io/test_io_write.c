/* test_io_write.c -- the writers: fg_npy_write_f32 read back by the .npy parser (bit-exact,
 * header as numpy writes it), fg_write_snap round trips (plain and gzip), and write errors
 * reported (a full disk: /dev/full; a missing folder). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/fg_io.h"
#include "io/fg_io_internal.h"
#include "testutil.h"

static void npy_round_trip(int64_t rows, int64_t cols) {
  const char *path = "test_io_write_tmp.npy";
  int64_t n = rows * cols;
  float *x = malloc((size_t)(n ? n : 1) * sizeof *x), *y = malloc((size_t)(n ? n : 1) * sizeof *y);
  fg_test_fill(x, n, 7, -1e3f, 1e3f);
  if (n > 3) {
    x[0] = -0.0f;
    x[1] = 1e-42f; /* subnormal */
    x[2] = 3.4e38f;
  }
  EXPECT_OK(fg_npy_write_f32(path, x, rows, cols));
  unsigned char *buf = NULL;
  size_t len = 0;
  fg_npy a;
  EXPECT_OK(fg_file_slurp(path, &buf, &len));
  EXPECT_OK(fg_npy_parse(buf, len, path, &a));
  EXPECT(a.kind == 'f' && a.itemsize == 4 && !a.fortran && a.ndim == 2);
  EXPECT(a.shape[0] == rows && a.shape[1] == cols);
  EXPECT(strcmp(a.descr, "<f4") == 0);
  EXPECT_MSG(a.data_offset % 64 == 0 && buf[a.data_offset - 1] == '\n',
             "header must be padded to 64 bytes and end in a newline (data at %zu)",
             a.data_offset);
  EXPECT(buf[6] == 1 && buf[7] == 0);
  EXPECT(len == a.data_offset + (size_t)n * 4);
  EXPECT_OK(fg_npy_to_f32(&a, path, y));
  EXPECT_MSG(n == 0 || memcmp(x, y, (size_t)n * 4) == 0, "%lld x %lld: values differ",
             (long long)rows, (long long)cols);
  free(buf);
  free(x);
  free(y);
  unlink(path);
}

static void npy_errors(void) {
  float x[4] = {1, 2, 3, 4};
  EXPECT(fg_npy_write_f32("no_such_dir/x.npy", x, 2, 2) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("no_such_dir/x.npy: cannot create"));
  EXPECT(fg_npy_write_f32("x.npy", x, -1, 2) == FG_ERR_INVALID_ARG);
  EXPECT(fg_npy_write_f32("x.npy", NULL, 2, 2) == FG_ERR_INVALID_ARG);
  if (fg_test_exists("/dev/full")) {
    /* large enough to get past stdio's buffer before fclose */
    int64_t rows = 100000, cols = 4;
    float *big = calloc((size_t)(rows * cols), sizeof *big);
    EXPECT(fg_npy_write_f32("/dev/full", big, rows, cols) == FG_ERR_IO);
    EXPECT(fg_test_error_contains("/dev/full: write error"));
    EXPECT(fg_npy_write_f32("/dev/full", big, 1, 1) == FG_ERR_IO); /* caught at flush */
    free(big);
    EXPECT(fg_test_exists("/dev/full")); /* a failed write never removes a device */
  }
}

static void snap_round_trip(const char *path, int gz) {
  enum { M = 50000 };
  int64_t *src = malloc(M * sizeof *src), *dst = malloc(M * sizeof *dst);
  for (int64_t e = 0; e < M; e++) {
    src[e] = (e * 7919) % 40000;
    dst[e] = (e * 104729 + 3) % 2147483646;
  }
  src[0] = 0;
  dst[0] = 2147483646; /* the largest id allowed */
  EXPECT_OK(fg_write_snap(path, src, dst, M, "made by test_io_write\nsecond line"));
  /* the file starts with the comment, gzip-compressed when the name says so */
  FILE *f = fopen(path, "rb");
  unsigned char head[32] = {0};
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  EXPECT(got >= 2);
  if (gz) EXPECT(head[0] == 0x1f && head[1] == 0x8b);
  else EXPECT(memcmp(head, "# made by test_io_write\n# second", 32) == 0);
  fg_raw r;
  EXPECT_OK(fg_read_snap(path, &r));
  EXPECT(r.num_edges == M && r.num_nodes == 2147483647);
  EXPECT(r.src && memcmp(r.src, src, M * sizeof *src) == 0);
  EXPECT(r.dst && memcmp(r.dst, dst, M * sizeof *dst) == 0);
  fg_raw_free(&r);
  unlink(path);
  free(src);
  free(dst);
}

static void snap_errors(void) {
  int64_t s[2] = {0, 1}, d[2] = {1, -1};
  EXPECT(fg_write_snap("test_io_write_neg.txt", s, d, 2, NULL) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("edge 1 has a negative node id"));
  EXPECT(!fg_test_exists("test_io_write_neg.txt"));
  EXPECT(fg_write_snap("no_such_dir/x.txt.gz", s, s, 2, NULL) == FG_ERR_IO);
  EXPECT(fg_test_error_contains("no_such_dir/x.txt.gz: cannot create"));
  EXPECT(fg_write_snap("no_such_dir/x.txt", s, s, 2, NULL) == FG_ERR_IO);
  if (fg_test_exists("/dev/full")) {
    EXPECT(fg_write_snap("/dev/full", s, s, 2, "c") == FG_ERR_IO);
    EXPECT(fg_test_error_contains("/dev/full: write error"));
    EXPECT(fg_test_exists("/dev/full"));
  }
  /* an empty edge list is written (and reading it back says so) */
  EXPECT_OK(fg_write_snap("test_io_write_empty.txt", NULL, NULL, 0, "nothing"));
  fg_raw r;
  EXPECT(fg_read_snap("test_io_write_empty.txt", &r) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("test_io_write_empty.txt: no edges found"));
  unlink("test_io_write_empty.txt");
}

/* int64 vectors (node ids) read back by the parser, bit for bit */
static void npy_i64_round_trip(int64_t n) {
  const char *path = "test_io_write_tmp_i64.npy";
  int64_t *x = malloc((size_t)(n ? n : 1) * sizeof *x), *y = malloc((size_t)(n ? n : 1) * sizeof *y);
  for (int64_t i = 0; i < n; i++) x[i] = i * INT64_C(2654435761) - (i & 1 ? INT64_C(1) << 40 : 0);
  EXPECT_OK(fg_npy_write_i64(path, x, n));
  unsigned char *buf = NULL;
  size_t len = 0;
  fg_npy a;
  EXPECT_OK(fg_file_slurp(path, &buf, &len));
  EXPECT_OK(fg_npy_parse(buf, len, path, &a));
  EXPECT(a.kind == 'i' && a.itemsize == 8 && a.ndim == 1 && a.shape[0] == n);
  EXPECT(strcmp(a.descr, "<i8") == 0 && a.data_offset % 64 == 0);
  EXPECT(len == a.data_offset + (size_t)n * 8);
  EXPECT_OK(fg_npy_to_i64(&a, path, y));
  EXPECT_MSG(n == 0 || memcmp(x, y, (size_t)n * 8) == 0, "%lld ids: values differ", (long long)n);
  EXPECT(fg_npy_write_i64(path, NULL, 3) == FG_ERR_INVALID_ARG);
  EXPECT(fg_npy_write_i64("no_such_dir/x.npy", x, n) == FG_ERR_IO);
  free(buf);
  free(x);
  free(y);
  unlink(path);
}

int main(void) {
  npy_i64_round_trip(0);
  npy_i64_round_trip(5);
  npy_i64_round_trip(40000);
  npy_round_trip(3, 5);
  npy_round_trip(1000, 37);
  npy_round_trip(0, 4);
  npy_round_trip(123456, 1); /* a header with a longer shape */
  npy_errors();
  snap_round_trip("test_io_write_tmp.txt", 0);
  snap_round_trip("test_io_write_tmp.txt.gz", 1);
  snap_errors();
  return fg_test_finish("test_io_write");
}
