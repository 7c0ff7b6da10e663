"""Tests of pydate.parse_date and friends."""
import pytest

from pydate import Date, parse_date
from pydate.parser import month_from_name, parse_range


def test_parse_date():
    assert parse_date("2024-03-05") == Date(2024, 3, 5)
    assert parse_date("1999-12-31") == Date(1999, 12, 31)
    assert parse_date("2024-02-29") == Date(2024, 2, 29)
    assert parse_date("  2023-7-4 ") == Date(2023, 7, 4)
    assert parse_date("2024/03/05") == Date(2024, 3, 5)


def test_parse_date_day_first():
    assert parse_date("05.03.2024") == Date(2024, 3, 5)
    assert parse_date("5/3/2024") == Date(2024, 3, 5)
    assert parse_date("31.01.2000") == Date(2000, 1, 31)


def test_parse_date_compact():
    assert parse_date("20240305") == Date(2024, 3, 5)
    assert parse_date("19700101") == Date(1970, 1, 1)


def test_parse_date_month_names():
    assert parse_date("March 5, 2024") == Date(2024, 3, 5)
    assert parse_date("mar 5 2024") == Date(2024, 3, 5)
    assert parse_date("Sept. 9, 2021".replace("Sept", "Sep")) == Date(2021, 9, 9)
    assert parse_date("5 March 2024") == Date(2024, 3, 5)
    assert parse_date("14 Jul 1789") == Date(1789, 7, 14)


def test_parse_date_invalid():
    for bad in ["2023-02-29", "2023-13-01", "2023-00-10", "32.01.2024",
                "Smarch 5, 2024", "", "yesterday", "2024-03", "0000-01-01"]:
        with pytest.raises(ValueError):
            parse_date(bad)


def test_parse_date_error_names_input():
    with pytest.raises(ValueError, match="2023-02-30"):
        parse_date("2023-02-30")


def test_parse_date_type_error():
    with pytest.raises(TypeError):
        parse_date(20240305)


def test_month_from_name():
    assert month_from_name("January") == 1
    assert month_from_name("dec") == 12
    assert month_from_name("SEP") == 9
    with pytest.raises(ValueError):
        month_from_name("Ju")


def test_parse_range():
    start, end = parse_range("2024-01-30 .. 2024-02-02")
    assert (start, end) == (Date(2024, 1, 30), Date(2024, 2, 2))
    assert start.days_until(end) == 3
    assert parse_range("1 Mar 2024 to 3 Mar 2024")[1] == Date(2024, 3, 3)
    with pytest.raises(ValueError):
        parse_range("2024-02-02 .. 2024-01-30")
