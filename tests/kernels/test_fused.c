/* test_fused.c -- the fused elementwise passes against compositions of the reference kernels,
 * bit for bit: bias + ReLU + dropout in one sweep (every combination, widths around the
 * 256-column chunk, in place and not, node ids permuted; its bf16 form against the reference
 * rounded), and the backward mask read off the stored dropout output against dropout backward
 * followed by ReLU backward. Also: results do not depend on the thread count, and the masks
 * are really applied (some kept, some dropped).
 * The input pass that gathers rows through a map (fg_dropout_rows) against gather + reference,
 * and its bf16 form (fg_dropout_rows_bf16) against the reference rounded; the bf16 features'
 * form (fg_dropout_rows_x16) against the reference on features rounded by hand, and its adding
 * form (fg_dropout_rows_x16_axpy) against fg_axpy of those rows.
 * A column block [c0, c1) of a wider matrix, passed with col0 = c0, draws exactly its slice of
 * the whole matrix's mask (what a rank holding a column block relies on), in the fused pass and
 * the reference alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"
#include "kernels/fg_bf16.h"

static int bits_equal(const float *a, const float *b, int64_t n) {
  return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static void test_forward(void) {
  static const int64_t shapes[][2] = {{1, 1}, {7, 3}, {5, 4}, {33, 128}, {9, 255},
                                      {9, 256}, {9, 257}, {40, 520}, {1200, 33}};
  static const float ps[] = {0.0f, 0.3f, 0.5f};
  const int saved = kt_max_threads();
  int cases = 0, bad = 0, dropped_some = 0, kept_some = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t rows = shapes[si][0], cols = shapes[si][1], n = rows * cols;
    float *in = kt_alloc_f(n), *bias = kt_alloc_f(cols), *ref = kt_alloc_f(n);
    float *out = kt_alloc_f(n), *inplace = kt_alloc_f(n);
    int64_t *ids = malloc((size_t)rows * sizeof *ids);
    uint16_t *out16 = malloc((size_t)n * sizeof *out16);
    if (!ids || !out16) exit(2);
    fg_test_fill(in, n, 500 + (uint64_t)si, -1.0f, 1.0f);
    fg_test_fill(bias, cols, 600 + (uint64_t)si, -0.5f, 0.5f);
    for (int64_t r = 0; r < rows; r++) ids[r] = (r * 7 + 3) % rows + 1000; /* not 0..rows-1 */
    for (int pi = 0; pi < 3; pi++) {
      for (int relu = 0; relu < 2; relu++) {
        for (int with_bias = 0; with_bias < 2; with_bias++) {
          for (int with_ids = 0; with_ids < 2; with_ids++) {
            const float *b = with_bias ? bias : NULL;
            const int64_t *g = with_ids ? ids : NULL;
            fg_bias_relu_dropout_ref(ref, in, b, rows, cols, relu, ps[pi], 9, 4, 2, g, 0);
            for (int t = 1; t <= 3; t += 2) {
              kt_set_threads(t);
              memset(out, 0xff, (size_t)n * sizeof *out);
              fg_bias_relu_dropout(out, in, b, rows, cols, relu, ps[pi], 9, 4, 2, g, 0);
              memcpy(inplace, in, (size_t)n * sizeof *in);
              fg_bias_relu_dropout(inplace, inplace, b, rows, cols, relu, ps[pi], 9, 4, 2, g, 0);
              /* written as bf16 in the same sweep: the reference rounded (out16) */
              memset(out16, 0xff, (size_t)n * sizeof *out16);
              fg_bias_relu_dropout_bf16(out16, in, b, rows, cols, relu, ps[pi], 9, 4, 2, g, 0);
              int64_t k = 0;
              while (k < n && out16[k] == fg_bf16_from_float(ref[k])) k++;
              cases++;
              if (!bits_equal(out, ref, n) || !bits_equal(inplace, ref, n) || k < n) {
                if (bad++ < 5)
                  fprintf(stderr, "  fused %lldx%lld p=%g relu=%d bias=%d ids=%d threads=%d "
                          "differs from the reference\n", (long long)rows, (long long)cols,
                          (double)ps[pi], relu, with_bias, with_ids, t);
              }
            }
            if (ps[pi] > 0.0f) {
              for (int64_t i = 0; i < n; i++) {
                const float pre = in[i] + (b ? b[i % cols] : 0.0f);
                dropped_some |= ref[i] == 0.0f && pre > 0.0f;
                kept_some |= ref[i] != 0.0f && ref[i] != pre;
              }
            }
          }
        }
      }
    }
    /* the mask of (id, column) follows the node: rows given in another order with their ids
     * come out as the same rows */
    {
      float *perm_in = kt_alloc_f(n), *perm_out = kt_alloc_f(n);
      int64_t *perm_ids = malloc((size_t)rows * sizeof *perm_ids);
      if (!perm_ids) exit(2);
      fg_bias_relu_dropout(out, in, bias, rows, cols, 1, 0.5f, 9, 4, 2, ids, 0);
      for (int64_t r = 0; r < rows; r++) {
        const int64_t src = rows - 1 - r;
        memcpy(perm_in + r * cols, in + src * cols, (size_t)cols * sizeof *in);
        perm_ids[r] = ids[src];
      }
      fg_bias_relu_dropout(perm_out, perm_in, bias, rows, cols, 1, 0.5f, 9, 4, 2, perm_ids, 0);
      for (int64_t r = 0; r < rows; r++)
        EXPECT(bits_equal(perm_out + r * cols, out + (rows - 1 - r) * cols, cols));
      free(perm_in);
      free(perm_out);
      free(perm_ids);
    }
    free(in);
    free(bias);
    free(ref);
    free(out);
    free(inplace);
    free(ids);
    free(out16);
  }
  kt_set_threads(saved);
  printf("  fused bias+relu+dropout: %d cases, %d differ from the reference\n", cases, bad);
  EXPECT_MSG(bad == 0, "%d fused cases differ from the reference composition", bad);
  EXPECT(dropped_some && kept_some);
}

