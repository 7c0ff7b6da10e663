/* date.h - a small calendar-date library: parsing, formatting, arithmetic.
 *
 * Dates are proleptic Gregorian, without time or time zone. Serial day
 * numbers count days since 1970-01-01 (day 0), negative before it.
 */
#ifndef DATE_H
#define DATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct date {
    int year;
    int month; /* 1-12 */
    int day;   /* 1-31 */
} date_t;

typedef enum weekday {
    MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY
} weekday_t;

/* calendar.c */
bool date_is_leap(int year);
int date_days_in_month(int year, int month); /* 0 for a bad month */
bool date_is_valid(const date_t *d);
long date_to_days(const date_t *d);
date_t date_from_days(long days);
int date_day_of_year(const date_t *d);

/* parse.c: "YYYY-MM-DD", "DD/MM/YYYY" or "DD.MM.YYYY" -> 0, else -1 and
 * *out is left untouched. */
int parse_date(const char *s, date_t *out);
/* Formats with %Y %m %d %j %a %b %%; returns the length written, or -1
 * when the buffer is too small or the format is bad. */
int format_date(char *buf, size_t size, const date_t *d, const char *fmt);
const char *weekday_name(weekday_t w);
const char *month_name(int month);

/* arith.c */
date_t date_add_days(const date_t *d, long n);
long date_diff_days(const date_t *a, const date_t *b); /* b - a */
weekday_t date_weekday(const date_t *d);
/* Adds months, clamping the day to the end of the target month
 * (31 Jan + 1 month = 28 or 29 Feb). */
date_t date_add_months(const date_t *d, int n);
int date_compare(const date_t *a, const date_t *b); /* -1, 0, 1 */
/* Next date on or after d that falls on weekday w. */
date_t date_next_weekday(const date_t *d, weekday_t w);

#endif
