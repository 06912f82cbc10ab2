/* fg_model.h -- a stack of layers, written once against the scheme interface and run under every
 * scheme: local math (GEMMs, SpMMs through the scheme, elementwise passes) between calls of the
 * scheme's operations, which move every byte that crosses ranks. No MPI here.
 *
 * The stack: the model's layers, each one or more stack layers (a GIN layer is two: its
 * aggregation with a Linear, then a second Linear; fg_model_kind below); everything here counts
 * stack layers. A layer kind is a forward / backward pair over the model's buffers
 * (fg_layer_kind below); the GCN layer (layer_gcn.c) maps H_l (n x w_l) to H_{l+1} (n x w_{l+1}):
 *   D_l     = dropout(H_l)                      (training only)
 *   Z_l     = Â D_l W_l + b_l                   computed as Â (D_l W_l) or (Â D_l) W_l,
 *                                               whichever is cheaper for the widths
 *   H_{l+1} = relu(Z_l)   (the last layer keeps Z: the logits)
 * On a rank, each of these is the rank's part (fg_layer_shape: rows n_in / n_out and a column
 * block of each matrix). A scheme that splits columns (3d) aggregates first in every layer.
 *
 * Parameters: this rank's pieces, one buffer: per layer [W piece | b piece], then the learned
 * input features' piece; gradients and both Adam moments in buffers of the same layout, so the
 * optimizer is one loop and a gradient reduction one call. Under a 1D scheme the pieces are the
 * whole matrices, and the buffer is the one-process layout (W_0, b_0, W_1, b_1, ...); the
 * parameter index (fg_model_param_index) maps any rank's buffer to that layout for checkpoints.
 * When the scheme splits the weights, each forward gathers the whole blocks a rank multiplies
 * (W[l], b[l] point at them), and each backward reduces dW, db blocks into the pieces.
 *
 * Activations (MG-GCN §4.2): one buffer per layer output H[1..L], two scratch buffers shared by
 * every layer, forward and backward, and S[l] = Â D_l only for layers that aggregate first
 * (layer 0 usually; a hidden layer only when its width grows). A training forward leaves D_l in
 * H[l] for 0 < l < L (dropout is applied in place: backward needs D_l, and D_l > 0 exactly where
 * dropout kept a positive H_l, which is the mask of both backward passes); an evaluation
 * forward leaves H_l there. Under --precision bf16 an S[l] is stored as bf16 where its fp32
 * uses can borrow H[l + 1] (S16 below), and a hidden H[l] as bf16 where every reader of D_l
 * rounds it anyway and its producer needs no fp32 buffer of its size beside the two scratch
 * buffers (H16 below). With every hidden layer aggregating last that is L + 2 buffers of
 * n x width (L + 3 with the trainer's n x classes loss gradient). work_a is n x max(w_0, hidden)
 * (it takes dropout(H_0)), work_b n x max(hidden, classes). Backward may overwrite every H[l]
 * (l >= 1): the activations are dead after it until the next forward. Under bf16 with fused
 * epilogues (fg_model.fuse, fuse16.c: serial, GCN and SAGE) every hidden H[l] and D_0 are bf16, the
 * products hand their fp32 rows to the elementwise passes a block at a time, and one scratch
 * buffer of bf16 products remains: 2.75 buffers for GCN 3 x 128 against fp32's 5.25.
 */
#ifndef FG_MODEL_H
#define FG_MODEL_H

#include <stdint.h>

#include "core/fg_core.h"
#include "kernels/fg_bf16.h"
#include "kernels/fg_kernels.h"
#include "schemes/fg_scheme.h"

enum { FG_TIME_SPMM = 0, FG_TIME_GEMM, FG_TIME_OTHER, FG_TIME_COUNT };

typedef struct fg_model fg_model;

/* A layer kind: the math of one layer of the stack. forward reads its input d (n_in x w_in,
 * dropout already applied; NULL when it is stored as bf16 in m->H16[l], read through
 * fg_model_in32 and fg_model_gemm_in) and writes the pre-activation output to
 * fg_model_out(m, l, busy) (n_out x w_out: H[l + 1], or a scratch buffer when H[l + 1] is
 * stored as bf16).
 * backward takes dZ (n_out x w_out) and writes the layer's parameter gradients (the blocks
 * dW[l], db[l], and its scalars' partial sums in ds[l]) and, for l > 0, *dd = dD_l (n_in x
 * w_in) in a scratch buffer; at l = 0 with learned features it leaves dD_0's piece in the
 * features' gradient through the scheme's input_grad instead. A kind has `mats` weight
 * matrices of the layer's (w_l x w_{l+1}) shape (W[l] + k w_in w_out is matrix k's block) and
 * one bias. */
