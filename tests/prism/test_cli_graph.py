"""`tomo graph ...` end to end, in a subprocess against this checkout (the run_tomo fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import write_project
from .test_rename import PROJECT


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_project(tmp_path / "repo", PROJECT | {"src/shop/broken.py": "def oops(:\n"})


def test_index_reports_what_it_did(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    out = run_tomo("graph", "index", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    assert "6 parsed" in out.stdout and "src/shop/broken.py" in out.stdout
    out = run_tomo("graph", "index", "--json", cwd=repo)
    data = json.loads(out.stdout)
    assert (data["parsed"], data["skipped"], data["removed"]) == (0, 6, 0)
    assert [e["path"] for e in data["errors"]] == ["src/shop/broken.py"]


def test_index_verbose_prints_each_phase(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    out = run_tomo("graph", "index", "--verbose", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    lines = {ln.split()[0] for ln in out.stdout.splitlines() if ln.strip()}
    assert {"walk", "parse", "query", "extract", "write", "index-build"} <= lines
    out = run_tomo("graph", "index", "--verbose", "--json", "--root", str(repo))
    data = json.loads(out.stdout)
    assert data["parsed"] == 0 and "parse" not in data["phases"] and data["phases"]["walk"] >= 0


def test_refs_json_rows_have_location_and_confidence(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    out = run_tomo("graph", "refs", "Cart.add_item", "--json", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert all({"path", "line", "col", "confidence", "reason", "kind"} <= set(r) for r in rows)
    assert sum(r["confidence"] == "confirmed" for r in rows) == 3
    assert {r["reason"] for r in rows if r["confidence"] == "ambiguous"} == {"getattr string",
                                                                            "untyped receiver `other`"}
    table = run_tomo("graph", "refs", "Cart.add_item", "--root", str(repo))
    assert "3 confirmed, 2 ambiguous" in table.stdout


def test_queries_symbols_def_callers_callees_impact(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    def q(*args: str) -> object:
        out = run_tomo("graph", *args, "--json", "--root", str(repo))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert [s["qualname"] for s in q("symbols", "add_item")] == ["shop.cart.Cart.add_item"]  # type: ignore[union-attr,index]
    assert q("def", "src/shop/cart.py:5:8")["qualname"] == "shop.cart.Cart.add_item"  # type: ignore[index]
    assert [c["caller"] for c in q("callers", "Cart.add_item")] == [  # type: ignore[union-attr,index]
        "shop.cart.quick", "tests.test_cart.test_add"]
    assert {"add_item", "Cart"} <= {c["name"] for c in q("callees", "shop.cart.quick")}  # type: ignore[union-attr,index]
    impact = q("impact", "Cart.add_item")
    assert {(i["symbol"], i["is_test"]) for i in impact} >= {("tests.test_cart.test_add", True)}  # type: ignore[union-attr,index]


def test_errors_are_messages_with_hints(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    out = run_tomo("graph", "refs", "Cart.add_itm", "--root", str(repo))
    assert out.returncode == 2
    assert "no symbol named `Cart.add_itm`" in out.stderr and "shop.cart.Cart.add_item" in out.stderr
    assert "Traceback" not in out.stderr
    out = run_tomo("graph", "index", "--root", str(repo / "missing"))
    assert out.returncode == 2 and "missing does not exist" in out.stderr


def test_rename_plan_then_apply_with_verify(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    plan = json.loads(run_tomo("graph", "rename-plan", "Cart.add_item", "add", "--json", "--root", str(repo)).stdout)
    assert (plan["confirmed"], plan["ambiguous"]) == (3, 4)
    assert all({"path", "line", "col", "confidence"} <= set(e) for e in plan["edits"])
    dry = run_tomo("graph", "rename", "Cart.add_item", "add", "--root", str(repo))
    assert "pass --apply" in dry.stdout and "def add_item" in (repo / "src/shop/cart.py").read_text()
    out = run_tomo("graph", "rename", "Cart.add_item", "add", "--apply", "--json", "--root", str(repo),
                   "--verify", "python -m pytest -q -p no:cacheprovider tests")
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert result["edits_applied"] == 3 and result["verify"]["passed"] is True
    assert "def add(self" in (repo / "src/shop/cart.py").read_text()


def test_rename_reports_a_failing_verify(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    out = run_tomo("graph", "rename", "Cart.add_item", "add", "--apply", "--ambiguous", "--root", str(repo),
                   "--verify", "python -c 'import sys; print(\"boom\"); sys.exit(3)'")
    assert out.returncode == 1
    assert "verify FAILED" in out.stdout and "exited 3" in out.stdout and "boom" in out.stdout


def test_rename_refuses_a_conflict(run_tomo, repo: Path) -> None:  # type: ignore[no-untyped-def]
    out = run_tomo("graph", "rename", "Cart.add_item", "total", "--apply", "--root", str(repo))
    assert out.returncode == 2 and "collides" in out.stderr
    assert "def add_item" in (repo / "src/shop/cart.py").read_text()
