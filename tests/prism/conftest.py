"""Golden-test helpers: small projects written into tmp_path, with the expected references annotated inline.

A line that refers to the target symbol ends with ``# refs: A, B`` listing, left to right, each occurrence of the
symbol's name on that line as ``confirmed``, ``def`` (the definition, confirmed) or ``ambiguous(reason words)``.
Every other line must have no reference at all; so a binding prism must *not* claim is simply left unmarked.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tomo.prism import Graph, Reference

_MARK = re.compile(r"#\s*refs:\s*(.+)$")


def write_project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def expected_refs(root: Path, files: dict[str, str]) -> dict[tuple[str, int], list[tuple[str, str]]]:
    out: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for rel in files:
        for i, line in enumerate((root / rel).read_text().splitlines(), 1):
            m = _MARK.search(line)
            if not m:
                continue
            items = []
            for tok in re.findall(r"\w+(?:\([^)]*\))?", m.group(1)):
                if tok == "def":
                    items.append(("definition", ""))
                elif tok.startswith("ambiguous"):
                    items.append(("ambiguous", tok[10:-1] if "(" in tok else ""))
                else:
                    assert tok == "confirmed", f"bad marker {tok!r} in {rel}:{i}"
                    items.append(("confirmed", ""))
            out[(rel, i)] = items
    return out


def check_golden(root: Path, files: dict[str, str], symbol: str) -> list[Reference]:
    """Index the project, query ``symbol`` and compare line by line with the ``# refs:`` annotations."""
    write_project(root, files)
    with Graph.open(root) as g:
        refs = g.references(symbol)
    want = expected_refs(root, files)
    got: dict[tuple[str, int], list[Reference]] = {}
    for r in refs:
        got.setdefault((r.path, r.line), []).append(r)
    problems = []
    for key in sorted(set(want) | set(got)):
        w = want.get(key, [])
        g_ = sorted(got.get(key, []), key=lambda r: r.col)
        actual = [("definition" if r.kind == "definition" and r.confidence == "confirmed" else r.confidence, r.reason)
                  for r in g_]
        ok = len(w) == len(actual) and all(
            a[0] == e[0] and e[1] in a[1] for e, a in zip(w, actual, strict=True))
        if not ok:
            problems.append(f"{key[0]}:{key[1]}: expected {w}, got {actual}")
    assert not problems, "\n".join(problems)
    return refs


@pytest.fixture
def golden(tmp_path: Path):  # type: ignore[no-untyped-def]
    def run(files: dict[str, str], symbol: str) -> list[Reference]:
        return check_golden(tmp_path, files, symbol)

    return run
