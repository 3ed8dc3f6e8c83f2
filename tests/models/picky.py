"""A Chat Completions server on loopback that behaves the way real compatible servers were seen to behave.

Each behaviour is one flag, reproduced from a real server (the live tier, tests/live/, meets the real one):
- ``content_missing_500``: an assistant tool-call message without ``content`` makes its chat template fail with a
  500 that repeats for the same request (llama-cpp-python: "'dict object' has no attribute 'content'");
- ``content_null_refused``: ``content: null`` is refused with a 400 (llama-cpp-python, LM Studio, Ollama);
- ``content_empty_refused``: ``content: ""`` is refused with a 400 (some gateways in front of Anthropic-like APIs);
- ``required``: what ``tool_choice: "required"`` does: ``"works"``, ``"500"`` (llama-cpp-python's
  chatml-function-calling asserts on it; the message names nothing, and a stream is a 200 with no chunk at all) or
  ``"ignored"`` (llama.cpp, or any template without function calling: the model answers in prose);
- ``named``: the same for a named tool_choice (``"works"`` or ``"ignored"``);
- ``stream_usage``: whether streams end with a usage chunk when asked (llama-cpp-python sends none);
- ``usage``: whether whole replies carry usage;
- ``refuse_fields``: top-level fields answered with a 400 naming them (``stream_options``, ``max_completion_tokens``);
- ``stream_auto_fails``: a stream with tools and ``tool_choice: "auto"`` is a 200 with nothing after the headers
  (llama-cpp-python's function calling: "Automatic streaming tool choice is not supported");
- ``tokenizer``: serve ``POST /extras/tokenize/count`` (one token a whitespace-separated word).

The model itself is a script: ``replies`` are (text, calls) answered in turn to requests not forced by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loopback import Canned, Received, openai_body, openai_stream, sse


@dataclass
class Picky:
    content_missing_500: bool = False
    content_null_refused: bool = False
    content_empty_refused: bool = False
    required: str = "works"
    named: str = "works"
    stream_usage: bool = True
    usage: bool = True
    refuse_fields: tuple[str, ...] = ()
    tokenizer: bool = False
    stream_auto_fails: bool = False
    replies: list[tuple[str, list[tuple[str, str, Any]]]] = field(default_factory=list)
    counted: list[str] = field(default_factory=list)  # the texts sent to the tokenizer

    def __call__(self, received: Received) -> Canned:
        if received.path.endswith("/extras/tokenize/count"):
            if not self.tokenizer:
                return Canned(404, {"detail": "Not Found"})
            self.counted.append(received.json["input"])
            return Canned(200, {"count": len(received.json["input"].split())})
        body = received.json
        for name in self.refuse_fields:
            if name in body:
                return Canned(400, {"error": {"message": f"Unrecognized request argument supplied: {name}",
                                              "type": "invalid_request_error"}})
        for message in body["messages"]:
            if message["role"] == "assistant" and message.get("tool_calls"):
                if "content" not in message and self.content_missing_500:
                    return Canned(500, {"error": {"message": "'dict object' has no attribute 'content'"}})
                if "content" in message and message["content"] is None and self.content_null_refused:
                    return Canned(400, {"error": {"message": "messages.2.content: Input should be a valid string"}})
                if message.get("content") == "" and self.content_empty_refused:
                    return Canned(400, {"error": {"message": "text content blocks must be non-empty"}})
        choice = body.get("tool_choice")
        if choice == "required" and self.required == "500":
            if body.get("stream"):  # streamed, the same failure is a 200 with nothing after the headers
                return Canned(200, chunks=[], content_type="text/event-stream")
            return Canned(500, {"error": {"message": ""}})
        if body.get("stream") and body.get("tools") and choice == "auto" and self.stream_auto_fails:
            return Canned(200, chunks=[], content_type="text/event-stream")
        forced_name = None
        if isinstance(choice, dict) and self.named == "works":
            forced_name = choice["function"]["name"]
        elif choice == "required" and self.required == "works":
            forced_name = body["tools"][0]["function"]["name"]
        if forced_name is not None:
            text, calls = "", [("call_forced", forced_name, {"path": "a.py"})]
        else:
            text, calls = self.replies.pop(0) if self.replies else ("done", [])
            if not body.get("tools"):
                calls = []
        stream = bool(body.get("stream"))
        if not stream:
            answer = openai_body(text, calls, "tool_calls" if calls else "stop")
            if not self.usage:
                answer.pop("usage")
            return Canned(200, answer)
        chunks = openai_stream([text] if text else [], [(c, n, [json.dumps(a)]) for c, n, a in calls],
                               "tool_calls" if calls else "stop")
        if not (self.stream_usage and (body.get("stream_options") or {}).get("include_usage")):
            chunks = [c for c in chunks if '"usage"' not in c]
        return sse(chunks)
