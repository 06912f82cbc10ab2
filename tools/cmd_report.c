/* cmd_report.c -- `fullgraph report METRICS.jsonl [more.jsonl ...] --output report.html`: one
 * self-contained XHTML page (inline CSS and SVG, no script, no network) with the runs' loss and
 * accuracy, the epoch's time split, the traffic per rank, the prediction against the measured
 * epoch, and each run record as a provenance table.
 *
 * The metrics file is JSON lines (src/train/trainer.c; docs/architecture.md): run records
 * {"run": {...}} (a resumed run appends one before its epochs), epoch records {"epoch": N, ...}
 * and a final record {"final": true, ...}. Every plotted element carries data-run, data-series,
 * data-x and data-y (the value printed %.9g), so a test can hold the picture against the file.
 *
 * Started alone it runs without MPI (fullgraph.c skips MPI_Init); under mpirun rank 0 does the
 * work and the others wait for its exit code. */
#define _XOPEN_SOURCE 700 /* realpath, with POSIX 2008 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

enum {
  REPORT_MAX_FILES = 64,
  REPORT_MAX_LINE = 16 << 20, /* bytes: a run record with a long command line is a few KB */
  REPORT_MAX_RANKS = 4096,    /* ranks drawn in the traffic chart */
  REPORT_LABEL_KEYS = 6       /* differing options named in a run's label */
};

/* The per-epoch values the report reads. */
enum {
  S_LOSS, S_VALID_LOSS, S_TRAIN_ACC, S_VALID_ACC, S_TEST_ACC,
  S_SECONDS, S_SPMM, S_GEMM, S_COMM, S_WAIT, S_OTHER, N_SERIES
};
static const char *const series_key[N_SERIES] = {
    "loss", "valid_loss", "train_acc", "valid_acc", "test_acc", "seconds",
    "seconds_spmm", "seconds_gemm", "seconds_comm", "seconds_wait", "seconds_other"};

/* The traffic phases of rank_bytes, in the trainer's order. */
enum { N_PHASES = 4 };
static const char *const phase_key[N_PHASES] = {"forward", "backward", "grads", "metrics"};

typedef struct rp_epoch {
  int epoch;
  int seg;               /* the run record it follows (index into rp_file.seg), or -1 */
  unsigned have;         /* bit s: v[s] was a number */
  double v[N_SERIES];
} rp_epoch;

typedef struct rp_segment {
  rj_value line; /* the whole line; its "run" member is the record */
  long lineno;
  int first;     /* index of the first epoch record after it (nep when none) */
} rp_segment;

typedef struct rp_file {
  const char *path;
  char *label;
  rp_epoch *ep;
  int nep, cap_ep;
  rp_segment *seg;
  int nseg, cap_seg;
  rj_value final; /* the last final record (kind RJ_NULL when none) */
  long final_line;
  long skipped;   /* records of no known kind (a newer writer's) */
} rp_file;

/* A flattened field: "options.lr" -> "0.01". */
typedef struct kv {
  char *key, *text;
} kv;
typedef struct kv_list {
  kv *items;
  int n, cap;
} kv_list;

static void kv_free(kv_list *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->items[i].key);
    free(l->items[i].text);
  }
  free(l->items);
  memset(l, 0, sizeof *l);
}

static int kv_add(kv_list *l, const char *key, const char *text) {
  if (l->n == l->cap) {
    const int nc = l->cap ? l->cap * 2 : 32;
    kv *it = realloc(l->items, (size_t)nc * sizeof *it);
    if (!it) return -1;
    l->items = it;
    l->cap = nc;
  }
  l->items[l->n].key = strdup(key);
  l->items[l->n].text = strdup(text);
  if (!l->items[l->n].key || !l->items[l->n].text) {
    free(l->items[l->n].key);
    free(l->items[l->n].text);
    return -1;
  }
  l->n++;
  return 0;
}

static const char *kv_find(const kv_list *l, const char *key) {
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->items[i].key, key) == 0) return l->items[i].text;
  return NULL;
}

/* A scalar as text (raw, not escaped: the page escapes it). */
static void scalar_text(rs_buf *b, const rj_value *v) {
  switch (v->kind) {
    case RJ_NULL: rs_put(b, "null"); break;
    case RJ_BOOL: rs_put(b, v->boolean ? "true" : "false"); break;
    case RJ_NUMBER: rs_printf(b, "%.9g", v->number); break;
    case RJ_STRING: rs_put(b, v->string); break; /* up to a \u0000, which ends it */
    default: break;
  }
}

static int is_scalar(const rj_value *v) { return v->kind != RJ_ARRAY && v->kind != RJ_OBJECT; }

/* One line of shell: each word as it is when it needs no quoting, else in single quotes
 * (a quote inside as '\''), so the line can be pasted back into a shell. */
static void shell_quote(rs_buf *b, const rj_value *arr) {
  for (size_t i = 0; i < arr->len; i++) {
    const rj_value *w = &arr->items[i];
    rs_buf t = {0};
    scalar_text(&t, w);
    const char *s = t.data ? t.data : "";
    int plain = s[0] != '\0';
    for (const char *c = s; *c; c++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-",
                  *c))
        plain = 0;
    if (i) rs_put(b, " ");
    if (plain) {
      rs_put(b, s);
    } else {
      rs_put(b, "'");
      for (const char *c = s; *c; c++) rs_put(b, *c == '\'' ? "'\\''" : (char[2]){*c, 0});
      rs_put(b, "'");
    }
    if (t.failed) b->failed = 1;
    rs_free(&t);
  }
}

/* Flatten v into key = text pairs: nested objects as "a.b", arrays of scalars inline
 * "[1, 2, 3]", other arrays as "a[0].b"; "command" (an array of words) as one shell line. */
