/* config_set.c -- fg_train_config by option name, for bindings (Python's ctypes) that would
 * otherwise have to mirror the struct's layout by hand and follow every field added to it. A
 * configuration made here lives in a box that also owns the strings and widths it points to. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "core/fg_core.h"

typedef enum { K_INT, K_FLAG, K_DOUBLE, K_U64, K_STR, K_WD_LAYERS, K_AGG_ORDER, K_WIDTHS } key_kind;

typedef struct key_def {
  const char *name; /* the CLI flag without "--" */
  key_kind kind;
  size_t off;       /* of the field in fg_train_config */
} key_def;

#define F(field) offsetof(fg_train_config, field)
static const key_def keys[] = {
    {"epochs", K_INT, F(epochs)},
    {"layers", K_INT, F(layers)},
    {"hidden", K_INT, F(hidden)},
    {"widths", K_WIDTHS, F(widths)},
    {"model", K_STR, F(model)},
    {"adj-norm", K_STR, F(adj_norm)},
    {"gin-eps", K_STR, F(gin_eps)},
    {"norm", K_STR, F(norm)},
    {"residual", K_FLAG, F(residual)},
    {"lr", K_DOUBLE, F(lr)},
    {"dropout", K_DOUBLE, F(dropout)},
    {"weight-decay", K_DOUBLE, F(weight_decay)},
    {"weight-decay-layers", K_WD_LAYERS, F(weight_decay_layers)},
    {"normalize-features", K_FLAG, F(normalize_features)},
    {"agg-order", K_AGG_ORDER, F(agg_order)},
    {"seed", K_U64, F(seed)},
    {"scheme", K_STR, F(scheme)},
    {"order", K_STR, F(order)},
    {"overlap", K_FLAG, F(overlap)},
    {"grid", K_STR, F(grid)},
    {"agg-blocks", K_INT, F(agg_blocks)},
    {"learn-features", K_FLAG, F(learn_features)},
    {"double-perm", K_FLAG, F(double_perm)},
    {"aggregation", K_STR, F(aggregation)},
    {"quantize", K_STR, F(quantize)},
    {"precision", K_STR, F(precision)},
    {"bf16-path", K_STR, F(bf16_path)},
    {"replicate", K_INT, F(replicate)},
    {"label-prop", K_DOUBLE, F(label_prop)},
    {"task", K_STR, F(task)},
    {"metric", K_STR, F(metric)},
    {"calibration", K_STR, F(calibration_path)},
    {"ranks-per-node", K_INT, F(ranks_per_node)},
    {"reorder", K_STR, F(reorder)},
    {"mem-limit", K_DOUBLE, F(mem_limit)},
    {"metrics", K_STR, F(metrics_path)},
    {"checkpoint", K_STR, F(checkpoint_path)},
    {"checkpoint-every", K_INT, F(checkpoint_every)},
    {"resume", K_STR, F(resume_path)},
    {"save-predictions", K_STR, F(predictions_path)},
    {"save-embeddings", K_STR, F(embeddings_path)},
    {"verbose", K_INT, F(verbose)},
    {"progress", K_FLAG, F(progress)},
    {"dataset-path", K_STR, F(dataset_path)},
};
#undef F
enum { N_KEYS = (int)(sizeof keys / sizeof keys[0]), MAX_WIDTHS = 64 };

#define CONFIG_BOX_MAGIC 0x66676366u /* "fgcf" */

typedef struct config_box {
  fg_train_config cfg; /* first: a box's address is its configuration's */
  uint32_t magic;
  char *str[N_KEYS];   /* the copy a K_STR key points to */
  int widths[MAX_WIDTHS];
  char **argv;         /* (argc) the copy fg_train_config_set_command made, each string too */
  int argc;
} config_box;

static void free_command(config_box *b) {
  for (int i = 0; i < b->argc; i++) free(b->argv[i]);
  free(b->argv);
  b->argv = NULL;
  b->argc = 0;
}

