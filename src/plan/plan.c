/* plan.c -- the performance model: cost formulas, the 3D and 1D epoch predictions, fg_plan,
 * the choice for --grid auto / --scheme auto, and the calibration file. See fg_plan.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "io/fg_prepared.h"
#include "model/fg_model.h"
#include "plan/fg_plan.h"
#include "plan/fg_registry.h"
#include "schemes/fg_partition.h"
#include "schemes/fg_prep_blocks.h"
#include "schemes/fg_grid3d.h"
#include "schemes/fg_layouts.h"

/* ---- coefficients ----------------------------------------------------------------------------- */

fg_calibration fg_calibration_default(void) {
  /* one core of a current x86 server: an SpMM costs ~0.4 ns per multiply-add of a row
   * element, 2 ns per nonzero; GEMM 20 Gflop/s; 10 GB/s elementwise; a collective step 3 us
   * inside a node (5 GB/s per rank), 20 us across nodes (10 GB/s links); bf16 GEMMs at the
   * fp32 rate (a CPU without bf16 dot products converts) */
  static const fg_calibration c = {.spmm = {1e-10, 3e-9, 5e-9, 2.5e-9, 3e-10, 1e-11},
                                   .cache_bytes = 2e6, .llc_bytes = 8e6,
                                   .gemm_flops = 2e10, .gemm_flops_bf16 = 2e10,
                                   .stream_bytes = 1e10,
                                   .dropout_elem = 1.5e-9, .softmax_elem = 8e-9,
                                   .alpha_intra = 3e-6, .beta_intra = 2e-10,
                                   .alpha_inter = 2e-5, .beta_inter = 1e-10};
  return c;
}

double fg_calibration_gemm_rate(const fg_calibration *c, int bf16) {
  return bf16 && c->gemm_flops_bf16 > 0 ? c->gemm_flops_bf16 : c->gemm_flops;
}

fg_plan_config fg_plan_config_default(void) {
  return (fg_plan_config){
      .ranks = 1, .layers = 2, .hidden = 16, .agg_order = FG_AGG_AUTO, .agg_blocks = 1};
}

/* What a key's value may be. Every coefficient is finite and at most its bound, so that a
 * prediction (counts of at most ~1e18 times coefficients, sums, quotients by rates of at least
 * 1) stays finite: a calibration file cannot make the planner rank NaN or infinite times. */
enum { CAL_SECONDS, CAL_BYTES, CAL_RATE, CAL_COUNT };
static const struct {
  const char *what;
  double lo, hi;
} cal_ranges[] = {
    [CAL_SECONDS] = {"a number of seconds", 0, 1}, /* per unit of work, per step, per byte */
    [CAL_BYTES] = {"a number of bytes", 1, 1e18},  /* a cache */
    [CAL_RATE] = {"a rate per second", 1, 1e18},   /* flop/s, bytes/s: divisors */
    [CAL_COUNT] = {"an integer", 0, 1e9},          /* what it ran with; 0 = unknown */
};

static const struct {
  const char *key;
  size_t off;
  int kind;
} cal_keys[] = {
    {"spmm_nnz_f", offsetof(fg_calibration, spmm) + 0 * sizeof(double), CAL_SECONDS},
    {"spmm_nnz_lines", offsetof(fg_calibration, spmm) + 1 * sizeof(double), CAL_SECONDS},
    {"spmm_nnz_llc_lines", offsetof(fg_calibration, spmm) + 2 * sizeof(double), CAL_SECONDS},
    {"spmm_nnz", offsetof(fg_calibration, spmm) + 3 * sizeof(double), CAL_SECONDS},
    {"spmm_rows_f", offsetof(fg_calibration, spmm) + 4 * sizeof(double), CAL_SECONDS},
    {"spmm_cols_f", offsetof(fg_calibration, spmm) + 5 * sizeof(double), CAL_SECONDS},
    {"cache_bytes", offsetof(fg_calibration, cache_bytes), CAL_BYTES},
    {"llc_bytes", offsetof(fg_calibration, llc_bytes), CAL_BYTES},
    {"gemm_flops", offsetof(fg_calibration, gemm_flops), CAL_RATE},
    {"gemm_flops_bf16", offsetof(fg_calibration, gemm_flops_bf16), CAL_RATE},
    {"stream_bytes", offsetof(fg_calibration, stream_bytes), CAL_RATE},
    {"dropout_elem", offsetof(fg_calibration, dropout_elem), CAL_SECONDS},
    {"softmax_elem", offsetof(fg_calibration, softmax_elem), CAL_SECONDS},
    {"alpha_intra", offsetof(fg_calibration, alpha_intra), CAL_SECONDS},
    {"beta_intra", offsetof(fg_calibration, beta_intra), CAL_SECONDS},
    {"alpha_inter", offsetof(fg_calibration, alpha_inter), CAL_SECONDS},
    {"beta_inter", offsetof(fg_calibration, beta_inter), CAL_SECONDS},
    {"threads", offsetof(fg_calibration, threads), CAL_COUNT},
    {"ranks", offsetof(fg_calibration, ranks), CAL_COUNT},
    {"ranks_per_node", offsetof(fg_calibration, ranks_per_node), CAL_COUNT},
};
#define CAL_NKEYS ((int)(sizeof cal_keys / sizeof cal_keys[0]))