static int flatten(kv_list *out, const char *prefix, const rj_value *v) {
  rs_buf t = {0};
  int rc = 0;
  if (v->kind == RJ_OBJECT && v->len > 0) {
    for (size_t i = 0; i < v->len && rc == 0; i++) {
      rs_buf k = {0};
      if (prefix[0]) rs_printf(&k, "%s.", prefix);
      rs_put(&k, v->keys[i]);
      rc = k.failed ? -1 : flatten(out, k.data, &v->items[i]);
      rs_free(&k);
    }
    return rc;
  }
  if (v->kind == RJ_ARRAY) {
    int all_scalar = 1;
    for (size_t i = 0; i < v->len; i++) all_scalar &= is_scalar(&v->items[i]);
    if (!all_scalar) {
      for (size_t i = 0; i < v->len && rc == 0; i++) {
        rs_buf k = {0};
        rs_printf(&k, "%s[%zu]", prefix, i);
        rc = k.failed ? -1 : flatten(out, k.data, &v->items[i]);
        rs_free(&k);
      }
      return rc;
    }
    const char *last = strrchr(prefix, '.');
    if (strcmp(last ? last + 1 : prefix, "command") == 0) {
      shell_quote(&t, v);
    } else {
      rs_put(&t, "[");
      for (size_t i = 0; i < v->len; i++) {
        if (i) rs_put(&t, ", ");
        scalar_text(&t, &v->items[i]);
      }
      rs_put(&t, "]");
    }
  } else if (v->kind == RJ_OBJECT) {
    rs_put(&t, "{}");
  } else {
    scalar_text(&t, v);
  }
  rc = t.failed ? -1 : kv_add(out, prefix, t.data ? t.data : "");
  rs_free(&t);
  return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

static void file_free(rp_file *f) {
  free(f->label);
  free(f->ep);
  for (int i = 0; i < f->nseg; i++) rj_free(&f->seg[i].line);
  free(f->seg);
  rj_free(&f->final);
  memset(f, 0, sizeof *f);
}

static const char *kind_name(rj_kind k) {
  static const char *const n[] = {"null", "a boolean", "a number", "a string", "an array",
                                  "an object"};
  return n[k];
}

/* One epoch record into f->ep. Returns 0, or -1 after printing the problem. */
static int read_epoch(rp_file *f, const rj_value *rec, long lineno) {
  rp_epoch e;
  const rj_value *ev = rj_get(rec, "epoch");
  memset(&e, 0, sizeof e);
  if (ev->kind != RJ_NUMBER || ev->number < 0 || ev->number > 1e9 ||
      ev->number != floor(ev->number)) {
    fprintf(stderr, "fullgraph report: error: %s:%ld: \"epoch\" must be a whole number in "
            "[0, 1e9], found %s\n", f->path, lineno, kind_name(ev->kind));
    return -1;
  }
  e.epoch = (int)ev->number;
  e.seg = f->nseg - 1;
  for (int s = 0; s < N_SERIES; s++) {
    const int got = rj_get_number(rec, series_key[s], &e.v[s]);
    if (got < 0) {
      fprintf(stderr, "fullgraph report: error: %s:%ld: \"%s\" must be a number or null, found "
              "%s\n", f->path, lineno, series_key[s], kind_name(rj_get(rec, series_key[s])->kind));
      return -1;
    }
    if (got > 0) e.have |= 1u << s;
  }
  if (f->nep == f->cap_ep) {
    const int nc = f->cap_ep ? f->cap_ep * 2 : 256;
    rp_epoch *ep = realloc(f->ep, (size_t)nc * sizeof *ep);
    if (!ep) {
      fprintf(stderr, "fullgraph report: error: out of memory reading %s\n", f->path);
      return -1;
    }
    f->ep = ep;
    f->cap_ep = nc;
  }
  f->ep[f->nep++] = e;
  return 0;
}

/* Read one metrics file. Returns 0, or -1 after printing "file:line:column: problem". */
static int read_file(rp_file *f) {
  FILE *in = fopen(f->path, "r");
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long lineno = 0;
  int rc = -1;
  struct stat sb;
  if (!in) {
    fprintf(stderr, "fullgraph report: error: %s: cannot open: %s\n", f->path, strerror(errno));
    return -1;
  }
  if (fstat(fileno(in), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "fullgraph report: error: %s: is a directory, not a metrics file\n", f->path);
    fclose(in);
    return -1;
  }
  f->final.kind = RJ_NULL;
  errno = 0;
  while ((len = getline(&line, &cap, in)) > 0) {
    rj_value v;
    rj_error err;
    lineno++;
    if (len > REPORT_MAX_LINE) {
      fprintf(stderr, "fullgraph report: error: %s:%ld: a line of %zd bytes (at most %d)\n",
              f->path, lineno, len, REPORT_MAX_LINE);
      goto done;
    }
    {
      size_t k = 0; /* blank lines (a trailing newline too many) are no records */
      while (k < (size_t)len && line[k] && strchr(" \t\r\n", line[k])) k++;
      if (k == (size_t)len) continue;
    }
    if (rj_parse(line, (size_t)len, &v, &err) != 0) {
      fprintf(stderr, "fullgraph report: error: %s:%ld:%zu: %s\n", f->path, lineno,
              err.offset + 1, err.msg);
      goto done;
    }
    if (v.kind != RJ_OBJECT) {
      fprintf(stderr, "fullgraph report: error: %s:%ld:1: a record must be a JSON object, found "
              "%s\n", f->path, lineno, kind_name(v.kind));
      rj_free(&v);
      goto done;
    }
    const rj_value *run = rj_get(&v, "run"), *fin = rj_get(&v, "final");
    if (run) {
      if (run->kind != RJ_OBJECT) {
        fprintf(stderr, "fullgraph report: error: %s:%ld: \"run\" must be an object, found %s\n",
                f->path, lineno, kind_name(run->kind));
        rj_free(&v);
        goto done;
      }
      if (f->nseg == f->cap_seg) {
        const int nc = f->cap_seg ? f->cap_seg * 2 : 4;
        rp_segment *sg = realloc(f->seg, (size_t)nc * sizeof *sg);
        if (!sg) {
          rj_free(&v);
          fprintf(stderr, "fullgraph report: error: out of memory reading %s\n", f->path);
          goto done;
        }
        f->seg = sg;
        f->cap_seg = nc;
      }
      f->seg[f->nseg].line = v;
      f->seg[f->nseg].lineno = lineno;
      f->seg[f->nseg].first = f->nep;
      f->nseg++;
    } else if (fin && fin->kind == RJ_BOOL && fin->boolean) {
      rj_free(&f->final);
      f->final = v;
      f->final_line = lineno;
    } else if (rj_get(&v, "epoch")) {
      const int bad = read_epoch(f, &v, lineno);
      rj_free(&v);
      if (bad) goto done;
    } else {
      f->skipped++;
      rj_free(&v);
    }
    errno = 0;
  }
  if (ferror(in)) {
    fprintf(stderr, "fullgraph report: error: %s: read failed: %s\n", f->path,
            strerror(errno ? errno : EIO));
    goto done;
  }
  if (f->nep == 0) {
    fprintf(stderr, "fullgraph report: error: %s: no epoch records%s\n", f->path,
            lineno == 0 ? " (the file is empty)" : " (nothing to plot)");
    goto done;
  }
  rc = 0;
done:
  free(line);
  fclose(in);
  return rc;
}

/* ---- labels ------------------------------------------------------------------------------- */

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s && s[1] ? s + 1 : path;
}

