"""How long the `tomo` command takes end to end, against the interpreter's own start-up.

    python bench/cli_startup.py [--runs N] [--baseline REV] [--python PY] [--no-django] [--data DIR] [--no-write]

Every figure is the median wall time of N fresh processes, run round-robin so that a noisy neighbour slows every
command alike, and is also given as a ratio to `python -c pass` (the floor no Python command line can beat on this
machine). Measured: `tomo --help`, `tomo version`, `tomo graph refs NAME` on a warm index (the bundled example project
and, unless --no-django, Django 5.2, from the pinned sdist bench/graph.py uses), each through `python -m tomo` and
through the console script's own entry (`from tomo.cli import main`). The commands' output goes to a pipe, so
`--help` is click's plain help (tomo.cli: a pipe gets no panels) and listings are plain text (cli/rows.py); one row
forces the panels a terminal gets. Peers in the same run: a two-command typer app's `--help` (the floor for a typer
command line with rich help), importing jedi and rope, and `basedpyright --version`.

--baseline REV also measures the tomo of another commit (its src/ exported with `git archive`) in the same run, so
before and after share the machine's noise. --python PY also measures this checkout's tomo under another
interpreter, e.g. a venv holding another typer (`python -m venv --system-site-packages /tmp/t28 &&
/tmp/t28/bin/pip install --no-deps typer==0.28.0`: the last typer before 0.29 coerced every parameter through
pydantic). Each tomo under test gets its own copies
of the projects, indexed once before measuring, so every `graph refs` reads a warm index.

Bytecode: every command runs with Python's bytecode cache on, kept in a private PYTHONPYCACHEPREFIX (an installed
tomo has its .pyc files; the unmeasured first run of each command writes them here). The rows marked "no .pyc" run
with PYTHONDONTWRITEBYTECODE=1 and no prefix, as a checkout runs where that variable is set (this machine's
environment sets it): every tomo module is then compiled from source on every run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

try:
    from bench._report import table, write_section
except ImportError:  # run as `python bench/cli_startup.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._report import table, write_section

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "shop"
EXAMPLE_SYMBOL = "shop.lines.OrderLine.total"
DJANGO_SYMBOL = "django.utils.functional.cached_property"
# the console script pip writes for `tomo = "tomo.cli:main"`, minus its argv[0] rewrite
SCRIPT = "import sys; from tomo.cli import main; sys.argv[0] = 'tomo'; sys.exit(main())"
TYPER_APP = """
import typer
app = typer.Typer(no_args_is_help=True, add_completion=False)
@app.command()
def a(x: str = typer.Option("", help="an option")) -> None:
    '''The first command.'''
@app.command()
def b() -> None:
    '''The second command.'''
app()
"""

Cmd = tuple[str, list[str], dict[str, str]]  # label, argv, extra environment


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def export_src(rev: str, dest: Path) -> Path:
    """``git archive REV src`` unpacked under ``dest``: the package of another commit, without a checkout."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "src"],
                             check=True, capture_output=True).stdout
    tar_path = dest / "src.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="data")
    return dest / "src"


PYC: dict[str, str] = {}  # the bytecode-cache environment of every measured command; main() fills it


def head_label() -> str:
    """This checkout's commit, with a + when its src/ has changes not committed."""
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", "HEAD", "--", "src"]).returncode != 0
    return (rev.stdout.strip() or "this checkout") + ("+" if dirty else "")


