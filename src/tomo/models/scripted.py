"""A model that replays a script: what tests, the demo and the benchmarks drive tomo with.

Script format (JSON): ``{"replies": [{"content": "...", "tool_calls": [{"name": "...", "args": {...}}],
"finish": "stop|length|tool_calls", "delay_s": 0.0, "usage": {"input_tokens": 0, "output_tokens": 0},
"when": "..."}]}``. Every ``chat`` call returns the next reply and records the messages it was sent (``.sent``), so a
test can prove what the model saw. A reply with ``when`` is given only to a request whose last message contains that
text, and passed over otherwise: a script for a harness that asks some questions only sometimes (the lab's ceiling
answers the trials' "another test" request, which comes only when no one-token change passed). Running out of replies
raises :class:`~tomo.errors.ScriptExhausted`, never a silent empty reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from tomo.errors import ConfigError, ScriptExhausted
from tomo.models.messages import (
    FINISHES,
    Finish,
    Message,
    Reply,
    ReplyDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)


class ScriptedModel:
    """Returns one scripted reply per call. Replies may be dicts (the JSON shape) or ready ``Reply`` objects."""

    def __init__(self, replies: Sequence[dict[str, Any] | Reply], *, name: str = "scripted") -> None:
        self.name = name
        self._replies = [r if isinstance(r, Reply) else _reply_from_dict(r, i) for i, r in enumerate(replies)]
        self._delays = [0.0 if isinstance(r, Reply) else float(r.get("delay_s", 0.0)) for r in replies]
        self._when = [None if isinstance(r, Reply) or r.get("when") is None else str(r["when"]) for r in replies]
        self._next = 0
        self.sent: list[list[Message]] = []
        self.sent_tools: list[list[ToolSpec]] = []
        self.forced: list[bool] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"script {path} does not exist", hint="give scripted:PATH an existing JSON file") from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"script {path} is not valid JSON: {exc}", hint="fix the JSON where it says") from exc
        if not isinstance(data, dict) or not isinstance(data.get("replies"), list):
            raise ConfigError(f"script {path} has no 'replies' list", hint='the file must look like {"replies": [...]}')
        return cls(data["replies"], name=f"scripted:{path}")  # the spec as given: logs name what can be pasted back

    @property
    def remaining(self) -> int:
        return len(self._replies) - self._next

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> Reply:
        last = messages[-1].content if messages else ""
        while self._next < len(self._replies) and (self._when[self._next] or "") not in last:
            self._next += 1  # a reply for a request that did not come
        if self._next >= len(self._replies):
            raise ScriptExhausted(
                f"the scripted model {self.name!r} has no reply left (it held {len(self._replies)})",
                provider="scripted",
                hint="add replies to the script, or lower the step limit so the loop stops first",
            )
        self.sent.append(list(messages))
        self.sent_tools.append(list(tools))
        self.forced.append(force_tools)
        reply, delay = self._replies[self._next], self._delays[self._next]
        self._next += 1
        if delay:
            await asyncio.sleep(delay)
        return reply

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        reply = await self.chat(messages, tools, force_tools=force_tools, max_tokens=max_tokens)
        for word in _chunks(reply.message.content):
            yield TextDelta(word)
        for index, call in enumerate(reply.message.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, call.raw_args or json.dumps(call.args))
        yield ReplyDone(reply)


def _chunks(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _reply_from_dict(data: dict[str, Any], index: int) -> Reply:
    if not isinstance(data, dict):
        raise ConfigError(f"scripted reply #{index + 1} is not an object", hint="each reply is a JSON object")
    calls = []
    for n, raw in enumerate(data.get("tool_calls") or []):
        if not isinstance(raw, dict) or "name" not in raw:
            raise ConfigError(f"scripted reply #{index + 1}, tool call #{n + 1} has no name",
                              hint='write {"name": "tool", "args": {...}}')
        args = raw.get("args", {})
        if isinstance(args, str):  # a script may reproduce a model that sends broken JSON
            try:
                parsed = json.loads(args)
            except json.JSONDecodeError as exc:
                calls.append(ToolCall(raw.get("id") or f"call_{index}_{n}", raw["name"], {},
                                      malformed=f"arguments are not valid JSON: {exc.msg}", raw_args=args))
                continue
            args = parsed
        if not isinstance(args, dict):
            calls.append(ToolCall(raw.get("id") or f"call_{index}_{n}", raw["name"], {},
                                  malformed="arguments must be a JSON object", raw_args=json.dumps(args)))
            continue
        calls.append(ToolCall(raw.get("id") or f"call_{index}_{n}", raw["name"], args))
    default_finish: Finish = "tool_calls" if calls else "stop"
    finish = data.get("finish", default_finish)
    if finish not in FINISHES:
        raise ConfigError(
            f"scripted reply #{index + 1} has finish {finish!r}", hint=f"use one of {', '.join(FINISHES)}"
        )
    usage = data.get("usage") or {}
    return Reply(
        message=Message.assistant(str(data.get("content") or ""), calls),
        finish=finish,
        usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
        raw_finish=str(finish),
        model="scripted",
    )
