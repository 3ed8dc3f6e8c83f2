"""What a rename costs the model in tokens: assist (receipts and handles) beside a relay design (the model receives the
plan and sends every edit back), both run through tomo's loop on the same generated repository, in the same run.

The repository: one function ``compute`` defined in ``fan/core.py``, imported and called by F modules, C calls each,
so the rename has exactly ``1 + F + F*C`` confirmed edits (1,000 for F=27, C=36). Both designs really apply their
edits (assist by plan handle; the relay by building a plan from the edits the model sent back) and the bench checks
that every call site was renamed.

The relay is the favourable version of that design: the plan reaches the model as one compact line per edit
(``path:line:col old -> new``), not as JSON or file contents, and the model sends back ``{path, line, col, new}``
objects; tool results are not capped (the registry's default cap would cut the plan). A design in which the model
reads the files and writes replacements would cost more.

Tokens are counted from the scripted transcript (``ScriptedModel.sent``: every request's messages and tool schemas;
the replies the model gave). No tokenizer that works offline is installed (tiktoken downloads its BPE files at run
time), so two approximations are given: characters / 4 and regex pieces (``\\w+`` runs and single punctuation
marks, which tracks BPE counts on code and JSON more closely than characters do). Ratios are the same either way.

    python -m bench.assist_tokens            # writes the "assist" section of docs/benchmarks.md
    python -m bench.assist_tokens --quick    # 1,000 edits only, no file written
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "assist"))

from assist_helpers import make_fanout  # the same package the relay test renames
from pydantic import BaseModel

from tomo.agents import Agent
from tomo.assist import AssistOptions, Session
from tomo.assist import run as assist_run
from tomo.loop import Limits
from tomo.loop import run as loop_run
from tomo.models.messages import Message, ToolSpec
from tomo.models.scripted import ScriptedModel
from tomo.prism import Edit, Graph, Plan
from tomo.tools import Caller, Registry

try:
    from bench._report import table, write_section
except ImportError:  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._report import table, write_section

SIZES = ((9, 10), (27, 36), (50, 99))  # (files, calls per file): 100, 1,000 and 5,001 edits
PIECE = re.compile(r"\w+|[^\w\s]")
RELAY_PROMPT = """\
You rename symbols in a code base. Call rename_plan to get every edit the rename needs, one per line as
`path:line:col old -> new`, then call apply_edits with every edit you want written, as {path, line, col, new}
objects. Send all of them: edits you leave out are not made. Answer in two sentences when you are done."""


def fanout_edits(root: Path, files: int, calls: int) -> int:
    """The assist tests' generated package; a rename edits the definition, one import per module and every call."""
    return 1 + files + make_fanout(root, files, calls)


@dataclass
class Count:
    design: str
    edits: int
    requests: int
    reads_chars: int
    emits_chars: int
    reads_pieces: int
    emits_pieces: int
    fixed_chars: int  # system prompt + tool schemas, summed over requests

    @property
    def reads(self) -> int:
        return self.reads_chars // 4

    @property
    def emits(self) -> int:
        return self.emits_chars // 4


def _message_text(m: Message) -> str:
    calls = "".join(c.name + json.dumps(c.args, separators=(",", ":")) for c in m.tool_calls)
    return m.content + calls


def _specs_text(specs: list[ToolSpec]) -> str:
    return "".join(s.name + s.description + json.dumps(s.parameters, separators=(",", ":")) for s in specs)


def count(design: str, edits: int, model: ScriptedModel) -> Count:
    """Reads: every request's messages and tool schemas (a chat API re-sends the history each turn).
    Emits: every reply's text and tool calls (the last request's history holds all but the final reply)."""
    reads = [("".join(_message_text(m) for m in req), _specs_text(specs), req)
             for req, specs in zip(model.sent, model.sent_tools, strict=True)]
    read_text = "".join(msgs + specs for msgs, specs, _ in reads)
    fixed = sum(len(specs) + len(req[0].content) for _, specs, req in reads)
    replies = [m for m in model.sent[-1] if m.role == "assistant"] + [model._replies[-1].message]
    emit_text = "".join(_message_text(m) for m in replies)
    return Count(design, edits, len(model.sent), len(read_text), len(emit_text), len(PIECE.findall(read_text)),
                 len(PIECE.findall(emit_text)), fixed)


def _check(root: Path, files: int, calls: int) -> None:
    text = "".join(p.read_text() for p in (root / "fan").glob("mod_*.py"))
    if text.count("calculate(") != files * calls or "compute" in text:
        raise SystemExit(f"the rename was not applied in full under {root}")


