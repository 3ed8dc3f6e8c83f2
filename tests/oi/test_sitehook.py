"""The exec gate's site hook on every Python it may meet: settrace on 3.11, sys.monitoring on 3.12+.

The hook runs inside whatever interpreter the project uses, not tomo's, so it is exercised here under each CPython
this machine has (tomo's own, and any 3.12/3.13 found on PATH or in pyenv), in the real strict box.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oi.oi_support import require_bwrap
from tomo.oi.gates import HOOK_SOURCE
from tomo.oi.workspace import SKIP_DIRS
from tomo.sandbox import BubblewrapSandbox, Limits


def interpreters() -> list[str]:
    found = {sys.executable}
    for version in ("3.12", "3.13"):
        pyenv = sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}*/bin/python{version}"))
        for candidate in [*pyenv, shutil.which(f"python{version}")]:
            if candidate and "/shims/" not in candidate:  # a pyenv shim fails unless its version is selected
                found.add(candidate)
                break
    return sorted(found)


MODULE = """\
def used(x):
    if x > 0:
        return x + 1
    return -1


def unused():
    return 0
"""
SCRIPT = ("import mod\nimport threading\nt = threading.Thread(target=mod.used, args=(1,))\nt.start(); t.join()\n"
          "import multiprocessing as mp\np = mp.get_context('fork').Process(target=mod.used, args=(-1,))\n"
          "p.start(); p.join()\n")
"""mod.used runs in a thread (line 3), and in a forked worker that leaves through os._exit (line 4)."""


@pytest.mark.parametrize("python", interpreters())
def test_the_hook_records_changed_lines_that_ran_and_files_that_ran(python, tmp_path):
    require_bwrap()
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    ws = tmp_path / "ws"
    (ws / ".tomo" / "oi" / "hook").mkdir(parents=True)
    (ws / ".tomo" / "oi" / "trace").mkdir()
    shutil.copyfile(HOOK_SOURCE, ws / ".tomo" / "oi" / "hook" / "sitecustomize.py")
    (ws / "mod.py").write_text(MODULE)
    (ws / "other.py").write_text("VALUE = 1\n")
    (ws / "main.py").write_text("import other\n" + SCRIPT)
    trace = ws / ".tomo" / "oi" / "trace"
    (trace / "watch.json").write_text(json.dumps({"root": str(ws), "files": [str(ws / "mod.py")],
                                                  "skip_dirs": sorted(SKIP_DIRS)}))
    box = BubblewrapSandbox(Limits(timeout_s=30), python=python)
    argv = ["/usr/bin/env", f"PYTHONPATH={ws / '.tomo' / 'oi' / 'hook'}", f"TOMO_OI_TRACE={trace}", python,
            "main.py"]
    result = box.run_sync(argv, "argv", ws)
    assert result.exit_code == 0, (version, result.output)
    written = sorted(trace.glob("trace-*.json"))
    assert len(written) == 2, version  # the process and its forked worker
    runs = [json.loads(path.read_text()) for path in written]
    lines = set().union(*(run["lines"].get(str(ws / "mod.py"), []) for run in runs))
    assert {2, 3, 4} <= lines and 8 not in lines, version
    data = next(run for run in runs if run["argv"][0].endswith("main.py"))
    assert set(data["ran"]) == {str(ws / "main.py"), str(ws / "mod.py"), str(ws / "other.py")}, version
    assert str(ws / "other.py") not in data["lines"]  # not watched: no line events
    worker = next(run for run in runs if run is not data)
    assert 4 in worker["lines"][str(ws / "mod.py")]  # only the worker took the x <= 0 branch


def test_without_the_variable_the_hook_does_nothing(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    shutil.copyfile(HOOK_SOURCE, hook / "sitecustomize.py")
    done = subprocess.run([sys.executable, "-c", "import sys; print(sys.gettrace())"], capture_output=True, text=True,
                          env={"PYTHONPATH": str(hook), "PATH": "/usr/bin:/bin"}, check=True)
    assert done.stdout.strip() == "None" and not done.stderr
