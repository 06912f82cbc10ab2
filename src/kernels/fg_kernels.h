/* fg_kernels.h -- compute kernels. Each hot kernel exists twice: a frozen reference
 * (`_ref`, plain loops, the definition of correct) and a tuned version that tests compare
 * against it. Dense matrices are row-major float32 with an explicit leading dimension.
 * OpenMP lives here (and in a few graph builders) only; schedules are static over explicit
 * ranges, so a run with a fixed thread count is bitwise repeatable.
 */
#ifndef FG_KERNELS_H
#define FG_KERNELS_H

#include <stdint.h>

#include "core/fg_core.h"

/* Sparse matrix in CSR with 64-bit row offsets and 32-bit (local) column ids. */
typedef struct fg_csr {
  int64_t nrows, ncols;
  int64_t nnz;
  int64_t *rowptr; /* (nrows + 1) */
  int32_t *col;    /* (nnz) sorted within each row */
  float *val;      /* (nnz), NULL means all ones */
} fg_csr;

void fg_csr_free(fg_csr *A);
/* B = A^T (allocates B's arrays; columns within rows of B come out sorted). */
fg_status fg_csr_transpose(const fg_csr *A, fg_csr *B);

/* ---- SpMM: Y (nrows x f) = A (nrows x ncols) * X (ncols x f) ------------------ */
void fg_spmm_ref(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f);
void fg_spmm(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f);
/* The bytes an SpMM of width f must move at least: A's indices and values (4 + 4 a nonzero),
 * the rows it gathers (esz bytes an element: 4 fp32, 2 bf16) and the rows it writes (out_esz
 * bytes): what the schemes' spmm_bytes counts and `bench spmm`'s GB/s divide. */
double fg_spmm_min_bytes(const fg_csr *A, int64_t f, double esz, double out_esz);
/* Same but Y += A X (accumulate). */
void fg_spmm_acc(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f);
/* Y = A X (accumulate == 0) or Y += A X, in row chunks of about chunk_bytes of memory traffic
 * each (a nonzero gathers 4f bytes, a row writes 4f), calling between(ctx) after every chunk but
 * the last until it returns nonzero, after which the remaining rows run as one call. A row is
 * summed by one thread in nonzero order whichever chunk holds it, so the result is bitwise
 * fg_spmm's (fg_spmm_acc's) at any chunk size and thread count. It exists so that a caller
 * can progress nonblocking MPI transfers while an SpMM runs (fg_scheme_spmm_progress); the
 * kernel itself knows nothing of MPI. between == NULL: one call, as fg_spmm. */
void fg_spmm_chunked(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                     int64_t f, int accumulate, int64_t chunk_bytes, int (*between)(void *ctx),
                     void *ctx);

/* ---- GEMM: C (m x n) = alpha op(A) op(B) + beta C, row-major ------------------ */
void fg_gemm_ref(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                 int64_t ldc);
void fg_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
             int64_t ldc);
/* Which library fg_gemm calls: AUTO the fixed rule on the shape (dense.c says why), or one
 * library for every product. Set by fg_gemm_set_lib or, at the first call, FULLGRAPH_GEMM. */
typedef enum fg_gemm_lib { FG_GEMM_AUTO = 0, FG_GEMM_OPENBLAS = 1, FG_GEMM_ONEDNN = 2 } fg_gemm_lib;
const char *fg_gemm_lib_name(fg_gemm_lib lib);
fg_status fg_gemm_lib_parse(const char *name, fg_gemm_lib *lib);
/* FG_ERR_UNSUPPORTED for ONEDNN in a build without oneDNN. */
fg_status fg_gemm_set_lib(fg_gemm_lib lib);
fg_gemm_lib fg_gemm_get_lib(void);
int fg_gemm_onednn_available(void);
/* The auto rule: 1 when fg_gemm sends this product (op(A) m x k, op(B) k x n) to oneDNN. */
int fg_gemm_rule_onednn(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k);
/* "auto (oneDNN 2.6.3 dnnl_sgemm or OpenBLAS Haswell, by shape)" and the like. */
const char *fg_gemm_describe(void);

