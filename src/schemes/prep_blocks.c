/* prep_blocks.c -- one rank's reads of a prepared directory, shared by the per-rank layouts
 * (1D: partition_prepared.c, 3D: scheme_3d.c). See fg_prep_blocks.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fg_order.h"
#include "schemes/fg_grid3d.h"
#include "schemes/fg_prep_blocks.h"
#include "schemes/fg_scheme.h"

fg_status fg_prep_src_open(fg_prep_src *s, const char *dir, const fg_prep_manifest *m) {
  fg_status st = FG_OK;
  const int64_t B = m->B;
  int64_t k = 2 * B;
  memset(s, 0, sizeof *s);
  s->dir = dir;
  s->m = m;
  FG_ALLOC(s->files, B * B);
  for (int64_t b = 0; b < B * B; b++) s->files[b] = m->block_nnz[b] > 0 ? k++ : -1;
  FG_CALLOC(s->in_b, B);
  FG_CALLOC(s->out_b, B);
  FG_CALLOC(s->loops, B);
cleanup:
  if (st != FG_OK) fg_prep_src_close(s);
  return st;
}

void fg_prep_src_close(fg_prep_src *s) {
  if (!s->m) return;
  if (s->in_b && s->out_b && s->loops)
    for (int64_t j = 0; j < s->m->B; j++) fg_prep_src_drop_degrees(s, j);
  if (s->blocks)
    for (int64_t b = 0; b < s->m->B * s->m->B; b++) free(s->blocks[b]);
  free(s->blocks);
  free(s->in_b);
  free(s->out_b);
  free(s->loops);
  free(s->files);
  s->in_b = s->out_b = NULL;
  s->loops = NULL;
  s->files = NULL;
  s->blocks = NULL;
}

fg_status fg_prep_src_keep_blocks(fg_prep_src *s) {
  fg_status st = FG_OK;
  if (!s->blocks) FG_CALLOC(s->blocks, s->m->B * s->m->B);
cleanup:
  return st;
}

fg_status fg_prep_src_degrees(fg_prep_src *s, int64_t j) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  const fg_prep_manifest *m = s->m;
  const int64_t nr = m->offs[j + 1] - m->offs[j];
  if (s->in_b[j]) return FG_OK;
  FG_CHECK(fg_prep_file_read(s->dir, m, m->B + j, &buf));
  s->bytes += m->files[m->B + j].size;
  FG_ALLOC(s->in_b[j], FG_MAX(nr, 1));
  FG_ALLOC(s->out_b[j], FG_MAX(nr, 1));
  FG_ALLOC(s->loops[j], FG_MAX(nr, 1));
  memcpy(s->in_b[j], buf, (size_t)(8 * nr));
  memcpy(s->out_b[j], buf + 8 * nr, (size_t)(8 * nr));
  memcpy(s->loops[j], buf + 16 * nr, (size_t)(4 * nr));
  s->deg_held += (uint64_t)(FG_PREP_DEG_ROW_BYTES * nr);
  s->deg_peak = FG_MAX(s->deg_peak, s->deg_held);
  for (int64_t r = 0; r < nr; r++) {
    char name[FG_PREP_NAME_BYTES];
    fg_prep_deg_name(j, name);
    FG_REQUIRE(s->in_b[j][r] >= s->loops[j][r] && s->out_b[j][r] >= s->loops[j][r] &&
                   s->loops[j][r] >= 0,
               FG_ERR_FORMAT, "%s/%s: row %lld: degrees %lld in, %lld out with %d self loops",
               s->dir, name, (long long)r, (long long)s->in_b[j][r], (long long)s->out_b[j][r],
               s->loops[j][r]);
  }
cleanup:
  if (st != FG_OK) { /* not half-read next time */
    if (s->in_b[j] && s->out_b[j] && s->loops[j]) {
      fg_prep_src_drop_degrees(s, j);
    } else {
      free(s->in_b[j]);
      free(s->out_b[j]);
      free(s->loops[j]);
      s->in_b[j] = s->out_b[j] = NULL;
      s->loops[j] = NULL;
    }
  }
  free(buf);
  return st;
}

