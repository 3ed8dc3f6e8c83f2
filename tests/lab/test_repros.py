"""`tomo lab repros`: the tests a run's transcript says tomo kept, each run alone on the task's reference solution in
tomo's sandbox. The tests below are the lab's own: a right one (what the task says), the wrong one Qwen 1.5B kept
for this task (Sunday March 3rd for "Monday March 4th"), and a path a transcript must never be trusted with."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from tomo.events import JsonlSink, Notice, ReproductionKept
from tomo.lab.records import LabStore, RunRecord

HEAD = "from datetime import date\n\nfrom workdays import add_business_days\n\n\ndef test_the_problem():\n"
RIGHT = HEAD + "    assert add_business_days(date(2024, 3, 1), 1) == date(2024, 3, 4)\n"
WRONG = HEAD + "    assert add_business_days(date(2024, 3, 1), 1) == date(2024, 3, 3)\n"


def transcript(where: Path, events: list) -> str:  # type: ignore[type-arg]
    sink = JsonlSink(where)
    for event in events:
        sink.emit(event)
    sink.close()
    return where.read_text() + '{"kind": "reproduction_kept", "path": "cut off'  # a last row cut by the cap


def record(task: str, variant: str, text: str) -> RunRecord:
    return RunRecord(suite="small", task=task, kind="fix", variant=variant, args="run --strategy trials",
                     model="m", repeat=0, started="2026-12-04T00:00:00", wall_s=1.0, exit_code=3, claim=False,
                     outcome="unverified", solved=False, transcript=text)


def test_each_kept_test_is_judged_on_the_reference_and_a_path_outside_is_never_written(
        run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "lab.sqlite"
    outside = tmp_path / "escape.py"
    store = LabStore(f"sqlite:///{db}")
    kept = transcript(tmp_path / "a.jsonl", [
        Notice("info", "reproduction kept"), ReproductionKept("tests/test_tomo_repro.py", WRONG, "model"),
        ReproductionKept("tests/test_tomo_repro_2.py", RIGHT, "second"),
        ReproductionKept(f"../../{outside.name}", RIGHT, "model")])
    store.add(record("fix-business-days", "trials", kept))
    store.add(replace(record("fix-business-days", "plain", "{}\n"), args="run"))  # a run that kept nothing
    store.close()

    done = run_tomo("lab", "repros", "small", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["right"], data["kept"]) == (1, 3)
    assert data["by"] == {"model": {"right": 0, "kept": 2}, "second": {"right": 1, "kept": 1}}
    wrong, right, escape = data["tests"]
    assert (wrong["path"], wrong["right"]) == ("tests/test_tomo_repro.py", False)
    assert "datetime.date(2024, 3, 4) == datetime.date(2024, 3, 3)" in wrong["failure"]
    assert right["right"] and right["failure"] == ""
    assert not escape["right"] and not outside.exists()

    table = run_tomo("lab", "repros", "--db", str(db), "--variant", "trials")
    assert table.returncode == 0, table.stderr
    assert "right on the reference: 1 of 3 kept tests (model 0/2, second 1/1)" in table.stdout
    none = run_tomo("lab", "repros", "--db", str(db), "--variant", "plain")
    assert none.returncode == 0 and "no kept tests" in none.stdout
    missing = run_tomo("lab", "repros", "--db", str(db), "--variant", "nosuch")
    assert missing.returncode == 2 and "no runs of variant 'nosuch'" in missing.stderr
