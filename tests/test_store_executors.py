"""The janitors' rule (team and lab): which heartbeating processes are gone."""

from __future__ import annotations

import os
import subprocess
import sys

from tomo.store.executors import dead_executors, pid_alive


def test_a_process_of_this_host_is_gone_when_its_pid_is_and_another_hosts_when_it_falls_silent() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid exists no more
    rows = [("me", "here", 1, 0.0),  # never myself, however silent
            ("here-dead", "here", gone.pid, 100.0), ("here-alive", "here", os.getpid(), 100.0),
            ("there-silent", "there", os.getpid(), 50.0), ("there-recent", "there", 999_999, 95.0)]
    assert dead_executors(rows, "me", "here", stale_after=10.0, now=100.0) == ["here-dead", "there-silent"]
    assert pid_alive(os.getpid()) and not pid_alive(gone.pid)
