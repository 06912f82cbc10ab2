/* group.c -- counted collectives over the whole communicator or a sub-communicator. */
#include "dist/fg_group.h"

#include <string.h>

fg_group fg_group_whole(fg_dist *d) {
  return (fg_group){.dist = d, .comm = d->comm, .rank = d->rank, .size = d->size};
}

fg_status fg_group_split(fg_dist *d, int color, int key, fg_group *out) {
  fg_status st = FG_OK;
  *out = (fg_group){.dist = d, .comm = MPI_COMM_NULL, .rank = 0, .size = 1};
  FG_CHECK_MPI(MPI_Comm_split(d->comm, color, key, &out->comm));
  FG_CHECK_MPI(MPI_Comm_set_errhandler(out->comm, MPI_ERRORS_RETURN));
  FG_CHECK_MPI(MPI_Comm_rank(out->comm, &out->rank));
  FG_CHECK_MPI(MPI_Comm_size(out->comm, &out->size));
cleanup:
  return st;
}

void fg_group_free(fg_group *g) {
  if (!g) return;
  if (g->comm != MPI_COMM_NULL && (!g->dist || g->comm != g->dist->comm)) MPI_Comm_free(&g->comm);
  g->comm = MPI_COMM_NULL;
}

/* The time since t0 into seconds_comm, and `bytes` sent and as many received. */
static void count_collective(fg_group *g, double t0, int64_t bytes) {
  g->dist->counters.seconds_comm += fg_now() - t0;
  fg_dist_count_send(g->dist, bytes);
  fg_dist_count_recv(g->dist, bytes);
}

/* An all-reduce in place, blocking when req is NULL, else started into *req; counted as a ring
 * all-reduce of n elements of esize bytes: 2 (G-1)/G of the buffer each way. */
static fg_status allreduce(fg_group *g, void *buf, int64_t n, MPI_Datatype type, MPI_Op op,
                           int64_t esize, MPI_Request *req) {
  fg_status st = FG_OK;
  int count = 0;
  double t0;
  if (req) *req = MPI_REQUEST_NULL;
  if (g->size == 1 || n == 0) return FG_OK;
  FG_CHECK(fg_mpi_count(n, &count));
  t0 = fg_now();
  if (req)
    FG_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, op, g->comm, req));
  else
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, g->comm));
  count_collective(g, t0, 2 * n * esize * (g->size - 1) / g->size);
cleanup:
  return st;
}

fg_status fg_group_allreduce_f32(fg_group *g, float *buf, int64_t n) {
  return allreduce(g, buf, n, MPI_FLOAT, MPI_SUM, 4, NULL);
}

fg_status fg_group_allreduce_f64(fg_group *g, double *buf, int64_t n) {
  return allreduce(g, buf, n, MPI_DOUBLE, MPI_SUM, 8, NULL);
}

fg_status fg_group_allreduce_i64(fg_group *g, int64_t *buf, int64_t n) {
  return allreduce(g, buf, n, MPI_INT64_T, MPI_SUM, 8, NULL);
}

fg_status fg_group_maxloc(fg_group *g, fg_maxloc *buf, int64_t n) {
  /* fg_maxloc has MPI_FLOAT_INT's layout: a float then an int */
  return allreduce(g, buf, n, MPI_FLOAT_INT, MPI_MAXLOC, 8, NULL);
}

fg_status fg_group_counts(const int64_t *len, int size, int *counts, int *displs,
                          int64_t *total) {
  fg_status st = FG_OK;
  int64_t off = 0;
  for (int r = 0; r < size; r++) {
    FG_CHECK(fg_mpi_count(len[r], &counts[r]));
    if (displs) FG_CHECK(fg_mpi_count(off, &displs[r]));
    off += len[r];
  }
  if (total) *total = off;
cleanup:
  return st;
}

/* An all-gather (gather != 0: every rank's piece of src into dst at displs) or a reduce-scatter
 * (src summed over the group, this rank's piece into dst) of pieces of counts[r] floats. */
static fg_status exchange_pieces(fg_group *g, const float *src, float *dst, const int *counts,
                                 const int *displs, int gather) {
  fg_status st = FG_OK;
  int64_t total = 0;
  double t0;
  for (int r = 0; r < g->size; r++) total += counts[r];
  if (g->size == 1) { /* the own piece is the whole */
    float *to = gather ? dst + displs[0] : dst;
    if (counts[0] > 0 && to != src) memmove(to, src, (size_t)counts[0] * sizeof(float));
    return FG_OK;
  }
  if (total == 0) return FG_OK;
  t0 = fg_now();
  if (!gather)
    FG_CHECK_MPI(MPI_Reduce_scatter(src, dst, counts, MPI_FLOAT, MPI_SUM, g->comm));
  else if (src == dst + displs[g->rank])
    FG_CHECK_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dst, counts, displs,
                                MPI_FLOAT, g->comm));
  else
    FG_CHECK_MPI(MPI_Allgatherv(src, counts[g->rank], MPI_FLOAT, dst, counts, displs, MPI_FLOAT,
                                g->comm));
  count_collective(g, t0, (total - counts[g->rank]) * 4);
cleanup:
  return st;
}

fg_status fg_group_allgather_f32(fg_group *g, const float *mine, float *all, const int *counts,
                                 const int *displs) {
  return exchange_pieces(g, mine, all, counts, displs, 1);
}

fg_status fg_group_reduce_scatter_f32(fg_group *g, const float *all, float *mine,
                                      const int *counts) {
  return exchange_pieces(g, all, mine, counts, NULL, 0);
}

fg_status fg_group_iallreduce_f32(fg_group *g, float *buf, int64_t n, MPI_Request *req) {
  return allreduce(g, buf, n, MPI_FLOAT, MPI_SUM, 4, req);
}

fg_status fg_group_allmerge_u16(fg_group *g, uint16_t *buf, int64_t n, MPI_Request *req) {
  return allreduce(g, buf, n, MPI_UINT16_T, MPI_BOR, 2, req);
}

fg_status fg_group_poke(fg_group *g, MPI_Request *reqs, int n) {
  fg_status st = FG_OK;
  int flag = 0;
  double t0 = fg_now();
  if (n <= 0) return FG_OK;
  FG_CHECK_MPI(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
  g->dist->counters.seconds_comm += fg_now() - t0;
cleanup:
  return st;
}

fg_status fg_group_waitall(fg_group *g, MPI_Request *reqs, int n) {
  return fg_dist_waitall(g->dist, reqs, n, 1);
}
