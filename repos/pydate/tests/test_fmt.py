"""Tests of pydate.format_date."""
import pytest

from pydate import Date, format_date, parse_date


def test_format_default():
    assert format_date(Date(2024, 3, 5)) == "2024-03-05"
    assert Date(7, 1, 9).isoformat() == "0007-01-09"


def test_format_directives():
    d = Date(2024, 3, 5)
    assert format_date(d, "%d/%m/%Y") == "05/03/2024"
    assert format_date(d, "%A %e %B %Y") == "Tuesday 5 March 2024"
    assert format_date(d, "%a %b %d") == "Tue Mar 05"
    assert format_date(d, "day %j (100%%)") == "day 065 (100%)"


def test_format_errors():
    with pytest.raises(ValueError):
        format_date(Date(2024, 3, 5), "%Q")
    with pytest.raises(ValueError):
        format_date(Date(2024, 3, 5), "%Y%")


def test_format_parse_roundtrip():
    for text in ["2024-02-29", "1999-12-31", "0001-01-01", "2023-07-04"]:
        assert format_date(parse_date(text)) == text
    assert format_date(parse_date("5 March 2024"), "%e %B %Y") == "5 March 2024"
