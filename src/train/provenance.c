/* provenance.c -- the run record (fg_provenance.h): what ran, from which build, with which
 * options, on how many ranks of which hosts, on which dataset. One line of JSON that readers of
 * the metrics file tell from the epoch records by its "run" key; the same line is each .npy
 * output's sidecar and a checkpoint's "run" section. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dist/fg_dist.h"
#include "io/fg_io.h"
#include "train/fg_provenance.h"

/* ---- JSON text ------------------------------------------------------------------------------ */

/* The length of the UTF-8 sequence at s (1 to 4), or 0 when the bytes there are not one (a lone
 * continuation byte, an overlong lead, a sequence cut short). */
static int utf8_len(const unsigned char *s) {
  int n;
  if (s[0] < 0x80) return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf) n = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef) n = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4) n = 4;
  else return 0;
  for (int k = 1; k < n; k++)
    if ((s[k] & 0xc0) != 0x80) return 0; /* (a NUL ends the loop here too) */
  return n;
}

size_t fg_json_escape(const char *s, char *out, size_t cap) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = 0;
  /* every byte goes through put: it writes while there is room and counts regardless (c is
   * evaluated once, whether written or not) */
#define PUT(c)                           \
  do {                                   \
    const char c_ = (char)(c);           \
    if (n + 1 < cap) out[n] = c_;        \
    n++;                                 \
  } while (0)
  PUT('"');
  while (*p) {
    const int len = utf8_len(p);
    if (*p == '"' || *p == '\\') {
      PUT('\\');
      PUT(*p++);
    } else if (*p < 0x20 || *p == 0x7f || len == 0) {
      /* control characters, and bytes that are not UTF-8 (a Latin-1 file name) as the code
       * point of the same number, so the line stays valid JSON */
      static const char hex[] = "0123456789abcdef";
      PUT('\\');
      PUT('u');
      PUT('0');
      PUT('0');
      PUT(hex[*p >> 4]);
      PUT(hex[*p & 15]);
      p++;
    } else {
      for (int k = 0; k < len; k++) PUT(*p++);
    }
  }
  PUT('"');
#undef PUT
  if (cap > 0) out[n < cap ? n : cap - 1] = '\0';
  return n;
}

/* A growing string; the first failure to grow is remembered and the rest is ignored. */
typedef struct jbuf {
  char *p;
  size_t n, cap;
  int failed;
} jbuf;

static int jb_room(jbuf *b, size_t more) {
  size_t cap = b->cap ? b->cap : 1024;
  char *q;
  if (b->failed) return 0;
  if (b->n + more + 1 <= b->cap) return 1;
  while (cap < b->n + more + 1) {
    if (cap > SIZE_MAX / 2) {
      b->failed = 1;
      return 0;
    }
    cap *= 2;
  }
  q = realloc(b->p, cap);
  if (!q) {
    b->failed = 1;
    return 0;
  }
  b->p = q;
  b->cap = cap;
  return 1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void jb_printf(jbuf *b, const char *fmt, ...) {
  va_list ap;
  int len;
  va_start(ap, fmt);
  len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0) {
    b->failed = 1;
    return;
  }
  if (!jb_room(b, (size_t)len)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)len;
}

/* A JSON string, or null for NULL. */
static void jb_str(jbuf *b, const char *s) {
  size_t len;
  if (!s) {
    jb_printf(b, "null");
    return;
  }
  len = fg_json_escape(s, NULL, 0);
  if (!jb_room(b, len)) return;
  fg_json_escape(s, b->p + b->n, len + 1);
  b->n += len;
}

/* A number in as few digits as read back the same; null for NaN and Inf (not JSON). */
static void jb_num(jbuf *b, double x) {
  char t[40];
  if (!isfinite(x)) {
    jb_printf(b, "null");
    return;
  }
  snprintf(t, sizeof t, "%.15g", x);
  if (strtod(t, NULL) != x) snprintf(t, sizeof t, "%.17g", x);
  jb_printf(b, "%s", t);
}

/* ", \"key\": " (the first key of an object without its comma) */
static void jb_key(jbuf *b, int first, const char *key) {
  jb_printf(b, "%s\"%s\": ", first ? "" : ", ", key);
}

