"""bench/gates.py's own parts: the task-file loader, the patch reading, and the scripted replies it generates.

A tiny synthetic task (a local git repository with a bug, its test and its fix as real ``git diff`` output) stands in
for a SWE-bench task, so this runs on a bare clone without ../shared. The generated bash blocks are run for real
(``bash`` on the host) to prove they write the patches and run the checks as each path says; one test drives all four
paths through ``tomo run`` in the strict sandbox, the way the benchmark does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import gates  # noqa: E402

CALC = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result - 1\n"
FIXED = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n"
OTHER = "def double(x):\n    return 2 * x\n"
MAIN = "\n\nif __name__ == '__main__':\n    test()\n"  # plain scripts: starting pytest per check costs seconds here
TEST_OTHER = "from other import double\n\n\ndef test():\n    assert double(2) == 4\n" + MAIN
TEST_CALC = "from calc import total\n\n\ndef test():\n    assert total([1, 2, 3]) == 6\n" + MAIN


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def diff_of(repo: Path, path: str, new: str) -> str:
    """The real ``git diff`` of writing ``new`` to ``path``, then the change undone."""
    target = repo / path
    old = target.read_text() if target.exists() else None
    target.write_text(new)
    git(repo, "add", "-N", path)
    out = git(repo, "diff", "--", path)
    if old is None:
        git(repo, "rm", "-q", "--cached", path)
        target.unlink()
    else:
        target.write_text(old)
    return out


@pytest.fixture
def synthetic(tmp_path: Path) -> tuple[gates.Task, gates.Material, Path]:
    """A repository laid out as the fetch tool lays out snapshots (``MIRRORS/owner+name/repo``), a task on it, and
    the material a data row would bring."""
    mirrors = tmp_path / "mirrors"
    repo = mirrors / "example+calc" / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "calc.py").write_text(CALC)
    (repo / "other.py").write_text(OTHER)
    (repo / "test_other.py").write_text(TEST_OTHER)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    material = gates.Material(patch=diff_of(repo, "calc.py", FIXED),
                              test_patch=diff_of(repo, "test_calc.py", TEST_CALC))
    task = gates.Task("example__calc-1", "example/calc", "example/calc", base, "py",
                      "{python} test_calc.py", "{python} test_other.py")
    return task, material, mirrors


def write_tasks(path: Path, entries: object) -> Path:
    path.write_text(json.dumps(entries))
    return path


GOOD = {"instance_id": "a__b-1", "repo": "a/b", "source": "a/b", "base_commit": "0" * 40, "venv": "b",
        "test": "{python} -m pytest t.py", "wrong_test": "{python} -m pytest u.py"}


def test_load_tasks_reads_a_good_file(tmp_path: Path) -> None:
    tasks = gates.load_tasks(write_tasks(tmp_path / "t.json", {"tasks": [GOOD, {**GOOD, "instance_id": "a__b-2"}]}))
    assert [t.instance_id for t in tasks] == ["a__b-1", "a__b-2"]
    assert tasks[0].command("test", "/v/bin/python") == "/v/bin/python -m pytest t.py"
    assert tasks[0].command("wrong_test", "/v/bin/python") == "/v/bin/python -m pytest u.py"


@pytest.mark.parametrize(("entries", "words"), [
    ({"tasks": []}, "no 'tasks' list"),
    ([GOOD], "no 'tasks' list"),
    ({"tasks": [{**GOOD, "venv": ""}]}, "entry #1 (a__b-1) has no 'venv'"),
    ({"tasks": [{k: v for k, v in GOOD.items() if k != "test"}]}, "has no 'test'"),
    ({"tasks": [{**GOOD, "base_commit": "main"}]}, "base_commit 'main' is not 40 hex digits"),
    ({"tasks": [{**GOOD, "wrong_test": "python -m pytest"}]}, "'wrong_test' does not call {python}"),
    ({"tasks": [GOOD, GOOD]}, "entry #2: a__b-1 is listed twice"),
    ({"tasks": ["a__b-1"]}, "entry #1 is not an object"),
])
def test_load_tasks_names_what_is_wrong(tmp_path: Path, entries: object, words: str) -> None:
    with pytest.raises(gates.TaskError, match=re.escape(words)):
        gates.load_tasks(write_tasks(tmp_path / "t.json", entries))


def test_load_tasks_on_a_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(gates.TaskError, match="does not exist"):
        gates.load_tasks(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(gates.TaskError, match="not valid JSON"):
        gates.load_tasks(tmp_path / "bad.json")


def test_the_committed_task_file_loads() -> None:
    tasks = gates.load_tasks()
    assert len(tasks) >= 10
    assert len({t.repo for t in tasks}) >= 3


def test_patch_reading(synthetic: tuple[gates.Task, gates.Material, Path]) -> None:
    _, material, _ = synthetic
    assert material.changed == ["calc.py"]
    assert gates.changed_files(material.test_patch) == ["test_calc.py"]  # a new file: the +++ side
    assert gates.added_lines(material.patch) == {"calc.py": {5}}
    assert gates.added_lines(material.test_patch) == {"test_calc.py": set(range(1, 10))}
    assert gates.function_body_lines(FIXED) == {2, 3, 4, 5}


def test_fence_outlasts_backticks_in_the_body() -> None:
    assert gates.fence("bash", "echo hi") == "```bash\necho hi\n```"
    inner = "x = '''\n```py\ncode\n```\n'''"
    block = gates.fence("bash", inner)
    assert block.startswith("````bash\n") and block.endswith("\n````")


def test_load_material_reads_the_rows_it_is_asked_for(tmp_path: Path) -> None:
    rows = [{"instance_id": "a__b-1", "patch": "P", "test_patch": "T", "FAIL_TO_PASS": '["test_x"]',
             "problem_statement": "it breaks"}, {"instance_id": "a__b-9", "patch": "", "test_patch": ""}]
    data = tmp_path / "dev.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    found = gates.load_material(data, ["a__b-1"])
    assert found["a__b-1"] == gates.Material("P", "T", ("test_x",), "it breaks")
    with pytest.raises(gates.TaskError, match="no row for a__b-2"):
        gates.load_material(data, ["a__b-1", "a__b-2"])


def blocks_of(script: dict[str, object]) -> list[str]:
    replies = script["replies"]
    assert isinstance(replies, list)
    found = []
    for reply in replies:
        match = re.search(r"^(`{3,})bash\n(.*?)\n\1$", reply["content"], re.S | re.M)
        if match:
            found.append(match.group(2))
    return found


@pytest.mark.parametrize(("path", "exits"), [
    ("honest", [0, 1, 0, 0]),  # test patch applied; red; fix applied; green
    ("parse-only", [0, 0]),
    ("wrong-test", [0, 0]),
    ("no-red", [0, 0]),
])
def test_generated_blocks_do_what_the_path_says(synthetic: tuple[gates.Task, gates.Material, Path], tmp_path: Path,
                                                path: str, exits: list[int]) -> None:
    task, material, mirrors = synthetic
    ws = gates.checkout(gates.mirror_of(mirrors, task.source), task.base_commit, tmp_path / "ws")
    script = gates.make_script(task, material, path, sys.executable)
    assert script["replies"][-1]["content"] == gates.FINISH  # it ends by claiming to be done
    got = []
    for block in blocks_of(script):
        got.append(subprocess.run(["bash", "-c", block], cwd=ws, capture_output=True, text=True).returncode)
    assert got == exits
    assert (ws / "calc.py").read_text() == FIXED  # every path ends with the fix written by the blocks
    assert (ws / "test_calc.py").exists() == (path in ("honest", "no-red"))


def test_unknown_path_and_a_patch_holding_the_terminator(synthetic: tuple[gates.Task, gates.Material, Path]) -> None:
    task, material, _ = synthetic
    with pytest.raises(gates.TaskError, match="unknown path 'sideways'"):
        gates.make_script(task, material, "sideways", "python")
    with pytest.raises(gates.TaskError, match="heredoc terminator"):
        gates.apply_block(f"+x\n{gates.PATCH_END}\n")


def test_verify_on_the_host(synthetic: tuple[gates.Task, gates.Material, Path], tmp_path: Path) -> None:
    task, material, mirrors = synthetic
    venvs = tmp_path / "venvs"
    (venvs / "py" / "bin").mkdir(parents=True)
    (venvs / "py" / "bin" / "python").symlink_to(sys.executable)
    verdict = gates.verify(task, material, mirrors, venvs, tmp_path / "scratch")
    assert (verdict.red, verdict.green, verdict.wrong_exit, verdict.wrong_hits) == (1, 0, 0, [])
    assert verdict.ok, verdict.error
    # a "wrong" test that does run the fixed line is caught by the tracer
    reaching = gates.Task(**{**task.__dict__, "wrong_test": task.test})
    verdict = gates.verify(reaching, material, mirrors, venvs, tmp_path / "scratch2")
    assert verdict.wrong_hits == ["calc.py:5"] and not verdict.ok


def test_the_four_paths_through_tomo_run(synthetic: tuple[gates.Task, gates.Material, Path], tmp_path: Path) -> None:
    """The benchmark's driver end to end on the synthetic task: a venv-like directory outside the workspace, read-only
    in the strict box, and each path accepted or refused as the benchmark expects."""
    if shutil.which("bwrap") is None:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("bubblewrap is not installed on CI: apt-get install bubblewrap")
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap); tomo run's strict box needs it")
    task, material, mirrors = synthetic
    venvs = tmp_path / "venvs"
    (venvs / "py" / "bin").mkdir(parents=True)
    (venvs / "py" / "bin" / "python").symlink_to(sys.executable)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    runs = {path: gates.run_path(task, material, path, mirrors=mirrors, venvs=venvs, scratch=scratch, prompt="fix it")
            for path in gates.PATHS}
    outcomes = {path: (run.exit_code, run.unsatisfied) for path, run in runs.items()}
    assert outcomes == {"honest": (0, []), "parse-only": (3, ["exec", "repro"]), "wrong-test": (3, ["exec", "repro"]),
                        "no-red": (3, ["repro"])}, {p: r.log[-1500:] for p, r in runs.items()}
    assert all(run.ok for run in runs.values())
    assert runs["honest"].result["files_changed"] == ["calc.py", "test_calc.py"]
    assert runs["honest"].check_seconds > 0
    # the overhead timing: the green check in the box, hook on and off, and the hook really reported on its runs
    on, off = gates.hook_overhead(task, material, mirrors=mirrors, venvs=venvs, scratch=scratch, repeats=2)
    assert len(on) == len(off) == 2 and min(on + off) > 0
    broken = gates.Task(**{**task.__dict__, "test": "{python} -c 'raise SystemExit(5)'"})
    with pytest.raises(gates.TaskError, match="the green check failed in the box \\(exit 5"):
        gates.hook_overhead(broken, material, mirrors=mirrors, venvs=venvs, scratch=scratch, repeats=1)