/* What names a run among others: its options (and ranks, threads) from its first run record. */
static int comparable(const rp_file *f, kv_list *out) {
  const rj_value *run = f->nseg ? rj_get(&f->seg[0].line, "run") : NULL;
  const rj_value *opt = rj_get(run, "options");
  if (!run) return 0;
  if (opt && flatten(out, "", opt) != 0) return -1;
  for (int k = 0; k < 2; k++) {
    const rj_value *v = rj_get(run, k ? "threads" : "ranks");
    if (v && is_scalar(v)) {
      rs_buf t = {0};
      scalar_text(&t, v);
      if (t.failed || kv_add(out, k ? "threads" : "ranks", t.data ? t.data : "") != 0) {
        rs_free(&t);
        return -1;
      }
      rs_free(&t);
    }
  }
  return 0;
}

/* Options that say where a run wrote and how loudly, not what it trained: never in a label (two
 * runs of one configuration always differ in their metrics file). */
static int label_worthy(const char *key) {
  static const char *const skip[] = {"metrics", "checkpoint", "checkpoint_every", "resume",
                                     "save_predictions", "save_embeddings", "calibration",
                                     "verbose", "progress"};
  for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
    if (strcmp(key, skip[k]) == 0) return 0;
  return 1;
}

/* Each run's label: the options that differ between the runs that have a run record ("hidden=64,
 * lr=0.01"), else the file's name; one run alone is named by its file. */
static int make_labels(rp_file *files, int n) {
  kv_list *kl = calloc((size_t)n, sizeof *kl);
  int *dup = NULL, rc = -1;
  if (!kl) return -1;
  for (int i = 0; i < n; i++)
    if (comparable(&files[i], &kl[i]) != 0) goto done;
  for (int i = 0; i < n; i++) {
    rs_buf t = {0};
    int shown = 0, more = 0;
    if (n > 1 && files[i].nseg > 0) {
      for (int k = 0; k < kl[i].n; k++) {
        const char *key = kl[i].items[k].key, *mine = kl[i].items[k].text;
        int differs = 0;
        if (!label_worthy(key)) continue;
        for (int j = 0; j < n; j++) {
          const char *other;
          if (j == i || files[j].nseg == 0) continue;
          other = kv_find(&kl[j], key);
          if (!other || strcmp(other, mine) != 0) differs = 1;
        }
        if (!differs) continue;
        if (shown == REPORT_LABEL_KEYS) {
          more++;
          continue;
        }
        rs_printf(&t, "%s%s=%s", shown ? ", " : "", key, mine);
        shown++;
      }
      if (more) rs_printf(&t, " (+%d more)", more);
    }
    if (shown == 0) rs_put(&t, base_name(files[i].path));
    if (t.failed || !(files[i].label = strdup(t.data))) {
      rs_free(&t);
      goto done;
    }
    rs_free(&t);
  }
  /* runs with the same label (the same options): each gets its file's name too */
  dup = calloc((size_t)n, sizeof *dup);
  if (!dup) goto done;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) dup[i] |= j != i && strcmp(files[i].label, files[j].label) == 0;
  for (int i = 0; i < n; i++) {
    rs_buf t = {0};
    if (!dup[i] || strcmp(files[i].label, base_name(files[i].path)) == 0) continue;
    rs_printf(&t, "%s (%s)", files[i].label, base_name(files[i].path));
    if (t.failed) {
      rs_free(&t);
      goto done;
    }
    free(files[i].label);
    files[i].label = t.data;
  }
  rc = 0;
done:
  for (int i = 0; i < n; i++) kv_free(&kl[i]);
  free(kl);
  free(dup);
  return rc;
}

/* ---- the page ----------------------------------------------------------------------------- */

static const char kStyle[] =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;font-size:14px;color:#222;margin:24px;"
    "max-width:1000px}"
    "h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px "
    "solid #ccc}h3{font-size:15px;margin:16px 0 4px}"
    "svg.chart{display:block;margin:8px 0}"
    "p.caption{margin:2px 0 14px;color:#444;font-size:13px}"
    "p.note{background:#f4f4f4;border-left:4px solid #999;padding:6px 10px;font-size:13px}"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0 12px}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}td.k{font-family:'DejaVu Sans Mono',monospace;white-space:nowrap}"
    "td.v{font-family:'DejaVu Sans Mono',monospace;word-break:break-all}"
    "span.sw{display:inline-block;width:14px;height:10px;margin-right:6px}"
    ".tick{fill:#333}";

static const char *const dash_of[3] = {NULL, "6 3", "2 3"};

/* The colour of run r's series k (k-th of the chart): by run when several, else by series. */
static const char *line_color(int nfiles, int run, int k) {
  return rs_color(nfiles > 1 ? run : k);
}

/* Open a chart with its legend under the title: the plot area keeps its height, the chart
 * grows by the legend's extra rows. */
static void begin_with_legend(rs_buf *b, rs_chart *c, const rs_legend_item *it, int n,
                              const char *id, const char *title, const char *xlabel,
                              const char *ylabel, int xticks) {
  const double top = c->top;
  rs_chart_legend_room(c, rs_legend_rows(c, it, n));
  c->h += c->top - top;
  rs_chart_begin(b, c, id, title, xlabel, ylabel, xticks);
  rs_legend_draw(b, c, it, n);
}

/* A resume marker: a dashed vertical line before the first epoch of each run record that has
 * epochs before it and after it. */
static void resume_markers(rs_buf *b, const rs_chart *c, const rp_file *f, int run) {
  for (int s = 0; s < f->nseg; s++) {
    const rp_segment *sg = &f->seg[s];
    double at;
    if (sg->first == 0 || sg->first >= f->nep) continue; /* a fresh start, or nothing after */
    if (rj_get_number(rj_get(&sg->line, "run"), "start_epoch", &at) != 1)
      at = f->ep[sg->first].epoch - 1;
    const double x = at + 0.5;
    if (x < c->x0 || x > c->x1) continue;
    rs_printf(b, "<g data-run=\"%d\" data-resume=\"%.9g\"><line x1=\"%.1f\" y1=\"%.1f\" "
              "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555555\" stroke-dasharray=\"3 3\"/>"
              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555555\">resumed after "
              "epoch %.0f</text></g>\n", run, at, rs_px(c, x), c->top, rs_px(c, x),
              c->h - c->bottom, rs_px(c, x) + 3, c->top + 10 + 11.0 * run, at);
  }
}

