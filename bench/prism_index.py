"""prism alone on real code: cold index, no-change refresh, an index seeded from another checkout, references
query, peak memory.

    python bench/prism_index.py [--data DIR] [--no-write]

Sources are pinned sdists (`pip download --no-binary :all: --no-deps`), unpacked under --data (default
bench/.cache, which git ignores). Each cold index runs in a fresh process with `.tomo/` removed; CPU seconds are
reported next to wall seconds because a shared machine inflates wall time. The peer comparison (jedi, rope,
basedpyright) is bench/graph.py; this script is the quick check of prism's own goals.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

try:
    from bench import _prism_queries as queries
    from bench._report import table, write_section
except ImportError:  # run as `python bench/prism_index.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench import _prism_queries as queries
    from bench._report import table, write_section

PROJECTS = {
    "requests": ("requests==2.34.2",
                 ["requests._internal_utils.to_native_string", "requests.sessions.Session.request"]),
    "flask": ("flask==3.1.3", ["flask.app.Flask.make_response", "flask.app.Flask.test_client"]),
    "django": ("django==5.2.19", ["django.utils.functional.cached_property", "django.db.models.base.Model.full_clean"]),
}

WORKER = r"""
import json, resource, shutil, sys, time
from pathlib import Path
root = Path(sys.argv[1]); symbols = json.loads(sys.argv[2]); mode = sys.argv[3]
seed = Path(sys.argv[4]) if mode == "seeded" else None  # the indexed checkout root's index starts from
if mode in ("cold", "seeded"):
    shutil.rmtree(root / ".tomo", ignore_errors=True)
from tomo.prism import Graph
t0 = time.perf_counter(); c0 = time.process_time()
g = Graph.open(root, seed=seed)
wall = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
out = {"open_s": wall, "cpu_s": time.process_time() - c0 + kids.ru_utime + kids.ru_stime,
       "files": g.stats.files, "parsed": g.stats.parsed, "errors": len(g.errors)}
if mode == "cold":
    t = time.perf_counter(); g.refresh(); out["refresh_s"] = time.perf_counter() - t
    out["queries"] = {}
    for s in symbols:
        times = []
        for _ in range(7):
            t = time.perf_counter(); refs = g.references(s); times.append(time.perf_counter() - t)
        out["queries"][s] = {"first_s": times[0], "median_s": sorted(times)[3], "refs": len(refs),
                             "confirmed": sum(r.confidence == "confirmed" for r in refs)}
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, kids.ru_maxrss)
out["peak_mb"] = peak / 1024
print(json.dumps(out))
"""


def fetch(data: Path, name: str, spec: str) -> Path:
    version = spec.split("==")[1]
    root = data / f"{name}-{version}"
    if root.exists():
        return root
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q", "-d",
                    str(data), spec], check=True)
    archive = next(data.glob(f"{name}-{version}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(data, filter="data")
    return root


def run(root: Path, symbols: list[str], mode: str, *extra: str) -> dict:  # type: ignore[type-arg]
    src = str(Path(__file__).resolve().parents[1] / "src")
    proc = subprocess.run([sys.executable, "-c", WORKER, str(root), json.dumps(symbols), mode, *extra],
                          capture_output=True, text=True, env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(proc.stdout)


def seeded(root: Path, repeats: int) -> list[dict]:  # type: ignore[type-arg]
    """A second checkout of the same files (copied, so every mtime differs, as in a new worktree or clone) indexed
    with ``seed=`` the first one, whose index the cold runs just built."""
    copy = root.with_name(root.name + "-second-checkout")
    try:
        out = []
        for _ in range(repeats):
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".tomo"))
            out.append(run(copy, [], "seeded", str(root)))
        return out
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def load() -> str:
    try:
        with open("/proc/loadavg") as fh:
            return fh.read().split()[0]
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / ".cache")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    rows, qrows, wide = [], [], []
    started = time.strftime("%H:%M:%S")
    loads = [load()]
    for name, (spec, symbols) in PROJECTS.items():
        root = fetch(args.data, name, spec)
        colds = [run(root, symbols, "cold") for _ in range(args.repeats)]
        warm = [run(root, symbols, "warm") for _ in range(args.repeats)]
        second = seeded(root, args.repeats)
        loads.append(load())
        best = min(colds, key=lambda r: r["open_s"])
        rows.append([name, best["files"], best["errors"],
                     f"{min(c['open_s'] for c in colds):.2f} / {statistics.median(c['open_s'] for c in colds):.2f}",
                     f"{min(c['cpu_s'] for c in colds):.2f}",
                     f"{min(c['refresh_s'] for c in colds) * 1000:.0f}",
                     f"{min(w['open_s'] for w in warm) * 1000:.0f}",
                     f"{min(x['open_s'] for x in second):.2f} ({max(x['parsed'] for x in second)} parsed)",
                     f"{max(c['peak_mb'] for c in colds):.0f}"])
        for s in symbols:
            q = [c["queries"][s] for c in colds]
            qrows.append([s, q[0]["refs"], q[0]["confirmed"], f"{min(x['first_s'] for x in q) * 1000:.1f}",
                          f"{min(x['median_s'] for x in q) * 1000:.1f}"])
        print(rows[-1], flush=True)
        wide += queries.rows(root, symbols + queries.WIDE.get(name, []), args.repeats)
        loads.append(load())
    body = (
        table(["project", "files", "files with syntax errors", "cold index s (best / median)",
               "cold CPU s (all procs)", "no-change refresh ms (in process)",
               "Graph.open on existing index ms (new process)",
               "second checkout seeded from the first s (best)", "peak RSS MB (largest process)"], rows)
        + "\n\n"
        + table(["symbol", "references", "confirmed", "first query ms", "repeat query ms (median)"], qrows)
        + f"\n\nGoals (issue 4, Django): cold < 5 s on 2 cores, peak < 500 MB, no-change refresh < 0.5 s, references "
          f"query < 50 ms. A second checkout (a copy of the files: every mtime differs, as in a new worktree "
          f"or clone) opened with `seed=` the first (`tomo graph index --seed DIR`; a team's worktrees do it) "
          f"copies the first's index and hashes every file, parsing none that is the same. "
          f"Load average during the run (started {started}): {', '.join(loads)}; on a shared machine "
          "wall time is inflated, CPU seconds are the steadier figure (2 cores: wall >= CPU / 2)."
        + "\n\n" + table(queries.HEADERS, wide) + "\n\n" + queries.NOTE
    )
    if args.no_write:
        print(body)
    else:
        print(write_section("prism-index", "prism: index and query on real code",
                            "python bench/prism_index.py", body))


if __name__ == "__main__":
    main()
