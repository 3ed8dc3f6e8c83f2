"""Runs one tool on one job in its own process: ``python -m bench.graph_peers.worker '<json job>'``.

The parent (bench/graph.py) measures this process tree's peak memory; the worker prints one JSON line as its result.
"""

from __future__ import annotations

import json
import resource
import sys
import traceback
from pathlib import Path
from typing import Any

from bench.graph_peers import peers
from bench.graph_peers.data import Target


def run(job: dict[str, Any]) -> dict[str, Any]:
    tool, root, project = job["tool"], Path(job["root"]), job["project"]
    cache = Path(job.get("cache", "/tmp/bench-jedi-cache"))
    if job["mode"] == "refs":
        targets = [Target(**t) for t in job["targets"]]
        repeats = int(job.get("repeats", 3))
        if tool == "jedi":
            return peers.jedi_refs(root, project, targets, repeats, cache)
        if tool in ("rope", "rope-unsure"):
            return peers.rope_refs(root, project, targets, repeats, unsure=tool == "rope-unsure")
        if tool == "basedpyright":
            return peers.pyright_refs(root, project, targets, repeats)
        if tool == "prism":
            return peers.prism_refs(root, project, targets, repeats)
    elif job["mode"] == "rename":
        target, new = Target(**job["target"]), job["new"]
        if tool == "jedi":
            return peers.jedi_rename(root, project, target, new, cache)
        if tool in ("rope", "rope-unsure"):
            return peers.rope_rename(root, project, target, new, unsure=tool == "rope-unsure")
        if tool == "basedpyright":
            return peers.pyright_rename(root, project, target, new)
        if tool == "prism":
            return peers.prism_rename(root, project, target, new)
    raise ValueError(f"unknown tool/mode {tool}/{job['mode']}")


def main() -> None:
    job = json.loads(sys.argv[1])
    try:
        result = run(job)
    except Exception as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"[:500], "traceback": traceback.format_exc()[-2000:]}
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    result["cpu_s"] = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    result["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["children_maxrss_kb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
