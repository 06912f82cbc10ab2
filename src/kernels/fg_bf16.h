/* fg_bf16.h -- bfloat16 storage and the kernels that `--precision bf16` runs on (bf16.c).
 *
 * A bf16 value is the upper 16 bits of an fp32 (sign, 8 exponent bits, 7 mantissa bits),
 * stored as uint16_t. Every kernel here reads bf16 and accumulates in fp32; weights and
 * outputs stay fp32. Dense matrices are row-major with an explicit leading dimension in
 * elements, as in fg_kernels.h.
 *
 * Rounding fp32 -> bf16 (one rule on every path and every CPU, so a rank with the AVX512_BF16
 * instruction and one without store the same bits):
 *   - round to nearest, ties to even; a finite value past the largest bf16 becomes +-inf;
 *   - +-inf stays +-inf; a NaN stays NaN with its sign, made quiet (bit 0x0040 set) and its
 *     payload cut to the upper 6 bits;
 *   - an fp32 denormal (zero exponent) becomes a zero of the same sign, as vcvtneps2bf16 does
 *     (it reads denormal inputs as zero whatever MXCSR says); -0 stays -0.
 * bf16 -> fp32 is exact (a shift).
 *
 * The bf16 path (fg_bf16_set_path) chooses how the GEMMs run:
 *   native   oneDNN's bf16 matmul (vdpbf16ps, fp32 accumulation) and the AVX512_BF16
 *            conversion instruction; only where the build has oneDNN and the CPU has bf16
 *            dot products (fg_bf16_native_available);
 *   convert  bf16 -> fp32 into blocks of rows, then the library's fp32 sgemm (OpenBLAS): any
 *            build, any CPU; the conversions are portable C.
 * Both compute on the same bf16-rounded inputs with fp32 accumulation, so they agree within
 * the accumulation tolerance (tests/kernels/test_bf16.c states it), not bit for bit: the
 * summation orders differ. Each path is deterministic at a fixed thread count.
 */
#ifndef FG_BF16_H
#define FG_BF16_H

#include <stdint.h>
#include <string.h>

#include "kernels/fg_kernels.h"

typedef uint16_t fg_bf16;

typedef enum fg_bf16_path { FG_BF16_NATIVE = 0, FG_BF16_CONVERT = 1 } fg_bf16_path;