typedef struct fg_layer_kind {
  const char *name;
  int mats;
  int aggregates;          /* multiplies by the operator (0: a linear layer: rows only moved) */
  int self_term;           /* uses the scheme's move_rows (a term in the input's own rows) */
  int self_gemm;           /* its forward's moved rows feed only GEMMs, which read them rounded
                              to bf16: it moves them with fg_scheme_move_rows16 into M16 (or
                              fg_scheme_move_rows_bf16 into fp32 M; bf16 on 3d's wire under
                              --precision bf16); 0: with fg_scheme_move_rows, exact */
  int learn_features_ok;   /* the layer-0 input gradient is the scheme's input_grad (Âᵀ) */
  int agg_last_ok;         /* may multiply by the weights before aggregating (1D schemes) */
  int eps;                 /* has GIN's epsilon: a scalar parameter when it is learned */
  int dz16;                /* its backward takes dZ stored as bf16 (fg_model.dz16), its bias
                              gradient already taken (fg_model_backward's mask pass) */
  int fuse;                /* under fg_model.fuse its forward and backward take the fused path:
                              each result that feeds an elementwise pass is handed to it a block
                              of rows at a time (fuse16.c), so no fp32 matrix of a layer's size
                              is stored */
  int s_scratch;           /* aggregating first, its backward uses S's fp32 buffer
                              (fg_model_s_buf) as scratch: 1 always (SAGE), 2 with a learned
                              epsilon or moved rows (GIN); 0 never */
  fg_status (*forward)(fg_model *m, fg_scheme *s, int l, const float *d);
  fg_status (*backward)(fg_model *m, fg_scheme *s, int l, float *dz, float p, uint64_t seed,
                        uint64_t epoch, float **dd);
} fg_layer_kind;

extern const fg_layer_kind fg_layer_gcn;    /* layer_gcn.c */
extern const fg_layer_kind fg_layer_sage;   /* layer_sage.c */
extern const fg_layer_kind fg_layer_gin;    /* layer_gin.c: GIN's aggregation and first Linear */
extern const fg_layer_kind fg_layer_linear; /* layer_gin.c: a Linear (GIN's second) */

/* A model (what --model names): each of its layers is `stages` layers of the stack, of the
 * kinds stage[0..stages-1] (a GIN layer is its aggregation with the MLP's first Linear, then
 * its second Linear). The stack's widths repeat each model layer's output width once a stage
 * (fg_model_widths); dropout applies to a model layer's input (stage 0's), and every stack
 * layer but the last is followed by the norm and ReLU (GIN's MLP: Linear, norm, ReLU, Linear).
 * adj is the operator it aggregates with unless the run names another. */
enum { FG_MAX_STAGES = 2, FG_MAX_STACK = 64 * FG_MAX_STAGES /* 64 layers of any model */ };
typedef struct fg_model_kind {
  const char *name;
  fg_adj_spec adj;
  int stages;
  const fg_layer_kind *stage[FG_MAX_STAGES];
} fg_model_kind;

/* The model named `name` (NULL: gcn), or NULL when there is none. */
const fg_model_kind *fg_model_kind_find(const char *name);
/* The names, comma-separated, for messages. */
const char *fg_model_kind_names(void);