void fg_prep_src_drop_degrees(fg_prep_src *s, int64_t j) {
  if (!s->in_b[j]) return;
  free(s->in_b[j]);
  free(s->out_b[j]);
  free(s->loops[j]);
  s->in_b[j] = s->out_b[j] = NULL;
  s->loops[j] = NULL;
  s->deg_held -= (uint64_t)(FG_PREP_DEG_ROW_BYTES * (s->m->offs[j + 1] - s->m->offs[j]));
}

/* One block file (i, j), whole and checked: its row offsets and block-local columns (the kept
 * copy when blocks are kept: then *buf is not the caller's to free). */
static fg_status read_block(fg_prep_src *s, int64_t i, int64_t j, unsigned char **buf) {
  fg_status st = FG_OK;
  const fg_prep_manifest *m = s->m;
  const int64_t k = s->files[i * m->B + j];
  const int64_t nr = m->offs[i + 1] - m->offs[i], w = m->offs[j + 1] - m->offs[j];
  const int64_t e = m->block_nnz[i * m->B + j];
  if (s->blocks && s->blocks[i * m->B + j]) {
    *buf = s->blocks[i * m->B + j];
    return FG_OK;
  }
  FG_CHECK(fg_prep_file_read(s->dir, m, k, buf));
  s->bytes += m->files[k].size;
  const int64_t *rp = (const int64_t *)(void *)*buf;
  const int32_t *cl = (const int32_t *)(void *)(*buf + 8 * (nr + 1));
  FG_REQUIRE(rp[0] == 0 && rp[nr] == e, FG_ERR_FORMAT,
             "%s/%s: row offsets run from %lld to %lld, not 0 to %lld", s->dir, m->files[k].name,
             (long long)rp[0], (long long)rp[nr], (long long)e);
  for (int64_t u = 0; u < nr; u++) {
    FG_REQUIRE(rp[u] <= rp[u + 1], FG_ERR_FORMAT, "%s/%s: row %lld ends before it starts",
               s->dir, m->files[k].name, (long long)u);
    for (int64_t q = rp[u]; q < rp[u + 1]; q++)
      FG_REQUIRE(cl[q] >= 0 && cl[q] < w && (q == rp[u] || cl[q] >= cl[q - 1]), FG_ERR_FORMAT,
                 "%s/%s: row %lld: column %d is outside the block or out of order", s->dir,
                 m->files[k].name, (long long)u, cl[q]);
  }
  if (s->blocks) s->blocks[i * m->B + j] = *buf;
cleanup:
  if (st != FG_OK) {
    free(*buf);
    *buf = NULL;
  }
  return st;
}

float fg_prep_op_value(fg_adj_norm norm, int64_t rdeg, int64_t ccount) {
  const double r = (double)rdeg;
  return norm == FG_ADJ_SUM    ? 1.0f
         : norm == FG_ADJ_MEAN ? (float)(1.0 / r)
                               : (float)(1.0 / sqrt(r * (double)ccount));
}

/* The row blocks of the prepared grid that [p0, p1) overlaps: [*b0, *b1) (empty when it is). */
static void blocks_of(const fg_prep_manifest *m, int64_t p0, int64_t p1, int64_t *b0,
                      int64_t *b1) {
  if (p1 <= p0) {
    *b0 = *b1 = 0;
    return;
  }
  *b0 = fg_block_owner(m->offs, (int)m->B, p0);
  *b1 = fg_block_owner(m->offs, (int)m->B, p1 - 1) + 1;
}

/* 1 when block j of one side of a rectangle (rows: result row block j against result column
 * blocks [o0, o1); else result column block j against row blocks [o0, o1)) has a nonzero block
 * of the pattern: its degree file is needed. */
static int side_used(const fg_prep_manifest *m, int transposed, int rows, int64_t j, int64_t o0,
                     int64_t o1) {
  const int64_t B = m->B;
  for (int64_t o = o0; o < o1; o++) {
    const int64_t x = rows ? j : o, y = rows ? o : j; /* result blocks (x, y) */
    if (m->block_nnz[transposed ? y * B + x : x * B + y] > 0) return 1;
  }
  return 0;
}

