/* fg_dist.c -- MPI context, counted collectives, collective error agreement. */
#include "dist/fg_dist.h"

#include <limits.h>
#include <string.h>

fg_status fg_mpi_status(int rc, const char *what, const char *file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", rc);
  return fg_error_set(FG_ERR_MPI, file, line, "MPI call %s failed: %s", what, text);
}

fg_status fg_mpi_count(int64_t n, int *out) {
  fg_status st = FG_OK;
  FG_REQUIRE(n >= 0 && n <= INT_MAX, FG_ERR_UNSUPPORTED,
             "a single MPI message of %lld elements exceeds the 2^31-1 element limit",
             (long long)n);
  *out = (int)n;
cleanup:
  return st;
}

fg_status fg_dist_create(MPI_Comm comm, fg_dist **out) {
  fg_status st = FG_OK;
  fg_dist *d = NULL;
  FG_CALLOC(d, 1);
  FG_CHECK_MPI(MPI_Comm_dup(comm, &d->comm));
  /* errors come back as codes, so a failure is reported instead of aborting the job */
  FG_CHECK_MPI(MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN));
  FG_CHECK_MPI(MPI_Comm_rank(d->comm, &d->rank));
  FG_CHECK_MPI(MPI_Comm_size(d->comm, &d->size));
  *out = d;
  d = NULL;
cleanup:
  if (d) {
    if (d->comm != MPI_COMM_NULL && d->comm) MPI_Comm_free(&d->comm);
    free(d);
  }
  return st;
}

void fg_dist_destroy(fg_dist **d) {
  if (!d || !*d) return;
  if ((*d)->comm != MPI_COMM_NULL) MPI_Comm_free(&(*d)->comm);
  free(*d);
  *d = NULL;
}

void fg_dist_count_send(fg_dist *d, int64_t bytes) {
  d->counters.bytes_sent[d->phase] += bytes;
  d->counters.msgs_sent[d->phase] += 1;
}

void fg_dist_count_recv(fg_dist *d, int64_t bytes) {
  d->counters.bytes_recv[d->phase] += bytes;
  d->counters.msgs_recv[d->phase] += 1;
}

fg_status fg_dist_agree(fg_dist *d, fg_status local) {
  fg_status st = FG_OK;
  struct { int value, rank; } mine = {(int)local, d->rank}, worst;
  char msg[2048];
  if (d->size == 1) return local;
  /* MINLOC: the most negative status wins; among equals, the lowest rank */
  FG_CHECK_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, d->comm));
  if (worst.value == FG_OK) return FG_OK;
  /* msg[0] says whether the message was agreed on before (by an inner collective call): then
   * every rank holds it already prefixed with its origin, and the lowest rank re-sends it */
  if (d->rank == worst.rank)
    snprintf(msg, sizeof msg, "%c%s", fg_error_is_adopted() ? 'A' : 'L', fg_last_error());
  FG_CHECK_MPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, worst.rank, d->comm));
  {
    char adopted[2100];
    if (msg[0] == 'A')
      snprintf(adopted, sizeof adopted, "%s", msg + 1);
    else
      snprintf(adopted, sizeof adopted, "rank %d: %s", worst.rank, msg + 1);
    fg_error_adopt((fg_status)worst.value, adopted);
  }
  return (fg_status)worst.value;
cleanup:
  return st;
}

static fg_status allreduce(fg_dist *d, void *buf, int64_t n, MPI_Datatype type, int64_t esize) {
  fg_status st = FG_OK;
  int count = 0;
  double t0;
  if (d->size == 1 || n == 0) return FG_OK;
  FG_CHECK(fg_mpi_count(n, &count));
  t0 = fg_now();
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, count, type, MPI_SUM, d->comm));
  d->counters.seconds_comm += fg_now() - t0;
  /* a ring allreduce moves 2 (P-1)/P of the buffer each way per rank */
  {
    int64_t bytes = 2 * n * esize * (d->size - 1) / d->size;
    fg_dist_count_send(d, bytes);
    fg_dist_count_recv(d, bytes);
  }
cleanup:
  return st;
}

fg_status fg_dist_allreduce_f32(fg_dist *d, float *buf, int64_t n) {
  return allreduce(d, buf, n, MPI_FLOAT, 4);
}
fg_status fg_dist_allreduce_f64(fg_dist *d, double *buf, int64_t n) {
  return allreduce(d, buf, n, MPI_DOUBLE, 8);
}
fg_status fg_dist_allreduce_i64(fg_dist *d, int64_t *buf, int64_t n) {
  return allreduce(d, buf, n, MPI_INT64_T, 8);
}

#define FG_MPI_CHUNK ((int64_t)1 << 30)

fg_status fg_dist_send_bytes(fg_dist *d, const void *buf, int64_t bytes, int dest, int tag) {
  fg_status st = FG_OK;
  const char *p = buf;
  if (bytes <= 0) return FG_OK;
  for (int64_t off = 0; off < bytes; off += FG_MPI_CHUNK) {
    const int len = (int)FG_MIN(bytes - off, FG_MPI_CHUNK);
    FG_CHECK_MPI(MPI_Send(p + off, len, MPI_BYTE, dest, tag, d->comm));
  }
  fg_dist_count_send(d, bytes);
cleanup:
  return st;
}

