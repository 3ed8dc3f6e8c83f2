"""Attribute receivers and CALL flags, which the extractor reads from the source text where it can and from the
nodes where the text cannot say (blanks, comments or line breaks before the dot, long receivers, syntax errors)."""

from __future__ import annotations

from tomo.prism import pyextract

SOURCE = b'''
import sys

a.b
a . b
(a
 .b)
(f(1,
   2).b)
x = (sys.platform.b())
print("x", *sys.version.b())
(a.b)(1)
caf\xc3\xa9.b
''' + b"g(" + b"1, " * 80 + b").b\n"


def _occurrences(src: bytes, name: str) -> list[tuple[int, str | None, int]]:
    refs = pyextract.extract(src, "m", False, "m.py")["refs"]
    return [(occ[0], occ[3], occ[4]) for occ in refs[name]]


def test_receivers_read_from_text_and_from_nodes() -> None:
    assert _occurrences(SOURCE, "b") == [
        (4, "a", 0),
        (5, "a", 0),  # blanks around the dot
        (7, "a", 0),  # a line break before the dot
        (9, "f(1, 2)", 0),  # a receiver on two lines is kept on one
        (10, "sys.platform", pyextract.CALL),
        (11, "sys.version", 0),  # the callee is `*sys.version.b` there (tree-sitter's parse): not a call of b
        (12, "a", 0),  # `(a.b)(1)`: the parenthesized callee is no call of b
        (13, "café", 0),
        (14, "g()", 0),  # too long to keep whole: a call keeps its callee
    ]


def test_receivers_in_a_file_with_syntax_errors() -> None:
    src = b"a.b\nc.d(\nx = = 1\ne .f\n"
    facts = pyextract.extract(src, "m", False, "m.py")
    assert facts["error"] is not None
    assert _occurrences(src, "b") == [(1, "a", 0)]
    assert [occ[3] for occ in facts["refs"]["f"]] == ["e"]
