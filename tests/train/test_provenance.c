/* test_provenance.c -- the run record (provenance.c) as fg_train writes it: the metrics' first
 * line is valid JSON with this run's options, ranks, hosts, command and dataset fingerprint; a
 * resumed run appends its own record and no epoch appears twice, also after a second resume and
 * a resume from an older checkpoint; the final record's per-rank peak RSS is at least the last
 * epoch's; rank_bytes sum to the epochs' per-phase means times the
 * ranks; every .npy has a sidecar holding the same record; checkpoints carry it as section
 * "run", and files without it still load. Run on 1 and 2 ranks. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fullgraph.h"
#include "graph/fg_graph.h"
#include "testutil.h"
#include "train/fg_checkpoint.h"
#include "train/fg_provenance.h"

static char tmpdir[256];
static int rank, size;

static char *path_in(const char *name) {
  static char buf[8][512];
  static int k = 0;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}

static char *slurp(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  char *b;
  *len = -1;
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

/* ---- a strict JSON checker (RFC 8259's grammar; no duplicate-key check) ---- */
static const char *json_value(const char *p);
static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}
static const char *json_string(const char *p) {
  if (*p++ != '"') return NULL;
  while (*p != '"') {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int k = 1; k <= 4; k++)
          if (!strchr("0123456789abcdefABCDEF", p[k]) || !p[k]) return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
    p++;
  }
  return p + 1;
}
static const char *json_number(const char *p) {
  const char *q = p;
  if (*q == '-') q++;
  if (*q == '0') q++;
  else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
  else return NULL;
  if (*q == '.') {
    if (!(*++q >= '0' && *q <= '9')) return NULL;
    while (*q >= '0' && *q <= '9') q++;
  }
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '+' || *q == '-') q++;
    if (!(*q >= '0' && *q <= '9')) return NULL;
    while (*q >= '0' && *q <= '9') q++;
  }
  return q;
}
static const char *json_value(const char *p) {
  p = ws(p);
  if (*p == '{' || *p == '[') {
    const char close = *p == '{' ? '}' : ']';
    const int obj = *p == '{';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (obj) {
        if (!(p = json_string(ws(p)))) return NULL;
        p = ws(p);
        if (*p++ != ':') return NULL;
      }
      if (!(p = json_value(p))) return NULL;
      p = ws(p);
      if (*p == close) return p + 1;
      if (*p++ != ',') return NULL;
    }
  }
  if (*p == '"') return json_string(p);
  if (strncmp(p, "true", 4) == 0) return p + 4;
  if (strncmp(p, "false", 5) == 0) return p + 5;
  if (strncmp(p, "null", 4) == 0) return p + 4;
  return json_number(p);
}
static int json_valid(const char *s) {
  const char *end = json_value(s);
  return end && *ws(end) == '\0';
}

/* The lines of a file (b is modified; at most max). */
static int lines_of(char *b, char **line, int max) {
  int n = 0;
  for (char *l = b ? strtok(b, "\n") : NULL; l && n < max; l = strtok(NULL, "\n")) line[n++] = l;
  return n;
}

/* The metrics file's sequence: "R<start>" for a run record, "<N>" for epoch N, "F" for the
 * final record, space-separated, into out. */
static void sequence(const char *path, char *out, size_t cap) {
  long len;
  char *b = slurp(path, &len), *line[64];
  const int n = lines_of(b, line, 64);
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    char t[32] = "?";
    int v;
    if (sscanf(line[i], "{\"run\": {\"start_epoch\": %d", &v) == 1) snprintf(t, sizeof t, "R%d", v);
    else if (sscanf(line[i], "{\"epoch\": %d", &v) == 1) snprintf(t, sizeof t, "%d", v);
    else if (strncmp(line[i], "{\"final\": true", 14) == 0) snprintf(t, sizeof t, "F");
    snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? " " : "", t);
  }
  free(b);
}

/* The number after `key` in s (NaN when absent). */
static double number_after(const char *s, const char *key) {
  const char *p = strstr(s, key);
  return p ? strtod(p + strlen(key), NULL) : NAN;
}

static fg_train_config base_config(void) {
  fg_train_config c = fg_train_config_default();
  c.verbose = 0;
  c.hidden = 8;
  c.lr = 0.02;
  c.seed = 5;
  c.dataset_path = FG_DEMO_DATA;
  return c;
}

