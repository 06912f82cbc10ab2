/* graph_prepare_dist.c -- `mpirun -n P fullgraph prepare` (fg_dataset_prepare_parallel): the
 * prepared directory that fg_dataset_prepare writes, built by P ranks, none of which holds the
 * whole graph once the input is read.
 *
 *   1. a piece of the graph per rank: rows [lo, hi) of the natural order (fg_block_start of the
 *      nodes over P), their columns, node data and degrees. A plain SNAP edge list is parsed in
 *      P byte ranges cut at line starts (fg_read_snap_piece: the serial reader's checks and
 *      messages, the file's line numbers), ids renumbered through a present-bit per id OR-ed
 *      over the ranks, each entry sent to its row's owner (MPI_Alltoallv), rows sorted,
 *      duplicates dropped, one self loop each: the serial build's graph. Features, labels and
 *      split are generated as the serial load does (labels: the degree histogram summed over
 *      the ranks; only degree groups that straddle a class boundary go to rank 0 to be ordered
 *      by hashed id). An OGB csv directory whose raw/edge.csv, node-feat.csv and node-label.csv
 *      are plain is parsed the same way, table by table (fg_read_ogb_*_piece: the serial
 *      reader's table functions; a line's row = the lines before it, MPI_Exscan), each row sent
 *      to its owner; rank 0 reads the small files (counts, split) and scatters the split.
 *      Every other input (gzip, .npz, ... or non-default load options) is read by rank 0 with
 *      fg_dataset_load and its rows sent out.
 *   2. the source's fingerprint, hashed in pieces (fg_hash64's chunks are independent: each
 *      rank hashes the chunks that start in its block of chunks after one exchange).
 *   3. the order at B parts: natural; random (every rank draws the serial permutation, 8 bytes a
 *      node); metis through PT-Scotch's SCOTCH_dgraphPart on the distributed graph
 *      (symmetrized, no self loops, one vertex weight: 1 + the row's entries; a strategy
 *      without FM on the parallel band, 5% imbalance, unless FULLGRAPH_SCOTCH_STRAT is set).
 *      Within a part, nodes keep their source order, as serially.
 *   4. every node's position; columns translated by asking each column's owner; each row sent
 *      to the rank that writes its row block (blocks cut over the ranks as fg_block_start does);
 *      each writer sorts its rows and writes its blocks through fg_prep_write_row_block, the
 *      serial writer's code, so the bytes are the same.
 *   5. rank 0 gathers every file's name, size and CRC and the block nonzeros, and writes the
 *      manifest last.
 * Errors that one rank meets (a malformed line, an unwritable file) are agreed on (fg_agree)
 * at each step's end, so every rank stops with the same message. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fg_hash.h"
#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "io/fg_prepared.h"
#ifdef FG_HAVE_PTSCOTCH
#include <ptscotch.h> /* SCOTCH_Num, SCOTCH_dgraphPart (it includes scotch.h) */
#endif

/* One rank's piece of the graph: rows [lo, hi) in the source's numbering. */
typedef struct piece {
  int P, rank;
  int64_t n, nnz;           /* nodes, entries (whole graph) */
  int64_t lo, hi;
  int64_t *rowptr;          /* (hi - lo + 1) from 0 */
  int32_t *col;             /* (rowptr[hi - lo]) source node ids, sorted within a row */
  int64_t F, C, T;
  float *features;          /* (rows x F) */
  int32_t *labels;          /* (rows) or NULL when T > 0 */
  int8_t *targets;          /* (rows x T) */
  int8_t *split;            /* (rows) */
  int64_t *ids;             /* (rows) file ids, or NULL */
  int64_t *outdeg;          /* (rows) */
  int32_t *loops;           /* (rows) */
  uint32_t flags;           /* FG_PREP_* */
  int64_t id_span;
  uint64_t gen_seed;        /* features NULL: generated from this seed where needed */
  fg_ds_fingerprint fp;     /* rank 0 */
  int parallel_read;
} piece;

static void piece_free_rows(piece *p);
static void piece_free(piece *p) {
  piece_free_rows(p);
  memset(p, 0, sizeof *p);
}

/* The piece's arrays (its sizes and fingerprint stay). */
static void piece_free_rows(piece *p) {
  free(p->rowptr);
  free(p->col);
  free(p->features);
  free(p->labels);
  free(p->targets);
  free(p->split);
  free(p->ids);
  free(p->outdeg);
  free(p->loops);
  p->rowptr = NULL;
  p->col = NULL;
  p->features = NULL;
  p->labels = NULL;
  p->targets = NULL;
  p->split = NULL;
  p->ids = NULL;
  p->outdeg = NULL;
  p->loops = NULL;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Sort a row's int32 columns: insertion for the short rows most are, qsort beyond. */
static void sort_row(int32_t *a, int64_t n) {
  if (n > 24) {
    qsort(a, (size_t)n, sizeof *a, cmp_i32);
    return;
  }
  for (int64_t i = 1; i < n; i++) {
    const int32_t x = a[i];
    int64_t j = i;
    for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
    a[j] = x;
  }
}

/* ---- moving bytes --------------------------------------------------------------------------- */

/* MPI_Alltoallv of bytes: scount[q] bytes of send (packed by destination) to rank q; *recv
 * (malloc'ed) gets what every rank sent here, in rank order, rcount[q] from q. Counts and
 * offsets must fit MPI's int: a larger exchange is refused by name (more ranks make it fit). */
static fg_status exchange(MPI_Comm comm, int P, const void *send, const int64_t *scount,
                          unsigned char **recv, int64_t *rcount, int64_t *rtotal) {
  fg_status st = FG_OK;
  int *sc = NULL, *sd = NULL, *rc = NULL, *rd = NULL;
  int64_t stot = 0, rtot = 0;
  *recv = NULL;
  FG_CHECK_MPI(MPI_Alltoall(scount, 1, MPI_INT64_T, rcount, 1, MPI_INT64_T, comm));
  for (int q = 0; q < P; q++) {
    stot += scount[q];
    rtot += rcount[q];
  }
  FG_REQUIRE(stot <= INT_MAX && rtot <= INT_MAX, FG_ERR_UNSUPPORTED,
             "parallel prepare: one exchange of %lld bytes out, %lld in, on one rank passes "
             "MPI's int counts (2 GiB): run on more ranks",
             (long long)stot, (long long)rtot);
  FG_ALLOC(sc, P);
  FG_ALLOC(sd, P);
  FG_ALLOC(rc, P);
  FG_ALLOC(rd, P);
  for (int q = 0, so = 0, ro = 0; q < P; q++) {
    sc[q] = (int)scount[q];
    rc[q] = (int)rcount[q];
    sd[q] = so;
    rd[q] = ro;
    so += sc[q];
    ro += rc[q];
  }
  FG_ALLOC(*recv, FG_MAX(rtot, 1));
  FG_CHECK_MPI(MPI_Alltoallv(send, sc, sd, MPI_BYTE, *recv, rc, rd, MPI_BYTE, comm));
  *rtotal = rtot;
cleanup:
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  return st;
}

/* Point to point in pieces below 2^30 bytes, so that every count fits an int. */
static fg_status send_big(MPI_Comm comm, const void *buf, int64_t bytes, int to) {
  fg_status st = FG_OK;
  const unsigned char *p = buf;
  for (int64_t off = 0; off < bytes; off += (int64_t)1 << 30) {
    const int len = (int)FG_MIN(bytes - off, (int64_t)1 << 30);
    FG_CHECK_MPI(MPI_Send(p + off, len, MPI_BYTE, to, 19, comm));
  }
cleanup:
  return st;
}

static fg_status recv_big(MPI_Comm comm, void *buf, int64_t bytes, int from) {
  fg_status st = FG_OK;
  unsigned char *p = buf;
  for (int64_t off = 0; off < bytes; off += (int64_t)1 << 30) {
    const int len = (int)FG_MIN(bytes - off, (int64_t)1 << 30);
    FG_CHECK_MPI(MPI_Recv(p + off, len, MPI_BYTE, from, 19, comm, MPI_STATUS_IGNORE));
  }
cleanup:
  return st;
}

/* ---- fg_hash64 of a string held in pieces ------------------------------------------------- */

/* fg_hash64(the concatenation of every rank's p[0, len) in rank order, seed), on every rank.
 * Chunk c is hashed by the rank holding its first byte; only a chunk that runs past that
 * rank's end needs bytes from the ranks after it (less than a chunk), so the bulk never moves:
 * one MPI_Alltoallv of those tails, then an MPI_Allgatherv of 8 bytes a chunk. */
static fg_status hash_pieces(MPI_Comm comm, int P, int rank, const void *p, int64_t len,
                             uint64_t seed, uint64_t *out) {
  fg_status st = FG_OK;
  int64_t *ol = NULL, *scount = NULL, *rcount = NULL, rtot = 0, total = 0;
  unsigned char *recv = NULL, *tmp = NULL;
  uint64_t *vals = NULL;
  int *vc = NULL, *vd = NULL;
  const int64_t CH = (int64_t)FG_HASH_CHUNK;
  int64_t mine[2] = {0, len};
  FG_ALLOC(ol, 2 * P);
  FG_CHECK_MPI(MPI_Allgather(mine, 2, MPI_INT64_T, ol, 2, MPI_INT64_T, comm));
  for (int q = 0; q < P; q++) { /* offsets from the lengths */
    ol[2 * q] = total;
    total += ol[2 * q + 1];
  }
  const int64_t chunks = (total + CH - 1) / CH;
  /* rank q hashes the chunks starting in [off_q, end_q): [ceil(off/CH), ceil(end/CH)); its last
   * one runs to cend_q, past end_q by the tail the later ranks send */
#define FIRST_CHUNK(q) ((ol[2 * (q)] + CH - 1) / CH)
#define END_CHUNK(q) ((ol[2 * (q)] + ol[2 * (q) + 1] + CH - 1) / CH)
  FG_CALLOC(scount, P);
  FG_CALLOC(rcount, P);
  const int64_t off = ol[2 * rank];
  for (int q = 0; q < rank; q++) {
    if (END_CHUNK(q) <= FIRST_CHUNK(q)) continue;
    const int64_t t0 = ol[2 * q] + ol[2 * q + 1], t1 = FG_MIN(END_CHUNK(q) * CH, total);
    scount[q] = FG_MAX(0, FG_MIN(t1, off + len) - FG_MAX(t0, off));
  }
  /* what is sent to q starts where q's tail overlaps this rank's range: at the range's start
   * (ranks after the one holding the chunk's start begin their range inside the tail) */
  FG_CHECK(exchange(comm, P, p, scount, &recv, rcount, &rtot));
  {
    const int64_t c0 = FIRST_CHUNK(rank), c1 = END_CHUNK(rank);
    FG_ALLOC(vals, FG_MAX(chunks, 1));
    for (int64_t c = c0; c < c1; c++) {
      const int64_t at = c * CH - off, size = FG_MIN(CH, total - c * CH);
      if (at + size <= len) {
        vals[c] = fg_hash64_chunk((const unsigned char *)p + at, (size_t)size, (uint64_t)c);
      } else { /* the last chunk: this rank's end and the tail received */
        FG_ALLOC(tmp, size);
        memcpy(tmp, (const unsigned char *)p + at, (size_t)(len - at));
        FG_REQUIRE(len - at + rtot == size, FG_ERR_INTERNAL,
                   "parallel hash: chunk %lld has %lld + %lld bytes of %lld", (long long)c,
                   (long long)(len - at), (long long)rtot, (long long)size);
        memcpy(tmp + (len - at), recv, (size_t)rtot);
        vals[c] = fg_hash64_chunk(tmp, (size_t)size, (uint64_t)c);
      }
    }
    FG_ALLOC(vc, P);
    FG_ALLOC(vd, P);
    for (int q = 0; q < P; q++) {
      vc[q] = (int)(8 * FG_MAX(0, END_CHUNK(q) - FIRST_CHUNK(q)));
      vd[q] = (int)(8 * FG_MIN(FIRST_CHUNK(q), chunks));
    }
#undef FIRST_CHUNK
#undef END_CHUNK
    FG_CHECK_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, vals, vc, vd, MPI_BYTE, comm));
    *out = fg_hash64_fold(seed, (size_t)total, vals, (size_t)chunks);
  }
