"""The oi engine: the model's only action is code. Each reply's Python and shell blocks run in the sandbox, in order;
their output goes back; a reply with no runnable block ends the turn -- unless a gate keeps it open.

One round is one model reply and the blocks it wrote. The approval gate sees every block before it runs. The exec
and repro gates (:mod:`tomo.oi.gates`) look at the evidence when the model tries to stop; if a gate that is on is
not satisfied, the model is told exactly what is missing and the refusal costs a round, so a model cannot argue its
way past a gate, only run its way past it, within ``max_rounds``.

``turn`` returns every message the turn produced (the user's first) however it ended -- the model stopped, the
rounds ran out, the user refused a block or pressed Ctrl-C, the model failed -- so the caller can always save the
session; :attr:`Engine.last` says how it ended. Ctrl-C (:meth:`Engine.interrupt`) during a block stops that block's
whole process tree and tells the model; a second one, or one while the model is thinking, ends the turn.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import importlib
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tomo.errors import ModelError, SandboxError
from tomo.events import (
    AssistantSaid,
    BlockOutput,
    BlockStarted,
    CodeRan,
    GateBlocked,
    LimitReached,
    ModelCalled,
    ModelThinking,
    Notice,
    NullSink,
    ReplyTruncated,
    Sink,
    TextStreamed,
    TurnEnded,
    UsageReported,
)
from tomo.models.base import Model, Tempered, at_temperature
from tomo.models.messages import Message, Reply, ReplyDone, TextDelta, Usage
from tomo.oi.approval import ApproveAll, Gate
from tomo.oi.blocks import Block, Extraction, extract
from tomo.oi.edits import EXAMPLE as EDIT_EXAMPLE
from tomo.oi.edits import apply_edit, definitions_only, path_comment
from tomo.oi.feedback import MODEL_OUTPUT_CHARS, block_report
from tomo.oi.gates import GateVerdict, TurnGates, is_test_path
from tomo.oi.next_step import failed_tests, next_step
from tomo.oi.prompts import system_prompt
from tomo.sandbox import Limits, Sandbox
from tomo.sandbox.model import MAX_CODE_BYTES

T = TypeVar("T")
AGENT = "oi"
CONTEXT_BUDGET_TOKENS = 1500
MAX_REPLY_TOKENS = 4096
"""One reply's cap: a reply that reaches it is cut off and said so (a local server left uncapped generates until its
context is full when a small model loops)."""
MAX_REWINDS = 2
"""Fresh starts a turn may take after stale replies (``Engine._rewind``); the round limit counts across them."""
RETRY_TEMPERATURE = 0.8
"""The temperature of the reply after one that did nothing new (see ``Engine._ask``): llama.cpp's own default."""
BASH = "/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh"


OUTCOMES = ("verified", "unverified", "unchanged", "interrupted", "error")


BROKEN_REPLY = ("the model's reply broke off before it finished (the stream ended without a finish reason, e.g. the "
                "server was stopped or gave the slot to another request); nothing of that reply was run")


