"""`tomo team REQUEST`: run a task graph of roles; `tomo team resume|show|list` for the jobs in the store."""

from __future__ import annotations

import asyncio
import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text
from sqlalchemy import inspect
from sqlalchemy.exc import DBAPIError
from typer.core import TyperGroup

from tomo.agents import load_agents
from tomo.cli import app
from tomo.cli.help_names import model_help
from tomo.cli.rows import rich_console
from tomo.cli.safe import text as shown
from tomo.cli.team_oi import OiRunner
from tomo.cli.team_render import TeamProgress, print_jobs, render_job
from tomo.config import load_settings
from tomo.errors import ConfigError
from tomo.store.db import connect, default_url, reach, sqlite_file
from tomo.store.jobs import JobStore
from tomo.store.jobs import jobs as job_table
from tomo.team import (
    JobResult,
    ModelChooser,
    TaskGraph,
    Team,
    TeamSettings,
    check_roles,
    parse_roles,
    parse_stages,
)
from tomo.tools import Registry

DEFAULT_STAGES = "plan:planner | build:implementer,tester | review:reviewer"
BACKENDS = ("local", "dbos")


class _RunByDefault(TyperGroup):
    """``tomo team "do x"`` means ``tomo team run "do x"``: a first word that is not a subcommand is a request."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


team_app = typer.Typer(cls=_RunByDefault, no_args_is_help=True, add_completion=False,
                       help="Run a task graph of roles (planner, researcher, implementer, tester, reviewer) that "
                            "checkpoints every worker and resumes after a crash.")
app.add_typer(team_app, name="team")

_DB = typer.Option(None, "--db", metavar="URL", help="Store URL (default: WORKSPACE/.tomo/team.sqlite, or TOMO_DB).")
_WORKSPACE = typer.Option(Path("."), "--workspace", metavar="DIR",
                          help="The job's workspace (default: current directory).")


def _store(db: str | None, workspace: Path) -> JobStore:
    """The job store of a verb that writes (run, resume, worker): created when new, its tables too."""
    if not workspace.is_dir():
        raise ConfigError(f"--workspace {workspace} is not a directory", hint="pass an existing directory")
    store = JobStore(connect(db or default_url(workspace, "team.sqlite")))
    reach(store.engine)  # a server that does not answer: one line naming its host and port, exit 1
    try:
        store.create_schema()
    except DBAPIError as exc:
        raise _unusable(store, exc) from exc
    return _probed(store)


def _reader(db: str | None, workspace: Path) -> JobStore | None:
    """The job store of a verb that only reads (list, show), or ``None`` when no job was ever written there: a
    SQLite file that is not there is not created (nor its folder), and a server without the team's tables does not
    get them. A listing leaves the workspace and the server as it found them."""
    if not workspace.is_dir():
        raise ConfigError(f"--workspace {workspace} is not a directory", hint="pass an existing directory")
    url = db or default_url(workspace, "team.sqlite", create=False)
    path = sqlite_file(url)
    if path is not None and not path.is_file():
        return None
    store = JobStore(connect(url))
    reach(store.engine)
    if not inspect(store.engine).has_table(job_table.name):
        store.engine.dispose()
        return None
    return _probed(store)


def _probed(store: JobStore) -> JobStore:
    try:
        store.job_ids()  # the tables answer: an older schema or a server that refuses us is caught here
    except DBAPIError as exc:
        raise _unusable(store, exc) from exc
    return store


def _unusable(store: JobStore, exc: DBAPIError) -> ConfigError:
    shown = store.engine.url.render_as_string(hide_password=True)
    return ConfigError(f"cannot use the job store {shown}: {str(exc.orig).strip().splitlines()[0]}",
                       hint="check --db / TOMO_DB (may this user create tables?); a store written by an older "
                            "tomo can be moved aside and started afresh")


def _team(store: JobStore, workspace: Path, model: str | None, roles: str | None, sink: TeamProgress | None,
          backend: str, stages: Any = ()) -> Team:
    settings = load_settings(workspace.resolve())
    team_settings = TeamSettings.from_settings(settings)
    chooser = ModelChooser(settings, primary=model, roles=parse_roles(roles or ""), team=team_settings)
    wanted = {w.agent for s in stages for w in s.workers if w.agent}
    agents = {n: a for n, a in load_agents(settings, Registry()).items() if n in wanted} if wanted else {}
    return Team(store, chooser, workspace=workspace, sink=sink, agents=agents, backend=backend,
                code_runner=OiRunner(settings))


def _new_job_id() -> str:
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _finish(console: Console, result: JobResult, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({**result.record.to_dict(), "noop": result.noop, "message": result.message}, indent=2))
    else:
        if result.output is not None and not result.noop:
            console.print(shown(result.output))  # the team's answer: shown, never obeyed
        style = "green" if result.status == "complete" else "bold red"
        err = rich_console(stderr=True, highlight=False)
        err.print(Text(result.message, style=style), soft_wrap=True)
        err.print(Text(f"{result.record.total_tokens:,} tokens ({result.record.input_tokens:,} in, "
                       f"{result.record.output_tokens:,} out); `tomo team show {result.job_id}` for every worker",
                       style="dim"), soft_wrap=True)
    if result.status != "complete":  # the exit-code table (tomo.cli.EXIT_CODES): 3 not done, 1 a worker failed
        raise typer.Exit(3 if result.status == "incomplete" else 1)


def _dbos_url(team: Team, explicit: str | None) -> str:
    import tomo.team.dbos_backend as dbos_backend

    return dbos_backend.system_url(team.store.engine.url.render_as_string(hide_password=False), team.workspace,
                                   explicit)


def _execute(team: Team, backend: str, graph: TaskGraph | None, request: str | None, job_id: str,
             budget: int | None = None, dbos_url: str | None = None) -> JobResult:
    try:
        return _execute_on(team, backend, graph, request, job_id, budget, dbos_url)
    except KeyboardInterrupt:
        # what finished is checkpointed; say so in the store instead of leaving the job "running"
        if team.store.graph_of(job_id) is not None:
            team.store.job_finished(job_id, status="incomplete",
                                    reason=f"interrupted (Ctrl-C); `tomo team resume {job_id}` continues it")
        rich_console(stderr=True, highlight=False).print(
            Text(f"interrupted; what finished is kept: `tomo team resume {job_id}` continues the job"),
            soft_wrap=True)
        raise typer.Exit(130) from None


def _execute_on(team: Team, backend: str, graph: TaskGraph | None, request: str | None, job_id: str,
                budget: int | None, dbos_url: str | None) -> JobResult:
    if backend == "dbos":
        import tomo.team.dbos_backend as dbos_backend

        url = _dbos_url(team, dbos_url)
        if graph is not None and request is not None:
            return dbos_backend.run(team, graph, request, url=url)
        return dbos_backend.resume(team, job_id, budget=budget, url=url)
    if graph is not None and request is not None:
        return asyncio.run(team.run(graph, request))
    return asyncio.run(team.resume(job_id, budget=budget))


@team_app.command("run")
def run_cmd(
    request: str = typer.Argument(..., help='What the team should do, e.g. "add a --json flag to tomo list".'),
    model: str | None = typer.Option(None, "--model", metavar="SPEC",
                                     help=model_help("Primary model spec (roles the map does not name)")),
    roles: str | None = typer.Option(None, "--roles", metavar="MAP",
                                     help="Role to tier or spec: planner=fast,implementer=deep."),
    stages: str | None = typer.Option(None, "--stages", metavar="STAGES",
                                      help=f'Stages in order, workers in parallel: "{DEFAULT_STAGES}"'
                                           " (@NAME is an agent, role*2 two workers)."),
    budget: int | None = typer.Option(None, "--budget", min=1, metavar="TOKENS",
                                      help="Token budget (input+output) for the job."),
    backend: str = typer.Option("local", "--backend", metavar="BACKEND",
                                help="local (asyncio in this process) or dbos."),
    job_id: str | None = typer.Option(None, "--job-id", metavar="ID", help="The job's id (default: a timestamp)."),
    db: str | None = _DB,
    workspace: Path = _WORKSPACE,
    as_json: bool = typer.Option(False, "--json", help="Print the finished job as JSON instead of its output."),
    detach: bool = typer.Option(False, "--detach", help="dbos only: enqueue the job and return; `tomo team worker` "
                                "processes run it."),
    dbos_db: str | None = typer.Option(None, "--dbos-db", metavar="URL",
                                       help="DBOS system database (default: the --db server "
                                            "when PostgreSQL, else WORKSPACE/.tomo/dbos.sqlite)."),
) -> None:
    """Run REQUEST through the stages; `tomo team REQUEST` is the same.

    Exit codes: 0 done (verified); 3 not done (unverified, unchanged with a gate or --apply, a limit);
    1 an error; 2 a usage error; 130 Ctrl-C.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}", hint="use --backend local or --backend dbos")
    if detach and backend != "dbos":
        raise ConfigError("--detach needs --backend dbos", hint="a local job runs in this process; drop --detach")
    settings = TeamSettings.from_settings(load_settings(workspace.resolve()))
    graph_stages = parse_stages(stages or settings.stages or DEFAULT_STAGES)
    check_roles(parse_roles(roles or ""), graph_stages)  # before the store or any model is touched
    graph = TaskGraph(job_id or _new_job_id(), graph_stages, budget if budget is not None else settings.budget)
    console = rich_console(highlight=False)
    progress = TeamProgress(rich_console(stderr=True, highlight=False)) if not as_json else None
    team = _team(_store(db, workspace), workspace, model, roles, progress, backend, graph_stages)
    if detach:
        import tomo.team.dbos_backend as dbos_backend

        team.create(graph, request)
        workflow = dbos_backend.submit(_dbos_url(team, dbos_db), graph.job_id, team.store)
        typer.echo(json.dumps({"job_id": graph.job_id, "workflow_id": workflow}) if as_json else
                   f"job {graph.job_id} enqueued as DBOS workflow {workflow}; `tomo team worker` processes run it")
        return
    if progress is not None:
        progress.console.print(Text(f"job {graph.job_id}: {request}", style="bold"))
    try:
        result = _execute(team, backend, graph, request, graph.job_id, dbos_url=dbos_db)
    finally:
        if progress is not None:
            progress.close()
    _finish(console, result, as_json)