/* The old backward (dropout backward, then ReLU backward against H) equals the fused mask on
 * the stored output D = dropout(relu(Z)). Values compared with == (the old dropout writes +0
 * where a group of four gradients is all zero; the values are the same). */
static void test_backward(void) {
  const int64_t rows = 300, cols = 130, n = rows * cols;
  static const float ps[] = {0.0f, 0.5f};
  float *z = kt_alloc_f(n), *h = kt_alloc_f(n), *d = kt_alloc_f(n), *g = kt_alloc_f(n);
  float *old = kt_alloc_f(n), *fused = kt_alloc_f(n);
  fg_test_fill(z, n, 700, -1.0f, 1.0f);
  fg_test_fill(g, n, 701, -3.0f, 3.0f);
  for (int64_t i = 0; i < n; i += 37) g[i] = 0.0f;
  for (int pi = 0; pi < 2; pi++) {
    const float p = ps[pi], scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
    int64_t diff = 0, zeros = 0;
    fg_relu_forward(h, z, n);
    fg_bias_relu_dropout(d, z, NULL, rows, cols, 1, p, 5, 6, 1, NULL, 0);
    fg_dropout_backward(old, g, rows, cols, p, 5, 6, 1, NULL);
    fg_relu_backward(old, old, h, n);
    memcpy(fused, g, (size_t)n * sizeof *g);
    fg_masked_scale(fused, d, n, scale);
    for (int64_t i = 0; i < n; i++) {
      diff += !(fused[i] == old[i]);
      zeros += fused[i] == 0.0f;
    }
    printf("  masked backward p=%g: %lld of %lld differ, %lld zero\n", (double)p,
           (long long)diff, (long long)n, (long long)zeros);
    EXPECT_MSG(diff == 0, "p=%g: the fused backward mask differs in %lld entries", (double)p,
               (long long)diff);
    EXPECT(zeros > n / 3 && zeros < n); /* ReLU (and dropout) masked a share, not all */
  }
  free(z);
  free(h);
  free(d);
  free(g);
  free(old);
  free(fused);
}

/* fg_masked_scale_bf16 on a bf16 output equals fg_masked_scale on its fp32 widening, at every
 * one of the 65536 bit patterns (zeros of both signs, denormals, infinities, NaNs) and at
 * lengths that leave vector tails. */
