"""The command line imports a verb's part only when that verb runs (issue 15: start-up time).

Each test runs the real entry point (``from tomo.cli import main``, what the console script does) in a fresh
interpreter and reads back which modules it imported. The figures live in bench/cli_startup.py; these tests hold
the cause in place: `tomo --help`, `tomo version` and `tomo graph refs` must not import the assistant, the model
gateway, the engines, the console, the MCP SDK, sqlalchemy or an HTTP client. They also check that the lazy listing
says exactly what the fully imported command line says, so VERBS cannot drift from the verbs' own help.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def tomo_env(**extra: str) -> dict[str, str]:
    """This checkout's sources first (as tests/conftest.py's run_tomo), a fixed terminal width, and none of the
    variables that force a layout (rich's FORCE_COLOR and TTY_COMPATIBLE, typer's TYPER_USE_RICH) unless asked."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TYPER_USE_RICH")}
    env["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COLUMNS"] = "100"
    env.update(extra)
    return env

# parts of tomo, and libraries, that only some verbs need; none of them may load for help, version or a graph query
HEAVY = ("tomo.assist", "tomo.models", "tomo.oi", "tomo.team", "tomo.web", "tomo.store", "tomo.agents",
         "tomo.config", "tomo.loop", "tomo.tools", "tomo.mcp_server", "tomo.sandbox", "tomo.demo",
         "mcp", "sqlalchemy", "dbos", "httpx", "starlette", "fastapi", "uvicorn", "anthropic", "openai")

# runs the console script's entry with ARGS, then writes the imported module names to the file named by argv[1]
PROBE = r"""
import json, sys
out, args = sys.argv[1], sys.argv[2:]
sys.argv = ["tomo", *args]
code = 0
try:
    if args == ["--import-only"]:
        import tomo.cli
    else:
        from tomo.cli import main
        main()
except SystemExit as exc:
    code = exc.code
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
sys.exit(code)
"""


def probe(tmp_path: Path, *args: str, prelude: str = "",
          env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the entry point in a fresh interpreter; return what it printed and the modules it had imported."""
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", prelude + PROBE, str(out), *args], capture_output=True, text=True,
                          env=tomo_env(**(env or {})), stdin=subprocess.DEVNULL, timeout=120)
    return done, set(json.loads(out.read_text()))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def parts_in(modules: set[str]) -> list[str]:
    """The parts of tomo and verb modules imported, beyond the command line's own (tomo.cli, its plain_params and
    help_names)."""
    own = {"tomo", "tomo.errors", "tomo.cli", "tomo.cli.plain_params", "tomo.cli.help_names"}
    return sorted(m for m in modules if m.startswith("tomo.") and m not in own)


def test_importing_the_entry_point_imports_no_part_of_tomo(tmp_path: Path) -> None:
    done, modules = probe(tmp_path, "--import-only")
    assert done.returncode == 0, done.stderr
    assert "tomo.cli" in modules  # the probe really imported it
    assert heavy_in(modules) == [] and parts_in(modules) == []
    assert "rich.console" not in modules and "pydantic" not in modules


def test_help_lists_every_verb_without_importing_them(tmp_path: Path) -> None:
    from tomo.cli import VERBS

    done, modules = probe(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("\nCommands:\n", 1)[1]  # a pipe gets click's plain help
    assert re.findall(r"^  (\S+)  ", commands, re.MULTILINE) == ["version", *VERBS]
    assert heavy_in(modules) == [] and parts_in(modules) == []
    assert [m for m in modules if m == "rich" or m.startswith("rich.")] == []  # no panels to import or lay out
    bare, modules = probe(tmp_path)  # no verb at all: the same listing, as a usage error
    assert bare.returncode == 2 and "\n  graph  " in bare.stdout + bare.stderr
    assert heavy_in(modules) == []


# the entry point with its stdout on a terminal (a pseudo-terminal), and whether tomo's own process kept the switch
ON_A_TERMINAL = r"""
import os, pty, subprocess, sys
leader, follower = pty.openpty()
proc = subprocess.Popen([sys.executable, "-c", sys.argv[1], *sys.argv[2:]], stdout=follower, stderr=follower)
os.close(follower)
chunks = []
while True:
    try:
        chunk = os.read(leader, 65536)
    except OSError:  # the terminal's other side closed
        break
    if not chunk:
        break
    chunks.append(chunk)
proc.wait()
sys.stdout.write(b"".join(chunks).decode())
"""
ENTRY = r"""
import os, sys
sys.argv = ["tomo", *sys.argv[1:]]
from tomo.cli import main
try:
    main()
finally:
    print("switch inherited:", "TYPER_USE_RICH" in os.environ)