fg_status fg_calibration_write(const char *path, const fg_calibration *c) {
  fg_status st = FG_OK;
  FILE *f = fopen(path, "w");
  FG_REQUIRE(f, FG_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  fprintf(f, "# fullgraph calibration (fullgraph bench --calibrate); seconds and bytes\n"
             "# SpMM s = spmm_nnz_f nnz f + spmm_nnz_lines nnz lines(cache_bytes)\n"
             "#   + spmm_nnz_llc_lines nnz lines(llc_bytes) + spmm_nnz nnz + spmm_rows_f rows f\n"
             "#   + spmm_cols_f cols f, where lines(C) = ceil(f / 16) (1 - C / x) for\n"
             "#   x = 64 ceil(f / 16) cols > C, else 0\n"
             "# ring all-reduce of M bytes over G ranks = 2 (G-1) alpha + 2 beta M (G-1)/G\n"
             "# gemm_flops_bf16: GEMM flop/s under --precision bf16 (absent: gemm_flops)\n"
             "# dropout_elem, softmax_elem: seconds per element of a pass\n"
             "version 1\n");
  for (int i = 0; i < CAL_NKEYS; i++) {
    const char *p = (const char *)c + cal_keys[i].off;
    if (cal_keys[i].kind == CAL_COUNT)
      fprintf(f, "%s %d\n", cal_keys[i].key, *(const int *)(const void *)p);
    else
      fprintf(f, "%s %.9g\n", cal_keys[i].key, *(const double *)(const void *)p);
  }
  FG_REQUIRE(fflush(f) == 0 && !ferror(f), FG_ERR_IO, "%s: write failed: %s", path,
             strerror(errno));
cleanup:
  if (f && fclose(f) != 0 && st == FG_OK)
    st = fg_error_set(FG_ERR_IO, __FILE__, __LINE__, "%s: close failed: %s", path,
                      strerror(errno));
  return st;
}

static int cal_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

/* The blank-separated word at *p, NUL-terminated in place; *p moves past it. NULL if none. */
static char *cal_word(char **p) {
  char *s = *p, *w;
  while (cal_blank(*s)) s++;
  if (!*s) return NULL;
  w = s;
  while (*s && !cal_blank(*s)) s++;
  if (*s) *s++ = '\0';
  *p = s;
  return w;
}

fg_status fg_calibration_parse(const char *buf, size_t len, const char *name,
                               fg_calibration *c) {
  fg_status st = FG_OK;
  fg_calibration r = fg_calibration_default();
  int seen[CAL_NKEYS] = {0}, version_line = 0;
  char line[FG_CALIBRATION_LINE_MAX + 1], shown[80];
  size_t pos = 0;
  for (int lineno = 1; pos < len; lineno++) {
    const char *nl = memchr(buf + pos, '\n', len - pos);
    const size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
    FG_REQUIRE(n <= FG_CALIBRATION_LINE_MAX, FG_ERR_FORMAT,
               "%s: line %d: longer than %d bytes (not a calibration file?)", name, lineno,
               FG_CALIBRATION_LINE_MAX);
    FG_REQUIRE(memchr(buf + pos, '\0', n) == NULL, FG_ERR_FORMAT,
               "%s: line %d: contains a NUL byte (not a calibration file?)", name, lineno);
    const char *raw = buf + pos;
    memcpy(line, raw, n);
    line[n] = '\0';
    pos += n + 1;
    char *p = line, *key = cal_word(&p), *val = key ? cal_word(&p) : NULL;
    if (!key || key[0] == '#') continue;
    FG_REQUIRE(val && !cal_word(&p), FG_ERR_FORMAT, "%s: line %d: expected 'key value', got '%s'",
               name, lineno, fg_printable(raw, n - (n > 0 && raw[n - 1] == '\r'), shown,
                                          sizeof shown));
    int k = -1;
    for (int i = 0; i < CAL_NKEYS; i++)
      if (strcmp(key, cal_keys[i].key) == 0) k = i;
    FG_REQUIRE(k >= 0 || strcmp(key, "version") == 0, FG_ERR_FORMAT,
               "%s: line %d: unknown key '%s'", name, lineno,
               fg_printable(key, strlen(key), shown, sizeof shown));
    /* known from here on: key is one of ours, printable */
    char *end = NULL;
    const double v = strtod(val, &end);
    FG_REQUIRE(end != val && *end == '\0', FG_ERR_FORMAT, "%s: line %d: %s: '%s' is not a number",
               name, lineno, key, fg_printable(val, strlen(val), shown, sizeof shown));
    if (k < 0) {
      FG_REQUIRE(!version_line, FG_ERR_FORMAT, "%s: line %d: version given twice (also on line %d)",
                 name, lineno, version_line);
      FG_REQUIRE(v == 1, FG_ERR_UNSUPPORTED,
                 "%s: line %d: calibration version %g, this build reads version 1", name, lineno,
                 v);
      version_line = lineno;
      continue;
    }
    FG_REQUIRE(!seen[k], FG_ERR_FORMAT, "%s: line %d: %s given twice (also on line %d)", name,
               lineno, key, seen[k]);
    seen[k] = lineno;
    const int kind = cal_keys[k].kind;
    /* the comparisons are false for NaN */
    FG_REQUIRE(v >= cal_ranges[kind].lo && v <= cal_ranges[kind].hi &&
                   (kind != CAL_COUNT || v == floor(v)),
               FG_ERR_FORMAT, "%s: line %d: %s %g is out of range: it must be %s in [%g, %g]",
               name, lineno, key, v, cal_ranges[kind].what, cal_ranges[kind].lo,
               cal_ranges[kind].hi);
    if (kind == CAL_COUNT)
      *(int *)(void *)((char *)&r + cal_keys[k].off) = (int)v;
    else
      *(double *)(void *)((char *)&r + cal_keys[k].off) = v;
  }
  FG_REQUIRE(version_line, FG_ERR_FORMAT, "%s: not a calibration file (no 'version' line)", name);
  for (int i = 0; i < CAL_NKEYS; i++) /* a file from before bf16: its GEMMs at the fp32 rate */
    if (!seen[i] && cal_keys[i].off == offsetof(fg_calibration, gemm_flops_bf16))
      r.gemm_flops_bf16 = r.gemm_flops;
  *c = r;
cleanup:
  return st;
}

fg_status fg_calibration_read(const char *path, fg_calibration *c) {
  fg_status st = FG_OK;
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t got = 0;
  FG_REQUIRE(f, FG_ERR_IO, "%s: cannot open calibration: %s", path, strerror(errno));
  FG_ALLOC(buf, FG_CALIBRATION_BYTES_MAX + 1);
  got = fread(buf, 1, FG_CALIBRATION_BYTES_MAX + 1, f);
  FG_REQUIRE(!ferror(f), FG_ERR_IO, "%s: read failed: %s", path, strerror(errno));
  FG_REQUIRE(got <= FG_CALIBRATION_BYTES_MAX, FG_ERR_FORMAT,
             "%s: larger than %d bytes: not a calibration file", path, FG_CALIBRATION_BYTES_MAX);
  FG_CHECK(fg_calibration_parse(buf, got, path, c));
cleanup:
  if (f) fclose(f);
  free(buf);
  return st;
}

/* ---- formulas ------------------------------------------------------------------------------ */

double fg_cost_allreduce(double alpha, double beta, int G, double bytes) {
  if (G <= 1) return 0.0;
  return 2.0 * (G - 1) * alpha + 2.0 * beta * bytes * (double)(G - 1) / G;
}

double fg_cost_allgather(double alpha, double beta, int G, double bytes) {
  if (G <= 1) return 0.0;
  return (G - 1) * alpha + beta * bytes * (double)(G - 1) / G;
}

double fg_cost_spmm_lines(double cache_bytes, double cols, double f) {
  const double lines = ceil(f / 16.0), x = 64.0 * cols * lines; /* 64-byte lines of a row */
  return x > cache_bytes && x > 0 ? lines * (1.0 - cache_bytes / x) : 0.0;
}

double fg_cost_spmm(const fg_calibration *c, double nnz, double rows, double cols, double f) {
  if (f <= 0 || rows <= 0) return 0.0;
  return c->spmm[0] * nnz * f + c->spmm[1] * nnz * fg_cost_spmm_lines(c->cache_bytes, cols, f) +
         c->spmm[2] * nnz * fg_cost_spmm_lines(c->llc_bytes, cols, f) + c->spmm[3] * nnz +
         c->spmm[4] * rows * f + c->spmm[5] * cols * f;
}

void fg_cost_dims(const fg_calibration *c, const int g[3], int rpn, double alpha[3],
                  double beta[3]) {
  const int64_t span[3] = {(int64_t)g[FG_DIM_X] * g[FG_DIM_Y], g[FG_DIM_Y],
                           (int64_t)g[0] * g[1] * g[2]};
  const int64_t inner[3] = {g[FG_DIM_Y], 1, (int64_t)g[FG_DIM_X] * g[FG_DIM_Y]};
  for (int d = 0; d < 3; d++) {
    const int intra = rpn <= 0 || g[d] == 1 || (span[d] <= rpn && rpn % span[d] == 0);
    if (intra) {
      alpha[d] = c->alpha_intra;
      beta[d] = c->beta_intra;
    } else {
      alpha[d] = c->alpha_inter;
      beta[d] = c->beta_inter * (double)FG_MAX(1, FG_MIN((int64_t)rpn, inner[d]));
    }
  }
}

static double ceil_div(double a, double b) { return ceil(a / b); }

/* an aggregation's SpMM and all-reduce, pipelined over k row blocks */
static double pipelined(double spmm, double comm, int k, double alpha, int G) {
  if (k <= 1 || G <= 1) return spmm + comm;
  return FG_MAX(spmm, comm) + FG_MIN(spmm, comm) / k + (k - 1) * 2.0 * (G - 1) * alpha;
}

void fg_cost3d(const fg_cost3d_input *in, const fg_calibration *c, fg_plan_entry *o) {
  const int L = in->layers;
  const int *g = in->g;
  const double n = (double)in->n, rate = fg_calibration_gemm_rate(c, in->bf16),
               bw = c->stream_bytes;
  const int k = FG_MAX(1, in->agg_blocks), mats = FG_MAX(1, in->mats);
  double alpha[3], beta[3];
  double spmm = 0, gemm = 0, comm = 0, other = 0, mem = 0;
  double max_in = 0, max_w = 0, max_dh = 0, max_g = 0, max_nnz = 0, max_blk = 0;
  fg_cost_dims(c, g, in->ranks_per_node, alpha, beta);
  for (int l = 0; l < L; l++) {
    int a, b, cc;
    fg_layer_roles(l, &a, &b, &cc);
    const double nin = ceil_div(n, g[a]), nout = ceil_div(n, g[cc]);
    const double win = ceil_div((double)in->widths[l], g[b]);
    const double wout = ceil_div((double)in->widths[l + 1], g[a]);
    const double nnz = in->shard_nnz[l];
    const int vecs = fg_model_layer_vecs(in->norm, l, L);
    const double wblock = (mats * win * wout + vecs * wout) * 4.0;
    const int aggregates = !in->aggregates || in->aggregates[l] >= 0; /* else a linear layer */
    const int bwd_spmm = l > 0 || in->learn_features || in->input_grad;
    double s, cm;
    max_nnz = FG_MAX(max_nnz, nnz);
    max_blk = FG_MAX(max_blk, (double)fg_bf16_gemm_scratch_bytes((int64_t)FG_MAX(nin, nout),
                                                                 (int64_t)win, (int64_t)wout));
    /* forward, twice (training and evaluation) */
    s = fg_cost_spmm(c, nnz, nout, nin, win);
    cm = fg_cost_allreduce(alpha[a], beta[a], g[a], nout * win * 4.0);
    if (aggregates) {
      spmm += 2 * s;
      comm += 2 * (pipelined(s, cm, k, alpha[a], g[a]) - s);
    }
    comm += 2 * fg_cost_allgather(alpha[cc], beta[cc], g[cc], wblock);
    comm += 2 * fg_cost_allreduce(alpha[b], beta[b], g[b], nout * wout * 4.0);
    if (l == 0 && in->learn_features)
      comm += 2 * fg_cost_allgather(alpha[FG_DIM_Z], beta[FG_DIM_Z], g[FG_DIM_Z], nin * win * 4.0);
    gemm += mats * 2 * 2.0 * nout * win * wout / rate;
    if (in->self_term) { /* the input's rows moved to the output's, summed along a: as bf16
                            where only GEMMs read them (scheme_3d.c, move_rows_bf16) */
      const double esz = in->bf16 && in->self_gemm && in->self_gemm[l] ? 2.0 : 4.0;
      comm += 2 * fg_cost_allreduce(alpha[a], beta[a], g[a], nout * win * esz);
    }
    other += nin * win * c->dropout_elem + 2 * 3.0 * nout * wout * 4.0 / bw; /* dropout; bias, ReLU */
    /* backward */
    gemm += mats * 2.0 * nout * win * wout * (bwd_spmm ? 2 : 1) / rate;
    if (in->self_term && l > 0) /* and back, summed along c */
      comm += fg_cost_allreduce(alpha[cc], beta[cc], g[cc], nin * win * 4.0);
    comm += fg_cost_allgather(alpha[cc], beta[cc], g[cc], wblock); /* reduce-scatter of dW, db */
    other += nout * wout * 4.0 / bw;                                /* bias gradient */
    if (vecs > 1) {
      /* the norm: LayerNorm sums rows over the output's column split (two reductions each
       * forward, one of two values a row backward), BatchNorm columns over the rows (two in a
       * training forward, one of two values backward); about four passes each way */
      if (in->norm == FG_NORM_BATCH)
        comm += 2 * fg_cost_allreduce(alpha[cc], beta[cc], g[cc], wout * 8.0) +
                fg_cost_allreduce(alpha[cc], beta[cc], g[cc], 2 * wout * 8.0);
      else
        comm += 2 * 2 * fg_cost_allreduce(alpha[a], beta[a], g[a], nout * 8.0) +
                fg_cost_allreduce(alpha[a], beta[a], g[a], 2 * nout * 8.0);
      other += 2 * 4.0 * nout * wout * 4.0 / bw;
    }
    if (bwd_spmm) {
      comm += fg_cost_allreduce(alpha[a], beta[a], g[a], nout * win * 4.0);
      s = aggregates ? fg_cost_spmm(c, nnz, nin, nout, win) : 0.0;
      spmm += s;
      if (l > 0) {
        cm = aggregates ? fg_cost_allreduce(alpha[cc], beta[cc], g[cc], nin * win * 4.0) : 0.0;
        comm += pipelined(s, cm, k, alpha[cc], g[cc]) - s;
        other += nin * win * c->dropout_elem + 3.0 * nin * win * 4.0 / bw; /* dropout, ReLU */
      } else {
        comm += fg_cost_allgather(alpha[FG_DIM_Z], beta[FG_DIM_Z], g[FG_DIM_Z], nin * win * 4.0);
        other += ceil_div(nin, g[FG_DIM_Z]) * win * c->dropout_elem;
      }
    }
    if (in->residual_stages && l < L - in->residual_stages) {
      /* a residual hop: rows moved along a, columns regrouped along b (training and
       * evaluation), and back along a and c in backward; its two buffers and the kept H, A */
      const int proj = l % in->residual_stages == 0 &&
                       in->widths[l] != in->widths[l + in->residual_stages];
      const double esz = in->bf16 && proj ? 2.0 : 4.0; /* a projection's rows: GEMM operands */
      comm += 2 * (fg_cost_allreduce(alpha[a], beta[a], g[a], nout * win * esz) +
                   fg_cost_allreduce(alpha[b], beta[b], g[b], nout * wout * 4.0));
      comm += fg_cost_allreduce(alpha[a], beta[a], g[a], nout * win * 4.0) +
              fg_cost_allreduce(alpha[cc], beta[cc], g[cc], nin * win * 4.0);
      mem += (2 * nout * win + 2 * nout * wout) * 4.0;
      if (proj) gemm += (2 * 2.0 + 2.0) * nout * win * wout / rate; /* M P twice, dP and dM */
    }
    /* memory: activations (S[l] as bf16 where the model stores it so: fg_model_s16), gathered
     * blocks, parameter pieces with gradient and moments */
    /* (S16 counted only where every rank stores it: its widest input block against its
     * narrowest output block; the busiest rank's memory is what the plan bounds) */
    const double s_esz =
        aggregates && fg_model_s16(in->bf16, 1, l, L, (int64_t)win,
                                   (int64_t)in->widths[l + 1] / g[a]) ? 2.0 : 4.0;
    const double m_esz = in->bf16 && in->self_gemm && in->self_gemm[l] ? 2.0 : 4.0; /* M16 */
    /* H[l + 1] as bf16 where fg_model_h16 stores it on every rank: a hidden output without
     * residual connections whose layer is a Linear or a GCN, or a SAGE or GIN one (a self term,
     * whose backward borrows H[l + 1] where it keeps S16) where no rank keeps S16 (its
     * narrowest input block against its widest output block) */
    const int h16 = in->bf16 && !in->residual_stages && l + 1 < L &&
                    (!aggregates || !in->self_term ||
                     !fg_model_s16(1, 1, l, L, (int64_t)in->widths[l] / g[b], (int64_t)wout));
    mem += nout * win * s_esz + (in->self_term ? nout * win * m_esz : 0.0) +
           nout * wout * ((h16 ? 2.0 : 4.0) + (vecs > 1 ? 4.0 : 0.0)) + wblock +
           4.0 * wblock / g[cc];
    max_in = FG_MAX(max_in, nin * win);
    max_w = FG_MAX(max_w, mats * win * wout + vecs * wout);
    max_dh = FG_MAX(max_dh, nout * win);
    max_g = FG_MAX(max_g, FG_MAX(nin * win, nout * wout));
  }
  {
    /* the loss: two row reductions along the logits' a group, training and evaluation */
    int a, b, cc;
    fg_layer_roles(L - 1, &a, &b, &cc);
    const double nout = ceil_div(n, g[cc]), wout = ceil_div((double)in->widths[L], g[a]);
    comm += 2 * 2 * fg_cost_allreduce(alpha[a], beta[a], g[a], nout * 8.0);
    other += 3.0 * nout * wout * c->softmax_elem; /* exp passes: loss, dlogits, evaluation */
    mem += nout * wout * 4.0 + nout * 8.0 + nout * 16.0; /* dlogits, labels, masks, row stats */
  }
  /* adjacency shards (and the transposes backward multiplies) */
  for (int key = 0; key < in->nkeys; key++) {
    int a, b, cc, transposed = 0;
    fg_layer_roles(key, &a, &b, &cc);
    for (int l = key; l < L; l += in->nkeys)
      transposed |= l > 0 || in->learn_features || in->input_grad;
    mem += (12.0 * in->shard_nnz[key] + 8.0 * (ceil_div(n, g[cc]) + 1)) +
           (transposed ? 12.0 * in->shard_nnz[key] + 8.0 * (ceil_div(n, g[a]) + 1) : 0.0);
  }
  /* input features, node ids, scratch */
  const double block = ceil_div(n, g[FG_DIM_X]) * ceil_div((double)in->widths[0], g[FG_DIM_Y]);
  mem += block * (fg_model_features16(in->bf16, in->residual_stages > 0, in->learn_features)
                      ? 2.0
                      : 4.0); /* bf16: laid out so (fg_scheme_config.features16) */
  if (in->learn_features) mem += 4.0 * 4.0 * block / g[FG_DIM_Z];
  for (int d = 0; d < 3; d++) mem += 2 * 8.0 * ceil_div(n, g[d]);
  mem += (max_in + 3 * max_w + max_dh + 2 * max_g) * 4.0;
  /* bf16: the SpMM's rounded input, the model's transposed weights, a product's row blocks */
  if (in->bf16) mem += 2.0 * max_in + 4.0 * max_w + max_blk;
  o->spmm_seconds = spmm;
  o->gemm_seconds = gemm;
  o->comm_seconds = comm;
  o->other_seconds = other;
  o->seconds = spmm + gemm + comm + other;
  o->mem_bytes = mem;
  o->max_nnz = max_nnz;
  o->mean_nnz = in->mean_nnz;
}

/* ---- least squares -------------------------------------------------------------------------- */

static void swap(double *a, double *b) {
  const double t = *a;
  *a = *b;
  *b = t;
}

/* Solve the k x k system M x = r in place (Gaussian elimination, partial pivoting); 0 if
 * singular. */
static int solve(double *M, double *r, int k) {
  for (int i = 0; i < k; i++) {
    int p = i;
    for (int j = i + 1; j < k; j++)
      if (fabs(M[j * k + i]) > fabs(M[p * k + i])) p = j;
    if (fabs(M[p * k + i]) < 1e-300) return 0;
    /* the pivot row to row i (p == i swaps nothing) */
    for (int j = 0; j < k; j++) swap(&M[i * k + j], &M[p * k + j]);
    swap(&r[i], &r[p]);
    for (int j = i + 1; j < k; j++) {
      const double f = M[j * k + i] / M[i * k + i];
      for (int m = i; m < k; m++) M[j * k + m] -= f * M[i * k + m];
      r[j] -= f * r[i];
    }
  }
  for (int i = k - 1; i >= 0; i--) {
    double s = r[i];
    for (int j = i + 1; j < k; j++) s -= M[i * k + j] * r[j];
    r[i] = s / M[i * k + i];
  }
  return 1;
}

double fg_nnls_fit(const double *X, const double *y, const double *w, int m, int k, double *beta) {
  int active[8];
  double scale[8];
  assert(k >= 1 && k <= 8);
  /* columns scaled to unit size: the features differ by orders of magnitude */
  for (int j = 0; j < k; j++) {
    double s = 0.0;
    for (int i = 0; i < m; i++) s += w[i] * X[i * k + j] * X[i * k + j];
    scale[j] = s > 0 ? 1.0 / sqrt(s) : 0.0;
    active[j] = s > 0;
    beta[j] = 0.0;
  }
  /* beta is all zeros at the top of every iteration */
  for (int iter = 0; iter < k; iter++) {
    double M[64] = {0}, r[8] = {0};
    int idx[8], na = 0, neg = 0;
    for (int j = 0; j < k; j++)
      if (active[j]) idx[na++] = j;
    if (na == 0) break;
    for (int i = 0; i < m; i++) {
      for (int p = 0; p < na; p++) {
        const double xp = X[i * k + idx[p]] * scale[idx[p]];
        r[p] += w[i] * xp * y[i];
        for (int q = 0; q < na; q++) M[p * na + q] += w[i] * xp * X[i * k + idx[q]] * scale[idx[q]];
      }
    }
    for (int p = 0; p < na; p++) M[p * na + p] *= 1.0 + 1e-12; /* a touch of ridge */
    if (!solve(M, r, na)) break;
    for (int p = 0; p < na; p++) {
      beta[idx[p]] = r[p] * scale[idx[p]];
      if (beta[idx[p]] < 0) neg = 1;
    }
    if (!neg) break;
    /* drop the most negative coefficient and refit */
    int worst = -1;
    for (int p = 0; p < na; p++)
      if (beta[idx[p]] < 0 && (worst < 0 || r[p] < r[worst])) worst = p;
    active[idx[worst]] = 0;
    for (int j = 0; j < k; j++) beta[j] = 0.0;
  }
  double ss_res = 0.0, ss_tot = 0.0, mean = 0.0, wsum = 0.0;
  for (int i = 0; i < m; i++) {
    mean += w[i] * y[i];
    wsum += w[i];
  }
  mean = wsum > 0 ? mean / wsum : 0.0;
  for (int i = 0; i < m; i++) {
    double pred = 0.0;
    for (int j = 0; j < k; j++) pred += X[i * k + j] * beta[j];
    ss_res += w[i] * (pred - y[i]) * (pred - y[i]);
    ss_tot += w[i] * (y[i] - mean) * (y[i] - mean);
  }
  return ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
}

/* ---- the plan -------------------------------------------------------------------------------- */

/* Largest and total nonzeros of the gr x gc blocks of M, cached by (matrix, gr, gc). */
typedef struct nnz_entry {
  int which, gr, gc;
  int64_t max, total;
} nnz_entry;
typedef struct nnz_cache {
  int n;
  nnz_entry e[128];
} nnz_cache;

static fg_status block_max(nnz_cache *cache, const fg_csr *M, int which, int gr, int gc,
                           int64_t *max, int64_t *total) {
  fg_status st = FG_OK;
  int64_t *cnt = NULL;
  for (int i = 0; i < cache->n; i++) {
    const nnz_entry *e = &cache->e[i];
    if (e->which == which && e->gr == gr && e->gc == gc) {
      *max = e->max;
      *total = e->total;
      return FG_OK;
    }
  }
  FG_ALLOC(cnt, (int64_t)gr * gc);
  FG_CHECK(fg_block_nnz(M, gr, gc, cnt));
  *max = 0;
  *total = 0;
  for (int64_t i = 0; i < (int64_t)gr * gc; i++) {
    *max = FG_MAX(*max, cnt[i]);
    *total += cnt[i];
  }
  if (cache->n < 128) cache->e[cache->n++] = (nnz_entry){which, gr, gc, *max, *total};
cleanup:
  free(cnt);
  return st;
}

/* A prepared directory opened per rank (ds->prep_dir): no rank holds the pattern, so a grid's
 * shard nonzeros come from the manifest's B x B block counts, in the prepared order (3d's
 * permutation there). Shard [r0, r1) x [c0, c1) (fg_block_start's cuts of n by gr rows, gc
 * columns) gets, of every block (i, j) it overlaps, block_nnz(i, j) times the part of the
 * block's rows and of its columns inside it: exact when every cut falls on a block boundary
 * (fg_block_start(n, g, q) is one of the manifest's offs: always when B divides n and g divides
 * B, as the planner asks of a prepared grid), else an estimate of entries spread evenly over
 * each straddled block, between the nonzeros of the blocks wholly inside the shard and of
 * those it overlaps. Self loops count as the pattern holds them (a model that drops them, sage
 * or gin, is over-counted by at most the shard's diagonal). */
static void prep_block_max(const fg_prep_manifest *m, int gr, int gc, int64_t *max,
                           int64_t *total) {
  const int64_t n = m->n, B = m->B;
  *max = 0;
  *total = 0;
  for (int p = 0; p < gr; p++) {
    const int64_t r0 = fg_block_start(n, gr, p), r1 = fg_block_start(n, gr, p + 1);
    if (r1 <= r0) continue;
    const int64_t i0 = fg_block_owner(m->offs, (int)B, r0);
    const int64_t i1 = fg_block_owner(m->offs, (int)B, r1 - 1) + 1;
    for (int q = 0; q < gc; q++) {
      const int64_t c0 = fg_block_start(n, gc, q), c1 = fg_block_start(n, gc, q + 1);
      double est = 0.0;
      if (c1 <= c0) continue;
      const int64_t j0 = fg_block_owner(m->offs, (int)B, c0);
      const int64_t j1 = fg_block_owner(m->offs, (int)B, c1 - 1) + 1;
      for (int64_t i = i0; i < i1; i++) {
        const int64_t h = m->offs[i + 1] - m->offs[i];
        const int64_t in = FG_MIN(r1, m->offs[i + 1]) - FG_MAX(r0, m->offs[i]);
        if (h <= 0 || in <= 0) continue;
        for (int64_t j = j0; j < j1; j++) {
          const int64_t w = m->offs[j + 1] - m->offs[j];
          const int64_t jn = FG_MIN(c1, m->offs[j + 1]) - FG_MAX(c0, m->offs[j]);
          const int64_t e = m->block_nnz[i * B + j];
          if (w <= 0 || jn <= 0 || e == 0) continue;
          /* whole blocks add their count exactly; straddled ones their even share */
          est += in == h && jn == w ? (double)e : (double)e * ((double)in / (double)h) *
                                                       ((double)jn / (double)w);
        }
      }
      const int64_t k = (int64_t)llround(est);
      *max = FG_MAX(*max, k);
      *total += k;
    }
  }
}

/* Every 3D grid of P (or cfg->only_grid). */
fg_status fg_plan_predict_3d(const fg_dataset *ds, const fg_plan_config *cfg,
                             const fg_calibration *cal, const int64_t *w,
                             const fg_scheme_info *self, fg_layouts *lay, fg_plan_entry *out,
                             int *count) {
  fg_status st = FG_OK;
  fg_perm_kind perm = FG_PERM_NONE;
  const int P = cfg->ranks;
  int L;
  fg_model_choice mdl;
  const int64_t n = ds->num_nodes;
  int grids[512][3], ng, *agg = NULL, *self_gemm = NULL, bf16 = 0;
  double *shard = NULL;
  nnz_cache *cache = NULL;
  uint64_t seed = cfg->seed;
  fg_prep_manifest pm;
  const int per_rank = ds->prep_dir != NULL; /* opened per rank: the manifest's counts */
  memset(&pm, 0, sizeof pm);
  if (per_rank) /* its one order is the layout (fg_prep_check_3d refuses another) */
    FG_CHECK(fg_prep_manifest_read(ds->prep_dir, &pm));
  else
    FG_CHECK(fg_perm_kind_from(cfg->order, cfg->double_perm, &perm));
  /* a prepared directory: 3d reads it per rank with its order as the permutation; a random
   * one is the single permutation of the directory's seed (the others, metis and the like,
   * are not among 3d's: counted in the order asked for) */
  if (ds->prep_blocks > 0 && !cfg->double_perm && strcmp(ds->prep_order, "random") == 0 &&
      (!cfg->order || strcmp(cfg->order, "random") == 0)) {
    perm = FG_PERM_SINGLE;
    seed = ds->prep_seed;
  }
  FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, NULL, &mdl));
  L = fg_model_stack_layers(mdl.kind, cfg->layers);
  if (cfg->only_grid) {
    FG_REQUIRE(cfg->only_grid[0] >= 1 && cfg->only_grid[1] >= 1 && cfg->only_grid[2] >= 1 &&
                   (int64_t)cfg->only_grid[0] * cfg->only_grid[1] * cfg->only_grid[2] == P,
               FG_ERR_INVALID_ARG, "plan: grid %dx%dx%d does not have %d ranks",
               cfg->only_grid[0], cfg->only_grid[1], cfg->only_grid[2], P);
    memcpy(grids[0], cfg->only_grid, sizeof grids[0]);
    ng = 1;
  } else {
    ng = fg_grid_enumerate(P, grids, 512);
    FG_REQUIRE(ng <= 512, FG_ERR_UNSUPPORTED, "plan: %d has more than 512 grids", P);
  }
  FG_CALLOC(cache, 1);
  FG_ALLOC(shard, L);
  FG_ALLOC(agg, L);
  FG_ALLOC(self_gemm, L);
  fg_model_agg_plan(mdl.kind, L, w, FG_AGG_FIRST, agg);
  FG_CHECK(fg_precision_parse(cfg->precision, &bf16));
  for (int l = 0; l < L; l++) self_gemm[l] = mdl.kind->stage[l % mdl.kind->stages]->self_gemm;
  /* the permuted matrices the scheme will distribute (their patterns are what counts) */
  if (!per_rank) FG_CHECK(fg_layouts_3d(lay, ds, perm, seed, mdl.adj));
  const fg_csr *const mat[2] = {&lay->M[0], perm == FG_PERM_DOUBLE ? &lay->M[1] : &lay->M[0]};
  for (int gi = 0; gi < ng; gi++) {
    fg_plan_entry *e = &out[*count];
    double mean = 0.0, mx_all = -1.0;
    /* a prepared directory's B x B blocks form only the grids whose dimensions divide B */
    if (!cfg->only_grid && ds->prep_blocks > 0 &&
        (ds->prep_blocks % grids[gi][0] || ds->prep_blocks % grids[gi][1] ||
         ds->prep_blocks % grids[gi][2]))
      continue;
    memset(e, 0, sizeof *e);
    for (int l = 0; l < L; l++) {
      int a, b, c;
      int64_t mx = 0, tot = 0;
      const int which = perm == FG_PERM_DOUBLE ? l % 2 : 0;
      fg_layer_roles(l, &a, &b, &c);
      if (per_rank)
        prep_block_max(&pm, grids[gi][c], grids[gi][a], &mx, &tot);
      else
        FG_CHECK(block_max(cache, mat[which], which, grids[gi][c], grids[gi][a], &mx, &tot));
      shard[l] = (double)mx;
      if ((double)mx > mx_all) { /* report the largest shard with its layer's mean */
        mx_all = (double)mx;
        mean = (double)tot / ((double)grids[gi][c] * grids[gi][a]);
      }
    }
    const fg_cost3d_input in = {.n = n,
                                .layers = L,
                                .widths = w,
                                .g = {grids[gi][0], grids[gi][1], grids[gi][2]},
                                .shard_nnz = shard,
                                .mean_nnz = mean,
                                .nkeys = FG_MIN(L, perm == FG_PERM_DOUBLE ? 6 : 3),
                                .learn_features = cfg->learn_features,
                                .input_grad = cfg->label_prop > 0,
                                .agg_blocks = cfg->agg_blocks,
                                .ranks_per_node = cfg->ranks_per_node,
                                .mats = mdl.kind->stage[0]->mats,
                                .self_term = mdl.kind->stage[0]->self_term,
                                .aggregates = agg,
                                .residual_stages = cfg->residual ? mdl.kind->stages : 0,
                                .norm = mdl.norm,
                                .bf16 = bf16,
                                .self_gemm = self_gemm};
    fg_cost3d(&in, cal, e);
    /* multi-label targets: whole rows of T bytes for the labelled rows (the loss's rows) */
    {
      int ra, rb, rc;
      fg_layer_roles(L - 1, &ra, &rb, &rc);
      e->mem_bytes += ceil((double)n / grids[gi][rc]) * (double)ds->num_tasks;
    }
    e->scheme = self->name;
    memcpy(e->grid, grids[gi], sizeof e->grid);
    (*count)++;
  }
