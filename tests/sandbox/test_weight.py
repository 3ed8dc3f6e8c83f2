"""A niced caller's boxes run niced (tomo.sandbox.weight): the session each box starts gets the caller's weight.

Each case runs in a process of its own session (so lowering its weight lowers nobody else's), which lowers itself
the way a user would, then runs boxes and prints what each saw of its own session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_support import require_bwrap

CALLER = r"""
import asyncio, os, sys, time
from tomo.sandbox import BubblewrapSandbox, Limits, LocalSandbox

kind, how, value, ws = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if how == "task":
    os.nice(value)
elif how == "session":
    with open("/proc/self/autogroup", "w") as handle:
        handle.write(str(value))
box = BubblewrapSandbox() if kind == "strict" else LocalSandbox()
seen = asyncio.run(box.run("cat /proc/self/autogroup", "shell", ws))
print(seen.output.strip())
started = time.monotonic()
slow = asyncio.run(box.run("sleep 30 & sleep 30", "shell", ws, Limits(timeout_s=1)))
print(f"timed out {slow.timed_out} in {time.monotonic() - started:.0f} s")
"""


def _autogroup_or_skip() -> None:
    if not Path("/proc/self/autogroup").exists():
        pytest.skip("this kernel has no autogroup scheduling (CONFIG_SCHED_AUTOGROUP): sessions are not weighed")


def _seen(kind: str, how: str, value: int, ws: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", CALLER, kind, how, str(value), str(ws)], capture_output=True,
                          text=True, timeout=60, start_new_session=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("kind", ["local", "strict"])
@pytest.mark.parametrize(("how", "value"), [("task", 7), ("session", 5), ("none", 0)])
def test_a_box_runs_at_its_callers_weight(kind: str, how: str, value: int, ws: Path) -> None:
    _autogroup_or_skip()
    if kind == "strict":
        require_bwrap()
    autogroup, stopped = _seen(kind, how, value, ws)
    assert autogroup.endswith(f" nice {value}"), autogroup
    # a niced strict box is a session tomo makes instead of bwrap: its timeout still takes the whole tree
    assert stopped in ("timed out True in 1 s", "timed out True in 2 s"), stopped


def test_the_callers_weight_is_the_lower_of_its_own_and_its_sessions() -> None:
    _autogroup_or_skip()
    code = ("import os; from tomo.sandbox.weight import caller_weight as w; a = w(); os.nice(3); b = w(); "
            "open('/proc/self/autogroup', 'w').write('9'); print(a, b, w())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                          start_new_session=True)
    assert done.returncode == 0, done.stderr
    inherited = os.getpriority(os.PRIO_PROCESS, 0)  # a new session starts at nice 0; the process's own is inherited
    assert done.stdout.split() == [str(inherited), str(inherited + 3), str(max(inherited + 3, 9))]
