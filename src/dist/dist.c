/* dist.c -- MPI context, counted collectives, collective error agreement. */
#include "dist/fg_dist.h"
#include "dist/fg_group.h"

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
  d->comm = MPI_COMM_NULL;
  FG_CHECK_MPI(MPI_Comm_dup(comm, &d->comm));
  /* errors come back as codes, so a failure is reported instead of aborting the job */
  FG_CHECK_MPI(MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN));
  FG_CHECK_MPI(MPI_Comm_rank(d->comm, &d->rank));
  FG_CHECK_MPI(MPI_Comm_size(d->comm, &d->size));
  *out = d;
  d = NULL;
cleanup:
  fg_dist_destroy(&d);
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

void fg_dist_count_params(fg_dist *d, int64_t sent, int64_t recv) {
  d->counters.param_bytes_sent[d->phase] += sent;
  d->counters.param_bytes_recv[d->phase] += recv;
}

fg_status fg_dist_agree(fg_dist *d, fg_status local) {
  fg_status st = FG_OK;
  struct { int value, rank; } mine = {(int)local, d->rank}, worst;
  char msg[2048], adopted[2100];
  if (d->size == 1) return local;
  /* MINLOC: the most negative status wins; among equals, the lowest rank */
  FG_CHECK_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, d->comm));
  if (worst.value == FG_OK) return FG_OK;
  /* msg[0] says whether the message was agreed on before (by an inner collective call): then
   * every rank holds it already prefixed with its origin, and the lowest rank re-sends it */
  if (d->rank == worst.rank)
    snprintf(msg, sizeof msg, "%c%s", fg_error_is_adopted() ? 'A' : 'L', fg_last_error());
  FG_CHECK_MPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, worst.rank, d->comm));
  if (msg[0] == 'A')
    snprintf(adopted, sizeof adopted, "%s", msg + 1);
  else
    snprintf(adopted, sizeof adopted, "rank %d: %s", worst.rank, msg + 1);
  fg_error_adopt((fg_status)worst.value, adopted);
  return (fg_status)worst.value;
cleanup:
  return st;
}

fg_status fg_dist_allreduce_f32(fg_dist *d, float *buf, int64_t n) {
  fg_group g = fg_group_whole(d);
  return fg_group_allreduce_f32(&g, buf, n);
}
fg_status fg_dist_allreduce_f64(fg_dist *d, double *buf, int64_t n) {
  fg_group g = fg_group_whole(d);
  return fg_group_allreduce_f64(&g, buf, n);
}
fg_status fg_dist_allreduce_i64(fg_dist *d, int64_t *buf, int64_t n) {
  fg_group g = fg_group_whole(d);
  return fg_group_allreduce_i64(&g, buf, n);
}

enum { FG_XFER_SEND, FG_XFER_RECV, FG_XFER_BCAST };

/* Moves `bytes` in pieces below 2^30 bytes, so that every count fits an int: out sent to peer
 * (FG_XFER_SEND), or in received from peer (FG_XFER_RECV) or broadcast from root peer
 * (FG_XFER_BCAST). Counted as one message in the current phase (sent by the sender and the
 * root, received by everyone else). */
static fg_status transfer(fg_dist *d, const char *out, char *in, int64_t bytes, int peer,
                          int tag, int kind) {
  fg_status st = FG_OK;
  const int64_t chunk = (int64_t)1 << 30;
  for (int64_t off = 0; off < bytes; off += chunk) {
    const int len = (int)FG_MIN(bytes - off, chunk);
    if (kind == FG_XFER_SEND)
      FG_CHECK_MPI(MPI_Send(out + off, len, MPI_BYTE, peer, tag, d->comm));
    else if (kind == FG_XFER_RECV)
      FG_CHECK_MPI(MPI_Recv(in + off, len, MPI_BYTE, peer, tag, d->comm, MPI_STATUS_IGNORE));
    else
      FG_CHECK_MPI(MPI_Bcast(in + off, len, MPI_BYTE, peer, d->comm));
  }
  if (kind == FG_XFER_SEND || (kind == FG_XFER_BCAST && d->rank == peer))
    fg_dist_count_send(d, bytes);
  else
    fg_dist_count_recv(d, bytes);
cleanup:
  return st;
}

fg_status fg_dist_send_bytes(fg_dist *d, const void *buf, int64_t bytes, int dest, int tag) {
  return bytes <= 0 ? FG_OK : transfer(d, buf, NULL, bytes, dest, tag, FG_XFER_SEND);
}

fg_status fg_dist_recv_bytes(fg_dist *d, void *buf, int64_t bytes, int src, int tag) {
  return bytes <= 0 ? FG_OK : transfer(d, NULL, buf, bytes, src, tag, FG_XFER_RECV);
}