cleanup:
  fg_prep_manifest_free(&pm);
  free(shard);
  free(cache);
  free(agg);
  free(self_gemm);
  return st;
}

/* A 1D scheme from its per-rank traffic (fg_comm_plan): the busiest rank's epoch. */
/* One entry of a 1D scheme; c: 1.5d's replication (1 for the others). */
static fg_status predict_1d_c(const fg_dataset *ds, const fg_plan_config *cfg,
                              const fg_calibration *cal, const int64_t *w,
                              const fg_scheme_info *self, fg_layouts *lay, int c,
                              fg_plan_entry *e) {
  fg_status st = FG_OK;
  fg_comm_rank_plan *pr = NULL;
  const int P = cfg->ranks;
  int L, *agg = NULL, bf16 = 0;
  fg_model_choice mdl;
  const fg_comm_plan_config pc = {.ranks = P,
                                  .scheme = self->name,
                                  .order = cfg->order,
                                  .seed = cfg->seed,
                                  .layers = cfg->layers,
                                  .hidden = cfg->hidden,
                                  .widths = cfg->widths,
                                  .agg_order = cfg->agg_order,
                                  .model = cfg->model,
                                  .adj_norm = cfg->adj_norm,
                                  .aggregation = cfg->aggregation,
                                  .quantize = cfg->quantize,
                                  .label_prop = cfg->label_prop,
                                  .replicate = c,
                                  .precision = cfg->precision};
  /* sa: only the referenced rows move (1d-sa's halo, or halo's cover of each cut) */
  const int cover = self->volume == FG_VOLUME_COVER;
  const int sa = self->volume == FG_VOLUME_HALO || cover, serial = self->volume == FG_VOLUME_NONE;
  const double n = (double)ds->num_nodes, bw = cal->stream_bytes;
  double rate;
  int64_t fs = 0, bs = 0, maxw = 0, n_params = 0, max_rows = 0;
  int fn = 0, bn = 0, lg = 0;
  const int gw[3] = {1, P, 1}, gr[3] = {1, c, P / c}; /* 1.5d: replicas are consecutive */
  double alpha[3], beta[3], ralpha[3], rbeta[3], tot_nnz = 0.0;
  memset(e, 0, sizeof *e);
  e->scheme = self->name;
  e->replicate = self->replicate ? c : 0;
  FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, cfg->gin_eps, &mdl));
  FG_CHECK(fg_precision_parse(cfg->precision, &bf16));
  const double esz = bf16 ? 2.0 : 4.0; /* bytes of a row element on the wire */
  rate = fg_calibration_gemm_rate(cal, bf16);
  L = fg_model_stack_layers(mdl.kind, cfg->layers);
  FG_ALLOC(pr, P);
  FG_ALLOC(agg, L);
  FG_CHECK(fg_comm_plan_on(ds, &pc, lay, pr, NULL));
  fg_model_agg_plan(mdl.kind, L, w, (int)cfg->agg_order, agg);
  fg_epoch_agg_widths(L, w, agg, cfg->label_prop > 0, &fs, &fn, &bs, &bn);
  for (int i = 0; i < P; i++) max_rows = FG_MAX(max_rows, pr[i].rows);
  for (int l = 0; l <= L; l++) maxw = FG_MAX(maxw, w[l]);
  for (int l = 0; l < L; l++) /* the gradient all-reduce: matrices and vectors of every layer */
    n_params += (fg_model_layer_mats(mdl.kind, cfg->residual, L, w, l) * w[l] +
                 fg_model_layer_vecs(mdl.norm, l, L)) * w[l + 1];
  while ((1 << lg) < P) lg++;
  fg_cost_dims(cal, gw, cfg->ranks_per_node, alpha, beta);
  fg_cost_dims(cal, gr, cfg->ranks_per_node, ralpha, rbeta);
  for (int i = 0; i < P; i++) {
    const fg_comm_rank_plan *r = &pr[i];
    const double rows = (double)r->rows, nnz = (double)r->nnz;
    const double fsum = (double)(2 * fs + bs), naggs = (double)(2 * fn + bn);
    const double stages = serial ? 1 : sa ? 2 : P;
    const double cols = sa ? rows + (double)r->agg_rows_recv : n;
    double spmm, comm = 0, gemm = 0, other = 0, mem;
    /* the SpMMs of an epoch: an average width per aggregation */
    spmm = naggs > 0 ? naggs * fg_cost_spmm(cal, nnz, rows * stages, cols / stages, fsum / naggs)
                     : 0.0;
    spmm += cal->spmm[5] * cols * fsum * (1.0 - 1.0 / stages); /* all stages' columns */
    if (!serial) {
      const double a = alpha[FG_DIM_Y], b = beta[FG_DIM_Y];
      if (cover) {
        /* one neighbourhood exchange per aggregation: its messages, the larger of the bytes
         * sent and received (quantized rows: codes and parameters, as the plan counts them),
         * and the codes' quantize and dequantize passes (a hash per element, like dropout) */
        const double rows_fb = (double)(r->agg_rows_sent + r->agg_rows_recv);
        comm += 2 * fn * a * (double)FG_MAX(r->agg_msgs_sent, r->agg_msgs_recv) +
                b * (double)FG_MAX(r->bytes_sent[0], r->bytes_recv[0]);
        comm += bn * a * (double)FG_MAX(r->aggt_msgs_sent, r->aggt_msgs_recv) +
                b * (double)FG_MAX(r->bytes_sent[1], r->bytes_recv[1]);
        if (r->param_bytes_sent[0] + r->param_bytes_recv[0] > 0)
          other += rows_fb * (double)(2 * fs + bs) * cal->dropout_elem;
      } else if (sa) { /* rows of esz bytes an element (bf16: 2) */
        comm += 2 * fn * a * (double)FG_MAX(r->agg_msgs_sent, r->agg_msgs_recv) +
                b * esz * 2 * (double)fs * (double)FG_MAX(r->agg_rows_sent, r->agg_rows_recv);
        comm += bn * a * (double)FG_MAX(r->aggt_msgs_sent, r->aggt_msgs_recv) +
                b * esz * (double)bs * (double)FG_MAX(r->aggt_rows_sent, r->aggt_rows_recv);
        /* 1.5d: every aggregation's partial sums all-reduced over the c replicas */
        if (c > 1 && naggs > 0)
          comm += naggs * fg_cost_allreduce(ralpha[FG_DIM_Y], rbeta[FG_DIM_Y], c,
                                            rows * 4.0 * fsum / naggs);
      } else {
        /* P broadcasts per aggregation: a tree's steps, and 2 (P-1)/P of the data */
        comm += naggs * P * a * lg + 2.0 * b * n * esz * fsum * (double)(P - 1) / P;
      }
      comm += fg_cost_allreduce(a, b, P, (double)n_params * 4.0) +
              3 * fg_cost_allreduce(a, b, P, 64.0);
      for (int l = 0; l + 1 < L && mdl.norm == FG_NORM_BATCH; l++) /* column sums */
        comm += 2 * fg_cost_allreduce(a, b, P, (double)w[l + 1] * 8.0) +
                fg_cost_allreduce(a, b, P, (double)w[l + 1] * 16.0);
    }
    for (int l = 0; l < L; l++) {
      const double wi = (double)w[l], wo = (double)w[l + 1];
      gemm += fg_model_layer_mats(mdl.kind, cfg->residual, L, w, l) *
              (2 * 2.0 + 1.0 + (l > 0 ? 1.0 : 0.0)) *
              rows * wi * wo / rate;
      other += (2 * 3.0 * rows * wo + 3.0 * rows * wi) * 4.0 / bw +
               rows * wi * cal->dropout_elem * (l > 0 ? 2 : 1);
    }
    other += 3.0 * rows * (double)w[L] * cal->softmax_elem;
    /* memory: the rank's rows of Â (and Âᵀ), its input rows, the model's shared activation
     * buffers and parameter state exactly as fg_model_create sizes them, the loss's rows, and
     * the received rows of the widest aggregation */
    const fg_model_config mc = {.layers = L,
                                .widths = w,
                                .agg_order = (int)cfg->agg_order,
                                .seed = cfg->seed,
                                .kind = mdl.kind,
                                .norm = mdl.norm,
                                .gin_eps = mdl.gin_eps,
                                .gin_eps_learn = mdl.gin_eps_learn,
                                .residual = cfg->residual,
                                .label_prop = (float)cfg->label_prop,
                                .bf16 = bf16,
                                .rows16 = self->rows16 && !cfg->learn_features &&
                                          !(cfg->overlap && !serial)};
    int64_t act = 0, par = 0;
    fg_model_memory(&mc, r->rows, &act, &par, NULL);
    /* 1.5d receives its whole block row before keeping its share's columns */
    double block_nnz = 0;
    for (int k = i - i % c; k < i - i % c + c; k++) block_nnz += (double)pr[k].nnz;
    mem = (12.0 * (nnz + block_nnz) + 16.0 * rows) * (serial ? 0.5 : 1) *
              (ds->symmetric ? 1 : 2) +
          rows * (double)w[0] * (fg_model_features16(bf16, cfg->residual, 0) ? 2.0 : 4.0) +
          (double)act + (double)par +
          rows * ((double)w[L] * 4.0 + 6.0 + 17.0) /* + a mask and the row statistics */
          + rows * (double)ds->num_tasks; /* multi-label targets, T bytes a row */
    /* the rows received: sa's halo; 1d's broadcast buffer of the largest block, with --overlap
     * two of them and the own stage's product (scheme_1d.c ensure_buffers) */
    if (!serial)
      mem += (sa ? (double)r->agg_rows_recv
                 : cfg->overlap ? 2.0 * (double)max_rows + rows : (double)max_rows) *
             (double)maxw * 4.0;
    if (cover) /* its send buffer beside the receive one, and both ways' codes */
      mem += (double)FG_MAX(r->agg_rows_sent, r->agg_rows_recv) * (double)maxw * 4.0 +
             (r->param_bytes_sent[0] > 0
                  ? 2.0 * (double)FG_MAX(r->agg_rows_sent, r->agg_rows_recv) * ((double)maxw + 8.0)
                  : 0.0);
    tot_nnz += nnz;
    if (spmm + comm + gemm + other > e->seconds) {
      e->seconds = spmm + comm + gemm + other;
      e->spmm_seconds = spmm;
      e->comm_seconds = comm;
      e->gemm_seconds = gemm;
      e->other_seconds = other;
    }
    e->mem_bytes = FG_MAX(e->mem_bytes, mem);
    e->max_nnz = FG_MAX(e->max_nnz, nnz);
  }
  e->mean_nnz = tot_nnz / P;
