"""The git-history signal of the context pack, on a small repository each test builds with git in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tomo.oi import context_history
from tomo.oi.context_history import HistoryError, open_history, read_log
from tomo.oi.context_pack import Weights, build, is_test_path, rank
from tomo.oi.context_search import Retrieval
from tomo.prism import Graph

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = {
    "shop/__init__.py": "",
    "shop/cache.py": "def evict(key):\n    return key\n",
    "shop/render.py": "def render(template):\n    return template\n",
    "shop/toolbar.py": "def layout(items):\n    return items\n",
    "shop/util.py": "def clamp(x):\n    return x\n",
    "tests/test_cache.py": "def test_evict():\n    assert True\n",
}


ON = Weights(history=3.0)  # the pack's history signal is off by default


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def commit(root: Path, message: str, *paths: str) -> str:
    for p in paths:
        f = root / p
        f.write_text(f.read_text() + "# edited\n")  # the message's words are in the history only
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository with a history; returns (root, {label: commit hash})."""
    root = tmp_path / "repo"
    for p, text in FILES.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(text)
    git(root, "init", "-q", "-b", "main")
    shas = {"initial": commit(root, "Initial layout of the shop")}
    shas["cache"] = commit(root, "Fix eviction when the memcached backend times out", "shop/cache.py",
                           "tests/test_cache.py")
    shas["render"] = commit(root, "Template rendering escapes quotes twice", "shop/render.py")
    shas["cache2"] = commit(root, "memcached: retry once on a backend timeout", "shop/cache.py")
    shas["sweep"] = commit(root, "Reformat everything; memcached timeout wording in comments",
                           "shop/render.py", "shop/toolbar.py", "shop/util.py", "shop/__init__.py")
    shas["toolbar"] = commit(root, "Toolbar alignment of widgets is off by one pixel", "shop/toolbar.py")
    return root, shas


def _conn() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", isolation_level=None)


def _known(root: Path) -> set[str]:
    return set(FILES)


def test_the_file_whose_commits_match_the_task_ranks_first(repo: tuple[Path, dict[str, str]]) -> None:
    root, shas = repo
    history, note = open_history(_conn(), root)
    assert note is None and history is not None and history.commit == shas["toolbar"]
    votes = history.votes("The memcached backend times out and eviction fails", _known(root), is_test=is_test_path)
    ranked = sorted(votes, key=lambda p: -votes[p])
    assert ranked[0] == "shop/cache.py"
    # the sweeping commit matches too, but its vote is split over the four code files it touched
    assert votes["shop/cache.py"] > 3 * votes["shop/util.py"] > 0
    # a test file touched by a matching commit gets a vote (for the tests ranking) but does not dilute the code's
    assert votes["tests/test_cache.py"] > 0


def test_the_pack_ranks_by_history_through_its_weight(repo: tuple[Path, dict[str, str]]) -> None:
    root, _shas = repo
    task = "Toolbar widgets are misaligned"
    only_history = Weights(use_anchors=False, use_bm25=False, history=1.0, loose=1.0, aside=1.0)
    with Graph.open(root) as graph:
        retrieval = Retrieval(graph.root, graph.conn.execute("SELECT path, hash FROM files").fetchall())
        try:
            history, _ = open_history(retrieval.conn, graph.root)
            on = rank(graph, retrieval, task, weights=only_history, history=history)
            off = rank(graph, retrieval, task, weights=replace(only_history, history=0.0), history=history)
        finally:
            retrieval.close()
    assert on.files[0] == "shop/toolbar.py"
    assert off.files == []


def test_commits_after_the_given_revision_are_never_read(repo: tuple[Path, dict[str, str]]) -> None:
    root, shas = repo
    task = "Toolbar alignment of widgets"
    at_head, _ = open_history(_conn(), root)
    assert at_head is not None and "shop/toolbar.py" in at_head.votes(task, _known(root))
    before, note = open_history(_conn(), root, rev=shas["render"])
    assert note is None and before is not None and before.commit == shas["render"]
    votes = before.votes(task, _known(root))
    assert "shop/toolbar.py" not in votes
    # nor the later memcached commit (cache2) nor the sweep: only the first cache commit votes
    only_first = before.votes("memcached retry once", _known(root), is_test=is_test_path)
    assert only_first == {"shop/cache.py": pytest.approx(1.0), "tests/test_cache.py": pytest.approx(1.0)}
    # an explicit git directory (a tree extracted without .git) reads the same history
    bare = root.parent / "elsewhere"
    bare.mkdir()
    from_dir, note = open_history(_conn(), bare, git_dir=root / ".git", rev=shas["render"])
    assert note is None and from_dir is not None and "shop/toolbar.py" not in from_dir.votes(task, _known(root))


def test_a_log_that_does_not_start_at_the_revision_is_refused(repo: tuple[Path, dict[str, str]]) -> None:
    root, shas = repo
    real = context_history._runner(["git", "-C", str(root)])

    def from_head(args: list[str]) -> str:  # a runner that ignores the revision and reads HEAD's log
        return real([a if a != shas["render"] else "HEAD" for a in args])

    with pytest.raises(HistoryError, match="not read from"):
        read_log(from_head, shas["render"])
    history, note = open_history(_conn(), root, rev=shas["render"], runner=from_head)
    assert history is None and note is not None and "not read from" in note


