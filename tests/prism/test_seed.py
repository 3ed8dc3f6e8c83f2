"""Seeding: a new checkout's index starts as a copy of another checkout's, and parses only the files that differ."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from subprocess import CompletedProcess

from tomo.prism import Graph
from tomo.prism.store import FINGERPRINT, index_path, seed

from .conftest import write_project
from .test_index import FILES


def _rows(g: Graph, symbol: str) -> list[tuple[str, int, int, str]]:
    return sorted((r.path, r.line, r.col, r.confidence) for r in g.references(symbol))


def _checkouts(tmp_path: Path) -> tuple[Path, Path]:
    """An indexed checkout and a copy of its files (new mtimes, no index), the way a worktree or a clone starts."""
    first = write_project(tmp_path / "first", FILES)
    Graph.open(first).close()
    second = tmp_path / "second"
    shutil.copytree(first, second, ignore=shutil.ignore_patterns(".tomo"))
    return first, second


def test_a_seeded_index_parses_only_what_differs_and_answers_as_a_cold_one(tmp_path: Path) -> None:
    first, second = _checkouts(tmp_path)
    (second / "pkg/b.py").write_text("def use_b():\n    return 2\n")  # this checkout differs in one file
    (second / "pkg/c.py").write_text("from pkg.core import helper\n\nhelper()\n")  # and has one more
    with Graph.open(second, seed=first) as g:
        assert g.stats.seeded_from == str(first.resolve())
        assert (g.stats.parsed, g.stats.skipped, g.stats.removed) == (2, 3, 0)
        seeded = _rows(g, "pkg.core.helper")
    cold = tmp_path / "cold"
    shutil.copytree(second, cold, ignore=shutil.ignore_patterns(".tomo"))
    with Graph.open(cold) as g:
        assert g.stats.parsed == 5
        assert seeded == _rows(g, "pkg.core.helper")
    assert {p for p, *_ in seeded} == {"pkg/a.py", "pkg/c.py", "pkg/core.py"}
    with Graph.open(first) as g:  # the source is left as it was
        assert g.stats.parsed == 0 and _rows(g, "pkg.core.helper")[0][0] == "pkg/a.py"


def test_a_file_gone_from_the_new_checkout_is_dropped(tmp_path: Path) -> None:
    first, second = _checkouts(tmp_path)
    (second / "pkg/a.py").unlink()
    with Graph.open(second, seed=first) as g:
        assert (g.stats.parsed, g.stats.skipped, g.stats.removed) == (0, 3, 1)
        assert "pkg/a.py" not in {r.path for r in g.references("pkg.core.helper")}


def test_an_existing_index_is_never_replaced(tmp_path: Path) -> None:
    first, second = _checkouts(tmp_path)
    Graph.open(second).close()
    before = index_path(second).read_bytes()
    assert not seed(second, first)
    with Graph.open(second, seed=first) as g:
        assert g.stats.seeded_from is None and g.stats.parsed == 0
    assert index_path(second).read_bytes() == before


def test_nothing_to_copy_leaves_nothing_behind(tmp_path: Path) -> None:
    first, second = _checkouts(tmp_path)
    bare = write_project(tmp_path / "bare", {"m.py": "x = 1\n"})
    assert not seed(second, bare)  # no index there
    index_path(bare).parent.mkdir()
    index_path(bare).write_bytes(b"not a database" * 200)
    assert not seed(second, bare)  # a file that is not a database
    other = tmp_path / "other"
    shutil.copytree(first, other)
    with closing(sqlite3.connect(index_path(other))) as conn, conn:
        conn.execute("UPDATE meta SET value='prism-0/py2.7' WHERE key='fingerprint'")
    assert not seed(second, other)  # another tomo's format
    assert sorted(p.name for p in (second / ".tomo").iterdir()) == [".gitignore"]
    assert seed(second, first)
    with closing(sqlite3.connect(index_path(second))) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone() == (FINGERPRINT,)
    assert sorted(p.name for p in (second / ".tomo").iterdir()) == [".gitignore", "index.sqlite"]


def test_cli_seed_says_where_it_started_and_when_it_could_not(
        tmp_path: Path, run_tomo: Callable[..., CompletedProcess[str]]) -> None:
    first, second = _checkouts(tmp_path)
    done = run_tomo("graph", "index", "--root", str(second), "--seed", str(first), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["parsed"], out["skipped"], out["seeded_from"]) == (0, 4, str(first.resolve()))
    again = run_tomo("graph", "index", "--root", str(second), "--seed", str(first))
    assert again.stdout.splitlines()[-1] == f"note: --seed not used: {second} already had an index"
    third = tmp_path / "third"
    shutil.copytree(second, third, ignore=shutil.ignore_patterns(".tomo"))
    plain = run_tomo("graph", "index", "--root", str(third), "--seed", str(second))
    assert plain.stdout.splitlines()[0].endswith(f"(started from the index of {second.resolve()})")
    missing = run_tomo("graph", "index", "--root", str(third), "--seed", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "--seed" in missing.stderr and "is not a directory" in missing.stderr
