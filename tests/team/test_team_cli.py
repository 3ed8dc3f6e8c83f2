"""`tomo team` through the real CLI: run, show, list, resume, the errors, and model text shown as data."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from team_support import cli_env, open_store, reply, script

from tomo.cli.team_render import TeamProgress
from tomo.events import StageDone, StageStarted, WorkerDone, WorkerStarted

Run = Callable[..., subprocess.CompletedProcess[str]]
STAGES = "plan:planner | build:implementer,tester"


def _roles(folder: Path) -> str:
    return ",".join([
        f"planner={script(folder, 'planner', reply('[bold red]plan[/] from the model', tokens=(30, 10)))}",
        f"implementer={script(folder, 'implementer', reply('code', tokens=(20, 5)))}",
        f"tester={script(folder, 'tester', reply('tests', tokens=(20, 5)))}",
    ])


def test_run_show_list_and_resume(tmp_path: Path, run_tomo: Run) -> None:
    done = run_tomo("team", "add a flag", "--stages", STAGES, "--roles", _roles(tmp_path), "--job-id", "c1",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "## implementer\n\ncode\n\n## tester\n\ntests"
    assert "stage build: 2 worker(s) to run" in done.stderr and "job c1 is complete" in done.stderr
    assert "90 tokens (70 in, 20 out)" in done.stderr
    shown = run_tomo("team", "show", "c1", cwd=tmp_path)
    assert shown.returncode == 0
    assert "[bold red]plan[/] from the model" in shown.stdout  # model text is data, never markup
    assert "implementer#0" in shown.stdout and "complete" in shown.stdout
    record = json.loads(run_tomo("team", "show", "c1", "--json", cwd=tmp_path).stdout)
    assert [s["status"] for s in record["stages"]] == ["complete", "complete"]
    assert record["stages"][0]["workers"][0]["input_tokens"] == 30
    assert record["created_at"].endswith("+00:00")
    listed = json.loads(run_tomo("team", "list", "--json", cwd=tmp_path).stdout)
    assert [j["job_id"] for j in listed] == ["c1"]
    again = run_tomo("team", "resume", "c1", cwd=tmp_path)
    assert again.returncode == 0 and "already complete; nothing to resume" in again.stderr


def test_show_and_list_in_a_pipe_keep_every_cell_whole(tmp_path: Path, run_tomo: Run) -> None:
    """A worker's model spec (here a long script path) and the request are printed whole in a pipe; rich laid the
    tables out at 80 columns and cut or wrapped them."""
    folder = tmp_path / ("a-folder-whose-name-is-long-enough-to-push-the-spec-past-eighty-columns" * 2)
    folder.mkdir()
    request = "add a flag " + "and explain it at length " * 5
    done = run_tomo("team", request, "--stages", STAGES, "--roles", _roles(folder), "--job-id", "w1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = run_tomo("team", "show", "w1", "--no-outputs", cwd=tmp_path, env={"COLUMNS": "80"})
    rows = [ln.split() for ln in shown.stdout.splitlines() if "implementer#0" in ln]
    assert len(rows) == 1 and rows[0][:4] == ["1:build", "implementer#0", f"scripted:{folder / 'implementer.json'}",
                                              "complete"], shown.stdout
    listed = run_tomo("team", "list", cwd=tmp_path, env={"COLUMNS": "80"})
    header, row = listed.stdout.splitlines()
    assert header.split()[:3] == ["job", "status", "stages"] and row.split()[:3] == ["w1", "complete", "2/2"]
    assert row.endswith(request.strip()), listed.stdout


def test_budget_stop_exits_nonzero_and_names_the_way_on(tmp_path: Path, run_tomo: Run) -> None:
    done = run_tomo("team", "add a flag", "--stages", STAGES, "--roles", _roles(tmp_path), "--job-id", "b1",
                    "--budget", "30", cwd=tmp_path)
    assert done.returncode == 3  # not done (the table: 3), not an error
    assert "job b1 is incomplete" in done.stderr and "tomo team resume b1 --budget N" in done.stderr
    resumed = run_tomo("team", "resume", "b1", "--budget", "1000", "--json", cwd=tmp_path)
    assert resumed.returncode == 0
    assert json.loads(resumed.stdout)["status"] == "complete"


def test_errors_are_clear_and_write_nothing(tmp_path: Path, run_tomo: Run) -> None:
    unknown = run_tomo("team", "show", "nope", cwd=tmp_path)
    assert unknown.returncode == 2 and "no job with id 'nope'" in unknown.stderr
    bad = run_tomo("team", "go", "--stages", "plan planner", cwd=tmp_path)
    assert bad.returncode == 2 and "is not NAME:ROLE" in bad.stderr and "hint:" in bad.stderr
    backend = run_tomo("team", "go", "--backend", "celery", cwd=tmp_path)
    assert backend.returncode == 2 and "unknown backend 'celery'" in backend.stderr
    listed = json.loads(run_tomo("team", "list", "--json", cwd=tmp_path).stdout)
    assert listed == []


def test_a_role_the_graph_lacks_is_refused_before_any_work(tmp_path: Path, run_tomo: Run) -> None:
    """Issue 28: `--roles implementor=...` was never looked up (no worker has that role), so the job ran the
    implementer on the primary model. Refused now, naming the role, the near one and the roles there are, with no
    store written and no model asked."""
    planner = script(tmp_path, "planner", reply("plan"))
    done = run_tomo("team", "go", "--roles", f"planner={planner},implementor=deep", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--roles names a role no worker of this job has: 'implementor'" in done.stderr
    assert "did you mean implementer?" in done.stderr
    assert "the roles here are planner, implementer, tester, reviewer" in done.stderr
    assert not (tmp_path / ".tomo").exists() and "Traceback" not in done.stderr
    made = run_tomo("team", "go", "--stages", "plan:planner", "--roles", f"planner={planner}", "--job-id", "r1",
                    cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    resumed = run_tomo("team", "resume", "r1", "--roles", "planner=fast,reviewer=deep", cwd=tmp_path)
    assert resumed.returncode == 2 and "no worker of this job has: 'reviewer' (stages: plan:planner)" \
        in resumed.stderr, resumed.stderr


def test_live_progress_draws_a_table_on_a_terminal() -> None:
    console = Console(force_terminal=True, width=120, record=True, color_system=None)
    progress = TeamProgress(console)
    assert progress.live
    progress.emit(StageStarted("j", "build", 1, 2))
    progress.emit(WorkerStarted("j", "build", 0, "implementer", "ollama:qwen", 1))
    progress.emit(WorkerStarted("j", "build", 1, "[red]tester", "ollama:qwen", 2))
    progress.emit(WorkerDone("j", "build", 0, "implementer", "complete", 10, 5, 0.5))
    progress.emit(StageDone("j", "build", 2, 15))
    progress.close()
    text = console.export_text()
    assert "implementer#0" in text and "complete" in text and "15" in text
    assert "[red]tester#1" in text and "attempt 2" in text  # a role is shown as written, not as markup


def test_ctrl_c_leaves_the_job_incomplete_and_resumable(tmp_path: Path) -> None:


    roles = ",".join([f"planner={script(tmp_path, 'slow', reply('late', delay=30))}",
                      f"tester={script(tmp_path, 'tester', reply('tests'))}"])
    process = subprocess.Popen([sys.executable, "-m", "tomo", "team", "go", "--stages", "a:planner | b:tester",
                                "--roles", roles, "--job-id", "i1"], cwd=tmp_path, env=cli_env(), text=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    store_path = tmp_path / ".tomo" / "team.sqlite"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = open_store(store_path).get_job("i1") if store_path.exists() else None
        if job is not None and job.stages[0].workers[0].status == "running":
            break
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "tomo team resume i1" in err
    job = open_store(store_path).get_job("i1")
    assert job is not None and job.status == "incomplete" and "interrupted" in job.reason
    assert os.path.exists(store_path)


def test_tomo_team_gives_a_code_worker_the_oi_engine(tmp_path: Path, run_tomo: Run) -> None:
    """team does not import oi (engines sit side by side): the command above both hands the team its code engine."""
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("print('hello')\n")
    (ws / "tomo.toml").write_text('[sandbox]\nkind = "local"\n\n[team.roles.implementer]\ncode = true\n')
    subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
    subprocess.run(["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)
    write = "```python\nopen('feature.py', 'w').write('VALUE = 42\\n')\n```"
    check = "```bash\npython -c 'import feature; assert feature.VALUE == 42'\n```"
    coder = script(tmp_path, "coder", reply(write), reply(check), reply("feature.py holds VALUE."))
    done = run_tomo("team", "add feature.py", "--stages", "build:implementer", "--roles", f"implementer={coder}",
                    "--job-id", "k1", "--workspace", str(ws), cwd=ws)
    assert done.returncode == 0, done.stderr
    assert "test verdict: passed" in done.stdout and "+VALUE = 42" in done.stdout
