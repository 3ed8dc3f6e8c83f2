"""``tomo mcp``: prism's graph operations over the Model Context Protocol (stdio), for Claude Code, Cursor or any
MCP client.

The server serves the same dispatcher as assist (:class:`tomo.assist.Session`, one session for the server's life),
with one deliberate difference: an MCP client is a direct user of the graph, so each answer carries the payload
(as JSON after the receipt line), not just the receipt. Long lists are cut at ``max_rows`` and the cut is said in
words; applying still takes the plan's handle, so a client never sends edits back whatever the plan's size.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from tomo import __version__
from tomo.assist.session import OpResult, Session
from tomo.assist.tools import graph_tools
from tomo.errors import TomoError
from tomo.prism import Graph

INSTRUCTIONS = """\
tomo prism: a code graph of one repository. find_symbol, definition, references, callers, callees and impact answer
questions about code without reading files; each reference is confirmed (binding proven) or ambiguous (with why).
rename_plan returns a plan handle (p1-xxxx) with every edit; apply_plan(handle) writes the confirmed edits in all
files or none (include_ambiguous=true to also write the unproven ones); undo_apply(handle) restores the files.
A plan whose files changed since it was made is refused: plan again."""


def answer_text(result: OpResult, max_rows: int = 100) -> str:
    """The receipt line, then the payload as JSON with every list cut to ``max_rows`` (the cut said in words)."""
    payload: dict[str, Any] = dict(result.payload)
    cuts = []
    for key, value in result.payload.items():
        if isinstance(value, list) and len(value) > max_rows:
            payload[key] = value[:max_rows]
            cuts.append(f"{key}: showing {max_rows:,} of {len(value):,}")
    text = result.receipt
    if cuts:
        text += f"\n[{'; '.join(cuts)}. The handle {result.handle} stands for all of them"
        text += ": apply_plan applies the whole plan.]" if result.operation == "rename_plan" else ".]"
    return text + "\n" + json.dumps(payload, ensure_ascii=False)


def build_server(session: Session, *, max_rows: int = 100) -> MCPServer:
    """An MCP server whose tools are the graph operations of ``session``."""
    server: MCPServer = MCPServer("tomo-prism", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def call(op: str, args: dict[str, Any]) -> str:
        try:
            return answer_text(session.invoke(op, args), max_rows)
        except TomoError as exc:  # the client's mistake (unknown symbol, refused handle): said, not a crash
            raise ToolError(str(exc)) from exc

    for fn in graph_tools(call, for_mcp=True):
        server.add_tool(fn, structured_output=False)
    return server


def serve(root: str | os.PathLike[str], *, max_rows: int = 100) -> None:
    """Indexes ``root`` (or refreshes its index) and serves the graph over stdio until the client disconnects."""
    session = Session(Graph.open(root), refresh=True)  # the user edits files between a client's calls
    try:
        build_server(session, max_rows=max_rows).run("stdio")
    finally:
        session.close()