async def measure_assist(root: Path, files: int, calls: int) -> Count:
    edits = fanout_edits(root, files, calls)
    session = Session(Graph.open(root), session_id="bench")
    model = ScriptedModel([
        {"tool_calls": [{"name": "rename_plan", "args": {"symbol": "fan.core.compute", "new_name": "calculate"}}]},
        {"tool_calls": [{"name": "apply_plan", "args": {"handle": "p1-bench"}}]},
        {"content": f"Renamed fan.core.compute to calculate: plan p1-bench, {edits:,} confirmed edits, all applied."},
    ])
    try:
        summary = await assist_run("rename compute to calculate everywhere", model, session.invoke,
                                   AssistOptions(root=root, apply=True))
    finally:
        session.close()
    assert summary.applies[0]["edits_applied"] == edits, summary.applies
    _check(root, files, calls)
    return count("assist (receipts, apply by handle)", edits, model)


class EditIn(BaseModel):
    path: str
    line: int
    col: int
    new: str


async def measure_relay(root: Path, files: int, calls: int) -> Count:
    edits_total = fanout_edits(root, files, calls)
    graph = Graph.open(root)
    plans: list[Plan] = []

    def rename_plan(symbol: str, new_name: str) -> str:
        """Plan a rename: every edit it needs, one per line."""
        plan = graph.rename_plan(symbol, new_name)
        plans.append(plan)
        return "\n".join(f"{e.path}:{e.line}:{e.col} {e.old} -> {e.new}" for e in plan.edits)

    def apply_edits(edits: list[EditIn]) -> str:
        """Write the given edits (each: path, line, col, new)."""
        plan = plans[-1]
        old = {(e.path, e.line, e.col): e.old for e in plan.edits}
        chosen = tuple(Edit(e.path, e.line, e.col, old[(e.path, e.line, e.col)], e.new, "confirmed") for e in edits)
        applied = graph.apply(Plan(plan.symbol, plan.new_name, chosen, (), plan.file_hashes))
        return f"wrote {applied.edits_applied} edits in {len(applied.files)} files"

    registry = Registry()
    registry.register(rename_plan, cap=10**9, unit="characters")
    registry.register(apply_edits, cap=10**9, unit="characters")
    expected = Graph.open(root).rename_plan("fan.core.compute", "calculate")  # what a model would send back
    sent_back = [{"path": e.path, "line": e.line, "col": e.col, "new": e.new} for e in expected.edits]
    model = ScriptedModel([
        {"tool_calls": [{"name": "rename_plan", "args": {"symbol": "fan.core.compute", "new_name": "calculate"}}]},
        {"tool_calls": [{"name": "apply_edits", "args": {"edits": sent_back}}]},
        {"content": f"Renamed fan.core.compute to calculate: {len(sent_back):,} edits sent and written."},
    ])
    agent = Agent("relay", prompt=RELAY_PROMPT, tools=("rename_plan", "apply_edits"),
                  limits=Limits(max_steps=10, max_tool_calls=10, max_tokens_total=None))
    try:
        outcome = await loop_run(agent, model, registry, Caller("bench", "bench", root),
                                 "rename compute to calculate everywhere", agent.limits)
    finally:
        graph.close()
    assert outcome.completed and not any(r.capped for r in outcome.results), outcome.results
    _check(root, files, calls)
    return count("relay (plan in, edits out)", edits_total, model)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 edits only; do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    sizes = [SIZES[1]] if args.quick else list(SIZES)
    rows: list[list[Any]] = []
    ratios: list[str] = []
    for files, calls in sizes:
        with tempfile.TemporaryDirectory(prefix="tomo-bench-") as tmp:
            a = asyncio.run(measure_assist(Path(tmp) / "a", files, calls))
            r = asyncio.run(measure_relay(Path(tmp) / "r", files, calls))
        for c in (a, r):
            rows.append([f"{c.edits:,}", c.design, c.requests, f"{c.reads:,}", f"{c.emits:,}",
                         f"{c.reads + c.emits:,}", f"{c.reads_pieces:,} / {c.emits_pieces:,}",
                         f"{c.fixed_chars // 4:,}"])
        ratios.append(f"{a.edits:,} edits: the relay costs {(r.reads + r.emits) / (a.reads + a.emits):,.0f}× the "
                      f"tokens of assist ({(r.emits / max(a.emits, 1)):,.0f}× the output tokens)")
        print(rows[-2], rows[-1], sep="\n", flush=True)
    body = table(["edits", "design", "requests", "model reads (chars/4)", "model emits (chars/4)", "total",
                  "reads / emits (regex pieces)", "of the reads: prompt + tool schemas"], rows)
    notes = "\n".join(f"- {line}" for line in ratios)
    text = (f"{body}\n\n{notes}\n\nBoth designs run through tomo's loop with a scripted model on a generated package "
            "(one function, imported and called across modules) and both really apply the rename; the relay is the "
            "favourable version (the plan as one compact line per edit, edits sent back as {path, line, col, new}, "
            "no cap on tool results). Tokens are approximated from the scripted transcript: characters / 4, and "
            "regex pieces (`\\w+` runs and punctuation marks) as a cross-check; no offline BPE tokenizer is "
            "installed. assist's cost does not grow with the plan: the model reads a one-line receipt and writes "
            "a handle.")
    print(text)
    if not args.quick:
        title = "assist: tokens for a rename, receipts vs relay"
        path = write_section("assist", title, "python -m bench.assist_tokens", text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