static void test_masked_bf16(void) {
  const int64_t n = 65536 + 13;
  float *g = kt_alloc_f(n), *a = kt_alloc_f(n), *b = kt_alloc_f(n), *w = kt_alloc_f(n);
  uint16_t *d = malloc((size_t)n * sizeof *d);
  int64_t diff = 0, kept = 0;
  fg_test_fill(g, n, 702, -3.0f, 3.0f);
  for (int64_t i = 0; i < n; i++) {
    const uint32_t u = (uint32_t)(d[i] = (uint16_t)(i * 40503u)) << 16;
    memcpy(&w[i], &u, sizeof u);
  }
  for (int64_t len = n; len > n - 20; len -= 7) {
    memcpy(a, g, (size_t)n * sizeof *g);
    memcpy(b, g, (size_t)n * sizeof *g);
    fg_masked_scale(a, w, len, 1.25f);
    fg_masked_scale_bf16(b, d, len, 1.25f);
    diff += memcmp(a, b, (size_t)n * sizeof *a) != 0;
  }
  for (int64_t i = 0; i < n; i++) kept += b[i] != 0.0f && b[i] != g[i];
  printf("  masked backward on bf16: %lld of 3 lengths differ, %lld kept and scaled\n",
         (long long)diff, (long long)kept);
  EXPECT(diff == 0);
  EXPECT(kept > n / 4 && kept < 3 * n / 4); /* about the positive half of the patterns */
  free(g);
  free(a);
  free(b);
  free(w);
  free(d);
}

/* fg_masked_scale_bias_bf16 (dZ stored as bf16, its bias gradient on the way): the values are
 * fg_masked_scale_bf16's rounded, and the bias gradient fg_bias_backward's of them, bit for
 * bit; in place over the mask (g16 = d) too; every bf16 pattern as a mask (NaNs, denormals,
 * both zeros), rows past one and several 1024-row blocks, widths with vector tails, dbias NULL
 * (values only), and 1 and 2 threads. And fg_masked_scale_bias_bf16_rows over consecutive
 * uneven row ranges (a fused producer's blocks: 700 rows, then 1, 1500, ... ending inside and on
 * the bias blocks), in place, each range's g in a block of its own: the same values, and
 * fg_bias_from_parts the same bias gradient. */
static void test_masked_bias_bf16(void) {
  static const int64_t shapes[][2] = {{1, 1}, {5, 3}, {1024, 7}, {1025, 16}, {3000, 37}};
  const int saved = kt_max_threads();
  int bad = 0, cases = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t rows = shapes[si][0], cols = shapes[si][1], n = rows * cols;
    float *g = kt_alloc_f(n), *a = kt_alloc_f(n), *db_ref = kt_alloc_f(cols),
          *db = kt_alloc_f(cols);
    uint16_t *d = malloc((size_t)n * sizeof *d), *o = malloc((size_t)n * sizeof *o),
             *ip = malloc((size_t)n * sizeof *ip);
    if (!d || !o || !ip) exit(2);
    fg_test_fill(g, n, 910 + (uint64_t)si, -2.0f, 2.0f);
    for (int64_t i = 0; i < n; i++) d[i] = (uint16_t)(i * 40503u + 17u * (uint64_t)si);
    memcpy(a, g, (size_t)n * sizeof *g);
    fg_masked_scale_bf16(a, d, n, 1.5f);
    fg_bias_backward(db_ref, a, rows, cols);
    for (int t = 1; t <= 2; t++) {
      kt_set_threads(t);
      for (int mode = 0; mode < 4; mode++) { /* separate, in place, no bias, row ranges */
        uint16_t *out = mode == 1 || mode == 3 ? ip : o;
        if (mode == 1 || mode == 3) memcpy(ip, d, (size_t)n * sizeof *d);
        for (int64_t c = 0; c < cols; c++) db[c] = -7.0f;
        if (mode == 3) {
          static const int64_t step[] = {700, 1, 1500, 348, 2048};
          double *part = malloc(sizeof(double) * (size_t)fg_bias_part_len(rows, cols));
          float *blk = kt_alloc_f(n);
          if (!part) exit(2);
          for (int64_t r0 = 0, k = 0; r0 < rows; k++) {
            const int64_t nr = step[k % 5] < rows - r0 ? step[k % 5] : rows - r0;
            memcpy(blk, g + r0 * cols, sizeof(float) * (size_t)(nr * cols));
            fg_masked_scale_bias_bf16_rows(ip, blk, ip, r0, nr, cols, 1.5f, part);
            r0 += nr;
          }
          fg_bias_from_parts(db, part, rows, cols);
          free(part);
          free(blk);
        } else {
          fg_masked_scale_bias_bf16(out, g, mode == 1 ? ip : d, rows, cols, 1.5f,
                                    mode == 2 ? NULL : db);
        }
        for (int64_t i = 0; i < n; i++) bad += out[i] != fg_bf16_from_float(a[i]);
        for (int64_t c = 0; c < cols; c++)
          bad += mode == 2 ? db[c] != -7.0f : memcmp(&db[c], &db_ref[c], sizeof db[c]) != 0;
        cases++;
      }
    }
    free(g);
    free(a);
    free(db_ref);
    free(db);
    free(d);
    free(o);
    free(ip);
  }
  kt_set_threads(saved);
  printf("  masked backward stored as bf16 with its bias gradient: %d cases, %d mismatches\n",
         cases, bad);
  EXPECT(bad == 0);
}

