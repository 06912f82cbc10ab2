/* fg_checkpoint.h -- checkpoints: the parameters and optimizer state in the one-process layout,
 * whatever scheme wrote them, so any scheme resumes any checkpoint.
 *
 * Checkpoint file, version 2 (what fg_checkpoint_write writes), little-endian:
 *   offset  size  field
 *        0     8  magic "FGCKPT1\n" (names the file family, not the version)
 *        8     4  u32 version (2)
 *       12     4  u32 section count S
 *       16     …  S sections, one after the other, each:
 *                   +0   16  name: printable ASCII without spaces, NUL-padded (1 to 16 bytes)
 *                   +16   8  u64 payload length P in bytes
 *                   +24   P  payload
 *                     …   …  zero padding to a multiple of 8 bytes (so every section, and so
 *                            every float array, starts 8-aligned in the file)
 *        …     4  u32 CRC-32 (zlib) of every byte before it
 *
 * Sections: each name at most once, in any order; a reader skips names it does not know (room
 * for more without a new version). The writer writes these, in this order ("options", "dataset"
 * and "run" when the caller gives them, as the trainer always does); a reader requires all but
 * "model", "options", "dataset" and "run" (a file without "model", as older builds wrote, holds
 * a GCN with the symmetric Â; a file without "options" or "dataset" predates them and is resumed
 * without those checks; "run" is for people and tools, never read back into a run). Every number is range-checked on reading, after the checksum: a
 * field out of its range is FG_ERR_FORMAT naming the file, the section and the field.
 *   "meta"    56 bytes: u64 seed, i64 epochs completed E (0 <= E < 2^31 - 1), i64 Adam step
 *             count (= E: one step an epoch), i64 best epoch B (1 <= B <= E; 0 when E = 0), f64
 *             best validation accuracy, f64 validation loss at the best epoch, f64 test accuracy
 *             at the best epoch (accuracies in [0, 1], the loss >= 0 and not NaN)
 *   "model"   56 bytes: the layer kind's name (16 bytes, NUL-padded: "gcn", "sage", "gin"),
 *             then u32 weight matrices per layer k (1 to 16), u32 adjacency normalization (0
 *             sym, 1 mean, 2 sum), u32 1 when Â has no self loops, u32 hidden layers' norm (0
 *             none, 1 LayerNorm, 2 BatchNorm), u32 stack layers a model layer (1 to 16), u32 1
 *             when GIN's epsilon is learned, f32 GIN's (initial) epsilon (finite), u32 1 with
 *             residual connections, u32 1 with a label embedding (--label-prop), u32 0 (pad).
 *             Older builds wrote the first 32 bytes (to the norm) or the first 48 (to residual)
 *   "options" 40 or 48 bytes (fg_ckpt_options): the training options a resume must repeat
 *                +0   8  f64 --lr (finite, > 0)
 *                +8   8  f64 --dropout (in [0, 1))
 *               +16   8  f64 --weight-decay (finite, >= 0)
 *               +24   8  f64 --label-prop rate (0: off; else in (0, 1))
 *               +32   4  u32 --weight-decay-layers (0 first, 1 all)
 *               +36   4  u32 --normalize-features (0 or 1)
 *               +40   4  u32 --task (0 multiclass, 1 multilabel)
 *               +44   4  u32 --metric (0 accuracy, 1 rocauc, 2 f1-micro)
 *             The last two only when they are not 0 and 0: a run of multiclass accuracy
 *             writes the 40 bytes older builds wrote, and a file of 40 bytes means multiclass
 *             accuracy. meta's best validation and test "accuracy" are the metric's values
 *   "dataset" 72 bytes (fg_ds_fingerprint, fg_graph.h): the dataset the state was trained on
 *                +0   4  u32 fingerprint kind: 1 = the hashes fg_graph.h defines (a reader
 *                        compares only a kind it knows, and skips the comparison otherwise)
 *                +4   4  u32 0 (padding)
 *                +8   8  i64 nodes (>= 1)
 *               +16   8  i64 adjacency entries, the pattern trained on (>= 0)
 *               +24   8  i64 features (>= 0)
 *               +32   8  i64 classes (>= 0)
 *               +40   8  u64 hash of the graph (fg_hash64 of the pattern, fg_graph.h)
 *               +48   8  u64 hash of the features
 *               +56   8  u64 hash of the labels
 *               +64   8  u64 hash of the split
 *             A resume compares the sizes, then the hashes, and names what differs
 *   "run"     P bytes: the run record of the run that wrote the file (fg_provenance.h, one line
 *             of JSON, UTF-8, no NUL, no newline), padded with zeros to a multiple of 8 like
 *             every section; a reader checks only that it holds no NUL byte
 *   "widths"  4 + 8(L+1) bytes: u32 layers L, then i64 widths (input, hidden..., classes)
 *   "params"  4n bytes: f32 parameters (per layer its k matrices W, then its v vectors: b, and
 *             with LayerNorm on a hidden layer its scale and shift; W_0, b_0, W_1, b_1, … for a
 *             GCN; W row-major fan_in x fan_out), n = the sum over layers of
 *             (k fan_in + v) * fan_out, from the widths
 *   "adam_m"  4n bytes: f32 Adam first moments, same layout
 *   "adam_v"  4n bytes: f32 Adam second moments, same layout
 *
 * Sharded checkpoint (a directory DIR; version 2 containers, every number little-endian):
 *   DIR/manifest: "meta", "model", "options", "dataset", "run", "widths" as above, and in place
 *   of the three arrays (a manifest holding any of them is damage, as a single file without):
 *   "sharded" 48 bytes: u32 ranks P (1 to 2^24), u32 shard files S (P, or 2P with learned
 *             features), u64 generation G (1 to 2^62), i64 learned features' rows N and i64
 *             columns F (both 0: none; else both >= 1), the scheme's name (16 bytes, NUL-padded)
 *   "shards"  112 S bytes, one entry a file (the writer: weights by rank, then features):
 *                +0  64  name, NUL-padded: exactly fg_ckpt_shard_name(family, r, P, G)
 *               +64   8  u64 size in bytes (>= 12 x elements)
 *               +72   4  u32 the file's stored CRC-32 (its last 4 bytes)
 *               +76   4  u32 family (0 weights, 1 features)
 *               +80   4  u32 rank r (< P; one file of each family a rank)
 *               +84   4  u32 0
 *               +88   8  i64 elements E (the weights' sum to n, the features' to N F)
 *               +96   8  i64 lowest index, +104 i64 highest (-1, -1 when E = 0)
 *   DIR/shard-R-of-P.gG.ckpt, DIR/features-R-of-P.gG.ckpt: sections
 *   "shard"   32 bytes: u32 rank, u32 P, u32 family, u32 0, u64 G, i64 the index space (n, or
 *             N F)
 *   "ranges"  16 R bytes: R runs (i64 first index, i64 count >= 1), sorted, disjoint, inside
 *             the space
 *   "values", "adam_m", "adam_v"  4 E bytes each: f32 values of the runs' indices, in order
 *   A weight's index is its place in "params" above; a learned feature's node F + column
 *   (the dataset's node ids). The manifest is renamed into place after every shard is synced:
 *   it is the commit (fg_ckpt_manifest_write).
 *
 * Checkpoint file, version 1 (read only: older builds wrote it), little-endian:
 *   offset  size  field
 *        0     8  magic "FGCKPT1\n"
 *        8     4  u32 version (1)
 *       12     4  u32 layers L
 *       16     8  u64 seed
 *       24     8  i64 epochs completed
 *       32     8  i64 Adam step count
 *       40     8  i64 number of parameters n
 *       48     8  i64 best epoch (0 = none yet)
 *       56     8  f64 best validation accuracy
 *       64     8  f64 validation loss at the best epoch
 *       72     8  f64 test accuracy at the best epoch
 *       80  8(L+1) i64 widths (input, hidden..., classes)
 *        …   4n   f32 parameters (W_0, b_0, W_1, b_1, …; W row-major fan_in x fan_out)
 *        …   4n   f32 Adam first moments, same layout
 *        …   4n   f32 Adam second moments, same layout
 *        …     4  u32 CRC-32 (zlib) of every byte before it
 */
