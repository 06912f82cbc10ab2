/* fg_prep_blocks.h -- one rank's reads of a prepared directory (`fullgraph prepare`,
 * io/fg_prepared.h): the pieces every per-rank layout is made of, shared by the 1D layouts
 * (partition_prepared.c) and the 3D grid (scheme_3d.c) so that both read, check and compute
 * the same way (prep_blocks.c).
 *
 *   fg_prep_operator  any rectangle [r0, r1) x [c0, c1) of the operator Â (or of Âᵀ) in the
 *                     prepared order: the adjacency blocks it overlaps, read whole and checked,
 *                     their entries inside the rectangle kept, the values computed from the
 *                     degree files by the very expressions of fg_adj_normalize, so the bits are
 *                     those the direct path gets by normalizing the whole pattern and permuting
 *                     it; of the degree files only one side's blocks are held (the rows' for
 *                     1D), the other side's swept one block at a time;
 *   fg_prep_node_read one node file, whole, checked row by row (ids, labels, split, targets),
 *                     or fg_prep_node_section one section's rows of it;
 *   fg_prep_report    what each rank read and its peak (the log the CLI tests measure).
 *
 * A source counts the bytes of every file it reads (bytes: a degree file as often as it is read)
 * and the most bytes of degree tables it held at once (deg_peak). Not collective, except
 * fg_prep_dir_share and fg_prep_report.
 */
#ifndef FG_PREP_BLOCKS_H
#define FG_PREP_BLOCKS_H

#include <stdint.h>
#include <stdio.h>

#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "io/fg_prepared.h"

typedef struct fg_prep_src {
  const char *dir;
  const fg_prep_manifest *m;
  int64_t *files;          /* (B x B) index in m->files of block (i, j), -1 for an empty one */
  int64_t **in_b, **out_b; /* (B) per row block, NULL unless held: its rows' degrees */
  int32_t **loops;         /* (B) ... and self loops */
  unsigned char **blocks;  /* (B x B) with fg_prep_src_keep_blocks: every block read, kept */
  uint64_t bytes;          /* bytes of the files read so far */
  uint64_t deg_held;       /* bytes of degree tables held now (20 a row of a held block) */
  uint64_t deg_peak;       /* ... and the most held at once so far */
} fg_prep_src;

/* A source over dir's manifest m (kept by the caller while the source lives). */
fg_status fg_prep_src_open(fg_prep_src *s, const char *dir, const fg_prep_manifest *m);
void fg_prep_src_close(fg_prep_src *s);

/* Keep every adjacency block read until fg_prep_src_close, so that rectangles that overlap
 * the same blocks (3d's shards of the layers) read each file once. */
fg_status fg_prep_src_keep_blocks(fg_prep_src *s);

/* Degree file j, read and checked unless held (then s->in_b[j], s->out_b[j], s->loops[j]):
 * held until fg_prep_src_drop_degrees or fg_prep_src_close. */
fg_status fg_prep_src_degrees(fg_prep_src *s, int64_t j);
/* Frees degree block j's tables (nothing when it is not held). */
void fg_prep_src_drop_degrees(fg_prep_src *s, int64_t j);

/* An operator entry's value as fg_adj_normalize computes it: rdeg entries in its row, ccount
 * in its column (self loops taken out when the operator drops them). */
float fg_prep_op_value(fg_adj_norm norm, int64_t rdeg, int64_t ccount);

/* Rows [r0, r1) and columns [c0, c1) of Â (transposed: of Âᵀ, entry (u, v) holding Â(v, u)),
 * positions in the prepared order, as an (r1 - r0) x (c1 - c0) CSR with columns relative to c0
 * (sorted in each row) and the operator's values; the self loops out when adj drops them.
 * Reads the adjacency blocks the rectangle overlaps (each once) and the degree files its
 * entries need: those of the side with fewer rows in its blocks (the rows on a tie: 1D's
 * rectangles, its rows x every column) are held, and stay held after the call, so that the
 * next rectangle on the same rows (1D's Âᵀ) reads them no more; any other degree block held
 * before is dropped first; the other side's files are read one at a time, each freed once the
 * entries in its block have their values (per-row cursors on the sorted columns, 8 bytes a
 * row, while the columns are swept). Degree tables held at once: the held side's blocks + the
 * largest other block, 20 bytes a row; read: every file of both sides with an entry, 20 bytes
 * a node of the rectangle's rows and columns per call. */
fg_status fg_prep_operator(fg_prep_src *s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                           int transposed, fg_adj_spec adj, fg_csr *out);
/* fg_prep_operator, and in *mean_sym (when not NULL) 1 exactly when every entry's value equals
 * fg_prep_op_value(FG_ADJ_MEAN, d, 0) with d the in-degree of its result column's node (its
 * self loops out when adj drops them): with a symmetric pattern and the mean operator, whether
 * the rows are those of a symmetric operator (1 / d_u == 1 / d_v on every entry), found in the
 * same sweep of the column degrees. */
fg_status fg_prep_operator_sym(fg_prep_src *s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                               int transposed, fg_adj_spec adj, fg_csr *out, int *mean_sym);

/* Node file i whole (*buf malloc'ed; sec its sections, fg_prep_node_sections), every row's
 * node index, label or targets and split checked against the manifest's ranges. */
fg_status fg_prep_node_read(fg_prep_src *s, int64_t i, unsigned char **buf, int64_t sec[6]);

/* FG_ERR_INVALID_ARG unless order (NULL: any) is the order m was prepared in. */
fg_status fg_prep_check_order(const fg_prep_manifest *m, const char *dir, const char *order);

/* What 3d can read of m per rank (exit 2 before any block is read): no double permutation (the
 * directory holds one order, which is the layout), a grid g whose dimensions divide B (NULL:
 * not checked, --grid auto, whose planner forms only those), order (NULL: any) the prepared
 * one. */
fg_status fg_prep_check_3d(const fg_prep_manifest *m, const char *dir, const int g[3],
                           int double_perm, const char *order);

/* Rows [lo, hi) (local to node file i) of one of its sections, FG_PREP_SEC_INDEX (int64),
 * FG_PREP_SEC_LABELS (int32, or T int8 targets a row) or FG_PREP_SEC_SPLIT (int8), into dst,
 * read alone (pread: the file's size is checked, its CRC-32 cannot be) and range-checked as
 * fg_prep_node_read checks them: what a rank reads of a node file whose features it does not
 * need. */
fg_status fg_prep_node_section(fg_prep_src *s, int64_t i, int which, int64_t lo, int64_t hi,
                               void *dst);

/* Collective: the prepared directory rank 0's dataset was opened per rank on (fg_dataset
 * prep_dir), on every rank (*dir malloc'ed), or NULL on every rank when it was not. */
fg_status fg_prep_dir_share(fg_dist *d, const fg_dataset *ds, char **dir);

/* Collective: when log is set, rank 0 writes "prepared DIR: <what>; its files hold N bytes"
 * and a line per rank "  rank r read B bytes, peak resident R bytes; degree tables D bytes at
 * most" (bytes: its fg_prep_src's bytes; deg_peak: its deg_peak). */
fg_status fg_prep_report(fg_dist *d, FILE *log, const char *dir, const fg_prep_manifest *m,
                         const char *what, uint64_t bytes, uint64_t deg_peak);

#endif /* FG_PREP_BLOCKS_H */