cleanup:
  free(ol);
  free(scount);
  free(rcount);
  free(recv);
  free(tmp);
  free(vals);
  free(vc);
  free(vd);
  return st;
}

/* fg_hash64 of the generated features (fg_generate_features: n x F), never held: the ranks take
 * the chunks in blocks and draw each chunk's floats into one buffer to hash it. */
static fg_status hash_generated_features(MPI_Comm comm, int P, int rank, int64_t n, int64_t F,
                                         uint64_t seed, uint64_t *out) {
  fg_status st = FG_OK;
  const int64_t CH = (int64_t)FG_HASH_CHUNK, total = 4 * n * F;
  const int64_t chunks = (total + CH - 1) / CH;
  float *row = NULL;
  unsigned char *buf = NULL;
  uint64_t *vals = NULL;
  int *vc = NULL, *vd = NULL;
  FG_ALLOC(row, FG_MAX(F, 1));
  FG_ALLOC(buf, CH);
  FG_ALLOC(vals, FG_MAX(chunks, 1));
  for (int64_t c = fg_block_start(chunks, P, rank); c < fg_block_start(chunks, P, rank + 1);
       c++) {
    const int64_t b0 = c * CH, size = FG_MIN(CH, total - b0);
    /* floats [b0 / 4, (b0 + size) / 4): whole floats, as CH is a multiple of 4 */
    for (int64_t e = b0 / 4; e < (b0 + size) / 4;) {
      const int64_t v = e / F, j0 = e % F, j1 = FG_MIN(F, j0 + (b0 + size) / 4 - e);
      fg_generate_feature_rows(v, 1, F, seed, row);
      memcpy(buf + 4 * e - b0, row + j0, (size_t)(4 * (j1 - j0)));
      e += j1 - j0;
    }
    vals[c] = fg_hash64_chunk(buf, (size_t)size, (uint64_t)c);
  }
  FG_ALLOC(vc, P);
  FG_ALLOC(vd, P);
  for (int q = 0; q < P; q++) {
    vc[q] = (int)(8 * fg_block_size(chunks, P, q));
    vd[q] = (int)(8 * fg_block_start(chunks, P, q));
  }
  FG_CHECK_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, vals, vc, vd, MPI_BYTE, comm));
  *out = fg_hash64_fold(FG_FP_SEED_FEATURES, (size_t)total, vals, (size_t)chunks);
cleanup:
  free(row);
  free(buf);
  free(vals);
  free(vc);
  free(vd);
  return st;
}

/* ---- rows from edges ------------------------------------------------------------------------ */

/* Send every entry (row dst[e], column src[e]) -- and with both (src[e], dst[e]) too -- to the
 * owner of its row as two int32, and build this rank's rows [lo, lo + nr): columns sorted,
 * duplicates dropped, and with loops one self loop a row. The serial build (fg_csr_from_edges
 * with dedup) gives the same rows. *src and *dst (m each) are freed once packed, before the
 * exchange, to lower the peak. */
static fg_status rows_from_edges(MPI_Comm comm, int P, int64_t n, int64_t lo, int64_t nr,
                                 int64_t **src, int64_t **dst, int64_t m, int both, int loops,
                                 int64_t **rowptr_out, int32_t **col_out) {
  fg_status st = FG_OK;
  int64_t *scount = NULL, *rcount = NULL, *at = NULL, *rowptr = NULL, *cur = NULL, rtot = 0;
  int32_t *send = NULL, *col = NULL;
  unsigned char *recv = NULL;
  const int sides = both ? 2 : 1;
  FG_CALLOC(scount, P);
  FG_CALLOC(rcount, P);
  FG_CALLOC(at, P + 1);
  for (int64_t e = 0; e < m; e++) {
    at[fg_block_of(n, P, (*dst)[e]) + 1]++;
    if (both) at[fg_block_of(n, P, (*src)[e]) + 1]++;
  }
  for (int q = 0; q < P; q++) {
    scount[q] = 8 * at[q + 1];
    at[q + 1] += at[q];
  }
  FG_ALLOC(send, FG_MAX(2 * sides * m, 1));
  for (int64_t e = 0; e < m; e++)
    for (int k = 0; k < sides; k++) {
      const int64_t r = k ? (*src)[e] : (*dst)[e], c = k ? (*dst)[e] : (*src)[e];
      const int q = fg_block_of(n, P, r);
      send[2 * at[q]] = (int32_t)r;
      send[2 * at[q] + 1] = (int32_t)c;
      at[q]++;
    }
  free(*src);
  free(*dst);
  *src = *dst = NULL;
  FG_CHECK(exchange(comm, P, send, scount, &recv, rcount, &rtot));
  free(send);
  send = NULL;
  {
    const int64_t got = rtot / 8;
    const int32_t *rp = (const int32_t *)(void *)recv;
    FG_CALLOC(rowptr, nr + 1);
    for (int64_t e = 0; e < got; e++) rowptr[rp[2 * e] - lo + 1]++;
    if (loops)
      for (int64_t k = 0; k < nr; k++) rowptr[k + 1]++;
    for (int64_t k = 0; k < nr; k++) rowptr[k + 1] += rowptr[k];
    FG_ALLOC(col, FG_MAX(rowptr[nr], 1));
    FG_ALLOC(cur, FG_MAX(nr, 1));
    for (int64_t k = 0; k < nr; k++) cur[k] = rowptr[k];
    if (loops)
      for (int64_t k = 0; k < nr; k++) col[cur[k]++] = (int32_t)(lo + k);
    for (int64_t e = 0; e < got; e++) col[cur[rp[2 * e] - lo]++] = rp[2 * e + 1];
    free(recv);
    recv = NULL;
    /* sort and drop duplicates, compacting in place (a row's writes never pass its reads) */
    int64_t w = 0;
    for (int64_t k = 0; k < nr; k++) {
      const int64_t a = rowptr[k], b = rowptr[k + 1];
      sort_row(col + a, b - a);
      rowptr[k] = w;
      for (int64_t q = a; q < b; q++)
        if (q == a || col[q] != col[q - 1]) col[w++] = col[q];
    }
    rowptr[nr] = w;
  }
  *rowptr_out = rowptr;
  *col_out = col;
  rowptr = NULL;
  col = NULL;
cleanup:
  free(scount);
  free(rcount);
  free(at);
  free(send);
  free(recv);
  free(rowptr);
  free(col);
  free(cur);
  return st;
}

/* An undirected graph's rows [lo, lo + nr) of n nodes from its m edges (*src, *dst, freed):
 * both directions and one self loop a row (rows_from_edges), the entries of the whole graph,
 * and every degree both ways the row's length. */
static fg_status undirected_rows(MPI_Comm comm, piece *pc, int64_t n, int64_t nr, int64_t **src,
                                 int64_t **dst, int64_t m) {
  fg_status st = FG_OK;
  FG_CHECK(rows_from_edges(comm, pc->P, n, pc->lo, nr, src, dst, m, 1, 1, &pc->rowptr, &pc->col));
  pc->nnz = pc->rowptr[nr];
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &pc->nnz, 1, MPI_INT64_T, MPI_SUM, comm));
  FG_ALLOC(pc->outdeg, FG_MAX(nr, 1));
  FG_ALLOC(pc->loops, FG_MAX(nr, 1));
  for (int64_t k = 0; k < nr; k++) {
    pc->outdeg[k] = pc->rowptr[k + 1] - pc->rowptr[k];
    pc->loops[k] = 1;
  }
cleanup:
  return st;
}

/* ---- step 1a: rank 0 reads, every rank gets its rows --------------------------------------- */

