"""Rename plans and their atomic application: confirmed vs ambiguous edits, conflicts, stale files, a real suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tomo.errors import PrismError
from tomo.prism import Graph

from .conftest import write_project

PROJECT = {
    "src/shop/__init__.py": "from .cart import Cart\n",
    "src/shop/cart.py": """
        class Cart:
            def __init__(self):
                self.items = []

            def add_item(self, name: str, price: float) -> None:
                self.items.append((name, price))

            def total(self) -> float:
                return sum(p for _, p in self.items)


        def quick(name):
            c = Cart()
            c.add_item(name, 1.0)
            return c
    """,
    "src/shop/util.py": """
        def describe(cart, other):
            # add_item is documented here
            getattr(cart, "add_item")
            return other.add_item
    """,
    "tests/conftest.py": """
        import pytest
        from shop import Cart


        @pytest.fixture
        def cart():
            return Cart()
    """,
    "tests/test_cart.py": """
        from shop.cart import quick


        def test_add(cart):
            cart.add_item("a", 2.0)
            assert cart.total() == 2.0


        def test_quick():
            assert quick("x").total() == 1.0
    """,
    "README.md": "Call `Cart.add_item` to add an item.\n",
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n",
}


def _read(root: Path, rel: str) -> str:
    return (root / rel).read_text()


def test_plan_separates_confirmed_from_ambiguous(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("shop.cart.Cart.add_item", "add")
    confirmed = {(e.path, e.line) for e in plan.confirmed}
    assert confirmed == {("src/shop/cart.py", 5), ("src/shop/cart.py", 14), ("tests/test_cart.py", 5)}
    reasons = {(e.path, e.line): e.reason for e in plan.ambiguous}
    assert reasons[("src/shop/util.py", 3)] == "getattr string"
    assert reasons[("src/shop/util.py", 4)] == "untyped receiver `other`"
    assert reasons[("src/shop/util.py", 2)] == "docs"
    assert reasons[("README.md", 1)] == "docs"
    assert plan.conflicts == ()
    assert set(plan.file_hashes) == set(plan.files)


def test_apply_confirmed_only_then_the_suite_still_passes(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        applied = g.apply(g.rename_plan("shop.cart.Cart.add_item", "add"))
        assert applied.edits_applied == 3 and applied.edits_skipped == 4
        assert applied.files == ("src/shop/cart.py", "tests/test_cart.py")
        # the index followed the edit: the new name is found, the old one is gone
        assert len(g.references("shop.cart.Cart.add")) == 3
        assert g.find_symbol("shop.cart.Cart.add_item") == []
    assert "def add(self" in _read(tmp_path, "src/shop/cart.py")
    assert 'cart.add("a", 2.0)' in _read(tmp_path, "tests/test_cart.py")
    assert 'getattr(cart, "add_item")' in _read(tmp_path, "src/shop/util.py")  # ambiguous: left alone
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]
    assert "2 passed" in out.stdout


def test_apply_with_ambiguous_edits_everything(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        applied = g.apply(g.rename_plan("shop.cart.Cart.add_item", "add"), include_ambiguous=True)
    assert applied.edits_applied == 7 and applied.edits_skipped == 0
    assert 'getattr(cart, "add")' in _read(tmp_path, "src/shop/util.py")
    assert "Cart.add`" in _read(tmp_path, "README.md")


def test_stale_file_refuses_and_writes_nothing(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("shop.cart.Cart.add_item", "add")
        before = {p: _read(tmp_path, p) for p in plan.files}
        (tmp_path / "tests/test_cart.py").write_text(before["tests/test_cart.py"] + "\n# edited meanwhile\n")
        with pytest.raises(PrismError, match="changed since the plan"):
            g.apply(plan)
    assert _read(tmp_path, "src/shop/cart.py") == before["src/shop/cart.py"]  # all or nothing


def test_plan_that_no_longer_matches_is_refused(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("shop.cart.Cart.add_item", "add")
    from dataclasses import replace

    bad = replace(plan, edits=(*plan.edits[:-1], replace(plan.edits[-1], col=plan.edits[-1].col + 1)))
    with Graph.open(tmp_path) as g, pytest.raises(PrismError, match="does not hold"):
        g.apply(bad, include_ambiguous=True)
    assert "def add_item" in _read(tmp_path, "src/shop/cart.py")


def test_failure_midway_restores_the_files_already_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path, PROJECT)
    import tomo.prism.rename as rename_mod

    real_replace = rename_mod.os.replace
    calls = []

    def flaky_replace(src: str, dst: Path) -> None:  # the disk fills up on the second file
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("shop.cart.Cart.add_item", "add")
        before = {p: _read(tmp_path, p) for p in plan.files}
        monkeypatch.setattr(rename_mod.os, "replace", flaky_replace)
        with pytest.raises(PrismError, match="restored"):
            g.apply(plan)
    assert {p: _read(tmp_path, p) for p in plan.files} == before
    assert not list(tmp_path.rglob(".tomo-*.tmp"))


def test_conflicts_with_existing_names_are_reported(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("shop.cart.Cart.add_item", "total")
        assert [(c.path, c.line) for c in plan.conflicts] == [("src/shop/cart.py", 8)]
        plan = g.rename_plan("shop.cart.quick", "Cart")
        assert any("already" in c.reason for c in plan.conflicts)


def test_invalid_new_name_is_refused(tmp_path: Path) -> None:
    write_project(tmp_path, PROJECT)
    with Graph.open(tmp_path) as g:
        with pytest.raises(PrismError, match="not a valid identifier"):
            g.rename_plan("shop.cart.quick", "not-valid")
        with pytest.raises(PrismError, match="not a valid identifier"):
            g.rename_plan("shop.cart.quick", "class")
        with pytest.raises(PrismError, match="is a module"):
            g.rename_plan("shop.cart", "basket")


def test_aliased_uses_count_as_callers_but_are_not_edited(tmp_path: Path) -> None:
    write_project(tmp_path, {
        "lib/__init__.py": "",
        "lib/core.py": "def compute():\n    return 1\n",
        "lib/use.py": "from lib.core import compute as calc\n\n\ndef run():\n    return calc()\n",
    })
    with Graph.open(tmp_path) as g:
        assert [(c.symbol.qualname, c.reference.reason) for c in g.callers("lib.core.compute")] == [
            ("lib.use.run", "via import alias `calc`")]
        plan = g.rename_plan("lib.core.compute", "evaluate")
        assert [(e.path, e.line, e.col) for e in plan.edits] == [("lib/core.py", 1, 4), ("lib/use.py", 1, 21)]
        g.apply(plan)
    assert (tmp_path / "lib/use.py").read_text().startswith("from lib.core import evaluate as calc\n")
    assert "return calc()" in (tmp_path / "lib/use.py").read_text()


def test_form_feeds_and_crlf_keep_lines_and_bytes_intact(tmp_path: Path) -> None:
    text = "import os\r\n\x0c\r\ndef helper():\r\n    return os.sep\r\n\r\nx = helper()  # helper\r\n"
    (tmp_path / "m.py").write_bytes(text.encode())
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("m.helper", "assist")
        assert [(e.line, e.col, e.confidence) for e in plan.edits] == [
            (3, 4, "confirmed"), (6, 4, "confirmed"), (6, 16, "ambiguous")]
        assert g.references("m.helper")[1].text == "x = helper()  # helper"
        g.apply(plan)
    assert (tmp_path / "m.py").read_bytes() == text.replace("def helper", "def assist").replace(
        "x = helper()", "x = assist()").encode()


HIERARCHY = '''
class Base:
    def start(self):
        return "base"

    def run(self):
        return self.start()


class Turbo(Base):
    def start(self):
        return "turbo+" + super().start()


def main():
    t: Turbo = Turbo()
    b: Base = Base()
    print(t.run(), b.run(), t.start())


main()
'''


def test_overrides_are_offered_together_so_ambiguous_apply_keeps_behaviour(tmp_path: Path) -> None:
    (tmp_path / "h.py").write_text(HIERARCHY)
    before = subprocess.run([sys.executable, "h.py"], cwd=tmp_path, capture_output=True, text=True).stdout
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("h.Base.start", "begin")
        assert {(e.line, e.confidence) for e in plan.edits} == {
            (3, "confirmed"), (7, "confirmed"), (12, "confirmed"),  # def, self.start(), super().start()
            (11, "ambiguous"), (18, "ambiguous")}  # Turbo.start and a call bound to it
        assert all("overrides h.Base.start" in e.reason for e in plan.ambiguous)
        g.apply(plan, include_ambiguous=True)
    after = subprocess.run([sys.executable, "h.py"], cwd=tmp_path, capture_output=True, text=True)
    assert after.returncode == 0 and after.stdout == before == "turbo+base base turbo+base\n"