#ifndef FG_CHECKPOINT_H
#define FG_CHECKPOINT_H

#include <stdint.h>

#include "core/fg_core.h"
#include "graph/fg_graph.h"

/* The "meta" section's fields in its order (checkpoint.c copies the section whole). */
typedef struct fg_ckpt_meta {
  uint64_t seed;
  int64_t epoch;
  int64_t adam_t;
  int64_t best_epoch;
  double best_valid_acc, best_valid_loss, best_test_acc;
} fg_ckpt_meta;

/* The model a checkpoint is of. All zero: a GCN with the symmetric Â (what a file without a
 * "model" section holds). */
typedef struct fg_ckpt_model {
  const char *kind;   /* NULL: "gcn" */
  int mats;           /* weight matrices per layer (0: 1) */
  int adj_norm;       /* fg_adj_norm */
  int no_self_loops;
  int norm;           /* fg_norm_kind: 1 (LayerNorm) gives each hidden layer 2 more vectors,
                         2 (BatchNorm) 4 (scale, shift, running mean and variance) */
  int stages;         /* stack layers a model layer (0: 1); the file's layers are the stack's */
  int eps_learn;      /* GIN's epsilon learned: one more parameter in each model layer's first
                         stack layer, after its vectors */
  float eps;          /* GIN's fixed epsilon (or the learned one's initial value) */
  int residual;       /* --residual: a projection matrix more in each model layer's first stack
                         layer whose block changes the width (all model layers but the last) */
  int label_embed;    /* --label-prop: a classes x features label embedding after the layers
                         (row-major; classes = the last width, features the first) */
} fg_ckpt_model;

