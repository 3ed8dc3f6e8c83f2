"""`tomo lab`: run a suite under variants on models, judged by each task's own oracle; report; bless.

Runs are recorded one by one in SQLite (``.tomo/lab.sqlite``) or PostgreSQL (``--db URL``); running the same command
again skips what is recorded, so an interrupted lab resumes. The report and the blessed list read only the records.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from tomo.cli import app
from tomo.cli.help_names import MODEL_SPECS
from tomo.cli.rows import print_rows, rich_console, say
from tomo.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

    from tomo.lab.records import LabStore, RunRecord
    from tomo.lab.runner import Job, RunSettings
    from tomo.lab.suite import Suite

lab_app = typer.Typer(add_completion=False, help="Measure models and variants on a suite of tasks judged by their "
                                                 "own oracles; report with intervals and paired tests; bless.")
app.add_typer(lab_app, name="lab")

EXIT_INTERRUPTED = 130
DB_HELP = "Where runs are recorded: a file, a sqlite:/// or postgresql:// URL (default: .tomo/lab.sqlite here)."


@lab_app.command("tasks")
def tasks_command(
    suite: str = typer.Argument(..., metavar="SUITE", help="A bundled suite (small, heldout) or a suite directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the tasks as JSON."),
) -> None:
    """List a suite's tasks: id, kind, oracle."""
    from tomo.lab.suite import load_suite

    loaded = load_suite(suite)
    rows: list[dict[str, Any]] = [{"id": t.id, "kind": t.kind, "oracle": t.oracle, "check": t.check,
                                   "tags": list(t.tags)} for t in loaded.tasks]
    if as_json:
        typer.echo(json.dumps({"suite": loaded.name, "tasks": rows}, indent=2))
        return
    print_rows(["task", "kind", "oracle"], [[r["id"], r["kind"], r["oracle"]] for r in rows])


