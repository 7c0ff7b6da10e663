"""sample.py - fixture for tests/test_mutate.c: a small date module with
the constructs the mutator must handle (docstrings and comments holding
operators, f-strings, keyword arguments, decorators, nested defs)."""
import re

DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
PATTERN = re.compile(r"(\d{4})-(\d{2})-(\d{2})")  # a < b in a comment


def is_leap_year(y):
    """True when y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)."""
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def days_in_month(y, m):
    if m < 1 or m > 12:
        raise ValueError(f"bad month {m} < 1")
    if m == 2 and is_leap_year(y):
        return 29
    return DAYS[m - 1]


def parse_date(text):
    match = PATTERN.fullmatch(text)
    if not match:
        raise ValueError("expected YYYY-MM-DD, got %r" % text)
    y, m, d = (int(g) for g in match.groups())
    if d < 1 or d > days_in_month(y, m):
        raise ValueError("day out of range")
    return y, m, d


def day_of_year(y, m, d):
    total = d
    for month in range(1, m):
        total += days_in_month(y, month)
    return total


def clamp(value, low, high):
    result = value
    if result < low:
        result = low
    elif result > high:
        result = high
    return result


def pad(s, width=8, fill=" "):
    out = s
    while len(out) < width:
        out = fill + out
    return out


class Calendar:
    def __init__(self, year):
        self.year = year
        self.cache = {}

    def month_lengths(self):
        lengths = []
        for m in range(12):
            lengths.append(days_in_month(self.year, m + 1))
        return lengths


def season(m, items):
    if m is None:
        return None
    total = 0
    start = total
    for item in items:
        total += item
        if total > m:
            break
    if m < 3:
        label = "winter"
    else:
        label = "summer"
    return label if start else total > 3
