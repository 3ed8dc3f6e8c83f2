"""`tomo lab` as a user runs it: the real CLI in a subprocess, a real SQLite file, the engine ceiling as the model."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

from tomo.cli.lab_cmd import _record_line
from tomo.lab.bless import MIN_TASKS, bless, write
from tomo.lab.records import LabStore, RunRecord
from tomo.models.blessed import load_blessed


def test_tasks_lists_a_bundled_suite(run_tomo) -> None:  # type: ignore[no-untyped-def]
    done = run_tomo("lab", "tasks", "small", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["suite"] == "small" and len(data["tasks"]) >= 20
    assert {t["kind"] for t in data["tasks"]} == {"fix", "rename", "feature", "repro"}
    missing = run_tomo("lab", "tasks", "nosuch")
    assert missing.returncode == 2 and "no suite 'nosuch'" in missing.stderr


def test_run_records_resumes_reports_and_writes_markdown(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "lab.sqlite"
    # a rename under `plain` is the ceiling's quickest run (no reproduction, no gate); claims are test_runner's
    args = ("lab", "run", "small", "--model", "reference", "--variant", "plain", "--task", "rename-max-attempts",
            "--db", str(db))
    first = run_tomo(*args, "--json", timeout=300)
    assert first.returncode == 0, first.stderr
    (line,) = [json.loads(x) for x in first.stdout.splitlines() if x.startswith("{")]
    assert line["task"] == "rename-max-attempts" and line["solved"] and not line["claim"] and not line["false_claim"]
    again = run_tomo(*args)
    assert again.returncode == 0 and "nothing to run" in again.stdout and "1 run(s) already recorded" in again.stderr

    report = run_tomo("lab", "report", "--db", str(db), "--json")
    (row,) = json.loads(report.stdout)["small"]["rows"]
    assert (row["variant"], row["solved"], row["runs"], row["false_claims"]) == ("plain", 1, 1, 0)

    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\nkept above\n")
    for _ in range(2):  # the second report replaces the first, it does not append
        done = run_tomo("lab", "report", "small", "--db", str(db), "--markdown", str(page))
        assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert text.startswith("# Benchmarks\n\nkept above\n") and text.count("<!-- lab:small -->") == 1
    assert "| reference | plain | 1/1 (100%) |" in text
    only = run_tomo("lab", "report", "small", "--db", str(db), "--variant", "plain", "--json")
    assert only.returncode == 0 and json.loads(only.stdout)["small"]["rows"][0]["variant"] == "plain"
    wrong = run_tomo("lab", "report", "small", "--db", str(db), "--variant", "loose")
    assert wrong.returncode == 2 and "no runs of variant 'loose'" in wrong.stderr and "are plain" in wrong.stderr


def test_bad_variants_and_empty_databases_are_usage_errors(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = run_tomo("lab", "run", "small", "--model", "reference", "--variant", "x=run --json", "--db",
                   str(tmp_path / "a.sqlite"))
    assert bad.returncode == 2 and "--json" in bad.stderr and "Traceback" not in bad.stderr
    empty = run_tomo("lab", "report", "--db", str(tmp_path / "b.sqlite"))
    assert empty.returncode == 2 and "no lab runs recorded" in empty.stderr
    assert not (tmp_path / "b.sqlite").exists()  # a report reads; it never leaves an empty database behind
    bare = tmp_path / "bare"
    bare.mkdir()
    nothing = run_tomo("lab", "report", cwd=bare)
    assert nothing.returncode == 2 and "no lab runs recorded" in nothing.stderr and list(bare.iterdir()) == []


def record(task: str, model: str, solved: bool, claim: bool) -> RunRecord:
    return RunRecord(suite="small", task=task, kind="fix", variant="strict", args="run --exec-gate --repro",
                     model=model, repeat=0, started="2026-12-04T00:00:00+00:00", wall_s=1.0, exit_code=0,
                     claim=claim, outcome="verified" if claim else "unverified", solved=solved)


def test_bless_writes_a_list_tomo_reads_and_applies_its_rule(tmp_path: Path) -> None:
    tasks = [f"t{i}" for i in range(MIN_TASKS)]
    good = "openai-compat:http://127.0.0.1:8000/v1#good-coder"
    liar = "openai-compat:http://127.0.0.1:8000/v1#liar-coder"
    records = [record(t, "reference", True, True) for t in tasks]
    records += [record(t, good, i < 9, i < 9) for i, t in enumerate(tasks)]  # 9/10, every claim true
    records += [record(t, liar, True, True) for t in tasks[:9]] + [record(tasks[9], liar, False, True)]  # 1 lie
    store = LabStore(f"sqlite:///{tmp_path / 'lab.sqlite'}")
    for r in records:
        store.add(r)
    data = bless("small", store.records("small"))
    store.close()
    write(data, tmp_path / "blessed.json")
    loaded = load_blessed(path=tmp_path / "blessed.json")
    assert loaded.note == "" and loaded.data is not None
    by_name = {m.name: m for m in loaded.measured}
    assert by_name["good-coder"].blessed and by_name["good-coder"].solved == 9
    assert not by_name["liar-coder"].blessed and by_name["liar-coder"].false_claims == 1  # more solved, one lie
    assert [m.name for m in loaded.ranked] == ["good-coder"]
    assert loaded.rank_of_local("good-coder") == 0 and loaded.ceiling(by_name["good-coder"]) == "10/10"
    few = bless("small", [r for r in records if r.task in tasks[:3]])
    assert not any(m["blessed"] for m in few["models"])  # three tasks decide nothing
    assert "no ceiling" in _error(lambda: bless("small", [replace(r, model=good) for r in records[:3]]))
    # two variants at the same rate (half solved): the one measured on more tasks is the model's best
    def at(variant: str, names: list[str]) -> list[RunRecord]:
        ceiling = [replace(record(t, "reference", True, True), variant=variant) for t in names]
        half = [replace(record(t, good, i % 2 == 0, i % 2 == 0), variant=variant) for i, t in enumerate(names)]
        return ceiling + half

    data = bless("small", at("narrow", tasks[:2]) + at("wide", tasks))
    chosen = {m["name"]: m for m in data["models"]}["good-coder"]
    assert chosen["variant"].startswith("wide") and chosen["tasks"] == MIN_TASKS
    # the suite's ceiling is the one the best model is read against, not the first of equal ceilings
    assert data["suites"]["small"]["variant"].startswith("wide"), data["suites"]


def _error(call) -> str:  # type: ignore[no-untyped-def]
    try:
        call()
    except Exception as exc:
        return str(getattr(exc, "message", exc))
    return ""


def test_sigterm_stops_the_runs_in_flight_and_keeps_the_records(tmp_path: Path) -> None:
    """`kill` on a lab run stops it as Ctrl-C does: the tomo process of the run in flight and what it started go too
    (a lab left running after its parent was killed kept a model server busy), exit 143."""
    import os
    import signal
    import subprocess
    import sys
    import time

    suite = tmp_path / "suite"
    task = suite / "slow"
    (task / "repo").mkdir(parents=True)
    (task / "reference").mkdir()
    (suite / "suite.toml").write_text('name = "slowsuite"\ndescription = "one slow check"\nversion = 1\n')
    marker = tmp_path / "check.pid"
    (task / "repo" / "test_slow.py").write_text(
        f"import os, time\n\ndef test_slow():\n    open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(120)\n")
    (task / "reference" / "note.txt").write_text("done\n")
    (task / "task.toml").write_text('id = "slow"\nkind = "fix"\nprompt = "wait"\noracle = "python -c pass"\n'
                                    'check = "python -m pytest -q -p no:cacheprovider"\n')
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}
    lab = subprocess.Popen([sys.executable, "-m", "tomo", "lab", "run", str(suite), "--model", "reference",
                            "--variant", "local=run --sandbox local", "--db", str(tmp_path / "lab.sqlite")],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and lab.poll() is None:
        time.sleep(0.2)
    assert marker.exists(), lab.communicate(timeout=30)
    check_pid = int(marker.read_text())
    lab.send_signal(signal.SIGTERM)
    _, err = lab.communicate(timeout=60)
    assert lab.returncode == 143, err
    assert "interrupted: the runs recorded so far stay" in err
    time.sleep(0.5)
    try:
        os.kill(check_pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "the check of the run in flight outlived the lab"


def test_a_run_the_lab_stopped_is_not_reported_as_something_tomo_said() -> None:
    record = RunRecord(suite="small", task="feature-low-stock", kind="feature", variant="v", args="", model="m",
                       repeat=0, started="", wall_s=900.0, exit_code=-1, claim=False, outcome="timeout", solved=False)
    assert "stopped by the lab's --timeout · 900 s" in _record_line(record) and "tomo said" not in _record_line(record)
    said = _record_line(replace(record, outcome="unverified", solved=True, wall_s=39.0))
    assert "[green]solved[/] · tomo said unverified · 39 s" in said


def test_export_and_import_carry_the_records_to_another_database(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    here, there = tmp_path / "here.sqlite", tmp_path / "there.sqlite"
    store = LabStore(f"sqlite:///{here}")
    ran = [replace(record("t1", "reference", True, True), diff="+fixed\n", transcript='{"event": "x"}\n'),
           replace(record("t2", "m", False, True), oracle_output="1 failed", wall_s=2.5),  # a false claim
           replace(record("t3", "m", True, False), variant="other")]
    for r in ran:
        store.add(r)
    store.close()
    lines = tmp_path / "runs.jsonl"
    done = run_tomo("lab", "export", "small", "--db", str(here), "--variant", "strict", "--out", str(lines))
    assert done.returncode == 0 and "wrote 2 run(s)" in done.stderr, done.stderr
    rows = [json.loads(x) for x in lines.read_text().splitlines()]
    assert [r["task"] for r in rows] == ["t1", "t2"] and "transcript" not in rows[0]
    assert rows[0]["diff"] == "+fixed\n" and rows[1]["oracle_output"] == "1 failed"

    first = run_tomo("lab", "import", str(lines), "--db", str(there), "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"added": 2, "already_recorded": 0}
    again = run_tomo("lab", "import", str(lines), "--db", str(there))
    assert again.returncode == 0 and "imported 0 run(s); 2 already recorded" in again.stdout
    report = json.loads(run_tomo("lab", "report", "--db", str(there), "--json").stdout)
    rows = {(r["model"], r["variant"]): (r["solved"], r["runs"], r["false_claims"]) for r in report["small"]["rows"]}
    assert rows == {("reference", "strict"): (1, 1, 0), ("m", "strict"): (0, 1, 1)}
    copied = LabStore(f"sqlite:///{there}")
    got = {r.task: r for r in copied.records()}
    copied.close()
    assert got["t2"] == ran[1] and got["t1"] == replace(ran[0], transcript="")  # all but the transcript

    whole = run_tomo("lab", "export", "--db", str(here), "--transcripts")
    assert whole.returncode == 0 and len(whole.stdout.splitlines()) == 3
    assert json.loads(whole.stdout.splitlines()[0])["transcript"] == '{"event": "x"}\n'


def test_a_bad_line_imports_nothing_and_says_where(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "lab.sqlite"
    good = json.dumps({k: v for k, v in asdict(record("t1", "m", True, True)).items() if k != "transcript"})
    cases = {"is not JSON": "{oops", "solved: Input should be a valid boolean":
             good.replace('"solved": true', '"solved": "yes"'),
             "fields a lab record does not: verdict": good[:-1] + ', "verdict": "ok"}',
             "is not a record": "[1, 2]",
             "task: Field required": json.dumps({k: v for k, v in json.loads(good).items() if k != "task"})}
    for said, bad in cases.items():
        path = tmp_path / "runs.jsonl"
        path.write_text(f"{good}\n\n{bad}\n")
        done = run_tomo("lab", "import", str(path), "--db", str(db))
        assert done.returncode == 2 and "Traceback" not in done.stderr, (said, done.stderr)
        assert f"{path}, line 3" in done.stderr and said in " ".join(done.stderr.split()), (said, done.stderr)
        assert not db.exists() or LabStore(f"sqlite:///{db}").records() == [], said  # line 1 not taken either
    missing = run_tomo("lab", "import", str(tmp_path / "nosuch.jsonl"), "--db", str(db))
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "nosuch.jsonl" in missing.stderr