/* Chart of some per-epoch series of every run, one line each: colour = run (or series when one
 * run), dash = series; one circle with data-* per value. */
static void line_chart(rs_buf *b, const rp_file *files, int nfiles, const char *id,
                       const char *title, const char *ylabel, const int *ser,
                       const char *const *ser_name, int nser, int fixed01) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = 0, yhi = fixed01 ? 1 : -INFINITY;
  rs_chart c;
  int any = 0;
  for (int i = 0; i < nfiles; i++)
    for (int e = 0; e < files[i].nep; e++) {
      const rp_epoch *ep = &files[i].ep[e];
      xlo = fmin(xlo, ep->epoch);
      xhi = fmax(xhi, ep->epoch);
      for (int k = 0; k < nser; k++)
        if (ep->have & (1u << ser[k])) {
          any = 1;
          if (!fixed01 || ep->v[ser[k]] > 1 || ep->v[ser[k]] < 0) {
            yhi = fmax(yhi, ep->v[ser[k]]);
            ylo = fmin(ylo, ep->v[ser[k]]);
          }
        }
    }
  if (!any) {
    rs_printf(b, "<p class=\"note\">No values of ");
    for (int k = 0; k < nser; k++) rs_printf(b, "%s\"%s\"", k ? ", " : "", series_key[ser[k]]);
    rs_put(b, " in the epoch records.</p>\n");
    return;
  }
  if (!(yhi > ylo)) yhi = ylo + 1;
  rs_chart_setup(&c, 900, 320, xlo, xhi, 1, ylo, yhi, RS_UNIT_PLAIN);
  /* legend: the series by dash (and colour when one run); then the runs by colour, a row of
   * their own */
  {
    rs_legend_item it[3 + REPORT_MAX_FILES];
    int ni = 0;
    for (int k = 0; k < nser && k < 3; k++)
      it[ni++] = (rs_legend_item){nfiles > 1 ? "#555555" : line_color(nfiles, 0, k),
                                  dash_of[k % 3], 0, 1.0, ser_name[k], 0};
    for (int i = 0; i < nfiles && nfiles > 1; i++)
      it[ni++] = (rs_legend_item){rs_color(i), NULL, 1, 1.0, files[i].label, i == 0};
    begin_with_legend(b, &c, it, ni, id, title, "epoch", ylabel, 1);
  }
  for (int i = 0; i < nfiles; i++) {
    const rp_file *f = &files[i];
    for (int k = 0; k < nser; k++) {
      const int s = ser[k];
      const char *color = line_color(nfiles, i, k);
      int pen = 0;
      rs_printf(b, "<path data-run=\"%d\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"1.6\"%s%s%s d=\"", i, series_key[s], color,
                dash_of[k % 3] ? " stroke-dasharray=\"" : "", dash_of[k % 3] ? dash_of[k % 3] : "",
                dash_of[k % 3] ? "\"" : "");
      for (int e = 0; e < f->nep; e++) {
        if (!(f->ep[e].have & (1u << s))) {
          pen = 0; /* a missing value breaks the line */
          continue;
        }
        rs_printf(b, "%s%.1f %.1f", pen ? "L" : "M", rs_px(&c, f->ep[e].epoch),
                  rs_py(&c, f->ep[e].v[s]));
        pen = 1;
      }
      rs_put(b, "\"/>\n");
      const double r = f->nep > 120 ? 1.2 : 2.2;
      for (int e = 0; e < f->nep; e++) {
        if (!(f->ep[e].have & (1u << s))) continue;
        rs_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"",
                  rs_px(&c, f->ep[e].epoch), rs_py(&c, f->ep[e].v[s]), r, color);
        rs_data_attrs(b, i, series_key[s], f->ep[e].epoch, f->ep[e].v[s]);
        rs_put(b, "/>\n");
      }
    }
    resume_markers(b, &c, f, i);
  }
  rs_chart_end(b);
}

static const int time_parts[5] = {S_SPMM, S_GEMM, S_COMM, S_WAIT, S_OTHER};
static const char *const time_part_name[5] = {"SpMM", "GEMM", "communication", "waiting",
                                              "other"};
static const int time_part_color[5] = {0, 1, 2, 3, 4};

/* The mean of series s over a segment's epochs [first, end), without the first two epochs when
 * there are more than two (warm-up: the rule of the trainer's mean_epoch_seconds). Returns the
 * count used (0: no value). */
static int seg_mean(const rp_file *f, int first, int end, int s, double *mean) {
  double sum = 0;
  int n = 0;
  const int skip = end - first > 2 ? 2 : 0;
  for (int e = first + skip; e < end; e++)
    if (f->ep[e].have & (1u << s)) {
      sum += f->ep[e].v[s];
      n++;
    }
  *mean = n ? sum / n : 0;
  return n;
}

