"""Half-open intervals [lo, hi) over numbers.

Half-open intervals tile without overlap: [0, 5) and [5, 10) share no
point but touch, so their union is [0, 10). An interval with lo == hi is
empty; lo > hi is an error.
"""


class Interval:
    __slots__ = ("lo", "hi")

    def __init__(self, lo, hi):
        if lo > hi:
            raise ValueError(f"interval bounds out of order: [{lo}, {hi})")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    def __setattr__(self, name, value):
        raise AttributeError("Interval is immutable")

    @property
    def length(self):
        return self.hi - self.lo

    def is_empty(self):
        return self.lo == self.hi

    def contains(self, x):
        return self.lo <= x < self.hi

    def __contains__(self, x):
        return self.contains(x)

    def overlaps(self, other):
        """True when the two share at least one point."""
        return self.lo < other.hi and other.lo < self.hi

    def touches(self, other):
        """True when they overlap or are adjacent ([0,5) and [5,9))."""
        return self.lo <= other.hi and other.lo <= self.hi

    def intersection(self, other):
        """The common part, or None when they do not overlap."""
        if not self.overlaps(other):
            return None
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def hull(self, other):
        """Smallest interval covering both."""
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def union(self, other):
        """The union as one interval; ValueError when there is a gap."""
        if not self.touches(other):
            raise ValueError(f"{self} and {other} are disjoint")
        return self.hull(other)

    def subtract(self, other):
        """self minus other: a list of 0, 1 or 2 non-empty intervals."""
        if not self.overlaps(other):
            return [] if self.is_empty() else [self]
        pieces = []
        if self.lo < other.lo:
            pieces.append(Interval(self.lo, other.lo))
        if other.hi < self.hi:
            pieces.append(Interval(other.hi, self.hi))
        return pieces

    def split(self, at):
        """Two intervals [lo, at) and [at, hi); at must lie within."""
        if not self.lo <= at <= self.hi:
            raise ValueError(f"{at} is outside {self}")
        return Interval(self.lo, at), Interval(at, self.hi)

    def shift(self, delta):
        return Interval(self.lo + delta, self.hi + delta)

    def __eq__(self, other):
        if not isinstance(other, Interval):
            return NotImplemented
        return (self.lo, self.hi) == (other.lo, other.hi)

    def __lt__(self, other):
        return (self.lo, self.hi) < (other.lo, other.hi)

    def __hash__(self):
        return hash((self.lo, self.hi))

    def __repr__(self):
        return f"Interval({self.lo!r}, {self.hi!r})"

    def __str__(self):
        return f"[{self.lo}, {self.hi})"
