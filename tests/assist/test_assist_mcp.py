"""`tomo mcp` with a real MCP client over stdio (the official SDK): list the tools, plan, apply by handle, refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from assist_helpers import RENAME, sources
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

SRC = Path(__file__).resolve().parents[2] / "src"


def _text(result: object) -> str:
    content = result.content  # type: ignore[attr-defined]
    assert isinstance(content[0], TextContent)
    return content[0].text


async def test_an_mcp_client_lists_the_graph_tools_and_renames_by_handle(shop: Path) -> None:
    before = sources(shop)
    params = StdioServerParameters(command=sys.executable, args=["-m", "tomo", "mcp", "--root", str(shop)],
                                   env={"PYTHONPATH": str(SRC)})
    async with Client(params, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        assert names == ["find_symbol", "definition", "references", "callers", "callees", "impact", "rename_plan",
                         "apply_plan", "undo_apply"]
        apply_schema = next(t for t in listed.tools if t.name == "apply_plan").input_schema
        assert set(apply_schema["properties"]) == {"handle", "include_ambiguous"}

        refs = await client.call_tool("references", {"symbol": "shop.lines.OrderLine.total"})
        receipt, payload = _text(refs).split("\n", 1)
        assert not refs.is_error and receipt.startswith("refs r1-")
        assert {r["path"] for r in json.loads(payload)["references"]} >= {"shop/report.py", "tests/test_lines.py"}

        plan = await client.call_tool("rename_plan", RENAME)
        handle = _text(plan).split(":", 1)[0].removeprefix("plan ")
        bad = await client.call_tool("apply_plan", {"handle": "p1-zzzz"})
        assert bad.is_error and "belongs to another session (zzzz)" in _text(bad)
        assert sources(shop) == before

        applied = await client.call_tool("apply_plan", {"handle": handle})
        assert not applied.is_error and "7 edits written to 4 files" in _text(applied)
        assert "def subtotal(self)" in (shop / "shop/lines.py").read_text()

        undo = await client.call_tool("undo_apply", {"handle": _text(applied).split(":", 1)[0].split()[-1]})
        assert not undo.is_error and sources(shop) == before