"""


def test_help_on_a_terminal_is_rich_and_in_a_pipe_plain(tmp_path: Path) -> None:
    """A person at a terminal gets typer's panels; a pipe (an agent's shell) gets plain text without box-drawing
    tokens; a TYPER_USE_RICH the user set wins either way; the commands tomo starts never inherit the switch."""
    tty = subprocess.run([sys.executable, "-c", ON_A_TERMINAL, ENTRY, "graph", "--help"], capture_output=True,
                         text=True, env=tomo_env(), timeout=120)
    assert tty.returncode == 0, tty.stderr
    assert "╭─" in tty.stdout and "Commands" in tty.stdout and "refs" in tty.stdout
    piped = subprocess.run([sys.executable, "-c", ENTRY, "graph", "--help"], capture_output=True, text=True,
                           env=tomo_env(), timeout=120)
    assert "\nCommands:\n" in piped.stdout and "╭" not in piped.stdout and "│" not in piped.stdout
    assert re.search(r"^  refs  ", piped.stdout, re.MULTILINE)
    forced = subprocess.run([sys.executable, "-c", ENTRY, "graph", "--help"], capture_output=True, text=True,
                            env=tomo_env(TYPER_USE_RICH="1"), timeout=120)
    assert "│ refs " in forced.stdout
    colour = subprocess.run([sys.executable, "-c", ENTRY, "graph", "--help"], capture_output=True, text=True,
                            env=tomo_env(FORCE_COLOR="1"), timeout=120)
    # rich's own rule, as for listings: FORCE_COLOR makes a pipe a terminal
    assert "╭─" in colour.stdout and "refs" in colour.stdout
    assert tty.stdout.count("switch inherited: False") == piped.stdout.count("switch inherited: False") == 1
    assert "switch inherited: True" in forced.stdout  # the user's own setting stays theirs
    error = subprocess.run([sys.executable, "-c", ENTRY, "graph", "refs", "--bogus"], capture_output=True,
                           text=True, env=tomo_env(), timeout=120)
    assert "Error: No such option: --bogus" in error.stderr and "╭" not in error.stderr


@pytest.mark.parametrize(("args", "shown"), [(["version"], "0.1.0"), (["--version"], "tomo 0.1.0")])
def test_version_imports_no_verb(tmp_path: Path, args: list[str], shown: str) -> None:
    done, modules = probe(tmp_path, *args)
    assert (done.returncode, done.stdout.strip()) == (0, shown)
    assert heavy_in(modules) == [] and parts_in(modules) == []
    assert "tree_sitter" not in modules and "pydantic" not in modules  # typer 0.29 would coerce through pydantic


def test_graph_refs_imports_prism_and_nothing_heavier(tmp_path: Path) -> None:
    root = shutil.copytree(REPO / "examples" / "shop", tmp_path / "shop",
                           ignore=shutil.ignore_patterns(".tomo", "__pycache__"))
    done, modules = probe(tmp_path, "graph", "refs", "shop.lines.OrderLine.total", "--json", "--root", str(root))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {"shop/lines.py", "shop/invoice.py"} <= {r["path"] for r in rows}
    assert "tomo.prism.graph" in modules and "tomo.cli.graph_cmd" in modules
    assert heavy_in(modules) == []
    assert "rich.progress" not in modules  # the index's progress bar, not a query's
    assert "pydantic" not in modules  # a str and a Path option: see tomo.cli.plain_params
    # only the graph verb's module was imported, not its neighbours
    assert sorted(m for m in modules if m.startswith("tomo.cli.") and m.endswith("_cmd")) == ["tomo.cli.graph_cmd"]
    assert "concurrent.futures" not in modules  # nothing to parse: no process pool
    table, modules = probe(tmp_path, "graph", "refs", "shop.lines.OrderLine.total", "--root", str(root))
    assert table.returncode == 0, table.stderr
    assert "shop/invoice.py:" in table.stdout and " references: " in table.stdout
    assert [m for m in modules if m == "rich" or m.startswith("rich.")] == []  # a pipe's listing is plain text


def test_graph_index_in_a_pipe_prints_whole_lines_without_rich(tmp_path: Path) -> None:
    """A file's error is one line in a pipe, however long its path: a script greps it, rich would cut it at 80."""
    root = tmp_path / "proj"
    deep = root / "a_package_with_a_rather_long_name" / "and_a_subpackage_deeper_still"
    deep.mkdir(parents=True)
    (deep / "module_that_does_not_parse.py").write_text("def broken(:\n    pass\n")
    (root / "fine.py").write_text("def ok():\n    return 1\n")
    done, modules = probe(tmp_path, "graph", "index", "--root", str(root))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("indexed 2 files: 2 parsed, 0 unchanged, 0 removed in ")
    bad = [ln for ln in lines if "module_that_does_not_parse.py" in ln]
    assert len(bad) == 1 and len(bad[0]) > 100 and bad[0].endswith(" at line 1, col 11")  # not wrapped at COLUMNS
    assert [m for m in modules if m == "rich" or m.startswith("rich.")] == []