/* ---- elementwise (n = rows * cols contiguous elements) -------------------------- */
void fg_relu_forward(float *out, const float *in, int64_t n);           /* out may == in */
void fg_relu_backward(float *din, const float *dout, const float *out, int64_t n); /* din may == dout */
/* y += a x */
void fg_axpy(float *y, float a, const float *x, int64_t n);
/* sum_i x[i] y[i] in double, in an order fixed by n alone (the same for every thread count) */
double fg_dot(const float *x, const float *y, int64_t n);
/* out[r][c] = in[r][c] + bias[c] */
void fg_bias_add(float *x, const float *bias, int64_t rows, int64_t cols);
/* dbias[c] = sum_r dy[r][c] (overwrites dbias); deterministic summation order */
void fg_bias_backward(float *dbias, const float *dy, int64_t rows, int64_t cols);

/* Inverted dropout: keep with probability 1-p, scale kept values by 1/(1-p). The mask for
 * element (r, c) is a pure function of (seed, epoch, layer, global_ids[r], c), so it does not
 * depend on how rows are split among ranks. global_ids == NULL means global id = r. */
void fg_dropout_forward(float *out, const float *in, int64_t rows, int64_t cols, float p,
                        uint64_t seed, uint64_t epoch, uint64_t layer, const int64_t *global_ids);
/* din = dout * mask / (1-p), the same mask as forward (out may alias in). */
void fg_dropout_backward(float *din, const float *dout, int64_t rows, int64_t cols, float p,
                         uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids);
void fg_dropout_forward_ref(float *out, const float *in, int64_t rows, int64_t cols, float p,
                            uint64_t seed, uint64_t epoch, uint64_t layer,
                            const int64_t *global_ids);
/* The reference on a column block: local column c is global column col0 + c of the rows'
 * masks (a rank that holds columns [col0, col0 + cols) draws the one-process mask). */
void fg_dropout_cols_ref(float *out, const float *in, int64_t rows, int64_t cols, float p,
                         uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids, int64_t col0);

/* Masked softmax cross-entropy over rows with select[r] != 0 and labels[r] >= 0.
 * Returns the SUM of -log p(label) over those rows (double); counts them in *count and the
 * correctly classified ones (argmax, ties to the lowest class) in *correct.
 * If dlogits != NULL writes d(sum * scale)/dlogits for every row (zero for rows not
 * selected). */
double fg_softmax_xent(const float *logits, int64_t rows, int64_t classes, const int32_t *labels,
                       const uint8_t *select, float scale, float *dlogits, int64_t *count,
                       int64_t *correct);
double fg_softmax_xent_ref(const float *logits, int64_t rows, int64_t classes,
                           const int32_t *labels, const uint8_t *select, float scale,
                           float *dlogits, int64_t *count, int64_t *correct);

/* The same loss on a column block [col0, col0 + cols) of logits whose rows are split over
 * ranks by columns, in three steps with a reduction over the split after each of the first
 * two: the row maxima with their global columns (ties to the lowest column), the row sums of
 * exp(z - max) given the reduced maxima (both only of rows with select[r] != 0 when select is
 * not NULL: the others get no statistics and must not be selected later), then the gradient of every selected row's block
 * (scale (softmax - onehot)) and, when count_rows, the loss and counts of the selected rows
 * whose label falls in the block (each row counts on exactly one rank when the blocks cut the
 * classes and one replica counts). On a whole row (col0 0, cols the classes) the three equal
 * fg_softmax_xent bit for bit. */
void fg_xent_block_max(const float *logits, int64_t rows, int64_t cols, int64_t col0,
                       const uint8_t *select, fg_maxloc *mx);
void fg_xent_block_expsum(const float *logits, int64_t rows, int64_t cols, const fg_maxloc *mx,
                          const uint8_t *select, double *sum);
/* Whole rows (no split): both statistics in one sweep, the same values as the two kernels. */
void fg_xent_row_stats(const float *logits, int64_t rows, int64_t cols, const uint8_t *select,
                       fg_maxloc *mx, double *sum);
double fg_xent_block_finish(const float *logits, int64_t rows, int64_t cols, int64_t col0,
                            const int32_t *labels, const uint8_t *select, const fg_maxloc *mx,
                            const double *sum, float scale, float *dlogits, int count_rows,
                            int64_t *count, int64_t *correct);