struct fg_model {
  const fg_model_kind *kind;
  const fg_layer_kind **kinds; /* (layers) each stack layer's kind */
  int norm;               /* fg_norm_kind */
  int residual;           /* residual connections (residual.c) */
  float gin_eps;          /* GIN's fixed epsilon (when not learned) */
  int layers;             /* stack layers: the model's layers times its stages */
  int64_t *widths;        /* (layers + 1): input, hidden..., classes */
  int *agg_first;         /* (layers) 1: (Â D) W; 0: Â (D W) */
  fg_layer_shape *shape;  /* (layers) this rank's part of every layer */
  int64_t n_params;       /* this rank's buffer */
  int64_t n_params_global; /* the one-process model's W and b count */
  float *params, *grads, *adam_m, *adam_v; /* (n_params) each */
  int64_t *poff;          /* (layers) offset of layer l's [W piece | b piece] */
  int64_t feat_off;       /* offset of the learned features' piece, or -1 */
  int64_t lp_off;         /* offset of the label embedding (classes x features, whole), or -1 */
  int32_t *lp_label;      /* (layer 0's n_in) the label a label node's input row embeds, or -1 */
  int dx0;                /* layer 0's backward goes on to its input's gradient dD_0 (label
                             propagation: the embedding's gradient) */
  float **W, **b, **dW, **db; /* (layers) the whole blocks the math uses: into params and grads,
                             or into wblk and gblk when the scheme splits the weights. A layer's
                             blocks: its kind's matrices (W[l] + k w_in w_out), then its vectors
                             over the output's columns: b[l], and with a norm its scale
                             b[l] + w_out and shift b[l] + 2 w_out (db likewise), and with
                             BatchNorm its running mean b[l] + 3 w_out and variance b[l] + 4 w_out
                             (state, not trained: their gradients are 0 and Adam skips them) */
  int *vecs;              /* (layers) vectors a layer has: 1, 3 with LayerNorm, 5 with BatchNorm
                             (fg_model_layer_vecs) */
  int *mats;              /* (layers) weight matrices: the kind's, and a residual projection
                             P as one more (fg_residual_proj) */
  float **Hres;           /* (layers + 1) a residual source's input H_l before dropout (and in
                             backward the gradient its residual passes back); NULL elsewhere,
                             and at l = 0 unless the features are read through a row map */
  float **Ares;           /* (layers) a residual block end's ReLU output, whose sign is the
                             ReLU's mask after the sum; else NULL */
  float **RM, **RT;       /* (layers) 3d: a residual hop's moved rows (n_out x w_in) and its
                             output (n_out x w_out); else NULL */
  int *scal;              /* (layers) scalars after the vectors (in the block and, whole, in
                             every rank's piece): GIN's learned epsilon, 1; else 0 */
  float **X;              /* (layers) a normed layer's normalized output (n_out x w_out), for
                             backward; else NULL */
  double **rstd;          /* (layers) and 1 / sqrt(var + eps) of its rows (LayerNorm, n_out) or
                             of its columns (BatchNorm, w_out) */
  double *ln_mean, *ln_part; /* LayerNorm: (n) row means and (2 n) row partial sums; BatchNorm:
                             (w) column means and (2 w) column partial sums; shared */
  float *wblk, *gblk;     /* gathered weight blocks and gradient blocks (split weights) */
  int64_t n;              /* rows of the last layer's output (the scheme's n_local) */
  float **H;              /* (layers + 1): H[0] = the layer-0 input (scheme features, or the
                             gathered learned features), H[L] logits; after a training forward
                             H[l] holds D_l (0 < l < L); NULL where H16[l] is set */
  fg_bf16 **H16;          /* (layers + 1): under bf16, a hidden H[l] stored as bf16 where
                             fg_model_h16 says so (GEMMs, the mask and the aggregation's rounded
                             rows read it: the same bits; GIN's self term adds it rounded);
                             H16[0]: D_0 = dropout(X) of a training forward, kept for the
                             backward where layer 0 aggregates last (only GEMMs read it; H[0]
                             stays the features); else NULL. In backward the mask pass may
                             overwrite H16[l] with dZ_{l-1} (fg_model.dz16): D_l is dead then */
  float *zout;            /* the fp32 buffer the last fg_model_out gave layer l's output */
  float *input;           /* learned features: the gathered layer-0 input, else NULL */
  float **S;              /* (layers): Â D_l for layers that aggregate first, else NULL */
  fg_bf16 **S16;          /* (layers): under bf16, S[l] stored as bf16 instead (S[l] NULL)
                             where fg_model_s16 says so; else NULL. Only GEMMs read S, and they
                             round it to bf16 anyway: the same bits, half the bytes */
  const float **Sv;       /* (layers): for a layer that aggregates last, what backward
                             multiplies into dW: D_l (H[l], or for l = 0 the features; NULL:
                             recompute dropout(H_0) in backward); one that aggregates first
                             multiplies S (fg_model_gemm_s) */
  float **M;              /* (layers): a self term's rows moved to the output layout (n_out x
                             w_in), when the kind has one and the scheme moves rows; else NULL */
  const float **Mv;       /* (layers): the self term's input for dW: M[l], D_l, or NULL:
                             recompute dropout(H_0); not read where M16[l] is set */
  fg_bf16 **M16;          /* (layers): under bf16, M[l] of a kind whose moved rows feed only
                             GEMMs (self_gemm) stored as bf16 instead, moved so by the scheme
                             (move_rows16: 3d); M[l] then NULL */
  float *work_a, *work_b; /* scratch shared by all layers */
  fg_maxloc *row_max;     /* (n) the logits' row maxima, over the scheme's column split */
  double *row_sum;        /* (n) and their sums of exp(z - max) */
  double seconds[FG_TIME_COUNT];
  double gemm_flops;      /* 2 M N K summed over the GEMMs run (bench_single.sh's bound) */
  /* --precision bf16: every GEMM of fg_model_gemm reads its operands rounded to bf16 (weights
   * too) with fp32 sums and output (fg_bf16_gemm_tall_f32 / _wgrad_f32: the activations are
   * rounded a block of rows at a time inside the kernel); the first failure (out of memory, a
   * shape oneDNN refuses) is kept in gemm_status and returned by the pass it happened in */
  int bf16;
  float in_p;             /* the running forward's input dropout (p, seed, epoch): a layer that */
  uint64_t in_seed, in_epoch; /* adds D_0's rows again (fg_model_input_axpy) */
  int x16;                /* the features count as bf16(X) (fg_model_x16): layer 0 always reads
                             them through the input pass, from the scheme's features16 or
                             rounded from its fp32 features as read; H[0] is then NULL */
  int g16;                /* under bf16 (the model's and the scheme's), the gradient dZ Wᵀ that
                             a layer aggregating first multiplies by Âᵀ is stored as bf16
                             (fg_model_grad_aggregate_t): where the scheme aggregates bf16 rows
                             (aggregate16_t) and completes no partial products (no
                             reduce_input_grad: not 3d) */
  int fuse;               /* bf16 with fused epilogues (fg_model_fuse16; fuse16.c): every hidden
                             H[l] and D_0 stored as bf16; each layer writes its output's bias,
                             ReLU and dropout, and backward's mask pass over its input's
                             gradient, as the producing GEMM or aggregation completes a block of
                             rows; one scratch buffer (work_a) of bf16 products, fp32 only for
                             the last layer's narrow gradient; no work_b */
  float *stage;           /* under fuse, for a self term's gradient added to an aggregation
                             (fuse16.c): a product's row block of n x w_in */
  double *bias_part;      /* under fuse: the mask pass's bias row-block sums (fg_bias_part_len
                             of the widest hidden input) */
  fg_bf16 *dz16_next;     /* a fused backward's dZ_{l-1}, stored as bf16 over H16[l] with
                             db[l - 1] taken (its mask pass done): the next layer's dz16 */
  fg_bf16 *dz16;          /* during a layer's backward: its dZ stored as bf16 (over the hidden
                             H16[l + 1] whose mask made it; the fp32 dz it is passed is then
                             stale), its bias gradient already in db[l]; else NULL. Where
                             fg_model.g16, the layer's kind takes it (fg_layer_kind.dz16), it has
                             no norm and ends no residual block, and H[l + 1] is stored as bf16 */
  float *wt;              /* a weight transposed (A Bᵀ products; wt_cap elements) */
  int64_t wt_cap;
  fg_status gemm_status;
};

