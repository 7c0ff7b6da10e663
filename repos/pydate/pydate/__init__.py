"""pydate - a small, dependency-free calendar date library.

Dates are proleptic Gregorian with no time or time zone. Parsing accepts
the common written forms (ISO 8601, day-first with dots or slashes, month
names, compact YYYYMMDD); formatting supports strftime-like directives.
"""
from .calendar import days_in_month, day_of_year, is_leap
from .date import Date
from .fmt import format_date
from .parser import parse_date

__all__ = ["Date", "parse_date", "format_date", "is_leap", "days_in_month", "day_of_year"]