/* Masked sigmoid binary cross-entropy of multi-label logits: a column block [col0, col0 +
 * cols) of rows x T logits (cols = T, col0 = 0: whole rows) against targets (rows x T int8,
 * row-major, whole rows: 1 positive, 0 negative, -1 missing). A pair (r, t) counts when
 * select[r] != 0 (select NULL: every row) and its target is not missing. Per pair, with z the
 * logit and y the target, the loss is the stable softplus form
 *   max(z, 0) - z y + log1p(exp(-|z|))        (= -y log s(z) - (1 - y) log(1 - s(z)))
 * and its gradient s(z) - y (s the logistic sigmoid). Returns the SUM of the loss over the
 * counted pairs (double accumulation); if dlogits != NULL writes scale * gradient for every
 * pair of the block (0 for a missing target or a row not selected). When count_pairs, the
 * counts below are filled (each pair counted once when the blocks cut the tasks and one
 * replica counts); otherwise the loss is 0 and the counts stay 0. A pair is predicted
 * positive when z > 0. */
typedef struct fg_bce_counts {
  int64_t pairs;   /* (node, task) pairs counted */
  int64_t correct; /* predicted as the target */
  int64_t tp, fp, fn;
} fg_bce_counts;
double fg_sigmoid_bce(const float *logits, int64_t rows, int64_t cols, int64_t col0,
                      const int8_t *targets, int64_t tasks, const uint8_t *select, float scale,
                      float *dlogits, int count_pairs, fg_bce_counts *counts);
/* The frozen reference: one sequential loop, every term in double. */
double fg_sigmoid_bce_ref(const float *logits, int64_t rows, int64_t cols, int64_t col0,
                          const int8_t *targets, int64_t tasks, const uint8_t *select,
                          float scale, float *dlogits, int count_pairs, fg_bce_counts *counts);

/* ---- fused elementwise passes (fused.c) ---------------------------------------------- */
/* out = dropout(act(in + bias)) in one sweep: bias (cols) may be NULL; act is ReLU when relu
 * != 0 (as fg_relu_forward), else identity; dropout as fg_dropout_cols_ref with the same mask
 * keys (local column c is global column col0 + c: a column block of a wider matrix draws its
 * part of the one-process mask), none when p == 0. out may equal in. Bitwise equal to
 * fg_bias_relu_dropout_ref, the composition of the reference passes. */
void fg_bias_relu_dropout(float *out, const float *in, const float *bias, int64_t rows,
                          int64_t cols, int relu, float p, uint64_t seed, uint64_t epoch,
                          uint64_t layer, const int64_t *global_ids, int64_t col0);
void fg_bias_relu_dropout_ref(float *out, const float *in, const float *bias, int64_t rows,
                              int64_t cols, int relu, float p, uint64_t seed, uint64_t epoch,
                              uint64_t layer, const int64_t *global_ids, int64_t col0);
/* The same written as bfloat16 (its bits, fg_bf16, by fg_bf16.h's rule) in the same sweep, out
 * apart from in: a bf16-stored activation without a pass of its own. Bitwise equal to
 * fg_bias_relu_dropout, then fg_bf16_from_f32. */
void fg_bias_relu_dropout_bf16(uint16_t *out, const float *in, const float *bias, int64_t rows,
                               int64_t cols, int relu, float p, uint64_t seed, uint64_t epoch,
                               uint64_t layer, const int64_t *global_ids, int64_t col0);
/* out row r = dropout(in row in_rows[r]) (row r when in_rows is NULL), the mask keyed by
 * global_ids[r] as fg_dropout_forward; a plain gather when p == 0. out must not overlap in.
 * The input layer of a model whose rows were reordered reads the features in their stored
 * order through in_rows instead of keeping a permuted copy. Bitwise equal to
 * fg_dropout_rows_ref (gather, then the reference dropout). */
void fg_dropout_rows(float *out, const float *in, const int64_t *in_rows, int64_t rows,
                     int64_t cols, float p, uint64_t seed, uint64_t epoch, uint64_t layer,
                     const int64_t *global_ids, int64_t col0);
/* The same rounded to bfloat16 (its bits, fg_bf16, by fg_bf16.h's rule) in the same pass: no
 * fp32 copy of the output is stored. Bitwise equal to fg_dropout_rows, then fg_bf16_from_f32. */