/* The value of the result's entry at local row lr of degree block x, local column lc of degree
 * block y (both held): the pattern's row is the result's row, or its column for Âᵀ. */
static float entry_value(const fg_prep_src *s, fg_adj_spec adj, int transposed, int64_t x,
                         int64_t lr, int64_t y, int64_t lc, int *mean_sym) {
  const int drop = adj.no_self_loops != 0;
  const int64_t br = transposed ? y : x, pr = transposed ? lc : lr; /* the pattern's row */
  const int64_t bc = transposed ? x : y, pc = transposed ? lr : lc; /* ... and column */
  const int64_t rdeg = s->in_b[br][pr] - (drop ? s->loops[br][pr] : 0);
  const int64_t ccount = s->out_b[bc][pc] - (drop ? s->loops[bc][pc] : 0);
  const float v = fg_prep_op_value(adj.norm, rdeg, ccount);
  if (mean_sym) {
    const int64_t dcol = s->in_b[y][lc] - (drop ? s->loops[y][lc] : 0);
    if (v != fg_prep_op_value(FG_ADJ_MEAN, dcol, 0)) *mean_sym = 0;
  }
  return v;
}

/* A's values (rows r0 + u in row blocks [x0, x1), columns c0 + col in column blocks [y0, y1))
 * from the degree files, holding one side's blocks: the side whose blocks have fewer rows (the
 * rows on a tie), the other side's read one block at a time and freed. Degree blocks held
 * before that are not on the held side are dropped first. */
static fg_status operator_values(fg_prep_src *s, int64_t r0, int64_t c0, int64_t x0, int64_t x1,
                                 int64_t y0, int64_t y1, int transposed, fg_adj_spec adj,
                                 fg_csr *A, int *mean_sym) {
  fg_status st = FG_OK;
  const fg_prep_manifest *m = s->m;
  const int64_t *offs = m->offs, nl = A->nrows;
  const int keep_rows = offs[x1] - offs[x0] <= offs[y1] - offs[y0];
  const int64_t k0 = keep_rows ? x0 : y0, k1 = keep_rows ? x1 : y1;
  int64_t *cur = NULL, swept = -1; /* swept: the other side's block read now, or -1 */
  if (mean_sym) *mean_sym = 1;
  for (int64_t j = 0; j < m->B; j++)
    if (j < k0 || j >= k1) fg_prep_src_drop_degrees(s, j);
  if (A->nnz == 0) return FG_OK;
  for (int64_t j = k0; j < k1; j++)
    if (side_used(m, transposed, keep_rows, j, keep_rows ? y0 : x0, keep_rows ? y1 : x1))
      FG_CHECK(fg_prep_src_degrees(s, j));
  if (keep_rows) {
    /* the columns swept: row u's entries in column block y are the next ones from cur[u] on,
     * its columns being sorted */
    FG_ALLOC(cur, FG_MAX(nl, 1));
    for (int64_t u = 0; u < nl; u++) cur[u] = A->rowptr[u];
    for (int64_t y = y0; y < y1; y++) {
      const int64_t yb = offs[y], yend = offs[y + 1] - c0; /* y's end, relative to c0 */
      if (!side_used(m, transposed, 0, y, x0, x1)) continue;
      if (!s->in_b[y]) { /* not a held block: read for this sweep step only */
        swept = y;
        FG_CHECK(fg_prep_src_degrees(s, y));
      }
      for (int64_t x = x0; x < x1; x++) {
        const int64_t xb = offs[x];
        const int64_t u0 = FG_MAX(r0, xb) - r0, u1 = FG_MIN(r0 + nl, offs[x + 1]) - r0;
        for (int64_t u = u0; u < u1; u++) {
          int64_t q = cur[u];
          for (; q < A->rowptr[u + 1] && A->col[q] < yend; q++)
            A->val[q] = entry_value(s, adj, transposed, x, r0 + u - xb, y, c0 + A->col[q] - yb,
                                    mean_sym);
          cur[u] = q;
        }
      }
      if (swept >= 0) fg_prep_src_drop_degrees(s, swept);
      swept = -1;
    }
  } else {
    /* the rows swept: every column's block is held, found by walking the sorted row */
    for (int64_t x = x0; x < x1; x++) {
      const int64_t xb = offs[x];
      const int64_t u0 = FG_MAX(r0, xb) - r0, u1 = FG_MIN(r0 + nl, offs[x + 1]) - r0;
      if (!side_used(m, transposed, 1, x, y0, y1)) continue;
      if (!s->in_b[x]) { /* not a held block: read for this sweep step only */
        swept = x;
        FG_CHECK(fg_prep_src_degrees(s, x));
      }
      for (int64_t u = u0; u < u1; u++) {
        int64_t y = y0;
        for (int64_t q = A->rowptr[u]; q < A->rowptr[u + 1]; q++) {
          const int64_t g = c0 + A->col[q];
          while (g >= offs[y + 1]) y++;
          A->val[q] = entry_value(s, adj, transposed, x, r0 + u - xb, y, g - offs[y], mean_sym);
        }
      }
      if (swept >= 0) fg_prep_src_drop_degrees(s, swept);
      swept = -1;
    }
  }
cleanup:
  if (swept >= 0) fg_prep_src_drop_degrees(s, swept);
  free(cur);
  return st;
}

