/* test_order_volume.c -- the volume-aware orders (hypergraph, volume) on generated graphs:
 * R-MAT directed and undirected, with and without self loops, and P in {2, 3, 4, 8}.
 *   - the column-net hypergraph's connectivity-1 cut (counted here from the parts) equals the
 *     rows 1d-sa sends per aggregation in fg_comm_plan, for every order;
 *   - volume never raises the max send or recv volume of its METIS start, and keeps rows and
 *     nonzeros within 5% of the mean (or the start's own extreme);
 *   - both orders are valid (a permutation, monotone offsets), the same twice, and a
 *     different seed may differ; parts > n gives balanced blocks of the identity;
 *   - without Zoltan / METIS the orders are refused naming the package.
 * Zoltan needs MPI, so main initialises it (one process). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "plan/fg_plan.h"
#include "schemes/fg_partition.h"
#include "testutil.h"

/* An R-MAT graph (scale, edge factor 6) as a dataset with 8 features and 3 classes. */
static fg_dataset *make_graph(int scale, int undirected, int self_loops, uint64_t seed) {
  int64_t *src = NULL, *dst = NULL, m = 0;
  fg_status st;
  const int64_t n = (int64_t)1 << scale;
  fg_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) exit(2);
  st = fg_rmat_edges(scale, 6, seed, &src, &dst, &m);
  ds->num_nodes = n;
  if (st == FG_OK) st = fg_csr_from_edges(n, src, dst, m, undirected, 1, self_loops, &ds->adj);
  if (st == FG_OK) {
    ds->symmetric = fg_csr_is_symmetric(&ds->adj);
    ds->num_features = 8;
    ds->num_classes = 3;
    st = fg_generate_features(n, 8, 5, &ds->features);
  }
  if (st == FG_OK) st = fg_generate_labels(&ds->adj, 3, 5, &ds->labels);
  if (st == FG_OK) st = fg_generate_split(n, ds->labels, 0.5, 0.25, 5, &ds->split);
  free(src);
  free(dst);
  EXPECT_OK(st);
  if (st != FG_OK) fg_dataset_destroy(&ds);
  return ds;
}

/* Connectivity-1 cut of the column-net hypergraph of A under part, by brute force: for
 * every column j the distinct parts of { i : A(i, j) != 0 } ∪ { j } other than part[j]. */
static int64_t hypergraph_cut(const fg_csr *A, const int32_t *part, int P) {
  const int64_t n = A->nrows;
  int64_t cut = 0;
  char *seen = calloc((size_t)(n * P), 1); /* (n x P) net j touches part p */
  if (!seen) exit(2);
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) seen[(int64_t)A->col[k] * P + part[i]] = 1;
  for (int64_t j = 0; j < n; j++) {
    seen[j * P + part[j]] = 1;
    for (int p = 0; p < P; p++) cut += p != part[j] && seen[j * P + p];
  }
  free(seen);
  return cut;
}

/* part[perm[k]] = the block of position k; checks perm is a permutation, offs monotone and,
 * when sorted (the partitioners' relabelling), a block's nodes increasing. */
static int parts_of(const int64_t *perm, const int64_t *offs, int64_t n, int P, int sorted,
                    int32_t *part) {
  int ok = offs[0] == 0 && offs[P] == n;
  for (int64_t v = 0; v < n; v++) part[v] = -1;
  for (int r = 0; r < P; r++) {
    ok &= offs[r] <= offs[r + 1];
    for (int64_t k = offs[r]; k < offs[r + 1] && ok; k++) {
      ok &= perm[k] >= 0 && perm[k] < n && part[perm[k]] < 0;
      if (ok) part[perm[k]] = r;
      /* nodes of a part in increasing original id */
      ok &= !sorted || k == offs[r] || perm[k - 1] < perm[k];
    }
  }
  return ok;
}

