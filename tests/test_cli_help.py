"""Every command's help, as a new user (or an agent's shell) reads it: names where values go, no markup leaking.

One fresh interpreter per layout runs the real entry point (``tomo.cli.main``) for ``--help`` of the root, every verb
and every sub-command, with stdout a pipe (click's plain help) and once more with typer's panels forced
(``TYPER_USE_RICH=1``). Sub-commands are found by reading each group's own help, so a new verb or sub-command is
walked without being named here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from tomo.cli.help_names import MODEL_SPECS

REPO = Path(__file__).resolve().parents[1]

WALK = r"""
import contextlib, io, json, re, sys
from tomo.cli import main

def help_of(path):
    out = io.StringIO()
    sys.argv = ["tomo", *path, "--help"]
    with contextlib.redirect_stdout(out):
        try:
            main()
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue()

helps = {}
todo = [[]]
while todo:
    path = todo.pop(0)
    code, text = help_of(path)
    helps[" ".join(path)] = [code, text]
    found = re.split(r"\nCommands:\n|\n[^\n]*─ Commands ─[^\n]*\n", text)
    if len(found) > 1:
        for name in re.findall(r"^(?:  |│ )(\S+)  ", found[1], re.MULTILINE):
            todo.append([*path, name])
sys.__stdout__.write(json.dumps(helps))
"""


def all_helps(**env: str) -> dict[str, tuple[int, str]]:
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TYPER_USE_RICH")}
    environ["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + environ["PYTHONPATH"] if environ.get("PYTHONPATH")
                                                 else "")
    environ.update(COLUMNS="100", **env)
    done = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, env=environ,
                          stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr
    return {k: (v[0], v[1]) for k, v in json.loads(done.stdout).items()}


TYPE_LABEL = re.compile(r"<(?:str|int|float|path|bool|list|[a-z]+ range)\b[^>]*>")
BRACED = re.compile(r"\{[A-Za-z_]+\}")


@pytest.mark.parametrize("rich", ["0", "1"])
def test_every_help_names_its_values(rich: str) -> None:
    helps = all_helps(TYPER_USE_RICH=rich)
    # the walk reached every verb and the sub-commands of the groups
    assert {"", "assist", "run", "exec", "graph", "graph refs", "graph rename", "team run", "models serve",
            "users add", "workspaces add", "context-pack", "mcp"} <= set(helps)
    for path, (code, text) in helps.items():
        assert code == 0 and "Usage: tomo" in text, (path, text)
        assert "\\[" not in text, (path, text)  # a rich escape shown literally
        assert not TYPE_LABEL.search(text), (path, TYPE_LABEL.search(text))
        assert not BRACED.search(text), (path, BRACED.search(text))
    assert re.search(r"Usage: tomo assist \[OPTIONS\] TASK\b", helps["assist"][1])
    assert re.search(r"Usage: tomo exec \[OPTIONS\] COMMAND\.\.\.", helps["exec"][1])
    assert re.search(r"Usage: tomo graph rename \[OPTIONS\] SYMBOL NEW\b", helps["graph rename"][1])
    for path, option, value in [("assist", "--root", "DIR"), ("graph refs", "--root", "DIR"),
                                ("graph symbols", "--limit", "N"), ("run", "--model", "SPEC"),
                                ("exec", "--sandbox", "KIND"), ("context-pack", "--git-dir", "DIR")]:
        # plain: "--sandbox KIND"; panels: "--sandbox  -s  KIND"
        assert re.search(rf"{option}(?:,?\s+-\w)?\s+{value}\b", helps[path][1]), (path, option)
    # what the [sandbox] table says now reads as its key, in both layouts (rich would have eaten "[sandbox]")
    assert "sandbox.kind in" in re.sub(r"[\s│]+", " ", helps["exec"][1])


def test_every_model_option_lists_the_spec_forms() -> None:
    helps = all_helps(TYPER_USE_RICH="0")
    # whitespace removed: click wraps a line at a hyphen too ("openai-" / "compat:URL#NAME")
    with_model = {path: "".join(text.split()) for path, (_, text) in helps.items() if "--model SPEC" in text}
    assert {"assist", "run", "team run", "team resume"} <= set(with_model)
    for path, text in with_model.items():
        assert "".join(MODEL_SPECS.split()) in text, path
    assert "openai-compat:URL#NAME" in MODEL_SPECS and "scripted:PATH" in MODEL_SPECS


def test_version_option_prints_the_installed_version(run_tomo) -> None:  # type: ignore[no-untyped-def]
    done = run_tomo("--version")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert (done.returncode, done.stdout, done.stderr) == (0, f"tomo {version('tomo')}\n", "")
    assert version("tomo") == pyproject
    assert "--version" in run_tomo("--help").stdout
