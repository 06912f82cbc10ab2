/* fg_plan.h -- the performance model (Plexus section 4) behind `fullgraph plan`, --grid auto and
 * --scheme auto, and the calibration that fits its coefficients. The public entry points
 * (fg_plan, fg_calibrate, the calibration file) are in fullgraph.h; these are the formulas,
 * exposed for the tests.
 *
 * An epoch is what fg_train runs: a training forward, the loss, a backward, the Adam step, an
 * evaluation forward and the metrics. Its predicted time is the sum of
 *   SpMM   fg_cost_spmm per aggregation with the busiest rank's nonzeros (the straggler), its
 *          rows, columns and width;
 *   GEMM   2 m n k flops at the measured rate;
 *   comm   ring collectives (fg_cost_allreduce / fg_cost_allgather) with the alpha and beta of
 *          the group's placement (fg_cost_dims);
 *   other  elementwise passes (dropout, bias, ReLU, softmax) at the STREAM bandwidth.
 * With --agg-blocks k an aggregation's SpMM and all-reduce are pipelined:
 *   max(spmm, comm) + min(spmm, comm) / k + (k - 1) 2 (G - 1) alpha.
 */
#ifndef FG_PLAN_H
#define FG_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/fg_core.h"
#include "plan/fg_registry.h"

/* The calibration file (fg_calibration_read) held in buf[0, len), name for the messages: lines
 * of "key value" (blank lines and '#' comments skipped), a "version 1" line, each key at most
 * once and its value finite and within the key's range (seconds in [0, 1], bytes and rates in
 * [1, 1e18], counts integers in [0, 1e9]); keys not given keep fg_calibration_default()'s
 * values. A refusal names the line and the key; file text it quotes goes through fg_printable.
 * The reader takes files of at most FG_CALIBRATION_BYTES_MAX bytes. */
#define FG_CALIBRATION_LINE_MAX 511
#define FG_CALIBRATION_BYTES_MAX (1 << 20)
fg_status fg_calibration_parse(const char *buf, size_t len, const char *name,
                               fg_calibration *c);

/* Ring all-reduce of `bytes` over G ranks: 2 (G-1) alpha + 2 beta bytes (G-1)/G (0 if G = 1). */
double fg_cost_allreduce(double alpha, double beta, int G, double bytes);
/* Ring all-gather (or reduce-scatter) of `bytes` in all: (G-1) alpha + beta bytes (G-1)/G. */
double fg_cost_allgather(double alpha, double beta, int G, double bytes);
/* Cache lines an SpMM nonzero fetches from beyond a cache of C bytes (the private cache and
 * the rank's share of the last level are the two features of the fit): a row of the dense input
 * spans lines = ceil(f / 16) 64-byte lines; the input, x = 64 lines cols bytes, misses a share
 * 1 - C / x of them when x > C. Returns lines (1 - C / x), or 0. */
double fg_cost_spmm_lines(double cache_bytes, double cols, double f);
/* SpMM of a rows x cols matrix with nnz nonzeros by a cols x f dense matrix. */
double fg_cost_spmm(const fg_calibration *c, double nnz, double rows, double cols, double f);
/* alpha and beta of the X, Y and Z groups of grid g when ranks_per_node consecutive ranks share
 * a node (0: one node). Y groups are runs of consecutive ranks, X groups stride Y, Z groups
 * stride X Y (fg_grid3d.h). A group inside one node gets the intra-node values; a group
 * that crosses nodes gets alpha_inter and beta_inter times the number of such groups sharing a
 * node's links: min(ranks_per_node, product of the sizes of the dimensions placed before it),
 * Plexus eq. 4.6. */
void fg_cost_dims(const fg_calibration *c, const int g[3], int ranks_per_node, double alpha[3],
                  double beta[3]);

/* The 3D model for explicit inputs: n nodes, widths[0..layers], grid g, and per layer the
 * largest shard's nonzeros shard_nnz[l] (and its distinct shards: nkeys; key of layer l is
 * l % nkeys). Fills the entry's times and memory (not scheme, fits). */
typedef struct fg_cost3d_input {
  int64_t n;
  int layers;
  const int64_t *widths;
  int g[3];
  const double *shard_nnz; /* (layers) */
  double mean_nnz;         /* mean shard nonzeros (reported) */
  int nkeys;
  int learn_features;
  int input_grad;          /* layer 0's input gradient is aggregated too (label propagation) */
  int agg_blocks;
  int ranks_per_node;
  int mats;                /* weight matrices a layer (0: 1) */
  int self_term;           /* the layer moves its input rows (move_rows, move_rows_t) */
  const int *aggregates;   /* (layers) < 0: layer l does not aggregate (a linear layer, whose
                              only move is its self term's); NULL: every layer does */
  int residual_stages;     /* --residual: stack layers a model layer (every layer but the last
                              model layer's is a hop of R); 0: no residual connections */
  int norm;                /* fg_norm_kind on the hidden layers: its vectors, normalized output
                              and reductions (LayerNorm's rows along a, BatchNorm's columns
                              along c) */
  int bf16;                /* --precision bf16: the forward self-term moves of the layers with
                              self_gemm[l] carry 2 bytes an element (every sum stays fp32) */
  const int *self_gemm;    /* (layers) layer l's moved rows feed only GEMMs (fg_layer_kind's
                              self_gemm); NULL: none */
} fg_cost3d_input;

