"""The assistant endpoint's engine: one turn of a conversation through :func:`tomo.loop.run`, streamed and saved.

A turn runs in its own task, not in the HTTP response: the response only reads frames off a queue. A browser that
reloads or drops the connection therefore stops *listening*, never the run, and everything the model says is saved
as it arrives: the user's message first, the reply's text while it streams (one row, updated as text comes, writes
coalesced), each finished message of the loop's history as it is appended, and warnings (cut-offs, capped results,
limits, failures) as rows of their own. A model that fails mid-reply (``RunFailed``) leaves what it had said, marked
``error``, and the stream ends with the error.

Who is asking is the verified session's caller, passed to the loop, which passes it to every tool: nothing the model
sends can change it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tomo.agents import Agent
from tomo.errors import TomoError
from tomo.events import (
    Event,
    LimitReached,
    Notice,
    ReplyTruncated,
    ResultCapped,
    TextStreamed,
    ToolCalled,
    ToolRefused,
    UsageReported,
)
from tomo.loop import Outcome, RunFailed, run
from tomo.models.base import Model
from tomo.models.messages import Message, StreamEvent, ToolCall, ToolSpec
from tomo.store.console import ConsoleStore, Conversation, StoredMessage
from tomo.tools import Caller, Registry

log = logging.getLogger("tomo.web")

NOT_ON = ("the assistant is not switched on here: the server was started without ASSISTANT_PROVIDER "
          "(set it to a model spec such as ollama:qwen2.5-coder:7b, or a tier: fast, balanced, deep)")

_LIMIT_TEXT = {
    "steps": "stopped: the step limit ({value} model calls) was reached",
    "tool_calls": "stopped: the tool-call limit ({value} calls) was reached",
    "tokens": "stopped: the token budget ({value:,} tokens) was reached",
    "malformed_calls": "stopped: the limit on malformed tool calls ({value}) was reached",
}


def frame(name: str, data: dict[str, Any]) -> bytes:
    """One server-sent event. JSON data never holds a raw newline, so one ``data:`` line is always enough."""
    return f"event: {name}\ndata: {json.dumps(data, default=str)}\n\n".encode()


def to_history(rows: Sequence[StoredMessage]) -> list[Message]:
    """Saved rows back into a history a provider accepts: every tool call answered, harness notes and display-only
    rows left out, an interrupted call answered as interrupted."""
    history: list[Message] = []
    pending: dict[str, ToolCall] = {}

    def close_pending() -> None:
        for call in pending.values():
            history.append(Message.tool(call, "not run: the run was interrupted before this call was answered",
                                        is_error=True))
        pending.clear()

    for row in rows:
        if row.role == "tool":
            call_id = row.data.get("tool_call_id")
            call = pending.pop(call_id, None) if isinstance(call_id, str) else None
            if call is not None:
                history.append(Message.tool(call, row.content, is_error=bool(row.data.get("is_error"))))
            continue
        close_pending()
        if row.role == "user" and not row.data.get("harness"):
            history.append(Message.user(row.content))
        elif row.role == "assistant":
            calls = [ToolCall(str(c["id"]), str(c["name"]), dict(c.get("args") or {}))
                     for c in row.data.get("tool_calls") or [] if isinstance(c, dict) and "id" in c and "name" in c]
            if row.content or calls:
                history.append(Message.assistant(row.content, calls))
            pending = {c.id: c for c in calls}
    close_pending()
    return history


class _Tap:
    """A model that is the given one, except that it hands over the loop's history list on the first call.

    The loop appends to one list in place (see ``tomo.loop``); holding it lets the turn save each finished message
    the moment it is appended instead of at the end of the run.
    """

    def __init__(self, model: Model, on_history: Callable[[list[Message]], None]) -> None:
        self._model = model
        self._on_history = on_history
        self.name = model.name

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, force_tools: bool = False,
                   max_tokens: int | None = None) -> Any:
        self._take(messages)
        return await self._model.chat(messages, tools, force_tools=force_tools, max_tokens=max_tokens)

    def stream(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, force_tools: bool = False,
               max_tokens: int | None = None) -> AsyncIterator[StreamEvent]:
        self._take(messages)
        return self._model.stream(messages, tools, force_tools=force_tools, max_tokens=max_tokens)

    def _take(self, messages: Sequence[Message]) -> None:
        if isinstance(messages, list):
            self._on_history(messages)


@dataclass
class _Row:
    """A message row being written: its id once inserted, its latest text, whether an update is already queued."""

    id: int | None = None
    text: str = ""
    queued: bool = False
    done: bool = False


@dataclass
class _Turn:
    store: ConsoleStore
    conversation: Conversation
    queue: asyncio.Queue[bytes | None]
    history: list[Message] | None = None
    seen: int = 0
    streaming: _Row | None = None
    calls: dict[str, ToolCall] = field(default_factory=dict)
    writes: asyncio.Queue[Callable[[], None] | None] = field(default_factory=asyncio.Queue)

    # ---- the writer: one ordered queue of short transactions, each run in a worker thread ----------------------------

    async def writer(self) -> None:
        while True:
            op = await self.writes.get()
            if op is None:
                return
            try:
                await asyncio.to_thread(op)
            except Exception:  # a failed write must not stop the stream; it is logged with its traceback
                log.exception("console: saving a message of conversation %s failed", self.conversation.id)

    def write(self, op: Callable[[], None]) -> None:
        self.writes.put_nowait(op)

    def add_row(self, role: str, content: str, data: dict[str, Any], status: str = "done") -> None:
        conv = self.conversation.id

        def insert() -> None:
            self.store.add_message(conv, role, content, status=status, data=data)

        self.write(insert)

    def send(self, name: str, data: dict[str, Any]) -> None:
        self.queue.put_nowait(frame(name, data))

    # ---- events from the loop ----------------------------------------------------------------------------------------

    def take_history(self, history: list[Message]) -> None:
        if self.history is None:
            self.history, self.seen = history, len(history)

    def emit(self, event: Event) -> None:
        if isinstance(event, TextStreamed):
            self._stream_text(event.text)
            self.send("text", {"text": event.text})
            return
        if isinstance(event, ToolCalled | ToolRefused):
            self.sync(event)
        else:
            self.sync()
        if isinstance(event, ToolCalled):
            self.send("tool", {"name": event.tool, "args": event.args, "ok": event.ok, "summary": event.summary,
                               "seconds": round(event.seconds, 3)})
        elif isinstance(event, ToolRefused):
            self.send("refused", {"name": event.tool, "reason": event.reason})
        elif isinstance(event, ResultCapped):
            text = f"{event.tool}: showing {event.shown:,} of {event.total:,} {event.unit}; the model was told so"
            self._warn("capped", text, {"name": event.tool, "shown": event.shown, "total": event.total,
                                        "unit": event.unit})
        elif isinstance(event, ReplyTruncated):
            self._warn("truncated", f"the reply of step {event.step} was cut off at the length limit; "
                                    "the answer is incomplete", {"step": event.step})
        elif isinstance(event, LimitReached):
            text = _LIMIT_TEXT.get(event.limit, "stopped: a limit was reached").format(value=event.value)
            self._warn("limit", text, {"limit": event.limit, "value": event.value})
        elif isinstance(event, Notice):
            self._warn("notice", event.text, {"level": event.level})
        elif isinstance(event, UsageReported):
            self.send("usage", {"input_tokens": event.input_tokens, "output_tokens": event.output_tokens})
        elif event.kind == "model_thinking":
            self.streaming = None  # a new step: its text (if any) goes to a new row

    def _warn(self, kind: str, text: str, data: dict[str, Any]) -> None:
        self.add_row("event", text, {"kind": kind, **data})
        self.send(kind, {"text": text, **data})

    def _stream_text(self, text: str) -> None:
        row = self.streaming
        conv = self.conversation.id
        if row is None:
            row = self.streaming = _Row(text=text)

            def create(row: _Row = row) -> None:
                row.id = self.store.add_message(conv, "assistant", row.text, status="streaming")

            self.write(create)
            return
        row.text += text
        if row.queued or row.done:
            return
        row.queued = True

        def update(row: _Row = row) -> None:
            row.queued = False
            if row.id is not None and not row.done:
                self.store.update_message(row.id, content=row.text)

        self.write(update)

    def sync(self, tool_event: ToolCalled | ToolRefused | None = None) -> None:
        """Saves the messages the loop appended since the last event."""
        history = self.history
        if history is None:
            return
        while self.seen < len(history):
            message = history[self.seen]
            self.seen += 1
            last = self.seen == len(history)
            if message.role == "assistant":
                self._save_assistant(message)
            elif message.role == "tool":
                call = self.calls.get(message.tool_call_id or "")
                data: dict[str, Any] = {"tool_call_id": message.tool_call_id, "name": message.name,
                                        "is_error": message.is_error, "args": call.args if call else {}}
                if last and isinstance(tool_event, ToolCalled) and tool_event.tool == message.name:
                    data.update(ok=tool_event.ok, summary=tool_event.summary, seconds=round(tool_event.seconds, 3))
                elif last and isinstance(tool_event, ToolRefused) and tool_event.tool == message.name:
                    data.update(ok=False, refused=True, summary=tool_event.reason)
                else:
                    data.update(ok=not message.is_error, summary=message.content.split("\n", 1)[0][:200])
                self.add_row("tool", message.content, data)
            elif message.role == "user":  # the loop's own note (a limit was reached): shown, never re-sent
                self.add_row("user", message.content, {"harness": True})

    def _save_assistant(self, message: Message) -> None:
        calls = [{"id": c.id, "name": c.name, "args": c.args} for c in message.tool_calls]
        self.calls.update({c.id: c for c in message.tool_calls})
        data = {"tool_calls": calls}
        row = self.streaming
        self.streaming = None
        if row is None:
            self.add_row("assistant", message.content, data)
            return
        row.done = True
        content = message.content

        def finish(row: _Row = row) -> None:
            if row.id is not None:
                self.store.update_message(row.id, content=content, status="done", data=data)

        self.write(finish)

    def fail_streaming(self) -> None:
        """A reply that broke off: keep what was said, marked as an error."""
        row = self.streaming
        self.streaming = None
        if row is None or row.done:
            return
        row.done = True

        def mark(row: _Row = row) -> None:
            if row.id is not None:
                self.store.update_message(row.id, content=row.text, status="error")

        self.write(mark)


class Assistant:
    """Runs turns for the console. ``model_factory`` makes a fresh model per turn (a scripted one replays its script
    from the start for each conversation); ``None`` means the assistant is switched off, for ``disabled_reason``."""

    def __init__(self, store: ConsoleStore, agent: Agent, registry: Registry,
                 model_factory: Callable[[], Model] | None, disabled_reason: str = NOT_ON) -> None:
        self.store = store
        self.agent = agent
        self.registry = registry
        self.model_factory = model_factory
        self.disabled_reason = disabled_reason
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def enabled(self) -> bool:
        return self.model_factory is not None

    def start(self, caller: Caller, conversation: Conversation, text: str) -> AsyncIterator[bytes]:
        """Starts the turn now and returns its frames. The turn goes on if nobody reads them."""
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        turn = _Turn(self.store, conversation, queue)
        task = asyncio.create_task(self._run(turn, caller, text))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

        async def frames() -> AsyncIterator[bytes]:
            # Whatever is already queued goes out in one write (a burst of text deltas is one chunk, not twenty).
            while True:
                item = await queue.get()
                if item is None:
                    return
                batch = [item]
                while not queue.empty():
                    more = queue.get_nowait()
                    if more is None:
                        yield b"".join(batch)
                        return
                    batch.append(more)
                yield b"".join(batch)

        return frames()

    async def _run(self, turn: _Turn, caller: Caller, text: str) -> None:
        writer = asyncio.create_task(turn.writer())
        outcome: Outcome | None = None
        model: Model | None = None
        failure: dict[str, str] | None = None
        try:
            conv = turn.conversation
            rows = await asyncio.to_thread(self.store.messages, conv.id)
            history = to_history(rows)
            title = None if conv.title or rows else _title(text)
            await asyncio.to_thread(self.store.add_message, conv.id, "user", text, title=title)
            history.append(Message.user(text))
            turn.send("conversation", {"id": conv.id, "title": title or conv.title})
            assert self.model_factory is not None
            model = self.model_factory()
            tap = _Tap(model, turn.take_history)
            outcome = await run(self.agent, tap, self.registry, caller, history, sink=turn, stream=True)
        except RunFailed as exc:  # the model failed mid-run: what was done before it is in the partial outcome
            outcome = exc.outcome
            failure = self._failed(turn, exc)
        except TomoError as exc:
            failure = self._failed(turn, exc)
        except Exception as exc:  # never leave the browser waiting on a stream that will not end
            log.exception("console: an assistant turn failed")
            failure = self._failed(turn, exc)
        finally:
            if outcome is not None and turn.history is None:
                turn.take_history(outcome.messages)
            turn.sync()
            turn.fail_streaming()
            turn.writes.put_nowait(None)
            await writer
            if outcome is not None:
                turn.send("answer", {"text": outcome.text, "completed": outcome.completed,
                                     "stopped_by": outcome.stopped_by, "truncated": outcome.truncated,
                                     "finish": outcome.finish, "steps": outcome.steps,
                                     "tool_calls": outcome.tool_calls})
            if failure is not None:  # the stream ends with the error, after what was said before it
                turn.send("error", failure)
            turn.send("done", {})
            turn.queue.put_nowait(None)
            close = getattr(model, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()

    def _failed(self, turn: _Turn, exc: Exception) -> dict[str, str]:
        """Saves the failure as a row (after what was said before it) and returns the ``error`` event's data."""
        if isinstance(exc, TomoError):
            message, hint = exc.message, exc.hint
        else:
            message, hint = f"the assistant failed: {type(exc).__name__}", "the server's log has the details"
        turn.sync()
        turn.fail_streaming()
        turn.add_row("event", message, {"kind": "error", "hint": hint})
        return {"text": message, "hint": hint}

    async def shutdown(self, grace_s: float = 5.0) -> None:
        """Lets running turns finish (their messages are saved) for a moment, then cancels the rest."""
        tasks = list(self.tasks)
        if not tasks:
            return
        _done, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()


def _title(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 80 else line[:79] + "…"
