"""Tests of pyinterval.IntervalSet."""
from pyinterval import Interval, IntervalSet


def test_add_disjoint_sorted():
    s = IntervalSet([Interval(10, 12), Interval(0, 2), Interval(5, 6)])
    assert list(s) == [Interval(0, 2), Interval(5, 6), Interval(10, 12)]
    assert len(s) == 3


def test_add_merges_overlapping():
    s = IntervalSet([Interval(0, 4), Interval(3, 8)])
    assert list(s) == [Interval(0, 8)]
    s.add(Interval(1, 2))
    assert list(s) == [Interval(0, 8)]


def test_add_merges_touching():
    s = IntervalSet([Interval(0, 5), Interval(5, 10)])
    assert list(s) == [Interval(0, 10)]


def test_add_bridges_several():
    s = IntervalSet([Interval(0, 1), Interval(2, 3), Interval(4, 5), Interval(9, 10)])
    s.add(Interval(0.5, 4.5))
    assert list(s) == [Interval(0, 5), Interval(9, 10)]
    s.add(Interval(7, 7))
    assert len(s) == 2


def test_remove_splits():
    s = IntervalSet([Interval(0, 10)])
    s.remove(Interval(3, 5))
    assert list(s) == [Interval(0, 3), Interval(5, 10)]
    s.remove(Interval(-1, 1))
    assert list(s) == [Interval(1, 3), Interval(5, 10)]
    s.remove(Interval(2, 6))
    assert list(s) == [Interval(1, 2), Interval(6, 10)]


def test_contains():
    s = IntervalSet([Interval(0, 2), Interval(5, 8)])
    assert 0 in s and 1.5 in s and 5 in s and 7.9 in s
    assert 2 not in s and 4 not in s and 8 not in s and -1 not in s


def test_total_length():
    s = IntervalSet([Interval(0, 2), Interval(1, 4), Interval(10, 11)])
    assert s.total_length() == 5


def test_gaps():
    s = IntervalSet([Interval(1, 3), Interval(5, 6)])
    assert s.gaps(Interval(0, 10)) == [Interval(0, 1), Interval(3, 5), Interval(6, 10)]
    assert s.gaps(Interval(1, 3)) == []


def test_intersection_and_union():
    a = IntervalSet([Interval(0, 5), Interval(10, 15)])
    b = IntervalSet([Interval(3, 12)])
    assert list(a.intersection(b)) == [Interval(3, 5), Interval(10, 12)]
    assert list(a.union(b)) == [Interval(0, 15)]
    assert a.union(IntervalSet()) == a
