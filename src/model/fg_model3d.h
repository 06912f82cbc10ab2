/* fg_model3d.h -- the GCN of fg_model.h on the 3D (Plexus) layout of fg_scheme3d.h.
 *
 * The math is the serial model's, aggregating first in every layer (Plexus' order):
 *   D_l = dropout(F_l);  H_l = Â_l D_l;  Q_l = H_l W_l + b_l;  F_{l+1} = relu(Q_l)
 * and on each rank every matrix is a shard (layer roles a, b, c of fg_layer_roles):
 *   forward   [layer 0, learned features: all-gather F along c]
 *             H = Â_l D (partial over a) -> all-reduce along a, in --agg-blocks row blocks, each
 *                 block's nonblocking all-reduce started as soon as it is computed
 *             [all-gather the W_l and b_l pieces along c]
 *             Q = H W_l (partial over b) -> all-reduce along b; + b_l; relu
 *   backward  dW_l = Hᵀ dQ, db_l = colsum dQ (partial over c) -> reduce-scatter along c
 *             dH = dQ W_lᵀ (partial over a) -> all-reduce along a
 *             dD = Â_lᵀ dH (partial over c) -> all-reduce along c (reduce-scatter into the
 *                  feature pieces at layer 0 with learned features; skipped at layer 0
 *                  otherwise)
 * Dropout masks are the serial ones: element (v, j) of layer l's input keyed by the original
 * node id v and the global column j, so every grid draws the same masks.
 *
 * Parameters: each rank owns, per layer, a piece of the (b, a) block of W_l (the block cut
 * into G_c contiguous pieces of its row-major elements) followed by a piece of the a block of
 * b_l (cut likewise; the bias block is replicated along b); then, with learned features, its
 * piece of F. One contiguous buffer per rank; gradients and Adam moments alike.
 */
#ifndef FG_MODEL3D_H
#define FG_MODEL3D_H

#include <stdint.h>

#include "core/fg_core.h"
#include "kernels/fg_kernels.h"
#include "model/fg_model.h"
#include "schemes/fg_scheme3d.h"

/* The shapes of layer l on the rank with coordinates q (pure geometry). */
typedef struct fg_layer3d_geom {
  int a, b, c, key, parity;
  int64_t n_in, n_out;       /* rows of the input (node block q[a]) and output (block q[c]) */
  int64_t w_in, w_out;       /* width block q[b] of d_l over G_b, q[a] of d_{l+1} over G_a */
  int64_t col0_in, col0_out; /* their first global columns */
  int64_t wp0, wp_len;       /* this rank's piece of the flattened (w_in x w_out) W block */
  int64_t bp0, bp_len;       /* and of the w_out bias block */
} fg_layer3d_geom;

void fg_layer3d_geom_compute(const int64_t *widths, int64_t n, const int g[3], const int q[3],
                             int l, int nkeys, fg_layer3d_geom *out);

typedef struct fg_gcn3d_config {
  int layers;
  const int64_t *widths; /* (layers + 1) */
  uint64_t seed;
  int agg_blocks;        /* >= 1 */
  int dw_order;          /* 0: time both forms of dW at setup and keep the faster; 1: Hᵀ dQ;
                            2: (dQᵀ H)ᵀ */
} fg_gcn3d_config;

typedef struct fg_gcn3d {
  int layers;
  int64_t *widths;         /* (layers + 1) */
  fg_layer3d_geom *geom;   /* (layers) */
  int64_t *poff;           /* (layers) offset of layer l's [W piece | b piece] in params */
  int64_t feat_off;        /* offset of the feature piece (learned features), else -1 */
  int64_t n_params;        /* this rank's buffer length */
  int64_t n_params_global; /* the serial model's parameter count (W and b of every layer) */
  float *params, *grads, *adam_m, *adam_v;
  float **Wblk, **bblk;    /* (layers) gathered blocks (w_in x w_out), (w_out) */
  float **H;               /* (layers) (n_out x w_in), kept for dW */
  float **out;             /* (layers) (n_out x w_out): relu(Q) of hidden layers, the logits */
  float *fin0;             /* (n_in_0 x w_in_0) layer 0 input: the gathered features */
  float *drop;             /* dropout output scratch */
  float *pack;             /* packed W/b pieces for the gathers and reduce-scatters */
  float *dw, *dwt;         /* (w_in x w_out) dW block and the reversed product */
  float *db;               /* (w_out) db block */
  float *dh, *g_a, *g_b;   /* backward scratch */
  float *dlogits;          /* (n_out x w_out) of the last layer */
  int *dw_reversed;        /* (layers) */
  int agg_blocks;
  uint64_t seed;
  double seconds[FG_TIME_COUNT];
  double seconds_wait;     /* blocked in waits for the blocked aggregation's all-reduces */
} fg_gcn3d;

/* Collective over the layout's grid: allocate, initialize the parameter pieces (Glorot, element
 * (i, j) of W_l the serial model's draw), decide the dW form. */
fg_status fg_gcn3d_create(const fg_gcn3d_config *cfg, fg_layout3d *t, fg_gcn3d **out);
void fg_gcn3d_destroy(fg_gcn3d **m);

/* Collective. Forward pass (training: dropout p with the (seed, epoch) masks). */
fg_status fg_gcn3d_forward(fg_gcn3d *m, fg_layout3d *t, int training, float p, uint64_t seed,
                           uint64_t epoch);
/* Collective. Softmax cross-entropy of the training rows (split TRAIN, label >= 0) scaled by
 * scale into m->dlogits; *loss_sum, *count, *correct summed over all ranks. */
fg_status fg_gcn3d_loss(fg_gcn3d *m, fg_layout3d *t, float scale, double *loss_sum,
                        int64_t *count, int64_t *correct);
/* Collective. Accuracy of each split and the validation loss (sum over its rows), summed over
 * all ranks: sums = {correct_0, count_0, correct_1, count_1, correct_2, count_2, valid_loss}. */
fg_status fg_gcn3d_eval_sums(fg_gcn3d *m, fg_layout3d *t, double sums[7]);
/* Collective. Backward from m->dlogits; leaves complete gradients of this rank's pieces. */
fg_status fg_gcn3d_backward(fg_gcn3d *m, fg_layout3d *t, float p, uint64_t seed, uint64_t epoch);
/* Adam step t on every piece: weights of layer l decay by wd[l], biases and features not. */
void fg_gcn3d_adam(fg_gcn3d *m, fg_adam_params adam, const float *wd, int64_t step);

/* Collective. Parameters and both Adam moments of the whole model in the serial layout
 * (W_0, b_0, W_1, ...; n_params_global floats each) gathered into rank 0's arrays (others
 * may pass NULL), or scattered from them. Learned features are not included. */
fg_status fg_gcn3d_gather_state(fg_gcn3d *m, fg_layout3d *t, float *params, float *adam_m,
                                float *adam_v);
fg_status fg_gcn3d_scatter_state(fg_gcn3d *m, fg_layout3d *t, const float *params,
                                 const float *adam_m, const float *adam_v);
/* Collective. Gather the logits (which = 0; n x classes) or the last hidden layer (which = 1;
 * n x widths[layers - 1]) in original node order into rank 0's out. */
fg_status fg_gcn3d_gather_output(fg_gcn3d *m, fg_layout3d *t, int which, float *out);

#endif /* FG_MODEL3D_H */