static void check_graph(const char *name, const fg_dataset *ds) {
  static const int Ps[] = {2, 3, 4, 8};
  const fg_csr *A = &ds->adj;
  const int64_t n = A->nrows;
  int64_t *perm = malloc(sizeof *perm * (size_t)n), *perm2 = malloc(sizeof *perm2 * (size_t)n);
  int32_t *part = malloc(sizeof *part * (size_t)n);
  if (!perm || !perm2 || !part) exit(2);
  for (int pi = 0; pi < 4; pi++) {
    const int P = Ps[pi];
    int64_t offs[9], offs2[9];
    for (int kind = 0; kind < FG_ORDER_COUNT; kind++) {
      fg_comm_plan_config pc = fg_comm_plan_config_default();
      fg_comm_rank_plan plan[8];
      fg_partition_stats ps;
      int64_t sent = 0, cut;
      if (!fg_order_available((fg_order_kind)kind)) continue;
      EXPECT_OK(fg_order_compute(A, P, (fg_order_kind)kind, 3, perm, offs));
      EXPECT_MSG(parts_of(perm, offs, n, P, kind >= FG_ORDER_METIS, part), "%s P=%d %s: not a valid order", name, P,
                 fg_order_name((fg_order_kind)kind));
      if (fg_test_failures > 0) break; /* part may hold -1s */
      cut = hypergraph_cut(A, part, P);
      /* the cut is what 1d-sa sends (fg_comm_plan: forward Â·H rows) */
      pc.ranks = P;
      pc.scheme = "1d-sa";
      pc.order = fg_order_name((fg_order_kind)kind);
      pc.seed = 3;
      EXPECT_OK(fg_comm_plan(ds, &pc, plan, NULL));
      for (int r = 0; r < P; r++) sent += plan[r].agg_rows_sent;
      EXPECT_MSG(cut == sent, "%s P=%d %s: hypergraph cut %lld, 1d-sa sends %lld rows", name, P,
                 pc.order, (long long)cut, (long long)sent);
      if (P == 4) { /* the library's summary (fullgraph info) counts the same */
        EXPECT_OK(fg_partition_summarize(ds, P, pc.order, 3, &ps));
        EXPECT_MSG(ps.total == cut, "%s P=%d %s: fg_partition_summarize total %lld, cut %lld",
                   name, P, pc.order, (long long)ps.total, (long long)cut);
      }
      if (kind == FG_ORDER_HYPERGRAPH) { /* the rebalancing after PHG: rows and entries, as below */
        int64_t rows[8] = {0}, nnz[8] = {0}, hr = 0, hn = 0, ml = 0;
        for (int64_t v = 0; v < n; v++) {
          rows[part[v]]++, nnz[part[v]] += A->rowptr[v + 1] - A->rowptr[v];
          ml = FG_MAX(ml, A->rowptr[v + 1] - A->rowptr[v]);
        }
        for (int p = 0; p < P; p++) hr = FG_MAX(hr, rows[p]), hn = FG_MAX(hn, nnz[p]);
        EXPECT_MSG(hr <= FG_MAX((int64_t)(1.05 * (double)n / P), (n + P - 1) / P) &&
                       hn <= FG_MAX(FG_MAX((int64_t)(1.05 * (double)A->nnz / P),
                                           (A->nnz + P - 1) / P), ml) + ml,
                   "%s P=%d hypergraph: max rows %lld, max nnz %lld over 5%%", name, P,
                   (long long)hr, (long long)hn);
      }
      if (kind == FG_ORDER_HYPERGRAPH || kind == FG_ORDER_VOLUME) {
        /* deterministic: the same call twice; another seed gives a valid order too */
        EXPECT_OK(fg_order_compute(A, P, (fg_order_kind)kind, 3, perm2, offs2));
        EXPECT_MSG(memcmp(perm, perm2, sizeof *perm * (size_t)n) == 0 &&
                       memcmp(offs, offs2, sizeof *offs * (size_t)(P + 1)) == 0,
                   "%s P=%d %s: two calls differ", name, P, pc.order);
        EXPECT_OK(fg_order_compute(A, P, (fg_order_kind)kind, 99, perm2, offs2));
        EXPECT_MSG(parts_of(perm2, offs2, n, P, 1, part), "%s P=%d %s seed 99: not a valid order",
                   name, P, pc.order);
      }
    }
    {
      /* fg_order_rebalance from the worst start: rows by degree into blocks (part 0 the
       * leaves, part P-1 the hubs); afterwards every part within the row cap and within one
       * row's entries of the entry cap (single moves stop short when only a swap would fix
       * the last few entries: the header of fg_order_rebalance), total = the cut */
      fg_rebalance_stats rs;
      int64_t rows[8] = {0}, nnz[8] = {0}, ml = 0;
      for (int64_t v = 0; v < n; v++) {
        const int64_t len = A->rowptr[v + 1] - A->rowptr[v];
        part[v] = (int32_t)FG_MIN((int64_t)P - 1, len * P / (2 * (A->nnz / n + 1)));
        ml = FG_MAX(ml, len);
      }
      EXPECT_OK(fg_order_rebalance(A, P, 3, 0.05, part, &rs));
      for (int64_t v = 0; v < n; v++) rows[part[v]]++, nnz[part[v]] += A->rowptr[v + 1] - A->rowptr[v];
      for (int p = 0; p < P; p++)
        EXPECT_MSG(rows[p] <= rs.cap_rows && nnz[p] <= rs.cap_nnz + ml,
                   "%s P=%d rebalance: part %d has %lld rows (cap %lld), %lld nnz (cap %lld)",
                   name, P, p, (long long)rows[p], (long long)rs.cap_rows, (long long)nnz[p],
                   (long long)rs.cap_nnz);
      EXPECT_MSG(rs.over_after <= P && rs.total_after == hypergraph_cut(A, part, P),
                 "%s P=%d rebalance: %d parts over, total %lld", name, P, rs.over_after,
                 (long long)rs.total_after);
      printf("%-22s P=%d rebalance: total %lld -> %lld (%d passes, %lld moves)\n", name, P,
             (long long)rs.total_before, (long long)rs.total_after, rs.passes,
             (long long)rs.moves);
    }
    if (fg_order_available(FG_ORDER_VOLUME)) {
      /* the refinement against its METIS start */
      fg_volume_refine_stats vs;
      int64_t rows[8] = {0}, nnz[8] = {0}, r0[8] = {0}, n0[8] = {0};
      int64_t hr = 0, hn = 0, lr = n, ln = A->nnz, hr0 = 0, hn0 = 0, lr0 = n, ln0 = A->nnz;
      EXPECT_OK(fg_order_metis_parts(A, P, 3, part));
      for (int64_t v = 0; v < n; v++) r0[part[v]]++, n0[part[v]] += A->rowptr[v + 1] - A->rowptr[v];
      EXPECT_OK(fg_order_volume_refine(A, P, 3, part, &vs));
      for (int64_t v = 0; v < n; v++) rows[part[v]]++, nnz[part[v]] += A->rowptr[v + 1] - A->rowptr[v];
      for (int p = 0; p < P; p++) {
        hr = FG_MAX(hr, rows[p]), hn = FG_MAX(hn, nnz[p]);
        lr = FG_MIN(lr, rows[p]), ln = FG_MIN(ln, nnz[p]);
        hr0 = FG_MAX(hr0, r0[p]), hn0 = FG_MAX(hn0, n0[p]);
        lr0 = FG_MIN(lr0, r0[p]), ln0 = FG_MIN(ln0, n0[p]);
      }
      EXPECT_MSG(vs.max_send_after <= vs.max_send_before && vs.max_recv_after <= vs.max_recv_before,
                 "%s P=%d volume: max send %lld -> %lld, recv %lld -> %lld", name, P,
                 (long long)vs.max_send_before, (long long)vs.max_send_after,
                 (long long)vs.max_recv_before, (long long)vs.max_recv_after);
      EXPECT_MSG(vs.total_after == hypergraph_cut(A, part, P),
                 "%s P=%d volume: refinement's total %lld is not the cut", name, P,
                 (long long)vs.total_after);
      EXPECT_MSG(hr <= FG_MAX(hr0, (int64_t)(1.05 * (double)n / P)) &&
                     hn <= FG_MAX(hn0, (int64_t)(1.05 * (double)A->nnz / P)) &&
                     lr >= FG_MIN(lr0, (int64_t)(0.95 * (double)n / P)) &&
                     ln >= FG_MIN(ln0, (int64_t)(0.95 * (double)A->nnz / P)),
                 "%s P=%d volume: rows %lld..%lld, nnz %lld..%lld out of bounds", name, P,
                 (long long)lr, (long long)hr, (long long)ln, (long long)hn);
      printf("%-22s P=%d volume: max send %lld -> %lld, max recv %lld -> %lld, total %lld -> "
             "%lld (%d passes, %lld moves)\n", name, P, (long long)vs.max_send_before,
             (long long)vs.max_send_after, (long long)vs.max_recv_before,
             (long long)vs.max_recv_after, (long long)vs.total_before, (long long)vs.total_after,
             vs.passes, (long long)vs.moves);
    }
  }
  free(perm);
  free(perm2);
  free(part);
}

