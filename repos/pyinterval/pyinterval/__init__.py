"""pyinterval - half-open numeric intervals and sets of them."""
from .interval import Interval
from .intervalset import IntervalSet

__all__ = ["Interval", "IntervalSet"]
