"""`tomo exec`: run one command in the sandbox, the same path every engine takes, for people and scripts."""

from __future__ import annotations

import codecs
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer._click.exceptions import UsageError  # typer 0.29's own click (pinned in pyproject)
from typer.core import TyperCommand

from tomo.cli import app, report_error
from tomo.cli.safe import visible
from tomo.config import load_settings
from tomo.errors import ConfigError, TomoError

if TYPE_CHECKING:
    from tomo.config import Settings
    from tomo.sandbox import Limits, Sandbox


TOMO_FAILED = 125


class _OwnFailures(TyperCommand):
    """``tomo exec``'s own failures exit 125, those found while its command line is parsed too: a bad option, a
    missing COMMAND, a bad ``--root``. Only the command's own exit codes are its own, as with ``timeout`` and
    ``env``; a script reads 125 as "tomo failed, the command did not run"."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            exc.exit_code = TOMO_FAILED
            raise
        except TomoError as exc:
            report_error(exc)
            raise typer.Exit(TOMO_FAILED) from exc


@app.command(
    "exec",
    cls=_OwnFailures,
    context_settings={"allow_interspersed_args": False},
    no_args_is_help=True,
)
def exec_(
    command: list[str] = typer.Argument(..., help="The command and its arguments (put them after --)."),
    sandbox: str = typer.Option(
        None, "--sandbox", "-s", metavar="KIND",
        help="strict (bubblewrap) or local (unconfined); default: sandbox.kind in tomo.toml, else auto."
    ),
    root: Path = typer.Option(Path("."), "--root", "-C", metavar="DIR",
                              help="The workspace: the only directory the box can write."),
    timeout: float = typer.Option(None, "--timeout", "-t", metavar="SECONDS",
                                  help="Wall-clock seconds before the whole tree is killed."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON instead of streaming the output."),
) -> None:
    """Run COMMAND in the sandbox with --root as its workspace; exit with its exit code (124 on timeout).

    Every failure of tomo's own exits 125, like coreutils' timeout and env, so a script can tell it from the
    command's own exit codes: a bad option or --root (where other verbs exit 2), no bubblewrap, a bad setting.

    Example: tomo exec --root . --timeout 10 -- python -c "print('hi')"
    """
    try:
        _exec(command, sandbox, root, timeout, as_json)
    except TomoError as exc:
        report_error(exc)
        raise typer.Exit(TOMO_FAILED) from exc


def _piped_stdin() -> int | None:
    """Our stdin for the command when it is a pipe or a file (`echo x | tomo exec -- cat`); never a terminal, since
    the box runs in its own session and must not read (or inject into) the user's terminal."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # no stdin at all (CI, a daemon)
        return None
    return None if os.isatty(fd) else fd


def _for_a_terminal() -> Callable[[bytes, bool], bytes]:
    """The command's output for a person's terminal: its control characters shown as escapes (``\\x1b[31m``), not
    obeyed. The code in the box is not trusted, and an escape sequence can rewrite what the screen shows, set the
    window title or the clipboard. Into a pipe or a file the bytes pass through unchanged: there they are data."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")  # a character split between chunks waits

    def shown(chunk: bytes, final: bool = False) -> bytes:
        return visible(decoder.decode(chunk, final)).encode("utf-8")

    return shown


def sandbox_and_limits(kind: str | None, settings: Settings, timeout: float | None) -> tuple[Sandbox, Limits]:
    """The box ``--sandbox`` names (else ``[sandbox] kind``) and its limits, with ``--timeout`` over the configured one.

    Shared by the verbs that run code (``tomo exec``, ``tomo run``): one reading of the settings, one check of the flag.
    """
    from tomo.sandbox import Limits, make_sandbox

    box = make_sandbox(kind, settings.sandbox)
    limits = Limits.from_settings(settings.sandbox)
    if timeout is not None:
        if timeout <= 0:
            raise ConfigError(f"--timeout must be positive, got {timeout:g}", hint="pass seconds, e.g. --timeout 60")
        limits = limits.with_(timeout_s=timeout)
    return box, limits


def _exec(command: list[str], sandbox: str | None, root: Path, timeout: float | None, as_json: bool) -> None:
    settings = load_settings(root.resolve() if root.exists() else None)
    box, limits = sandbox_and_limits(sandbox, settings, timeout)
    out = sys.stdout.buffer
    last = [b"\n"]
    shown = _for_a_terminal() if out.isatty() else None

    def live(chunk: bytes) -> None:
        out.write(shown(chunk, False) if shown else chunk)
        out.flush()
        last[0] = chunk[-1:] or last[0]

    def cut(notice: str) -> None:  # on its own line even when the streamed head ended mid-line
        typer.echo(("" if last[0] == b"\n" else "\n") + f"tomo: {visible(notice)}", err=True)

    stdin = _piped_stdin()
    if as_json:
        result = box.run_sync(command, "argv", root, limits, stdin=stdin)
        typer.echo(json.dumps({"sandbox": box.name, **asdict(result), "box": box.describe()}, indent=2))
    else:
        result = box.run_sync(command, "argv", root, limits, on_output=live, on_cut=cut, stdin=stdin)
        if shown:  # bytes of a character the output ended in the middle of
            out.write(shown(b"", True))
            out.flush()
        for note in result.notes:
            if not note.startswith("output cut"):  # already said, in place, by cut()
                typer.echo(f"tomo: {visible(note)}", err=True)
    raise typer.Exit(result.exit_code)