cleanup:
  free(pr);
  free(agg);
  return st;
}

fg_status fg_plan_predict_1d(const fg_dataset *ds, const fg_plan_config *cfg,
                             const fg_calibration *cal, const int64_t *w,
                             const fg_scheme_info *self, fg_layouts *lay, fg_plan_entry *out,
                             int *count) {
  fg_status st = FG_OK;
  const int P = cfg->ranks;
  /* a prepared directory's B row blocks form only the 1D layouts of P / c blocks dividing B
   * (the schemes that read it per rank; halo's partition is 1D's block rows) */
  const int per_rank = strcmp(self->name, "1d") == 0 || strcmp(self->name, "1d-sa") == 0 ||
                       strcmp(self->name, "1.5d") == 0 || strcmp(self->name, "halo") == 0;
  const int64_t B = per_rank ? ds->prep_blocks : 0;
  if (!self->replicate) {
    if (B > 0 && B % P != 0) return FG_OK;
    return predict_1d_c(ds, cfg, cal, w, self, lay, 1, &out[(*count)++]);
  }
  /* 1.5d: the c asked for, else every valid c > 1 (c = 1 is 1d-sa's row), else 1 (fewer than
   * 4 ranks, a prime number) */
  if (cfg->replicate > 0) {
    FG_CHECK(fg_replicate_check(cfg->replicate, P));
    if (B > 0 && B % (P / cfg->replicate) != 0) return FG_OK;
    return predict_1d_c(ds, cfg, cal, w, self, lay, cfg->replicate, &out[(*count)++]);
  }
  {
    int cs[64];
    const int n = FG_MIN(fg_replicate_valid(P, cs, 64), 64);
    for (int k = n > 1 ? 1 : 0; k < n; k++)
      if (B == 0 || B % (P / cs[k]) == 0)
        FG_CHECK(predict_1d_c(ds, cfg, cal, w, self, lay, cs[k], &out[(*count)++]));
  }
cleanup:
  return st;
}