/* the record's facts: options, ranks, hosts, command, dataset, build */
static void check_record(const char *rec, const fg_dataset *ds) {
  char want[512], host[256] = "";
  fg_ds_fingerprint fp;
  EXPECT_MSG(json_valid(rec), "not JSON: %s", rec);
  EXPECT(strncmp(rec, "{\"run\": {\"start_epoch\": 0, ", 26) == 0);
  EXPECT(strstr(rec, "\"command\": [\"prog\", \"train\", \"a \\\"b\\\"\\\\c\\u0001\\u00ff\"]"));
  EXPECT(strstr(rec, "\"hidden\": 8,") && strstr(rec, "\"lr\": 0.02,") &&
         strstr(rec, "\"epochs\": 2,") && strstr(rec, "\"dropout\": 0.5,") &&
         strstr(rec, "\"seed\": 5,") && strstr(rec, "\"model\": \"gcn\""));
  snprintf(want, sizeof want, "\"scheme\": \"%s\"", size == 1 ? "serial" : "1d-sa");
  EXPECT_MSG(strstr(rec, want), "no %s", want);
  snprintf(want, sizeof want, "\"ranks\": %d, \"threads\": ", size);
  EXPECT(strstr(rec, want));
  /* every rank runs on this machine: one host */
  gethostname(host, sizeof host - 1);
  snprintf(want, sizeof want, "\"hosts\": [\"%s\"]", host);
  EXPECT_MSG(strstr(rec, want), "no %s", want);
  snprintf(want, sizeof want, "\"commit\": \"%s\"", fg_build_commit());
  EXPECT(strstr(rec, want));
  snprintf(want, sizeof want, "\"path\": \"%s\"", FG_DEMO_DATA);
  EXPECT(strstr(rec, want));
  if (ds) {
    fg_dataset_fingerprint(ds, &fp);
    snprintf(want, sizeof want, "\"fingerprint\": \"%016llx%016llx%016llx%016llx\"",
             (unsigned long long)fp.graph, (unsigned long long)fp.feature_hash,
             (unsigned long long)fp.labels, (unsigned long long)fp.split);
    EXPECT_MSG(strstr(rec, want), "no %s", want);
    EXPECT(strstr(rec, "\"nodes\": 2708, \"edges\": 13264, \"features\": 1433, \"classes\": 7"));
  }
  EXPECT(!strstr(rec, "\"predicted\"")); /* the scheme was not the model's choice */
}

/* rank_bytes: each phase's per-rank sums equal the mean over the epochs of the epochs' per-rank
 * means times the ranks */
static void check_rank_bytes(const char *path) {
  static const char *const phase[4] = {"forward", "backward", "grads", "metrics"};
  long len;
  char *b = slurp(path, &len), *line[64];
  const int n = lines_of(b, line, 64);
  const char *fin = n > 0 ? line[n - 1] : "";
  EXPECT(strncmp(fin, "{\"final\": true", 14) == 0 && json_valid(fin));
  for (int k = 0; k < 4; k++)
    for (int q = 0; q < 2; q++) {
      char key[64];
      double from_epochs = 0, from_ranks = 0;
      int epochs = 0;
      const char *p;
      for (int i = 0; i < n; i++) {
        if (strncmp(line[i], "{\"epoch\": ", 10) != 0) continue;
        snprintf(key, sizeof key, "\"%s\": {", phase[k]);
        p = strstr(line[i], key);
        snprintf(key, sizeof key, "\"bytes_%s_mean\": ", q ? "recv" : "sent");
        from_epochs += p ? number_after(p, key) * size : NAN;
        epochs++;
      }
      from_epochs /= epochs;
      snprintf(key, sizeof key, "\"%s\": {\"sent\": [", phase[k]);
      p = strstr(fin, key);
      if (p && q) p = strstr(p, "\"recv\": [");
      EXPECT_MSG(p != NULL, "rank_bytes lacks %s", phase[k]);
      if (!p) continue;
      p = strchr(p, '[') + 1;
      for (int r = 0; r < size; r++) {
        char *end;
        from_ranks += strtod(p, &end);
        EXPECT(end != p && *end == (r + 1 < size ? ',' : ']'));
        p = end + 1;
      }
      /* (the epochs' means are printed to 0.1 byte) */
      EXPECT_MSG(fabs(from_ranks - from_epochs) <= 0.05 * size + 1e-9 * from_epochs,
                 "%s %s: ranks sum %.1f, epochs %.1f", phase[k], q ? "recv" : "sent",
                 from_ranks, from_epochs);
      if (size > 1 && k < 3 && k != 1) EXPECT(from_ranks > 0);
    }
  { /* each rank's peak RSS: positive, their maximum the last epoch's peak_rss_bytes (a peak
       can only grow, and the final record reads it after the last epoch) */
    const char *p = strstr(fin, "\"peak_rss_bytes\": [");
    double mx = 0.0, last = NAN;
    EXPECT_MSG(p != NULL, "the final record has no peak_rss_bytes");
    for (int i = 0; i < n; i++)
      if (strncmp(line[i], "{\"epoch\": ", 10) == 0)
        last = number_after(line[i], "\"peak_rss_bytes\": ");
    p = p ? strchr(p, '[') + 1 : NULL;
    for (int r = 0; p && r < size; r++) {
      char *end;
      const double v = strtod(p, &end);
      EXPECT(end != p && *end == (r + 1 < size ? ',' : ']') && v > 0);
      mx = fmax(mx, v);
      p = end + 1;
    }
    EXPECT_MSG(mx >= last, "final peak RSS %.0f below the last epoch's %.0f", mx, last);
  }
  free(b);
}

