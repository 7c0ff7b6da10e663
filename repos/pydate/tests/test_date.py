"""Tests of the Date type and the calendar helpers behind it."""
import datetime

import pytest

from pydate import Date, day_of_year, days_in_month, is_leap
from pydate import calendar


def test_is_leap():
    assert is_leap(2024) and is_leap(2000) and is_leap(1600)
    assert not is_leap(2023) and not is_leap(1900) and not is_leap(2100)


def test_days_in_month():
    assert days_in_month(2023, 2) == 28
    assert days_in_month(2024, 2) == 29
    assert days_in_month(2023, 4) == 30
    assert days_in_month(2023, 12) == 31
    with pytest.raises(ValueError):
        days_in_month(2023, 13)


def test_day_of_year():
    assert day_of_year(2023, 1, 1) == 1
    assert day_of_year(2023, 3, 1) == 60
    assert day_of_year(2024, 3, 1) == 61
    assert day_of_year(2024, 12, 31) == 366


def test_ordinal_matches_stdlib():
    for y, m, d in [(1, 1, 1), (1970, 1, 1), (2000, 2, 29), (2024, 12, 31), (9999, 12, 31)]:
        assert Date(y, m, d).ordinal() == datetime.date(y, m, d).toordinal()
        assert calendar.from_ordinal(datetime.date(y, m, d).toordinal()) == (y, m, d)


def test_date_validation():
    with pytest.raises(ValueError):
        Date(2023, 2, 29)
    with pytest.raises(ValueError):
        Date(2023, 4, 31)
    with pytest.raises(ValueError):
        Date(0, 1, 1)
    with pytest.raises(AttributeError):
        Date(2023, 1, 1).year = 2024


def test_add_days():
    assert Date(2023, 12, 30).add_days(3) == Date(2024, 1, 2)
    assert Date(2024, 2, 28).add_days(1) == Date(2024, 2, 29)
    assert Date(2024, 3, 1).add_days(-1) == Date(2024, 2, 29)
    assert Date(2023, 3, 1).add_days(-1) == Date(2023, 2, 28)
    assert Date(2000, 1, 1).add_days(366) == Date(2001, 1, 1)


def test_add_months():
    assert Date(2024, 1, 31).add_months(1) == Date(2024, 2, 29)
    assert Date(2023, 1, 31).add_months(1) == Date(2023, 2, 28)
    assert Date(2023, 11, 15).add_months(2) == Date(2024, 1, 15)
    assert Date(2023, 3, 15).add_months(-3) == Date(2022, 12, 15)


def test_weekday():
    assert Date(1970, 1, 1).weekday_name() == "Thursday"
    assert Date(2024, 2, 29).weekday_name() == "Thursday"
    assert Date(2023, 12, 31).weekday() == 6
    assert Date(1, 1, 1).weekday() == 0


def test_days_until():
    assert Date(2024, 1, 1).days_until(Date(2024, 12, 31)) == 365
    assert Date(2023, 1, 1).days_until(Date(2023, 12, 31)) == 364
    assert Date(1970, 1, 1).days_until(Date(2000, 1, 1)) == 10957
    assert Date(2000, 1, 1).days_until(Date(1970, 1, 1)) == -10957


def test_ordering_and_hash():
    a, b = Date(2024, 3, 5), Date(2024, 3, 6)
    assert a < b and b > a and a <= a
    assert sorted([b, a]) == [a, b]
    assert len({a, Date(2024, 3, 5)}) == 1
    assert repr(a) == "Date(2024, 3, 5)"
