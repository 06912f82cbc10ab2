/* fg_model.h -- a GCN of any depth, written once against the scheme interface.
 *
 * Layer l (0-based) maps H_l (n x w_l) to H_{l+1} (n x w_{l+1}):
 *   D_l     = dropout(H_l)                      (training only)
 *   Z_l     = Â D_l W_l + b_l                   computed as Â (D_l W_l) or (Â D_l) W_l,
 *                                               whichever is cheaper for the widths
 *   H_{l+1} = relu(Z_l)   (the last layer keeps Z: the logits)
 * All parameters live in one buffer (W_0, b_0, W_1, b_1, ...), gradients and both Adam moments
 * in buffers of the same layout, so a gradient reduction is one call.
 *
 * Activations (MG-GCN §4.2): one buffer per layer output H[1..L], two scratch buffers shared by
 * every layer, forward and backward, and S[l] = Â D_l only for layers that aggregate first
 * (layer 0 usually; a hidden layer only when its width grows). A training forward leaves D_l in
 * H[l] for 0 < l < L (dropout is applied in place: backward needs D_l, and D_l > 0 exactly where
 * dropout kept a positive H_l, which is the mask of both backward passes); an evaluation
 * forward leaves H_l there. With every hidden layer aggregating last that is L + 2 buffers of
 * n x width (L + 3 with the trainer's n x classes loss gradient). work_a is n x max(w_0, hidden)
 * (it takes dropout(H_0)), work_b n x max(hidden, classes). Backward may overwrite every H[l]
 * (l >= 1): the activations are dead after it until the next forward.
 */
#ifndef FG_MODEL_H
#define FG_MODEL_H

#include <stdint.h>

#include "core/fg_core.h"
#include "schemes/fg_scheme.h"

enum { FG_TIME_SPMM = 0, FG_TIME_GEMM, FG_TIME_OTHER, FG_TIME_COUNT };

typedef struct fg_gcn {
  int layers;
  int64_t *widths;        /* (layers + 1): input, hidden..., classes */
  int *agg_first;         /* (layers) 1: (Â D) W; 0: Â (D W) */
  int64_t n_params;
  float *params, *grads, *adam_m, *adam_v; /* (n_params) each */
  float **W, **b, **dW, **db;              /* (layers) pointers into the buffers */
  /* activations for n_local rows */
  int64_t n;
  float **H;              /* (layers + 1): H[0] = scheme features (not owned), H[L] logits;
                             after a training forward H[l] holds D_l (0 < l < L) */
  float **S;              /* (layers): Â D_l for layers that aggregate first, else NULL */
  const float **Sv;       /* (layers): what backward multiplies into dW: S[l] or D_l (H[l], or
                             for l = 0 the features; NULL: recompute dropout(H_0) in backward) */
  float *work_a, *work_b; /* scratch shared by all layers: (n x max(w_0, hidden)) and
                             (n x max(hidden, classes)) */
  double seconds[FG_TIME_COUNT];
} fg_gcn;

typedef struct fg_gcn_config {
  int layers;
  const int64_t *widths;  /* (layers + 1) */
  int agg_order;          /* fg_agg_order */
  uint64_t seed;
} fg_gcn_config;

fg_status fg_gcn_create(const fg_gcn_config *cfg, const fg_scheme *s, fg_gcn **out);
void fg_gcn_destroy(fg_gcn **m);

/* Collective. Forward pass; training = apply dropout with rate p and the (seed, epoch) masks.
 * Leaves the logits in m->H[m->layers]. */
fg_status fg_gcn_forward(fg_gcn *m, fg_scheme *s, int training, float p, uint64_t seed,
                         uint64_t epoch);
/* Collective. Backward from dlogits (n x classes; overwritten as scratch), with the same
 * dropout arguments as the forward it follows. Writes m->grads (local contributions; the
 * caller reduces them over ranks). */
fg_status fg_gcn_backward(fg_gcn *m, fg_scheme *s, float *dlogits, float p, uint64_t seed,
                          uint64_t epoch);


/* What fg_gcn_create allocates for n rows, in bytes: activation buffers (H[1..L], S, work) and
 * parameters with gradients and Adam moments; *buffers (may be NULL) gets the activation bytes
 * in units of n x max(hidden and class widths) floats. */
void fg_gcn_memory(const fg_gcn_config *cfg, int64_t n, int64_t *activation_bytes,
                   int64_t *param_bytes, double *buffers);

#endif /* FG_MODEL_H */
