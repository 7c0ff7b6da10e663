"""Parsing dates from the forms people write them in.

Accepted, with surrounding blanks ignored:
  2024-03-05   2024/03/05       ISO order (year first)
  05.03.2024   05/03/2024       day first (European order)
  20240305                      compact ISO
  March 5, 2024   Mar 5 2024    month name first
  5 March 2024    5 Mar 2024    day first with a month name
"""
import re

from .date import Date
from .fmt import MONTHS

_ISO = re.compile(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})")
_DAY_FIRST = re.compile(r"(\d{1,2})[./](\d{1,2})[./](\d{4})")
_COMPACT = re.compile(r"(\d{4})(\d{2})(\d{2})")
_NAME_FIRST = re.compile(r"([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})")
_DAY_NAME = re.compile(r"(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})")


def month_from_name(name):
    """1..12 for a full or three-letter English month name (any case)."""
    key = name.lower()
    for i, full in enumerate(MONTHS):
        if key == full.lower() or (len(key) == 3 and full.lower().startswith(key)):
            return i + 1
    raise ValueError(f"unknown month name {name!r}")


def _build(text, year, month, day):
    if not 1 <= month <= 12:
        raise ValueError(f"{text!r}: month {month} is out of range")
    try:
        return Date(year, month, day)
    except ValueError as e:
        raise ValueError(f"{text!r}: {e}") from None


def parse_date(text):
    """Returns a Date, or raises ValueError naming the input."""
    if not isinstance(text, str):
        raise TypeError("parse_date expects a string")
    s = text.strip()
    m = _ISO.fullmatch(s)
    if m:
        return _build(text, int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _DAY_FIRST.fullmatch(s)
    if m:
        return _build(text, int(m.group(3)), int(m.group(2)), int(m.group(1)))
    m = _COMPACT.fullmatch(s)
    if m:
        return _build(text, int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _NAME_FIRST.fullmatch(s)
    if m:
        return _build(text, int(m.group(3)), month_from_name(m.group(1)), int(m.group(2)))
    m = _DAY_NAME.fullmatch(s)
    if m:
        return _build(text, int(m.group(3)), month_from_name(m.group(2)), int(m.group(1)))
    raise ValueError(f"{text!r}: not a recognised date")


def parse_range(text):
    """Parses "A .. B" or "A to B" into (start, end) with start <= end."""
    parts = re.split(r"\s+(?:\.\.|to)\s+", text.strip())
    if len(parts) != 2:
        raise ValueError(f"{text!r}: expected 'START .. END'")
    start, end = parse_date(parts[0]), parse_date(parts[1])
    if end < start:
        raise ValueError(f"{text!r}: end is before start")
    return start, end