fg_status fg_dist_waitall(fg_dist *d, MPI_Request *reqs, int n, int overlapped) {
  fg_status st = FG_OK;
  double t0 = fg_now(), dt;
  if (n <= 0) return FG_OK;
  FG_CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
  dt = fg_now() - t0;
  d->counters.seconds_comm += dt;
  if (overlapped) d->counters.seconds_wait += dt;
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
  return d->size == 1 || bytes == 0 ? FG_OK : transfer(d, NULL, buf, bytes, root, 0, FG_XFER_BCAST);
}

fg_status fg_dist_gather_block(fg_dist *d, const float *vals, const int64_t *gids,
                               int64_t rows, int64_t col0, int64_t w, int64_t width,
                               int64_t n_global, int root, float *out) {
  fg_status st = FG_OK;
  int *cnt_i = NULL, *dsp_i = NULL, *cnt_v = NULL, *dsp_v = NULL, ni = 0, nv = 0;
  int64_t hdr[3] = {rows, col0, w}, *hdrs = NULL, *all_ids = NULL, *len = NULL;
  float *all_vals = NULL;
  const int P = d->size, me_root = d->rank == root;
  FG_REQUIRE(rows == 0 || (col0 >= 0 && w >= 0 && col0 + w <= width), FG_ERR_INTERNAL,
             "gather: columns [%lld, %lld) outside a width of %lld", (long long)col0,
             (long long)(col0 + w), (long long)width);
  if (P == 1) {
    for (int64_t i = 0; i < rows; i++)
      memcpy(out + gids[i] * width + col0, vals + i * w, (size_t)w * sizeof(float));
    return FG_OK;
  }
  FG_CHECK(fg_mpi_count(rows, &ni));
  FG_CHECK(fg_mpi_count(rows * w, &nv));
  if (me_root) {
    FG_ALLOC(hdrs, 4 * P); /* 3 per rank, then len */
    len = hdrs + 3 * P;
    FG_ALLOC(cnt_i, 4 * P); /* cnt_i, dsp_i, cnt_v, dsp_v */
    dsp_i = cnt_i + P;
    cnt_v = dsp_i + P;
    dsp_v = cnt_v + P;
  }
  FG_CHECK_MPI(MPI_Gather(hdr, 3, MPI_INT64_T, hdrs, 3, MPI_INT64_T, root, d->comm));
  if (me_root) {
    int64_t ti = 0, tv = 0;
    for (int r = 0; r < P; r++) len[r] = hdrs[3 * r];
    FG_CHECK(fg_group_counts(len, P, cnt_i, dsp_i, &ti));
    for (int r = 0; r < P; r++) len[r] = hdrs[3 * r] * hdrs[3 * r + 2];
    FG_CHECK(fg_group_counts(len, P, cnt_v, dsp_v, &tv));
    FG_ALLOC(all_ids, FG_MAX(ti, 1));
    FG_ALLOC(all_vals, FG_MAX(tv, 1));
  }
  FG_CHECK_MPI(MPI_Gatherv(gids, ni, MPI_INT64_T, all_ids, cnt_i, dsp_i, MPI_INT64_T, root,
                           d->comm));
  FG_CHECK_MPI(MPI_Gatherv(vals, nv, MPI_FLOAT, all_vals, cnt_v, dsp_v, MPI_FLOAT, root,
                           d->comm));
  if (me_root) {
    for (int r = 0; r < P; r++) {
      const int64_t rw = hdrs[3 * r + 2], c0 = hdrs[3 * r + 1];
      for (int64_t i = 0; i < hdrs[3 * r]; i++) {
        const int64_t v = all_ids[dsp_i[r] + i];
        FG_REQUIRE(v >= 0 && v < n_global && c0 + rw <= width, FG_ERR_INTERNAL,
                   "gather: row %lld of rank %d outside %lld x %lld", (long long)v, r,
                   (long long)n_global, (long long)width);
        memcpy(out + v * width + c0, all_vals + dsp_v[r] + i * rw, (size_t)rw * sizeof(float));
      }
    }
  }
cleanup:
  free(hdrs);
  free(cnt_i);
  free(all_ids);
  free(all_vals);
  return st;
}

fg_status fg_dist_gather_indexed(fg_dist *d, const float *vals, const int64_t *idx, int64_t n,
                                 int64_t n_global, int root, float *out) {
  /* a block of one column whose rows are the indices */
  return fg_dist_gather_block(d, vals, idx, n, 0, 1, 1, n_global, root, out);
}

fg_status fg_dist_ranks_on_node(fg_dist *d, int *out) {
  fg_status st = FG_OK;
  MPI_Comm node = MPI_COMM_NULL;
  *out = 1;
  FG_CHECK_MPI(MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  FG_CHECK_MPI(MPI_Comm_size(node, out));
cleanup:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return st;
}

fg_status fg_agree(MPI_Comm comm, fg_status local) {
  fg_status st = FG_OK;
  fg_dist d = {.comm = comm};
  FG_CHECK_MPI(MPI_Comm_rank(comm, &d.rank));
  FG_CHECK_MPI(MPI_Comm_size(comm, &d.size));
  st = fg_dist_agree(&d, local);
cleanup:
  return st;
}
