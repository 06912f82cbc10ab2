/* test_progress.c -- run under mpiexec with P ranks (P = 1, 2, 4): the overlapped SpMM
 * (fg_scheme_spmm_progress) calls MPI between its row chunks while a transfer is in flight,
 * stops once the transfers are done, and leaves the product bit for bit as the one-call SpMM's;
 * and the overlapped schemes use it.
 *  - A receive that nobody has sent yet (from this rank itself, sent after the SpMM): with
 *    chunks of one row (4f bytes, one cost unit) every one of the nrows - 1 chunk boundaries
 *    tests it; the message then arrives intact.
 *  - A request that is already complete (a receive from MPI_PROC_NULL): one test, no more.
 *  - No request: no test, and the one-call SpMM's time and bytes.
 *  - P >= 2: 4 MB from every rank to the next one while both multiply: the data arrive intact
 *    and every rank tested at least once (how many tests the transfer took is printed).
 *  - 1d and 1d-sa with overlap and halo on R-MAT scale 9 at P >= 2 with 256-byte chunks: an
 *    aggregation and a transposed one test on every rank (none at P = 1, where nothing moves)
 *    and equal, bit for bit, the same scheme without overlap (halo: with one-chunk SpMMs).
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fg_kernels.h"
#include "plan/fg_registry.h"
#include "test_data.h"
#include "testutil.h"

#define TAG_SELF 7301
#define TAG_RING 7302

static int rank, nprocs;

/* An nrows x ncols CSR (ncols >= 8) with 1 to 4 nonzeros a row (every 9th row empty), values
 * in (0, 1), columns increasing within a row. */
static void make_csr(fg_csr *A, int64_t nrows, int64_t ncols) {
  int64_t nz = 0;
  memset(A, 0, sizeof *A);
  A->nrows = nrows;
  A->ncols = ncols;
  A->rowptr = malloc((size_t)(nrows + 1) * sizeof *A->rowptr);
  A->col = malloc((size_t)(4 * nrows + 1) * sizeof *A->col);
  A->val = malloc((size_t)(4 * nrows + 1) * sizeof *A->val);
  if (!A->rowptr || !A->col || !A->val) exit(2);
  A->rowptr[0] = 0;
  for (int64_t r = 0; r < nrows; r++) {
    const int64_t deg = r % 9 == 4 ? 0 : 1 + r % 4;
    for (int64_t k = 0; k < deg; k++) {
      A->col[nz] = (int32_t)((r * 7) % (ncols / 4) + k * (ncols / 4));
      A->val[nz++] = (float)(1 + (r + k) % 13) / 14.0f;
    }
    A->rowptr[r + 1] = nz;
  }
  A->nnz = nz;
}

/* A scheme shell that fg_scheme_spmm_progress can account to: its dist and counters only. */
static void shell(fg_scheme *s, fg_dist *d, int64_t chunk_bytes) {
  memset(s, 0, sizeof *s);
  s->dist = d;
  s->progress_chunk_bytes = chunk_bytes;
}

