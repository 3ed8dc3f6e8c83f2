"""Loop overhead per step and per tool call: tomo's loop beside pydantic-ai's, doing the same work in the same run.

The work: a model that asks for one tool call per step (``echo(text)``, a typed one-argument function) for N-1 steps
and then answers. Both models are in-process and free (a pre-built reply per step, usage given so neither loop has to
estimate it), so what is timed is the loop itself: history, validation, dispatch, events and limits. A second run
with ten tool calls per step isolates the cost of one more tool call.

Flatness: each model records when it was called; the median gap between calls in the first and the last tenth of
the run shows whether a step gets dearer as the history grows.

    python -m bench.loop            # writes the "loop" section of docs/benchmarks.md
    python -m bench.loop --quick    # 200 and 1,000 steps only, no file written
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tomo.agents import Agent
from tomo.events import ListSink, NullSink, Sink
from tomo.loop import Limits, run
from tomo.models.messages import Message, Reply, ToolCall, ToolSpec, Usage
from tomo.tools import Caller, Registry

try:
    from bench._report import table, write_section
except ImportError:  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._report import table, write_section

UNLIMITED = Limits(max_steps=None, max_tool_calls=None, max_tokens_total=None, max_malformed=None)


def echo(text: str) -> str:
    """Say the text back."""
    return text


class EndlessModel:
    """A scripted model for long runs: one reply per step built on the fly, history never copied or recorded
    (tomo's ``ScriptedModel`` keeps a copy of every history it is sent, which is itself quadratic)."""

    def __init__(self, steps: int, calls_per_step: int) -> None:
        self.name = "bench"
        self.steps, self.calls = steps, calls_per_step
        self.n = 0
        self.stamps: list[float] = []

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, force_tools: bool = False,
                   max_tokens: int | None = None) -> Reply:
        self.stamps.append(time.perf_counter())
        self.n += 1
        if self.n >= self.steps:
            return Reply(Message.assistant("done"), "stop", Usage(10, 5))
        calls = [ToolCall(f"c{self.n}_{k}", "echo", {"text": "x"}) for k in range(self.calls)]
        return Reply(Message.assistant("", calls), "tool_calls", Usage(10, 5))

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def tomo_run(steps: int, calls: int, sink: Sink) -> tuple[float, list[float]]:
    registry = Registry()
    registry.register(echo)
    agent = Agent("bench", tools=("echo",))
    model = EndlessModel(steps, calls)
    started = time.perf_counter()
    out = asyncio.run(run(agent, model, registry, Caller("bench", 1), "go", UNLIMITED, sink))
    elapsed = time.perf_counter() - started
    assert out.completed and out.steps == steps and out.tool_calls == (steps - 1) * calls, out
    return elapsed, model.stamps


def pydantic_ai_run(steps: int, calls: int) -> tuple[float, list[float]]:
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage, UsageLimits

    stamps: list[float] = []
    count = [0]

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        stamps.append(time.perf_counter())
        count[0] += 1
        usage = RequestUsage(input_tokens=10, output_tokens=5)
        if count[0] >= steps:
            return ModelResponse(parts=[TextPart("done")], usage=usage)
        parts = [ToolCallPart("echo", {"text": "x"}, tool_call_id=f"c{count[0]}_{k}") for k in range(calls)]
        return ModelResponse(parts=parts, usage=usage)

    agent = PAgent(FunctionModel(fn))
    agent.tool_plain(echo)
    started = time.perf_counter()
    result = agent.run_sync("go", usage_limits=UsageLimits(request_limit=None, tool_calls_limit=None))
    elapsed = time.perf_counter() - started
    assert result.output == "done" and count[0] == steps
    return elapsed, stamps


