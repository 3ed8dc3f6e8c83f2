"""Source parses only the piece of a file that holds the asked line: every answer must be the whole-file answer.

The sample puts the chunk boundaries where they matter: decorators spread over lines above a definition,
module-level statements (a loop, a multi-line call) between definitions, a nested function, class-level statements
between methods, methods inside an ``if``/``else`` of the class body (a cut there cannot parse alone), code after the
last definition. The spans come from prism's own extractor, as the index stores them.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from tomo.prism.pyextract import extract
from tomo.prism.pysource import Source, Span

SAMPLE = '''"""A module whose pieces matter."""
import pytest

PAIRS = [(1, "a"), (2, "b")]
for num, word in PAIRS:
    label = word.upper()


def helper(rows):
    total = 0
    for i, (key, val) in enumerate(rows):
        total += key
    def inner(xs):
        out = [y.strip() for y in xs]
        first, second = xs
        return out.copy().pop()
    return inner


CONFIG = dict(
    a=1,
)


@pytest.mark.parametrize(
    "value, expected",
    [(1, 2), (3, 4)],
)
def test_double(value, expected):
    got = value
    assert got * 2 == expected


class Builder:
    """Methods, class-level statements between them, decorators."""

    size = 3
    parts = []  # type: list[int]

    def __init__(self):
        self.parts = []

    name = "builder"

    @staticmethod
    def make(items):
        for a, b in items:
            c, d = b
        return (Builder()
                .add(1)
                .add(2))

    if FLAG:
        def mode(self):
            return 1
    else:
        def mode(self):
            return 2

    def add(self, n):
        result = n
        if n:
            result = n + 1
        return self.parts.append(result)


class Alt:
    if FLAG:
        def go(self):
            for p, q in self.pairs:
                return p
    else:
        def go(self):
            x, y = self.pairs
            return x.real
        def stop(self):
            for m, n in self.pairs:
                return n.imag


if __name__ == "__main__":
    for k, v in PAIRS:
        print(k.bit_length())


def chained(rows, n):
    qs = rows
    qs = qs.filter(n)
    first = (qs := qs.exclude(n)).first()
    total = 0
    [qs for qs in rows][0].x = qs.y
    total = (count := len(rows)) + 1
    for row in rows:
        qs = row
    return qs.all(), total, count, first


def test_views(app):
    class View:
        def __init__(self, app):
            self.app = app
    View(app)
    return [View(
        app)]
'''


def _spans(text: str) -> list[Span]:
    facts = extract(text.encode(), "sample", False, "sample.py")
    assert facts["error"] is None
    return [(d[3], d[5], d[2]) for d in facts["defs"] if d[2] in ("class", "function", "method")]


def _answers(src: Source, text: str) -> list[object]:
    """Every lookup Source offers, at every line, for every name of the file."""
    tree = ast.parse(text)
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {"self", "missing"})
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out: list[object] = []
    for line in range(1, len(text.splitlines()) + 1):
        out.append([ast.dump(n, include_attributes=True) for n in src._nodes_at(line)])
        out.append(src.type_comment(line))
        for name in names:
            out.append((src.origin(name, line), src.assigned(name, line)))
    for f in funcs:
        for name in names:
            out.append(src.parametrized(f.lineno, name))
            out.append(src.constructions(f.lineno, name))
            for line in range(f.lineno, (f.end_lineno or f.lineno) + 1):
                out.append(src.reaching(f.lineno, name, line))
    for a in ast.walk(tree):
        if isinstance(a, ast.Attribute) and a.end_lineno is not None and a.end_col_offset is not None:
            out.append(src.receiver(a.end_lineno, a.end_col_offset - len(a.attr), a.attr))
    return out


def test_pieces_answer_as_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    whole, pieces = Source(path), Source(path, _spans(SAMPLE))
    want = _answers(whole, SAMPLE)
    assert want == _answers(pieces, SAMPLE)
    # the answers are not all empty: the sample exercises each lookup
    assert pieces.origin("key", 11) == ("for", "enumerate(rows)", (1, 0))
    assert pieces.parametrized(29, "expected") == ["2", "4"]
    assert pieces.reaching(60, "result", 64) is None and pieces.reaching(9, "total", 12) is None
    assert pieces.reaching(29, "got", 31) == 30
    assert pieces.type_comment(38) == "list[int]"
    assert pieces.constructions(98, "View") == [(102, 8), (103, 16)] and pieces.constructions(98, "app") is None
    assert pieces.receiver(51, 17, "add") == "Builder().add(1)"
    assert whole.tree is not None
    # ... and none of them needed the whole file: each line's own piece parsed
    assert (-1, -1) not in pieces._trees and all(t is not None for k, t in pieces._trees.items() if k[1] < 0)
    assert pieces._piece(51)[0][1] >= 0  # a line of Builder.make: a method's piece, not the whole class
    # a line of the first method: the head of the class's piece (from after test_double to __init__'s end)
    key, tree = pieces._piece(41)
    assert key[1] == 0 and tree is not None and tree.body[-1].end_lineno == 41  # type: ignore[attr-defined]


def test_a_function_is_parsed_alone(tmp_path: Path) -> None:
    """Lines inside a function are read from that function parsed alone (a method under an ``if 1:`` line), not
    from its piece; a walrus binds where it stands, a comprehension's variable inside a target does not."""
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    src = Source(path, _spans(SAMPLE))
    assert src.reaching(86, "qs", 88) == 87 and src.reaching(86, "qs", 89) == 88
    assert src.reaching(86, "qs", 90) is None  # the walrus on the line before rebinds it
    assert src.reaching(86, "total", 95) == 92 and src.reaching(86, "count", 95) is None
    assert src.reaching(86, "qs", 91) is None and src.reaching(86, "qs", 95) is None  # a comprehension's; the loop's
    assert src.origin("b", 47) == ("for", "items", (1,))  # in Builder.make, a method
    assert src.receiver(51, 17, "add") == "Builder().add(1)"


