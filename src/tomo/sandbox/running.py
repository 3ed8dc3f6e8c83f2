"""A started run: what must be cleaned up after it, and what its exit status means in words.

Apart from :mod:`tomo.sandbox.base` so that both the sandboxes and the persistent session (which the sandboxes open)
read it without importing each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from dataclasses import dataclass

from tomo.sandbox.cgroup import Cgroups
from tomo.sandbox.model import Limits
from tomo.sandbox.process import AsyncProcess


@dataclass
class Running:
    """A started run and what must be cleaned up after it."""

    proc: AsyncProcess
    cgroups: Cgroups | None
    started: float
    notes: list[str]
    watchdog: asyncio.Task[None] | None = None
    pids_exceeded: int = 0
    max_pids: int = 0

    def cleanup(self) -> list[str]:
        """Kills anything left in the run's cgroups and removes them; returns what the limits did, in words."""
        notes: list[str] = []
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        if self.pids_exceeded:
            notes.append(f"the process limit ({self.max_pids}) was exceeded ({self.pids_exceeded} processes); "
                         "the whole run was killed")
        if self.cgroups is not None:
            leftover = self.cgroups.kill_all() if self.cgroups.wait_empty(0.25) else 0
            if leftover:
                notes.append(f"{leftover} process(es) were still running after the run and were killed")
            notes += self.cgroups.notes()
            self.cgroups.remove()
            self.cgroups = None
        return notes


def exit_code_of(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def signal_note(code: int, limits: Limits) -> str | None:
    """Says which limit a signal death most likely came from (a shell may also exit 128+N on its own)."""
    if code == 128 + signal.SIGXCPU:
        return f"stopped by the CPU-time limit ({limits.cpu_s} s of CPU)"
    if 128 < code < 128 + signal.NSIG:
        with contextlib.suppress(ValueError):
            return f"ended by signal {signal.Signals(code - 128).name}"
    return None
