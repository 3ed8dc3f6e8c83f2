"""The rich renderer: a run rendered into a Console writing to a StringIO, asserted on its text."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from tomo.agents import Agent
from tomo.cli.render import RichSink, events_from_jsonl, replay
from tomo.events import JsonlSink, ListSink, Notice, StageDone, TeeSink
from tomo.loop import Limits, run
from tomo.models.scripted import ScriptedModel
from tomo.tools import Caller, Registry


def registry() -> Registry:
    reg = Registry()

    def refs(symbol: str) -> list[str]:
        """Find references."""
        return [f"src/m{i}.py:{i}" for i in range(500)]

    def delete_job(job_id: int) -> str:
        """Delete."""
        return "deleted"

    reg.register(refs, cap=200, unit="references")
    reg.register(delete_job)
    return reg


def console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=120, color_system=None, force_terminal=False), buf


SCRIPT = [
    {"content": "Looking.", "tool_calls": [{"name": "refs", "args": {"symbol": "a.b"}},
                                           {"name": "delete_job", "args": {"job_id": 4}}],
     "usage": {"input_tokens": 1200, "output_tokens": 30}},
    {"tool_calls": [{"name": "refs", "args": {"symbol": "c"}}], "usage": {"input_tokens": 1500, "output_tokens": 9}},
    {"content": "unreachable"},
]


async def test_a_run_renders_as_a_compact_log(tmp_path: Path) -> None:
    con, buf = console()
    sink = RichSink(con)
    agent = Agent("reader", tools=("refs",))
    transcript = tmp_path / "t.jsonl"
    jsonl = JsonlSink(transcript)
    await run(agent, ScriptedModel(SCRIPT), registry(), Caller("ann", 1), "go", Limits(max_steps=2),
              TeeSink(sink, jsonl))
    sink.close()
    jsonl.close()
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("step 1 · scripted · ") and lines[0].endswith("1,200 in / 30 out · tool_calls")
    assert lines[1] == "reader: Looking."
    assert lines[2].startswith('  ✓ refs(symbol="a.b") → ') and "of 500 references (capped)" in lines[2]
    assert lines[3].startswith("  ⚠ refs: the model saw ") and lines[3].endswith("of 500 references (result capped)")
    assert lines[4] == ("  ⊘ refused delete_job: tool 'delete_job' is not available to agent 'reader'; "
                        "available: refs")
    assert "■ reader stopped: step limit reached (2)" in lines
    assert lines[-1] == "tokens: 2,700 in · 39 out · 2,739 total"
    assert "thinking" not in buf.getvalue()  # the status line is live only; it leaves nothing in the log

    # the transcript replays to the same log
    con2, buf2 = console()
    assert replay(transcript, RichSink(con2)) == len(list(events_from_jsonl(transcript)))
    assert _strip_times(buf2.getvalue()) == _strip_times(buf.getvalue())


def test_truncation_notices_and_unknown_events_are_shown() -> None:
    con, buf = console()
    sink = RichSink(con)
    model = ScriptedModel([{"content": "half an ans", "finish": "length"}])
    events = ListSink()
    from tomo.loop import run_sync

    run_sync(Agent("w"), model, registry(), Caller("ann", 1), "go", sink=TeeSink(sink, events))
    sink.emit(Notice("warning", "fell back to regex"))
    sink.emit(StageDone("job1", "review", workers=3, tokens=10))
    text = buf.getvalue()
    assert "⚠ w: the reply at step 1 was cut off at the token limit; it is incomplete" in text
    assert "warning: fell back to regex" in text
    assert "stage_done: job_id=job1, stage=review, workers=3, tokens=10" in text


def test_a_live_status_is_shown_on_a_terminal_while_the_model_thinks() -> None:
    buf = io.StringIO()
    con = Console(file=buf, width=100, force_terminal=True, color_system=None)
    sink = RichSink(con)
    model = ScriptedModel([{"content": "done"}])
    from tomo.loop import run_sync

    run_sync(Agent("w"), model, registry(), Caller("ann", 1), "go", sink=sink)
    sink.close()
    assert "w · scripted is thinking (step 1)…" in buf.getvalue()


def _strip_times(text: str) -> str:
    import re

    return re.sub(r"\d+\.\d+s", "#s", text)


def test_tomo_replay_shows_a_saved_transcript(tmp_path: Path, run_tomo) -> None:  # type: ignore[no-untyped-def]
    from tomo.loop import run_sync

    transcript = tmp_path / "t.jsonl"
    sink = JsonlSink(transcript)
    run_sync(Agent("reader", tools=("refs",)), ScriptedModel(SCRIPT), registry(), Caller("ann", 1), "go",
             Limits(max_steps=2), sink)
    sink.close()
    shown = run_tomo("replay", str(transcript))
    assert shown.returncode == 0, shown.stderr
    assert "⊘ refused delete_job" in shown.stdout and "■ reader stopped: step limit reached (2)" in shown.stdout
    as_json = run_tomo("replay", str(transcript), "--json")
    assert [line for line in as_json.stdout.splitlines() if '"tool_refused"' in line]
    missing = run_tomo("replay", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "hint:" in missing.stderr
    a_dir = run_tomo("replay", str(tmp_path))  # a directory is not "missing": say what it is and what to pass
    assert a_dir.returncode == 2 and "does not exist" not in a_dir.stderr, a_dir.stderr
    assert "is a directory, not a transcript file" in a_dir.stderr and "e.g. one of: t.jsonl" in a_dir.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text(transcript.read_text().splitlines()[0] + "\n{not json\n")
    for args in (("replay", str(broken)), ("replay", str(broken), "--json")):
        bad = run_tomo(*args)
        assert bad.returncode == 2 and "is not a JSONL transcript: line 2" in bad.stderr


def test_streamed_text_shows_in_the_live_status_and_is_logged_once() -> None:
    from tomo.loop import run_sync

    text = "Looked at the graph; the caller is in src/app.py."
    live_buf = io.StringIO()
    live = RichSink(Console(file=live_buf, width=100, force_terminal=True, color_system=None))
    run_sync(Agent("w"), ScriptedModel([{"content": text}]), registry(), Caller("ann", 1), "go", sink=live,
             stream=True)
    live.close()
    assert "w is writing: …" in live_buf.getvalue()
    con, buf = console()
    log = RichSink(con)
    run_sync(Agent("w"), ScriptedModel([{"content": text}]), registry(), Caller("ann", 1), "go", sink=log,
             stream=True)
    assert buf.getvalue().count(text) == 1 and "writing" not in buf.getvalue()


def test_a_long_call_or_failure_is_whole_in_a_pipe_and_one_cut_line_on_a_terminal() -> None:
    from tomo.events import ModelFailed, ToolCalled, ToolRefused

    long = "x" * 150
    events = [ToolCalled("a", "refs", {"symbol": "a.b"}, True, f"refs r1: {long}"),
              ToolRefused("a", "grep", f"refused: {long}"),
              ModelFailed("a", 2, f"openai-compat (http://127.0.0.1:8012/v1) did not answer: {long}")]
    piped = io.StringIO()
    sink = RichSink(Console(file=piped, width=80, color_system=None, force_terminal=False, soft_wrap=True))
    for event in events:
        sink.emit(event)
    lines = piped.getvalue().splitlines()
    assert len(lines) == 3 and all(line.endswith(long) for line in lines), lines
    terminal = io.StringIO()
    sink = RichSink(Console(file=terminal, width=80, color_system=None, force_terminal=True))
    for event in events:
        sink.emit(event)
    lines = terminal.getvalue().splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 and line.endswith("…") for line in lines), lines
