"""A bad ``--root`` reads the same in every verb: one error line naming the path and why, exit 2 (exec: 125).

One fresh interpreter runs the real entry point (``tomo.cli.main``) for every command that has a ``--root`` option,
found by walking the whole command line, with a root that does not exist and one that is a file. A verb added later
with a ``--root`` is walked without being named here; the test fails if it does not follow the rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

DRIVER = r"""
import contextlib, io, json, sys
import typer
import tomo.cli
from tomo.cli import main

tomo.cli._register()

def with_root(command, path=()):
    if any("--root" in getattr(p, "opts", ()) for p in command.params):
        yield list(path)
    for name, sub in getattr(command, "commands", {}).items():
        yield from with_root(sub, (*path, name))

root = typer.main.get_command(tomo.cli.app)
verbs = [tomo.cli.LazyGroup.get_command(root, None, name) for name in list(root.commands)]
paths = [p for name, cmd in zip(list(root.commands), verbs) for p in with_root(cmd, (name,))]
arguments = {"run": ["fix it"], "assist": ["rename a to b"], "context-pack": ["the task"], "exec": [],
             "graph symbols": ["x"], "graph def": ["x"], "graph refs": ["x"], "graph callers": ["x"],
             "graph callees": ["x"], "graph impact": ["x"], "graph rename-plan": ["x", "y"],
             "graph rename": ["x", "y"]}
results = {}
bads = sys.argv[1:]
for path in paths:
    for bad in bads:
        tail = ["--", "true"] if path == ["exec"] else []
        sys.argv = ["tomo", *path, *arguments.get(" ".join(path), []), "--root", bad, *tail]
        out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()  # exec writes bytes
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code
        out.flush()
        results[" ".join(path) + " @ " + bad] = [code, out.buffer.getvalue().decode(), err.getvalue()]
sys.__stdout__.write(json.dumps({"paths": [" ".join(p) for p in paths], "results": results}))
"""


def test_a_bad_root_is_one_line_and_a_usage_error_in_every_verb(tmp_path: Path) -> None:
    missing = tmp_path / "no such dir"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a project\n")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TYPER_USE_RICH")}
    env.update(PYTHONPATH=str(REPO / "src"), COLUMNS="80", TOMO_MODEL="scripted:/nonexistent.json")
    done = subprocess.run([sys.executable, "-c", DRIVER, str(missing), str(a_file)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # every verb that takes --root was walked, the graph's sub-commands each
    assert {"run", "assist", "exec", "context-pack", "mcp", "graph index", "graph refs", "graph rename"} \
        <= set(found["paths"])
    for key, (code, out, err) in found["results"].items():
        path, bad = key.split(" @ ")
        why = "does not exist" if bad == str(missing) else "is not a directory"
        assert code == (125 if path == "exec" else 2), (key, code, err)
        assert out == "", key
        assert err.count("\n") == 1 and err.startswith(f"error: --root {bad} {why}"), (key, err)
    assert len(found["results"]) == 2 * len(found["paths"])
