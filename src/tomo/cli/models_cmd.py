"""`tomo models`: the default model and why, the tier table, which providers answer right now, and the
OpenAI-compatible servers on this machine's usual ports (llama.cpp 8080, LM Studio 1234, vLLM/llama-cpp-python 8000)
with the models they serve."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer

from tomo.cli import app
from tomo.cli.rows import print_rows, rich_console
from tomo.cli.safe import esc as escape  # markup and control characters: provider details are outside text
from tomo.config import load_settings
from tomo.errors import TomoError
from tomo.models.gateway import TIERS, detect, probe_providers, tier_table


@app.command()
def models(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    timeout: float = typer.Option(2.0, "--timeout", help="Seconds to wait for each provider."),
) -> None:
    """Show the detected default model, the tier table, which providers answer, and local servers' models."""
    settings = load_settings()
    report: dict[str, Any] = {}
    try:
        found = detect(settings, timeout_s=timeout)
        report["default"] = {"spec": found.spec, "reason": found.reason}
    except TomoError as exc:
        found = None
        report["default"] = {"spec": None, "error": exc.message, "hint": exc.hint}
    try:
        if found or all(t in settings.tiers for t in TIERS):
            table = tier_table(settings, default_spec=found.spec if found else None)
        else:  # no default to derive the others from: still show what tomo.toml sets
            table = {t: (settings.tiers[t], "tomo.toml [tiers]") for t in TIERS if t in settings.tiers}
    except TomoError as exc:
        table = {}
        report["tiers_error"] = {"error": exc.message, "hint": exc.hint}
    report["tiers"] = {tier: {"spec": spec, "from": source} for tier, (spec, source) in table.items()}
    report["providers"] = [s.to_dict() for s in asyncio.run(probe_providers(settings, timeout_s=timeout))]
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    _render(report)


def _render(report: dict[str, Any]) -> None:
    """The report as lines and two tables: rich on a terminal; in a pipe whole lines and plain columns, so a model
    spec or a provider's detail is never cut at the 80th column."""
    console = rich_console()
    default = report["default"]
    if default["spec"]:
        console.print(f"[bold]default model[/]  {escape(default['spec'])}  [dim]({escape(default['reason'])})[/]")
    else:
        console.print(f"[bold]default model[/]  [red]none[/]: {escape(default['error'])}")
        console.print(f"[yellow]hint:[/] {escape(default['hint'])}")
    if report["tiers"]:
        console.print("[bold]tiers[/]")
        print_rows(("tier", "model", "from"),
                   [(tier, row["spec"], row["from"]) for tier, row in report["tiers"].items()], console=console)
    console.print("[bold]providers[/]")
    print_rows(("provider", "base URL", "answers", "detail"),
               [(row["provider"], row["base_url"], ("yes", "green") if row["ok"] else ("no", "red"), row["detail"])
                for row in report["providers"]], console=console)
    for row in report["providers"]:
        if row.get("spec"):
            console.print(f"[dim]use {escape(row['base_url'])}:[/] --model {escape(row['spec'])}", soft_wrap=True)
    if report.get("tiers_error"):
        console.print(f"[red]tiers:[/] {escape(report['tiers_error']['error'])}")
        console.print(f"[yellow]hint:[/] {escape(report['tiers_error']['hint'])}")