fg_status fg_prep_operator_sym(fg_prep_src *s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                               int transposed, fg_adj_spec adj, fg_csr *A, int *mean_sym) {
  fg_status st = FG_OK;
  const fg_prep_manifest *m = s->m;
  const int64_t B = m->B, nl = FG_MAX(r1 - r0, 0);
  const int drop = adj.no_self_loops != 0;
  unsigned char **blk = NULL; /* the blocks of one row (or column) block of the result */
  int64_t *fill = NULL, x0, x1, y0, y1, nnz = 0, maxrows = 0;
  memset(A, 0, sizeof *A);
  blocks_of(m, r0, r1, &x0, &x1);
  blocks_of(m, c0, c1, &y0, &y1);
  /* an upper bound: the entries of every block the rectangle overlaps */
  for (int64_t x = x0; x < x1; x++) {
    maxrows = FG_MAX(maxrows, m->offs[x + 1] - m->offs[x]);
    for (int64_t y = y0; y < y1; y++)
      nnz += m->block_nnz[transposed ? y * B + x : x * B + y];
  }
  FG_CHECK(fg_scheme_alloc_csr(A, nl, FG_MAX(c1 - c0, 0), nnz));
  FG_CALLOC(blk, B);
  FG_CALLOC(fill, maxrows + 1);
  A->rowptr[0] = 0;
  /* one result block x at a time (the pattern's row block x, or its column block x), each of
   * its blocks read once and whole: the kept entries of its rows inside [r0, r1), their
   * offsets after the rows before, then the columns */
  for (int64_t x = x0; x < x1; x++) {
    const int64_t xb = m->offs[x], xn = m->offs[x + 1] - xb;
    const int64_t u0 = FG_MAX(r0, xb) - xb, u1 = FG_MIN(r1, xb + xn) - xb; /* rows kept */
    for (int64_t y = y0; y < y1; y++) {
      const int64_t i = transposed ? y : x, j = transposed ? x : y;
      if (s->files[i * B + j] >= 0) FG_CHECK(read_block(s, i, j, &blk[y]));
    }
    for (int64_t u = 0; u <= xn; u++) fill[u] = 0;
    for (int pass = 0; pass < 2; pass++) {
      if (pass == 1) { /* counts to positions: row u of block x is row xb + u - r0 of A */
        int64_t at = A->rowptr[xb + u0 - r0];
        for (int64_t u = u0; u < u1; u++) {
          const int64_t c = fill[u];
          fill[u] = at;
          at += c;
          A->rowptr[xb + u - r0 + 1] = at;
        }
      }
      for (int64_t y = y0; y < y1; y++) { /* increasing y: sorted columns in every row */
        if (!blk[y]) continue;
        const int64_t yb = m->offs[y], in = transposed ? m->offs[y + 1] - yb : xn;
        const int64_t *rp = (const int64_t *)(void *)blk[y];
        const int32_t *cl = (const int32_t *)(void *)(blk[y] + 8 * (in + 1));
        if (!transposed) {
          for (int64_t u = u0; u < u1; u++)
            for (int64_t q = rp[u]; q < rp[u + 1]; q++) {
              const int64_t g = cl[q] + yb;
              if (g < c0 || g >= c1 || (drop && g == xb + u)) continue;
              if (pass == 0) fill[u]++;
              else A->col[fill[u]++] = (int32_t)(g - c0);
            }
        } else { /* row v of block (y, x) is column yb + v of the result */
          for (int64_t v = 0; v < in; v++) {
            const int64_t g = yb + v;
            if (g < c0 || g >= c1) continue;
            for (int64_t q = rp[v]; q < rp[v + 1]; q++) {
              const int64_t u = cl[q];
              if (u < u0 || u >= u1 || (drop && g == xb + u)) continue;
              if (pass == 0) fill[u]++;
              else A->col[fill[u]++] = (int32_t)(g - c0);
            }
          }
        }
      }
    }
    for (int64_t y = y0; y < y1; y++) {
      if (!s->blocks) free(blk[y]);
      blk[y] = NULL;
    }
  }
  A->nnz = A->rowptr[nl];
  FG_CHECK(operator_values(s, r0, c0, x0, x1, y0, y1, transposed, adj, A, mean_sym));
cleanup:
  if (blk && !s->blocks)
    for (int64_t y = 0; y < B; y++) free(blk[y]);
  free(blk);
  free(fill);
  if (st != FG_OK) fg_csr_free(A);
  return st;
}

