"""`tomo run TASK`: the oi engine (code is the only action) or the tool loop, in the sandbox, behind the gates.

Exit codes (the table shared by run, assist and team, tomo.cli.EXIT_CODES): 0 verified (a file changed and a passing
check executed the change), or nothing changed in a turn without a gate; 3 not verified (changed but not shown to
work, nothing changed with a gate on, the rounds ran out, a block was declined); 1 an error (the model or sandbox
failed); 2 a usage error (bad option or argument); 130 Ctrl-C. ``--json`` prints one object: ``{"outcome", "reason",
"verified", "gates": {"exec", "repro"}, "rounds", "blocks", "files_changed", "usage", "session", "ended_by",
"error"}``; the live log then goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from tomo.cli import app, report_error
from tomo.cli.help_names import model_help
from tomo.cli.render import RichSink, code_block
from tomo.cli.rows import rich_console
from tomo.cli.safe import text as shown
from tomo.errors import ConfigError, TomoError
from tomo.events import (
    AssistantSaid,
    BlockOutput,
    BlockStarted,
    CodeRan,
    GateBlocked,
    JsonlSink,
    Notice,
    ReproductionKept,
    Sink,
    TeeSink,
    TurnEnded,
)

EXIT_VERIFIED, EXIT_ERROR, EXIT_USAGE, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
ENGINES = ("oi", "tools", "auto")

CLAIMS = ("exec", "repro")


class RunSink(RichSink):
    """The log of ``tomo run``: each block before it runs, its output after, gate refusals; the rest as RichSink.

    Live, the summary is printed from the run's result once the turn is over; ``replay=True`` (``tomo replay`` of a
    transcript) prints it from the turn's ``TurnEnded`` instead, so a replay ends as the live log did."""

    def __init__(self, console: Console, *, replay: bool = False) -> None:
        super().__init__(console)
        self._handlers.update({BlockStarted: self._block, BlockOutput: self._output, CodeRan: lambda e: None,
                               GateBlocked: self._gate, TurnEnded: self._ended if replay else lambda e: None,
                               AssistantSaid: self._said_oi,
                               ReproductionKept: lambda e: None})  # for the lab: its notice says it to a person

    def _ended(self, e: TurnEnded) -> None:
        # A transcript holds the turn's events, not the session it was saved in, nor the error's text as the
        # summary's own line (the error notice before this event already said it).
        _print_summary(self.console, {"session": "(not in the transcript)", "error": None,
                                      **{k: v for k, v in e.to_dict().items() if k != "kind"}})

    def _said_oi(self, e: AssistantSaid) -> None:
        """The model's words; its runnable blocks are shown on their own, each right before it runs."""
        from tomo.oi.blocks import without_runnable

        text = without_runnable(e.text)
        if text:
            self.console.print(Text.assemble((f"{e.agent}: ", "bold cyan"), shown(text)))

    def _block(self, e: BlockStarted) -> None:
        self.console.print(Text(f"── block {e.number} · {e.language} (round {e.round})", style="bold blue"))
        self.console.print(code_block(self.console, e.code, e.language))

    def _output(self, e: BlockOutput) -> None:
        if e.output.strip():
            self.console.print(shown(e.output.rstrip("\n")))  # the block's output: shown, never obeyed
        style = "green" if e.exit_code == 0 else "red"
        status = "interrupted" if e.interrupted else f"exit {e.exit_code}"
        self.console.print(Text(f"   → {status}", style=style))
        for note in e.notes:
            self.console.print(shown(f"   tomo: {note}", "yellow"))
        if e.changed:
            self.console.print(shown(f"   changed: {', '.join(e.changed)}", "cyan"))

    def _gate(self, e: GateBlocked) -> None:
        self.console.print(Text.assemble(("⊘ ", "bold red"), (f"{e.gate} gate", "bold"), (" refused: ", "red"),
                                         shown(e.reason)))