@dataclass(slots=True)
class TurnSummary:
    """How a turn ended (``ended_by``) and what the harness can certify about it (``outcome``).

    ``verified`` is the harness's word, never the model's: the model ended the turn itself, a file changed, the last
    check after the last code change passed and executed changed lines (measured whether or not the exec gate was
    asked for), and every gate that is on is satisfied. A turn that changed nothing is ``unchanged``, whatever the
    model said about it."""

    ended_by: str = "model"  # model | rounds | stuck | refused | interrupted | error
    rounds: int = 0
    blocks: int = 0
    files_changed: list[str] = field(default_factory=list)
    gates: dict[str, GateVerdict] = field(default_factory=dict)
    evidence: GateVerdict = field(default_factory=lambda: GateVerdict(True, False, "no check ran"))
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    pushed_back: int = 0
    rewinds: int = 0  # fresh starts after a stale reply (see Engine._rewind)

    @property
    def verified(self) -> bool:
        return (self.ended_by == "model" and bool(self.files_changed) and bool(self.evidence.satisfied)
                and all(v.satisfied for v in self.gates.values() if v.on))

    @property
    def gated(self) -> bool:
        return any(v.on for v in self.gates.values())

    @property
    def outcome(self) -> str:
        if self.ended_by in ("error", "interrupted"):
            return self.ended_by
        if not self.files_changed:
            return "unchanged"
        return "verified" if self.verified else "unverified"

    @property
    def reason(self) -> str:
        """Why the outcome is what it is, in words a person reads."""
        outcome = self.outcome
        if outcome == "error":
            return f"an error: {self.error}"
        if outcome == "interrupted":
            return "the user ended the turn (Ctrl-C)"
        if outcome == "unchanged":
            return "no file changed in this turn" + ("" if self.ended_by == "model" else f" ({_ENDED[self.ended_by]})")
        if outcome == "verified":
            return self.evidence.reason
        if self.ended_by != "model":
            return _ENDED[self.ended_by]
        if not self.evidence.satisfied:
            return self.evidence.reason
        unsatisfied = [f"the {n} gate: {v.reason}" for n, v in self.gates.items() if v.on and not v.satisfied]
        return "; ".join(unsatisfied) or self.evidence.reason

    def gates_dict(self) -> dict[str, Any]:
        return {name: v.to_dict() for name, v in self.gates.items()}


_ENDED = {"model": "the model ended it", "rounds": "the rounds ran out before the model ended the turn",
          "stuck": "the model sent the same reply again and again, so tomo ended the turn",
          "refused": "the user declined a block", "interrupted": "interrupted", "error": "an error"}