/* Stacked bars of the time split, one bar per epoch. */
static void time_chart(rs_buf *b, const rp_file *f, int run) {
  double xlo = INFINITY, xhi = -INFINITY, yhi = 0, mean[5], total;
  int any = 0;
  char id[32], v1[32], title[64];
  rs_chart c;
  for (int e = 0; e < f->nep; e++) {
    double sum = 0;
    for (int k = 0; k < 5; k++)
      if (f->ep[e].have & (1u << time_parts[k]) && f->ep[e].v[time_parts[k]] > 0) {
        sum += f->ep[e].v[time_parts[k]];
        any = 1;
      }
    xlo = fmin(xlo, f->ep[e].epoch);
    xhi = fmax(xhi, f->ep[e].epoch);
    yhi = fmax(yhi, sum);
  }
  rs_printf(b, "<h3><span class=\"sw\" style=\"background:%s\"></span>", rs_color(run));
  rs_text(b, f->label);
  rs_put(b, "</h3>\n");
  if (!any) {
    rs_put(b, "<p class=\"note\">The epoch records hold no time split (seconds_spmm, "
              "seconds_gemm, seconds_comm, seconds_wait, seconds_other).</p>\n");
    return;
  }
  snprintf(id, sizeof id, "time-%d", run);
  snprintf(title, sizeof title, "Time per epoch, run %d", run + 1);
  rs_chart_setup(&c, 900, 300, xlo - 0.5, xhi + 0.5, 1, 0, yhi, RS_UNIT_SECONDS);
  {
    rs_legend_item it[5];
    for (int k = 0; k < 5; k++)
      it[k] = (rs_legend_item){rs_color(time_part_color[k]), NULL, 1, 1.0, time_part_name[k], 0};
    begin_with_legend(b, &c, it, 5, id, title, "epoch", "seconds per epoch", 1);
  }
  const double bw = fmax(0.6, 0.8 * (rs_px(&c, 1) - rs_px(&c, 0)));
  for (int e = 0; e < f->nep; e++) {
    double cum = 0;
    const double x = rs_px(&c, f->ep[e].epoch) - bw / 2;
    for (int k = 0; k < 5; k++) {
      const int s = time_parts[k];
      if (!(f->ep[e].have & (1u << s))) continue;
      const double v = f->ep[e].v[s], h = v > 0 ? rs_py(&c, cum) - rs_py(&c, cum + v) : 0;
      rs_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x,
                rs_py(&c, cum + (v > 0 ? v : 0)), bw, h, rs_color(time_part_color[k]));
      rs_data_attrs(b, run, series_key[s], f->ep[e].epoch, v);
      rs_put(b, "/>\n");
      if (v > 0) cum += v;
    }
  }
  resume_markers(b, &c, f, run);
  rs_chart_end(b);
  seg_mean(f, 0, f->nep, S_SECONDS, &total);
  rs_put(b, "<p class=\"caption\">Each bar is one epoch, its parts stacked from the bottom in "
            "the legend's order. Means over the epochs (after the first two)");
  if (total > 0) {
    rs_format_value(v1, sizeof v1, total, RS_UNIT_SECONDS);
    rs_printf(b, ": epoch %s; ", v1);
  } else {
    rs_put(b, ": ");
  }
  double parts = 0;
  for (int k = 0; k < 5; k++) {
    seg_mean(f, 0, f->nep, time_parts[k], &mean[k]);
    parts += mean[k];
    rs_format_value(v1, sizeof v1, mean[k], RS_UNIT_SECONDS);
    rs_printf(b, "%s %s%s", time_part_name[k], v1, k < 4 ? ", " : "");
  }
  if (total > 0) rs_printf(b, " (the parts add up to %.1f%% of the epoch%s)", 100.0 * parts / total,
                          parts > 1.005 * total ? ": each part is its maximum over the ranks, "
                                                  "which need not be on the slowest rank" : "");
  rs_put(b, ".</p>\n");
}

/* rank_bytes checked against the documented form: every phase present with "sent" and "recv"
 * arrays of one length P >= 1 of numbers (or null). Returns P, or 0 with *why set. */
static int rank_bytes_shape(const rj_value *rb, const char **why) {
  int p = -1;
  if (rb->kind != RJ_OBJECT) {
    *why = "it is not an object";
    return 0;
  }
  for (int k = 0; k < N_PHASES; k++) {
    const rj_value *ph = rj_get(rb, phase_key[k]);
    if (!ph || ph->kind != RJ_OBJECT) {
      *why = "a phase (forward, backward, grads, metrics) is missing or not an object";
      return 0;
    }
    for (int d = 0; d < 2; d++) {
      const rj_value *a = rj_get(ph, d ? "recv" : "sent");
      if (!a || a->kind != RJ_ARRAY) {
        *why = "a phase lacks its \"sent\" or \"recv\" array";
        return 0;
      }
      if (a->len < 1 || a->len > REPORT_MAX_RANKS) {
        *why = a->len < 1 ? "an array is empty" : "more ranks than the chart draws (4096)";
        return 0;
      }
      if (p >= 0 && (size_t)p != a->len) {
        *why = "the arrays have different lengths";
        return 0;
      }
      p = (int)a->len;
      for (size_t r = 0; r < a->len; r++)
        if (a->items[r].kind != RJ_NUMBER && a->items[r].kind != RJ_NULL) {
          *why = "an element is neither a number nor null";
          return 0;
        }
    }
  }
  return p;
}

static double rb_at(const rj_value *rb, int phase, int recv, int r) {
  const rj_value *a = rj_get(rj_get(rb, phase_key[phase]), recv ? "recv" : "sent");
  return a->items[r].kind == RJ_NUMBER ? a->items[r].number : NAN;
}

