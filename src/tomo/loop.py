"""One tool loop for every agent: ask the model, run the tools it asks for, repeat; stop by arithmetic.

The model never decides when the run ends beyond answering without a tool call. Steps, tool calls, malformed calls
and tokens are counted against :class:`Limits`; crossing one stops the loop, tells the model once (a note at the end
of the history) and the user always (:class:`~tomo.events.LimitReached`). A reply cut off for length is flagged in
the outcome and shown as a warning, never passed on as a complete answer.

Kept small and cheap on purpose: the history is one list appended to in place (never copied or re-serialized per
step), tool specs are cached by the registry, so a step's overhead stays flat however long the run grows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from tomo.errors import ModelError
from tomo.events import (
    AssistantSaid,
    Event,
    LimitReached,
    ModelCalled,
    ModelFailed,
    ModelThinking,
    Notice,
    NullSink,
    ReplyTruncated,
    ResultCapped,
    Sink,
    TextStreamed,
    ToolCalled,
    ToolRefused,
    UsageReported,
)
from tomo.models.base import Model
from tomo.models.messages import Finish, Message, Reply, ReplyDone, TextDelta, ToolCall, ToolSpec, Usage
from tomo.tools import Caller, Registry, ToolResult, ToolUser

StopReason = Literal["steps", "tool_calls", "tokens", "malformed_calls", "error"]


@dataclass(frozen=True, slots=True)
class Limits:
    """What a run may spend. ``None`` means unlimited (benchmarks only: a real run always has a ceiling).

    The defaults suit one coding task: enough steps to read, edit and verify, not enough to wander for an hour.
    """

    max_steps: int | None = 40
    max_tool_calls: int | None = 80
    max_tokens_total: int | None = 1_000_000
    max_malformed: int | None = 3
    max_reply_tokens: int | None = None

    def merge(self, **overrides: int | None) -> Limits:
        """A copy with the given fields replaced where the override is not ``None``."""
        return dataclasses.replace(self, **{k: v for k, v in overrides.items() if v is not None})


class LoopAgent(ToolUser, Protocol):
    """What the loop needs from an agent (a :class:`tomo.agents.Agent` satisfies this): the loop sits below
    ``agents.py``, which builds agents from configuration with the loop's :class:`Limits`, so it names the shape, not
    the class."""

    @property
    def prompt(self) -> str: ...

    @property
    def force_tools(self) -> bool: ...

    @property
    def limits(self) -> Limits: ...


@dataclass(slots=True)
class Outcome:
    """How a run ended. ``completed`` is true only when the model answered on its own and the answer was not cut."""

    text: str
    messages: list[Message]
    steps: int = 0
    tool_calls: int = 0
    malformed_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    stopped_by: StopReason | None = None
    truncated: bool = False
    finish: Finish | None = None
    results: list[ToolResult] = field(default_factory=list)
    error: ModelError | None = None  # set with ``stopped_by="error"`` when the model or its server failed

    @property
    def completed(self) -> bool:
        return self.stopped_by is None and not self.truncated and self.finish == "stop"


class RunFailed(ModelError):
    """The model failed mid-run. Raised instead of the bare model error so the caller can keep what happened:
    ``outcome`` holds the history, usage and counts up to the failure (``stopped_by="error"``, ``error`` set).

    It is a :class:`ModelError` with the original's message, hint, provider and status, so code that only wants to
    report the failure catches it as before; engines that persist runs (oi sessions, team checkpoints, the console)
    catch ``RunFailed`` and save ``outcome.messages``.
    """

    def __init__(self, error: ModelError, outcome: Outcome) -> None:
        super().__init__(error.message, provider=error.provider, status=error.status, hint=error.hint)
        self.error = error
        self.outcome = outcome


class _Stop(Exception):
    """Control flow: a limit was reached (mini-swe-agent style: the owner catches it and ends the run)."""

    def __init__(self, reason: StopReason, value: int) -> None:
        self.reason, self.value = reason, value


# Finishes that, like ``length``, mean the text is not a whole answer: the user is warned, never handed it as one.
_UNFINISHED: dict[Finish, str] = {
    "content_filter": "the model refused or its reply was filtered; the answer is not complete",
    "error": "the model's reply broke off (the provider failed mid-reply); the answer is not complete",
}

_LIMIT_WORDS: dict[StopReason, str] = {
    "steps": "the step limit ({} model calls)",
    "tool_calls": "the tool-call limit ({} calls)",
    "tokens": "the token budget ({:,} tokens)",
    "malformed_calls": "the limit on malformed tool calls ({})",
}


async def run(
    agent: LoopAgent,
    model: Model,
    registry: Registry,
    caller: Caller,
    messages: Sequence[Message] | str,
    limits: Limits | None = None,
    sink: Sink | None = None,
    *,
    stream: bool = False,
) -> Outcome:
    """Runs ``agent`` on ``model`` until it answers without a tool call or a limit stops it.

    ``messages`` is the conversation so far (a string is one user message); the agent's prompt is put first as the
    system message unless the conversation already starts with one. The returned outcome holds the whole history.
    ``stream=True`` asks the model to stream and sends its text to the sink as it arrives (``TextStreamed``).
    """
    limits = limits or agent.limits
    sink = sink or NullSink()
    emit = sink.emit
    history = [Message.user(messages)] if isinstance(messages, str) else list(messages)
    if agent.prompt and not (history and history[0].role == "system"):
        history.insert(0, Message.system(agent.prompt))
    specs = registry.specs(agent)
    out = Outcome("", history)
    force = agent.force_tools and bool(specs)
    name, model_name = agent.name, model.name
    try:
        while True:
            _check(limits.max_steps, out.steps, "steps")
            _check(limits.max_tokens_total, out.usage.total, "tokens")
            emit(ModelThinking(name, model_name, out.steps + 1))
            started = time.perf_counter()
            try:
                if stream:
                    reply = await _streamed(model, history, specs, force, limits.max_reply_tokens, name, emit)
                else:
                    reply = await model.chat(history, specs, force_tools=force, max_tokens=limits.max_reply_tokens)
            except ModelError as exc:
                out.stopped_by, out.error = "error", exc
                emit(ModelFailed(name, out.steps + 1, exc.message, exc.provider, exc.status))
                raise RunFailed(exc, out) from exc
            force = False  # forced on the first turn only: a forced model must be able to stop
            out.steps += 1
            out.usage += reply.usage
            out.finish = reply.finish
            usage = reply.usage
            emit(ModelCalled(name, model_name, out.steps, reply.finish, usage.input_tokens, usage.output_tokens,
                             time.perf_counter() - started, usage.estimated))
            message = reply.message
            history.append(message)
            if message.content:
                emit(AssistantSaid(name, message.content))
            out.truncated = reply.finish == "length"
            if out.truncated:
                emit(ReplyTruncated(name, out.steps))  # renderers show it as a warning: the answer is incomplete
            elif reply.finish in _UNFINISHED:
                emit(Notice("warning", f"{name}: {_UNFINISHED[reply.finish]} (step {out.steps})"))
            if not message.tool_calls:
                out.text = message.content
                return out
            await _answer(agent, registry, caller, message.tool_calls, limits, out, emit)
    except _Stop as stop:
        out.stopped_by = stop.reason
        words = _LIMIT_WORDS[stop.reason].format(stop.value)
        history.append(Message.user(f"[tomo] This run was stopped: {words} was reached. Do not continue the task; "
                                    "if asked, report what was done and what is left."))
        emit(LimitReached(name, stop.reason, stop.value))
        return out
    finally:
        emit(UsageReported(name, out.usage.input_tokens, out.usage.output_tokens, out.usage.estimated))


async def _answer(agent: LoopAgent, registry: Registry, caller: Caller, calls: list[ToolCall], limits: Limits,
                  out: Outcome, send: Callable[[Event], None]) -> None:
    """Answers every call of one reply, in order. Each call gets a tool message, even those a limit leaves unrun
    (providers reject a history where a call has no answer)."""
    history, name = out.messages, agent.name
    stop: _Stop | None = None
    for call in calls:
        if stop is not None:
            history.append(Message.tool(call, f"not run: {_LIMIT_WORDS[stop.reason].format(stop.value)} was reached",
                                        is_error=True))
            continue
        if call.malformed is not None:
            out.malformed_calls += 1
        elif limits.max_tool_calls is not None and out.tool_calls >= limits.max_tool_calls:
            stop = _Stop("tool_calls", limits.max_tool_calls)
            history.append(Message.tool(call, f"not run: {_LIMIT_WORDS['tool_calls'].format(stop.value)} was reached",
                                        is_error=True))
            continue
        else:
            out.tool_calls += 1
        result = await registry.call(agent, call, caller)
        out.results.append(result)
        history.append(Message.tool(call, result.text, is_error=not result.ok))
        if result.status == "refused":
            send(ToolRefused(name, call.name, result.text))
        else:
            send(ToolCalled(name, call.name, call.args, result.ok, _summary(result), result.seconds))
        if result.capped:
            send(ResultCapped(name, call.name, result.shown, result.total, result.unit))
        if (call.malformed is not None and limits.max_malformed is not None
                and out.malformed_calls >= limits.max_malformed):
            stop = _Stop("malformed_calls", limits.max_malformed)
    if stop is not None:
        raise stop


async def _streamed(model: Model, history: list[Message], specs: list[ToolSpec], force: bool,
                    max_tokens: int | None, name: str, send: Callable[[Event], None]) -> Reply:
    reply: Reply | None = None
    async for item in model.stream(history, specs, force_tools=force, max_tokens=max_tokens):
        if isinstance(item, TextDelta):
            send(TextStreamed(name, item.text))
        elif isinstance(item, ReplyDone):
            reply = item.reply
    if reply is None:
        raise ModelError(f"model {model.name!r} ended its stream without a final reply", provider=model.name,
                         hint="this is a bug in the model adapter: every stream must end with ReplyDone")
    return reply


def _check(limit: int | None, value: int, reason: StopReason) -> None:
    if limit is not None and value >= limit:
        raise _Stop(reason, limit)


def _summary(result: ToolResult) -> str:
    """One line for the user's log: counts for lists, the first line otherwise, and any caller keys dropped."""
    if result.capped:
        text = f"{result.shown:,} of {result.total:,} {result.unit} (capped)"
    elif result.ok and result.unit and result.unit != "characters":
        text = f"{result.total:,} {result.unit}"
    else:
        first = result.text.split("\n", 1)[0]
        text = first if len(first) <= 200 else first[:197] + "..."
    if result.dropped:
        text += f" (ignored {', '.join(result.dropped)})"
    return text


def run_sync(
    agent: LoopAgent,
    model: Model,
    registry: Registry,
    caller: Caller,
    messages: Sequence[Message] | str,
    limits: Limits | None = None,
    sink: Sink | None = None,
    *,
    stream: bool = False,
) -> Outcome:
    """:func:`run` for callers without an event loop (scripts, the CLI)."""
    return asyncio.run(run(agent, model, registry, caller, messages, limits, sink, stream=stream))
