/* gcn_ref.h -- an independent double-precision GCN forward for the model's gradient checks:
 * written from the math, not from src/model, in the dataset's own node numbering. */
#ifndef FG_TEST_GCN_REF_H
#define FG_TEST_GCN_REF_H

#include <stdint.h>

#include "graph/fg_graph.h"

/* The mean cross-entropy over ds's training nodes of an L-layer GCN with widths w[0..L]
 * (w[0] = ds->num_features, w[L] = ds->num_classes): per layer D = dropout_l(H) with the
 * masks of fg_dropout_forward (keyed by node id v, layer l; p = 0: none), Z = (A D) W + b, ReLU
 * except on the last layer. A is Â (values set) in ds's numbering; params holds W_l (w_l x
 * w_{l+1}, row-major) then b_l per layer, as fg_model lays them out. When not NULL, hidden gets
 * the last hidden layer's output (n x w[L-1]) and logits the output (n x w[L]), rows in ds's
 * order. */
double fg_test_gcn_ref(const fg_dataset *ds, const fg_csr *A, int L, const int64_t *w,
                       const double *params, float p, uint64_t seed, uint64_t epoch,
                       double *hidden, double *logits);

#endif