@app.command("run")
def run_cmd(
    task: str = typer.Argument(..., help='What to do, e.g. "make the failing test in tests/ pass".'),
    model: str | None = typer.Option(None, "--model", metavar="SPEC", help=model_help()),
    root: Path = typer.Option(Path("."), "--root", metavar="DIR",
                              help="The workspace: the project the model works on."),
    sandbox: str | None = typer.Option(None, "--sandbox", metavar="KIND",
                                       help="strict (bubblewrap) or local (unconfined); default: sandbox.kind in "
                                            "tomo.toml, else strict."),
    exec_gate: bool = typer.Option(False, "--exec-gate", help="An edit must be executed by a passing check before "
                                                              "the turn can end."),
    repro: bool = typer.Option(False, "--repro", help="A fix must be preceded by a failing check in the same turn."),
    max_rounds: int = typer.Option(20, "--max-rounds", min=1, metavar="N",
                                   help="Model replies per turn, gate refusals included."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Run every block without asking."),
    lsp: str | None = typer.Option(None, "--lsp", metavar="CMD", help="Language server command for the context pack."),
    resume: bool = typer.Option(False, "--continue", help="Continue the last saved session of --root."),
    engine: str = typer.Option("oi", "--engine", metavar="ENGINE",
                               help="oi (code blocks, the default), tools (the tool loop), or auto "
                                    "(a rename goes to assist's code graph, the rest to oi)."),
    directive: str = typer.Option("", "--directive", metavar="NAMES",
                                  help="Opt-in prompt directives: verify, repro (comma list)."),
    timeout: float | None = typer.Option(None, "--timeout", metavar="SECONDS",
                                         help="Seconds one block may run (default: sandbox.timeout_s in tomo.toml)."),
    context: bool = typer.Option(True, "--context/--no-context", help="Inject the context pack on a new session."),
    check: str | None = typer.Option(None, "--check", metavar="CMD",
                                     help="The project's check (e.g. 'python -m pytest -q'), or 'auto' to detect it: "
                                          "tomo runs it itself when code changed and no check followed."),
    infer_edits: bool = typer.Option(True, "--infer-edits/--no-infer-edits",
                                     help="A python block that only defines functions found in exactly one file is "
                                          "laid into that file instead of run."),
    claim: str = typer.Option("exec", "--claim", metavar="EVIDENCE",
                              help="What tomo must have seen before it says verified: exec (a passing check ran the "
                                   "changed code) or repro (also a failing check before the fix, as --repro asks, "
                                   "without keeping the turn open for it)."),
    push_back: bool = typer.Option(True, "--push-back/--no-push-back",
                                   help="With a gate on, ask the model once more when it ends a turn that changed no "
                                        "file."),
    resample: bool = typer.Option(True, "--resample/--no-resample",
                                  help="After a reply that did nothing new (the same reply, or code the file already "
                                       "holds), sample the next one hotter (temperature 0.8) on a local server."),
    strategy: str = typer.Option("conversation", "--strategy", metavar="HOW",
                                 help="conversation (one exchange that runs the model's blocks), or trials (a "
                                      "failing test first, then fixes asked afresh, each judged by that test and "
                                      "--check; a pytest project; for small local models)."),
    mutants: bool = typer.Option(False, "--mutants/--no-mutants",
                                 help="With --strategy trials: before asking the model for fixes, try one-token "
                                      "changes of the lines the failing test ran (an operator, a bound, a guard, a "
                                      "table's order), each judged like a fix."),
    textbook: bool = typer.Option(False, "--textbook/--no-textbook",
                                  help="With --mutants: also the textbook's changes after those (+ for -, * for /, "
                                       "min for max, a difference's operands swapped, another variable read); a "
                                       "search then tries more candidates, up to its cap of 80."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object (the log goes to stderr)."),
    transcript: Path | None = typer.Option(None, "--transcript", metavar="FILE",
                                           help="Also write every event to this JSONL file."),
) -> None:
    """Do TASK with a model in the sandbox: it writes Python/bash blocks (or calls tools), tomo runs them.

    "verified" is tomo's word, never the model's: a file changed and a passing check executed the changed code.

    Exit codes: 0 done (verified); 3 not done (unverified, unchanged with a gate or --apply, a limit);
    1 an error; 2 a usage error; 130 Ctrl-C.
    """
    if claim not in CLAIMS:
        raise typer.BadParameter(f"{claim!r} is not one of: {', '.join(CLAIMS)}", param_hint="--claim")
    from tomo.oi.trials import STRATEGIES

    if strategy not in STRATEGIES:
        raise typer.BadParameter(f"{strategy!r} is not one of: {', '.join(STRATEGIES)}", param_hint="--strategy")
    if strategy == "trials" and check is None:
        raise typer.BadParameter("trials are judged by the project's check: add --check auto (or the command)",
                                 param_hint="--strategy")
    if mutants and strategy != "trials":
        raise typer.BadParameter("one-token changes are tried by trials: add --strategy trials", param_hint="--mutants")
    if textbook and not mutants:
        raise typer.BadParameter("the textbook's changes are one-token changes: add --mutants", param_hint="--textbook")
    if not task.strip():
        raise typer.BadParameter("TASK is empty: say what the model should do, e.g. "
                                 "tomo run \"make the failing test pass\"", param_hint="TASK")
    console = rich_console(stderr=as_json, highlight=False)
    try:
        result = _run(task, model, root, sandbox, exec_gate, repro, max_rounds, yes, lsp, resume, engine, directive,
                      timeout, context, as_json, transcript, console, push_back, check, infer_edits, claim,
                      resample, strategy, mutants, textbook)
    except TomoError as exc:
        report_error(exc)
        if as_json:
            typer.echo(json.dumps({"outcome": "error", "reason": exc.message, "verified": False, "gates": {},
                                   "rounds": 0, "blocks": 0, "files_changed": [], "usage": None, "session": None,
                                   "ended_by": "error", "error": exc.message}, indent=2))
        raise typer.Exit(EXIT_ERROR) from exc
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        _print_summary(console, result)
    raise typer.Exit(_exit_code(result))


def _exit_code(result: dict[str, Any]) -> int:
    """The table in the module's docstring: 0 only for verified work, or for a turn without a gate that changed nothing
    and ended by the model's own word (a question answered)."""
    if result["ended_by"] == "error":
        return EXIT_ERROR
    if result["ended_by"] == "interrupted":
        return EXIT_INTERRUPTED
    if result["verified"]:
        return EXIT_VERIFIED
    gated = any(g.get("on") for g in result["gates"].values())
    if result["outcome"] == "unchanged" and result["ended_by"] == "model" and not gated:
        return EXIT_VERIFIED
    return EXIT_UNVERIFIED


def _run(task: str, model_spec: str | None, root: Path, sandbox_kind: str | None, exec_gate: bool, repro: bool,
         max_rounds: int, yes: bool, lsp: str | None, resume: bool, engine: str, directive: str,
         timeout: float | None, context: bool, as_json: bool, transcript: Path | None,
         console: Console, push_back: bool = True, check: str | None = None,
         infer_edits: bool = True, claim: str = "exec", resample: bool = True,
         strategy: str = "conversation", mutants: bool = False, textbook: bool = False) -> dict[str, Any]:
    from tomo.cli.assist_cmd import resolve_model
    from tomo.cli.exec_cmd import sandbox_and_limits
    from tomo.config import load_settings
    from tomo.oi.approval import ApproveAll, AskingGate
    from tomo.oi.prompts import system_prompt
    from tomo.oi.sessions import SessionStore

    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}", hint=f"use one of: {', '.join(ENGINES)}")
    if not root.is_dir():
        raise ConfigError(f"--root {root} is not a directory", hint="pass the project's root directory")
    root = root.resolve()
    settings = load_settings(root)
    box, limits = sandbox_and_limits(sandbox_kind, settings, timeout)
    if check is not None and check.strip() == "auto":
        from tomo.oi.project_check import detect_check

        check = detect_check(root)
        if check is None:
            raise ConfigError("--check auto found no test runner in " + str(root),
                              hint="name the command: --check 'python -m pytest -q'")
    elif check is not None and not check.strip():
        raise ConfigError("--check is empty", hint="name the command, e.g. --check 'python -m pytest -q', or 'auto'")
    directives = [d for d in directive.split(",") if d.strip()]
    system = system_prompt(directives)
    renderer = RunSink(console)
    recorder = JsonlSink(transcript) if transcript else None
    sink: Sink = TeeSink(renderer, recorder) if recorder else renderer
    chosen = resolve_model(model_spec, root, sink)
    store = SessionStore(root)
    session = store.latest() if resume else store.new(task=task, engine=engine, model=chosen.name)
    history = list(session.messages)
    session.meta.setdefault("turns", [])
    gate = ApproveAll() if yes else AskingGate(_asker(console))
    try:
        routed = None
        if engine == "auto" and not history:
            from tomo.assist.intent import rename_target

            if rename_target(task) is not None:
                routed = _run_rename(task, chosen, box, root, max_rounds, exec_gate, limits, check, session.id,
                                     sink)
        if routed is not None and routed["files_changed"]:
            result = routed
        elif engine in ("oi", "auto"):
            if routed is not None:
                sink.emit(Notice("info", "the code graph wrote nothing for this rename; the oi engine takes the task"))
            result = _run_oi(task, chosen, box, gate, root, lsp, max_rounds, exec_gate, repro, system, limits,
                             context, session, history, sink, stream=True, push_back=push_back, check=check,
                             infer_edits=infer_edits, claim=claim, resample=resample, strategy=strategy,
                             mutants=mutants, textbook=textbook)
        else:
            from tomo.oi.tools_engine import ToolsEngine

            tools = ToolsEngine(chosen, box, gate, root, max_rounds=max_rounds, exec_gate=exec_gate, repro=repro,
                                directives=directives, limits=limits, push_back=push_back,
                                checkpoint=lambda new: _checkpoint(session, history, new))
            result = asyncio.run(_with_interrupts(tools.turn(history, task, sink), tools.interrupt))
            result = _result(tools.last, session.id)
    finally:
        renderer.close()
        if recorder:
            recorder.close()
    session.meta["turns"].append({"task": task, **{k: result[k] for k in ("outcome", "verified", "ended_by", "rounds",
                                                                       "blocks")}})
    session.save()
    return result


def _run_rename(task: str, chosen: Any, box: Any, root: Path, max_rounds: int, exec_gate: bool, limits: Any,
                check: str | None, session_id: str, sink: Sink) -> dict[str, Any]:
    """``--engine auto`` on a sentence that asks for a rename: assist plans it in the code graph and applies the plan
    by handle, then the project's check (``--check``) runs in the sandbox under the same measurement as any block,
    so the outcome means what it means for the oi engine."""
    from tomo.assist import AssistOptions, Session
    from tomo.assist.engine import run as assist_run
    from tomo.assist.named import named_rename
    from tomo.oi.approval import ApproveAll
    from tomo.oi.engine import Engine, TurnSummary
    from tomo.oi.gates import TurnGates
    from tomo.prism import Graph

    sink.emit(Notice("info", "the task asks for a rename: tomo assist plans it in the code graph and applies it by "
                             "handle (--engine auto)"))
    gates = TurnGates(root, exec_gate=exec_gate, repro=False)
    gates.start()
    summary = TurnSummary()
    options = AssistOptions(root=root, apply=True, max_turns=max_rounds, stream=True)

    async def work() -> None:
        graph = Graph.open(root)
        session = Session(graph, sink=sink)
        try:
            named = named_rename(task, graph)
            written = named is not None and _rename_named(session, *named, sink)
            if not written:
                done = await assist_run(task, chosen, session.invoke, options, sink)
                written = bool(done.written)
                summary.rounds, summary.usage.input_tokens, summary.usage.output_tokens = (
                    done.steps, done.input_tokens, done.output_tokens)
                if done.error:
                    summary.ended_by, summary.error = "error", done.error
                elif done.stopped_by:
                    summary.ended_by = "rounds"
        finally:
            session.close()
        gates.record(1, "edit", "apply_plan", 0, kind="neutral")
        if written and check:
            engine = Engine(chosen, box, ApproveAll(), root, limits=limits, context=False)
            summary.blocks = 2
            await engine.run_command(check, 2, gates, sink.emit, round_=summary.rounds)

    try:
        asyncio.run(work())
    finally:
        summary.files_changed = gates.files_changed()
        summary.gates = gates.verdicts()
        summary.evidence = gates.evidence()
        gates.close()
    sink.emit(TurnEnded(summary.ended_by, summary.rounds, summary.blocks, summary.files_changed, summary.verified,
                        summary.gates_dict(), summary.outcome, summary.reason))
    return _result(summary, session_id)


def _rename_named(session: Any, symbol: Any, new_name: str, sink: Sink) -> bool:
    """The harness plans and applies the rename the sentence names (``tomo.assist.named``), by handle like a model's
    plan; True when it wrote files. Anything the graph refuses (a conflict, references it cannot prove) is said and
    the model takes the task instead."""
    sink.emit(Notice("info", f"the sentence names one symbol, {symbol.qualname} ({symbol.kind} at {symbol.path}:"
                             f"{symbol.line}): the harness plans its rename to {new_name} without asking the model"))
    try:
        plan = session.invoke("rename_plan", {"symbol": symbol.qualname, "new_name": new_name})
        applied = session.invoke("apply_plan", {"handle": plan.handle})
    except TomoError as exc:
        sink.emit(Notice("warning", f"the harness did not apply its rename ({exc}); the model plans it instead"))
        return False
    sink.emit(Notice("info", applied.receipt))
    return bool(applied.payload["files"])


def _run_oi(task: str, chosen: Any, box: Any, gate: Any, root: Path, lsp: str | None, max_rounds: int,
            exec_gate: bool, repro: bool, system: str, limits: Any, context: bool, session: Any,
            history: list[Any], sink: Sink, *, stream: bool, push_back: bool = True,
            check: str | None = None, infer_edits: bool = True, claim: str = "exec",
            resample: bool = True, strategy: str = "conversation", mutants: bool = False,
            textbook: bool = False) -> dict[str, Any]:
    from tomo.oi.engine import RETRY_TEMPERATURE, Engine

    engine = Engine(chosen, box, gate, root, lsp, max_rounds, exec_gate, repro, system, limits=limits,
                    context=context, checkpoint=lambda new: _checkpoint(session, history, new), stream=stream,
                    push_back=push_back, check=check, infer_edits=infer_edits, claim=claim,
                    retry_temperature=RETRY_TEMPERATURE if resample else None)
    if strategy == "trials":
        from tomo.oi.trials import trial_turn

        turn = trial_turn(engine, history, task, sink, mutate=mutants, textbook=textbook)
    else:
        turn = engine.turn(history, task, sink)
    asyncio.run(_with_interrupts(turn, engine.interrupt))
    return _result(engine.last, session.id)


def _checkpoint(session: Any, history: list[Any], new: list[Any]) -> None:
    session.messages = [*history, *new]
    session.save()


async def _with_interrupts(work: Any, interrupt: Any) -> Any:
    """Ctrl-C calls the engine's ``interrupt`` (stop the block; a second one ends the turn) instead of killing tomo."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        return await work
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _result(summary: Any, session_id: str) -> dict[str, Any]:
    usage = summary.usage
    return {
        "outcome": summary.outcome,
        "reason": summary.reason,
        "verified": summary.verified,
        "gates": {name: v.to_dict() for name, v in summary.gates.items()},
        "rounds": summary.rounds,
        "blocks": summary.blocks,
        "files_changed": summary.files_changed,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                  "estimated": bool(getattr(usage, "estimated", False))},
        "pushed_back": summary.pushed_back,
        "rewinds": getattr(summary, "rewinds", 0),
        "session": session_id,
        "ended_by": summary.ended_by,
        "error": summary.error,
    }


def _asker(console: Console) -> Any:
    from tomo.oi.approval import parse_answer
    from tomo.oi.blocks import Block

    def ask(block: Block, number: int) -> str:
        # Ctrl-C or end of input at the prompt means no; the SIGINT handler of the run is put back afterwards.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            while True:
                try:
                    raw = console.input(f"run block {number}? [bold]y[/]es / [bold]n[/]o / [bold]a[/]lways: ")
                except (KeyboardInterrupt, EOFError):
                    console.print()
                    return "no"
                if parse_answer(raw) is not None:
                    return raw
                console.print("answer y, n or a (always)")
        finally:
            signal.signal(signal.SIGINT, previous)

    return ask


def _print_summary(console: Console, r: dict[str, Any]) -> None:
    console.rule("[bold]summary")
    words = {"model": "the model ended it", "rounds": "the rounds ran out", "refused": "a block was declined",
             "stuck": "the model repeated itself",
             "interrupted": "interrupted (Ctrl-C)", "error": "an error"}
    console.print(Text(f"turn ended: {words.get(r['ended_by'], r['ended_by'])} · rounds {r['rounds']} · "
                       f"blocks run {r['blocks']} · session {r['session']}"))
    changed = ", ".join(r["files_changed"]) or "none"
    console.print(shown(f"files changed: {changed}"))
    for name, v in r["gates"].items():
        if not v["on"]:
            console.print(Text(f"{name} gate: off", style="dim"))
            continue
        mark, style = ("✓", "green") if v["satisfied"] else ("✗", "red")
        refusals = f" (refused {v['refusals']} time(s) first)" if v["refusals"] else ""
        console.print(Text.assemble((f"{mark} {name} gate: ", f"bold {style}"), shown(v["reason"]), refusals))
    if r.get("error"):
        console.print(shown(f"error: {r['error']}", "bold red"))
    outcome = r["outcome"]
    if outcome == "verified":
        console.print(Text.assemble(("result: ", "bold"), ("verified", "bold green"), shown(f" ({r['reason']})")))
    elif outcome == "unchanged":
        console.print(Text.assemble(("result: ", "bold"), ("unchanged", "bold yellow"),
                                    shown(f": {r['reason']}; nothing was verified, whatever the model said")))
    else:
        console.print(Text.assemble(("result: ", "bold"), ("NOT verified", "bold red"), shown(f": {r['reason']}")))
    if r["ended_by"] in ("interrupted", "refused", "rounds", "stuck", "error"):
        console.print(Text("continue this session with: tomo run --continue \"...\"", style="dim"))
    sys.stdout.flush()
