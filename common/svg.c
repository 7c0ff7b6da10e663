/* svg.c - bars, histogram and line charts as plain SVG text. */
#include "common/svg.h"

#include "common/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define W 720
#define H 420
#define ML 70 /* margins: left, right, top, bottom */
#define MR 20
#define MT 40
#define MB 70

static const char *COLORS[] = {"#3b6ea5", "#d1603d", "#5a9e4b", "#8a5aa8", "#c9a227", "#4aa3a3"};

typedef struct frame {
    double xmin, xmax, ymin, ymax;
} frame;

static double px(const frame *f, double x)
{
    return ML + (x - f->xmin) / (f->xmax - f->xmin) * (W - ML - MR);
}

static double py(const frame *f, double y)
{
    return H - MB - (y - f->ymin) / (f->ymax - f->ymin) * (H - MT - MB);
}

static void esc(buf_t *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '&': buf_puts(b, "&amp;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        default: buf_putc(b, *s);
        }
    }
}

/* A "nice" tick step for a range, 1/2/5 x 10^k, about 5 ticks. */
static double tick_step(double range)
{
    double raw = range / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

static void header(buf_t *b, const svg_axes *ax)
{
    buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
               W, H, W, H);
    buf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    buf_printf(b, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
    esc(b, ax->title);
    buf_puts(b, "</text>\n");
}

static void axes(buf_t *b, const svg_axes *ax, const frame *f, int xticks)
{
    double step = tick_step(f->ymax - f->ymin);
    if (ax->integer_y && step < 1)
        step = 1;
    for (double y = ceil(f->ymin / step) * step; y <= f->ymax + step * 1e-9; y += step) {
        buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n", ML,
                   W - MR, py(f, y), py(f, y));
        buf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML - 6,
                   py(f, y) + 4, fabs(y) < 1e-12 ? 0.0 : y);
    }
    if (xticks) {
        double xs = tick_step(f->xmax - f->xmin);
        for (double x = ceil(f->xmin / xs) * xs; x <= f->xmax + xs * 1e-9; x += xs)
            buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px(f, x),
                       H - MB + 18, fabs(x) < 1e-12 ? 0.0 : x);
    }
    if (ax->has_xmark && ax->xmark >= f->xmin && ax->xmark <= f->xmax)
        buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#d1603d\" "
                      "stroke-dasharray=\"5,4\"/>\n",
                   px(f, ax->xmark), px(f, ax->xmark), MT, H - MB);
    buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", ML, W - MR,
               H - MB, H - MB);
    buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", ML, ML, MT,
               H - MB);
    buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 16);
    esc(b, ax->xlabel);
    buf_puts(b, "</text>\n");
    buf_printf(b, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">",
               (MT + H - MB) / 2, (MT + H - MB) / 2);
    esc(b, ax->ylabel);
    buf_puts(b, "</text>\n");
}

static void yrange(frame *f, const svg_axes *ax, double lo, double hi)
{
    if (ax->ymin != ax->ymax) {
        f->ymin = ax->ymin;
        f->ymax = ax->ymax;
        return;
    }
    if (hi <= lo)
        hi = lo + 1;
    double step = tick_step(hi - (lo > 0 ? 0 : lo));
    f->ymin = lo > 0 ? 0 : floor(lo / step) * step;
    f->ymax = ceil(hi / step) * step;
}

static int finish(buf_t *b)
{
    return buf_puts(b, "</svg>\n") ? RL_ELIMIT : 0;
}

