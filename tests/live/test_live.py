"""tomo against real servers and real small models (see conftest.py). The model's answers are never checked, only
what the harness does with them: every request answered, every call answered, limits honoured, usage counted (and
said to be estimated when the server gives none), and every claim true: the exit code, and "verified" against a
task's hidden oracle."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from live_support import SMOL, LiveServer, free_port, require_live

from tomo.agents import Agent
from tomo.events import LimitReached, ListSink, ModelCalled, Notice, ToolCalled, ToolRefused, UsageReported
from tomo.loop import Limits, Outcome, run
from tomo.models import Message, ReplyDone, TextDelta, ToolCall, ToolSpec
from tomo.models.messages import FINISHES
from tomo.tools import Caller, Registry, TenantId

HERE = Path(__file__).resolve().parent
SHOP = HERE.parents[1] / "examples" / "shop"
SRC = HERE.parents[1] / "src"
CALLER = Caller(user="ann", tenant=1147)
READ = ToolSpec("read_file", "Read a file of the project.",
                {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
SYSTEM = Message.system("You are a helpful assistant. Be brief.")


class Jobs:
    """Two tools whose handlers record who they ran for: what a refused call and an injected identity prove."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []
        self.registry = Registry()
        self.registry.register(self.list_jobs, unit="jobs")
        self.registry.register(self.delete_job)

    def list_jobs(self, tenant_id: TenantId) -> list[str]:
        """List the print jobs of your account."""
        self.ran.append(("list_jobs", tenant_id))
        return [f"job-{tenant_id}-1", f"job-{tenant_id}-2"]

    def delete_job(self, job_id: int) -> str:
        """Delete a print job by its number."""
        self.ran.append(("delete_job", job_id))
        return "deleted"


def every_call_answered(out: Outcome) -> None:
    """Each call of each assistant message has exactly one tool message with its id after it."""
    for i, message in enumerate(out.messages):
        for call in message.tool_calls:
            answers = [m for m in out.messages[i + 1:] if m.role == "tool" and m.tool_call_id == call.id]
            assert len(answers) == 1, f"call {call.id} ({call.name}) has {len(answers)} answers"


async def test_chat_answers_with_usage_from_the_server(live: LiveServer) -> None:
    reply = await live.client().chat([SYSTEM, Message.user("Say hello.")], max_tokens=24)
    assert reply.finish in FINISHES and reply.finish != "error"
    assert reply.usage.input_tokens > 0 and not reply.usage.estimated  # whole replies carry usage here


async def test_a_stream_is_whole_and_its_missing_usage_is_counted_and_marked(live: LiveServer) -> None:
    sink = ListSink()
    model = live.client(sink=sink)
    events = [e async for e in model.stream([SYSTEM, Message.user("Count from one to five.")], max_tokens=24)]
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.reply.finish in ("stop", "length")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == done.reply.text
    assert done.reply.usage.input_tokens > 0
    if model.profile.stream_usage == "missing":  # what llama-cpp-python does: then tomo counts, and says so
        assert done.reply.usage.estimated and model.profile.tokenizer == "yes"
        assert any("reports no token usage" in n.text for n in sink.of(Notice))
    else:
        assert not done.reply.usage.estimated


async def test_a_tool_run_goes_past_its_first_call(live: LiveServer) -> None:
    """Step 2 of every tool run sends an assistant message that carries a call: the server must take it."""
    call = ToolCall("call_1", "read_file", {"path": "shop/orders.py"})
    history = [SYSTEM, Message.user("What is in shop/orders.py?"), Message.assistant("", [call]),
               Message.tool(call, "class OrderLine:\n    total: int\n")]
    reply = await live.client().chat(history, [READ], max_tokens=32)
    assert reply.finish in FINISHES and reply.finish != "error"


