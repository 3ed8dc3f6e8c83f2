"""`tomo demo`: tomo's main job on a fresh machine, with no model and no network."""

from __future__ import annotations

import asyncio
import difflib
import json
import shutil
import tempfile
from pathlib import Path

import typer
from rich.console import Console

from tomo.assist import AssistOptions
from tomo.cli import app
from tomo.cli.assist_render import AssistSink, print_report
from tomo.cli.rows import rich_console
from tomo.cli.safe import esc, text
from tomo.demo import REAL_MODEL_HINT, DemoRun, example_project, run_demo
from tomo.demo.oi_scene import OiDemoRun
from tomo.events import ListSink, Sink


@app.command()
def demo(
    keep_dir: bool = typer.Option(False, "--keep-dir", help="Keep the temporary copy of the example afterwards."),
    scene2: bool = typer.Option(True, "--scene2/--no-scene2",
                                help="Also replay the rename with --apply-ambiguous (verify fails, edits roll back)."),
    as_json: bool = typer.Option(False, "--json", help="Print the runs' summaries as JSON."),
    oi: bool | None = typer.Option(None, "--oi/--no-oi", help="Also play the oi scene: a scripted model fixes a "
                                                            "failing test; the exec gate refuses its first finish "
                                                            "(on by default; in --json only with --oi)."),
) -> None:
    """Rename across a bundled example project with a scripted model, verify with its tests (no network, no key)."""
    console = rich_console(highlight=False)
    workdir = Path(tempfile.mkdtemp(prefix="tomo-demo-"))
    try:
        if as_json:
            runs = [asyncio.run(run_demo(workdir / "1", ListSink()))]
            if scene2:
                runs.append(asyncio.run(run_demo(workdir / "2", ListSink(), apply_ambiguous=True)))
            rows = [{"workdir": str(r.workdir), "changed": r.changed, **r.summary.to_dict()} for r in runs]
            problems = _unexpected(runs[0], runs[1] if scene2 else None)  # the same smoke test as the terminal view
            if oi:
                from tomo.cli.demo_oi import oi_json

                oi_row = oi_json(workdir / "oi")
                rows.append(oi_row)
                if not oi_row["verified"]:
                    problems.append("the oi scene did not end verified")
            typer.echo(json.dumps(rows, indent=2, default=str))
            if problems:
                raise typer.Exit(1)
            return
        _intro(console)
        first = _scene(console, workdir / "1", "scene 1: the rename, confirmed edits only", False)
        _diff(console, first)
        second: DemoRun | None = None
        if scene2:
            second = _scene(console, workdir / "2", "scene 2: the same plan with --apply-ambiguous", True)
            console.print(f"files after scene 2 byte-identical to the original: "
                          f"{'[bold green]yes[/]' if not second.changed else '[bold red]no[/]'}"
                          f" (the unproven edit `item.total()` in shop/invoice.py describe() is really Invoice.total)")
        oi_run: OiDemoRun | None = None
        if oi is not False:
            from tomo.cli.demo_oi import oi_scene

            oi_run = oi_scene(console, workdir / "oi")
        _outro(console, first)
        if keep_dir:
            console.print(f"[dim]the copies are kept in {esc(workdir)}[/]")
        problems = _unexpected(first, second)
        if oi_run is not None and not oi_run.refused_then_verified:
            problems.append("the oi scene should end verified after one exec-gate refusal, but: "
                            f"{oi_run.summary.gates['exec'].reason}")
        if problems:
            for problem in problems:
                console.print(f"[bold red]demo did not go as recorded:[/] {esc(problem)}")
            raise typer.Exit(1)
    except KeyboardInterrupt:
        # typer turns Ctrl-C into a silent exit 130; say what happened to the copies, in one line, and nothing else
        where = f"kept in {workdir}" if keep_dir else "removed"
        rich_console(stderr=True, highlight=False).print(
            text(f"interrupted (Ctrl-C); the demo worked on a temporary copy of the example, {where}"), soft_wrap=True)
        raise typer.Exit(130) from None
    finally:
        if not keep_dir:
            shutil.rmtree(workdir, ignore_errors=True)


def _unexpected(first: DemoRun, second: DemoRun | None) -> list[str]:
    """The demo is also a smoke test of the install: say so, and exit 1, when a scene did not end as it should."""
    problems = [f"the recorded model failed: {run.summary.error}" for run in (first, second)
                if run is not None and run.summary.error]
    verify = first.summary.verify
    if verify is None or not verify.passed:
        tail = " ".join(verify.output_tail[-2:]) if verify else "it did not run"
        problems.append(f"scene 1's tests should pass after the rename, but: {tail}")
    if second is not None and second.changed:
        problems.append("scene 2 should have rolled every file back, but some differ: " + ", ".join(second.changed))
    return problems


def _intro(console: Console) -> None:
    console.rule("[bold]tomo demo")
    console.print("[bold yellow]The model in this demo is a scripted replay[/], not a live model: a recorded session "
                  "is played back, so it runs offline in seconds. Everything else is real: the code graph, the "
                  "harness's refusals and receipts, the edits, and the example project's own pytest suite.")
    console.print(f"example project: {esc(example_project())} (copied to a temporary directory first)\n")


def _scene(console: Console, workdir: Path, title: str, ambiguous: bool) -> DemoRun:
    console.rule(f"[bold]{title}")
    flags = "--apply-ambiguous" if ambiguous else "--apply"
    console.print(f'[dim]$ tomo assist "rename OrderLine.total to subtotal everywhere" --model scripted:… {flags} '
                  f'--verify "python -m pytest -q"[/]')
    sink: Sink = AssistSink(console)
    try:
        result = asyncio.run(run_demo(workdir, sink, apply_ambiguous=ambiguous))
    finally:
        if isinstance(sink, AssistSink):
            sink.close()
    print_report(console, result.summary, AssistOptions(verify=result.verify_command, apply_ambiguous=ambiguous))
    return result


def _diff(console: Console, r: DemoRun) -> None:
    console.rule("[bold]before → after")
    for path in r.changed:
        old, new = r.before[path].splitlines(), r.after[path].splitlines()
        lines = [ln for ln in difflib.unified_diff(old, new, lineterm="", n=0) if not ln.startswith(("---", "+++"))]
        plus = sum(ln.startswith("+") for ln in lines)
        minus = sum(ln.startswith("-") for ln in lines)
        console.print(f"[bold]{esc(path)}[/]  [green]+{plus}[/] [red]-{minus}[/]")
        for ln in lines:
            if ln.startswith("@@"):
                continue
            console.print(text(f"  {ln}", "green" if ln.startswith("+") else "red"))


def _outro(console: Console, r: DemoRun) -> None:
    console.rule("[bold]with a real model")
    console.print("Run the same task on your own code with a live model (Ollama here; claude:/openai: specs work too):")
    console.print(text(f"  {REAL_MODEL_HINT.format(task=r.task)}"))
