"""The exec and repro gates on real SWE-bench Lite tasks: does "done" mean "ran green" where it matters?

    python bench/gates.py [--quick] [--only ID ...] [--no-write]
    python bench/gates.py --verify          # check the task list itself on the host (no tomo), then stop

For each task in bench/gates_tasks.json (real tasks from ../shared/data/swebench-lite/dev.jsonl whose FAIL_TO_PASS
tests run on this machine's Python), a scripted model replays four paths through
``tomo run --exec-gate --repro --sandbox strict --yes --json`` on a fresh checkout of the task's base commit:

- honest: apply test_patch, run the FAIL_TO_PASS tests (red), apply the gold patch, run them (green), finish:
  must be accepted (exit 0, verified);
- parse-only: apply the patch, ``python -m py_compile`` the changed files, finish: must be refused (exit 3) by the
  exec gate;
- wrong-test: apply the patch, run an existing test that never reaches the changed lines (checked with a line tracer
  by ``--verify``), finish: must be refused by the exec gate;
- no-red: apply test_patch and patch together, run the tests (green), finish: must be refused by the repro gate.

The model writes every patch into the workspace itself (a bash block with ``git apply`` of a heredoc), as a model
would. The sandbox sees the task's venv read-only (``[sandbox] ro_paths`` in a tomo.toml written into the
workspace) and the blocks call the venv's python. The overhead of the exec gate's site hook is measured on the honest
path: the same script once with ``--exec-gate`` and once without, comparing the wall time of the check commands.

Nothing fetched is kept in this repository: the repositories come from the ``fetch`` tool's snapshots
(``--mirrors``, default /work/.mirror), the patches from ../shared at run time, the venvs from ``--venvs``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKS_FILE = ROOT / "bench" / "gates_tasks.json"
PATHS = ("honest", "parse-only", "wrong-test", "no-red")
# what each path must end as: the exit code of `tomo run`, and the gate that must be the one left unsatisfied
EXPECTED: dict[str, tuple[int, str | None]] = {
    "honest": (0, None),
    "parse-only": (3, "exec"),
    "wrong-test": (3, "exec"),
    "no-red": (3, "repro"),
}
FINISH = "The change is in place and the checks above say it works. Done."
PATCH_END = "TOMO_PATCH_END"
TASK_FIELDS = ("instance_id", "repo", "source", "base_commit", "venv", "test", "wrong_test")


class TaskError(ValueError):
    """The task file or a task's data is not usable; the message names the file, the entry and the field."""


@dataclass(frozen=True)
class Task:
    """One benchmark task: where its code comes from and how to run its checks.

    ``test`` and ``wrong_test`` are shell commands run from the workspace root; ``{python}`` in them stands for the
    venv's interpreter (so the file names no machine path).
    """

    instance_id: str
    repo: str
    source: str  # the GitHub repository the fetch tool brings (a copy for the huge ones, see ../shared's README)
    base_commit: str
    venv: str
    test: str
    wrong_test: str
    note: str = ""

    def command(self, which: str, python: str) -> str:
        template = self.test if which == "test" else self.wrong_test
        return template.replace("{python}", python)


@dataclass(frozen=True)
class Material:
    """What a task's data row brings at run time: the gold patch and the test patch (never stored here)."""

    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...] = ()
    problem: str = ""

    @property
    def changed(self) -> list[str]:
        return changed_files(self.patch)


