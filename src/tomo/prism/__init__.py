"""prism: a deterministic code graph. ``Graph.open(root)`` indexes a repository; queries return plain dataclasses.

Imports nothing above itself (no model, loop or engine): usable alone.
"""

from tomo.prism.graph import Graph, Occurrence
from tomo.prism.indexer import IndexStats
from tomo.prism.model import (
    Applied,
    Callee,
    Caller,
    Conflict,
    Edit,
    ImpactItem,
    Plan,
    Reference,
    Symbol,
)

__all__ = [
    "Applied",
    "Callee",
    "Caller",
    "Conflict",
    "Edit",
    "Graph",
    "ImpactItem",
    "IndexStats",
    "Occurrence",
    "Plan",
    "Reference",
    "Symbol",
]
