/* test_wire16.c -- run under mpiexec with P ranks (P = 3, 4): under --precision bf16, 1d's
 * broadcast blocks and the sparsity-aware exchange's rows (1d-sa, 1.5d) cross ranks as
 * bf16, and 1.5d's all-reduce of partial sums stays fp32.
 *  - Values: an aggregation and a transposed one under bf16 equal, bit for bit, the same scheme
 *    in fp32 on the input rounded to bf16 beforehand -- which is what the code before rows went
 *    bf16 computed (each receiver rounded fp32 rows; an SpMM on bf16-representable fp32 rows is
 *    bitwise the bf16 SpMM's, tests/kernels/test_bf16.c). For 1d, 1d with --overlap (256-byte
 *    SpMM chunks: the bf16 progress SpMM tests between them on every rank), 1d-sa with and without
 *    overlap, 1.5d with c = 1 and
 *    with the largest c of P, with and without overlap; widths 16 and 37; R-MAT (directed: Âᵀ has
 *    its own blocks and plan) and Cora.
 *  - Bytes of those two aggregations on every rank: bf16's are exactly half of fp32's for the
 *    rows (some rank moves rows); 1.5d's all-reduce adds the same fp32 bytes at both precisions
 *    (2 n f 4 (c-1)/c each way).
 *    halo: its pre rows (partial sums) are rounded on the wire, so within a bf16 rounding of the
 *    fp32 rows' result, not bitwise; its bytes halve as the others'.
 *  - The schemes here (1d, 1d-sa, 1.5d, halo; 3d's in test_scheme_ops): the input's bf16 rows aggregated as they are
 *    give the bf16 aggregation's bits and bytes (with and without overlap), and so does
 *    aggregate16_t the transposed one's.
 *  - Features delivered as bf16 (fg_scheme_config.features16) by 1d, 1d-sa, 1.5d, halo and 3d,
 *    normalized or not: the rounding of the fp32 features the scheme lays out otherwise.
 *  - One training epoch (forward, backward, evaluation forward; the model under bf16 too):
 *    every rank's bytes and messages per phase equal fg_comm_plan's with precision "bf16",
 *    and 1d's bytes are exactly half of the fp32 epoch's.
 */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "dist/fg_dist.h"
#include "model/fg_model.h"
#include "plan/fg_registry.h"
#include "test_data.h"
#include "testutil.h"

static int rank, nprocs;

/* 1.5d's largest replication on P ranks (c divides P, c <= P / c). */
static int largest_c(int P) {
  int cs[64];
  return cs[FG_MIN(fg_replicate_valid(P, cs, 64), 64) - 1];
}

/* Value of node v, column j of an aggregation's input: not bf16-representable in general. */
static float fx(int64_t v, int64_t j) {
  const uint64_t h = (uint64_t)v * 2654435761u + (uint64_t)j * 40503u + 17u;
  return (float)((h >> 5) % 1999) / 997.0f - 1.0f + 1e-4f * (float)(j % 7);
}

typedef struct variant {
  const char *scheme;
  int overlap, c; /* c: 1.5d's replication, -1 for the largest of P */
} variant;

static const variant variants[] = {{"1d", 0, 0},     {"1d", 1, 0},     {"1d-sa", 0, 0},
                                   {"1d-sa", 1, 0},  {"1.5d", 0, 1},   {"1.5d", 1, -1},
                                   {"1.5d", 0, -1},  {"halo", 0, 0}};
enum { NVARIANTS = (int)(sizeof variants / sizeof variants[0]) };

static fg_status make_scheme(fg_dist *d, const fg_dataset *ds, const variant *v, fg_scheme **s) {
  fg_scheme_config sc;
  memset(&sc, 0, sizeof sc);
  sc.name = v->scheme;
  sc.overlap = v->overlap;
  sc.seed = 5;
  sc.order = "random";
  sc.layers = 2;
  sc.replicate = v->c < 0 ? largest_c(nprocs) : v->c;
  return fg_scheme_create(d, rank == 0 ? ds : NULL, &sc, s);
}

/* Â X and Âᵀ X (out: 2 x n_local x f) at the scheme's precision; the bytes this rank sent and
 * received and its progress tests. */
