"""prism: a deterministic code graph. ``Graph.open(root)`` indexes a repository; queries return plain dataclasses.

Imports nothing above itself (no model, loop or engine): usable alone.
"""

from tomo.prism.graph import Graph
from tomo.prism.indexer import IndexStats
from tomo.prism.model import (
    Applied,
    Callee,
    Caller,
    Conflict,
    Edit,
    ImpactItem,
    Occurrence,
    Plan,
    Reference,
    Symbol,
)
from tomo.prism.rename import LeavesReferences, leaves_warning, left_behind

__all__ = [
    "Applied",
    "Callee",
    "Caller",
    "Conflict",
    "Edit",
    "Graph",
    "ImpactItem",
    "IndexStats",
    "LeavesReferences",
    "Occurrence",
    "Plan",
    "Reference",
    "Symbol",
    "leaves_warning",
    "left_behind",
]
