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


def _after_stdlib(path):
    last = -1
    for i, p in enumerate(path):
        real = os.path.realpath(p) if p else p
        if real in _STDLIB or any(real.startswith(s + os.sep) for s in _STDLIB) or real.endswith(".zip"):
            last = i
    return last + 1


sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != _ROOT]
sys.path.insert(_after_stdlib(sys.path), _ROOT)
