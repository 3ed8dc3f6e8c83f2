"""Which serving processes are gone: the rule the team's and the lab's DBOS janitors share.

Each serving process heartbeats a row (executor id, host, pid, last seen); a janitor hands the pending work of a
gone one back to the queue. Gone means: on this host, its pid no longer exists (known at once); anywhere, silent for
longer than ``stale_after`` seconds (another host's pid cannot be asked).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable


def pid_alive(pid: int) -> bool:
    """Whether a process of this host exists (one owned by another user counts: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_executors(rows: Iterable[tuple[str, str, int, float]], me: str, host: str, stale_after: float,
                   now: float | None = None) -> list[str]:
    """The executor ids among ``rows`` (executor id, host, pid, seen at) that are gone, never ``me``."""
    now = time.time() if now is None else now
    return [executor_id for executor_id, on, pid, seen_at in rows
            if executor_id != me and ((on == host and not pid_alive(pid)) or now - seen_at > stale_after)]