/* The options a plan configuration uses: the registry's mapping of the training options it
 * shares with a run (FG_SOPT_* bits). */
static unsigned plan_options(const fg_plan_config *cfg) {
  const fg_train_config t = {.order = cfg->order,
                             .agg_order = cfg->agg_order,
                             .double_perm = cfg->double_perm,
                             .agg_blocks = cfg->agg_blocks,
                             .learn_features = cfg->learn_features,
                             .aggregation = cfg->aggregation,
                             .quantize = cfg->quantize,
                             .label_prop = cfg->label_prop};
  return fg_scheme_options_of(&t);
}

/* The registry rows a comma list names (NULL: all). */
static fg_status schemes_mask(const char *list, uint32_t *mask) {
  fg_status st = FG_OK;
  char name[64];
  *mask = list ? 0u : (1u << fg_scheme_registry_size()) - 1u;
  while (list && *list) {
    const char *end = strchr(list, ',');
    const size_t len = end ? (size_t)(end - list) : strlen(list);
    const fg_scheme_info *e;
    FG_REQUIRE(len < sizeof name, FG_ERR_INVALID_ARG, "--schemes: a name of %zu characters", len);
    memcpy(name, list, len);
    name[len] = '\0';
    e = fg_scheme_lookup(name);
    FG_REQUIRE(e != NULL, FG_ERR_INVALID_ARG, "--schemes: unknown scheme '%s' (available: %s)",
               name, fg_scheme_names());
    *mask |= fg_scheme_bit(e);
    list += len + (end ? 1 : 0);
  }
cleanup:
  return st;
}

