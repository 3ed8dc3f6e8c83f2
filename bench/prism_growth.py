"""prism at ten times Django: cold index of ten renamed copies, and the refresh after a checkout that changes N files.

    python bench/prism_growth.py [--data DIR] [--work DIR] [--copies 10] [--no-write]

Django 5.2's indexed files (the pinned sdist bench/prism_index.py uses, unpacked under --data) are copied ten times
into --work (default DATA/growth), copy K as ``dK/`` with the package renamed ``djangoK`` (every ``django`` word in
the Python sources too, so each copy imports itself). The tree is committed to git; for each N in 1, 100, 1000 a
commit changes N Python files (a function appended). Every measurement runs in a fresh process: Django cold, the
ten copies cold, a no-change refresh, and for each N ``git checkout`` of that commit then ``Graph.open`` (the
refresh), compared with N files' share of the cold index. CPU seconds are reported beside wall seconds: a shared
machine inflates wall time.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

try:
    from bench._report import table, write_section
    from bench.prism_index import PROJECTS, fetch, load
except ImportError:  # run as `python bench/prism_growth.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._report import table, write_section
    from bench.prism_index import PROJECTS, fetch, load

SRC = Path(__file__).resolve().parents[1] / "src"
CHANGES = (1, 100, 1000)

WORKER = r"""
import json, resource, shutil, sys, time
from pathlib import Path
root = Path(sys.argv[1]); mode = sys.argv[2]
if mode == "cold":
    shutil.rmtree(root / ".tomo", ignore_errors=True)
from tomo.prism import Graph
t0 = time.perf_counter(); c0 = time.process_time()
g = Graph.open(root)
wall = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": time.process_time() - c0 + kids.ru_utime + kids.ru_stime,
                  "files": g.stats.files, "parsed": g.stats.parsed, "skipped": g.stats.skipped,
                  "phases": g.stats.phases,
                  "peak_mb": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, kids.ru_maxrss) / 1024}))
g.close()
"""


def measure(root: Path, mode: str) -> dict:  # type: ignore[type-arg]
    proc = subprocess.run([sys.executable, "-c", WORKER, str(root), mode], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "gc.auto=0", *args],
                   cwd=root, check=True, capture_output=True)


def indexed_files(django: Path) -> list[str]:
    """The files prism indexes in Django (its own walk, so the copies hold exactly those)."""
    sys.path.insert(0, str(SRC))
    from tomo.prism.files import walk

    return [f.path for f in walk(str(django))]


def build_tree(django: Path, work: Path, copies: int) -> Path:
    root = work / f"django-x{copies}"
    stamp = root / ".growth-ready"
    if stamp.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    files = indexed_files(django)
    word = re.compile(rb"\bdjango\b")
    for k in range(copies):
        for rel in files:
            parts = rel.split("/")
            parts = [f"django{k}" if p == "django" else p for p in parts]
            dest = root / f"d{k}" / "/".join(parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = (django / rel).read_bytes()
            if rel.endswith(".py"):
                data = word.sub(f"django{k}".encode(), data)
            dest.write_bytes(data)
    git(root, "init", "-q", "-b", "base")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "ten copies")
    py = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    for n in CHANGES:
        git(root, "checkout", "-q", "-b", f"change-{n}", "base")
        step = max(1, len(py) // n)
        for i, rel in enumerate(py[::step][:n]):
            with open(root / rel, "a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef _growth_probe_{n}_{i}():\n    return {i}\n")
        git(root, "commit", "-q", "-am", f"change {n} files")
        git(root, "checkout", "-q", "base")
    stamp.write_text("ok\n")
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / ".cache")
    ap.add_argument("--work", type=Path, default=None, help="where the copies go (default DATA/growth)")
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    started = time.strftime("%H:%M:%S")
    loads = [load()]
    django = fetch(args.data, "django", PROJECTS["django"][0])
    work = args.work or args.data / "growth"
    one = work / "django-x1"
    if not (one / ".growth-ready").exists():
        shutil.rmtree(one, ignore_errors=True)
        for rel in indexed_files(django):
            (one / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(django / rel, one / rel)
        (one / ".growth-ready").write_text("ok\n")
    print("building the tree of copies (once) ...", flush=True)
    big = build_tree(django, work, args.copies)
    git(big, "checkout", "-q", "base")

    cold1 = min((measure(one, "cold") for _ in range(args.repeats)), key=lambda r: r["wall"])
    print("django cold", cold1, flush=True)
    coldx = min((measure(big, "cold") for _ in range(args.repeats)), key=lambda r: r["wall"])
    print(f"x{args.copies} cold", coldx, flush=True)
    loads.append(load())
    rows = [
        ["Django", cold1["files"], f"{cold1['wall']:.2f}", f"{cold1['cpu']:.2f}", f"{cold1['peak_mb']:.0f}", "1.0"],
        [f"{args.copies} renamed copies", coldx["files"], f"{coldx['wall']:.2f}", f"{coldx['cpu']:.2f}",
         f"{coldx['peak_mb']:.0f}", f"{coldx['wall'] / cold1['wall']:.1f} (CPU {coldx['cpu'] / cold1['cpu']:.1f})"],
    ]
    per_file_cpu = coldx["cpu"] / coldx["parsed"]
    nochange = measure(big, "warm")
    rrows = [["no change", 0, nochange["parsed"], f"{nochange['wall']:.2f}", f"{nochange['cpu']:.2f}", "-",
              f"{nochange['phases'].get('walk', 0):.2f}"]]
    for n in CHANGES:
        git(big, "checkout", "-q", f"change-{n}")
        r = measure(big, "warm")
        git(big, "checkout", "-q", "base")
        back = measure(big, "warm")
        print(f"checkout changing {n}", r, "back", back, flush=True)
        rrows.append([f"checkout changing {n} files", n, r["parsed"], f"{r['wall']:.2f}", f"{r['cpu']:.2f}",
                      f"{n * per_file_cpu:.2f}", f"{r['phases'].get('walk', 0):.2f}"])
    loads.append(load())
    body = (
        table(["tree", "files", "cold index wall s", "cold CPU s (all procs)", "peak RSS MB (largest process)",
               "× Django (wall)"], rows)
        + "\n\n"
        + table(["refresh (new process, `Graph.open`)", "files changed", "files parsed", "wall s", "CPU s",
                 "N files' share of the cold CPU s", "walk s"], rrows)
        + f"\n\nGoals (issue 15): ten copies cold ≤ 11× Django's time, peak < 500 MB; a refresh after a checkout "
          f"costs about N files' work (the no-change refresh is the floor: a walk and stat of every file). Load "
          f"average during the run (started {started}): {', '.join(loads)}; on a shared machine wall time is "
          "inflated, CPU seconds are the steadier figure."
    )
    if args.no_write:
        print(body)
    else:
        print(write_section("prism-growth", "prism: growth to ten Django copies, and refresh after a checkout",
                            "python bench/prism_growth.py", body))


if __name__ == "__main__":
    main()
