/* checkpoint.c -- the checkpoint file (layouts in fg_checkpoint.h): writes version 2, reads
 * versions 1 and 2.
 *
 * The reader holds the whole file in memory and trusts none of its numbers: every count and
 * length is compared with the bytes that remain before it is used, each comparison written so
 * that it cannot overflow, so arbitrary bytes are refused and never read out of bounds; once
 * the checksum holds, every field is range-checked (check_meta, check_options, the model's and
 * the dataset's), so a file that is sound but says nonsense (an epoch of -5, a NaN accuracy, an
 * Adam step that does not follow from the epoch) is refused too. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "graph/fg_graph.h"
#include "io/fg_io.h"
#include "model/fg_model.h"
#include "train/fg_checkpoint.h"

static const char ckpt_magic[8] = {'F', 'G', 'C', 'K', 'P', 'T', '1', '\n'};
#define CKPT_VERSION 2u       /* the version the writer writes */
#define CKPT_MAX_LAYERS 4096u /* a sanity bound on a file's layer count (version 1's) */
#define CKPT_MIN 16           /* magic, version and checksum: what every version has */
#define CKPT_HEAD 16          /* version 2: magic, version and section count */
#define CKPT_NAME 16          /* a section's name field */
#define CKPT_SECTION_HEAD 24  /* a section's name field and payload length */
#define CKPT_META_BYTES 56    /* the "meta" payload: 7 fields of 8 bytes */
#define CKPT_MODEL_BYTES 56   /* the "model" payload: a name field, 6 u32, an f32, 2 u32, pad */
#define CKPT_MODEL_V2_BYTES 48 /* before the label embedding's u32 */
#define CKPT_MODEL_V1_BYTES 32 /* an older writer's: a name field and 4 u32 (1 stage, eps 0) */
#define CKPT_OPTIONS_BYTES 48 /* the "options" payload: 4 f64, 4 u32 */
#define CKPT_OPTIONS_V1_BYTES 40 /* without task and metric: multiclass accuracy */
#define CKPT_DATASET_BYTES 72 /* the "dataset" payload: 2 u32, 4 i64, 4 u64 */
/* epochs are ints, and a resumed run counts on from epoch + 1: 0 <= epoch < INT_MAX */
#define CKPT_MAX_EPOCH INT64_C(2147483647)
/* fg_ckpt_meta is those 7 fields in the payload's order; 56 bytes means no padding between
 * them, so the payload is copied to and from the struct whole */
_Static_assert(sizeof(fg_ckpt_meta) == CKPT_META_BYTES, "fg_ckpt_meta is the meta payload");
#define CKPT_V1_FIXED 80      /* version 1's header before the widths */
/* zlib's crc32 takes uInt lengths: it is fed pieces no longer than this */
#define CRC_PIECE ((size_t)1 << 30)

/* The sections, in the order the writer writes them; a reader requires all but the optional
 * ones (sec_optional). */
enum {
  SEC_META,
  SEC_MODEL,
  SEC_OPTIONS,
  SEC_DATASET,
  SEC_RUN,
  SEC_WIDTHS,
  SEC_PARAMS,
  SEC_ADAM_M,
  SEC_ADAM_V,
  SEC_SHARDED, /* a sharded checkpoint's manifest: these two instead of the three arrays */
  SEC_SHARDS,
  SEC_COUNT
};
static const char *const sec_names[SEC_COUNT] = {
    "meta", "model", "options", "dataset", "run", "widths", "params", "adam_m", "adam_v",
    "sharded", "shards"};
/* (the arrays are required in a single file, absent from a manifest: parse_v2 decides) */
static int sec_optional(int r) {
  return r == SEC_MODEL || r == SEC_OPTIONS || r == SEC_DATASET || r == SEC_RUN ||
         r == SEC_PARAMS || r == SEC_ADAM_M || r == SEC_ADAM_V || r == SEC_SHARDED ||
         r == SEC_SHARDS;
}
#define CKPT_SHARDED_BYTES 48 /* the "sharded" payload: u32, u32, u64, 2 i64, a name field */
#define CKPT_ENTRY_BYTES 112  /* a "shards" entry: a 64-byte name, u64, 4 u32, 3 i64 */
#define CKPT_SHARD_BYTES 32   /* a shard file's "shard" payload: 4 u32, u64, i64 */
#define CKPT_MAX_RANKS (1u << 24) /* a sanity bound on a manifest's P */

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* Zero padding after a payload of len bytes, up to the next multiple of 8. */
static uint64_t pad8(uint64_t len) { return (8 - len % 8) % 8; }

/* Add a layer's (mats fan_in + vecs) * fan_out parameters (its matrices and vectors) to *n. 0
 * when a width is not positive or the count would overflow: the widths may come from a damaged
 * file. (mats is 1 to 16, vecs 1 or 3.) */
static int add_layer_params(int64_t *n, int mats, int vecs, int64_t fan_in, int64_t fan_out) {
  int64_t per;
  if (fan_in < 1 || fan_out < 1 || fan_in > (INT64_MAX - vecs) / mats ||
      mats * fan_in + vecs > INT64_MAX / fan_out)
    return 0;
  per = (mats * fan_in + vecs) * fan_out;
  if (per > INT64_MAX - *n) return 0;
  *n += per;
  return 1;
}

/* Add stack layer l's parameters (of layers, widths w: l + 1 and, with a residual, l + stages
 * of them read) to *n: its matrices (a residual projection where its block changes the width)
 * and vectors, and a learned epsilon in each model layer's first stack layer. 0 as
 * add_layer_params. */
static int add_stack_layer(int64_t *n, const fg_ckpt_model *md, int l, int layers,
                           int64_t (*width)(const void *, int), const void *w) {
  const int stages = md->stages > 0 ? md->stages : 1, mats = md->mats > 0 ? md->mats : 1;
  const int source = md->residual && l % stages == 0 && l + stages < layers;
  const int64_t fan_in = width(w, l), fan_out = width(w, l + 1);
  const int proj = source && fan_in != width(w, l + stages);
  if (!add_layer_params(n, mats + proj, fg_model_layer_vecs(md->norm, l, layers), fan_in,
                        fan_out))
    return 0;
  if (md->eps_learn && l % stages == 0) {
    if (*n == INT64_MAX) return 0;
    (*n)++;
  }
  return 1;
}

/* Add the label embedding's parameters (classes x features: the last width times the first) when
 * the model has one. 0 on overflow. */
static int add_label_embed(int64_t *n, const fg_ckpt_model *md, int layers,
                           int64_t (*width)(const void *, int), const void *w) {
  const int64_t c = width(w, layers), f = width(w, 0);
  if (!md->label_embed) return 1;
  if (c <= 0 || f <= 0 || c > (INT64_MAX - *n) / f) return 0;
  *n += c * f;
  return 1;
}

/* Widths as the writer holds them (int64_t) and as a file holds them (little-endian bytes). */
static int64_t get_i64(const unsigned char *p);
static int64_t width_of_array(const void *w, int l) { return ((const int64_t *)w)[l]; }
static int64_t width_of_bytes(const void *w, int l) {
  return get_i64((const unsigned char *)w + 8 * (size_t)l);
}

/* ---- the fields' ranges (the writer refuses what the reader would) ------ */

/* where: "section \"meta\"" or version 1's "header"; code: FG_ERR_FORMAT for a file,
 * FG_ERR_INVALID_ARG for a caller's state. Epochs are ints; a run takes one Adam step an
 * epoch (the trainer's meta.adam_t++), from 0 or from the checkpoint's, so the step count is
 * the epoch; the best epoch is one of those run (0 only before the first). */
static fg_status check_meta(const char *name, const char *where, const fg_ckpt_meta *m,
                            fg_status code) {
  fg_status st = FG_OK;
  FG_REQUIRE(m->epoch >= 0 && m->epoch < CKPT_MAX_EPOCH, code,
             "%s: %s: epoch %lld out of range [0, 2^31 - 1)", name, where, (long long)m->epoch);
  FG_REQUIRE(m->adam_t == m->epoch, code,
             "%s: %s: Adam step count %lld, but epoch %lld (one step an epoch)", name, where,
             (long long)m->adam_t, (long long)m->epoch);
  FG_REQUIRE(m->best_epoch >= (m->epoch > 0) && m->best_epoch <= m->epoch, code,
             "%s: %s: best epoch %lld out of range [%d, %lld]", name, where,
             (long long)m->best_epoch, m->epoch > 0, (long long)m->epoch);
  FG_REQUIRE(m->best_valid_acc >= 0 && m->best_valid_acc <= 1, code,
             "%s: %s: best validation accuracy %g out of range [0, 1]", name, where,
             m->best_valid_acc);
  FG_REQUIRE(m->best_test_acc >= 0 && m->best_test_acc <= 1, code,
             "%s: %s: test accuracy at the best epoch %g out of range [0, 1]", name, where,
             m->best_test_acc);
  FG_REQUIRE(m->best_valid_loss >= 0, code, /* (false for NaN; +inf can be a real loss) */
             "%s: %s: validation loss at the best epoch %g is not >= 0", name, where,
             m->best_valid_loss);
cleanup:
  return st;
}

/* The ranges fg_train's validation gives the options. */
static fg_status check_options(const char *name, const fg_ckpt_options *o, fg_status code) {
  fg_status st = FG_OK;
  FG_REQUIRE(isfinite(o->lr) && o->lr > 0, code, "%s: section \"options\": --lr %g is not > 0",
             name, o->lr);
  FG_REQUIRE(o->dropout >= 0 && o->dropout < 1, code,
             "%s: section \"options\": --dropout %g out of range [0, 1)", name, o->dropout);
  FG_REQUIRE(isfinite(o->weight_decay) && o->weight_decay >= 0, code,
             "%s: section \"options\": --weight-decay %g is not >= 0", name, o->weight_decay);
  FG_REQUIRE(o->label_prop == 0 || (o->label_prop > 0 && o->label_prop < 1), code,
             "%s: section \"options\": --label-prop %g is neither 0 nor in (0, 1)", name,
             o->label_prop);
  FG_REQUIRE(o->weight_decay_layers == FG_WD_FIRST || o->weight_decay_layers == FG_WD_ALL, code,
             "%s: section \"options\": --weight-decay-layers %d is neither 0 (first) nor 1 "
             "(all)", name, o->weight_decay_layers);
  FG_REQUIRE(o->normalize_features == 0 || o->normalize_features == 1, code,
             "%s: section \"options\": --normalize-features %d is neither 0 nor 1", name,
             o->normalize_features);
  FG_REQUIRE(o->task == 0 || o->task == 1, code,
             "%s: section \"options\": --task %d is neither 0 (multiclass) nor 1 (multilabel)",
             name, o->task);
  FG_REQUIRE(o->metric >= 0 && o->metric <= 2, code,
             "%s: section \"options\": --metric %d is not 0 (accuracy), 1 (rocauc) or 2 "
             "(f1-micro)", name, o->metric);
cleanup:
  return st;
}