/* Bars of bytes per rank: a sent and a received bar per rank, each stacked by phase. */
static void bytes_chart(rs_buf *b, const rp_file *f, int run) {
  const rj_value *rb = f->final.kind == RJ_OBJECT ? rj_get(&f->final, "rank_bytes") : NULL;
  const char *why = NULL;
  char id[32], title[64], v1[32], v2[32];
  double ymax = 0, tot[2] = {0, 0}, mx[2] = {0, 0};
  int p, mxr[2] = {0, 0};
  rs_chart c;
  rs_printf(b, "<h3><span class=\"sw\" style=\"background:%s\"></span>", rs_color(run));
  rs_text(b, f->label);
  rs_put(b, "</h3>\n");
  if (f->final.kind != RJ_OBJECT) {
    rs_put(b, "<p class=\"note\">No final record in this file (the run did not finish, or was "
              "stopped): no per-rank traffic.</p>\n");
    return;
  }
  if (!rb) {
    rs_printf(b, "<p class=\"note\">The final record (line %ld) has no \"rank_bytes\": this file "
              "was written before the trainer recorded the traffic of each rank.</p>\n",
              f->final_line);
    return;
  }
  p = rank_bytes_shape(rb, &why);
  if (p == 0) {
    rs_printf(b, "<p class=\"note\">\"rank_bytes\" in the final record (line %ld) is not in the "
              "documented form: %s.</p>\n", f->final_line, why);
    return;
  }
  for (int r = 0; r < p; r++)
    for (int d = 0; d < 2; d++) {
      double sum = 0;
      for (int k = 0; k < N_PHASES; k++) {
        const double v = rb_at(rb, k, d, r);
        if (v > 0) sum += v;
      }
      tot[d] += sum;
      if (sum > mx[d]) mx[d] = sum, mxr[d] = r;
      ymax = fmax(ymax, sum);
    }
  snprintf(id, sizeof id, "bytes-%d", run);
  snprintf(title, sizeof title, "Bytes per epoch by rank, run %d", run + 1);
  rs_chart_setup(&c, 900, 300, -0.5, p - 0.5, 1, 0, ymax > 0 ? ymax : 1, RS_UNIT_BYTES);
  {
    rs_legend_item it[N_PHASES + 2];
    for (int k = 0; k < N_PHASES; k++)
      it[k] = (rs_legend_item){rs_color(k == 3 ? 4 : k), NULL, 1, 1.0, phase_key[k], 0};
    it[N_PHASES] = (rs_legend_item){"#777777", NULL, 1, 1.0, "sent (left bar)", 0};
    it[N_PHASES + 1] = (rs_legend_item){"#777777", NULL, 1, 0.45, "received (right bar)", 0};
    begin_with_legend(b, &c, it, N_PHASES + 2, id, title, "rank", "bytes per epoch", 0);
  }
  const double slot = rs_px(&c, 1) - rs_px(&c, 0), bw = fmax(0.5, slot * 0.38);
  const int every = p <= 32 ? 1 : (p + 31) / 32;
  for (int r = 0; r < p; r++) {
    if (r % every == 0)
      rs_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"tick\">%d</text>\n",
                rs_px(&c, r), c.h - c.bottom + 15, r);
    for (int d = 0; d < 2; d++) {
      double cum = 0;
      const double x = rs_px(&c, r) + (d ? 0.02 * slot : -0.02 * slot - bw);
      for (int k = 0; k < N_PHASES; k++) {
        char series[32];
        const double v = rb_at(rb, k, d, r);
        if (isnan(v)) continue;
        const double h = v > 0 ? rs_py(&c, cum) - rs_py(&c, cum + v) : 0;
        snprintf(series, sizeof series, "%s.%s", phase_key[k], d ? "recv" : "sent");
        rs_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                  "fill-opacity=\"%s\"", x, rs_py(&c, cum + (v > 0 ? v : 0)), bw, h,
                  rs_color(k == 3 ? 4 : k), d ? "0.45" : "1");
        rs_data_attrs(b, run, series, r, v);
        rs_put(b, "/>\n");
        if (v > 0) cum += v;
      }
    }
  }
  /* the mean of the bytes sent, so a rank far above it stands out */
  if (tot[0] > 0) {
    const double y = rs_py(&c, tot[0] / p);
    rs_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
              "stroke-dasharray=\"5 3\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
              "font-size=\"10\">mean sent</text>\n", c.left, y, c.w - c.right, y,
              c.w - c.right - 2, y - 3);
  }
  rs_chart_end(b);
  rs_printf(b, "<p class=\"caption\">Bytes per epoch, averaged over the epochs the run ran, by "
            "phase (final record, line %ld; KB, MB, GB are powers of 1000). ", f->final_line);
  for (int d = 0; d < 2; d++) {
    rs_format_value(v1, sizeof v1, mx[d], RS_UNIT_BYTES);
    rs_format_value(v2, sizeof v2, tot[d] / p, RS_UNIT_BYTES);
    rs_printf(b, "%s: max %s (rank %d), mean %s, max/mean %.2f. ", d ? "Received" : "Sent", v1,
              mxr[d], v2, tot[d] > 0 ? mx[d] / (tot[d] / p) : 1.0);
  }
  rs_put(b, "</p>\n");
}

/* Paired bars: the performance model's prediction against the measured means, per part. */
static void predicted_chart(rs_buf *b, const rp_file *f, int run) {
  static const char *const pred_key[5] = {"seconds", "spmm_seconds", "gemm_seconds",
                                          "comm_seconds", "other_seconds"};
  static const char *const part[5] = {"epoch", "spmm", "gemm", "comm", "other"};
  rs_printf(b, "<h3><span class=\"sw\" style=\"background:%s\"></span>", rs_color(run));
  rs_text(b, f->label);
  rs_put(b, "</h3>\n");
  if (f->nseg == 0) {
    rs_put(b, "<p class=\"note\">No run record in this file (written before run records "
              "existed): whether the run was planned is not known.</p>\n");
    return;
  }
  for (int s = 0; s < f->nseg; s++) {
    const rj_value *pred = rj_get(rj_get(&f->seg[s].line, "run"), "predicted");
    const int end = s + 1 < f->nseg ? f->seg[s + 1].first : f->nep;
    double pv[5], mv[5], ymax = 0;
    int havep[5], havem[5];
    char id[40], title[80], v1[32], v2[32];
    rs_chart c;
    if (f->nseg > 1) rs_printf(b, "<p class=\"caption\">Run record %d (line %ld):</p>\n", s + 1,
                               f->seg[s].lineno);
    if (!pred || pred->kind != RJ_OBJECT) {
      rs_put(b, "<p class=\"note\">not planned: the configuration was given, not chosen by the "
                "performance model, so the run record holds no prediction.</p>\n");
      continue;
    }
    for (int k = 0; k < 5; k++) {
      havep[k] = rj_get_number(pred, pred_key[k], &pv[k]) == 1;
      if (k == 3) { /* the model's communication time includes the waits */
        double w;
        havem[k] = seg_mean(f, f->seg[s].first, end, S_COMM, &mv[k]) > 0;
        if (seg_mean(f, f->seg[s].first, end, S_WAIT, &w) > 0) mv[k] += w;
      } else {
        static const int ms[5] = {S_SECONDS, S_SPMM, S_GEMM, 0, S_OTHER};
        havem[k] = seg_mean(f, f->seg[s].first, end, ms[k], &mv[k]) > 0;
      }
      if (havep[k]) ymax = fmax(ymax, pv[k]);
      if (havem[k]) ymax = fmax(ymax, mv[k]);
    }
    snprintf(id, sizeof id, "pred-%d-%d", run, s);
    snprintf(title, sizeof title, "Predicted and measured, run %d%s", run + 1,
             f->nseg > 1 ? " (one record)" : "");
    rs_chart_setup(&c, 520, 260, -0.5, 4.5, 1, 0, ymax > 0 ? ymax : 1, RS_UNIT_SECONDS);
    {
      const rs_legend_item it[2] = {{rs_color(1), NULL, 1, 1.0, "predicted", 0},
                                    {rs_color(0), NULL, 1, 1.0, "measured (mean)", 0}};
      begin_with_legend(b, &c, it, 2, id, title, "part of the epoch", "seconds", 0);
    }
    const double slot = rs_px(&c, 1) - rs_px(&c, 0), bw = slot * 0.36;
    for (int k = 0; k < 5; k++) {
      rs_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"tick\">%s</text>\n",
                rs_px(&c, k), c.h - c.bottom + 15, part[k]);
      for (int d = 0; d < 2; d++) {
        const double v = d ? mv[k] : pv[k];
        if (!(d ? havem[k] : havep[k])) continue;
        const double x = rs_px(&c, k) + (d ? 0.02 * slot : -0.02 * slot - bw);
        rs_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                  "data-part=\"%s\"", x, rs_py(&c, v > 0 ? v : 0), bw,
                  v > 0 ? rs_py(&c, 0) - rs_py(&c, v) : 0, rs_color(d ? 0 : 1), part[k]);
        rs_data_attrs(b, run, d ? "measured" : "predicted", k, v);
        rs_put(b, "/>\n");
      }
    }
    rs_chart_end(b);
    rs_put(b, "<p class=\"caption\">");
    if (havep[0] && havem[0] && pv[0] > 0) {
      rs_format_value(v1, sizeof v1, pv[0], RS_UNIT_SECONDS);
      rs_format_value(v2, sizeof v2, mv[0], RS_UNIT_SECONDS);
      rs_printf(b, "Predicted epoch %s, measured %s (measured / predicted %.2f). ", v1, v2,
                mv[0] / pv[0]);
    }
    rs_put(b, "Measured: the mean over this record's epochs after the first two; comm is "
              "seconds_comm + seconds_wait, as the model counts waiting as communication.</p>\n");
  }
}