typedef struct fg_model_config {
  int layers;
  const int64_t *widths;  /* (layers + 1) */
  int agg_order;          /* fg_agg_order */
  uint64_t seed;
  const fg_model_kind *kind; /* NULL: gcn; layers and widths count its stages */
  int norm;               /* fg_norm_kind: on every hidden layer's output, before its ReLU */
  float gin_eps;          /* GIN: epsilon, fixed, or the learned one's initial value */
  int gin_eps_learn;
  int residual;           /* residual connections on every model layer but the last */
  float label_prop;       /* label propagation (SuperGCN §3.3.2): this fraction of the training
                             nodes (fg_label_prop_node) adds a learned embedding of its label
                             (classes x features, from 0) to its input features; 0: off */
  int bf16;               /* --precision bf16: GEMM operands rounded to bf16 (fg_model.bf16) */
  int bf16_s32;           /* under bf16, keep every S[l] and H[l] in fp32 (no S16, H16) and
                             every gradient (no g16): the layout before them, which tests
                             compare them with bit for bit */
  int bf16_unfused;       /* under bf16, no fused epilogues (fg_model.fuse 0): the fp32 scratch
                             layout, which tests and benchmarks compare the fused one with */
  int rows16;             /* fg_model_memory only: the scheme completes an aggregation's rows in
                             one pass (aggregate16_rows; fg_model_create asks the scheme) */
} fg_model_config;

/* Whether node `id` (its original id; split its FG_SPLIT_*) is one of label propagation's label
 * nodes at `rate`: a training node whose draw (seed, FG_RNG_LABEL_PROP, id) falls below rate. The
 * same nodes at any number of ranks; the loss leaves them out. */
int fg_label_prop_node(uint64_t seed, float rate, int64_t id, int split);

/* Normalization of a hidden layer's output Z (n x w): none, LayerNorm over each row's w
 * features (y = gamma (z - mean) / sqrt(var + 1e-5) + beta; SuperGCN's choice), or BatchNorm
 * over each column's n rows: the whole graph is the batch, its statistics over the distinct
 * rows (the scheme's col_sum); a training forward also updates the running mean and variance
 * (PyTorch's: momentum 0.1, the unbiased variance; from 0 and 1), and an evaluation forward
 * normalizes with them. The last layer (the logits) is never normalized. */
