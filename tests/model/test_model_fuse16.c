/* test_model_fuse16.c -- the bf16 model's fused epilogues (fg_model.fuse, fuse16.c) against the
 * unfused layout (bf16_unfused: fp32 scratch, then the elementwise sweeps), bit for bit, on a
 * graph and widths where every fused producer runs several row blocks whose edges fall inside
 * the bias gradient's 1024-row blocks: 2200 nodes; a GCN 64 -> 1000 -> 1200 -> 5, whose GEMMs
 * take 1048-, 953- and 1740-row blocks (8 MiB of fp32 operands, fg_bf16.h) and whose
 * aggregations of 1000 and 1200 columns 2097- and 1747-row blocks (FG_ROWS_BLOCK_BYTES), with
 * every aggregation order (every fused path: S = Â D rounded, Z = S W and Z = Â T through the
 * forward's bias, ReLU and dropout, dT = Âᵀ dZ rounded, dD = dT Wᵀ and dD = Âᵀ (dZ Wᵀ) through
 * the mask and the bias gradient), on an undirected and a directed graph (Âᵀ its own matrix).
 * The training step's gradients, the evaluation logits, and a second step after the evaluation
 * are compared; and SAGE the same way, its self term added in its own product's row blocks.
 * On 3 ranks, the same on 1d-sa (GCN on a directed graph, SAGE), 3300 nodes.
 * And the memory model: a GCN 3 x 128 (128 features, 32 classes) holds 2.75
 * buffers of n x 128 floats fused, 3.75 unfused and 5.25 in fp32. */
#include <stdlib.h>
#include <string.h>

#include "dist/fg_dist.h"
#include "kernels/fg_kernels.h"
#include "model/fg_model.h"
#include "model_ref.h"
#include "plan/fg_registry.h"
#include "schemes/fg_scheme.h"
#include "testutil.h"

enum { F = 64, C = 5, L = 3, MAXN = 3300, NE = 6 * MAXN };
static const int64_t kWidths[L + 1] = {F, 1000, 1200, C};

static void step(fg_model *m, fg_scheme *s, const uint8_t *sel, float *dl, float p,
                 uint64_t epoch) {
  int64_t cnt, cor;
  EXPECT_OK(fg_model_forward(m, s, 1, p, 7, epoch));
  fg_softmax_xent(m->H[L], s->n_local, C, s->labels, sel, 1.0f / 1000, dl, &cnt, &cor);
  EXPECT_OK(fg_model_backward(m, s, dl, p, 7, epoch));
}

/* One case on `scheme` (serial on this process; 1d-sa on every rank) over a graph of n nodes */
static void run_case(const char *scheme, const char *model, int directed, int order, int64_t n) {
  static int64_t src[NE], dst[NE];
  const int64_t ne = 6 * n;
  const int serial = !strcmp(scheme, "serial");
  int rank = 0;
  fg_dataset ds;
  fg_dist *dist = NULL;
  fg_scheme *s = NULL;
  fg_scheme_config sc;
  fg_model *m[2] = {NULL, NULL};
  float *dl = NULL;
  uint8_t *sel = NULL;
  uint64_t x = 88172645463325252ull;
  memset(&ds, 0, sizeof ds);
  memset(&sc, 0, sizeof sc);
  for (int64_t e = 0; e < ne; e++) { /* a ring and random chords */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    src[e] = e < n ? e : (int64_t)(x % (uint64_t)n);
    dst[e] = e < n ? (e + 1) % n : (int64_t)((x >> 32) % (uint64_t)n);
  }
  EXPECT_OK(fg_test_small_dataset(&ds, n, src, dst, ne, !directed, F, C, 3));
  for (int64_t i = 0; i < n; i++) {
    ds.labels[i] = (int32_t)((i * 7) % C);
    ds.split[i] = i % 3 != 2 ? FG_SPLIT_TRAIN : FG_SPLIT_VALID;
  }
  sc.name = scheme;
  sc.features16 = 1;
  sc.order = "random";
  sc.seed = 5;
  sc.layers = L;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_OK(fg_dist_create(serial ? MPI_COMM_SELF : MPI_COMM_WORLD, &dist));
  EXPECT_OK(fg_scheme_create(dist, serial || rank == 0 ? &ds : NULL, &sc, &s));
  if (!s) goto done;
  dl = malloc(sizeof *dl * (size_t)(s->n_local * C + 1));
  sel = malloc((size_t)s->n_local + 1);
  if (!dl || !sel) goto done;
  s->bf16 = 1;
  for (int64_t i = 0; i < s->n_local; i++) sel[i] = s->split[i] == FG_SPLIT_TRAIN;
  for (int k = 0; k < 2; k++) {
    const fg_model_config mc = {.layers = L,
                                .widths = kWidths,
                                .agg_order = order,
                                .seed = 5,
                                .kind = fg_model_kind_find(model),
                                .bf16 = 1,
                                .bf16_unfused = k};
    EXPECT_OK(fg_model_create(&mc, s, &m[k]));
  }
  if (!m[0] || !m[1]) goto done;
  EXPECT(m[0]->fuse && !m[1]->fuse);
  EXPECT(m[0]->agg_first[1] == (order != FG_AGG_LAST) &&
         m[0]->agg_first[2] == (order == FG_AGG_FIRST));
  for (int k = 0; k < 2; k++) step(m[k], s, sel, dl, 0.3f, 1);
  EXPECT_MSG(memcmp(m[0]->grads, m[1]->grads, sizeof(float) * (size_t)m[0]->n_params) == 0,
             "%s %s directed %d order %d: fused gradients differ from the unfused layout's", scheme,
             model, directed, order);
  for (int k = 0; k < 2; k++) EXPECT_OK(fg_model_forward(m[k], s, 0, 0.0f, 7, 1));
  EXPECT_MSG(memcmp(m[0]->H[L], m[1]->H[L], sizeof(float) * (size_t)(s->n_local * C)) == 0,
             "%s %s directed %d order %d: fused evaluation logits differ", scheme, model, directed,
             order);
  for (int k = 0; k < 2; k++) step(m[k], s, sel, dl, 0.3f, 2);
  EXPECT_MSG(memcmp(m[0]->grads, m[1]->grads, sizeof(float) * (size_t)m[0]->n_params) == 0,
             "%s %s directed %d order %d: a second step's fused gradients differ", scheme, model,
             directed, order);
  {
    double norm = 0.0;
    for (int64_t i = 0; i < m[0]->n_params; i++) norm += (double)m[0]->grads[i] * m[0]->grads[i];
    EXPECT_MSG(norm > 0.0, "%s %s directed %d order %d: zero gradients", scheme, model, directed,
               order);
  }
done:
  for (int k = 0; k < 2; k++) fg_model_destroy(&m[k]);
  fg_scheme_destroy(&s);
  fg_dist_destroy(&dist);
  fg_test_small_dataset_free(&ds);
  free(dl);
  free(sel);
}