static void aggregate_both(fg_scheme *s, const float *in, int64_t f, float *out, int64_t *sent,
                           int64_t *recv, int64_t *tests) {
  fg_dist *d = s->dist;
  memset(&d->counters, 0, sizeof d->counters);
  d->phase = FG_PHASE_FORWARD;
  EXPECT_OK(s->ops->aggregate(s, 0, in, out, f));
  EXPECT_OK(s->ops->aggregate_t(s, 0, in, out + s->n_local * f, f));
  *sent = d->counters.bytes_sent[FG_PHASE_FORWARD];
  *recv = d->counters.bytes_recv[FG_PHASE_FORWARD];
  *tests = d->counters.progress_tests;
}

static void check_values(fg_dist *d, int which) {
  fg_dataset *ds = NULL;
  static const int64_t widths[] = {16, 37};
  if (rank == 0) EXPECT_OK(test_data_make(which, &ds));
  for (int vi = 0; vi < NVARIANTS; vi++)
    for (int wi = 0; wi < 2; wi++) {
      const variant *v = &variants[vi];
      const int64_t f = widths[wi];
      fg_scheme *s = NULL;
      float *in = NULL, *in16 = NULL, *out16 = NULL, *outref = NULL;
      int64_t sent16 = 0, recv16 = 0, tests16 = 0, sent32 = 0, recv32 = 0, tests32 = 0, n;
      int c;
      EXPECT_OK(make_scheme(d, ds, v, &s));
      if (!s) continue;
      c = strcmp(v->scheme, "1.5d") == 0 ? (v->c < 0 ? largest_c(nprocs) : v->c) : 1;
      s->progress_chunk_bytes = 256; /* many chunks: the overlapped SpMMs test between them */
      n = s->n_local * f;
      in = malloc((size_t)FG_MAX(n, 1) * sizeof *in);
      in16 = malloc((size_t)FG_MAX(n, 1) * sizeof *in16);
      out16 = malloc((size_t)FG_MAX(2 * n, 1) * sizeof *out16);
      outref = malloc((size_t)FG_MAX(2 * n, 1) * sizeof *outref);
      if (!in || !in16 || !out16 || !outref) MPI_Abort(MPI_COMM_WORLD, 2);
      for (int64_t i = 0; i < s->n_local; i++)
        for (int64_t j = 0; j < f; j++) {
          in[i * f + j] = fx(s->global_ids[i], j);
          in16[i * f + j] = fg_bf16_to_float(fg_bf16_from_float(in[i * f + j]));
        }
      s->bf16 = 1;
      aggregate_both(s, in, f, out16, &sent16, &recv16, &tests16);
      s->bf16 = 0;
      aggregate_both(s, in16, f, outref, &sent32, &recv32, &tests32);
      if (strcmp(v->scheme, "halo") != 0) {
        EXPECT_MSG(memcmp(out16, outref, (size_t)(2 * n) * sizeof *out16) == 0,
                   "%s %s overlap %d c %d f %lld rank %d: bf16 on the wire changed the "
                   "aggregation's bits", test_data_name(which), v->scheme, v->overlap, c,
                   (long long)f, rank);
      } else {
        /* halo's pre rows are partial sums, rounded to bf16 on the wire where fp32 sends them
         * whole: each within a bf16 rounding (2^-9 relative) of the fp32 sum */
        double worst = 0.0;
        for (int64_t i = 0; i < 2 * n; i++)
          worst = fmax(worst, fabs((double)out16[i] - outref[i]) / fmax(1.0, fabs(outref[i])));
        EXPECT_MSG(worst <= 1e-2, "%s halo f %lld rank %d: bf16 rows %.3g from fp32's",
                   test_data_name(which), (long long)f, rank, worst);
      }
      {
        /* the all-reduces of the two aggregations, fp32 at either precision */
        const int64_t R = c > 1 ? 2 * (2 * n * 4 * (c - 1) / c) : 0;
        long long rows = sent32 - R, most = 0;
        /* (a 1.5d replica whose share is its own block alone moves no rows: some rank must) */
        MPI_Allreduce(&rows, &most, 1, MPI_LONG_LONG, MPI_MAX, d->comm);
        EXPECT_MSG(most > 0, "%s %s c %d: no rank sent a row", test_data_name(which), v->scheme,
                   c);
        EXPECT_MSG(sent16 == R + (sent32 - R) / 2 &&
                       recv16 == R + (recv32 - R) / 2 && (sent32 - R) % 2 == 0,
                   "%s %s overlap %d c %d f %lld rank %d: bf16 sent/recv %lld/%lld bytes, fp32 "
                   "%lld/%lld, all-reduce %lld", test_data_name(which), v->scheme, v->overlap,
                   c, (long long)f, rank, (long long)sent16, (long long)recv16,
                   (long long)sent32, (long long)recv32, (long long)R);
      }
      if (s->ops->aggregate16) {
        /* the rows already bf16 (a hidden the model stores so): aggregated as they are */
        fg_bf16 *h = malloc((size_t)FG_MAX(n, 1) * sizeof *h);
        float *o = malloc((size_t)FG_MAX(n, 1) * sizeof *o);
        int64_t b[2];
        if (!h || !o) MPI_Abort(MPI_COMM_WORLD, 2);
        fg_bf16_from_f32(h, in, n);
        s->bf16 = 1;
        for (int k = 0; k < 2; k++) { /* aggregate's bytes on fp32 rows, then aggregate16's */
          memset(&d->counters, 0, sizeof d->counters);
          d->phase = FG_PHASE_FORWARD;
          if (k == 0) EXPECT_OK(s->ops->aggregate(s, 0, in, o, f));
          else EXPECT_OK(s->ops->aggregate16(s, 0, h, o, f));
          b[k] = d->counters.bytes_sent[FG_PHASE_FORWARD];
        }
        EXPECT_MSG(memcmp(o, out16, (size_t)n * sizeof *o) == 0 && b[0] == b[1],
                   "%s %s overlap %d f %lld rank %d: aggregate16 differs from the bf16 "
                   "aggregation (bytes %lld against %lld)", test_data_name(which), v->scheme,
                   v->overlap, (long long)f, rank, (long long)b[1], (long long)b[0]);
        /* and transposed (a gradient the model stores as bf16): aggregate16_t */
        EXPECT(s->ops->aggregate16_t != NULL);
        for (int k = 0; k < 2 && s->ops->aggregate16_t; k++) {
          memset(&d->counters, 0, sizeof d->counters);
          d->phase = FG_PHASE_BACKWARD;
          if (k == 0) EXPECT_OK(s->ops->aggregate_t(s, 0, in, o, f));
          else EXPECT_OK(s->ops->aggregate16_t(s, 0, h, o, f));
          b[k] = d->counters.bytes_sent[FG_PHASE_BACKWARD];
        }
        s->bf16 = 0;
        EXPECT_MSG(memcmp(o, out16 + n, (size_t)n * sizeof *o) == 0 && b[0] == b[1],
                   "%s %s overlap %d f %lld rank %d: aggregate16_t differs from the bf16 "
                   "transposed aggregation (bytes %lld against %lld)", test_data_name(which),
                   v->scheme, v->overlap, (long long)f, rank, (long long)b[1], (long long)b[0]);
        free(h);
        free(o);
      }
      if (strcmp(v->scheme, "1d") == 0 && v->overlap)
        EXPECT_MSG(tests16 > 0, "1d overlap f %lld rank %d: no progress test between the bf16 "
                   "SpMM's chunks", (long long)f, rank);
      if (rank == 0 && wi == 0)
        printf("P=%d %-6s %-4s overlap %d c %d: %s; rank 0 sends %lld bytes in "
               "bf16, %lld in fp32; %lld progress tests\n", nprocs, test_data_name(which),
               v->scheme, v->overlap, c,
               strcmp(v->scheme, "halo") ? "bitwise equal" : "within a bf16 rounding",
               (long long)sent16, (long long)sent32,
               (long long)tests16);
      free(in);
      free(in16);
      free(out16);
      free(outref);
      fg_scheme_destroy(&s);
    }
  fg_dataset_destroy(&ds);
}