@lab_app.command("run")
def run_command(
    suite: str = typer.Argument(..., metavar="SUITE", help="A bundled suite (small, heldout) or a suite directory."),
    model: list[str] = typer.Option(..., "--model", metavar="SPEC",
                                    help=f"A model spec ({MODEL_SPECS}; repeat for several), 'reference': the "
                                         "engine ceiling, a scripted model replaying each task's reference "
                                         "solution, or 'replay:VARIANT': the replies of VARIANT's recorded runs "
                                         "in this --db, replayed through this build."),
    variant: list[str] = typer.Option(["strict"], "--variant", metavar="NAME[=FLAGS]",
                                      help="NAME=\"run --exec-gate ...\" (repeat for several), or a preset: plain, "
                                           "gated, strict, oi-strict, mini (the mini-swe-agent peer)."),
    task: list[str] = typer.Option([], "--task", metavar="ID", help="Only these tasks (repeat)."),
    kind: str = typer.Option("", "--kind", metavar="KIND",
                             help="Only tasks of this kind: fix, rename, feature, repro."),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Runs of each (task, variant, model)."),
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    timeout: float = typer.Option(900.0, "--timeout", metavar="SECONDS", help="Wall time one run may take."),
    parallel: int = typer.Option(None, "--parallel", min=1,
                                 help="Runs at once (default 1: a local model server answers one request at a time). "
                                      "With --distributed: runs at once in each serving process."),
    keep: Path = typer.Option(None, "--keep", metavar="DIR", help="Keep each run's copy and transcript under DIR."),
    mini_steps: int = typer.Option(30, "--mini-steps", min=1, help="Step limit of the mini-swe-agent peer."),
    as_json: bool = typer.Option(False, "--json", help="Print the new records as JSON lines."),
    distributed: bool = typer.Option(False, "--distributed",
                                     help="Queue the unrecorded runs on DBOS for `tomo lab worker --db` processes "
                                          "(this one serves too) and wait until all are recorded. Needs the dbos "
                                          "extra; a PostgreSQL --db across machines, SQLite on one."),
) -> None:
    """Run each task of SUITE in a fresh copy under each variant on each model, judge it by the task's own oracle
    (never by tomo's claim), and record it. Running it again resumes: recorded runs are skipped.

    Exit status: 0 when every planned run was recorded (solved or not); 1 when a run failed to start or judge;
    2 a usage error; 130 Ctrl-C, 143 SIGTERM (the runs in flight are stopped; recorded runs stay recorded; with
    --distributed, queued runs stay queued).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tomo.lab.records import LabStore, as_dict, db_url
    from tomo.lab.runner import RunSettings, parse_variant, plan, run_all
    from tomo.lab.suite import load_suite

    loaded = load_suite(suite)
    variants = [parse_variant(v) for v in variant]
    if len({v.name for v in variants}) != len(variants):
        raise ConfigError("two variants share a name", hint="give each --variant its own NAME")
    chosen = loaded.select(task or None, kind or None)
    url = db_url(db)
    if distributed:
        from tomo.lab.distributed import system_url

        system_url(url)  # a URL the queue cannot live beside is a usage error before anything is planned
    store = LabStore(url)
    replays = _replays(store, loaded.name, model)
    if replays and distributed:
        store.close()
        raise ConfigError("a replay (--model replay:VARIANT) runs here, not on the queue",
                          hint="leave out --distributed: a replay needs no model, and takes minutes")
    jobs = plan(loaded, chosen, variants, model, repeats, store.keys())
    skipped = len(chosen) * len(variants) * len(model) * repeats - len(jobs)
    err = rich_console(stderr=True)
    if skipped:
        err.print(f"{skipped} run(s) already recorded: skipped (resuming)", highlight=False)
    if not jobs:
        say("nothing to run: every run is recorded (see `tomo lab report`)")
        return
    settings = RunSettings(timeout_s=timeout, keep=keep, mini_steps=mini_steps, replays=replays)
    if distributed:
        try:
            failed = _run_distributed(store, url, loaded, jobs, settings, parallel, as_json, err)
        finally:
            store.close()
        if failed:
            err.print(f"{failed} run(s) ended in an error (see `tomo lab report --runs`)", highlight=False)
            raise typer.Exit(1)
        return
    failed = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False) as progress:
        bar = progress.add_task(f"lab {loaded.name}", total=len(jobs))

        def started(job: Job) -> None:
            progress.update(bar, description=f"lab {loaded.name}: {job.task.id} · {job.variant.name}")

        def done(job: Job, record: RunRecord) -> None:
            nonlocal failed
            failed += _errored(record)
            progress.console.print(_record_line(record), highlight=False)
            if as_json:
                typer.echo(json.dumps(as_dict(record)))
            progress.advance(bar)

        terminated: list[int] = []

        def on_term(signum: int, _frame: Any) -> None:  # `kill` stops the runs in flight as Ctrl-C does
            terminated.append(signum)
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, on_term)
        try:
            run_all(store, loaded, jobs, settings, parallel=parallel or 1, on_start=started, on_done=done)
        except KeyboardInterrupt:
            err.print("interrupted: the runs recorded so far stay; run the same command to resume", highlight=False)
            raise typer.Exit(128 + terminated[0] if terminated else EXIT_INTERRUPTED) from None
        finally:
            signal.signal(signal.SIGTERM, previous)
            store.close()
    if failed:
        err.print(f"{failed} run(s) ended in an error (see `tomo lab report --runs`)", highlight=False)
        raise typer.Exit(1)


def _replays(store: LabStore, suite: str, models: list[str]) -> dict[tuple[str, str, int], list[str]]:
    """The recorded replies each ``replay:VARIANT`` model answers with, by (spec, task, repeat)."""
    from tomo.lab.replay import replayed_variant, replies_by_run

    wanted = [(m, v) for m in models if (v := replayed_variant(m)) is not None]
    if not wanted:
        return {}
    records = store.records(suite)
    try:
        return {(spec, task, repeat): replies for spec, variant in wanted
                for (task, repeat), replies in replies_by_run(records, suite, variant).items()}
    except ConfigError:
        store.close()
        raise


def _errored(record: RunRecord) -> bool:
    return bool(record.error and record.outcome == "error")


def _record_line(record: RunRecord) -> str:
    mark = "[green]solved[/]" if record.solved else "[red]failed[/]"
    claim = " [bold red]FALSE CLAIM[/]" if record.false_claim else ""
    said = {"timeout": "stopped by the lab's --timeout", "error": "the run failed"}.get(
        record.outcome, f"tomo said {record.outcome}")  # tomo says neither: the lab does
    return f"{record.task} · {record.variant} · {mark} · {said}{claim} · {record.wall_s:.0f} s"


def _run_distributed(store: LabStore, url: str, suite: Suite, jobs: list[Job], settings: RunSettings,
                     parallel: int | None, as_json: bool, err: Console) -> int:
    """Queues ``jobs`` on DBOS, serves the queue here too, and prints each record as it lands (from whichever
    process judged it) until every run is recorded or no run of the plan is left queued or running. Returns how
    many ended in an error, counting a run that ended without a record."""
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tomo.lab import distributed as dist
    from tomo.lab.records import as_dict

    executor = dist.launch(store, dist.system_url(url), concurrency=parallel)
    failed = 0
    try:
        ids = dist.enqueue(suite, jobs, settings)
        wanted = [job.key(suite.name) for job in jobs]
        err.print(f"queued {len(ids)} run(s) on {dist.QUEUE!r}; serving it here as {executor}, and any "
                  f"`tomo lab worker --db` on the same database takes them too", highlight=False)
        seen: set[tuple[str, str, str, str, str, int]] = set()
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=False) as progress:
            bar = progress.add_task(f"lab {suite.name} (distributed)", total=len(wanted))
            while True:
                live = dist.still_live(ids)  # before the records: a run's record lands before its workflow ends
                landed = store.keys(suite.name)
                for key in wanted:
                    record = store.get(key) if key in landed and key not in seen else None
                    if record is None:
                        continue
                    seen.add(key)
                    failed += _errored(record)
                    progress.console.print(_record_line(record), highlight=False)
                    if as_json:
                        typer.echo(json.dumps(as_dict(record)))
                    progress.advance(bar)
                if len(seen) == len(wanted) or not live:
                    break
                time.sleep(dist.POLL)
        for workflow_id, error in dist.failures(ids).items():
            err.print(f"{workflow_id}: {error}", highlight=False, markup=False)
        missing = len(wanted) - len(seen)
        if missing:
            err.print(f"{missing} run(s) ended without a record", highlight=False)
        return failed + missing
    except KeyboardInterrupt:
        err.print("interrupted: the runs recorded so far stay, the queued ones stay queued for `tomo lab worker`; "
                  "run the same command to wait for them again", highlight=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        dist.shutdown()


@lab_app.command("worker")
def worker_command(
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    concurrency: int = typer.Option(None, "--concurrency", min=1,
                                    help="Runs at once in each serving process (DBOS keeps one limit for the "
                                         "queue: this sets it for all; default: leave it, 1 for a new queue)."),
    stale_after: float = typer.Option(30.0, "--stale-after", min=1.0,
                                      help="Seconds of silence after which another process's runs are taken over."),
) -> None:
    """Serve the distributed lab's queue: judge and record the runs that `tomo lab run --distributed` queued on the
    same --db, until Ctrl-C. Start one per machine (or per model server) with a PostgreSQL --db; with an SQLite --db
    every process must be on this machine.

    Exit status: 130 after Ctrl-C (143 after SIGTERM): a run in hand goes back to the queue; 2 a usage error.
    """
    import threading

    from tomo.lab import distributed as dist
    from tomo.lab.records import LabStore, db_url

    url = db_url(db)
    system = dist.system_url(url)
    err = rich_console(stderr=True)
    store = LabStore(url)
    stopped: list[int] = []
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stopped.append(signum)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    try:
        executor = dist.launch(store, system, concurrency=concurrency, stale_after=stale_after,
                               on_done=lambda record: err.print(_record_line(record), highlight=False))
        err.print(f"serving the lab queue {dist.QUEUE!r} as {executor}; Ctrl-C to stop", highlight=False)
        while not stop.wait(0.5):
            pass
    finally:
        dist.shutdown()
        store.close()
    err.print("stopped: a run in hand goes back to the queue for another worker", highlight=False)
    raise typer.Exit(128 + (stopped[0] if stopped else signal.SIGINT))


@lab_app.command("report")
def report_command(
    suite: str = typer.Argument(None, metavar="[SUITE]", help="Only this suite's runs (default: every suite)."),
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    runs: bool = typer.Option(False, "--runs", help="List every run (task, variant, verdict, claim) too."),
    variants: list[str] = typer.Option(None, "--variant", metavar="NAME",
                                       help="Only this variant's runs (repeat for several; default: every one)."),
    markdown: Path = typer.Option(None, "--markdown", metavar="FILE",
                                  help="Write the table into FILE (e.g. docs/benchmarks.md) between "
                                       "<!-- lab:SUITE --> markers, replacing the last report there."),
    plot: Path = typer.Option(None, "--plot", metavar="PNG", help="Draw solve rates with intervals (matplotlib)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Per variant and model: solved (by the oracle) with a 95% interval, false claims, tokens, wall time; paired
    A/B differences with an exact McNemar test; by task kind."""
    from tomo.lab import report as rep
    from tomo.lab.records import as_dict
    from tomo.lab.runner import machine

    records = _recorded(db, suite, variants)
    suites = sorted({r.suite for r in records})
    if as_json:
        payload = {s: rep.to_json([r for r in records if r.suite == s]) for s in suites}
        if runs:
            payload["runs"] = [as_dict(r) for r in records]  # type: ignore[assignment]
        typer.echo(json.dumps(payload, indent=2))
    else:
        for name in suites:
            mine = [r for r in records if r.suite == name]
            say(f"suite {name}: {len({r.task for r in mine})} tasks, {len(mine)} runs")
            print_rows(["model", "variant", "solved", "95% CI", "false claims", "claims", "err/timeout",
                        "tokens in/out", "wall"],
                       [[rep.short_model(r.model), r.variant, f"{r.solved}/{r.runs} ({r.rate:.0%})",
                         f"{r.interval[0]:.0%}–{r.interval[1]:.0%}",
                         (str(r.false_claims), "red") if r.false_claims else "0", str(r.claims),
                         f"{r.errors}/{r.timeouts}", f"{r.input_tokens:,.0f}/{r.output_tokens:,.0f}",
                         f"{r.wall_s:.0f} s"] for r in rep.rows(mine)])
            for p in rep.pairs(mine):
                if p.pairs:
                    say(f"  {p.a} vs {p.b} ({rep.short_model(p.model)}): {p.pairs} shared, only {p.a} {p.only_a}, "
                        f"only {p.b} {p.only_b}, p = {p.p_value:.3f}")
        if runs:
            print_rows(["suite", "task", "variant", "model", "solved", "tomo said", "wall"],
                       [[r.suite, r.task, r.variant, rep.short_model(r.model),
                         ("yes", "green") if r.solved else ("no", "red"),
                         (r.outcome + " (FALSE CLAIM)", "red") if r.false_claim else r.outcome, f"{r.wall_s:.0f} s"]
                        for r in records])
    if markdown is not None:
        for name in suites:
            only = "".join(f" --variant {shlex.quote(v)}" for v in variants or [])
            section = rep.markdown(name, [r for r in records if r.suite == name], machine=machine(),
                                   command=f"tomo lab report {name}{only} --markdown {markdown}")
            _replace_section(markdown, name, section)
        rich_console(stderr=True).print(f"wrote the report into {markdown}", highlight=False)
    if plot is not None:
        try:
            rep.plot(records, str(plot), f"tomo lab: {', '.join(suites)}")
        except ImportError as exc:
            raise ConfigError("the plot needs matplotlib", hint="pip install -e '.[lab]'") from exc
        rich_console(stderr=True).print(f"wrote {plot}", highlight=False)


