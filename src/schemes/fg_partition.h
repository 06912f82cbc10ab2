/* fg_partition.h -- the 1D block-row layout shared by the 1d and 1d-sa schemes, and by
 * fg_comm_plan (which computes the same layout without MPI).
 *
 * Layout: the nodes are put in an order (graph/fg_order.h) and cut into P contiguous blocks;
 * rank r holds positions [offs[r], offs[r+1]) -- its block rows of Â (and of Âᵀ for a directed
 * graph), features, labels, split and the original ids of its nodes. Column ids of the local
 * rows are global positions in that order.
 *
 * Â (the run's operator, fg_adj_operator) is built once on rank 0, on the whole pattern in the
 * original numbering, exactly as the serial scheme builds it, and then permuted: every rank
 * multiplies the very same values.
 *
 * Memory of the distribution (rank 0 reads and scatters): besides the dataset itself
 * (4 n F bytes of features, 12 nnz + 8 n of pattern), rank 0 holds a normalized copy of Â
 * (8 nnz + 8 n), the permuted Â (8 nnz + 8 n, plus 8 nnz of sort keys while permuting),
 * its transpose for a directed graph (8 nnz + 8 n), perm and inverse (16 n), and one pack
 * buffer of the largest block's features (4 max_r(n_r) F). The other ranks hold only their
 * block. A parallel reader would remove rank 0's O(n F + nnz) peak.
 */
#ifndef FG_PARTITION_H
#define FG_PARTITION_H

#include <stdint.h>

#include "graph/fg_order.h"
#include "schemes/fg_scheme.h"

/* The whole layout (rank 0 of a job, or fg_comm_plan). */
typedef struct fg_layout {
  int parts;
  int64_t n;
  int symmetric; /* Â == Âᵀ, values included: the backward pass reuses the forward structures */
  int64_t *perm; /* (n) original id of each position */
  int64_t *offs; /* (parts + 1) block starts */
  fg_csr B;      /* (n x n) P Â Pᵀ */
  fg_csr Bt;     /* (n x n) its transpose when !symmetric */
  int64_t cut;   /* entries of B in off-diagonal blocks */
  double order_seconds; /* fg_order_compute's time */
} fg_layout;

/* Build the layout of ds over parts blocks for the operator adj. Not collective. */
fg_status fg_layout_build(const fg_dataset *ds, int parts, fg_order_kind order, uint64_t seed,
                          fg_adj_spec adj, fg_layout *out);
void fg_layout_free(fg_layout *g);

/* cnt (parts x parts): cnt[i * parts + j] = |NnzCols(i, j)|, the distinct columns of block j
 * referenced by the rows of block i (0 on the diagonal). */
fg_status fg_layout_halo_counts(const fg_csr *B, const int64_t *offs, int parts, int64_t *cnt);

/* The volumes and balance of B's block rows offs (fg_partition_stats, include/fullgraph.h;
 * order_seconds left 0), from fg_layout_halo_counts: part i sends Σ_j cnt[j][i] rows. */
fg_status fg_partition_stats_of(const fg_csr *B, const int64_t *offs, int parts,
                                fg_partition_stats *out);

/* What one rank holds. */
typedef struct fg_part_local {
  int parts;     /* blocks: the ranks / rep */
  int rep;       /* ranks holding each block (consecutive: block b on ranks b rep .. b rep + rep-1) */
  int64_t n_global;
  int64_t *offs; /* (parts + 1), the same on every rank */
  int64_t row0;  /* offs[rank / rep] */
  int64_t n_local;
  int symmetric;
  fg_csr A;    /* (n_local x n_global) local rows of Â, global column positions, values */
  fg_csr At;   /* the same for Âᵀ when !symmetric (empty otherwise) */
  int64_t cut; /* the layout's cut entries (for reports) */
  int64_t bytes_read; /* a prepared directory's bytes this rank read (fg_part_read_prepared);
                         0 when rank 0 delivered the rows */
  char prep_order[16];  /* then: the directory's order, which the report names */
} fg_part_local;

/* Collective. Rank 0 (which needs ds; others may pass NULL) builds the layout for cfg->order
 * over P / rep blocks (rep divides P; 1: a block a rank) and sends every rank its block's rows; s's shared fields (ids, features -- normalized if asked --,
 * labels, split, sizes, local_nnz) are filled. Every rank returns the same status. */
fg_status fg_part_distribute(fg_dist *d, const fg_dataset *ds, const fg_scheme_config *cfg,
                             int rep, fg_scheme *s, fg_part_local *out);
void fg_part_local_free(fg_part_local *p);
/* The same result from a prepared directory (`fullgraph prepare`), every rank reading only its
 * own block rows (partition_prepared.c): fg_part_distribute calls it when rank 0's dataset was
 * opened per rank (fg_dataset.prep_dir). The directory's B row blocks must be a multiple of the
 * P / rep blocks (else FG_ERR_INVALID_ARG naming the rank counts that fit); cfg->order, when
 * given (not cfg->order_default), must be the directory's. Collective; every rank returns the
 * same status. */
fg_status fg_part_read_prepared(fg_dist *d, const char *dir, const fg_scheme_config *cfg, int rep,
                                fg_scheme *s, fg_part_local *out);

/* Cut local rows A (global column positions) by column block: blk[j] (n_local x n_j) gets the
 * entries of block j with columns relative to offs[j]. blk has parts entries; blocks without
 * entries are left empty (rowptr NULL, nnz 0). */
fg_status fg_part_split_blocks(const fg_csr *A, const int64_t *offs, int parts, fg_csr *blk);

/* Collective, at setup: rank 0 writes to log (NULL: nothing) the layout -- cut entries and, for every
 * rank, rows, nonzeros and the feature rows it receives and sends per aggregation. */
fg_status fg_part_report(fg_dist *d, const fg_scheme *s, const fg_part_local *p, const char *scheme,
                         const char *order, int64_t recv_rows, int64_t sent_rows, FILE *log);

/* Widths of the aggregations of one training epoch as fg_train runs it (a training forward, a
 * backward, an evaluation forward), for a stack of widths w[0..layers] whose layer l
 * aggregates as agg[l] says (fg_model_agg_plan: 1 first, 0 last, -1 not at all), and, when
 * input_grad (label propagation), layer 0's input gradient is wanted too. Returns the
 * sum of forward widths (one forward pass) and of backward widths, and the number of
 * aggregations of each. */
void fg_epoch_agg_widths(int layers, const int64_t *w, const int *agg, int input_grad,
                         int64_t *fwd_sum, int *fwd_count, int64_t *bwd_sum, int *bwd_count);
/* The same aggregations one by one: the widths of one forward pass's (fwd, *nf of them) and of
 * the backward's (bwd, *nb), each array room for `layers`. */
void fg_epoch_agg_list(int layers, const int64_t *w, const int *agg, int input_grad,
                       int64_t *fwd, int *nf, int64_t *bwd, int *nb);

#endif /* FG_PARTITION_H */
