"""A niced caller's commands stay niced: its weight carried into every session tomo starts.

Why: Linux's autogroup scheduler (on by default on desktop and many server kernels) shares the CPU between sessions
first and by nice only within a session, and each command tomo's sandbox runs starts a session of its own (bubblewrap
`--new-session`, or a new session for the local box). So `nice -n 19 tomo ...`, or a job whose session was lowered
(`echo 19 > /proc/self/autogroup`), still ran every test at full weight: in the lab (issue 27) a niced replay beside a
model run made the model's first reply of a task take 97 s instead of 19 s. A session's weight is its autogroup's
nice (`/proc/PID/autogroup`), which its processes may raise; tomo writes the caller's into each new session.
"""

from __future__ import annotations

import contextlib
import os
import re

_AUTOGROUP_NICE = re.compile(r"\bnice\s+(-?\d+)")


def caller_weight() -> int:
    """The nice the caller runs at, as the scheduler weighs it: its session's (autogroup) or its own, whichever is
    lower in priority; 0 when neither is lowered or the kernel has no autogroup."""
    own = 0
    with contextlib.suppress(OSError):
        own = os.getpriority(os.PRIO_PROCESS, 0)
    return max(own, _autogroup_nice("self") or 0)


def give_weight(pid: int, nice: int) -> None:
    """Sets the session of ``pid`` (a session leader tomo just started) to ``nice``, when that lowers it. Best
    effort: no autogroup, a process already gone, or the kernel's limit of ten such writes a second for an
    unprivileged caller (EAGAIN) leave the session as it was; the command runs either way."""
    if nice <= 0:
        return
    with contextlib.suppress(OSError), open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as handle:
        handle.write(str(nice))


def _autogroup_nice(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/autogroup", encoding="ascii") as handle:
            found = _AUTOGROUP_NICE.search(handle.read())
    except OSError:
        return None
    return int(found.group(1)) if found else None
