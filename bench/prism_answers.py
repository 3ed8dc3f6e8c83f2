"""Check that prism's answers did not change: references, callers and impact of the bench symbols, the widest
Django names and every call-site target of bench/callsites.py, row for row, between another revision's code (default:
main) and this checkout's.

    python bench/prism_answers.py [--data DIR] [--against REV] [--calls DIR] [--projects a,b]

The other revision's src/ is taken with `git archive` into a temporary directory. This checkout's answers are taken
three ways, since a Graph keeps answers and stored facts between queries: every query in one process in order, in
reverse order, and each on a freshly opened Graph. Both sides read the same index under --data (the projects
bench/prism_index.py downloads), so only the query code differs. The call-site targets (click, flask, ... as
recorded in bench/data/callsites.json) are asked in the checkouts bench/callsites.py scores (``--calls``, default
/tmp/calls/src/<project> at the recorded commit; a project without one is said and skipped). Prints one line per
query; exits 1 on any difference. A correctness check, not a benchmark: it writes nothing into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

try:
    from bench import _prism_queries as queries
    from bench.graph_peers.data import RENAMES, SYMBOLS
    from bench.prism_index import PROJECTS, fetch
except ImportError:  # run as `python bench/prism_answers.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench import _prism_queries as queries
    from bench.graph_peers.data import RENAMES, SYMBOLS
    from bench.prism_index import PROJECTS, fetch

REPO = Path(__file__).resolve().parents[1]
CALLSITES = REPO / "bench" / "data" / "callsites.json"

WORKER = r"""
import json, sys
from dataclasses import asdict
from tomo.prism import Graph
root, order = sys.argv[1], sys.argv[2]
jobs = json.loads(sys.argv[3])
if order == "reverse":
    jobs.reverse()
out = {}
g = Graph.open(root)
for symbol, kind in jobs:
    if order == "fresh":
        g.close()
        g = Graph.open(root)
    out[f"{symbol} {kind}"] = [asdict(x) for x in getattr(g, kind)(symbol)]
g.close()
print(json.dumps(out))
"""


def answers(src: Path, root: Path, jobs: list[tuple[str, str]], order: str) -> dict[str, list[object]]:
    proc = subprocess.run([sys.executable, "-c", WORKER, str(root), order, json.dumps(jobs)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"})
    if proc.returncode != 0:
        sys.exit(f"the query worker failed with {src}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def projects(data: Path, calls: Path, only: set[str]) -> list[tuple[str, Path, list[str]]]:
    """(project, root, symbols) to ask: the sdists of bench/prism_index.py with the bench symbols of it and of
    bench/graph.py (references and renames) and the wide names, then the checkouts of bench/callsites.py with their
    recorded targets."""
    out = []
    for name, (spec, symbols) in PROJECTS.items():
        if only and name not in only:
            continue
        names = [*symbols, *SYMBOLS.get(name, []), *(r for r in RENAMES if r.startswith(name + ".")),
                 *queries.WIDE.get(name, [])]
        out.append((name, fetch(data, name, spec), names))
    for name, truth in json.loads(CALLSITES.read_text()).items():
        if only and name not in only:
            continue
        root = calls / name
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.stdout.strip() != truth["commit"]:
            print(f"{name}: no checkout of {truth['repo']} at {truth['commit'][:12]} in {root}: skipped", flush=True)
            continue
        out.append((f"{name} (callsites)", root, [t.replace(":", ".") for t in truth["targets"]]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / ".cache")
    ap.add_argument("--against", default="main", help="the git revision whose answers are the reference")
    ap.add_argument("--calls", type=Path, default=Path("/tmp/calls/src"),
                    help="checkouts of bench/callsites.py's projects (default: %(default)s)")
    ap.add_argument("--projects", default="", help="only these projects (comma-separated; default: all)")
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    differ = asked = 0
    with tempfile.TemporaryDirectory(prefix="prism-answers-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.against, "src"], capture_output=True)
        if archive.returncode != 0:
            sys.exit(f"cannot take src/ of `{args.against}`: {archive.stderr.decode(errors='replace').strip()}")
        archive_path = Path(tmp) / "src.tar"
        archive_path.write_bytes(archive.stdout)
        with tarfile.open(archive_path) as tar:
            tar.extractall(tmp, filter="data")
        base_src = Path(tmp) / "src"
        for name, root, names in projects(args.data, args.calls, set(filter(None, args.projects.split(",")))):
            jobs = [(s, k) for s in dict.fromkeys(names) for k in queries.KINDS]
            before = answers(base_src, root, jobs, "forward")
            after = {order: answers(REPO / "src", root, jobs, order) for order in ("forward", "reverse", "fresh")}
            for symbol, kind in jobs:
                key = f"{symbol} {kind}"
                bad = [order for order, got in after.items() if got[key] != before[key]]
                differ += bool(bad)
                asked += 1
                verdict = "same" if not bad else "DIFFERENT (" + ", ".join(bad) + ")"
                print(f"{name}: {key}: {len(before[key])} rows, {verdict}", flush=True)
    print(f"{differ} of {asked} answers differ from {args.against}'s" if differ else
          f"all {asked} answers are the same as {args.against}'s, row for row (three orders)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
