"""`tomo mcp`: serve prism's graph operations to an MCP client over stdio."""

from __future__ import annotations

from pathlib import Path

import typer

from tomo.cli import app


@app.command("mcp")
def mcp_cmd(
    root: Path = typer.Option(Path("."), "--root", metavar="DIR",
                              help="Repository to serve (default: current directory)."),
    max_rows: int = typer.Option(100, "--max-rows", min=1, metavar="N",
                                 help="Cut lists in answers after this many rows."),
) -> None:
    """Serve the code graph over MCP (stdio) for Claude Code, Cursor or any MCP client."""
    from tomo.mcp_server import serve

    serve(root, max_rows=max_rows)
