"""Code workers: each edits its own git worktree of the job's workspace; the next stage gets each diff and verdict."""

from __future__ import annotations

import subprocess
from pathlib import Path

from team_support import Recorder, make_team, reply, script

from tomo.cli.team_oi import OiRunner
from tomo.config import Settings
from tomo.events import Sink
from tomo.models.base import Model
from tomo.models.messages import Usage
from tomo.prism import Graph
from tomo.team import Stage, TaskGraph, Worker
from tomo.team.code import CodeResult


def _repo(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "app.py").write_text("print('hello')\n")
    subprocess.run(["git", "-C", str(path), "add", "app.py"], check=True)
    subprocess.run(["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
                   check=True)


class EditingRunner:
    """Stands in for the code engine: writes one file named after its worktree and reports a verdict."""

    def __init__(self) -> None:
        self.worktrees: list[Path] = []

    async def __call__(self, task: str, worktree: Path, model: Model, sink: Sink) -> CodeResult:
        self.worktrees.append(worktree)
        name = f"feature_{len(self.worktrees)}.py"
        (worktree / name).write_text("VALUE = 1\n")
        (worktree / "app.py").write_text(f"print('hello from {name}')\n")
        return CodeResult(f"wrote {name}", Usage(20, 10), "passed")

    def seed(self, worktree: Path, workspace: Path) -> None:
        """Nothing to index for this stand-in."""


async def test_parallel_code_workers_edit_their_own_worktrees_and_the_merge_sees_each_diff(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _repo(workspace)
    recorder = Recorder()
    reviewer = script(tmp_path, "reviewer", reply("APPROVE"))
    runner = EditingRunner()
    team = make_team(tmp_path, {"reviewer": reviewer}, primary=reviewer, recorder=recorder, code_runner=runner)
    team.workspace = workspace.resolve()
    graph = TaskGraph("c1", (Stage("build", (Worker("implementer", code=True), Worker("implementer", code=True))),
                             Stage("review", (Worker("reviewer"),))))
    result = await team.run(graph, "add a feature")
    assert result.status == "complete", result.reason
    first, second = runner.worktrees
    assert first != second and first.parent == second.parent == workspace / ".tomo" / "worktrees"
    assert (workspace / "app.py").read_text() == "print('hello')\n"  # the workspace itself is untouched
    merged = result.record.stages[0].output or ""
    assert "## implementer 1" in merged and "## implementer 2" in merged
    assert merged.count("test verdict: passed") == 2
    assert "+print('hello from feature_1.py')" in merged and "+print('hello from feature_2.py')" in merged
    assert "new file mode" in merged  # a file the worker created is in its diff
    assert merged in recorder.sent_to(reviewer)[0]
    assert result.record.stages[0].workers[0].input_tokens == 20


class IndexProbe(OiRunner):
    """The oi runner's seeding, and in place of its engine a probe: what a worker's worktree holds of tomo's indexes
    when the engine starts."""

    def __init__(self) -> None:
        super().__init__(Settings())
        self.seen: list[tuple[bool, bool, int, int]] = []

    async def __call__(self, task: str, worktree: Path, model: Model, sink: Sink) -> CodeResult:
        state = worktree / ".tomo"
        with Graph.open(worktree) as graph:
            self.seen.append(((state / "index.sqlite").is_file(), (state / "context.sqlite").is_file(),
                              graph.stats.parsed, graph.stats.skipped))
        return CodeResult("looked", Usage(1, 1), "unverified")


async def test_each_worktree_starts_from_the_workspaces_indexes(tmp_path: Path) -> None:
    """The engine's context pack indexes the whole repository; a worker's new worktree starts from the workspace's
    indexes (built once for the job), so its first refresh parses nothing the workspace's HEAD already had."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _repo(workspace)
    (workspace / "lib.py").write_text("def helper():\n    return 1\n")
    subprocess.run(["git", "-C", str(workspace), "add", "lib.py"], check=True)
    subprocess.run(["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lib"],
                   check=True)
    reviewer = script(tmp_path, "reviewer", reply("APPROVE"))
    probe = IndexProbe()
    team = make_team(tmp_path, {"reviewer": reviewer}, primary=reviewer, recorder=Recorder(), code_runner=probe)
    team.workspace = workspace.resolve()
    graph = TaskGraph("s1", (Stage("build", (Worker("implementer", code=True), Worker("implementer", code=True))),))
    result = await team.run(graph, "look around")
    assert result.status == "complete", result.reason
    assert probe.seen == [(True, True, 0, 2), (True, True, 0, 2)]  # app.py and lib.py, both from the workspace's
    assert (workspace / ".tomo" / "index.sqlite").is_file() and (workspace / ".tomo" / "context.sqlite").is_file()


async def test_a_code_worker_without_an_engine_fails_with_a_clear_reason(tmp_path: Path) -> None:
    spec = script(tmp_path, "x", reply("x"))
    team = make_team(tmp_path, {}, primary=spec)  # no code_runner given
    result = await team.run(TaskGraph("c1", (Stage("build", (Worker("implementer", code=True),)),)), "go")
    assert result.status == "failed"
    assert "given no code engine" in result.reason and "code_runner=" in result.reason


async def test_a_code_worker_runs_the_oi_engine_in_its_worktree(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _repo(workspace)
    write = "```python\nopen('feature.py', 'w').write('VALUE = 41 + 1\\n')\n```"
    check = "```bash\npython -c 'import feature; assert feature.VALUE == 42; print(\"ok\")'\n```"
    coder = script(tmp_path, "coder", reply(write, tokens=(100, 20)), reply(check, tokens=(120, 15)),
                   reply("feature.py holds VALUE; the check passed.", tokens=(130, 10)))
    reviewer = script(tmp_path, "reviewer", reply("APPROVE"))
    settings = Settings.model_validate({"sandbox": {"kind": "local", "timeout_s": 60}})
    team = make_team(tmp_path, {"implementer": coder, "reviewer": reviewer}, primary=reviewer, settings=settings,
                     code_runner=OiRunner(settings))
    team.workspace = workspace.resolve()
    graph = TaskGraph("oi1", (Stage("build", (Worker("implementer", code=True),)),
                              Stage("review", (Worker("reviewer"),))))
    result = await team.run(graph, "add feature.py with VALUE = 42")
    assert result.status == "complete", result.reason
    worker = result.record.stages[0].workers[0]
    output = worker.output or ""
    assert "test verdict: passed" in output
    assert "+VALUE = 41 + 1" in output and "feature.py" in output
    assert ".tomo" not in output.split("```diff", 1)[1]  # the engine's own state is not part of the diff
    assert (worker.input_tokens, worker.output_tokens) == (350, 45)
    assert not (workspace / "feature.py").exists()  # written in the worker's worktree, not the workspace


async def test_a_red_check_gives_the_verdict_failed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _repo(workspace)
    write = "```python\nopen('feature.py', 'w').write('VALUE = 41\\n')\n```"
    check = "```bash\npython -c 'import feature; assert feature.VALUE == 42'\n```"
    coder = script(tmp_path, "coder", reply(write), reply(check), reply("I am done."))
    settings = Settings.model_validate({"sandbox": {"kind": "local", "timeout_s": 60}})
    team = make_team(tmp_path, {"implementer": coder}, primary=coder, settings=settings,
                     code_runner=OiRunner(settings, max_rounds=3))
    team.workspace = workspace.resolve()
    result = await team.run(TaskGraph("oi2", (Stage("build", (Worker("implementer", code=True),)),)), "add VALUE")
    output = result.record.stages[0].workers[0].output or ""
    assert "test verdict: failed" in output and "ended by: rounds" in output
