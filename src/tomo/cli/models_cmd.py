"""`tomo models`: the default model and why, the measured (blessed) list, the tier table, which providers answer
right now, and the OpenAI-compatible servers on this machine's usual ports (llama.cpp 8080, LM Studio 1234,
vLLM/llama-cpp-python 8000) with the models they serve. `tomo models local` lists the models that come as Python
packages; `tomo models serve NAME` serves one of them on llama-cpp-python's server, in the foreground."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import typer

from tomo.cli import app
from tomo.cli.rows import print_rows, rich_console, say
from tomo.cli.safe import esc as escape  # markup and control characters: provider details are outside text
from tomo.config import load_settings
from tomo.errors import TomoError
from tomo.models.blessed import load_blessed
from tomo.models.gateway import LOCAL_SERVERS, TIERS, detect, probe_providers, tier_table

models_app = typer.Typer(add_completion=False, help="Show the detected default model, the measured (blessed) list, "
                                                    "the tier table, which providers answer, and local servers' "
                                                    "models; list and serve the packaged local models.")
app.add_typer(models_app, name="models")

EXIT_INTERRUPTED = 130


@models_app.callback(invoke_without_command=True)
def models(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    timeout: float = typer.Option(2.0, "--timeout", metavar="SECONDS", help="Seconds to wait for each provider."),
) -> None:
    """Show the detected default model, the measured (blessed) list, the tier table, which providers answer, and
    local servers' models; list and serve the packaged local models."""
    if ctx.invoked_subcommand is not None:
        return
    settings = load_settings()
    report: dict[str, Any] = {}
    try:
        found = detect(settings, timeout_s=timeout)
        report["default"] = {"spec": found.spec, "reason": found.reason}
    except TomoError as exc:
        found = None
        report["default"] = {"spec": None, "error": exc.message, "hint": exc.hint}
    report["blessed"] = load_blessed().to_dict()
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
    """The report as lines and tables: rich on a terminal; in a pipe whole lines and plain columns, so a model
    spec or a provider's detail is never cut at the 80th column."""
    console = rich_console()
    default = report["default"]
    if default["spec"]:
        console.print(f"[bold]default model[/]  {escape(default['spec'])}  [dim]({escape(default['reason'])})[/]")
    else:
        console.print(f"[bold]default model[/]  [red]none[/]: {escape(default['error'])}")
        console.print(f"[yellow]hint:[/] {escape(default['hint'])}")
    _render_blessed(console, report["blessed"])
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


def _render_blessed(console: Any, blessed: dict[str, Any]) -> None:
    if not blessed["models"]:
        console.print(f"[bold]blessed[/]  none: {escape(blessed['note'] or 'the list is empty')}")
        return
    when = str(blessed["generated"])[:10]
    console.print(f"[bold]blessed[/]  measured {escape(when)} on {escape(blessed['machine'])} (tomo "
                  f"{escape(blessed['tomo_version'])}); rule: {escape(blessed['rule'])}")
    suites = blessed.get("suites") or {}

    def ceiling(m: dict[str, Any]) -> str:
        suite = suites.get(m["suite"])
        return f"{suite['ceiling']['solved']}/{suite['ceiling']['tasks']}" if suite else f"{m['ceiling_rate']:.0%}"

    ranked = sorted(blessed["models"], key=lambda m: (not m["blessed"], -m["rate"], m["false_claims"]))  # best first
    print_rows(("model", "suite", "solved", "ceiling", "false claims", "blessed"),
               [(m["name"], m["suite"], f"{m['solved']}/{m['tasks']}", ceiling(m), str(m["false_claims"]),
                 ("yes", "green") if m["blessed"] else ("no", "dim")) for m in ranked], console=console)


# ---- the packaged local models -----------------------------------------------------------------------------------


def _size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


@models_app.command("local")
def local_cmd(as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table.")) -> None:
    """List the models that come as Python packages: installed or not, their size, assembled or not."""
    from tomo.models.local import cache_dir, server_missing, statuses

    rows = statuses()
    server = server_missing()
    if as_json:
        typer.echo(json.dumps({"cache": str(cache_dir()), "server": server or "ok",
                               "models": [s.to_dict() for s in rows]}, indent=2))
        return
    print_rows(("model", "installed", "size", "assembled", "licence", "what it is"),
               [(s.model.name,
                 ("yes", "green") if s.installed else (f"no ({len(s.missing)} of {len(s.model.parts)} missing)", "red"),
                 _size(s.model.size), "yes" if s.path else "no", s.model.licence, s.model.title) for s in rows])
    for s in rows:
        if s.missing:
            say(f"install {s.model.name}: pip install " + " ".join(f"'{r}'" for r in s.missing))
    if server:
        say(f"the server is missing: {server}")
    say(f"serve one: tomo models serve NAME (assembled files go to {cache_dir()})")


@models_app.command("serve")
def serve_cmd(
    name: str = typer.Argument(..., help="A packaged model (tomo models local lists them)."),
    port: int = typer.Option(8000, "--port", metavar="PORT",
                             help="The port to listen on (8000: where detection looks)."),
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="The address to listen on."),
    n_ctx: int = typer.Option(8192, "--n-ctx", min=256, metavar="TOKENS", help="The context window in tokens."),
    chat_format: str | None = typer.Option(None, "--chat-format", metavar="FORMAT",
                                           help="llama-cpp-python's chat format "
                                                "(e.g. chatml-function-calling), or 'template' for the model's own; "
                                                "default: the model's (tomo models local --json says which)."),
    threads: int | None = typer.Option(None, "--threads", min=1, metavar="N",
                                       help="CPU threads (default: every core)."),
) -> None:
    """Serve a packaged model on llama-cpp-python's OpenAI-compatible server, in the foreground (Ctrl-C stops it)."""
    from tomo.models.local import assembled, packaged, serve

    model = packaged(name)
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}/v1"
    say(f"serving {model.name} ({model.title}, {model.licence}) at {base}")
    say(f"use it with: --model {model.spec(base)}")
    usual = dict(LOCAL_SERVERS)
    if port in usual and base.startswith("http://127.0.0.1:"):
        say(f"tomo's default-model detection finds it on port {port} by itself (after a blessed model and an API "
            "key; before them once the lab has blessed it)")
    else:
        say(f"detection looks at ports {', '.join(str(p) for p in usual)}: name this one with --model, or set "
            f"TOMO_LOCAL_SERVERS={port}")
    if assembled(model) is None:
        say(f"assembling {model.name} from its {len(model.parts)} package(s) ({_size(model.size)}, once) ...")
    started = time.monotonic()
    try:
        served = serve(name, host, port, chat_format=chat_format, n_ctx=n_ctx, threads=threads)
    except KeyboardInterrupt:
        say("interrupted while starting; the server is stopped")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    say(f"ready in {time.monotonic() - started:.1f} s (log: {served.log}); Ctrl-C stops it")
    try:
        code = served.process.wait()
    except KeyboardInterrupt:
        served.stop()
        say("stopped")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    say(f"the server exited by itself with code {code}; the end of its log:\n{served.tail()}")
    raise typer.Exit(1)