static void jb_kstr(jbuf *b, const char *key, const char *v) {
  jb_key(b, 0, key);
  jb_str(b, v);
}
static void jb_kint(jbuf *b, const char *key, long long v) {
  jb_key(b, 0, key);
  jb_printf(b, "%lld", v);
}
static void jb_knum(jbuf *b, const char *key, double v) {
  jb_key(b, 0, key);
  jb_num(b, v);
}
static void jb_kbool(jbuf *b, const char *key, int v) {
  jb_key(b, 0, key);
  jb_printf(b, "%s", v ? "true" : "false");
}

/* ---- the record ----------------------------------------------------------------------------- */

/* Every fg_train_config option, its effective value: the facts' choices where the library
 * decides (the scheme and its grid or replication, the order, the model's normalizations), the
 * configuration's value (defaults included) elsewhere. Paths are as given, null when unset. */
static void put_options(jbuf *b, const fg_train_config *cfg, const fg_run_facts *f) {
  static const char *const agg_names[3] = {"auto", "first", "last"};
  const int agg = (int)cfg->agg_order;
  jb_printf(b, "\"options\": {");
  jb_key(b, 1, "epochs");
  jb_printf(b, "%d", cfg->epochs);
  /* the model's layers as the user counts them; widths are the stack's (a GIN layer is two) */
  jb_kint(b, "layers", cfg->layers);
  jb_kint(b, "hidden", cfg->hidden);
  jb_key(b, 0, "widths");
  jb_printf(b, "[");
  for (int l = 0; f->widths && l <= f->layers; l++)
    jb_printf(b, "%s%lld", l ? ", " : "", (long long)f->widths[l]);
  jb_printf(b, "]");
  jb_kstr(b, "model", f->model);
  jb_kstr(b, "adj_norm", f->adj_norm);
  jb_key(b, 0, "gin_eps");
  if (f->gin_eps_learn) jb_str(b, "learn");
  else jb_num(b, f->gin_eps);
  jb_kstr(b, "norm", f->norm);
  jb_kbool(b, "residual", cfg->residual);
  jb_knum(b, "lr", cfg->lr);
  jb_knum(b, "dropout", cfg->dropout);
  jb_knum(b, "weight_decay", cfg->weight_decay);
  jb_kstr(b, "weight_decay_layers", cfg->weight_decay_layers == FG_WD_ALL ? "all" : "first");
  jb_kbool(b, "normalize_features", cfg->normalize_features);
  jb_kstr(b, "agg_order", agg >= 0 && agg < 3 ? agg_names[agg] : "?");
  jb_key(b, 0, "seed");
  jb_printf(b, "%llu", (unsigned long long)cfg->seed);
  jb_kstr(b, "scheme", f->scheme);
  if (f->grid) {
    jb_key(b, 0, "grid");
    jb_printf(b, "[%d, %d, %d]", f->grid[0], f->grid[1], f->grid[2]);
  }
  if (f->replicate > 0) jb_kint(b, "replicate", f->replicate);
  jb_kstr(b, "order", f->order ? f->order : "natural");
  jb_kbool(b, "overlap", cfg->overlap);
  jb_kint(b, "agg_blocks", cfg->agg_blocks);
  jb_kbool(b, "learn_features", cfg->learn_features);
  jb_kbool(b, "double_perm", cfg->double_perm);
  jb_kstr(b, "aggregation", cfg->aggregation ? cfg->aggregation : "hybrid");
  jb_kstr(b, "quantize", cfg->quantize ? cfg->quantize : "none");
  jb_kstr(b, "precision", cfg->precision ? cfg->precision : "fp32");
  jb_knum(b, "label_prop", cfg->label_prop);
  jb_kstr(b, "task", f->task ? f->task : "multiclass");
  jb_kstr(b, "metric", f->metric ? f->metric : "accuracy");
  jb_kstr(b, "calibration", cfg->calibration_path);
  jb_kint(b, "ranks_per_node", cfg->ranks_per_node);
  jb_kstr(b, "reorder", f->reorder ? f->reorder : "none");
  /* bytes; 0 the available memory, -1 no limit */
  jb_knum(b, "mem_limit", cfg->mem_limit < 0 ? -1.0 : cfg->mem_limit);
  jb_kstr(b, "metrics", cfg->metrics_path);
  jb_kstr(b, "checkpoint", cfg->checkpoint_path);
  jb_kint(b, "checkpoint_every", cfg->checkpoint_every);
  jb_kstr(b, "resume", cfg->resume_path);
  jb_kstr(b, "save_predictions", cfg->predictions_path);
  jb_kstr(b, "save_embeddings", cfg->embeddings_path);
  jb_kint(b, "verbose", cfg->verbose);
  jb_kbool(b, "progress", cfg->progress);
  jb_printf(b, "}");
}

