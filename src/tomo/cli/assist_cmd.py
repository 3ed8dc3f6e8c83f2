"""`tomo assist TASK`: a sentence in, graph operations out; the user sees every payload, the model only receipts."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomo.assist import AssistOptions, Session, run_sync
from tomo.assist.engine import Summary
from tomo.cli import app
from tomo.cli.assist_render import AssistSink, print_report
from tomo.cli.help_names import model_help
from tomo.cli.rows import rich_console
from tomo.cli.safe import esc, text
from tomo.config import load_settings
from tomo.errors import ConfigError
from tomo.events import JsonlSink, ListSink, PayloadRendered, Sink, TeeSink
from tomo.models.base import Model
from tomo.models.scripted import ScriptedModel
from tomo.prism import Graph


def resolve_model(spec: str | None, root: Path | None = None, sink: Sink | None = None) -> Model:
    """The model for ``--model SPEC`` (or the detected default), with the settings of ``root``'s tomo.toml. Uses the
    gateway when this tomo has it; without it only ``scripted:PATH`` works, and any other spec is a clear error."""
    try:
        from tomo.models.gateway import detect_default_model, model_from_spec
    except ImportError:
        if spec and spec.startswith("scripted:"):
            return ScriptedModel.from_file(spec.removeprefix("scripted:"))
        raise ConfigError(f"model spec {spec!r} needs the model gateway, which this tomo does not include yet"
                          if spec else "no --model given, and this tomo has no model gateway to detect one",
                          hint="pass --model scripted:PATH (a recorded session), or install a tomo with "
                               "tomo.models.gateway for ollama:/claude:/openai: models") from None
    settings = load_settings(root)
    # The model gets the run's sink too: its retries and Ollama's context-window warning are for the user's eyes.
    return model_from_spec(spec or detect_default_model(settings), settings, sink=sink)


@app.command("assist")
def assist_cmd(
    task: str = typer.Argument(..., help='What to do, e.g. "rename OrderLine.total to subtotal everywhere".'),
    model: str | None = typer.Option(None, "--model", metavar="SPEC", help=model_help()),
    root: Path = typer.Option(Path("."), "--root", metavar="DIR", help="Repository root (default: current directory)."),
    apply: bool = typer.Option(False, "--apply", help="Write the confirmed edits of the plan the model chose."),
    apply_ambiguous: bool = typer.Option(False, "--apply-ambiguous",
                                         help="Also write the ambiguous edits (implies --apply)."),
    verify: str | None = typer.Option(None, "--verify", metavar="CMD",
                                      help="Command run in DIR after writing, e.g. 'python -m pytest -q'; failing "
                                           "rolls the edits back."),
    keep: bool = typer.Option(False, "--keep", help="Keep the edits even when --verify fails."),
    max_turns: int = typer.Option(20, "--max-turns", min=1, metavar="N", help="Stop the model after this many steps."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (summary and every payload)."),
    transcript: Path | None = typer.Option(
        None, "--transcript", metavar="FILE",
        help="Also write every event to this JSONL file (show it again with tomo replay)."
    ),
) -> None:
    """Do a code-graph task with a model: it only calls graph operations and reads receipts; edits apply by handle.

    Exit codes: 0 done (verified); 3 not done (unverified, unchanged with a gate or --apply, a limit);
    1 an error; 2 a usage error; 130 Ctrl-C.
    """
    if not root.is_dir():
        raise ConfigError(f"--root {root} is not a directory", hint="pass the repository's root directory")
    if transcript is not None and (transcript.is_dir() or not transcript.parent.is_dir()):
        raise ConfigError(f"--transcript {transcript} is a directory" if transcript.is_dir()
                          else f"--transcript {transcript}: directory {transcript.parent} does not exist",
                          hint="pass a file path in an existing directory, e.g. --transcript run.jsonl")
    options = AssistOptions(root=root.resolve(), apply=apply or apply_ambiguous, apply_ambiguous=apply_ambiguous,
                            verify=verify, keep=keep, max_turns=max_turns, stream=True)
    console = rich_console(highlight=False)
    events = ListSink()
    shown: Sink = events if as_json else AssistSink(console)
    applied = events if as_json else ListSink()  # what Ctrl-C leaves written is said from these events
    sink = TeeSink(shown) if as_json else TeeSink(shown, applied)
    chosen = resolve_model(model, root.resolve(), sink)
    if as_json:
        graph = Graph.open(root)
    else:
        with console.status(f"indexing {esc(options.root)} …"):
            graph = Graph.open(root)
    session = Session(graph, sink=sink)
    # The transcript is created only now that the run starts: a bad --model or root leaves no empty file behind.
    recorder = JsonlSink(transcript) if transcript else None
    if recorder:
        sink.sinks = (*sink.sinks, recorder)
    try:
        summary = run_sync(task, chosen, session.invoke, options, sink)
    except KeyboardInterrupt:
        # typer turns Ctrl-C into a silent exit 130: say, in one line, what the run leaves written
        rich_console(stderr=True, highlight=False).print(text(_interrupted(applied)), soft_wrap=True)
        raise typer.Exit(130) from None
    finally:
        session.close()
        if isinstance(shown, AssistSink):
            shown.close()
        if recorder:
            recorder.close()
    if as_json:
        payloads = [{"handle": e.handle, "operation": e.operation, "payload": e.payload}
                    for e in events.of(PayloadRendered)]
        typer.echo(json.dumps({"summary": summary.to_dict(), "payloads": payloads}, indent=2, default=str))
    else:
        print_report(console, summary, options)
    code, failure = exit_status(summary, options)
    if failure:
        typer.echo(f"tomo assist: {failure}", err=True)
    if code:
        raise typer.Exit(code)


def _interrupted(events: ListSink) -> str:
    """What a Ctrl-C leaves: the files a plan the model applied before it wrote (never verified: verify runs after
    the model's loop), or none."""
    written = sorted({path for e in events.of(PayloadRendered) if e.operation == "apply_plan"
                      and e.payload.get("written") for path in e.payload.get("files", [])})
    if not written:
        return "interrupted (Ctrl-C); no file was written"
    return (f"interrupted (Ctrl-C); a plan applied before it left {len(written)} file(s) written and not verified: "
            + ", ".join(written))


def exit_status(summary: Summary, options: AssistOptions) -> tuple[int, str | None]:
    """The exit code and why, by the table shared with run and team (tomo.cli.EXIT_CODES): 1 when the model or its
    server failed or its last reply was not a whole answer; 3 when the work asked for is not done (``--apply`` and
    nothing is written now: nothing applied, an apply refused as half a rename, edits rolled back after a failed
    verify; a failed verify kept with --keep; a limit stopped the model); else 0."""
    if summary.error:
        return 1, f"the model failed: {summary.error}"
    if not summary.completed and not summary.stopped_by:
        return 1, ("the model's last reply was not a whole answer (cut off, filtered, or broken off by the server "
                   "mid-reply; the warning above says which)")
    if summary.left_unrenamed:  # --apply was asked for and refused: the program would have been half-renamed
        return 3, f"nothing was written: {summary.left_unrenamed} (pass --apply-ambiguous to write them too)"
    if summary.verify is not None and not summary.verify.passed:
        kept = "the edits were kept (--keep)" if not summary.rolled_back else "every edit was rolled back"
        return 3, f"verify failed (exit {summary.verify.exit_code}); {kept}"
    if summary.stopped_by:
        return 3, f"the model was stopped by the {summary.stopped_by} limit"
    if options.writes and not summary.written:
        return 3, "nothing was applied: the model made no plan that could be written (--apply was given)"
    return 0, None
