"""The `tomo` command. Each part registers its verbs from its own module; this file only assembles them.

Errors: a :class:`~tomo.errors.TomoError` is printed as its message and hint (no traceback) and exits 2.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from tomo import __version__
from tomo.cli.safe import esc  # error messages quote outside text: paths, specs, a provider's words
from tomo.errors import TomoError

app = typer.Typer(
    name="tomo",
    help="Let any chat model work on a code base while the harness keeps the discipline.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

err_console = Console(stderr=True)


@app.command()
def version() -> None:
    """Print tomo's version."""
    typer.echo(__version__)


def report_error(exc: TomoError) -> None:
    """How every verb shows tomo's own errors: what was wrong, then how to fix it (no traceback)."""
    err_console.print(f"[bold red]error:[/] {esc(exc.message)}")
    if exc.hint:
        err_console.print(f"[yellow]hint:[/] {esc(exc.hint)}")


def _register() -> None:
    # Each module adds its commands to `app` when imported; the order here is the order in --help.
    from tomo.cli import (  # noqa: F401
        assist_cmd,
        context_cmd,
        demo_cmd,
        exec_cmd,
        graph_cmd,
        loop_cmd,
        mcp_cmd,
        models_cmd,
        run_cmd,
        serve_cmd,
        team_cmd,
    )


_register()


def main() -> None:
    try:
        app()
    except TomoError as exc:
        report_error(exc)
        sys.exit(2)