def test_a_verbs_rich_line_is_whole_in_a_pipe(tmp_path: Path) -> None:
    """A verb's own line (a query that matches nothing) and an error (rich, on stderr) stay whole in a pipe."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "fine.py").write_text("def ok():\n    return 1\n")
    wanted = "no_such_symbol_" + "x" * 90
    done, _ = probe(tmp_path, "graph", "symbols", wanted, "--root", str(root))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [f"no symbol matches `{wanted}`"]
    # tomo's errors on a captured stderr too
    done, _ = probe(tmp_path, "graph", "refs", wanted, "--root", str(root))
    assert done.returncode != 0
    assert done.stderr.splitlines()[0] == f"error: no symbol named `{wanted}`"


def test_a_verb_imports_its_own_part(tmp_path: Path) -> None:
    """The other side of laziness: running a verb still loads what it needs (here the team store and sqlalchemy)."""
    done, modules = probe(tmp_path, "team", "--help")
    assert done.returncode == 0, done.stderr
    assert "Usage: tomo team" in done.stdout and "resume" in done.stdout
    assert {"tomo.cli.team_cmd", "sqlalchemy"} <= modules
    assert "tomo.cli.graph_cmd" not in modules


def test_unknown_verb_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    done, _ = probe(tmp_path, "grpah")
    assert done.returncode == 2
    assert "No such command 'grpah'" in done.stderr and "Did you mean 'graph'?" in done.stderr


# a part whose module registers a verb that VERBS does not name (yet): _register() imports it with the others
UNLISTED = """
import tomo.cli
_import_all = tomo.cli._register
def _register():
    _import_all()
    @tomo.cli.app.command("unlisted")
    def unlisted() -> None:
        print("the unlisted verb ran")
tomo.cli._register = _register
"""


def test_a_verb_missing_from_verbs_still_runs(tmp_path: Path) -> None:
    done, modules = probe(tmp_path, "unlisted", prelude=UNLISTED)
    assert (done.returncode, done.stdout) == (0, "the unlisted verb ran\n"), done.stderr
    assert "tomo.cli.team_cmd" in modules  # found by importing every part, as before issue 15


# imports every verb's module before the command line is built: the eager command line of before issue 15
EAGER = "import tomo.cli; tomo.cli._register()\n"


@pytest.mark.parametrize("rich", ["0", "1"])
def test_lazy_listing_is_the_eager_listing(tmp_path: Path, rich: str) -> None:
    """VERBS (names, order, help lines) says exactly what the verbs' modules register; a new verb fails here until
    it has its row. Both layouts: plain help cuts the lines short, typer's panels show them whole."""
    lazy, _ = probe(tmp_path, "--help", env={"TYPER_USE_RICH": rich})
    eager, modules = probe(tmp_path, "--help", prelude=EAGER, env={"TYPER_USE_RICH": rich})
    assert "tomo.cli.team_cmd" in modules  # the eager run really imported every verb
    assert lazy.returncode == eager.returncode == 0
    assert ("│ graph " in lazy.stdout) == (rich == "1")
    assert lazy.stdout == eager.stdout


HELP_OF_EVERY_VERB = r"""
import json, sys
from typer.testing import CliRunner
import tomo.cli
if sys.argv[1] == "eager":
    tomo.cli._register()
runner = CliRunner()
helps = {}
for verb in tomo.cli.VERBS:
    res = runner.invoke(tomo.cli.app, [verb, "--help"], prog_name="tomo", env={"COLUMNS": "100"})
    helps[verb] = [res.exit_code, res.output]
print(json.dumps(helps))
"""


def test_every_verb_help_is_the_eager_help() -> None:
    """`tomo VERB --help` loads the verb and shows all its options and sub-commands, as the eager command line did."""
    runs = {}
    for mode in ("lazy", "eager"):
        done = subprocess.run([sys.executable, "-c", HELP_OF_EVERY_VERB, mode], capture_output=True, text=True,
                              env=tomo_env(), timeout=120)
        assert done.returncode == 0, done.stderr
        runs[mode] = json.loads(done.stdout)
    assert runs["lazy"] == runs["eager"]
    for verb, (code, text) in runs["lazy"].items():
        assert code == 0 and f"Usage: tomo {verb}" in text, (verb, text)
    assert "│ refs " in runs["lazy"]["graph"][1] and "│ rename-plan " in runs["lazy"]["graph"][1]
    assert "│ add  " in runs["lazy"]["users"][1] and "--apply-ambiguous" in runs["lazy"]["assist"][1]