/* parts > n, n == 0, one part: balanced blocks of the identity. */
static void check_small(void) {
  int64_t *src = NULL, *dst = NULL, perm[4], offs[9];
  const int64_t s3[] = {0, 1, 2}, d3[] = {1, 2, 3};
  fg_csr A = {0}, E = {0};
  EXPECT_OK(fg_csr_from_edges(4, s3, d3, 3, 1, 1, 1, &A));
  EXPECT_OK(fg_csr_from_edges(0, src, dst, 0, 1, 1, 1, &E));
  for (int kind = FG_ORDER_HYPERGRAPH; kind <= FG_ORDER_VOLUME; kind++) {
    if (!fg_order_available((fg_order_kind)kind)) continue;
    EXPECT_OK(fg_order_compute(&A, 8, (fg_order_kind)kind, 1, perm, offs));
    for (int k = 0; k < 4; k++) EXPECT(perm[k] == k);
    for (int r = 0; r < 8; r++) EXPECT(offs[r + 1] - offs[r] == (r < 4));
    EXPECT_OK(fg_order_compute(&A, 1, (fg_order_kind)kind, 1, perm, offs));
    EXPECT(offs[0] == 0 && offs[1] == 4);
    EXPECT_OK(fg_order_compute(&E, 3, (fg_order_kind)kind, 1, perm, offs));
    EXPECT(offs[0] == 0 && offs[3] == 0);
  }
  fg_csr_free(&A);
  fg_csr_free(&E);
}

