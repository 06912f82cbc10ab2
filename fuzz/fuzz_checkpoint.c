/* fuzz_checkpoint.c -- libFuzzer target: the checkpoint reader (fg_checkpoint_inspect_mem and
 * fg_checkpoint_read_mem), which also reads a sharded checkpoint's manifest, and the shard
 * file's checks (fg_ckpt_shard_check_mem). Each input is read as given (the checksum refuses
 * nearly every mutation) and again with its last 4 bytes made the right CRC-32, so that the
 * fields behind the checksum are reached too. What a read accepts must hold up: its fields in
 * their ranges, a read against the model it describes succeeds with the same meta, and a
 * manifest lists files that hold each element once. */
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"
#include "train/fg_checkpoint.h"

/* inputs longer than this are not given a fixed CRC (the seeds are about 1 KiB) */
#define FIX_MAX ((size_t)1 << 20)

static void read_one(const unsigned char *buf, size_t len) {
  fg_ckpt_info info;
  fg_ckpt_meta meta;
  fg_ckpt_state s;
  fg_status st = fg_checkpoint_inspect_mem(buf, len, "fuzz.ckpt", &info);
  if (st != FG_OK) {
    FUZZ_ASSERT(st == FG_ERR_FORMAT || st == FG_ERR_UNSUPPORTED || st == FG_ERR_NOMEM);
    fg_ckpt_info_free(&info);
    return;
  }
  FUZZ_ASSERT(info.layers >= 1 && info.widths && info.n_params >= 1);
  for (int l = 0; l <= info.layers; l++) FUZZ_ASSERT(info.widths[l] >= 1);
  if (info.sharded) { /* a manifest: its files hold every element once, by canonical names */
    const fg_ckpt_manifest *mf = &info.manifest;
    int64_t sum[2] = {0, 0};
    FUZZ_ASSERT(mf->ranks >= 1 && mf->generation >= 1 && mf->shards);
    FUZZ_ASSERT(mf->n_shards == mf->ranks * (mf->feat_rows > 0 ? 2u : 1u));
    for (uint32_t i = 0; i < mf->n_shards; i++) {
      char want[FG_CKPT_FILE_NAME];
      const fg_ckpt_shard_entry *e = &mf->shards[i];
      fg_ckpt_shard_name(want, sizeof want, e->family, e->rank, mf->ranks, mf->generation);
      FUZZ_ASSERT(strcmp(want, e->name) == 0 && !strchr(e->name, '/'));
      FUZZ_ASSERT(e->elements == 0 || (e->lo >= 0 && e->lo <= e->hi));
      sum[e->family] += e->elements;
    }
    FUZZ_ASSERT(sum[0] == info.n_params && sum[1] == mf->feat_rows * mf->feat_cols);
    /* a manifest is no single file: refused by a read, naming it */
    memset(&s, 0, sizeof s);
    s.model = info.model;
    s.layers = info.layers;
    s.widths = info.widths;
    s.n_params = info.n_params;
    FUZZ_ASSERT(fg_checkpoint_read_mem(buf, len, "fuzz.ckpt", &s, &meta) == FG_ERR_INVALID_ARG);
    fg_ckpt_info_free(&info);
    return;
  }
  /* three arrays of n_params floats lie in the file */
  FUZZ_ASSERT((uint64_t)info.n_params <= len / 12);
  FUZZ_ASSERT(info.meta.epoch >= 0 && info.meta.epoch < INT64_C(2147483647));
  FUZZ_ASSERT(info.meta.adam_t == info.meta.epoch);
  FUZZ_ASSERT(info.meta.best_epoch >= 0 && info.meta.best_epoch <= info.meta.epoch);
  FUZZ_ASSERT(info.meta.best_valid_acc >= 0 && info.meta.best_valid_acc <= 1);
  FUZZ_ASSERT(info.meta.best_test_acc >= 0 && info.meta.best_test_acc <= 1);
  FUZZ_ASSERT(info.meta.best_valid_loss >= 0);
  if (info.has_options)
    FUZZ_ASSERT(info.options.lr > 0 && info.options.dropout >= 0 && info.options.dropout < 1);
  if (info.has_dataset) FUZZ_ASSERT(info.dataset.nodes >= 1);
  /* the "run" section's text, whole: no NUL cut it short */
  if (info.run_record) FUZZ_ASSERT(strlen(info.run_record) + 24 < len);

  /* read against the model the file describes: accepted, the same meta */
  memset(&s, 0, sizeof s);
  s.model = info.model;
  s.layers = info.layers;
  s.widths = info.widths;
  s.n_params = info.n_params;
  s.options = info.has_options ? &info.options : NULL;
  s.dataset = info.has_dataset ? &info.dataset : NULL;
  s.params = malloc((size_t)info.n_params * sizeof(float));
  s.adam_m = malloc((size_t)info.n_params * sizeof(float));
  s.adam_v = malloc((size_t)info.n_params * sizeof(float));
  if (s.params && s.adam_m && s.adam_v) {
    FUZZ_ASSERT(fg_checkpoint_read_mem(buf, len, "fuzz.ckpt", &s, &meta) == FG_OK);
    FUZZ_ASSERT(meta.epoch == info.meta.epoch && meta.seed == info.meta.seed);
    /* and refused by a run with other options */
    if (info.has_options) {
      fg_ckpt_options other = info.options;
      other.dropout = other.dropout == 0 ? 0.5 : 0;
      s.options = &other;
      FUZZ_ASSERT(fg_checkpoint_read_mem(buf, len, "fuzz.ckpt", &s, &meta) ==
                  FG_ERR_INVALID_ARG);
    }
  }
  free(s.params);
  free(s.adam_m);
  free(s.adam_v);
  fg_ckpt_info_free(&info);
}

/* A shard file's own checks: accepted or refused with a format status, never a crash. */
static void read_shard(const unsigned char *buf, size_t len) {
  const fg_status st = fg_ckpt_shard_check_mem(buf, len, "fuzz.shard", NULL, 0, 0, 0);
  FUZZ_ASSERT(st == FG_OK || st == FG_ERR_FORMAT || st == FG_ERR_UNSUPPORTED ||
              st == FG_ERR_NOMEM);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_init();
  read_one(data, size);
  read_shard(data, size);
  if (size > 4 && size <= FIX_MAX) {
    unsigned char *copy = malloc(size);
    uint32_t crc;
    if (!copy) return 0;
    memcpy(copy, data, size);
    crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), copy, (uInt)(size - 4));
    memcpy(copy + size - 4, &crc, 4); /* (checkpoints are little-endian, as the fuzzing host) */
    read_one(copy, size);
    read_shard(copy, size);
    free(copy);
  }
  return 0;
}
