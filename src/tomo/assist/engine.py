"""assist: a sentence in, prism operations out, payloads never relayed.

The model gets the graph operations and nothing else (no grep, no file reading, no shell). Each answer it reads is a
receipt with a handle; the full payload goes to the user through the sink (``PayloadRendered``). Edits are applied
by the harness, by plan handle, so the model never sees nor re-emits them.

How ``--apply`` gates writing: without it the harness never writes. A model that calls ``apply_plan`` then *chooses*
the plan (the receipt says nothing was written) and the user is shown it. With ``--apply`` the model's ``apply_plan``
writes the plan's confirmed edits (``--apply-ambiguous``: all of them; the model cannot widen that), and if the model
ended without applying anything, the harness applies the last plan it made. An apply that would leave same-name
references prism could not prove (outside Python, :func:`tomo.prism.left_behind`) is refused without
``--apply-ambiguous``; the run then wrote nothing and is not ``ok``. ``--verify CMD`` then runs in the root;
when it fails every apply of the run is undone byte for byte unless ``keep`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tomo.agents import Agent
from tomo.assist.session import MODEL_OPS, OpResult
from tomo.assist.tools import graph_tools
from tomo.errors import ModelError, TomoError
from tomo.events import CodeRan, NullSink, Sink
from tomo.loop import Limits, RunFailed
from tomo.loop import run as loop_run
from tomo.models.base import Model
from tomo.models.messages import ToolCall
from tomo.prism import LeavesReferences
from tomo.tools import Caller, Registry, ToolResult, ToolUser

Invoke = Callable[[str, Mapping[str, Any]], OpResult]

PROMPT = """\
You are tomo assist. You work on a code base only through its code graph, with these tools: find_symbol, definition,
references, callers, callees, impact, rename_plan, apply_plan. There is no grep, no file reading and no shell: the
graph answers those questions (find_symbol and definition locate code; references and callers find every use).
Every tool answers with a short receipt and a handle, like `plan p1-abcd: 37 confirmed edits in 12 files, ...`.
The full result is shown to the user, not to you: do not ask for it and never write edits yourself. To change code,
make a rename_plan and pass its handle to apply_plan. Ambiguous edits are unproven; the user decides about them.
When you are done, answer in two or three sentences: what you did and what the user should check."""


@dataclass(frozen=True, slots=True)
class AssistOptions:
    """What the user allowed. ``apply_ambiguous`` implies ``apply``."""

    root: Path = Path(".")
    apply: bool = False
    apply_ambiguous: bool = False
    verify: str | None = None
    keep: bool = False
    max_turns: int = 20
    verify_timeout_s: float = 900.0
    stream: bool = False  # ask the model to stream, so a renderer can show its text as it arrives

    @property
    def writes(self) -> bool:
        return self.apply or self.apply_ambiguous


@dataclass(slots=True)
class Verify:
    command: str
    exit_code: int
    passed: bool
    seconds: float
    output_tail: list[str]
    timed_out: bool = False


@dataclass(slots=True)
class Summary:
    """What a run came to: what the model said, what was planned, written, skipped and why, and the verify result."""

    task: str
    model: str
    session: str
    answer: str = ""
    completed: bool = False
    stopped_by: str | None = None
    steps: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    plans: list[dict[str, Any]] = field(default_factory=list)
    chosen: str | None = None
    applies: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)  # operations the dispatcher refused, and why
    notes: list[str] = field(default_factory=list)
    verify: Verify | None = None
    rolled_back: list[str] = field(default_factory=list)
    error: str | None = None  # the model failed mid-run (provider down, script exhausted...)
    left_unrenamed: str | None = None  # --apply wrote nothing: the plan would have left same-name references

    @property
    def written(self) -> list[str]:
        """Files the run changed and left changed."""
        if self.rolled_back:
            return []
        return sorted({p for a in self.applies if a["written"] for p in a["files"]})

    @property
    def ok(self) -> bool:
        return self.error is None and self.left_unrenamed is None and (self.verify is None or self.verify.passed)

    @property
    def verified(self) -> bool:
        """Files were written, are still written, and the user's verify command passed on them."""
        return bool(self.written) and self.error is None and self.verify is not None and self.verify.passed

    @property
    def outcome(self) -> str:
        """verified | unverified (written, no verify or a failed one kept) | unchanged | error: the harness's
        word (the same words as ``tomo run``)."""
        if self.error is not None:
            return "error"
        if not self.written:
            return "unchanged"
        return "verified" if self.verified else "unverified"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["written"] = self.written
        data["ok"] = self.ok
        data["verified"] = self.verified
        data["outcome"] = self.outcome
        return data