def decile_gaps(stamps: list[float]) -> tuple[float, float]:
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    tenth = max(1, len(gaps) // 10)
    return statistics.median(gaps[:tenth]), statistics.median(gaps[-tenth:])


def best(fn: Any, repeat: int) -> tuple[float, list[float]]:
    runs = [fn() for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 and 1,000 steps only; do not write the doc")
    parser.add_argument("--peer-max", type=int, default=1000, help="largest step count to run pydantic-ai at")
    args = parser.parse_args()
    sizes = [200, 1000] if args.quick else [200, 1000, 10_000]
    rows: list[list[object]] = []
    call_rows: list[list[object]] = []
    for steps in sizes:
        repeat = 5 if steps <= 1000 else 2
        t1, stamps = best(lambda s=steps: tomo_run(s, 1, NullSink()), repeat)
        first, last = decile_gaps(stamps)
        t10, _ = best(lambda s=steps: tomo_run(s, 10, NullSink()), repeat)
        tl, _ = best(lambda s=steps: tomo_run(s, 1, ListSink()), repeat)
        per_call = (t10 - t1) / ((steps - 1) * 9)
        row: list[object] = [f"{steps:,}", ms(t1 / steps), ms(first), ms(last), ms(tl / steps), f"{per_call * 1e6:.1f}"]
        peer_row: list[object] = ["skipped", "", "", "", ""]
        if steps <= args.peer_max:
            p1, pstamps = best(lambda s=steps: pydantic_ai_run(s, 1), 3 if steps <= 200 else 1)
            p10, _ = best(lambda s=steps: pydantic_ai_run(s, 10), 1)
            pfirst, plast = decile_gaps(pstamps)
            pcall = (p10 - p1) / ((steps - 1) * 9)
            ratio = f"{p1 / t1:.0f}x"
            peer_row = [ms(p1 / steps), ms(pfirst), ms(plast), f"{pcall * 1e6:.1f}", ratio]
        rows.append(row[:4] + peer_row[:3] + [peer_row[4]])
        call_rows.append([f"{steps:,}", row[5], peer_row[3] or "skipped", row[4]])
        print(f"{steps:>6} steps  tomo {ms(t1 / steps)} ms/step (first {ms(first)}, last {ms(last)}), "
              f"{per_call * 1e6:.1f} us/extra call | pydantic-ai {peer_row[0]} ms/step "
              f"(first {peer_row[1]}, last {peer_row[2]}), {peer_row[3]} us/extra call", flush=True)
    import pydantic_ai

    body = "\n\n".join([
        "Loop overhead with an in-process scripted model (one `echo(text)` tool call a step, then an answer), "
        f"tomo's `loop.run` beside pydantic-ai {pydantic_ai.__version__} `Agent.run_sync` with `FunctionModel` (async "
        "function, usage given so it is not estimated, `UsageLimits(request_limit=None, tool_calls_limit=None)`). "
        "ms/step is the whole run divided by its steps (tomo: best of 5, 2 at 10,000; pydantic-ai: best of 3 at 200, "
        "one run at 1,000); *first/last 10%* are the median gaps between model calls at the start and the end of "
        "the run, which show whether a step gets dearer as the history grows.",
        table(["steps", "tomo ms/step", "tomo first 10%", "tomo last 10%", "pydantic-ai ms/step",
               "pydantic-ai first 10%", "pydantic-ai last 10%", "pydantic-ai / tomo (ms/step)"], rows),
        "Cost of one more tool call (runs with ten calls a step minus runs with one, per extra call), and tomo's "
        "ms/step when every event is kept (`ListSink`, as the CLI renderer or a transcript would see them):",
        table(["steps", "tomo µs/extra call", "pydantic-ai µs/extra call", "tomo ms/step with ListSink"], call_rows),
        "Reading the figures: the per-extra-call cost of pydantic-ai includes its growth with the history (ten calls "
        "a step grow the history ten times faster), so it is not a pure dispatch cost. tomo's whole-run ms/step can "
        "sit above its median gap at 10,000 steps: Python's cyclic garbage collector walks the growing history now "
        "and then (a pause of tens of ms, a few times a run); the median step stays flat. Timings on a shared "
        "2-core machine move with its load; the ratios are from the same run.",
        "pydantic-ai is not run at 10,000 steps: its per-step cost grows with the history, so one run would take "
        "tens of minutes." if 10_000 in sizes and args.peer_max < 10_000 else "",
    ])
    if not args.quick:
        path = write_section("loop", "Loop overhead (tomo.loop vs pydantic-ai)", "python -m bench.loop", body)
        print(f"wrote {path}")
    else:
        print(body)


if __name__ == "__main__":
    main()