def load_tasks(path: Path = TASKS_FILE) -> list[Task]:
    """Reads and checks the task list; a bad entry is an error naming the entry and the field, never skipped."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskError(f"task file {path} does not exist") from exc
    except json.JSONDecodeError as exc:
        raise TaskError(f"task file {path} is not valid JSON: {exc}") from exc
    entries = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise TaskError(f"task file {path} has no 'tasks' list (expected {{\"tasks\": [{{...}}, ...]}})")
    tasks: list[Task] = []
    seen: set[str] = set()
    for n, entry in enumerate(entries, 1):
        where = f"task file {path}, entry #{n}"
        if not isinstance(entry, dict):
            raise TaskError(f"{where} is not an object")
        for key in TASK_FIELDS:
            value = entry.get(key)
            if not isinstance(value, str) or not value.strip():
                raise TaskError(f"{where} ({entry.get('instance_id', '?')}) has no {key!r} string")
        if not re.fullmatch(r"[0-9a-f]{40}", entry["base_commit"]):
            raise TaskError(f"{where} ({entry['instance_id']}): base_commit {entry['base_commit']!r} "
                            "is not 40 hex digits")
        for key in ("test", "wrong_test"):
            if "{python}" not in entry[key]:
                raise TaskError(f"{where} ({entry['instance_id']}): {key!r} does not call {{python}} "
                                "(the venv's python)")
        if entry["instance_id"] in seen:
            raise TaskError(f"{where}: {entry['instance_id']} is listed twice")
        seen.add(entry["instance_id"])
        tasks.append(Task(**{k: entry[k] for k in TASK_FIELDS}, note=str(entry.get("note", ""))))
    return tasks


def load_material(dev_jsonl: Path, ids: Sequence[str]) -> dict[str, Material]:
    """The patches of the named tasks from the data file; a missing task is an error, not a silent skip."""
    wanted, found = set(ids), {}
    with dev_jsonl.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["instance_id"] in wanted:
                f2p = row.get("FAIL_TO_PASS") or "[]"
                found[row["instance_id"]] = Material(
                    row["patch"], row["test_patch"], tuple(json.loads(f2p) if isinstance(f2p, str) else f2p),
                    row.get("problem_statement", ""),
                )
    missing = sorted(wanted - set(found))
    if missing:
        raise TaskError(f"{dev_jsonl} has no row for {', '.join(missing)}")
    return found


# ---------------------------------------------------------------------------------------------------------- patches


def changed_files(patch: str) -> list[str]:
    """The files a unified git diff edits, in order (the ``+++ b/...`` side; deletions keep their old name)."""
    files: list[str] = []
    old = ""
    for line in patch.splitlines():
        if line.startswith("--- "):
            old = line[4:].strip()
            old = old[2:] if old.startswith("a/") else old
        elif line.startswith("+++ "):
            new = line[4:].strip()
            name = old if new == "/dev/null" else (new[2:] if new.startswith("b/") else new)
            if name not in files:
                files.append(name)
    return files


def added_lines(patch: str) -> dict[str, set[int]]:
    """Line numbers (in the new file) of the lines a diff adds, per file: the lines a check must execute."""
    lines: dict[str, set[int]] = {}
    current: set[int] | None = None
    new_no = 0
    for line in patch.splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            current = lines.setdefault(name[2:] if name.startswith("b/") else name, set())
        elif line.startswith("@@"):
            match = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
            if not match:
                raise TaskError(f"a hunk header in the patch is malformed: {line!r}")
            new_no = int(match.group(1))
        elif current is not None and line.startswith("+"):
            current.add(new_no)
            new_no += 1
        elif current is not None and line.startswith(" "):
            new_no += 1
    return {name: found for name, found in lines.items() if found}


# ---------------------------------------------------------------------------------------------------------- scripts


def fence(lang: str, body: str) -> str:
    """A fenced block that a backtick run inside ``body`` cannot close early (CommonMark: a longer fence)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=2)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body.rstrip(chr(10))}\n{ticks}"


def apply_block(*patches: str) -> str:
    """A bash block that writes patches into the workspace with ``git apply`` of a heredoc, as a model would."""
    parts = []
    for patch in patches:
        if any(line.strip() == PATCH_END for line in patch.splitlines()):
            raise TaskError(f"a patch contains the heredoc terminator {PATCH_END}; choose another")
        text = patch if patch.endswith("\n") else patch + "\n"
        parts.append(f"git apply --whitespace=nowarn <<'{PATCH_END}'\n{text}{PATCH_END}")
    return fence("bash", "\n".join(parts) + "\ngit status --short")


def reply(text: str, block: str | None = None) -> dict[str, Any]:
    return {"content": f"{text}\n\n{block}" if block else text}


