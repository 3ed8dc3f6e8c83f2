"""The local sandbox: no confinement of files or network, only limits. Chosen explicitly, never as a fallback.

The command runs under a small launcher (``_reaper.py``) in its own session and process group. The launcher is a
child subreaper, so a child that calls setsid() or double-forks is still its descendant; on exit, timeout or tomo's
death it stops and kills the whole tree before it exits itself. rlimits bound address space, CPU time, file size and
open files; a per-run cgroup (when the machine allows) bounds the number of processes and the memory of the tree.
The environment is inherited: this box is for people who trust the code.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

from tomo.sandbox.base import Launch, Sandbox, kill_group, rlimits_for
from tomo.sandbox.model import Limits
from tomo.sandbox.running import Running

REAPER = Path(__file__).with_name("_reaper.py")


class LocalSandbox(Sandbox):
    name = "local"

    def launch(self, argv: list[str], workspace: Path, limits: Limits) -> Launch:
        rlimits = ",".join(f"{name}={value}" for name, value in rlimits_for(limits).items())
        launcher = [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), rlimits, "--"]
        return Launch(argv=launcher + argv, env=dict(os.environ), cwd=str(workspace))

    async def stop(self, running: Running) -> None:
        """Asks the launcher to kill the tree (it knows the re-parented orphans), then kills the launcher's group."""
        proc = running.proc
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        await kill_group(running, grace_s=3.0)
        if running.cgroups is not None:
            running.cgroups.kill_all()

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "confines_files": False, "network": True, "kills_tree": "subreaper launcher"}