static void put_dataset(jbuf *b, const fg_train_config *cfg, const fg_dataset *ds) {
  fg_ds_fingerprint fp;
  jb_printf(b, "\"dataset\": {");
  jb_key(b, 1, "path");
  jb_str(b, cfg->dataset_path);
  if (!ds) {
    jb_printf(b, ", \"nodes\": null, \"edges\": null, \"features\": null, \"classes\": null, "
                 "\"fingerprint\": null}");
    return;
  }
  fg_dataset_fingerprint(ds, &fp);
  jb_kint(b, "nodes", (long long)fp.nodes);
  jb_kint(b, "edges", (long long)fp.entries);
  jb_kint(b, "features", (long long)fp.features);
  jb_kint(b, "classes", (long long)fp.classes);
  /* the checkpoint's "dataset" hashes, graph, features, labels, split: 16 hex digits each */
  jb_key(b, 0, "fingerprint");
  jb_printf(b, "\"%016llx%016llx%016llx%016llx\"", (unsigned long long)fp.graph,
            (unsigned long long)fp.feature_hash, (unsigned long long)fp.labels,
            (unsigned long long)fp.split);
  jb_printf(b, "}");
}

fg_status fg_run_record_format(const fg_train_config *cfg, const fg_dataset *ds,
                               const fg_run_facts *f, char **out) {
  fg_status st = FG_OK;
  jbuf b = {NULL, 0, 0, 0};
  char when[32] = "";
  struct tm tm;
  const int dirty = fg_build_dirty();
  *out = NULL;
  if (gmtime_r(&f->started, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  /* start_epoch first: the trainer's resume finds it with one sscanf (metrics_open) */
  jb_printf(&b, "{\"run\": {\"start_epoch\": %d", f->start_epoch);
  jb_kstr(&b, "version", fg_version_string());
  jb_kstr(&b, "commit", fg_build_commit());
  if (dirty >= 0) jb_kbool(&b, "dirty", dirty);
  jb_kstr(&b, "build", fg_build_options());
  jb_key(&b, 0, "command");
  jb_printf(&b, "[");
  for (int i = 0; cfg->argv && i < cfg->argc; i++) {
    jb_printf(&b, "%s", i ? ", " : "");
    jb_str(&b, cfg->argv[i] ? cfg->argv[i] : "");
  }
  jb_printf(&b, "], ");
  put_options(&b, cfg, f);
  jb_kint(&b, "ranks", f->ranks);
  jb_kint(&b, "threads", f->threads);
  jb_key(&b, 0, "hosts");
  jb_printf(&b, "[");
  for (int i = 0; i < f->n_hosts; i++) {
    jb_printf(&b, "%s", i ? ", " : "");
    jb_str(&b, f->hosts[i]);
  }
  jb_printf(&b, "]");
  jb_kstr(&b, "blas", fg_blas_corename());
  jb_kstr(&b, "gemm", fg_gemm_lib_current());
  /* the path bf16's GEMMs ran (or would run) on: native or convert */
  jb_kstr(&b, "bf16_path", fg_bf16_path_current());
  jb_printf(&b, ", ");
  put_dataset(&b, cfg, ds);
  jb_kstr(&b, "started", when[0] ? when : NULL);
  /* what loading and laying out cost, per rank for the memory: rank 0 of the direct path holds
   * the whole dataset, a prepared directory read per rank only each rank's share */
  jb_printf(&b, ", \"setup\": {");
  jb_key(&b, 1, "load_seconds");
  jb_num(&b, f->load_seconds);
  jb_knum(&b, "seconds", f->setup_seconds);
  if (f->setup_peak_rss) {
    jb_key(&b, 0, "peak_rss_bytes");
    jb_printf(&b, "[");
    for (int i = 0; i < f->ranks; i++)
      jb_printf(&b, "%s%lld", i ? ", " : "", (long long)f->setup_peak_rss[i]);
    jb_printf(&b, "]");
  }
  jb_printf(&b, "}");
  if (f->predicted) {
    const fg_plan_entry *p = f->predicted;
    jb_printf(&b, ", \"predicted\": {");
    jb_key(&b, 1, "seconds");
    jb_num(&b, p->seconds);
    jb_knum(&b, "spmm_seconds", p->spmm_seconds);
    jb_knum(&b, "gemm_seconds", p->gemm_seconds);
    jb_knum(&b, "comm_seconds", p->comm_seconds);
    jb_knum(&b, "other_seconds", p->other_seconds);
    jb_knum(&b, "mem_bytes", p->mem_bytes);
    jb_printf(&b, "}");
  }
  jb_printf(&b, "}}");
  FG_REQUIRE(!b.failed, FG_ERR_NOMEM, "out of memory formatting the run record");
  *out = b.p;
  b.p = NULL;
cleanup:
  free(b.p);
  return st;
}

/* ---- hosts ---------------------------------------------------------------------------------- */

#define HOST_FIELD 256 /* bytes a host name takes in the gather (longer names are cut) */

fg_status fg_run_hosts(MPI_Comm comm, char ***hosts, int *n) {
  fg_status st = FG_OK;
  char mine[HOST_FIELD];
  char *all = NULL, **list = NULL;
  int rank = 0, size = 1, count = 0;
  *hosts = NULL;
  *n = 0;
  memset(mine, 0, sizeof mine);
  if (gethostname(mine, sizeof mine - 1) != 0) snprintf(mine, sizeof mine, "unknown");
  mine[sizeof mine - 1] = '\0';
  FG_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  FG_CHECK_MPI(MPI_Comm_size(comm, &size));
  /* rank 0's buffer, agreed on before the gather so that a failed allocation stops every rank
   * rather than leaving the others waiting in it */
  {
    int ok = 1;
    if (rank == 0) ok = (all = fg_malloc_array((size_t)size, HOST_FIELD)) != NULL;
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
    FG_REQUIRE(ok, FG_ERR_NOMEM, "out of memory for %d host names", size);
  }
  FG_CHECK_MPI(MPI_Gather(mine, HOST_FIELD, MPI_CHAR, all, HOST_FIELD, MPI_CHAR, 0, comm));
  if (rank != 0) goto cleanup;
  FG_CALLOC(list, (size_t)size);
  for (int r = 0; r < size; r++) {
    const char *h = all + (size_t)r * HOST_FIELD;
    int seen = 0;
    for (int i = 0; i < count && !seen; i++) seen = strcmp(list[i], h) == 0;
    if (seen) continue;
    list[count] = strdup(h);
    FG_REQUIRE(list[count], FG_ERR_NOMEM, "out of memory for the host names");
    count++;
  }
  *hosts = list;
  *n = count;
  list = NULL;
cleanup:
  fg_run_hosts_free(list, count);
  free(all);
  return st;
}

void fg_run_hosts_free(char **hosts, int n) {
  if (!hosts) return;
  for (int i = 0; i < n; i++) free(hosts[i]);
  free(hosts);
}

/* ---- the caller's copy and sidecars --------------------------------------------------------- */

/* One per process, as fg_train is: MPI programs train from one thread. */
static char *last_record;

void fg_run_record_keep(char *record) {
  free(last_record);
  last_record = record;
}

const char *fg_last_run_record(void) { return last_record; }

fg_status fg_write_sidecar(const char *npy_path, const char *record) {
  fg_status st = FG_OK;
  fg_out out = {0};
  char *name = NULL;
  struct stat sb;
  size_t len;
  if (!record) return FG_OK;
  FG_REQUIRE(npy_path && npy_path[0], FG_ERR_INVALID_ARG, "fg_write_sidecar: no .npy path");
  /* a device (/dev/null) or fifo took the data: there is no file to sit beside */
  if (stat(npy_path, &sb) == 0 && !S_ISREG(sb.st_mode)) return FG_OK;
  len = strlen(npy_path);
  FG_ALLOC(name, len + 6);
  memcpy(name, npy_path, len);
  memcpy(name + len, ".json", 6);
  FG_CHECK(fg_out_open(&out, name));
  errno = 0;
  if (fputs(record, out.f) == EOF || fputc('\n', out.f) == EOF)
    FG_FAIL(FG_ERR_IO, "%s: write error: %s", name, errno ? strerror(errno) : "I/O error");
  FG_CHECK(fg_out_commit(&out));
cleanup:
  if (st != FG_OK) fg_out_abort(&out);
  free(name);
  return st;
}
