"""The SWE-bench adaptor on data of its own: a tiny upstream repository made here (a bug, its tests, the fix and a new
test committed later, as upstream history goes), records in SWE-bench's shape whose patch and test_patch are real
`git diff`s, the suite written by the real CLI, then the lab's engine ceiling on it, as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tomo.errors import ConfigError
from tomo.lab import swebench as swe
from tomo.lab.records import LabStore, db_url
from tomo.lab.runner import judge
from tomo.lab.suite import load_suite

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}

STATEMENT = ('clamp() ignores its upper bound\r\nclamp(5, 0, 10) gives 0, not 5. Text such as """quotes""", a '
             'backslash \\n, [red]markup[/red], $HOME and `rm -rf /` is data.\n\n')


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def record(iid: str, repo: str, base: str, patch: str, test_patch: str, f2p: list[str], p2p: list[str],
           statement: str = STATEMENT) -> dict[str, Any]:
    return {"instance_id": iid, "repo": repo, "base_commit": base, "problem_statement": statement, "hints_text": "",
            "patch": patch, "test_patch": test_patch, "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p),
            "version": "1.0"}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two upstream repositories and a JSONL of three records: a flat project with pytest node ids, a src/ layout
    project with sympy-style bare test names and a data file the test patch adds, and a django-shaped one."""
    base_dir = tmp_path_factory.mktemp("upstream")
    calc = base_dir / "calc"
    calc.mkdir()
    git(calc, "init", "-q")
    below = "from calc import clamp\n\n\ndef test_below():\n    assert clamp(-5, 0, 10) == 0\n"
    write(calc, {"calc.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, lo))\n", "tests/test_calc.py": below})
    calc_base = commit(calc, "base")
    write(calc, {"calc.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"})
    calc_patch = git(calc, "diff")
    commit(calc, "fix")  # upstream history goes on past the base: the adaptor must take the base, not HEAD
    write(calc, {"tests/test_calc.py": below + "\n\ndef test_between():\n    assert clamp(5, 0, 10) == 5\n"})
    calc_tests = git(calc, "diff")
    commit(calc, "test")

    shapes = base_dir / "shapes"
    shapes.mkdir()
    git(shapes, "init", "-q")
    write(shapes, {"src/shapes/__init__.py": "def area(w, h):\n    return w + h\n",
                   "tests/test_shapes.py": "from shapes import area\n\n\nclass TestArea:\n    def test_zero(self):\n"
                                           "        assert area(0, 0) == 0\n"})
    shapes_base = commit(shapes, "base")
    write(shapes, {"src/shapes/__init__.py": "def area(w, h):\n    return w * h\n"})
    shapes_patch = git(shapes, "diff")
    git(shapes, "checkout", "-q", ".")
    write(shapes, {"tests/test_shapes.py": "import json\nfrom pathlib import Path\n\nfrom shapes import area\n\n\n"
                                           "class TestArea:\n    def test_zero(self):\n        assert area(0, 0) == 0\n"
                                           "\n\ndef test_table():\n    table = json.loads((Path(__file__).parent / "
                                           "'areas.json').read_text())\n    assert [area(w, h) for w, h in table] == "
                                           "[6, 20]\n",
                   "tests/areas.json": "[[2, 3], [4, 5]]\n"})
    git(shapes, "add", "-N", "tests/areas.json")
    shapes_tests = git(shapes, "diff")
    commit(shapes, "fix and test")

    records = [record("acme__calc-1", "acme/calc", calc_base, calc_patch, calc_tests,
                      ["tests/test_calc.py::test_between"], ["tests/test_calc.py::test_below", "[100%]"]),
               record("acme__shapes-2", "acme/shapes", shapes_base, shapes_patch, shapes_tests,
                      ["test_table"], ["test_zero"]),
               record("django__django-3", "django/django", calc_base, calc_patch, calc_tests,
                      ["test_between (tests.test_calc.Tests)"], [])]
    data = base_dir / "dev.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    return {"data": data, "calc": calc / ".git", "shapes": shapes / ".git", "records": records, "dir": base_dir}


def git_dirs(up: dict[str, Any]) -> list[str]:
    return ["--git-dir", f"acme/calc={up['calc']}", "--git-dir", f"acme/shapes={up['shapes'].parent}"]


