/* fg_sa.h -- the sparsity-aware exchange (Mukhopadhyay et al., §4): a rank receives exactly the
 * rows of H that its nonzeros reference, from the ranks that hold them. Written once for the
 * 1d-sa scheme (every block row on one rank) and the 1.5d scheme (every block row on c replicas,
 * each multiplying a 1/c share of the block columns).
 *
 * The layout: the n positions are cut into `parts` blocks (offs); rank r holds block r / rep (rep
 * = the replication, 1 for 1d-sa) as replica r mod rep. It multiplies two parts of its block's
 * rows: the diagonal part, its replica's slice of the own block's columns (fg_sa_diag_cuts:
 * every replica holds the block's rows of H, so no message, and the slices even out the
 * replicas' nonzeros, most of which a partitioner puts in the diagonal block), and the off part,
 * the columns of the other blocks of its share (all of them when rep = 1), whose distinct
 * columns -- NnzCols(i, k) for each such block k, sorted, hence grouped by block -- form the
 * compact "halo" numbering. The rows of block k come from its replica k rep + (i mod
 * rep): with rep > 1 the c replicas of a block share the sending (Algorithm 2 has the replica of
 * the receiver's own grid column send them all; the bytes and messages are the same in total,
 * the busiest sender's are about 1/c of them).
 *
 * The plan is built once (an Alltoall of counts, an Alltoallv of the requested positions); an
 * aggregation posts the receives and sends of the halo rows, multiplies the diagonal part
 * (while the messages are in flight when overlapped), waits, and adds the off part. The sums
 * are made in the same order either way: overlap changes no bit.
 */
#ifndef FG_SA_H
#define FG_SA_H

#include <mpi.h>
#include <stdint.h>

#include "schemes/fg_scheme.h"

/* One operator's (Â or Âᵀ) local part and exchange plan. */
typedef struct fg_sa_op {
  fg_csr diag; /* (rows x rows) the own block's columns, if in [col0, col1) */
  fg_csr off;  /* (rows x n_halo) the other blocks' columns in [col0, col1), halo numbering */
  int64_t n_halo, n_send;
  int32_t *halo;                /* (n_halo) global positions of the halo rows */
  int *recv_count, *recv_displ; /* (P) halo rows from each rank */
  int *send_count, *send_displ; /* (P) rows to each rank */
  int32_t *send_rows;           /* (n_send) local rows to pack, grouped by destination */
} fg_sa_op;

/* The buffers and requests the operators of one scheme share. */
typedef struct fg_sa_exchange {
  MPI_Request *req; /* (2 P) */
  float *sendbuf;   /* (max_send x cap_f) fp32, or bf16 under --precision bf16 (cap_esz) */
  float *halobuf;   /* (max_halo x cap_f) likewise */
  int64_t cap_f, cap_esz, max_send, max_halo;
  int overlap;
} fg_sa_exchange;

/* Collective: op for the local rows M (this rank's block of offs's `parts`, global column
 * positions), with each block on rep replicas (ranks block rep .. block rep + rep - 1):
 * replica j multiplies its slice of its own block's columns (fg_sa_diag_cuts) and the other
 * blocks of its share, [fg_block_start(parts, rep, j), fg_block_start(parts, rep, j + 1));
 * other entries are left out (rep = 1: every column). Every rank agrees on the outcome. */
fg_status fg_sa_plan(fg_dist *d, const fg_csr *M, const int64_t *offs, int parts, int rep,
                     fg_sa_op *op);
void fg_sa_op_free(fg_sa_op *op);

/* The slices of block `block`'s own columns among its rep replicas: replica j multiplies the
 * columns [cuts[j], cuts[j+1]) of it besides the other blocks of its share (the blocks
 * [fg_block_start(parts, rep, j), fg_block_start(parts, rep, j + 1))), cut so that each
 * replica's nonzeros (nnz[j]: its share's plus its slice's) come as close to 1/rep of the block
 * row's as contiguous slices allow. M's rows [row_lo, row_hi) are the block row, in global
 * columns. rep = 1: the whole block. Not collective: every replica computes the same. */
fg_status fg_sa_diag_cuts(const fg_csr *M, int64_t row_lo, int64_t row_hi, const int64_t *offs,
                          int parts, int block, int rep, int64_t *cuts, int64_t *nnz);

/* Collective: x's request array for d (call once, after the operators' plans), its largest
 * send and halo sizes taken from ops[0..n). */
fg_status fg_sa_exchange_init(fg_dist *d, fg_sa_exchange *x, const fg_sa_op *ops, int n,
                              int overlap);
void fg_sa_exchange_free(fg_sa_exchange *x);

/* Collective: out (M's rows x f) = the [col0, col1) part of M times H, where in (this rank's
 * block x f) is its rows of H. The local SpMMs are timed and counted in s. Under s->bf16 the
 * halo rows travel as bf16 (2 bytes an element), rounded once by their sender. With in NULL,
 * in16 holds the rows already as bf16 (a hidden stored so: aggregate16): sent and multiplied as
 * they are, the bits and bytes of rounding their fp32 values. */
fg_status fg_sa_apply(fg_scheme *s, fg_sa_exchange *x, const fg_sa_op *op, const float *in,
                      const fg_bf16 *in16, float *out, int64_t f);
/* Collective: the same product from bf16 rows (in16) handed to sink a block of complete rows
 * at a time (fg_scheme_spmm_rows2: the diagonal block's sums, then the halo's added, the bits
 * of fg_sa_apply's whole products): the exchange completes first, so nothing overlaps it. */
fg_status fg_sa_apply_rows(fg_scheme *s, fg_sa_exchange *x, const fg_sa_op *op,
                           const fg_bf16 *in16, int64_t f, int64_t block, fg_rows_sink sink,
                           void *ctx);

#endif /* FG_SA_H */
