"""Run a worker subprocess and measure its whole process tree: wall time and peak resident memory.

Peak memory is the larger of (a) the tree's summed RSS sampled every 50 ms from /proc (catches parallel workers and
basedpyright's Node process) and (b) the ru_maxrss the worker reports for itself and its waited-for children.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

PAGE = os.sysconf("SC_PAGE_SIZE")
REPO = Path(__file__).resolve().parents[2]


def _tree_rss(root_pid: int) -> int:
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/statm") as f:
                rss[int(entry)] = int(f.read().split()[1]) * PAGE
        except OSError:
            continue
        parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(p for p, pp in parent.items() if pp == pid)
    return total


def worker_env() -> dict[str, str]:
    """The caller's PYTHONPATH first (to measure another checkout's prism), then this checkout."""
    env = dict(os.environ)
    paths = [str(REPO), str(REPO / "src")]
    env["PYTHONPATH"] = os.pathsep.join([*([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []), *paths])
    return env


def run_worker(job: dict[str, Any], timeout: float = 900) -> dict[str, Any]:
    """Run ``bench.graph_peers.worker`` on ``job``; return its JSON result plus ``wall_s`` and ``peak_mb``."""
    env = worker_env()
    load = os.getloadavg()[0]  # other work on the machine skews wall times; the report shows it
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.graph_peers.worker", json.dumps(job)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return {"error": f"timed out after {timeout:.0f} s", "wall_s": timeout, "peak_mb": peak / 2**20}
    finally:
        done.set()
        sampler.join()
    wall = time.perf_counter() - t0
    lines = [line for line in out.splitlines() if line.startswith("{")]
    result: dict[str, Any] = json.loads(lines[-1]) if lines else {"error": f"no result; stderr: {err[-800:]}"}
    reported = max(result.get("maxrss_kb", 0), result.get("children_maxrss_kb", 0)) * 1024
    result["wall_s"] = wall
    result["load1"] = max(load, os.getloadavg()[0])
    result["peak_mb"] = max(peak, reported) / 2**20
    return result
