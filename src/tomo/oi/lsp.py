"""A small Language Server Protocol client (JSON-RPC 2.0 over a server's stdin/stdout), for the context pack.

Only what the pack asks: ``initialize``, ``workspace/symbol`` and ``textDocument/references``. Every request has a
deadline; a server that is missing, crashes, answers garbage or never answers raises :class:`LspError`, and the
caller falls back to prism alone. The client owns its server process and kills its whole process group on close.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlparse

from tomo.errors import TomoError


class LspError(TomoError):
    """The language server could not be started or did not answer in time."""


class LspClient:
    """One language server process rooted at ``root``; use as a context manager."""

    def __init__(self, command: str | Sequence[str], root: Path, *, timeout: float = 10.0) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise LspError("empty language server command", hint='pass a command such as --lsp "pylsp"')
        self.root = root.resolve()
        self.timeout = timeout
        self._next = 0
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, cwd=self.root, start_new_session=True)
        except OSError as exc:
            raise LspError(f"cannot start language server {argv[0]!r}: {exc}",
                           hint="install it (e.g. `pip install python-lsp-server` for pylsp) or drop --lsp") from exc
        assert self.proc.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()
        self.capabilities: dict[str, Any] = {}

    def __enter__(self) -> LspClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- protocol ------------------------------------------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": self.root.as_uri(), "rootPath": str(self.root),
            "capabilities": {"workspace": {"symbol": {}}, "textDocument": {"references": {}}},
            "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
        })
        self.capabilities = (result or {}).get("capabilities", {}) if isinstance(result, dict) else {}
        self.notify("initialized", {})
        return self.capabilities

    def workspace_symbols(self, query: str, timeout: float | None = None) -> list[tuple[str, str, int]]:
        """(name, repo-relative path, 1-based line) of each symbol the server finds for ``query``, inside root."""
        result = self.request("workspace/symbol", {"query": query}, timeout)
        out = []
        for item in result or []:
            loc = item.get("location") or {}
            path = self.relative(loc.get("uri", ""))
            if path is not None:
                line = int(((loc.get("range") or {}).get("start") or {}).get("line", 0)) + 1
                out.append((str(item.get("name", "")), path, line))
        return out

    def references(self, path: str, line: int, col: int, timeout: float | None = None) -> list[tuple[str, int]]:
        """(path, 1-based line) of each reference to the symbol at ``path:line:col`` (col 0-based), inside root."""
        uri = (self.root / path).as_uri()
        try:
            text = (self.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise LspError(f"cannot read {path}: {exc}") from exc
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                              "text": text}})
        result = self.request("textDocument/references", {
            "textDocument": {"uri": uri}, "position": {"line": line - 1, "character": col},
            "context": {"includeDeclaration": False}}, timeout)
        out = []
        for loc in result or []:
            p = self.relative(loc.get("uri", ""))
            if p is not None:
                out.append((p, int(loc["range"]["start"]["line"]) + 1))
        return out

    def relative(self, uri: str) -> str | None:
        if not uri.startswith("file:"):
            return None
        p = Path(unquote(urlparse(uri).path))
        try:
            return p.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return None

    # ---- wire ----------------------------------------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        self._next += 1
        rid = self._next
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LspError(f"language server did not answer {method} within "
                               f"{timeout if timeout is not None else self.timeout:.1f} s")
            try:
                msg = self._replies.get(timeout=left)
            except queue.Empty:
                continue
            if msg is None:
                raise LspError(f"language server exited before answering {method} "
                               f"(exit code {self.proc.poll()})")
            if msg.get("id") != rid or "method" in msg:
                if "method" in msg and "id" in msg:  # a request from the server: decline it, keep waiting
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                continue
            if "error" in msg:
                err = msg["error"] or {}
                raise LspError(f"language server refused {method}: {err.get('message', err)}")
            return msg.get("result")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        stdin = self.proc.stdin
        if stdin is None or self.proc.poll() is not None:
            raise LspError(f"language server has exited (exit code {self.proc.poll()})")
        try:
            stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise LspError(f"cannot write to the language server: {exc}") from exc

    def _read(self, out: IO[bytes]) -> None:
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = out.read(length)
                try:
                    msg = json.loads(body)
                except ValueError:
                    continue
                if isinstance(msg, dict):
                    self._replies.put(msg)
        except (OSError, ValueError):
            return
        finally:
            self._replies.put(None)

    def close(self) -> None:
        """Ask politely (shutdown/exit, half a second), then kill the server's process group."""
        if self.proc.poll() is None:
            try:
                self.request("shutdown", {}, timeout=0.5)
                self.notify("exit", {})
                self.proc.wait(timeout=0.5)
            except (LspError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