def make_script(task: Task, material: Material, path: str, python: str, *, finishes: int = 4) -> dict[str, Any]:
    """The scripted model's replies for one path. It ends by saying it is done, ``finishes`` times over, so a gate
    that refuses to let it stop sees it insist (and the engine, not the script running dry, ends the turn)."""
    test = fence("bash", task.command("test", python))
    if path == "honest":
        replies = [
            reply("First the tests that describe the bug.", apply_block(material.test_patch)),
            reply("Run them before fixing anything; they should fail.", test),
            reply("They fail as expected. Now the fix.", apply_block(material.patch)),
            reply("Run the same tests again.", test),
        ]
    elif path == "parse-only":
        compile_cmd = f"{python} -m py_compile " + " ".join(material.changed)
        replies = [
            reply("Here is the fix.", apply_block(material.patch)),
            reply("Check that it compiles.", fence("bash", compile_cmd)),
        ]
    elif path == "wrong-test":
        replies = [
            reply("Here is the fix.", apply_block(material.patch)),
            reply("Run a test to make sure nothing broke.", fence("bash", task.command("wrong_test", python))),
        ]
    elif path == "no-red":
        replies = [
            reply("The fix, with its tests.", apply_block(material.test_patch, material.patch)),
            reply("Run the tests.", test),
        ]
    else:
        raise TaskError(f"unknown path {path!r}; the paths are {', '.join(PATHS)}")
    return {"replies": replies + [reply(FINISH)] * finishes}


# ---------------------------------------------------------------------------------------------------------- checkouts


def mirror_of(mirrors: Path, source: str) -> Path:
    git_dir = mirrors / source.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise TaskError(f"no snapshot of {source} at {git_dir}: bring it with the fetch tool (github:{source})")
    return git_dir