async def test_a_forced_call_with_one_tool_comes_back_as_a_call(fc: LiveServer) -> None:
    sink = ListSink()
    model = fc.client(sink=sink)
    reply = await model.chat([SYSTEM, Message.user("Read shop/orders.py.")], [READ], force_tools=True, max_tokens=64)
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    if model.profile.required == "rejected":  # llama-cpp-python asserts on "required": tomo named the tool instead
        assert model.profile.named == "works"
        assert any('refused tool_choice "required"' in n.text for n in sink.of(Notice))
    else:  # a server that took "required" and enforced it
        assert model.profile.required == "works"


async def test_a_forced_call_the_server_cannot_enforce_is_noticed(plain: LiveServer) -> None:
    sink = ListSink()
    model = plain.client(sink=sink)
    reply = await model.chat([SYSTEM, Message.user("Read shop/orders.py.")], [READ], force_tools=True, max_tokens=48)
    # The named re-ask is enforced by grammar even on this server, so a call comes back either way.
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    if model.profile.required == "ignored":  # "required" came back without a call: said, then the tool was named
        assert model.profile.named == "works"
        assert any('accepts tool_choice "required" but does not enforce it' in n.text for n in sink.of(Notice))
    else:  # the model wrote the call as text by itself under "required", and tomo recovered it
        assert model.profile.required == "works" and reply.tool_calls[0].id.startswith("recovered")


async def test_the_loop_runs_several_steps_and_answers_every_call(fc: LiveServer) -> None:
    jobs = Jobs()
    agent = Agent("clerk", prompt="You manage print jobs. Use the tools.", tools=("list_jobs",), force_tools=True)
    sink = ListSink()
    out = await run(agent, fc.client(sink=sink), jobs.registry, CALLER, "Which print jobs do I have?",
                    Limits(max_steps=2, max_reply_tokens=32), sink)
    assert out.steps == 2 and out.tool_calls >= 1  # the forced first call, then the step that reads its result
    every_call_answered(out)
    assert jobs.ran and all(who == 1147 for name, who in jobs.ran if name == "list_jobs")  # injected, never the model's
    assert len(sink.of(ToolCalled)) == out.tool_calls


async def test_a_refused_tool_never_runs_and_the_run_goes_on(fc: LiveServer) -> None:
    jobs = Jobs()
    agent = Agent("reader", prompt="You manage print jobs.", tools=("delete_job",), force_tools=True)
    object.__setattr__(agent, "allowed", frozenset())  # offered, then taken away: the allow-list decides
    sink = ListSink()
    out = await run(agent, fc.client(), jobs.registry, CALLER, "Delete print job 3.",
                    Limits(max_steps=2, max_reply_tokens=48), sink)
    assert jobs.ran == [] and sink.of(ToolRefused) and out.steps >= 1
    every_call_answered(out)


async def test_a_token_budget_stops_a_streamed_run_on_a_server_without_stream_usage(fc: LiveServer) -> None:
    jobs = Jobs()
    agent = Agent("clerk", prompt="You manage print jobs.", tools=("list_jobs",), force_tools=True)
    sink = ListSink()
    out = await run(agent, fc.client(), jobs.registry, CALLER, "Which print jobs do I have?",
                    Limits(max_steps=5, max_tokens_total=60, max_reply_tokens=48), sink, stream=True)
    assert out.stopped_by == "tokens" and out.steps == 1 and out.usage.total >= 60
    assert [e.limit for e in sink.of(LimitReached)] == ["tokens"]
    assert out.usage.estimated == sink.of(UsageReported)[-1].estimated
    every_call_answered(out)


