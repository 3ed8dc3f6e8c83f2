"""The `tomo` command. Each part registers its verbs from its own module; this file only assembles them.

Errors: a :class:`~tomo.errors.TomoError` is printed as its message and hint (no traceback) and exits with its
``exit_code``: 2 (a usage or configuration error) unless it says otherwise (1 for :class:`~tomo.errors.Unavailable`).

Start-up: a verb's module is imported only when that verb runs (or its own ``--help`` is asked for), so
``tomo graph refs`` does not pay for the assistant, the gateway, the MCP SDK or sqlalchemy. :data:`VERBS` names the
module of each verb and the one line ``tomo --help`` shows for it, so the listing needs none of them; a test renders
the listing with every module imported and compares. Keep this module, and ``tomo/__init__.py``, free of imports
beyond typer and the standard library.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any


def plain_stdout() -> bool:
    """Whether rich would judge stdout not to be a terminal, decided without importing rich (its own rules, in its
    order: ``TTY_COMPATIBLE`` 0 or 1, then ``FORCE_COLOR`` set and not empty, then the file's ``isatty``). Help
    (below) and listings (:mod:`tomo.cli.rows`) are plain text exactly when it says so."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "0"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color == ""
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):  # no stdout, or a closed one
        return True


def _plain_help_when_piped() -> None:
    """Help and usage errors as plain text when stdout is not a terminal (an agent's shell, a pipe, a file).

    typer's rich panels cost about 0.15 s to import and lay out, and their box-drawing frames are tokens an agent
    pays for on every ``--help`` it reads; a pipe gets click's plain help, as it gets plain listings: the same test
    decides both (:func:`plain_stdout`, rich's own rules). typer reads ``TYPER_USE_RICH`` once, when
    ``typer.core`` is imported, so the switch is set for that import only (the commands tomo runs must not inherit
    it). A value the user set wins, and a process that imported typer before tomo (a test's CliRunner) is left as
    it is.
    """
    if "typer" in sys.modules or "TYPER_USE_RICH" in os.environ or not plain_stdout():
        return
    os.environ["TYPER_USE_RICH"] = "0"
    try:
        import typer.core  # noqa: F401  (reads the switch now)
    finally:
        del os.environ["TYPER_USE_RICH"]


_plain_help_when_piped()

import typer  # noqa: E402
from typer.core import TyperCommand, TyperGroup  # noqa: E402

from tomo import __version__  # noqa: E402
from tomo.cli import help_names  # noqa: E402
from tomo.errors import ConfigError, TomoError  # noqa: E402

help_names.install()  # help names values (TASK, --root DIR), not typer's type labels (<str>, {task})

if TYPE_CHECKING:
    from rich.console import Console

# verb -> (module under tomo.cli, the first paragraph of its help); the order is the order in --help (typer lists
# the plain commands before the groups). A verb missing here still runs (see LazyGroup.get_command) but is not
# listed; tests/test_cli_startup.py fails until it is added.
VERBS: dict[str, tuple[str, str]] = {
    "assist": ("assist_cmd", "Do a code-graph task with a model: it only calls graph operations and reads receipts; "
                             "edits apply by handle."),
    "context-pack": ("context_cmd", "Find the code TASK is about (anchors in the code graph, then BM25) and print "
                                    "the preamble for a model."),
    "demo": ("demo_cmd", "Rename across a bundled example project with a scripted model, verify with its tests "
                         "(no network, no key)."),
    "exec": ("exec_cmd", "Run COMMAND in the sandbox with --root as its workspace; exit with its exit code "
                         "(124 on timeout)."),
    "replay": ("loop_cmd", "Show a saved run transcript as the compact log (or its events as JSON)."),
    "mcp": ("mcp_cmd", "Serve the code graph over MCP (stdio) for Claude Code, Cursor or any MCP client."),
    "run": ("run_cmd", "Do TASK with a model in the sandbox: it writes Python/bash blocks (or calls tools), tomo "
                       "runs them."),
    "serve": ("serve_cmd", "Run the web console (jobs, workspaces and the assistant) for the people of a team."),
    "graph": ("graph_cmd", "Code graph: index a repository, find symbols, references, callers; plan and apply "
                           "renames."),
    "lab": ("lab_cmd", "Measure models and variants on a suite of tasks judged by their own oracles; report with "
                       "intervals and paired tests; bless."),
    "models": ("models_cmd", "Show the detected default model, the measured (blessed) list, the tier table, which "
                             "providers answer, and local servers' models; list and serve the packaged local "
                             "models."),
    "users": ("serve_cmd", "Manage the people who may log in to the console."),
    "workspaces": ("serve_cmd", "Register repositories to a tenant for the console."),
    "team": ("team_cmd", "Run a task graph of roles (planner, researcher, implementer, tester, reviewer) that "
                         "checkpoints every worker and resumes after a crash."),
}