/* The training options a checkpoint records and a resume must repeat (section "options"):
 * those that change what the state means or where it goes next. Not recorded: the scheme,
 * ranks, order, partition and threads (any scheme resumes any checkpoint), --epochs (a resume
 * goes further), --agg-order (the same product, associated otherwise), the halo scheme's
 * --quantize, and the loading options, which the dataset's fingerprint covers (--directed,
 * --keep-duplicates, --no-self-loops change the graph; --gen-*, --train-frac, --seed the
 * generated parts). The seed is in "meta", the model and widths in their own sections. */
typedef struct fg_ckpt_options {
  double lr, dropout, weight_decay, label_prop;
  int weight_decay_layers; /* fg_weight_decay_layers */
  int normalize_features;
  int task, metric;        /* fg_task_kind, fg_metric_kind (train/fg_metric.h); 0, 0: multiclass
                              accuracy (also what a file without them means) */
} fg_ckpt_options;

/* The state a checkpoint holds: a model's description and dimensions and its parameters with
 * both Adam moments in the one-process layout (per layer its matrices, then b; W row-major
 * fan_in x fan_out). */
typedef struct fg_ckpt_state {
  fg_ckpt_model model;
  int layers;
  const int64_t *widths; /* (layers + 1) */
  int64_t n_params;
  float *params, *adam_m, *adam_v; /* (n_params) each */
  /* optional (NULL: none): written as sections "options" and "dataset"; on reading, compared
   * with the file's when the file has them, a difference refused naming what differs */
  const fg_ckpt_options *options;
  const fg_ds_fingerprint *dataset;
  /* optional (NULL: none): the run record (fg_provenance.h), written as section "run"; never
   * read back into a run (a resume writes its own) */
  const char *run_record;
} fg_ckpt_state;

/* ---- sharded checkpoints: a directory of per-rank shard files and a manifest ------------ */

enum { FG_CKPT_WEIGHTS = 0, FG_CKPT_FEATURES = 1 }; /* a shard file's family */
#define FG_CKPT_FILE_NAME 64 /* a shard file's name field in the manifest */