/* The run records as tables of flattened fields; the final record's fields after them. */
static int provenance(rs_buf *b, const rp_file *f, int run) {
  rs_printf(b, "<h3><span class=\"sw\" style=\"background:%s\"></span>", rs_color(run));
  rs_text(b, f->label);
  rs_put(b, " \xe2\x80\x94 ");
  rs_text(b, f->path);
  rs_put(b, "</h3>\n");
  if (f->nseg == 0)
    rs_put(b, "<p class=\"note\">No run record in this file: it was written before run records "
              "existed (version, commit, command and options are not known).</p>\n");
  for (int s = 0; s <= f->nseg; s++) {
    const rj_value *rec = s < f->nseg ? rj_get(&f->seg[s].line, "run") : NULL;
    kv_list kl = {0};
    if (s == f->nseg) {
      if (f->final.kind != RJ_OBJECT) break;
      rs_printf(b, "<p class=\"caption\">Final record (line %ld)%s:</p>\n", f->final_line,
                rj_get(&f->final, "rank_bytes") ? ", rank_bytes drawn above" : "");
      for (size_t k = 0; k < f->final.len; k++)
        if (strcmp(f->final.keys[k], "rank_bytes") != 0 &&
            flatten(&kl, f->final.keys[k], &f->final.items[k]) != 0) {
          kv_free(&kl);
          return -1;
        }
    } else {
      double at;
      rs_printf(b, "<p class=\"caption\">Run record %d of %d (line %ld)", s + 1, f->nseg,
                f->seg[s].lineno);
      if (f->seg[s].first > 0 && rj_get_number(rec, "start_epoch", &at) == 1)
        rs_printf(b, ": resumed after epoch %.0f", at);
      rs_put(b, ":</p>\n");
      if (flatten(&kl, "", rec) != 0) {
        kv_free(&kl);
        return -1;
      }
    }
    rs_printf(b, "<table data-run=\"%d\" data-record=\"%d\"><tr><th>field</th><th>value</th>"
              "</tr>\n", run, s < f->nseg ? s : -1);
    for (int i = 0; i < kl.n; i++) {
      rs_put(b, "<tr><td class=\"k\">");
      rs_text(b, kl.items[i].key);
      rs_put(b, "</td><td class=\"v\">");
      rs_text(b, kl.items[i].text);
      rs_put(b, "</td></tr>\n");
    }
    rs_put(b, "</table>\n");
    kv_free(&kl);
  }
  if (f->skipped)
    rs_printf(b, "<p class=\"caption\">%ld record(s) of no known kind were skipped.</p>\n",
              f->skipped);
  return 0;
}

/* The metric a run's *_acc fields hold: the final record's "metric", else the first run
 * record's options.metric, else "accuracy" (every run before --metric existed). */
static const char *file_metric(const rp_file *f) {
  const rj_value *m = f->final.kind == RJ_OBJECT ? rj_get(&f->final, "metric") : NULL;
  if (!(m && m->kind == RJ_STRING) && f->nseg) {
    const rj_value *run = rj_get(&f->seg[0].line, "run");
    m = rj_get(rj_get(run, "options"), "metric");
  }
  return m && m->kind == RJ_STRING ? m->string : "accuracy";
}

/* "Accuracy", "ROC-AUC" or "micro-F1" for the metric name a run records (else the name). */
static const char *metric_title(const char *m) {
  return strcmp(m, "rocauc") == 0     ? "ROC-AUC"
         : strcmp(m, "f1-micro") == 0 ? "micro-F1"
         : strcmp(m, "accuracy") == 0 ? "Accuracy"
                                      : m;
}

