"""Formatting dates with strftime-like directives."""
from .calendar import day_of_year
from .date import WEEKDAYS

MONTHS = ("January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December")


def _directive(d, code):
    if code == "Y":
        return f"{d.year:04d}"
    if code == "m":
        return f"{d.month:02d}"
    if code == "d":
        return f"{d.day:02d}"
    if code == "e":
        return str(d.day)
    if code == "j":
        return f"{day_of_year(d.year, d.month, d.day):03d}"
    if code == "B":
        return MONTHS[d.month - 1]
    if code == "b":
        return MONTHS[d.month - 1][:3]
    if code == "A":
        return WEEKDAYS[d.weekday()]
    if code == "a":
        return WEEKDAYS[d.weekday()][:3]
    if code == "%":
        return "%"
    raise ValueError(f"unknown format directive %{code}")


def format_date(d, fmt="%Y-%m-%d"):
    out = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        if i + 1 == len(fmt):
            raise ValueError("format ends with a lone %")
        out.append(_directive(d, fmt[i + 1]))
        i += 2
    return "".join(out)