void fg_cost3d(const fg_cost3d_input *in, const fg_calibration *c, fg_plan_entry *out);

/* fg_plan of the registry rows in mask (bit i = row i) on the run's layouts (built there when
 * missing, kept for the scheme). */
fg_status fg_plan_layouts(const fg_dataset *ds, const fg_plan_config *cfg,
                          const fg_calibration *cal, uint32_t mask, fg_layouts *lay,
                          fg_plan_entry **out, int *count);

/* The model options of a training configuration on `ranks` ranks, its --mem-limit per rank. */
fg_plan_config fg_plan_config_of(const fg_train_config *cfg, int ranks);

/* Rank 0 of a training job: the configuration the model predicts fastest among those that fit
 * in memory, of the registry rows in candidates: its scheme, for a grid scheme the grid (1x1x1
 * otherwise), for 1.5d its replication c (0 otherwise), and the busiest rank's predicted bytes;
 * picked (may be NULL) gets the whole entry, its predicted epoch and parts (the run record's). */
fg_status fg_plan_pick(const fg_dataset *ds, const fg_train_config *cfg, int ranks,
                       uint32_t candidates, fg_layouts *lay, const fg_scheme_info **scheme,
                       int grid[3], int *replicate, double *mem_bytes, fg_plan_entry *picked);

/* The registry's predictors: a 1D scheme from its per-rank traffic, every grid of 3d. */
fg_status fg_plan_predict_1d(const fg_dataset *ds, const fg_plan_config *cfg,
                             const fg_calibration *cal, const int64_t *widths,
                             const fg_scheme_info *self, fg_layouts *lay, fg_plan_entry *out,
                             int *count);
fg_status fg_plan_predict_3d(const fg_dataset *ds, const fg_plan_config *cfg,
                             const fg_calibration *cal, const int64_t *widths,
                             const fg_scheme_info *self, fg_layouts *lay, fg_plan_entry *out,
                             int *count);

/* fg_comm_plan on the run's 1D layout (built in lay when missing); on a prepared directory
 * opened per rank (ds->prep_dir: no pattern), fg_comm_plan_prepared from its manifest. */
fg_status fg_comm_plan_on(const fg_dataset *ds, const fg_comm_plan_config *cfg, fg_layouts *lay,
                          fg_comm_rank_plan *per_rank, int64_t *cut_entries);

/* The 1D plan of a prepared directory opened per rank, from its manifest m alone (no rank holds
 * the pattern): K = ranks / c blocks of the layout, each B / K consecutive row blocks of the
 * directory on c replicas; volume: the scheme's kind; drop_loops: the operator has no self loops
 * (sage, gin); rule: halo's fg_halo_rule. Fills, for the K c ranks (zeroed first), rows, nnz,
 * replicas, the agg_* and aggt_* rows and messages and rule_rows_*, and *cut_entries (may be
 * NULL): the entries outside the diagonal blocks. Exact where the blocks decide it: rows, the
 * cut, which pairs exchange (a pair talks when its block holds an entry), 1d's whole blocks, and
 * nnz for c = 1 (drop_loops: when every node carries one self loop, as a load adds them).
 * Estimated: the rows a sparsity-aware exchange moves -- the distinct columns of group r's rows
 * in each of the directory's column blocks t of group s, e entries over t's width w, taken as
 * e entries falling evenly at random, w (1 - (1 - 1/w)^e): the high end for a skewed degree
 * distribution or a partitioned order, whose entries crowd into fewer columns (a column of
 * degree d is hit with probability 1 - (1 - p)^d, concave in d; on Cora 1.00-1.26x) -- and
 * its transpose (the distinct rows of block (s, r)); halo's pre rule the distinct destinations,
 * post the sources, hybrid the smaller of the two (the cover never exceeds either); 1.5d's
 * replica nonzeros with the diagonal block split to even them out. */
struct fg_prep_manifest;
fg_status fg_comm_plan_prepared(const struct fg_prep_manifest *m, int K, int c,
                                fg_volume_kind volume, int drop_loops, int rule,
                                fg_comm_rank_plan *per_rank, int64_t *cut_entries);

/* Least squares with nonnegative coefficients: minimize sum_i w_i (X_i . beta - y_i)^2 over
 * beta >= 0 (k <= 8 unknowns; X is m x k row-major). Coefficients that a plain fit makes
 * negative are fixed at 0 and the rest refitted. Returns the R^2 of the fit. */
double fg_nnls_fit(const double *X, const double *y, const double *w, int m, int k, double *beta);

#endif /* FG_PLAN_H */
