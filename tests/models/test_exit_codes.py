"""Exit codes are honest: `tomo assist` against a real HTTP server that fails in each way a server does, in a
subprocess, as a user runs it. A run that ended because the model or its server failed never exits 0."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loopback import Canned, LoopbackServer, openai_body, openai_stream, sse

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
TASK = "rename OrderLine.total to subtotal everywhere"
ENV = {"TOMO_LOCAL_SERVERS": "", "TOMO_MODEL": ""}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    dest = tmp_path / "shop"
    shutil.copytree(EXAMPLE, dest)
    return dest


def spec(server: LoopbackServer) -> str:
    return f"openai-compat:{server.url}/v1#smol"


def find_call(stream: bool) -> Canned:
    args = {"query": "OrderLine.total"}
    if stream:
        return sse(openai_stream([], [("c1", "find_symbol", [json.dumps(args)])], "tool_calls"))
    return Canned(200, openai_body("", [("c1", "find_symbol", args)], "tool_calls"))


def test_a_reply_that_breaks_off_mid_stream_exits_1_and_says_why(run_tomo: Callable[..., Any], shop: Path) -> None:
    broken = openai_stream(["I will rena"], [], "stop")[:2]  # the text starts, then the stream ends: no finish
    with LoopbackServer() as server:
        server.push(sse(broken))
        done = run_tomo("assist", TASK, "--model", spec(server), "--root", str(shop), env=ENV)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "broke off" in done.stdout and "not a whole answer" in done.stderr


def test_a_server_that_fails_after_a_tool_ran_exits_1_with_the_error(run_tomo: Callable[..., Any], shop: Path) -> None:
    with LoopbackServer() as server:
        failures = [Canned(503, {"error": {"message": f"overloaded {i}"}}) for i in range(3)]
        server.push(find_call(stream=False), *failures)
        done = run_tomo("assist", TASK, "--model", spec(server), "--root", str(shop), "--json", env=ENV)
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["ok"] is False and "overloaded 2" in summary["error"] and summary["steps"] == 1
    assert "the model failed" in done.stderr and "overloaded 2" in done.stderr


def test_a_server_that_is_not_running_exits_2_at_once_with_how_to_start_it(run_tomo: Callable[..., Any],
                                                                          shop: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run_tomo("assist", TASK, "--model", f"openai-compat:http://127.0.0.1:{port}/v1#smol", "--root", str(shop),
                    env=ENV)
    assert done.returncode == 2 and "nothing is listening at openai-compat" in done.stderr
    assert "retry 1 of" not in done.stdout  # no "retry 1 of 2" on a refused local port
    assert "hint:" in done.stderr


def test_a_whole_answer_exits_0(run_tomo: Callable[..., Any], shop: Path) -> None:
    with LoopbackServer() as server:
        server.push(find_call(stream=True), sse(openai_stream(["Nothing to do."], [], "stop")))
        done = run_tomo("assist", TASK, "--model", spec(server), "--root", str(shop), env=ENV)
    assert done.returncode == 0, (done.stdout, done.stderr)


def test_a_slow_local_server_is_asked_once_and_the_error_names_the_setting(run_tomo: Callable[..., Any],
                                                                           shop: Path) -> None:
    # A local server still generating when the read timeout hits: no second identical request queued behind it.
    (shop / "tomo.toml").write_text("[providers.openai-compat]\ntimeout_s = 0.5\n")
    with LoopbackServer() as server:
        server.push(*[Canned(delay_s=3.0, body=openai_body("late"))] * 3)
        done = run_tomo("assist", TASK, "--model", spec(server), "--root", str(shop), env=ENV)
        posts = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert done.returncode != 0, (done.stdout, done.stderr)  # a failure, whatever its code
    assert len(posts) == 1
    assert "did not answer within 0.5 s" in done.stdout + done.stderr
    assert "raise timeout_s under [providers.openai-compat]" in done.stdout + done.stderr