/* Predict the rows of mask that can run cfg: *out (malloc'd) gets *count entries, those that
 * fit first, fastest first. */
fg_status fg_plan_layouts(const fg_dataset *ds, const fg_plan_config *cfg,
                           const fg_calibration *cal, uint32_t mask, fg_layouts *lay,
                           fg_plan_entry **out, int *count) {
  fg_status st = FG_OK;
  fg_plan_entry *e = NULL;
  int64_t *w = NULL;
  int cap = 0, n = 0, grids[1][3];
  const int P = cfg ? cfg->ranks : 0;
  const unsigned opts = cfg ? plan_options(cfg) : 0;
  double limit;
  *out = NULL;
  *count = 0;
  FG_REQUIRE(ds && cfg && cal, FG_ERR_INVALID_ARG, "fg_plan: NULL argument");
  FG_REQUIRE(P >= 1 && P <= 1 << 16, FG_ERR_INVALID_ARG, "--ranks must be in [1, 65536], got %d",
             P);
  FG_REQUIRE(cfg->agg_blocks >= 1, FG_ERR_INVALID_ARG, "--agg-blocks must be >= 1, got %d",
             cfg->agg_blocks);
  FG_REQUIRE(cfg->ranks_per_node >= 0, FG_ERR_INVALID_ARG,
             "--ranks-per-node must be >= 0, got %d", cfg->ranks_per_node);
  {
    fg_model_choice mdl;
    FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, NULL, &mdl));
    FG_ALLOC(w, fg_model_stack_layers(mdl.kind, FG_MAX(cfg->layers, 1)) + 1);
    FG_CHECK(fg_model_widths(mdl.kind, cfg->layers, cfg->hidden, cfg->widths, ds->num_features,
                             ds->num_classes, w));
  }
  for (int i = 0; i < fg_scheme_registry_size(); i++) {
    const fg_scheme_info *r = fg_scheme_registry_at(i);
    if (!(mask & (1u << i)) || !r->predict || (opts & ~r->options) ||
        (r->max_ranks > 0 && P > r->max_ranks) || P < r->plan_min_ranks) {
      mask &= ~(1u << i);
      continue;
    }
    if (r->grid) {
      cap += fg_grid_enumerate(P, grids, 0);
    } else if (r->replicate) { /* fg_plan_predict_1d: each valid c > 1, or c = 1 alone */
      cap += fg_replicate_valid(P, NULL, 0);
    } else {
      cap++;
    }
  }
  FG_REQUIRE(mask != 0, FG_ERR_INVALID_ARG,
             "plan: no scheme to rank on %d rank(s) with these options (--order metis is for the "
             "1D schemes; --double-perm, --learn-features and --agg-blocks for 3d; --replicate for "
             "1.5d)", P);
  FG_CALLOC(e, cap);
  for (int i = 0; i < fg_scheme_registry_size(); i++)
    if (mask & (1u << i)) {
      const fg_scheme_info *r = fg_scheme_registry_at(i);
      FG_CHECK(r->predict(ds, cfg, cal, w, r, lay, e, &n));
    }
  limit = cfg->mem_per_rank;
  if (limit == 0) {
    const int on_node = cfg->ranks_per_node > 0 ? FG_MIN(cfg->ranks_per_node, P) : P;
    limit = (double)fg_available_memory() / on_node;
    if (limit <= 0) limit = -1;
  }
  for (int i = 0; i < n; i++) e[i].fits = limit < 0 || e[i].mem_bytes <= limit;
  /* those that fit first, fastest first (a stable insertion sort: ties keep grid order) */
  for (int i = 1; i < n; i++) {
    const fg_plan_entry x = e[i];
    int j = i;
    while (j > 0 && (e[j - 1].fits < x.fits ||
                     (e[j - 1].fits == x.fits && e[j - 1].seconds > x.seconds))) {
      e[j] = e[j - 1];
      j--;
    }
    e[j] = x;
  }
  *out = e;
  *count = n;
  e = NULL;