static fg_status piece_from_root(MPI_Comm comm, const char *path, const fg_load_config *lc,
                                 piece *pc) {
  fg_status st = FG_OK;
  fg_dataset *ds = NULL;
  int64_t hdr[8] = {0};
  int64_t *outdeg = NULL;
  int32_t *loops = NULL;
  if (pc->rank == 0) st = fg_dataset_load(path, lc, &ds);
  FG_CHECK(fg_agree(comm, st));
  if (pc->rank == 0) {
    hdr[0] = ds->num_nodes;
    hdr[1] = ds->adj.nnz;
    hdr[2] = ds->num_features;
    hdr[3] = ds->num_classes;
    hdr[4] = ds->num_tasks;
    hdr[5] = (ds->symmetric ? FG_PREP_SYMMETRIC : 0) |
             (ds->features_generated ? FG_PREP_FEATURES_GENERATED : 0) |
             (ds->labels_generated ? FG_PREP_LABELS_GENERATED : 0) |
             (ds->split_generated ? FG_PREP_SPLIT_GENERATED : 0) | (ds->ids ? FG_PREP_HAS_IDS : 0);
    hdr[6] = ds->ids ? ds->id_span : 0;
    fg_dataset_fingerprint(ds, &pc->fp);
  }
  FG_CHECK_MPI(MPI_Bcast(hdr, 8, MPI_INT64_T, 0, comm));
  pc->n = hdr[0];
  pc->nnz = hdr[1];
  pc->F = hdr[2];
  pc->C = hdr[3];
  pc->T = hdr[4];
  pc->flags = (uint32_t)hdr[5];
  pc->id_span = hdr[6];
  const int64_t n = pc->n, F = pc->F, T = pc->T;
  const int has_ids = (pc->flags & FG_PREP_HAS_IDS) != 0;
  pc->lo = fg_block_start(n, pc->P, pc->rank);
  pc->hi = fg_block_start(n, pc->P, pc->rank + 1);
  if (pc->rank == 0) {
    const fg_csr *A = &ds->adj;
    FG_CALLOC(outdeg, FG_MAX(n, 1));
    FG_CALLOC(loops, FG_MAX(n, 1));
    for (int64_t v = 0; v < n; v++)
      for (int64_t k = A->rowptr[v]; k < A->rowptr[v + 1]; k++) {
        outdeg[A->col[k]]++;
        if (A->col[k] == v) loops[v]++;
      }
    for (int q = pc->P - 1; q >= 0; q--) {
      const int64_t lo = fg_block_start(n, pc->P, q), nr = fg_block_size(n, pc->P, q);
      const int64_t e0 = A->rowptr[lo], e = A->rowptr[lo + nr] - e0;
      if (q == 0) break;
      int64_t *rp = NULL;
      FG_ALLOC(rp, nr + 1);
      for (int64_t k = 0; k <= nr; k++) rp[k] = A->rowptr[lo + k] - e0;
      st = send_big(comm, rp, 8 * (nr + 1), q);
      free(rp);
      FG_CHECK(st);
      FG_CHECK(send_big(comm, A->col + e0, 4 * e, q));
      FG_CHECK(send_big(comm, ds->features + lo * F, 4 * nr * F, q));
      if (T > 0) FG_CHECK(send_big(comm, ds->targets + lo * T, nr * T, q));
      else FG_CHECK(send_big(comm, ds->labels + lo, 4 * nr, q));
      FG_CHECK(send_big(comm, ds->split + lo, nr, q));
      if (has_ids) FG_CHECK(send_big(comm, ds->ids + lo, 8 * nr, q));
      FG_CHECK(send_big(comm, outdeg + lo, 8 * nr, q));
      FG_CHECK(send_big(comm, loops + lo, 4 * nr, q));
    }
  }
  {
    const int64_t nr = pc->hi - pc->lo;
    FG_ALLOC(pc->rowptr, nr + 1);
    FG_ALLOC(pc->features, FG_MAX(nr * F, 1));
    if (T > 0) FG_ALLOC(pc->targets, FG_MAX(nr * T, 1));
    else FG_ALLOC(pc->labels, FG_MAX(nr, 1));
    FG_ALLOC(pc->split, FG_MAX(nr, 1));
    if (has_ids) FG_ALLOC(pc->ids, FG_MAX(nr, 1));
    FG_ALLOC(pc->outdeg, FG_MAX(nr, 1));
    FG_ALLOC(pc->loops, FG_MAX(nr, 1));
    if (pc->rank == 0) {
      const fg_csr *A = &ds->adj;
      for (int64_t k = 0; k <= nr; k++) pc->rowptr[k] = A->rowptr[k];
      FG_ALLOC(pc->col, FG_MAX(pc->rowptr[nr], 1));
      memcpy(pc->col, A->col, (size_t)(4 * pc->rowptr[nr]));
      memcpy(pc->features, ds->features, (size_t)(4 * nr * F));
      if (T > 0) memcpy(pc->targets, ds->targets, (size_t)(nr * T));
      else memcpy(pc->labels, ds->labels, (size_t)(4 * nr));
      memcpy(pc->split, ds->split, (size_t)nr);
      if (has_ids) memcpy(pc->ids, ds->ids, (size_t)(8 * nr));
      memcpy(pc->outdeg, outdeg, (size_t)(8 * nr));
      memcpy(pc->loops, loops, (size_t)(4 * nr));
    } else {
      FG_CHECK(recv_big(comm, pc->rowptr, 8 * (nr + 1), 0));
      FG_ALLOC(pc->col, FG_MAX(pc->rowptr[nr], 1));
      FG_CHECK(recv_big(comm, pc->col, 4 * pc->rowptr[nr], 0));
      FG_CHECK(recv_big(comm, pc->features, 4 * nr * F, 0));
      if (T > 0) FG_CHECK(recv_big(comm, pc->targets, nr * T, 0));
      else FG_CHECK(recv_big(comm, pc->labels, 4 * nr, 0));
      FG_CHECK(recv_big(comm, pc->split, nr, 0));
      if (has_ids) FG_CHECK(recv_big(comm, pc->ids, 8 * nr, 0));
      FG_CHECK(recv_big(comm, pc->outdeg, 8 * nr, 0));
      FG_CHECK(recv_big(comm, pc->loops, 4 * nr, 0));
    }
  }
cleanup:
  fg_dataset_destroy(&ds);
  free(outdeg);
  free(loops);
  return st;
}

/* ---- step 1b: every rank parses a byte range of a plain SNAP edge list ---------------------- */

/* Whether path opens and does not start with the gzip magic (the line reader would inflate
 * it, whatever its name; a piece of it could not be parsed alone). */
static int plain_text(const char *path) {
  unsigned char magic[2] = {0, 0};
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  const int ok =
      fd >= 0 && pread(fd, magic, 2, 0) >= 0 && !(magic[0] == 0x1f && magic[1] == 0x8b);
  if (fd >= 0) close(fd);
  return ok;
}

/* Whether path is read in parallel: a plain (not gzip) SNAP edge list under the default load
 * options. Everything else goes through rank 0 (piece_from_root). Rank 0 decides. */
static int snap_in_parallel(MPI_Comm comm, int rank, const char *path, const fg_load_config *lc) {
  int yes = 0;
  if (rank == 0) {
    struct stat sb;
    const size_t len = strlen(path);
    static const char *const other[] = {".npz", ".npy", ".mtx", ".mtx.gz", ".gz"};
    yes = lc->undirected && lc->dedup && lc->self_loops && !lc->keep_ids &&
          stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
    for (size_t i = 0; yes && i < sizeof other / sizeof other[0]; i++) {
      const size_t k = strlen(other[i]);
      if (len >= k && strcmp(path + len - k, other[i]) == 0) yes = 0;
    }
    if (yes && !plain_text(path)) yes = 0; /* gzip whatever its name */
  }
  MPI_Bcast(&yes, 1, MPI_INT, 0, comm);
  return yes;
}

/* The first line start at or after byte a (a line starts at 0 and after every '\n'). */
static fg_status line_start(int fd, const char *path, int64_t size, int64_t a, int64_t *out) {
  fg_status st = FG_OK;
  char buf[1 << 16];
  if (a <= 0) {
    *out = 0;
    return FG_OK;
  }
  for (int64_t at = a - 1; at < size;) {
    const ssize_t got = pread(fd, buf, sizeof buf, (off_t)at);
    FG_REQUIRE(got > 0, FG_ERR_IO, "%s: read error at byte %lld: %s", path, (long long)at,
               got < 0 ? strerror(errno) : "unexpected end of file");
    const char *nl = memchr(buf, '\n', (size_t)got);
    if (nl) {
      *out = at + (nl - buf) + 1;
      goto cleanup;
    }
    at += got;
  }
  *out = size;
cleanup:
  return st;
}

/* This rank's piece of the file: [start, end) between the line starts at its byte range's
 * ends; *first_line: the lines before it (its '\n's counted, summed over lower ranks). */
static fg_status read_range(MPI_Comm comm, int P, int rank, const char *path, char **buf,
                            int64_t *len, int64_t *first_line) {
  fg_status st = FG_OK;
  int fd = -1;
  struct stat sb;
  int64_t start = 0, end = 0, lines = 0;
  *buf = NULL;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  FG_REQUIRE(fd >= 0 && fstat(fd, &sb) == 0, FG_ERR_IO, "%s: cannot open: %s", path,
             strerror(errno));
  {
    const int64_t size = (int64_t)sb.st_size;
    FG_CHECK(line_start(fd, path, size, fg_block_start(size, P, rank), &start));
    if (rank == P - 1) end = size;
    else FG_CHECK(line_start(fd, path, size, fg_block_start(size, P, rank + 1), &end));
    end = FG_MAX(end, start); /* a line longer than a range: the rank before reads it whole */
    *len = end - start;
    FG_ALLOC(*buf, *len + 1);
    for (int64_t at = 0; at < *len;) {
      const ssize_t got = pread(fd, *buf + at, (size_t)FG_MIN(*len - at, (int64_t)1 << 30),
                                (off_t)(start + at));
      FG_REQUIRE(got > 0, FG_ERR_IO, "%s: read error at byte %lld: %s", path,
                 (long long)(start + at), got < 0 ? strerror(errno) : "file shrank");
      at += got;
    }
    for (int64_t i = 0; i < *len; i++) lines += (*buf)[i] == '\n';
  }
cleanup:
  if (fd >= 0) close(fd);
  /* collective from here on, whatever happened above */
  {
    int64_t before = 0;
    MPI_Exscan(&lines, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    *first_line = rank == 0 ? 0 : before;
  }
  return st;
}

/* A node of a degree group that straddles a class boundary: its degree, hashed id, id, and
 * where its label goes back to. */
typedef struct label_rec {
  int64_t d;
  uint64_t h;
  int64_t v, at;
} label_rec;

/* By degree, then (hashed id, id): fg_generate_labels' order within a group. */
static int cmp_label_rec(const void *pa, const void *pb) {
  const label_rec *a = pa, *b = pb;
  if (a->d != b->d) return a->d < b->d ? -1 : 1;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return (a->v > b->v) - (a->v < b->v);
}

/* Labels from degree quantiles (fg_generate_labels) over the ranks' rows. */
static fg_status labels_dist(MPI_Comm comm, piece *pc, int64_t classes, uint64_t seed) {
  fg_status st = FG_OK;
  typedef label_rec rec;
  const int64_t nr = pc->hi - pc->lo, n = pc->n;
  int64_t maxdeg = 0, *start = NULL, mine = 0;
  rec *r = NULL, *all = NULL;
  int *cnt = NULL, *dsp = NULL, *lcnt = NULL, *ldsp = NULL;
  int32_t *got = NULL, *lab = NULL;
  FG_REQUIRE(n <= INT32_MAX, FG_ERR_UNSUPPORTED, "graph has %lld nodes; at most 2^31 - 1",
             (long long)n);
  for (int64_t k = 0; k < nr; k++) maxdeg = FG_MAX(maxdeg, pc->rowptr[k + 1] - pc->rowptr[k]);
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &maxdeg, 1, MPI_INT64_T, MPI_MAX, comm));
  FG_REQUIRE(maxdeg + 2 <= INT_MAX, FG_ERR_UNSUPPORTED, "a degree of %lld", (long long)maxdeg);
  FG_CALLOC(start, maxdeg + 2);
  for (int64_t k = 0; k < nr; k++) start[pc->rowptr[k + 1] - pc->rowptr[k] + 1]++;
  FG_CHECK_MPI(
      MPI_Allreduce(MPI_IN_PLACE, start, (int)(maxdeg + 2), MPI_INT64_T, MPI_SUM, comm));
  for (int64_t d = 0; d <= maxdeg; d++) start[d + 1] += start[d];
  /* start[d]: the first rank of degree d; start[d + 1] its end */
  FG_ALLOC(pc->labels, FG_MAX(nr, 1));
  FG_ALLOC(r, FG_MAX(nr, 1));
  for (int64_t k = 0; k < nr; k++) {
    const int64_t d = pc->rowptr[k + 1] - pc->rowptr[k], g0 = start[d], g1 = start[d + 1];
    const int64_t c0 = classes * g0 / n, c1 = classes * (g1 - 1) / n;
    if (c0 == c1) {
      pc->labels[k] = (int32_t)c0;
    } else { /* ordered by hashed id on rank 0 */
      r[mine] = (rec){d, fg_generate_label_key(seed, pc->lo + k), pc->lo + k, k};
      mine++;
    }
  }
  FG_REQUIRE(mine * (int64_t)sizeof(rec) <= INT_MAX, FG_ERR_UNSUPPORTED,
             "parallel prepare: %lld nodes in degree groups to order", (long long)mine);
  FG_ALLOC(cnt, pc->P);
  FG_ALLOC(dsp, pc->P);
  FG_ALLOC(lcnt, pc->P);
  FG_ALLOC(ldsp, pc->P);
  {
    const int bytes = (int)(mine * (int64_t)sizeof(rec));
    FG_CHECK_MPI(MPI_Gather(&bytes, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm));
    int64_t total = 0;
    if (pc->rank == 0) {
      for (int q = 0; q < pc->P; q++) {
        FG_REQUIRE(total + cnt[q] <= INT_MAX, FG_ERR_UNSUPPORTED,
                   "parallel prepare: too many nodes in degree groups to order on rank 0");
        dsp[q] = (int)total;
        total += cnt[q];
        lcnt[q] = cnt[q] / (int)sizeof(rec);
        ldsp[q] = dsp[q] / (int)sizeof(rec);
      }
      FG_ALLOC(all, FG_MAX(total / (int64_t)sizeof(rec), 1));
    }
    FG_CHECK_MPI(MPI_Gatherv(r, bytes, MPI_BYTE, all, cnt, dsp, MPI_BYTE, 0, comm));
    const int64_t m = total / (int64_t)sizeof(rec);
    if (pc->rank == 0) {
      /* a group's rank is its first rank plus the place in its sorted group; at becomes the
       * position in the gathered order, where the label goes back */
      FG_ALLOC(lab, FG_MAX(m, 1));
      for (int64_t i = 0; i < m; i++) all[i].at = i;
      qsort(all, (size_t)m, sizeof *all, cmp_label_rec);
      for (int64_t i = 0, g = 0; i < m; i++) {
        if (i > 0 && all[i].d != all[i - 1].d) g = i;
        lab[all[i].at] = (int32_t)(classes * (start[all[i].d] + (i - g)) / n);
      }
    }
    FG_ALLOC(got, FG_MAX(mine, 1));
    FG_CHECK_MPI(MPI_Scatterv(lab, lcnt, ldsp, MPI_INT32_T, got, (int)mine, MPI_INT32_T, 0, comm));
    for (int64_t i = 0; i < mine; i++) pc->labels[r[i].at] = got[i];
  }
