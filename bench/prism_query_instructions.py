"""How much work a first query does, counted in CPU instructions (valgrind's callgrind), this checkout against another
revision: a figure a shared machine does not blur.

    python bench/prism_query_instructions.py [--against REV] [--data DIR] [SYMBOL:KIND ...]

Wall and CPU time of a 200 ms query move by ±30 % when other processes share the two cores; the instructions a
process executes do not (the hash seed is fixed, so dict order is too). Each figure is the instructions of a fresh
process that opens the warm index and answers one query, minus those of one that only opens it: the first query's
own work. Instructions are not time (a cache miss, a page fault or a system call costs more than it counts), so this
is the check that a change cut work, not the figure the goals are stated in (bench/prism_index.py measures those).
The index is the one bench/prism_index.py builds under --data; the other revision's src/ is taken with `git archive`.
Prints a table; writes nothing into docs/benchmarks.md. Needs valgrind; about 30 s a process.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

try:
    from bench import _prism_queries as queries
    from bench._report import table
    from bench.prism_index import PROJECTS, fetch
except ImportError:  # run as `python bench/prism_query_instructions.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench import _prism_queries as queries
    from bench._report import table
    from bench.prism_index import PROJECTS, fetch

REPO = Path(__file__).resolve().parents[1]
WORKER = r"""
import sys
from tomo.prism import Graph
g = Graph.open(sys.argv[1])
if sys.argv[3] != "none":
    getattr(g, sys.argv[3])(sys.argv[2])
"""


def instructions(src: Path, root: Path, symbol: str, kind: str) -> int:
    """Instructions of one process (callgrind's "Collected"), with bytecode neither read nor written."""
    env = {"PYTHONPATH": str(src), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1"}
    python = os.path.realpath(sys.executable)  # the interpreter itself, not a shim that would be measured instead
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-B", "-c",
                           WORKER, str(root), symbol, kind], capture_output=True, text=True, env=env)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        sys.exit(f"the measured process failed ({src}, {symbol} {kind}):\n{proc.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("jobs", nargs="*", help="SYMBOL:KIND (default: the widest Django names, references and callers)")
    ap.add_argument("--against", default="main", help="the git revision to compare with")
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / ".cache")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    jobs = [tuple(j.rsplit(":", 1)) for j in args.jobs] or [
        (s, k) for s in queries.WIDE["django"] for k in ("references", "callers")]
    root = fetch(args.data, "django", PROJECTS["django"][0])
    with tempfile.TemporaryDirectory(prefix="prism-instr-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.against, "src"], capture_output=True)
        if archive.returncode != 0:
            sys.exit(f"cannot take src/ of `{args.against}`: {archive.stderr.decode(errors='replace').strip()}")
        (Path(tmp) / "src.tar").write_bytes(archive.stdout)
        with tarfile.open(Path(tmp) / "src.tar") as tar:
            tar.extractall(tmp, filter="data")
        sides = {args.against: Path(tmp) / "src", "this checkout": REPO / "src"}
        floor = {name: instructions(src, root, "", "none") for name, src in sides.items()}
        rows: list[list[object]] = []
        for symbol, kind in jobs:
            got = {name: instructions(src, root, symbol, kind) - floor[name] for name, src in sides.items()}
            before, after = got[args.against], got["this checkout"]
            rows.append([symbol, kind, f"{before / 1e6:.0f}", f"{after / 1e6:.0f}", f"{after / before:.2f}"])
            print(rows[-1], file=sys.stderr, flush=True)
    print(table(["symbol", "query", f"{args.against}: M instructions", "this checkout: M instructions", "ratio"],
                rows))


if __name__ == "__main__":
    main()
