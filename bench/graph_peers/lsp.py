"""A minimal LSP client over stdio (JSON-RPC 2.0 with Content-Length framing), enough to drive basedpyright.

Twenty-odd lines of framing are clearer than pulling a client framework into the bench. Server-to-client requests
(``workspace/configuration``, progress creation, capability registration) get a plain answer so the server proceeds.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any


def uri(path: Path) -> str:
    return path.resolve().as_uri()


class LspClient:
    def __init__(self, proc: asyncio.subprocess.Process, settings: Callable[[str], Any]) -> None:
        self.proc = proc
        self.settings = settings
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.progress_active: set[str] = set()
        self.progress_seen = asyncio.Event()
        self.progress_done = asyncio.Event()
        self.files_found = asyncio.Event()  # pyright logs "Found N source files" once the workspace is enumerated
        self.log: list[str] = []
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, argv: list[str], cwd: Path, settings: Callable[[str], Any]) -> LspClient:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 26,
        )
        return cls(proc, settings)

    async def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.proc.stdin.drain()

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        await self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await fut

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                key, _, value = line.decode().partition(":")
                if key.lower() == "content-length":
                    length = int(value)
            msg = json.loads(await out.readexactly(length))
            await self._dispatch(msg)

    async def _dispatch(self, msg: dict[str, Any]) -> None:
        if "method" in msg and "id" in msg:  # a request from the server
            result: Any = None
            if msg["method"] == "workspace/configuration":
                result = [self.settings(item.get("section", "")) for item in msg["params"]["items"]]
            await self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif "method" in msg:
            if msg["method"] == "window/logMessage":
                text = str(msg["params"].get("message", ""))
                self.log.append(text)
                if re.match(r"Found \d+ source files?", text):
                    self.files_found.set()
            elif msg["method"] == "$/progress":
                token, kind = str(msg["params"]["token"]), msg["params"]["value"].get("kind")
                if kind == "begin":
                    self.progress_active.add(token)
                    self.progress_seen.set()
                    self.progress_done.clear()
                elif kind == "end":
                    self.progress_active.discard(token)
                    if not self.progress_active:
                        self.progress_done.set()
        elif msg.get("id") in self.pending:
            fut = self.pending.pop(msg["id"])
            if "error" in msg:
                fut.set_exception(RuntimeError(f"LSP error: {msg['error']}"))
            else:
                fut.set_result(msg.get("result"))

    async def shutdown(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            await self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 10)
        except (TimeoutError, ConnectionError):
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()