fg_status fg_prep_operator(fg_prep_src *s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                           int transposed, fg_adj_spec adj, fg_csr *A) {
  return fg_prep_operator_sym(s, r0, r1, c0, c1, transposed, adj, A, NULL);
}

fg_status fg_prep_node_read(fg_prep_src *s, int64_t i, unsigned char **buf, int64_t sec[6]) {
  fg_status st = FG_OK;
  const fg_prep_manifest *m = s->m;
  const int64_t nr = m->offs[i + 1] - m->offs[i], T = m->T;
  *buf = NULL;
  fg_prep_node_sections(m, nr, sec);
  FG_CHECK(fg_prep_file_read(s->dir, m, i, buf));
  s->bytes += m->files[i].size;
  const unsigned char *b = *buf;
  for (int64_t r = 0; r < nr; r++) {
    int64_t v;
    int32_t lab = -1;
    int8_t sp;
    memcpy(&v, b + sec[FG_PREP_SEC_INDEX] + 8 * r, 8);
    if (T == 0) memcpy(&lab, b + sec[FG_PREP_SEC_LABELS] + 4 * r, 4);
    sp = (int8_t)b[sec[FG_PREP_SEC_SPLIT] + r];
    FG_REQUIRE(v >= 0 && v < m->n && lab >= -1 && lab < m->C && sp >= FG_SPLIT_NONE &&
                   sp <= FG_SPLIT_TEST,
               FG_ERR_FORMAT, "%s/%s: row %lld: node %lld, label %d or split %d out of range",
               s->dir, m->files[i].name, (long long)r, (long long)v, lab, sp);
    for (int64_t t = 0; t < T; t++) {
      const int8_t y = (int8_t)b[sec[FG_PREP_SEC_LABELS] + r * T + t];
      FG_REQUIRE(y >= -1 && y <= 1, FG_ERR_FORMAT, "%s/%s: row %lld task %lld is %d", s->dir,
                 m->files[i].name, (long long)r, (long long)t, y);
    }
  }
cleanup:
  if (st != FG_OK) {
    free(*buf);
    *buf = NULL;
  }
  return st;
}