/* the sidecar of path holds record and a newline */
static void check_sidecar(const char *npy, const char *record) {
  char name[600];
  long len;
  char *b;
  snprintf(name, sizeof name, "%s.json", npy);
  b = slurp(name, &len);
  EXPECT_MSG(b && len == (long)strlen(record) + 1 && strncmp(b, record, strlen(record)) == 0 &&
                 b[len - 1] == '\n',
             "sidecar %s", name);
  free(b);
}

static void put_crc(unsigned char *b, long len) {
  const uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, (uInt)(len - 4));
  memcpy(b + len - 4, &crc, 4);
}

int main(int argc, char **argv) {
  fg_dataset *ds = NULL;
  fg_load_config lc = fg_load_config_default();
  fg_train_result res;
  char seq[512], *rec_b = NULL;
  const char *const args[] = {"prog", "train", "a \"b\"\\c\001\377"};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fg_test_prov_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ds));
  }
  MPI_Bcast(tmpdir, sizeof tmpdir, MPI_CHAR, 0, MPI_COMM_WORLD);

  /* JSON strings: quote, backslash, controls and non-UTF-8 bytes escaped; UTF-8 kept */
  {
    char out[64];
    EXPECT(fg_json_escape("a\"\\\n\x7f\xc3\xa9\xff\xc3", out, sizeof out) == 33);
    EXPECT(strcmp(out, "\"a\\\"\\\\\\u000a\\u007f\xc3\xa9\\u00ff\\u00c3\"") == 0);
    EXPECT(fg_json_escape("abcdef", out, 4) == 8 && strcmp(out, "\"ab") == 0);
  }

  /* a fresh run: the record first, the outputs' sidecars, rank_bytes */
  {
    fg_train_config c = base_config();
    c.epochs = 2;
    c.argc = 3;
    c.argv = args;
    c.metrics_path = path_in("m.jsonl");
    c.checkpoint_path = path_in("c2.ckpt");
    c.predictions_path = path_in("p.npy");
    c.embeddings_path = path_in("e.npy");
    EXPECT_OK(fg_train(MPI_COMM_WORLD, ds, &c, &res));
    EXPECT(fg_last_run_record() != NULL);
    if (fg_last_run_record()) {
      long len;
      char *b = slurp(path_in("m.jsonl"), &len);
      const char *rec = fg_last_run_record();
      /* every rank holds the record rank 0 wrote */
      EXPECT(b && strncmp(b, rec, strlen(rec)) == 0 && b[strlen(rec)] == '\n');
      check_record(rec, ds);
      check_sidecar(path_in("p.npy"), rec);
      check_sidecar(path_in("e.npy"), rec);
      free(b);
    }
    check_rank_bytes(path_in("m.jsonl"));
    sequence(path_in("m.jsonl"), seq, sizeof seq);
    EXPECT_MSG(strcmp(seq, "R0 1 2 F") == 0, "%s", seq);
  }
  /* a resume appends its record after the epochs it keeps; a second resume keeps both */
  {
    fg_train_config c = base_config();
    c.epochs = 4;
    c.metrics_path = path_in("m.jsonl");
    c.resume_path = path_in("c2.ckpt");
    c.checkpoint_path = path_in("c4.ckpt");
    EXPECT_OK(fg_train(MPI_COMM_WORLD, ds, &c, &res));
    rec_b = fg_last_run_record() ? strdup(fg_last_run_record()) : NULL;
    EXPECT(rec_b && strncmp(rec_b, "{\"run\": {\"start_epoch\": 2, ", 26) == 0 &&
           json_valid(rec_b) && strstr(rec_b, "\"command\": []") &&
           strstr(rec_b, "\"resume\": \""));
    sequence(path_in("m.jsonl"), seq, sizeof seq);
    EXPECT_MSG(strcmp(seq, "R0 1 2 R2 3 4 F") == 0, "%s", seq);
    check_rank_bytes(path_in("m.jsonl")); /* over this run's epochs, 3 and 4 */
    c.epochs = 5;
    c.resume_path = path_in("c4.ckpt");
    c.checkpoint_path = NULL;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, ds, &c, &res));
    sequence(path_in("m.jsonl"), seq, sizeof seq);
    EXPECT_MSG(strcmp(seq, "R0 1 2 R2 3 4 R4 5 F") == 0, "%s", seq);
    /* from the older checkpoint again: the later runs' records go with their epochs */
    c.epochs = 3;
    c.resume_path = path_in("c2.ckpt");
    EXPECT_OK(fg_train(MPI_COMM_WORLD, ds, &c, &res));
    sequence(path_in("m.jsonl"), seq, sizeof seq);
    EXPECT_MSG(strcmp(seq, "R0 1 2 R2 3 F") == 0, "%s", seq);
  }
  /* the performance model's choice: the scheme (or grid) it picked and its prediction */
  {
    fg_train_config c = base_config();
    const char *rec;
    c.epochs = 1;
    c.scheme = size == 1 ? "auto" : "3d"; /* 3d without --grid: the model picks the grid */
    EXPECT_OK(fg_train(MPI_COMM_WORLD, ds, &c, &res));
    rec = fg_last_run_record();
    EXPECT(rec && json_valid(rec) && !strstr(rec, "\"scheme\": \"auto\"") &&
           strstr(rec, "\"predicted\": {\"seconds\": ") && strstr(rec, "\"comm_seconds\": "));
    if (rec && size > 1)
      EXPECT(strstr(rec, "\"scheme\": \"3d\", \"grid\": [") != NULL);
  }
  /* the checkpoint's section "run": the record of the run that wrote it; files without it (the
   * seeds, made before it existed) still read; a NUL in it is damage */
  if (rank == 0) {
    fg_ckpt_info info;
    long len, at = 0;
    char *b;
    EXPECT_OK(fg_checkpoint_inspect(path_in("c4.ckpt"), &info));
    EXPECT(info.run_record && rec_b && strcmp(info.run_record, rec_b) == 0);
    fg_ckpt_info_free(&info);
    EXPECT_OK(fg_checkpoint_inspect(FG_CORPUS "/ckpt/gcn.ckpt", &info));
    EXPECT(info.run_record == NULL && info.meta.epoch == 2);
    fg_ckpt_info_free(&info);
    b = slurp(path_in("c4.ckpt"), &len);
    for (long i = 16; b && i + 40 < len; i++)
      if (memcmp(b + i, "run\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0) at = i + 24;
    EXPECT(at > 0);
    if (at > 0) {
      b[at + 5] = '\0';
      put_crc((unsigned char *)b, len);
      EXPECT(fg_checkpoint_inspect_mem(b, (size_t)len, "nul.ckpt", &info) == FG_ERR_FORMAT);
      EXPECT(fg_test_error_contains("section \"run\""));
      fg_ckpt_info_free(&info);
    }
    free(b);
  }
  free(rec_b);
  fg_dataset_destroy(&ds);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && fg_test_failures == 0) {
    const char *names[] = {"m.jsonl", "c2.ckpt", "c4.ckpt", "p.npy", "p.npy.json", "e.npy",
                           "e.npy.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(path_in(names[i]));
    rmdir(tmpdir);
  }
  {
    int failures = fg_test_failures;
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    fg_test_failures = failures;
  }
  MPI_Finalize();
  return fg_test_finish("test_provenance");
}