class Engine:
    def __init__(
        self,
        model: Model,
        sandbox: Sandbox,
        gate: Gate | None = None,
        workspace: str | Path = ".",
        lsp: str | None = None,
        max_rounds: int = 20,
        exec_gate: bool = False,
        repro: bool = False,
        system: str | None = None,
        *,
        limits: Limits | None = None,
        context: bool = True,
        context_budget: int = CONTEXT_BUDGET_TOKENS,
        output_chars: int = MODEL_OUTPUT_CHARS,
        checkpoint: Callable[[list[Message]], None] | None = None,
        stream: bool = False,
        push_back: bool = True,
        infer_edits: bool = True,
        max_repeats: int = 3,
        check: str | None = None,
        claim: str = "exec",
        max_reply_tokens: int | None = MAX_REPLY_TOKENS,
        retry_temperature: float | None = RETRY_TEMPERATURE,
        max_rewinds: int = MAX_REWINDS,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.model = model
        self.sandbox = sandbox
        self.gate: Gate = gate or ApproveAll()
        self.root = Path(workspace).resolve()
        self.lsp = lsp
        self.max_rounds = max_rounds
        self.exec_gate = exec_gate
        self.repro = repro
        self.system = system if system is not None else system_prompt()
        self.limits = limits or sandbox.limits
        self.context = context
        self.context_budget = context_budget
        self.output_chars = output_chars
        self.checkpoint = checkpoint
        self.stream = stream
        self.push_back = push_back
        self.infer_edits = infer_edits
        self.max_repeats = max_repeats
        self.check = check
        self.claim = claim
        self.max_reply_tokens = max_reply_tokens
        self.retry_temperature = retry_temperature
        self.max_rewinds = max_rewinds
        self.last = TurnSummary()
        self._task: asyncio.Future[Any] | None = None
        self.targets: list[str] = []  # the context pack's best definitions (path::Name): what a push-back names
        self._task_line = ""
        self._in_block = False
        self._interrupts = 0
        self.ended = False
        self._stale = False  # the last reply did nothing new: the next one is sampled hotter

    # ---- interrupts -------------------------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Ctrl-C: stop the running block (its whole tree) and tell the model; a second one, or one while no
        block runs, ends the turn. Safe to call from a signal handler on the engine's event loop."""
        self._interrupts += 1
        if self._interrupts >= 2 or not self._in_block:
            self.ended = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def begin_turn(self) -> None:
        """A new turn starts with no Ctrl-C counted, not ended, and no stale reply: what the last turn left of them
        must not end or heat this one."""
        self._interrupts, self.ended, self._stale = 0, False, False

    async def guarded(self, work: Awaitable[T]) -> tuple[T | None, bool]:
        """Runs ``work`` so that :meth:`interrupt` can cancel it alone; returns (result, interrupted)."""
        task = asyncio.ensure_future(work)
        self._task = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the turn itself was cancelled: take the work down with it
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise
        finally:
            self._task = None
        if task.cancelled():
            return None, True
        return task.result(), False

    # ---- the turn ---------------------------------------------------------------------------------------------

    async def turn(self, history: Sequence[Message], user: str, sink: Sink | None = None) -> list[Message]:
        sink = sink or NullSink()
        emit = sink.emit
        self.begin_turn()
        summary = self.last = TurnSummary()
        new = [Message.user(self.with_context(user, history, emit))]
        baseline = await self.baseline_failures()
        gates = TurnGates(self.root, exec_gate=self.exec_gate, repro=self.repro, claim_repro=self.claim == "repro")
        gates.start()
        told_unrunnable = False
        previous, repeats = "", 0
        try:
            while True:
                if self.ended:
                    summary.ended_by = "interrupted"
                    break
                if summary.rounds >= self.max_rounds:
                    summary.ended_by = "rounds"
                    emit(LimitReached(AGENT, "rounds", self.max_rounds))
                    break
                emit(ModelThinking(AGENT, self.model.name, summary.rounds + 1))
                started = time.perf_counter()
                reply, interrupted = await self.guarded(self._ask([Message.system(self.system), *history, *new],
                                                                   emit))
                if interrupted or reply is None:
                    summary.ended_by = "interrupted"
                    new.append(Message.user("[tomo: the user interrupted the turn (Ctrl-C) while you were answering; "
                                            "the session was saved.]"))
                    break
                summary.rounds += 1
                summary.usage += reply.usage
                emit(ModelCalled(AGENT, self.model.name, summary.rounds, reply.finish, reply.usage.input_tokens,
                                 reply.usage.output_tokens, time.perf_counter() - started, reply.usage.estimated))
                if reply.finish == "error":  # half a reply is not the model's word: nothing of it is run
                    summary.ended_by, summary.error = "error", BROKEN_REPLY
                    break
                message = Message.assistant(reply.message.content)  # code is the only action: tool calls are dropped
                new.append(message)
                if message.content:
                    emit(AssistantSaid(AGENT, message.content))
                if reply.finish == "length":
                    emit(ReplyTruncated(AGENT, summary.rounds))
                repeats = repeats + 1 if message.content.strip() and message.content.strip() == previous else 0
                previous = message.content.strip()
                self._stale = self._stale or repeats > 0
                if self.max_repeats and repeats >= self.max_repeats:
                    summary.ended_by = "stuck"
                    emit(LimitReached(AGENT, "repeats", self.max_repeats))
                    new.append(Message.user(f"[tomo: you sent the same reply {repeats + 1} times in a row; the turn "
                                            "ends here.]"))
                    break
                found = self.recognise(extract(message.content))
                if not found.actions:
                    note = found.skipped_note()
                    if note and not told_unrunnable:
                        told_unrunnable = True
                        new.append(Message.user(note))
                        self._save(new)
                        continue
                    if self.check and gates.unchecked():
                        report = await self._run_check(summary, gates, emit, why="you ended the turn")
                        if not gates.unsatisfied() and gates.evidence().satisfied:
                            new.append(Message.user(report))
                            summary.ended_by = "model"
                            break
                        new.append(Message.user(report))
                        self._save(new)
                        continue
                    missing = gates.unsatisfied()
                    if not missing and self._should_push_back(gates, summary):
                        summary.pushed_back += 1
                        emit(GateBlocked("change", "the model tried to end the turn with no file changed"))
                        new.append(Message.user(push_back_message(self.max_rounds - summary.rounds,
                                                                  target=self.target())))
                        self._save(new)
                        continue
                    if not missing:
                        summary.ended_by = "model"
                        break
                    gates.refuse(missing, emit)
                    new.append(Message.user(refusal(missing, self.max_rounds - summary.rounds)))
                    self._save(new)
                    continue
                reports: list[str] = []
                first_block = summary.blocks + 1
                refused = await self._run_blocks(found.actions, summary, gates, reports, emit)
                if self.check and not refused and not self.ended and gates.unchecked():
                    reports.append(await self._run_check(summary, gates, emit, why="this reply changed code"))
                if not refused and not self.ended:
                    reports.extend(self._after_red(gates, first_block, reports, baseline))
                if repeats:
                    reports.append("[tomo: this reply is the same as your previous one, so it did the same thing "
                                   "again. Read the results above and take a different step.]")
                new.append(Message.user("\n\n".join(reports)))
                self._save(new)
                if refused:
                    summary.ended_by = "refused"
                    break
                if self._stale and self._can_rewind(gates, summary):
                    gates = self._rewind(gates, summary, emit)
                    new = new[:1]
                    previous, repeats, told_unrunnable = "", 0, False
                    self._save(new)
        except ModelError as exc:
            summary.ended_by, summary.error = "error", exc.message
            emit(Notice("error", f"the model failed: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")))
        finally:
            self._save(new)
            end_turn(summary, gates, emit)
        return new

    def _can_rewind(self, gates: TurnGates, summary: TurnSummary) -> bool:
        """A fresh start needs a hotter sample to differ (a model with a working temperature), rounds left, and every
        file this attempt changed restorable byte for byte (code files the turn's start kept, or files it added)."""
        model = self.model
        if (self.retry_temperature is None or not isinstance(model, Tempered) or model.temperature is None
                or summary.rewinds >= self.max_rewinds or summary.rounds >= self.max_rounds):
            return False
        return gates.restorable(gates.files_changed())

    def _rewind(self, gates: TurnGates, summary: TurnSummary, emit: Callable[[Any], None]) -> TurnGates:
        """A stale reply (the same reply again, or code the file already holds) after its attempt's check: the
        attempt's files go back to the turn's start and the conversation to the task alone, and the next reply is
        sampled hotter. Why: the lab saw Qwen 1.5B copy its own earlier reply verbatim even at temperature 1.5 while
        that reply was in the conversation, and answer differently at 1.0 from the task alone. The gates start over
        too: evidence about undone code proves nothing about the next attempt's."""
        undone = gates.files_changed()
        gates.put_back(undone)  # all of them: _can_rewind asked
        gates.close()
        fresh = TurnGates(self.root, exec_gate=self.exec_gate, repro=self.repro, claim_repro=self.claim == "repro")
        fresh.start()
        summary.rewinds += 1
        self._stale = True
        put_back = (f"{', '.join(undone)} put back as the turn found {'it' if len(undone) == 1 else 'them'}"
                    if undone else "no file had changed")
        emit(Notice("info", f"attempt {summary.rewinds + 1}: the last reply did nothing new, so tomo starts over from "
                            f"the task ({put_back}); {self.max_rounds - summary.rounds} round(s) left"))
        return fresh

    async def _ask(self, messages: list[Message], emit: Callable[[Any], None]) -> Reply:
        """One model reply; streamed (its text sent as it arrives) when the engine was asked to stream. After a reply
        that did nothing new (the same reply again, or an edit identical to the file) the next one is sampled at
        ``retry_temperature`` when the model has a working temperature tomo set (a local server's): at a small model's
        low working temperature the same conversation mostly gets the same reply, and telling it so did not change
        that in the lab."""
        stale, self._stale = self._stale, False
        with at_temperature(self.model, self.retry_temperature if stale else None) as was:
            if was is not None:
                emit(Notice("info", f"the last reply did nothing new: this one is sampled at temperature "
                                    f"{self.retry_temperature:g} (it was {was:g})"))
            return await self.ask_once(messages, emit)

    async def ask_once(self, messages: list[Message], emit: Callable[[Any], None], *,
                        cap: int | None = None) -> Reply:
        """One reply, at most ``cap`` tokens when given (never more than the engine's own cap)."""
        limit = self.max_reply_tokens if cap is None else min(cap, self.max_reply_tokens or cap)
        if not self.stream:
            return await self.model.chat(messages, [], max_tokens=limit)
        async for item in self.model.stream(messages, [], max_tokens=limit):
            if isinstance(item, TextDelta):
                emit(TextStreamed(AGENT, item.text))
            elif isinstance(item, ReplyDone):
                return item.reply
        raise ModelError(f"model {self.model.name!r} ended its stream without a final reply", provider=self.model.name,
                         hint="this is a bug in the model adapter: every stream must end with ReplyDone")

    async def _run_blocks(self, blocks: list[Block], summary: TurnSummary, gates: TurnGates, reports: list[str],
                          emit: Callable[[Any], None]) -> bool:
        """Runs one reply's blocks in order; True when the user refused one (the turn then ends)."""
        for index, block in enumerate(blocks):
            number = summary.blocks + 1  # blocks counts the blocks that ran; a declined one did not
            assert block.runner is not None
            emit(BlockStarted(summary.rounds, number, block.runner, block.code))
            if not await self.gate.approve(block, number):
                rest = len(blocks) - index - 1
                emit(GateBlocked("approval", f"the user declined block {number}"))
                reports.append(f"[tomo: the user declined to run block {number}; it did not run"
                               + (f", nor did the {rest} block(s) after it" if rest else "") +
                               ". The turn ends here; the user will say what to do instead.]")
                return True
            summary.blocks = number
            if block.edits:
                reports.append(self.apply_edit_block(block, number, gates, emit))
                continue
            reports.append(await self._run_block(block, number, gates, emit))
            if self.ended or gates.checks[-1].interrupted:
                rest = len(blocks) - index - 1
                if rest:
                    reports.append(f"[tomo: the {rest} block(s) after block {number} did not run.]")
                break
        return False

    async def _run_block(self, block: Block, number: int, gates: TurnGates, emit: Callable[[Any], None]) -> str:
        assert block.runner is not None
        if len(block.code.encode()) > MAX_CODE_BYTES:  # one argument to execve may not be longer
            gates.record(number, block.runner, block.code, 2)
            why = (f"the block is {len(block.code.encode()):,} bytes; one block may be at most {MAX_CODE_BYTES:,}. "
                   "Write the code to a file in smaller blocks and run the file.")
            emit(BlockOutput(number, f"[tomo: not run: {why}]", 2, [], []))  # the log shows it, not only the model
            return f"[block {number} ({block.runner}) · not run]\n[tomo: {why}]"
        argv = self._argv(block, gates.prepare(number))
        seen: list[bytes] = []
        budget = [self.limits.output_bytes]

        def keep(chunk: bytes) -> None:  # what ran before an interrupt is still worth showing
            if budget[0] > 0:
                seen.append(chunk[: budget[0]])
                budget[0] -= len(chunk)

        started = time.monotonic()
        self._in_block = True
        try:
            result, interrupted = await self.guarded(
                self.sandbox.run(argv, "argv", self.root, self.limits, on_output=keep))
        except SandboxError as exc:
            gates.record(number, block.runner, block.code, 126)
            emit(Notice("error", f"block {number} could not start: {exc.message}"))
            return f"[block {number} ({block.runner}) · could not start]\n[tomo: {exc.message}]"
        finally:
            self._in_block = False
        seconds = time.monotonic() - started
        if result is None:
            output = b"".join(seen).decode("utf-8", "replace")
            code, notes, timed_out = 130, ["interrupted by the user (Ctrl-C); the block's processes were killed"], False
        else:
            output, code, notes, timed_out = result.output, result.exit_code, list(result.notes), result.timed_out
        check = gates.record(number, block.runner, block.code, code, timed_out=timed_out, interrupted=interrupted)
        emit(CodeRan(block.runner, code, seconds, timed_out, bool(result and result.truncated)))
        emit(BlockOutput(number, output, code, notes, check.changed, interrupted))
        hint = "" if check.changed or interrupted else self._unchanged_hint(block)
        return block_report(number, block.runner, code, output, seconds=seconds, notes=notes, changed=check.changed,
                            interrupted=interrupted, limit=self.output_chars, unchanged_hint=hint)

    async def _run_check(self, summary: TurnSummary, gates: TurnGates, emit: Callable[[Any], None], *,
                         why: str) -> str:
        """The project's check (``check``), run by the harness itself after code changed and no check followed: a
        weak model often edits and then stops, or says the tests pass without running them. Measured like any block,
        so it counts as evidence only when it executed the change."""
        assert self.check is not None
        summary.blocks += 1
        emit(Notice("info", f"tomo runs the project's check `{self.check}` because {why} and no check ran after it"))
        report = await self.run_command(self.check, summary.blocks, gates, emit, round_=summary.rounds)
        return f"[tomo ran the project's check because {why} and no check ran after the change]\n{report}"

    async def run_command(self, command: str, number: int, gates: TurnGates, emit: Callable[[Any], None], *,
                          round_: int = 0) -> str:
        """One shell command run by the harness (not written by the model) as block ``number``: in the sandbox,
        measured, recorded in ``gates`` as evidence; returns the report a model would read."""
        block = harness_block(command)
        emit(BlockStarted(round_, number, "shell", block.code))
        return await self._run_block(block, number, gates, emit)

    def apply_edit_block(self, block: Block, number: int, gates: TurnGates, emit: Callable[[Any], None]) -> str:
        """An edit block: laid into its file by the harness (:mod:`tomo.oi.edits`), recorded as a change, not a
        check."""
        assert block.target is not None
        done = apply_edit(self.root, block.target, block.code, block.symbol)
        if block.inferred:
            done.summary += (f"\n[tomo: this ```python block only defines {', '.join(definitions_only(block))}, "
                             f"defined in {done.path}, so tomo laid it into that file instead of running it. Label "
                             "a block with its file to say where it goes yourself.]")
        check = gates.record(number, "edit", block.code, 0 if done.ok else 1, kind="neutral")
        shown = "\n".join(p for p in (done.summary, done.diff.rstrip("\n")) if p)
        emit(BlockOutput(number, shown, 0 if done.ok else 1, [f"not laid in: {i}" for i in done.ignored],
                         check.changed))
        report = done.report(number)
        if done.ok and not done.changed:
            self._stale = True  # the model re-sent the code the file already holds
        if check.changed:
            report += f"\n[tomo: this block changed {', '.join(check.changed)}]"
        elif done.ok:
            report += "\n[tomo: this block changed no file]"
        return report

    async def baseline_failures(self) -> set[str] | None:
        """The tests that fail before the turn changes anything (the project's check, run by the harness, neither
        shown to the model nor counted as evidence), so a later failure can be told apart: already failing, or
        broken by this turn. None without a check, or when the check could not say (it did not run tests)."""
        if not self.check:
            return None
        argv = self._argv(harness_block(self.check), {})
        try:
            result = await self.sandbox.run(argv, "argv", self.root, self.limits)
        except SandboxError:
            return None
        if result.timed_out or result.exit_code not in (0, 1):  # pytest: 0 all passed, 1 some failed
            return None
        return set(failed_tests(result.output))

    def _after_red(self, gates: TurnGates, first_block: int, reports: list[str],
                   baseline: set[str] | None) -> list[str]:
        """The next-step line (:mod:`tomo.oi.next_step`) when this round's last check ran tests and they failed."""
        ran = [c for c in gates.checks if c.number >= first_block and c.kind != "neutral"]
        if not ran or not (ran[-1].red and ran[-1].conclusive and ran[-1].kind == "executing"):
            return []
        edited = [p for c in gates.checks for p in c.changed_code if not is_test_path(p)]
        if edited:
            file: str | None = edited[-1]
        else:
            target = self.target()
            file = target[0] if target else None
        return [next_step(failed_tests("\n".join(reports)), baseline, file)]

    def recognise(self, found: Extraction) -> Extraction:
        """Python blocks that say where their code belongs are edits of that file: a first line naming an existing
        file (``# pkg/mod.py``), or (``infer_edits``) a block that only defines functions and classes whose names
        are defined in exactly one file of the project. Running such a block would change nothing: it defines names
        in a process that then exits, which is the weak model's most common way of "fixing" code."""
        blocks = []
        for block in found.blocks:
            path = path_comment(self.root, block) if block.runs else None
            inferred = False
            if path is None and block.runs and self.infer_edits:
                path = self._home_of(block)
                inferred = path is not None
            blocks.append(dataclasses.replace(block, target=path, inferred=inferred) if path else block)
        return Extraction(blocks)

    def _home_of(self, block: Block) -> str | None:
        """The one file that defines the names of a definitions-only Python block, or None."""
        names = definitions_only(block)
        if not names:
            return None
        homes = self.homes(names)
        files = {p for n in names for p in homes.get(n, [])}
        if len(files) != 1 or any(len(set(homes.get(n, []))) > 1 for n in names):
            return None
        return files.pop()

    def target(self) -> tuple[str, str] | None:
        """(file, definition name) of the context pack's best definition, for a push-back's example."""
        for key in self.targets:
            path, _, qual = key.partition("::")
            if path and qual and (self.root / path).is_file():
                return path, qual.rsplit(".", 1)[-1]
        return None

    def _should_push_back(self, gates: TurnGates, summary: TurnSummary) -> bool:
        """Once per turn, a gated turn that would end with nothing changed is asked again (a weak model often says
        "fixed" after only showing the fix)."""
        return (self.push_back and (self.exec_gate or self.repro) and summary.pushed_back == 0
                and not gates.files_changed() and summary.rounds < self.max_rounds)

    def _unchanged_hint(self, block: Block) -> str:
        """For a Python block that defined functions or classes and wrote nothing: where those names live, and the
        edit form that would have changed them."""
        if block.runner != "python":
            return ""
        try:
            tree = ast.parse(block.code)
        except SyntaxError:
            return ""
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
        if not names:
            return ""
        homes = self.homes(names)
        where = "; ".join(f"`{n}` is defined in {', '.join(sorted(set(homes[n]))[:3])}" for n in names if homes.get(n))
        shown = ", ".join(f"`{n}`" for n in names[:4])
        target = next((homes[n][0] for n in names if homes.get(n)), "path/to/module.py")
        return (f"Defining {shown} in a block only defines it in that block's process; no project file changed. "
                + (f"{where}. " if where else "")
                + f"To change a file, label the block with it and write the whole new definition:\n```python {target}\n"
                  f"def {names[0]}(...):\n    ...\n```\nthen run the tests in a separate block.")

    def homes(self, names: list[str], *, importable: bool = False) -> dict[str, list[str]]:
        """The project files that define each of ``names`` (by prism's graph), for the edits and imports a reply
        leaves unsaid; empty when the graph cannot be read, since a hint never fails a block. ``importable``: only
        definitions an import can name, not a method (a task's `set_volume(50)` is `Player.set_volume`, and
        `from player import set_volume` fails at collection)."""
        try:
            from tomo.prism import Graph

            with Graph.open(self.root) as graph:
                return {n: [s.path for s in graph.find_symbol(n, limit=20)
                            if s.name == n and not (importable and s.kind in ("method", "attribute"))]
                        for n in names}
        except Exception:  # a hint is a help, never a reason to fail the block
            return {}

    def _argv(self, block: Block, env: dict[str, str]) -> list[str]:
        command = [self.sandbox.python, "-u", "-c", block.code] if block.runner == "python" else [BASH, "-c",
                                                                                                    block.code]
        # No bytecode written by a block: Python trusts a .pyc whose source has the same size and mtime second, so a
        # test run, an edit and a re-run inside one second would run the old code and a gate would judge stale bytes.
        env = {"PYTHONDONTWRITEBYTECODE": "1", **env}
        if self.sandbox.name == "local" and "PYTHONPATH" in env and os.environ.get("PYTHONPATH"):
            # the local box inherits tomo's environment: the hook's folder goes first, the caller's path stays
            env = {**env, "PYTHONPATH": env["PYTHONPATH"] + os.pathsep + os.environ["PYTHONPATH"]}
        return ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *command]

    def with_context(self, user: str, history: Sequence[Message], emit: Callable[[Any], None], *,
                      first_step: bool = True) -> str:
        """The user's task, with the context pack appended on a session's first turn (when the pack is available),
        and (``first_step``) the line that says what the first reply should be."""
        if history or not self.context:
            return user
        self._task_line = _shortened(" ".join(user.split()), 1000)
        try:
            module = importlib.import_module("tomo.oi.context_pack")
        except ImportError:
            return user
        try:
            pack = module.build(self.root, user, lsp=self.lsp, budget_tokens=self.context_budget)
        except Exception as exc:  # the pack is a help, never a reason to fail the turn
            emit(Notice("warning", f"no context pack: {type(exc).__name__}: {exc}"))
            return user
        for note in getattr(pack, "notes", None) or ():
            emit(Notice("info", f"context pack: {note}"))
        self.targets = [str(x) for x in (getattr(pack, "symbols", None) or [])[:3]]
        text = str(getattr(pack, "text", "") or "").strip()
        if not text:
            return user
        return f"{user}\n\n{text}\n\n{self._first_step()}" if first_step else f"{user}\n\n{text}"

    def _first_step(self) -> str:
        """The last words of the first message: what to write first, in the edit form. A small model does what the
        most recent line asks; left to itself its first reply is often the summary it was told to end with."""
        target = self.target()
        where = (f"the complete corrected code of `{target[1]}` (or of whichever definition needs the change) in a "
                 f"block labeled with its file, ```python {target[0]}" if target else
                 "the complete corrected code in a block labeled with its file, ```python path/to/module.py")
        tests = f"runs `{self.check}`" if self.check else "runs the tests"
        return f"Task: {self._task_line}\nYour first reply: {where}; then a ```bash block that {tests}."

    def _save(self, new: list[Message]) -> None:
        if self.checkpoint is not None:
            self.checkpoint(new)