fg_status fg_prep_node_section(fg_prep_src *s, int64_t i, int which, int64_t lo, int64_t hi,
                               void *dst) {
  fg_status st = FG_OK;
  const fg_prep_manifest *m = s->m;
  const int64_t nr = m->offs[i + 1] - m->offs[i], T = m->T;
  const int64_t w = which == FG_PREP_SEC_INDEX ? 8 : which == FG_PREP_SEC_SPLIT ? 1 : T > 0 ? T : 4;
  int64_t sec[6];
  fg_prep_reader r;
  memset(&r, 0, sizeof r);
  r.fd = -1;
  if (hi <= lo) return FG_OK;
  FG_REQUIRE(lo >= 0 && hi <= nr &&
                 (which == FG_PREP_SEC_INDEX || which == FG_PREP_SEC_LABELS ||
                  which == FG_PREP_SEC_SPLIT),
             FG_ERR_INTERNAL, "node file %lld: rows [%lld, %lld) of section %d", (long long)i,
             (long long)lo, (long long)hi, which);
  fg_prep_node_sections(m, nr, sec);
  FG_CHECK(fg_prep_reader_open(&r, s->dir, m, i));
  FG_CHECK(fg_prep_reader_pread(&r, dst, (size_t)((hi - lo) * w), (uint64_t)(sec[which] + lo * w)));
  s->bytes += r.bytes_read;
  for (int64_t k = 0; k < hi - lo; k++) {
    const unsigned char *b = (const unsigned char *)dst + k * w;
    int64_t v = 0;
    int32_t lab = 0;
    if (which == FG_PREP_SEC_INDEX) {
      memcpy(&v, b, 8);
      FG_REQUIRE(v >= 0 && v < m->n, FG_ERR_FORMAT, "%s/%s: row %lld: node %lld out of range",
                 s->dir, m->files[i].name, (long long)(lo + k), (long long)v);
    } else if (which == FG_PREP_SEC_SPLIT) {
      FG_REQUIRE((int8_t)b[0] >= FG_SPLIT_NONE && (int8_t)b[0] <= FG_SPLIT_TEST, FG_ERR_FORMAT,
                 "%s/%s: row %lld: split %d out of range", s->dir, m->files[i].name,
                 (long long)(lo + k), (int8_t)b[0]);
    } else if (T == 0) {
      memcpy(&lab, b, 4);
      FG_REQUIRE(lab >= -1 && lab < m->C, FG_ERR_FORMAT, "%s/%s: row %lld: label %d out of range",
                 s->dir, m->files[i].name, (long long)(lo + k), lab);
    } else {
      for (int64_t t = 0; t < T; t++)
        FG_REQUIRE((int8_t)b[t] >= -1 && (int8_t)b[t] <= 1, FG_ERR_FORMAT,
                   "%s/%s: row %lld task %lld is %d", s->dir, m->files[i].name,
                   (long long)(lo + k), (long long)t, (int8_t)b[t]);
    }
  }
cleanup:
  fg_prep_reader_close(&r);
  return st;
}

fg_status fg_prep_dir_share(fg_dist *d, const fg_dataset *ds, char **dir) {
  fg_status st = FG_OK;
  int64_t plen = d->rank == 0 && ds && ds->prep_dir ? (int64_t)strlen(ds->prep_dir) + 1 : 0;
  *dir = NULL;
  FG_CHECK(fg_dist_bcast(d, &plen, sizeof plen, 0));
  if (plen == 0) return FG_OK;
  *dir = malloc((size_t)plen);
  st = *dir ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == FG_OK && d->rank == 0) memcpy(*dir, ds->prep_dir, (size_t)plen);
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(fg_dist_bcast(d, *dir, plen, 0));
cleanup:
  if (st != FG_OK) {
    free(*dir);
    *dir = NULL;
  }
  return st;
}