def test_tomo_assist_end_to_end_exits_true(plain: LiveServer, run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    """On the template server only: with function calling, assist's eight graph tools make a prompt of about 1,000
    tokens a step, which this tier cannot afford on a shared machine (bench/live_model.py covers tools at length)."""
    shop = tmp_path / "shop"
    shutil.copytree(SHOP, shop)
    done = run_tomo("assist", "rename OrderLine.total to subtotal everywhere", "--model", plain.spec, "--root",
                    str(shop), "--max-turns", "1", "--json", env={"TOMO_LOCAL_SERVERS": ""}, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), (done.returncode, done.stderr[-3000:])  # 2: tomo failed against a good server
    summary = json.loads(done.stdout)["summary"]
    honest = summary["ok"] and summary["completed"] and not summary["stopped_by"]
    assert done.returncode == (0 if honest else 1), (done.returncode, summary)
    assert summary["steps"] <= 1


def test_tomo_run_end_to_end_exits_true(plain: LiveServer, run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    """The oi engine: the model writes blocks, tomo runs them in the sandbox; the exit code follows the result."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "greet.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    done = run_tomo("run", "Print the result of greet('ann') from greet.py.", "--model", plain.spec, "--root",
                    str(work), "--sandbox", "local", "--yes", "--max-rounds", "2", "--no-context", "--json",
                    env={"TOMO_LOCAL_SERVERS": ""}, timeout=300)
    # The log shows the blocks' own output, which may hold the model's tracebacks; tomo's would name its files.
    assert not re.search(r'File "[^"]*[/\\]tomo[/\\]', done.stderr), done.stderr
    result = json.loads(done.stdout)
    assert result["ended_by"] in ("model", "rounds") and result["error"] is None, result  # a good server: no error
    assert done.returncode == (0 if result["verified"] else 3), (done.returncode, result)
    assert result["rounds"] <= 2


# ---- real models that speak, call tools and write code (Qwen2.5-Coder) ------------------------------------------


async def test_a_real_model_speaks_within_its_cap_and_its_usage_is_the_servers(qwen_small: LiveServer) -> None:
    reply = await qwen_small.client().chat([SYSTEM, Message.user("Write a Python function add(a, b).")],
                                           max_tokens=48)
    assert reply.finish in ("stop", "length") and reply.text.strip()
    assert 0 < reply.usage.output_tokens <= 48 and reply.usage.input_tokens > 0 and not reply.usage.estimated


def test_the_server_runs_amx_safe(qwen_small: LiveServer) -> None:
    """tomo's wrapper turns llama.cpp's extra buffer types off (issue 27): with them, a Q4_K model is repacked into
    CPU_REPACK buffers on any x86-64 with AVX2, and into AMX ones where the CPU reports AMX (a VM that reports it
    without granting it dies). llama.cpp's verbose log names every model buffer it allocates."""
    log = qwen_small.log.read_text(errors="replace")
    assert "CPU_Mapped model buffer size" in log  # the log is the verbose one: it would name a repacked buffer
    assert not re.search(r"(CPU_REPACK|AMX) model buffer", log)


async def test_a_real_tool_call_reaches_its_handler_and_is_answered(qwen: LiveServer) -> None:
    jobs = Jobs()
    agent = Agent("clerk", prompt="You manage print jobs. Use the tools.", tools=("list_jobs",), force_tools=True)
    sink = ListSink()
    out = await run(agent, qwen.client(sink=sink), jobs.registry, CALLER, "Which print jobs do I have?",
                    Limits(max_steps=3, max_reply_tokens=96), sink)
    assert ("list_jobs", 1147) in jobs.ran  # the model's call ran, for the verified caller's tenant
    every_call_answered(out)
    answers = [m for m in out.messages if m.role == "tool"]
    assert any("job-1147-1" in m.content for m in answers)  # the handler's result was sent back in the history
    called = sink.of(ModelCalled)
    assert 2 <= out.steps <= 3 and out.steps == len(called)  # the forced call, then at least one step after it
    assert out.tool_calls == len(sink.of(ToolCalled)) >= 1
    # usage: every step's, added up, as the server counted it (whole replies carry usage: nothing is estimated)
    assert out.usage.input_tokens == sum(e.input_tokens for e in called) and all(e.input_tokens > 0 for e in called)
    assert out.usage.output_tokens == sum(e.output_tokens for e in called) > 0
    assert [(u.input_tokens, u.output_tokens, u.estimated) for u in sink.of(UsageReported)] == [
        (out.usage.input_tokens, out.usage.output_tokens, False)]


def _files(root: Path) -> dict[str, bytes]:
    skip = {".tomo", "__pycache__", ".pytest_cache"}
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(root).parts)}