def end_turn(summary: TurnSummary, gates: TurnGates, emit: Callable[[Any], None]) -> None:
    """What every turn's end records, however it ended (a conversation's or trials'): what changed, the gates'
    verdicts and the evidence, the usage, and the outcome."""
    summary.files_changed = gates.files_changed()
    summary.gates = gates.verdicts()
    summary.evidence = gates.evidence()
    gates.close()
    emit(UsageReported(AGENT, summary.usage.input_tokens, summary.usage.output_tokens, summary.usage.estimated))
    emit(TurnEnded(summary.ended_by, summary.rounds, summary.blocks, summary.files_changed, summary.verified,
                   summary.gates_dict(), summary.outcome, summary.reason))


def harness_block(command: str) -> Block:
    """A shell command tomo runs itself (the project's check), as a block, so it runs exactly as the model's do."""
    return Block(label="bash", code=command + "\n", line=0, runner="shell")


def push_back_message(rounds_left: int, *, tools: bool = False, target: tuple[str, str] | None = None) -> str:
    """What a model that tried to end a gated turn with nothing changed reads, once. ``target``: the file and name
    of the definition the context pack ranked first, so the example is the edit this task most likely needs."""
    if tools:
        how = "change the file with edit_file or write_file, then run the tests with the run tool"
    elif target is not None:
        path, name = target
        how = (f"write the complete corrected code in a block labeled with its file. If the change belongs in "
               f"`{name}`, that is:\n```python {path}\ndef {name}(...):\n    <every line of the corrected "
               "body>\n```\nand then run the tests in a ```bash block")
    else:
        how = ("write the whole corrected definition in a block labeled with its file, for example\n"
               f"{EDIT_EXAMPLE}\nand then run the tests in a ```bash block")
    return ("[tomo: you are ending the turn, but no file of the project has changed: describing a change, or "
            "code that is only shown, defined or printed, changes nothing. If the task needs a change, make it now: "
            f"{how}. If no change is needed, say so and why. {rounds_left} round(s) left.]")


def refusal(missing: list[tuple[str, str]], rounds_left: int, *,
            how: str = "in a python or bash block; a reply without a block") -> str:
    """What the model reads when a gate keeps its turn open: each gate's reason, and what to do."""
    names = {"exec": "exec gate", "repro": "repro gate"}
    lines = [f"[tomo: you cannot end the turn yet; the {names.get(n, n)} is not satisfied: {reason}]"
             for n, reason in missing]
    lines.append(f"[tomo: {rounds_left} round(s) left. Run what is missing {how} is refused again until the gate "
                 "is satisfied.]")
    return "\n".join(lines)


def _shortened(text: str, limit: int) -> str:
    """``text`` cut at the last word that fits in ``limit`` characters, with an ellipsis when cut (a word cut in
    half is a different word to a small model)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    return (head[:head.rfind(" ")] if " " in head else head).rstrip(" ,;:") + " …"
