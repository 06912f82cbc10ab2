/* deliver.c -- rank 0 hands out CSR row pieces and dense blocks. See fg_deliver.h. */
#include <string.h>

#include "schemes/fg_deliver.h"

fg_status fg_deliver_bytes(fg_dist *d, int to, const void *piece, void *mine, int64_t bytes,
                           int tag) {
  if (d->rank != 0) return fg_dist_recv_bytes(d, mine, bytes, 0, tag);
  if (to != 0) return fg_dist_send_bytes(d, piece, bytes, to, tag);
  if (bytes > 0) memcpy(mine, piece, (size_t)bytes);
  return FG_OK;
}

fg_status fg_deliver_rows(fg_dist *d, int to, const fg_csr *M, int64_t r0, int64_t r1,
                          fg_csr *mine, int tag) {
  fg_status st = FG_OK;
  const int root = d->rank == 0;
  const int64_t rows = root ? r1 - r0 : mine->nrows;
  const int64_t a0 = root ? M->rowptr[r0] : 0, nnz = root ? M->rowptr[r1] - a0 : mine->nnz;
  FG_CHECK(fg_deliver_bytes(d, to, root ? M->rowptr + r0 : NULL, mine->rowptr, (rows + 1) * 8,
                            tag));
  FG_CHECK(fg_deliver_bytes(d, to, root ? M->col + a0 : NULL, mine->col, nnz * 4, tag));
  FG_CHECK(fg_deliver_bytes(d, to, root ? M->val + a0 : NULL, mine->val, nnz * 4, tag));
  if (d->rank == to) {
    const int64_t base = mine->rowptr[0];
    for (int64_t r = 0; r <= rows; r++) mine->rowptr[r] -= base;
  }
cleanup:
  return st;
}