@team_app.command("resume")
def resume_cmd(
    job: str = typer.Argument(..., help="The id of the job to continue (tomo team list shows them)."),
    model: str | None = typer.Option(None, "--model", metavar="SPEC",
                                     help=model_help("Primary model spec for roles the map does not name")),
    roles: str | None = typer.Option(None, "--roles", metavar="MAP",
                                     help="Role to tier or spec: planner=fast,implementer=deep."),
    budget: int | None = typer.Option(None, "--budget", min=1, metavar="TOKENS",
                                      help="A new token budget for the job."),
    backend: str = typer.Option("local", "--backend", metavar="BACKEND", help="local or dbos."),
    db: str | None = _DB,
    workspace: Path = _WORKSPACE,
    as_json: bool = typer.Option(False, "--json", help="Print the job as JSON when it ends."),
    dbos_db: str | None = typer.Option(None, "--dbos-db", metavar="URL",
                                       help="DBOS system database (see tomo team run)."),
) -> None:
    """Continue a job from its first unfinished worker (a complete job is left as it is).

    Exit codes: 0 done (verified); 3 not done (unverified, unchanged with a gate or --apply, a limit);
    1 an error; 2 a usage error; 130 Ctrl-C.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}", hint="use --backend local or --backend dbos")
    store = _store(db, workspace)
    stored = store.graph_of(job)
    graph_stages = TaskGraph.from_dict(job, stored).stages if stored else ()
    if graph_stages:  # an unknown job is said by the resume itself
        check_roles(parse_roles(roles or ""), graph_stages)
    progress = TeamProgress(rich_console(stderr=True, highlight=False)) if not as_json else None
    team = _team(store, workspace, model, roles, progress, backend, graph_stages)
    team.rechoose = bool(model or roles)  # otherwise each worker keeps the model the job was created with
    try:
        result = _execute(team, backend, None, None, job, budget, dbos_url=dbos_db)
    finally:
        if progress is not None:
            progress.close()
    _finish(rich_console(highlight=False), result, as_json)


@team_app.command("show")
def show_cmd(
    job: str = typer.Argument(..., help="The job's id."),
    db: str | None = _DB,
    workspace: Path = _WORKSPACE,
    as_json: bool = typer.Option(False, "--json", help="Print the job as one JSON object."),
    no_outputs: bool = typer.Option(False, "--no-outputs", help="The table only, without each worker's output."),
) -> None:
    """A job's stages and workers: role, model, status, usage, start and end times, and outputs."""
    store = _reader(db, workspace)
    if store is None:
        raise ConfigError(f"no job with id {job!r}: no job has run in {workspace.resolve()} yet",
                          hint="start one with tomo team REQUEST, or give the --workspace (or --db) it ran in")
    record = store.get_job(job)
    if record is None:
        recent = ", ".join(store.job_ids()[:5])
        raise ConfigError(f"no job with id {job!r} in this store",
                          hint=f"`tomo team list` shows the jobs{'; recent: ' + recent if recent else ''}")
    if as_json:
        typer.echo(json.dumps(record.to_dict(), indent=2))
        return
    render_job(rich_console(highlight=False), record, outputs=not no_outputs)


