"""The one model interface. Everything that talks to a model holds a ``Model`` and nothing more specific."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

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


@contextlib.contextmanager
def at_temperature(model: Any, temperature: float | None) -> Iterator[float | None]:
    """``model`` sampled at ``temperature`` inside the block, and at its own temperature again after it; yields the
    temperature it had (None when nothing changed). Only a :class:`Tempered` model with a temperature tomo set is
    changed: a provider left at its default is never overridden (some hosted models refuse any other)."""
    if temperature is None or not isinstance(model, Tempered) or model.temperature is None:
        yield None
        return
    current = model.temperature
    model.temperature = temperature
    try:
        yield current
    finally:
        model.temperature = current
