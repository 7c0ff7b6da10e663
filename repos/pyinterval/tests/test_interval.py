"""Tests of pyinterval.Interval."""
import pytest

from pyinterval import Interval


def test_construction():
    iv = Interval(1, 4)
    assert (iv.lo, iv.hi, iv.length) == (1, 4, 3)
    assert Interval(2, 2).is_empty()
    with pytest.raises(ValueError):
        Interval(5, 1)
    with pytest.raises(AttributeError):
        iv.lo = 0


def test_contains_half_open():
    iv = Interval(0, 10)
    assert iv.contains(0)
    assert 5 in iv
    assert 9.999 in iv
    assert 10 not in iv
    assert -1 not in iv
    assert 0 not in Interval(0, 0)


def test_overlaps():
    a = Interval(0, 5)
    assert a.overlaps(Interval(4, 8))
    assert a.overlaps(Interval(1, 2))
    assert not a.overlaps(Interval(5, 8))
    assert not a.overlaps(Interval(-3, 0))
    assert Interval(4, 8).overlaps(a)


def test_touches():
    a = Interval(0, 5)
    assert a.touches(Interval(5, 8))
    assert a.touches(Interval(-3, 0))
    assert a.touches(Interval(2, 3))
    assert not a.touches(Interval(6, 8))


def test_intersection():
    assert Interval(0, 5).intersection(Interval(3, 9)) == Interval(3, 5)
    assert Interval(0, 5).intersection(Interval(1, 2)) == Interval(1, 2)
    assert Interval(0, 5).intersection(Interval(5, 9)) is None


def test_union_and_hull():
    assert Interval(0, 5).union(Interval(5, 9)) == Interval(0, 9)
    assert Interval(0, 5).union(Interval(2, 3)) == Interval(0, 5)
    assert Interval(0, 2).hull(Interval(7, 9)) == Interval(0, 9)
    with pytest.raises(ValueError):
        Interval(0, 2).union(Interval(3, 4))


def test_subtract():
    a = Interval(0, 10)
    assert a.subtract(Interval(3, 5)) == [Interval(0, 3), Interval(5, 10)]
    assert a.subtract(Interval(-5, 4)) == [Interval(4, 10)]
    assert a.subtract(Interval(8, 20)) == [Interval(0, 8)]
    assert a.subtract(Interval(-1, 11)) == []
    assert a.subtract(Interval(10, 12)) == [a]


def test_split_and_shift():
    left, right = Interval(0, 10).split(4)
    assert (left, right) == (Interval(0, 4), Interval(4, 10))
    assert Interval(1, 3).shift(10) == Interval(11, 13)
    with pytest.raises(ValueError):
        Interval(0, 10).split(11)


def test_str_repr_hash():
    assert str(Interval(1, 2)) == "[1, 2)"
    assert repr(Interval(1, 2)) == "Interval(1, 2)"
    assert len({Interval(1, 2), Interval(1, 2)}) == 1
