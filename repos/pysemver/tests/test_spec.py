"""Tests of pysemver ranges."""
import pytest

from pysemver import Spec, max_satisfying, satisfies


def test_exact_and_comparators():
    assert satisfies("1.2.3", "1.2.3")
    assert satisfies("1.2.3", "=1.2.3")
    assert not satisfies("1.2.4", "1.2.3")
    assert satisfies("1.2.4", ">1.2.3")
    assert not satisfies("1.2.3", ">1.2.3")
    assert satisfies("1.2.2", "<1.2.3")


def test_inclusive_bounds():
    assert satisfies("1.2.3", ">=1.2.3")
    assert satisfies("2.0.0", "<=2.0.0")
    assert satisfies("1.5.0", ">=1.2.3 <=2.0.0")
    assert not satisfies("2.0.1", ">=1.2.3 <=2.0.0")
    assert not satisfies("1.2.2", ">=1.2.3 <=2.0.0")


def test_caret():
    assert satisfies("1.2.3", "^1.2.3")
    assert satisfies("1.9.0", "^1.2.3")
    assert not satisfies("2.0.0", "^1.2.3")
    assert not satisfies("1.2.2", "^1.2.3")
    assert satisfies("0.2.9", "^0.2.3")
    assert not satisfies("0.3.0", "^0.2.3")
    assert satisfies("0.0.3", "^0.0.3")
    assert not satisfies("0.0.4", "^0.0.3")


def test_tilde():
    assert satisfies("1.2.3", "~1.2.3")
    assert satisfies("1.2.9", "~1.2.3")
    assert not satisfies("1.3.0", "~1.2.3")
    assert not satisfies("1.3.1", "~1.2.3")


def test_wildcards():
    assert satisfies("1.2.0", "1.2.x")
    assert satisfies("1.2.99", "1.2.*")
    assert not satisfies("1.3.0", "1.2.x")
    assert satisfies("1.9.9", "1.x")
    assert not satisfies("2.0.0", "1.x")
    assert satisfies("42.0.0", "*")
    assert satisfies("1.2.5", "1.2")


def test_alternatives():
    spec = Spec("<1.0.0 || >=2.0.0 <3.0.0")
    assert spec.match("0.5.0")
    assert spec.match("2.5.0")
    assert not spec.match("1.5.0")
    assert not spec.match("3.0.0")
    with pytest.raises(ValueError):
        Spec("1.0.0 || ")


def test_prerelease_exclusion():
    assert not satisfies("1.3.0-beta", "^1.2.3")
    assert satisfies("1.2.3-beta.2", ">=1.2.3-beta.1 <1.3.0")
    assert not satisfies("1.2.4-beta.2", ">=1.2.3-beta.1 <1.3.0")


def test_max_satisfying():
    versions = ["1.2.3", "1.2.4", "1.3.0", "2.0.0", "2.0.0-rc.1", "0.9.0"]
    assert max_satisfying(versions, "^1.2.3") == "1.3.0"
    assert max_satisfying(versions, "~1.2.3") == "1.2.4"
    assert max_satisfying(versions, ">=2.0.0") == "2.0.0"
    assert max_satisfying(versions, "<=2.0.0") == "2.0.0"
    assert max_satisfying(versions, ">3.0.0") is None


def test_invalid_ranges():
    for bad in ["^1.2", ">=abc", "1.y.0"]:
        with pytest.raises(ValueError):
            Spec(bad)
