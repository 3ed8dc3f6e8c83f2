"""tomo against a real server and a real small model (see conftest.py). The model's answers are never checked, only
what the harness does with them: every request answered, every call answered, limits honoured, usage counted (and
said to be estimated when the server gives none), the exit code true."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from live_support import LiveServer

from tomo.agents import Agent
from tomo.events import LimitReached, ListSink, Notice, ToolCalled, ToolRefused, UsageReported
from tomo.loop import Limits, Outcome, run
from tomo.models import Message, ReplyDone, TextDelta, ToolCall, ToolSpec
from tomo.models.messages import FINISHES
from tomo.tools import Caller, Registry, TenantId

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"
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


async def test_a_forced_call_the_server_cannot_enforce_is_noticed(plain: LiveServer) -> None:
    sink = ListSink()
    model = plain.client(sink=sink)
    reply = await model.chat([SYSTEM, Message.user("Read shop/orders.py.")], [READ], force_tools=True, max_tokens=48)
    if not reply.tool_calls:  # the template has no tools: tomo must say the forced call never came
        assert any("came back without a call" in n.text for n in sink.of(Notice))
        assert model.profile.required == "ignored"


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
    if done.returncode == 2:  # the model or the server failed before anything ran: the error is said
        assert "hint:" in done.stderr, done.stderr
        return
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
    expected = {"error": 1, "interrupted": 130}.get(result["ended_by"], 0 if result["verified"] else 3)
    assert done.returncode == expected, (done.returncode, result)
    assert result["rounds"] <= 2
