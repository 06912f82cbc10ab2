/* report_svg.c -- the drawing half of `fullgraph report`: a growing text buffer, XML escaping,
 * round tick values, and charts as inline SVG (axes, grid, ticks with units, legends).
 *
 * Every text that reaches the document goes through rs_text, which escapes markup and shows
 * control characters and invalid UTF-8 as \xNN, so a file name or a string from a metrics file
 * cannot break the XHTML or inject markup. Coordinates are printed with one decimal. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

void rs_free(rs_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

static int reserve(rs_buf *b, size_t more) {
  if (b->failed) return -1;
  if (b->len + more + 1 <= b->cap) return 0;
  size_t nc = b->cap ? b->cap : 4096;
  while (nc < b->len + more + 1) nc *= 2;
  char *d = realloc(b->data, nc);
  if (!d) {
    b->failed = 1;
    return -1;
  }
  b->data = d;
  b->cap = nc;
  return 0;
}

static void put_n(rs_buf *b, const char *s, size_t n) {
  if (reserve(b, n) != 0) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void rs_put(rs_buf *b, const char *s) { put_n(b, s, strlen(s)); }

void rs_printf(rs_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  char small[256];
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    put_n(b, small, (size_t)n);
    return;
  }
  if (reserve(b, (size_t)n) != 0) return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* The length of a valid UTF-8 sequence at s[0..n) whose first byte is >= 0x80, or 0. The code
 * points XML 1.0 forbids (U+FFFE, U+FFFF) count as invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = 0;
  const size_t k = rj_utf8_len(s, n, &c);
  return k > 0 && c != 0xfffe && c != 0xffff ? k : 0;
}

void rs_text_n(rs_buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    const unsigned char c = (unsigned char)s[i];
    size_t k;
    switch (c) {
      case '&': rs_put(b, "&amp;"); i++; continue;
      case '<': rs_put(b, "&lt;"); i++; continue;
      case '>': rs_put(b, "&gt;"); i++; continue;
      case '"': rs_put(b, "&quot;"); i++; continue;
      case '\'': rs_put(b, "&#39;"); i++; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      rs_printf(b, "\\x%02x", c);
      i++;
    } else if (c < 0x80) {
      put_n(b, s + i, 1);
      i++;
    } else if ((k = utf8_len((const unsigned char *)s + i, n - i)) > 0) {
      put_n(b, s + i, k);
      i += k;
    } else {
      rs_printf(b, "\\x%02x", c);
      i++;
    }
  }
}

void rs_text(rs_buf *b, const char *s) { rs_text_n(b, s, strlen(s)); }

/* ---- ticks -------------------------------------------------------------------------------- */

/* The smallest of 1, 2, 5 times a power of ten that is >= x (x > 0). */
static double nice_step(double x) {
  const double p = pow(10.0, floor(log10(x)));
  const double m = x / p;
  return (m <= 1.0 + 1e-9 ? 1.0 : m <= 2.0 + 1e-9 ? 2.0 : m <= 5.0 + 1e-9 ? 5.0 : 10.0) * p;
}

int rs_nice_ticks(double lo, double hi, int target, int integer, double *ticks, double *lo_out,
                  double *hi_out) {
  double step, first, last;
  int n;
  /* one value (or none), or a range too thin to step through in doubles (below 1e-12 of its
   * magnitude, or subnormal: -5e-324 to 0 would make a zero step): a unit range around it */
  if (!(hi > lo) || !(hi - lo > 1e-12 * fmax(fabs(lo), fabs(hi))) || !(hi - lo > 1e-290)) {
    double mid = isfinite(lo) ? (isfinite(hi) && hi > lo ? lo + (hi - lo) * 0.5 : lo) : 0.0;
    if (fabs(mid) < 1e-290) mid = 0.0;
    const double half = mid != 0.0 ? fabs(mid) * 0.5 : 0.5;
    lo = mid - half;
    hi = mid + half;
    if (mid >= 0 && lo < 0) lo = 0; /* counts, seconds and bytes stay non-negative */
  }
  if (target < 2) target = 2;
  step = nice_step((hi - lo) / (target - 1));
  if (integer && step < 1.0) step = 1.0;
  for (;;) {
    first = floor(lo / step + 1e-9) * step;
    last = ceil(hi / step - 1e-9) * step;
    n = (int)llround((last - first) / step) + 1;
    if (n <= RS_MAX_TICKS) break;
    step = nice_step(step * 1.5);
  }
  for (int k = 0; k < n; k++) {
    ticks[k] = (floor(lo / step + 1e-9) + k) * step;
    if (fabs(ticks[k]) < step * 1e-9) ticks[k] = 0.0; /* no "-0" */
  }
  *lo_out = first;
  *hi_out = last;
  return n;
}

