"""What the user sees of a payload: every row for a small one, per-file counts and every ambiguous row for a big one."""

from __future__ import annotations

from pathlib import Path

from assist_helpers import make_fanout
from rich.console import Console

from tomo.assist import Session
from tomo.cli.assist_render import AssistSink
from tomo.events import ToolCalled
from tomo.prism import Graph


def _render(root: Path, symbol: str, new: str) -> str:
    console = Console(record=True, width=160)
    sink = AssistSink(console)
    session = Session(Graph.open(root), sink=sink, session_id="v1")
    try:
        result = session.invoke("rename_plan", {"symbol": symbol, "new_name": new})
    finally:
        session.close()
    sink.emit(ToolCalled("assist", "rename_plan", {"symbol": symbol}, True, result.receipt))
    sink.close()
    return console.export_text()


def test_small_plan_is_drawn_row_by_row_after_the_receipt(shop: Path) -> None:
    text = _render(shop, "shop.lines.OrderLine.total", "subtotal")
    receipt_at = text.index("model read: plan p1-v1")
    assert receipt_at < text.index("payload of p1-v1, for you only") < text.index("tests/test_lines.py:12:22")
    assert "untyped receiver `item`" in text and "7 confirmed, 2 ambiguous edits in 5 files" in text


def test_big_plan_is_drawn_per_file(tmp_path: Path) -> None:
    make_fanout(tmp_path, files=45, calls_per_file=20)
    text = _render(tmp_path, "fan.core.compute", "calc")
    assert "946 rows, per file" in text
    assert "fan/mod_000.py" in text and "fan/mod_044.py" not in text  # 40 files drawn, then a count
    assert "… and 6 more files (--json lists every row)" in text
    assert "fan/mod_000.py:6:" not in text  # no single edit row: there is no ambiguous one to show