def test_a_span_that_does_not_hold_its_function_is_not_parsed_alone(tmp_path: Path) -> None:
    """A span cut short (the index would have to disagree with Python about where the function ends) leaves code
    indented deeper after it: the function is not parsed alone but read from its piece, as before functions were."""
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    spans = [(line, 88 if line == 86 else end, kind) for line, end, kind in _spans(SAMPLE)]
    short = Source(path, spans)
    assert short.reaching(86, "qs", 88) == 87 and short._trees[(-2, 86)] is None
    assert short._nodes_at(88) and all(k[0] >= 0 for k in short._trees if short._trees[k] is not None)


def test_a_piece_that_cannot_parse_alone_falls_back(tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    spans = _spans(SAMPLE)
    src = Source(path, spans)
    # Alt's second `go` sits under `else:`: the cut at the first `go` leaves a piece starting with `else:`, which
    # does not parse alone, so its lines are read from Alt's whole piece
    key, tree = src._piece(74)
    assert key[1] == -1 and tree is not None and src._trees[(key[0], 1)] is None
    assert src.origin("y", 74) == ("unpack", "self.pairs", (1,))
    # a span that ends inside a statement (CONFIG's call) cuts pieces that cannot parse: the whole file answers
    bad = Source(path, [*spans, (20, 20, "function")])
    assert bad.origin("key", 11) == ("for", "enumerate(rows)", (1, 0))
    assert (-1, -1) not in bad._trees  # helper's piece is whole
    assert bad.assigned("CONFIG", 20) == "dict(a=1)"
    assert (-1, -1) in bad._trees and bad.tree is not None
    assert _answers(bad, SAMPLE) == _answers(Source(path), SAMPLE)


def test_spans_of_another_version_of_the_file_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    st = os.stat(path)
    stale = Source.load(path, _spans(SAMPLE), (st.st_mtime_ns + 1, st.st_size))
    assert not stale._starts and stale.origin("key", 11) == ("for", "enumerate(rows)", (1, 0))
    path.write_text(SAMPLE + "\n")
    st = os.stat(path)
    fresh = Source.load(path, _spans(SAMPLE), (st.st_mtime_ns, st.st_size))
    assert fresh._starts and fresh.origin("key", 11) == ("for", "enumerate(rows)", (1, 0))