int svg_bars(buf_t *b, const svg_axes *ax, const char *const *labels, const double *v,
             const double *lo, const double *hi, size_t n)
{
    double top = 0;
    for (size_t i = 0; i < n; i++) {
        double t = hi ? hi[i] : v[i];
        top = t > top ? t : top;
    }
    frame f = {0, (double)(n ? n : 1), 0, 1};
    yrange(&f, ax, 0, top);
    header(b, ax);
    axes(b, ax, &f, 0);
    double slot = (W - ML - MR) / (double)(n ? n : 1), bw = slot * 0.6;
    for (size_t i = 0; i < n; i++) {
        double x = ML + slot * (double)i + (slot - bw) / 2;
        buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                   x, py(&f, v[i]), bw, py(&f, f.ymin) - py(&f, v[i]), COLORS[0]);
        if (lo && hi) {
            double cx = x + bw / 2;
            buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                       cx, cx, py(&f, lo[i]), py(&f, hi[i]));
            for (int e = 0; e < 2; e++) {
                double y = py(&f, e ? hi[i] : lo[i]);
                buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                           cx - 6, cx + 6, y, y);
            }
        }
        double label_y = py(&f, hi ? hi[i] : v[i]) - 6;
        buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.2f</text>\n", x + bw / 2,
                   label_y, v[i]);
        buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x + bw / 2, H - MB + 18);
        esc(b, labels[i]);
        buf_puts(b, "</text>\n");
    }
    return finish(b);
}

int svg_histogram(buf_t *b, const svg_axes *ax, const double *x, size_t n, size_t bins)
{
    if (bins == 0)
        bins = 10;
    double lo = n ? x[0] : 0, hi = n ? x[0] : 1;
    for (size_t i = 0; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    lo = 0;
    if (hi <= lo)
        hi = lo + 1;
    size_t counts[256] = {0};
    if (bins > 256)
        bins = 256;
    double w = (hi - lo) / (double)bins;
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = (size_t)((x[i] - lo) / w);
        if (k >= bins)
            k = bins - 1;
        if (++counts[k] > top)
            top = counts[k];
    }
    frame f = {lo, hi, 0, 1};
    yrange(&f, ax, 0, (double)top);
    header(b, ax);
    axes(b, ax, &f, 1);
    for (size_t k = 0; k < bins; k++) {
        double x0 = px(&f, lo + w * (double)k), x1 = px(&f, lo + w * (double)(k + 1));
        buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                      "stroke=\"white\"/>\n",
                   x0, py(&f, (double)counts[k]), x1 - x0, py(&f, 0) - py(&f, (double)counts[k]),
                   COLORS[0]);
    }
    return finish(b);
}

int svg_lines(buf_t *b, const svg_axes *ax, const svg_series *s, size_t ns)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            xlo = fmin(xlo, s[k].x[i]);
            xhi = fmax(xhi, s[k].x[i]);
            ylo = fmin(ylo, s[k].y[i]);
            yhi = fmax(yhi, s[k].y[i]);
        }
    if (!isfinite(xlo)) {
        xlo = 0;
        xhi = 1;
        ylo = 0;
        yhi = 1;
    }
    if (xhi <= xlo)
        xhi = xlo + 1;
    frame f = {xlo, xhi, 0, 1};
    yrange(&f, ax, ylo, yhi);
    header(b, ax);
    axes(b, ax, &f, 1);
    for (size_t k = 0; k < ns; k++) {
        const char *c = COLORS[k % (sizeof COLORS / sizeof COLORS[0])];
        buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
        for (size_t i = 0; i < s[k].n; i++)
            buf_printf(b, "%.1f,%.1f ", px(&f, s[k].x[i]), py(&f, s[k].y[i]));
        buf_puts(b, "\"/>\n");
        for (size_t i = 0; i < s[k].n && s[k].n <= 60; i++)
            buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(&f, s[k].x[i]),
                       py(&f, s[k].y[i]), c);
        if (ns > 1) {
            buf_printf(b, "<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
                       W - MR - 170, MT + 4 + 18 * k, c);
            buf_printf(b, "<text x=\"%d\" y=\"%zu\">", W - MR - 152, MT + 14 + 18 * k);
            esc(b, s[k].name);
            buf_puts(b, "</text>\n");
        }
    }
    return finish(b);
}
