"""What every sandbox shares: spawning into per-run cgroups, pumping capped output, the timeout, the cleanup.

A concrete sandbox only says how to wrap an argv (:meth:`Sandbox.launch`) and how to stop a run that timed out
(:meth:`Sandbox.stop`). Everything else -- and so every guarantee the escape battery checks about output, time and
leftovers -- lives here once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import signal
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tomo.errors import SandboxError
from tomo.sandbox.cgroup import Cgroups
from tomo.sandbox.model import ExecResult, Limits, build_argv
from tomo.sandbox.output import OnOutput, OutputCap
from tomo.sandbox.process import AsyncProcess, descendants
from tomo.sandbox.running import Running, exit_code_of, signal_note
from tomo.sandbox.session import PythonSession
from tomo.sandbox.weight import caller_weight, give_weight

RLIMIT_BY_NAME = {
    "as": resource.RLIMIT_AS,
    "cpu": resource.RLIMIT_CPU,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}
PRLIMIT = shutil.which("prlimit", path="/usr/bin:/bin")
# Moves the shell into each cgroup ("0" = the writer itself; `tasks` in v1 avoids the global threadgroup lock), sets
# the rlimits (when the shell is dash, whose ulimit units are known), then execs the rest: everything the run starts is
# born inside the cgroups and under the limits. One small exec instead of a Python fork or a second helper.
JOIN_SHIM = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; {ulimits}exec "$@"'
SHELL_IS_DASH = os.path.basename(os.path.realpath("/bin/sh")) == "dash"
# dash's ulimit flags and units (bytes per unit) for tomo's rlimit names.
DASH_ULIMIT = {"as": ("v", 1024), "cpu": ("t", 1), "fsize": ("f", 512), "nofile": ("n", 1), "nproc": ("p", 1),
               "core": ("c", 512)}
# How often the pids watchdog counts a run's processes when no cgroup bounds them.
WATCH_S = 0.02
# How long after the process exits (or is killed) the output pipe may stay open before tomo stops waiting for it.
DRAIN_S = 3.0


def rlimits_for(limits: Limits) -> dict[str, int]:
    return {
        "as": limits.memory_bytes,
        "cpu": limits.cpu_s,
        "fsize": limits.file_size_bytes,
        "nofile": limits.open_files,
        "core": 0,
    }


def apply_rlimits(values: dict[str, int]) -> None:
    for name, value in values.items():
        if value or name == "core":
            hard = value + 1 if name == "cpu" else value  # SIGXCPU at the soft limit, SIGKILL a second later
            resource.setrlimit(RLIMIT_BY_NAME[name], (value, hard))


@dataclass
class Launch:
    """How to start one run: the full argv, its environment and directory, and rlimits to set before exec."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    rlimits: dict[str, int] = field(default_factory=dict)
    new_session: bool = True  # False when the wrapper makes its own (bwrap --new-session)
    fds: list[int] = field(default_factory=list)  # passed to the child, closed in tomo once it started
    session_flag: str = ""  # the wrapper's argument that makes its session (bwrap's --new-session)

    def in_own_session(self) -> Launch:
        """The same run in a session tomo makes instead of the wrapper, so tomo knows the session's leader (the
        process it starts) and can weigh it (:mod:`tomo.sandbox.weight`). As safe: a session of tomo's making has no
        controlling terminal either, which is what bwrap's flag is for (no TIOCSTI into the caller's terminal)."""
        if self.new_session or not self.session_flag or self.session_flag not in self.argv:
            return self
        at = self.argv.index(self.session_flag)
        if "--" in self.argv and self.argv.index("--") < at:
            return self
        return replace(self, argv=self.argv[:at] + self.argv[at + 1:], new_session=True)