def _recorded(db: str | None, suite: str | None, variants: list[str] | None) -> list[RunRecord]:
    """The runs recorded in ``db`` (of ``suite``, of ``variants``): a usage error when there are none, or a variant
    asked for has none."""
    from tomo.lab.records import open_for_reading

    store = open_for_reading(db)
    try:
        records = store.records(suite)
    finally:
        store.close()
    if not records:
        where = f" for suite {suite!r}" if suite else ""
        raise ConfigError(f"no lab runs recorded{where} in {db or '.tomo/lab.sqlite'}",
                          hint="run some with `tomo lab run SUITE --model SPEC`")
    if variants:
        known = sorted({r.variant for r in records})
        unknown = [v for v in variants if v not in known]
        if unknown:
            raise ConfigError(f"no runs of variant {', '.join(map(repr, unknown))} recorded",
                              hint=f"the variants recorded are {', '.join(known)}")
        records = [r for r in records if r.variant in variants]
    return records


@lab_app.command("export")
def export_command(
    suite: str = typer.Argument(None, metavar="[SUITE]", help="Only this suite's runs (default: every suite)."),
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    variants: list[str] = typer.Option(None, "--variant", metavar="NAME",
                                       help="Only this variant's runs (repeat for several; default: every one)."),
    out: Path = typer.Option(None, "--out", "-o", metavar="FILE", help="Write the lines here (default: stdout)."),
    transcripts: bool = typer.Option(False, "--transcripts",
                                     help="Keep each run's transcript (most of a record's size; a replay needs it)."),
) -> None:
    """Write recorded runs as JSON lines, one record each, to keep or share beside the report they made: a
    database stays on the machine that ran it. `tomo lab import` reads them back."""
    from tomo.lab.records import to_jsonl

    records = _recorded(db, suite, variants)
    text = to_jsonl(records, transcripts=transcripts)
    if out is None:
        sys.stdout.write(text)
        return
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    rich_console(stderr=True).print(f"wrote {len(records)} run(s) to {out}", highlight=False)