typedef enum fg_norm_kind { FG_NORM_NONE = 0, FG_NORM_LAYER = 1, FG_NORM_BATCH = 2 } fg_norm_kind;
/* "none", "layer", "batch" (the --norm values), or "?" */
const char *fg_norm_name(int norm);
/* The vectors of layer l of L over its output's columns: b, and on a hidden layer the norm's
 * scale and shift (LayerNorm) and running mean and variance (BatchNorm): 1, 3 or 5. What the
 * parameter buffer, checkpoints and the planners count. */
int fg_model_layer_vecs(int norm, int l, int L);
/* The model a run's options name (--model, --norm, --adj-norm; NULL: gcn, none, the kind's
 * own): its layer kind, its norm (fg_norm_kind) and the operator it aggregates with (the kind's,
 * with adj_norm's normalization in place of its own). An unknown name is FG_ERR_INVALID_ARG
 * naming the option and the names it takes. Not collective. */
typedef struct fg_model_choice {
  const fg_model_kind *kind;
  int norm;
  fg_adj_spec adj;
  float gin_eps;          /* --gin-eps: a number (default 0), or "learn" (from 0) */
  int gin_eps_learn;
} fg_model_choice;
fg_status fg_model_choose(const char *model, const char *norm, const char *adj_norm,
                          const char *gin_eps, fg_model_choice *out);

/* agg[l] (stack layers L) = how each stack layer of widths (L + 1) aggregates on a 1D scheme,
 * as fg_model_create chooses under agg_order: 1 before its weight product, 0 after, -1 not at
 * all (a linear layer). What the volume plans count. */
void fg_model_agg_plan(const fg_model_kind *kind, int L, const int64_t *widths, int agg_order,
                       int *agg);
/* The weight matrices of stack layer l of L (widths w): its kind's, and a residual projection
 * where --residual changes the width of the block l starts. */
int fg_model_layer_mats(const fg_model_kind *kind, int residual, int L, const int64_t *w, int l);
/* The stack's layer count for `layers` layers of the model (times its stages). */
int fg_model_stack_layers(const fg_model_kind *kind, int layers);
/* out (stack layers + 1) = features, then each model layer's output width once a stage
 * (hidden_widths[0..layers-2] when given, else hidden each; the last layer's, classes): the
 * stack's widths from a run's options. */
fg_status fg_model_widths(const fg_model_kind *kind, int layers, int hidden,
                          const int *hidden_widths, int64_t features, int64_t classes,
                          int64_t *out);

/* Allocate for the scheme's layout and initialize this rank's pieces (Glorot, element (i, j)
 * of W_l the one-process model's draw; biases 0; learned features the input). Not
 * collective. */
fg_status fg_model_create(const fg_model_config *cfg, const fg_scheme *s, fg_model **out);
void fg_model_destroy(fg_model **m);

/* Collective. Forward pass; training = apply dropout with rate p and the (seed, epoch) masks,
 * and normalize BatchNorm layers with the batch's statistics, folding them into the running
 * ones (else: with the running ones, which stay). Leaves the logits in m->H[m->layers]. */
fg_status fg_model_forward(fg_model *m, fg_scheme *s, int training, float p, uint64_t seed,
                           uint64_t epoch);
/* Collective. Backward from dlogits (n x classes block; overwritten as scratch), with the same
 * dropout arguments as the forward it follows. Leaves the gradients of this rank's pieces in
 * m->grads: complete when the scheme splits the weights, else this rank's contributions, which
 * fg_model_reduce_grads sums. */
fg_status fg_model_backward(fg_model *m, fg_scheme *s, float *dlogits, float p, uint64_t seed,
                            uint64_t epoch);
fg_status fg_model_reduce_grads(fg_model *m, fg_scheme *s);

/* Collective. The row statistics of the last forward's logits (max, sum of exp), over the
 * scheme's column split, for fg_model_xent of rows within select (NULL: all). */
fg_status fg_model_softmax_stats(fg_model *m, fg_scheme *s, const uint8_t *select);
/* Softmax cross-entropy of the rows with select[r] != 0 (and a label), from the statistics:
 * returns this rank's share of the loss sum, counts and correct counts (each row counted on one
 * rank; sum them over ranks), and writes scale * d(loss)/d(logits) into dlogits (may be NULL)
 * for every selected row this rank holds. Not collective. */
double fg_model_xent(const fg_model *m, const fg_scheme *s, const uint8_t *select, float scale,
                     float *dlogits, int64_t *count, int64_t *correct);

