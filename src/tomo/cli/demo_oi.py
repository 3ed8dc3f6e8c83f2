"""`tomo demo`'s oi scene in the terminal: the scripted model, its blocks, the exec gate's refusal, the verdicts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from tomo.cli.run_cmd import RunSink
from tomo.demo.oi_scene import COMMAND, OiDemoRun, run_oi_demo, scene_task
from tomo.events import ListSink


def oi_scene(console: Console, workdir: Path) -> OiDemoRun:
    console.rule("[bold]scene 3: tomo run, code as the only action, behind the exec and repro gates")
    console.print("A bug is planted in a fresh copy: OrderLine.total subtracts the discount rate, not the discount "
                  "amount, so one test fails. The scripted model fixes it, then tries to finish after only compiling "
                  "the file.", markup=False)
    console.print(f"[dim]$ {escape(COMMAND.format(task=scene_task()))}[/]")
    sink = RunSink(console)
    try:
        result = asyncio.run(run_oi_demo(workdir, sink))
    finally:
        sink.close()
    for name, verdict in result.summary.gates.items():
        refused = f"refused {verdict.refusals} time(s), then " if verdict.refusals else ""
        console.print(Text.assemble((f"{name} gate: ", "bold"), refused,
                                    ("satisfied" if verdict.satisfied else "NOT satisfied",
                                     "green" if verdict.satisfied else "red"), f" ({verdict.reason})"))
    console.print(Text.assemble(("result: ", "bold"), ("verified", "bold green") if result.summary.verified
                                else ("NOT verified", "bold red"), f" in {result.summary.rounds} rounds, "
                                f"{result.summary.blocks} blocks, in the {result.sandbox} sandbox"))
    console.print("With a live model: tomo run \"TASK\" --model ollama:qwen2.5-coder:7b --root DIR --exec-gate "
                  "--repro", markup=False)
    return result


def oi_json(workdir: Path) -> dict[str, object]:
    result = asyncio.run(run_oi_demo(workdir, ListSink()))
    s = result.summary
    return {"scene": "oi", "workdir": str(result.workdir), "verified": s.verified, "rounds": s.rounds,
            "blocks": s.blocks, "files_changed": s.files_changed, "gates": s.gates_dict(), "sandbox": result.sandbox}