/* One epoch as fg_train runs it at the precision bf16; mine: bytes sent, recv, msgs sent, recv
 * for forward then backward. */
static fg_status epoch(fg_dist *d, const fg_dataset *ds, const variant *v, int bf16,
                       int64_t *mine) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  fg_model *m = NULL;
  float *dlogits = NULL;
  int64_t w[3];
  d->phase = FG_PHASE_SETUP;
  FG_CHECK(make_scheme(d, ds, v, &s));
  s->bf16 = bf16;
  w[0] = s->num_features;
  w[1] = 16;
  w[2] = s->num_classes;
  {
    fg_model_config mc = {.layers = 2, .widths = w, .agg_order = FG_AGG_AUTO, .seed = 11,
                          .bf16 = bf16};
    st = fg_model_create(&mc, s, &m);
  }
  if (st == FG_OK) {
    dlogits = malloc((size_t)FG_MAX(s->n_local * w[2], 1) * sizeof *dlogits);
    if (!dlogits) st = FG_ERR_NOMEM;
  }
  FG_CHECK(fg_dist_agree(d, st));
  for (int64_t i = 0; i < s->n_local * w[2]; i++) dlogits[i] = 0.01f;
  memset(&d->counters, 0, sizeof d->counters);
  d->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_model_forward(m, s, 1, 0.5f, 11, 1));
  d->phase = FG_PHASE_BACKWARD;
  FG_CHECK(fg_model_backward(m, s, dlogits, 0.5f, 11, 1));
  d->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_model_forward(m, s, 0, 0.0f, 11, 1));
  for (int ph = 0; ph < 2; ph++) {
    const int p = ph == 0 ? FG_PHASE_FORWARD : FG_PHASE_BACKWARD;
    mine[4 * ph + 0] = d->counters.bytes_sent[p];
    mine[4 * ph + 1] = d->counters.bytes_recv[p];
    mine[4 * ph + 2] = d->counters.msgs_sent[p];
    mine[4 * ph + 3] = d->counters.msgs_recv[p];
  }
