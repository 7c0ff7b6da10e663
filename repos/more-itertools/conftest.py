"""Puts the work tree on sys.path where it belongs: after the standard
library (a new module in the tree can never shadow one that pytest or the
tests import) and before the installed packages (the copy under test wins
over an installed package of the same name). The sandbox runs Python with
PYTHONSAFEPATH, and pytest.ini asks for --import-mode=append, so nothing
else puts the tree in front."""
import os
import sys
import sysconfig

_ROOT = os.path.dirname(os.path.abspath(__file__))
_STDLIB = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}


def _is_stdlib(real):
    """The standard library's folders: stdlib, its lib-dynload, the zip.
    Installed packages live below stdlib too on Debian
    (/usr/lib/python3.11/dist-packages), so a prefix test is not enough."""
    if real.endswith(".zip") or real in _STDLIB:
        return True
    return any(real.startswith(s + os.sep) and os.path.basename(real) == "lib-dynload" for s in _STDLIB)


def _after_stdlib(path):
    last = -1
    for i, p in enumerate(path):
        if p and _is_stdlib(os.path.realpath(p)):
            last = i
    return last + 1


sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != _ROOT]
sys.path.insert(_after_stdlib(sys.path), _ROOT)
