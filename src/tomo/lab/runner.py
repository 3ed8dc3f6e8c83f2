"""One lab run: a task in a fresh copy, a tomo command line (or the peer) on one model, then the task's own oracle.

tomo runs as a separate process (``python -m tomo VERB PROMPT --root COPY --json``), exactly as a user runs it, so
the lab measures the CLI and not a friendlier in-process path; its JSON gives the claim (``verified``) and the tokens.
Then ``hidden/`` is laid over the copy and the oracle runs in tomo's sandbox (the code under judgement is the model's).
The verdict is the oracle's exit code; tomo's claim is recorded beside it, never used for it.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomo
from tomo.errors import ConfigError
from tomo.lab.records import LabStore, RunRecord
from tomo.lab.replay import replayed_variant
from tomo.lab.replay import write_script as replay_script
from tomo.lab.suite import Suite, Task
from tomo.sandbox.weight import caller_weight, give_weight

REFERENCE = "reference"
"""The model name of the engine ceiling: a scripted perfect model replaying each task's reference solution."""

PRESETS: dict[str, str] = {
    "plain": "run",
    "gated": "run --exec-gate --check auto --engine auto",
    "strict": "run --exec-gate --repro --check auto --engine auto",
    "oi-strict": "run --exec-gate --repro --check auto",
    "honest": "run --exec-gate --claim repro --check auto --engine auto",
    "mini": "mini",
}
"""Variants by name, so ``--variant strict`` needs no flags; ``NAME="flags"`` defines any other."""

VERBS = ("run", "assist", "mini")
TRANSCRIPT_CAP = 2_000_000
ORACLE_OUTPUT_CAP = 20_000


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    args: tuple[str, ...]

    @property
    def verb(self) -> str:
        return self.args[0] if self.args and self.args[0] in VERBS else "run"

    @property
    def flags(self) -> list[str]:
        return list(self.args[1:] if self.args and self.args[0] in VERBS else self.args)

    @property
    def text(self) -> str:
        return shlex.join(self.args)


def parse_variant(spec: str) -> Variant:
    """``NAME="flags"`` (``strict="run --exec-gate --repro"``) or a preset's name (``strict``)."""
    name, eq, flags = spec.partition("=")
    name = name.strip()
    if not eq:
        if name not in PRESETS:
            raise ConfigError(f"unknown variant {name!r}",
                              hint=f"name a preset ({', '.join(PRESETS)}) or define one: NAME=\"run --exec-gate\"")
        flags = PRESETS[name]
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"variant name {name!r} must be letters, digits, - or _", hint='e.g. gated="run --exec-gate"')
    try:
        args = tuple(shlex.split(flags))
    except ValueError as exc:
        raise ConfigError(f"variant {name!r}: cannot split {flags!r}: {exc}", hint="balance the quotes") from exc
    if not args:
        args = ("run",)
    if args[0].startswith("-"):
        args = ("run", *args)
    if args[0] not in VERBS:
        raise ConfigError(f"variant {name!r} starts with {args[0]!r}", hint=f"start with one of: {', '.join(VERBS)}")
    banned = {"--root", "--model", "--json", "--transcript"} & {a.split("=")[0] for a in args}
    if banned:
        raise ConfigError(f"variant {name!r} sets {', '.join(sorted(banned))}, which the lab sets for every run",
                          hint="give the model with --model; the lab chooses the copy and the output")
    return Variant(name, args)


@dataclass(frozen=True, slots=True)
class Job:
    task: Task
    variant: Variant
    model: str
    repeat: int

    def key(self, suite: str) -> tuple[str, str, str, str, str, int]:
        return (suite, self.task.id, self.variant.name, self.variant.text, self.model, self.repeat)