cleanup:
  free(dlogits);
  fg_model_destroy(&m);
  fg_scheme_destroy(&s);
  return st;
}

static void check_epoch(fg_dist *d, int which) {
  fg_dataset *ds = NULL;
  int64_t *all16 = calloc((size_t)nprocs * 8, sizeof *all16);
  int64_t *all32 = calloc((size_t)nprocs * 8, sizeof *all32);
  fg_comm_rank_plan *plan = calloc((size_t)nprocs, sizeof *plan);
  if (!all16 || !all32 || !plan) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0) EXPECT_OK(test_data_make(which, &ds));
  for (int vi = 0; vi < NVARIANTS; vi++) {
    const variant *v = &variants[vi];
    int64_t m16[8] = {0}, m32[8] = {0};
    EXPECT_OK(epoch(d, ds, v, 1, m16));
    EXPECT_OK(epoch(d, ds, v, 0, m32));
    MPI_Gather(m16, 8, MPI_INT64_T, all16, 8, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(m32, 8, MPI_INT64_T, all32, 8, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank != 0) continue;
    {
      fg_comm_plan_config pc = fg_comm_plan_config_default();
      pc.ranks = nprocs;
      pc.scheme = v->scheme;
      pc.order = "random";
      pc.seed = 5;
      pc.replicate = v->c < 0 ? largest_c(nprocs) : v->c;
      pc.precision = "bf16";
      EXPECT_OK(fg_comm_plan(ds, &pc, plan, NULL));
    }
    for (int r = 0; r < nprocs; r++) {
      const int64_t *g16 = all16 + 8 * r, *g32 = all32 + 8 * r;
      const fg_comm_rank_plan *p = &plan[r];
      for (int ph = 0; ph < 2; ph++) {
        EXPECT_MSG(g16[4 * ph] == p->bytes_sent[ph] && g16[4 * ph + 1] == p->bytes_recv[ph] &&
                       g16[4 * ph + 2] == p->msgs_sent[ph] && g16[4 * ph + 3] == p->msgs_recv[ph],
                   "%s %s overlap %d rank %d phase %d: measured %lld/%lld bytes %lld/%lld msgs "
                   "under bf16, plan %lld/%lld bytes %lld/%lld msgs", test_data_name(which),
                   v->scheme, v->overlap, r, ph, (long long)g16[4 * ph],
                   (long long)g16[4 * ph + 1], (long long)g16[4 * ph + 2],
                   (long long)g16[4 * ph + 3], (long long)p->bytes_sent[ph],
                   (long long)p->bytes_recv[ph], (long long)p->msgs_sent[ph],
                   (long long)p->msgs_recv[ph]);
        /* rows halve, the all-reduce stays: fp32 = 2 (bf16 - replica) + replica */
        EXPECT_MSG(g32[4 * ph] == 2 * (g16[4 * ph] - p->replica_bytes[ph]) +
                                      p->replica_bytes[ph] &&
                       g32[4 * ph + 1] == 2 * (g16[4 * ph + 1] - p->replica_bytes[ph]) +
                                              p->replica_bytes[ph] &&
                       g32[4 * ph + 2] == g16[4 * ph + 2],
                   "%s %s overlap %d rank %d phase %d: fp32 moves %lld/%lld bytes, bf16 "
                   "%lld/%lld with %lld of all-reduce", test_data_name(which), v->scheme,
                   v->overlap, r, ph, (long long)g32[4 * ph], (long long)g32[4 * ph + 1],
                   (long long)g16[4 * ph], (long long)g16[4 * ph + 1],
                   (long long)p->replica_bytes[ph]);
      }
    }
    printf("P=%d %-6s %-4s overlap %d: epoch bytes sent by rank 0 %lld (bf16) %lld (fp32), "
           "as planned\n", nprocs, test_data_name(which), v->scheme, v->overlap,
           (long long)(all16[0] + all16[4]), (long long)(all32[0] + all32[4]));
  }
  free(all16);
  free(all32);
  free(plan);
  fg_dataset_destroy(&ds);
}