static void test_counts(fg_dist *d) {
  const int64_t nrows = 301, ncols = 97, f = 33;
  fg_csr A;
  fg_scheme s;
  float *X = malloc((size_t)(ncols * f) * sizeof *X), *Y = malloc((size_t)(nrows * f) * sizeof *Y);
  float *Yw = malloc((size_t)(nrows * f) * sizeof *Yw);
  float msg[8] = {0}, got[8] = {0};
  MPI_Request req = MPI_REQUEST_NULL;
  if (!X || !Y || !Yw) exit(2);
  make_csr(&A, nrows, ncols);
  fg_test_fill(X, ncols * f, 3, -1.0f, 1.0f);
  fg_spmm(&A, X, f, Yw, f, f);
  for (int i = 0; i < 8; i++) msg[i] = (float)(rank * 10 + i);

  /* outstanding all along: a test at every chunk boundary, each chunk one row */
  shell(&s, d, 4 * f);
  d->counters.progress_tests = 0;
  MPI_Irecv(got, 8, MPI_FLOAT, rank, TAG_SELF, d->comm, &req);
  EXPECT_OK(fg_scheme_spmm_progress(&s, &A, X, f, Y, 0, &req, 1));
  EXPECT_MSG(d->counters.progress_tests == nrows - 1,
             "a receive outstanding throughout: %lld tests for %lld one-row chunks",
             (long long)d->counters.progress_tests, (long long)nrows);
  EXPECT_MSG(req != MPI_REQUEST_NULL, "a receive nobody sent was reported complete");
  EXPECT(memcmp(Y, Yw, (size_t)(nrows * f) * sizeof *Y) == 0);
  MPI_Send(msg, 8, MPI_FLOAT, rank, TAG_SELF, d->comm);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  EXPECT(memcmp(got, msg, sizeof msg) == 0);
  EXPECT(s.spmm_bytes == (double)A.nnz * 8.0 + (double)A.nnz * (double)f * 4.0 +
                             (double)nrows * (double)f * 4.0);
  EXPECT(s.seconds_spmm > 0.0);

  /* complete from the start: the first test finds it done and the rest is one call */
  d->counters.progress_tests = 0;
  MPI_Irecv(got, 8, MPI_FLOAT, MPI_PROC_NULL, TAG_SELF, d->comm, &req);
  EXPECT_OK(fg_scheme_spmm_progress(&s, &A, X, f, Y, 0, &req, 1));
  EXPECT_MSG(d->counters.progress_tests == 1, "a complete request: %lld tests",
             (long long)d->counters.progress_tests);
  EXPECT(req == MPI_REQUEST_NULL);
  EXPECT(memcmp(Y, Yw, (size_t)(nrows * f) * sizeof *Y) == 0);

  /* nothing in flight: no test */
  d->counters.progress_tests = 0;
  EXPECT_OK(fg_scheme_spmm_progress(&s, &A, X, f, Y, 0, NULL, 0));
  EXPECT(d->counters.progress_tests == 0);
  EXPECT(memcmp(Y, Yw, (size_t)(nrows * f) * sizeof *Y) == 0);
  if (rank == 0)
    printf("P=%d self receive: %lld one-row chunks, tests while outstanding %lld, when done 1\n",
           nprocs, (long long)nrows, (long long)(nrows - 1));
  fg_csr_free(&A);
  free(X);
  free(Y);
  free(Yw);
}

/* 4 MB to the next rank, received from the previous one, while both multiply. */
static void test_ring(fg_dist *d) {
  const int64_t nrows = 20000, ncols = 5000, f = 64, n = 1 << 20;
  fg_csr A;
  fg_scheme s;
  float *X = malloc((size_t)(ncols * f) * sizeof *X), *Y = malloc((size_t)(nrows * f) * sizeof *Y);
  float *Yw = malloc((size_t)(nrows * f) * sizeof *Yw);
  float *out = malloc((size_t)n * sizeof *out), *in = malloc((size_t)n * sizeof *in);
  MPI_Request req[2];
  const int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
  int bad = 0;
  long long tests = 0, most = 0, least = 0;
  if (!X || !Y || !Yw || !out || !in) exit(2);
  make_csr(&A, nrows, ncols);
  fg_test_fill(X, ncols * f, 4, -1.0f, 1.0f);
  fg_spmm(&A, X, f, Yw, f, f);
  for (int64_t i = 0; i < n; i++) out[i] = (float)(rank * 1000003 + i % 65521);
  memset(in, 0, (size_t)n * sizeof *in);
  shell(&s, d, 16 * 4 * f); /* 16 cost units a chunk: ~1400 chunks */
  d->counters.progress_tests = 0;
  MPI_Irecv(in, (int)n, MPI_FLOAT, prev, TAG_RING, d->comm, &req[0]);
  MPI_Isend(out, (int)n, MPI_FLOAT, next, TAG_RING, d->comm, &req[1]);
  EXPECT_OK(fg_scheme_spmm_progress(&s, &A, X, f, Y, 0, req, 2));
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  for (int64_t i = 0; i < n; i++) bad += in[i] != (float)(prev * 1000003 + i % 65521);
  EXPECT_MSG(bad == 0, "rank %d: %d values of the ring message wrong", rank, bad);
  EXPECT(memcmp(Y, Yw, (size_t)(nrows * f) * sizeof *Y) == 0);
  EXPECT_MSG(d->counters.progress_tests > 0, "rank %d: no progress test during the SpMM", rank);
  tests = d->counters.progress_tests;
  MPI_Allreduce(&tests, &most, 1, MPI_LONG_LONG, MPI_MAX, d->comm);
  MPI_Allreduce(&tests, &least, 1, MPI_LONG_LONG, MPI_MIN, d->comm);
  if (rank == 0)
    printf("P=%d ring of 4 MB messages during a chunked SpMM: %lld to %lld tests a rank\n",
           nprocs, least, most);
  fg_csr_free(&A);
  free(X);
  free(Y);
  free(Yw);
  free(out);
  free(in);
}

