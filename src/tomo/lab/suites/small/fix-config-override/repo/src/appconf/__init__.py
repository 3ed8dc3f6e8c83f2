"""Layered INI-style configuration: built-in defaults, then the site file, then the user's local overrides."""

from appconf.loader import load, merge_layers
from appconf.parse import parse_ini

__all__ = ["load", "merge_layers", "parse_ini"]
