/* test_dist.c -- run under mpiexec with P ranks: the counted collectives of dist/.
 *
 * fg_group over the whole communicator and over sub-communicators split two ways: sums,
 * MAXLOC (ties to the lower column), all-gather and reduce-scatter of uneven pieces (some
 * empty), the nonblocking sum; each against its value and the bytes counted against the ring
 * volume it documents. fg_dist_gather_block with column blocks and replicas that pass no rows,
 * fg_dist_gather_indexed, and fg_dist_agree carrying one rank's message to every rank. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "dist/fg_group.h"
#include "testutil.h"

static int rank, nprocs;

/* bytes counted in the current phase since *mark, and move the mark */
static int64_t sent_since(const fg_dist *d, int64_t *mark) {
  const int64_t now = d->counters.bytes_sent[d->phase], got = now - *mark;
  *mark = now;
  return got;
}

static void test_group(fg_dist *d, fg_group *g, const char *what) {
  const int G = g->size, me = g->rank;
  int64_t mark = d->counters.bytes_sent[d->phase], len[64];
  int counts[64], displs[64];
  float buf[8], all[64], mine[16];
  double dsum[3] = {1.0, (double)me, 0.5};
  fg_maxloc mx[2];
  MPI_Request req;
  /* sums: 8 floats, ring volume 2 * 32 (G-1)/G */
  for (int i = 0; i < 8; i++) buf[i] = (float)(me + i);
  EXPECT_OK(fg_group_allreduce_f32(g, buf, 8));
  for (int i = 0; i < 8; i++)
    EXPECT_MSG(buf[i] == (float)(G * (G - 1) / 2 + G * i), "%s: sum %d is %g", what, i,
               (double)buf[i]);
  EXPECT(sent_since(d, &mark) == 2 * 32 * (G - 1) / G);
  EXPECT_OK(fg_group_allreduce_f64(g, dsum, 3));
  EXPECT(dsum[0] == G && dsum[1] == G * (G - 1) / 2.0 && dsum[2] == 0.5 * G);
  mark = d->counters.bytes_sent[d->phase];
  /* MAXLOC: row 0's maximum on the last rank; row 1 ties everywhere, the lowest column wins */
  mx[0].val = (float)me;
  mx[0].idx = 100 + me;
  mx[1].val = 7.0f;
  mx[1].idx = 50 - me;
  EXPECT_OK(fg_group_maxloc(g, mx, 2));
  EXPECT_MSG(mx[0].val == (float)(G - 1) && mx[0].idx == 100 + G - 1, "%s: maxloc %g at %d", what,
             (double)mx[0].val, mx[0].idx);
  EXPECT_MSG(mx[1].val == 7.0f && mx[1].idx == 50 - (G - 1), "%s: tie went to column %d", what,
             mx[1].idx);
  EXPECT(sent_since(d, &mark) == 2 * 16 * (G - 1) / G);
  /* all-gather of uneven pieces: rank r holds r % 3 floats (rank 0 none) */
  for (int r = 0; r < G; r++) len[r] = r % 3;
  EXPECT_OK(fg_group_counts(len, G, counts, displs, NULL));
  for (int i = 0; i < counts[me]; i++) mine[i] = (float)(10 * me + i);
  EXPECT_OK(fg_group_allgather_f32(g, mine, all, counts, displs));
  for (int r = 0; r < G; r++)
    for (int i = 0; i < counts[r]; i++)
      EXPECT_MSG(all[displs[r] + i] == (float)(10 * r + i), "%s: gathered piece of rank %d", what,
                 r);
  {
    int64_t total = 0;
    for (int r = 0; r < G; r++) total += counts[r];
    EXPECT(sent_since(d, &mark) == (G > 1 && total > 0 ? 4 * (total - counts[me]) : 0));
    /* reduce-scatter: every rank passes the same concatenation; each piece comes back G times */
    for (int64_t i = 0; i < total; i++) all[i] = (float)(i + 1);
    EXPECT_OK(fg_group_reduce_scatter_f32(g, all, mine, counts));
    for (int i = 0; i < counts[me]; i++)
      EXPECT_MSG(mine[i] == (float)(G * (displs[me] + i + 1)), "%s: scattered %d is %g", what, i,
                 (double)mine[i]);
    EXPECT(sent_since(d, &mark) == (G > 1 && total > 0 ? 4 * (total - counts[me]) : 0));
  }
  /* nonblocking: counted when started */
  for (int i = 0; i < 8; i++) buf[i] = 1.0f;
  EXPECT_OK(fg_group_iallreduce_f32(g, buf, 8, &req));
  EXPECT_OK(fg_group_poke(g, &req, 1));
  EXPECT_OK(fg_group_waitall(g, &req, 1));
  for (int i = 0; i < 8; i++) EXPECT(buf[i] == (float)G);
  EXPECT(sent_since(d, &mark) == 2 * 32 * (G - 1) / G);
  if (rank == 0) printf("P=%d %s: group of %d ok\n", nprocs, what, G);
}

