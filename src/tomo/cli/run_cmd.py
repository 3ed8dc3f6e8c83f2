"""`tomo run TASK`: the oi engine (code is the only action) or the tool loop, in the sandbox, behind the gates.

Exit codes, for scripts and CI: 0 when the turn ended and every gate that was on is satisfied; 3 when it ended with a
gate unsatisfied (the rounds ran out, the model stopped anyway, the user declined a block); 1 on an error (the model
failed, the sandbox could not start, a bad option); 130 when the user ended the turn with Ctrl-C. ``--json`` prints
one object: ``{"verified", "gates": {"exec", "repro"}, "rounds", "blocks", "files_changed", "session", "ended_by",
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
    Sink,
    TeeSink,
    TurnEnded,
)

EXIT_VERIFIED, EXIT_ERROR, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 3, 130
ENGINES = ("oi", "tools")


class RunSink(RichSink):
    """The log of ``tomo run``: each block before it runs, its output after, gate refusals; the rest as RichSink.

    Live, the summary is printed from the run's result once the turn is over; ``replay=True`` (``tomo replay`` of a
    transcript) prints it from the turn's ``TurnEnded`` instead, so a replay ends as the live log did."""

    def __init__(self, console: Console, *, replay: bool = False) -> None:
        super().__init__(console)
        self._handlers.update({BlockStarted: self._block, BlockOutput: self._output, CodeRan: lambda e: None,
                               GateBlocked: self._gate, TurnEnded: self._ended if replay else lambda e: None,
                               AssistantSaid: self._said_oi})

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
    model: str | None = typer.Option(None, "--model", help="Model spec (ollama:NAME, claude:NAME, openai:NAME, "
                                                            "scripted:PATH); default: detected."),
    root: Path = typer.Option(Path("."), "--root", help="The workspace: the project the model works on."),
    sandbox: str | None = typer.Option(None, "--sandbox", help="strict (bubblewrap) or local (unconfined); "
                                                               "default: \\[sandbox] kind, else strict."),
    exec_gate: bool = typer.Option(False, "--exec-gate", help="An edit must be executed by a passing check before "
                                                              "the turn can end."),
    repro: bool = typer.Option(False, "--repro", help="A fix must be preceded by a failing check in the same turn."),
    max_rounds: int = typer.Option(20, "--max-rounds", min=1, help="Model replies per turn, gate refusals included."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Run every block without asking."),
    lsp: str | None = typer.Option(None, "--lsp", help="Language server command for the context pack."),
    resume: bool = typer.Option(False, "--continue", help="Continue the last saved session of ROOT."),
    engine: str = typer.Option("oi", "--engine", help="oi (code blocks, the default) or tools (the tool loop)."),
    directive: str = typer.Option("", "--directive", help="Opt-in prompt directives: verify, repro (comma list)."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds one block may run (default: \\[sandbox])."),
    context: bool = typer.Option(True, "--context/--no-context", help="Inject the context pack on a new session."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object (the log goes to stderr)."),
    transcript: Path | None = typer.Option(None, "--transcript", help="Also write every event to this JSONL file."),
) -> None:
    """Do TASK with a model in the sandbox: it writes Python/bash blocks (or calls tools), tomo runs them.

    Exits 0 when verified, 3 when a gate stayed unsatisfied, 1 on an error, 130 on Ctrl-C.
    """
    console = rich_console(stderr=as_json, highlight=False)
    try:
        result = _run(task, model, root, sandbox, exec_gate, repro, max_rounds, yes, lsp, resume, engine, directive,
                      timeout, context, as_json, transcript, console)
    except TomoError as exc:
        report_error(exc)
        if as_json:
            typer.echo(json.dumps({"verified": False, "gates": {}, "rounds": 0, "blocks": 0, "files_changed": [],
                                   "session": None, "ended_by": "error", "error": exc.message}, indent=2))
        raise typer.Exit(EXIT_ERROR) from exc
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        _print_summary(console, result)
    raise typer.Exit(_exit_code(result))


def _exit_code(result: dict[str, Any]) -> int:
    if result["ended_by"] == "error":
        return EXIT_ERROR
    if result["ended_by"] == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_VERIFIED if result["verified"] else EXIT_UNVERIFIED


def _run(task: str, model_spec: str | None, root: Path, sandbox_kind: str | None, exec_gate: bool, repro: bool,
         max_rounds: int, yes: bool, lsp: str | None, resume: bool, engine: str, directive: str,
         timeout: float | None, context: bool, as_json: bool, transcript: Path | None,
         console: Console) -> dict[str, Any]:
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
        if engine == "oi":
            result = _run_oi(task, chosen, box, gate, root, lsp, max_rounds, exec_gate, repro, system, limits,
                             context, session, history, sink, stream=True)
        else:
            from tomo.oi.tools_engine import ToolsEngine

            tools = ToolsEngine(chosen, box, gate, root, max_rounds=max_rounds, exec_gate=exec_gate, repro=repro,
                                directives=directives, limits=limits,
                                checkpoint=lambda new: _checkpoint(session, history, new))
            result = asyncio.run(_with_interrupts(tools.turn(history, task, sink), tools.interrupt))
            result = _result(tools.last, session.id)
    finally:
        renderer.close()
        if recorder:
            recorder.close()
    session.meta["turns"].append({"task": task, **{k: result[k] for k in ("verified", "ended_by", "rounds", "blocks")}})
    session.save()
    return result


def _run_oi(task: str, chosen: Any, box: Any, gate: Any, root: Path, lsp: str | None, max_rounds: int,
            exec_gate: bool, repro: bool, system: str, limits: Any, context: bool, session: Any,
            history: list[Any], sink: Sink, *, stream: bool) -> dict[str, Any]:
    from tomo.oi.engine import Engine

    engine = Engine(chosen, box, gate, root, lsp, max_rounds, exec_gate, repro, system, limits=limits,
                    context=context, checkpoint=lambda new: _checkpoint(session, history, new), stream=stream)
    asyncio.run(_with_interrupts(engine.turn(history, task, sink), engine.interrupt))
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
    return {
        "verified": summary.verified,
        "gates": {name: v.to_dict() for name, v in summary.gates.items()},
        "rounds": summary.rounds,
        "blocks": summary.blocks,
        "files_changed": summary.files_changed,
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
    verdict = ("verified", "bold green") if r["verified"] else ("NOT verified", "bold red")
    console.print(Text.assemble(("result: ", "bold"), verdict))
    if r["ended_by"] in ("interrupted", "refused", "rounds", "error"):
        console.print(Text("continue this session with: tomo run --continue \"...\"", style="dim"))
    sys.stdout.flush()