fg_status fg_dist_recv_bytes(fg_dist *d, void *buf, int64_t bytes, int src, int tag) {
  fg_status st = FG_OK;
  char *p = buf;
  if (bytes <= 0) return FG_OK;
  for (int64_t off = 0; off < bytes; off += FG_MPI_CHUNK) {
    const int len = (int)FG_MIN(bytes - off, FG_MPI_CHUNK);
    FG_CHECK_MPI(MPI_Recv(p + off, len, MPI_BYTE, src, tag, d->comm, MPI_STATUS_IGNORE));
  }
  fg_dist_count_recv(d, bytes);
cleanup:
  return st;
}

fg_status fg_dist_max_f64(fg_dist *d, double *buf, int64_t n) {
  fg_status st = FG_OK;
  int count = 0;
  if (d->size == 1 || n == 0) return FG_OK;
  FG_CHECK(fg_mpi_count(n, &count));
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_DOUBLE, MPI_MAX, d->comm));
cleanup:
  return st;
}

fg_status fg_dist_bcast(fg_dist *d, void *buf, int64_t bytes, int root) {
  fg_status st = FG_OK;
  char *p = buf;
  if (d->size == 1 || bytes == 0) return FG_OK;
  /* chunks below 2^30 bytes keep every count within an int */
  for (int64_t off = 0; off < bytes; off += (int64_t)1 << 30) {
    int64_t len = FG_MIN(bytes - off, (int64_t)1 << 30);
    FG_CHECK_MPI(MPI_Bcast(p + off, (int)len, MPI_BYTE, root, d->comm));
  }
  if (d->rank == root)
    fg_dist_count_send(d, bytes);
  else
    fg_dist_count_recv(d, bytes);
cleanup:
  return st;
}

fg_status fg_dist_gather_rows(fg_dist *d, const float *rows, const int64_t *gids,
                              int64_t n_local, int64_t width, int64_t n_global, int root,
                              float *out) {
  fg_status st = FG_OK;
  int *counts = NULL, *displs = NULL, *rcounts = NULL, *rdispls = NULL;
  int64_t *all_ids = NULL;
  float *all_rows = NULL;
  int nl = 0, nv = 0;
  if (d->size == 1) {
    for (int64_t i = 0; i < n_local; i++)
      memcpy(out + gids[i] * width, rows + i * width, (size_t)width * sizeof(float));
    return FG_OK;
  }
  FG_CHECK(fg_mpi_count(n_local, &nl));
  FG_CHECK(fg_mpi_count(n_local * width, &nv));
  if (d->rank == root) {
    FG_ALLOC(counts, d->size);
    FG_ALLOC(displs, d->size);
    FG_ALLOC(rcounts, d->size);
    FG_ALLOC(rdispls, d->size);
    FG_ALLOC(all_ids, n_global);
    FG_ALLOC(all_rows, n_global * width);
  }
  FG_CHECK_MPI(MPI_Gather(&nl, 1, MPI_INT, counts, 1, MPI_INT, root, d->comm));
  if (d->rank == root) {
    int64_t off = 0;
    for (int r = 0; r < d->size; r++) {
      FG_REQUIRE(off + counts[r] <= n_global, FG_ERR_INTERNAL, "gather: more rows than nodes");
      displs[r] = (int)off;
      FG_CHECK(fg_mpi_count((int64_t)counts[r] * width, &rcounts[r]));
      FG_CHECK(fg_mpi_count(off * width, &rdispls[r]));
      off += counts[r];
    }
  }
  FG_CHECK_MPI(MPI_Gatherv(gids, nl, MPI_INT64_T, all_ids, counts, displs, MPI_INT64_T, root,
                           d->comm));
  FG_CHECK_MPI(MPI_Gatherv(rows, nv, MPI_FLOAT, all_rows, rcounts, rdispls, MPI_FLOAT, root,
                           d->comm));
  if (d->rank == root) {
    int64_t total = displs[d->size - 1] + counts[d->size - 1];
    for (int64_t i = 0; i < total; i++)
      memcpy(out + all_ids[i] * width, all_rows + i * width, (size_t)width * sizeof(float));
  }
cleanup:
  free(counts);
  free(displs);
  free(rcounts);
  free(rdispls);
  free(all_ids);
  free(all_rows);
  return st;
}

fg_status fg_agree(MPI_Comm comm, fg_status local) {
  fg_status st = FG_OK;
  fg_dist d;
  memset(&d, 0, sizeof d);
  d.comm = comm;
  FG_CHECK_MPI(MPI_Comm_rank(comm, &d.rank));
  FG_CHECK_MPI(MPI_Comm_size(comm, &d.size));
  st = fg_dist_agree(&d, local);
cleanup:
  return st;
}
