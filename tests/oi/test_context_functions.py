"""Function-level evidence of the context pack: names that match the task's words, frames whose lines drifted."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from oi.oi_support import copy_ctx_fixture, rank_in
from tomo.oi.context_functions import frame_defs, name_match, name_terms
from tomo.oi.context_pack import build


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_ctx_fixture(tmp_path)


def _flat(terms: Iterable[str]) -> dict[str, float]:
    return dict.fromkeys(terms, 1.0)


def test_name_terms_split_identifiers() -> None:
    assert name_terms("Cart.apply_discount") == ["cart", "applydiscount", "apply", "discount"]
    assert name_terms("LabelEncoder.__init__") == ["labelencoder", "label", "encoder", "init"]


def test_the_title_counts_twice_and_idf_weighs_the_words() -> None:
    names = ["Cart.total", "apply_discount"]
    # one word each: the one the title says wins
    assert name_match("Discount is lost\n\nThe total is recomputed.", names, _flat) == [1.0, 2.0]
    assert name_match("The total is wrong\n\nafter a discount", names, _flat) == [2.0, 1.0]
    # title only: the body's words count for nothing
    assert name_match("The total is wrong\n\nafter a discount", names, _flat, body=0.0, title=1.0) == [1.0, 0.0]
    # a common word (low idf) says less than a rare one
    idf = {"total": 0.1, "discount": 3.0}
    got = name_match("total and discount", names, lambda ts: {t: idf.get(t, 0.0) for t in ts})
    assert got[1] > got[0]


def test_nothing_to_match_gives_zeros_not_an_error(repo: Path) -> None:
    assert name_match("", ["Cart.total"], _flat) == [0.0]
    assert name_match("anything", [], _flat) == []
    assert name_match("   \n", ["__init__"], _flat) == [0.0]
    pack = build(repo, "")
    assert pack.symbols == [] or all("::" in s for s in pack.symbols)


def test_the_method_named_in_prose_outranks_the_body_that_repeats_the_words(repo: Path) -> None:
    # the words are those of reserve()'s comment; the name says receive()
    task = "After I receive goods the count goes below zero"
    assert rank_in(repo, task, fn_name=0.0).symbols[0] == "shop/inventory.py::Stock.reserve"
    assert rank_in(repo, task).symbols[0] == "shop/inventory.py::Stock.receive"


@dataclass(frozen=True)
class _D:
    name: str
    kind: str
    line: int
    end_line: int


def test_a_frame_goes_to_the_function_it_names_when_its_line_drifted() -> None:
    defs = [_D("Cart", "class", 4, 20), _D("add_item", "method", 11, 12), _D("total", "method", 14, 16)]
    assert frame_defs(defs, 12, "total") == [defs[2]]  # line 12 is add_item's now; the frame says total
    assert frame_defs(defs, 12, "total", by_name=False) == [defs[1]]
    assert frame_defs(defs, 12, "add_item") == [defs[1]]
    assert frame_defs(defs, 12, "missing") == [defs[1]]  # a name the file does not define: the line decides
    assert frame_defs(defs, 12) == [defs[1]]


def test_a_drifted_frame_ranks_the_named_method(repo: Path) -> None:
    task = """Checkout crashes:
Traceback (most recent call last):
  File "/srv/app/shop/cart.py", line 12, in total
    ...
TypeError: unsupported operand type(s)
"""
    # names and bodies switched off: the frame alone decides
    on = rank_in(repo, task, fn_name=0.0, fn_body=0.0)
    off = rank_in(repo, task, fn_name=0.0, fn_body=0.0, frame_names=False)
    assert on.symbols.index("shop/cart.py::Cart.total") < on.symbols.index("shop/cart.py::Cart.add_item")
    assert off.symbols.index("shop/cart.py::Cart.add_item") < off.symbols.index("shop/cart.py::Cart.total")