@lab_app.command("import")
def import_command(
    files: list[Path] = typer.Argument(..., metavar="FILE...", help="JSON lines written by `tomo lab export`."),
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Record the runs of exported JSON lines in --db, so `report`, `bless` and `run` (which skips them) read them
    as their own. A run recorded already is left as it is; a bad line anywhere imports nothing."""
    from tomo.lab.records import LabStore, db_url, from_jsonl

    records = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}", hint="name a file `tomo lab export` wrote") from exc
        records += from_jsonl(text, str(path))
    store = LabStore(db_url(db))
    try:
        added, skipped = store.add_new(records)
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps({"added": added, "already_recorded": skipped}))
    else:
        say(f"imported {added} run(s); {skipped} already recorded, left as they were")


@lab_app.command("repros")
def repros_command(
    suite: str = typer.Argument(None, metavar="[SUITE]", help="Only this suite's runs (default: every suite)."),
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    variants: list[str] = typer.Option(None, "--variant", metavar="NAME",
                                       help="Only this variant's runs (repeat for several; default: every one)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Were the tests tomo kept right? Each test a run kept to judge its fixes (`--strategy trials`: the
    reproduction, the task's own examples, a second test), run alone on the task's reference solution, in tomo's
    sandbox: a right test passes there. A wrong one (a value the task does not ask for) dooms every trial after it."""
    from tomo.lab.repros import judge_kept
    from tomo.lab.suite import load_suite

    records = _recorded(db, suite, variants)
    judged = []
    for name in sorted({r.suite for r in records}):
        try:
            loaded = load_suite(name)
        except ConfigError as exc:
            rich_console(stderr=True).print(f"skipped suite {name!r}: {exc.message}", highlight=False)
            continue
        with rich_console(stderr=True).status(f"running the kept tests of {name} on the reference solutions"):
            judged += judge_kept(loaded, [r for r in records if r.suite == name], sys.executable)
    right = sum(t.right for t in judged)
    by = {b: (sum(t.right for t in judged if t.by == b), sum(t.by == b for t in judged))
          for b in dict.fromkeys(t.by for t in judged)}
    if as_json:
        typer.echo(json.dumps({"right": right, "kept": len(judged), "by": {b: {"right": r, "kept": n}
                                                                          for b, (r, n) in by.items()},
                               "tests": [{"task": t.task, "variant": t.variant, "model": t.model,
                                          "repeat": t.repeat, "path": t.path, "by": t.by, "right": t.right,
                                          "failure": t.failure} for t in judged]}, indent=2))
        return
    if not judged:
        say("no kept tests in these runs' transcripts: only `--strategy trials` keeps tests, and runs recorded "
            "before tomo wrote `reproduction_kept` events into its transcripts have none")
        return
    print_rows(["task", "variant", "by", "test", "on the reference", "failure"],
               [[t.task, t.variant, t.by, t.path, ("right", "green") if t.right else ("wrong", "red"),
                 t.failure[:100]] for t in judged])
    said = ", ".join(f"{b} {r}/{n}" for b, (r, n) in by.items())
    say(f"right on the reference: {right} of {len(judged)} kept tests ({said})")


def _replace_section(path: Path, suite: str, section: str) -> None:
    """Between ``<!-- lab:SUITE -->`` and ``<!-- /lab:SUITE -->`` (appended when absent); the rest of FILE is kept."""
    begin, end = f"<!-- lab:{suite} -->", f"<!-- /lab:{suite} -->"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{begin}\n{section.rstrip()}\n{end}"
    if begin in text and end in text and text.index(begin) < text.index(end):
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + block + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


@lab_app.command("swebench")
def swebench_command(
    data: Path = typer.Argument(..., metavar="DATA.jsonl",
                                help="SWE-bench records, one JSON object a line (e.g. "
                                     "../shared/data/swebench-lite/dev.jsonl)."),
    git_dir: list[str] = typer.Option([], "--git-dir", metavar="OWNER/NAME=GITDIR",
                                      help="Where a repository's history is: a bare repository or a clone's .git "
                                           "(repeat, one per repository of the chosen records)."),
    out: Path = typer.Option(..., "--out", metavar="DIR",
                             help="The suite folder to write: new, empty, or a suite this command wrote (replaced)."),
    instance: list[str] = typer.Option([], "--id", metavar="ID", help="Only these instance ids (repeat)."),
    repo: list[str] = typer.Option([], "--repo", metavar="OWNER/NAME", help="Only records of this repository "
                                                                             "(repeat)."),
    limit: int = typer.Option(None, "--limit", min=1, metavar="N", help="At most N records (the first chosen)."),
    name: str = typer.Option("swebench-lite", "--name", metavar="NAME", help="The suite's name in the lab's records."),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Write SWE-bench records as a lab suite: per record the repository at its base commit (repo/), the test
    patch's files and an oracle running its FAIL_TO_PASS and PASS_TO_PASS tests with pytest (hidden/), and the gold
    patch's files (reference/). Then `tomo lab run DIR --model reference` measures which run here.

    The suite is built beside DIR and renamed into place: a failure leaves DIR as it was. Repositories whose harness
    is not pytest (django) are refused by name.
    """
    import shlex

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from tomo.lab import swebench as swe

    records = swe.choose(swe.read_records(data), instance, repo, limit)
    dirs = swe.parse_git_dirs(git_dir)
    swe.check_supported(records, dirs)  # refused before the progress bar starts
    swe.check_out(out)
    err = rich_console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as progress:
        bar = progress.add_task("swebench", total=len(records))

        def on_task(i: int, record: swe.Record) -> None:
            progress.update(bar, completed=i, description=f"swebench: {record.instance_id}")

        built = swe.build_suite(records, dirs, out, name=name, source=data.name, on_task=on_task)
        progress.update(bar, completed=len(records))
    if as_json:
        typer.echo(json.dumps({"suite": name, "out": str(out), "tasks": [
            {"id": b.id, "repo": b.repo, "base_commit": b.base_commit, "check": b.check, "hidden": b.hidden,
             "reference": b.reference, "fail_to_pass": len(b.fail_to_pass), "pass_to_pass": len(b.pass_to_pass),
             "pythonpath": b.pythonpath, "dropped": b.dropped} for b in built]}, indent=2))
        return
    print_rows(["task", "repo", "base", "tests", "reference"],
               [[b.id, b.repo, b.base_commit[:12], f"{len(b.fail_to_pass)} fail-to-pass, {len(b.pass_to_pass)} "
                 f"pass-to-pass{f' ({len(b.dropped)} id(s) that are no test dropped)' if b.dropped else ''}",
                 ", ".join(b.reference)] for b in built])
    say(f"wrote suite {name!r} ({len(built)} task(s)) to {out}; its ceiling: tomo lab run {shlex.quote(str(out))} "
        "--model reference --variant plain")


@lab_app.command("bless")
def bless_command(
    suite: str = typer.Argument(..., metavar="SUITE", help="The suite whose runs decide."),
    db: str = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    out: Path = typer.Option(None, "--out", metavar="FILE",
                             help="Where to write the list (default: the blessed.json tomo ships and reads)."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON too."),
) -> None:
    """Write the blessed list from the recorded runs of SUITE: each model's best variant against the engine ceiling
    (model 'reference') under the same variant. `tomo models` shows it; detection prefers blessed models."""
    from tomo.lab.bless import bless, write
    from tomo.lab.records import open_for_reading
    from tomo.models.blessed import BLESSED_FILE

    store = open_for_reading(db)
    try:
        data = bless(suite, store.records(suite))
    finally:
        store.close()
    target = out or BLESSED_FILE
    write(data, target)
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        for m in data["models"]:
            say(f"{m['name']}: solved {m['solved']}/{m['tasks']} ({m['rate']:.0%}; ceiling {m['ceiling_rate']:.0%}), "
                f"{m['false_claims']} false claim(s): {'blessed' if m['blessed'] else 'not blessed'}")
        say(f"wrote {target}")
