"""How far prism's cold index is from tree-sitter's own floor, per phase, on Django's Python files.

    python bench/prism_floor.py [--data DIR] [--repeats N] [--no-write]

Issue 15 asks for a cold Django index under 2.5 s on 2 cores: the work beyond parsing should cost less than the
parsing. This script measures what that allows. In one process, on one core, CPU seconds (best of --repeats) over
every Python file of Django 5.2 read into memory first:

- tree-sitter alone, with no Python in the way (a 70-line C extension, bench/native/ts_floor.c, built here against
  the tree-sitter runtime of the installed binding's own version, from its sdist): parse only; parse and visit every
  node with a tree cursor (the least any extractor must do); parse and step through the captures of prism's own
  query (what prism's extractor asks of tree-sitter before its Python work starts);
- prism's pipeline as the index workers run it (``indexer._parse_files`` on chunks of ``indexer.CHUNK`` files): read
  and hash, parse, query, extract (Python), encode;
- and, from a cold ``Graph.open`` in a fresh process, the indexing process's own serial phases (write, index-build).

Needs a C compiler (``gcc``) and the tree-sitter sdist (``pip download``, once, into --data/dl).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import subprocess
import sys
import sysconfig
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

try:
    from bench._report import table, write_section
    from bench.prism_index import PROJECTS, fetch
except ImportError:  # run as `python bench/prism_floor.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._report import table, write_section
    from bench.prism_index import PROJECTS, fetch

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))

from tomo.prism import indexer, pyextract  # noqa: E402  (this checkout's prism, whatever is installed)
from tomo.prism.files import walk  # noqa: E402

COLD = r"""
import json, shutil, sys
from pathlib import Path
root = Path(sys.argv[1])
shutil.rmtree(root / ".tomo", ignore_errors=True)
from tomo.prism import Graph
with Graph.open(root) as g:
    print(json.dumps({"phases": g.stats.phases, "workers": g.stats.workers}))
"""


def build_extension(data: Path) -> ModuleType:
    """bench/native/ts_floor.c compiled against the tree-sitter runtime of the installed binding's version."""
    from importlib.metadata import version

    ts_version = version("tree-sitter")
    out = data / "native" / f"ts_floor-{ts_version}{sysconfig.get_config_var('EXT_SUFFIX')}"
    source = HERE / "native" / "ts_floor.c"
    if not out.exists() or out.stat().st_mtime < source.stat().st_mtime:
        sdist = data / "dl" / f"tree_sitter-{ts_version}.tar.gz"
        if not sdist.exists():
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                            f"tree-sitter=={ts_version}", "-d", str(sdist.parent)], check=True)
        unpacked = data / f"tree_sitter-{ts_version}"
        if not unpacked.exists():
            with tarfile.open(sdist) as tar:
                tar.extractall(data, filter="data")
        lib = unpacked / "tree_sitter" / "core" / "lib"
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", f"-I{lib / 'include'}", f"-I{lib / 'src'}",
                        f"-I{sysconfig.get_paths()['include']}", str(lib / "src" / "lib.c"), str(source),
                        "-o", str(out)], check=True)
    spec = importlib.util.spec_from_file_location("ts_floor", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=HERE / ".cache")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    started = time.strftime("%H:%M:%S")
    root = fetch(args.data, "django", PROJECTS["django"][0])
    native = build_extension(args.data)
    import tree_sitter_python

    native.setup(tree_sitter_python.language(), pyextract._QUERY)
    files = [(i, f) for i, f in enumerate(walk(root)) if f.language == "python"]
    sources = [(root / f.path).read_bytes() for _, f in files]
    print(f"{len(files)} Python files, {sum(map(len, sources)) / 1e6:.1f} MB", flush=True)

    def mode(m: int) -> float:
        return best(lambda: [native.run(s, m) for s in sources], args.repeats)

    parse, walk_all, captures = mode(0), mode(1), mode(2)
    phases: dict[str, float] = {}
    for _ in range(args.repeats):
        run: dict[str, float] = {}
        for start in range(0, len(files), indexer.CHUNK):  # chunk by chunk, rows dropped, as a worker does
            gc.disable()
            try:
                _, times = indexer._parse_files(str(root), files[start:start + indexer.CHUNK])
            finally:
                gc.enable()
            run = {k: v + run.get(k, 0.0) for k, v in times.items()}
        phases = {k: min(v, phases.get(k, v)) for k, v in run.items()}
    python_total = sum(phases.values())
    cold = json.loads(subprocess.run([sys.executable, "-c", COLD, str(root)], capture_output=True, text=True,
                                     env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, check=True).stdout)
    serial = cold["phases"].get("index-build", 0.0)
    write = cold["phases"].get("write", 0.0)

    def beyond(cpu: float) -> str:
        return f"{cpu - parse:.2f} ({(cpu - parse) / parse:.2f}x the parse)"

    rows: list[list[object]] = [
        ["tree-sitter parse, native", f"{parse:.2f}", "-", f"{parse / 2 + serial:.2f}"],
        ["parse + visit every node with a cursor, native", f"{walk_all:.2f}", beyond(walk_all),
         f"{walk_all / 2 + serial:.2f}"],
        ["parse + step through prism's query captures, native", f"{captures:.2f}", beyond(captures),
         f"{captures / 2 + serial:.2f}"],
        ["prism today (read+hash, parse, query, extract, encode in Python)", f"{python_total:.2f}",
         beyond(python_total), f"{python_total / 2 + serial:.2f}"],
    ]
    body = (
        table(["work per file, all of Django's Python files", "CPU s (one core, best)", "CPU s beyond parsing",
               "cold index this work allows on 2 cores, s (CPU / 2 + index-build)"], rows)
        + "\n\n"
        + table(["prism phase (index worker)", "CPU s"], [[k, f"{v:.2f}"] for k, v in phases.items()])
        + f"\n\n{len(files)} files, {sum(map(len, sources)) / 1e6:.1f} MB, read into memory before the native runs. "
          f"The last column is what the work would allow if it split evenly over 2 cores, plus the indexing "
          f"process's index-build after the workers ({serial:.2f} s in a cold `Graph.open` of the same tree), leaving "
          f"out the walk, process start-up and the parent's writes ({write:.2f} s here, partly overlapping the "
          f"workers): an estimate to compare rows by, not a bound (for prism today compare it with the measured cold "
          f"index of the prism-index section). Issue 15's goal is a cold index under 2.5 s. Started {started}."
    )
    if args.no_write:
        print(body)
    else:
        print(write_section("prism-floor", "prism: the cold index against tree-sitter's floor",
                            "python bench/prism_floor.py", body))


if __name__ == "__main__":
    main()
