"""`tomo graph ...`: prism's code graph on the command line.

Every query has ``--json`` (a list of plain objects; every reference or edit row carries path, line, col and
confidence). Errors (unknown or ambiguous symbol, stale plan) are :class:`~tomo.errors.PrismError` and print as a
message plus a hint.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import typer

from tomo.cli import app, plain_stdout
from tomo.cli.rows import Cell, print_rows, say, stdout_console
from tomo.cli.safe import esc, text
from tomo.errors import PrismError
from tomo.prism import Graph, Plan, Reference, leaves_warning, left_behind
from tomo.prism.indexer import PHASES, WORKER_PHASES, IndexStats, Progress
from tomo.prism.store import index_path

graph_app = typer.Typer(
    help="Code graph: index a repository, find symbols, references, callers; plan and apply renames.",
    no_args_is_help=True)
app.add_typer(graph_app, name="graph")

RootOpt = typer.Option(Path("."), "--root", metavar="DIR", help="Repository root (default: current directory).")
JsonOpt = typer.Option(False, "--json", help="Print JSON instead of a table.")
SymbolArg = typer.Argument(help="A qualified name (pkg.mod.Class.method), a unique dotted suffix, or path:line[:col].")
NewArg = typer.Argument(help="The new name (a Python identifier).")


def _open(root: Path, *, seed: Path | None = None, progress: Progress | None = None) -> Graph:
    """The graph for one verb. A verb is one short process, so the cyclic collector is switched off for its rest:
    after a wide query it would walk the hundred thousand objects the answer and the caches hold, once as they age
    and once more at exit (about a tenth of `tomo graph refs QuerySet.filter` on Django), to free nothing that
    matters before the process ends."""
    gc.disable()
    return Graph.open(root, seed=seed, progress=progress)


def _dump(obj: Any) -> None:
    def conv(o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return {f.name: conv(getattr(o, f.name)) for f in dataclasses.fields(o)}
        if isinstance(o, list | tuple):
            return [conv(x) for x in o]
        if isinstance(o, dict):
            return {k: conv(v) for k, v in o.items()}
        return o

    typer.echo(json.dumps(conv(obj), indent=2))


_NO_WRAP = ("location", "symbol", "caller", "target", "confidence")


def _rows(headers: list[str], rows: list[list[Cell]]) -> None:
    print_rows(headers, rows, no_wrap=_NO_WRAP)


def _at(r: Reference) -> str:
    return f"{r.path}:{r.line}:{r.col}"


def _conf(c: str) -> Cell:
    return ("confirmed", "green") if c == "confirmed" else ("ambiguous", "yellow")


@graph_app.command("index")
def index_cmd(root: Path = RootOpt, as_json: bool = JsonOpt,
              verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print each phase's time."),
              seed: Path | None = typer.Option(None, "--seed", metavar="DIR",
                                               help="When --root has no index yet, start from this directory's "
                                                    "(another checkout or worktree of the same repository): only "
                                                    "the files that differ are parsed.")) -> None:
    """Build or refresh the index (.tomo/index.sqlite in --root): only changed files are parsed."""
    t0 = time.perf_counter()
    if seed is not None and not seed.is_dir():
        raise PrismError(f"--seed {seed} is not a directory", hint="pass the root of a checkout tomo has indexed")
    had_index = index_path(root.resolve()).exists()
    if as_json or plain_stdout():
        g = _open(root, seed=seed)
    else:
        console = stdout_console()
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("[bold]indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("index", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            g = _open(root, progress=progress, seed=seed)
    stats = g.stats
    g.close()
    seconds = time.perf_counter() - t0
    if as_json:
        _dump({"root": str(root.resolve()), "files": stats.files, "parsed": stats.parsed, "skipped": stats.skipped,
               "removed": stats.removed, "seconds": round(seconds, 3), "seeded_from": stats.seeded_from,
               "errors": [{"path": p, "error": e} for p, e in stats.errors]}
              | ({"workers": stats.workers, "phases": {k: round(v, 4) for k, v in stats.phases.items()}}
                 if verbose else {}))
        return
    _print_stats(stats, seconds)
    if seed is not None and not stats.seeded_from:
        say(f"note: --seed not used: {root} already had an index" if had_index else f"note: --seed not used: {seed} "
            f"has no index this tomo can read (`tomo graph index --root {seed}` makes one)")
    if verbose:
        _print_phases(stats)


def _print_phases(stats: IndexStats) -> None:
    rows: list[list[Cell]] = []
    for name in PHASES:
        if name in stats.phases:
            where = (f"parsing, CPU s over {stats.workers} process(es)" if name in WORKER_PHASES
                     else "indexing process, wall s")
            rows.append([name, f"{stats.phases[name]:.3f}", where])
    _rows(["phase", "seconds", "where"], rows)


def _print_stats(stats: IndexStats, seconds: float) -> None:
    """The summary, one line each (a pipe gets whole lines: a file's error is never cut at the 80th column)."""
    say(f"indexed {stats.files} files: {stats.parsed} parsed, {stats.skipped} unchanged, {stats.removed} removed"
        f" in {seconds:.2f}s" + (f" (started from the index of {stats.seeded_from})" if stats.seeded_from else ""))
    if stats.errors:
        say(f"{len(stats.errors)} file(s) not fully indexed (a syntax error is indexed as far as it parses):")
        for path, err in stats.errors[:20]:
            say(f"  {path}: {err}")
        if len(stats.errors) > 20:
            say(f"  ... and {len(stats.errors) - 20} more")


@graph_app.command("symbols")
def symbols_cmd(query: str = typer.Argument(help="Name, qualified name or part of one."), root: Path = RootOpt,
                as_json: bool = JsonOpt,
                limit: int = typer.Option(50, metavar="N", help="Show at most this many.")) -> None:
    """Find definitions by qualified name, dotted suffix or part of the name."""
    with _open(root) as g:
        found = g.find_symbol(query, limit=limit)
    if as_json:
        _dump(found)
        return
    if not found:
        say(f"no symbol matches `{query}`")
        raise typer.Exit(1)
    _rows(["symbol", "kind", "location"], [[s.qualname, s.kind, f"{s.path}:{s.line}:{s.col}"] for s in found])


@graph_app.command("def")
def def_cmd(symbol: str = SymbolArg, root: Path = RootOpt, as_json: bool = JsonOpt) -> None:
    """Where SYMBOL (qualified name or path:line:col) is defined."""
    with _open(root) as g:
        s = g.definition(symbol)
    if as_json:
        _dump(s)
        return
    say(f"{s.qualname} ({s.kind}) at {s.path}:{s.line}:{s.col}")


def _refs_table(refs: list[Reference]) -> None:
    _rows(["location", "confidence", "kind", "code", "reason"],
          [[_at(r), _conf(r.confidence), r.kind, r.text[:80], r.reason] for r in refs])
    n_conf = sum(r.confidence == "confirmed" for r in refs)
    say(f"{len(refs)} references: {n_conf} confirmed, {len(refs) - n_conf} ambiguous")


@graph_app.command("refs")
def refs_cmd(symbol: str = SymbolArg, root: Path = RootOpt, as_json: bool = JsonOpt) -> None:
    """Every reference to SYMBOL, each confirmed (proven binding) or ambiguous (with the reason)."""
    with _open(root) as g:
        refs = g.references(symbol)
    if as_json:
        _dump(refs)
        return
    _refs_table(refs)


@graph_app.command("callers")
def callers_cmd(symbol: str = SymbolArg, root: Path = RootOpt, as_json: bool = JsonOpt) -> None:
    """Call sites of SYMBOL and the function that contains each."""
    with _open(root) as g:
        callers = g.callers(symbol)
    if as_json:
        _dump([{"caller": c.symbol.qualname, **dataclasses.asdict(c.reference)} for c in callers])
        return
    _rows(["caller", "location", "confidence", "code"],
          [[c.symbol.qualname, _at(c.reference), _conf(c.reference.confidence), c.reference.text[:70]]
           for c in callers])


@graph_app.command("callees")
def callees_cmd(symbol: str = SymbolArg, root: Path = RootOpt, as_json: bool = JsonOpt) -> None:
    """Calls made inside SYMBOL, bound to their targets where prism can prove it."""
    with _open(root) as g:
        callees = g.callees(symbol)
    if as_json:
        _dump([{"name": c.name, "target": c.symbol.qualname if c.symbol else None,
                **dataclasses.asdict(c.reference)} for c in callees])
        return
    _rows(["calls", "target", "location", "confidence"],
          [[c.name, c.symbol.qualname if c.symbol else (c.reference.reason, "dim"), _at(c.reference),
            _conf(c.reference.confidence)] for c in callees])


@graph_app.command("impact")
def impact_cmd(symbol: str = SymbolArg, root: Path = RootOpt, as_json: bool = JsonOpt,
               depth: int = typer.Option(4, metavar="N", help="How many caller levels to follow.")) -> None:
    """What may break if SYMBOL changes: transitive callers and importers, tests marked."""
    with _open(root) as g:
        items = g.impact(symbol, max_depth=depth)
    if as_json:
        _dump([{"symbol": i.symbol.qualname, "path": i.symbol.path, "line": i.symbol.line, "col": i.symbol.col,
                "depth": i.depth, "via": i.via, "is_test": i.is_test, "confidence": i.confidence} for i in items])
        return
    _rows(["depth", "symbol", "via", "test", "confidence", "location"],
          [[str(i.depth), i.symbol.qualname, i.via, "test" if i.is_test else "", _conf(i.confidence),
            f"{i.symbol.path}:{i.symbol.line}"] for i in items])
    say(f"{len(items)} affected, {sum(i.is_test for i in items)} of them tests")


def _plan_json(plan: Plan) -> dict[str, Any]:
    return {"symbol": dataclasses.asdict(plan.symbol), "new_name": plan.new_name,
            "edits": [dataclasses.asdict(e) for e in plan.edits],
            "conflicts": [dataclasses.asdict(c) for c in plan.conflicts],
            "files": plan.files, "confirmed": len(plan.confirmed), "ambiguous": len(plan.ambiguous),
            "left_unrenamed": [{"path": e.path, "line": e.line, "col": e.col, "reason": e.reason}
                               for e in left_behind(plan)]}


def _print_plan(plan: Plan) -> None:
    console = stdout_console()
    left = left_behind(plan)
    if left:  # first, before the table: the one thing a confirmed-only apply would get wrong
        console.print(text(f"warning: {leaves_warning(plan, left)}; --apply refuses without --apply-ambiguous",
                           style="bold yellow"))
    _rows(["location", "confidence", "reason"],
          [[f"{e.path}:{e.line}:{e.col}", _conf(e.confidence), e.reason] for e in plan.edits])
    console.print(f"rename {esc(plan.symbol.qualname)} -> {esc(plan.new_name)}: {len(plan.confirmed)} confirmed "
                  f"edits, {len(plan.ambiguous)} ambiguous, in {len(plan.files)} files")
    for c in plan.conflicts:
        console.print(f"[red]conflict[/] {esc(f'{c.path}:{c.line}:{c.col}: {c.reason}')}")


@graph_app.command("rename-plan")
def rename_plan_cmd(symbol: str = SymbolArg, new: str = NewArg, root: Path = RootOpt, as_json: bool = JsonOpt) -> None:
    """Every edit a rename of SYMBOL to NEW needs, confirmed or ambiguous, and any name collisions."""
    with _open(root) as g:
        plan = g.rename_plan(symbol, new)
    if as_json:
        _dump(_plan_json(plan))
        return
    _print_plan(plan)


@graph_app.command("rename")
def rename_cmd(symbol: str = SymbolArg, new: str = NewArg, root: Path = RootOpt, as_json: bool = JsonOpt,
               apply: bool = typer.Option(False, "--apply", help="Write the edits (all files or none)."),
               ambiguous: bool = typer.Option(False, "--ambiguous", "--apply-ambiguous",
                                              help="Also apply the ambiguous edits."),
               force: bool = typer.Option(False, "--force", help="Apply even when the plan reports conflicts."),
               verify: str = typer.Option("", "--verify", metavar="CMD",
                                          help="Command to run after applying, e.g. 'pytest -q'.")
               ) -> None:
    """Rename SYMBOL to NEW: with --apply, write confirmed edits atomically, then run --verify CMD."""
    console = stdout_console()
    with _open(root) as g:
        plan = g.rename_plan(symbol, new)
        if not apply:
            if as_json:
                _dump(_plan_json(plan) | {"applied": False})
            else:
                _print_plan(plan)
                console.print("[dim]dry run: pass --apply to write these edits[/]")
            return
        if plan.conflicts and not force:
            if not as_json:
                _print_plan(plan)
            from tomo.errors import PrismError

            raise PrismError(f"renaming to `{new}` collides with {len(plan.conflicts)} existing binding(s);"
                             " nothing was written", hint="pick another name, or pass --force to apply anyway")
        applied = g.apply(plan, include_ambiguous=ambiguous)
    result: dict[str, Any] = {"applied": True, "files": list(applied.files), "edits_applied": applied.edits_applied,
                              "edits_skipped": applied.edits_skipped, "skipped_reasons": list(applied.skipped_reasons)}
    if not as_json:
        console.print(f"renamed {esc(plan.symbol.qualname)} -> {esc(new)}: {applied.edits_applied} edits in "
                      f"{len(applied.files)} files ({applied.edits_skipped} ambiguous edits not applied)")
    ok = True
    if verify:
        proc = subprocess.run(verify, shell=True, cwd=root, capture_output=True, text=True)
        ok = proc.returncode == 0
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        result["verify"] = {"command": verify, "exit_code": proc.returncode, "passed": ok, "output_tail": tail}
        if not as_json:
            if ok:
                console.print(f"[green]verify passed[/]: `{esc(verify)}` exited 0")
            else:
                console.print(f"[bold red]verify FAILED[/]: `{esc(verify)}` exited {proc.returncode}; the rename is "
                              "still applied (revert it with your VCS, e.g. `git checkout -- .`)")
                for line in tail:
                    console.print(text(f"  {line}"))
    if as_json:
        _dump(result)
    if not ok:
        raise typer.Exit(1)
