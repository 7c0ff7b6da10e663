"""Version ranges in the npm style.

A range is one or more alternatives joined by "||"; an alternative is a
list of comparators that must all hold. Comparators: "=1.2.3", ">1.2.3",
">=1.2.3", "<1.2.3", "<=1.2.3", caret "^1.2.3" (changes that do not modify
the left-most non-zero part), tilde "~1.2.3" (patch-level changes), and
wildcards "1.2.x", "1.x", "*". A pre-release version only satisfies a range
when some comparator names the same major.minor.patch with a pre-release.
"""
import re

from .version import Version, parse

_OPS = {
    "=": lambda v, b: v == b,
    ">": lambda v, b: v > b,
    ">=": lambda v, b: v >= b,
    "<": lambda v, b: v < b,
    "<=": lambda v, b: v <= b,
}
_COMPARATOR = re.compile(r"(>=|<=|>|<|=|\^|~)?\s*([^\s<>=^~]\S*)")
_WILDCARDS = ("x", "X", "*")


def _caret(v):
    """^1.2.3 := >=1.2.3 <2.0.0; ^0.2.3 := <0.3.0; ^0.0.3 := <0.0.4."""
    if v.major > 0:
        upper = v.bump_major()
    elif v.minor > 0:
        upper = v.bump_minor()
    else:
        upper = v.bump_patch()
    return [(">=", v), ("<", upper)]


def _tilde(v):
    """~1.2.3 := >=1.2.3 <1.3.0."""
    return [(">=", v), ("<", v.bump_minor())]


def _wildcard(text):
    """"1.2.x" / "1.x" / "*" as comparators, or None when not a wildcard."""
    parts = text.lstrip("v").split(".")
    if len(parts) > 3 or (len(parts) == 3 and not any(p in _WILDCARDS for p in parts)):
        return None
    nums = []
    for p in parts:
        if p in _WILDCARDS:
            break
        if not p.isdigit():
            raise ValueError(f"invalid range part {text!r}")
        nums.append(int(p))
    if not nums:
        return []  # "*": anything
    if len(nums) == 1:
        low = Version(nums[0], 0, 0)
        return [(">=", low), ("<", low.bump_major())]
    low = Version(nums[0], nums[1], 0)
    return [(">=", low), ("<", low.bump_minor())]


def _parse_comparators(text):
    comps = []
    for m in _COMPARATOR.finditer(text):
        op, arg = m.group(1), m.group(2)
        if op in (None, "="):
            wild = _wildcard(arg)
            if wild is not None:
                comps.extend(wild)
                continue
            comps.append(("=", parse(arg)))
        elif op == "^":
            comps.extend(_caret(parse(arg)))
        elif op == "~":
            comps.extend(_tilde(parse(arg)))
        else:
            comps.append((op, parse(arg)))
    return comps


class Spec:
    def __init__(self, text):
        self.text = text
        alternatives = [alt.strip() for alt in text.split("||")]
        if any(not alt for alt in alternatives) and text.strip():
            raise ValueError(f"invalid range {text!r}: empty alternative")
        self.alternatives = [_parse_comparators(alt) for alt in alternatives]

    def _allows_prerelease(self, comps, v):
        return any(b.prerelease and b.release() == v.release() for _, b in comps)

    def match(self, version):
        v = parse(version) if isinstance(version, str) else version
        for comps in self.alternatives:
            if v.prerelease and not self._allows_prerelease(comps, v):
                continue
            if all(_OPS[op](v, bound) for op, bound in comps):
                return True
        return False

    def __repr__(self):
        return f"Spec({self.text!r})"


def satisfies(version, range_text):
    return Spec(range_text).match(version)


def max_satisfying(versions, range_text):
    """The highest of the version strings that satisfy the range, or None."""
    spec = Spec(range_text)
    best = None
    for text in versions:
        v = parse(text)
        if spec.match(v) and (best is None or v > best):
            best = v
    return str(best) if best is not None else None