/* The gathering input pass: row r of the output is dropout(row in_rows[r] of the input) with
 * the mask of global id ids[r], bitwise as gather-then-reference-dropout, and as the plain
 * pass on a copy permuted by hand; rows may repeat; p == 0 is a plain gather. */
static void test_rows(void) {
  static const int64_t shapes[][2] = {{1, 1}, {7, 3}, {33, 128}, {9, 257}, {1200, 33}};
  static const float ps[] = {0.0f, 0.5f};
  const int saved = kt_max_threads();
  int cases = 0, bad = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t rows = shapes[si][0], cols = shapes[si][1], n = rows * cols;
    float *in = kt_alloc_f(n), *ref = kt_alloc_f(n), *out = kt_alloc_f(n);
    float *moved = kt_alloc_f(n), *plain = kt_alloc_f(n);
    int64_t *map = malloc((size_t)rows * sizeof *map), *ids = malloc((size_t)rows * sizeof *ids);
    uint16_t *out16 = malloc((size_t)n * sizeof *out16);
    if (!map || !ids || !out16) exit(2);
    fg_test_fill(in, n, 800 + (uint64_t)si, -1.0f, 1.0f);
    if (n >= 4) { /* rounding's special cases: a denormal, a NaN, a tie, the largest finite */
      const uint32_t special[4] = {0x00000301u, 0x7fc12345u, 0x3f808000u, 0x7f7fffffu};
      for (int k = 0; k < 4; k++) memcpy(&in[k * (n / 4)], &special[k], sizeof special[k]);
    }
    for (int64_t r = 0; r < rows; r++) {
      map[r] = (r * 5 + 2) % rows; /* a permutation when gcd(5, rows) == 1 */
      ids[r] = map[r] + 77;
    }
    if (rows > 2) map[rows - 1] = map[0]; /* a repeated row is read twice */
    for (int64_t r = 0; r < rows; r++)
      memcpy(moved + r * cols, in + map[r] * cols, (size_t)cols * sizeof *in);
    for (int pi = 0; pi < 2; pi++) {
      fg_dropout_rows_ref(ref, in, map, rows, cols, ps[pi], 3, 8, 0, ids, 0);
      fg_bias_relu_dropout_ref(plain, moved, NULL, rows, cols, 0, ps[pi], 3, 8, 0, ids, 0);
      EXPECT(bits_equal(ref, plain, n));
      for (int t = 1; t <= 3; t += 2) {
        kt_set_threads(t);
        memset(out, 0xff, (size_t)n * sizeof *out);
        fg_dropout_rows(out, in, map, rows, cols, ps[pi], 3, 8, 0, ids, 0);
        cases++;
        if (!bits_equal(out, ref, n) && bad++ < 5)
          fprintf(stderr, "  dropout rows %lldx%lld p=%g threads=%d differs\n", (long long)rows,
                  (long long)cols, (double)ps[pi], t);
        /* rounded to bf16 in the same pass: the reference's values rounded */
        memset(out16, 0xff, (size_t)n * sizeof *out16);
        fg_dropout_rows_bf16(out16, in, map, rows, cols, ps[pi], 3, 8, 0, ids, 0);
        cases++;
        int64_t i = 0;
        while (i < n && out16[i] == fg_bf16_from_float(ref[i])) i++;
        if (i < n && bad++ < 5)
          fprintf(stderr, "  dropout rows to bf16 %lldx%lld p=%g threads=%d: element %lld\n",
                  (long long)rows, (long long)cols, (double)ps[pi], t, (long long)i);
      }
      if (ps[pi] == 0.0f) EXPECT(bits_equal(ref, moved, n));
    }
    /* no map: the plain input pass */
    fg_dropout_rows(out, in, NULL, rows, cols, 0.5f, 3, 8, 0, ids, 0);
    fg_bias_relu_dropout_ref(ref, in, NULL, rows, cols, 0, 0.5f, 3, 8, 0, ids, 0);
    EXPECT(bits_equal(out, ref, n));
    free(in);
    free(ref);
    free(out);
    free(moved);
    free(plain);
    free(map);
    free(ids);
    free(out16);
  }
  kt_set_threads(saved);
  printf("  dropout with a row map: %d cases, %d differ from the reference\n", cases, bad);
  EXPECT_MSG(bad == 0, "%d gathered dropout cases differ from the reference", bad);
}

