"""``tomo run --engine tools``: the same task through the tool loop, behind the same sandbox, approval and gates.

The model gets a small coding toolset -- read, write and edit a file, run a command in the sandbox, and three prism
queries -- and :func:`tomo.loop.run` drives it. What the oi engine enforces holds here too: every command passes the
approval gate and runs in the sandbox under the exec gate's measuring hook; every write is an edit the gates see
(workspace hashes before and after, as for a block); and when the model answers without a tool call while a gate that
is on is unsatisfied, it is told what is missing and the loop goes on, the refusal costing a step of ``max_rounds``.
So one task can be run on both engines and compared.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tomo.agents import Agent
from tomo.errors import ModelError, SandboxError
from tomo.events import BlockOutput, BlockStarted, CodeRan, GateBlocked, Notice, NullSink, Sink, TurnEnded
from tomo.loop import Limits as LoopLimits
from tomo.loop import RunFailed, run
from tomo.models.base import Model
from tomo.models.messages import Message, Reply, ToolSpec
from tomo.oi.approval import ApproveAll, Gate
from tomo.oi.blocks import Block
from tomo.oi.engine import BASH, TurnSummary, push_back_message, refusal
from tomo.oi.feedback import MODEL_OUTPUT_CHARS, block_report
from tomo.oi.gates import TurnGates
from tomo.oi.prompts import system_prompt
from tomo.sandbox import Limits, Sandbox
from tomo.tools import Caller, Registry

AGENT = "tools"
TOOLS = ("read_file", "write_file", "edit_file", "run", "find_symbol", "references", "callers")
READ_LINES = 400


class _Recording:
    """The model, remembering the last history it was sent (what a second Ctrl-C keeps of a cancelled loop)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = model.name
        self.last: list[Message] = []

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, force_tools: bool = False,
                   max_tokens: int | None = None) -> Reply:
        self.last = list(messages)
        return await self.model.chat(messages, tools, force_tools=force_tools, max_tokens=max_tokens)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return self.model.stream(*args, **kwargs)


