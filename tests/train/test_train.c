/* test_train.c -- training loop behaviour through the public API: resume is bit-for-bit,
 * checkpoints detect corruption and mismatched models, the metrics file has its documented
 * keys, outputs have the right shapes, bad configurations are refused. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fullgraph.h"
#include "testutil.h"

static char tmpdir[256];

static char *path_in(const char *name) {
  static char buf[8][512];
  static int k = 0;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}

static unsigned char *slurp(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  unsigned char *b;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  rewind(f);
  b = malloc((size_t)*len + 1);
  if (fread(b, 1, (size_t)*len, f) != (size_t)*len) *len = -1;
  b[*len > 0 ? *len : 0] = 0;
  fclose(f);
  return b;
}

static int same_file(const char *a, const char *b) {
  long la = 0, lb = 0;
  unsigned char *x = slurp(a, &la), *y = slurp(b, &lb);
  int same = x && y && la == lb && la > 0 && memcmp(x, y, (size_t)la) == 0;
  free(x);
  free(y);
  return same;
}

/* The payload of section `name` of a version-2 checkpoint's bytes b[0, len) into *at and *n;
 * 0 when the file has no such section. */
static int ckpt_section(const unsigned char *b, long len, const char *name, long *at, long *n) {
  uint32_t count;
  long off = 16;
  if (len < 20) return 0;
  memcpy(&count, b + 12, 4);
  for (uint32_t i = 0; i < count && off + 24 <= len - 4; i++) {
    uint64_t plen;
    memcpy(&plen, b + off + 16, 8);
    if (strncmp((const char *)b + off, name, 16) == 0) {
      *at = off + 24;
      *n = (long)plen;
      return 1;
    }
    off += 24 + (long)((plen + 7) / 8 * 8);
  }
  return 0;
}

/* Two checkpoints hold the same state: every section but "run" (the run record of the run that
 * wrote it: a resumed run's differs from a straight one's) byte for byte. */
static int same_state(const char *a, const char *b) {
  static const char *const secs[] = {"meta", "model", "options", "dataset",
                                     "widths", "params", "adam_m", "adam_v"};
  long la = 0, lb = 0;
  unsigned char *x = slurp(a, &la), *y = slurp(b, &lb);
  int same = x && y && la > 0 && lb > 0;
  for (size_t k = 0; same && k < sizeof secs / sizeof secs[0]; k++) {
    long ax = 0, nx = -1, ay = 0, ny = -2;
    same = ckpt_section(x, la, secs[k], &ax, &nx) && ckpt_section(y, lb, secs[k], &ay, &ny) &&
           nx == ny && memcmp(x + ax, y + ay, (size_t)nx) == 0;
  }
  free(x);
  free(y);
  return same;
}

static fg_train_config quiet_config(void) {
  fg_train_config c = fg_train_config_default();
  c.verbose = 0;
  c.normalize_features = 1;
  c.seed = 3;
  return c;
}