def test_tomo_run_tells_the_truth_about_a_fix(qwen: LiveServer, run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    """The oi engine with the exec gate on a one-line bug (tests/live/data/mean_bug). Whether the model fixes it is
    not the test; whether tomo's claim is true is: "verified" only when the task's hidden oracle (tests the model
    never sees, run on the workspace afterwards) passes, the exit code from the claim, and the files it says changed
    the files that did."""
    task = HERE / "data" / "mean_bug"
    work = tmp_path / "work"
    shutil.copytree(task / "project", work)
    before = _files(work)
    sandbox = "strict" if shutil.which("bwrap") else "local"
    done = run_tomo("run", (task / "task.txt").read_text().strip(), "--model", qwen.spec, "--root", str(work),
                    "--sandbox", sandbox, "--exec-gate", "--yes", "--json", "--max-rounds", "1",
                    env={"TOMO_LOCAL_SERVERS": ""}, timeout=400)
    assert not re.search(r'File "[^"]*[/\\]tomo[/\\]', done.stderr), done.stderr  # no traceback of tomo's own
    result = json.loads(done.stdout)
    assert result["ended_by"] in ("model", "rounds") and result["error"] is None, result
    assert done.returncode == (0 if result["verified"] else 3), (done.returncode, result)
    assert result["rounds"] <= 1  # one reply: 30-60 s of a 1.5B model on 2 cores, the suite's slowest test
    after = _files(work)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert sorted(result["files_changed"]) == changed, (result["files_changed"], changed)
    oracle_dir = tmp_path / "oracle"
    shutil.copytree(task / "oracle", oracle_dir)
    oracle = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(oracle_dir)],
                            cwd=oracle_dir, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"})
    assert oracle.returncode in (0, 1), oracle.stdout + oracle.stderr  # the oracle ran: passed or failed
    if result["verified"]:
        assert oracle.returncode == 0, (f"tomo said verified, and the hidden oracle fails on stats.py:\n"
                                        f"{(work / 'stats.py').read_text()}\n{oracle.stdout[-1500:]}\n"
                                        f"tomo's log:\n{done.stderr[-3000:]}")


# ---- tomo models serve --------------------------------------------------------------------------------------------


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a test run in the background may have inherited SIGINT ignored


def test_tomo_models_serve_prints_the_spec_serves_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    require_live()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TOMO_CACHE": str(tmp_path / "cache")}  # SmolLM2 ships whole: nothing is assembled, only its log goes here
    process = subprocess.Popen([sys.executable, "-m", "tomo", "models", "serve", SMOL, "--port", str(port),
                                "--n-ctx", "512", "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, text=True, env=env, preexec_fn=_default_sigint)
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith(("ready in", "error:", "the server exited")):
                break
        spec = f"openai-compat:http://127.0.0.1:{port}/v1#{SMOL}"
        assert lines[0].startswith(f"serving {SMOL} (SmolLM2-135M Instruct"), lines
        assert lines[1] == f"use it with: --model {spec}", lines
        assert lines[-1].startswith("ready in"), lines
        served = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10).json()
        assert [m["id"] for m in served["data"]] == [SMOL]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        assert process.stdout.read().strip() == "stopped"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    try:
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)
        raise AssertionError("the server still answers after tomo models serve was stopped")
    except httpx.ConnectError:
        pass


def test_tomo_models_serve_on_a_busy_port_says_so_before_starting(run_tomo: Callable[..., Any]) -> None:
    require_live()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_tomo("models", "serve", SMOL, "--port", str(port))
    assert done.returncode == 1 and f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert "pick a free one with --port" in done.stderr
