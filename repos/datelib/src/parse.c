/* parse.c - reading and writing dates as text. */
#include <stdio.h>
#include <string.h>

#include "date.h"

static const char *const weekday_names[7] = {
    "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun",
};
static const char *const month_names[12] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

/* Reads exactly n decimal digits; -1 if any of them is not a digit. */
static int read_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Stores the date only when it exists in the calendar. */
static int make_date(date_t *out, int year, int month, int day)
{
    date_t d = { year, month, day };
    if (!date_is_valid(&d))
        return -1;
    *out = d;
    return 0;
}

int parse_date(const char *s, date_t *out)
{
    int y, m, d;
    size_t len = strlen(s);
    if (len != 10)
        return -1;
    if (s[4] == '-' && s[7] == '-') {
        /* ISO 8601: YYYY-MM-DD */
        if (read_digits(s, 4, &y) || read_digits(s + 5, 2, &m) || read_digits(s + 8, 2, &d))
            return -1;
        return make_date(out, y, m, d);
    }
    if ((s[2] == '/' && s[5] == '/') || (s[2] == '.' && s[5] == '.')) {
        /* European day-first: DD/MM/YYYY or DD.MM.YYYY */
        if (read_digits(s, 2, &d) || read_digits(s + 3, 2, &m) || read_digits(s + 6, 4, &y))
            return -1;
        return make_date(out, y, m, d);
    }
    return -1;
}

const char *weekday_name(weekday_t w)
{
    return (w >= MONDAY && w <= SUNDAY) ? weekday_names[w] : "?";
}

const char *month_name(int month)
{
    return (month >= 1 && month <= 12) ? month_names[month - 1] : "?";
}

/* Appends text to buf at *pos; -1 when it does not fit with its NUL. */
static int put(char *buf, size_t size, size_t *pos, const char *text)
{
    size_t n = strlen(text);
    if (*pos + n >= size)
        return -1;
    memcpy(buf + *pos, text, n + 1);
    *pos += n;
    return 0;
}

int format_date(char *buf, size_t size, const date_t *d, const char *fmt)
{
    size_t pos = 0;
    char tmp[16];
    if (size == 0)
        return -1;
    buf[0] = '\0';
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            tmp[0] = *p;
            tmp[1] = '\0';
        } else {
            switch (*++p) {
            case 'Y': snprintf(tmp, sizeof tmp, "%04d", d->year); break;
            case 'm': snprintf(tmp, sizeof tmp, "%02d", d->month); break;
            case 'd': snprintf(tmp, sizeof tmp, "%02d", d->day); break;
            case 'j': snprintf(tmp, sizeof tmp, "%03d", date_day_of_year(d)); break;
            case 'a': snprintf(tmp, sizeof tmp, "%s", weekday_name(date_weekday(d))); break;
            case 'b': snprintf(tmp, sizeof tmp, "%s", month_name(d->month)); break;
            case '%': snprintf(tmp, sizeof tmp, "%%"); break;
            default: return -1; /* unknown directive, or a lone % at the end */
            }
        }
        if (put(buf, size, &pos, tmp))
            return -1;
    }
    return (int)pos;
}
