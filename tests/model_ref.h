/* model_ref.h -- an independent double-precision forward of the models for the gradient
 * checks: written from the math, not from src/model, in the dataset's own node numbering. */
#ifndef FG_TEST_MODEL_REF_H
#define FG_TEST_MODEL_REF_H

#include <stdint.h>

#include "graph/fg_graph.h"

typedef struct fg_test_model {
  int sage;            /* 0: GCN layers, Z = (Ã D) W + b; 1: SAGE, Z = D W_s + (Ã D) W_n + b */
  fg_adj_norm norm;    /* Ã's weights: sym 1/sqrt(d_i d_j), mean 1/d_i, sum 1 (d: the row and
                          column counts of Ã's pattern) */
  int no_self_loops;   /* Ã's pattern: ds->adj without its diagonal (else ds->adj) */
  int layer_norm;      /* LayerNorm (scale, shift after b) on every hidden layer before ReLU */
  int gin;             /* GIN: even layers Z = (Ã D + (1 + eps) D) W + b, odd layers Z = H W + b
                          (no dropout on their input): the stack of fg_model's "gin" */
  float gin_eps;       /* its fixed eps */
  int eps_learn;       /* eps is a parameter after each even layer's vectors instead */
  int residual;        /* every model layer (GIN: two layers) but the last adds its input H
                          (before dropout) after its ReLU: H, or H P where the widths differ,
                          P (w_l0 x w_{l0+1}) after the first layer's matrices */
  int batch_norm;      /* BatchNorm there instead (scale, shift, running mean and variance after
                          b): each column's statistics over all n nodes */
  int running;         /* BatchNorm normalizes with the running statistics in params, as an
                          evaluation forward does (else with the batch's, as training does) */
  float label_prop;    /* label propagation: the label nodes (fg_label_prop_node at lp_seed) add
                          row label of E (classes x features, at params + lp_off) to their
                          input row before dropout, and leave the loss */
  uint64_t lp_seed;
  int64_t lp_off;
} fg_test_model;

/* A small dataset for the model tests: n nodes, the ne edges src -> dst (both ways when
 * undirected) and a self loop on every node, F features uniform in [-1, 1] drawn from seed, C
 * classes; labels and split allocated for the caller to fill. ds is zeroed first;
 * fg_test_small_dataset_free releases what it holds. */
fg_status fg_test_small_dataset(fg_dataset *ds, int64_t n, const int64_t *src, const int64_t *dst,
                                int64_t ne, int undirected, int64_t F, int64_t C, uint64_t seed);
void fg_test_small_dataset_free(fg_dataset *ds);

/* The fg_norm_kind mdl names (batch_norm, layer_norm, or none): fg_model_config.norm. */
int fg_test_model_norm(fg_test_model mdl);

/* The mean cross-entropy over ds's training nodes of an L-layer model with widths w[0..L]
 * (w[0] = ds->num_features, w[L] = ds->num_classes): per layer D = dropout_l(H) with the
 * masks of fg_dropout_forward (keyed by node id v, layer l; p = 0: none), Z as the model says,
 * ReLU except on the last layer. params holds per layer W_l (w_l x w_{l+1}, row-major; for SAGE
 * W_n then W_s) then b_l (a norm's scale and shift, BatchNorm's running mean and variance, GIN's
 * learned eps), as fg_model lays them
 * out. When not NULL, hidden gets the last hidden
 * layer's output (n x w[L-1]) and logits the output (n x w[L]), rows in ds's order. */
double fg_test_model_ref(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                         const double *params, float p, uint64_t seed, uint64_t epoch,
                         double *hidden, double *logits);

/* What a training forward leaves of params: into updated (n) params with each BatchNorm's
 * running mean and variance moved towards the batch's (momentum 0.1, the unbiased variance). */
void fg_test_model_ref_running(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                               const double *params, int64_t n, float p, uint64_t seed,
                               uint64_t epoch, double *updated);

/* The largest relative difference (denominator at least 1e-2) between grads (n) and the central
 * differences (step 1e-6) of fg_test_model_ref's loss at params (n, restored on return); *bad
 * gets the first parameter off by more than tol, or -1. */
double fg_test_model_gradcheck(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                               double *params, const float *grads, int64_t n, float p,
                               uint64_t seed, uint64_t epoch, double tol, int64_t *bad);

#endif