cleanup:
  free(start);
  free(r);
  free(all);
  free(cnt);
  free(dsp);
  free(lcnt);
  free(ldsp);
  free(got);
  free(lab);
  return st;
}

/* The fingerprint of the pieces' dataset, as fg_dataset_fingerprint hashes it whole. */
static fg_status fingerprint_dist(MPI_Comm comm, piece *pc) {
  fg_status st = FG_OK;
  const int64_t nr = pc->hi - pc->lo, mine = pc->rowptr[nr];
  int64_t before = 0, *rp = NULL;
  uint64_t rows = 0;
  fg_ds_fingerprint *fp = &pc->fp;
  FG_CHECK_MPI(MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, comm));
  if (pc->rank == 0) before = 0;
  /* the global row offsets: this rank's rows' starts, and the end on the last rank */
  const int64_t nrp = nr + (pc->rank == pc->P - 1);
  FG_ALLOC(rp, FG_MAX(nrp, 1));
  for (int64_t k = 0; k < nrp; k++) rp[k] = before + pc->rowptr[k];
  FG_CHECK(hash_pieces(comm, pc->P, pc->rank, rp, 8 * nrp, FG_FP_SEED_ROWS, &rows));
  fp->nodes = pc->n;
  fp->entries = pc->nnz;
  fp->features = pc->F;
  fp->classes = pc->C;
  FG_CHECK(hash_pieces(comm, pc->P, pc->rank, pc->col, 4 * mine, rows ^ FG_FP_SEED_COLS,
                       &fp->graph));
  if (pc->features)
    FG_CHECK(hash_pieces(comm, pc->P, pc->rank, pc->features, 4 * nr * pc->F,
                         FG_FP_SEED_FEATURES, &fp->feature_hash));
  else
    FG_CHECK(hash_generated_features(comm, pc->P, pc->rank, pc->n, pc->F, pc->gen_seed,
                                     &fp->feature_hash));
  if (pc->T > 0)
    FG_CHECK(hash_pieces(comm, pc->P, pc->rank, pc->targets, nr * pc->T, FG_FP_SEED_TARGETS,
                         &fp->labels));
  else
    FG_CHECK(hash_pieces(comm, pc->P, pc->rank, pc->labels, 4 * nr, FG_FP_SEED_LABELS,
                         &fp->labels));
  FG_CHECK(hash_pieces(comm, pc->P, pc->rank, pc->split, nr, FG_FP_SEED_SPLIT, &fp->split));
cleanup:
  free(rp);
  return st;
}

static fg_status piece_from_snap(MPI_Comm comm, const char *path, const fg_load_config *lc,
                                 piece *pc) {
  fg_status st = FG_OK;
  fg_raw raw = {0};
  char *buf = NULL;
  int64_t len = 0, first = 0, g[3];
  uint64_t *seen = NULL;
  int64_t *below = NULL;
  pc->parallel_read = 1;
  st = read_range(comm, pc->P, pc->rank, path, &buf, &len, &first);
  if (st == FG_OK) st = fg_read_snap_piece(buf, (size_t)len, path, first, &raw);
  free(buf);
  buf = NULL;
  FG_CHECK(fg_agree(comm, st));
  /* the file's: edge lines, largest id + 1, the "# Nodes: N" declared */
  g[0] = raw.num_edges;
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &g[0], 1, MPI_INT64_T, MPI_SUM, comm));
  g[1] = raw.id_span;
  g[2] = raw.declared_nodes;
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &g[1], 2, MPI_INT64_T, MPI_MAX, comm));
  FG_REQUIRE(g[0] > 0, FG_ERR_FORMAT, "%s: no edges found", path);
  const int64_t m = raw.num_edges, span = g[1];
  int64_t declared = g[2];
  /* fg_dataset_load's rules: a header N that every id fits under declares N nodes, unless N is
   * beyond what the lines can name; else the ids present, renumbered in increasing order */
  int inferred = declared <= span - 1;
  if (!inferred && declared > 2 * g[0]) inferred = 1;
  if (!inferred) {
    pc->n = declared;
  } else {
    const int64_t words = (span + 63) / 64;
    FG_REQUIRE(words <= INT_MAX, FG_ERR_UNSUPPORTED, "%s: ids up to %lld", path,
               (long long)span - 1);
    FG_CALLOC(seen, words);
    for (int64_t e = 0; e < m; e++) {
      seen[raw.src[e] >> 6] |= UINT64_C(1) << (raw.src[e] & 63);
      seen[raw.dst[e] >> 6] |= UINT64_C(1) << (raw.dst[e] & 63);
    }
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, seen, (int)words, MPI_UINT64_T, MPI_BOR, comm));
    FG_ALLOC(below, words + 1);
    int64_t k = 0;
    for (int64_t w = 0; w < words; w++) {
      below[w] = k;
      k += __builtin_popcountll(seen[w]);
    }
    below[words] = k;
    pc->n = k;
    for (int64_t e = 0; e < m; e++) {
      const int64_t u = raw.src[e], v = raw.dst[e];
      raw.src[e] = below[u >> 6] + __builtin_popcountll(seen[u >> 6] & ((UINT64_C(1) << (u & 63)) - 1));
      raw.dst[e] = below[v >> 6] + __builtin_popcountll(seen[v >> 6] & ((UINT64_C(1) << (v & 63)) - 1));
    }
    if (k != span) { /* ids kept: node i's file id is the i-th id present */
      pc->flags |= FG_PREP_HAS_IDS;
      pc->id_span = span;
    }
  }
  pc->lo = fg_block_start(pc->n, pc->P, pc->rank);
  pc->hi = fg_block_start(pc->n, pc->P, pc->rank + 1);
  const int64_t nr = pc->hi - pc->lo;
  FG_REQUIRE(pc->n <= INT32_MAX, FG_ERR_UNSUPPORTED, "%s: %lld nodes; at most 2^31 - 1", path,
             (long long)pc->n);
  if (pc->flags & FG_PREP_HAS_IDS) {
    FG_ALLOC(pc->ids, FG_MAX(nr, 1));
    int64_t w = 0;
    while (w < (span + 63) / 64 && below[w + 1] <= pc->lo) w++;
    int64_t i = below[w];
    for (; i < pc->hi && w < (span + 63) / 64; w++)
      for (uint64_t b = seen[w]; b && i < pc->hi; b &= b - 1, i++)
        if (i >= pc->lo) pc->ids[i - pc->lo] = w * 64 + __builtin_ctzll(b);
  }
  free(seen);
  seen = NULL;
  FG_REQUIRE(m <= INT64_MAX / 32, FG_ERR_UNSUPPORTED, "%s: %lld edges", path, (long long)m);
  /* the entries: row = destination, column = source, and the reverse (undirected) */
  FG_CHECK(undirected_rows(comm, pc, pc->n, nr, &raw.src, &raw.dst, m));
  fg_raw_free(&raw);
  /* what a graph-only input gets generated, as build_dataset does */
  pc->F = lc->gen_features;
  pc->C = lc->gen_classes;
  pc->T = 0;
  pc->flags |= FG_PREP_SYMMETRIC | FG_PREP_FEATURES_GENERATED | FG_PREP_LABELS_GENERATED |
               FG_PREP_SPLIT_GENERATED;
  /* generated features are a function of (seed, node, column): not held here, drawn where they
   * are hashed and where they are written */
  pc->gen_seed = lc->seed;
  FG_CHECK(labels_dist(comm, pc, pc->C, lc->seed));
  FG_ALLOC(pc->split, FG_MAX(nr, 1));
  fg_generate_split_rows(pc->lo, nr, pc->labels, lc->train_frac, lc->valid_frac, lc->seed,
                         pc->split);
  FG_CHECK(fingerprint_dist(comm, pc));
cleanup:
  fg_raw_free(&raw);
  free(buf);
  free(seen);
  free(below);
  return st;
}

/* ---- step 1c: every rank parses byte ranges of an OGB csv directory ------------------------ */

/* Whether dir is read in parallel: an OGB node-property directory of csv tables whose large
 * ones (raw/edge.csv, and node-feat.csv and node-label.csv where present) are plain -- no .gz
 * twin (the serial reader would take that), no gzip data, no raw/data.npz -- under the default
 * load options. Rank 0 decides. */
