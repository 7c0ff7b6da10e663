"""A small pytest module whose real --junitxml output is the fixture
junit_pytest.xml (see ../regen.sh). Covers pass, fail (with XML-special
characters and ':' in the message), error in a fixture, skip, xfail,
parametrized ids, a class, captured output and a long traceback."""
import pytest


def parse_date(s):
    y, m, d = s.split("-")
    return int(y), int(m), int(d)


def test_parse_date():
    assert parse_date("2024-02-29") == (2024, 2, 29)


def test_compare_markup():
    got = "a<b & \"c\""
    assert got == "a<b & 'c'", "markup: <tag attr='x'>"


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke: no database")


def test_uses_fixture(broken):
    assert broken


def test_skipped():
    pytest.skip("not on this platform")


@pytest.mark.xfail(reason="known bug")
def test_expected_failure():
    assert 1 == 2


@pytest.mark.parametrize("t", ["12:00", "25:00", "é"])
def test_parse_time(t):
    h = int(t.split(":")[0]) if ":" in t else -1
    assert 0 <= h < 24


class TestLeap:
    def test_1900(self):
        print("checking 1900")
        assert (1900 % 4 == 0) is False

    def test_2000(self):
        assert 2000 % 400 == 0


def _deep(n):
    if n == 0:
        raise ValueError("x" * 5000)
    return _deep(n - 1)


def test_long_traceback():
    _deep(30)