static fg_status check_dataset(const char *name, const fg_ds_fingerprint *d, fg_status code) {
  fg_status st = FG_OK;
  FG_REQUIRE(d->nodes >= 1 && d->entries >= 0 && d->features >= 0 && d->classes >= 0, code,
             "%s: section \"dataset\": %lld nodes, %lld adjacency entries, %lld features, %lld "
             "classes (sizes must be >= 0, nodes >= 1)",
             name, (long long)d->nodes, (long long)d->entries, (long long)d->features,
             (long long)d->classes);
cleanup:
  return st;
}

/* ---- writing ------------------------------------------------------------ */

/* A writer that keeps a running CRC and remembers the first failure. */
typedef struct sink {
  FILE *f;
  uLong crc;
  int failed, err; /* err: errno at the first failure */
} sink;

static void put(sink *s, const void *p, size_t n) {
  const unsigned char *c = p;
  while (n > 0 && !s->failed) {
    const size_t len = FG_MIN(n, CRC_PIECE);
    s->crc = crc32(s->crc, c, (uInt)len);
    if (fwrite(c, 1, len, s->f) != len) {
      s->failed = 1;
      s->err = errno;
    }
    c += len;
    n -= len;
  }
}

/* (the host is little-endian, checked before writing: values go out as they lie in memory) */
static void put_u32(sink *s, uint32_t v) { put(s, &v, 4); }
static void put_f64(sink *s, double v) { put(s, &v, 8); }
static void put_i64(sink *s, int64_t v) { put(s, &v, 8); }

static void put_section_head(sink *s, const char *name, uint64_t len) {
  char field[CKPT_NAME] = {0};
  memcpy(field, name, FG_MIN(strlen(name), (size_t)CKPT_NAME));
  put(s, field, CKPT_NAME);
  put(s, &len, 8);
}

static void put_padding(sink *s, uint64_t len) {
  static const unsigned char zeros[8] = {0};
  put(s, zeros, (size_t)pad8(len));
}

/* A single file (mf NULL: the arrays) or a sharded checkpoint's manifest (mf: "sharded" and
 * "shards" instead of the arrays). */
static fg_status write_container(const char *path, const fg_ckpt_state *m,
                                 const fg_ckpt_meta *meta, const fg_ckpt_manifest *mf) {
  fg_status st = FG_OK;
  fg_out out = {0};
  sink s = {NULL, 0, 0, 0};
  int64_t implied = 0;
  uint64_t widths_bytes, array_bytes;
  uint32_t crc;
  uint64_t run_bytes = m->run_record ? strlen(m->run_record) : 0;
  const float *const arrays[3] = {m->params, m->adam_m, m->adam_v};
  const int mats = m->model.mats > 0 ? m->model.mats : 1;
  const char *kind = m->model.kind ? m->model.kind : "gcn";
  const int stages = m->model.stages > 0 ? m->model.stages : 1;
  FG_REQUIRE(host_is_little_endian(), FG_ERR_UNSUPPORTED,
             "checkpoints are little-endian; this host is not");
  FG_REQUIRE(path, FG_ERR_INVALID_ARG, "fg_checkpoint_write: path is NULL");
  FG_CHECK(check_meta("checkpoint state", "meta", meta, FG_ERR_INVALID_ARG));
  if (m->options) FG_CHECK(check_options("checkpoint state", m->options, FG_ERR_INVALID_ARG));
  if (m->dataset) FG_CHECK(check_dataset("checkpoint state", m->dataset, FG_ERR_INVALID_ARG));
  FG_REQUIRE(m->layers >= 1 && (unsigned)m->layers < CKPT_MAX_LAYERS, FG_ERR_INVALID_ARG,
             "checkpoint state: %d layers, expected 1 to %u", m->layers, CKPT_MAX_LAYERS - 1);
  FG_REQUIRE(m->widths && (mf || (m->params && m->adam_m && m->adam_v)), FG_ERR_INVALID_ARG,
             "checkpoint state: widths or arrays missing");
  FG_REQUIRE(mats <= 16 && strlen(kind) <= CKPT_NAME && m->model.adj_norm >= 0 &&
                 m->model.adj_norm <= 2 && m->model.norm >= FG_NORM_NONE &&
                 m->model.norm <= FG_NORM_BATCH &&
                 stages <= 16 && m->layers % stages == 0,
             FG_ERR_INVALID_ARG, "checkpoint state: model %s with %d matrices a layer", kind,
             mats);
  /* the reader derives the parameter count from the widths: refuse what it would refuse */
  for (int l = 0; l < m->layers; l++)
    FG_REQUIRE(add_stack_layer(&implied, &m->model, l, m->layers, width_of_array, m->widths),
               FG_ERR_INVALID_ARG,
               "checkpoint state: layer %d is %lld x %lld (widths must be positive)", l,
               (long long)m->widths[l], (long long)m->widths[l + 1]);
  FG_REQUIRE(add_label_embed(&implied, &m->model, m->layers, width_of_array, m->widths),
             FG_ERR_INVALID_ARG, "checkpoint state: a label embedding too large");
  FG_REQUIRE(implied == m->n_params, FG_ERR_INVALID_ARG,
             "checkpoint state has %lld parameters, its widths imply %lld",
             (long long)m->n_params, (long long)implied);
  FG_CHECK(fg_out_open(&out, path));
  s.f = out.f;

  widths_bytes = 4 + 8 * ((uint64_t)m->layers + 1);
  array_bytes = 4 * (uint64_t)m->n_params;
  s.crc = crc32(0L, Z_NULL, 0);
  put(&s, ckpt_magic, 8);
  put_u32(&s, CKPT_VERSION);
  /* meta, model, widths, and the three arrays or the manifest's two sections */
  put_u32(&s, (uint32_t)(3 + (mf ? 2 : 3) + !!m->options + !!m->dataset + !!m->run_record));
  /* (56, 40 and 72 bytes: multiples of 8, no padding) */
  put_section_head(&s, sec_names[SEC_META], CKPT_META_BYTES);
  put(&s, meta, CKPT_META_BYTES);
  put_section_head(&s, sec_names[SEC_MODEL], CKPT_MODEL_BYTES);
  {
    char field[CKPT_NAME] = {0};
    memcpy(field, kind, strlen(kind));
    put(&s, field, CKPT_NAME);
    put_u32(&s, (uint32_t)mats);
    put_u32(&s, (uint32_t)m->model.adj_norm);
    put_u32(&s, (uint32_t)(m->model.no_self_loops != 0));
    put_u32(&s, (uint32_t)m->model.norm);
    put_u32(&s, (uint32_t)stages);
    put_u32(&s, (uint32_t)(m->model.eps_learn != 0));
    put(&s, &m->model.eps, 4);
    put_u32(&s, (uint32_t)(m->model.residual != 0));
    put_u32(&s, (uint32_t)(m->model.label_embed != 0));
    put_u32(&s, 0); /* padding to a multiple of 8 */
  }
  if (m->options) {
    const fg_ckpt_options *o = m->options;
    const int tm = o->task != 0 || o->metric != 0; /* else the older 40 bytes */
    put_section_head(&s, sec_names[SEC_OPTIONS], tm ? CKPT_OPTIONS_BYTES : CKPT_OPTIONS_V1_BYTES);
    put_f64(&s, o->lr);
    put_f64(&s, o->dropout);
    put_f64(&s, o->weight_decay);
    put_f64(&s, o->label_prop);
    put_u32(&s, (uint32_t)o->weight_decay_layers);
    put_u32(&s, (uint32_t)o->normalize_features);
    if (tm) {
      put_u32(&s, (uint32_t)o->task);
      put_u32(&s, (uint32_t)o->metric);
    }
  }
  if (m->dataset) {
    const fg_ds_fingerprint *d = m->dataset;
    put_section_head(&s, sec_names[SEC_DATASET], CKPT_DATASET_BYTES);
    put_u32(&s, FG_FINGERPRINT_KIND);
    put_u32(&s, 0);
    put_i64(&s, d->nodes);
    put_i64(&s, d->entries);
    put_i64(&s, d->features);
    put_i64(&s, d->classes);
    put(&s, &d->graph, 8);
    put(&s, &d->feature_hash, 8);
    put(&s, &d->labels, 8);
    put(&s, &d->split, 8);
  }
  if (m->run_record) {
    put_section_head(&s, sec_names[SEC_RUN], run_bytes);
    put(&s, m->run_record, (size_t)run_bytes);
    put_padding(&s, run_bytes);
  }
  put_section_head(&s, sec_names[SEC_WIDTHS], widths_bytes);
  put_u32(&s, (uint32_t)m->layers);
  put(&s, m->widths, 8 * ((size_t)m->layers + 1));
  put_padding(&s, widths_bytes);
  for (int a = 0; !mf && a < 3; a++) {
    put_section_head(&s, sec_names[SEC_PARAMS + a], array_bytes);
    put(&s, arrays[a], (size_t)array_bytes);
    put_padding(&s, array_bytes);
  }
  if (mf) {
    char field[CKPT_NAME] = {0};
    const uint32_t pad = 0;
    put_section_head(&s, sec_names[SEC_SHARDED], CKPT_SHARDED_BYTES);
    put_u32(&s, mf->ranks);
    put_u32(&s, mf->n_shards);
    put(&s, &mf->generation, 8);
    put_i64(&s, mf->feat_rows);
    put_i64(&s, mf->feat_cols);
    memcpy(field, mf->scheme, FG_MIN(strlen(mf->scheme), (size_t)CKPT_NAME));
    put(&s, field, CKPT_NAME);
    put_section_head(&s, sec_names[SEC_SHARDS], (uint64_t)mf->n_shards * CKPT_ENTRY_BYTES);
    for (uint32_t i = 0; i < mf->n_shards; i++) {
      const fg_ckpt_shard_entry *e = &mf->shards[i];
      char name[FG_CKPT_FILE_NAME] = {0};
      memcpy(name, e->name, strnlen(e->name, FG_CKPT_FILE_NAME - 1));
      put(&s, name, FG_CKPT_FILE_NAME);
      put(&s, &e->size, 8);
      put_u32(&s, e->crc);
      put_u32(&s, e->family);
      put_u32(&s, e->rank);
      put_u32(&s, pad);
      put_i64(&s, e->elements);
      put_i64(&s, e->lo);
      put_i64(&s, e->hi);
    }
  }
  /* the CRC covers everything before it, so it is written past the sink */
  crc = (uint32_t)s.crc;
  if (!s.failed && fwrite(&crc, 1, 4, s.f) != 4) {
    s.failed = 1;
    s.err = errno;
  }
  FG_REQUIRE(!s.failed, FG_ERR_IO, "%s: write error: %s", path, strerror(s.err));
  /* flush, sync, close and put in place, or leave the path as it was */
  FG_CHECK(fg_out_commit(&out));
cleanup:
  if (st != FG_OK) fg_out_abort(&out);
  return st;
}

