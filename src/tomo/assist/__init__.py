"""assist: tomo's front door for code-graph work. A sentence in, prism operations out, payloads never relayed.

``run(task, model, invoke, options)`` drives a model whose only tools are graph operations; ``Session`` is the
dispatcher (``invoke``) that both assist and ``tomo mcp`` serve.
"""

from tomo.assist.engine import AssistOptions, GraphOnlyRegistry, Summary, Verify, instead_of, run, run_sync
from tomo.assist.session import MODEL_OPS, OPS, HandleRefused, OpResult, Session

__all__ = [
    "MODEL_OPS",
    "OPS",
    "AssistOptions",
    "GraphOnlyRegistry",
    "HandleRefused",
    "OpResult",
    "Session",
    "Summary",
    "Verify",
    "instead_of",
    "run",
    "run_sync",
]