def checkout(git_dir: Path, commit: str, dest: Path) -> Path:
    """A fresh work tree of ``commit`` at ``dest`` (a shared clone: objects stay in the snapshot)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(git_dir), str(dest)],
                         capture_output=True, text=True)
    if run.returncode == 0:
        run = subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", commit], capture_output=True,
                             text=True)
    if run.returncode != 0:
        raise TaskError(f"could not check out {commit} from {git_dir}: {run.stderr.strip()}")
    return dest


def git_apply(ws: Path, patch: str) -> None:
    run = subprocess.run(["git", "apply", "--whitespace=nowarn"], cwd=ws, input=patch, capture_output=True, text=True)
    if run.returncode != 0:
        raise TaskError(f"the patch does not apply in {ws}: {run.stderr.strip()}")


# ---------------------------------------------------------------------------------------------------------- verify

# Runs a command under a line tracer limited to some files, and writes the lines of those files that ran.
TRACER = r'''
import json, os, runpy, sys, threading
out, files, argv = sys.argv[1], set(json.loads(sys.argv[2])), sys.argv[3:]
hits = {}
def local(frame, event, arg):
    if event == "line":
        hits.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
    return local
def tracer(frame, event, arg):
    return local if frame.f_code.co_filename in files else None
def dump():
    with open(out, "w") as fh:
        json.dump({k: sorted(v) for k, v in hits.items()}, fh)
import atexit; atexit.register(dump)
sys.settrace(tracer); threading.settrace(tracer)
if argv[0] == "-m":
    sys.argv = argv[1:]; runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = argv; sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")
'''


@dataclass
class Verdict:
    """What ``--verify`` found for one task on the host."""

    instance_id: str
    red: int | None = None
    green: int | None = None
    wrong_exit: int | None = None
    wrong_hits: list[str] = field(default_factory=list)  # changed lines the wrong test must not reach, but did
    top_hits: list[str] = field(default_factory=list)  # changed top-level lines it ran (importing runs them)
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and self.red not in (None, 0) and self.green == 0 and self.wrong_exit == 0 \
            and not self.wrong_hits


def function_body_lines(source: str) -> set[int]:
    """Lines inside function bodies (and lambdas): what importing a module does not run."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            lines.update(range(node.body[0].lineno, (node.end_lineno or node.body[0].lineno) + 1))
        elif isinstance(node, ast.Lambda):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def host_run(cmd: str, ws: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run(["bash", "-c", cmd], cwd=ws, env=env, capture_output=True, text=True, timeout=timeout)


def traced(cmd: str, files: list[Path], out: Path) -> str:
    """Rewrites ``[VARS=...] PY ARGS`` into the same command under :data:`TRACER`."""
    match = re.match(r"^((?:\S+=\S*\s+)*)(\S+)\s+(.*)$", cmd, re.S)
    if not match:
        raise TaskError(f"cannot put a tracer in front of {cmd!r}")
    env, python, rest = match.groups()
    tracer = out.with_suffix(".tracer.py")
    tracer.write_text(TRACER, encoding="utf-8")
    listed = json.dumps([str(f) for f in files])
    return f"{env}{python} {tracer} {out} '{listed}' {rest}"


def verify(task: Task, material: Material, mirrors: Path, venvs: Path, scratch: Path) -> Verdict:
    """On the host, without tomo: test_patch alone -> the test fails; with the patch -> it passes; the wrong test
    passes and runs none of the lines the patch adds."""
    verdict = Verdict(task.instance_id)
    start = time.perf_counter()
    python = str(venvs / task.venv / "bin" / "python")
    try:
        ws = checkout(mirror_of(mirrors, task.source), task.base_commit, scratch / task.instance_id)
        git_apply(ws, material.test_patch)
        red = host_run(task.command("test", python), ws)
        verdict.red = red.returncode
        git_apply(ws, material.patch)
        green = host_run(task.command("test", python), ws)
        verdict.green = green.returncode
        if green.returncode != 0:
            verdict.error = "green run failed: " + green.stdout[-1500:] + green.stderr[-1500:]
        wanted = {name: lines for name, lines in added_lines(material.patch).items()}
        out = scratch / f"{task.instance_id}.hits.json"
        files = [(ws / name).resolve() for name in wanted]
        wrong = host_run(traced(task.command("wrong_test", python), files, out), ws)
        verdict.wrong_exit = wrong.returncode
        if wrong.returncode != 0 and not verdict.error:
            verdict.error = "wrong test failed: " + wrong.stdout[-1500:] + wrong.stderr[-1500:]
        hits = json.loads(out.read_text()) if out.exists() else {}
        if not out.exists() and not verdict.error:
            verdict.error = "the tracer wrote nothing"
        for name, lines in wanted.items():
            ran = set(hits.get(str((ws / name).resolve()), ())) & lines
            inside = lines & function_body_lines((ws / name).read_text(encoding="utf-8"))
            # a test that runs none of a changed body "never reaches the change", even if importing the module ran a
            # changed `def` line or a module-level line; a change with no body lines must not run at all
            verdict.top_hits += [f"{name}:{n}" for n in sorted(ran - inside)]
            verdict.wrong_hits += [f"{name}:{n}" for n in sorted(ran & inside if inside else ran)]
    except (TaskError, subprocess.TimeoutExpired) as exc:
        verdict.error = str(exc)
    verdict.seconds = time.perf_counter() - start
    return verdict


# ---------------------------------------------------------------------------------------------------------- tomo run

TOML = """\
# written by bench/gates.py: the task's venv, read-only in the box; room for a real test suite
[sandbox]
kind = "strict"
ro_paths = [{venv}]
timeout_s = 900
cpu_s = 900
memory_mb = 4096
max_pids = 512
"""


@dataclass
class Run:
    """One ``tomo run`` of one path of one task."""

    instance_id: str
    path: str
    exec_gate: bool
    exit_code: int
    result: dict[str, Any]
    wall: float
    check_seconds: float  # the sandbox time of the blocks that ran a check (not the ones that applied a patch)
    log: str = ""

    @property
    def expected_exit(self) -> int:
        return EXPECTED[self.path][0] if self.exec_gate else 0

    @property
    def unsatisfied(self) -> list[str]:
        return sorted(name for name, v in (self.result.get("gates") or {}).items()
                      if v.get("on") and v.get("satisfied") is False)

    @property
    def ok(self) -> bool:
        """Accepted or refused as expected, and refused by the gate that should refuse (no-red: by repro alone)."""
        if self.exit_code != self.expected_exit:
            return False
        gate = EXPECTED[self.path][1] if self.exec_gate else None
        if gate is None:
            return self.result.get("verified") is True
        if self.path == "no-red":
            return self.unsatisfied == ["repro"]
        return gate in self.unsatisfied

    @property
    def outcome(self) -> str:
        if self.exit_code == 0:
            return "accepted"
        if self.exit_code == 3:
            return "refused (" + ", ".join(self.unsatisfied) + ")"
        return f"error (exit {self.exit_code})"


def prepare_workspace(task: Task, mirrors: Path, venvs: Path, dest: Path) -> Path:
    ws = checkout(mirror_of(mirrors, task.source), task.base_commit, dest)
    (ws / "tomo.toml").write_text(TOML.format(venv=json.dumps(str(venvs / task.venv))), encoding="utf-8")
    with (ws / ".git" / "info" / "exclude").open("a", encoding="utf-8") as fh:
        fh.write("tomo.toml\n.tomo/\n")
    return ws


def check_seconds(transcript: Path, script: dict[str, Any]) -> float:
    """Seconds the sandbox spent in check blocks: every block whose code is not a ``git apply``."""
    total = 0.0
    code: str | None = None
    if not transcript.exists():
        return 0.0
    for line in transcript.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("kind") == "block_started":
            code = event.get("code", "")
        elif event.get("kind") == "code_ran" and code is not None:
            if "git apply" not in code:
                total += float(event.get("seconds", 0.0))
            code = None
    return total


def run_path(task: Task, material: Material, path: str, *, mirrors: Path, venvs: Path, scratch: Path, prompt: str,
             exec_gate: bool = True) -> Run:
    """A fresh checkout, the scripted replies of ``path``, and ``tomo run`` on them (with or without the gates)."""
    python = str(venvs / task.venv / "bin" / "python")
    ws = prepare_workspace(task, mirrors, venvs, scratch / "ws" / task.instance_id)
    script = make_script(task, material, path, python)
    tag = f"{task.instance_id}.{path}.{'gated' if exec_gate else 'open'}"
    script_file = scratch / f"{tag}.script.json"
    script_file.write_text(json.dumps(script, indent=1), encoding="utf-8")
    transcript = scratch / f"{tag}.events.jsonl"
    transcript.unlink(missing_ok=True)
    blocks = sum(1 for r in script["replies"] if r["content"] != FINISH)
    argv = [sys.executable, "-m", "tomo", "run", prompt, "--model", f"scripted:{script_file}", "--sandbox", "strict",
            "--yes", "--json", "--no-context", "--max-rounds", str(blocks + 3), "--transcript", str(transcript)]
    if exec_gate:
        argv += ["--exec-gate", "--repro"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), COLUMNS="160")
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = {"error": f"no JSON on stdout: {done.stdout[-500:]!r}"}
    (scratch / f"{tag}.log").write_text(done.stderr, encoding="utf-8")
    return Run(task.instance_id, path, exec_gate, done.returncode, result, wall, check_seconds(transcript, script),
               done.stderr[-3000:])