/* Sigmoid binary cross-entropy (fg_sigmoid_bce) of the last forward's logits against the
 * scheme's multi-label targets (s->targets) over the rows with select[r] != 0: this rank's
 * share of the loss sum and counts (its column block of the primary copy of its rows; sum
 * them over ranks), and scale * d(loss)/d(logits) into dlogits (may be NULL) for every pair
 * this rank holds. Not collective. */
double fg_model_bce(const fg_model *m, const fg_scheme *s, const uint8_t *select, float scale,
                    float *dlogits, fg_bce_counts *counts);

/* One Adam step t on every piece: the weights of layer l decay by wd[l]; biases, a norm's
 * scale and shift, and features do not; BatchNorm's running statistics take no step. */
void fg_model_adam(fg_model *m, fg_adam_params adam, const float *wd, int64_t t);

/* For each element of this rank's W and b pieces (the first n_layer_params() of the buffer):
 * its index in the one-process layout, and whether this rank's copy is the one to keep
 * (weights replicated on several ranks are kept once). Returns the element count. */
int64_t fg_model_param_index(const fg_model *m, int64_t *idx, uint8_t *own);

/* What fg_model_create allocates for a 1D scheme of n rows, in bytes: activation buffers (H,
 * S, work; not the 16 n bytes of row statistics, which the memory budget counts with the loss)
 * and parameters with gradients and Adam moments; *buffers (may
 * be NULL) gets the activation bytes in units of n x max(hidden and class widths) floats. */
void fg_model_memory(const fg_model_config *cfg, int64_t n, int64_t *activation_bytes,
                     int64_t *param_bytes, double *buffers);

/* Whether a model fuses its epilogues (fg_model.fuse): under bf16 (not bf16_s32, not
 * bf16_unfused) on a scheme whose aggregation completes rows in one pass (rows16: serial), for a
 * model whose every layer kind has `fuse`, without a norm, residual connections, learned
 * features or label propagation (learn). */
int fg_model_fuse16(int bf16, int rows16, const fg_model_kind *kind, int norm, int residual,
                    int learn);

/* fuse16.c: a layer kind's fused forward and backward (fg_model.fuse; a 1D scheme, D_l is
 * H16[l] at every layer): the layer's product with W[l] (its matrix 0), aggregating first (S =
 * Â D rounded into S16; Z = S W) or last (T = D W as bf16 in work_a; Z = Â T), plus, where W2
 * is not NULL, a self term D W2 of the layer's own rows (SAGE's W_self), its output through
 * the bias, ReLU and dropout a block of rows at a time into H16[l + 1] (the logits H[L] as they
 * are: the forward walk adds their bias). Backward from dZ (m->dz16, or fp32 dz where that is
 * NULL: the logits' gradient): db[l] where the mask pass has not taken it, dW[l] (and dW2 =
 * D_lᵀ dZ), and for l > 0 dD_l through backward's mask pass (dropout's scale at rate p where
 * layer l takes a model layer's input, ReLU's mask) into dZ_{l-1} over H16[l] with db[l - 1]:
 * fg_model.dz16_next. A self term is added in the row blocks its own product takes, so every
 * bit is the unfused layout's. A product's failure is kept for the pass (gemm_status), a
 * scheme operation's returned. */
fg_status fg_model_fused_forward(fg_model *m, fg_scheme *s, int l, const float *W2);
fg_status fg_model_fused_backward(fg_model *m, fg_scheme *s, int l, float *dz, float p,
                                  const float *W2, float *dW2);

/* Internal to the layer kinds and fuse16.c: W (N x K, row length ldb) transposed into m->wt
 * (K x N); a product's accounting (its time since t0 and flops, the pass's first failure); C16
 * (n x mm, packed) = A W stored as bf16, A fp32 (a) or bf16 (a16), lda k, timed. */
fg_status fg_model_transpose_weight(fg_model *m, int64_t N, int64_t K, const float *B,
                                    int64_t ldb);
/* The same into m->wt + at (grown to at + K N: a second weight beside the first) */
fg_status fg_model_transpose_weight_at(fg_model *m, int64_t at, int64_t N, int64_t K,
                                       const float *B, int64_t ldb);
void fg_model_gemm_done(fg_model *m, double t0, fg_status st, int64_t M, int64_t N, int64_t K);
void fg_model_tall16(fg_model *m, int64_t n, int64_t k, int64_t mm, const float *a,
                     const fg_bf16 *a16, const float *W, fg_bf16 *C16);