static int ogb_in_parallel(MPI_Comm comm, int rank, const char *dir, const fg_load_config *lc) {
  int yes = 0;
  if (rank == 0) {
    static const char *const big[3] = {"edge", "node-feat", "node-label"};
    struct stat sb;
    char p[4096];
    yes = lc->undirected && lc->dedup && lc->self_loops && !lc->keep_ids &&
          stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && !fg_is_reddit_dir(dir);
    snprintf(p, sizeof p, "%s/raw", dir);
    yes = yes && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
    snprintf(p, sizeof p, "%s/raw/data.npz", dir);
    yes = yes && stat(p, &sb) != 0;
    snprintf(p, sizeof p, "%s/raw/edge.csv", dir);
    yes = yes && stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
    for (int i = 0; yes && i < 3; i++) {
      snprintf(p, sizeof p, "%s/raw/%s.csv.gz", dir, big[i]);
      if (stat(p, &sb) == 0) yes = 0;
      snprintf(p, sizeof p, "%s/raw/%s.csv", dir, big[i]);
      if (yes && stat(p, &sb) == 0 && !plain_text(p)) yes = 0;
    }
  }
  MPI_Bcast(&yes, 1, MPI_INT, 0, comm);
  return yes;
}

/* Rows [row0, row0 + rows) of a table, parsed here (each rank's rows follow the lower ranks'),
 * to the owners of the rows [lo, hi) of fg_block_start(n, P, .): *out gets this rank's rows in
 * order, `width` bytes each. data is already packed by destination: rows ascend with the rank
 * that owns them. */
static fg_status rows_to_owners(MPI_Comm comm, const piece *pc, int64_t row0, int64_t rows,
                                int64_t width, const void *data, unsigned char **out) {
  fg_status st = FG_OK;
  int64_t *scount = NULL, *rcount = NULL, rtot = 0;
  *out = NULL;
  FG_CALLOC(scount, pc->P);
  FG_CALLOC(rcount, pc->P);
  for (int q = 0; q < pc->P; q++) {
    const int64_t a = fg_block_start(pc->n, pc->P, q), b = fg_block_start(pc->n, pc->P, q + 1);
    scount[q] = width * FG_MAX(0, FG_MIN(b, row0 + rows) - FG_MAX(a, row0));
  }
  FG_CHECK(exchange(comm, pc->P, data, scount, out, rcount, &rtot));
  FG_REQUIRE(rtot == width * (pc->hi - pc->lo), FG_ERR_INTERNAL,
             "parallel prepare: %lld bytes of rows arrived for %lld rows of %lld", (long long)rtot,
             (long long)(pc->hi - pc->lo), (long long)width);
cleanup:
  free(scount);
  free(rcount);
  return st;
}

/* This rank's byte range of the table file path, its first line's fields (rank 0's, on every
 * rank: the file's first line) and the lines before the range. */
static fg_status table_range(MPI_Comm comm, const piece *pc, const char *path, char **buf,
                             int64_t *len, int64_t *first_line, int64_t *fields) {
  fg_status st = read_range(comm, pc->P, pc->rank, path, buf, len, first_line);
  *fields = pc->rank == 0 && st == FG_OK ? fg_csv_first_fields(*buf, (size_t)*len) : 0;
  MPI_Bcast(fields, 1, MPI_INT64_T, 0, comm);
  return st;
}

/* The OGB csv layout: the counts on rank 0, edge.csv, node-feat.csv and node-label.csv parsed
 * in byte ranges (fg_read_ogb_*_piece: the serial reader's table functions), rows sent to their
 * owners; the split read by rank 0 (small: a byte a node), checked against the labels gathered
 * there (4 bytes a node), and scattered. What the directory lacks is generated as serially. */
static fg_status piece_from_ogb(MPI_Comm comm, const char *dir, const fg_load_config *lc,
                                piece *pc) {
  fg_status st = FG_OK;
  int64_t hdr[4] = {0, 0, 0, 0}, len = 0, first = 0, rows = 0, fields = 0;
  char *epath = NULL, *fpath = NULL, *lpath = NULL, *buf = NULL;
  int64_t *src = NULL, *dst = NULL;
  float *feat = NULL;
  int32_t *lab = NULL, *labelled = NULL, *all = NULL;
  int8_t *tgt = NULL, *split = NULL;
  unsigned char *got = NULL;
  uint64_t *seen = NULL;
  int *cnt = NULL, *dsp = NULL;
  const int last = pc->rank == pc->P - 1;
  struct stat sb;
  pc->parallel_read = 1;
  {
    const size_t k = strlen(dir) + 32;
    FG_ALLOC(epath, k);
    FG_ALLOC(fpath, k);
    FG_ALLOC(lpath, k);
    snprintf(epath, k, "%s/raw/edge.csv", dir); /* the names ogb_in_parallel checked */
    snprintf(fpath, k, "%s/raw/node-feat.csv", dir);
    snprintf(lpath, k, "%s/raw/node-label.csv", dir);
  }
  if (pc->rank == 0) {
    st = fg_read_ogb_counts(dir, &hdr[0], &hdr[1]);
    hdr[2] = stat(fpath, &sb) == 0;
    hdr[3] = stat(lpath, &sb) == 0;
  }
  FG_CHECK(fg_agree(comm, st));
  FG_CHECK_MPI(MPI_Bcast(hdr, 4, MPI_INT64_T, 0, comm));
  const int64_t n = hdr[0], m = hdr[1];
  FG_REQUIRE(n <= INT32_MAX, FG_ERR_UNSUPPORTED, "%s: %lld nodes; at most 2^31 - 1", dir,
             (long long)n);
  pc->n = n;
  pc->lo = fg_block_start(n, pc->P, pc->rank);
  pc->hi = fg_block_start(n, pc->P, pc->rank + 1);
  const int64_t nr = pc->hi - pc->lo;

  /* the edges: undirected, one self loop a row, duplicates dropped (the default build) */
  st = read_range(comm, pc->P, pc->rank, epath, &buf, &len, &first);
  if (st == FG_OK)
    st = fg_read_ogb_edge_piece(buf, (size_t)len, epath, first, last, n, m, &src, &dst, &rows);
  free(buf);
  buf = NULL;
  FG_CHECK(fg_agree(comm, st));
  FG_CHECK(undirected_rows(comm, pc, n, nr, &src, &dst, rows));
  pc->flags = FG_PREP_SYMMETRIC;

  /* the features: the first line's width on every rank */
  if (hdr[2]) {
    st = table_range(comm, pc, fpath, &buf, &len, &first, &fields);
    if (st == FG_OK)
      st = fg_read_ogb_feat_piece(buf, (size_t)len, fpath, first, last, n, fields, &feat,
                                  &rows);
    free(buf);
    buf = NULL;
    FG_CHECK(fg_agree(comm, st));
    pc->F = fields;
    FG_CHECK(rows_to_owners(comm, pc, first, rows, 4 * pc->F, feat, &got));
    free(feat);
    feat = NULL;
    pc->features = (float *)(void *)got;
    got = NULL;
  } else { /* drawn where hashed and where written, as for a SNAP list */
    pc->F = lc->gen_features;
    pc->gen_seed = lc->seed;
    pc->flags |= FG_PREP_FEATURES_GENERATED;
  }

  /* the labels: class ids, or T targets when the first line has T > 1 columns */
  if (hdr[3]) {
    int64_t maxl = -1;
    st = table_range(comm, pc, lpath, &buf, &len, &first, &fields);
    const int64_t T = fields > 1 ? fields : 0;
    if (st == FG_OK)
      st = fg_read_ogb_label_piece(buf, (size_t)len, lpath, first, last, n, T, &lab, &maxl,
                                   &tgt, &rows);
    free(buf);
    buf = NULL;
    FG_CHECK(fg_agree(comm, st));
    if (T > 0) {
      pc->T = pc->C = T;
      FG_CHECK(rows_to_owners(comm, pc, first, rows, T, tgt, &got));
      pc->targets = (int8_t *)(void *)got;
    } else {
      FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &maxl, 1, MPI_INT64_T, MPI_MAX, comm));
      pc->C = maxl + 1;
      FG_CHECK(rows_to_owners(comm, pc, first, rows, 4, lab, &got));
      pc->labels = (int32_t *)(void *)got;
    }
    got = NULL;
    free(lab);
    free(tgt);
    lab = NULL;
    tgt = NULL;
    if (T == 0 && pc->C > FG_CLASSES_ALWAYS_OK) { /* fg_raw_check_classes over the pieces */
      const int64_t words = (pc->C + 63) / 64;
      int64_t c[3] = {0, 0, INT64_MAX}; /* distinct, labelled, the first node labelled C - 1 */
      FG_REQUIRE(words <= INT_MAX, FG_ERR_INTERNAL, "%lld classes", (long long)pc->C);
      FG_CALLOC(seen, words);
      for (int64_t k = 0; k < nr; k++) {
        const int32_t y = pc->labels[k];
        if (y < 0) continue;
        c[1]++;
        if (y == pc->C - 1) c[2] = FG_MIN(c[2], pc->lo + k);
        seen[y >> 6] |= UINT64_C(1) << (y & 63);
      }
      FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, seen, (int)words, MPI_UINT64_T, MPI_BOR, comm));
      FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &c[1], 1, MPI_INT64_T, MPI_SUM, comm));
      FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &c[2], 1, MPI_INT64_T, MPI_MIN, comm));
      for (int64_t w = 0; w < words; w++) c[0] += __builtin_popcountll(seen[w]);
      st = pc->rank == 0 ? fg_check_class_use(lpath, 1, pc->C, c[0], c[1], c[2]) : FG_OK;
      FG_CHECK(fg_agree(comm, st));
    }
  }

  /* the split: rank 0 reads it against every node's has-a-label (the labels, or 0 / -1 from
   * the targets), then each rank gets its rows */
  if (pc->T > 0 || pc->labels) {
    FG_ALLOC(labelled, FG_MAX(nr, 1));
    for (int64_t k = 0; k < nr; k++) {
      labelled[k] = pc->labels ? pc->labels[k] : -1;
      for (int64_t t = 0; !pc->labels && t < pc->T; t++)
        if (pc->targets[k * pc->T + t] >= 0) labelled[k] = 0;
    }
  }
  FG_ALLOC(cnt, pc->P);
  FG_ALLOC(dsp, pc->P);
  for (int q = 0; q < pc->P; q++) {
    cnt[q] = (int)fg_block_size(n, pc->P, q);
    dsp[q] = (int)fg_block_start(n, pc->P, q);
  }
  if (labelled) {
    if (pc->rank == 0) FG_ALLOC(all, n);
    FG_CHECK_MPI(MPI_Gatherv(labelled, (int)nr, MPI_INT32_T, all, cnt, dsp, MPI_INT32_T, 0,
                             comm));
  }
  int has_split = 0;
  if (pc->rank == 0) {
    st = fg_read_ogb_split(dir, lc->split_name, n, all, pc->T > 0, &split);
    has_split = split != NULL;
  }
  free(all);
  all = NULL;
  FG_CHECK(fg_agree(comm, st));
  FG_CHECK_MPI(MPI_Bcast(&has_split, 1, MPI_INT, 0, comm));
  if (!pc->labels && pc->T == 0) { /* no label file: degree quantiles, as build_dataset */
    pc->C = lc->gen_classes;
    pc->flags |= FG_PREP_LABELS_GENERATED;
    FG_CHECK(labels_dist(comm, pc, pc->C, lc->seed));
  }
  FG_ALLOC(pc->split, FG_MAX(nr, 1));
  if (has_split) {
    FG_CHECK_MPI(MPI_Scatterv(split, cnt, dsp, MPI_INT8_T, pc->split, (int)nr, MPI_INT8_T, 0,
                              comm));
  } else {
    fg_generate_split_rows(pc->lo, nr, pc->T > 0 ? labelled : pc->labels, lc->train_frac,
                           lc->valid_frac, lc->seed, pc->split);
    pc->flags |= FG_PREP_SPLIT_GENERATED;
  }
  FG_CHECK(fingerprint_dist(comm, pc));
