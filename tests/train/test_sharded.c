/* test_sharded.c -- sharded checkpoints (a directory: per-rank shard files and a manifest),
 * run under mpiexec at any P.
 *
 * For every scheme that runs on P (and 3d with --learn-features): a run checkpointed into a
 * directory at epoch 4 and resumed gives the uninterrupted run's losses bit for bit, every rank
 * reading only its own feature shard; the shards hold exactly the single-file checkpoint's
 * parameters and moments (loaded whole through the re-sharding reader); one process under
 * another scheme (serial, or 3d on one rank for learned features) resumes the directory within
 * 1e-6 of the uninterrupted run, and so does 3d on another grid. Each rank writes only what it
 * owns: the manifest's counts sum to the model (and to N x F, each feature shard about 1/P of
 * it). A crash between the shard writes and the manifest's rename (the next generation's shards
 * beside the old manifest) leaves the previous checkpoint loadable, and the next checkpoint
 * removes them. A directory without a manifest, a missing, truncated or flipped shard are
 * refused before training, naming the file. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/fg_registry.h"
#include "schemes/fg_grid3d.h"
#include "test_data.h"
#include "testutil.h"
#include "train/fg_checkpoint.h"

#define EPOCHS 8
#define AT 4 /* the checkpoint's epoch */
#define TOL 1e-6

static int rank, nprocs;
static char tmpdir[512];

/* The model of the runs: GCN by default; check_models sets others (every kind of parameter:
 * two matrices, LayerNorm's vectors, GIN's learned epsilon, residual projections, BatchNorm's
 * running statistics, the label embedding). */
static struct {
  const char *model, *norm, *gin_eps;
  int residual;
  double label_prop;
} variant;

static const char *path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", tmpdir, name);
  return buf;
}

static fg_train_config base_config(const char *scheme, int learn, double *hist) {
  fg_train_config c = fg_train_config_default();
  c.epochs = EPOCHS;
  c.layers = 2;
  c.hidden = 6;
  c.dropout = 0.5;
  c.seed = 11;
  c.verbose = 0;
  c.scheme = scheme;
  c.learn_features = learn;
  c.loss_history = hist;
  c.model = variant.model;
  c.norm = variant.norm;
  c.gin_eps = variant.gin_eps;
  c.residual = variant.residual;
  c.label_prop = variant.label_prop;
  return c;
}

static double worst_rel(const double *a, const double *b, int n) {
  double w = 0.0;
  for (int e = 0; e < n; e++) {
    const double rel = fabs(a[e] - b[e]) / fabs(b[e]);
    if (!(rel <= w)) w = rel; /* NaN propagates */
  }
  return w;
}

/* fg_train on comm (rank 0 holds the dataset); the status every rank of the world agrees on
 * (ranks outside comm, under MPI_COMM_SELF, take rank 0's). */
static fg_status train(MPI_Comm comm, const fg_dataset *ds, const fg_train_config *c) {
  fg_train_result res;
  fg_status st = FG_OK;
  if (comm == MPI_COMM_WORLD || rank == 0) st = fg_train(comm, rank == 0 ? ds : NULL, c, &res);
  if (comm != MPI_COMM_WORLD) MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return st;
}

