"""Python binding resolution over the stored facts, at query time (see core.py for what a value is)."""

from tomo.prism.resolve.core import FileInfo, Resolver, Value
from tomo.prism.resolve.text import same_name

__all__ = ["FileInfo", "Resolver", "Value", "same_name"]
