/* fg_group.h -- counted collectives over a group of ranks: the whole fg_dist communicator or a
 * sub-communicator split from it (the rows, columns and fibres of a process grid).
 *
 * Every byte a group operation moves is counted in its fg_dist's counters, in the current
 * phase, with the volume a ring algorithm moves per rank whatever algorithm MPI picks:
 *   all-reduce of n elements        2 n (G-1)/G elements sent and as many received
 *   all-gather / reduce-scatter     (total - own piece) elements each way
 * and the time spent inside the calls is added to seconds_comm (blocked waits to seconds_wait).
 * A group of one rank moves nothing and counts nothing. Schemes keep their groups; the model
 * and the trainer never see one.
 */
#ifndef FG_GROUP_H
#define FG_GROUP_H

#include <mpi.h>
#include <stdint.h>

#include "dist/fg_dist.h"

typedef struct fg_group {
  fg_dist *dist; /* where the traffic is counted; not owned */
  MPI_Comm comm; /* owned unless it is dist->comm */
  int rank, size;
} fg_group;

/* The whole communicator of d as a group (nothing to free, but fg_group_free accepts it). */
fg_group fg_group_whole(fg_dist *d);
/* Collective over d: the ranks with the same color form a group, ordered by key. */
fg_status fg_group_split(fg_dist *d, int color, int key, fg_group *out);
void fg_group_free(fg_group *g);

/* Collective over g: sums in place. */
fg_status fg_group_allreduce_f32(fg_group *g, float *buf, int64_t n);
fg_status fg_group_allreduce_f64(fg_group *g, double *buf, int64_t n);
fg_status fg_group_allreduce_i64(fg_group *g, int64_t *buf, int64_t n);

/* Collective over g: element-wise maximum of val, keeping the lowest idx among equal values
 * (MPI_MAXLOC). */
fg_status fg_group_maxloc(fg_group *g, fg_maxloc *buf, int64_t n);

/* Collective over g: every rank's piece (counts[r] floats at displs[r] of all) into all. mine
 * may point into all at the rank's own displacement. */
fg_status fg_group_allgather_f32(fg_group *g, const float *mine, float *all, const int *counts,
                                 const int *displs);
/* Collective over g: all (the concatenation of every rank's counts[r] floats) summed over the
 * group; this rank's piece into mine. */
fg_status fg_group_reduce_scatter_f32(fg_group *g, const float *all, float *mine,
                                      const int *counts);

/* Nonblocking sums: fg_group_iallreduce_f32 starts one (counted when started), fg_group_poke
 * lets MPI progress the ones in flight (Open MPI moves a nonblocking collective only inside MPI
 * calls), fg_group_waitall finishes them (its time counts as waiting). */
fg_status fg_group_iallreduce_f32(fg_group *g, float *buf, int64_t n, MPI_Request *req);
fg_status fg_group_poke(fg_group *g, MPI_Request *reqs, int n);
fg_status fg_group_waitall(fg_group *g, MPI_Request *reqs, int n);

/* Collective over g: buf (n 16-bit words, bf16 rows) made the same on every rank where each
 * element is nonzero on at most one rank (rows moved, not summed: 3d's identity shards). A
 * bitwise OR, which is that rank's bits exactly (MPI has no bf16 sum, and none is needed).
 * Blocking when req is NULL, else started into *req (finish it with fg_group_waitall); counted
 * when started, as a ring all-reduce of n 2-byte elements. */
fg_status fg_group_allmerge_u16(fg_group *g, uint16_t *buf, int64_t n, MPI_Request *req);

/* counts and displacements (in elements) for pieces of len[0..size) elements, each checked to
 * fit an MPI int; *total (may be NULL) gets the sum. */
fg_status fg_group_counts(const int64_t *len, int size, int *counts, int *displs,
                          int64_t *total);

#endif /* FG_GROUP_H */