void fg_dropout_rows_bf16(uint16_t *out, const float *in, const int64_t *in_rows, int64_t rows,
                          int64_t cols, float p, uint64_t seed, uint64_t epoch, uint64_t layer,
                          const int64_t *global_ids, int64_t col0);
/* The layer-0 input under --precision bf16, where the features count as bf16(X): out row r =
 * dropout(bf16(X) row in_rows[r]), X's rows read as bf16 (its bits) from in16 or, where in16 is
 * NULL, rounded from the fp32 in as they are read (a dataset's array, borrowed in place). The
 * result goes to out (fp32), or with out NULL to out16, rounded in the same pass. Bitwise equal
 * to widening bf16(X), then fg_dropout_rows (then fg_bf16_from_f32). */
void fg_dropout_rows_x16(float *out, uint16_t *out16, const float *in, const uint16_t *in16,
                         const int64_t *in_rows, int64_t rows, int64_t cols, float p,
                         uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids, int64_t col0);
/* y += alpha * (fg_dropout_rows_x16's rows), without storing them: bitwise fg_dropout_rows_x16
 * into a buffer, then fg_axpy (GIN's (1 + eps) D_0 term where D_0 is kept only as bf16). */
void fg_dropout_rows_x16_axpy(float *y, float alpha, const float *in, const uint16_t *in16,
                              const int64_t *in_rows, int64_t rows, int64_t cols, float p,
                              uint64_t seed, uint64_t epoch, uint64_t layer,
                              const int64_t *global_ids, int64_t col0);
void fg_dropout_rows_ref(float *out, const float *in, const int64_t *in_rows, int64_t rows,
                         int64_t cols, float p, uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids, int64_t col0);
/* g[i] = d[i] > 0 ? g[i] * scale : 0: the backward of dropout (scale 1 / (1 - p)) and ReLU
 * together, read off the stored output d = dropout(relu(z)), which is positive exactly where
 * the element was kept and positive. With scale 1 it is fg_relu_backward in place. */
void fg_masked_scale(float *g, const float *d, int64_t n, float scale);
/* The same with d stored as bfloat16 (its bits, fg_bf16): the mask of the rounded output, which
 * is what every reader of a bf16-stored activation saw (a positive fp32 denormal rounds to
 * zero and is masked). */
void fg_masked_scale_bf16(float *g, const uint16_t *d, int64_t n, float scale);
/* The same pass storing its result as bf16, with the bias gradient of that result taken on
 * the way: g16[i] = bf16(v_i), v_i = d[i] > 0 ? g[i] * scale : 0 (g, d rows x cols), and, when
 * dbias is not NULL, dbias = fg_bias_backward of the fp32 v, bit for bit (the same row blocks,
 * summed in the same order). g16 may be d itself (the dZ of a layer stored over the activation
 * whose mask it is: each element's mask is read before it is written); g must not overlap
 * g16. One parallel pass over the blocks of rows. */
void fg_masked_scale_bias_bf16(uint16_t *g16, const float *g, const uint16_t *d, int64_t rows,
                               int64_t cols, float scale, float *dbias);
/* The same pass over rows [r0, r0 + rows) of g16 and d, their g in a block of its own (g row i
 * is row r0 + i; it must not overlap g16), for a producer that completes the rows a block at a
 * time (fg_rows_sink): the bias blocks' column sums go to part (fg_bias_blocks(n) x cols
 * doubles for the n rows of every call; NULL: no bias gradient), a block's sums zeroed where
 * its first row is and added to in row order, so calls over consecutive row ranges covering
 * [0, n) leave the sums fg_masked_scale_bias_bf16 makes, which fg_bias_sum_blocks turns into
 * its dbias bit for bit. */
/* part's length in doubles for rows x cols (fg_masked_scale_bias_bf16_rows), and the bias
 * gradient (cols) from a part those calls filled. */
int64_t fg_bias_part_len(int64_t rows, int64_t cols);
void fg_bias_from_parts(float *dbias, const double *part, int64_t rows, int64_t cols);
void fg_masked_scale_bias_bf16_rows(uint16_t *g16, const float *g, const uint16_t *d, int64_t r0,
                                    int64_t rows, int64_t cols, float scale, double *part);