class Sandbox(ABC):
    """Runs shell, Python or an argv in a workspace under :class:`Limits`; see :meth:`run`."""

    name = "sandbox"

    def __init__(self, limits: Limits | None = None, *, use_cgroups: bool = True, python: str | None = None) -> None:
        self.limits = limits or Limits()
        self.use_cgroups = use_cgroups
        self.cgroups_unavailable: str | None = None  # why, once a cgroup could not be made (not retried)
        # Not resolved: a venv's python is a symlink, and only its own path makes the interpreter find the venv.
        self.python = python or sys.executable

    # ---- what a concrete sandbox provides ---------------------------------------------------------------------

    @abstractmethod
    def launch(self, argv: list[str], workspace: Path, limits: Limits) -> Launch:
        """Wraps ``argv`` so it runs confined to ``workspace``."""

    @abstractmethod
    async def stop(self, running: Running) -> None:
        """Kills a run that timed out, with everything it started."""

    def describe(self) -> dict[str, object]:
        """What this sandbox enforces, in plain data (``tomo exec --json`` prints it)."""
        return {"kind": self.name, "cgroups": self.cgroups_unavailable or ("per run" if self.use_cgroups else "off")}

    # ---- the contract -----------------------------------------------------------------------------------------

    async def run(
        self,
        command_or_code: str | Sequence[str],
        language: str = "shell",
        workspace: str | Path = ".",
        limits: Limits | None = None,
        *,
        on_output: OnOutput | None = None,
        on_cut: Callable[[str], None] | None = None,
        stdin: int | None = None,
    ) -> ExecResult:
        """Runs a shell command, a Python block, or an argv list, and returns when it and all its children are gone.

        ``on_output`` receives the output live, up to the cap; if the output was longer, ``on_cut`` is then told in
        words what was not shown and ``on_output`` gets the tail. The result keeps the head and the tail.
        ``stdin`` is a file descriptor the command reads (``tomo exec`` passes a pipe on to it); default: nothing.
        """
        limits = limits or self.limits
        argv = build_argv(command_or_code, language, self.python)
        running = await self.spawn(argv, workspace_path(workspace), limits, stdin=stdin)
        cap = OutputCap(limits.output_bytes, on_output)
        pump = asyncio.create_task(_pump(running.proc, cap.feed))
        waiter = asyncio.ensure_future(running.proc.wait())
        timed_out = False
        try:
            timed_out = not await _wait_or_fail(waiter, pump, limits.timeout_s)
            if timed_out:
                await self.stop(running)
            drained = await _drain(pump)
            cap.finish(on_cut)
        finally:
            if running.proc.returncode is None:  # cancelled or failed: nothing may outlive the call
                await self.stop(running)
            waiter.cancel()
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):  # its error, if any, is already raising
                await pump
            running.proc.close()
            notes = running.notes + running.cleanup()
        duration = time.monotonic() - running.started
        code = 124 if timed_out else exit_code_of(running.proc.returncode or 0)
        if timed_out:
            notes.insert(0, f"timed out after {limits.timeout_s:g} s; the command and all its children were killed")
        elif (note := signal_note(code, limits)) is not None:
            notes.insert(0, note)
        if not drained:
            notes.append(f"the output pipe stayed open {DRAIN_S:g} s after the run ended; stopped reading it")
        if cap.truncated:
            notes.append(cap.notice().strip("[]"))
        return ExecResult(
            exit_code=code, output=cap.text(), truncated=cap.truncated, timed_out=timed_out, duration=duration,
            total_bytes=cap.total, notes=tuple(notes),
        )

    def run_sync(
        self,
        command_or_code: str | Sequence[str],
        language: str = "shell",
        workspace: str | Path = ".",
        limits: Limits | None = None,
        *,
        on_output: OnOutput | None = None,
        on_cut: Callable[[str], None] | None = None,
        stdin: int | None = None,
    ) -> ExecResult:
        """The same as :meth:`run` for callers without an event loop."""
        return asyncio.run(
            self.run(command_or_code, language, workspace, limits, on_output=on_output, on_cut=on_cut, stdin=stdin)
        )

    def session(self, workspace: str | Path = ".", limits: Limits | None = None) -> PythonSession:
        """A persistent Python interpreter in this sandbox: state survives between blocks until it is closed."""
        return PythonSession(self, workspace_path(workspace), limits or self.limits)

    # ---- shared machinery -------------------------------------------------------------------------------------

    async def spawn(
        self, argv: list[str], workspace: Path, limits: Limits, *, stdin: int | None = None,
        pass_fds: Sequence[int] = (),
    ) -> Running:
        """Starts ``argv`` wrapped by :meth:`launch`, in its own session and (where possible) its own cgroups.

        Joining the cgroups and setting rlimits happen in a small exec'd shell (``JOIN_SHIM``; ``prlimit`` sets the
        limits where /bin/sh is not dash) rather than in a Python ``preexec_fn``: that keeps the spawn on vfork, which
        is several milliseconds faster than forking a large Python process, and is safe with threads.
        """
        notes: list[str] = []
        cgroups: Cgroups | None = None
        if self.use_cgroups and self.cgroups_unavailable is None:
            cgroups, why = Cgroups.create(limits.max_pids, limits.memory_bytes)
            if cgroups is None:  # said once per sandbox, on its first run; rlimits still apply
                self.cgroups_unavailable = why
                notes.append(f"no cgroup limits (pids, memory of the whole tree): {why}; rlimits still apply")
        # Where a memory cgroup bounds what the tree really uses, no address-space rlimit: RLIMIT_AS counts
        # reservations, not memory, and breaks programs that reserve big (a JVM, for one, will not start under it).
        launch = self.launch(argv, workspace, limits.with_(memory_bytes=0) if cgroups and cgroups.bounds_memory
                             else limits)
        weight = caller_weight()
        if weight > 0:
            launch = launch.in_own_session()
        full = launch.argv
        preexec: Callable[[], None] | None = None
        procs = [str(p) for p in cgroups.procs] if cgroups is not None else []
        if launch.rlimits and SHELL_IS_DASH:
            script = JOIN_SHIM.format(ulimits=dash_ulimits(launch.rlimits))
            full = ["/bin/sh", "-c", script, "tomo-box", *procs, "--", *full]
        else:
            if launch.rlimits and PRLIMIT is not None:
                full = prlimit_argv(launch.rlimits) + full
            elif launch.rlimits:
                preexec = _preexec(launch.rlimits)
            if procs:
                full = ["/bin/sh", "-c", JOIN_SHIM.format(ulimits=""), "tomo-box", *procs, "--", *full]
        try:
            proc = AsyncProcess.start(
                full, cwd=launch.cwd, env=launch.env, stdin=stdin, pass_fds=(*pass_fds, *launch.fds),
                preexec_fn=preexec, new_session=launch.new_session,
            )
        except OSError as exc:
            if cgroups is not None:
                cgroups.remove()
            raise SandboxError(
                f"cannot start {full[0]}: {exc.strerror}", hint="check that it is installed"
            ) from exc
        finally:
            for fd in launch.fds:
                os.close(fd)
        if launch.new_session:
            give_weight(proc.pid, weight)
        running = Running(proc=proc, cgroups=cgroups, started=time.monotonic(), notes=notes, max_pids=limits.max_pids)
        if cgroups is None and limits.max_pids:
            running.watchdog = asyncio.create_task(self._watch_pids(running))
        return running

    async def _watch_pids(self, running: Running) -> None:
        """Without a cgroup nothing bounds the tree (RLIMIT_NPROC does not apply to root-owned processes, and a
        root-started box maps to root): count it every few milliseconds and kill the whole run past ``max_pids``."""
        while running.proc.returncode is None:
            await asyncio.sleep(WATCH_S)
            count = len(descendants(running.proc.pid))
            if count > running.max_pids:
                running.pids_exceeded = count
                await self.stop(running)
                return