static int build_page(rs_buf *b, rp_file *files, int n, const char *title) {
  static const int loss_ser[2] = {S_LOSS, S_VALID_LOSS};
  static const char *const loss_name[2] = {"training loss", "validation loss"};
  static const int acc_ser[3] = {S_TRAIN_ACC, S_VALID_ACC, S_TEST_ACC};
  static const char *const acc_name[3] = {"train", "valid", "test"};
  rs_put(b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>"
            "<meta charset=\"utf-8\"/>\n<title>");
  rs_text(b, title);
  rs_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", kStyle);
  rs_text(b, title);
  rs_printf(b, "</h1>\n<p class=\"caption\">Made by fullgraph %s from %d metrics file%s.</p>\n",
            fg_version_string(), n, n == 1 ? "" : "s");
  /* one metric for the page when every run has the same, else each run's in the table */
  const char *metric = n > 0 ? file_metric(&files[0]) : "accuracy";
  for (int i = 1; i < n; i++)
    if (strcmp(file_metric(&files[i]), metric) != 0) metric = NULL;
  const char *mtitle = metric ? metric_title(metric) : "Metric (each run's: see the table)";
  rs_put(b, "<table><tr><th>run</th><th>label</th><th>file</th><th>epochs</th><th>run records"
            "</th><th>best valid / its test ");
  rs_text(b, metric ? metric : "metric");
  rs_put(b, "</th></tr>\n");
  for (int i = 0; i < n; i++) {
    const rp_file *f = &files[i];
    double bv, bt;
    rs_printf(b, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>%d</td><td>",
              rs_color(i), i + 1);
    rs_text(b, f->label);
    rs_put(b, "</td><td>");
    rs_text(b, f->path);
    rs_printf(b, "</td><td>%d (%d to %d)</td><td>%d</td><td>", f->nep, f->ep[0].epoch,
              f->ep[f->nep - 1].epoch, f->nseg);
    if (rj_get_number(&f->final, "valid_acc", &bv) == 1 &&
        rj_get_number(&f->final, "test_acc", &bt) == 1)
      rs_printf(b, "%.4f / %.4f", bv, bt);
    if (!metric) {
      rs_put(b, " (");
      rs_text(b, file_metric(f));
      rs_put(b, ")");
    }
    else
      rs_put(b, "(no final record)");
    rs_put(b, "</td></tr>\n");
  }
  rs_put(b, "</table>\n<h2>1. Loss and ");
  rs_text(b, metric ? metric : "metric");
  rs_put(b, "</h2>\n");
  line_chart(b, files, n, "loss", "Loss", "loss", loss_ser, loss_name, 2, 0);
  line_chart(b, files, n, "accuracy", mtitle, metric ? metric : "metric", acc_ser, acc_name, 3,
             1);
  rs_put(b, "<p class=\"caption\">One point per epoch record; solid, dashed and dotted lines are "
            "the series of the legend; a grey dashed line marks where a resumed run picked "
            "up.</p>\n<h2>2. Where each epoch's time went</h2>\n");
  for (int i = 0; i < n; i++) time_chart(b, &files[i], i);
  rs_put(b, "<h2>3. Traffic per rank</h2>\n");
  for (int i = 0; i < n; i++) bytes_chart(b, &files[i], i);
  rs_put(b, "<h2>4. Predicted and measured epoch time</h2>\n");
  for (int i = 0; i < n; i++) predicted_chart(b, &files[i], i);
  rs_put(b, "<h2>5. Provenance</h2>\n");
  for (int i = 0; i < n; i++)
    if (provenance(b, &files[i], i) != 0) return -1;
  rs_put(b, "</body>\n</html>\n");
  return b->failed ? -1 : 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Replace path with data whole: a temporary file beside it, synced, renamed over it. A device
 * or fifo (/dev/stdout) is written through. */
static int write_output(const char *path, const char *data, size_t n) {
  struct stat sb;
  char *tmp = NULL, *target = NULL;
  int fd = -1, err = 0;
  /* a symbolic link to a file stays a link: its target is replaced */
  if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) && stat(path, &sb) == 0 &&
      S_ISREG(sb.st_mode) && (target = realpath(path, NULL)) != NULL) {
    const int rc = write_output(target, data, n);
    free(target);
    return rc;
  }
  const char *slash = strrchr(path, '/');
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    if (S_ISDIR(sb.st_mode)) {
      fprintf(stderr, "fullgraph report: error: %s: is a directory, not a file\n", path);
      return -1;
    }
    fd = open(path, O_WRONLY);
    if (fd < 0 || write_all(fd, data, n) != 0) err = errno ? errno : EIO;
    if (fd >= 0 && close(fd) != 0 && !err) err = errno;
    if (err) fprintf(stderr, "fullgraph report: error: %s: cannot write: %s\n", path,
                     strerror(err));
    return err ? -1 : 0;
  }
  {
    const size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    const size_t cap = strlen(path) + 48;
    tmp = malloc(cap);
    if (!tmp) {
      fprintf(stderr, "fullgraph report: error: out of memory\n");
      return -1;
    }
    snprintf(tmp, cap, "%.*s.%s.tmp.%ld", (int)dl, path, slash ? slash + 1 : path,
             (long)getpid());
  }
  errno = 0;
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (fd < 0) {
    fprintf(stderr, "fullgraph report: error: %s: cannot create: %s\n", path, strerror(errno));
    free(tmp);
    return -1;
  }
  if (write_all(fd, data, n) != 0 || fsync(fd) != 0) err = errno ? errno : EIO;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    fprintf(stderr, "fullgraph report: error: %s: cannot write: %s\n", path, strerror(err));
    unlink(tmp);
  }
  free(tmp);
  return err ? -1 : 0;
}

/* Rank 0's work: read, draw, write. */
static int report(const char **paths, int n, const char *output, const char *title) {
  rp_file *files = calloc((size_t)n, sizeof *files);
  rs_buf page = {0};
  struct stat so;
  int rc = CLI_FAILED;
  if (!files) {
    fprintf(stderr, "fullgraph report: error: out of memory\n");
    return CLI_FAILED;
  }
  /* writing the report over a metrics file would lose the data it shows */
  if (stat(output, &so) == 0 && S_ISREG(so.st_mode))
    for (int i = 0; i < n; i++) {
      struct stat si;
      if (stat(paths[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
        fprintf(stderr, "fullgraph report: --output %s is one of the metrics files\n", output);
        free(files);
        return CLI_USAGE;
      }
    }
  for (int i = 0; i < n; i++) {
    files[i].path = paths[i];
    if (read_file(&files[i]) != 0) goto done;
  }
  if (make_labels(files, n) != 0 || build_page(&page, files, n, title) != 0) {
    fprintf(stderr, "fullgraph report: error: out of memory drawing the report\n");
    goto done;
  }
  if (write_output(output, page.data, page.len) != 0) goto done;
  printf("wrote %s (%d run%s)\n", output, n, n == 1 ? "" : "s");
  rc = CLI_OK;
done:
  for (int i = 0; i < n; i++) file_free(&files[i]);
  free(files);
  rs_free(&page);
  return rc;
}

int cmd_report(int argc, char **argv, int rank) {
  int npos = 0, rc;
  const char *pos[REPORT_MAX_FILES], *output = NULL, *title = "fullgraph run report";
  const cli_opt opts[] = {
      {"--output", OPT_STRING, &output, "FILE", "the HTML page to write (required)", NULL},
      {"--title", OPT_STRING, &title, "TEXT", "the page's title (default: fullgraph run report)",
       NULL},
  };
  const cli_command cmd = {
      "report", "report METRICS.jsonl [more.jsonl ...] --output report.html",
      "Draw one or more --metrics files of 'fullgraph train' as one self-contained HTML page\n"
      "(inline SVG, no script): loss and accuracy per epoch (runs overlaid, each labelled by\n"
      "the options that differ), the epoch's time split, bytes per rank and phase, the\n"
      "predicted against the measured epoch time, and each run record's provenance.\n"
      "Under mpirun, rank 0 does the work.",
      opts, (int)(sizeof opts / sizeof opts[0]), 1, REPORT_MAX_FILES};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  if (!output || !output[0]) {
    if (rank == 0)
      fprintf(stderr, "fullgraph report: %s\n",
              output ? "--output: the path is empty" : "--output FILE is required");
    return CLI_USAGE;
  }
  if (rank == 0) rc = report(pos, npos, output, title);
  {
    int mpi = 0; /* fullgraph.c starts MPI only under a launcher */
    MPI_Initialized(&mpi);
    if (mpi) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  return rc;
}