fg_status fg_prep_report(fg_dist *d, FILE *log, const char *dir, const fg_prep_manifest *m,
                         const char *what, uint64_t bytes, uint64_t deg_peak) {
  fg_status st = FG_OK;
  const int P = d->size;
  int64_t mine[3] = {(int64_t)bytes, fg_peak_rss_bytes(), (int64_t)deg_peak}, *all = NULL;
  int64_t total = 0;
  int on = log != NULL;
  /* every rank must take part in the gather: rank 0's log decides for all */
  FG_CHECK(fg_dist_bcast(d, &on, sizeof on, 0));
  if (!on) return FG_OK;
  if (d->rank == 0) all = fg_malloc_array((size_t)P * 3, sizeof *all);
  FG_CHECK_MPI(MPI_Gather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, 0, d->comm));
  if (d->rank == 0 && all && log) {
    for (int64_t k = 0; k < m->nfiles; k++) total += (int64_t)m->files[k].size;
    fprintf(log, "prepared %s: %s; its files hold %lld bytes\n", dir, what, (long long)total);
    for (int r = 0; r < P; r++)
      fprintf(log, "  rank %d read %lld bytes, peak resident %lld bytes; degree tables %lld bytes "
              "at most\n", r, (long long)all[3 * r], (long long)all[3 * r + 1],
              (long long)all[3 * r + 2]);
    fflush(log);
  }
cleanup:
  free(all);
  return st;
}

fg_status fg_prep_check_order(const fg_prep_manifest *m, const char *dir, const char *order) {
  fg_status st = FG_OK;
  fg_order_kind want = FG_ORDER_NATURAL, have = FG_ORDER_NATURAL;
  if (!order) return FG_OK;
  FG_CHECK(fg_order_parse(order, &want));
  FG_REQUIRE(fg_order_parse(m->order, &have) == FG_OK && have == want, FG_ERR_INVALID_ARG,
             "%s was prepared in order %s; --order %s needs it prepared again (or drop --order: "
             "the prepared order is the layout)",
             dir, m->order, order);
cleanup:
  return st;
}

fg_status fg_prep_check_3d(const fg_prep_manifest *m, const char *dir, const int g[3],
                           int double_perm, const char *order) {
  fg_status st = FG_OK;
  FG_REQUIRE(!double_perm, FG_ERR_INVALID_ARG,
             "%s is a prepared directory read per rank: its one order (%s) is 3d's permutation, "
             "so --double-perm, which draws two of its own, cannot be read from it; drop "
             "--double-perm (prepare --order random is the single random permutation), or train "
             "on the source dataset for the double permutation",
             dir, m->order);
  if (g) FG_CHECK(fg_prep_check_grid(m, dir, g));
  FG_CHECK(fg_prep_check_order(m, dir, order));
cleanup:
  return st;
}

fg_status fg_dataset_prepared_check_3d(const char *dir, int ranks, const char *grid,
                                       int double_perm, const char *order) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  int g[3] = {0, 0, 0};
  memset(&m, 0, sizeof m);
  FG_CHECK(fg_prep_manifest_read(dir, &m));
  if (!grid || strcmp(grid, "auto") == 0) {
    /* the performance model picks among the grids the blocks form, from the manifest's block
     * counts (fg_plan_predict_3d): there must be one */
    char fit[256], counts[256];
    size_t len = 0;
    fg_prep_grids_that_fit(&m, ranks, fit, sizeof fit);
    counts[0] = '\0';
    /* the rank counts up to 64 that some grid of divisors of B forms */
    for (int64_t p = 1; p <= 64 && len + 8 < sizeof counts; p++) {
      char any[256];
      fg_prep_grids_that_fit(&m, p, any, sizeof any);
      if (strcmp(any, "none") != 0)
        len += (size_t)snprintf(counts + len, sizeof counts - len, "%s%lld", len ? ", " : "",
                                (long long)p);
    }
    FG_REQUIRE(strcmp(fit, "none") != 0, FG_ERR_INVALID_ARG,
               "%s has %lld row blocks: no 3d grid of %d ranks has every dimension dividing "
               "them (rank counts up to 64 that fit: %s); or prepare it again with --blocks a "
               "multiple of %d",
               dir, (long long)m.B, ranks, counts, ranks);
    FG_CHECK(fg_prep_check_3d(&m, dir, NULL, double_perm, order));
  } else {
    FG_CHECK(fg_grid_parse(grid, ranks, g));
    FG_CHECK(fg_prep_check_3d(&m, dir, g, double_perm, order));
  }
cleanup:
  fg_prep_manifest_free(&m);
  return st;
}
