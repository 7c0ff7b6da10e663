"""Tests of pysemver.Version."""
import pytest

from pysemver import Version, parse


def test_parse_simple():
    v = parse("1.2.3")
    assert (v.major, v.minor, v.patch) == (1, 2, 3)
    assert v.prerelease == () and v.build == ()
    assert str(parse("v10.20.30")) == "10.20.30"


def test_parse_prerelease_and_build():
    v = parse("1.0.0-alpha.1+build.5.sha-1a2b")
    assert v.prerelease == ("alpha", "1")
    assert v.build == ("build", "5", "sha-1a2b")
    assert str(v) == "1.0.0-alpha.1+build.5.sha-1a2b"
    assert v.is_prerelease()


def test_parse_invalid():
    for bad in ["1.2", "1.2.3.4", "01.2.3", "1.2.3-", "1.2.3-01", "a.b.c", "1.2.3+", ""]:
        with pytest.raises(ValueError):
            parse(bad)


def test_compare_core_numbers():
    assert parse("1.2.3") < parse("1.2.4")
    assert parse("1.2.10") > parse("1.2.9")
    assert parse("1.10.0") > parse("1.9.9")
    assert parse("2.0.0") > parse("1.99.99")
    assert parse("1.2.3") == parse("1.2.3")


def test_prerelease_before_release():
    assert parse("1.0.0-alpha") < parse("1.0.0")
    assert parse("1.0.0") > parse("1.0.0-rc.1")
    assert parse("1.0.0-rc.1") < parse("1.0.1-alpha")


def test_prerelease_precedence_chain():
    # the example chain from semver.org section 11
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
             "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    versions = [parse(s) for s in chain]
    for a, b in zip(versions, versions[1:]):
        assert a < b, f"{a} should sort before {b}"


def test_prerelease_numeric_identifiers():
    assert parse("1.0.0-rc.2") < parse("1.0.0-rc.10")
    assert parse("1.0.0-9") < parse("1.0.0-10")
    assert parse("1.0.0-2") < parse("1.0.0-a")


def test_build_metadata_ignored():
    assert parse("1.0.0+a") == parse("1.0.0+b")
    assert hash(parse("1.0.0+a")) == hash(parse("1.0.0"))


def test_sorting():
    texts = ["1.0.0", "0.9.0", "1.0.0-beta", "1.0.1", "0.10.0"]
    assert [str(v) for v in sorted(parse(t) for t in texts)] == \
        ["0.9.0", "0.10.0", "1.0.0-beta", "1.0.0", "1.0.1"]


def test_bump():
    assert str(parse("1.2.3").bump_major()) == "2.0.0"
    assert str(parse("1.2.3").bump_patch()) == "1.2.4"
    assert str(parse("1.2.3-rc.1").bump_patch()) == "1.2.3"
    assert str(parse("1.2.3+b7").release()) == "1.2.3"
    with pytest.raises(ValueError):
        Version(1, -1, 0)
