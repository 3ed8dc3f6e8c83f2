"""`tomo context-pack`: the files and definitions a task is about, found from its text before any model runs.

Prints the preamble an engine would give its model (``--json``: the ranked files, tests and symbols as well). The
task is an argument, or ``@FILE`` to read it from a file (``@-`` for stdin).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tomo.cli import app
from tomo.cli.rows import rich_console
from tomo.errors import ConfigError
from tomo.oi.context_pack import DEFAULT_BUDGET, HISTORY_WEIGHT, Weights, build

err = rich_console(stderr=True)


def read_task(arg: str) -> str:
    """The task text: the argument itself, or the contents of the file named after ``@`` (``@-``: stdin)."""
    if not arg.startswith("@"):
        text = arg
    elif arg == "@-":
        text = sys.stdin.read()
    else:
        path = Path(arg[1:])
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ConfigError(f"cannot read the task file {path}: {exc.strerror or exc}",
                              hint="pass the task text itself, or @PATH to a readable file (@- for stdin)") from exc
    if not text.strip():
        raise ConfigError("the task text is empty", hint="pass the task text, or @PATH to a file that holds it")
    return text


@app.command("context-pack", no_args_is_help=True)
def context_pack(
    task: str = typer.Argument(help="The task text, or @FILE to read it from a file (@- for stdin)."),
    root: Path = typer.Option(Path("."), "--root", metavar="DIR", help="Repository root (default: current directory)."),
    lsp: str = typer.Option(None, "--lsp", metavar="CMD",
                            help='A language server command for extra evidence, e.g. "pylsp".'),
    as_json: bool = typer.Option(False, "--json", help="Print files, tests, symbols and the preamble as JSON."),
    budget: int = typer.Option(DEFAULT_BUDGET, "--budget", min=100, metavar="TOKENS",
                               help="Token budget of the preamble."),
    history: bool = typer.Option(False, "--history", help="Add the git history as a signal: files touched by past "
                                 "commits whose messages match the task (off by default: it did not pay on held-out "
                                 "tasks)."),
    git_dir: Path = typer.Option(None, "--git-dir", metavar="DIR",
                                 help="With --history: the repository's git directory when --root is "
                                      "not a checkout (default: its .git if present)."),
    git_rev: str = typer.Option(None, "--git-rev", metavar="REV",
                                help="With --history: read the history up to this commit "
                                     "(default: HEAD)."),
) -> None:
    """Find the code TASK is about (anchors in the code graph, then BM25) and print the preamble for a model."""
    text = read_task(task)
    weights = Weights(history=HISTORY_WEIGHT) if history or git_dir is not None or git_rev is not None else Weights()
    if as_json or not err.is_terminal:
        pack = build(root, text, lsp=lsp, budget_tokens=budget, git_dir=git_dir, git_rev=git_rev, weights=weights)
    else:
        with Progress(TextColumn("[bold]indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            job = bar.add_task("index", total=None)
            pack = build(root, text, lsp=lsp, budget_tokens=budget, git_dir=git_dir, git_rev=git_rev, weights=weights,
                         progress=lambda done, total: bar.update(job, completed=done, total=total))
    if as_json:
        typer.echo(json.dumps(pack.as_json(), indent=2))
        return
    typer.echo(pack.text, nl=False)
    for note in pack.notes:
        err.print(f"note: {note}", markup=False, highlight=False)
    err.print(f"{len(pack.files)} files, {len(pack.tests)} tests, {len(pack.symbols)} definitions ranked "
              f"in {pack.seconds:.2f}s", markup=False, highlight=False)
