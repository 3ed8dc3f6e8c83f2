"""The dispatcher: receipts and payloads, handles that belong to one session, stale plans, undo byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from assist_helpers import RENAME, sources

from tomo.assist import HandleRefused, Session
from tomo.errors import TomoError
from tomo.events import ListSink, PayloadRendered
from tomo.prism import Graph


def test_plan_receipt_is_short_and_payload_has_every_edit(session: Session, sink: ListSink) -> None:
    result = session.invoke("rename_plan", RENAME)
    assert result.handle == "p1-t1"
    assert result.receipt == ("plan p1-t1: rename shop.lines.OrderLine.total to subtotal: 7 confirmed edits in 4 files,"
                              " 2 ambiguous (1 docs, 1 untyped receiver `item`), 0 conflicts")
    edits = result.payload["edits"]
    assert len(edits) == 9 and {e["path"] for e in edits} >= {"tests/test_lines.py", "shop/report.py"}
    (event,) = sink.of(PayloadRendered)
    assert event.handle == "p1-t1" and event.payload is result.payload


def test_queries_number_handles_per_kind(session: Session) -> None:
    assert session.invoke("find_symbol", {"query": "total"}).handle == "s1-t1"
    refs = session.invoke("references", {"symbol": "shop.lines.OrderLine.total"})
    assert refs.handle == "r1-t1"
    assert refs.receipt.startswith("refs r1-t1: 8 references to shop.lines.OrderLine.total in 5 files, 1 ambiguous")
    assert session.invoke("callers", {"symbol": "shop.lines.OrderLine.total"}).receipt.startswith("callers c1-t1: ")
    assert "shop.orders.Order.line_total" in session.invoke("callers", {"symbol": "OrderLine.total"}).receipt
    assert session.invoke("definition", {"symbol": "OrderLine.total"}).receipt == \
        "definition d1-t1: shop.lines.OrderLine.total is a method at shop/lines.py:13"
    impact = session.invoke("impact", {"symbol": "shop.lines.OrderLine.total", "depth": 2})
    assert impact.handle == "i1-t1" and any(i["is_test"] for i in impact.payload["items"])
    assert session.invoke("find_symbol", {"query": "Order"}).handle == "s2-t1"


def test_apply_by_handle_writes_confirmed_edits_only(session: Session, shop: Path) -> None:
    plan = session.invoke("rename_plan", RENAME)
    applied = session.invoke("apply_plan", {"handle": plan.handle})
    assert applied.receipt.startswith("applied a1-t1: plan p1-t1: 7 edits written to 4 files; 2 ambiguous left")
    assert "def subtotal(self)" in (shop / "shop/lines.py").read_text()
    assert "item.total()" in (shop / "shop/invoice.py").read_text()  # the unproven one is left alone
    assert [s["reason"] for s in applied.payload["skipped"]] == ["docs", "untyped receiver `item`"]


def test_bare_handle_resolves_in_its_own_session(session: Session) -> None:
    session.invoke("rename_plan", RENAME)
    assert session.invoke("apply_plan", {"handle": "p1"}).payload["plan"] == "p1-t1"


def test_foreign_handle_is_refused_with_both_sessions_named(shop: Path, session: Session) -> None:
    session.invoke("rename_plan", RENAME)
    other = Session(Graph.open(shop), session_id="zz9")
    try:
        other.invoke("rename_plan", RENAME)  # the other session has a p1 of its own
        before = sources(shop)
        with pytest.raises(HandleRefused, match=r"`p1-t1` belongs to another session \(t1\), not this one \(zz9\)"):
            other.invoke("apply_plan", {"handle": "p1-t1"})
        assert sources(shop) == before
    finally:
        other.close()


def test_stale_plan_is_refused_when_a_file_changed(session: Session, shop: Path) -> None:
    plan = session.invoke("rename_plan", RENAME)
    path = shop / "shop/report.py"
    path.write_text(path.read_text() + "\n# edited by hand\n")
    before = sources(shop)
    with pytest.raises(HandleRefused, match=r"plan p1-t1 is stale: shop/report.py changed since it was made"):
        session.invoke("apply_plan", {"handle": plan.handle})
    assert sources(shop) == before


def test_wrong_kind_unknown_and_reused_handles(session: Session) -> None:
    refs = session.invoke("references", {"symbol": "shop.lines.OrderLine.total"})
    with pytest.raises(HandleRefused, match="is a references result, not a rename_plan result"):
        session.invoke("apply_plan", {"handle": refs.handle})
    with pytest.raises(HandleRefused, match="there is no handle `p7` in this session"):
        session.invoke("apply_plan", {"handle": "p7"})
    with pytest.raises(HandleRefused, match="is not a handle"):
        session.invoke("apply_plan", {"handle": "the plan please"})
    session.invoke("rename_plan", RENAME)
    session.invoke("apply_plan", {"handle": "p1"})
    with pytest.raises(HandleRefused, match=r"plan p1-t1 was already applied \(as a1-t1\)"):
        session.invoke("apply_plan", {"handle": "p1"})


def test_plan_with_conflicts_is_never_applied(session: Session, shop: Path) -> None:
    plan = session.invoke("rename_plan", {"symbol": "shop.lines.OrderLine.total", "new_name": "quantity"})
    assert re.search(r"\d+ conflicts?: `quantity` already exists in shop\.lines\.OrderLine", plan.receipt)
    before = sources(shop)
    with pytest.raises(HandleRefused, match=r"has \d+ conflicts? \(`quantity` already exists"):
        session.invoke("apply_plan", {"handle": plan.handle})
    assert sources(shop) == before


def test_dry_run_chooses_without_writing(session: Session, shop: Path) -> None:
    before = sources(shop)
    session.invoke("rename_plan", RENAME)
    chosen = session.invoke("apply_plan", {"handle": "p1", "dry_run": True})
    assert chosen.payload["written"] is False and "nothing was written" in chosen.receipt
    assert sources(shop) == before
    with pytest.raises(HandleRefused, match="nothing to undo"):
        session.invoke("undo_apply", {"handle": chosen.handle})


def test_undo_restores_bytes_and_the_plan_can_apply_again(session: Session, shop: Path) -> None:
    before = sources(shop)
    session.invoke("rename_plan", RENAME)
    applied = session.invoke("apply_plan", {"handle": "p1", "include_ambiguous": True})
    assert applied.payload["edits_applied"] == 9 and sources(shop) != before
    undone = session.invoke("undo_apply", {"handle": applied.handle})
    assert undone.receipt.startswith("undone u1-t1: a1-t1 rolled back; 5 files restored")
    assert sources(shop) == before
    assert session.invoke("apply_plan", {"handle": "p1"}).payload["edits_applied"] == 7


def test_undo_refuses_files_edited_after_the_apply_unless_forced(session: Session, shop: Path) -> None:
    before = sources(shop)
    session.invoke("rename_plan", RENAME)
    session.invoke("apply_plan", {"handle": "p1"})
    (shop / "shop/lines.py").write_text("# rewritten\n")
    with pytest.raises(HandleRefused, match=r"shop/lines\.py changed after a1-t1 was applied"):
        session.invoke("undo_apply", {"handle": "a1"})
    session.invoke("undo_apply", {"handle": "a1", "force": True})
    assert sources(shop) == before


def test_bad_operation_and_arguments_say_what_to_do(session: Session) -> None:
    with pytest.raises(TomoError, match="no graph operation named 'grep'") as err:
        session.invoke("grep", {"pattern": "total"})
    assert "rename_plan" in err.value.hint
    with pytest.raises(TomoError, match="bad arguments for rename_plan") as err:
        session.invoke("rename_plan", {"symbol": "x"})
    assert "new_name" in err.value.hint
    with pytest.raises(TomoError, match=r"no symbol named `OrderLine\.totl`"):
        session.invoke("references", {"symbol": "OrderLine.totl"})


def test_mcp_answers_carry_the_payload_cut_to_max_rows(tmp_path: Path) -> None:
    from assist_helpers import make_fanout

    from tomo.mcp_server import answer_text

    make_fanout(tmp_path, files=10, calls_per_file=20)
    session = Session(Graph.open(tmp_path), session_id="m1")
    try:
        text = answer_text(session.invoke("rename_plan", {"symbol": "fan.core.compute", "new_name": "calc"}), 50)
    finally:
        session.close()
    receipt, note, payload = text.split("\n", 2)
    assert receipt.startswith("plan p1-m1: rename fan.core.compute to calc: 211 confirmed edits in 11 files")
    assert note == ("[edits: showing 50 of 211. The handle p1-m1 stands for all of them: "
                    "apply_plan applies the whole plan.]")
    assert len(json.loads(payload)["edits"]) == 50


def test_a_refreshing_session_sees_edits_made_between_calls(shop: Path) -> None:
    live = Session(Graph.open(shop), session_id="m2", refresh=True)
    try:
        assert live.invoke("references", {"symbol": "shop.lines.OrderLine.total"}).payload["confirmed"] == 7
        path = shop / "shop/report.py"
        path.write_text(path.read_text() + "\n\ndef again(line: OrderLine) -> Decimal:\n    return line.total()\n")
        assert live.invoke("references", {"symbol": "shop.lines.OrderLine.total"}).payload["confirmed"] == 8
    finally:
        live.close()
