"""What one OpenAI-compatible server was seen to accept, learned from its answers and kept for the session.

No single request shape works on every server that claims the Chat Completions API: llama-cpp-python's templates
need ``content`` present as a string in an assistant message that carries tool calls (``null`` is refused there, by
LM Studio and by Ollama; ``""`` by some gateways); ``tool_choice: "required"`` makes some servers fail and others
ignore it; streams may carry no usage however politely asked; and a field such as ``stream_options`` or
``max_completion_tokens`` may be refused outright. tomo starts from what OpenAI's own API accepts, and when a server
refuses a request, changes one thing (the thing its error names, else the next likely one), retries, and remembers
what worked in this profile so later requests to the same server are shaped right from the start. Every change is
said once as a ``Notice``; :meth:`ServerProfile.describe` lists them.

A profile is per base URL and per process (``profile_for``): every model on one server shares it, because the
behaviour belongs to the server (its chat template, its version), not to a request.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal

ContentForm = Literal["string", "omit", "null"]
# The order tomo tries: "string" ("" when the model said nothing) is what llama-cpp-python, LM Studio and Ollama
# need and OpenAI accepts; "omit" is what OpenAI's reference clients send; "null" is what OpenAI itself returns.
CONTENT_FORMS: tuple[ContentForm, ...] = ("string", "omit", "null")

Seen = Literal["unknown", "works", "rejected", "ignored"]
ForceMode = Literal["required", "named", "prompt"]

FORCE_SYSTEM = "You must answer this turn by calling one of the tools ({names}); do not answer in plain text."
FORCE_RETRY = "You did not call a tool. Call one of these tools now: {names}. Reply with the tool call only."

# Error words that name what a server refused, checked in this order against the lowered error text.
_NAMES_FORCE = ("tool_choice", "required")
_NAMES_STREAM_OPTIONS = ("stream_options", "include_usage")
_NAMES_MAX_COMPLETION = ("max_completion_tokens",)
_NAMES_CONTENT = ("content",)


@dataclass(slots=True)
class ServerProfile:
    """The capabilities of one server as far as tomo has seen them. Starts optimistic (OpenAI's own shapes)."""

    base_url: str
    content_form: ContentForm = "string"
    required: Seen = "unknown"  # tool_choice: "required"
    named: Seen = "unknown"  # tool_choice: {"type": "function", "function": {"name": ...}}
    stream_options: bool = True  # send stream_options.include_usage with streams
    stream_tools: bool = True  # stream a reply when tools are offered (llama-cpp-python's function calling cannot)
    stream_usage: Literal["unknown", "sent", "missing"] = "unknown"
    max_tokens_field: str | None = None  # None: the adapter's default
    tokenizer: Literal["unknown", "yes", "no"] = "unknown"  # POST /extras/tokenize/count (llama-cpp-python)
    learned: list[str] = field(default_factory=list)  # one sentence per change, in the order they were made

    def force_mode(self, tool_count: int) -> ForceMode:
        """How to ask this server for a forced call with ``tool_count`` tools offered."""
        if self.required not in ("rejected", "ignored"):
            return "required"
        if tool_count == 1 and self.named not in ("rejected", "ignored"):
            return "named"
        return "prompt"

    def demote(self, mode: ForceMode, tool_count: int) -> ForceMode:
        """``mode`` unless the server refused it, then the next way down (named for one tool, else the prompt)."""
        if mode == "required" and self.required == "rejected":
            mode = "named" if tool_count == 1 and self.named != "rejected" else "prompt"
        if mode == "named" and self.named == "rejected":
            mode = "prompt"
        return mode

    def snapshot(self) -> ServerProfile:
        return dataclasses.replace(self, learned=list(self.learned))

    def restore(self, saved: ServerProfile) -> None:
        """Back to ``saved``: a request that failed whatever was changed taught nothing about the server."""
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(saved, f.name))

    def forced_without_call(self, mode: ForceMode) -> str | None:
        """A forced request came back without a call: remember that ``mode`` is not enforced here. Returns the
        sentence to say, or None when nothing new was learned (the prompt mode cannot be demoted further)."""
        if mode == "required" and self.required != "ignored":
            self.required = "ignored"
            return self._learn('accepts tool_choice "required" but does not enforce it (a reply came back without '
                               "a call); forcing by naming the tool when there is one, else by asking in the prompt")
        if mode == "named" and self.named != "ignored":
            self.named = "ignored"
            return self._learn("accepts a named tool_choice but does not enforce it; forcing by asking in the prompt")
        return None

    def forced_with_call(self, mode: ForceMode) -> None:
        if mode == "required" and self.required == "unknown":
            self.required = "works"
        elif mode == "named" and self.named == "unknown":
            self.named = "works"

    def adapt(self, error_text: str, body: dict[str, Any], tried: set[str]) -> str | None:
        """The server refused ``body`` with ``error_text``: change one thing and return the sentence saying what,
        or None when nothing is left to change. ``tried`` holds what was already changed for this request, so a
        request is never retried twice for the same reason."""
        lowered = error_text.lower()
        candidates = self._candidates(body)
        named = [c for c in candidates if any(w in lowered for w in _WORDS[c])]
        for what in named + candidates:  # what the error names first, then the likely ones in order
            key = f"content={self.content_form}" if what == "content" else what  # each content form once
            if key not in tried:
                tried.add(key)
                return self._apply(what, body)
        return None

    def _candidates(self, body: dict[str, Any]) -> list[str]:
        """What in this body could be changed, most likely culprit first."""
        out = []
        if _has_empty_call_message(body) and self.content_form != CONTENT_FORMS[-1]:
            out.append("content")
        choice = body.get("tool_choice")
        if choice == "required" or isinstance(choice, dict):
            out.append("tool_choice")
        if body.get("stream") and body.get("tools"):
            out.append("stream_tools")
        if "stream_options" in body:
            out.append("stream_options")
        if "max_completion_tokens" in body:
            out.append("max_completion_tokens")
        return out

    def _apply(self, what: str, body: dict[str, Any]) -> str:
        if what == "content":
            before = self.content_form
            self.content_form = CONTENT_FORMS[CONTENT_FORMS.index(before) + 1]
            return self._learn(f"refused an assistant tool-call message whose content was {_FORM_WORDS[before]}; "
                               f"sending it {_FORM_WORDS[self.content_form]} from now on")
        if what == "tool_choice":
            if body.get("tool_choice") == "required":
                self.required = "rejected"
                return self._learn('refused tool_choice "required"; forcing a call by naming the tool when there is '
                                   "exactly one, else by asking for it in the prompt")
            self.named = "rejected"
            return self._learn("refused a named tool_choice; forcing a call by asking for it in the prompt")
        if what == "stream_tools":
            self.stream_tools = False
            return self._learn("cannot stream a reply while tools are offered; asking for whole replies then (the "
                               "text is shown when it is complete)")
        if what == "stream_options":
            self.stream_options = False
            return self._learn("refused stream_options; streaming without it (usage is counted by tomo, marked ~)")
        self.max_tokens_field = "max_tokens"
        return self._learn("refused max_completion_tokens; capping replies with max_tokens instead")

    def _learn(self, sentence: str) -> str:
        self.learned.append(sentence)
        return sentence

    def describe(self) -> dict[str, Any]:
        """The profile as plain data (``tomo models --json``, transcripts, the live tests)."""
        return {"base_url": self.base_url, "content_form": self.content_form, "tool_choice_required": self.required,
                "tool_choice_named": self.named, "stream_options": self.stream_options,
                "stream_tools": self.stream_tools,
                "stream_usage": self.stream_usage, "max_tokens_field": self.max_tokens_field,
                "tokenizer": self.tokenizer, "learned": list(self.learned)}


