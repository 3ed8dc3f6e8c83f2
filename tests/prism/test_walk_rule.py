"""What prism reads under a root: one rule for the index and for a rename (its documentation files included).

A binary file is not source whatever its name; what git ignores (nested .gitignore files, ``!`` negation, folder
patterns, anchored patterns, .git/info/exclude) is neither indexed nor edited; the vendored and build folders are
skipped by the index and by a rename alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tomo.prism import Graph
from tomo.prism.files import SKIP_DIRS, doc_files, walk

from .conftest import write_project

PROJECT = {
    "shop/__init__.py": "",
    "shop/lines.py": """
        class OrderLine:
            def total(self):
                return 1
    """,
    "shop/orders.py": """
        from shop.lines import OrderLine

        def order_total(line: OrderLine):
            return line.total()
    """,
    "README.md": "Call `total` on a line.\n",
}
# a copy of the same names, untyped: a rename would plan ambiguous edits (and docs mentions) in it if it were read
COPY = """
    class OrderLine:
        def total(self):
            return 2

    def order_total(line):
        return line.total()
"""


def plan_paths(root: Path) -> set[str]:
    with Graph.open(root) as g:
        plan = g.rename_plan("shop.lines.OrderLine.total", "subtotal")
    return {e.path for e in plan.edits}


def test_a_binary_file_named_py_has_no_symbols_references_or_edits(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    # source text, then a NUL byte inside the first 8 KiB: a blob with a .py name (a pickled cache, a renamed .pyc)
    (tmp_path / "shop" / "blob.py").write_bytes(b"def from_the_blob():\n    return line.total()\n# total\n"
                                                b"\x00\x01\x02\x03" + bytes(range(256)) * 4)
    with Graph.open(tmp_path) as g:
        assert g.find_symbol("from_the_blob") == []
        assert "shop/blob.py" not in {r.path for r in g.references("shop.lines.OrderLine.total")}
        assert dict(g.errors)["shop/blob.py"].startswith("not indexed: binary")
        plan = g.rename_plan("shop.lines.OrderLine.total", "subtotal")
    assert "shop/blob.py" not in {e.path for e in plan.edits}
    assert {"shop/lines.py", "shop/orders.py", "README.md"} <= {e.path for e in plan.edits}


def test_a_nul_byte_past_the_first_8_kib_is_still_source(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    (tmp_path / "shop" / "long.py").write_bytes(b"def late_nul():\n    pass\n" + b"#" * 9000 + b"\x00\n")
    with Graph.open(tmp_path) as g:
        assert [s.qualname for s in g.find_symbol("late_nul")] == ["shop.long.late_nul"]


def test_what_git_ignores_is_neither_indexed_nor_renamed(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT | {
        ".gitignore": "# generated code\ngenerated/\n*.gen.py\n!keep.gen.py\n/scratch.py\n",
        "generated/shop_copy.py": COPY, "generated/NOTES.md": "total\n",  # a folder pattern
        "shop/copy.gen.py": COPY,  # a glob
        "shop/keep.gen.py": "from shop.lines import OrderLine\n\ndef kept(line: OrderLine):\n    return line.total()\n",
        "scratch.py": COPY,  # anchored to the root: only this one
        "shop/scratch.py": "from shop.lines import OrderLine\n\ndef s(line: OrderLine):\n    return line.total()\n",
        "shop/sub/.gitignore": "local_*.py\n!local_keep.py\n",  # nested, with its own negation
        "shop/sub/local_mine.py": COPY, "shop/sub/local_keep.py": "x = 1\n",
        "shop/sub/deeper/generated/copy.py": COPY,  # `generated/` matches at any depth
        "shop/sub/deeper/.gitignore": "!local_again.py\n", "shop/sub/deeper/local_again.py": "y = 2\n",
        ".git/info/exclude": "private/\n", "private/copy.py": COPY,
    })
    indexed = {f.path for f in walk(str(tmp_path))}
    assert indexed == {"shop/__init__.py", "shop/lines.py", "shop/orders.py", "shop/keep.gen.py", "shop/scratch.py",
                       "shop/sub/local_keep.py", "shop/sub/deeper/local_again.py"}
    assert doc_files(str(tmp_path)) == ["README.md"]
    with Graph.open(tmp_path) as g:
        assert [s.path for s in g.find_symbol("OrderLine")] == ["shop/lines.py"]
    assert plan_paths(tmp_path) == {"shop/lines.py", "shop/orders.py", "shop/keep.gen.py", "shop/scratch.py",
                                    "README.md"}


@pytest.mark.parametrize("folder", [*sorted(SKIP_DIRS), "shop.egg-info"])
def test_a_skipped_folder_is_skipped_by_the_index_and_by_a_rename_alike(tmp_path: Path, folder: str) -> None:
    write_project(tmp_path, PROJECT | {f"{folder}/shop_copy.py": COPY, f"{folder}/README.md": "total\n",
                                       f"{folder}/CHANGES.rst": "OrderLine.total\n"})
    assert not any(f.path.startswith(folder + "/") for f in walk(str(tmp_path)))
    assert plan_paths(tmp_path) == {"shop/lines.py", "shop/orders.py", "README.md"}


# a Python project's usual .gitignore and the corners of git's pattern rules
LINES = ["__pycache__/", "*.py[cod]", "*$py.class", "build/", "*.egg-info/", ".env", "venv/", "/site", "docs/_build/",
         "!important.pyc", "**/logs", "a/**/b", "data/*.py", "\\#hash.py", "\\!bang.py", "trailing.py   ", "name?.py",
         "gen/", "!gen/keep/", "*.gen.py", "[abc]x.py", "deep/**", "# a comment", "", "/anchored/dir/"]
PATHS = [f"{d}{n}" for d in ("", "pkg/", "pkg/sub/", "docs/", "data/", "a/b/", "a/x/y/b/", "gen/", "gen/keep/",
                             "deep/", "logs/", "x/logs/", "anchored/dir/", "z/anchored/dir/")
         for n in ("m.py", "m.pyc", "important.pyc", "b", "b/", "logs", "logs/", "#hash.py", "!bang.py",
                   "trailing.py", "name1.py", "name12.py", "ax.py", "dx.py", "t.gen.py", "site", "site/", "gen/",
                   "__pycache__/", "x.egg-info/", "venv/", "_build/", "dir/", "keep/")]


def test_the_joined_patterns_answer_as_pathspec_does() -> None:
    """files.py asks pathspec only for a path that one of the lines' joined expressions matches; on every other path
    pathspec's answer must be "no line matches", so both answer the same everywhere."""
    from pathspec import GitIgnoreSpec

    from tomo.prism.files import _IgnoreFile

    ours = _IgnoreFile(LINES)
    theirs = GitIgnoreSpec.from_lines(LINES)
    for path in PATHS:
        assert ours.decides(path) == theirs.check_file(path).include, path
    assert sum(ours.decides(p) is True for p in PATHS) > 50 and any(ours.decides(p) is False for p in PATHS)