/* Internal to the layer kinds: a timed GEMM C = op(A) op(B) (+ C when add), the scratch buffer
 * that is not x, and dropout(H_0) again into out (layer 0's input, recomputed in backward from
 * the counter-based masks). */
void fg_model_gemm(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc);
void fg_model_gemm_add(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                       int64_t ldc);
float *fg_model_other_work(const fg_model *m, const float *x);
/* S[l] under bf16 (fg_model.S16): the layer's aggregation first goes to an fp32 buffer,
 * fg_model_s_buf (S[l], or H[l + 1] when S[l] is stored as bf16: dead until the layer's product
 * writes it, and in backward dead since the next layer's mask), which is also what a layer
 * kind uses as S-sized fp32 scratch in backward; fg_model_s_store then rounds it into S16[l].
 * fg_model_gemm_s is the product with S[l] as its first operand: C = S B (ta 0: S is M x K) or
 * C = Sᵀ B (ta 1: S is K x M), from S16[l] when it is set. */
int fg_model_s16(int bf16, int agg_first, int l, int L, int64_t w_in, int64_t w_out);
/* Whether hidden H[l] (0 < l < L) of a stack of kinds (its layers' kinds), aggregation orders agg
 * and S16 choices s16 is stored as bf16 (fg_model.H16), and for l = 0 whether a training
 * forward keeps D_0 as bf16 (layer 0 aggregates last: only its GEMMs read D_0, and work_a need
 * not hold it): under bf16, without residual
 * connections, and where the producing layer k = l - 1 needs no fp32 buffer of H[l]'s size
 * besides the two scratch buffers: not a GCN or SAGE layer 0 that aggregates last (its backward
 * keeps dT in H[1] beside dZ and D_0), not a SAGE layer that aggregates first with S16 (its
 * backward's scratch is S's fp32 stand-in, H[k + 1]), not a GIN layer with S16 and a learned
 * epsilon or on a scheme that moves rows (move_ok: its backward moves dY through S's buffer). */
int fg_model_h16(int bf16, int move_ok, int residual, int eps_learn,
                 const fg_layer_kind *const *kinds, const int *agg, const int *s16, int L,
                 int l);
/* Layer l's fp32 output buffer: H[l + 1], or where H[l + 1] is stored as bf16 the scratch
 * buffer that is not busy (the forward walk's last sweep then writes H16[l + 1] rounded);
 * kept in m->zout. A kind that aggregates first passes work_a (where fg_model_in32 widens its
 * input), so that S's fp32 stand-in (fg_model_s_buf) and the output share work_b. */
float *fg_model_out(fg_model *m, int l, const float *busy);
/* H16[l] widened into out (n_in x w_in floats), timed with the elementwise passes. */
void fg_model_widen(fg_model *m, int l, float *out);
/* Layer l's input D_l in fp32: d, or (d NULL) H16[l] widened into work_a. After a forward,
 * fg_model_in32(m, l, m->H[l]) is hidden H_l in fp32 wherever it is stored. */
const float *fg_model_in32(fg_model *m, int l, const float *d);
/* out (n_out x w_in) = Â_l D_l through the scheme: H16[l] as it is where d is NULL and the
 * scheme aggregates bf16 rows (aggregate16), else d or H16[l] widened (fg_model_in32). */
fg_status fg_model_aggregate(fg_model *m, fg_scheme *s, int l, const float *d, float *out);
/* A timed product with D_l as first operand: C (+)= D B (ta 0: D n_in x K) or Dᵀ B (ta 1), from
 * H16[l] when d is NULL, else from d. */
void fg_model_gemm_in(fg_model *m, int l, const float *d, int ta, int64_t M, int64_t N,
                      int64_t K, const float *B, int64_t ldb, float *C, int64_t ldc, int add);
float *fg_model_s_buf(const fg_model *m, int l);
void fg_model_s_store(fg_model *m, int l);
void fg_model_gemm_s(fg_model *m, int l, int ta, int64_t M, int64_t N, int64_t K,
                     const float *B, int64_t ldb, float *C, int64_t ldc);
/* A timed bf16 product whose first operand is stored as bf16: C (+)= A op(B) (ta 0, A M x K)
 * or Aᵀ B (ta 1, A K x M), lda A's row length; B fp32, rounded as it is read; tb (with ta 0
 * only): B is N x K, transposed into fp32 scratch first. */
void fg_model_gemm_h(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                     const fg_bf16 *A, int64_t lda, const float *B, int64_t ldb, float *C,
                     int64_t ldc, int add);