def workspace_path(workspace: str | Path) -> Path:
    path = Path(workspace).expanduser()
    try:
        path = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise SandboxError(f"workspace {workspace} does not exist", hint="create the directory or pass --root") from exc
    if not path.is_dir():
        raise SandboxError(f"workspace {path} is not a directory", hint="pass a directory as the workspace")
    if path == Path("/"):
        raise SandboxError("the workspace cannot be /", hint="pass a project directory; / would make the box moot")
    return path


def _preexec(rlimits: dict[str, int]) -> Callable[[], None]:
    def preexec() -> None:  # runs between fork and exec: only syscalls, no imports, no locks
        apply_rlimits(rlimits)

    return preexec


def dash_ulimits(rlimits: dict[str, int]) -> str:
    """dash ``ulimit`` commands for the same limits :func:`apply_rlimits` sets (sizes rounded down to dash's units)."""
    commands = []
    for name, value in rlimits.items():
        if value or name == "core":
            flag, unit = DASH_ULIMIT[name]
            if name == "cpu":
                commands.append(f"ulimit -t {value + 1} && ulimit -S -t {value}")
            else:
                commands.append(f"ulimit -{flag} {value // unit}")
    return " && ".join(commands) + " || exit 125; " if commands else ""


def prlimit_argv(rlimits: dict[str, int]) -> list[str]:
    """``prlimit`` (util-linux) options for the same limits :func:`apply_rlimits` sets."""
    assert PRLIMIT is not None
    options = [PRLIMIT]
    for name, value in rlimits.items():
        if value or name == "core":
            hard = value + 1 if name == "cpu" else value
            options.append(f"--{name}={value}:{hard}")  # prlimit's option names are tomo's keys
    return [*options, "--"]


async def _pump(proc: AsyncProcess, feed: Callable[[bytes], None]) -> None:
    while chunk := await proc.read():
        feed(chunk)


async def _wait_or_fail(waiter: asyncio.Future[int], pump: asyncio.Task[None], timeout_s: float) -> bool:
    """Waits for the process to exit (True) or the timeout (False); re-raises at once if the output pump failed
    (a live viewer's callback raising, say), so the run is stopped now rather than at its timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not waiter.done():
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        watched: set[asyncio.Future[Any]] = {waiter} if pump.done() else {waiter, pump}
        await asyncio.wait(watched, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        failure = pump.exception() if pump.done() and not pump.cancelled() else None
        if failure is not None:
            raise failure
    return True


async def _drain(pump: asyncio.Task[None]) -> bool:
    """Waits for the output to reach EOF; False when something kept the pipe open too long."""
    try:
        await asyncio.wait_for(asyncio.shield(pump), DRAIN_S)
    except TimeoutError:
        return False
    return True


async def kill_group(running: Running, grace_s: float = 0.0) -> None:
    """SIGKILLs the run's process group (its first process leads it) and waits for the leader."""
    proc = running.proc
    if grace_s and proc.returncode is None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