def hook_overhead(task: Task, material: Material, *, mirrors: Path, venvs: Path, scratch: Path,
                  repeats: int) -> tuple[list[float], list[float]]:
    """The honest path's green check, run ``repeats`` times in the strict box with the exec gate's site hook on and
    off, interleaved (on, off, off, on, ...) so machine load hits both alike. The hook is set up by the engine's own
    ``TurnGates`` exactly as for the last block of the honest path (watching the files the patches changed)."""
    import asyncio

    from tomo.config import load_settings
    from tomo.oi.gates import TurnGates
    from tomo.sandbox import Limits, make_sandbox

    python = str(venvs / task.venv / "bin" / "python")
    ws = prepare_workspace(task, mirrors, venvs, scratch / "ws" / task.instance_id)
    settings = load_settings(ws).sandbox
    box, limits = make_sandbox("strict", settings), Limits.from_settings(settings)
    turn = TurnGates(ws, exec_gate=True, repro=True)
    turn.start()
    git_apply(ws, material.test_patch)
    git_apply(ws, material.patch)
    turn.record(1, "shell", "git apply", 0)
    command = task.command("test", python)
    on: list[float] = []
    off: list[float] = []

    async def once(hooked: bool, number: int) -> float:
        env = turn.prepare(number) if hooked else {}
        argv = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), "bash", "-c", command]
        result = await box.run(argv, "argv", ws, limits)
        if result.exit_code != 0:
            raise TaskError(f"{task.instance_id}: the green check failed in the box (exit {result.exit_code}, hook "
                            f"{'on' if hooked else 'off'}): {result.output[-800:]}")
        if hooked:
            check = turn.record(number, "shell", command, 0)
            if not check.traced:
                raise TaskError(f"{task.instance_id}: the hook was on but reported nothing")
        return result.duration

    async def measure() -> None:
        await once(False, 1)  # warm-up, not counted: the first run writes __pycache__ and fills the page cache
        for n in range(repeats):
            order = (True, False) if n % 2 == 0 else (False, True)
            for hooked in order:
                (on if hooked else off).append(await once(hooked, 2 + 2 * n + hooked))

    try:
        asyncio.run(measure())
    finally:
        turn.close()
    return on, off


# ---------------------------------------------------------------------------------------------------------- main