fg_train_config *fg_train_config_create(void) {
  config_box *b = calloc(1, sizeof *b);
  if (!b) {
    fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for a configuration");
    return NULL;
  }
  b->cfg = fg_train_config_default();
  b->magic = CONFIG_BOX_MAGIC;
  return &b->cfg;
}

void fg_train_config_destroy(fg_train_config **cfg) {
  if (!cfg || !*cfg) return;
  config_box *b = (config_box *)*cfg;
  for (int k = 0; k < N_KEYS; k++) free(b->str[k]);
  free_command(b);
  b->magic = 0;
  free(b);
  *cfg = NULL;
}

/* "weight_decay" and "--weight-decay" name "weight-decay". */
static int key_matches(const char *given, const char *name) {
  while (*given == '-') given++;
  for (; *given && *name; given++, name++)
    if (*given != *name && !(*given == '_' && *name == '-')) return 0;
  return *given == '\0' && *name == '\0';
}

static fg_status parse_long(const char *key, const char *v, long lo, long hi, long *out) {
  fg_status st = FG_OK;
  char *end = NULL;
  errno = 0;
  const long x = strtol(v, &end, 10);
  FG_REQUIRE(end != v && *end == '\0' && errno == 0 && x >= lo && x <= hi, FG_ERR_INVALID_ARG,
             "option %s: expected an integer in [%ld, %ld], got '%s'", key, lo, hi, v);
  *out = x;
cleanup:
  return st;
}

/* "64,32": positive integers separated by commas, at most MAX_WIDTHS of them. */
static fg_status parse_widths(const char *v, int *w, int *n) {
  fg_status st = FG_OK;
  const char *p = v;
  *n = 0;
  for (;;) {
    char *end = NULL;
    errno = 0;
    const long x = strtol(p, &end, 10);
    FG_REQUIRE(end != p && errno == 0 && x >= 1 && x <= INT_MAX && *n < MAX_WIDTHS &&
                   (*end == ',' || *end == '\0'),
               FG_ERR_INVALID_ARG,
               "option widths: expected up to %d positive integers separated by commas, got '%s'",
               MAX_WIDTHS, v);
    w[(*n)++] = (int)x;
    if (*end == '\0') break;
    p = end + 1;
  }
cleanup:
  return st;
}

fg_status fg_train_config_set(fg_train_config *cfg, const char *key, const char *value) {
  fg_status st = FG_OK;
  config_box *b = (config_box *)cfg;
  const key_def *def = NULL;
  FG_REQUIRE(cfg != NULL && key != NULL && value != NULL, FG_ERR_INVALID_ARG,
             "fg_train_config_set: NULL argument");
  FG_REQUIRE(b->magic == CONFIG_BOX_MAGIC, FG_ERR_INVALID_ARG,
             "fg_train_config_set: the configuration was not made by fg_train_config_create");
  for (int k = 0; k < N_KEYS && !def; k++)
    if (key_matches(key, keys[k].name)) def = &keys[k];
  FG_REQUIRE(def != NULL, FG_ERR_INVALID_ARG, "unknown training option '%s'", key);
  char *field = (char *)cfg + def->off;
  switch (def->kind) {
  case K_INT: {
    long x = 0;
    FG_CHECK(parse_long(def->name, value, INT_MIN, INT_MAX, &x));
    *(int *)field = (int)x;
    break;
  }
  case K_FLAG: {
    long x = 0;
    FG_CHECK(parse_long(def->name, value, 0, 1, &x));
    *(int *)field = (int)x;
    break;
  }
  case K_DOUBLE: {
    char *end = NULL;
    const double x = strtod(value, &end);
    FG_REQUIRE(end != value && *end == '\0', FG_ERR_INVALID_ARG,
               "option %s: expected a number, got '%s'", def->name, value);
    *(double *)field = x;
    break;
  }
  case K_U64: {
    char *end = NULL;
    errno = 0;
    const unsigned long long x = strtoull(value, &end, 10);
    FG_REQUIRE(end != value && *end == '\0' && errno == 0 && value[0] != '-', FG_ERR_INVALID_ARG,
               "option %s: expected a non-negative integer, got '%s'", def->name, value);
    *(uint64_t *)field = (uint64_t)x;
    break;
  }
  case K_STR: {
    const int k = (int)(def - keys);
    char *copy = strdup(value);
    FG_REQUIRE(copy != NULL, FG_ERR_NOMEM, "out of memory copying option %s", def->name);
    free(b->str[k]);
    b->str[k] = copy;
    *(const char **)field = copy;
    break;
  }
  case K_WD_LAYERS:
    FG_REQUIRE(strcmp(value, "first") == 0 || strcmp(value, "all") == 0, FG_ERR_INVALID_ARG,
               "option %s: expected first or all, got '%s'", def->name, value);
    cfg->weight_decay_layers = strcmp(value, "all") == 0 ? FG_WD_ALL : FG_WD_FIRST;
    break;
  case K_AGG_ORDER:
    FG_REQUIRE(strcmp(value, "auto") == 0 || strcmp(value, "first") == 0 ||
                   strcmp(value, "last") == 0,
               FG_ERR_INVALID_ARG, "option %s: expected auto, first or last, got '%s'",
               def->name, value);
    cfg->agg_order = strcmp(value, "first") == 0  ? FG_AGG_FIRST
                     : strcmp(value, "last") == 0 ? FG_AGG_LAST
                                                  : FG_AGG_AUTO;
    break;
  case K_WIDTHS: {
    int w[MAX_WIDTHS], n = 0;
    FG_CHECK(parse_widths(value, w, &n));
    memcpy(b->widths, w, (size_t)n * sizeof *w);
    cfg->widths = b->widths;
    cfg->layers = n + 1; /* as the CLI's --widths */
    break;
  }
  }
cleanup:
  return st;
}