int main(int argc, char **argv) {
  fg_dataset *ds = NULL;
  fg_load_config lc = fg_load_config_default();
  fg_train_result r1, r2;
  double hist_a[10], hist_b[10];
  MPI_Init(&argc, &argv);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fg_test_train_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ds));
  if (!ds) return fg_test_finish("test_train");

  /* 10 epochs straight, checkpoint at the end, predictions */
  {
    fg_train_config c = quiet_config();
    c.epochs = 10;
    c.checkpoint_path = path_in("straight.ckpt");
    c.predictions_path = path_in("straight.npy");
    c.metrics_path = path_in("straight.jsonl");
    c.loss_history = hist_a;
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r1));
  }
  /* 5 epochs, checkpoint, then resume to 10 */
  {
    fg_train_config c = quiet_config();
    c.epochs = 5;
    c.checkpoint_path = path_in("half.ckpt");
    c.checkpoint_every = 5;
    c.loss_history = hist_b;
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r2));
    c.epochs = 10;
    c.resume_path = path_in("half.ckpt");
    c.checkpoint_path = path_in("resumed.ckpt");
    c.predictions_path = path_in("resumed.npy");
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r2));
  }
  for (int e = 0; e < 10; e++)
    EXPECT_MSG(hist_a[e] == hist_b[e], "epoch %d loss %.17g vs resumed %.17g", e + 1, hist_a[e],
               hist_b[e]);
  EXPECT(same_state(path_in("straight.ckpt"), path_in("resumed.ckpt")));
  EXPECT(same_file(path_in("straight.npy"), path_in("resumed.npy")));
  EXPECT(r1.best_epoch == r2.best_epoch && r1.test_acc == r2.test_acc);

  /* BatchNorm: the running statistics, which the evaluation forward (and so the predictions)
   * uses, are parameters the checkpoint carries; a resume is bit for bit */
  {
    double ha[10], hb[10];
    fg_train_config c = quiet_config();
    c.norm = "batch";
    c.epochs = 10;
    c.checkpoint_path = path_in("bn_straight.ckpt");
    c.predictions_path = path_in("bn_straight.npy");
    c.loss_history = ha;
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r1));
    c = quiet_config();
    c.norm = "batch";
    c.epochs = 5;
    c.checkpoint_path = path_in("bn_half.ckpt");
    c.loss_history = hb;
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r2));
    c.epochs = 10;
    c.resume_path = path_in("bn_half.ckpt");
    c.checkpoint_path = path_in("bn_resumed.ckpt");
    c.predictions_path = path_in("bn_resumed.npy");
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r2));
    for (int e = 0; e < 10; e++)
      EXPECT_MSG(ha[e] == hb[e], "batch norm: epoch %d loss %.17g vs resumed %.17g", e + 1, ha[e],
                 hb[e]);
    EXPECT(same_state(path_in("bn_straight.ckpt"), path_in("bn_resumed.ckpt")));
    EXPECT(same_file(path_in("bn_straight.npy"), path_in("bn_resumed.npy")));
    EXPECT(r1.best_epoch == r2.best_epoch && r1.test_acc == r2.test_acc &&
           r1.final_valid_acc == r2.final_valid_acc);
  }

  /* predictions: N x C float32 .npy */
  {
    long len = 0;
    unsigned char *b = slurp(path_in("straight.npy"), &len);
    EXPECT(b && len > 10 && memcmp(b, "\x93NUMPY", 6) == 0);
    EXPECT(b && strstr((char *)b + 10, "'shape': (2708, 7)") != NULL);
    EXPECT(b && strstr((char *)b + 10, "<f4") != NULL);
    EXPECT(len == 128 + 2708L * 7 * 4 || len == 64 + 2708L * 7 * 4 || len > 2708L * 7 * 4);
    free(b);
  }
  /* metrics: the run record, 10 epoch objects with the documented keys, then the final one */
  {
    long len = 0;
    char *b = (char *)slurp(path_in("straight.jsonl"), &len);
    int lines = 0;
    const char *keys[] = {"\"epoch\"", "\"loss\"", "\"train_acc\"", "\"valid_acc\"",
                          "\"test_acc\"", "\"seconds\"", "\"seconds_spmm\"", "\"seconds_gemm\""};
    for (char *line = b ? strtok(b, "\n") : NULL; line; line = strtok(NULL, "\n")) {
      EXPECT(line[0] == '{' && line[strlen(line) - 1] == '}');
      if (lines++ == 0) {
        EXPECT(strncmp(line, "{\"run\": {", 9) == 0);
        continue;
      }
      if (lines <= 11)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
          EXPECT_MSG(strstr(line, keys[k]) != NULL, "line %d lacks %s", lines, keys[k]);
      else
        EXPECT(strstr(line, "\"final\": true") && strstr(line, "\"best_epoch\"") &&
               strstr(line, "\"test_acc\""));
    }
    EXPECT_MSG(lines == 12, "metrics has %d lines", lines);
    free(b);
  }
  /* a corrupted checkpoint is refused with a message */
  {
    long len = 0;
    unsigned char *b = slurp(path_in("half.ckpt"), &len);
    FILE *f = fopen(path_in("corrupt.ckpt"), "wb");
    fg_train_config c = quiet_config();
    b[len / 2] ^= 0x40;
    fwrite(b, 1, (size_t)len, f);
    fclose(f);
    free(b);
    c.epochs = 6;
    c.resume_path = path_in("corrupt.ckpt");
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("checksum mismatch"));
    /* truncated */
    f = fopen(path_in("short.ckpt"), "wb");
    fwrite("FGCKPT1\n", 1, 8, f);
    fclose(f);
    c.resume_path = path_in("short.ckpt");
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("too short"));
    /* a different model */
    c = quiet_config();
    c.epochs = 6;
    c.hidden = 32;
    c.resume_path = path_in("half.ckpt");
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("width"));
    /* a different seed */
    c = quiet_config();
    c.epochs = 6;
    c.seed = 4;
    c.resume_path = path_in("half.ckpt");
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("--seed"));
  }
  /* bad configurations */
  {
    fg_train_config c = quiet_config();
    c.dropout = 1.0;
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("--dropout"));
    c = quiet_config();
    c.lr = -1;
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    c = quiet_config();
    c.layers = 0;
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    c = quiet_config();
    c.scheme = "nope";
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("unknown scheme"));
    /* a learning rate that makes the loss blow up is reported, not printed as a number */
    c = quiet_config();
    c.lr = 1e30;
    c.epochs = 30;
    c.dropout = 0;
    c.weight_decay = 0;
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_NUMERIC);
    EXPECT(fg_test_error_contains("training loss is"));
  }
  /* checked before anything is read: epochs >= 1, --checkpoint-every with a checkpoint, paths */
  {
    fg_train_config c = quiet_config();
    c.epochs = 0;
    EXPECT(fg_train_config_check(&c, 1) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("--epochs must be >= 1"));
    c = quiet_config();
    c.checkpoint_every = 2;
    EXPECT(fg_train_config_check(&c, 1) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("needs --checkpoint"));
    c = quiet_config();
    c.metrics_path = path_in("no/such/dir/m.jsonl");
    EXPECT(fg_train_config_check(&c, 1) == FG_ERR_IO);
    EXPECT(fg_test_error_contains("No such file or directory"));
    c = quiet_config();
    c.checkpoint_path = tmpdir;
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("is a directory"));
    c = quiet_config();
    c.predictions_path = c.embeddings_path = path_in("same.npy");
    EXPECT(fg_train_config_check(&c, 1) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("name the same file"));
    c = quiet_config();
    c.scheme = "3d";
    c.grid = "2x1x1";
    EXPECT(fg_train_config_check(&c, 1) == FG_ERR_INVALID_ARG);
    c.grid = "2x2x1";
    EXPECT_OK(fg_train_config_check(&c, 4));
  }
  /* a stop request (what a SIGUSR1 or SIGTERM handler makes) ends the run after the epoch in
   * progress with FG_STOPPED and its checkpoint written; the request is then forgotten, and the
   * resumed run equals an uninterrupted one */
  {
    fg_train_config c = quiet_config();
    double h_stop[10], h_full[10];
    c.epochs = 10;
    c.checkpoint_path = path_in("stopped.ckpt");
    c.metrics_path = path_in("stopped.jsonl");
    c.loss_history = h_stop;
    fg_request_stop();
    EXPECT(fg_stop_requested());
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r2) == FG_STOPPED);
    EXPECT(!fg_stop_requested());
    EXPECT(r2.epochs_run == 1);
    c.resume_path = path_in("stopped.ckpt");
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r2));
    EXPECT(r2.epochs_run == 9);
    c = quiet_config();
    c.epochs = 10;
    c.loss_history = h_full;
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r1));
    for (int e = 0; e < 10; e++)
      EXPECT_MSG(h_stop[e] == h_full[e], "epoch %d loss %.17g vs stopped and resumed %.17g", e + 1,
                 h_full[e], h_stop[e]);
    EXPECT(r1.best_epoch == r2.best_epoch && r1.test_acc == r2.test_acc);
    {
      long len = 0;
      unsigned char *b = slurp(path_in("stopped.jsonl"), &len);
      int records = 0;
      for (const char *q = (const char *)b; b && (q = strstr(q, "{\"epoch\"")); q++) records++;
      EXPECT_MSG(records == 10, "%d epoch records after a stop and a resume, expected 10",
                 records);
      free(b);
    }
  }
  /* three layers, embeddings of the last hidden layer */
  {
    fg_train_config c = quiet_config();
    int w[2] = {24, 12};
    c.epochs = 3;
    c.layers = 3;
    c.widths = w;
    c.embeddings_path = path_in("emb.npy");
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r2));
    {
      long len = 0;
      unsigned char *b = slurp(path_in("emb.npy"), &len);
      EXPECT(b && strstr((char *)b + 10, "'shape': (2708, 12)") != NULL);
      free(b);
    }
  }
  fg_dataset_destroy(&ds);
  EXPECT(ds == NULL);
  {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  }
  MPI_Finalize();
  return fg_test_finish("test_train");
}
