"""The local sandbox's launcher: runs one command and makes sure nothing it started outlives it.

Run as ``python -I -S _reaper.py PARENT_PID as=N,cpu=N,... -- ARGV...`` in a new session. It becomes a child subreaper
(PR_SET_CHILD_SUBREAPER), so every orphan of the command -- a daemon that double-forked, a child that called
setsid() -- is re-parented to it instead of to init. When the command exits, or when tomo sends SIGTERM (timeout),
or when tomo dies (PR_SET_PDEATHSIG), it stops every descendant with SIGSTOP (a stopped process cannot fork),
SIGKILLs them and reaps them all, and only then exits with the command's status (128+N for signal N).

It imports nothing from tomo and few modules (no json), so it starts quickly.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` would import enum, ~4 ms of the launch
import ctypes
import os
import resource
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
RLIMITS = {
    "as": resource.RLIMIT_AS,
    "cpu": resource.RLIMIT_CPU,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}


class Stop(Exception):
    pass


def on_signal(signum: int, frame: object) -> None:
    raise Stop(signum)


def descendants(root: int) -> set[int]:
    """Like tomo.sandbox.process.descendants, repeated here because this script imports nothing from tomo (it must
    start in milliseconds); zombies are kept: the reaper reaps them itself."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def reap_nohang() -> bool:
    """Reaps what has exited; returns False when no child is left at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def sweep() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not reap_nohang():
        return
    me = os.getpid()
    stopped: set[int] = set()
    for _ in range(10_000):
        new = descendants(me) - stopped
        if not new:
            break
        for pid in new:
            try:  # noqa: SIM105 (no contextlib: the launcher imports as little as it can)
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        stopped |= new
    for pid in stopped:
        try:  # noqa: SIM105
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main() -> int:
    parent, argv = int(sys.argv[1]), sys.argv[4:]
    limits = {k: int(v) for k, _, v in (item.partition("=") for item in sys.argv[2].split(",") if item)}
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    if os.getppid() != parent:  # tomo died before PDEATHSIG was armed
        return 124
    handled = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, handled)  # no Stop may land in the child before exec
        pid = os.fork()
        if pid == 0:
            for sig in (*handled, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, handled)
            try:
                for name, value in limits.items():
                    if value:
                        soft = hard = int(value)
                        if name == "cpu":
                            hard = soft + 1  # SIGXCPU at the soft limit, SIGKILL a second later
                        resource.setrlimit(RLIMITS[name], (soft, hard))
                os.execvp(argv[0], argv)
            except OSError as exc:
                os.write(2, f"tomo: cannot run {argv[0]!r}: {exc.strerror}\n".encode())
                os._exit(127)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, handled)
        status = 0
        while True:
            done, raw = os.waitpid(-1, 0)
            if done == pid:
                status = os.waitstatus_to_exitcode(raw)
                break
    except Stop:
        sweep()
        return 124
    sweep()
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main())
