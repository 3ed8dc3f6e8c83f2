"""Ollama's native ``/api/chat``.

Wire quirks this adapter absorbs:
- tool-call arguments arrive as an *object* (older builds sometimes a string) and calls may have no id -> made up;
- ``done_reason`` is ``stop`` even when tools were called -> calls are detected by their presence;
- ``content: null`` is rejected by the server -> always send a string;
- there is no ``tool_choice`` -> ``force_tools`` is emulated: the system text says a call is required, and a reply
  without one is re-asked once, naming the tools;
- reasoning models put ``<think>...</think>`` before the answer in ``content`` -> removed from the reply's text;
- the context window is ``options.num_ctx`` and Ollama silently drops the start of a prompt that exceeds it -> a
  request that clearly exceeds it is reported as a ``Notice`` (warning) on the sink instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from tomo.errors import ModelError
from tomo.events import Sink
from tomo.models._http import Endpoint, HttpModel, RetryPolicy, make_call_id, parse_args
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
from tomo.models.openai import tool_schema  # Ollama takes tools in the OpenAI function shape
from tomo.models.recover import finish_reply

FINISH: dict[str, Finish] = {
    "stop": "stop",  # also when tools were called
    "length": "length",  # num_predict reached
    "load": "stop",  # an empty request only loaded the model
    "unload": "stop",
}

DEFAULT_BASE_URL = "http://localhost:11434"
DEFAULT_NUM_CTX = 8192
CHARS_PER_TOKEN = 4  # a deliberately generous estimate: only a request that *clearly* exceeds num_ctx is flagged
FORCE_SYSTEM = "You must answer this turn by calling one of the tools ({names}); do not answer in plain text."
FORCE_RETRY = "You did not call a tool. Call one of these tools now: {names}. Reply with the tool call only."
NO_CALL = ("{name}: a forced tool call came back without a call, twice (Ollama cannot enforce one); the reply is "
           "passed on as it is")


def _message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": c.name, "arguments": {} if c.malformed else c.args}} for c in message.tool_calls
        ]
    if message.role == "tool" and message.name:
        out["tool_name"] = message.name
    return out


def to_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] = (),
    *,
    force_tools: bool = False,
    max_tokens: int | None = None,
    stream: bool = False,
    num_ctx: int | None = DEFAULT_NUM_CTX,
) -> dict[str, Any]:
    """The body of ``POST /api/chat``; ``force_tools`` adds the requirement to the system text."""
    wire = [_message(m) for m in messages]
    if force_tools and tools:
        rule = FORCE_SYSTEM.format(names=", ".join(t.name for t in tools))
        if wire and wire[0]["role"] == "system":
            wire[0]["content"] = f"{wire[0]['content']}\n\n{rule}".lstrip()
        else:
            wire.insert(0, {"role": "system", "content": rule})
    body: dict[str, Any] = {"model": model, "messages": wire, "stream": stream}
    if tools:
        body["tools"] = [tool_schema(t) for t in tools]
    options: dict[str, Any] = {}
    if num_ctx:
        options["num_ctx"] = num_ctx
    if max_tokens is not None:
        options["num_predict"] = max_tokens
    if options:
        body["options"] = options
    return body


def from_response(data: dict[str, Any], tool_names: Collection[str] = ()) -> Reply:
    """A final ``/api/chat`` object (``done: true``) -> ``Reply``."""
    msg = data.get("message") or {}
    calls = []
    for raw in msg.get("tool_calls") or []:
        fn = raw.get("function") or {}
        args, malformed, raw_text = parse_args(fn.get("arguments"))
        calls.append(ToolCall(raw.get("id") or make_call_id(), str(fn.get("name") or ""), args, malformed, raw_text))
    return finish_reply(
        strip_thinking(str(msg.get("content") or "")),
        calls,
        data.get("done_reason"),
        FINISH,
        tool_names,
        Usage(int(data.get("prompt_eval_count") or 0), int(data.get("eval_count") or 0)),
        str(data.get("model") or ""),
    )


_THINK = re.compile(r"^\s*<think>.*?(?:</think>\s*|$)", re.S)


def strip_thinking(content: str) -> str:
    """Reasoning models (qwen3, deepseek-r1) put ``<think>...</think>`` before the answer unless asked not to.

    The loop wants the answer; a tool call written as text inside the thinking must not be taken for a real one.
    """
    return _THINK.sub("", content, count=1) if content.lstrip().startswith("<think>") else content


def estimate_tokens(body: dict[str, Any]) -> int:
    """A rough size of the prompt: enough to say a request is far over the window, never to cut it."""
    size = sum(len(m.get("content") or "") for m in body["messages"])
    size += len(json.dumps(body.get("tools") or [])) + sum(
        len(json.dumps(m.get("tool_calls") or [])) for m in body["messages"]
    )
    return size // CHARS_PER_TOKEN


class OllamaModel(HttpModel):
    """A model served by Ollama at ``base_url`` (``OLLAMA_HOST``; ``http://localhost:11434`` by default)."""

    provider = "ollama"
    remote_timeout_s = 300.0  # Ollama loads the model on the first request: minutes for a large one

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        num_ctx: int | None = DEFAULT_NUM_CTX,
        timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        sink: Sink | None = None,
    ) -> None:
        super().__init__(model, endpoint=Endpoint("ollama", normalize_host(base_url)), timeout_s=timeout_s,
                         retry=retry, sink=sink)
        self.num_ctx = num_ctx

    def _body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], force_tools: bool,
              max_tokens: int | None, stream: bool) -> dict[str, Any]:
        body = to_request(self.model, messages, tools, force_tools=force_tools, max_tokens=max_tokens,
                          stream=stream, num_ctx=self.num_ctx)
        window = self.num_ctx or DEFAULT_NUM_CTX
        estimate = estimate_tokens(body)
        if estimate > window:
            self._notice(
                f"{self.name}: this request is about {estimate:,} tokens but num_ctx is {window:,}; Ollama will "
                f"silently drop the start of the conversation. Raise num_ctx under [providers.ollama] in tomo.toml "
                f"or shorten the context."
            )
        return body

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> Reply:
        names = [t.name for t in tools]
        body = self._body(messages, tools, force_tools, max_tokens, False)
        reply = from_response(await self.post_json("/api/chat", body), names)
        if force_tools and tools and not reply.tool_calls:
            body["messages"] += [_message(reply.message), _retry_message(names)]
            second = from_response(await self.post_json("/api/chat", body), names)
            second.usage = reply.usage + second.usage
            if not second.tool_calls:
                self._notice(NO_CALL.format(name=self.name))
            return second
        return reply

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        names = [t.name for t in tools]
        body = self._body(messages, tools, force_tools, max_tokens, True)
        final: dict[str, Any] = {}
        async for event in self._stream_once(body, names, final):
            yield event
        reply = from_response(final, names)
        if force_tools and tools and not reply.tool_calls:
            body["messages"] += [_message(reply.message), _retry_message(names)]
            first_usage = reply.usage
            final = {}
            async for event in self._stream_once(body, names, final):
                yield event
            reply = from_response(final, names)
            reply.usage = first_usage + reply.usage
            if not reply.tool_calls:
                self._notice(NO_CALL.format(name=self.name))
        if not final.get("done"):  # the stream ended before its done line: the reply is not whole
            reply.finish = "error"
        yield ReplyDone(reply)

    async def _stream_once(self, body: dict[str, Any], names: list[str],
                           final: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        text: list[str] = []
        calls: list[dict[str, Any]] = []
        async with self.open_stream("/api/chat", body) as response:
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                try:
                    chunk = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ModelError(f"ollama sent a line that is not JSON: {line[:120]!r}", provider="ollama",
                                     hint="check that OLLAMA_HOST points at Ollama") from exc
                if chunk.get("error"):
                    raise ModelError(f"ollama failed mid-stream: {chunk['error']}", provider="ollama",
                                     hint="see the Ollama server log (journalctl -u ollama, or ~/.ollama/logs/"
                                     "server.log); the model may have run out of memory")
                msg = chunk.get("message") or {}
                if msg.get("content"):
                    text.append(msg["content"])
                    yield TextDelta(msg["content"])
                for raw in msg.get("tool_calls") or []:
                    fn = raw.get("function") or {}
                    args = fn.get("arguments")
                    fragment = args if isinstance(args, str) else json.dumps(args or {})
                    yield ToolCallDelta(len(calls), raw.get("id"), fn.get("name"), fragment)
                    calls.append(raw)
                if chunk.get("done"):
                    final.update(chunk)
                    break
        final["message"] = {"role": "assistant", "content": "".join(text), "tool_calls": calls}
        final.setdefault("done", False)


def _retry_message(names: list[str]) -> dict[str, Any]:
    return {"role": "user", "content": FORCE_RETRY.format(names=", ".join(names))}


def normalize_host(host: str) -> str:
    """``OLLAMA_HOST`` as Ollama reads it: ``host[:port]`` (port 11434 by default) or a URL; 0.0.0.0 -> loopback."""
    host = host.strip().rstrip("/")
    if "://" not in host:
        hostport, slash, path = host.partition("/")
        if hostport.startswith(":"):  # ":11434": a port alone means this machine, as the ollama CLI reads it
            hostport = "127.0.0.1" + hostport
        if ":" not in hostport:
            hostport += ":11434"
        host = f"http://{hostport}{slash}{path}"
    return host.replace("://0.0.0.0", "://127.0.0.1", 1)