/* The memory model's buffers of n x 128 floats for a GCN 128 -> 128 -> 128 -> 32 */
static void memory_model(void) {
  const int64_t w[4] = {128, 128, 128, 32}, n = 100000;
  double buf[3];
  int64_t act[3];
  for (int k = 0; k < 3; k++) {
    const fg_model_config mc = {
        .layers = 3, .widths = w, .bf16 = k < 2, .bf16_unfused = k == 1, .rows16 = 1};
    fg_model_memory(&mc, n, &act[k], NULL, &buf[k]);
  }
  EXPECT_MSG(buf[0] == 2.75 && buf[1] == 3.75 && buf[2] == 5.25,
             "GCN 3 x 128 buffers: fused %.3f, unfused %.3f, fp32 %.3f", buf[0], buf[1], buf[2]);
  EXPECT_MSG(act[0] < act[1] && act[1] < act[2],
             "activation bytes fused %lld, unfused %lld, "
             "fp32 %lld",
             (long long)act[0], (long long)act[1], (long long)act[2]);
  printf(
      "  GCN 3 x 128, n = %lld: activations fused %.1f MB (%.2f buffers), unfused %.1f MB "
      "(%.2f), fp32 %.1f MB (%.2f)\n",
      (long long)n, act[0] / 1e6, buf[0], act[1] / 1e6, buf[1], act[2] / 1e6, buf[2]);
  { /* SAGE fused: the GCN's buffers (unfused it keeps H[1] in fp32: 4.25) */
    const fg_model_config mc = {
        .layers = 3, .widths = w, .kind = fg_model_kind_find("sage"), .bf16 = 1, .rows16 = 1};
    double b = 0.0;
    fg_model_memory(&mc, n, NULL, NULL, &b);
    EXPECT_MSG(b == 2.75, "SAGE 3 x 128 fused: %.3f buffers", b);
  }
  { /* a scheme without aggregate16_rows (rows16 0) keeps the unfused layout */
    const fg_model_config mc = {.layers = 3, .widths = w, .bf16 = 1};
    double b = 0.0;
    fg_model_memory(&mc, n, NULL, NULL, &b);
    EXPECT_MSG(b == 3.75, "GCN 3 x 128 on a scheme without rows16: %.3f buffers", b);
  }
}

int main(int argc, char **argv) {
  int size = 1, rank = 0, failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size == 1) {
    memory_model();
    for (int directed = 0; directed < 2; directed++)
      for (int order = FG_AGG_AUTO; order <= FG_AGG_LAST; order++)
        run_case("serial", "gcn", directed, order, 2200);
    /* SAGE: its self term D W_s added to the product or the aggregation in that product's row
     * blocks, dZ W_sᵀ to the transposed aggregation (its operator, the mean, is not
     * symmetric) */
    for (int order = FG_AGG_AUTO; order <= FG_AGG_LAST; order++)
      run_case("serial", "sage", 0, order, 2200);
  } else {
    /* 1d-sa: the diagonal block's sums and the halo's a block of rows at a time (SAGE's
     * blocks, its self term's product's, cut a rank's 1100 rows in two) */
    for (int order = FG_AGG_AUTO; order <= FG_AGG_LAST; order += 2) {
      run_case("1d-sa", "gcn", 1, order, 3300);
      run_case("1d-sa", "sage", 0, order, 3300);
    }
  }
  fg_bf16_release();
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_model_fuse16");
}
