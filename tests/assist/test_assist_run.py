"""assist.run against scripted models that misbehave: no escape hatch, handles only, the user's flags gate writes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from assist_helpers import RENAME, call, say, sources

from tomo.assist import AssistOptions, GraphOnlyRegistry, Session, instead_of, run
from tomo.assist.tools import graph_tools
from tomo.errors import ScriptExhausted
from tomo.events import ListSink, PayloadRendered, ToolRefused
from tomo.models.messages import Message
from tomo.models.scripted import ScriptedModel

FAIL = f'{sys.executable} -c "import sys; sys.exit(3)"'
PASS = f'{sys.executable} -c "pass"'


def seen(model: ScriptedModel) -> str:
    """Everything the model was sent, as one text: every message of its last request (the history only grows)."""
    last: list[Message] = model.sent[-1]
    return "\n".join(m.content + "".join(str(c.args) for c in m.tool_calls) for m in last)


def recording(session: Session, ops: list[str]):  # type: ignore[no-untyped-def]
    def invoke(tool: str, args: object):  # type: ignore[no-untyped-def]
        ops.append(tool)
        return session.invoke(tool, args)  # type: ignore[arg-type]

    return invoke


async def test_text_tools_are_refused_and_never_reach_a_handler(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("grep", pattern="total"), call("read_file", path="shop/lines.py"),
                           call("bash", command="cat shop/*.py"), call("search_code", query="total"),
                           call("find_symbol", query="OrderLine.total"), say("done")])
    ops: list[str] = []
    sink = ListSink()
    before = sources(shop)
    summary = await run("rename total", model, recording(session, ops), AssistOptions(root=shop), sink)
    assert ops == ["find_symbol"]  # nothing but the graph operation reached the dispatcher
    assert summary.refused == ["grep", "read_file", "bash", "search_code"]
    assert [e.tool for e in sink.of(ToolRefused)] == summary.refused
    tool_msgs = [m for m in model.sent[-1] if m.role == "tool"]
    assert "refused: there is no `grep` here" in tool_msgs[0].content
    assert "Use find_symbol to find definitions by name, then references" in tool_msgs[0].content
    assert "Use definition to see where a symbol lives" in tool_msgs[1].content
    assert "there is no shell here" in tool_msgs[2].content
    assert "Use find_symbol" in tool_msgs[3].content
    assert sources(shop) == before
    offered = {t.name for t in model.sent_tools[0]}
    assert offered == {"find_symbol", "definition", "references", "callers", "callees", "impact", "rename_plan",
                       "apply_plan"}


def test_the_registry_holds_no_text_tool() -> None:
    registry = GraphOnlyRegistry()
    for fn in graph_tools(lambda op, args: op):
        registry.register(fn)
    for name in ("grep", "read_file", "bash", "search", "open_file", "shell"):
        assert name not in registry
    assert instead_of("ripgrep_search").startswith("find_symbol")
    assert instead_of("str_replace_editor").startswith("rename_plan")
    assert instead_of("view_file").startswith("definition")


async def test_model_cannot_widen_apply_to_ambiguous_edits(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME),
                           call("apply_plan", handle="p1-t1", include_ambiguous=True), say("done")])
    summary = await run("rename", model, session.invoke, AssistOptions(root=shop, apply=True))
    # the extra key is not in the model's schema: the call is refused as invalid, nothing is written
    assert [a["include_ambiguous"] for a in summary.applies] == [False]  # the harness's fallback: confirmed only
    assert "include_ambiguous: not a parameter of this tool" in seen(model)
    assert "item.total()" in (shop / "shop/invoice.py").read_text()


async def test_without_apply_the_model_chooses_and_nothing_is_written(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME), call("apply_plan", handle="p1-t1"), say("done")])
    before = sources(shop)
    summary = await run("rename", model, session.invoke, AssistOptions(root=shop, verify=FAIL))
    assert sources(shop) == before
    assert summary.chosen == "p1-t1" and summary.written == [] and summary.verify is None
    assert "nothing was written: this run only shows the plan" in seen(model)
    assert any("was not written: this run does not write (pass --apply)" in n for n in summary.notes)
    assert any("verify" in n and "not run" in n for n in summary.notes)


async def test_with_apply_the_harness_applies_the_last_plan_the_model_left(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME), say("here is the plan")])
    summary = await run("rename", model, session.invoke, AssistOptions(root=shop, apply=True, verify=PASS))
    assert summary.written == ["shop/lines.py", "shop/orders.py", "shop/report.py", "tests/test_lines.py"]
    assert summary.verify is not None and summary.verify.passed
    assert any("the harness applied its last plan p1-t1" in n for n in summary.notes)


async def test_apply_ambiguous_writes_every_edit(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME), call("apply_plan", handle="p1-t1"), say("done")])
    options = AssistOptions(root=shop, apply_ambiguous=True, verify=PASS)
    summary = await run("rename", model, session.invoke, options)
    assert summary.applies[0]["edits_applied"] == 9 and summary.applies[0]["skipped"] == []
    invoice = (shop / "shop/invoice.py").read_text()
    assert "item.subtotal()" in invoice and "anything with a subtotal" in invoice
    assert "9 edits written to 5 files; nothing left unapplied" in seen(model)


async def test_failing_verify_rolls_every_apply_back_byte_for_byte(session: Session, shop: Path) -> None:
    before = sources(shop)
    model = ScriptedModel([call("rename_plan", **RENAME), call("apply_plan", handle="p1-t1"),
                           call("rename_plan", symbol="shop.catalog.Product", new_name="Item"),
                           call("apply_plan", handle="p2-t1"), say("done")])
    options = AssistOptions(root=shop, apply_ambiguous=True, verify=FAIL)
    summary = await run("rename two things", model, session.invoke, options)
    assert len(summary.applies) == 2 and all(a["written"] for a in summary.applies)
    assert summary.verify is not None and summary.verify.exit_code == 3 and not summary.verify.passed
    assert sources(shop) == before
    assert summary.written == [] and "shop/catalog.py" in summary.rolled_back and not summary.ok


async def test_keep_leaves_the_edits_when_verify_fails(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME), call("apply_plan", handle="p1-t1"), say("done")])
    summary = await run("rename", model, session.invoke, AssistOptions(root=shop, apply=True, verify=FAIL, keep=True))
    assert summary.rolled_back == [] and "def subtotal" in (shop / "shop/lines.py").read_text()
    assert any("kept because --keep" in n for n in summary.notes)


async def test_a_plan_made_stale_by_another_apply_is_refused_in_the_run(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME),
                           call("rename_plan", symbol="shop.orders.Order.line_total", new_name="line_sum"),
                           call("apply_plan", handle="p2-t1"), call("apply_plan", handle="p1-t1"), say("done")])
    summary = await run("two renames", model, session.invoke, AssistOptions(root=shop, apply=True))
    assert "plan p1-t1 is stale: shop/orders.py changed since it was made; nothing was written" in seen(model)
    assert [a["plan"] for a in summary.applies] == ["p2-t1"]
    assert summary.failed == [{"operation": "apply_plan", "args": {"handle": "p1-t1", "include_ambiguous": False},
                               "error": "plan p1-t1 is stale: shop/orders.py changed since it was made; nothing was "
                                        "written"}]
    assert "def subtotal" not in (shop / "shop/lines.py").read_text()


async def test_a_foreign_handle_is_refused_in_the_run(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("rename_plan", **RENAME), call("apply_plan", handle="p1-x7k2"), say("done")])
    summary = await run("rename", model, session.invoke, AssistOptions(root=shop, apply=True))
    assert "`p1-x7k2` belongs to another session (x7k2), not this one (t1)" in seen(model)
    # the model never applied; --apply makes the harness apply the model's own last plan instead
    assert summary.applies[0]["plan"] == "p1-t1"


async def test_payloads_go_to_the_sink_and_receipts_to_the_model(session: Session, shop: Path) -> None:
    model = ScriptedModel([call("references", symbol="shop.lines.OrderLine.total"), say("ok")])
    sink = ListSink()
    session.sink = sink
    await run("where is total used", model, session.invoke, AssistOptions(root=shop), sink)
    (payload,) = sink.of(PayloadRendered)
    assert len(payload.payload["references"]) == 8
    text = seen(model)
    for ref in payload.payload["references"]:
        assert f"{ref['path']}:{ref['line']}" not in text


async def test_a_model_that_fails_after_applying_still_goes_through_verify(session: Session, shop: Path) -> None:
    before = sources(shop)
    model = ScriptedModel([call("rename_plan", **RENAME), call("apply_plan", handle="p1-t1")])  # then it runs out
    summary = await run("rename", model, session.invoke, AssistOptions(root=shop, apply=True, verify=FAIL))
    assert summary.error is not None and "no reply left" in summary.error and not summary.ok
    assert summary.session == "t1" and summary.applies[0]["written"]
    assert summary.verify is not None and not summary.verify.passed
    assert sources(shop) == before  # rolled back


async def test_a_model_that_fails_before_any_operation_raises_with_its_hint(session: Session, shop: Path) -> None:
    with pytest.raises(ScriptExhausted) as err:
        await run("rename", ScriptedModel([]), session.invoke, AssistOptions(root=shop, apply=True))
    assert err.value.hint