/* fg_dropout_rows_x16: the features as bf16(X), read from their bf16 bits or rounded from an
 * fp32 array as they are read, each into fp32 or bf16 output, against the reference dropout of
 * the rounded features (widened by hand), at p with a scale that rounds (0.3) and without. */
static void test_rows_x16(void) {
  static const int64_t shapes[][2] = {{1, 1}, {7, 3}, {33, 128}, {9, 257}, {1200, 33}};
  static const float ps[] = {0.0f, 0.3f, 0.5f};
  const int saved = kt_max_threads();
  int cases = 0, bad = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t rows = shapes[si][0], cols = shapes[si][1], n = rows * cols;
    float *in = kt_alloc_f(n), *rin = kt_alloc_f(n), *ref = kt_alloc_f(n), *out = kt_alloc_f(n);
    float *acc = kt_alloc_f(n);
    int64_t *map = malloc((size_t)rows * sizeof *map), *ids = malloc((size_t)rows * sizeof *ids);
    uint16_t *in16 = malloc((size_t)n * sizeof *in16), *out16 = malloc((size_t)n * sizeof *out16);
    if (!map || !ids || !in16 || !out16) exit(2);
    fg_test_fill(in, n, 900 + (uint64_t)si, -3.0f, 3.0f);
    if (n >= 4) { /* a denormal, a NaN, a tie, the largest finite */
      const uint32_t special[4] = {0x00000301u, 0x7fc12345u, 0x3f808000u, 0x7f7fffffu};
      for (int k = 0; k < 4; k++) memcpy(&in[k * (n / 4)], &special[k], sizeof special[k]);
    }
    for (int64_t i = 0; i < n; i++) {
      in16[i] = fg_bf16_from_float(in[i]);
      rin[i] = fg_bf16_to_float(in16[i]);
    }
    for (int64_t r = 0; r < rows; r++) {
      map[r] = (r * 7 + 1) % rows;
      ids[r] = 3 * r + 5;
    }
    for (int pi = 0; pi < 3; pi++) {
      fg_dropout_rows_ref(ref, rin, map, rows, cols, ps[pi], 4, 2, 0, ids, 0);
      for (int t = 1; t <= 3; t += 2) {
        kt_set_threads(t);
        for (int from16 = 0; from16 < 2; from16++) {
          const float *x = from16 ? NULL : in;
          const uint16_t *x16 = from16 ? in16 : NULL;
          memset(out, 0xff, (size_t)n * sizeof *out);
          fg_dropout_rows_x16(out, NULL, x, x16, map, rows, cols, ps[pi], 4, 2, 0, ids, 0);
          cases++;
          if (!bits_equal(out, ref, n) && bad++ < 5)
            fprintf(stderr, "  x16 rows %lldx%lld p=%g from16=%d threads=%d differs\n",
                    (long long)rows, (long long)cols, (double)ps[pi], from16, t);
          memset(out16, 0xff, (size_t)n * sizeof *out16);
          fg_dropout_rows_x16(NULL, out16, x, x16, map, rows, cols, ps[pi], 4, 2, 0, ids, 0);
          cases++;
          int64_t i = 0;
          while (i < n && out16[i] == fg_bf16_from_float(ref[i])) i++;
          if (i < n && bad++ < 5)
            fprintf(stderr, "  x16 rows to bf16 %lldx%lld p=%g from16=%d: element %lld\n",
                    (long long)rows, (long long)cols, (double)ps[pi], from16, (long long)i);
          /* added in: y + 1.5 * rows, as fg_axpy on the stored rows */
          for (int64_t k = 0; k < n; k++) out[k] = rin[(k * 7) % n] - 0.25f;
          memcpy(acc, out, (size_t)n * sizeof *out);
          fg_axpy(acc, 1.5f, ref, n);
          fg_dropout_rows_x16_axpy(out, 1.5f, x, x16, map, rows, cols, ps[pi], 4, 2, 0, ids, 0);
          cases++;
          if (!bits_equal(out, acc, n) && bad++ < 5)
            fprintf(stderr, "  x16 rows added %lldx%lld p=%g from16=%d threads=%d differs\n",
                    (long long)rows, (long long)cols, (double)ps[pi], from16, t);
        }
      }
    }
    /* the rounding is really applied: an input with low bits set reads as its rounded value */
    if (n > 8) {
      fg_dropout_rows_x16(out, NULL, in, NULL, NULL, rows, cols, 0.0f, 4, 2, 0, ids, 0);
      EXPECT(!bits_equal(out, in, n) && bits_equal(out, rin, n));
    }
    free(in);
    free(rin);
    free(acc);
    free(ref);
    free(out);
    free(map);
    free(ids);
    free(in16);
    free(out16);
  }
  kt_set_threads(saved);
  printf("  dropout of bf16 features: %d cases, %d differ from the reference\n", cases, bad);
  EXPECT_MSG(bad == 0, "%d bf16-feature dropout cases differ from the reference", bad);
}

