"""Calendar arithmetic: leap years, month lengths, ordinal day numbers.

Ordinals count days from 0001-01-01 (ordinal 1), like the standard
library's date.toordinal(), so results can be cross-checked against it.
"""

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DAYS_BEFORE_MONTH = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def is_leap(year):
    """True for Gregorian leap years (every 4th, but not centuries unless /400)."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    if not 1 <= month <= 12:
        raise ValueError(f"month must be 1..12, got {month}")
    if month == 2 and is_leap(year):
        return 29
    return _MONTH_DAYS[month - 1]


def day_of_year(year, month, day):
    """1-based day within the year (1 January is 1)."""
    extra = 1 if month > 2 and is_leap(year) else 0
    return _DAYS_BEFORE_MONTH[month - 1] + extra + day


def _days_before_year(year):
    y = year - 1
    return y * 365 + y // 4 - y // 100 + y // 400


def to_ordinal(year, month, day):
    return _days_before_year(year) + day_of_year(year, month, day)


def from_ordinal(n):
    """Inverse of to_ordinal: (year, month, day) of ordinal n >= 1."""
    if n < 1:
        raise ValueError(f"ordinal must be >= 1, got {n}")
    # Estimate the year from the mean Gregorian year, then correct it.
    year = max(1, (n * 400) // 146097)
    while _days_before_year(year) >= n:
        year -= 1
    while _days_before_year(year + 1) < n:
        year += 1
    rest = n - _days_before_year(year)
    month = 1
    while rest > days_in_month(year, month):
        rest -= days_in_month(year, month)
        month += 1
    return year, month, rest


def weekday(year, month, day):
    """0 = Monday ... 6 = Sunday (0001-01-01 was a Monday)."""
    return (to_ordinal(year, month, day) - 1) % 7
