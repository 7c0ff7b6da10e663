/* calendar.c - month lengths and the date <-> serial day conversion.
 *
 * The conversion shifts the year to start in March, so that the leap day
 * is the last day of the shifted year; the remaining months then follow a
 * regular 153-days-per-5-months pattern (see days_from_civil below).
 */
#include "date.h"

static const int month_days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

bool date_is_leap(int year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int date_days_in_month(int year, int month)
{
    if (month < 1 || month > 12)
        return 0;
    if (month == 2 && date_is_leap(year))
        return 29;
    return month_days[month - 1];
}

bool date_is_valid(const date_t *d)
{
    int dim = date_days_in_month(d->year, d->month);
    return dim > 0 && d->day >= 1 && d->day <= dim;
}

/* Floor division for negative serial days and years. */
static long floor_div(long a, long b)
{
    long q = a / b;
    if (a % b != 0 && (a < 0) != (b < 0))
        q--;
    return q;
}

long date_to_days(const date_t *d)
{
    long y = d->year;
    int m = d->month;
    /* Jan and Feb belong to the previous March-based year. */
    if (m <= 2)
        y -= 1;
    long era = floor_div(y, 400);
    long yoe = y - era * 400;                         /* [0, 399] */
    int mp = (m + 9) % 12;                            /* March = 0 */
    long doy = (153 * mp + 2) / 5 + d->day - 1;       /* [0, 365] */
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

date_t date_from_days(long days)
{
    long z = days + 719468;
    long era = floor_div(z, 146097);
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    date_t d;
    d.day = (int)(doy - (153 * mp + 2) / 5 + 1);
    d.month = (int)(mp < 10 ? mp + 3 : mp - 9);
    d.year = (int)(yoe + era * 400 + (d.month <= 2));
    return d;
}

int date_day_of_year(const date_t *d)
{
    int n = d->day;
    for (int m = 1; m < d->month; m++)
        n += date_days_in_month(d->year, m);
    return n;
}