class ToolsEngine:
    def __init__(self, model: Model, sandbox: Sandbox, gate: Gate | None = None, workspace: str | Path = ".", *,
                 max_rounds: int = 20, exec_gate: bool = False, repro: bool = False,
                 directives: Sequence[str] = (), limits: Limits | None = None,
                 output_chars: int = MODEL_OUTPUT_CHARS,
                 checkpoint: Callable[[list[Message]], None] | None = None, push_back: bool = True) -> None:
        self.model = _Recording(model)
        self.sandbox = sandbox
        self.gate: Gate = gate or ApproveAll()
        self.root = Path(workspace).resolve()
        self.max_rounds = max_rounds
        self.exec_gate, self.repro = exec_gate, repro
        self.system = system_prompt(directives, base="tools")
        self.limits = limits or sandbox.limits
        self.output_chars = output_chars
        self.checkpoint = checkpoint
        self.push_back = push_back
        self.last = TurnSummary()
        self._graph: Any = None
        self._gates: TurnGates | None = None
        self._sink: Sink = NullSink()
        self._command: asyncio.Task[Any] | None = None
        self._loop_task: asyncio.Task[Any] | None = None
        self._interrupts = 0
        self._end = False
        self._seq = 0
        self.registry = self._registry()

    # ---- interrupts -------------------------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Ctrl-C: stop the running command (the model is told); a second one, or one between commands, ends the
        turn."""
        self._interrupts += 1
        if self._command is not None and not self._command.done() and self._interrupts < 2:
            self._command.cancel()
            return
        self._end = True
        if self._loop_task is not None and not self._loop_task.done():
            self._loop_task.cancel()

    # ---- the turn ---------------------------------------------------------------------------------------------

    async def turn(self, history: Sequence[Message], user: str, sink: Sink | None = None) -> list[Message]:
        self._sink = sink = sink or NullSink()
        self._interrupts, self._end, self._seq = 0, False, 0
        summary = self.last = TurnSummary()
        gates = self._gates = TurnGates(self.root, exec_gate=self.exec_gate, repro=self.repro)
        gates.start()
        prefix = [Message.system(self.system), *history]
        messages = [*prefix, Message.user(user)]
        agent = Agent(AGENT, prompt=self.system, tools=TOOLS)
        caller = Caller("cli", "local", self.root)
        try:
            while True:
                left = self.max_rounds - summary.rounds
                if left <= 0:
                    summary.ended_by = "rounds"
                    break
                limits = LoopLimits(max_steps=left, max_tool_calls=None, max_tokens_total=None)
                self._loop_task = asyncio.ensure_future(
                    run(agent, self.model, self.registry, caller, messages, limits, sink))
                try:
                    outcome = await self._loop_task
                except asyncio.CancelledError:
                    if not self._end:
                        raise
                    messages = [*self.model.last] if len(self.model.last) > len(messages) else messages
                    messages.append(Message.user("[tomo: the user ended the turn (Ctrl-C); the session was saved.]"))
                    summary.ended_by = "interrupted"
                    break
                finally:
                    self._loop_task = None
                summary.rounds += outcome.steps
                summary.usage += outcome.usage
                messages = outcome.messages
                self._save(messages, len(prefix))
                if outcome.stopped_by == "steps":
                    summary.ended_by = "rounds"
                    break
                if outcome.stopped_by is not None:
                    summary.ended_by = "error"
                    summary.error = f"the loop stopped: {outcome.stopped_by}"
                    break
                missing = gates.unsatisfied()
                if (not missing and self.push_back and (self.exec_gate or self.repro) and not summary.pushed_back
                        and not gates.files_changed() and summary.rounds < self.max_rounds):
                    summary.pushed_back += 1
                    sink.emit(GateBlocked("change", "the model tried to end the turn with no file changed"))
                    messages.append(Message.user(push_back_message(self.max_rounds - summary.rounds, tools=True)))
                    continue
                if not missing:
                    summary.ended_by = "model"
                    break
                gates.refuse(missing, sink.emit)
                messages.append(Message.user(refusal(missing, self.max_rounds - summary.rounds,
                                                     how="with the run tool; an answer without a tool call")))
        except RunFailed as exc:
            messages = exc.outcome.messages
            summary.rounds += exc.outcome.steps
            summary.usage += exc.outcome.usage
            summary.ended_by, summary.error = "error", exc.message
        except ModelError as exc:
            summary.ended_by, summary.error = "error", exc.message
            sink.emit(Notice("error", f"the model failed: {exc.message}"))
        finally:
            summary.files_changed = gates.files_changed()
            summary.gates = gates.verdicts()
            summary.evidence = gates.evidence()
            gates.close()
            if self._graph is not None:
                self._graph.close()
                self._graph = None
            self._save(messages, len(prefix))
            sink.emit(TurnEnded(summary.ended_by, summary.rounds, summary.blocks, summary.files_changed,
                                summary.verified, summary.gates_dict(), summary.outcome, summary.reason))
        return messages[len(prefix):]

    def _save(self, messages: list[Message], skip: int) -> None:
        if self.checkpoint is not None:
            self.checkpoint(messages[skip:])

    # ---- the toolset ------------------------------------------------------------------------------------------

    def _path(self, path: str) -> Path:
        """A workspace path; anything outside it, or inside tomo's own .tomo/, is refused with a reason."""
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            raise ValueError(f"{path!r} is outside the workspace {self.root}; use a path relative to it")
        if ".tomo" in target.relative_to(self.root).parts:
            raise ValueError(f"{path!r} is inside .tomo/, tomo's own state; it is not part of the task")
        return target

    def _edited(self, what: str) -> None:
        gates = self._gates
        assert gates is not None
        gates.record(self._next(), "tool", what, 0, kind="neutral")

    def _next(self) -> int:
        """The next check's number (edits and commands share one sequence; ``blocks`` counts commands)."""
        self._seq += 1
        return self._seq

    def _registry(self) -> Registry:
        registry = Registry()

        def read_file(path: str, start: int = 1, end: int | None = None) -> str:
            """Read a text file of the workspace, with line numbers.

            Args:
                path: the file, relative to the project root
                start: first line to show (1-based)
                end: last line to show (default: 400 lines from start)
            """
            target = self._path(path)
            lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
            last = min(len(lines), end if end is not None else start + READ_LINES - 1)
            body = "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(max(start, 1), last + 1))
            more = f"\n[lines {max(start, 1)}-{last} of {len(lines)}; ask for more with start/end]" \
                if last < len(lines) or start > 1 else ""
            return body + more

        def write_file(path: str, content: str) -> str:
            """Create or overwrite a file of the workspace with the given content.

            Args:
                path: the file, relative to the project root
                content: the whole new content of the file
            """
            target = self._path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            self._edited(f"write_file {path}")
            return f"wrote {path} ({len(content.splitlines())} lines)"

        def edit_file(path: str, old: str, new: str) -> str:
            """Replace one exact, unique piece of text in a file.

            Args:
                path: the file, relative to the project root
                old: the exact text to replace (it must occur exactly once; include surrounding lines to make it so)
                new: the replacement text
            """
            target = self._path(path)
            text = target.read_text(encoding="utf-8")
            count = text.count(old)
            if count != 1:
                raise ValueError(f"the text to replace occurs {count} times in {path}; it must occur exactly once "
                                 "(copy it exactly from read_file, with enough lines around it to be unique)")
            target.write_text(text.replace(old, new, 1), encoding="utf-8")
            self._edited(f"edit_file {path}")
            return f"edited {path}"

        async def run_command(command: str) -> str:
            """Run a shell command in the project root, inside the sandbox; returns its exit code and output.

            Args:
                command: the shell command, e.g. "python -m pytest -q tests/test_x.py"
            """
            return await self._run(command)

        def find_symbol(query: str) -> list[Any]:
            """Find definitions (functions, classes, methods) whose name matches the query.

            Args:
                query: a name or qualified name, e.g. "Order.total"
            """
            return self._graph_open().find_symbol(query, limit=50)

        def references(symbol: str) -> list[Any]:
            """Every reference to a symbol across the project.

            Args:
                symbol: a qualified name from find_symbol, e.g. "package.module.Class.method"
            """
            return self._graph_open().references(symbol)

        def callers(symbol: str) -> list[Any]:
            """The functions that call a symbol.

            Args:
                symbol: a qualified name from find_symbol
            """
            return self._graph_open().callers(symbol)

        registry.register(read_file, cap=16_000, unit="lines")
        registry.register(write_file)
        registry.register(edit_file)
        registry.register(run_command, name="run", cap=self.output_chars + 2_000)
        registry.register(find_symbol, unit="symbols", thread=True)
        registry.register(references, unit="references", thread=True)
        registry.register(callers, unit="callers", thread=True)
        return registry

    def _graph_open(self) -> Any:
        if self._graph is None:
            from tomo.prism import Graph

            self._graph = Graph.open(self.root)
        return self._graph

    async def _run(self, command: str) -> str:
        gates = self._gates
        assert gates is not None
        number = self._next()
        emit = self._sink.emit
        block = Block("bash", command, 0, "shell")
        emit(BlockStarted(self.last.rounds + 1, number, "shell", command))
        if not await self.gate.approve(block, number):
            emit(GateBlocked("approval", f"the user declined command {number}"))
            return "[tomo: the user declined to run this command; it did not run. Ask what to do instead.]"
        self.last.blocks += 1
        env = gates.prepare(number)
        argv = [BASH, "-c", command]
        if env:
            argv = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *argv]
        started = time.monotonic()
        self._command = asyncio.ensure_future(self.sandbox.run(argv, "argv", self.root, self.limits))
        interrupted = False
        try:
            await asyncio.wait({self._command})
            if self._command.cancelled():
                interrupted = True
                output, code, notes, timed_out = "", 130, ["interrupted by the user (Ctrl-C)"], False
            else:
                result = self._command.result()
                output, code, notes, timed_out = result.output, result.exit_code, list(result.notes), result.timed_out
        except SandboxError as exc:
            gates.record(number, "shell", command, 126)
            return f"[tomo: the command could not start: {exc.message}]"
        except asyncio.CancelledError:
            self._command.cancel()
            with contextlib.suppress(BaseException):
                await self._command
            raise
        finally:
            self._command = None
        seconds = time.monotonic() - started
        check = gates.record(number, "shell", command, code, timed_out=timed_out, interrupted=interrupted)
        emit(CodeRan("shell", code, seconds, timed_out, False))
        emit(BlockOutput(number, output, code, notes, check.changed, interrupted))
        return block_report(number, "shell", code, output, seconds=seconds, notes=notes, changed=check.changed,
                            interrupted=interrupted, limit=self.output_chars)