cleanup:
  free(epath);
  free(fpath);
  free(lpath);
  free(buf);
  free(src);
  free(dst);
  free(feat);
  free(lab);
  free(labelled);
  free(all);
  free(tgt);
  free(split);
  free(got);
  free(seen);
  free(cnt);
  free(dsp);
  return st;
}

/* ---- step 3: the order ----------------------------------------------------------------------- */

#ifdef FG_HAVE_PTSCOTCH
/* The parallel mapping strategy: FULLGRAPH_SCOTCH_STRAT, when set, is either a comma-separated
 * list of SCOTCH_stratDgraphMapBuild's flags (default, quality, speed, balance, safety,
 * scalability) or a whole PT-Scotch strategy string (dgpart -m's syntax). Unset, it is the
 * string below: SCOTCH_stratDgraphMapBuild's default, except that at each parallel uncoarsening
 * level the centralized band graph gets its Fiduccia-Mattheyses pass only while it has fewer
 * than 2M edges (larger bands: diffusion and the exactifier only), and one sequential
 * multilevel bipartition per coarsest graph (as SCOTCH_STRATSPEED) instead of the better of
 * two. Why: on a power-law graph the band around the cut holds most of the graph, and that FM
 * is what the default spends its time in (R-MAT 20 through the ParMETIS interface, which takes
 * the default: not finished at P = 2 in 27 minutes, 95% in _SCOTCHbgraphBipartFm). Measured at
 * P = 2, 8 parts, on this 2-core VM under load: with no band FM at all, R-MAT 16 partitions in
 * 7.9 s (default 13.1 s, SCOTCH_STRATSPEED 12.8 s) and R-MAT 20 in 264 s, but ca-AstroPh's cut
 * (4 parts) grows to 1.64x METIS's; the 2M-edge threshold keeps FM for graphs of that size
 * (docs/benchmarks.md). kbal is the imbalance the METIS call allows (5%). Returns 0 or Scotch's
 * nonzero status. */
static int scotch_strategy(SCOTCH_Strat *strat, int P, int B, double kbal) {
  static const struct {
    const char *name;
    SCOTCH_Num flag;
  } flags[] = {{"default", SCOTCH_STRATDEFAULT}, {"quality", SCOTCH_STRATQUALITY},
               {"speed", SCOTCH_STRATSPEED},     {"balance", SCOTCH_STRATBALANCE},
               {"safety", SCOTCH_STRATSAFETY},   {"scalability", SCOTCH_STRATSCALABILITY}};
  const char *env = getenv("FULLGRAPH_SCOTCH_STRAT");
  SCOTCH_Num flag = 0;
  if (!env || !*env) {
    /* seq: a sequential multilevel bipartition (greedy growing, then FM with at most 80 moves
     * without gain; on the band graph while uncoarsening); the parallel multilevel coarsens to
     * vert vertices as SCOTCH_stratDgraphMapBuild does (2000 a process, 10^4 to 10^5) */
    char seq[256], str[1024];
    const int vert = FG_MIN(FG_MAX(2000 * P, 10000), 100000);
    snprintf(seq, sizeof seq,
             "m{vert=80,low=h{pass=10}f{bal=%g,move=80},asc=b{bnd=f{bal=%g,move=80},"
             "org=f{bal=%g,move=80}}}",
             kbal, kbal, kbal);
    snprintf(str, sizeof str,
             "r{bal=%g,sep=m{vert=%d,asc=b{bnd=d{pass=40}/(edge<2000000)?q{strat=f};x{bal=%g},"
             "org=/(edge<2000000)?q{strat=f};x{bal=%g}},low=q{strat=%s},seq=q{strat=%s}},"
             "seq=r{bal=%g,poli=S,sep=%s}}",
             kbal, vert, kbal, kbal, seq, seq, kbal, seq);
    return SCOTCH_stratDgraphMap(strat, str);
  }
  for (const char *c = env; *c;) { /* every comma-separated word a flag's name? */
    const size_t len = strcspn(c, ",");
    size_t i = 0;
    while (i < sizeof flags / sizeof *flags &&
           !(strlen(flags[i].name) == len && strncmp(flags[i].name, c, len) == 0))
      i++;
    if (i == sizeof flags / sizeof *flags) return SCOTCH_stratDgraphMap(strat, env);
    flag |= flags[i].flag;
    c += len + (c[len] == ',');
  }
  return SCOTCH_stratDgraphMapBuild(strat, flag, P, B, kbal);
}

/* part[k] in [0, B) for this rank's rows from PT-Scotch's SCOTCH_dgraphPart on the symmetrized
 * pattern without self loops, with the strategy above (its ParMETIS interface takes none). One
 * vertex weight, 1 + the row's entries: the serial METIS call balances rows and entries as two
 * constraints, but Scotch balances one (through the ParMETIS interface, ca-AstroPh, 4 parts,
 * two weights: the largest part 1.33x the mean rows and 1.72x the mean entries; unweighted:
 * rows 1.05x, entries 1.45x; this weight: rows 1.08-1.22x, entries 1.04x, about METIS's edge
 * cut). Scotch is seeded with the order's seed, but its result still varies with P and with the
 * ranks' timing: the parallel metis order is valid, not reproducible bit for bit. */
static fg_status scotch_parts(MPI_Comm comm, const piece *pc, int B, uint64_t seed,
                              int32_t *part) {
  fg_status st = FG_OK;
  const int64_t nr = pc->hi - pc->lo;
  int64_t *esrc = NULL, *edst = NULL, *srow = NULL, m = 0;
  int32_t *scol = NULL;
  SCOTCH_Num *xadj = NULL, *adj = NULL, *vwgt = NULL, *where = NULL;
  SCOTCH_Dgraph graph;
  SCOTCH_Strat strat;
  int graph_init = 0, strat_init = 0;
  /* the header's SCOTCH_Num is the library's (Debian ships 32- and 64-bit builds side by side) */
  FG_REQUIRE(SCOTCH_numSizeof() == (int)sizeof(SCOTCH_Num), FG_ERR_UNSUPPORTED,
             "--order metis: PT-Scotch's library has %d-byte SCOTCH_Num but its ptscotch.h "
             "%d-byte (a mismatched libptscotch and header; rebuild against one flavour)",
             SCOTCH_numSizeof(), (int)sizeof(SCOTCH_Num));
  /* the pattern (and its transpose when it is not symmetric) without self loops, to the rows'
   * owners */
  FG_ALLOC(esrc, FG_MAX(pc->rowptr[nr], 1));
  FG_ALLOC(edst, FG_MAX(pc->rowptr[nr], 1));
  for (int64_t k = 0; k < nr; k++)
    for (int64_t q = pc->rowptr[k]; q < pc->rowptr[k + 1]; q++) {
      if (pc->col[q] == pc->lo + k) continue;
      edst[m] = pc->lo + k;
      esrc[m] = pc->col[q];
      m++;
    }
  FG_CHECK(rows_from_edges(comm, pc->P, pc->n, pc->lo, nr, &esrc, &edst, m,
                           !(pc->flags & FG_PREP_SYMMETRIC), 0, &srow, &scol));
  FG_REQUIRE(sizeof(SCOTCH_Num) == 8 || (pc->n <= INT32_MAX && srow[nr] <= INT32_MAX &&
                                         pc->nnz <= INT32_MAX),
             FG_ERR_UNSUPPORTED,
             "--order metis: %lld nodes, %lld entries exceed PT-Scotch's %d-bit SCOTCH_Num",
             (long long)pc->n, (long long)pc->nnz, (int)(8 * sizeof(SCOTCH_Num)));
  /* the distributed CSR: this rank's rows (vertices [lo, hi) in the ranks' fg_block_start
   * blocks, as Scotch numbers them too), global column ids, base 0, compact (vendloctab =
   * vertloctab + 1), no edge weights; Scotch keeps pointers to these arrays, not copies */
  FG_ALLOC(xadj, nr + 1);
  FG_ALLOC(adj, FG_MAX(srow[nr], 1));
  FG_ALLOC(vwgt, FG_MAX(nr, 1));
  FG_ALLOC(where, FG_MAX(nr, 1));
  for (int64_t k = 0; k <= nr; k++) xadj[k] = (SCOTCH_Num)srow[k];
  for (int64_t q = 0; q < srow[nr]; q++) adj[q] = (SCOTCH_Num)scol[q];
  for (int64_t k = 0; k < nr; k++) vwgt[k] = (SCOTCH_Num)(1 + pc->rowptr[k + 1] - pc->rowptr[k]);
  free(scol); /* only the SCOTCH_Num copies are needed from here */
  scol = NULL;
  {
    const char *env = getenv("FULLGRAPH_SCOTCH_STRAT");
    const int from_env = env && *env;
    const char *failed = NULL;
    SCOTCH_randomSeed((SCOTCH_Num)(seed & 0x3fffffff));
    SCOTCH_randomReset();
    /* every call below is collective and Scotch agrees on its result across the ranks */
    if (SCOTCH_dgraphInit(&graph, comm) != 0)
      failed = "SCOTCH_dgraphInit";
    else {
      graph_init = 1;
      if (SCOTCH_dgraphBuild(&graph, 0, (SCOTCH_Num)nr, (SCOTCH_Num)nr, xadj, xadj + 1, vwgt,
                             NULL, (SCOTCH_Num)srow[nr], (SCOTCH_Num)srow[nr], adj, NULL,
                             NULL) != 0)
        failed = "SCOTCH_dgraphBuild";
      else if (SCOTCH_stratInit(&strat) != 0)
        failed = "SCOTCH_stratInit";
      else {
        strat_init = 1;
        if (scotch_strategy(&strat, pc->P, B, 0.05) != 0)
          failed = "building the strategy";
        else if (SCOTCH_dgraphPart(&graph, B, &strat, where) != 0)
          failed = "SCOTCH_dgraphPart";
      }
    }
    if (failed)
      st = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__,
                        "--order metis: PT-Scotch failed in %s for %lld nodes, %d parts on %d "
                        "ranks (strategy %s%s)",
                        failed, (long long)pc->n, B, pc->P,
                        from_env ? "FULLGRAPH_SCOTCH_STRAT=" : "", from_env ? env : "built in");
  }
  FG_CHECK(fg_agree(comm, st));
  for (int64_t k = 0; k < nr; k++) {
    FG_REQUIRE(where[k] >= 0 && where[k] < B, FG_ERR_INTERNAL,
               "--order metis: PT-Scotch put node %lld in part %lld of %d",
               (long long)(pc->lo + k), (long long)where[k], B);
    part[k] = (int32_t)where[k];
  }