def find_shared(given: str | None) -> Path | None:
    """../shared (the data every benchmark reads), from ``--shared``, ``$TOMO_SHARED`` or next to the checkout."""
    candidates = [given] if given else [os.environ.get("TOMO_SHARED"), str(ROOT.parent / "shared"),
                                        str(ROOT.parent.parent / "shared")]
    for candidate in candidates:
        if candidate and (Path(candidate) / "data" / "swebench-lite" / "dev.jsonl").is_file():
            return Path(candidate)
    return None


def summarize(runs: list[Run], tasks: list[Task], hooks: dict[str, tuple[list[float], list[float]]]) -> str:
    import statistics

    from bench._report import table

    by = {(r.instance_id, r.path, r.exec_gate): r for r in runs}
    rows: list[list[object]] = []
    for task in tasks:
        cells: list[object] = [task.instance_id]
        for path in PATHS:
            run = by.get((task.instance_id, path, True))
            cells.append("—" if run is None else ("✓ " if run.ok else "✗ ") + run.outcome)
        hook = hooks.get(task.instance_id)
        if hook and hook[0] and hook[1]:
            h_on, h_off = statistics.median(hook[0]), statistics.median(hook[1])
            cells += [f"{h_off:.2f}", f"{h_on:.2f}", f"{h_on / h_off:.2f}×"]
        else:
            cells += ["—"] * 3
        on, off = by.get((task.instance_id, "honest", True)), by.get((task.instance_id, "honest", False))
        if on and off and off.check_seconds:
            cells += [f"{off.check_seconds:.1f} → {on.check_seconds:.1f}", f"{off.wall:.1f} → {on.wall:.1f}"]
        else:
            cells += ["—"] * 2
        rows.append(cells)
    gated = [r for r in runs if r.exec_gate]
    good = sum(r.ok for r in gated)
    totals = [f"**{good}/{len(gated)} as expected**"]
    for path in PATHS:
        these = [r for r in gated if r.path == path]
        totals.append(f"{sum(r.ok for r in these)}/{len(these)}")
    medians = [(statistics.median(on), statistics.median(off)) for on, off in hooks.values() if on and off]
    if medians:
        h_on, h_off = sum(m[0] for m in medians), sum(m[1] for m in medians)
        totals += [f"{h_off:.2f} (sum)", f"{h_on:.2f} (sum)", f"{h_on / h_off:.2f}×"]
    else:
        totals += ["—"] * 3
    pairs = [(by[(t.instance_id, "honest", True)], by[(t.instance_id, "honest", False)]) for t in tasks
             if (t.instance_id, "honest", True) in by and (t.instance_id, "honest", False) in by]
    on_s, off_s = sum(p[0].check_seconds for p in pairs), sum(p[1].check_seconds for p in pairs)
    if pairs and off_s:
        totals += [f"{off_s:.1f} → {on_s:.1f}",
                   f"{sum(p[1].wall for p in pairs):.1f} → {sum(p[0].wall for p in pairs):.1f}"]
    else:
        totals += ["—"] * 2
    rows.append(totals)
    headers = ["task", "honest (accept)", "parse-only (refuse: exec)", "wrong-test (refuse: exec)",
               "no-red (refuse: repro)", "green check s, hook off", "hook on", "ratio",
               "honest: check blocks s, gates off → on", "honest: whole run s, off → on"]
    return table(headers, rows)


QUICK = ("django__django-16041", "django__django-16816", "sympy__sympy-21612")


