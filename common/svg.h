/* svg.h - small, dependency-free SVG charts for reports.
 *
 * Three shapes cover every plot the reports draw: bars with interval
 * whiskers (pass rate per run), a histogram (episode durations) and lines
 * (utilization against lambda, training curves). Every chart has a title,
 * labelled axes with ticks, and a legend when it has several series.
 */
#ifndef RL_SVG_H
#define RL_SVG_H

#include "common/buf.h"

#include <stddef.h>

typedef struct svg_axes {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    double ymin, ymax;   /* ymin == ymax: from the data */
    int integer_y;       /* counts: ticks on whole numbers only */
    int has_xmark;       /* draw a dashed vertical line at xmark */
    double xmark;
} svg_axes;

/* Bars labelled labels[i] with height v[i] and, when lo/hi are non-NULL, a
 * whisker from lo[i] to hi[i]; the value is printed above each bar. */
int svg_bars(buf_t *out, const svg_axes *ax, const char *const *labels, const double *v,
             const double *lo, const double *hi, size_t n);

/* Histogram of x[0..n) in `bins` equal bins. */
int svg_histogram(buf_t *out, const svg_axes *ax, const double *x, size_t n, size_t bins);

typedef struct svg_series {
    const char *name;
    const double *x, *y;
    size_t n;
} svg_series;

/* Line chart with points; a legend names each series. */
int svg_lines(buf_t *out, const svg_axes *ax, const svg_series *s, size_t ns);

#endif