def plan(suite: Suite, tasks: list[Task], variants: list[Variant], models: list[str], repeats: int,
         done: set[tuple[str, str, str, str, str, int]]) -> list[Job]:
    """Every (task, variant, model, repeat) not yet recorded: task-major, so a partial lab compares variants on the
    same tasks, and the kinds taken in turn, so it covers fixes, renames, features and repros alike."""
    # the mini-swe-agent peer has no engine for a ceiling, nor a transcript of tomo's for a replay
    jobs = [Job(t, v, m, r) for r in range(repeats) for t in _kinds_in_turn(tasks) for m in models for v in variants
            if not ((m == REFERENCE or replayed_variant(m) is not None) and v.verb == "mini")]
    return [j for j in jobs if j.key(suite.name) not in done]


def _kinds_in_turn(tasks: list[Task]) -> list[Task]:
    by_kind: dict[str, list[Task]] = {}
    for task in tasks:
        by_kind.setdefault(task.kind, []).append(task)
    queues = list(by_kind.values())
    ordered: list[Task] = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


@dataclass(slots=True)
class RunSettings:
    timeout_s: float = 900.0
    python: str = sys.executable
    keep: Path | None = None
    mini_steps: int = 30
    replays: dict[tuple[str, str, int], list[str]] = field(default_factory=dict)
    """(``replay:VARIANT`` spec, task, repeat) -> the recorded replies that answer that run (:mod:`tomo.lab.replay`)."""


def tomo_build() -> str:
    """tomo's version, and the commit when it runs from a git checkout (``0.1.0+f5888c7``, ``+dirty`` with local
    changes): records made by different code must not be read as one sample. Asked at each run's start, not once
    per `tomo lab run`: a long run's checkout may move between its tasks."""
    source = Path(tomo.__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no", "--",
                                "src"], capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return tomo.__version__
    return f"{tomo.__version__}+{head}{'.dirty' if dirty else ''}"


def machine() -> str:
    return f"{platform.machine()} {os.cpu_count()} cores {platform.system()} py{platform.python_version()}"


def run_job(job: Job, suite: str, settings: RunSettings) -> RunRecord:
    """One run, start to verdict. Anything that goes wrong is recorded as the run's error, never raised past here."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    scratch = Path(tempfile.mkdtemp(prefix=f"tomo-lab-{job.task.id}-"))
    copy = scratch / "repo"
    record = RunRecord(suite=suite, task=job.task.id, kind=job.task.kind, variant=job.variant.name,
                       args=job.variant.text, model=job.model, repeat=job.repeat, started=started, wall_s=0.0,
                       exit_code=-1, claim=False, outcome="error", solved=False, tomo_version=tomo_build(),
                       machine=machine())
    try:
        _fresh_copy(job.task, copy)
        t0 = time.monotonic()
        result = _run_agent(job, copy, scratch, settings)
        record.wall_s = round(time.monotonic() - t0, 2)
        record.exit_code = result.exit_code
        record.claim, record.outcome = result.claim, result.outcome
        record.input_tokens, record.output_tokens = result.input_tokens, result.output_tokens
        record.transcript = result.transcript[:TRANSCRIPT_CAP]
        record.error = result.error
        record.diff = _diff(copy)
        solved, output = judge(job.task, copy, settings.python)
        record.solved, record.oracle_output = solved, output[-ORACLE_OUTPUT_CAP:]
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"
    finally:
        if settings.keep is not None:
            target = settings.keep / keep_name(job)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(scratch, target, symlinks=True, ignore_dangling_symlinks=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return record


def keep_name(job: Job) -> str:
    """The folder ``--keep`` gives a run: task, variant, model and repeat, so no two runs of a lab share one."""
    model = job.model.rpartition("#")[2] if job.model.startswith("openai-compat:") else job.model
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in model)[-60:]
    return f"{job.task.id}-{job.variant.name}-{safe}-{job.repeat}"


def _git(copy: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "lab", "GIT_AUTHOR_EMAIL": "lab@tomo.invalid",
           "GIT_COMMITTER_NAME": "lab", "GIT_COMMITTER_EMAIL": "lab@tomo.invalid"}
    done = subprocess.run(["git", *args], cwd=copy, capture_output=True, text=True, env=env, check=True)
    return done.stdout


def copy_repo(task: Task, copy: Path) -> None:
    """The task's repo/ at ``copy``, without caches a local run may have left in it."""
    shutil.copytree(task.repo, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))


