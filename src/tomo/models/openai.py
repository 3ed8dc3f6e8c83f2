"""OpenAI Chat Completions, and any server that speaks it (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama's /v1).

Wire quirks this adapter absorbs:
- tool-call arguments arrive as a JSON *string* that may be invalid -> a call marked ``malformed``, never a crash;
- compatible servers may send an empty (or no) call id -> one is made up so results can be paired with calls;
- a forced call comes back with finish ``stop`` -> calls are detected by their presence, not by the finish;
- ``force_tools`` is ``tool_choice: "required"``; OpenAI itself wants ``max_completion_tokens``, older compatible
  servers only know ``max_tokens``.

And what servers differ on is learned per server (``tomo.models.profile``), said once as a ``Notice``, and kept for
the session: the content form of an assistant tool-call message (a string by default, ``""`` when empty: OpenAI
accepts it and llama-cpp-python, LM Studio and Ollama need it); ``tool_choice: "required"`` refused or ignored
(-> the one tool named, else the requirement in the prompt with one re-ask, as for Ollama; a forced reply without a
call is noticed whatever the server claimed); a field refused (``stream_options``, ``max_completion_tokens``: sent
again without it); and usage missing from a reply (-> counted with the server's tokenizer when it serves
``/extras/tokenize/count``, else estimated from the text; marked ``estimated`` either way, so budgets still count).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

import httpx

from tomo.errors import ModelError
from tomo.events import Sink
from tomo.models._http import (
    Endpoint,
    HttpModel,
    RetryPolicy,
    ServerRefused,
    StreamBroke,
    make_call_id,
    parse_args,
    sse_events,
)
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
from tomo.models.profile import (
    FORCE_RETRY,
    FORCE_SYSTEM,
    MESSAGE_OVERHEAD,
    ContentForm,
    ForceMode,
    ServerProfile,
    estimate_tokens,
    profile_for,
    prompt_text,
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


def _message(message: Message, content_form: ContentForm = "string") -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        out: dict[str, Any] = {"role": "assistant"}
        if message.content or content_form == "string":
            out["content"] = message.content or ""
        elif content_form == "null":
            out["content"] = None
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
    force_mode: ForceMode = "required",
    content_form: ContentForm = "string",
    stream_usage: bool = True,
    temperature: float | None = None,
) -> dict[str, Any]:
    """The body of ``POST /chat/completions``. ``force_mode`` says how a forced call is asked for: ``required``
    (OpenAI's way), ``named`` (the only tool, by name) or ``prompt`` (the system text says so; ``auto`` on the wire).
    """
    body: dict[str, Any] = {"model": model, "messages": [_message(m, content_form) for m in messages],
                            "stream": stream}
    if tools:
        body["tools"] = [tool_schema(t) for t in tools]
        body["tool_choice"] = "auto"
        if force_tools and force_mode == "required":
            body["tool_choice"] = "required"
        elif force_tools and force_mode == "named" and len(tools) == 1:
            body["tool_choice"] = {"type": "function", "function": {"name": tools[0].name}}
        elif force_tools:
            _require_in_prompt(body["messages"], [t.name for t in tools])
    if max_tokens is not None:
        body[max_tokens_field] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    if stream and stream_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def _require_in_prompt(messages: list[dict[str, Any]], names: list[str]) -> None:
    """The forced-call requirement as words: appended to the system message (or one is put first)."""
    line = FORCE_SYSTEM.format(names=", ".join(names))
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{line}"}
    else:
        messages.insert(0, {"role": "system", "content": line})


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


def has_usage(data: dict[str, Any]) -> bool:
    """Whether a response (or an accumulated stream) reported any usage at all."""
    usage = data.get("usage")
    return isinstance(usage, dict) and bool(usage.get("prompt_tokens") or usage.get("completion_tokens"))


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
        self.chunks = 0

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        self.chunks += 1
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
    """Chat Completions at ``base_url`` (OpenAI itself by default), shaped by what that server was seen to take."""

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
        timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        sink: Sink | None = None,
        temperature: float | None = None,
    ) -> None:
        self.provider = provider
        self.temperature = temperature
        if api_key is None and key_env:
            api_key = os.environ.get(key_env)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        hint = " (https://platform.openai.com/api-keys)" if provider == "openai" else ""
        super().__init__(model, endpoint=Endpoint(provider, base_url, key_env, hint), headers=headers,
                         timeout_s=timeout_s, retry=retry, sink=sink)
        if provider == "openai-compat":  # the spec names the server too: what logs and transcripts show can be pasted
            self.name = f"openai-compat:{base_url}#{model}"
        self.max_tokens_field = max_tokens_field or ("max_completion_tokens" if provider == "openai" else "max_tokens")
        self.profile: ServerProfile = profile_for(base_url)

    def _body(self, messages: Sequence[Message], tools: Sequence[ToolSpec], force_tools: bool,
              max_tokens: int | None, stream: bool, mode: ForceMode = "required") -> dict[str, Any]:
        p = self.profile
        return to_request(self.model, messages, tools, force_tools=force_tools, max_tokens=max_tokens,
                          stream=stream, max_tokens_field=p.max_tokens_field or self.max_tokens_field,
                          force_mode=mode, content_form=p.content_form, stream_usage=p.stream_options,
                          temperature=self.temperature)

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> Reply:
        async for event in self._turn(messages, tools, force_tools, max_tokens, stream=False):
            if isinstance(event, ReplyDone):
                return event.reply
        raise AssertionError("_turn always ends with ReplyDone")  # pragma: no cover

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        async for event in self._turn(messages, tools, force_tools, max_tokens, stream=True):
            yield event

    # ---- one turn: a request, and for a forced call that came back without one, one re-ask ---------------------

    async def _turn(self, messages: Sequence[Message], tools: Sequence[ToolSpec], force_tools: bool,
                    max_tokens: int | None, *, stream: bool) -> AsyncIterator[StreamEvent]:
        force = force_tools and bool(tools)
        mode = self.profile.force_mode(len(tools))
        reply: Reply | None = None
        async for event in self._exchange(list(messages), tools, force, mode, max_tokens, stream):
            if isinstance(event, ReplyDone):
                reply = event.reply
            else:
                yield event
        assert reply is not None
        mode = self.profile.demote(mode, len(tools))  # the way it was finally asked, if the server refused one
        if force and reply.tool_calls:
            self.profile.forced_with_call(mode)
        elif force and reply.finish != "error":  # a reply that broke off says nothing about the force
            said = self.profile.forced_without_call(mode)
            if said:
                self._notice(f"{self.name}: the server at {self.profile.base_url} {said}")
            again = self.profile.force_mode(len(tools)) if said else "prompt"
            history = list(messages)
            if again == "prompt":  # as for Ollama: show the model what it said, and ask once more, naming the tools
                names = ", ".join(t.name for t in tools)
                history += [reply.message, Message.user(FORCE_RETRY.format(names=names))]
            first = reply
            async for event in self._exchange(history, tools, True, again, max_tokens, stream):
                if isinstance(event, ReplyDone):
                    reply = event.reply
                else:
                    yield event
            reply.usage = first.usage + reply.usage
            again = self.profile.demote(again, len(tools))
            if reply.tool_calls:
                self.profile.forced_with_call(again)
            else:
                self.profile.forced_without_call(again)
                self._notice(f"{self.name}: a forced tool call came back without a call, twice (asked with "
                             f"{_FORCE_WORDS[mode]}, then {_FORCE_WORDS[again]}); the reply is passed on as it is")
        yield ReplyDone(reply)

    # ---- one request, reshaped when the server refuses its shape -----------------------------------------------

    async def _exchange(self, history: list[Message], tools: Sequence[ToolSpec], force: bool, mode: ForceMode,
                        max_tokens: int | None, stream: bool) -> AsyncIterator[StreamEvent]:
        names = [t.name for t in tools]
        tried: set[str] = set()
        saved = self.profile.snapshot()
        empty = 0
        while True:
            mode = self.profile.demote(mode, len(tools))
            streamed = stream and (self.profile.stream_tools or not tools)
            body = self._body(history, tools, force, max_tokens, streamed, mode)
            acc = StreamAccumulator()
            try:
                if streamed:
                    whole: dict[str, Any] | None = None
                    try:
                        async with self.open_stream("/chat/completions", body) as response:
                            if "json" in response.headers.get("content-type", ""):  # ignored "stream": one body
                                whole = json.loads(await response.aread())
                            else:
                                async for event in self._chunks(response, acc):
                                    yield event
                    except StreamBroke:
                        if acc.chunks:  # part of the reply was shown: an honest failure, never retried
                            raise
                    except ValueError as exc:
                        raise ModelError(f"{self.provider} answered a stream with a body that is not JSON",
                                         provider=self.provider,
                                         hint="check that the base URL points at a Chat Completions API") from exc
                    if isinstance(whole, dict):
                        text = content_text(((whole.get("choices") or [{}])[0].get("message") or {}).get("content"))
                        if text:
                            yield TextDelta(text)
                        acc.chunks, acc.finish = 1, "whole"
                    data = whole if isinstance(whole, dict) else acc.response()
                else:
                    data = await self.post_json("/chat/completions", body)
                    if stream:  # asked to stream, but this server cannot with tools: the whole text at once
                        text = content_text(((data.get("choices") or [{}])[0].get("message") or {}).get("content"))
                        if text:
                            yield TextDelta(text)
            except ServerRefused as exc:
                said = self.profile.adapt(exc.detail or exc.message, body, tried)
                if said is None:
                    if tried:  # nothing helped: forget what this request taught, and say what was tried
                        changes = "; ".join(self.profile.learned[len(saved.learned):])
                        self.profile.restore(saved)
                        exc.hint = f"tomo also reshaped the request (the server {changes}) and it was refused again; " \
                                   f"{exc.hint}"
                    raise
                self._notice(f"{self.name}: the server at {self.profile.base_url} {said}", "info")
                continue
            if streamed and acc.chunks == 0:
                # 200 and then nothing (or a hang-up before the first chunk): llama-cpp-python's way of failing a
                # stream whose request it cannot take (the same request unstreamed is a 500). Once may be chance;
                # twice for one payload is its shape.
                empty += 1
                detail = "the server answered with an empty stream (no chunk, no [DONE]) twice for the same request"
                said = self.profile.adapt(detail, body, tried) if empty > 1 else None
                if said is not None:
                    self._notice(f"{self.name}: the server at {self.profile.base_url} {said}", "info")
                    empty = 0
                if empty <= 1:
                    continue
                self.profile.restore(saved)
                raise ServerRefused(f"{self.provider} ({self.endpoint.base_url}): {detail}", provider=self.provider,
                                    hint="the server fails this request as it is shaped; its log says why. Try "
                                         "without streaming, or switch model or server", detail=detail)
            reply = from_response(data, names)
            if streamed and acc.finish is None:  # the stream ended without a finish reason: the reply is not whole
                reply.finish = "error"
            if has_usage(data):
                if streamed:
                    self.profile.stream_usage = "sent"
            else:
                reply.usage = await self._count_usage(body, reply, streamed)
            yield ReplyDone(reply)
            return

    async def _chunks(self, response: httpx.Response, acc: StreamAccumulator) -> AsyncIterator[StreamEvent]:
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

    # ---- usage the server did not report ---------------------------------------------------------------------

    async def _count_usage(self, body: dict[str, Any], reply: Reply, stream: bool) -> Usage:
        """Tokens counted by tomo, always marked ``estimated``: with the server's own tokenizer when it serves one
        (llama-cpp-python's ``/extras/tokenize/count``), else from the text's length."""
        prompt, count = prompt_text(body)
        answer = reply.text + "".join(f"{c.name}{json.dumps(c.args)}" for c in reply.tool_calls)
        first = self.profile.tokenizer == "unknown"
        counted = await self._tokenize(prompt, answer)
        if counted is None:
            usage = Usage(estimate_tokens(prompt) + MESSAGE_OVERHEAD * count, estimate_tokens(answer), estimated=True)
        else:
            usage = Usage(counted[0] + MESSAGE_OVERHEAD * count, counted[1], estimated=True)
        where = "its streams (asked with stream_options.include_usage)" if stream else "its replies"
        if stream and self.profile.stream_usage != "missing":
            self.profile.stream_usage = "missing"
        elif not first:
            return usage
        how = ("tomo counts tokens with the server's own tokenizer (/extras/tokenize/count)" if counted is not None
               else "tomo estimates tokens from the text (about 4 characters a token)")
        self._notice(f"{self.name}: the server at {self.profile.base_url} reports no token usage in {where}; {how} "
                     "and marks the counts as estimated (~); budgets count them", "info")
        return usage

    async def _tokenize(self, *texts: str) -> list[int] | None:
        if self.profile.tokenizer == "no":
            return None
        url = server_root(self.endpoint.base_url) + "/extras/tokenize/count"

        async def count(text: str) -> int:
            if not text:
                return 0
            response = await self.client.post(url, json={"model": self.model, "input": text},
                                              timeout=min(10.0, self.timeout_s))
            response.raise_for_status()
            return int(response.json()["count"])

        try:
            counts = list(await asyncio.gather(*(count(t) for t in texts)))
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
            self.profile.tokenizer = "no"
            return None
        self.profile.tokenizer = "yes"
        return counts


_FORCE_WORDS: dict[ForceMode, str] = {"required": 'tool_choice "required"', "named": "the tool named",
                                      "prompt": "the requirement in the prompt"}


def server_root(base_url: str) -> str:
    """``http://host:8000/v1`` -> ``http://host:8000``: where a server's extras (its tokenizer) live."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root
