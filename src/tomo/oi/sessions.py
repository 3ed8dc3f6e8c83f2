"""Saved conversations of ``tomo run``: one JSON file per session under ``ROOT/.tomo/sessions/``.

A session is written whole after every round (to a temporary file, then renamed), so a crash, a model error or a
Ctrl-C leaves the last complete state on disk, never half a file. ``--continue`` picks the most recently saved one.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomo.errors import ConfigError
from tomo.models.messages import Message, ToolCall

SESSIONS_DIR = ".tomo/sessions"
FORMAT = 1


def message_to_dict(m: Message) -> dict[str, Any]:
    data: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        data["tool_calls"] = [{"id": c.id, "name": c.name, "args": c.args, "malformed": c.malformed,
                               "raw_args": c.raw_args} for c in m.tool_calls]
    if m.tool_call_id is not None:
        data["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        data["name"] = m.name
    if m.is_error:
        data["is_error"] = True
    return data


def message_from_dict(data: dict[str, Any]) -> Message:
    calls = [ToolCall(c["id"], c["name"], c.get("args") or {}, c.get("malformed"), c.get("raw_args"))
             for c in data.get("tool_calls") or []]
    return Message(data["role"], data.get("content") or "", calls, data.get("tool_call_id"), data.get("name"),
                   bool(data.get("is_error")))


@dataclass(slots=True)
class Session:
    id: str
    path: Path
    messages: list[Message] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.meta["updated"] = time.time()
        data = {"format": FORMAT, "id": self.id, "meta": self.meta,
                "messages": [message_to_dict(m) for m in self.messages]}
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.path)


class SessionStore:
    def __init__(self, root: Path) -> None:
        self.dir = root / SESSIONS_DIR

    def new(self, **meta: Any) -> Session:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        sid = f"{stamp}-{secrets.token_hex(3)}"
        return Session(sid, self.dir / f"{sid}.json", [], {"created": time.time(), **meta})

    def load(self, sid: str) -> Session:
        path = self.dir / f"{sid}.json"
        if not path.is_file():
            raise ConfigError(f"no saved session {sid!r} in {self.dir}", hint="list them with `ls .tomo/sessions`")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            messages = [message_from_dict(m) for m in data["messages"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the saved session {path} is not readable: {exc}",
                              hint="start a new session (run without --continue)") from exc
        return Session(str(data.get("id", sid)), path, messages, dict(data.get("meta") or {}))

    def latest(self) -> Session:
        """The most recently saved session; a clear error when there is none."""
        found = sorted(self.dir.glob("*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name)) if self.dir.is_dir() \
            else []
        if not found:
            raise ConfigError(f"--continue: no saved session in {self.dir}",
                              hint="run `tomo run TASK` first (without --continue) to start one")
        return self.load(found[-1].stem)
