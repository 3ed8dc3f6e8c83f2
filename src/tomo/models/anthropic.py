"""Anthropic Messages API.

Wire quirks this adapter absorbs:
- system messages go to the top-level ``system`` field, not into ``messages``;
- the assistant's calls are ``tool_use`` blocks; results go back as ``tool_result`` blocks (with ``is_error``) in one
  *user* message, placed first and in the order of the calls, since the API wants roles to alternate;
- ``max_tokens`` is required by the API, so a default is always sent;
- ``force_tools`` is ``tool_choice: {"type": "any"}``;
- server-side tool blocks (``server_tool_use``, ``web_search_tool_result``) and ``thinking`` blocks are not calls
  for tomo to run and are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from tomo.errors import ModelError, ModelUnavailable
from tomo.events import Sink
from tomo.models._http import Endpoint, HttpModel, RetryPolicy, make_call_id, parse_args, sse_events
from tomo.models.messages import (
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
from tomo.models.recover import finish_reply

FINISH: dict[str, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",  # cut off by the context window: incomplete, like max_tokens
    "pause_turn": "length",  # a long server-side turn paused: incomplete, send it back to continue
    "refusal": "content_filter",
}

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content.strip():  # the API rejects empty and whitespace-only text blocks
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": {} if call.malformed else
                       call.args})
    return blocks


def _messages(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    call_order: dict[str, int] = {}
    results: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]], *, first: bool = False) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:  # merge: the API wants user and assistant to alternate
            out[-1]["content"] = blocks + out[-1]["content"] if first else out[-1]["content"] + blocks
        else:
            out.append({"role": role, "content": blocks})

    def flush() -> None:
        if results:
            ordered = sorted(results, key=lambda b: call_order.get(b["tool_use_id"], len(call_order)))
            add("user", ordered, first=True)
            results.clear()

    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif message.role == "tool":
            results.append({"type": "tool_result", "tool_use_id": message.tool_call_id or "",
                            "content": message.content, "is_error": message.is_error})
        else:
            flush()
            if message.role == "assistant":
                call_order = {call.id: i for i, call in enumerate(message.tool_calls)}
                add("assistant", _assistant_blocks(message))
            elif message.content.strip():
                add("user", [{"type": "text", "text": message.content}])
    flush()
    return "\n\n".join(s for s in system if s), out


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def to_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] = (),
    *,
    force_tools: bool = False,
    max_tokens: int | None = None,
    stream: bool = False,
) -> dict[str, Any]:
    """The body of ``POST /v1/messages``."""
    system, wire = _messages(messages)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens or DEFAULT_MAX_TOKENS, "messages": wire,
                            "stream": stream}
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [tool_schema(t) for t in tools]
        body["tool_choice"] = {"type": "any"} if force_tools else {"type": "auto"}
    return body


def from_response(data: dict[str, Any], tool_names: Collection[str] = ()) -> Reply:
    """A ``message`` object -> ``Reply``. ``tool_names`` enables recovery of calls written as text."""
    text: list[str] = []
    calls: list[ToolCall] = []
    after_other = False  # text split by a server tool call reads as two paragraphs; citation pieces join as is
    for block in data.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            if after_other and text:
                text.append("\n\n")
            text.append(str(block.get("text") or ""))
            after_other = False
            continue
        after_other = True
        if kind == "tool_use":
            args, malformed, raw = parse_args(block.get("input"))
            calls.append(ToolCall(block.get("id") or make_call_id("toolu"), str(block.get("name") or ""), args,
                                  malformed, raw))
    usage = data.get("usage") or {}
    input_tokens = sum(int(usage.get(k) or 0) for k in
                       ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return finish_reply("".join(text), calls, data.get("stop_reason"), FINISH, tool_names,
                        Usage(input_tokens, int(usage.get("output_tokens") or 0)), str(data.get("model") or ""))


class StreamAccumulator:
    """Folds Messages-API stream events into deltas to show and the whole ``message`` that ``from_response`` reads."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"content": [], "usage": {}}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.tool_index: dict[int, int] = {}

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "message_start":
            start = event.get("message") or {}
            self.message.update({k: v for k, v in start.items() if k != "content"})
        elif kind == "content_block_start":
            index = int(event.get("index", len(self.blocks)))
            block = dict(event.get("content_block") or {})
            if block.get("type") == "tool_use":
                block["input"] = ""  # filled from input_json_delta fragments
                self.tool_index[index] = len(self.tool_index)
                self.blocks[index] = block
                return [ToolCallDelta(self.tool_index[index], block.get("id"), block.get("name"), "")]
            self.blocks[index] = block
        elif kind == "content_block_delta":
            index = int(event.get("index", 0))
            delta = event.get("delta") or {}
            block = self.blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
                return [TextDelta(delta.get("text", ""))]
            if delta.get("type") == "input_json_delta":
                block["input"] = block.get("input", "") + delta.get("partial_json", "")
                return [ToolCallDelta(self.tool_index.get(index, 0), args_fragment=delta.get("partial_json", ""))]
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if "stop_reason" in delta:
                self.message["stop_reason"] = delta["stop_reason"]
            self.message["usage"] = {**self.message.get("usage", {}), **(event.get("usage") or {})}
        elif kind == "error":
            err = event.get("error") or {}
            raise ModelUnavailable(f"anthropic failed mid-stream: {err.get('type')}: {err.get('message')}",
                                   provider="anthropic", hint="try again; if it repeats, switch model")
        return []

    def response(self) -> dict[str, Any]:
        content = []
        for _, block in sorted(self.blocks.items()):
            if block.get("type") == "tool_use" and block.get("input") == "":
                block = {**block, "input": {}}  # a call without arguments streams no input_json_delta
            content.append(block)
        return {**self.message, "content": content}


class AnthropicModel(HttpModel):
    """The Messages API at ``base_url`` (Anthropic itself by default)."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        key_env: str = "ANTHROPIC_API_KEY",
        timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        sink: Sink | None = None,
    ) -> None:
        api_key = api_key if api_key is not None else os.environ.get(key_env, "")
        headers = {"x-api-key": api_key, "anthropic-version": API_VERSION}
        super().__init__(model, endpoint=Endpoint("anthropic", base_url, key_env,
                                                  " (https://console.anthropic.com/settings/keys)"),
                         headers=headers, timeout_s=timeout_s, retry=retry, sink=sink)

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> Reply:
        body = to_request(self.model, messages, tools, force_tools=force_tools, max_tokens=max_tokens)
        return from_response(await self.post_json("/v1/messages", body), [t.name for t in tools])

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        acc = StreamAccumulator()
        body = to_request(self.model, messages, tools, force_tools=force_tools, max_tokens=max_tokens, stream=True)
        async with self.open_stream("/v1/messages", body) as response:
            async for _, data in sse_events(response):
                try:
                    event = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise ModelError(f"anthropic sent a stream event that is not JSON: {data[:120]!r}",
                                     provider="anthropic", hint="check ANTHROPIC_BASE_URL") from exc
                for item in acc.feed(event):
                    yield item
                if event.get("type") == "message_stop":
                    break
        reply = from_response(acc.response(), [t.name for t in tools])
        if not acc.message.get("stop_reason"):  # the stream ended before message_delta: the reply is not whole
            reply.finish = "error"
        yield ReplyDone(reply)