/* Decimals that show multiples of step exactly (steps are 1, 2 or 5 times a power of ten). */
static int decimals_for(double step) {
  int d = 0;
  while (d < 9 && fabs(step - round(step)) > 1e-9 * (step > 1 ? step : 1)) {
    step *= 10.0;
    d++;
  }
  return d;
}

static void unit_scale(double maxabs, rs_unit unit, double *div, const char **suffix) {
  *div = 1.0;
  *suffix = "";
  if (unit == RS_UNIT_SECONDS) {
    *suffix = " s";
    if (maxabs > 0 && maxabs < 1e-3) *div = 1e-6, *suffix = " \xc2\xb5s";
    else if (maxabs > 0 && maxabs < 1.0) *div = 1e-3, *suffix = " ms";
  } else if (unit == RS_UNIT_BYTES) {
    *suffix = " B";
    if (maxabs >= 1e9) *div = 1e9, *suffix = " GB";
    else if (maxabs >= 1e6) *div = 1e6, *suffix = " MB";
    else if (maxabs >= 1e3) *div = 1e3, *suffix = " KB";
  }
}

void rs_format_tick(char *out, size_t cap, double v, double step, double maxabs, rs_unit unit) {
  double div;
  const char *suffix;
  unit_scale(maxabs, unit, &div, &suffix);
  snprintf(out, cap, "%.*f%s", decimals_for(step / div), v / div, v == 0.0 ? "" : suffix);
}

void rs_format_value(char *out, size_t cap, double v, rs_unit unit) {
  double div;
  const char *suffix;
  unit_scale(fabs(v), unit, &div, &suffix);
  snprintf(out, cap, "%.3g%s", v / div, suffix);
}

const char *rs_color(int i) {
  /* Okabe and Ito's eight, the strongest first (yellow, hard to see on white, late) */
  static const char *const c[RS_PALETTE] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                            "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
  return c[((i % RS_PALETTE) + RS_PALETTE) % RS_PALETTE];
}

/* ---- charts ------------------------------------------------------------------------------- */

void rs_chart_setup(rs_chart *c, double w, double h, double xlo, double xhi, int xint,
                    double ylo, double yhi, rs_unit yunit) {
  double all[RS_MAX_TICKS], a, z;
  int n;
  memset(c, 0, sizeof *c);
  c->w = w;
  c->h = h;
  c->left = 70;
  c->right = 18;
  c->top = 51; /* the title and a row of legend (rs_chart_legend_room) */
  c->bottom = 42;
  c->yunit = yunit;
  /* x: the data's own range, ticks inside it; y: out to the round ticks around the data */
  if (!(xhi > xlo)) {
    xlo -= 0.5;
    xhi += 0.5;
  }
  c->x0 = xlo;
  c->x1 = xhi;
  n = rs_nice_ticks(xlo, xhi, 7, xint, all, &a, &z);
  for (int k = 0; k < n; k++)
    if (all[k] >= xlo - 1e-9 * (xhi - xlo) && all[k] <= xhi + 1e-9 * (xhi - xlo))
      c->xt[c->nxt++] = all[k];
  c->nyt = rs_nice_ticks(ylo, yhi, 6, 0, c->yt, &c->y0, &c->y1);
}

double rs_px(const rs_chart *c, double x) {
  return c->left + (x - c->x0) / (c->x1 - c->x0) * (c->w - c->left - c->right);
}

double rs_py(const rs_chart *c, double y) {
  return c->h - c->bottom - (y - c->y0) / (c->y1 - c->y0) * (c->h - c->top - c->bottom);
}