cleanup:
  free(e);
  free(w);
  return st;
}

fg_status fg_plan(const fg_dataset *ds, const fg_plan_config *cfg, const fg_calibration *cal,
                  fg_plan_entry **out, int *count) {
  fg_status st = FG_OK;
  uint32_t mask = 0;
  fg_layouts lay;
  memset(&lay, 0, sizeof lay);
  *out = NULL;
  *count = 0;
  FG_REQUIRE(cfg != NULL, FG_ERR_INVALID_ARG, "fg_plan: NULL argument");
  FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, NULL, &(fg_model_choice){0}));
  FG_CHECK(schemes_mask(cfg->schemes, &mask));
  FG_CHECK(fg_plan_layouts(ds, cfg, cal, mask, &lay, out, count));
cleanup:
  fg_layouts_free(&lay);
  return st;
}

fg_plan_config fg_plan_config_of(const fg_train_config *cfg, int ranks) {
  return (fg_plan_config){
      .ranks = ranks,
      .ranks_per_node = cfg->ranks_per_node,
      .layers = cfg->layers,
      .hidden = cfg->hidden,
      .widths = cfg->widths,
      .model = cfg->model,
      .adj_norm = cfg->adj_norm,
      .norm = cfg->norm,
      .residual = cfg->residual,
      .gin_eps = cfg->gin_eps,
      .agg_order = cfg->agg_order,
      .overlap = cfg->overlap,
      .order = cfg->order,
      .double_perm = cfg->double_perm,
      .learn_features = cfg->learn_features,
      .agg_blocks = cfg->agg_blocks,
      .aggregation = cfg->aggregation,
      .quantize = cfg->quantize,
      .label_prop = cfg->label_prop,
      .replicate = cfg->replicate,
      .seed = cfg->seed,
      .precision = cfg->precision,
      /* --mem-limit is per process; its default (0) is the node's available memory over its
       * ranks */
      .mem_per_rank = cfg->mem_limit > 0 ? cfg->mem_limit : cfg->mem_limit < 0 ? -1.0 : 0.0};
}