/* ---- quantized messages (quant.c) ------------------------------------------------------ */
/* Each of rows x cols values becomes a `bits`-bit code (bits 2, 4 or 8): per row zero = its
 * minimum and scale = (max - min) / (2^bits - 1) (0 for a constant row, which dequantizes to
 * itself exactly), code = floor((x - zero) / scale + u) clamped to [0, 2^bits - 1] with u
 * uniform in [0, 1) drawn from (seed, FG_RNG_QUANTIZE, key, row id, column), so that zero +
 * scale * code is x in expectation (stochastic rounding). row_ids (NULL: 0..rows-1) name the
 * rows, so the codes do not depend on the rows' order or the thread count; the caller folds
 * what else distinguishes a message (epoch, layer, direction, sender) into key. Codes are
 * packed 8 / bits a byte, the first column in the low bits, fg_quant_row_bytes a row. Rows must
 * be finite. */
int64_t fg_quant_row_bytes(int64_t cols, int bits);
void fg_quantize_rows(const float *x, int64_t rows, int64_t cols, int bits, uint64_t seed,
                      uint64_t key, const int64_t *row_ids, uint8_t *codes, float *scale,
                      float *zero);
void fg_dequantize_rows(const uint8_t *codes, const float *scale, const float *zero,
                        int64_t rows, int64_t cols, int bits, float *out);
void fg_quantize_rows_ref(const float *x, int64_t rows, int64_t cols, int bits, uint64_t seed,
                          uint64_t key, const int64_t *row_ids, uint8_t *codes, float *scale,
                          float *zero);
void fg_dequantize_rows_ref(const uint8_t *codes, const float *scale, const float *zero,
                            int64_t rows, int64_t cols, int bits, float *out);

/* ---- optimizer ---------------------------------------------------------------- */
typedef struct fg_adam_params {
  float lr, beta1, beta2, eps;
} fg_adam_params;
/* One Adam step (PyTorch semantics: L2 weight decay added to the gradient, bias-corrected
 * moments). t is the 1-based step count. */
void fg_adam_step(float *param, const float *grad, float *m, float *v, int64_t n,
                  fg_adam_params p, float weight_decay, int64_t t);
void fg_adam_step_ref(float *param, const float *grad, float *m, float *v, int64_t n,
                      fg_adam_params p, float weight_decay, int64_t t);

/* Glorot (Xavier) uniform: W (fan_in x fan_out) ~ U(-a, a), a = sqrt(6 / (fan_in + fan_out)),
 * element (i, j) a pure function of (seed, layer, i, j). */
void fg_glorot_init(float *W, int64_t fan_in, int64_t fan_out, uint64_t seed, uint64_t layer);
/* A piece of the same matrix: out[k] = element e0 + k (row-major) of the block with `cols`
 * columns whose first element is (row0, col0): the very values fg_glorot_init gives there. */
void fg_glorot_init_piece(float *out, int64_t fan_in, int64_t fan_out, int64_t row0,
                          int64_t col0, int64_t cols, int64_t e0, int64_t len, uint64_t seed,
                          uint64_t layer);

/* ---- LayerNorm (norm.c) ---------------------------------------------------------------- */
/* y = gamma (z - mean) / sqrt(var + eps) + beta over each row of W columns, in phases over this
 * rank's w of them, the caller summing each phase's per-row partials over the column split:
 *   fg_ln_row_sums(z, center NULL) -> s: sum of the row;  fg_ln_stats(second 0) -> mean
 *   fg_ln_row_sums(z, center mean) -> s: sum of squared deviations;  fg_ln_stats(1) -> rstd
 *   fg_ln_forward: xhat = (z - mean) rstd kept for backward; z becomes y (gamma, beta: this
 *     rank's w columns)
 * Backward, dy (n x w) in, dz out in place: a (2n) = the row partials of sum(dy gamma) and
 * sum(dy gamma xhat) (fg_ln_backward_sums), summed over the split, then fg_ln_backward; the
 * gradients of gamma and beta are the column sums of dy xhat and dy (fg_ln_param_grads, with
 * an n x w scratch; call it before fg_ln_backward overwrites dy). */
