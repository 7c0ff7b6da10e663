/* leapyear.h - Gregorian leap-year rules and the calendar arithmetic that
 * depends on them (month lengths, day-of-year, leap-year counting).
 *
 * Years are proleptic Gregorian: year 0 exists and is a leap year, negative
 * years are allowed. Months are 1-12, days 1-31.
 */
#ifndef LEAPYEAR_H
#define LEAPYEAR_H

#include <stdbool.h>

bool is_leap_year(int year);
int days_in_year(int year);
/* Number of days of `month` in `year`, or 0 when month is not 1-12. */
int days_in_month(int year, int month);
bool is_valid_date(int year, int month, int day);
/* 1-based ordinal day (1 Jan = 1), or -1 for an invalid date. */
int day_of_year(int year, int month, int day);
/* Inverse of day_of_year: fills month and day, returns 0, or -1 when yday
 * is outside 1..days_in_year(year). */
int date_from_day_of_year(int year, int yday, int *month, int *day);
/* First leap year strictly after / before `year`. */
int next_leap_year(int year);
int prev_leap_year(int year);
/* Number of leap years in the half-open range [from, to); 0 when to <= from. */
int leap_years_between(int from, int to);
/* Days remaining in the year after the given date (31 Dec -> 0), or -1. */
int days_left_in_year(int year, int month, int day);

#endif
