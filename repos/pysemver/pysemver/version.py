"""Parsing, ordering and bumping of semantic versions (semver.org 2.0.0).

Precedence: major, minor and patch compare numerically; a version with a
pre-release tag sorts before the same version without one; pre-release
identifiers compare one by one, numeric ones numerically and below
alphanumeric ones, and a shorter list sorts first when all else is equal.
Build metadata (after '+') is kept but never affects precedence.
"""
import re
from functools import total_ordering

_NUM = r"0|[1-9]\d*"
_IDENT = r"[0-9A-Za-z-]+"
_VERSION = re.compile(
    rf"v?(?P<major>{_NUM})\.(?P<minor>{_NUM})\.(?P<patch>{_NUM})"
    rf"(?:-(?P<pre>{_IDENT}(?:\.{_IDENT})*))?"
    rf"(?:\+(?P<build>{_IDENT}(?:\.{_IDENT})*))?"
)


def _cmp(a, b):
    return (a > b) - (a < b)


def _compare_identifiers(a, b):
    a_num, b_num = a.isdigit(), b.isdigit()
    if a_num and b_num:
        return _cmp(int(a), int(b))
    if a_num:
        return -1  # numeric identifiers have lower precedence
    if b_num:
        return 1
    return _cmp(a, b)


def _compare_prerelease(a, b):
    """Compares two pre-release tuples; () means a release."""
    if not a and not b:
        return 0
    if not a:
        return 1  # a release is greater than any of its pre-releases
    if not b:
        return -1
    for x, y in zip(a, b):
        c = _compare_identifiers(x, y)
        if c:
            return c
    return _cmp(len(a), len(b))


@total_ordering
class Version:
    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(self, major, minor, patch, prerelease=(), build=()):
        if min(major, minor, patch) < 0:
            raise ValueError("version numbers must be >= 0")
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)

    def compare(self, other):
        """-1, 0 or 1 by semver precedence (build metadata ignored)."""
        c = _cmp((self.major, self.minor, self.patch), (other.major, other.minor, other.patch))
        if c:
            return c
        return _compare_prerelease(self.prerelease, other.prerelease)

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.compare(other) == 0

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self.compare(other) < 0

    def __hash__(self):
        return hash((self.major, self.minor, self.patch, self.prerelease))

    def is_prerelease(self):
        return bool(self.prerelease)

    def release(self):
        """The version without pre-release and build parts."""
        return Version(self.major, self.minor, self.patch)

    def bump_major(self):
        return Version(self.major + 1, 0, 0)

    def bump_minor(self):
        return Version(self.major, self.minor + 1, 0)

    def bump_patch(self):
        # 1.2.3-rc.1 -> 1.2.3: the pre-release was heading for this patch
        if self.prerelease:
            return self.release()
        return Version(self.major, self.minor, self.patch + 1)

    def __str__(self):
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            s += "-" + ".".join(self.prerelease)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self):
        return f"Version({str(self)!r})"


def parse(text):
    """Parses "1.2.3", "v1.2.3-rc.1+build.5"; raises ValueError otherwise."""
    m = _VERSION.fullmatch(text.strip())
    if not m:
        raise ValueError(f"invalid version {text!r}")
    pre = tuple(m.group("pre").split(".")) if m.group("pre") else ()
    for ident in pre:
        if ident.isdigit() and len(ident) > 1 and ident[0] == "0":
            raise ValueError(f"invalid version {text!r}: leading zero in {ident!r}")
    build = tuple(m.group("build").split(".")) if m.group("build") else ()
    return Version(int(m.group("major")), int(m.group("minor")), int(m.group("patch")), pre, build)