static void test_column_blocks(void) {
  static const int64_t starts[] = {0, 1, 2, 3, 5, 130, 255, 256, 257, 300};
  const int64_t rows = 37, W = 520, n = rows * W;
  float *in = kt_alloc_f(n), *bias = kt_alloc_f(W), *full = kt_alloc_f(n);
  float *blk = kt_alloc_f(n), *ref = kt_alloc_f(n);
  int64_t *ids = malloc((size_t)rows * sizeof *ids);
  int cases = 0, bad = 0;
  if (!ids) exit(2);
  fg_test_fill(in, n, 901, -1.0f, 1.0f);
  fg_test_fill(bias, W, 902, -0.5f, 0.5f);
  for (int64_t r = 0; r < rows; r++) ids[r] = (r * 11 + 5) % rows + 40;
  fg_bias_relu_dropout(full, in, bias, rows, W, 1, 0.4f, 7, 3, 1, ids, 0);
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
    for (int64_t len = 1; len <= 261; len += 65) {
      const int64_t c0 = starts[i], w = FG_MIN(len, W - c0);
      for (int64_t r = 0; r < rows; r++)
        memcpy(blk + r * w, in + r * W + c0, (size_t)w * sizeof *in);
      fg_bias_relu_dropout_ref(ref, blk, bias + c0, rows, w, 1, 0.4f, 7, 3, 1, ids, c0);
      fg_bias_relu_dropout(blk, blk, bias + c0, rows, w, 1, 0.4f, 7, 3, 1, ids, c0);
      for (int64_t r = 0; r < rows; r++) {
        cases++;
        if (memcmp(blk + r * w, full + r * W + c0, (size_t)w * sizeof *blk) != 0 ||
            memcmp(ref + r * w, full + r * W + c0, (size_t)w * sizeof *blk) != 0) {
          if (bad++ < 5)
            fprintf(stderr, "  column block [%lld, %lld) row %lld differs from the whole\n",
                    (long long)c0, (long long)(c0 + w), (long long)r);
        }
      }
    }
  }
  printf("  column blocks: %d rows, %d differ from the whole matrix's mask\n", cases, bad);
  EXPECT_MSG(bad == 0, "%d column-block rows differ", bad);
  free(in);
  free(bias);
  free(full);
  free(blk);
  free(ref);
  free(ids);
}

int main(void) {
  test_forward();
  test_column_blocks();
  test_rows();
  test_rows_x16();
  test_backward();
  test_masked_bf16();
  test_masked_bias_bf16();
  return fg_test_finish("kernels_fused");
}
