/* fg_dist.h -- the MPI context a library object lives on, collectives that count what they
 * move, and collective error agreement. The library never uses MPI_COMM_WORLD: fg_dist_create
 * duplicates the communicator it is given. */
#ifndef FG_DIST_H
#define FG_DIST_H

#include <mpi.h>
#include <stdint.h>

#include "core/fg_core.h"

/* Phases that communication is accounted to. */
enum { FG_PHASE_SETUP = 0, FG_PHASE_FORWARD, FG_PHASE_BACKWARD, FG_PHASE_GRADS,
       FG_PHASE_METRICS, FG_PHASE_COUNT };

typedef struct fg_comm_counters {
  int64_t bytes_sent[FG_PHASE_COUNT], bytes_recv[FG_PHASE_COUNT];
  int64_t msgs_sent[FG_PHASE_COUNT], msgs_recv[FG_PHASE_COUNT];
  /* the part of bytes_sent / bytes_recv that is not data but the parameters of quantized rows
   * (each row's scale and zero point: SuperGCN Table 4's two columns) */
  int64_t param_bytes_sent[FG_PHASE_COUNT], param_bytes_recv[FG_PHASE_COUNT];
  double seconds_comm; /* time inside communication calls (includes waiting) */
  double seconds_wait; /* part of it spent blocked in waits after computing */
  /* MPI_Testall calls made between the row chunks of an SpMM while a transfer was in flight
   * (fg_scheme_spmm_progress): how often the overlapped transfers got to progress */
  int64_t progress_tests;
} fg_comm_counters;

typedef struct fg_dist {
  MPI_Comm comm; /* our duplicate */
  int rank, size;
  int phase;     /* current FG_PHASE_* for accounting */
  fg_comm_counters counters;
} fg_dist;

/* Collective over comm: duplicate comm into a new context. */
fg_status fg_dist_create(MPI_Comm comm, fg_dist **out);
void fg_dist_destroy(fg_dist **d);

/* Turn an MPI return code into an fg_status with MPI's message. */
fg_status fg_mpi_status(int rc, const char *what, const char *file, int line);
#define FG_CHECK_MPI(call)                                                     \
  do {                                                                         \
    int _rc = (call);                                                          \
    if (_rc != MPI_SUCCESS) {                                                  \
      st = fg_mpi_status(_rc, #call, __FILE__, __LINE__);                      \
      goto cleanup;                                                            \
    }                                                                          \
  } while (0)

/* Collective: every rank passes its local status; all return the same status. If any rank
 * failed, the failing rank with the lowest number broadcasts its message, which every other
 * rank adopts (status FG_ERR_REMOTE elsewhere is replaced by the failing code). */
fg_status fg_dist_agree(fg_dist *d, fg_status local);

/* Collective sums in place (counted in the current phase). */
fg_status fg_dist_allreduce_f32(fg_dist *d, float *buf, int64_t n);
fg_status fg_dist_allreduce_f64(fg_dist *d, double *buf, int64_t n);
fg_status fg_dist_allreduce_i64(fg_dist *d, int64_t *buf, int64_t n);
/* Collective maximum in place (not counted: used for reporting). */
fg_status fg_dist_max_f64(fg_dist *d, double *buf, int64_t n);
/* Collective broadcast of n bytes from root (counted). */
fg_status fg_dist_bcast(fg_dist *d, void *buf, int64_t bytes, int root);

/* Collective: rows x w values (this rank's rows, with global ids gids, of columns [col0, col0 +
 * w) of an n_global x width matrix) into root's out in global order. A rank whose copy of its
 * rows is a replica passes rows = 0. out only needed on root. */
fg_status fg_dist_gather_block(fg_dist *d, const float *vals, const int64_t *gids,
                               int64_t rows, int64_t col0, int64_t w, int64_t width,
                               int64_t n_global, int root, float *out);
/* Collective: n values with their global indices idx into root's out (n_global); each element
 * of out is written by the one rank that passes its index. */
fg_status fg_dist_gather_indexed(fg_dist *d, const float *vals, const int64_t *idx, int64_t n,
                                 int64_t n_global, int root, float *out);

/* Collective: how many ranks of d share this rank's node (MPI_COMM_TYPE_SHARED). */
fg_status fg_dist_ranks_on_node(fg_dist *d, int *out);

/* Point to point of any size (sent in pieces below 2^30 bytes), counted as one message in
 * the current phase. Blocking. */
fg_status fg_dist_send_bytes(fg_dist *d, const void *buf, int64_t bytes, int dest, int tag);
fg_status fg_dist_recv_bytes(fg_dist *d, void *buf, int64_t bytes, int src, int tag);

/* Finish n nonblocking requests: the time counts in seconds_comm and, when overlapped (the
 * wait comes after computing that hid the transfer), in seconds_wait too. */
fg_status fg_dist_waitall(fg_dist *d, MPI_Request *reqs, int n, int overlapped);

/* Count a message in the current phase. */
void fg_dist_count_send(fg_dist *d, int64_t bytes);
void fg_dist_count_recv(fg_dist *d, int64_t bytes);
/* Of the bytes counted (by the two above), how many were quantization parameters. */
void fg_dist_count_params(fg_dist *d, int64_t sent, int64_t recv);

/* Narrow an element count for MPI (error beyond INT_MAX). */
fg_status fg_mpi_count(int64_t n, int *out);

#endif /* FG_DIST_H */
