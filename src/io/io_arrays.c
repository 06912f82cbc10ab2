/* io_arrays.c -- a "reader" of arrays in memory (fg_dataset_from_arrays, the Python binding):
 * the same checks the file readers make, with messages naming the array and its first bad
 * element, then copies into an fg_raw so that the dataset is built as a file's would be. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/fg_io_internal.h"

/* Every element checked before anything is allocated: a bad array costs no copy. */
static fg_status check_arrays(const fg_arrays *a, int64_t *classes) {
  fg_status st = FG_OK;
  const int64_t n = a->num_nodes, m = a->num_edges, f = a->num_features;
  FG_REQUIRE(n >= 1 && n <= FG_IO_MAX_NODES, FG_ERR_INVALID_ARG,
             "arrays: num_nodes %lld out of range [1, %lld]", (long long)n,
             (long long)FG_IO_MAX_NODES);
  FG_REQUIRE(m >= 0, FG_ERR_INVALID_ARG, "arrays: num_edges %lld is negative", (long long)m);
  FG_REQUIRE(m == 0 || (a->src && a->dst), FG_ERR_INVALID_ARG,
             "arrays: %lld edges but src or dst is NULL", (long long)m);
  for (int64_t k = 0; k < m; k++) {
    FG_REQUIRE(a->src[k] >= 0 && a->src[k] < n, FG_ERR_FORMAT,
               "arrays: src[%lld] = %lld out of range [0, %lld)", (long long)k,
               (long long)a->src[k], (long long)n);
    FG_REQUIRE(a->dst[k] >= 0 && a->dst[k] < n, FG_ERR_FORMAT,
               "arrays: dst[%lld] = %lld out of range [0, %lld)", (long long)k,
               (long long)a->dst[k], (long long)n);
  }
  if (a->features) {
    FG_REQUIRE(f >= 1 && f <= FG_IO_MAX_NODES, FG_ERR_INVALID_ARG,
               "arrays: num_features %lld out of range [1, %lld] for the features given",
               (long long)f, (long long)FG_IO_MAX_NODES);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < f; j++)
        FG_REQUIRE(isfinite(a->features[i * f + j]), FG_ERR_NUMERIC,
                   "arrays: features[%lld, %lld] = %g: features must be finite (no NaN or Inf)",
                   (long long)i, (long long)j, (double)a->features[i * f + j]);
  }
  *classes = 0;
  if (a->labels) {
    int64_t top = -1;
    FG_REQUIRE(a->num_classes >= 0 && a->num_classes <= FG_IO_MAX_CLASSES, FG_ERR_INVALID_ARG,
               "arrays: num_classes %lld out of range [0, %lld] (0: the largest label + 1)",
               (long long)a->num_classes, (long long)FG_IO_MAX_CLASSES);
    const int64_t bound = a->num_classes > 0 ? a->num_classes : FG_IO_MAX_CLASSES;
    for (int64_t i = 0; i < n; i++) {
      FG_REQUIRE(a->labels[i] >= -1 && a->labels[i] < bound, FG_ERR_FORMAT,
                 "arrays: labels[%lld] = %lld out of range (0 <= label < %lld, or -1 for none)",
                 (long long)i, (long long)a->labels[i], (long long)bound);
      if (a->labels[i] > top) top = a->labels[i];
    }
    *classes = a->num_classes > 0 ? a->num_classes : top + 1;
  }
  if (a->targets) {
    FG_REQUIRE(!a->labels, FG_ERR_INVALID_ARG,
               "arrays: both labels and targets given (one class per node, or multi-label "
               "targets)");
    FG_REQUIRE(a->num_tasks >= 1 && a->num_tasks <= FG_IO_MAX_CLASSES, FG_ERR_INVALID_ARG,
               "arrays: num_tasks %lld out of range [1, %lld] for the targets given",
               (long long)a->num_tasks, (long long)FG_IO_MAX_CLASSES);
    for (int64_t i = 0; i < n * a->num_tasks; i++)
      FG_REQUIRE(a->targets[i] >= -1 && a->targets[i] <= 1, FG_ERR_FORMAT,
                 "arrays: targets[%lld, %lld] = %d is not 0 or 1 (or -1 when missing)",
                 (long long)(i / a->num_tasks), (long long)(i % a->num_tasks),
                 (int)a->targets[i]);
  }
  if (a->split)
    for (int64_t i = 0; i < n; i++)
      FG_REQUIRE(a->split[i] >= -1 && a->split[i] <= 2, FG_ERR_FORMAT,
                 "arrays: split[%lld] = %d out of range (0 train, 1 valid, 2 test, -1 none)",
                 (long long)i, (int)a->split[i]);
cleanup:
  return st;
}

fg_status fg_read_arrays(const fg_arrays *a, fg_raw *out) {
  fg_status st = FG_OK;
  fg_raw r;
  int64_t classes = 0;
  memset(&r, 0, sizeof r);
  FG_REQUIRE(a != NULL && out != NULL, FG_ERR_INVALID_ARG, "fg_dataset_from_arrays: NULL argument");
  FG_CHECK(check_arrays(a, &classes));
  const int64_t n = a->num_nodes, m = a->num_edges, f = a->features ? a->num_features : 0;
  /* the copies against the load's budget, as a reader weighs what it is about to hold */
  const double bytes = (double)m * fg_io_edge_bytes() + 4.0 * (double)n * (double)f +
                       (a->labels ? 4.0 * (double)n : 0.0) + (a->split ? (double)n : 0.0) +
                       (a->targets ? (double)n * (double)a->num_tasks : 0.0);
  if (fg_io_over_limit(bytes)) {
    char t[32];
    FG_FAIL(FG_ERR_MEMLIMIT, "arrays: %lld nodes, %lld edges and %lld features need about %s to "
            "load, but %s", (long long)n, (long long)m, (long long)f,
            fg_format_bytes(bytes, t, sizeof t), fg_io_limit_text());
  }
  r.num_nodes = n;
  r.num_edges = m;
  r.id_span = n;
  FG_ALLOC(r.src, (size_t)FG_MAX(m, 1));
  FG_ALLOC(r.dst, (size_t)FG_MAX(m, 1));
  if (m > 0) {
    memcpy(r.src, a->src, (size_t)m * sizeof *r.src);
    memcpy(r.dst, a->dst, (size_t)m * sizeof *r.dst);
  }
  if (f > 0) {
    FG_ALLOC(r.features, (size_t)(n * f));
    memcpy(r.features, a->features, (size_t)(n * f) * sizeof *r.features);
    r.num_features = f;
  }
  if (a->labels) {
    FG_ALLOC(r.labels, (size_t)n);
    memcpy(r.labels, a->labels, (size_t)n * sizeof *r.labels);
    r.num_classes = classes;
    /* a given class count is the caller's word; an inferred one must be mostly used */
    if (a->num_classes == 0) FG_CHECK(fg_raw_check_classes(&r, "arrays: labels", 0));
  }
  if (a->targets) {
    FG_ALLOC(r.targets, (size_t)(n * a->num_tasks));
    memcpy(r.targets, a->targets, (size_t)(n * a->num_tasks));
    r.num_tasks = a->num_tasks;
  }
  if (a->split) {
    FG_ALLOC(r.split, (size_t)n);
    memcpy(r.split, a->split, (size_t)n);
  }
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_raw_free(&r);
  return st;
}
