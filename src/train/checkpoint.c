/* checkpoint.c -- the checkpoint file (layout in fg_train.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "train/fg_train.h"

static const char ckpt_magic[8] = {'F', 'G', 'C', 'K', 'P', 'T', '1', '\n'};
#define CKPT_VERSION 1u
#define CKPT_FIXED 80

/* A writer that keeps a running CRC and remembers the first failure. */
typedef struct sink {
  FILE *f;
  uLong crc;
  int failed;
} sink;

static void put(sink *s, const void *p, size_t n) {
  if (s->failed || n == 0) return;
  s->crc = crc32(s->crc, p, (uInt)n);
  if (fwrite(p, 1, n, s->f) != n) s->failed = 1;
}

static void put_floats(sink *s, const float *p, int64_t n) {
  /* crc32 takes uInt lengths: feed large arrays in pieces */
  const char *c = (const char *)p;
  size_t bytes = (size_t)n * sizeof(float);
  while (bytes > 0 && !s->failed) {
    size_t len = bytes > (1u << 30) ? (1u << 30) : bytes;
    put(s, c, len);
    c += len;
    bytes -= len;
  }
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

fg_status fg_checkpoint_write(const char *path, const fg_gcn *m, const fg_ckpt_meta *meta) {
  fg_status st = FG_OK;
  char tmp[4096];
  sink s = {NULL, 0, 0};
  uint32_t u32;
  int64_t i64;
  FG_REQUIRE(host_is_little_endian(), FG_ERR_UNSUPPORTED,
             "checkpoints are little-endian; this host is not");
  FG_REQUIRE(strlen(path) + 5 < sizeof tmp, FG_ERR_INVALID_ARG, "checkpoint path too long");
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  s.f = fopen(tmp, "wb");
  FG_REQUIRE(s.f, FG_ERR_IO, "%s: cannot create checkpoint: %s", tmp, strerror(errno));
  s.crc = crc32(0L, Z_NULL, 0);
  put(&s, ckpt_magic, 8);
  u32 = CKPT_VERSION;
  put(&s, &u32, 4);
  u32 = (uint32_t)m->layers;
  put(&s, &u32, 4);
  put(&s, &meta->seed, 8);
  put(&s, &meta->epoch, 8);
  put(&s, &meta->adam_t, 8);
  i64 = m->n_params;
  put(&s, &i64, 8);
  put(&s, &meta->best_epoch, 8);
  put(&s, &meta->best_valid_acc, 8);
  put(&s, &meta->best_valid_loss, 8);
  put(&s, &meta->best_test_acc, 8);
  put(&s, m->widths, (size_t)(m->layers + 1) * 8);
  put_floats(&s, m->params, m->n_params);
  put_floats(&s, m->adam_m, m->n_params);
  put_floats(&s, m->adam_v, m->n_params);
  u32 = (uint32_t)s.crc;
  if (!s.failed && fwrite(&u32, 1, 4, s.f) != 4) s.failed = 1;
  if (fflush(s.f) != 0) s.failed = 1;
  FG_REQUIRE(!s.failed, FG_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
  FG_REQUIRE(fclose(s.f) == 0, FG_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
  s.f = NULL;
  FG_REQUIRE(rename(tmp, path) == 0, FG_ERR_IO, "cannot rename %s to %s: %s", tmp, path,
             strerror(errno));
cleanup:
  if (s.f) {
    fclose(s.f);
    remove(tmp);
  }
  return st;
}

fg_status fg_checkpoint_read(const char *path, fg_gcn *m, fg_ckpt_meta *meta) {
  fg_status st = FG_OK;
  FILE *f = NULL;
  unsigned char *buf = NULL;
  long size;
  size_t expect;
  uint32_t version, layers, stored_crc;
  int64_t n_params;
  uLong crc;
  const unsigned char *p;
  f = fopen(path, "rb");
  FG_REQUIRE(f, FG_ERR_IO, "%s: cannot open checkpoint: %s", path, strerror(errno));
  FG_REQUIRE(fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0, FG_ERR_IO,
             "%s: cannot determine size", path);
  rewind(f);
  FG_REQUIRE(size >= CKPT_FIXED + 4, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint (%ld bytes, too short)", path, size);
  FG_ALLOC(buf, size);
  FG_REQUIRE(fread(buf, 1, (size_t)size, f) == (size_t)size, FG_ERR_IO, "%s: read failed",
             path);
  FG_REQUIRE(memcmp(buf, ckpt_magic, 8) == 0, FG_ERR_FORMAT,
             "%s: not a fullgraph checkpoint (bad magic at byte 0)", path);
  memcpy(&version, buf + 8, 4);
  FG_REQUIRE(version == CKPT_VERSION, FG_ERR_UNSUPPORTED,
             "%s: checkpoint version %u, this build reads version %u", path, version,
             CKPT_VERSION);
  memcpy(&layers, buf + 12, 4);
  memcpy(&n_params, buf + 40, 8);
  FG_REQUIRE(layers >= 1 && layers < 4096 && n_params > 0, FG_ERR_FORMAT,
             "%s: corrupt header (layers %u, parameters %lld)", path, layers,
             (long long)n_params);
  expect = CKPT_FIXED + 8 * ((size_t)layers + 1) + 12 * (size_t)n_params + 4;
  FG_REQUIRE((size_t)size == expect, FG_ERR_FORMAT,
             "%s: size %ld bytes, header implies %zu (truncated or corrupt)", path, size, expect);
  memcpy(&stored_crc, buf + size - 4, 4);
  crc = crc32(0L, Z_NULL, 0);
  for (size_t off = 0; off < (size_t)size - 4; off += (1u << 30)) {
    size_t len = FG_MIN((size_t)size - 4 - off, (size_t)1 << 30);
    crc = crc32(crc, buf + off, (uInt)len);
  }
  FG_REQUIRE((uint32_t)crc == stored_crc, FG_ERR_FORMAT,
             "%s: checksum mismatch (stored %08x, computed %08x): the file is corrupt", path,
             stored_crc, (unsigned)crc);
  FG_REQUIRE((int)layers == m->layers, FG_ERR_INVALID_ARG,
             "%s: checkpoint has %u layers, the model has %d", path, layers, m->layers);
  for (uint32_t l = 0; l <= layers; l++) {
    int64_t w;
    memcpy(&w, buf + CKPT_FIXED + 8 * l, 8);
    FG_REQUIRE(w == m->widths[l], FG_ERR_INVALID_ARG,
               "%s: checkpoint layer width %u is %lld, the model's is %lld", path, l,
               (long long)w, (long long)m->widths[l]);
  }
  FG_REQUIRE(n_params == m->n_params, FG_ERR_INVALID_ARG,
             "%s: checkpoint has %lld parameters, the model %lld", path, (long long)n_params,
             (long long)m->n_params);
  memcpy(&meta->seed, buf + 16, 8);
  memcpy(&meta->epoch, buf + 24, 8);
  memcpy(&meta->adam_t, buf + 32, 8);
  memcpy(&meta->best_epoch, buf + 48, 8);
  memcpy(&meta->best_valid_acc, buf + 56, 8);
  memcpy(&meta->best_valid_loss, buf + 64, 8);
  memcpy(&meta->best_test_acc, buf + 72, 8);
  p = buf + CKPT_FIXED + 8 * ((size_t)layers + 1);
  memcpy(m->params, p, (size_t)n_params * 4);
  memcpy(m->adam_m, p + 4 * (size_t)n_params, (size_t)n_params * 4);
  memcpy(m->adam_v, p + 8 * (size_t)n_params, (size_t)n_params * 4);
cleanup:
  if (f) fclose(f);
  free(buf);
  return st;
}