_WORDS: dict[str, tuple[str, ...]] = {
    "stream_tools": ("streaming tool", "stream tool", "streaming with tools"),
    "content": _NAMES_CONTENT,
    "tool_choice": _NAMES_FORCE,
    "stream_options": _NAMES_STREAM_OPTIONS,
    "max_completion_tokens": _NAMES_MAX_COMPLETION,
}
_FORM_WORDS: dict[ContentForm, str] = {"string": 'a string ("" when empty)', "omit": "left out",
                                       "null": "null"}


def _has_empty_call_message(body: dict[str, Any]) -> bool:
    """Only an assistant message with tool calls and no text has a content form to choose."""
    for message in body.get("messages") or []:
        if message.get("role") == "assistant" and message.get("tool_calls") and not message.get("content"):
            return True
    return False


_PROFILES: dict[str, ServerProfile] = {}


def profile_for(base_url: str) -> ServerProfile:
    """The session's profile of the server at ``base_url`` (one per URL, created on first use)."""
    key = base_url.rstrip("/")
    found = _PROFILES.get(key)
    if found is None:
        found = _PROFILES[key] = ServerProfile(key)
    return found


def known_profiles() -> list[ServerProfile]:
    return list(_PROFILES.values())


def forget_profiles() -> None:
    """Drops what was learned (tests; a server restarted with another template)."""
    _PROFILES.clear()


# ---- usage a server did not report ------------------------------------------------------------------------------

CHARS_PER_TOKEN = 4.0  # the usual English-and-code average; only used when the server offers no tokenizer
MESSAGE_OVERHEAD = 4  # tokens a chat template adds around each message (role markers, separators)


def prompt_text(body: dict[str, Any]) -> tuple[str, int]:
    """The text of a request that the model reads as input, and how many messages it has (for the overhead)."""
    parts = []
    messages = body.get("messages") or []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    if body.get("tools"):
        parts.append(json.dumps(body["tools"]))
    return "\n".join(parts), len(messages)


def estimate_tokens(text: str) -> int:
    """A token count from text alone: about four characters a token, never zero for non-empty text."""
    return max(1, round(len(text) / CHARS_PER_TOKEN)) if text else 0