/* bf16 features delivered as bf16 (fg_scheme_config.features16): every scheme that lays the
 * features out from the dataset (1d, 1d-sa, 1.5d, halo, 3d), with and without
 * --normalize-features, holds in features16 exactly the rounding of the fp32 features the same
 * scheme holds without it, and no fp32 block. */
static void check_features(fg_dist *d, int which) {
  static const char *const names[] = {"1d", "1d-sa", "1.5d", "halo", "3d"};
  fg_dataset *ds = NULL;
  int64_t w[3];
  if (rank == 0) EXPECT_OK(test_data_make(which, &ds));
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    for (int norm = 0; norm < 2; norm++) {
      fg_scheme *s[2] = {NULL, NULL};
      int64_t bad = 0, count = 0;
      for (int x16 = 0; x16 < 2; x16++) {
        fg_scheme_config sc;
        memset(&sc, 0, sizeof sc);
        sc.name = names[k];
        sc.seed = 5;
        sc.layers = 2;
        sc.normalize_features = norm;
        sc.features16 = x16;
        sc.bf16 = x16;
        sc.agg_blocks = 1;
        sc.replicate = strcmp(names[k], "1.5d") == 0 ? largest_c(nprocs) : 0;
        sc.grid[0] = 1;
        sc.grid[1] = nprocs % 2 == 0 ? 2 : 1;
        sc.grid[2] = nprocs / sc.grid[1];
        EXPECT_OK(fg_scheme_create(d, rank == 0 ? ds : NULL, &sc, &s[x16]));
      }
      if (s[0] && s[1]) {
        fg_layer_shape sh;
        w[0] = s[0]->num_features, w[1] = 8, w[2] = s[0]->num_classes;
        s[0]->ops->shape(s[0], 0, w, &sh);
        count = sh.n_in * sh.w_in;
        EXPECT(s[0]->features && !s[0]->features16 && !s[1]->features && s[1]->features16);
        for (int64_t i = 0; s[1]->features16 && s[0]->features && i < count; i++)
          bad += s[1]->features16[i] != fg_bf16_from_float(s[0]->features[i]);
        EXPECT_MSG(bad == 0, "%s %s normalize %d rank %d: %lld of %lld bf16 features are not "
                   "the fp32 ones rounded", test_data_name(which), names[k], norm, rank,
                   (long long)bad, (long long)count);
      }
      if (rank == 0 && norm)
        printf("P=%d %-6s %-5s: features delivered as bf16 are the fp32 ones rounded (%lld on "
               "rank 0)\n", nprocs, test_data_name(which), names[k], (long long)count);
      fg_scheme_destroy(&s[0]);
      fg_scheme_destroy(&s[1]);
    }
  fg_dataset_destroy(&ds);
}

int main(int argc, char **argv) {
  fg_dist *d = NULL;
  int failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  if (d) {
    check_features(d, TEST_DATA_CORA);
    check_features(d, TEST_DATA_RMAT);
    check_values(d, TEST_DATA_RMAT);
    check_values(d, TEST_DATA_CORA);
    check_epoch(d, TEST_DATA_RMAT);
    check_epoch(d, TEST_DATA_CORA);
  }
  fg_dist_destroy(&d);
  fg_bf16_release();
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_wire16");
}
