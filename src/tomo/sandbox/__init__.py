"""Running code a model wrote: a strict bubblewrap box by default, an explicit unconfined local box otherwise.

``sandbox`` imports no model, loop or engine: it runs code, it does not know why.
"""

from tomo.errors import SandboxError
from tomo.sandbox.base import Sandbox
from tomo.sandbox.bwrap import BubblewrapSandbox, find_bwrap
from tomo.sandbox.factory import make_sandbox
from tomo.sandbox.local import LocalSandbox
from tomo.sandbox.model import ExecResult, Limits, normalize_language
from tomo.sandbox.session import PythonSession

__all__ = [
    "BubblewrapSandbox",
    "ExecResult",
    "Limits",
    "LocalSandbox",
    "PythonSession",
    "Sandbox",
    "SandboxError",
    "find_bwrap",
    "make_sandbox",
    "normalize_language",
]
