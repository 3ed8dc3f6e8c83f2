"""A persistent Python interpreter inside a sandbox: variables, imports and open files survive between blocks.

Open Interpreter's users expect a second block to see what the first one defined. The session runs a small driver
(``DRIVER`` below) in the same box as any other run -- same flags, limits and cgroups -- and speaks a framed protocol
with it: tomo writes ``TOKEN LENGTH\\n`` and the code to a pipe the driver reads (fd N, not stdin, so the code's own
``input()`` cannot eat the protocol); the driver executes the block in one namespace, echoes the value of a final
expression like a notebook, and writes ``\\x1eTOKEN STATUS\\n`` to its stdout when done. Output is everything before
that marker. A block that times out kills the whole session (the box has no safe way to interrupt arbitrary code),
the result says the state was lost, and the next block starts a fresh interpreter. CPU time is counted per process,
so it accumulates over the blocks of one session: engines open a fresh session per turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tomo.errors import SandboxError
from tomo.sandbox.model import MAX_CODE_BYTES, ExecResult, Limits
from tomo.sandbox.output import OnOutput, OutputCap
from tomo.sandbox.process import AsyncProcess
from tomo.sandbox.running import Running, exit_code_of, signal_note

DRIVER = r"""
import ast, os, sys, traceback
ctl = os.fdopen(int(sys.argv[1]), "rb", buffering=0)
ns = {"__name__": "__main__", "__builtins__": __builtins__}
def read_exact(n):
    data = b""
    while len(data) < n:
        more = ctl.read(n - len(data))
        if not more:
            raise EOFError
        data += more
    return data
def readline():
    line = b""
    while not line.endswith(b"\n"):
        more = ctl.read(1)
        if not more:
            raise EOFError
        line += more
    return line
while True:
    try:
        token, size = readline().split()
        source = read_exact(int(size)).decode()
    except (EOFError, ValueError):
        break
    status = 0
    try:
        tree = ast.parse(source, "<block>")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<block>", "exec"), ns)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<block>", "eval"), ns)
            if value is not None:
                print(repr(value))
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:
        tb = exc.__traceback__
        traceback.print_exception(type(exc), exc, tb.tb_next if tb is not None else None)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os.write(1, b"\x1e" + token + b" " + str(status).encode() + b"\n")