/* Without the library the order is refused, naming the package. */
static void check_refusal(void) {
  fg_order_kind k;
  if (!fg_order_available(FG_ORDER_HYPERGRAPH)) {
    EXPECT(fg_order_parse("hypergraph", &k) == FG_ERR_UNSUPPORTED);
    EXPECT(fg_test_error_contains("libtrilinos-zoltan-dev"));
  } else {
    EXPECT_OK(fg_order_parse("hypergraph", &k));
    EXPECT(k == FG_ORDER_HYPERGRAPH);
  }
  if (!fg_order_available(FG_ORDER_VOLUME)) {
    EXPECT(fg_order_parse("volume", &k) == FG_ERR_UNSUPPORTED);
    EXPECT(fg_test_error_contains("libmetis-dev"));
  } else {
    EXPECT_OK(fg_order_parse("volume", &k));
    EXPECT(k == FG_ORDER_VOLUME);
  }
  EXPECT(fg_order_parse("volumes", &k) == FG_ERR_INVALID_ARG);
  EXPECT(strcmp(fg_order_name(FG_ORDER_HYPERGRAPH), "hypergraph") == 0);
  EXPECT(strcmp(fg_order_name(FG_ORDER_VOLUME), "volume") == 0);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int undirected, self_loops;
  } graphs[] = {{"rmat9 undirected+loops", 1, 1},
                {"rmat9 undirected", 1, 0},
                {"rmat9 directed+loops", 0, 1},
                {"rmat9 directed", 0, 0}};
  MPI_Init(&argc, &argv);
  check_refusal();
  check_small();
  for (int g = 0; g < 4; g++) {
    fg_dataset *ds = make_graph(9, graphs[g].undirected, graphs[g].self_loops, 7 + (uint64_t)g);
    if (!ds) continue;
    check_graph(graphs[g].name, ds);
    fg_dataset_destroy(&ds);
  }
  MPI_Finalize();
  return fg_test_finish("test_order_volume");
}