fg_status fg_checkpoint_write(const char *path, const fg_ckpt_state *m, const fg_ckpt_meta *meta) {
  return write_container(path, m, meta, NULL);
}

/* ---- reading ------------------------------------------------------------ */

/* (the host is little-endian, checked before reading: values are copied as they lie) */
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static int64_t get_i64(const unsigned char *p) {
  int64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* What a file holds, consistent with itself but not yet checked against the caller's model.
 * Pointers into the file's bytes, copied out with memcpy (nothing there need be aligned). */
typedef struct ckpt_view {
  fg_ckpt_meta meta;
  char kind[CKPT_NAME + 1];    /* the model: "gcn" when the file does not say */
  uint32_t mats, adj_norm, no_self_loops, norm, stages, eps_learn, residual, label_embed;
  float eps;
  uint32_t layers;
  const unsigned char *widths; /* (layers + 1) i64 */
  int64_t n_params;
  const unsigned char *arrays[3]; /* params, adam_m, adam_v: (n_params) f32 each */
  int has_options, has_dataset;   /* the sections, when the file has them */
  fg_ckpt_options options;
  uint32_t dataset_kind;          /* FG_FINGERPRINT_KIND: dataset is comparable */
  fg_ds_fingerprint dataset;
  const unsigned char *run;       /* the "run" section's text (run_len bytes), or NULL */
  size_t run_len;
  int sharded;                    /* a manifest: mf (its shards malloc'ed), no arrays */
  fg_ckpt_manifest mf;
} ckpt_view;

/* A regular file's bytes, whole: a directory, a device or a fifo is refused by name before it is
 * opened (reading a fifo would wait for a writer), and the size is known before anything is
 * allocated. */
static fg_status read_whole(const char *path, unsigned char **out, size_t *out_size) {
  fg_status st = FG_OK;
  FILE *f = NULL;
  unsigned char *buf = NULL;
  struct stat sb;
  size_t size;
  FG_REQUIRE(path && path[0], FG_ERR_INVALID_ARG, "an empty checkpoint file name");
  FG_REQUIRE(stat(path, &sb) == 0, FG_ERR_IO, "%s: cannot open checkpoint: %s", path,
             strerror(errno));
  FG_REQUIRE(!S_ISDIR(sb.st_mode), FG_ERR_IO, "%s: is a directory, not a checkpoint file",
             path);
  FG_REQUIRE(S_ISREG(sb.st_mode), FG_ERR_IO, "%s: not a regular file, not a checkpoint", path);
  f = fopen(path, "rb");
  FG_REQUIRE(f, FG_ERR_IO, "%s: cannot open checkpoint: %s", path, strerror(errno));
  /* the file opened is the one to size (the name may have moved meanwhile) */
  FG_REQUIRE(fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode), FG_ERR_IO,
             "%s: not a regular file, not a checkpoint", path);
  FG_REQUIRE(sb.st_size >= CKPT_MIN, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint (%lld bytes, too short)", path,
             (long long)sb.st_size);
  FG_REQUIRE((uint64_t)sb.st_size <= (uint64_t)(SIZE_MAX / 2), FG_ERR_NOMEM,
             "%s: %lld bytes, too large to read", path, (long long)sb.st_size);
  size = (size_t)sb.st_size;
  buf = malloc(size);
  FG_REQUIRE(buf, FG_ERR_NOMEM, "%s: out of memory reading its %zu bytes", path, size);
  FG_REQUIRE(fread(buf, 1, size, f) == size, FG_ERR_IO,
             "%s: read failed after less than %zu bytes%s%s", path, size,
             ferror(f) ? ": " : " (the file shrank)", ferror(f) ? strerror(errno) : "");
  *out = buf;
  buf = NULL;
  *out_size = size;
cleanup:
  if (f) fclose(f);
  free(buf);
  return st;
}

/* Compare the CRC in the last 4 bytes (size >= CKPT_MIN) with the bytes before them. */
static fg_status check_crc(const char *path, const unsigned char *buf, size_t size) {
  fg_status st = FG_OK;
  const uint32_t stored = get_u32(buf + size - 4);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t off = 0; off < size - 4; off += CRC_PIECE)
    crc = crc32(crc, buf + off, (uInt)FG_MIN(size - 4 - off, CRC_PIECE));
  FG_REQUIRE((uint32_t)crc == stored, FG_ERR_FORMAT,
             "%s: checksum mismatch (stored %08x, computed %08x): the file is corrupt", path,
             (unsigned)stored, (unsigned)(uint32_t)crc);
cleanup:
  return st;
}

/* (the caller has checked that size covers the version's fixed part and the checksum) */
static fg_status parse_v1(const char *path, const unsigned char *buf, size_t size,
                          ckpt_view *v) {
  fg_status st = FG_OK;
  size_t expect;
  const unsigned char *p;
  v->layers = get_u32(buf + 12);
  v->n_params = get_i64(buf + 40);
  FG_REQUIRE(v->layers >= 1 && v->layers < CKPT_MAX_LAYERS && v->n_params > 0, FG_ERR_FORMAT,
             "%s: corrupt header (layers %u, parameters %lld)", path, v->layers,
             (long long)v->n_params);
  /* bounded by the size first, 12 n cannot overflow below */
  FG_REQUIRE((uint64_t)v->n_params <= size / 12, FG_ERR_FORMAT,
             "%s: size %zu bytes, the header claims %lld parameters (truncated or corrupt)", path,
             size, (long long)v->n_params);
  expect = CKPT_V1_FIXED + 8 * ((size_t)v->layers + 1) + 12 * (size_t)v->n_params + 4;
  FG_REQUIRE(size == expect, FG_ERR_FORMAT,
             "%s: size %zu bytes, header implies %zu (truncated or corrupt)", path, size, expect);
  FG_CHECK(check_crc(path, buf, size));
  /* the meta fields: seed, epoch and adam_t, then (after the parameter count) the other four */
  memcpy(&v->meta, buf + 16, 24);
  memcpy((unsigned char *)&v->meta + 24, buf + 48, 32);
  v->widths = buf + CKPT_V1_FIXED;
  p = v->widths + 8 * ((size_t)v->layers + 1);
  for (int a = 0; a < 3; a++) v->arrays[a] = p + (size_t)a * 4 * (size_t)v->n_params;
cleanup:
  return st;
}

/* A section found in a version-2 file. */
typedef struct ckpt_section {
  char name[CKPT_NAME + 1];
  size_t at;  /* offset of its header */
  size_t len; /* payload bytes, from at + CKPT_SECTION_HEAD */
} ckpt_section;

/* Copy a name field into name, NUL-terminated. 0 unless it is 1 to 16 printable ASCII
 * characters without spaces followed only by NULs, so that it prints safely in messages. */
static int section_name(const unsigned char *field, char *name) {
  size_t n = 0;
  while (n < CKPT_NAME && field[n] != 0) {
    if (field[n] < 0x21 || field[n] > 0x7e) return 0;
    name[n] = (char)field[n];
    n++;
  }
  name[n] = '\0';
  for (size_t i = n; i < CKPT_NAME; i++)
    if (field[i] != 0) return 0;
  return n > 0;
}