#define FG_LN_EPS 1e-5 /* PyTorch's LayerNorm default */
void fg_ln_row_sums(const float *z, int64_t n, int64_t w, const double *center, double *s);
void fg_ln_stats(const double *s, int64_t n, int64_t W, int second, double *mean, double *rstd);
void fg_ln_forward(float *z, float *xhat, int64_t n, int64_t w, const double *mean,
                   const double *rstd, const float *gamma, const float *beta);
void fg_ln_backward_sums(const float *dy, const float *xhat, const float *gamma, int64_t n,
                         int64_t w, double *a);
void fg_ln_backward(float *dy, const float *xhat, const float *gamma, const double *a,
                    const double *rstd, int64_t n, int64_t w, int64_t W);
void fg_ln_param_grads(const float *dy, const float *xhat, int64_t n, int64_t w, float *scratch,
                       float *dgamma, float *dbeta);
/* Reference: the whole rows at once in double: y, and for the upstream gradient dy, dz, dgamma
 * and dbeta. */
void fg_layernorm_ref(const float *z, int64_t n, int64_t W, const float *gamma,
                      const float *beta, const float *dy, float *y, float *dz, float *dgamma,
                      float *dbeta);

/* ---- BatchNorm (norm.c) ---------------------------------------------------------------- */
/* y = gamma (z - mean) / sqrt(var + eps) + beta with each column's mean and biased variance over
 * the N rows of the whole graph, in phases over this rank's n rows (of its w columns), the
 * caller summing each phase's per-column partials over the ranks that hold the other rows:
 *   fg_bn_col_sums(z, center NULL) -> s: column sums;  fg_bn_stats(second 0) -> mean
 *   fg_bn_col_sums(z, center mean) -> s: sums of squared deviations;  fg_bn_stats(1) -> rstd,
 *     and fg_bn_running folds the batch's mean and unbiased variance into the running ones
 *   fg_bn_forward: xhat = (z - mean) rstd kept for backward (may be NULL); z becomes y
 * An evaluation forward normalizes with the running statistics instead (fg_bn_eval_stats).
 * Backward, dy (n x w) in, dz out in place: a (2w) = the column partials of sum(dy) and
 * sum(dy xhat) (fg_bn_backward_sums; this rank's rows only, they are also the shift's and the
 * scale's gradients), summed over the rows' split, then fg_bn_backward. The column sums add
 * fixed blocks of FG_BN_BLOCK_ROWS rows in order: the same bits at any thread count. */
#define FG_BN_EPS 1e-5      /* PyTorch's BatchNorm defaults */
#define FG_BN_MOMENTUM 0.1
void fg_bn_col_sums(const float *z, int64_t n, int64_t w, const double *center, double *s);
void fg_bn_stats(const double *s, int64_t w, int64_t N, int second, double *mean, double *rstd);
void fg_bn_running(const double *mean, const double *sq, int64_t w, int64_t N, float *run_mean,
                   float *run_var);
void fg_bn_eval_stats(const float *run_mean, const float *run_var, int64_t w, double *mean,
                      double *rstd);
void fg_bn_forward(float *z, float *xhat, int64_t n, int64_t w, const double *mean,
                   const double *rstd, const float *gamma, const float *beta);
void fg_bn_backward_sums(const float *dy, const float *xhat, int64_t n, int64_t w, double *a);
void fg_bn_backward(float *dy, const float *xhat, const float *gamma, const double *a,
                    const double *rstd, int64_t n, int64_t w, int64_t N);
/* Reference: all N rows at once in double. training: the batch's statistics, y, and for the
 * upstream gradient dy, dz, dgamma and dbeta, and the running statistics updated; else y from
 * the running statistics (dy, dz, dgamma, dbeta unused). */
void fg_batchnorm_ref(const float *z, int64_t N, int64_t w, int training, const float *gamma,
                      const float *beta, float *run_mean, float *run_var, const float *dy,
                      float *y, float *dz, float *dgamma, float *dbeta);

/* Row-normalize (each row divided by its sum; zero rows stay zero). */
void fg_row_normalize(float *x, int64_t rows, int64_t cols);

/* STREAM-style triad a = b + s*c over n floats; returns bytes moved per call (3 * 4 * n). */
double fg_stream_triad(float *a, const float *b, const float *c, float s, int64_t n);

#endif /* FG_KERNELS_H */