"""

MARK = b"\x1e"


class Host(Protocol):
    """The sandbox a session runs in (:class:`tomo.sandbox.base.Sandbox`, whose ``session()`` opens one): its
    interpreter, and how it starts and stops a run."""

    python: str

    async def spawn(self, argv: list[str], workspace: Path, limits: Limits, *, stdin: int | None = None,
                    pass_fds: Sequence[int] = ()) -> Running: ...

    async def stop(self, running: Running) -> None: ...


class PythonSession:
    """Use as ``async with sandbox.session(ws) as py: await py.run("x = 1"); await py.run("x + 1")``."""

    def __init__(self, sandbox: Host, workspace: Path, limits: Limits) -> None:
        self.sandbox = sandbox
        self.workspace = workspace
        self.limits = limits
        self.starts = 0
        self._running: Running | None = None
        self._ctl: int | None = None
        self._carry = b""

    @property
    def alive(self) -> bool:
        return self._running is not None and self._running.proc.returncode is None

    async def start(self) -> None:
        if self.alive:
            return
        await self.close()
        read_fd, write_fd = os.pipe()
        try:
            argv = [self.sandbox.python, "-u", "-c", DRIVER, str(read_fd)]
            self._running = await self.sandbox.spawn(argv, self.workspace, self.limits, pass_fds=(read_fd,))
        except BaseException:
            os.close(write_fd)
            raise
        finally:
            os.close(read_fd)
        self._ctl = write_fd
        self._carry = b""
        self.starts += 1

    async def run(self, code: str, *, on_output: OnOutput | None = None, timeout_s: float | None = None) -> ExecResult:
        """Runs one block in the session (starting it if needed) and returns its output and status."""
        data = code.encode()
        if len(data) > MAX_CODE_BYTES * 8:
            raise SandboxError(f"the Python block is {len(data):,} bytes", hint="write it to a file and import it")
        restarted = self.starts > 0 and not self.alive
        await self.start()
        running = self._running
        assert running is not None and self._ctl is not None
        token = secrets.token_hex(16).encode()
        cap = OutputCap(self.limits.output_bytes, on_output)
        started = time.monotonic()
        timeout = timeout_s or self.limits.timeout_s
        notes: list[str] = []
        if restarted:
            notes.append("the previous Python session had ended; this block ran in a fresh one (earlier state is gone)")
        with contextlib.suppress(OSError):  # the driver died: reading below sees EOF and says so
            await asyncio.to_thread(_write_all, self._ctl, token + b" " + str(len(data)).encode() + b"\n" + data)
        status: int | None = None
        timed_out = False
        try:
            status = await asyncio.wait_for(self._read_block(running.proc, token, cap), timeout)
        except TimeoutError:
            timed_out = True
        except BaseException:  # cancelled, or on_output failed: the block may still run, so end the session rather
            await self._end()  # than let its output leak into the next block
            raise
        if timed_out or status is None:
            notes += await self._end(grace_s=0.0 if timed_out else 3.0)
            code_ = 124 if timed_out else exit_code_of(running.proc.returncode or 0)
            if timed_out:
                notes.insert(0, f"timed out after {timeout:g} s; the Python session and all its children were killed "
                                "and its state is lost")
            else:
                why = signal_note(code_, self.limits)
                notes.insert(0, "the Python session ended during this block" + (f" ({why})" if why else "")
                             + "; its state is lost")
        else:
            code_ = status
        if cap.truncated:
            notes.append(cap.notice().strip("[]"))
        return ExecResult(
            exit_code=code_, output=cap.text(), truncated=cap.truncated, timed_out=timed_out,
            duration=time.monotonic() - started, total_bytes=cap.total, notes=tuple(notes),
        )

    async def _read_block(self, stream: AsyncProcess, token: str | bytes, cap: OutputCap) -> int | None:
        """Feeds output to ``cap`` until the driver's end marker; None if the session died first."""
        marker = MARK + (token if isinstance(token, bytes) else token.encode()) + b" "
        keep = len(marker) - 1
        pending, self._carry = self._carry, b""
        while True:
            at = pending.find(marker)
            if at >= 0:
                cap.feed(pending[:at])
                rest = pending[at + len(marker):]
                while b"\n" not in rest:
                    more = await stream.read(65536)
                    if not more:
                        return None
                    rest += more
                status, _, self._carry = rest.partition(b"\n")
                return int(status)
            if len(pending) > keep:
                cap.feed(pending[: len(pending) - keep])
                pending = pending[len(pending) - keep:]
            chunk = await stream.read(65536)
            if not chunk:
                cap.feed(pending)
                return None
            pending += chunk

    async def _end(self, grace_s: float = 0.0) -> list[str]:
        """Tears the session down; ``grace_s`` lets an interpreter that is already exiting report its own status."""
        running, self._running = self._running, None
        if self._ctl is not None:
            with contextlib.suppress(OSError):
                os.close(self._ctl)
            self._ctl = None
        if running is None:
            return []
        if grace_s and running.proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(running.proc.wait(), grace_s)
        if running.proc.returncode is None:
            await self.sandbox.stop(running)
        running.proc.close()
        return running.cleanup()

    async def close(self) -> None:
        """Ends the interpreter (closing its pipe lets it exit on its own; then the box is torn down)."""
        running = self._running
        if running is not None and running.proc.returncode is None and self._ctl is not None:
            os.close(self._ctl)
            self._ctl = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(running.proc.wait(), 2.0)
        await self._end()

    async def __aenter__(self) -> PythonSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