/* One value, by the rule above (the conversions below give the same bits on both paths). */
static inline fg_bf16 fg_bf16_from_float(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  const uint32_t exp = u & 0x7f800000u;
  /* ties to even; a carry into the exponent (up to inf) is right */
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  /* inf stays inf; NaN: keep sign and top payload, set the quiet bit */
  const uint32_t special = (u >> 16) | ((u & 0x007fffffu) ? 0x0040u : 0u);
  const uint32_t zero = (u >> 16) & 0x8000u; /* zero or denormal: signed zero */
  /* selects, not branches: the conversion loops vectorize */
  return (fg_bf16)(exp == 0x7f800000u ? special : exp == 0 ? zero : rounded);
}
static inline float fg_bf16_to_float(fg_bf16 h) {
  const uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* dst[i] = bf16(src[i]) for i < n (AVX512_BF16 instruction on the native path where the build
 * targets it, portable C otherwise: the same bits). OpenMP over blocks when n is large. */
void fg_bf16_from_f32(fg_bf16 *dst, const float *src, int64_t n);
/* dst[i] = src[i] exactly. */
void fg_bf16_to_f32(float *dst, const fg_bf16 *src, int64_t n);
/* y[i] += a * x[i] with x as bf16 (widened): bitwise fg_axpy on fg_bf16_to_f32's copy of x,
 * without the copy (GIN's (1 + eps) D term on a D stored as bf16). */
void fg_axpy_bf16(float *y, float a, const fg_bf16 *x, int64_t n);

/* ---- path ------------------------------------------------------------------------------ */
/* 1 when this build has oneDNN and the CPU runs bf16 dot products (oneDNN's effective ISA
 * includes avx512_core_bf16). */
int fg_bf16_native_available(void);
/* The path in force: native where available, else convert, unless set here or by the
 * environment variable FULLGRAPH_BF16_PATH=native|convert (read at the first call; a bad
 * value or native where unavailable is reported on stderr once and ignored). */
fg_bf16_path fg_bf16_get_path(void);
/* FG_ERR_UNSUPPORTED (native here unavailable: the message says why), else FG_OK. */
fg_status fg_bf16_set_path(fg_bf16_path path);
/* "native" or "convert" -> path; FG_ERR_INVALID_ARG for any other name. */
fg_status fg_bf16_path_parse(const char *name, fg_bf16_path *path);
const char *fg_bf16_path_name(fg_bf16_path path);
/* --precision: "fp32" (or NULL) -> 0, "bf16" -> 1; FG_ERR_INVALID_ARG naming the values else. */
fg_status fg_precision_parse(const char *name, int *bf16);
/* One line for `fullgraph --version`: the path this build and CPU run by default and what it
 * runs on, e.g. "native (oneDNN 2.6.3 bf16 matmul, avx512_core_bf16)". */
const char *fg_bf16_describe(void);
/* Free the cached oneDNN primitives (tests call it so that leak checkers see a clean exit). */
void fg_bf16_release(void);

/* ---- GEMMs (fp32 accumulation, fp32 output) -------------------------------------------- */
/* The layer product: C[n x m] = A[n x k] W[k x m] (accumulate == 0) or C += A W, with A bf16
 * activations and W fp32 master weights rounded to bf16 once per call. n, k, m >= 0; k == 0
 * gives zeros (C unchanged when accumulating). Not from inside an OpenMP parallel region (it
 * runs its own threads). FG_ERR_NOMEM, or FG_ERR_UNSUPPORTED if oneDNN refuses the shape. */
fg_status fg_bf16_gemm_tall(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                            const float *W, int64_t ldw, float *C, int64_t ldc, int accumulate);
/* The weight gradient: dW[k x m] = A^T[k x n] G[n x m] (or +=), A and G bf16, n large. */
fg_status fg_bf16_gemm_wgrad(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                             const fg_bf16 *G, int64_t ldg, float *dW, int64_t ldw,
                             int accumulate);
/* The same two products on fp32 activations (A, and G), each read rounded to bf16 by the rule
 * above: the bits of rounding the whole operand with fg_bf16_from_f32 and calling the bf16
 * product on the convert path (within the accumulation tolerance on the native path, which
 * then sums the rows in blocks). The rounding is done a block of rows at a time into a buffer
 * of the call's own (4096 rows, fewer where k + m > 512: at most 8 MiB of fp32 operands, at
 * least 256 rows; on the native path at least 2048 rows a thread within 64 MiB, since
 * oneDNN's bf16 matmul runs short blocks at a fraction of its rate), so no rounded copy of an
 * operand is kept beyond a block: a call allocates at most
 * fg_bf16_gemm_scratch_bytes(n, k, m) and frees it before it returns. */
fg_status fg_bf16_gemm_tall_f32(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                const float *W, int64_t ldw, float *C, int64_t ldc,
                                int accumulate);
fg_status fg_bf16_gemm_wgrad_f32(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                 const float *G, int64_t ldg, float *dW, int64_t ldw,
                                 int accumulate);
int64_t fg_bf16_gemm_scratch_bytes(int64_t n, int64_t k, int64_t m);
/* The layer product stored as bf16: C[n x m] (ldc) = A W as fg_bf16_gemm_tall_f32 computes it,
 * each fp32 sum rounded to bf16 (fg_bf16_from_f32) as it is written: the bits of that product
 * rounded afterwards, without its fp32 copy. A block of rows of the fp32 product at a time in
 * the call's own scratch (with the operands' blocks, fg_bf16_gemm_scratch_bytes(n, k, m)). */
fg_status fg_bf16_gemm_tall_f32_16(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                   const float *W, int64_t ldw, fg_bf16 *C, int64_t ldc);
/* The same with A stored as bf16 (a gradient stored so, times a weight's transpose): the bits
 * of fg_bf16_gemm_tall's product rounded on the convert path (within the accumulation bound on
 * the native path, which then multiplies in row blocks). */
fg_status fg_bf16_gemm_tall_16(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                               const float *W, int64_t ldw, fg_bf16 *C, int64_t ldc);
/* The weight gradient with A fp32 (rounded as it is read) and G stored as bf16. */
fg_status fg_bf16_gemm_wgrad_fh(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                const fg_bf16 *G, int64_t ldg, float *dW, int64_t ldw,
                                int accumulate);
/* The weight gradient with A stored as bf16 and G fp32 (rounded as it is read, as above). */
fg_status fg_bf16_gemm_wgrad_hf(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                                const float *G, int64_t ldg, float *dW, int64_t ldw,
                                int accumulate);
/* References: plain loops over the bf16 values (W rounded as above), every sum in double and
 * rounded once to fp32 (accumulating adds the old C in that double). */
void fg_bf16_gemm_tall_ref(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                           const float *W, int64_t ldw, float *C, int64_t ldc, int accumulate);
void fg_bf16_gemm_wgrad_ref(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                            const fg_bf16 *G, int64_t ldg, float *dW, int64_t ldw,
                            int accumulate);

/* A consumer of a product's rows as they are completed: rows [r0, r0 + rows) of the fp32
 * result in blk (rows x cols, row length cols: the producer's staging, which the sink may
 * overwrite, e.g. to add another product's rows), called in row order from the calling thread,
 * outside any parallel region (it may run its own). What an epilogue fused into a producer
 * takes: the next layer's bias, ReLU and dropout, or backward's mask, each rounding into a
 * bf16 matrix, so that no fp32 copy of the whole result is stored. */
typedef void (*fg_rows_sink)(void *ctx, int64_t r0, int64_t rows, float *blk);
/* The layer product A W (A bf16, or Af fp32 rounded as it is read: exactly one of them) handed
 * to sink a block of rows at a time: the blocks, and each block's bits, of
 * fg_bf16_gemm_tall_16 (which is this with a sink that rounds into C), in the call's own
 * scratch (fg_bf16_gemm_scratch_bytes(n, k, m)). */
fg_status fg_bf16_gemm_tall_rows(int64_t n, int64_t k, int64_t m, const fg_bf16 *A,
                                 const float *Af, int64_t lda, const float *W, int64_t ldw,
                                 fg_rows_sink sink, void *ctx);
/* The same for A W + A2 W2 (A2 bf16, or A2f fp32; both k columns, W2 k x m): each block's
 * second product added onto its first as fg_bf16_gemm_tall(..., accumulate 1) adds it, so the
 * bits of those two calls over the whole rows. */
fg_status fg_bf16_gemm_tall_rows2(int64_t n, int64_t k, int64_t m, const fg_bf16 *A,
                                  const float *Af, int64_t lda, const float *W, int64_t ldw,
                                  const fg_bf16 *A2, const float *A2f, int64_t lda2,
                                  const float *W2, int64_t ldw2, fg_rows_sink sink, void *ctx);
/* The rows of the blocks the tall products above cut n rows into (the last may be shorter): a
 * caller that adds a product's rows to another result a block at a time runs it on these
 * blocks, so that its bits are the whole product's. */
int64_t fg_bf16_gemm_block_rows(int64_t n, int64_t k, int64_t m);

/* ---- SpMM on bf16 rows ------------------------------------------------------------------- */
/* Y[nrows x f] = A X (accumulate == 0) or Y += A X, A CSR with fp32 values, X bf16 rows (ldx),
 * Y fp32 (ldy). Each row is summed by one thread in nonzero order with a separate multiply and
 * add in fp32 (the old Y added last), so the result is bitwise fg_spmm_bf16_ref's at any
 * thread count; rows go to threads in ranges of equal nonzeros + rows, as fg_spmm's. */
void fg_spmm_bf16(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, int64_t ldy,
                  int64_t f, int accumulate);
void fg_spmm_bf16_ref(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, int64_t ldy,
                      int64_t f, int accumulate);
/* fg_spmm_bf16 in row chunks of about chunk_bytes of gathers each (a nonzero gathers 2f bytes),
 * calling between(ctx) after every chunk but the last until it returns nonzero, after which the
 * remaining rows run as one call: fg_spmm_chunked's contract on bf16 rows, bitwise
 * fg_spmm_bf16's at any chunk size and thread count (a row is summed by one thread in nonzero
 * order whichever chunk holds it). between == NULL: one call. */
void fg_spmm_bf16_chunked(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, int64_t ldy,
                          int64_t f, int accumulate, int64_t chunk_bytes,
                          int (*between)(void *ctx), void *ctx);
/* The same sums stored as bf16 (Y[nrows x f], ldy): each fp32 row sum rounded once by the rule
 * above, for an aggregation whose result is the next bf16 GEMM's input. Bitwise
 * fg_bf16_from_float of fg_spmm_bf16's output (and fg_spmm_bf16_out_ref's). */
void fg_spmm_bf16_out(const fg_csr *A, const fg_bf16 *X, int64_t ldx, fg_bf16 *Y, int64_t ldy,
                      int64_t f);
void fg_spmm_bf16_out_ref(const fg_csr *A, const fg_bf16 *X, int64_t ldx, fg_bf16 *Y,
                          int64_t ldy, int64_t f);

#endif /* FG_BF16_H */