/* One shard file as the manifest lists it. */
typedef struct fg_ckpt_shard_entry {
  char name[FG_CKPT_FILE_NAME]; /* in the directory, NUL-terminated (fg_ckpt_shard_name) */
  uint64_t size;                /* bytes */
  uint32_t crc;                 /* the file's stored CRC-32 (its last 4 bytes) */
  uint32_t family;              /* FG_CKPT_WEIGHTS or FG_CKPT_FEATURES */
  uint32_t rank;                /* the rank that wrote it */
  uint32_t pad;
  int64_t elements;             /* values it holds (each with both Adam moments) */
  int64_t lo, hi;               /* its lowest and highest index (-1, -1: none) */
} fg_ckpt_shard_entry;

/* The "sharded" and "shards" sections of a manifest. */
typedef struct fg_ckpt_manifest {
  uint32_t ranks;               /* P of the run that wrote it */
  uint64_t generation;          /* >= 1, in every shard file's name */
  int64_t feat_rows, feat_cols; /* learned features N x F (0 x 0: none) */
  char scheme[17];              /* the scheme that wrote it (for people: any scheme resumes) */
  uint32_t n_shards;
  fg_ckpt_shard_entry *shards;  /* (n_shards): P weight files, then P feature files when
                                   feat_rows > 0; malloc'ed by a read (fg_ckpt_manifest_free) */
} fg_ckpt_manifest;

/* Sorted, disjoint runs of one-process indices and where their values lie in a rank's buffers:
 * index start[i] + t is at position pos[i] + t, for t < len[i]. */
typedef struct fg_ckpt_runs {
  int64_t n;
  int64_t *start, *pos, *len; /* (n) each */
  int64_t elements;           /* the sum of len */
} fg_ckpt_runs;

/* 1 when path names a sharded checkpoint to read: it ends in '/' or is an existing directory
 * (one to write is asked for by the trailing '/' alone: the trainer's sharded_output). */
int fg_ckpt_path_sharded(const char *path);
/* The name of family's file of rank `rank` of `ranks`, generation gen: "shard-R-of-P.gG.ckpt"
 * (weights) or "features-R-of-P.gG.ckpt". */
void fg_ckpt_shard_name(char *buf, size_t cap, uint32_t family, uint32_t rank, uint32_t ranks,
                        uint64_t gen);
/* Runs from n pieces: piece k holds indices [idx[k], idx[k] + each) at positions [pos[k],
 * pos[k] + each); sorted and merged where both are contiguous. Pieces must not overlap. */
fg_status fg_ckpt_runs_build(int64_t n, const int64_t *idx, const int64_t *pos, int64_t each,
                             fg_ckpt_runs *out);
void fg_ckpt_runs_free(fg_ckpt_runs *r);
/* Write one shard file at path (through fg_out: whole or not at all, fsynced): the values of
 * runs (arrays[a][pos ...]: parameters, Adam m, Adam v) over an index space of `space`
 * elements. e gets its size, CRC, elements and range (its name is the caller's). Not
 * collective. */
fg_status fg_ckpt_shard_write(const char *path, uint32_t rank, uint32_t ranks, uint32_t family,
                              uint64_t gen, int64_t space, const fg_ckpt_runs *runs,
                              const float *const arrays[3], fg_ckpt_shard_entry *e);
/* Check a shard file's bytes as the manifest describes it (e; ranks, gen and space from the
 * manifest), or, with e NULL, on their own (the fuzz target): structure, checksum, the "shard"
 * section, ranges sorted, disjoint and in [0, space), arrays of the ranges' length. */
fg_status fg_ckpt_shard_check_mem(const void *buf, size_t len, const char *name,
                                  const fg_ckpt_shard_entry *e, uint32_t ranks, uint64_t gen,
                                  int64_t space);
/* Write dir/manifest (through fg_out, so renamed into place last): s's model, widths, options,
 * dataset and run record (its arrays are not read), meta, and mf. Not collective. */
fg_status fg_ckpt_manifest_write(const char *dir, const fg_ckpt_state *s, const fg_ckpt_meta *meta,
                                 const fg_ckpt_manifest *mf);
