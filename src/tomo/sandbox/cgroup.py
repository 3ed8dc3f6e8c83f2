"""Per-run cgroups for a pids and a memory limit, where the machine lets tomo create them.

rlimits cannot bound a process tree: RLIMIT_NPROC is never enforced for processes whose real uid is root (the kernel
exempts the root user itself, capabilities or not, and a root-started bubblewrap box maps its uid 65534 to root), and
RLIMIT_AS is per process. A cgroup bounds the whole tree. tomo creates one under its own cgroup (v1: one directory per
controller; v2: one directory, if the parent delegates the controllers) and the spawned process joins it before it
executes anything (``JOIN_SHIM`` in base.py), so nothing can fork outside it. When no cgroup can be created,
:meth:`Cgroups.create` says why and the run relies on rlimits alone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()
_swept: set[Path] = set()


def _own_paths() -> dict[str, str]:
    """controller name (or "" for the v2 hierarchy) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


@dataclass
class Cgroups:
    """The cgroup directories of one run; ``procs`` are the files a process writes "0" to in order to join."""

    version: str
    dirs: list[Path]
    procs: list[Path]
    max_pids: int
    memory_bytes: int
    bounds_memory: bool = False  # a memory limit is in force for the whole tree

    @classmethod
    def create(cls, max_pids: int, memory_bytes: int) -> tuple[Cgroups | None, str]:
        """Returns the cgroups, or None and the reason none could be made (shown to the user as a note)."""
        name = f"tomo-{os.getpid()}-{next(_counter)}"
        own = _own_paths()
        try:
            if "pids" in own and (ROOT / "pids").is_dir():
                return cls._create_v1(name, own, max_pids, memory_bytes), ""
            if (ROOT / "cgroup.controllers").exists() and "" in own:
                return cls._create_v2(name, own[""], max_pids, memory_bytes), ""
        except OSError as exc:
            return None, f"cannot create a cgroup here ({exc.strerror}: {exc.filename})"
        return None, "no cgroup pids controller is mounted at /sys/fs/cgroup"

    @classmethod
    def _create_v1(cls, name: str, own: dict[str, str], max_pids: int, memory_bytes: int) -> Cgroups:
        made: list[Path] = []
        try:
            pids = ROOT / "pids" / own.get("pids", "/").lstrip("/") / name
            _sweep_stale(pids.parent)
            pids.mkdir()
            made.append(pids)
            if max_pids:
                (pids / "pids.max").write_text(str(max_pids))
            if memory_bytes and "memory" in own and (ROOT / "memory").is_dir():
                mem = ROOT / "memory" / own["memory"].lstrip("/") / name
                _sweep_stale(mem.parent)
                mem.mkdir()
                made.append(mem)
                (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # absent without swap accounting
                    (mem / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
        except OSError:
            for directory in reversed(made):
                with contextlib.suppress(OSError):
                    directory.rmdir()
            raise
        # A new process joins through `tasks` with "0" (itself, single-threaded): the kernel then skips the global
        # threadgroup lock a write to cgroup.procs takes, which can cost an RCU grace period.
        return cls("v1", made, [d / "tasks" for d in made], max_pids, memory_bytes, bounds_memory=len(made) > 1)

    @classmethod
    def _create_v2(cls, name: str, own: str, max_pids: int, memory_bytes: int) -> Cgroups:
        parent = ROOT / own.lstrip("/")
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if "pids" not in enabled:
            raise OSError(0, "the pids controller is not delegated to tomo's cgroup", str(parent))
        group = parent / name
        _sweep_stale(parent)
        group.mkdir()
        bounds_memory = bool(memory_bytes) and "memory" in enabled
        try:
            if max_pids:
                (group / "pids.max").write_text(str(max_pids))
            if bounds_memory:
                (group / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):
                    (group / "memory.swap.max").write_text("0")
        except OSError:
            group.rmdir()
            raise
        return cls("v2", [group], [group / "cgroup.procs"], max_pids, memory_bytes, bounds_memory=bounds_memory)

    def members(self) -> set[int]:
        found: set[int] = set()
        for procs in (d / "cgroup.procs" for d in self.dirs):
            with contextlib.suppress(OSError):
                found.update(int(x) for x in procs.read_text().split())
        return found

    def wait_empty(self, seconds: float) -> bool:
        """True if members remain after ``seconds`` (a box's pid 1 may still be tearing down when bwrap returns)."""
        deadline = time.monotonic() + seconds
        while self.members():
            if time.monotonic() > deadline:
                return True
            time.sleep(0.002)
        return False

    def kill_all(self) -> int:
        """SIGKILLs whatever is still in the cgroups (the last line of defence); returns how many were killed."""
        killed = 0
        for _ in range(200):
            members = self.members()
            if not members:
                return killed
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            time.sleep(0.005)
        return killed

    def notes(self) -> list[str]:
        """What the limits did, in words: forks refused, processes killed by the memory limit."""
        notes: list[str] = []
        for directory in self.dirs:
            events = _read_kv(directory / "pids.events")
            if events.get("max", 0) > 0:
                notes.append(f"the process limit ({self.max_pids}) refused {events['max']:,} forks")
            oom = _read_kv(directory / "memory.oom_control") or _read_kv(directory / "memory.events")
            if oom.get("oom_kill", 0) > 0:
                mib = self.memory_bytes // (1024 * 1024)
                notes.append(f"the memory limit ({mib:,} MiB) killed {oom['oom_kill']} process(es)")
        return notes

    def remove(self) -> None:
        for directory in self.dirs:
            for _ in range(100):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the last member is being reaped
                    self.kill_all()
                    time.sleep(0.01)


def _read_kv(path: Path) -> dict[str, int]:
    try:
        text = path.read_text()
    except OSError:
        return {}
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values


def _sweep_stale(parent: Path) -> None:
    """Removes empty cgroups left by a tomo that was killed before it could clean up (once per directory)."""
    if parent in _swept:
        return
    _swept.add(parent)
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            parts = entry.name.split("-")
            if len(parts) != 3 or parts[0] != "tomo" or not parts[1].isdigit() or int(parts[1]) == os.getpid():
                continue
            try:
                os.kill(int(parts[1]), 0)
                continue  # its tomo is alive
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            with contextlib.suppress(OSError):
                entry.rmdir()  # fails, harmlessly, if something still runs in it