def test_the_suite_is_solved_by_the_ceiling_and_refused_unfixed(run_tomo, upstream: dict[str, Any],  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "suite"
    done = run_tomo("lab", "swebench", str(upstream["data"]), *git_dirs(upstream), "--repo", "acme/calc", "--repo",
                    "acme/shapes", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    written = {t["id"]: t for t in json.loads(done.stdout)["tasks"]}
    assert set(written) == {"acme__calc-1", "acme__shapes-2"}
    assert written["acme__shapes-2"]["pythonpath"] == ["src"] and written["acme__calc-1"]["pythonpath"] == []
    assert written["acme__shapes-2"]["hidden"] == ["tests/areas.json", "tests/test_shapes.py"]
    assert written["acme__calc-1"]["dropped"] == ["[100%]"]  # SWE-bench's parser took pytest's progress for a test

    suite = load_suite(out)
    calc, shapes = suite.select(["acme__calc-1"])[0], suite.select(["acme__shapes-2"])[0]
    assert calc.kind == "fix" and calc.prompt == STATEMENT.strip()  # every character of the statement, as data
    assert "min(x, lo)" in (calc.repo / "calc.py").read_text()  # the base commit's tree, not upstream's HEAD
    assert "test_between" not in (calc.repo / "tests/test_calc.py").read_text()
    assert (calc.reference / "calc.py").read_text().endswith("min(x, hi))\n")
    assert calc.check == "python -m pytest -q -p no:cacheprovider tests/test_calc.py"
    assert shapes.check == "env PYTHONPATH=src python -m pytest -q -p no:cacheprovider tests/test_shapes.py"
    spec = json.loads((shapes.hidden / swe.TESTS_FILE).read_text())
    assert spec["fail_to_pass"] == ["tests/test_shapes.py::test_table"]  # bare names found where they are defined
    assert spec["pass_to_pass"] == ["tests/test_shapes.py::TestArea::test_zero"]

    for task in (calc, shapes):  # the oracle, as runner.judge runs it, refuses the unfixed repository
        copy = tmp_path / f"unfixed-{task.id}"
        shutil.copytree(task.repo, copy)
        solved, output = judge(task, copy, sys.executable)
        assert not solved and "1 failed, 1 passed" in output, output

    db = tmp_path / "lab.sqlite"
    lab = run_tomo("lab", "run", str(out), "--model", "reference", "--variant", "plain", "--db", str(db), "--json",
                   timeout=600)
    assert lab.returncode == 0, lab.stderr
    printed = [json.loads(x) for x in lab.stdout.splitlines() if x.startswith("{")]
    assert sorted((r["task"], r["solved"]) for r in printed) == [("acme__calc-1", True), ("acme__shapes-2", True)]
    store = LabStore(db_url(str(db)))
    try:
        runs = {r.task: r for r in store.records("swebench-lite")}
    finally:
        store.close()
    for run in runs.values():
        assert run.solved and run.error == "" and "2 passed" in run.oracle_output, run.oracle_output
    assert "min(x, hi)" in runs["acme__calc-1"].diff and "w * h" in runs["acme__shapes-2"].diff


def test_refusals_leave_the_out_folder_as_it_was(run_tomo, upstream: dict[str, Any], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = str(upstream["data"])
    out = tmp_path / "suite"
    unmapped = run_tomo("lab", "swebench", data, "--git-dir", f"acme/calc={upstream['calc']}", "--repo", "acme/calc",
                        "--repo", "acme/shapes", "--out", str(out))
    assert unmapped.returncode == 2 and "no git directory for acme/shapes" in unmapped.stderr
    assert "--git-dir acme/shapes=GITDIR" in unmapped.stderr and "Traceback" not in unmapped.stderr
    django = run_tomo("lab", "swebench", data, *git_dirs(upstream), "--out", str(out))
    assert django.returncode == 2 and "django/django is not supported" in django.stderr
    assert "tests/runtests.py" in django.stderr
    assert not out.exists()

    out.mkdir()
    (out / "notes.txt").write_text("mine")
    busy = run_tomo("lab", "swebench", data, *git_dirs(upstream), "--id", "acme__calc-1", "--out", str(out))
    assert busy.returncode == 2 and "is not empty and not a suite" in busy.stderr
    assert [p.name for p in out.iterdir()] == ["notes.txt"]

    (out / "notes.txt").unlink()
    first = run_tomo("lab", "swebench", data, *git_dirs(upstream), "--repo", "acme/calc", "--repo", "acme/shapes",
                     "--out", str(out))
    assert first.returncode == 0 and "wrote suite 'swebench-lite' (2 task(s))" in first.stdout, first.stderr
    again = run_tomo("lab", "swebench", data, *git_dirs(upstream), "--id", "acme__shapes-2", "--out", str(out))
    assert again.returncode == 0, again.stderr  # a suite this command wrote is replaced whole
    assert [t.id for t in load_suite(out).tasks] == ["acme__shapes-2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]  # nothing left beside it


def test_a_failure_half_way_writes_nothing(upstream: dict[str, Any], tmp_path: Path) -> None:
    records = swe.read_records(upstream["data"])
    dirs = swe.parse_git_dirs([f"acme/calc={upstream['calc']}", f"acme/shapes={upstream['shapes']}"])
    out = tmp_path / "suite"
    swe.build_suite(records[:1], dirs, out, name="s", source="dev.jsonl")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    broken = replace(records[1], base_commit="0" * 40)
    seen: list[str] = []
    with pytest.raises(ConfigError, match=r"base commit 0{40} is not in"):
        swe.build_suite([records[0], broken], dirs, out, name="s", source="dev.jsonl",
                        on_task=lambda i, r: seen.append(r.instance_id))
    assert seen == ["acme__calc-1", "acme__shapes-2"]  # the first task was built, then thrown away
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_test_ids_of_another_runner_and_patches_that_delete_are_refused(upstream: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    calc = swe.read_records(upstream["data"])[0]
    dirs = swe.parse_git_dirs([f"acme/calc={upstream['calc']}"])
    unittest_ids = replace(calc, fail_to_pass=("test_between (tests.test_calc.Tests)",))
    with pytest.raises(ConfigError) as caught:
        swe.build_suite([unittest_ids], dirs, tmp_path / "a", name="s", source="x")
    assert "acme/calc" in caught.value.message and "test_between (tests.test_calc.Tests)" in caught.value.message
    unknown = replace(calc, pass_to_pass=("test_nowhere",))
    with pytest.raises(ConfigError, match="'test_nowhere' is defined in none of the files"):
        swe.build_suite([unknown], dirs, tmp_path / "b", name="s", source="x")
    deleting = replace(calc, patch="diff --git a/calc.py b/calc.py\ndeleted file mode 100644\n--- a/calc.py\n"
                                   "+++ /dev/null\n@@ -1,2 +0,0 @@\n-def clamp(x, lo, hi):\n"
                                   "-    return max(lo, min(x, lo))\n")
    with pytest.raises(ConfigError, match="delete mode"):
        swe.build_suite([deleting], dirs, tmp_path / "c", name="s", source="x")
    assert not any(tmp_path.iterdir())


def test_bad_input_is_named(tmp_path: Path, upstream: dict[str, Any]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(upstream["records"][0]) + "\n{not json\n")
    with pytest.raises(ConfigError, match=r"bad\.jsonl:2: not JSON"):
        swe.read_records(bad)
    bad.write_text(json.dumps(upstream["records"][0]) + "\n\n" + json.dumps(upstream["records"][0]) + "\n")
    with pytest.raises(ConfigError, match=r"bad\.jsonl:3: instance acme__calc-1 again"):
        swe.read_records(bad)
    bad.write_text(json.dumps({**upstream["records"][0], "instance_id": "../escape"}) + "\n")
    with pytest.raises(ConfigError, match="cannot name a folder"):
        swe.read_records(bad)
    records = swe.read_records(upstream["data"])
    with pytest.raises(ConfigError, match="no record 'nope'"):
        swe.choose(records, ids=["nope"])
    assert [r.instance_id for r in swe.choose(records, repos=["acme/calc", "acme/shapes"], limit=1)] == ["acme__calc-1"]
    for spec, said in [("acme/calc", "not owner/name=GITDIR"), (f"acme/calc={tmp_path}", "not a git directory"),
                       (f"acme/calc={tmp_path / 'none'}", "not a folder")]:
        with pytest.raises(ConfigError, match=said):
            swe.parse_git_dirs([spec])


def test_toml_strings_hold_any_text() -> None:
    import tomllib

    text = 'a "b" \\ c\r\n\t\x00\x7f\x1b[31m é 🙂 """ \'\'\''
    data = tomllib.loads(f"one = {swe.toml_string(text)}\nmany = {swe.toml_multiline(text)}\n")
    assert data == {"one": text, "many": text}