/* Rank 0: remove every file in dir, then dir. */
static void remove_dir(const char *dir) {
  DIR *dp;
  struct dirent *de;
  char p[1200];
  if (rank != 0 || !(dp = opendir(dir))) return;
  while ((de = readdir(dp)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
      snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
      unlink(p);
    }
  closedir(dp);
  rmdir(dir);
}

/* Rank 0: copy file a to b. */
static void copy_file(const char *a, const char *b) {
  FILE *in = fopen(a, "rb"), *out = fopen(b, "wb");
  char buf[65536];
  size_t n;
  EXPECT_MSG(in && out, "cannot copy %s to %s", a, b);
  while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  if (in) fclose(in);
  if (out) fclose(out);
}

/* Rank 0: copy every file of directory a into b (made), each name's generation g1 renamed g2
 * when from != NULL: "from" is replaced by "to" in the names. */
static void copy_dir(const char *a, const char *b, const char *from, const char *to,
                     int with_manifest) {
  DIR *dp;
  struct dirent *de;
  char pa[1200], pb[1200], name[512];
  if (rank != 0) return;
  mkdir(b, 0777);
  if (!(dp = opendir(a))) return;
  while ((de = readdir(dp)) != NULL) {
    const char *hit;
    if (de->d_name[0] == '.') continue;
    if (!with_manifest && strcmp(de->d_name, "manifest") == 0) continue;
    snprintf(name, sizeof name, "%s", de->d_name);
    if (from && (hit = strstr(de->d_name, from)) != NULL)
      snprintf(name, sizeof name, "%.*s%s%s", (int)(hit - de->d_name), de->d_name, to,
               hit + strlen(from));
    snprintf(pa, sizeof pa, "%s/%s", a, de->d_name);
    snprintf(pb, sizeof pb, "%s/%s", b, name);
    copy_file(pa, pb);
  }
  closedir(dp);
}

/* Rank 0: the number of files in dir whose name contains s. */
static int count_files(const char *dir, const char *s) {
  DIR *dp = opendir(dir);
  struct dirent *de;
  int n = 0;
  if (!dp) return -1;
  while ((de = readdir(dp)) != NULL) n += strstr(de->d_name, s) != NULL;
  closedir(dp);
  return n;
}

/* fg_train writes its verbose log to cfg.log on rank 0: the sharded resume's line says how
 * many weight and feature shard files each rank read at most (n[0], n[1]; -1 without it). */
static void files_read(FILE *log, int n[2]) {
  char line[512];
  n[0] = n[1] = -1;
  rewind(log);
  while (fgets(line, sizeof line, log)) {
    const char *p = strstr(line, "each rank read at most ");
    if (p && sscanf(p, "each rank read at most %d weight and %d feature", &n[0], &n[1]) != 2)
      n[0] = n[1] = -1;
  }
}

/* Rank 0: load the sharded checkpoint in dir whole, in the one-process layout, through the
 * re-sharding reader, and compare it with the single-file checkpoint `file` bit for bit. */
static void compare_with_file(const char *dir, const char *file, const char *what) {
  fg_ckpt_info info;
  fg_ckpt_state s;
  fg_ckpt_meta mfile, mdir;
  fg_ckpt_manifest mf;
  fg_ckpt_runs all = {0};
  float *a[3] = {NULL}, *b[3] = {NULL};
  int64_t start = 0, pos = 0, len;
  int nread = 0;
  if (rank != 0) return;
  memset(&mf, 0, sizeof mf);
  EXPECT_OK(fg_checkpoint_inspect(file, &info));
  memset(&s, 0, sizeof s);
  s.model = info.model;
  s.layers = info.layers;
  s.widths = info.widths;
  s.n_params = info.n_params;
  s.options = info.has_options ? &info.options : NULL;
  s.dataset = info.has_dataset ? &info.dataset : NULL;
  for (int k = 0; k < 3; k++) {
    a[k] = calloc((size_t)info.n_params, sizeof(float));
    b[k] = calloc((size_t)info.n_params, sizeof(float));
  }
  s.params = a[0];
  s.adam_m = a[1];
  s.adam_v = a[2];
  EXPECT_OK(fg_checkpoint_read(file, &s, &mfile));
  EXPECT_OK(fg_ckpt_manifest_read(dir, &s, &mdir, &mf));
  len = info.n_params;
  all = (fg_ckpt_runs){1, &start, &pos, &len, len};
  EXPECT_OK(fg_ckpt_shards_load(dir, &mf, FG_CKPT_WEIGHTS, 0, info.n_params, &all, b, &nread));
  for (int k = 0; k < 3; k++)
    EXPECT_MSG(memcmp(a[k], b[k], (size_t)info.n_params * sizeof(float)) == 0,
               "%s: the shards' %s differ from the single file's", what,
               k == 0 ? "parameters" : k == 1 ? "Adam m" : "Adam v");
  EXPECT_MSG(memcmp(&mfile, &mdir, sizeof mfile) == 0, "%s: the manifest's meta differs", what);
  EXPECT_MSG(mf.ranks == (uint32_t)nprocs && mf.generation >= 1, "%s: manifest of %u ranks", what,
             mf.ranks);
  for (int k = 0; k < 3; k++) {
    free(a[k]);
    free(b[k]);
  }
  fg_ckpt_manifest_free(&mf);
  fg_ckpt_info_free(&info);
}

/* Rank 0: each rank's shards hold what it owns: the weights' counts sum to the model's, and
 * with learned features each feature shard is about 1/P of N x F. */
static void check_ownership(const char *dir, int learn, const char *what) {
  fg_ckpt_info info;
  int64_t sum[2] = {0, 0}, most = 0;
  if (rank != 0) return;
  EXPECT_OK(fg_checkpoint_inspect(dir, &info));
  EXPECT_MSG(info.sharded && info.manifest.n_shards == (uint32_t)(nprocs * (learn ? 2 : 1)),
             "%s: %u shard files for %d ranks", what, info.manifest.n_shards, nprocs);
  for (uint32_t i = 0; i < info.manifest.n_shards; i++) {
    const fg_ckpt_shard_entry *e = &info.manifest.shards[i];
    sum[e->family] += e->elements;
    if (e->family == FG_CKPT_FEATURES) most = e->elements > most ? e->elements : most;
  }
  EXPECT_MSG(sum[0] == info.n_params, "%s: weight shards hold %lld of %lld", what,
             (long long)sum[0], (long long)info.n_params);
  if (learn) {
    const int64_t nf = info.manifest.feat_rows * info.manifest.feat_cols;
    EXPECT_MSG(sum[1] == nf, "%s: feature shards hold %lld of %lld", what, (long long)sum[1],
               (long long)nf);
    /* blocks of rows and columns: no shard beyond twice its share */
    EXPECT_MSG(most <= 2 * nf / nprocs + info.manifest.feat_cols, "%s: a feature shard of %lld "
               "elements, N x F / P is %lld", what, (long long)most, (long long)(nf / nprocs));
    printf("P=%d %-10s feature shards: the largest %lld of %lld elements (1/P: %lld)\n", nprocs,
           what, (long long)most, (long long)nf, (long long)(nf / nprocs));
  }
  fg_ckpt_info_free(&info);
}

/* A grid of P other than the one the performance model picks for ds (3d's default). */
static const char *other_grid(char *buf, size_t cap) {
  int grids[64][3];
  const int ng = fg_grid_enumerate(nprocs, grids, 64);
  snprintf(buf, cap, "%dx%dx%d", grids[ng - 1][0], grids[ng - 1][1], grids[ng - 1][2]);
  return ng > 1 ? buf : NULL;
}

/* One scheme: uninterrupted, checkpointed at AT into a directory and resumed, the shards
 * against a single file, one process under another scheme, 3d on another grid. */
static void check_scheme(const fg_dataset *ds, const char *scheme, int learn) {
  char dir[600], file[600], what[64], grid[32];
  double full[EPOCHS], part[EPOCHS], other[EPOCHS];
  fg_train_config c;
  FILE *log = rank == 0 ? tmpfile() : NULL;
  snprintf(what, sizeof what, "%s%s%s%s%s", variant.model ? variant.model : "",
           variant.model ? " " : "", scheme, learn ? "+learn" : "",
           variant.label_prop > 0 ? "+lp" : "");
  path_in(dir, sizeof dir, "ck/");
  path_in(file, sizeof file, "ck.file");
  c = base_config(scheme, learn, full);
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  c = base_config(scheme, learn, part);
  c.epochs = AT;
  c.checkpoint_path = dir;
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  check_ownership(dir, learn, what);
  if (!learn) { /* the same state as a single file: the same bits */
    c.checkpoint_path = file;
    EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
    compare_with_file(dir, file, what);
  }
  /* resumed at the same P and scheme: bit for bit, each rank reading its own feature shard */
  memset(part, 0, sizeof part);
  c = base_config(scheme, learn, part);
  c.resume_path = dir;
  c.verbose = 1;
  c.log = log;
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  EXPECT_MSG(memcmp(part + AT, full + AT, (EPOCHS - AT) * sizeof(double)) == 0,
             "%s: the resumed losses differ from the uninterrupted run's (by %.3g)", what,
             worst_rel(part + AT, full + AT, EPOCHS - AT));
  if (rank == 0) {
    int n[2];
    files_read(log, n);
    /* weights: the primary copies of what a rank holds may lie on every rank (small); the
     * features (N x F): its own file only */
    EXPECT_MSG(n[0] >= 1 && n[0] <= nprocs && n[1] == learn, "%s: a rank read %d weight and "
               "%d feature shard files", what, n[0], n[1]);
    printf("P=%d %-10s resumed bit for bit; each rank read at most %d weight and %d feature "
           "shard file(s)\n", nprocs, what, n[0], n[1]);
  }
  /* one process, another scheme (or 3d on one rank): the same parameters, re-sharded */
  memset(other, 0, sizeof other);
  c = base_config(learn ? "3d" : "serial", learn, other);
  c.resume_path = dir;
  EXPECT_OK(train(MPI_COMM_SELF, ds, &c));
  MPI_Bcast(other, EPOCHS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_MSG(worst_rel(other + AT, full + AT, EPOCHS - AT) <= TOL,
             "%s: one process resumes it %.3g off", what,
             worst_rel(other + AT, full + AT, EPOCHS - AT));
  /* 3d on another grid of P */
  if (strcmp(scheme, "3d") == 0 && other_grid(grid, sizeof grid)) {
    memset(other, 0, sizeof other);
    c = base_config("3d", learn, other);
    c.grid = grid;
    c.resume_path = dir;
    EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
    EXPECT_MSG(worst_rel(other + AT, full + AT, EPOCHS - AT) <= TOL,
               "%s: grid %s resumes it %.3g off", what, grid,
               worst_rel(other + AT, full + AT, EPOCHS - AT));
  }
  if (rank == 0) {
    printf("P=%d %-10s one process (and another grid) resume within %.2e\n", nprocs, what,
           worst_rel(other + AT, full + AT, EPOCHS - AT));
    unlink(file);
    fclose(log);
  }
  remove_dir(dir);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The expected failure of a resume from dir, its message holding `needle`. */
static void expect_refused(const fg_dataset *ds, const char *dir, const char *needle,
                           const char *what) {
  double h[EPOCHS];
  fg_train_config c = base_config(nprocs > 1 ? "1d" : "serial", 0, h);
  fg_status st;
  c.resume_path = dir;
  st = train(MPI_COMM_WORLD, ds, &c);
  EXPECT_MSG(st != FG_OK && strstr(fg_last_error(), needle),
             "%s: status %d, message \"%s\", expected one naming \"%s\"", what, (int)st,
             fg_last_error(), needle);
  if (rank == 0) printf("P=%d refused (%s): %s\n", nprocs, what, fg_last_error());
}

/* Atomicity and damage. */
static void check_faults(const fg_dataset *ds) {
  char dir[600], dir2[600], bad[600], p[1200], from[64], to[64], name[96];
  double full[EPOCHS], part[EPOCHS];
  const char *scheme = nprocs > 1 ? "1d" : "serial";
  fg_train_config c;
  path_in(dir, sizeof dir, "fa/");
  path_in(dir2, sizeof dir2, "fb/");
  path_in(bad, sizeof bad, "fc");
  c = base_config(scheme, 0, full);
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  c = base_config(scheme, 0, part);
  c.epochs = AT;
  c.checkpoint_path = dir; /* generation 1 at epoch AT */
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  /* a crash after every rank wrote generation 2 (epoch AT + 2), before the manifest's rename:
   * the new shards beside the old manifest */
  c.epochs = AT + 2;
  c.checkpoint_path = dir2;
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  snprintf(from, sizeof from, ".g1.");
  snprintf(to, sizeof to, ".g2.");
  copy_dir(dir2, dir, from, to, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  memset(part, 0, sizeof part);
  c = base_config(scheme, 0, part);
  c.resume_path = dir;
  c.checkpoint_path = dir; /* and the next checkpoint: generation 3, the others removed */
  EXPECT_OK(train(MPI_COMM_WORLD, ds, &c));
  EXPECT_MSG(memcmp(part + AT, full + AT, (EPOCHS - AT) * sizeof(double)) == 0,
             "after a crash before the manifest's rename: the previous checkpoint resumes %.3g "
             "off", worst_rel(part + AT, full + AT, EPOCHS - AT));
  if (rank == 0) {
    EXPECT_MSG(count_files(dir, ".g3.ckpt") == nprocs && count_files(dir, ".g1.") == 0 &&
                   count_files(dir, ".g2.") == 0 && count_files(dir, "manifest") == 1,
               "after the next checkpoint: %d files of generation 3, %d of 1, %d of 2",
               count_files(dir, ".g3.ckpt"), count_files(dir, ".g1."), count_files(dir, ".g2."));
    printf("P=%d a crash before the manifest's rename leaves the previous checkpoint: resumed "
           "bit for bit; the next checkpoint removed the strays\n", nprocs);
  }
  remove_dir(dir2);
  MPI_Barrier(MPI_COMM_WORLD);

  /* refusals, before any epoch: no manifest; a missing, truncated, flipped shard */
  if (rank == 0) mkdir(bad, 0777);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(ds, bad, "without a manifest", "no manifest");
  fg_ckpt_shard_name(name, sizeof name, FG_CKPT_WEIGHTS, 0, (uint32_t)nprocs, 3);
  remove_dir(bad);
  copy_dir(dir, bad, NULL, NULL, 1);
  snprintf(p, sizeof p, "%s/%s", bad, name);
  if (rank == 0) unlink(p);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(ds, bad, name, "missing shard");
  if (rank == 0) {
    char q[1200];
    snprintf(q, sizeof q, "%s/%s", dir, name);
    copy_file(q, p);
    EXPECT_MSG(truncate(p, 100) == 0, "cannot truncate %s", p);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(ds, bad, name, "truncated shard");
  if (rank == 0) {
    char q[1200];
    FILE *f;
    struct stat sb;
    snprintf(q, sizeof q, "%s/%s", dir, name);
    copy_file(q, p);
    stat(p, &sb);
    f = fopen(p, "r+b");
    if (f) { /* one bit of a value, the size unchanged */
      int ch;
      fseek(f, (long)sb.st_size - 12, SEEK_SET);
      ch = fgetc(f);
      fseek(f, (long)sb.st_size - 12, SEEK_SET);
      fputc(ch ^ 0x10, f);
      fclose(f);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(ds, bad, name, "flipped shard");
  EXPECT_MSG(strstr(fg_last_error(), "checksum"), "a flipped bit: \"%s\"", fg_last_error());
  remove_dir(bad);
  remove_dir(dir);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  static const char *const schemes[] = {"serial", "1d", "1d-sa", "1.5d", "halo", "3d"};
  int failures = 0;
  fg_dataset *ds = NULL;
  fg_status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  EXPECT(fg_test_mpi_tmpdir("fg_sharded", tmpdir, sizeof tmpdir));
  st = rank == 0 ? test_data_make(TEST_DATA_RMAT8, &ds) : FG_OK;
  st = fg_agree(MPI_COMM_WORLD, st);
  EXPECT_OK(st);
  for (size_t i = 0; tmpdir[0] && st == FG_OK && i < sizeof schemes / sizeof *schemes; i++) {
    const fg_scheme_info *e = fg_scheme_lookup(schemes[i]);
    if (!e || (e->max_ranks != 0 && nprocs > e->max_ranks)) continue;
    check_scheme(ds, schemes[i], 0);
  }
  if (tmpdir[0] && st == FG_OK) {
    check_scheme(ds, "3d", 1);
    /* other models under 3d (weights split over the grid) and one 1D scheme */
    variant.model = "sage";
    variant.norm = "layer";
    check_scheme(ds, "3d", 0);
    variant.model = "gin";
    variant.norm = "batch";
    variant.gin_eps = "learn";
    variant.residual = 1;
    check_scheme(ds, "3d", 0);
    check_scheme(ds, nprocs > 1 ? "1d" : "serial", 0);
    memset(&variant, 0, sizeof variant);
    variant.label_prop = 0.3;
    check_scheme(ds, "3d", 0);
    memset(&variant, 0, sizeof variant);
    check_faults(ds);
  }
  fg_dataset_destroy(&ds);
  if (rank == 0 && tmpdir[0]) rmdir(tmpdir);
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_sharded");
}
