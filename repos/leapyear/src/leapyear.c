/* leapyear.c - Gregorian leap-year rules and calendar helpers.
 *
 * A year is a leap year when it is divisible by 4, except centuries, which
 * are leap years only when divisible by 400 (1900 is not, 2000 is).
 */
#include "leapyear.h"

static const int month_lengths[12] = {
    31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
};

/* Floor division, so that counting works for negative years too. */
static int floor_div(int a, int b)
{
    int q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

bool is_leap_year(int year)
{
    /* Centuries are the exception to the every-fourth-year rule... */
    if (year % 100 == 0 && year % 400 != 0)
        return false;
    /* ...and everything else follows it. */
    return year % 4 == 0;
}

int days_in_year(int year)
{
    return is_leap_year(year) ? 366 : 365;
}

int days_in_month(int year, int month)
{
    if (month < 1 || month > 12)
        return 0;
    if (month == 2 && is_leap_year(year))
        return 29;
    return month_lengths[month - 1];
}

bool is_valid_date(int year, int month, int day)
{
    int dim = days_in_month(year, month);
    return dim > 0 && day >= 1 && day <= dim;
}

int day_of_year(int year, int month, int day)
{
    if (!is_valid_date(year, month, day))
        return -1;
    int yday = day;
    for (int m = 1; m < month; m++)
        yday += days_in_month(year, m);
    return yday;
}

int date_from_day_of_year(int year, int yday, int *month, int *day)
{
    if (yday < 1 || yday > days_in_year(year))
        return -1;
    int m = 1;
    while (yday > days_in_month(year, m)) {
        yday -= days_in_month(year, m);
        m++;
    }
    *month = m;
    *day = yday;
    return 0;
}

int next_leap_year(int year)
{
    int y = year + 1;
    while (!is_leap_year(y))
        y++;
    return y;
}

int prev_leap_year(int year)
{
    int y = year - 1;
    while (!is_leap_year(y))
        y--;
    return y;
}

/* Leap years in [0, year) for year >= 0, or minus those in [year, 0)
 * otherwise: the difference of two such counts gives any range. */
static int leaps_before(int year)
{
    int y = year - 1;
    return floor_div(y, 4) - floor_div(y, 100) + floor_div(y, 400) + 1;
}

int leap_years_between(int from, int to)
{
    if (to <= from)
        return 0;
    return leaps_before(to) - leaps_before(from);
}

int days_left_in_year(int year, int month, int day)
{
    int yday = day_of_year(year, month, day);
    if (yday < 0)
        return -1;
    return days_in_year(year) - yday;
}