def test_no_git_gives_no_signal_no_error_and_a_note(repo: tuple[Path, dict[str, str]], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root, _shas = repo
    plain = tmp_path / "plain"
    shutil.copytree(root, plain, ignore=shutil.ignore_patterns(".git"))
    history, note = open_history(_conn(), plain)  # not a checkout: asked for, so the note says why there is none
    assert history is None and note == (f"git history not used: {plain} is not a git checkout (it has no .git); "
                                        "pass --git-dir DIR with the repository's git directory to read its history")
    history, note = open_history(_conn(), plain, git_dir=tmp_path / "nowhere")
    assert history is None and note is not None and note.startswith("git history not used")
    pack = build(plain, "evict fails in the cache", weights=ON)
    assert pack.files and len(pack.notes) == 1 and "is not a git checkout" in pack.notes[0]
    assert build(plain, "evict fails in the cache").notes == []  # history not asked for: nothing to say
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # git itself is missing
    history, note = open_history(_conn(), root)
    assert history is None and note == "git history not used: git is not installed"
    pack = build(root, "evict fails in the cache", weights=ON)
    assert pack.files and pack.notes == ["git history not used: git is not installed"]


def test_a_shallow_clone_gives_no_signal(repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _shas = repo
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{root}", str(clone)], check=True,
                   capture_output=True)
    history, note = open_history(_conn(), clone)
    assert history is None and note == "git history not used: the repository is a shallow clone"


def test_a_cached_log_is_not_read_again(repo: tuple[Path, dict[str, str]]) -> None:
    root, _shas = repo
    calls: list[list[str]] = []
    real = context_history._runner(["git", "-C", str(root)])

    def counting(args: list[str]) -> str:
        calls.append(args)
        return real(args)

    def refuse(args: list[str]) -> str:
        raise AssertionError(f"git ran again: {args}")

    conn = _conn()
    first, _ = open_history(conn, root, runner=counting)
    assert first is not None and any("log" in c for c in calls)
    task = "memcached backend timeout"
    again, note = open_history(conn, root, runner=refuse)  # HEAD is read from .git's files, the log from the cache
    assert note is None and again is not None and again.votes(task, _known(root)) == first.votes(task, _known(root))
    # a new commit is a new key: the cache is replaced, not reused
    new = commit(root, "Clamp negative prices in util", "shop/util.py")
    calls.clear()
    moved, _ = open_history(conn, root, runner=counting)
    assert moved is not None and moved.commit == new and any("log" in c for c in calls)
    assert "shop/util.py" in moved.votes("clamp negative prices", _known(root))


def test_cli_reads_the_history_of_a_git_dir_up_to_a_revision(repo: tuple[Path, dict[str, str]], tmp_path: Path,
                                                              run_tomo: Callable[..., subprocess.CompletedProcess[str]]
                                                              ) -> None:
    root, shas = repo
    tree = tmp_path / "tree"  # an extracted tree, as `git archive` gives it: no .git
    shutil.copytree(root, tree, ignore=shutil.ignore_patterns(".git"))
    task = "The memcached backend times out"  # words found in commit messages only, not in the code

    def pack(*extra: str) -> dict[str, list[str]]:
        r = run_tomo("context-pack", task, "--root", str(tree), "--json", *extra)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    assert pack("--git-dir", str(root / ".git"))["files"][0] == "shop/cache.py"
    assert "shop/cache.py" not in pack()["files"][:1]  # no --history, no --git-dir: the history is not read
    before = pack("--git-dir", str(root / ".git"), "--git-rev", shas["initial"])
    assert "shop/cache.py" not in before["files"][:1] and before["notes"] == []
    broken = pack("--git-dir", str(tmp_path / "nowhere"))
    assert broken["notes"] and broken["notes"][0].startswith("git history not used")


def test_cli_history_on_a_tree_that_is_not_a_checkout_says_so_in_one_line(
        repo: tuple[Path, dict[str, str]], tmp_path: Path,
        run_tomo: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    root, _shas = repo
    tree = tmp_path / "tree"
    shutil.copytree(root, tree, ignore=shutil.ignore_patterns(".git"))
    task = "The memcached backend times out"
    why = (f"git history not used: {tree} is not a git checkout (it has no .git); pass --git-dir DIR with the "
           "repository's git directory to read its history")
    shown = run_tomo("context-pack", task, "--root", str(tree), "--history")
    assert shown.returncode == 0, shown.stderr
    notes = [line for line in shown.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {why}"] and "Context pack" in shown.stdout
    as_json = run_tomo("context-pack", task, "--root", str(tree), "--history", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["notes"] == [why]
    plain = run_tomo("context-pack", task, "--root", str(tree))  # history not asked for: no note
    assert "note:" not in plain.stderr