cleanup:
  if (strat_init) SCOTCH_stratExit(&strat);
  if (graph_init) SCOTCH_dgraphExit(&graph);
  free(esrc);
  free(edst);
  free(srow);
  free(scol);
  free(xadj);
  free(adj);
  free(vwgt);
  free(where);
  return st;
}
#endif

/* offs (B + 1) and pos (this rank's rows): where each node goes in the order kind at B parts,
 * as fg_order_compute orders it. */
static fg_status positions(MPI_Comm comm, const piece *pc, fg_order_kind kind, int B,
                           uint64_t seed, int64_t *offs, int64_t *pos, char *partitioner,
                           size_t cap) {
  fg_status st = FG_OK;
  const int64_t n = pc->n, nr = pc->hi - pc->lo;
  int64_t *perm = NULL, *count = NULL, *base = NULL;
  int32_t *part = NULL;
  for (int i = 0; i <= B; i++) offs[i] = fg_block_start(n, B, i);
  snprintf(partitioner, cap, "none");
  if (kind == FG_ORDER_RANDOM) {
    /* the serial Fisher-Yates permutation, drawn on every rank (8 bytes a node) */
    FG_ALLOC(perm, FG_MAX(n, 1));
    fg_order_random(n, seed, 0, perm);
    for (int64_t u = 0; u < n; u++)
      if (perm[u] >= pc->lo && perm[u] < pc->hi) pos[perm[u] - pc->lo] = u;
  } else if (kind == FG_ORDER_NATURAL || B == 1 || n <= B) {
    for (int64_t k = 0; k < nr; k++) pos[k] = pc->lo + k;
  } else {
#ifdef FG_HAVE_PTSCOTCH
    FG_ALLOC(part, FG_MAX(nr, 1));
    FG_CHECK(scotch_parts(comm, pc, B, seed, part));
    snprintf(partitioner, cap, "PT-Scotch (SCOTCH_dgraphPart)");
    /* stable by part: a part's nodes in source order, lower ranks' first */
    FG_CALLOC(count, B);
    FG_CALLOC(base, B);
    for (int64_t k = 0; k < nr; k++) count[part[k]]++;
    FG_CHECK_MPI(MPI_Exscan(count, base, B, MPI_INT64_T, MPI_SUM, comm));
    if (pc->rank == 0) memset(base, 0, (size_t)B * sizeof *base);
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, count, B, MPI_INT64_T, MPI_SUM, comm));
    offs[0] = 0;
    for (int i = 0; i < B; i++) offs[i + 1] = offs[i] + count[i];
    for (int64_t k = 0; k < nr; k++) pos[k] = offs[part[k]] + base[part[k]]++;
#else
    FG_FAIL(FG_ERR_UNSUPPORTED,
            "--order metis under mpirun: this build has no PT-Scotch "
            "(install libptscotch-dev and rebuild; or run prepare as one process)");
#endif
  }
cleanup:
  free(perm);
  free(count);
  free(base);
  free(part);
  return st;
}

/* ---- step 4 and 5: rows to their writers, files, manifest ------------------------------------ */

/* A row on its way to the rank that writes its block: fixed fields, then T target bytes, F
 * floats and the row's columns (prepared positions, int32). */
typedef struct row_head {
  int64_t pos, index, id, indeg, outdeg, len;
  int32_t loops, label;
  int8_t split;
} row_head;

/* What a writer reports of row block i to rank 0. */
typedef struct block_report {
  fg_prep_file node, deg;
} block_report;

static int64_t row_bytes(int64_t T, int64_t feature_bytes, int64_t len) {
  return (int64_t)sizeof(row_head) + T + feature_bytes + 4 * len;
}

/* Each entry's column as a prepared position, from the column's owner, into pc->col in place:
 * every entry is asked for (no sort, no search: a bucket pass by owner out, the same pass to
 * put the answers back), 4 bytes each way an entry. */
static fg_status columns_to_positions(MPI_Comm comm, piece *pc, const int64_t *pos) {
  fg_status st = FG_OK;
  const int P = pc->P;
  const int64_t nnz = pc->rowptr[pc->hi - pc->lo];
  int64_t *scount = NULL, *rcount = NULL, *at = NULL, rtot = 0, back_tot = 0;
  int32_t *req = NULL;
  unsigned char *got = NULL, *back = NULL;
  FG_CALLOC(scount, P);
  FG_CALLOC(rcount, P);
  FG_CALLOC(at, P + 1);
  for (int64_t q = 0; q < nnz; q++) at[fg_block_of(pc->n, P, pc->col[q]) + 1]++;
  for (int r = 0; r < P; r++) {
    scount[r] = 4 * at[r + 1];
    at[r + 1] += at[r];
  }
  FG_ALLOC(req, FG_MAX(nnz, 1));
  for (int64_t q = 0; q < nnz; q++) req[at[fg_block_of(pc->n, P, pc->col[q])]++] = pc->col[q];
  FG_CHECK(exchange(comm, P, req, scount, &got, rcount, &rtot));
  {
    int32_t *ids = (int32_t *)(void *)got; /* answered in place */
    for (int64_t i = 0; i < rtot / 4; i++) ids[i] = (int32_t)pos[ids[i] - pc->lo];
  }
  FG_CHECK(exchange(comm, P, got, rcount, &back, scount, &back_tot));
  {
    const int32_t *ans = (const int32_t *)(void *)back;
    for (int r = P; r > 0; r--) at[r] = at[r - 1]; /* the buckets' starts again */
    at[0] = 0;
    for (int64_t q = 0; q < nnz; q++) pc->col[q] = ans[at[fg_block_of(pc->n, P, pc->col[q])]++];
  }
cleanup:
  free(scount);
  free(rcount);
  free(at);
  free(req);
  free(got);
  free(back);
  return st;
}

static fg_status write_rows(MPI_Comm comm, piece *pc, const fg_prep_manifest *m,
                            const int64_t *pos, const char *dir, block_report *rep_all,
                            fg_prep_file *blocks_all, int64_t *nnz_all) {
  fg_status st = FG_OK;
  const int P = pc->P, B = (int)m->B;
  const int64_t nr = pc->hi - pc->lo, F = pc->F, T = pc->T;
  /* generated features (pc->features NULL) are drawn by the writer, not sent */
  const int64_t fb = pc->features ? 4 * F : 0;
  int64_t *scount = NULL, *rcount = NULL, *at = NULL, rtot = 0;
  unsigned char *send = NULL, *recv = NULL, *mine = NULL;
  /* what this rank writes: row blocks [b0, b1), rows [base, base + R) */
  const int64_t b0 = fg_block_start(B, P, pc->rank), b1 = fg_block_start(B, P, pc->rank + 1);
  const int64_t base = m->offs[b0], R = m->offs[b1] - base;
  int64_t *index = NULL, *ids = NULL, *indeg = NULL, *outdeg = NULL, *rowptr = NULL,
          *recat = NULL;
  int32_t *loops = NULL, *labels = NULL, *col = NULL;
  int8_t *targets = NULL, *split = NULL;
  float *feat = NULL;
  block_report *rep = NULL;
  fg_prep_file *blocks = NULL;
  int64_t *bnnz = NULL;
  int *gc = NULL, *gd = NULL;

  /* the columns' positions, in place of their ids */
  FG_CHECK(columns_to_positions(comm, pc, pos));

  /* each row to its writer */
  FG_CALLOC(scount, P);
  FG_CALLOC(rcount, P);
  FG_CALLOC(at, P + 1);
  for (int64_t k = 0; k < nr; k++) {
    const int w = fg_block_of(B, P, fg_block_owner(m->offs, B, pos[k]));
    scount[w] += row_bytes(T, fb, pc->rowptr[k + 1] - pc->rowptr[k]);
  }
  for (int q = 0; q < P; q++) at[q + 1] = at[q] + scount[q];
  FG_ALLOC(send, FG_MAX(at[P], 1));
  for (int64_t k = 0; k < nr; k++) {
    const int64_t len = pc->rowptr[k + 1] - pc->rowptr[k];
    const int w = fg_block_of(B, P, fg_block_owner(m->offs, B, pos[k]));
    unsigned char *p = send + at[w];
    row_head h;
    memset(&h, 0, sizeof h);
    h.pos = pos[k];
    h.index = pc->lo + k;
    h.id = pc->ids ? pc->ids[k] : 0;
    h.indeg = len;
    h.outdeg = pc->outdeg[k];
    h.len = len;
    h.loops = pc->loops[k];
    h.label = pc->labels ? pc->labels[k] : -1;
    h.split = pc->split[k];
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    if (T > 0) memcpy(p, pc->targets + k * T, (size_t)T);
    p += T;
    if (fb) memcpy(p, pc->features + k * F, (size_t)fb);
    p += fb;
    memcpy(p, pc->col + pc->rowptr[k], (size_t)(4 * len));
    p += 4 * len;
    at[w] = p - send;
  }
  /* everything of the piece is in send now: lower the peak before the exchange */
  const uint64_t gen_seed = pc->gen_seed;
  piece_free_rows(pc);
  FG_CHECK(exchange(comm, P, send, scount, &recv, rcount, &rtot));
  free(send);
  send = NULL;

  /* this rank's rows in prepared order */
  FG_ALLOC(index, FG_MAX(R, 1));
  if (pc->flags & FG_PREP_HAS_IDS) FG_ALLOC(ids, FG_MAX(R, 1));
  FG_ALLOC(indeg, FG_MAX(R, 1));
  FG_ALLOC(outdeg, FG_MAX(R, 1));
  FG_ALLOC(loops, FG_MAX(R, 1));
  if (T > 0) FG_ALLOC(targets, FG_MAX(R * T, 1));
  else FG_ALLOC(labels, FG_MAX(R, 1));
  FG_ALLOC(split, FG_MAX(R, 1));
  FG_ALLOC(feat, FG_MAX(R * F, 1));
  FG_CALLOC(rowptr, R + 1);
  FG_ALLOC(recat, FG_MAX(R, 1));
  for (int64_t k = 0; k < R; k++) recat[k] = -1;
  for (int64_t off = 0; off < rtot;) {
    row_head h;
    memcpy(&h, recv + off, sizeof h);
    const int64_t k = h.pos - base;
    FG_REQUIRE(k >= 0 && k < R && recat[k] < 0, FG_ERR_INTERNAL,
               "parallel prepare: position %lld sent to the wrong writer or twice",
               (long long)h.pos);
    recat[k] = off;
    index[k] = h.index;
    if (ids) ids[k] = h.id;
    indeg[k] = h.indeg;
    outdeg[k] = h.outdeg;
    loops[k] = h.loops;
    if (T > 0) memcpy(targets + k * T, recv + off + sizeof h, (size_t)T);
    else labels[k] = h.label;
    split[k] = h.split;
    if (fb) memcpy(feat + k * F, recv + off + sizeof h + T, (size_t)fb);
    else fg_generate_feature_rows(h.index, 1, F, gen_seed, feat + k * F);
    rowptr[k + 1] = h.len;
    off += row_bytes(T, fb, h.len);
  }
  for (int64_t k = 0; k < R; k++) {
    FG_REQUIRE(recat[k] >= 0, FG_ERR_INTERNAL, "parallel prepare: position %lld never arrived",
               (long long)(base + k));
    rowptr[k + 1] += rowptr[k];
  }
  FG_ALLOC(col, FG_MAX(rowptr[R], 1));
  for (int64_t k = 0; k < R; k++) {
    memcpy(col + rowptr[k], recv + recat[k] + row_bytes(T, fb, 0),
           (size_t)(4 * (rowptr[k + 1] - rowptr[k])));
    sort_row(col + rowptr[k], rowptr[k + 1] - rowptr[k]);
  }
  free(recv);
  recv = NULL;

  /* the files of row blocks b0 .. b1 - 1 */
  const int64_t nb = b1 - b0;
  FG_CALLOC(rep, FG_MAX(nb, 1));
  FG_CALLOC(blocks, FG_MAX(nb * B, 1));
  FG_CALLOC(bnnz, FG_MAX(nb * B, 1));
  for (int64_t i = b0; i < b1; i++) {
    const int64_t r0 = m->offs[i] - base;
    const fg_prep_rows rows = {.rows = m->offs[i + 1] - m->offs[i],
                               .at = NULL,
                               .index = index + r0,
                               .features = feat + r0 * F,
                               .ids = ids ? ids + r0 : NULL,
                               .labels = labels ? labels + r0 : NULL,
                               .targets = targets ? targets + r0 * T : NULL,
                               .split = split + r0,
                               .indeg = indeg + r0,
                               .outdeg = outdeg + r0,
                               .loops = loops + r0,
                               .rowptr = rowptr + r0,
                               .col = col};
    st = fg_prep_write_row_block(dir, m, i, &rows, &rep[i - b0].node, &rep[i - b0].deg,
                                 blocks + (i - b0) * B, bnnz + (i - b0) * B);
    if (st != FG_OK) break;
  }
  FG_CHECK(fg_agree(comm, st));

  /* to rank 0: each block's two file entries, its B block entries and nonzeros */
  {
    const int64_t per = (int64_t)sizeof(block_report) + B * (int64_t)(sizeof(fg_prep_file) + 8);
    FG_REQUIRE(per * B <= INT_MAX, FG_ERR_UNSUPPORTED, "%d blocks", B);
    FG_ALLOC(mine, FG_MAX(per * nb, 1));
    for (int64_t i = 0; i < nb; i++) {
      unsigned char *p = mine + per * i;
      memcpy(p, &rep[i], sizeof rep[i]);
      memcpy(p + sizeof rep[i], blocks + i * B, (size_t)B * sizeof *blocks);
      memcpy(p + sizeof rep[i] + (size_t)B * sizeof *blocks, bnnz + i * B, (size_t)(8 * B));
    }
    FG_ALLOC(gc, P);
    FG_ALLOC(gd, P);
    for (int q = 0; q < P; q++) {
      gc[q] = (int)(per * fg_block_size(B, P, q));
      gd[q] = (int)(per * fg_block_start(B, P, q));
    }
    if (pc->rank == 0) FG_ALLOC(send, per * B);
    FG_CHECK_MPI(MPI_Gatherv(mine, (int)(per * nb), MPI_BYTE, send, gc, gd, MPI_BYTE, 0, comm));
    if (pc->rank == 0)
      for (int64_t i = 0; i < B; i++) {
        const unsigned char *p = send + per * i;
        memcpy(&rep_all[i], p, sizeof rep_all[i]);
        memcpy(blocks_all + i * B, p + sizeof rep_all[i], (size_t)B * sizeof *blocks_all);
        memcpy(nnz_all + i * B, p + sizeof rep_all[i] + (size_t)B * sizeof *blocks_all,
               (size_t)(8 * B));
      }
  }
cleanup:
  free(scount);
  free(rcount);
  free(at);
  free(send);
  free(recv);
  free(mine);
  free(index);
  free(ids);
  free(indeg);
  free(outdeg);
  free(rowptr);
  free(recat);
  free(loops);
  free(labels);
  free(col);
  free(targets);
  free(split);
  free(feat);
  free(rep);
  free(blocks);
  free(bnnz);
  free(gc);
  free(gd);
  return st;
}

