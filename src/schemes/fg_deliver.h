/* fg_deliver.h -- rank 0 hands out pieces: the 1D and 3d schemes' distribution, where rank 0
 * builds every rank's rows of a CSR matrix and dense blocks and sends them, in rank order.
 *
 * A delivery to rank `to` is called by rank 0 and by rank `to` only, with the same sizes: rank
 * 0 passes the piece (sent, or copied when `to` is 0), rank `to` the buffer it lands in. A
 * message is counted as fg_dist_send_bytes / fg_dist_recv_bytes count it (none for 0 bytes).
 */
#ifndef FG_DELIVER_H
#define FG_DELIVER_H

#include "dist/fg_dist.h"
#include "kernels/fg_kernels.h"

/* Rows [r0, r1) of rank 0's M (columns and values as they are) into rank `to`'s mine,
 * allocated for them (fg_scheme_alloc_csr), with offsets rebased to start at 0. M, r0 and r1
 * are read on rank 0 only; mine is the caller's own piece on both ranks. In three messages:
 * offsets, columns, values. */
fg_status fg_deliver_rows(fg_dist *d, int to, const fg_csr *M, int64_t r0, int64_t r1,
                          fg_csr *mine, int tag);

/* `bytes` bytes of rank 0's piece into rank `to`'s mine. */
fg_status fg_deliver_bytes(fg_dist *d, int to, const void *piece, void *mine, int64_t bytes,
                           int tag);

#endif /* FG_DELIVER_H */
