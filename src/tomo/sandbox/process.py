"""A child process awaited through a pidfd and read through the event loop's selector: no watcher thread.

asyncio's own subprocess support (3.11) waits for each child on a helper thread and wakes the loop from it; on a busy
machine that hop costs ~10 ms per run, more than bare bwrap takes to start. A pidfd (Linux 5.3+) becomes readable
when the process exits, so the loop can wait for exit and output on one selector. Where pidfd_open is missing the wait
falls back to a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Callable, Sequence


class AsyncProcess:
    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid
        assert popen.stdout is not None
        self._out = popen.stdout.fileno()
        os.set_blocking(self._out, False)

    @classmethod
    def start(
        cls, argv: Sequence[str], *, cwd: str, env: dict[str, str], stdin: int | None,
        pass_fds: Sequence[int] = (), preexec_fn: Callable[[], None] | None = None, new_session: bool = True,
    ) -> AsyncProcess:
        """Starts ``argv`` as the leader of a new process group (and session, unless the wrapped program makes its
        own: bwrap --new-session does, and bwrap itself starts ~7 ms slower as a session leader), with stdout and
        stderr on one pipe, in the order the program wrote them."""
        popen = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL if stdin is None else stdin, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, cwd=cwd, env=env, start_new_session=new_session,
            process_group=None if new_session else 0, pass_fds=tuple(pass_fds), preexec_fn=preexec_fn,
        )
        return cls(popen)

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def read(self, size: int = 65536) -> bytes:
        """The next chunk of output; b"" once every holder of the pipe has closed it."""
        while True:
            try:
                return os.read(self._out, size)
            except BlockingIOError:
                await _readable(self._out)

    async def wait(self) -> int:
        if self.popen.poll() is not None:
            return self.popen.returncode
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd here, or already reaped
            return await asyncio.to_thread(self.popen.wait)
        try:
            if self.popen.poll() is None:
                await _readable(pidfd)
        finally:
            os.close(pidfd)
        return self.popen.wait()

    def send_signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signum)

    def close(self) -> None:
        if self.popen.stdout is not None:
            self.popen.stdout.close()


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def descendants(root: int) -> set[int]:
    """Every live process below ``root``, from the parent links in /proc (a box's processes are bwrap's descendants)."""
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
        if fields and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found