/* Rows of a 5 x 4 matrix: rank r holds rows r, r + P, ... and the column block [r % 2 * 2, +2);
 * odd ranks' rows are replicas of even ones' where P > 1, and pass none, except what a
 * column block needs: every element has exactly one contributing rank. */
static void test_gathers(fg_dist *d) {
  const int64_t n = 5, width = 4;
  float vals[40], out[20], idxvals[20], full[20];
  int64_t ids[20], idx[20];
  int64_t rows = 0, k = 0;
  /* ranks 0 and 1 (or rank 0 alone) cover everything: rank 0 columns 0-1 (all when P == 1) */
  const int64_t col0 = rank == 1 ? 2 : 0, w = nprocs == 1 ? width : 2;
  if (rank < 2) {
    for (int64_t v = n - 1; v >= 0; v--) { /* rows in another order than the ids */
      ids[rows] = v;
      for (int64_t c = 0; c < w; c++) vals[rows * w + c] = (float)(10 * v + col0 + c);
      rows++;
    }
  }
  memset(out, 0, sizeof out);
  EXPECT_OK(fg_dist_gather_block(d, vals, ids, rows, col0, w, width, n, 0, out));
  if (rank == 0)
    for (int64_t v = 0; v < n; v++)
      for (int64_t c = 0; c < width; c++)
        EXPECT_MSG(out[v * width + c] == (float)(10 * v + c), "gather_block (%lld, %lld) = %g",
                   (long long)v, (long long)c, (double)out[v * width + c]);
  /* indexed: element i held by rank i % P */
  for (int64_t i = rank; i < 20; i += nprocs) {
    idx[k] = i;
    idxvals[k++] = (float)(3 * i);
  }
  memset(full, 0, sizeof full);
  EXPECT_OK(fg_dist_gather_indexed(d, idxvals, idx, k, 20, 0, full));
  if (rank == 0)
    for (int i = 0; i < 20; i++) EXPECT(full[i] == (float)(3 * i));
}

int main(int argc, char **argv) {
  int failures = 0;
  fg_dist *d = NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  if (d) {
    fg_group whole = fg_group_whole(d), halves, pairs;
    d->phase = FG_PHASE_FORWARD;
    test_group(d, &whole, "whole");
    /* two ways of splitting: contiguous halves, and ranks of equal parity */
    EXPECT_OK(fg_group_split(d, rank < (nprocs + 1) / 2, rank, &halves));
    test_group(d, &halves, "halves");
    EXPECT_OK(fg_group_split(d, rank % 2, -rank, &pairs)); /* keys reverse the order */
    EXPECT(pairs.rank == (pairs.size - 1) - rank / 2);
    test_group(d, &pairs, "parity");
    fg_group_free(&halves);
    fg_group_free(&pairs);
    fg_group_free(&whole); /* the whole communicator is d's: not freed */
    EXPECT(d->comm != MPI_COMM_NULL);
    test_gathers(d);
    /* a failure on the last rank reaches everyone with its message */
    {
      fg_status st = FG_OK;
      if (rank == nprocs - 1)
        st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "only the last rank saw this");
      st = fg_dist_agree(d, st);
      EXPECT(st == FG_ERR_INVALID_ARG);
      EXPECT(fg_test_error_contains("only the last rank saw this"));
    }
  }
  fg_dist_destroy(&d);
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_dist");
}
