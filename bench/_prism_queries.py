"""prism's queries on a warm index: references, callers and impact, first (in a fresh process) and repeated.

Shared by bench/prism_index.py (its one command writes the table into docs/benchmarks.md) and bench/prism_answers.py
(the check that a change to the query code leaves every answer as it was). The widest Django names are the
queries that touch the most files: ``QuerySet.filter`` alone has 2,831 references in 261 files.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

KINDS = ("references", "callers", "impact")
WIDE = {
    "django": ["django.db.models.query.QuerySet.filter", "django.db.models.base.Model.save",
               "django.db.models.fields.Field.__init__", "django.http.response.HttpResponse",
               "django.urls.base.reverse"],
}
REPEATS = 9

# One process per (symbol, kind): the first query is the first this process answers, as for `tomo graph refs`.
WORKER = r"""
import json, sys, time
from tomo.prism import Graph
root, symbol, kind, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
g = Graph.open(root)
query = getattr(g, kind)
t = time.perf_counter(); c = time.process_time()
got = query(symbol)
first, first_cpu = time.perf_counter() - t, time.process_time() - c
times = []
for _ in range(repeats):
    t = time.perf_counter(); query(symbol); times.append(time.perf_counter() - t)
conf = [x for x in got if getattr(x, "confidence", None) == "confirmed"
        or getattr(getattr(x, "reference", None), "confidence", None) == "confirmed"]
print(json.dumps({"first_s": first, "first_cpu_s": first_cpu, "repeat_s": sorted(times)[len(times) // 2],
                  "rows": len(got), "confirmed": len(conf)}))
"""


def measure(root: Path, symbol: str, kind: str) -> dict:  # type: ignore[type-arg]
    src = str(Path(__file__).resolve().parents[1] / "src")
    proc = subprocess.run([sys.executable, "-c", WORKER, str(root), symbol, kind, str(REPEATS)], capture_output=True,
                          text=True, env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def rows(root: Path, symbols: list[str], repeats: int) -> list[list[object]]:
    """One table row per symbol and query kind: the best and median first query over ``repeats`` fresh processes."""
    out: list[list[object]] = []
    for symbol in symbols:
        for kind in KINDS:
            runs = [measure(root, symbol, kind) for _ in range(repeats)]
            first = sorted(r["first_s"] for r in runs)
            out.append([symbol, kind, runs[0]["rows"], runs[0]["confirmed"],
                        f"{first[0] * 1000:.0f} / {statistics.median(first) * 1000:.0f}",
                        f"{min(r['first_cpu_s'] for r in runs) * 1000:.0f}",
                        f"{min(r['repeat_s'] for r in runs) * 1000:.2f}"])
    return out


HEADERS = ["symbol", "query", "rows", "confirmed", "first ms, fresh process (best / median)", "first CPU ms (best)",
           f"repeated ms (median of {REPEATS}, same Graph)"]
NOTE = ("Queries on a warm index: each first query in its own fresh process (Graph.open on the existing index, then "
        "the query), then repeated on the same Graph. A Graph keeps its answers per symbol until the index changes "
        "(its own refresh or apply, or another connection's commit), so a repeat is a lookup: the first figure is the "
        "cost of resolving. Goals (issue 15): under 200 ms first, under 20 ms repeated.")