/* By name, then by offset: duplicates end up side by side, in file order. */
static int section_cmp(const void *a, const void *b) {
  const ckpt_section *x = a, *y = b;
  const int c = strcmp(x->name, y->name);
  return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

/* A version-2 container's sections (size >= CKPT_HEAD + 4, magic and version checked): the
 * structure against the bytes present, the checksum, no name twice. *out (malloc'ed, sorted by
 * name) and *n_out. */
static fg_status walk_sections(const char *path, const unsigned char *buf, size_t size,
                               ckpt_section **out, uint32_t *n_out) {
  fg_status st = FG_OK;
  ckpt_section *secs = NULL;
  uint32_t count;
  size_t end, off = CKPT_HEAD;
  end = size - 4; /* where the sections must end: the checksum follows */
  count = get_u32(buf + 12);
  /* every section takes at least its header: a count the file has no room for is damage, and
   * bounding it here bounds the table by the file's size */
  FG_REQUIRE(count <= (end - CKPT_HEAD) / CKPT_SECTION_HEAD, FG_ERR_FORMAT,
             "%s: %u sections declared at byte 12, the file has room for at most %zu "
             "(truncated or corrupt)",
             path, count, (end - CKPT_HEAD) / CKPT_SECTION_HEAD);
  FG_ALLOC(secs, count);

  /* walk the sections: off <= end throughout, so end - off never wraps */
  for (uint32_t i = 0; i < count; i++) {
    ckpt_section *sec = &secs[i];
    uint64_t len;
    size_t room;
    FG_REQUIRE(end - off >= CKPT_SECTION_HEAD, FG_ERR_FORMAT,
               "%s: section %u's header at byte %zu runs past the end of the file "
               "(truncated or corrupt)",
               path, i, off);
    FG_REQUIRE(section_name(buf + off, sec->name), FG_ERR_FORMAT,
               "%s: section %u at byte %zu has a malformed name (corrupt)", path, i, off);
    memcpy(&len, buf + off + CKPT_NAME, 8);
    room = end - off - CKPT_SECTION_HEAD;
    /* len first: once len <= room (< 2^63), len + 7 cannot overflow */
    FG_REQUIRE(len <= room && len + pad8(len) <= room, FG_ERR_FORMAT,
               "%s: section \"%s\" at byte %zu runs past the end of the file (%llu payload "
               "bytes declared, %zu remain): truncated or corrupt",
               path, sec->name, off, (unsigned long long)len, room);
    sec->at = off;
    sec->len = (size_t)len;
    off += CKPT_SECTION_HEAD + (size_t)(len + pad8(len));
  }
  FG_REQUIRE(off == end, FG_ERR_FORMAT,
             "%s: %zu stray bytes after the last section, at byte %zu (corrupt)", path,
             end - off, off);
  /* the structure is sound; before its content is believed, the bytes must be the ones written */
  FG_CHECK(check_crc(path, buf, size));

  if (count > 1) qsort(secs, count, sizeof *secs, section_cmp);
  for (uint32_t i = 0; i + 1 < count; i++)
    FG_REQUIRE(strcmp(secs[i].name, secs[i + 1].name) != 0, FG_ERR_FORMAT,
               "%s: duplicate section \"%s\" (at bytes %zu and %zu)", path, secs[i].name,
               secs[i].at, secs[i + 1].at);
  *out = secs;
  secs = NULL;
  *n_out = count;
cleanup:
  free(secs);
  return st;
}

/* The section called name, or NULL. */
static const ckpt_section *find_section(const ckpt_section *secs, uint32_t count,
                                        const char *name) {
  for (uint32_t i = 0; i < count; i++)
    if (strcmp(secs[i].name, name) == 0) return &secs[i];
  return NULL;
}

static fg_status parse_manifest(const char *path, const unsigned char *buf,
                                const ckpt_section *sharded, const ckpt_section *shards,
                                int64_t n_params, fg_ckpt_manifest *mf);

static fg_status parse_v2(const char *path, const unsigned char *buf, size_t size,
                          ckpt_view *v) {
  fg_status st = FG_OK;
  ckpt_section *secs = NULL;
  const ckpt_section *req[SEC_COUNT] = {NULL};
  const unsigned char *p;
  uint32_t count;
  int64_t n = 0;
  FG_CHECK(walk_sections(path, buf, size, &secs, &count));
  /* a shard file is sound but no checkpoint of its own */
  FG_REQUIRE(!find_section(secs, count, "shard") || find_section(secs, count, "meta"),
             FG_ERR_FORMAT,
             "%s: a shard of a sharded checkpoint, not a checkpoint: give its directory", path);
  /* unknown names are skipped: a later version may add sections this one does not need */
  for (int r = 0; r < SEC_COUNT; r++) {
    req[r] = find_section(secs, count, sec_names[r]);
    FG_REQUIRE(req[r] || sec_optional(r), FG_ERR_FORMAT,
               "%s: checkpoint has no \"%s\" section", path, sec_names[r]);
  }
  /* a single file holds the arrays, a manifest "sharded" and "shards" instead */
  v->sharded = req[SEC_SHARDED] != NULL;
  for (int r = SEC_PARAMS; r <= SEC_SHARDS; r++) {
    const int want = (r >= SEC_SHARDED) == v->sharded;
    FG_REQUIRE(!want || req[r], FG_ERR_FORMAT, "%s: %s has no \"%s\" section", path,
               v->sharded ? "a sharded checkpoint's manifest" : "checkpoint", sec_names[r]);
    FG_REQUIRE(want || !req[r], FG_ERR_FORMAT,
               "%s: section \"%s\" in %s (corrupt)", path, sec_names[r],
               v->sharded ? "a sharded checkpoint's manifest" : "a single-file checkpoint");
  }
  FG_REQUIRE(!req[SEC_OPTIONS] || req[SEC_OPTIONS]->len == CKPT_OPTIONS_BYTES ||
                 req[SEC_OPTIONS]->len == CKPT_OPTIONS_V1_BYTES,
             FG_ERR_FORMAT, "%s: section \"%s\" at byte %zu has %zu bytes, expected %d or %d",
             path, sec_names[SEC_OPTIONS], req[SEC_OPTIONS]->at, req[SEC_OPTIONS]->len,
             CKPT_OPTIONS_V1_BYTES, CKPT_OPTIONS_BYTES);
  FG_REQUIRE(!req[SEC_DATASET] || req[SEC_DATASET]->len == CKPT_DATASET_BYTES, FG_ERR_FORMAT,
             "%s: section \"%s\" at byte %zu has %zu bytes, expected %d", path,
             sec_names[SEC_DATASET], req[SEC_DATASET]->at, req[SEC_DATASET]->len,
             CKPT_DATASET_BYTES);
  if (req[SEC_OPTIONS]) {
    p = buf + req[SEC_OPTIONS]->at + CKPT_SECTION_HEAD;
    memcpy(&v->options.lr, p, 8);
    memcpy(&v->options.dropout, p + 8, 8);
    memcpy(&v->options.weight_decay, p + 16, 8);
    memcpy(&v->options.label_prop, p + 24, 8);
    /* (as u32: a value above INT_MAX reads negative and is refused as such) */
    v->options.weight_decay_layers = (int)get_u32(p + 32);
    v->options.normalize_features = (int)get_u32(p + 36);
    if (req[SEC_OPTIONS]->len == CKPT_OPTIONS_BYTES) {
      v->options.task = (int)get_u32(p + 40);
      v->options.metric = (int)get_u32(p + 44);
    }
    v->has_options = 1;
    FG_CHECK(check_options(path, &v->options, FG_ERR_FORMAT));
  }
  if (req[SEC_RUN]) {
    /* text for people and tools, never read back into the run: only its being text is checked
     * (no NUL, which would cut it short) */
    v->run = buf + req[SEC_RUN]->at + CKPT_SECTION_HEAD;
    v->run_len = req[SEC_RUN]->len;
    FG_REQUIRE(!memchr(v->run, 0, v->run_len), FG_ERR_FORMAT,
               "%s: section \"run\" at byte %zu holds a NUL byte (corrupt)", path,
               req[SEC_RUN]->at);
  }
  if (req[SEC_DATASET]) {
    p = buf + req[SEC_DATASET]->at + CKPT_SECTION_HEAD;
    v->dataset_kind = get_u32(p);
    v->dataset.nodes = get_i64(p + 8);
    v->dataset.entries = get_i64(p + 16);
    v->dataset.features = get_i64(p + 24);
    v->dataset.classes = get_i64(p + 32);
    memcpy(&v->dataset.graph, p + 40, 8);
    memcpy(&v->dataset.feature_hash, p + 48, 8);
    memcpy(&v->dataset.labels, p + 56, 8);
    memcpy(&v->dataset.split, p + 64, 8);
    v->has_dataset = 1;
    FG_CHECK(check_dataset(path, &v->dataset, FG_ERR_FORMAT));
  }

  FG_REQUIRE(req[SEC_META]->len == CKPT_META_BYTES, FG_ERR_FORMAT,
             "%s: section \"meta\" at byte %zu has %zu bytes, expected %d", path,
             req[SEC_META]->at, req[SEC_META]->len, CKPT_META_BYTES);
  memcpy(&v->meta, buf + req[SEC_META]->at + CKPT_SECTION_HEAD, CKPT_META_BYTES);
  if (req[SEC_MODEL]) {
    p = buf + req[SEC_MODEL]->at + CKPT_SECTION_HEAD;
    const size_t len = req[SEC_MODEL]->len;
    FG_REQUIRE((len == CKPT_MODEL_BYTES || len == CKPT_MODEL_V2_BYTES ||
                len == CKPT_MODEL_V1_BYTES) && section_name(p, v->kind),
               FG_ERR_FORMAT, "%s: section \"model\" at byte %zu is malformed (corrupt)", path,
               req[SEC_MODEL]->at);
    v->mats = get_u32(p + CKPT_NAME);
    v->adj_norm = get_u32(p + CKPT_NAME + 4);
    v->no_self_loops = get_u32(p + CKPT_NAME + 8);
    v->norm = get_u32(p + CKPT_NAME + 12);
    if (len >= CKPT_MODEL_V2_BYTES) {
      v->stages = get_u32(p + CKPT_NAME + 16);
      v->eps_learn = get_u32(p + CKPT_NAME + 20);
      memcpy(&v->eps, p + CKPT_NAME + 24, 4);
      v->residual = get_u32(p + CKPT_NAME + 28);
    }
    if (len >= CKPT_MODEL_BYTES) v->label_embed = get_u32(p + CKPT_NAME + 32);
    FG_REQUIRE(v->mats >= 1 && v->mats <= 16 && v->adj_norm <= 2 && v->no_self_loops <= 1 &&
                   v->norm <= FG_NORM_BATCH && v->stages >= 1 && v->stages <= 16 && v->eps_learn <= 1 &&
                   isfinite(v->eps) && v->residual <= 1 && v->label_embed <= 1,
               FG_ERR_FORMAT,
               "%s: section \"model\": %u matrices a layer, normalization %u, no self loops "
               "%u, norm %u, %u stages, epsilon learned %u, residual %u, label embedding %u "
               "(corrupt)",
               path, v->mats, v->adj_norm, v->no_self_loops, v->norm, v->stages, v->eps_learn,
               v->residual, v->label_embed);
  }

  FG_REQUIRE(req[SEC_WIDTHS]->len >= 4, FG_ERR_FORMAT,
             "%s: section \"widths\" at byte %zu has %zu bytes, too few for its layer count",
             path, req[SEC_WIDTHS]->at, req[SEC_WIDTHS]->len);
  p = buf + req[SEC_WIDTHS]->at + CKPT_SECTION_HEAD;
  v->layers = get_u32(p);
  FG_REQUIRE(v->layers >= 1 && v->layers < CKPT_MAX_LAYERS, FG_ERR_FORMAT,
             "%s: section \"widths\" at byte %zu: %u layers (corrupt)", path,
             req[SEC_WIDTHS]->at, v->layers);
  FG_REQUIRE(req[SEC_WIDTHS]->len == 4 + 8 * ((size_t)v->layers + 1), FG_ERR_FORMAT,
             "%s: section \"widths\" at byte %zu has %zu bytes, %u layers need %zu", path,
             req[SEC_WIDTHS]->at, req[SEC_WIDTHS]->len, v->layers,
             4 + 8 * ((size_t)v->layers + 1));
  v->widths = p + 4;
  FG_REQUIRE(v->layers % v->stages == 0, FG_ERR_FORMAT,
             "%s: section \"widths\": %u layers for a model of %u stages a layer (corrupt)",
             path, v->layers, v->stages);
  for (uint32_t l = 0; l < v->layers; l++) {
    const int64_t fan_in = get_i64(v->widths + 8 * (size_t)l);
    const int64_t fan_out = get_i64(v->widths + 8 * ((size_t)l + 1));
    const fg_ckpt_model md = {.mats = (int)v->mats,
                              .norm = (int)v->norm,
                              .stages = (int)v->stages,
                              .eps_learn = (int)v->eps_learn,
                              .residual = (int)v->residual};
    FG_REQUIRE(add_stack_layer(&n, &md, (int)l, (int)v->layers, width_of_bytes, v->widths),
               FG_ERR_FORMAT,
               "%s: section \"widths\": layer %u is %lld x %lld (corrupt)", path, l,
               (long long)fan_in, (long long)fan_out);
  }
  {
    const fg_ckpt_model md = {.label_embed = (int)v->label_embed};
    FG_REQUIRE(add_label_embed(&n, &md, (int)v->layers, width_of_bytes, v->widths),
               FG_ERR_FORMAT, "%s: section \"widths\": a label embedding too large (corrupt)",
               path);
  }
  v->n_params = n;

  if (v->sharded) {
    FG_CHECK(parse_manifest(path, buf, req[SEC_SHARDED], req[SEC_SHARDS], n, &v->mf));
    goto cleanup;
  }
  for (int a = 0; a < 3; a++) {
    const ckpt_section *sec = req[SEC_PARAMS + a];
    FG_REQUIRE(sec->len % 4 == 0 && (uint64_t)(sec->len / 4) == (uint64_t)n, FG_ERR_FORMAT,
               "%s: section \"%s\" at byte %zu has %zu bytes, the widths imply %lld float32 "
               "parameters",
               path, sec->name, sec->at, sec->len, (long long)n);
    v->arrays[a] = buf + sec->at + CKPT_SECTION_HEAD;
  }
cleanup:
  free(secs);
  return st;
}

/* x in as few digits as read back the same (a value given on the command line prints as typed) */
static const char *num_text(char *buf, size_t cap, double x) {
  snprintf(buf, cap, "%.15g", x);
  if (strtod(buf, NULL) != x) snprintf(buf, cap, "%.17g", x);
  return buf;
}

/* The dataset the file was made on against this run's: the sizes, then each part's hash. */
static fg_status compare_dataset(const char *path, const fg_ds_fingerprint *f,
                                 const fg_ds_fingerprint *r) {
  fg_status st = FG_OK;
  const uint64_t fh[4] = {f->graph, f->feature_hash, f->labels, f->split};
  const uint64_t rh[4] = {r->graph, r->feature_hash, r->labels, r->split};
  static const char *const part[4] = {"the graph differs", "the features differ",
                                      "the labels differ", "the split differs"};
  FG_REQUIRE(f->nodes == r->nodes && f->entries == r->entries && f->features == r->features &&
                 f->classes == r->classes,
             FG_ERR_INVALID_ARG,
             "%s: the checkpoint was made on a dataset of %lld nodes, %lld adjacency entries, "
             "%lld features and %lld classes; this run's has %lld, %lld, %lld and %lld",
             path, (long long)f->nodes, (long long)f->entries, (long long)f->features,
             (long long)f->classes, (long long)r->nodes, (long long)r->entries,
             (long long)r->features, (long long)r->classes);
  for (int k = 0; k < 4; k++)
    FG_REQUIRE(fh[k] == rh[k], FG_ERR_INVALID_ARG,
               "%s: the checkpoint was made on another dataset of the same sizes: %s "
               "(hash %016llx in the checkpoint, %016llx in this run)",
               path, part[k], (unsigned long long)fh[k], (unsigned long long)rh[k]);
cleanup:
  return st;
}

/* The options the file was made with against this run's, the first difference named. */
static fg_status compare_options(const char *path, const fg_ckpt_options *f,
                                 const fg_ckpt_options *r) {
  fg_status st = FG_OK;
  static const char *const names[4] = {"--lr", "--dropout", "--weight-decay", "--label-prop"};
  const double fv[4] = {f->lr, f->dropout, f->weight_decay, f->label_prop};
  const double rv[4] = {r->lr, r->dropout, r->weight_decay, r->label_prop};
  char a[40], b[40];
  for (int k = 0; k < 4; k++)
    FG_REQUIRE(fv[k] == rv[k], FG_ERR_INVALID_ARG,
               "%s: %s %s in the checkpoint, %s in this run", path, names[k],
               num_text(a, sizeof a, fv[k]), num_text(b, sizeof b, rv[k]));
  FG_REQUIRE(f->weight_decay_layers == r->weight_decay_layers, FG_ERR_INVALID_ARG,
             "%s: --weight-decay-layers %s in the checkpoint, %s in this run", path,
             f->weight_decay_layers == FG_WD_ALL ? "all" : "first",
             r->weight_decay_layers == FG_WD_ALL ? "all" : "first");
  FG_REQUIRE(f->normalize_features == (r->normalize_features != 0), FG_ERR_INVALID_ARG,
             "%s: the checkpoint was made %s --normalize-features, this run is %s it", path,
             f->normalize_features ? "with" : "without",
             r->normalize_features ? "with" : "without");
  {
    static const char *const tn[2] = {"multiclass", "multilabel"};
    static const char *const mn[3] = {"accuracy", "rocauc", "f1-micro"};
    FG_REQUIRE(f->task == r->task, FG_ERR_INVALID_ARG,
               "%s: --task %s in the checkpoint, %s in this run", path, tn[f->task & 1],
               tn[r->task & 1]);
    /* the best epoch so far was chosen by the checkpoint's metric */
    FG_REQUIRE(f->metric == r->metric, FG_ERR_INVALID_ARG,
               "%s: --metric %s in the checkpoint (its best epoch was chosen by it), %s in this "
               "run", path, mn[f->metric % 3], mn[r->metric % 3]);
  }
cleanup:
  return st;
}

/* Check a file's dimensions against the caller's model, then copy the file's state out. */
static fg_status take_view(const char *path, const ckpt_view *v, const fg_ckpt_state *m,
                           fg_ckpt_meta *meta) {
  fg_status st = FG_OK;
  float *const dst[3] = {m->params, m->adam_m, m->adam_v};
  const fg_ckpt_model *mm = &m->model;
  const char *kind = mm->kind ? mm->kind : "gcn";
  const unsigned adj = (unsigned)mm->adj_norm;
  /* another dataset first: its other widths would be a puzzling way to say so */
  if (m->dataset && v->has_dataset && v->dataset_kind == FG_FINGERPRINT_KIND)
    FG_CHECK(compare_dataset(path, &v->dataset, m->dataset));
  FG_REQUIRE(strcmp(v->kind, kind) == 0 && v->mats == (uint32_t)(mm->mats > 0 ? mm->mats : 1),
             FG_ERR_INVALID_ARG, "%s: the checkpoint is of a %s model, this run trains %s", path,
             v->kind, kind);
  FG_REQUIRE(v->adj_norm == adj && v->no_self_loops == (uint32_t)(mm->no_self_loops != 0),
             FG_ERR_INVALID_ARG,
             "%s: the checkpoint's %s model aggregates with --adj-norm %s%s, this run with %s%s",
             path, kind, fg_adj_norm_name((fg_adj_norm)v->adj_norm),
             v->no_self_loops ? " without self loops" : "", fg_adj_norm_name((fg_adj_norm)adj),
             mm->no_self_loops ? " without self loops" : "");
  FG_REQUIRE(v->norm == (uint32_t)mm->norm, FG_ERR_INVALID_ARG,
             "%s: the checkpoint's %s model has --norm %s, this run %s", path, kind,
             fg_norm_name((int)v->norm), fg_norm_name(mm->norm));
  FG_REQUIRE(v->eps_learn == (uint32_t)(mm->eps_learn != 0) &&
                 (v->eps_learn || v->eps == mm->eps),
             FG_ERR_INVALID_ARG, "%s: the checkpoint's %s model has --gin-eps %s%.9g, this run %s%.9g",
             path, kind, v->eps_learn ? "learn from " : "", (double)v->eps,
             mm->eps_learn ? "learn from " : "", (double)mm->eps);
  FG_REQUIRE(v->residual == (uint32_t)(mm->residual != 0), FG_ERR_INVALID_ARG,
             "%s: the checkpoint's %s model is %s residual connections, this run %s", path,
             kind, v->residual ? "with" : "without", mm->residual ? "with" : "without");
  FG_REQUIRE(v->label_embed == (uint32_t)(mm->label_embed != 0), FG_ERR_INVALID_ARG,
             "%s: the checkpoint's %s model is %s a label embedding (--label-prop), this run "
             "%s", path, kind, v->label_embed ? "with" : "without",
             mm->label_embed ? "with" : "without");
  FG_REQUIRE((int)v->layers == m->layers, FG_ERR_INVALID_ARG,
             "%s: checkpoint has %u layers, the model has %d", path, v->layers, m->layers);
  for (uint32_t l = 0; l <= v->layers; l++) {
    const int64_t w = get_i64(v->widths + 8 * (size_t)l);
    FG_REQUIRE(w == m->widths[l], FG_ERR_INVALID_ARG,
               "%s: checkpoint layer width %u is %lld, the model's is %lld", path, l,
               (long long)w, (long long)m->widths[l]);
  }
  FG_REQUIRE(v->n_params == m->n_params, FG_ERR_INVALID_ARG,
             "%s: checkpoint has %lld parameters, the model %lld", path, (long long)v->n_params,
             (long long)m->n_params);
  if (m->options && v->has_options) FG_CHECK(compare_options(path, &v->options, m->options));
  *meta = v->meta;
  for (int a = 0; !v->sharded && a < 3; a++) memcpy(dst[a], v->arrays[a], (size_t)v->n_params * 4);
cleanup:
  return st;
}

/* The bytes of a checkpoint into v: structure, checksum, then every field's range. */
static fg_status parse(const char *name, const unsigned char *buf, size_t size, ckpt_view *v) {
  fg_status st = FG_OK;
  uint32_t version;
  memset(v, 0, sizeof *v);
  strcpy(v->kind, "gcn"); /* what a file without a "model" section holds */
  v->mats = 1;
  v->stages = 1;
  FG_REQUIRE(host_is_little_endian(), FG_ERR_UNSUPPORTED,
             "checkpoints are little-endian; this host is not");
  FG_REQUIRE(buf && size >= CKPT_MIN, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint (%zu bytes, too short)", name, size);
  FG_REQUIRE(memcmp(buf, ckpt_magic, 8) == 0, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint (bad magic at byte 0)", name);
  version = get_u32(buf + 8);
  FG_REQUIRE(version == 1 || version == CKPT_VERSION, FG_ERR_UNSUPPORTED,
             "%s: checkpoint version %u, this build reads versions 1 and %u", name, version,
             CKPT_VERSION);
  /* the fixed part before the checksum: version 1's header, version 2's section count */
  FG_REQUIRE(size >= (version == 1 ? CKPT_V1_FIXED : CKPT_HEAD) + 4, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint (%zu bytes, too short)", name, size);
  FG_CHECK(version == 1 ? parse_v1(name, buf, size, v) : parse_v2(name, buf, size, v));
  FG_CHECK(check_meta(name, version == 1 ? "header" : "section \"meta\"", &v->meta,
                      FG_ERR_FORMAT));
cleanup:
  if (st != FG_OK) fg_ckpt_manifest_free(&v->mf);
  return st;
}

fg_status fg_checkpoint_read_mem(const void *buf, size_t len, const char *name, fg_ckpt_state *m,
                                 fg_ckpt_meta *meta) {
  fg_status st = FG_OK;
  ckpt_view v;
  memset(&v, 0, sizeof v);
  FG_CHECK(parse(name, buf, len, &v));
  FG_REQUIRE(!v.sharded, FG_ERR_INVALID_ARG,
             "%s: a sharded checkpoint's manifest, not a checkpoint file: give its directory",
             name);
  FG_CHECK(take_view(name, &v, m, meta));
cleanup:
  fg_ckpt_manifest_free(&v.mf);
  return st;
}

fg_status fg_checkpoint_read(const char *path, fg_ckpt_state *m, fg_ckpt_meta *meta) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t size = 0;
  FG_CHECK(read_whole(path, &buf, &size));
  FG_CHECK(fg_checkpoint_read_mem(buf, size, path, m, meta));
cleanup:
  free(buf);
  return st;
}

/* dir/manifest into buf, or a clear refusal when the directory has none. */
static fg_status manifest_path(const char *dir, char *buf, size_t cap) {
  fg_status st = FG_OK;
  struct stat sb;
  const size_t n = strlen(dir);
  FG_REQUIRE(n > 0, FG_ERR_INVALID_ARG, "an empty checkpoint directory name");
  FG_REQUIRE((size_t)snprintf(buf, cap, "%s%smanifest", dir, dir[n - 1] == '/' ? "" : "/") <
                 cap, FG_ERR_INVALID_ARG, "%s: the directory's name is too long", dir);
  FG_REQUIRE(stat(dir, &sb) == 0, FG_ERR_IO, "%s: cannot open checkpoint directory: %s", dir,
             strerror(errno));
  FG_REQUIRE(S_ISDIR(sb.st_mode), FG_ERR_IO, "%s: not a directory", dir);
  FG_REQUIRE(stat(buf, &sb) == 0, FG_ERR_FORMAT,
             "%s: a directory without a manifest, not a checkpoint (%s: %s)", dir, buf,
             strerror(errno));
cleanup:
  return st;
}

fg_status fg_checkpoint_inspect(const char *path, fg_ckpt_info *info) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  size_t size = 0;
  char mpath[4200];
  struct stat sb;
  memset(info, 0, sizeof *info);
  if (path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    FG_CHECK(manifest_path(path, mpath, sizeof mpath));
    path = mpath;
  }
  FG_CHECK(read_whole(path, &buf, &size));
  FG_CHECK(fg_checkpoint_inspect_mem(buf, size, path, info));
cleanup:
  free(buf);
  return st;
}

fg_status fg_checkpoint_inspect_mem(const void *buf, size_t len, const char *name,
                                    fg_ckpt_info *info) {
  fg_status st = FG_OK;
  ckpt_view v;
  memset(info, 0, sizeof *info);
  memset(&v, 0, sizeof v);
  FG_CHECK(parse(name, buf, len, &v));
  info->sharded = v.sharded;
  info->manifest = v.mf; /* (its shards move to info) */
  v.mf.shards = NULL;
  memcpy(info->kind, v.kind, sizeof info->kind);
  info->model = (fg_ckpt_model){.kind = info->kind,
                                .mats = (int)v.mats,
                                .adj_norm = (int)v.adj_norm,
                                .no_self_loops = (int)v.no_self_loops,
                                .norm = (int)v.norm,
                                .stages = (int)v.stages,
                                .eps_learn = (int)v.eps_learn,
                                .eps = v.eps,
                                .residual = (int)v.residual,
                                .label_embed = (int)v.label_embed};
  info->layers = (int)v.layers;
  FG_ALLOC(info->widths, (size_t)v.layers + 1);
  for (uint32_t l = 0; l <= v.layers; l++) info->widths[l] = get_i64(v.widths + 8 * (size_t)l);
  info->n_params = v.n_params;
  info->meta = v.meta;
  info->has_options = v.has_options;
  info->options = v.options;
  info->has_dataset = v.has_dataset && v.dataset_kind == FG_FINGERPRINT_KIND;
  info->dataset = v.dataset;
  if (v.run) {
    FG_ALLOC(info->run_record, v.run_len + 1);
    memcpy(info->run_record, v.run, v.run_len);
    info->run_record[v.run_len] = '\0';
  }
cleanup:
  return st;
}

void fg_ckpt_info_free(fg_ckpt_info *info) {
  fg_ckpt_manifest_free(&info->manifest);
  free(info->widths);
  info->widths = NULL;
  free(info->run_record);
  info->run_record = NULL;
}

/* ---- sharded checkpoints ---------------------------------------------------------------------
 * A directory: "manifest" (this container with "sharded" and "shards" in place of the arrays)
 * and per-rank shard files (this container with "shard", "ranges", "values", "adam_m",
 * "adam_v"). Layouts in fg_checkpoint.h. */

void fg_ckpt_manifest_free(fg_ckpt_manifest *mf) {
  if (!mf) return;
  free(mf->shards);
  mf->shards = NULL;
  mf->n_shards = 0;
}

int fg_ckpt_path_sharded(const char *path) {
  struct stat sb;
  const size_t n = path ? strlen(path) : 0;
  if (n == 0) return 0;
  return path[n - 1] == '/' || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
}

void fg_ckpt_shard_name(char *buf, size_t cap, uint32_t family, uint32_t rank, uint32_t ranks,
                        uint64_t gen) {
  snprintf(buf, cap, "%s-%u-of-%u.g%llu.ckpt", family == FG_CKPT_FEATURES ? "features" : "shard",
           rank, ranks, (unsigned long long)gen);
}

/* dir and name joined (one '/' between) into buf; 0 when it does not fit. */
static int join_path(char *buf, size_t cap, const char *dir, const char *name) {
  const size_t n = strlen(dir);
  return (size_t)snprintf(buf, cap, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/",
                          name) < cap;
}

/* The manifest's two sections into mf (shards malloc'ed), every field checked: P files of
 * weights (one a rank), P of features when the features are learned, each with its canonical
 * name, and the weights' elements summing to the model's n_params, the features' to N F (each
 * element is owned once). */
static fg_status parse_manifest(const char *path, const unsigned char *buf,
                                const ckpt_section *sharded, const ckpt_section *shards,
                                int64_t n_params, fg_ckpt_manifest *mf) {
  fg_status st = FG_OK;
  const unsigned char *p = buf + sharded->at + CKPT_SECTION_HEAD;
  int64_t sum[2] = {0, 0}, space[2];
  uint8_t *seen = NULL;
  memset(mf, 0, sizeof *mf);
  FG_REQUIRE(sharded->len == CKPT_SHARDED_BYTES, FG_ERR_FORMAT,
             "%s: section \"sharded\" at byte %zu has %zu bytes, expected %d", path, sharded->at,
             sharded->len, CKPT_SHARDED_BYTES);
  mf->ranks = get_u32(p);
  mf->n_shards = get_u32(p + 4);
  memcpy(&mf->generation, p + 8, 8);
  mf->feat_rows = get_i64(p + 16);
  mf->feat_cols = get_i64(p + 24);
  FG_REQUIRE(section_name(p + 32, mf->scheme), FG_ERR_FORMAT,
             "%s: section \"sharded\": a malformed scheme name (corrupt)", path);
  FG_REQUIRE(mf->ranks >= 1 && mf->ranks <= CKPT_MAX_RANKS && mf->generation >= 1 &&
                 mf->generation < UINT64_C(1) << 62,
             FG_ERR_FORMAT, "%s: section \"sharded\": %u ranks, generation %llu (corrupt)", path,
             mf->ranks, (unsigned long long)mf->generation);
  FG_REQUIRE((mf->feat_rows == 0 && mf->feat_cols == 0) ||
                 (mf->feat_rows >= 1 && mf->feat_cols >= 1 &&
                  mf->feat_rows <= INT64_MAX / mf->feat_cols),
             FG_ERR_FORMAT, "%s: section \"sharded\": learned features %lld x %lld (corrupt)",
             path, (long long)mf->feat_rows, (long long)mf->feat_cols);
  space[FG_CKPT_WEIGHTS] = n_params;
  space[FG_CKPT_FEATURES] = mf->feat_rows * mf->feat_cols;
  FG_REQUIRE(mf->n_shards == mf->ranks * (mf->feat_rows > 0 ? 2u : 1u), FG_ERR_FORMAT,
             "%s: section \"sharded\": %u shard files for %u ranks%s (corrupt)", path,
             mf->n_shards, mf->ranks, mf->feat_rows > 0 ? " with learned features" : "");
  FG_REQUIRE(shards->len == (size_t)mf->n_shards * CKPT_ENTRY_BYTES, FG_ERR_FORMAT,
             "%s: section \"shards\" at byte %zu has %zu bytes, %u files need %zu", path,
             shards->at, shards->len, mf->n_shards, (size_t)mf->n_shards * CKPT_ENTRY_BYTES);
  FG_ALLOC(mf->shards, mf->n_shards);
  FG_CALLOC(seen, mf->n_shards);
  p = buf + shards->at + CKPT_SECTION_HEAD;
  for (uint32_t i = 0; i < mf->n_shards; i++, p += CKPT_ENTRY_BYTES) {
    fg_ckpt_shard_entry *e = &mf->shards[i];
    char want[FG_CKPT_FILE_NAME];
    size_t len = strnlen((const char *)p, FG_CKPT_FILE_NAME);
    memset(e, 0, sizeof *e);
    FG_REQUIRE(len < FG_CKPT_FILE_NAME, FG_ERR_FORMAT,
               "%s: section \"shards\": file %u's name is not terminated (corrupt)", path, i);
    memcpy(e->name, p, len);
    memcpy(&e->size, p + 64, 8);
    e->crc = get_u32(p + 72);
    e->family = get_u32(p + 76);
    e->rank = get_u32(p + 80);
    e->elements = get_i64(p + 88);
    e->lo = get_i64(p + 96);
    e->hi = get_i64(p + 104);
    FG_REQUIRE(e->family <= FG_CKPT_FEATURES && e->rank < mf->ranks &&
                   (e->family == FG_CKPT_WEIGHTS || mf->feat_rows > 0),
               FG_ERR_FORMAT, "%s: section \"shards\": file %u: family %u, rank %u of %u "
               "(corrupt)", path, i, e->family, e->rank, mf->ranks);
    FG_REQUIRE(!seen[e->family * mf->ranks + e->rank], FG_ERR_FORMAT,
               "%s: section \"shards\": two files of family %u for rank %u (corrupt)", path,
               e->family, e->rank);
    seen[e->family * mf->ranks + e->rank] = 1;
    /* the canonical name only: no path, no file outside the directory */
    fg_ckpt_shard_name(want, sizeof want, e->family, e->rank, mf->ranks, mf->generation);
    FG_REQUIRE(strcmp(want, e->name) == 0, FG_ERR_FORMAT,
               "%s: section \"shards\": file %u is named \"%.63s\", expected %s (corrupt)", path,
               i, e->name, want);
    for (size_t k = len; k < FG_CKPT_FILE_NAME; k++)
      FG_REQUIRE(p[k] == 0, FG_ERR_FORMAT,
                 "%s: section \"shards\": file %u's name field is not NUL-padded (corrupt)",
                 path, i);
    FG_REQUIRE(e->elements == 0 ? e->lo == -1 && e->hi == -1
                                : e->elements >= 1 && e->lo >= 0 && e->lo <= e->hi &&
                                      e->hi < space[e->family] &&
                                      e->elements <= e->hi - e->lo + 1,
               FG_ERR_FORMAT,
               "%s: section \"shards\": %s holds %lld elements in [%lld, %lld] of %lld "
               "(corrupt)", path, e->name, (long long)e->elements, (long long)e->lo,
               (long long)e->hi, (long long)space[e->family]);
    /* (each is at most the space, itself < 2^63, and there are at most 2^24 files a family;
     * a sum past the space is refused as soon as it gets there) */
    sum[e->family] += e->elements;
    FG_REQUIRE(sum[e->family] <= space[e->family], FG_ERR_FORMAT,
               "%s: section \"shards\": the %s files hold more than the %lld elements "
               "(corrupt)", path, e->family ? "features'" : "weights'",
               (long long)space[e->family]);
    /* a file holds its elements, 12 bytes each, beside its sections */
    FG_REQUIRE(e->size >= CKPT_HEAD + 4 && e->size / 12 >= (uint64_t)e->elements,
               FG_ERR_FORMAT, "%s: section \"shards\": %s is %llu bytes for %lld elements "
               "(corrupt)", path, e->name, (unsigned long long)e->size,
               (long long)e->elements);
  }
  for (int f = 0; f < 2; f++)
    FG_REQUIRE(sum[f] == space[f], FG_ERR_FORMAT,
               "%s: section \"shards\": the %s files hold %lld of %lld elements (corrupt)",
               path, f ? "features'" : "weights'", (long long)sum[f], (long long)space[f]);
cleanup:
  free(seen);
  if (st != FG_OK) fg_ckpt_manifest_free(mf);
  return st;
}

static int piece_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

fg_status fg_ckpt_runs_build(int64_t n, const int64_t *idx, const int64_t *pos, int64_t each,
                             fg_ckpt_runs *out) {
  fg_status st = FG_OK;
  int64_t *pairs = NULL, m = 0;
  memset(out, 0, sizeof *out);
  FG_ALLOC(pairs, 2 * FG_MAX(n, 1));
  for (int64_t k = 0; k < n; k++) {
    pairs[2 * k] = idx[k];
    pairs[2 * k + 1] = pos[k];
  }
  if (n > 1) qsort(pairs, (size_t)n, 2 * sizeof *pairs, piece_cmp);
  FG_ALLOC(out->start, FG_MAX(n, 1));
  FG_ALLOC(out->pos, FG_MAX(n, 1));
  FG_ALLOC(out->len, FG_MAX(n, 1));
  for (int64_t k = 0; k < n; k++) {
    const int64_t i = pairs[2 * k], p = pairs[2 * k + 1];
    const int64_t last = m - 1;
    if (m > 0 && out->start[last] + out->len[last] == i && out->pos[last] + out->len[last] == p) {
      out->len[m - 1] += each;
    } else {
      FG_REQUIRE(m == 0 || out->start[m - 1] + out->len[m - 1] <= i, FG_ERR_INTERNAL,
                 "checkpoint runs: index %lld held twice", (long long)i);
      out->start[m] = i;
      out->pos[m] = p;
      out->len[m++] = each;
    }
    out->elements += each;
  }
  out->n = m;
cleanup:
  free(pairs);
  if (st != FG_OK) fg_ckpt_runs_free(out);
  return st;
}

void fg_ckpt_runs_free(fg_ckpt_runs *r) {
  free(r->start);
  free(r->pos);
  free(r->len);
  memset(r, 0, sizeof *r);
}

fg_status fg_ckpt_shard_write(const char *path, uint32_t rank, uint32_t ranks, uint32_t family,
                              uint64_t gen, int64_t space, const fg_ckpt_runs *runs,
                              const float *const arrays[3], fg_ckpt_shard_entry *e) {
  fg_status st = FG_OK;
  fg_out out = {0};
  sink s = {NULL, 0, 0, 0};
  const uint64_t ranges_bytes = 16 * (uint64_t)runs->n, array_bytes = 4 * (uint64_t)runs->elements;
  uint32_t crc;
  long size;
  FG_REQUIRE(host_is_little_endian(), FG_ERR_UNSUPPORTED,
             "checkpoints are little-endian; this host is not");
  FG_CHECK(fg_out_open(&out, path));
  s.f = out.f;
  s.crc = crc32(0L, Z_NULL, 0);
  put(&s, ckpt_magic, 8);
  put_u32(&s, CKPT_VERSION);
  put_u32(&s, 5);
  put_section_head(&s, "shard", CKPT_SHARD_BYTES);
  put_u32(&s, rank);
  put_u32(&s, ranks);
  put_u32(&s, family);
  put_u32(&s, 0);
  put(&s, &gen, 8);
  put_i64(&s, space);
  put_section_head(&s, "ranges", ranges_bytes);
  for (int64_t i = 0; i < runs->n; i++) {
    put_i64(&s, runs->start[i]);
    put_i64(&s, runs->len[i]);
  }
  for (int a = 0; a < 3; a++) {
    static const char *const names[3] = {"values", "adam_m", "adam_v"};
    put_section_head(&s, names[a], array_bytes);
    for (int64_t i = 0; i < runs->n; i++)
      put(&s, arrays[a] + runs->pos[i], (size_t)runs->len[i] * 4);
    put_padding(&s, array_bytes);
  }
  crc = (uint32_t)s.crc;
  if (!s.failed && fwrite(&crc, 1, 4, s.f) != 4) {
    s.failed = 1;
    s.err = errno;
  }
  size = s.failed ? -1 : ftell(s.f);
  FG_REQUIRE(!s.failed && size > 0, FG_ERR_IO, "%s: write error: %s", path,
             strerror(s.failed ? s.err : errno));
  FG_CHECK(fg_out_commit(&out));
  e->size = (uint64_t)size;
  e->crc = crc;
  e->family = family;
  e->rank = rank;
  e->elements = runs->elements;
  e->lo = runs->n ? runs->start[0] : -1;
  e->hi = runs->n ? runs->start[runs->n - 1] + runs->len[runs->n - 1] - 1 : -1;
cleanup:
  if (st != FG_OK) fg_out_abort(&out);
  return st;
}

/* A shard file, checked: its ranges (n i64 pairs) and arrays (elements f32 each). */
typedef struct shard_view {
  uint32_t rank, ranks, family;
  uint64_t gen;
  int64_t space, n_ranges, elements;
  const unsigned char *ranges, *arrays[3];
} shard_view;

static fg_status shard_parse(const char *name, const unsigned char *buf, size_t size,
                             shard_view *v) {
  fg_status st = FG_OK;
  ckpt_section *secs = NULL;
  uint32_t count;
  const ckpt_section *sh, *rg, *arr[3];
  const unsigned char *p;
  int64_t next = 0;
  static const char *const names[3] = {"values", "adam_m", "adam_v"};
  memset(v, 0, sizeof *v);
  FG_REQUIRE(host_is_little_endian(), FG_ERR_UNSUPPORTED,
             "checkpoints are little-endian; this host is not");
  FG_REQUIRE(buf && size >= CKPT_HEAD + 4 && memcmp(buf, ckpt_magic, 8) == 0, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint shard (%zu bytes, bad magic or too short)", name,
             size);
  FG_REQUIRE(get_u32(buf + 8) == CKPT_VERSION, FG_ERR_UNSUPPORTED,
             "%s: checkpoint version %u, shards are version %u", name, get_u32(buf + 8),
             CKPT_VERSION);
  FG_CHECK(walk_sections(name, buf, size, &secs, &count));
  sh = find_section(secs, count, "shard");
  rg = find_section(secs, count, "ranges");
  for (int a = 0; a < 3; a++) arr[a] = find_section(secs, count, names[a]);
  FG_REQUIRE(sh && rg && arr[0] && arr[1] && arr[2], FG_ERR_FORMAT,
             "%s: not a checkpoint shard (a section of shard, ranges, values, adam_m, adam_v "
             "is missing)", name);
  FG_REQUIRE(sh->len == CKPT_SHARD_BYTES, FG_ERR_FORMAT,
             "%s: section \"shard\" has %zu bytes, expected %d", name, sh->len, CKPT_SHARD_BYTES);
  p = buf + sh->at + CKPT_SECTION_HEAD;
  v->rank = get_u32(p);
  v->ranks = get_u32(p + 4);
  v->family = get_u32(p + 8);
  memcpy(&v->gen, p + 16, 8);
  v->space = get_i64(p + 24);
  FG_REQUIRE(v->ranks >= 1 && v->ranks <= CKPT_MAX_RANKS && v->rank < v->ranks &&
                 v->family <= FG_CKPT_FEATURES && v->space >= 0,
             FG_ERR_FORMAT, "%s: section \"shard\": rank %u of %u, family %u, %lld elements "
             "(corrupt)", name, v->rank, v->ranks, v->family, (long long)v->space);
  FG_REQUIRE(rg->len % 16 == 0, FG_ERR_FORMAT,
             "%s: section \"ranges\" has %zu bytes, not a multiple of 16", name, rg->len);
  v->n_ranges = (int64_t)(rg->len / 16);
  v->ranges = buf + rg->at + CKPT_SECTION_HEAD;
  /* sorted, disjoint, nonempty, inside the space: each start at or past the last end */
  for (int64_t i = 0; i < v->n_ranges; i++) {
    const int64_t a = get_i64(v->ranges + 16 * i), n = get_i64(v->ranges + 16 * i + 8);
    FG_REQUIRE(a >= next && n >= 1 && n <= v->space - a, FG_ERR_FORMAT,
               "%s: section \"ranges\": range %lld is [%lld, +%lld) (unsorted, overlapping or "
               "past %lld: corrupt)", name, (long long)i, (long long)a, (long long)n,
               (long long)v->space);
    next = a + n;
    v->elements += n;
  }
  for (int a = 0; a < 3; a++) {
    FG_REQUIRE(arr[a]->len % 4 == 0 && (uint64_t)(arr[a]->len / 4) == (uint64_t)v->elements,
               FG_ERR_FORMAT, "%s: section \"%s\" has %zu bytes, the ranges hold %lld float32 "
               "values", name, names[a], arr[a]->len, (long long)v->elements);
    v->arrays[a] = buf + arr[a]->at + CKPT_SECTION_HEAD;
  }
cleanup:
  free(secs);
  return st;
}

/* What the manifest says of the file (e; ranks, gen, space) against the file itself. */
static fg_status shard_against(const char *name, const shard_view *v, const fg_ckpt_shard_entry *e,
                               uint32_t ranks, uint64_t gen, int64_t space) {
  fg_status st = FG_OK;
  const int64_t lo = v->n_ranges ? get_i64(v->ranges) : -1;
  const int64_t hi = v->n_ranges ? get_i64(v->ranges + 16 * (v->n_ranges - 1)) +
                                       get_i64(v->ranges + 16 * (v->n_ranges - 1) + 8) - 1
                                 : -1;
  FG_REQUIRE(v->rank == e->rank && v->ranks == ranks && v->family == e->family && v->gen == gen,
             FG_ERR_FORMAT, "%s: the shard of rank %u of %u, family %u, generation %llu; the "
             "manifest lists rank %u of %u, family %u, generation %llu", name, v->rank, v->ranks,
             v->family, (unsigned long long)v->gen, e->rank, ranks, e->family,
             (unsigned long long)gen);
  FG_REQUIRE(v->space == space && v->elements == e->elements && lo == e->lo && hi == e->hi,
             FG_ERR_FORMAT, "%s: holds %lld elements in [%lld, %lld] of %lld; the manifest "
             "says %lld in [%lld, %lld] of %lld", name, (long long)v->elements, (long long)lo,
             (long long)hi, (long long)v->space, (long long)e->elements, (long long)e->lo,
             (long long)e->hi, (long long)space);
cleanup:
  return st;
}

fg_status fg_ckpt_shard_check_mem(const void *buf, size_t len, const char *name,
                                  const fg_ckpt_shard_entry *e, uint32_t ranks, uint64_t gen,
                                  int64_t space) {
  fg_status st = FG_OK;
  shard_view v;
  FG_CHECK(shard_parse(name, buf, len, &v));
  if (e) FG_CHECK(shard_against(name, &v, e, ranks, gen, space));
cleanup:
  return st;
}

fg_status fg_ckpt_manifest_write(const char *dir, const fg_ckpt_state *s, const fg_ckpt_meta *meta,
                                 const fg_ckpt_manifest *mf) {
  fg_status st = FG_OK;
  char path[4200];
  FG_REQUIRE(join_path(path, sizeof path, dir, "manifest"), FG_ERR_INVALID_ARG,
             "%s: the directory's name is too long", dir);
  FG_CHECK(write_container(path, s, meta, mf));
cleanup:
  return st;
}

fg_status fg_ckpt_manifest_read(const char *dir, const fg_ckpt_state *s, fg_ckpt_meta *meta,
                                fg_ckpt_manifest *mf) {
  fg_status st = FG_OK;
  char path[4200];
  unsigned char *buf = NULL;
  size_t size = 0;
  ckpt_view v;
  memset(&v, 0, sizeof v);
  memset(mf, 0, sizeof *mf);
  FG_CHECK(manifest_path(dir, path, sizeof path));
  FG_CHECK(read_whole(path, &buf, &size));
  FG_CHECK(parse(path, buf, size, &v));
  FG_REQUIRE(v.sharded, FG_ERR_FORMAT,
             "%s: a single-file checkpoint, not a sharded checkpoint's manifest", path);
  FG_CHECK(take_view(path, &v, s, meta)); /* (copies no array: sharded) */
  *mf = v.mf;
  v.mf.shards = NULL;
cleanup:
  fg_ckpt_manifest_free(&v.mf);
  free(buf);
  return st;
}

/* The first run of need that ends past index x (need->n when none). */
static int64_t first_run_after(const fg_ckpt_runs *need, int64_t x) {
  int64_t lo = 0, hi = need->n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (need->start[mid] + need->len[mid] <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

fg_status fg_ckpt_shards_load(const char *dir, const fg_ckpt_manifest *mf, uint32_t family,
                              uint32_t rank, int64_t space, const fg_ckpt_runs *need,
                              float *const dst[3], int *files_read) {
  fg_status st = FG_OK;
  uint8_t *got = NULL;     /* (need->elements) 1 once an element has its value */
  int64_t *off = NULL;     /* (need->n) run i's first element in got */
  int64_t missing = need->elements;
  unsigned char *buf = NULL;
  char path[4200];
  uint32_t order_n = 0, *order = NULL;
  *files_read = 0;
  FG_CALLOC(got, FG_MAX(need->elements, 1));
  FG_ALLOC(off, FG_MAX(need->n, 1));
  FG_ALLOC(order, FG_MAX(mf->n_shards, 1));
  for (int64_t i = 0, o = 0; i < need->n; o += need->len[i], i++) off[i] = o;
  /* this rank's own file first: at the same P and layout it holds everything needed */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < mf->n_shards; i++)
      if (mf->shards[i].family == family && (mf->shards[i].rank == rank) == (pass == 0))
        order[order_n++] = i;
  for (uint32_t f = 0; f < order_n && missing > 0; f++) {
    const fg_ckpt_shard_entry *e = &mf->shards[order[f]];
    shard_view v;
    struct stat sb;
    size_t size = 0;
    int64_t i0, wanted = 0;
    if (e->elements == 0) continue;
    /* read a file only when some element it may hold is still missing */
    i0 = first_run_after(need, e->lo);
    for (int64_t i = i0; i < need->n && need->start[i] <= e->hi && !wanted; i++) {
      const int64_t a = FG_MAX(need->start[i], e->lo);
      const int64_t b = FG_MIN(need->start[i] + need->len[i] - 1, e->hi);
      for (int64_t x = a; x <= b && !wanted; x++) wanted = !got[off[i] + x - need->start[i]];
    }
    if (!wanted) continue;
    FG_REQUIRE(join_path(path, sizeof path, dir, e->name), FG_ERR_INVALID_ARG,
               "%s: the directory's name is too long", dir);
    FG_REQUIRE(stat(path, &sb) == 0, FG_ERR_IO, "%s: a shard the manifest lists: %s", path,
               strerror(errno));
    FG_REQUIRE(S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == e->size, FG_ERR_FORMAT,
               "%s: %lld bytes, the manifest says %llu (truncated or replaced)", path,
               (long long)sb.st_size, (unsigned long long)e->size);
    FG_CHECK(read_whole(path, &buf, &size));
    FG_REQUIRE(size == e->size && get_u32(buf + size - 4) == e->crc, FG_ERR_FORMAT,
               "%s: checksum %08x, the manifest says %08x (the file is corrupt or replaced)",
               path, (unsigned)get_u32(buf + size - 4), (unsigned)e->crc);
    FG_CHECK(shard_parse(path, buf, size, &v));
    FG_CHECK(shard_against(path, &v, e, mf->ranks, mf->generation, space));
    (*files_read)++;
    /* copy the overlaps of the file's ranges with the runs needed (both sorted) */
    /* vbase: range r's first value in the arrays */
    for (int64_t r = 0, i = i0, vbase = 0; r < v.n_ranges && i < need->n;) {
      const int64_t a0 = get_i64(v.ranges + 16 * r), a1 = a0 + get_i64(v.ranges + 16 * r + 8);
      const int64_t b0 = need->start[i], b1 = b0 + need->len[i];
      const int64_t lo = FG_MAX(a0, b0), hi = FG_MIN(a1, b1);
      if (lo < hi) {
        const size_t from = (size_t)(lo - a0), at = (size_t)(need->pos[i] + lo - b0);
        for (int a = 0; a < 3; a++)
          memcpy(dst[a] + at, v.arrays[a] + 4 * ((size_t)vbase + from), (size_t)(hi - lo) * 4);
        for (int64_t x = lo; x < hi; x++) {
          uint8_t *g = &got[off[i] + x - b0];
          missing -= !*g;
          *g = 1;
        }
      }
      if (a1 <= b1) {
        vbase += a1 - a0;
        r++;
      } else {
        i++;
      }
    }
    free(buf);
    buf = NULL;
  }
  if (missing > 0) {
    int64_t x = -1;
    for (int64_t i = 0; i < need->n && x < 0; i++)
      for (int64_t t = 0; t < need->len[i] && x < 0; t++)
        if (!got[off[i] + t]) x = need->start[i] + t;
    FG_FAIL(FG_ERR_FORMAT, "%s: no shard holds %s element %lld (%lld missing; corrupt)", dir,
            family == FG_CKPT_FEATURES ? "learned-feature" : "weight", (long long)x,
            (long long)missing);
  }
cleanup:
  free(buf);
  free(got);
  free(off);
  free(order);
  return st;
}

/* The generation in a shard file's name, or 0 when the name is not one. */
static uint64_t name_generation(const char *name) {
  unsigned r, p;
  unsigned long long g;
  int end = 0;
  if ((sscanf(name, "shard-%u-of-%u.g%llu.ckpt%n", &r, &p, &g, &end) == 3 ||
       sscanf(name, "features-%u-of-%u.g%llu.ckpt%n", &r, &p, &g, &end) == 3) &&
      end > 0 && name[end] == '\0')
    return (uint64_t)g;
  return 0;
}

fg_status fg_ckpt_next_generation(const char *dir, uint64_t *gen) {
  fg_status st = FG_OK;
  DIR *dp = opendir(dir);
  struct dirent *de;
  uint64_t top = 0;
  FG_REQUIRE(dp, FG_ERR_IO, "%s: cannot list the checkpoint directory: %s", dir,
             strerror(errno));
  while ((de = readdir(dp)) != NULL) top = FG_MAX(top, name_generation(de->d_name));
  *gen = top + 1;
cleanup:
  if (dp) closedir(dp);
  return st;
}

void fg_ckpt_prune(const char *dir, uint64_t keep) {
  DIR *dp = opendir(dir);
  struct dirent *de;
  char path[4200];
  if (!dp) return;
  while ((de = readdir(dp)) != NULL) {
    const uint64_t g = name_generation(de->d_name);
    if (g != 0 && g != keep && join_path(path, sizeof path, dir, de->d_name)) unlink(path);
  }
  closedir(dp);
}