def tomo_env(src: Path, *, pyc: bool = True) -> dict[str, str]:
    env = {"PYTHONPATH": str(src), "COLUMNS": "120", "NO_COLOR": "1"}
    return {**env, **PYC} if pyc else {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": ""}


def run_once(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return seconds


def prepare_project(source: Path, dest: Path, src: Path) -> Path:
    """A private copy of ``source`` with a warm index built by the tomo under test."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".tomo", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "tomo", "graph", "index", "--root", str(dest), "--json"],
                          env={**os.environ, **tomo_env(src)}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"indexing {dest} failed: {done.stderr[-2000:]}")
    return dest


def tomo_commands(tag: str, src: Path, projects: dict[str, tuple[Path, str]], py: str = sys.executable) -> list[Cmd]:
    env = tomo_env(src)
    cmds: list[Cmd] = [
        (f"{tag} `tomo --help` (-m tomo)", [py, "-m", "tomo", "--help"], env),
        (f"{tag} `tomo --help` (console script)", [py, "-c", SCRIPT, "--help"], env),
        (f"{tag} `tomo --help` (console script, no .pyc)", [py, "-c", SCRIPT, "--help"], tomo_env(src, pyc=False)),
        # a pipe gets plain help; this is the layout a terminal gets (typer's panels), forced by typer's own switch
        (f"{tag} `tomo --help` (console script, rich panels as on a terminal)", [py, "-c", SCRIPT, "--help"],
         {**env, "TYPER_USE_RICH": "1"}),
        (f"{tag} `tomo version` (console script)", [py, "-c", SCRIPT, "version"], env),
        (f"{tag} `tomo graph --help` (console script)", [py, "-c", SCRIPT, "graph", "--help"], env),
    ]
    for name, (root, symbol) in projects.items():
        refs = ["graph", "refs", symbol, "--root", str(root)]
        cmds += [
            (f"{tag} `tomo graph refs` {name}, warm (-m tomo)", [py, "-m", "tomo", *refs], env),
            (f"{tag} `tomo graph refs` {name}, warm (console script)", [py, "-c", SCRIPT, *refs], env),
            (f"{tag} `tomo graph refs` {name}, warm (console script, no .pyc)", [py, "-c", SCRIPT, *refs],
             tomo_env(src, pyc=False)),
            (f"{tag} `tomo graph refs --json` {name}, warm (console script)", [py, "-c", SCRIPT, *refs, "--json"], env),
        ]
    return cmds


def peer_commands(work: Path) -> list[Cmd]:
    py = sys.executable
    app = work / "typer_app.py"
    app.write_text(TYPER_APP, encoding="utf-8")
    cmds: list[Cmd] = [
        ("peer: a two-command typer app, `--help`", [py, str(app), "--help"], PYC),
        ("peer: a two-command typer app, running `a --x 1`", [py, str(app), "a", "--x", "1"], PYC),
    ]
    for module, label in (("jedi", "jedi"), ("rope.base.project", "rope")):
        if subprocess.run([py, "-c", f"import {module}"], capture_output=True).returncode == 0:
            cmds.append((f"peer: `python -c 'import {module}'` ({label})", [py, "-c", f"import {module}"], PYC))
        else:
            log(f"{label} is not installed: left out")
    bp = shutil.which("basedpyright")
    if bp and subprocess.run([bp, "--version"], capture_output=True).returncode == 0:
        cmds.append(("peer: `basedpyright --version`", [bp, "--version"], PYC))
    else:
        log("basedpyright is not installed: left out")
    return cmds


def django_root(data: Path) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    from graph_peers.data import fetch  # the same pinned sdist bench/graph.py measures

    return fetch(data, ["django"])["django"]


def typer_version(python: str) -> str:
    return subprocess.run([python, "-c", "import typer; print(typer.__version__)"], capture_output=True, text=True,
                          check=True).stdout.strip()


def measure(cmds: list[Cmd], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label, _, _ in cmds}
    for _, argv, env in cmds:  # one unmeasured run each: disk caches, .pyc files
        run_once(argv, env)
    for i in range(runs):
        log(f"round {i + 1}/{runs}")
        for label, argv, env in cmds:
            times[label].append(run_once(argv, env))
    return times


def render(times: dict[str, list[float]], floor: str, runs: int, load: tuple[float, float]) -> str:
    base = statistics.median(times[floor])
    rows = []
    for label, xs in times.items():
        med = statistics.median(xs)
        rows.append([label, f"{med * 1000:.0f} ms", f"{min(xs) * 1000:.0f} ms", f"{med / base:.1f}×",
                     f"{(med - base) * 1000:+.0f} ms"])
    body = table(["command", "median", "best", "× floor", "over floor"], rows)
    note = (f"\n\nMedian and best of {runs} fresh processes each, run round-robin. The machine was shared: "
            f"{os.cpu_count()} cores used by other sessions while this ran (1-minute load {load[0]:.1f} before, "
            f"{load[1]:.1f} after), so read the ratios to the floor rather than the milliseconds. "
            "Output goes to a pipe (a table, not a terminal); `--json` prints the same rows as JSON. "
            f"Rows without a typer version use this interpreter's typer {typer_version(sys.executable)}.")
    return body + note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15, help="processes per command (median reported)")
    ap.add_argument("--baseline", metavar="REV", help="also measure the tomo of this commit, in the same run")
    ap.add_argument("--python", metavar="PY", help="also measure this checkout under another interpreter (a venv)")
    ap.add_argument("--no-django", action="store_true", help="the example project only")
    ap.add_argument("--data", type=Path, default=REPO / "bench" / ".cache", help="where the Django sdist is kept")
    ap.add_argument("--no-write", action="store_true", help="print the section instead of writing docs/benchmarks.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tomo-cli-bench-") as tmp:
        work = Path(tmp)
        sources = {f"{head_label()}:": REPO / "src"}
        if args.baseline:
            (work / "baseline").mkdir()
            sources[f"{args.baseline}:"] = export_src(args.baseline, work / "baseline")
        PYC.update({"PYTHONPYCACHEPREFIX": str(work / "pycache"), "PYTHONDONTWRITEBYTECODE": ""})
        django = None if args.no_django else django_root(args.data.resolve())
        floor = "floor: `python -c pass`"
        cmds: list[Cmd] = [(floor, [sys.executable, "-c", "pass"], PYC)]
        for n, (tag, src) in enumerate(sources.items()):
            log(f"indexing the projects for {tag} {src}")
            projects = {"example": (prepare_project(EXAMPLE, work / f"shop{n}", src), EXAMPLE_SYMBOL)}
            if django:
                projects["django"] = (prepare_project(django, work / f"django{n}", src), DJANGO_SYMBOL)
            cmds += tomo_commands(tag, src, projects)
            if args.python and n == 0:
                cmds += tomo_commands(f"{tag[:-1]}, typer {typer_version(args.python)}:", src, projects,
                                      py=args.python)
        cmds += peer_commands(work)
        load0 = os.getloadavg()[0]
        times = measure(cmds, args.runs)
        load1 = os.getloadavg()[0]
    body = render(times, floor, args.runs, (load0, load1))
    command = "python bench/cli_startup.py" + (f" --baseline {args.baseline}" if args.baseline else "")
    command += " --no-django" if args.no_django else ""
    command += f" --python {args.python}" if args.python else ""
    if args.no_write:
        print(body)
    else:
        print(write_section("cli-startup", "Command-line start-up: tomo against the interpreter's floor",
                            command, body))
        print(body)


if __name__ == "__main__":
    main()