def with_python(words: list[str], python: str) -> list[str]:
    """A task's command with ``python`` for the word `python`: the lab's interpreter, whatever PATH holds."""
    return [python if word == "python" else word for word in words]


def _fresh_copy(task: Task, copy: Path) -> None:
    """The task's repo/ as a one-commit git checkout, so the diff is git's and history-aware tools see a project."""
    copy_repo(task, copy)
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-q", "--no-verify", "-m", "task start")


def _diff(copy: Path) -> str:
    _git(copy, "add", "-A")
    return _git(copy, "diff", "--cached", "--no-color", "--", ".", ":(exclude).tomo")


@dataclass(slots=True)
class AgentResult:
    exit_code: int
    claim: bool
    outcome: str
    input_tokens: int = 0
    output_tokens: int = 0
    transcript: str = ""
    error: str = ""


def tomo_argv(job: Job, copy: Path, transcript: Path, python: str, script: Path | None = None) -> list[str]:
    model = f"scripted:{script}" if script is not None else job.model
    flags = job.variant.flags
    if job.model == REFERENCE and not _trials(flags):  # a script cannot see assist's plan handles: the ceiling goes
        flags = _without_engine(flags)  # through the oi engine (trials keep --engine auto: the harness renames alone)
    unattended = ["--yes"] if job.variant.verb == "run" and "--yes" not in flags and "-y" not in flags else []
    return [python, "-m", "tomo", job.variant.verb, job.task.prompt, "--root", str(copy), "--model", model,
            "--json", "--transcript", str(transcript), *unattended, *flags]


def _trials(flags: list[str]) -> bool:
    from tomo.lab.ceiling import option

    return option(flags, "--strategy") == "trials"


def _without_engine(flags: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for flag in flags:
        if skip:
            skip = False
            continue
        if flag == "--engine":
            skip = True
            continue
        if not flag.startswith("--engine="):
            out.append(flag)
    return out


def _run_agent(job: Job, copy: Path, scratch: Path, settings: RunSettings) -> AgentResult:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "NO_COLOR": "1", "TERM": "dumb",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(tomo.__file__).resolve().parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))}
    transcript = scratch / "transcript.jsonl"
    if job.variant.verb == "mini":
        argv = [settings.python, "-m", "tomo.lab.peer_mini", "--model", job.model, "--root", str(copy),
                "--steps", str(settings.mini_steps), "--transcript", str(transcript), "--", job.task.prompt]
    else:
        script = None
        if job.model == REFERENCE:
            from tomo.lab.ceiling import write_script

            script = write_script(job.task, job.variant.flags, scratch / "reference.json")
        elif replayed_variant(job.model) is not None:
            replies = settings.replays.get((job.model, job.task.id, job.repeat))
            if replies is None:
                return AgentResult(-1, False, "error", error=f"{job.model}: no recorded run of {job.task.id} "
                                                             f"(repeat {job.repeat}) to replay")
            script = replay_script(replies, scratch / "replay.json")
        argv = tomo_argv(job, copy, transcript, settings.python, script)
    code, stdout, stderr, timed_out = _spawn(argv, env, settings.timeout_s)
    text = transcript.read_text(encoding="utf-8", errors="replace") if transcript.is_file() else ""
    if timed_out:
        return AgentResult(code, False, "timeout", transcript=text,
                           error=f"stopped after {settings.timeout_s:.0f} s (--timeout)\n{stderr[-4000:]}")
    data = _last_json(stdout)
    if data is None:
        return AgentResult(code, False, "error", transcript=text,
                           error=f"no JSON on stdout (exit {code})\n{stderr[-4000:]}")
    return _from_json(code, data, text, stderr)


