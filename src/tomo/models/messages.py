"""Provider-neutral messages: the only shapes that cross the gateway boundary.

Adapters translate these to and from each provider's wire format; everything above the gateway (loop, engines,
console) speaks only these. Plain dataclasses with slots, because the loop builds thousands of them per run and
pydantic validation there would be pure overhead: data coming *from the wire* is validated by the adapters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
Finish = Literal["stop", "length", "tool_calls", "content_filter", "error"]
FINISHES: tuple[Finish, ...] = ("stop", "length", "tool_calls", "content_filter", "error")


@dataclass(slots=True)
class ToolCall:
    """One call the model asked for.

    ``malformed`` is set (with a sentence saying why) when the model's arguments were not a JSON object; the raw
    text is kept in ``raw_args`` so the loop can show the model what it sent. Such a call is never executed.
    """

    id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    malformed: str | None = None
    raw_args: str | None = None


@dataclass(slots=True)
class Message:
    """A turn of the conversation. ``tool_call_id``/``name``/``is_error`` are only meaningful for role ``tool``."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: list[ToolCall] | None = None) -> Message:
        return cls("assistant", content, list(tool_calls or []))

    @classmethod
    def tool(cls, call: ToolCall, content: str, *, is_error: bool = False) -> Message:
        return cls("tool", content, tool_call_id=call.id, name=call.name, is_error=is_error)


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """What the model is told about a tool: a name, a description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class Usage:
    """Tokens a reply cost. ``estimated`` when tomo counted them itself because the server did not say (shown with
    a "~"); a sum is estimated when any part of it is. Budgets count estimated tokens like reported ones."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.estimated or other.estimated)


@dataclass(slots=True)
class Reply:
    """A model's answer. ``finish`` is normalized; ``raw_finish`` is what the provider actually said."""

    message: Message
    finish: Finish
    usage: Usage = field(default_factory=Usage)
    raw_finish: str | None = None
    model: str = ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls

    @property
    def text(self) -> str:
        return self.message.content


# ---- streaming -------------------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class TextDelta:
    """A piece of the reply's text, as it arrived."""

    text: str


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A fragment of a tool call: ``index`` groups fragments; id and name usually come with the first one."""

    index: int
    id: str | None = None
    name: str | None = None
    args_fragment: str = ""


@dataclass(slots=True, frozen=True)
class ReplyDone:
    """The last item of every stream: the same ``Reply`` that ``chat`` would have returned."""

    reply: Reply


StreamEvent = TextDelta | ToolCallDelta | ReplyDone
