"""One stream of typed events for everything tomo does.

Nothing below the CLI and the web console prints: the loop, the engines and the sandbox emit events to a ``Sink``,
the CLI renders them with rich, the console streams them to the browser, and tests assert on them. Every event is a
frozen dataclass with a ``kind`` so a JSONL transcript can be written and replayed.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TextIO

from tomo.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}


# ---- the loop ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelCalled(Event):
    kind: ClassVar[str] = "model_called"
    agent: str
    model: str
    step: int
    finish: str
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    estimated: bool = False  # the tokens were counted by tomo: the server reported none


@dataclass(frozen=True, slots=True)
class ModelThinking(Event):
    """Sent before a model call so a renderer can show a live status line."""

    kind: ClassVar[str] = "model_thinking"
    agent: str
    model: str
    step: int


@dataclass(frozen=True, slots=True)
class TextStreamed(Event):
    kind: ClassVar[str] = "text_streamed"
    agent: str
    text: str


@dataclass(frozen=True, slots=True)
class AssistantSaid(Event):
    kind: ClassVar[str] = "assistant_said"
    agent: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCalled(Event):
    kind: ClassVar[str] = "tool_called"
    agent: str
    tool: str
    args: dict[str, Any]
    ok: bool
    summary: str = ""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class ToolRefused(Event):
    kind: ClassVar[str] = "tool_refused"
    agent: str
    tool: str
    reason: str


@dataclass(frozen=True, slots=True)
class ResultCapped(Event):
    kind: ClassVar[str] = "result_capped"
    agent: str
    tool: str
    shown: int
    total: int
    unit: str = "characters"


@dataclass(frozen=True, slots=True)
class LimitReached(Event):
    kind: ClassVar[str] = "limit_reached"
    agent: str
    limit: str  # "steps" | "tool_calls" | "tokens" | "malformed_calls"
    value: int


@dataclass(frozen=True, slots=True)
class ReplyTruncated(Event):
    kind: ClassVar[str] = "reply_truncated"
    agent: str
    step: int


@dataclass(frozen=True, slots=True)
class ModelFailed(Event):
    """The model or its server failed mid-run; the run ends here, and what it did so far is kept in its outcome."""

    kind: ClassVar[str] = "model_failed"
    agent: str
    step: int
    error: str
    provider: str = ""
    status: int | None = None


@dataclass(frozen=True, slots=True)
class UsageReported(Event):
    kind: ClassVar[str] = "usage"
    agent: str
    input_tokens: int
    output_tokens: int
    estimated: bool = False  # counted by tomo because the server did not say: renderers show "~"


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """Something the user should know that is not an error: a fallback taken, a warning, a retry."""

    kind: ClassVar[str] = "notice"
    level: str  # "info" | "warning" | "error"
    text: str


# ---- engines ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CodeRan(Event):
    kind: ClassVar[str] = "code_ran"
    language: str
    exit_code: int
    seconds: float
    timed_out: bool = False
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class GateBlocked(Event):
    kind: ClassVar[str] = "gate_blocked"
    gate: str
    reason: str


@dataclass(frozen=True, slots=True)
class BlockStarted(Event):
    """oi: a block the model wrote, shown before it runs (``number`` counts the turn's blocks from 1)."""

    kind: ClassVar[str] = "block_started"
    round: int
    number: int
    language: str
    code: str


@dataclass(frozen=True, slots=True)
class BlockOutput(Event):
    """oi: a block's output after it ran (capped by the sandbox), what tomo noticed, and the files it changed."""

    kind: ClassVar[str] = "block_output"
    number: int
    output: str
    exit_code: int
    notes: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class ReproductionKept(Event):
    """trials: a test tomo keeps to judge the fixes, as it was written. ``by``: "model" (the model's reproduction),
    "task" (the task's own examples), "reported" (a result the task reports as wrong, asserted gone) or "second" (a
    second test that failed on a fix and judges the next trials).
    Why its code: tomo cannot tell a test that asserts a wrong value from a right one; the lab can, by running it on
    the task's reference solution (``tomo lab repros``)."""

    kind: ClassVar[str] = "reproduction_kept"
    path: str
    code: str
    by: str


@dataclass(frozen=True, slots=True)
class TurnEnded(Event):
    """oi: the turn's summary. ``ended_by``: model | rounds | refused | interrupted | error; ``outcome`` and
    ``reason``: what the harness certifies (see tomo.oi.engine.TurnSummary)."""

    kind: ClassVar[str] = "turn_ended"
    ended_by: str
    rounds: int
    blocks: int
    files_changed: list[str]
    verified: bool
    gates: dict[str, Any] = field(default_factory=dict)
    outcome: str = ""  # verified | unverified | unchanged | interrupted | error (the harness's word, not the model's)
    reason: str = ""


@dataclass(frozen=True, slots=True)
class StageDone(Event):
    kind: ClassVar[str] = "stage_done"
    job_id: str
    stage: str
    workers: int
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class StageStarted(Event):
    kind: ClassVar[str] = "stage_started"
    job_id: str
    stage: str
    index: int
    workers: int


@dataclass(frozen=True, slots=True)
class WorkerStarted(Event):
    kind: ClassVar[str] = "worker_started"
    job_id: str
    stage: str
    index: int
    role: str
    model: str
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class WorkerDone(Event):
    """status: complete, failed or skipped (never started: the budget was spent)."""

    kind: ClassVar[str] = "worker_done"
    job_id: str
    stage: str
    index: int
    role: str
    status: str
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    error: str = ""


@dataclass(frozen=True, slots=True)
class JobDone(Event):
    kind: ClassVar[str] = "job_done"
    job_id: str
    status: str
    reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class PayloadRendered(Event):
    """assist: the full payload of an operation, for the user only (the model sees a receipt)."""

    kind: ClassVar[str] = "payload_rendered"
    handle: str
    operation: str
    payload: dict[str, Any] = field(default_factory=dict)


# ---- sinks ------------------------------------------------------------------------------------------------------


class Sink(Protocol):
    def emit(self, event: Event) -> None: ...


class NullSink:
    """Drops everything (benchmarks, library use without a UI)."""

    def emit(self, event: Event) -> None:
        return None


class ListSink:
    """Keeps every event in order: what tests assert on."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def of(self, cls: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]


class JsonlSink:
    """Writes one JSON object a line: a transcript that can be read back with :func:`read_jsonl`."""

    def __init__(self, target: Path | TextIO) -> None:
        self._owned = isinstance(target, Path)
        self._fh: TextIO = target.open("a", encoding="utf-8") if isinstance(target, Path) else target

    def emit(self, event: Event) -> None:
        self._fh.write(json.dumps(event.to_dict(), default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._owned:
            self._fh.close()


class TeeSink:
    """Sends every event to several sinks (a renderer and a transcript, say)."""

    def __init__(self, *sinks: Sink) -> None:
        self.sinks = sinks

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            sink.emit(event)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Reads a transcript written by :class:`JsonlSink` (dicts, since event classes may evolve).

    A line that is not JSON is a :class:`~tomo.errors.ConfigError` naming the file's line number.
    """
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path} is not a JSONL transcript: line {number}: {exc.msg}",
                                  hint="a transcript has one JSON object a line, as JsonlSink writes it") from exc
    return rows
