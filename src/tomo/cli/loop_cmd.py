"""`tomo replay`: show a saved run transcript (written by ``JsonlSink``) the way the terminal showed it live."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomo.cli import app
from tomo.cli.render import RichSink, events_from_jsonl, replay
from tomo.cli.rows import rich_console
from tomo.errors import ConfigError
from tomo.events import BlockOutput, BlockStarted, GateBlocked, TurnEnded, read_jsonl

_RUN_KINDS = {cls.kind for cls in (BlockStarted, BlockOutput, GateBlocked, TurnEnded)}


@app.command("replay")
def replay_cmd(
    transcript: Path = typer.Argument(..., metavar="FILE", help="a .jsonl transcript written by a run"),
    as_json: bool = typer.Option(False, "--json", help="print the events as JSON lines instead of the log"),
) -> None:
    """Show a saved run transcript as the compact log (or its events as JSON)."""
    if transcript.is_dir():
        found = sorted(p.name for p in transcript.glob("*.jsonl"))[:3]
        raise ConfigError(f"transcript {transcript} is a directory, not a transcript file",
                          hint="give the path of a .jsonl file written by --transcript"
                               + (f", e.g. one of: {', '.join(found)}" if found else ""))
    if not transcript.is_file():
        raise ConfigError(f"transcript {transcript} does not exist", hint="give the path of a .jsonl transcript")
    if as_json:
        for event in events_from_jsonl(transcript):
            typer.echo(json.dumps(event.to_dict(), default=str))
        return
    from tomo.cli.run_cmd import RunSink  # (here: replay of an assist transcript needs none of run)

    console = rich_console(highlight=False)
    # A transcript of `tomo run` (oi blocks, gates, the turn's end) is shown by run's own log, with its summary.
    sink = RunSink(console, replay=True) if _RUN_KINDS & {row.get("kind") for row in read_jsonl(transcript)} \
        else RichSink(console)
    try:
        replay(transcript, sink)
    finally:
        sink.close()
