"""The one model interface. Everything that talks to a model holds a ``Model`` and nothing more specific."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from tomo.models.messages import Message, Reply, StreamEvent, ToolSpec


@runtime_checkable
class Model(Protocol):
    """A chat model. ``chat`` returns a whole reply; ``stream`` yields deltas and ends with ``ReplyDone``.

    ``force_tools`` asks the model to call at least one tool (providers differ in how; adapters hide that).
    ``max_tokens`` caps the reply; a reply cut by it comes back with finish ``length``.
    """

    name: str

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> Reply: ...

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        force_tools: bool = False,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class Tempered(Protocol):
    """A model whose sampling temperature can be set between calls (the OpenAI-compatible adapter: local servers).
    ``None`` is the server's default."""

    temperature: float | None
