"""`tomo run`, `tomo assist` and `tomo replay` in a subprocess against a loopback OpenAI-compatible server, as a user
runs them: what the logs, transcripts and replays say about the model, and how --json asks it.

The model is named by the spec a user can paste back into ``--model`` (``openai-compat:URL#NAME``, not
``openai-compat:NAME``, which names no server). Token counts are marked ``~`` exactly when tomo estimated them (the
server sent no usage), and the notice that says so comes once; a server that reports usage gets neither.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from loopback import Canned, LoopbackServer, Received, openai_stream, sse

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
ENV = {"TOMO_LOCAL_SERVERS": "", "TOMO_MODEL": ""}
FIND = {"query": "OrderLine.total"}
ESTIMATED_NOTICE = "reports no token usage"


def stream(text: list[str], calls: list[tuple[str, str, list[str]]], finish: str, *, usage: bool) -> Canned:
    chunks = openai_stream(text, calls, finish)
    if not usage:  # llama-cpp-python's streams: no usage chunk, whatever stream_options asked for
        chunks = [c for c in chunks if '"usage"' not in c]
    return sse(chunks)


class Server:
    """A loopback server answering chat requests in order; anything else (the tokenizer extras) is a 404."""

    def __init__(self, *replies: Canned) -> None:
        self.replies = list(replies)
        self.loopback = LoopbackServer(self._answer)

    def _answer(self, received: Received) -> Canned:
        if received.path.endswith("/chat/completions") and self.replies:
            return self.replies.pop(0)
        return Canned(404, {"error": {"message": "not here"}})

    @property
    def spec(self) -> str:
        return f"openai-compat:{self.loopback.url}/v1#smol"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    dest = tmp_path / "shop"
    shutil.copytree(EXAMPLE, dest)
    return dest


@pytest.fixture
def served() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(*replies: Canned) -> Server:
        server = Server(*replies)
        server.loopback.__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.loopback.__exit__(None, None, None)


def rows(transcript: Path, kind: str) -> list[dict[str, Any]]:
    return [row for line in transcript.read_text().splitlines() if (row := json.loads(line))["kind"] == kind]


def test_assist_names_the_spec_and_marks_estimated_counts(run_tomo: Callable[..., Any], shop: Path, tmp_path: Path,
                                                          served: Callable[..., Server]) -> None:
    server = served(stream([], [("c1", "find_symbol", [json.dumps(FIND)])], "tool_calls", usage=False),
                    stream(["It is in shop/lines.py."], [], "stop", usage=False))
    transcript = tmp_path / "assist.jsonl"
    done = run_tomo("assist", "where is OrderLine.total defined?", "--model", server.spec, "--root", str(shop),
                    "--transcript", str(transcript), env=ENV)
    log = done.stdout
    steps = [line for line in log.splitlines() if line.startswith("step ")]
    assert len(steps) == 2, log
    assert all(line.startswith(f"step {n} · {server.spec} · ") and " · ~" in line and "/ ~" in line
               for n, line in enumerate(steps, 1)), steps
    assert log.count(ESTIMATED_NOTICE) == 1 and "tokens: ~" in log
    called = rows(transcript, "model_called")
    assert [(r["model"], r["estimated"]) for r in called] == [(server.spec, True)] * 2
    shown = run_tomo("replay", str(transcript)).stdout
    assert f"step 1 · {server.spec} · " in shown and f"step 2 · {server.spec} · " in shown
    assert shown.count(ESTIMATED_NOTICE) == 1 and "tokens: ~" in shown


def test_assist_with_usage_reported_has_no_tilde_and_no_notice(run_tomo: Callable[..., Any], shop: Path,
                                                               served: Callable[..., Server]) -> None:
    server = served(stream([], [("c1", "find_symbol", [json.dumps(FIND)])], "tool_calls", usage=True),
                    stream(["It is in shop/lines.py."], [], "stop", usage=True))
    done = run_tomo("assist", "where is OrderLine.total defined?", "--model", server.spec, "--root", str(shop),
                    env=ENV)
    steps = [line for line in done.stdout.splitlines() if line.startswith("step ")]
    assert len(steps) == 2 and all(line.startswith(f"step {n} · {server.spec} · ") and "· 11 in / 7 out ·" in line
                                   for n, line in enumerate(steps, 1)), steps
    assert "~" not in done.stdout and ESTIMATED_NOTICE not in done.stdout + done.stderr
    assert "tokens: 22 in · 14 out · 36 total" in done.stdout


def run_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return root


def test_run_names_the_spec_in_its_log_transcript_session_and_replay(run_tomo: Callable[..., Any], tmp_path: Path,
                                                                     served: Callable[..., Server]) -> None:
    server = served(stream(["Nothing to change: add already adds."], [], "stop", usage=True))
    transcript = tmp_path / "run.jsonl"
    root = run_project(tmp_path)
    done = run_tomo("run", "check add", "--model", server.spec, "--root", str(root), "--sandbox", "local", "--yes",
                    "--no-context", "--transcript", str(transcript), env=ENV)
    assert f"step 1 · {server.spec} · " in done.stdout, (done.stdout, done.stderr)
    assert "11 in / 7 out" in done.stdout and "~" not in done.stdout and ESTIMATED_NOTICE not in done.stdout
    assert [r["model"] for r in rows(transcript, "model_called")] == [server.spec]
    [session] = (root / ".tomo" / "sessions").glob("*.json")
    assert json.loads(session.read_text())["meta"]["model"] == server.spec
    assert f"step 1 · {server.spec} · " in run_tomo("replay", str(transcript)).stdout


def test_run_marks_estimated_counts_as_the_notice_says(run_tomo: Callable[..., Any], tmp_path: Path,
                                                       served: Callable[..., Server]) -> None:
    server = served(stream(["Nothing to change: add already adds."], [], "stop", usage=False))
    done = run_tomo("run", "check add", "--model", server.spec, "--root", str(run_project(tmp_path)), "--sandbox",
                    "local", "--yes", "--no-context", env=ENV)
    assert done.stdout.count(ESTIMATED_NOTICE) == 1, (done.stdout, done.stderr)
    [step] = [line for line in done.stdout.splitlines() if line.startswith("step ")]
    assert " · ~" in step and "/ ~" in step and "tokens: ~" in done.stdout


# ---- --json streams too ------------------------------------------------------------------------------------------
# A long generation asked for unstreamed is one request that must finish within the read timeout; streamed, every
# chunk resets it. --json changes what stdout prints, not how the model is asked.


def test_run_json_streams_and_prints_only_the_json(run_tomo: Callable[..., Any], tmp_path: Path,
                                                   served: Callable[..., Server]) -> None:
    server = served(stream(["Nothing to change: add already adds."], [], "stop", usage=True))
    done = run_tomo("run", "check add", "--model", server.spec, "--root", str(run_project(tmp_path)), "--sandbox",
                    "local", "--yes", "--no-context", "--json", env=ENV)
    [post] = [r.json for r in server.loopback.requests if r.path.endswith("/chat/completions")]
    assert post["stream"] is True and post["stream_options"] == {"include_usage": True}
    result = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert result["rounds"] == 1 and result["ended_by"] == "model"
    assert f"step 1 · {server.spec} · " in done.stderr  # the live log went to stderr


def test_assist_json_streams_and_prints_only_the_json(run_tomo: Callable[..., Any], shop: Path,
                                                      served: Callable[..., Server]) -> None:
    server = served(stream([], [("c1", "find_symbol", [json.dumps(FIND)])], "tool_calls", usage=True),
                    stream(["It is in shop/lines.py."], [], "stop", usage=True))
    done = run_tomo("assist", "where is OrderLine.total defined?", "--model", server.spec, "--root", str(shop),
                    "--json", env=ENV)
    posts = [r.json for r in server.loopback.requests if r.path.endswith("/chat/completions")]
    assert [p["stream"] for p in posts] == [True, True]
    summary = json.loads(done.stdout)["summary"]
    assert summary["steps"] == 2 and summary["model"] == server.spec
