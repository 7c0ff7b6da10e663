"""A set of numbers stored as sorted, disjoint, non-touching intervals."""
from bisect import bisect_left

from .interval import Interval


class IntervalSet:
    def __init__(self, intervals=()):
        self._items = []  # sorted by lo; no two touch
        for iv in intervals:
            self.add(iv)

    def add(self, iv):
        """Adds an interval, merging every stored one it touches."""
        if iv.is_empty():
            return
        merged = iv
        keep = []
        for cur in self._items:
            if cur.touches(merged):
                merged = merged.hull(cur)
            else:
                keep.append(cur)
        i = bisect_left([c.lo for c in keep], merged.lo)
        keep.insert(i, merged)
        self._items = keep

    def remove(self, iv):
        """Removes every point of iv, splitting stored intervals as needed."""
        out = []
        for cur in self._items:
            out.extend(cur.subtract(iv))
        self._items = out

    def contains(self, x):
        i = bisect_left([c.lo for c in self._items], x)
        # x may lie in the interval starting at x, or in the one before
        if i < len(self._items) and self._items[i].contains(x):
            return True
        return i > 0 and self._items[i - 1].contains(x)

    def __contains__(self, x):
        return self.contains(x)

    def total_length(self):
        return sum(c.length for c in self._items)

    def gaps(self, within):
        """Sub-intervals of `within` not covered by the set."""
        rest = IntervalSet([within])
        for cur in self._items:
            rest.remove(cur)
        return list(rest)

    def intersection(self, other):
        out = IntervalSet()
        for a in self._items:
            for b in other._items:
                common = a.intersection(b)
                if common is not None:
                    out.add(common)
        return out

    def union(self, other):
        return IntervalSet(list(self) + list(other))

    def __iter__(self):
        return iter(list(self._items))

    def __len__(self):
        return len(self._items)

    def __eq__(self, other):
        return isinstance(other, IntervalSet) and self._items == other._items

    def __repr__(self):
        return "IntervalSet([" + ", ".join(repr(c) for c in self._items) + "])"
