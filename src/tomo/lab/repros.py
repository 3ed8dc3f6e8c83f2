"""Were the tests tomo kept right? Each test a run's transcript says tomo kept (``reproduction_kept``), run on the
task's reference solution: a right one passes there.

Why: tomo cannot tell a test that asserts a wrong value from a right one (it has no reference), and a kept test that
the right fix fails dooms every trial after it. The lab has the reference. Counted by hand first, over eleven runs of
Qwen2.5-Coder 1.5B: 51 of the 60 kept tests that could be rebuilt from the transcripts failed on the reference, so
the solve rate was bounded by the tests long before the fixes.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tomo.events import ReproductionKept
from tomo.lab.records import RunRecord
from tomo.lab.runner import copy_repo, run_boxed, with_python
from tomo.lab.suite import Suite, Task


@dataclass(frozen=True, slots=True)
class KeptTest:
    """One kept test and its verdict on the reference solution (``right``), with what that run printed."""

    task: str
    variant: str
    model: str
    repeat: int
    path: str
    by: str
    right: bool
    output: str

    @property
    def failure(self) -> str:
        """The first line pytest gave for the failure (``E   ...``), or ''."""
        return next((line.strip() for line in self.output.splitlines() if line.startswith("E ")), "")


def kept_in(transcript: str) -> Iterator[ReproductionKept]:
    """The tests a transcript says tomo kept, in order; rows that are not JSON (a cut-off last line) are skipped."""
    for line in transcript.splitlines():
        if '"reproduction_kept"' not in line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if row.get("kind") == ReproductionKept.kind:
            yield ReproductionKept(str(row.get("path", "")), str(row.get("code", "")), str(row.get("by", "")))


def on_reference(task: Task, kept: ReproductionKept, python: str) -> tuple[bool, str]:
    """Runs ``kept`` alone on a fresh copy of the task with its reference solution (which it must have) laid over
    it, in tomo's sandbox (the code is a model's), with the task's check command (pytest) aimed at the one file."""
    path = Path(kept.path)
    if path.is_absolute() or ".." in path.parts:  # a transcript is data: never a path outside the copy
        return False, f"not a path inside the project: {kept.path!r}"
    check = shlex.split(task.check) if "pytest" in task.check else ["python", "-m", "pytest", "-q"]
    argv = [*with_python(check, python), "-p", "no:cacheprovider", kept.path]
    with tempfile.TemporaryDirectory(prefix=f"tomo-lab-{task.id}-") as scratch:
        copy = Path(scratch) / "repo"
        copy_repo(task, copy)
        shutil.copytree(task.reference, copy, dirs_exist_ok=True)
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_text(kept.code, encoding="utf-8")
        return asyncio.run(run_boxed(argv, copy, task.timeout_s, python))


def judge_kept(suite: Suite, records: list[RunRecord], python: str) -> list[KeptTest]:
    """Every test the ``records``' transcripts say tomo kept, each judged on its task's reference solution."""
    tasks = {t.id: t for t in suite.tasks}
    judged: list[KeptTest] = []
    for record in records:
        task = tasks.get(record.task)
        if task is None or not task.reference.is_dir():
            continue
        for kept in kept_in(record.transcript):
            right, output = on_reference(task, kept, python)
            judged.append(KeptTest(record.task, record.variant, record.model, record.repeat, kept.path, kept.by,
                                   right, output))
    return judged
