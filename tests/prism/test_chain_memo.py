"""What a query remembers of a receiver chain (``Book.objects.get()``: the head's value, then its attributes and
calls) must be what evaluating it again would give: a value cut short by the depth limit is never reused where
the evaluation starts shallower, and a value that met no limit is."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tomo.prism import Graph

MODELS = """
class Book:
    def title(self) -> str:
        return ""


class Manager:
    def get(self) -> Book:
        return Book()


class Shelf:
    objects = Manager()
"""


def test_a_chain_cut_short_by_the_depth_limit_is_not_reused_shallower(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    with Graph.open(tmp_path) as g:
        res = g._facts.fresh()
        fid = res.module_file("models")
        assert fid is not None
        deep = res.eval(fid, "models", "Shelf.objects.get()", 10**6, 12)  # the limit is met on the way
        assert deep is None
        assert res.eval(fid, "models", "Shelf.objects.get()", 10**6) == ("inst", "models.Book")
        # and computed shallow without meeting any, the value serves a deeper evaluation too
        fresh = g._facts.fresh()
        assert fresh.eval(fid, "models", "Shelf.objects.get()", 10**6, 1) == ("inst", "models.Book")
        assert fresh.eval(fid, "models", "Shelf.objects.get()", 10**6, 12) is None  # deeper: not reused
        assert fresh.eval(fid, "models", "Shelf.objects.get()", 10**6, 0) == ("inst", "models.Book")
