"""Which scope an occurrence is in: the extractor finds it by position (segments of the file), not by walking up."""

from __future__ import annotations

from bisect import bisect_right

from tomo.prism import pyextract

SOURCE = b'''import os
limit = 3

def outer(x=os.sep, limit=limit):
    class Inner:
        def m(self):
            return alpha.one
        field = beta
    value = gamma(x, limit)
    return value


def later():
    return delta

epsilon = later
'''


def _scopes_of(name: str) -> list[str]:
    facts = pyextract.extract(SOURCE, "pkg.mod", False, "pkg/mod.py")
    names = facts["info"]["scopes"]
    return [names[occ[2]] for occ in facts["refs"][name]]


def test_an_occurrence_is_in_its_innermost_scope() -> None:
    assert _scopes_of("alpha") == ["pkg.mod.outer.Inner.m"]
    assert _scopes_of("one") == ["pkg.mod.outer.Inner.m"]  # an attribute name: same scope as its receiver


def test_after_a_nested_scope_ends_the_enclosing_one_applies_again() -> None:
    assert _scopes_of("beta") == ["pkg.mod.outer.Inner"]  # after m, still in Inner
    assert _scopes_of("gamma") == ["pkg.mod.outer"]  # after Inner, back in outer
    assert _scopes_of("delta") == ["pkg.mod.later"]  # a sibling function after outer
    assert sorted(_scopes_of("later")) == ["pkg.mod", "pkg.mod"]  # its def name and the module-level use


def test_a_parameter_default_reads_the_enclosing_scope() -> None:
    # the module's `limit = 3`, then `limit=limit` in outer's header (the default is the module's limit); the use
    # in outer's body is its parameter, a local: no occurrence
    assert _scopes_of("limit") == ["pkg.mod", "pkg.mod"]
    assert sorted(_scopes_of("os")) == ["pkg.mod", "pkg.mod.outer"]  # the import; `os.sep`, read in outer


def test_cut_gives_the_innermost_span_at_every_byte() -> None:
    spans = [(0, 10), (2, 5), (5, 8), (6, 7), (12, 20)]
    starts, owner = pyextract._cut(spans)

    def at(byte: int) -> int:
        return owner[bisect_right(starts, byte) - 1]

    expected = {0: 1, 1: 1, 2: 2, 4: 2, 5: 3, 6: 4, 7: 3, 8: 1, 9: 1, 10: 0, 11: 0, 12: 5, 19: 5, 20: 0, 99: 0}
    assert {b: at(b) for b in expected} == expected
