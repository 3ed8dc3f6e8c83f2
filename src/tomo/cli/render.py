"""Renders the event stream in a terminal: a live status line while the model thinks, a compact log after.

This is the only place the loop's events become text for a person. It is a :class:`~tomo.events.Sink`, so the CLI
passes it (or a ``TeeSink`` of it and a ``JsonlSink``) to ``loop.run``; a saved transcript can be shown again with
:func:`replay`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console, RenderableType
from rich.status import Status
from rich.text import Text

from tomo.cli.rows import rich_console
from tomo.cli.safe import esc, visible
from tomo.events import (
    AssistantSaid,
    Event,
    LimitReached,
    ModelCalled,
    ModelFailed,
    ModelThinking,
    Notice,
    PayloadRendered,
    ReplyTruncated,
    ResultCapped,
    Sink,
    TextStreamed,
    ToolCalled,
    ToolRefused,
    UsageReported,
    read_jsonl,
)

_LIMITS = {
    "steps": "step limit",
    "tool_calls": "tool-call limit",
    "tokens": "token budget",
    "malformed_calls": "malformed-call limit",
}
_LEVELS = {"info": "cyan", "warning": "yellow", "error": "bold red"}


class RichSink:
    """A Sink that draws events with rich. ``close()`` stops the status line (call it when the run ends)."""

    def __init__(self, console: Console | None = None, *, show_assistant: bool = True) -> None:
        self.console = console or rich_console(highlight=False)
        self.show_assistant = show_assistant
        self._status: Status | None = None
        self._tail = ""
        self._handlers: dict[type[Event], Callable[[Any], None]] = {
            ModelThinking: self._thinking,
            ModelCalled: self._called,
            ModelFailed: self._failed,
            TextStreamed: self._streamed,
            AssistantSaid: self._said,
            ToolCalled: self._tool,
            ToolRefused: self._refused,
            ResultCapped: self._capped,
            LimitReached: self._limit,
            ReplyTruncated: self._truncated,
            UsageReported: self._usage,
            Notice: self._notice,
            PayloadRendered: self._payload,
        }

    def emit(self, event: Event) -> None:
        if not isinstance(event, ModelThinking | TextStreamed):
            self._stop_status()
        self._handlers.get(type(event), self._other)(event)

    def close(self) -> None:
        self._stop_status()

    # ---- one method per event --------------------------------------------------------------------------------

    def _thinking(self, e: ModelThinking) -> None:
        self._tail = ""
        message = f"[bold]{esc(e.agent)}[/] · {esc(e.model)} is thinking (step {e.step})…"
        if self._status is None:
            self._status = self.console.status(message, spinner="dots")
            self._status.start()
        else:
            self._status.update(message)

    def _streamed(self, e: TextStreamed) -> None:
        """Streamed text goes to the status line only (its tail); the whole reply is logged once, when it ends."""
        self._tail = (self._tail + e.text)[-60:]
        if self._status is not None:
            tail = " ".join(self._tail.split())
            self._status.update(f"[bold]{esc(e.agent)}[/] is writing: [dim]…{esc(tail)}[/]")

    def _called(self, e: ModelCalled) -> None:
        t = "~" if e.estimated else ""
        self._line("dim", f"step {e.step} · {e.model} · {e.seconds:.1f}s · {t}{e.input_tokens:,} in / "
                          f"{t}{e.output_tokens:,} out · {e.finish}")

    def _said(self, e: AssistantSaid) -> None:
        if self.show_assistant:
            self.console.print(_assemble((f"{e.agent}: ", "bold cyan"), e.text))

    def _tool(self, e: ToolCalled) -> None:
        mark = ("  ✓ ", "green") if e.ok else ("  ✗ ", "red")
        call = f"{e.tool}({_args(e.args)})"
        self._one_line(_assemble(mark, (call, "bold"), (" → ", "dim"), e.summary,
                                     (f"  {e.seconds:.2f}s" if e.seconds >= 0.01 else "", "dim")))

    def _failed(self, e: ModelFailed) -> None:
        where = f" ({e.provider}, HTTP {e.status})" if e.status else (f" ({e.provider})" if e.provider else "")
        self._one_line(_assemble((f"✗ {e.agent}: the model failed at step {e.step}{where}: ", "bold red"), e.error))

    def _refused(self, e: ToolRefused) -> None:
        self._one_line(_assemble(("  ⊘ refused ", "bold red"), (e.tool, "bold"), (": ", "dim"), e.reason))

    def _capped(self, e: ResultCapped) -> None:
        self._line("yellow", f"  ⚠ {e.tool}: the model saw {e.shown:,} of {e.total:,} {e.unit} (result capped)")

    def _limit(self, e: LimitReached) -> None:
        self._line("bold yellow", f"■ {e.agent} stopped: {_LIMITS.get(e.limit, e.limit)} reached ({e.value:,})")

    def _truncated(self, e: ReplyTruncated) -> None:
        self._line("bold yellow", f"⚠ {e.agent}: the reply at step {e.step} was cut off at the token limit; "
                                  "it is incomplete")

    def _usage(self, e: UsageReported) -> None:
        total, t = e.input_tokens + e.output_tokens, "~" if e.estimated else ""
        self._line("dim", f"tokens: {t}{e.input_tokens:,} in · {t}{e.output_tokens:,} out · {t}{total:,} total"
                          + (" (estimated: the server reported none)" if e.estimated else ""))

    def _notice(self, e: Notice) -> None:
        self._line(_LEVELS.get(e.level, ""), f"{e.level}: {e.text}")

    def _payload(self, e: PayloadRendered) -> None:
        # The full payload is for a table (assist's renderer) or --json; a log line only counts its rows.
        sizes = [f"{len(v):,} {k}" for k, v in e.payload.items() if isinstance(v, list)]
        self._line("dim", f"  payload {e.handle} ({e.operation}): {', '.join(sizes) or 'no rows'} (shown to you only)")

    def _other(self, e: Event) -> None:
        fields = ", ".join(f"{k}={v}" for k, v in e.to_dict().items() if k != "kind")
        self._line("dim", f"{e.kind}: {fields}")

    # ---- helpers ------------------------------------------------------------------------------------------------

    def _line(self, style: str, text: str) -> None:
        """One log line; its values come from outside (model names, notices, tool names), so it is shown as text."""
        self.console.print(Text(visible(text), style=style))

    def _one_line(self, text: Text) -> None:
        """A log entry stays one line however long the call: on a terminal cut to the window (the full text is in the
        transcript); in a pipe or a file, where a script or a model reads it, whole like every other line there."""
        if self.console.is_terminal:
            self.console.print(text, no_wrap=True, overflow="ellipsis", crop=True)
        else:
            self.console.print(text)

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


def code_block(console: Console, code: str, language: str) -> RenderableType:
    """A block of code as the log shows it: highlighted and wrapped to the window on a terminal; in a pipe or a file
    plain, each line whole (rich's Syntax wraps at the console's width, 80 columns in a pipe, and a reader there, a
    script or a model, would take the pieces for lines of the program)."""
    source = visible(code.rstrip("\n")) or " "
    if not console.is_terminal:
        return Text(source)
    from rich.syntax import Syntax  # (here: a log in a pipe needs no lexer)

    return Syntax(source, "python" if language == "python" else "bash", theme="ansi_dark", word_wrap=True)


def _assemble(*parts: str | tuple[str, str]) -> Text:
    """``Text.assemble`` with every part shown as text (tomo's own words hold no control characters)."""
    return Text.assemble(*((visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p) for p in parts))


def _args(args: dict[str, Any], limit: int = 60) -> str:
    text = ", ".join(f"{k}={json.dumps(v, default=str, ensure_ascii=False)}" for k, v in args.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _event_classes() -> dict[str, type[Event]]:
    found: dict[str, type[Event]] = {}
    pending: list[type[Event]] = [Event]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.kind, cls)
        pending.extend(cls.__subclasses__())
    return found


def events_from_jsonl(path: Path) -> Iterable[Event]:
    """Rebuilds the events of a transcript written by ``JsonlSink``; rows of unknown kinds become Notices."""
    classes = _event_classes()
    for row in read_jsonl(path):
        cls = classes.get(row.get("kind", ""))
        names = {f.name for f in dataclasses.fields(cls)} if cls is not None else set()
        try:
            if cls is None or cls is Event:
                raise TypeError(row.get("kind"))
            yield cls(**{k: v for k, v in row.items() if k in names})
        except TypeError:
            yield Notice("info", f"transcript row of kind {row.get('kind')!r}: {row}")


def replay(path: Path, sink: Sink) -> int:
    """Sends a saved transcript through ``sink`` (a RichSink shows the run again). Returns the number of events."""
    count = 0
    for event in events_from_jsonl(path):
        sink.emit(event)
        count += 1
    return count