def preflight(tasks: list[Task], mirrors: Path, venvs: Path) -> list[str]:
    """What is missing before anything runs, each with how to get it."""
    problems = []
    for source in sorted({t.source for t in tasks}):
        git_dir = mirrors / source.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            problems.append(f"no snapshot of {source} at {git_dir}: bring it with the fetch tool (github:{source})")
    for venv in sorted({t.venv for t in tasks}):
        python = venvs / venv / "bin" / "python"
        if not python.exists():
            problems.append(f"no venv {python}: `python -m venv {venvs / venv}` and install what the tasks of that "
                            "repository need (see the 'note' of each task in bench/gates_tasks.json)")
    if shutil.which("bwrap") is None:
        problems.append("bubblewrap (`bwrap`) is not installed: the strict sandbox needs it "
                        "(apt-get install bubblewrap)")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.text import Text

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"a smoke run on {len(QUICK)} tasks; docs untouched")
    parser.add_argument("--only", nargs="+", metavar="ID", help="these tasks only (docs untouched)")
    parser.add_argument("--verify", action="store_true", help="check the task list on the host (no tomo) and stop")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--repeats", type=int, default=3, help="hook on/off timings of each green check (0: none)")
    parser.add_argument("--hook-only", action="store_true",
                        help="only the hook on/off timings; the path outcomes come from --paths-from")
    parser.add_argument("--paths-from", type=Path, metavar="RESULTS",
                        help="the results.json of an earlier full run, for the path columns of a --hook-only run")
    parser.add_argument("--tasks", type=Path, default=TASKS_FILE)
    parser.add_argument("--shared", help="the shared data directory (default: $TOMO_SHARED, else ../shared)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="the fetch tool's snapshots")
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/gates/venvs"), help="one venv per repository")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "gates" / "run",
                        help="checkouts, scripts, transcripts and logs (kept for reading afterwards)")
    args = parser.parse_args(argv)
    console = Console(highlight=False)

    shared = find_shared(args.shared)
    if shared is None:
        console.print(Text("bench/gates.py: the shared data (../shared/data/swebench-lite/dev.jsonl) is not here; "
                           "pass --shared DIR or set TOMO_SHARED. Nothing was run.", style="yellow"))
        return 0
    try:
        tasks = load_tasks(args.tasks)
        if args.quick or args.only:
            wanted = set(args.only or QUICK)
            unknown = wanted - {t.instance_id for t in tasks}
            if unknown:
                raise TaskError(f"not in {args.tasks}: {', '.join(sorted(unknown))}")
            tasks = [t for t in tasks if t.instance_id in wanted]
        material = load_material(shared / "data" / "swebench-lite" / "dev.jsonl", [t.instance_id for t in tasks])
    except TaskError as exc:
        console.print(Text(f"error: {exc}", style="bold red"))
        return 2
    problems = preflight(tasks, args.mirrors, args.venvs)
    if problems:
        for problem in problems:
            console.print(Text(f"error: {problem}", style="bold red"))
        return 2
    args.scratch.mkdir(parents=True, exist_ok=True)
    if args.quick:
        console.print(Text(f"quick mode: {len(tasks)} tasks, docs/benchmarks.md is not written", style="yellow"))

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    if args.verify:
        verdicts = []
        with Progress(*columns, console=console) as progress:
            bar = progress.add_task("verifying", total=len(tasks))
            for task in tasks:
                progress.update(bar, description=f"verify {task.instance_id}")
                v = verify(task, material[task.instance_id], args.mirrors, args.venvs, args.scratch)
                verdicts.append(v)
                line = (f"{'ok ' if v.ok else 'BAD'} {task.instance_id}: red exit {v.red}, green exit {v.green}, "
                        f"wrong test exit {v.wrong_exit}, changed body lines it ran: {v.wrong_hits or 'none'}, "
                        f"top-level changed lines it ran: {v.top_hits or 'none'} ({v.seconds:.0f} s)")
                progress.console.print(Text(line + (f"\n    {v.error[-800:]}" if v.error else ""),
                                            style="green" if v.ok else "red"))
                progress.advance(bar)
        bad = [v.instance_id for v in verdicts if not v.ok]
        console.print(Text(f"{len(verdicts) - len(bad)}/{len(verdicts)} tasks verified" +
                           (f"; not: {', '.join(bad)}" if bad else "")))
        return 1 if bad else 0

    runs: list[Run] = load_runs(args.paths_from, tasks) if args.paths_from else []
    hooks: dict[str, tuple[list[float], list[float]]] = {}
    plan: list[tuple[Task, str, bool]] = []
    for t in tasks:  # a task's runs together; the overhead timings ("hook") after its paths
        if not args.hook_only:
            plan += [(t, p, True) for p in PATHS] + [(t, "honest", False)]
        plan += [(t, "hook", True)] if args.repeats else []
    load_before = os.getloadavg()
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("gates", total=len(plan))
        for task, path, gated in plan:
            label = f"{task.instance_id} · {path}{'' if gated else ' (gates off)'}"
            progress.update(bar, description=label)
            if path == "hook":
                try:
                    hooks[task.instance_id] = hook_overhead(task, material[task.instance_id], mirrors=args.mirrors,
                                                            venvs=args.venvs, scratch=args.scratch,
                                                            repeats=args.repeats)
                    on, off = hooks[task.instance_id]
                    progress.console.print(Text(f"{task.instance_id} · green check, hook on: "
                                                f"{', '.join(f'{x:.2f}' for x in on)} s; off: "
                                                f"{', '.join(f'{x:.2f}' for x in off)} s"))
                except TaskError as exc:
                    progress.console.print(Text(f"{task.instance_id} · overhead not measured: {exc}", style="red"))
                progress.advance(bar)
                continue
            run = run_path(task, material[task.instance_id], path, mirrors=args.mirrors, venvs=args.venvs,
                           scratch=args.scratch, prompt=material[task.instance_id].problem or task.instance_id,
                           exec_gate=gated)
            runs.append(run)
            verdict = "as expected" if run.ok else "NOT as expected"
            progress.console.print(Text(f"{label}: {run.outcome}, {verdict} (checks {run.check_seconds:.1f} s, "
                                        f"run {run.wall:.1f} s)", style="green" if run.ok else "red"))
            if not run.ok:
                progress.console.print(Text(f"    {json.dumps(run.result)[:600]}\n    log: {args.scratch}/"
                                            f"{task.instance_id}.{path}.{'gated' if gated else 'open'}.log"))
            progress.advance(bar)
    load_after = os.getloadavg()
    record = [{"task": r.instance_id, "path": r.path, "gates": r.exec_gate, "exit": r.exit_code, "ok": r.ok,
               "check_s": round(r.check_seconds, 2), "wall_s": round(r.wall, 2), "result": r.result} for r in runs]
    (args.scratch / "results.json").write_text(json.dumps({"runs": record, "hook": hooks}, indent=1),
                                               encoding="utf-8")
    body = summarize(runs, tasks, hooks)
    body += "\n\n" + notes(load_before[0], load_after[0])
    if args.paths_from:
        body += (f" The path outcomes and the 'gates off → on' columns are those of an earlier full run (its "
                 f"results file, {time.strftime('%Y-%m-%d %H:%M', time.gmtime(args.paths_from.stat().st_mtime))} "
                 "UTC); this run measured the hook timings.")
    console.print(Text(body))
    if not (args.no_write or args.quick or args.only or (args.hook_only and not args.paths_from)):
        from bench._report import write_section

        command = "python bench/gates.py" + (" --hook-only --paths-from RESULTS" if args.hook_only else "")
        path = write_section("gates", "The exec and repro gates on real SWE-bench Lite tasks", command, body)
        console.print(Text(f"wrote {path}"))
    gated = [r for r in runs if r.exec_gate]
    return 0 if all(r.ok for r in gated) else 1


