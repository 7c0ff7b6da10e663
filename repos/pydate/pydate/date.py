"""The Date value type."""
from functools import total_ordering

from . import calendar

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@total_ordering
class Date:
    """An immutable, validated calendar date."""

    __slots__ = ("year", "month", "day")

    def __init__(self, year, month, day):
        if not 1 <= year <= 9999:
            raise ValueError(f"year must be 1..9999, got {year}")
        if not 1 <= day <= calendar.days_in_month(year, month):
            raise ValueError(f"day {day} is out of range for {year:04d}-{month:02d}")
        object.__setattr__(self, "year", year)
        object.__setattr__(self, "month", month)
        object.__setattr__(self, "day", day)

    def __setattr__(self, name, value):
        raise AttributeError("Date is immutable")

    @classmethod
    def from_ordinal(cls, n):
        return cls(*calendar.from_ordinal(n))

    def ordinal(self):
        return calendar.to_ordinal(self.year, self.month, self.day)

    def weekday(self):
        return calendar.weekday(self.year, self.month, self.day)

    def weekday_name(self):
        return WEEKDAYS[self.weekday()]

    def add_days(self, n):
        return Date.from_ordinal(self.ordinal() + n)

    def add_months(self, n):
        """Moves by n months, clamping the day to the target month's length."""
        index = self.year * 12 + (self.month - 1) + n
        year, month = divmod(index, 12)
        month += 1
        day = min(self.day, calendar.days_in_month(year, month))
        return Date(year, month, day)

    def days_until(self, other):
        return other.ordinal() - self.ordinal()

    def isoformat(self):
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    def _key(self):
        return (self.year, self.month, self.day)

    def __eq__(self, other):
        if not isinstance(other, Date):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other):
        if not isinstance(other, Date):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Date({self.year}, {self.month}, {self.day})"