def _from_json(code: int, data: dict[str, Any], transcript: str, stderr: str) -> AgentResult:
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else data
    assert isinstance(summary, dict)
    usage = summary.get("usage") or {}
    claim = bool(summary.get("verified", summary.get("submitted", False)))
    outcome = str(summary.get("outcome") or ("verified" if claim else "unverified"))
    said = str(summary.get("reason") or "") if outcome == "error" else ""  # what went wrong, before the log's tail
    return AgentResult(code, claim, outcome, int(usage.get("input_tokens") or 0),
                       int(usage.get("output_tokens") or 0), transcript,
                       "" if code in (0, 3) else "\n".join(filter(None, [said, stderr[-4000:]])))


def _last_json(stdout: str) -> dict[str, Any] | None:
    """The JSON object tomo printed: the whole stdout, or failing that the last line that parses."""
    for candidate in [stdout, *reversed(stdout.splitlines())]:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _spawn(argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[int, str, str, bool]:
    """Runs in its own process group so a timeout takes the agent and everything it started, at the lab's own
    weight (a lab lowered beside a model run stays lowered: :mod:`tomo.sandbox.weight`)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, env=env, start_new_session=True)
    give_weight(proc.pid, caller_weight())
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return proc.returncode if proc.returncode is not None else -9, out, err, True
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)


_LIVE: set[subprocess.Popen[str]] = set()
_LIVE_LOCK = threading.Lock()
"""Agents in flight: their own process groups do not get the terminal's Ctrl-C, so an interrupted lab ends them."""


def stop_all() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def judge(task: Task, copy: Path, python: str) -> tuple[bool, str]:
    """hidden/ over the result, then the oracle in tomo's sandbox: strict (bubblewrap) where it is installed."""
    if task.hidden.is_dir():
        shutil.copytree(task.hidden, copy, dirs_exist_ok=True)
    return asyncio.run(run_boxed(with_python(shlex.split(task.oracle), python), copy, task.timeout_s, python))


async def run_boxed(argv: list[str], copy: Path, timeout_s: float, python: str) -> tuple[bool, str]:
    """``argv`` in ``copy``, in tomo's sandbox (strict where bubblewrap is installed): passed, and what it printed."""
    from tomo.sandbox.bwrap import find_bwrap
    from tomo.sandbox.factory import make_sandbox
    from tomo.sandbox.model import Limits

    box = make_sandbox("strict" if find_bwrap() else "local")
    result = await box.run(argv, "argv", copy, Limits(timeout_s=timeout_s))
    notes = "".join(f"\n[{note}]" for note in getattr(result, "notes", []) or [])
    return result.exit_code == 0 and not result.timed_out, result.output + notes


def run_all(store: LabStore, suite: Suite, jobs: list[Job], settings: RunSettings, *, parallel: int = 1,
            on_start: Callable[[Job], None] | None = None,
            on_done: Callable[[Job, RunRecord], None] | None = None) -> list[RunRecord]:
    """Runs ``jobs`` (``parallel`` at a time) and records each as it is judged: an interrupted lab loses only the
    runs in flight, and the next ``tomo lab run`` starts where this one stopped."""
    records: list[RunRecord] = []
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        queue: Iterator[Job] = iter(jobs)
        running: dict[Future[RunRecord], Job] = {}

        def submit_next() -> None:
            job = next(queue, None)
            if job is not None:
                if on_start:
                    on_start(job)
                running[pool.submit(run_job, job, suite.name, settings)] = job

        for _ in range(max(1, parallel)):
            submit_next()
        try:
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    job = running.pop(future)
                    record = future.result()
                    store.add(record)
                    records.append(record)
                    if on_done:
                        on_done(job, record)
                    submit_next()
        except BaseException:
            for future in running:
                future.cancel()
            stop_all()
            raise
    return records