def load_runs(path: Path, tasks: list[Task]) -> list[Run]:
    """The path runs saved by an earlier full run (``results.json``), for the tasks asked for."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"error: cannot read the results of an earlier run from {path}: {exc}") from exc
    records = data["runs"] if isinstance(data, dict) else data
    wanted = {t.instance_id for t in tasks}
    return [Run(r["task"], r["path"], bool(r["gates"]), int(r["exit"]), r["result"], float(r["wall_s"]),
                float(r["check_s"])) for r in records if r["task"] in wanted]


def notes(load_before: float, load_after: float) -> str:
    return (
        "Each cell: the outcome of `tomo run --exec-gate --repro --sandbox strict --yes --json` driven by a scripted "
        "model on a fresh checkout of the task's base commit (✓ = as expected: honest accepted with exit 0; parse-only "
        "and wrong-test refused with exit 3 and the exec gate unsatisfied; no-red refused with exit 3 by the repro "
        "gate alone). The model writes the patches itself (`git apply` of a heredoc in a bash block); the tests run "
        "with the task's venv, read-only in the strict box. Overhead of the exec gate's site hook: the honest path's "
        "green check (test_patch and patch applied) run in the strict box with the hook on (set up by the engine's "
        "own TurnGates, watching the changed files, as for the honest path's last block) and off, interleaved, "
        "median of the repeats ('hook on/off'); and the whole honest path run again by `tomo run` with both gates "
        "off (no hook): the sandbox time of its check blocks (red and green runs; patch blocks excluded) and the "
        "wall time of `tomo run`, one run each, so noisier. "
        f"Load average {load_before:.1f} before, {load_after:.1f} after: a shared "
        "2-core machine with up to 9 sessions at once, so absolute seconds move; the ratio pairs runs made "
        "back to back. Tasks tried and left out are listed in bench/gates_tasks.json ('not_run')."
    )


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    sys.exit(main())