/* Read dir/manifest, check it against s as fg_checkpoint_read does (model, widths, options,
 * dataset when given; s's arrays are not touched), into meta and mf. Not collective. */
fg_status fg_ckpt_manifest_read(const char *dir, const fg_ckpt_state *s, fg_ckpt_meta *meta,
                                fg_ckpt_manifest *mf);
void fg_ckpt_manifest_free(fg_ckpt_manifest *mf);
/* Fill dst[a][pos ...] for every index of need (family's index space of `space` elements)
 * from the manifest's shard files in dir: rank `rank`'s own file first, then only the files
 * whose range meets an index still missing, one file at a time, each checked against the
 * manifest (size, CRC) and on its own. *files_read: how many were read. An index no file
 * holds is FG_ERR_FORMAT. Not collective. */
fg_status fg_ckpt_shards_load(const char *dir, const fg_ckpt_manifest *mf, uint32_t family,
                              uint32_t rank, int64_t space, const fg_ckpt_runs *need,
                              float *const dst[3], int *files_read);
/* The generation after every one whose shard files are in dir (1 for none). */
fg_status fg_ckpt_next_generation(const char *dir, uint64_t *gen);
/* Remove dir's shard files of every generation but keep (after a manifest's rename). Best
 * effort: a file that cannot be removed stays, harmless. */
void fg_ckpt_prune(const char *dir, uint64_t keep);

/* What a checkpoint says of itself (fg_checkpoint_inspect_mem), checked as a read checks it. */
typedef struct fg_ckpt_info {
  fg_ckpt_model model; /* model.kind points into kind */
  char kind[17];
  int layers;
  int64_t *widths;     /* (layers + 1), malloc'ed: fg_ckpt_info_free */
  int64_t n_params;
  fg_ckpt_meta meta;
  int has_options, has_dataset;
  fg_ckpt_options options;
  fg_ds_fingerprint dataset;
  char *run_record;    /* the "run" section's text, malloc'ed (NULL: the file has none) */
  int sharded;         /* 1: a sharded checkpoint's manifest (no arrays): manifest says more */
  fg_ckpt_manifest manifest; /* its shards malloc'ed: fg_ckpt_info_free */
} fg_ckpt_info;

/* Write version 2 through fg_out (io/fg_io.h): a regular file is replaced whole or not at all
 * (a temporary beside it, renamed over it), a device or fifo written through, a directory
 * refused. The widths must imply n_params. Not collective: call on one rank. */
fg_status fg_checkpoint_write(const char *path, const fg_ckpt_state *s, const fg_ckpt_meta *meta);
/* Read a version 1 or 2 file into s (whose model and dimensions must match the file's; its
 * arrays are filled) and meta. Damaged files are FG_ERR_FORMAT, other versions
 * FG_ERR_UNSUPPORTED, a different model FG_ERR_INVALID_ARG, with a message naming both. Every length in the file is checked against its size
 * before use, so arbitrary bytes are refused, never read out of bounds. Not collective. */
fg_status fg_checkpoint_read(const char *path, fg_ckpt_state *s, fg_ckpt_meta *meta);
/* The same over a file's bytes in buf[0, len) (name in messages): fg_checkpoint_read is the
 * file read whole (a regular file only, its size checked before anything is allocated) and
 * this. */
fg_status fg_checkpoint_read_mem(const void *buf, size_t len, const char *name, fg_ckpt_state *s,
                                 fg_ckpt_meta *meta);
/* Parse and check a checkpoint's bytes without a model to compare with: its model, widths,
 * meta and recorded options and dataset into info (free it with fg_ckpt_info_free, also after
 * a failure). */
fg_status fg_checkpoint_inspect_mem(const void *buf, size_t len, const char *name,
                                    fg_ckpt_info *info);
/* The same over a file read whole (a regular file only), or over dir/manifest when path is a
 * directory (a sharded checkpoint; one without a manifest is refused as not a checkpoint). */
fg_status fg_checkpoint_inspect(const char *path, fg_ckpt_info *info);
void fg_ckpt_info_free(fg_ckpt_info *info);

#endif /* FG_CHECKPOINT_H */