fg_status fg_plan_pick(const fg_dataset *ds, const fg_train_config *cfg, int ranks,
                       uint32_t candidates, fg_layouts *lay, const fg_scheme_info **scheme,
                       int grid[3], int *replicate, double *mem_bytes, fg_plan_entry *picked) {
  fg_status st = FG_OK;
  fg_calibration cal = fg_calibration_default();
  const fg_plan_config pc = fg_plan_config_of(cfg, ranks);
  fg_plan_entry *e = NULL;
  int n = 0;
  *scheme = NULL;
  if (cfg->calibration_path) FG_CHECK(fg_calibration_read(cfg->calibration_path, &cal));
  FG_CHECK(fg_plan_layouts(ds, &pc, &cal, candidates, lay, &e, &n));
  FG_REQUIRE(n > 0, FG_ERR_INTERNAL, "plan: no configuration");
  if (!e[0].fits) {
    int best = 0;
    char g[48] = "";
    for (int i = 1; i < n; i++)
      if (e[i].mem_bytes < e[best].mem_bytes) best = i;
    if (e[best].grid[0] > 0)
      snprintf(g, sizeof g, " grid %dx%dx%d", e[best].grid[0], e[best].grid[1], e[best].grid[2]);
    FG_FAIL(FG_ERR_MEMLIMIT,
            "no configuration of %d ranks fits in memory: the smallest needs %.0f MB per rank "
            "(%s%s) and %s; use more ranks or nodes", ranks, e[best].mem_bytes / 1e6,
            e[best].scheme, g,
            cfg->mem_limit > 0 ? "--mem-limit is the limit per process"
                               : "the limit is the available memory over the ranks on a node");
  }
  *scheme = fg_scheme_lookup(e[0].scheme);
  *mem_bytes = e[0].mem_bytes;
  memcpy(grid, e[0].grid, 3 * sizeof(int));
  *replicate = e[0].replicate;
  if (picked) *picked = e[0];
  if (grid[0] == 0) grid[0] = grid[1] = grid[2] = 1;
cleanup:
  free(e);
  return st;
}

/* ---- --scheme auto on a prepared directory read per rank ------------------------------------ */

/* 1 when registry row e, a candidate of --scheme auto on P ranks, has a layout the B row blocks
 * of m form, as the predictors filter them (fg_plan_predict_1d: the P / c blocks of a 1D layout
 * divide B; fg_plan_predict_3d: every dimension of some grid of P does). One process reads the
 * directory whole: any B. */
static int prep_auto_fits(const fg_prep_manifest *m, const fg_scheme_info *e, int P,
                          int replicate) {
  if (P == 1) return 1;
  if (!e->predict || P < e->plan_min_ranks || (e->max_ranks > 0 && P > e->max_ranks) ||
      (e->volume == FG_VOLUME_NONE && !e->grid))
    return 0;
  if (e->grid) {
    char fit[256];
    fg_prep_grids_that_fit(m, P, fit, sizeof fit);
    return strcmp(fit, "none") != 0;
  }
  if (e->replicate) {
    int cs[64];
    const int n = FG_MIN(fg_replicate_valid(P, cs, 64), 64);
    if (replicate > 0)
      return P % replicate == 0 && replicate <= P / replicate && m->B % (P / replicate) == 0;
    for (int k = n > 1 ? 1 : 0; k < n; k++) /* c = 1 is 1d-sa's row where others exist */
      if (m->B % (P / cs[k]) == 0) return 1;
    return 0;
  }
  return m->B % P == 0;
}

/* 1 when some candidate of --scheme auto with cfg's options on P ranks fits m's blocks. */
static int prep_auto_any(const fg_prep_manifest *m, const fg_train_config *cfg, int P) {
  const fg_scheme_info *e = NULL;
  uint32_t cand = 0;
  if (fg_scheme_resolve("auto", fg_scheme_options_of(cfg), P, &e, &cand) != FG_OK) {
    fg_error_clear();
    return 0;
  }
  for (int i = 0; i < fg_scheme_registry_size(); i++)
    if ((cand & (1u << i)) && prep_auto_fits(m, fg_scheme_registry_at(i), P, cfg->replicate))
      return 1;
  return 0;
}

fg_status fg_dataset_prepared_check_auto(const char *dir, const fg_train_config *cfg, int ranks) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  char fit[256];
  size_t len = 0;
  memset(&m, 0, sizeof m);
  FG_REQUIRE(dir && cfg, FG_ERR_INVALID_ARG, "fg_dataset_prepared_check_auto: NULL argument");
  FG_CHECK(fg_prep_manifest_read(dir, &m));
  FG_CHECK(fg_prep_check_order(&m, dir, cfg->order));
  /* --double-perm leaves only 3d, which reads the directory's one order as its permutation */
  if (cfg->double_perm) FG_CHECK(fg_prep_check_3d(&m, dir, NULL, 1, NULL));
  if (prep_auto_any(&m, cfg, ranks)) goto cleanup;
  fit[0] = '\0';
  for (int p = 1; p <= 64 && len + 8 < sizeof fit; p++)
    if (prep_auto_any(&m, cfg, p))
      len += (size_t)snprintf(fit + len, sizeof fit - len, "%s%d", len ? ", " : "", p);
  FG_FAIL(FG_ERR_INVALID_ARG,
          "%s has %lld row blocks: --scheme auto finds no layout of %d ranks that they form, so "
          "no rank could read only its own blocks (1d, 1d-sa and halo need the ranks to divide "
          "them, 1.5d ranks / c, 3d every dimension of a grid; rank counts up to 64 that fit: "
          "%s); or prepare it again with --blocks a multiple of %d",
          dir, (long long)m.B, ranks, len ? fit : "none", ranks);
cleanup:
  fg_prep_manifest_free(&m);
  return st;
}
