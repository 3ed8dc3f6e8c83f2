"""The receiver and value texts the resolver evaluates: which are a chain of names, calls and subscripts."""

from __future__ import annotations

import pytest

from tomo.prism.resolve.text import _parse


@pytest.mark.parametrize(("text", "ops"), [
    ("a", (("name", "a"),)),
    ("a.b(x).c[0]", (("name", "a"), ("attr", "b"), ("call", ""), ("attr", "c"), ("sub", ""))),
    ("Book.objects.filter(a=(1, [2]), b={3: 'x'})", (("name", "Book"), ("attr", "objects"), ("attr", "filter"),
                                                     ("call", ""))),
    ("b.add_eq() .add_order()", (("name", "b"), ("attr", "add_eq"), ("call", ""), ("attr", "add_order"),
                                 ("call", ""))),
    ("été.ñ_1", (("name", "été"), ("attr", "ñ_1"))),  # names are Unicode words
    ("a. b", (("name", "a"), ("attr", "b"))),
])
def test_a_chain_is_split_into_its_steps(text: str, ops: tuple[tuple[str, str], ...]) -> None:
    assert _parse(text) == ops


@pytest.mark.parametrize("text", [
    "", " a", "1a", "²a", "a.", "a..b", "a(", "a(]", "a[)", "a(b))", "a + b", "(a).b", "a(b)c", "a-b", "f'{a}'",
    "f(x=')')",
])
def test_anything_else_is_no_chain(text: str) -> None:
    """Not a chain: a leading digit (any Unicode digit), an operator, a bracket that does not close as it opened
    (brackets are counted inside strings too: a string is not read, and such a text is left unknown)."""
    assert _parse(text) == ()