void rs_chart_begin(rs_buf *b, const rs_chart *c, const char *id, const char *title,
                    const char *xlabel, const char *ylabel, int xticks) {
  const double pl = c->left, pr = c->w - c->right, pt = c->top, pb = c->h - c->bottom;
  double ymax = 0;
  char label[64];
  rs_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"chart\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Arial, "
            "sans-serif\" font-size=\"11\" role=\"img\">\n<title>", id, c->w, c->h, c->w, c->h);
  rs_text(b, title);
  rs_printf(b, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", c->w, c->h);
  rs_printf(b, "<text x=\"%.1f\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" "
            "font-weight=\"bold\">", c->w / 2);
  rs_text(b, title);
  rs_put(b, "</text>\n");
  /* grid and y ticks */
  for (int k = 0; k < c->nyt; k++) ymax = fmax(ymax, fabs(c->yt[k]));
  for (int k = 0; k < c->nyt; k++) {
    const double y = rs_py(c, c->yt[k]);
    rs_format_tick(label, sizeof label, c->yt[k], c->nyt > 1 ? c->yt[1] - c->yt[0] : 1.0, ymax,
                   c->yunit);
    rs_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"tick\">",
              pl, y, pr, y, pl - 6, y + 4);
    rs_text(b, label);
    rs_put(b, "</text>\n");
  }
  if (xticks) {
    double xmax = 0;
    for (int k = 0; k < c->nxt; k++) xmax = fmax(xmax, fabs(c->xt[k]));
    for (int k = 0; k < c->nxt; k++) {
      const double x = rs_px(c, c->xt[k]);
      rs_format_tick(label, sizeof label, c->xt[k], c->nxt > 1 ? c->xt[1] - c->xt[0] : 1.0, xmax,
                     c->xunit);
      rs_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"tick\">",
                x, pb, x, pb + 5, x, pb + 17);
      rs_text(b, label);
      rs_put(b, "</text>\n");
    }
  }
  rs_printf(b, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#333333\"/>\n", pl, pt,
            pb, pr);
  rs_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (pl + pr) / 2, c->h - 6);
  rs_text(b, xlabel);
  rs_printf(b, "</text>\n<text transform=\"translate(14 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">", (pt + pb) / 2);
  rs_text(b, ylabel);
  rs_put(b, "</text>\n");
}

void rs_chart_end(rs_buf *b) { rs_put(b, "</svg>\n"); }

void rs_data_attrs(rs_buf *b, int run, const char *series, double x, double y) {
  rs_printf(b, " data-run=\"%d\" data-series=\"", run);
  rs_text(b, series);
  rs_printf(b, "\" data-x=\"%.9g\" data-y=\"%.9g\"", x, y);
}

/* An entry's width: swatch, gap, text (DejaVu Sans at 11 px: about 6.3 px a character; UTF-8
 * continuation bytes do not count), space after. */
static double entry_width(const rs_legend_item *e) {
  size_t chars = 0;
  for (const unsigned char *s = (const unsigned char *)e->label; *s; s++) chars += (*s & 0xc0) != 0x80;
  return (e->box ? 16 : 26) + 6.3 * (double)chars + 16;
}

/* Walk the layout: calls draw for each entry when b is not NULL; returns the rows used. */
static int legend_walk(rs_buf *b, const rs_chart *c, const rs_legend_item *it, int n) {
  const double x0 = c->left, x1 = c->w - c->right;
  double x = x0;
  int row = 0;
  for (int k = 0; k < n; k++) {
    const double w = entry_width(&it[k]);
    if (k > 0 && (it[k].newrow || x + w > x1 + 16)) {
      row++;
      x = x0;
    }
    if (b) {
      const double y = 38 + 15.0 * row;
      if (it[k].box)
        rs_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\" "
                  "fill-opacity=\"%.2f\"/>", x, y - 9, it[k].color, it[k].opacity);
      else
        rs_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                  "stroke-width=\"2\"%s%s%s/>", x, y - 4, x + 22, y - 4, it[k].color,
                  it[k].dash ? " stroke-dasharray=\"" : "", it[k].dash ? it[k].dash : "",
                  it[k].dash ? "\"" : "");
      rs_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", x + (it[k].box ? 16 : 26), y);
      rs_text(b, it[k].label);
      rs_put(b, "</text>\n");
    }
    x += w;
  }
  return n > 0 ? row + 1 : 0;
}

int rs_legend_rows(const rs_chart *c, const rs_legend_item *it, int n) {
  return legend_walk(NULL, c, it, n);
}

void rs_chart_legend_room(rs_chart *c, int rows) { c->top = 30 + 15.0 * rows + 6; }

void rs_legend_draw(rs_buf *b, const rs_chart *c, const rs_legend_item *it, int n) {
  legend_walk(b, c, it, n);
}