# ---- no escape hatch -----------------------------------------------------------------------------------------------

_INSTEAD: tuple[tuple[tuple[str, ...], str], ...] = (
    (("grep", "search", "find", "rg", "glob", "ls", "list", "locate", "ag", "ack"),
     "find_symbol to find definitions by name, then references or callers to find every use"),
    (("read", "open", "cat", "view", "head", "tail", "show", "get_file", "fetch", "file"),
     "definition to see where a symbol lives and what it is, and callees for what it calls; the user sees the code"),
    (("bash", "shell", "run", "exec", "terminal", "python", "command", "test", "sh", "cmd"),
     "nothing: there is no shell here; the harness runs the user's verify command after applying"),
    (("edit", "write", "replace", "sed", "patch", "create", "insert", "modify", "delete", "rename"),
     "rename_plan, then apply_plan with the plan's handle"),
)


def instead_of(tool: str) -> str:
    """Which graph operation answers what a text tool named ``tool`` would have been used for."""
    words = tool.lower().replace("-", "_")
    parts = set(words.split("_"))
    for keys, hint in _INSTEAD:
        if parts & set(keys) or any(k in words for k in keys if len(k) > 3):
            return hint
    return "find_symbol, definition, references, callers, callees, impact, rename_plan or apply_plan"


class GraphOnlyRegistry(Registry):
    """A registry that refuses any tool outside the graph operations by saying which operation to use instead.

    The refused tool has no handler anywhere: it is never registered, so there is nothing that could run.
    """

    async def call(self, agent: ToolUser, call: ToolCall, caller: Caller) -> ToolResult:
        if call.name not in agent.allowed and call.name not in self:
            text = (f"refused: there is no `{call.name}` here. assist works through the code graph only, never raw "
                    f"text or a shell. Use {instead_of(call.name)}. Tools: {', '.join(agent.tools)}.")
            return ToolResult(call.name, "refused", text)
        return await super().call(agent, call, caller)


# ---- the run -------------------------------------------------------------------------------------------------------


def build_agent(options: AssistOptions) -> Agent:
    turns = max(1, options.max_turns)
    return Agent("assist", "balanced", PROMPT, MODEL_OPS, force_tools=True,
                 limits=Limits(max_steps=turns, max_tool_calls=turns * 4))