class _Listed(TyperCommand):
    """A verb whose module is not imported yet: its name and help line, enough for ``tomo --help``."""


class LazyGroup(TyperGroup):
    """The root command: every verb of :data:`VERBS` is listed, and its module imported on first use.

    Listing (``tomo --help``) shows the :class:`_Listed` placeholders; resolving a verb to run it, or to show its
    own help, imports its module, which registers the real command on :data:`app`, and swaps it in.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._listing = False
        for verb, (_, line) in VERBS.items():
            if verb not in self.commands:
                self.commands[verb] = _Listed(verb, help=line, rich_markup_mode=self.rich_markup_mode)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = self.commands.get(cmd_name)
        if self._listing:
            return cmd
        if isinstance(cmd, _Listed):
            _load(VERBS[cmd_name][0])
            self._adopt()
        elif cmd is None and not _all_loaded:
            _register()  # a verb some module registers but VERBS does not name yet
            self._adopt()
        cmd = self.commands.get(cmd_name)
        if cmd is None or isinstance(cmd, _Listed):
            return None
        _check_roots_of(cmd)
        return cmd

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def _adopt(self) -> None:
        """Take the real commands of the modules imported so far in place of their placeholders."""
        built = typer.main.get_command(app)
        assert isinstance(built, TyperGroup)
        for name, cmd in built.commands.items():
            current = self.commands.get(name)
            if not isinstance(cmd, _Listed) and (current is None or isinstance(current, _Listed)):
                self.commands[name] = cmd

app = typer.Typer(
    name="tomo",
    help="Let any chat model work on a code base while the harness keeps the discipline.",
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def installed_version() -> str:
    """The version pip installed (the package's metadata), else the source's own when tomo runs from a tree that was
    never installed (``PYTHONPATH=src``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tomo")
    except PackageNotFoundError:
        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"tomo {installed_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    _version: bool = typer.Option(False, "--version", is_eager=True, expose_value=False, callback=_print_version,
                                  help="Print tomo's version and exit."),
) -> None:
    # A callback keeps `app` a group while `version` is the only command registered (before any verb is loaded).
    pass


@app.command()
def version() -> None:
    """Print tomo's version."""
    typer.echo(installed_version())


def check_root(root: Path) -> Path:
    """``--root`` as every verb takes it: an existing directory, else a usage error in one line that names the path
    and why. Checked while the command line is parsed (:func:`_check_roots_of`), before a verb loads a setting,
    opens an index or starts a model, so every verb says the same thing and exits 2 (``tomo exec``: 125, as all of
    its own failures)."""
    if not root.exists():
        raise ConfigError(f"--root {root} does not exist: pass the project's directory (default: the current one)")
    if not root.is_dir():
        raise ConfigError(f"--root {root} is not a directory: pass the project's directory, not a file in it")
    return root


def _root_given(ctx: Any, param: Any, value: Any) -> Any:
    if value is not None and not ctx.resilient_parsing:  # resilient: shell completion, which must not fail
        check_root(Path(value))
    return value


def _check_roots_of(command: Any) -> None:
    """Give every ``--root`` option of ``command`` (and of its sub-commands) the one check, :func:`check_root`."""
    for param in getattr(command, "params", ()):
        if "--root" in getattr(param, "opts", ()) and param.callback is None:
            param.callback = _root_given
    for sub in getattr(command, "commands", {}).values():
        _check_roots_of(sub)


@functools.cache
def _err_console() -> Console:
    from tomo.cli.rows import rich_console  # (here: rows imports this module)

    return rich_console(stderr=True)


def __getattr__(name: str) -> Any:
    if name == "err_console":  # made on first use: printing a version or a help needs no rich console
        return _err_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def report_error(exc: TomoError) -> None:
    """How every verb shows tomo's own errors: what was wrong, then how to fix it (no traceback)."""
    from tomo.cli.safe import esc  # error messages quote outside text: paths, specs, a provider's words

    console = _err_console()
    console.print(f"[bold red]error:[/] {esc(exc.message)}")
    if exc.hint:
        console.print(f"[yellow]hint:[/] {esc(exc.hint)}")


def _load(module: str) -> None:
    importlib.import_module(f"tomo.cli.{module}")


_all_loaded = False


def _register() -> None:
    """Import every verb's module (each adds its commands to `app`); the lazy root needs this only for a verb that
    :data:`VERBS` does not name. The order here is the order in --help."""
    global _all_loaded
    from tomo.cli import (  # noqa: F401
        assist_cmd,
        context_cmd,
        demo_cmd,
        exec_cmd,
        graph_cmd,
        lab_cmd,
        loop_cmd,
        mcp_cmd,
        models_cmd,
        run_cmd,
        serve_cmd,
        team_cmd,
    )

    _all_loaded = True


def main() -> None:
    from tomo.cli.plain_params import install

    install()  # str/bool/Path parameters without pydantic under typer 0.29 (see plain_params)
    try:
        app()
    except TomoError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
