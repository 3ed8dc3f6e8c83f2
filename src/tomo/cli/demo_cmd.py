"""`tomo demo`: tomo's main job on a fresh machine, with no model and no network."""

from __future__ import annotations

from rich.console import Console

from tomo.cli import app


@app.command()
def demo() -> None:
    """Run tomo's main job on the bundled example with a scripted model (no network, no API key)."""
    console = Console()
    console.print("[bold]tomo demo[/]: the engines are still being built; this shows what is installed.")