/* ---- the entry points ---------------------------------------------------------------------- */

/* With FULLGRAPH_PREP_TIMES set, rank 0 prints each step's seconds (after a barrier, so the
 * slowest rank's) to stderr: where a parallel preparation spends its time. */
static void step_time(MPI_Comm comm, int rank, const char *what, double *t) {
  if (!getenv("FULLGRAPH_PREP_TIMES")) return;
  MPI_Barrier(comm);
  const double now = MPI_Wtime();
  if (rank == 0) fprintf(stderr, "prepare step %-22s %8.3f s\n", what, now - *t);
  *t = now;
}

fg_status fg_prepared_report(const char *dir, fg_prepare_report *r) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  memset(&m, 0, sizeof m);
  memset(r, 0, sizeof *r);
  FG_CHECK(fg_prep_manifest_read(dir, &m));
  r->nodes = m.n;
  r->entries = m.nnz;
  r->blocks = m.B;
  for (int64_t i = 0; i < m.B; i++) {
    int64_t e = 0;
    for (int64_t j = 0; j < m.B; j++) {
      e += m.block_nnz[i * m.B + j];
      if (j != i) r->edge_cut += m.block_nnz[i * m.B + j];
    }
    r->max_rows = FG_MAX(r->max_rows, m.offs[i + 1] - m.offs[i]);
    r->max_entries = FG_MAX(r->max_entries, e);
  }
  snprintf(r->partitioner, sizeof r->partitioner, "%s",
           strcmp(m.order, "natural") == 0 || strcmp(m.order, "random") == 0 ? "none" : "METIS");
cleanup:
  fg_prep_manifest_free(&m);
  return st;
}

fg_status fg_dataset_prepare_parallel(MPI_Comm comm, const char *path, const fg_load_config *load,
                                      const fg_prepare_config *cfg, const char *dir,
                                      fg_prepare_report *report) {
  fg_status st = FG_OK;
  piece pc;
  fg_prep_manifest m;
  fg_load_config ldef = fg_load_config_default();
  fg_prepare_config pdef = fg_prepare_config_default();
  fg_order_kind kind = FG_ORDER_NATURAL;
  int64_t *pos = NULL;
  block_report *rep = NULL;
  fg_prep_file *nodes = NULL, *degs = NULL, *blocks = NULL;
  char partitioner[48];
  double t = MPI_Wtime();
  memset(&pc, 0, sizeof pc);
  memset(&m, 0, sizeof m);
  if (!load) load = &ldef;
  if (!cfg) cfg = &pdef;
  FG_CHECK_MPI(MPI_Comm_size(comm, &pc.P));
  FG_CHECK_MPI(MPI_Comm_rank(comm, &pc.rank));
  /* the arguments, the same on every rank: refused before anything is read */
  st = fg_order_parse(cfg->order, &kind);
  if (st == FG_OK && kind != FG_ORDER_NATURAL && kind != FG_ORDER_RANDOM &&
      kind != FG_ORDER_METIS)
    st = fg_error_set(FG_ERR_UNSUPPORTED, __FILE__, __LINE__,
                      "--order %s: parallel prepare computes natural, random and metis; run "
                      "prepare as one process for %s",
                      fg_order_name(kind), fg_order_name(kind));
  FG_CHECK(st); /* the same on every rank: no agreement needed (nor its "rank 0:") */
  const int B = cfg->blocks;

  /* 1 and 2: this rank's piece and the fingerprint */
  if (ogb_in_parallel(comm, pc.rank, path, load))
    FG_CHECK(piece_from_ogb(comm, path, load, &pc));
  else if (snap_in_parallel(comm, pc.rank, path, load))
    FG_CHECK(piece_from_snap(comm, path, load, &pc));
  else
    FG_CHECK(piece_from_root(comm, path, load, &pc));
  step_time(comm, pc.rank, "read, build, fingerprint", &t);
  st = FG_OK;
  if (B < 1 || B > FG_PREP_MAX_BLOCKS || B > FG_MAX(pc.n, 1))
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "prepare: --blocks %d: must be 1 to %lld (the nodes, at most %d)", B,
                      (long long)FG_MIN(FG_MAX(pc.n, 1), FG_PREP_MAX_BLOCKS), FG_PREP_MAX_BLOCKS);
  else if (kind == FG_ORDER_METIS && B > 1 && pc.n > B && pc.n < pc.P)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "--order metis on %d ranks: the graph has %lld nodes, fewer than the "
                      "ranks (PT-Scotch needs one a rank)", pc.P, (long long)pc.n);
  FG_CHECK(st); /* n is known on every rank */

  /* 3: the order */
  FG_CHECK(fg_prep_manifest_init(&m, pc.flags, pc.n, pc.nnz, pc.F, pc.C, pc.T, B, cfg->seed,
                                 fg_order_name(kind), pc.id_span));
  FG_ALLOC(pos, FG_MAX(pc.hi - pc.lo, 1));
  st = positions(comm, &pc, kind, B, cfg->seed, m.offs, pos, partitioner, sizeof partitioner);
  FG_CHECK(fg_agree(comm, st));
  step_time(comm, pc.rank, "order", &t);

  /* 4: the directory, then every row block's files */
  st = pc.rank == 0 ? fg_prep_make_dir(dir) : FG_OK;
  FG_CHECK(fg_agree(comm, st));
  if (pc.rank == 0) {
    FG_CALLOC(rep, B);
    FG_CALLOC(blocks, (int64_t)B * B);
  }
  FG_CHECK(write_rows(comm, &pc, &m, pos, dir, rep, blocks, m.block_nnz));
  step_time(comm, pc.rank, "redistribute and write", &t);

  /* 5: the manifest, last */
  if (pc.rank == 0) {
    FG_ALLOC(nodes, B);
    FG_ALLOC(degs, B);
    for (int i = 0; i < B; i++) {
      nodes[i] = rep[i].node;
      degs[i] = rep[i].deg;
    }
    m.fp_nodes = pc.fp.nodes;
    m.fp_entries = pc.fp.entries;
    m.fp_features = pc.fp.features;
    m.fp_classes = pc.fp.classes;
    m.fp_graph = pc.fp.graph;
    m.fp_feature_hash = pc.fp.feature_hash;
    m.fp_labels = pc.fp.labels;
    m.fp_split = pc.fp.split;
    st = fg_prep_assemble_files(&m, nodes, degs, blocks);
    if (st == FG_OK) st = fg_prep_manifest_write(dir, &m);
    if (st == FG_OK && report) {
      st = fg_prepared_report(dir, report);
      report->parallel_read = pc.parallel_read;
      snprintf(report->partitioner, sizeof report->partitioner, "%s", partitioner);
    }
  }
  FG_CHECK(fg_agree(comm, st));
cleanup:
  piece_free(&pc);
  fg_prep_manifest_free(&m);
  free(pos);
  free(rep);
  free(nodes);
  free(degs);
  free(blocks);
  return st;
}
