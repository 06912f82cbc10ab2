/* report.h -- the pieces of `fullgraph report` (tools/cmd_report.c): a strict JSON parser for
 * one metrics line (report_json.c) and an SVG/XHTML writer into a growing buffer
 * (report_svg.c). Nothing here depends on the library. */
#ifndef FG_REPORT_H
#define FG_REPORT_H

#include <stddef.h>

/* ---- JSON (report_json.c) ---------------------------------------------------------------- */

typedef enum { RJ_NULL, RJ_BOOL, RJ_NUMBER, RJ_STRING, RJ_ARRAY, RJ_OBJECT } rj_kind;

typedef struct rj_value rj_value;
struct rj_value {
  rj_kind kind;
  int boolean;      /* RJ_BOOL */
  double number;    /* RJ_NUMBER: finite (an overflowing literal is an error) */
  char *string;     /* RJ_STRING: UTF-8, NUL-terminated; may hold NULs (\u0000): see len */
  size_t len;       /* RJ_STRING: bytes; RJ_ARRAY, RJ_OBJECT: elements */
  rj_value *items;  /* RJ_ARRAY, RJ_OBJECT: len values, in the order written */
  char **keys;      /* RJ_OBJECT: len keys (NUL-terminated; a key holding \u0000 is refused) */
};

/* Limits of one document: nesting, and bytes (the caller refuses longer lines before). */
enum { RJ_MAX_DEPTH = 64 };

typedef struct rj_error {
  size_t offset; /* byte offset of the problem in the text */
  char msg[160];
} rj_error;

/* Parse text[0..len) as exactly one JSON value (RFC 8259: no comments, no trailing commas, no
 * NaN; strings valid UTF-8 without raw control characters; duplicate keys refused). Returns 0
 * and fills *out (free with rj_free), or -1 with *err set. */
int rj_parse(const char *text, size_t len, rj_value *out, rj_error *err);
void rj_free(rj_value *v);
/* The length of the valid UTF-8 sequence at s[0..n) whose first byte is >= 0x80 (2 to 4 bytes;
 * no overlong form, surrogate or code point beyond U+10FFFF), or 0; *cp (may be NULL) gets the
 * code point. */
size_t rj_utf8_len(const unsigned char *s, size_t n, unsigned *cp);

/* The member named key of an object, or NULL (also when v is not an object). */
const rj_value *rj_get(const rj_value *v, const char *key);
/* The number at key: 1 and *x when it is a number, 0 when absent or null, -1 when another kind. */
int rj_get_number(const rj_value *v, const char *key, double *x);

/* ---- output buffer, XML and SVG (report_svg.c) ------------------------------------------- */

typedef struct rs_buf {
  char *data;
  size_t len, cap;
  int failed; /* an allocation failed: the buffer is incomplete */
} rs_buf;

void rs_free(rs_buf *b);
void rs_put(rs_buf *b, const char *s);
void rs_printf(rs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s[0..n) as XML character data or attribute text: & < > " ' escaped; control characters and
 * bytes that are not valid UTF-8 (never in parsed JSON, possible in a file name) shown as
 * \xNN, so the document stays well-formed. */
void rs_text_n(rs_buf *b, const char *s, size_t n);
void rs_text(rs_buf *b, const char *s);

/* Up to RS_MAX_TICKS round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart);
 * returns the count; *lo_out and *hi_out are the covered range (first and last tick). */
enum { RS_MAX_TICKS = 16 };
int rs_nice_ticks(double lo, double hi, int target, int integer, double *ticks, double *lo_out,
                  double *hi_out);

/* How an axis prints its values. */
typedef enum { RS_UNIT_PLAIN, RS_UNIT_SECONDS, RS_UNIT_BYTES } rs_unit;
/* A tick label: value v on an axis whose ticks are step apart and reach maxabs at most; the
 * unit's scale follows maxabs (seconds: s, ms or \u00b5s; bytes: B, KB, MB, GB, powers of 1000)
 * and the decimals follow step, so every label of one axis has the same form. */
void rs_format_tick(char *out, size_t cap, double v, double step, double maxabs, rs_unit unit);
/* A single value with its unit, for captions ("1.23 MB", "45.6 ms"), 3 significant digits. */
void rs_format_value(char *out, size_t cap, double v, rs_unit unit);

/* The colour-blind safe palette (Okabe and Ito): RS_PALETTE colours, index wraps. */
enum { RS_PALETTE = 8 };
const char *rs_color(int i);

/* One chart: an <svg> of w x h pixels with a plot area inside the margins. */
typedef struct rs_chart {
  double w, h;
  double left, right, top, bottom; /* margins */
  double x0, x1, y0, y1;           /* data range shown */
  double xt[RS_MAX_TICKS], yt[RS_MAX_TICKS];
  int nxt, nyt;
  rs_unit xunit, yunit;
} rs_chart;

/* Choose ticks and ranges: x over [xlo, xhi], y over [ylo, yhi] (integer: whole-number ticks);
 * a degenerate range is widened. */
void rs_chart_setup(rs_chart *c, double w, double h, double xlo, double xhi, int xint,
                    double ylo, double yhi, rs_unit yunit);
/* Opens the <svg> (with a <title>), draws the frame, grid, ticks, labels and the title. xticks
 * = 0 leaves the x tick labels to the caller (category axes). */
void rs_chart_begin(rs_buf *b, const rs_chart *c, const char *id, const char *title,
                    const char *xlabel, const char *ylabel, int xticks);
void rs_chart_end(rs_buf *b);
double rs_px(const rs_chart *c, double x);
double rs_py(const rs_chart *c, double y);

/* A data element's attributes: data-run="run" data-series="series" data-x="%.9g" data-y="%.9g". */
void rs_data_attrs(rs_buf *b, int run, const char *series, double x, double y);

/* A legend: entries left to right under the title, wrapped at the chart's width; an entry
 * with newrow starts a row. Lay it out (rs_legend_rows) before rs_chart_begin and make room for
 * it (rs_chart_legend_room), then draw it. */
typedef struct rs_legend_item {
  const char *color, *dash; /* dash: a stroke-dasharray, or NULL for a solid line */
  int box;                  /* a filled box instead of a line */
  double opacity;
  const char *label;
  int newrow;
} rs_legend_item;
int rs_legend_rows(const rs_chart *c, const rs_legend_item *it, int n);
void rs_chart_legend_room(rs_chart *c, int rows);
void rs_legend_draw(rs_buf *b, const rs_chart *c, const rs_legend_item *it, int n);

#endif /* FG_REPORT_H */
