"""The on-disk index: incremental refresh (edit, delete, rename, touch), syntax errors, src layout, scale."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from tomo.prism import Graph

from .conftest import write_project

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": """
        def helper():
            return 1
    """,
    "pkg/a.py": """
        from pkg.core import helper

        def use_a():
            return helper()
    """,
    "pkg/b.py": """
        from pkg.core import helper

        def use_b():
            return helper()
    """,
}


def _paths(g: Graph, symbol: str) -> list[str]:
    return sorted({r.path for r in g.references(symbol)})


def test_first_open_builds_then_no_change_parses_nothing(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    with Graph.open(tmp_path) as g:
        assert (g.stats.parsed, g.stats.skipped) == (4, 0)
        assert (tmp_path / ".tomo" / "index.sqlite").exists()
    with Graph.open(tmp_path) as g:
        assert (g.stats.parsed, g.stats.skipped, g.stats.removed) == (0, 4, 0)
        assert _paths(g, "pkg.core.helper") == ["pkg/a.py", "pkg/b.py", "pkg/core.py"]


def test_edit_reparses_only_that_file(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    g = Graph.open(tmp_path)
    (tmp_path / "pkg/b.py").write_text("def use_b():\n    return 2\n")
    st = g.refresh()
    assert (st.parsed, st.skipped) == (1, 3)
    assert _paths(g, "pkg.core.helper") == ["pkg/a.py", "pkg/core.py"]
    g.close()


def test_touch_without_change_is_not_reparsed(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    g = Graph.open(tmp_path)
    p = tmp_path / "pkg/a.py"
    st0 = p.stat()
    os.utime(p, ns=(st0.st_atime_ns, st0.st_mtime_ns + 5_000_000_000))
    st = g.refresh()
    assert st.parsed == 0 and st.skipped == 4  # hash unchanged: only the stat is updated
    assert g.refresh().skipped == 4
    g.close()


def test_same_size_edit_is_compared_by_content_and_reparsed(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    g = Graph.open(tmp_path)
    p = tmp_path / "pkg/core.py"
    before = p.read_text()
    p.write_text(before.replace("helper", "helpor"))  # same size, new content
    st0 = p.stat()
    os.utime(p, ns=(st0.st_atime_ns, st0.st_mtime_ns + 5_000_000_000))
    st = g.refresh()
    assert (st.parsed, st.skipped, st.removed) == (1, 3, 0)
    assert [s.qualname for s in g.find_symbol("helpor")] == ["pkg.core.helpor"]
    assert g.find_symbol("pkg.core.helper") == []
    g.close()


def test_phases_are_timed(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    with Graph.open(tmp_path, workers=1) as g:
        assert {"walk", "read", "parse", "query", "extract", "encode", "write", "index-build"} <= set(g.stats.phases)
        assert all(v >= 0 for v in g.stats.phases.values())
        assert g.stats.phases["parse"] > 0
    with Graph.open(tmp_path, workers=1) as g:  # nothing changed: nothing parsed, no index built
        assert "parse" not in g.stats.phases and "index-build" not in g.stats.phases


def test_delete_removes_the_file_facts(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    g = Graph.open(tmp_path)
    (tmp_path / "pkg/a.py").unlink()
    st = g.refresh()
    assert st.removed == 1 and st.parsed == 0
    assert _paths(g, "pkg.core.helper") == ["pkg/b.py", "pkg/core.py"]
    assert g.find_symbol("use_a") == []
    g.close()


def test_rename_of_a_file_moves_its_symbols(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    g = Graph.open(tmp_path)
    (tmp_path / "pkg/a.py").rename(tmp_path / "pkg/renamed.py")
    st = g.refresh()
    assert (st.parsed, st.removed) == (1, 1)
    assert [s.qualname for s in g.find_symbol("use_a")] == ["pkg.renamed.use_a"]
    assert _paths(g, "pkg.core.helper") == ["pkg/b.py", "pkg/core.py", "pkg/renamed.py"]
    g.close()


def test_syntax_error_file_is_indexed_and_listed(tmp_path: Path) -> None:
    write_project(tmp_path, FILES | {"pkg/broken.py": """
        from pkg.core import helper

        def fine():
            return helper()

        def broken(:
            return
    """})
    with Graph.open(tmp_path) as g:
        assert [p for p, _ in g.errors] == ["pkg/broken.py"]
        assert "line" in g.errors[0][1]
        assert "pkg/broken.py" in _paths(g, "pkg.core.helper")  # the part that parses is still used
        assert [s.qualname for s in g.find_symbol("fine")] == ["pkg.broken.fine"]


def test_undecodable_and_binary_files_do_not_crash(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    (tmp_path / "pkg/latin.py").write_bytes(b"x = '\xe9\xe9'\ndef helper2():\n    pass\n")
    (tmp_path / "pkg/nul.py").write_bytes(b"\x00\x01\x02" * 100)
    with Graph.open(tmp_path) as g:
        assert g.stats.parsed == 6
        assert [s.qualname for s in g.find_symbol("helper2")] == ["pkg.latin.helper2"]


def test_a_file_name_that_is_not_utf8_is_reported_not_a_crash(tmp_path: Path) -> None:
    """Such a name cannot be stored or imported: the index skips it and says so, and the rest is indexed."""
    write_project(tmp_path, {"pkg/__init__.py": "", "pkg/good.py": "def f():\n    return 1\n"})
    bad = os.path.join(os.fsencode(tmp_path / "pkg"), b"bad\xff.py")
    with open(bad, "wb") as handle:
        handle.write(b"def g():\n    return 2\n")
    g = Graph.open(tmp_path)
    try:
        assert [s.qualname for s in g.find_symbol("f")] == ["pkg.good.f"]
        why = "not indexed: the file name is not valid UTF-8 (rename it to index it)"
        assert g.errors == [("pkg/bad\udcff.py", why)]
    finally:
        g.close()


def test_src_layout_modules_are_named_without_src(tmp_path: Path) -> None:
    write_project(tmp_path, {"src/lib/__init__.py": "", "src/lib/m.py": "def f():\n    pass\n",
                             "tests/test_m.py": "from lib.m import f\n\ndef test_f():\n    f()\n"})
    with Graph.open(tmp_path) as g:
        assert g.symbol("lib.m.f").path == "src/lib/m.py"
        assert [(r.path, r.confidence) for r in g.references("lib.m.f")] == [
            ("src/lib/m.py", "confirmed"), ("tests/test_m.py", "confirmed"), ("tests/test_m.py", "confirmed")]


def test_hidden_and_vendored_directories_are_skipped(tmp_path: Path) -> None:
    write_project(tmp_path, FILES | {".venv/lib/x.py": "def hidden():\n    pass\n",
                                     "node_modules/m/index.js": "function vendored() {}\n"})
    with Graph.open(tmp_path) as g:
        assert g.stats.files == 4
        assert g.find_symbol("hidden") == [] and g.find_symbol("vendored") == []


def test_parallel_and_serial_indexes_agree(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"from pkg.core import helper\n\ndef f{i}():\n    return helper()\n" for i in range(200)}
    write_project(tmp_path / "a", FILES | files)
    write_project(tmp_path / "b", FILES | files)
    with Graph.open(tmp_path / "a", workers=2) as ga, Graph.open(tmp_path / "b", workers=1) as gb:
        assert ga.stats.parsed == gb.stats.parsed == 204
        assert ga.references("pkg.core.helper") == gb.references("pkg.core.helper")
        assert len(ga.references("pkg.core.helper")) == 1 + 2 * 2 + 2 * 200


def test_workers_that_cannot_start_fall_back_to_parsing_here(tmp_path: Path) -> None:
    # With a thread running, workers start by forkserver, which re-imports __main__: a script read from stdin has no
    # file to import, every worker dies, and the index must still be built (in the parent) instead of crashing.
    files = {f"pkg/m{i}.py": f"from pkg.core import helper\n\ndef f{i}():\n    return helper()\n" for i in range(200)}
    write_project(tmp_path, FILES | files)
    script = (
        "import sys, threading, time\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "from tomo.prism import Graph\n"
        f"g = Graph.open({str(tmp_path)!r}, workers=2)\n"
        "print(g.stats.parsed, len(g.references('pkg.core.helper')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["204", str(1 + 2 * 2 + 2 * 200)]


SCALE = """
import sys, resource
from tomo.prism import Graph
g = Graph.open(sys.argv[1])
refs = g.references("pkg.core.helper")
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(g.stats.parsed, len(refs), peak // 1024)
"""


def test_ten_thousand_files_index_within_memory(tmp_path: Path) -> None:
    root = tmp_path / "big"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("def helper():\n    return 1\n")
    for i in range(9_998):
        (pkg / f"m{i}.py").write_text(f"from pkg.core import helper\nV{i} = helper()\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    # a hard address-space cap: running out of memory fails the test instead of swapping
    limit = 2 * 1024**3

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = subprocess.run([sys.executable, "-c", SCALE, str(root)], capture_output=True, text=True, env=env,
                         preexec_fn=cap, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    parsed, nrefs, peak_mb = map(int, out.stdout.split())
    assert parsed == 10_000
    assert nrefs == 1 + 2 * 9_998
    assert peak_mb < 500


def test_a_corrupt_or_foreign_index_file_is_rebuilt(tmp_path: Path) -> None:
    write_project(tmp_path, FILES)
    (tmp_path / ".tomo").mkdir()
    (tmp_path / ".tomo" / "index.sqlite").write_bytes(b"this is not a database" * 100)
    with Graph.open(tmp_path) as g:
        assert g.stats.parsed == 4
        assert len(g.references("pkg.core.helper")) == 5
    assert not list((tmp_path / ".tomo").glob("*.building-*"))
