"""Localization: does the context pack find the file and the functions a real task is about, with no model?

    python bench/localization.py [--data FILE] [--mirrors DIR] [--work DIR] [--limit N] [--repo R] [--lsp CMD]
                                 [--all-cold] [--ablate] [--no-write]

Tasks: ../shared/data/swebench-lite/dev.jsonl (101 SWE-bench Lite tasks; gold_files and gold_functions from each
gold patch). Each task's repository is extracted at its base commit from a mirror (``--mirrors``, default
/work/.mirror, filled by the session's fetch tool: ``OWNER+NAME/repo`` git directories) into ``--work/ID`` (default
/tmp/ctx/trees), never into this repository. The first time a tree is indexed is the cold figure (prism's index and
the pack's token index built from nothing, then the pack); every later pack on it is warm.

Scored in the same run, on the same trees: the pack, and its parts alone (BM25 with identifier-aware tokens = the
floor; anchors resolved in prism without retrieval). File recall@1/3/5/10 and MRR of the gold file among code files;
function recall@5/@10 over gold functions (``path::Qualified.name``). The set is split in two halves by a hash of the
instance id: weights were chosen looking at half A only; half B is held out. Nobody reads task texts to tune.
``--ablate`` adds a table of the pack with each signal switched off in turn (and the options that are off switched
on), scored in the same run on the same trees. The git-history signal (off in the pack; a row of its own, and
`+ git history` in the ablation) reads the mirror's log up to the task's base commit only: the log is checked to
start there, and commits after it (the task's fix among them) are not reachable from it. A tree whose index an older
prism wrote is brought up to date before the warm figures are taken. Writes the ``localization`` section of
docs/benchmarks.md. Without the shared data it says so and exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
try:
    from bench._report import table, write_section
except ImportError:  # run as `python bench/localization.py`
    sys.path.insert(0, str(ROOT))
    from bench._report import table, write_section

from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402

from tomo.oi.context_history import History, open_history  # noqa: E402
from tomo.oi.context_pack import HISTORY_WEIGHT, Pack, Weights, build, rank  # noqa: E402
from tomo.oi.context_search import Retrieval  # noqa: E402
from tomo.prism import Graph  # noqa: E402
from tomo.prism.indexer import file_hash  # noqa: E402

MIRRORS = {  # the README of the shared data: where each repository's full history lives
    "django/django": "apprent1c3+django",
    "scikit-learn/scikit-learn": "Agent-Benchmarking+scikit-learn",
    "matplotlib/matplotlib": "williamlus+matplotlib",
}
CMD = "python bench/localization.py"
console = Console(stderr=True)


@dataclass(frozen=True)
class Variant:
    name: str
    weights: Weights


PACK = Variant("context pack (anchors + BM25)", Weights())
VARIANTS = [
    Variant("BM25 alone (floor)", Weights(use_anchors=False, bm25_code=0.0, title=0.0, loose=1.0, aside=1.0,
                                          history=0.0)),
    Variant("anchors in prism alone", Weights(use_bm25=False, history=0.0)),
    Variant("git history alone", Weights(use_anchors=False, use_bm25=False, history=1.0, loose=1.0, aside=1.0)),
    PACK,
]
_D = Weights()
# --ablate: the pack with one signal switched off (or one option switched on), each scored on the same trees
ABLATIONS = [
    Variant("last session's pack (the six below off)", replace(_D, mentions=0.0, title=0.0, frames_in_repo=False,
                                                               test_map=0.0, aside=1.0, expand=0.0, history=0.0)),
    Variant("- title BM25 (first line)", replace(_D, title=0.0)),
    Variant("- repeated names weigh more", replace(_D, mentions=0.0)),
    Variant("- frame depth among in-repo frames", replace(_D, frames_in_repo=False)),
    Variant("- test names -> code under test", replace(_D, test_map=0.0)),
    Variant("- docs/examples/benchmarks damped", replace(_D, aside=1.0)),
    Variant("- path expansion from defining files", replace(_D, expand=0.0)),
    Variant("- BM25 on code-like anchors", replace(_D, bm25_code=0.0)),
    Variant("- BM25 on the whole task", replace(_D, bm25=0.0)),
    Variant("- files outside packages damped", replace(_D, loose=1.0)),
    Variant("- class+method bonus", replace(_D, member=0.0)),
    Variant("- dotted paths", replace(_D, dotted=0.0)),
    Variant("+ dotted paths in code blocks count (as before)", replace(_D, dotted_snippet=1.0)),
    Variant("+ names only in code blocks at half weight", replace(_D, name_snippet=0.5)),
    Variant("- error messages", replace(_D, message=0.0)),
    Variant("- specificity (1/files defining a name)", replace(_D, specificity=0.0)),
    Variant("+ reciprocal-rank fusion instead of sum", replace(_D, fusion="rrf")),
    Variant("+ best-function BM25 rerank", replace(_D, span=1.0)),
    Variant("+ git history (weight 3)", replace(_D, history=HISTORY_WEIGHT)),
    Variant("- function names", replace(_D, fn_name=0.0)),
    Variant("- frame line -> same-named def", replace(_D, frame_names=False)),
    Variant("+ title-only name match", replace(_D, fn_title=1.0)),
]


def shared_data(arg: str | None) -> Path | None:
    cands = [Path(arg)] if arg else [
        Path(os.environ["TOMO_SHARED"]) / "data/swebench-lite/dev.jsonl" if os.environ.get("TOMO_SHARED") else None,
        ROOT.parent / "shared/data/swebench-lite/dev.jsonl",
        Path("/work/shared/data/swebench-lite/dev.jsonl"),
    ]
    return next((p for p in cands if p is not None and p.is_file()), None)


def half(instance_id: str) -> str:
    return "A" if hashlib.sha1(instance_id.encode()).digest()[0] % 2 == 0 else "B"


def mirror(mirrors: Path, repo: str) -> Path:
    name = MIRRORS.get(repo, repo.replace("/", "+"))
    return mirrors / name / "repo"


def history_of(conn: sqlite3.Connection, root: Path, task: dict, mirrors: Path) -> History | None:
    """The history the pack may use for ``task``: the mirror's log up to the task's base commit, never past it.

    The tree is a ``git archive`` (no .git), so the mirror's git directory is passed with the base commit as the
    revision; the log is checked to start at that commit (context_history.read_log) and the cache to hold it.
    Commits after the base commit (the task's own fix among them) are not reachable from it and are never read.
    """
    history, note = open_history(conn, root, git_dir=mirror(mirrors, task["repo"]), rev=task["base_commit"])
    if history is None:
        console.print(f"{task['instance_id']}: {note}", markup=False)
        return None
    assert history.commit == task["base_commit"], (history.commit, task["base_commit"])
    return history


def prepare(task: dict, mirrors: Path, work: Path, seed: Path | None) -> tuple[Path, dict[str, float] | None]:
    """The task's tree at its base commit, indexed; returns (root, its timing when indexed now, else None).

    With ``seed`` (an indexed tree of the same repository) the indexes are copied from it first, so only the files
    that differ between the two commits are parsed: the timing is then ``refresh_s``, not ``cold_s``.
    """
    root = work / task["instance_id"]
    done = root / ".tomo" / "bench-cold.json"
    gitdir = mirror(mirrors, task["repo"])
    if done.exists():
        Graph.open(root).close()  # an index an older prism wrote is brought up to date here, not in the warm figures
        return root, None
    if not gitdir.exists():
        raise SystemExit(f"no mirror of {task['repo']} at {gitdir}: bring it with the session's fetch tool "
                         f"(github:{MIRRORS.get(task['repo'], task['repo']).replace('+', '/')}) or pass --mirrors")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    archive = subprocess.Popen(["git", f"--git-dir={gitdir}", "archive", task["base_commit"]], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(root)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {task['base_commit']} failed in {gitdir}")
    kind = "cold_s"
    if seed is not None and (seed / ".tomo" / "index.sqlite").exists():
        (root / ".tomo").mkdir()
        for name in ("index.sqlite", "context.sqlite", ".gitignore"):
            if (seed / ".tomo" / name).exists():
                shutil.copy2(seed / ".tomo" / name, root / ".tomo" / name)
        _keep_unchanged_mtimes(root)
        kind = "refresh_s"
    t0 = time.perf_counter()
    build(root, task["problem_statement"], git_dir=gitdir, git_rev=task["base_commit"])
    timing = {kind: time.perf_counter() - t0}
    done.write_text(json.dumps(timing))
    return root, timing


def _keep_unchanged_mtimes(root: Path) -> None:
    """Give each file whose content the copied index already holds the mtime and size the index recorded.

    prism skips a file by (mtime, size) and parses every other one before comparing hashes; a fresh extraction
    touches every file, so without this a commit switch would parse the whole tree again.
    """
    conn = sqlite3.connect(root / ".tomo" / "index.sqlite")
    try:
        rows = conn.execute("SELECT path, mtime_ns, size, hash FROM files").fetchall()
    finally:
        conn.close()
    for path, mtime_ns, size, digest in rows:
        p = root / path
        try:
            data = p.read_bytes()
        except OSError:
            continue
        if len(data) == size and file_hash(data) == digest:
            os.utime(p, ns=(mtime_ns, mtime_ns))


def scores(pack: Pack, task: dict) -> dict[str, float]:
    gold = task["gold_files"][0]
    rank_of = pack.files.index(gold) + 1 if gold in pack.files else 0
    out = {f"file@{k}": float(0 < rank_of <= k) for k in (1, 3, 5, 10)}
    out["mrr"] = 1.0 / rank_of if rank_of else 0.0
    funcs = task.get("gold_functions") or []
    if funcs:
        for k in (5, 10):
            top = set(pack.symbols[:k])
            out[f"fn@{k}"] = sum(f in top for f in funcs) / len(funcs)
    return out


def evaluate(tasks: list[dict], work: Path, mirrors: Path, variants: list[Variant],
             on_task: Callable[[], None] | None = None) -> dict[str, dict[str, list[float]]]:
    """Scores of every variant on every task (by instance id), on warm indexes (and a warm history cache)."""
    out: dict[str, dict[str, list[float]]] = {v.name: {} for v in variants}
    for task in tasks:
        root = work / task["instance_id"]
        with Graph.open(root) as graph:
            retrieval = Retrieval(graph.root, graph.conn.execute("SELECT path, hash FROM files").fetchall())
            try:
                history = history_of(retrieval.conn, root, task, mirrors)
                for v in variants:
                    pack = rank(graph, retrieval, task["problem_statement"], weights=v.weights, history=history)
                    got = scores(pack, task)
                    for key, val in got.items():
                        out[v.name].setdefault(key, []).append(val)
                    is_a = float(half(task["instance_id"]) == "A")
                    out[v.name].setdefault("half", []).append(is_a)
                    if "fn@5" in got:
                        out[v.name].setdefault("fn_half", []).append(is_a)
            finally:
                retrieval.close()
        if on_task:
            on_task()
    return out


def summarize(per: dict[str, list[float]], which: str | None) -> dict[str, float]:
    keep = [i for i, h in enumerate(per["half"]) if which is None or (h == 1.0) == (which == "A")]
    res: dict[str, float] = {"n": float(len(keep))}
    for key in ("file@1", "file@3", "file@5", "file@10", "mrr"):
        vals = [per[key][i] for i in keep]
        res[key] = statistics.fmean(vals) if vals else 0.0
    return res


def fn_summary(per: dict[str, list[float]], which: str | None = None) -> dict[str, float]:
    halves = per.get("fn_half", [])
    keep = [i for i, h in enumerate(halves) if which is None or (h == 1.0) == (which == "A")]
    return {k: statistics.fmean([per[k][i] for i in keep]) if keep and per.get(k) else 0.0 for k in ("fn@5", "fn@10")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="the tasks (default: ../shared/data/swebench-lite/dev.jsonl)")
    ap.add_argument("--mirrors", default="/work/.mirror", help="git directories of the repositories (OWNER+NAME/repo)")
    ap.add_argument("--work", default="/tmp/ctx/trees", help="where task trees are extracted (kept for warm runs)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N tasks")
    ap.add_argument("--repo", action="append", default=[], help="only this repository's tasks (repeatable)")
    ap.add_argument("--lsp", help="also score the pack with this language server (slow: one server per task)")
    ap.add_argument("--no-write", action="store_true", help="print the table, do not touch docs/benchmarks.md")
    ap.add_argument("--ablate", action="store_true", help="also score the pack with each signal off (a table)")
    ap.add_argument("--all-cold", action="store_true",
                    help="index every new tree from nothing (default: the first of each repository; the others "
                         "start from a sibling's index and parse only what their commit changed)")
    args = ap.parse_args()

    data = shared_data(args.data)
    if data is None:
        console.print("localization benchmark: the shared data (../shared/data/swebench-lite/dev.jsonl) is missing;"
                      " nothing measured. Pass --data FILE or set TOMO_SHARED.", markup=False)
        return
    tasks = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    tasks.sort(key=lambda t: (t["repo"], t["instance_id"]))
    if args.repo:
        tasks = [t for t in tasks if t["repo"] in args.repo]
    if args.limit:
        tasks = tasks[: args.limit]
    mirrors, work = Path(args.mirrors), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()

    indexed_now = 0
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        job = bar.add_task("trees + index", total=len(tasks))
        seeds: dict[str, Path] = {}
        for t in tasks:
            root, timing = prepare(t, mirrors, work, None if args.all_cold else seeds.get(t["repo"]))
            seeds[t["repo"]] = root
            indexed_now += timing is not None
            bar.advance(job)
        timings = [json.loads((work / t["instance_id"] / ".tomo" / "bench-cold.json").read_text()) for t in tasks]
        cold_all = [x["cold_s"] for x in timings if "cold_s" in x]
        refresh_all = [x["refresh_s"] for x in timings if "refresh_s" in x]

        job = bar.add_task("warm packs", total=len(tasks))
        warm: list[float] = []
        for t in tasks:
            pack = build(work / t["instance_id"], t["problem_statement"], git_dir=mirror(mirrors, t["repo"]),
                         git_rev=t["base_commit"])
            warm.append(pack.seconds)
            bar.advance(job)

        variants = list(VARIANTS)
        extra = ABLATIONS if args.ablate else []
        if args.lsp:
            variants.append(Variant(f"context pack + {args.lsp}", Weights()))
        job = bar.add_task("scoring", total=len(tasks))
        results = evaluate(tasks, work, mirrors, [v for v in variants + extra if not args.lsp or v is not variants[-1]],
                           on_task=lambda: bar.advance(job))
        if args.lsp:
            results[variants[-1].name] = _lsp_scores(tasks, work, mirrors, args.lsp)

    rows = []
    for v in variants:
        per = results[v.name]
        for which in (None, "A", "B"):
            s = summarize(per, which)
            fn = fn_summary(per, which)
            label = {None: "all", "A": "A (tuned on)", "B": "B (held out)"}[which]
            rows.append([v.name, f"{label}, {int(s['n'])}", *(f"{100 * s[k]:.1f}" for k in
                                                               ("file@1", "file@3", "file@5", "file@10")),
                         f"{s['mrr']:.3f}", f"{100 * fn['fn@5']:.1f}", f"{100 * fn['fn@10']:.1f}"])
    ablation = ""
    if extra:
        arows = []
        for v in [PACK, *extra]:
            per = results[v.name]
            a, b, al = summarize(per, "A"), summarize(per, "B"), summarize(per, None)
            fns = [fn_summary(per, which) for which in (None, "A", "B")]
            arows.append([v.name, *(f"{100 * x['file@1']:.1f} / {100 * x['file@5']:.1f}" for x in (al, a, b)),
                          f"{al['mrr']:.3f}", *(f"{100 * f['fn@5']:.1f} / {100 * f['fn@10']:.1f}" for f in fns)])
        ablation = ("\n\nAblation (`--ablate`): the pack with one signal off (-) or one option on (+), same trees, "
                    "same run. File @1 / @5, function @5 / @10.\n\n"
                    + table(["variant", "file: all", "A (tuned on)", "B (held out)", "MRR (all)", "function: all",
                             "A", "B"], arows))
    n_fn = len(results[variants[-1].name].get("fn@5", []))
    head = ["method", "tasks", "file @1", "@3", "@5", "@10", "MRR", "function @5", "function @10"]
    repos = sorted({t["repo"] for t in tasks})
    body = (
        f"{len(tasks)} SWE-bench Lite tasks from {data.name} ({len(repos)} repositories), each at its base commit. "
        f"File recall is of the gold file among the ranked code files (tests are ranked apart, and no Lite gold file "
        f"is a test); function recall averages over the {n_fn} tasks whose gold patch touches a function body. "
        f"Halves split by a hash of the instance id: weights were set looking at A's scores only. The README of the "
        f"data gives BM25 over every .py file as 43.6 @1 / 70.3 @5 (ours below is the same idea on code files).\n\n"
        + table(head, rows)
        + f"\n\nSeconds per task (2 cores shared by up to 6 sessions today, so wall time is inflated): cold "
        f"(prism index + token index from nothing, then the pack"
        f"{'; the first task of each repository' if refresh_all else ''}) "
        f"median {statistics.median(cold_all):.1f} s over {len(cold_all)} trees, "
        f"max {max(cold_all):.1f} s"
        + (f"; switching commit (a sibling tree's indexes copied, files that differ re-parsed, then the pack) "
           f"median {statistics.median(refresh_all):.1f} s over {len(refresh_all)} trees" if refresh_all else "")
        + (f" ({indexed_now} of the trees indexed in this run, the others timed when they were first indexed)"
           if indexed_now < len(tasks) else "")
        + f"; warm (index up to date: Graph.open's check, then the pack) median {statistics.median(warm):.2f} s, "
        f"mean {statistics.fmean(warm):.2f} s, max {max(warm):.2f} s. "
        f"Whole run {(time.perf_counter() - t_start) / 60:.1f} min."
        + ablation + "\n"
    )
    print(body)
    if not args.no_write:
        write_section("localization", "Localization: the context pack on SWE-bench Lite (no model)",
                      CMD + (" --ablate" if args.ablate else ""), body)


def _lsp_scores(tasks: list[dict], work: Path, mirrors: Path, lsp: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for t in tasks:
        pack = build(work / t["instance_id"], t["problem_statement"], lsp=lsp, lsp_timeout=30,
                     git_dir=mirror(mirrors, t["repo"]), git_rev=t["base_commit"])
        for key, val in scores(pack, t).items():
            out.setdefault(key, []).append(val)
        out.setdefault("half", []).append(float(half(t["instance_id"]) == "A"))
    return out


if __name__ == "__main__":
    main()