/* The backward of an aggregation done first, Z = (Â D) W: out (n_in x w_in) = Âᵀ (dz Wᵀ), the
 * product u = dz Wᵀ (n_out x w_in) completed over the scheme's column split
 * (reduce_input_grad) in u's buffer (a scratch buffer of n_out x w_in floats, neither dz nor
 * out). Under fg_model.g16 u is stored there as bf16, each sum rounded as the product writes
 * it, and aggregated as it is (aggregate16_t): the bits of the fp32 u, which every bf16 SpMM
 * rounds the same way as it reads it, with half its bytes and no rounding pass. */
fg_status fg_model_grad_aggregate_t(fg_model *m, fg_scheme *s, int l, const float *dz,
                                    const float *W, float *u, float *out);
/* A layer's dZ where its backward reads it (fg_model.dz16: dz is then stale): db[l] from dz
 * unless the mask pass took it (fg_model_bias_grad); dW = Sᵀ dZ (fg_model_wgrad_s: S[l] or
 * S16[l], n_out x w_in, times dZ); dW = Dᵀ dZ (fg_model_wgrad_in: D_l = d, or H16[l] where d
 * is NULL; a 1D layer's rows); C (+)= dZ Wᵀ (fg_model_gemm_dz_wt: n_out x w_in, fp32, W the
 * layer's w_in x w_out matrix); Âᵀ dZ (fg_model_aggregate_t_dz, width w_out). */
/* The forward of a layer that aggregates last (a 1D scheme): T = D W (D_l = d, or H16[l] where d
 * is NULL; W w_in x w_out) into t (a scratch buffer of n_in x w_out floats, not d), then
 * *out = Â T (fg_model_out's buffer beside t). Under fg_model.g16 T is stored as bf16 in t's
 * buffer as the product writes it and aggregated as it is (aggregate16): the bits of rounding
 * the fp32 T, which the bf16 aggregation did. */
fg_status fg_model_product_aggregate(fg_model *m, fg_scheme *s, int l, const float *d,
                                     const float *W, float *t, float **out);
void fg_model_bias_grad(fg_model *m, int l, const float *dz);
void fg_model_wgrad_s(fg_model *m, int l, const float *dz, float *dW);
void fg_model_wgrad_in(fg_model *m, int l, const float *d, const float *dz, float *dW);
void fg_model_gemm_dz_wt(fg_model *m, int l, const float *dz, const float *W, float *C, int add);
fg_status fg_model_aggregate_t_dz(fg_model *m, fg_scheme *s, int l, const float *dz, float *out);

/* residual.c, for the stack. The blocks of a stack of L layers, S a model layer, with or
 * without residual connections (the one rule, also before a model exists): whether stack layer
 * l starts a block (its input is a source), ends one (adds R to its output), or lies in one (a
 * hop of R under 3d). The model's own: fg_residual_source, fg_residual_end. The projection's
 * block of l0 within blocks
 * (m->W or m->dW), NULL when the widths agree; R added into H[l1 + 1] after the block end's
 * ReLU; and from dH (the gradient of H[l1 + 1] after the next dropout's backward) dP and the
 * source's gradient (into Hres[l0], for l0 > 0). Collective under 3d. */
int fg_residual_starts(int residual, int S, int L, int l);
int fg_residual_ends(int residual, int S, int L, int l);
int fg_residual_hop(int residual, int S, int L, int l);
int fg_residual_end(const fg_model *m, int l);
int fg_residual_source(const fg_model *m, int l);
float *fg_residual_proj(const fg_model *m, int l0, float **blocks);
fg_status fg_residual_forward(fg_model *m, fg_scheme *s, int l1);
fg_status fg_residual_backward(fg_model *m, fg_scheme *s, int l1, const float *dh);
void fg_model_redo_input(fg_model *m, const fg_scheme *s, float p, uint64_t seed, uint64_t epoch,
                         float *out);
/* y (layer 0's n_in x w_in) += alpha D_0 of the running forward, its rows made again from the
 * features (fg_dropout_rows_x16_axpy): GIN's (1 + eps) D_0 term exact where D_0 is kept only as
 * bf16 (H16[0]); under fg_model.x16, without label propagation. */
void fg_model_input_axpy(fg_model *m, const fg_scheme *s, float alpha, float *y);
/* Whether a model of this configuration on s reads the input features as bf16(X): under
 * --precision bf16, unless the features are parameters (--learn-features: fp32 master copies)
 * or a residual connection adds them as they are. The trainer has the scheme lay its own copy
 * out as bf16 (fg_scheme_config.features16), halving the largest input. */
int fg_model_x16(const fg_model_config *cfg, const fg_scheme *s);
/* The same rule from a run's options, for the memory models: 2 bytes a feature where it is 1. */
int fg_model_features16(int bf16, int residual, int learn_features);

#endif /* FG_MODEL_H */