fg_status fg_train_config_set_buffer(fg_train_config *cfg, const char *key, void *buffer) {
  fg_status st = FG_OK;
  FG_REQUIRE(cfg != NULL && key != NULL, FG_ERR_INVALID_ARG,
             "fg_train_config_set_buffer: NULL argument");
  if (strcmp(key, "history") == 0)
    cfg->history = buffer;
  else if (strcmp(key, "predictions") == 0)
    cfg->predictions_out = buffer;
  else if (strcmp(key, "embeddings") == 0)
    cfg->embeddings_out = buffer;
  else if (strcmp(key, "loss_history") == 0)
    cfg->loss_history = buffer;
  else
    FG_FAIL(FG_ERR_INVALID_ARG, "unknown output buffer '%s' (history, predictions, embeddings, "
            "loss_history)", key);
cleanup:
  return st;
}

fg_status fg_train_config_set_command(fg_train_config *cfg, int argc, const char *const *argv) {
  fg_status st = FG_OK;
  config_box *b = (config_box *)cfg;
  char **copy = NULL;
  int n = 0;
  FG_REQUIRE(cfg != NULL && argc >= 0 && (argc == 0 || argv != NULL), FG_ERR_INVALID_ARG,
             "fg_train_config_set_command: NULL or negative argument");
  FG_REQUIRE(b->magic == CONFIG_BOX_MAGIC, FG_ERR_INVALID_ARG,
             "fg_train_config_set_command: the configuration was not made by "
             "fg_train_config_create");
  if (argc > 0) {
    copy = calloc((size_t)argc, sizeof *copy);
    FG_REQUIRE(copy != NULL, FG_ERR_NOMEM, "out of memory copying the command line");
    for (; n < argc; n++) {
      FG_REQUIRE(argv[n] != NULL, FG_ERR_INVALID_ARG, "fg_train_config_set_command: argv[%d] "
                 "is NULL", n);
      copy[n] = strdup(argv[n]);
      FG_REQUIRE(copy[n] != NULL, FG_ERR_NOMEM, "out of memory copying the command line");
    }
  }
  free_command(b);
  b->argv = copy;
  b->argc = argc;
  copy = NULL;
  cfg->argc = b->argc;
  cfg->argv = (const char *const *)b->argv;
cleanup:
  if (copy) {
    for (int i = 0; i < n; i++) free(copy[i]);
    free(copy);
  }
  return st;
}