async def run(task: str, model: Model, invoke: Invoke, options: AssistOptions | None = None,
              sink: Sink | None = None) -> Summary:
    """Runs one assist task to the end: the model's loop, the harness's apply (if allowed), verify and rollback."""
    options = options or AssistOptions()
    sink = sink or NullSink()
    results: list[OpResult] = []
    failed: list[dict[str, Any]] = []
    refusals: list[str] = []  # applies refused because they would have left a program half-renamed

    def traced(op: str, args: dict[str, Any]) -> str:
        if op == "apply_plan":  # the user's flags decide what an apply may write, never the model
            args = {**args, "include_ambiguous": options.apply_ambiguous, "dry_run": not options.writes}
        try:
            result = invoke(op, args)
        except TomoError as exc:  # the model reads it as a tool error; the user reads it in the report
            if isinstance(exc, LeavesReferences):
                refusals.append(exc.message)
            failed.append({"operation": op, "args": {k: v for k, v in args.items() if k != "dry_run"},
                           "error": exc.message})
            raise
        results.append(result)
        return result.receipt

    registry = GraphOnlyRegistry()
    for fn in graph_tools(traced):
        registry.register(fn, cap=2_000, unit="characters")
    agent = build_agent(options)
    caller = Caller("local", "local", options.root)
    summary = Summary(task, model.name, _session_of(invoke, results))
    try:
        outcome = await loop_run(agent, model, registry, caller, task, agent.limits, sink, stream=options.stream)
    except ModelError as exc:  # what was already written still goes through verify and rollback below
        if not results:  # nothing happened yet: the error and its hint (how to connect a model) are the whole story
            raise (exc.error if isinstance(exc, RunFailed) else exc) from None
        summary.error = exc.message
        summary.notes.append(f"the model failed mid-run: {exc.message}")
        if isinstance(exc, RunFailed):  # what the run spent before it failed still counts
            done = exc.outcome
            summary.steps, summary.tool_calls, summary.stopped_by = done.steps, done.tool_calls, done.stopped_by
            summary.input_tokens, summary.output_tokens = done.usage.input_tokens, done.usage.output_tokens
            summary.refused = [r.tool for r in done.results if r.status == "refused"]
    else:
        summary.answer, summary.completed, summary.stopped_by = outcome.text, outcome.completed, outcome.stopped_by
        summary.steps, summary.tool_calls = outcome.steps, outcome.tool_calls
        summary.input_tokens, summary.output_tokens = outcome.usage.input_tokens, outcome.usage.output_tokens
        summary.refused = [r.tool for r in outcome.results if r.status == "refused"]
    summary.session = summary.session or _session_of(invoke, results)
    summary.failed = failed

    plans = [r for r in results if r.operation == "rename_plan"]
    applies = [r for r in results if r.operation == "apply_plan"]
    if options.writes and plans and summary.error is None and not any(a.payload["written"] for a in applies):
        last = plans[-1].handle
        try:
            result = invoke("apply_plan", {"handle": last, "include_ambiguous": options.apply_ambiguous})
            applies.append(result)
            summary.notes.append(f"the model did not apply a plan; the harness applied its last plan {last} "
                                 "because --apply was given")
        except TomoError as exc:
            if isinstance(exc, LeavesReferences):
                refusals.append(exc.message)
            summary.notes.append(f"the harness did not apply the last plan {last}: {exc.message}")
    if refusals and not any(a.payload["written"] for a in applies):
        summary.left_unrenamed = refusals[-1]  # the user asked to write and nothing was: not a success
    summary.plans = [_plan_row(r) for r in plans]
    summary.applies = [{"handle": a.handle, **a.payload} for a in applies]
    if applies:
        summary.chosen = applies[-1].payload["plan"]
    elif plans:
        summary.chosen = plans[-1].handle
    if summary.chosen and not options.writes:
        summary.notes.append(f"plan {summary.chosen} was not written: this run does not write (pass --apply)")

    written = [a for a in applies if a.payload["written"]]
    if options.verify:
        if not written:
            summary.notes.append(f"verify `{options.verify}` was not run: nothing was written")
        else:
            summary.verify = await run_verify(options.verify, options.root, options.verify_timeout_s, sink)
            if not summary.verify.passed and not options.keep:
                for a in reversed(written):
                    undo = invoke("undo_apply", {"handle": a.handle, "force": True})
                    summary.rolled_back += undo.payload["files"]
                summary.rolled_back = sorted(set(summary.rolled_back))
                summary.notes.append("verify failed: every edit of this run was rolled back "
                                     f"({len(summary.rolled_back)} files restored byte for byte; --keep keeps them)")
            elif not summary.verify.passed:
                summary.notes.append("verify failed; the edits were kept because --keep was given")
    return summary


def run_sync(task: str, model: Model, invoke: Invoke, options: AssistOptions | None = None,
             sink: Sink | None = None) -> Summary:
    """:func:`run` for callers without an event loop."""
    return asyncio.run(run(task, model, invoke, options, sink))


async def run_verify(command: str, root: Path, timeout_s: float, sink: Sink) -> Verify:
    """Runs the user's check in ``root`` and keeps the tail of its output (the part that says what failed)."""
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_shell(command, cwd=root, stdout=asyncio.subprocess.PIPE,
                                                 stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a test runner's children too
        out, _ = await proc.communicate()
    except BaseException:
        # Cancelled (Ctrl-C under asyncio.run) or failing: the check has a session of its own, so a terminal's Ctrl-C
        # never reaches it. Kill its group and reap it while the loop still runs, or it outlives tomo and its pipe is
        # closed on a closed loop at exit ("RuntimeError: Event loop is closed", issue 28).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.communicate()
        raise
    seconds = time.perf_counter() - started
    code = proc.returncode if proc.returncode is not None else -1
    sink.emit(CodeRan("shell", code, seconds, timed_out))
    tail = out.decode("utf-8", errors="replace").strip().splitlines()[-20:]
    return Verify(command, code, code == 0 and not timed_out, round(seconds, 2), tail, timed_out)


def _plan_row(r: OpResult) -> dict[str, Any]:
    p = r.payload
    return {"handle": r.handle, "symbol": p["symbol"]["qualname"], "new_name": p["new_name"],
            "confirmed": p["confirmed"], "ambiguous": p["ambiguous"], "conflicts": len(p["conflicts"]),
            "files": len(p["files"])}


def _session_of(invoke: Invoke, results: list[OpResult]) -> str:
    owner = getattr(invoke, "__self__", None)  # a bound Session.invoke knows its session
    if isinstance(getattr(owner, "id", None), str):
        return str(owner.id)  # type: ignore[union-attr]
    return results[0].handle.rsplit("-", 1)[-1] if results else ""
