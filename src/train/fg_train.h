/* fg_train.h -- checkpoints (the training loop itself is fg_train in trainer.c).
 *
 * Checkpoint file, version 1, little-endian:
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
#ifndef FG_TRAIN_H
#define FG_TRAIN_H

#include <stdint.h>

#include "core/fg_core.h"
#include "model/fg_model.h"

typedef struct fg_ckpt_meta {
  uint64_t seed;
  int64_t epoch;
  int64_t adam_t;
  int64_t best_epoch;
  double best_valid_acc, best_valid_loss, best_test_acc;
} fg_ckpt_meta;

/* Write atomically (to path.tmp, then rename). Not collective: call on one rank. */
fg_status fg_checkpoint_write(const char *path, const fg_gcn *m, const fg_ckpt_meta *meta);
/* Read into m (whose dimensions must match the file's) and meta. Not collective. */
fg_status fg_checkpoint_read(const char *path, fg_gcn *m, fg_ckpt_meta *meta);

#endif /* FG_TRAIN_H */
