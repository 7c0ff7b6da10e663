/* arith.c - date arithmetic through serial day numbers. */
#include "date.h"

date_t date_add_days(const date_t *d, long n)
{
    return date_from_days(date_to_days(d) + n);
}

long date_diff_days(const date_t *a, const date_t *b)
{
    return date_to_days(b) - date_to_days(a);
}

weekday_t date_weekday(const date_t *d)
{
    /* 1970-01-01 was a Thursday (index 3 with Monday = 0). */
    long w = (date_to_days(d) + 3) % 7;
    if (w < 0)
        w += 7;
    return (weekday_t)w;
}

date_t date_add_months(const date_t *d, int n)
{
    /* Count months from year 0 so that carries and borrows are one division. */
    long total = (long)d->year * 12 + (d->month - 1) + n;
    long year = total / 12;
    long month0 = total % 12;
    if (month0 < 0) {
        month0 += 12;
        year -= 1;
    }
    date_t r = { (int)year, (int)month0 + 1, d->day };
    int dim = date_days_in_month(r.year, r.month);
    if (r.day > dim)
        r.day = dim;
    return r;
}

int date_compare(const date_t *a, const date_t *b)
{
    if (a->year != b->year)
        return a->year < b->year ? -1 : 1;
    if (a->month != b->month)
        return a->month < b->month ? -1 : 1;
    if (a->day != b->day)
        return a->day < b->day ? -1 : 1;
    return 0;
}

date_t date_next_weekday(const date_t *d, weekday_t w)
{
    int ahead = ((int)w - (int)date_weekday(d) + 7) % 7;
    return date_add_days(d, ahead);
}
