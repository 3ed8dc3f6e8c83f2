"""Start-to-exit time of tomo's sandboxes against their peers, measured in the same run.

    python bench/sandbox.py [--runs 200]

Rows: `true` and a 10-line Python block, each run by plain `subprocess.run` (no box), by bare `bwrap` with the strict
box's exact flags, by tomo's LocalSandbox and by tomo's BubblewrapSandbox (`Sandbox.run`, which adds the per-run
cgroups, rlimits, output pump and cleanup), plus a block in a warm persistent Python session. The runs are
interleaved round-robin so machine load hits every row alike. Medians and p90 in milliseconds; ratios against the
peer each box wraps. The warm session is not a start (its box and interpreter are already up), so it is reported
apart from the cold-start table and kept out of its ratio columns.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench._report import table, write_section  # noqa: E402
from tomo.sandbox import BubblewrapSandbox, Limits, LocalSandbox  # noqa: E402

BLOCK = """\
import json, math
data = [i * i for i in range(1000)]
total = sum(data)
mean = total / len(data)
spread = math.sqrt(sum((x - mean) ** 2 for x in data) / len(data))
words = {"total": total, "mean": round(mean, 2), "spread": round(spread, 2)}
text = json.dumps(words, sort_keys=True)
assert json.loads(text)["total"] == total
lines = [f"{k}={v}" for k, v in words.items()]
print(";".join(lines))
"""


async def measure(runs: int, ws: Path) -> dict[str, list[float]]:
    limits = Limits(timeout_s=30)
    local, strict = LocalSandbox(limits), BubblewrapSandbox(limits)
    python = strict.python
    bare = strict.box_args(ws)
    session = strict.session(ws, limits)
    await session.start()

    def sync(argv: list[str]) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, done.stdout

        return go

    def boxed(box: LocalSandbox | BubblewrapSandbox, code: str | list[str], lang: str) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            result = await box.run(code, lang, ws)
            assert result.exit_code == 0, result

        return go

    async def in_session() -> None:
        result = await session.run(BLOCK)
        assert result.exit_code == 0, result

    cases: dict[str, Callable[[], Awaitable[None]]] = {
        "true · plain subprocess": sync(["true"]),
        "true · bare bwrap": sync([*bare, "--", "true"]),
        "true · tomo local": boxed(local, ["true"], "argv"),
        "true · tomo strict": boxed(strict, ["true"], "argv"),
        "python · plain subprocess": sync([python, "-u", "-c", BLOCK]),
        "python · bare bwrap": sync([*bare, "--", python, "-u", "-c", BLOCK]),
        "python · tomo local": boxed(local, BLOCK, "python"),
        "python · tomo strict": boxed(strict, BLOCK, "python"),
        f"python · {WARM}": in_session,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for case in cases.values():  # warm-up
        await case()
    for _ in range(runs):
        for name, case in cases.items():
            start = time.perf_counter()
            await case()
            times[name].append(time.perf_counter() - start)
    await session.close()
    return times


WARM = "tomo strict session (warm)"


def bwrap_version() -> str:
    """The peer's version as installed (``bwrap --version``), not written by hand."""
    from tomo.sandbox.bwrap import find_bwrap

    found = find_bwrap()
    if found is None:
        return "bwrap not installed"
    out = subprocess.run([found, "--version"], capture_output=True, text=True).stdout.strip()
    return f"{out or 'bwrap (version unknown)'} at {found}"


def ms(values: list[float], q: float = 0.5) -> float:
    if q == 0.5:
        return statistics.median(values) * 1000
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tomo-bench-", dir="/var/tmp") as tmp:
        times = asyncio.run(measure(args.runs, Path(tmp)))
    load_after = os.getloadavg()[0]
    med = {name: ms(values) for name, values in times.items()}
    peer = {"tomo local": "plain subprocess", "tomo strict": "bare bwrap", "bare bwrap": "plain subprocess"}
    rows = []
    for name, values in times.items():
        what, runner = name.split(" · ")
        if runner == WARM:
            continue
        base = peer.get(runner)
        ratio = f"{med[name] / med[f'{what} · {base}']:.2f}× {base}" if base else "—"
        delta = f"{med[name] - med[f'{what} · {base}']:+.1f}" if base else "—"
        vs_plain = f"{med[name] / med[f'{what} · plain subprocess']:.1f}×" if runner != "plain subprocess" else "1.0×"
        rows.append([what, runner, f"{med[name]:.1f}", f"{ms(values, 0.9):.1f}", ratio, delta, vs_plain])
    headers = ["run", "runner", "median ms", "p90 ms", "ratio to its peer", "Δ ms vs peer", "vs plain"]
    body = "Cold starts: each run starts its box and its process.\n\n" + table(headers, rows)
    warm = times[f"python · {WARM}"]
    body += (
        "\n\nNot a start: the same 10-line block sent to a strict box whose Python session is already running "
        "(`BubblewrapSandbox.session`), what an engine pays per block after the first. It has no peer and is not a "
        "ratio of the cold rows above.\n\n"
        + table(["run", "runner", "median ms", "p90 ms"],
                [["python", WARM, f"{ms(warm):.1f}", f"{ms(warm, 0.9):.1f}"]])
    )
    body += (
        f"\n\n{args.runs} interleaved runs per row, warm session included; {bwrap_version()}. The machine was shared "
        f"({os.cpu_count()} cores, used by other sessions during the run; load average {load_before:.1f} before, "
        f"{load_after:.1f} after), so absolute figures move from run to run; ratios from the same run are the "
        "comparison. "
        "`tomo strict` = `BubblewrapSandbox.run`: the bare bwrap flags (which already hide $HOME and /root and mask "
        "secret files), plus the seccomp filter, a per-run pids+memory cgroup and rlimits (both set by one sh shim "
        "before bwrap), the output pump and the leftover check. `tomo local` = `LocalSandbox.run`: a Python launcher "
        "(subreaper) that sets rlimits and kills the tree. The 10-line block is in bench/sandbox.py."
    )
    print(body)
    if not args.no_write:
        path = write_section("sandbox", "Sandbox start-to-exit time", "python bench/sandbox.py", body)
        print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