@team_app.command("list")
def list_cmd(
    db: str | None = _DB,
    workspace: Path = _WORKSPACE,
    as_json: bool = typer.Option(False, "--json", help="Print the jobs as a JSON list."),
) -> None:
    """The jobs in the store, newest first."""
    store = _reader(db, workspace)
    jobs = store.list_jobs() if store is not None else []
    if as_json:
        typer.echo(json.dumps([j.to_dict() for j in jobs], indent=2))
        return
    print_jobs(rich_console(highlight=False), jobs)


@team_app.command("worker")
def worker_cmd(
    db: str | None = _DB,
    workspace: Path = _WORKSPACE,
    dbos_db: str | None = typer.Option(None, "--dbos-db", metavar="URL",
                                       help="DBOS system database (see tomo team run)."),
    stale_after: float = typer.Option(10.0, "--stale-after", min=1.0, metavar="SECONDS",
                                      help="Seconds of silence after which another "
                                           "process's work is taken over."),
) -> None:
    """Serve the DBOS queues: run the workers (and jobs) that any process enqueued, until Ctrl-C or SIGTERM."""
    import signal
    import threading

    import tomo.team.dbos_backend as dbos_backend

    progress = TeamProgress(rich_console(stderr=True, highlight=False))
    team = _team(_store(db, workspace), workspace, None, None, progress, "dbos")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    url = _dbos_url(team, dbos_db)
    executor = dbos_backend.launch(team, url, concurrency=team.settings.concurrency, stale_after=stale_after)
    progress.console.print(Text(f"serving tomo's DBOS queues as {executor}", style="bold"))
    try:
        while not stop.wait(0.5):
            pass
    finally:
        dbos_backend.shutdown()
