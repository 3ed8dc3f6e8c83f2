"""OpenAI Chat Completions, and any server that speaks it (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama's /v1).

Wire quirks this adapter absorbs:
- tool-call arguments arrive as a JSON *string* that may be invalid -> a call marked ``malformed``, never a crash;
- compatible servers may send an empty (or no) call id -> one is made up so results can be paired with calls;
- a forced call comes back with finish ``stop`` -> calls are detected by their presence, not by the finish;
- ``force_tools`` is ``tool_choice: "required"``; OpenAI itself wants ``max_completion_tokens``, older compatible
  servers only know ``max_tokens``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from tomo.errors import ModelError
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
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # the deprecated functions API
    "content_filter": "content_filter",
    "eos": "stop",  # some compatible servers (older vLLM / TGI)
    "error": "error",  # OpenRouter when the upstream provider failed mid-reply
}

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        out: dict[str, Any] = {"role": "assistant"}
        if message.content:
            out["content"] = message.content
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                # A malformed call is replayed as "{}": some servers reject invalid JSON in the history, and the
                # tool result that follows already tells the model what was wrong with what it sent.
                "function": {"name": call.name, "arguments": "{}" if call.malformed else json.dumps(call.args)},
            }
            for call in message.tool_calls
        ]
        return out
    return {"role": message.role, "content": message.content}


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def to_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] = (),
    *,
    force_tools: bool = False,
    max_tokens: int | None = None,
    stream: bool = False,
    max_tokens_field: str = "max_completion_tokens",
) -> dict[str, Any]:
    """The body of ``POST /chat/completions``."""
    body: dict[str, Any] = {"model": model, "messages": [_message(m) for m in messages], "stream": stream}
    if tools:
        body["tools"] = [tool_schema(t) for t in tools]
        body["tool_choice"] = "required" if force_tools else "auto"
    if max_tokens is not None:
        body[max_tokens_field] = max_tokens
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def content_text(content: Any) -> str:
    """``content`` as text. Usually a string, but some compatible servers (Mistral's reasoning models, for one) send
    a list of parts; only the ``text`` parts are the answer (``thinking`` parts are not)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def from_response(data: dict[str, Any], tool_names: Collection[str] = ()) -> Reply:
    """A ``chat.completion`` object -> ``Reply``. ``tool_names`` enables recovery of calls written as text."""
    choices = data.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    msg = choice.get("message") or {}
    calls = []
    for raw in msg.get("tool_calls") or []:
        fn = raw.get("function") or {}
        args, malformed, raw_text = parse_args(fn.get("arguments"))
        calls.append(ToolCall(raw.get("id") or make_call_id(), str(fn.get("name") or ""), args, malformed, raw_text))
    usage = data.get("usage") or {}
    return finish_reply(
        content_text(msg.get("content")),
        calls,
        choice.get("finish_reason"),
        FINISH,
        tool_names,
        Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        str(data.get("model") or ""),
    )


def _whole_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class StreamAccumulator:
    """Folds ``chat.completion.chunk`` objects into deltas to show and the whole response ``from_response`` reads."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.model = ""

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text = content_text(delta.get("content"))
            if text:
                self.text.append(text)
                events.append(TextDelta(text))
            for raw in delta.get("tool_calls") or []:
                fn = raw.get("function") or {}
                index = self._slot(raw, fn)
                slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                slot["id"] = slot["id"] or raw.get("id") or ""
                name = fn.get("name") or ""
                if name != slot["name"]:  # some servers repeat the whole name in every fragment
                    slot["name"] += name
                fragment = fn.get("arguments") or ""
                if isinstance(fragment, dict):  # a few servers send an object even here
                    fragment = json.dumps(fragment)
                slot["arguments"] += fragment
                events.append(ToolCallDelta(index, raw.get("id") or None, fn.get("name") or None, fragment))
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        return events

    def _slot(self, raw: dict[str, Any], fn: dict[str, Any]) -> int:
        """Which call a fragment belongs to. OpenAI always sends ``index``; some compatible servers send none (or
        null): then a known id picks its call, a new id or a name after a named call starts one, and a bare
        argument fragment continues the last call."""
        index = raw.get("index")
        if isinstance(index, int):
            return index
        last = max(self.calls) if self.calls else None
        call_id = raw.get("id")
        if call_id:
            found = next((i for i, c in self.calls.items() if c["id"] == call_id), None)
            if found is not None:
                return found
        if last is None:
            return 0
        if call_id:
            return last + 1
        name, previous = fn.get("name"), self.calls[last]
        if name and previous["name"] and not (name == previous["name"] and not _whole_json(previous["arguments"])):
            return last + 1  # a named fragment after a finished call starts the next one
        return last

    def response(self) -> dict[str, Any]:
        calls = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(self.calls.items())
        ]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if calls:
            message["tool_calls"] = calls
        return {"model": self.model, "choices": [{"message": message, "finish_reason": self.finish}],
                "usage": self.usage}


class OpenAIModel(HttpModel):
    """Chat Completions at ``base_url`` (OpenAI itself by default)."""

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        key_env: str | None = "OPENAI_API_KEY",
        provider: str = "openai",
        max_tokens_field: str | None = None,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        sink: Sink | None = None,
    ) -> None:
        self.provider = provider
        if api_key is None and key_env:
            api_key = os.environ.get(key_env)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        hint = " (https://platform.openai.com/api-keys)" if provider == "openai" else ""
        super().__init__(model, endpoint=Endpoint(provider, base_url, key_env, hint), headers=headers,
                         timeout_s=timeout_s, retry=retry, sink=sink)
        self.max_tokens_field = max_tokens_field or ("max_completion_tokens" if provider == "openai" else "max_tokens")

    def _body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], force_tools: bool,
              max_tokens: int | None, stream: bool) -> dict[str, Any]:
        return to_request(self.model, messages, tools, force_tools=force_tools, max_tokens=max_tokens,
                          stream=stream, max_tokens_field=self.max_tokens_field)

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> Reply:
        data = await self.post_json("/chat/completions", self._body(messages, tools, force_tools, max_tokens, False))
        return from_response(data, [t.name for t in tools])

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        acc = StreamAccumulator()
        body = self._body(messages, tools, force_tools, max_tokens, True)
        async with self.open_stream("/chat/completions", body) as response:
            async for _, data in sse_events(response):
                if data.strip() == "[DONE]":
                    break
                try:
                    chunk = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise ModelError(f"{self.provider} sent a stream chunk that is not JSON: {data[:120]!r}",
                                     provider=self.provider,
                                     hint="check that the base URL points at a Chat Completions API") from exc
                if not isinstance(chunk, dict):
                    continue
                if chunk.get("error"):
                    err = chunk["error"]
                    detail = err.get("message", err) if isinstance(err, dict) else err
                    raise ModelError(f"{self.provider} failed mid-stream: {detail}", provider=self.provider,
                                     hint="try again; if it repeats, switch model")
                for event in acc.feed(chunk):
                    yield event
        reply = from_response(acc.response(), [t.name for t in tools])
        if acc.finish is None:  # the stream ended without a finish reason: the reply is not whole
            reply.finish = "error"
        yield ReplyDone(reply)