/* Value of node v, column j of an aggregation's input. */
static float fx(int64_t v, int64_t j) {
  const uint64_t h = (uint64_t)v * 2654435761u + (uint64_t)j * 40503u + 17u;
  return (float)((h >> 5) % 1999) / 999.0f - 1.0f;
}

/* Â X and Âᵀ X of one scheme; *tests the progress tests they made. out: 2 x n_local x f. */
static void aggregate(fg_dist *d, const fg_dataset *ds, const char *name, int overlap,
                      int64_t chunk_bytes, int64_t f, float **out, int64_t *rows,
                      int64_t *tests) {
  fg_scheme_config sc;
  fg_scheme *s = NULL;
  float *in = NULL;
  memset(&sc, 0, sizeof sc);
  sc.name = name;
  sc.overlap = overlap;
  sc.seed = 5;
  sc.layers = 2;
  *out = NULL;
  EXPECT_OK(fg_scheme_create(d, rank == 0 ? ds : NULL, &sc, &s));
  if (!s) return;
  s->progress_chunk_bytes = chunk_bytes;
  *rows = s->n_local;
  in = malloc((size_t)FG_MAX(s->n_local * f, 1) * sizeof *in);
  *out = malloc((size_t)FG_MAX(2 * s->n_local * f, 1) * sizeof **out);
  if (!in || !*out) exit(2);
  for (int64_t i = 0; i < s->n_local; i++)
    for (int64_t j = 0; j < f; j++) in[i * f + j] = fx(s->global_ids[i], j);
  d->counters.progress_tests = 0;
  EXPECT_OK(s->ops->aggregate(s, 0, in, *out, f));
  EXPECT_OK(s->ops->aggregate_t(s, 0, in, *out + s->n_local * f, f));
  *tests = d->counters.progress_tests;
  free(in);
  fg_scheme_destroy(&s);
}

static void test_schemes(fg_dist *d, const fg_dataset *ds) {
  static const char *names[] = {"1d", "1d-sa", "halo"};
  const int64_t f = 16;
  for (int k = 0; k < 3; k++) {
    const int halo = k == 2;
    float *plain = NULL, *over = NULL;
    int64_t rows_p = 0, rows_o = 0, tests_p = 0, tests_o = 0;
    long long least = 0, mine = 0;
    /* the reference: halo always overlaps (it takes no --overlap), so its reference is one
     * chunk an SpMM */
    aggregate(d, ds, names[k], 0, halo ? (int64_t)1 << 40 : 256, f, &plain, &rows_p, &tests_p);
    aggregate(d, ds, names[k], !halo, 256, f, &over, &rows_o, &tests_o);
    if (!plain || !over) {
      free(plain);
      free(over);
      continue;
    }
    EXPECT(rows_p == rows_o);
    EXPECT_MSG(memcmp(plain, over, (size_t)(2 * rows_p * f) * sizeof *plain) == 0,
               "%s: progress between SpMM chunks changed the aggregation's bits", names[k]);
    EXPECT_MSG(halo || tests_p == 0, "%s without overlap made %lld progress tests", names[k],
               (long long)tests_p);
    if (nprocs == 1)
      EXPECT_MSG(tests_o == 0, "%s at P = 1 made %lld progress tests", names[k],
                 (long long)tests_o);
    else
      EXPECT_MSG(tests_o > 0, "%s with overlap, rank %d: no progress test between SpMM chunks",
                 names[k], rank);
    mine = tests_o;
    MPI_Allreduce(&mine, &least, 1, MPI_LONG_LONG, MPI_MIN, d->comm);
    if (rank == 0)
      printf("P=%d %-5s overlapped aggregate + aggregate_t: bitwise equal, at least %lld tests "
             "a rank\n", nprocs, names[k], least);
    free(plain);
    free(over);
  }
}

int main(int argc, char **argv) {
  fg_dist *d = NULL;
  fg_dataset *ds = NULL;
  int failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  if (d) {
    test_counts(d);
    if (nprocs > 1) test_ring(d);
    if (rank == 0) EXPECT_OK(test_data_make(TEST_DATA_RMAT, &ds));
    test_schemes(d, ds);
  }
  fg_dataset_destroy(&ds);
  fg_dist_destroy(&d);
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_progress");
}
