"""prism against jedi, rope and basedpyright on real code: index time, refresh, query time, memory, references found,
and rename-and-test on flask's own test suite.

One command reproduces everything (downloads pinned sdists into --data, builds a venv there for flask's tests):

    python bench/graph.py            # requests, flask, Django 5.2; about 5 min on 2 idle cores
    python bench/graph.py --quick    # requests and flask only; about 1.5 min

To measure another checkout's prism (a branch, an older commit): ``--prism-git PATH@REV``.
Every tool runs in its own subprocess (peak memory is that process tree's), the peers set up fairly: jedi with its
file limits lifted, rope with source folders and unparsable files excluded (sure and "unsure" modes), basedpyright
over LSP asked again until its answer stops changing. Method notes: docs/benchmarks-graph-notes.md.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._report import table, write_section
from bench.graph_peers import renametest
from bench.graph_peers.data import PINS, RENAMES, SYMBOLS, Target, fetch, locate, python_files
from bench.graph_peers.procs import REPO, run_worker, worker_env

TOOLS = ["prism", "jedi", "rope", "rope-unsure", "basedpyright"]
PEERS = ["jedi", "rope", "basedpyright"]  # the three whose agreement is the bar; rope-unsure is shown, not counted
WARM = {"prism", "jedi"}  # tools that keep something on disk between runs; the others start cold every time
Key = tuple[str, int]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def prism_commit() -> str:
    """Which prism is measured: the git commit of the tomo package actually imported by the workers."""
    probe = "import tomo, pathlib; print(pathlib.Path(tomo.__file__).resolve().parents[2])"
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=worker_env())
        root = out.stdout.strip()
        rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        if rev.returncode != 0:
            return f"{root} (not a git checkout)"
        branch = subprocess.run(["git", "-C", root, "branch", "--show-current"], capture_output=True, text=True)
        status = ["git", "-C", root, "status", "--porcelain", "src/tomo/prism"]
        dirty = subprocess.run(status, capture_output=True, text=True).stdout.strip()
        return f"{root} @ {branch.stdout.strip()} {rev.stdout.strip()}" + (" + uncommitted changes" if dirty else "")
    except OSError as exc:
        return f"unknown ({exc})"


def prism_snapshot(spec: str, data: Path) -> str:
    """``REPO[@REV]``: export that commit's ``src/tomo`` with ``git archive`` (read-only, no checkout touched) and
    put it first on the workers' PYTHONPATH, so the report names exactly which prism was measured."""
    repo, _, rev = spec.partition("@")
    git = ["git", "-C", repo]
    full = subprocess.run([*git, "rev-parse", "--short", rev or "HEAD"], capture_output=True, text=True, check=True)
    commit = full.stdout.strip()
    dest = data / f"prism-{commit}"
    if not (dest / "src" / "tomo").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run([*git, "archive", commit, "src/tomo"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(dest / "src"), os.environ.get("PYTHONPATH")]))
    return f"{repo} @ {commit} (git archive snapshot)"


# ------------------------------------------------------------------------------------------------------ measuring
PEER_PACKAGES = {"jedi": "jedi", "rope": "rope", "basedpyright": "basedpyright"}


def peer_versions(flask_python: Path | None) -> dict[str, str]:
    """Each peer's version as installed (importlib.metadata in this interpreter, which the workers run), and the
    pytest of flask's test venv: read from the packages, never written by hand."""
    found: dict[str, str] = {}
    for tool, package in PEER_PACKAGES.items():
        try:
            found[tool] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[tool] = "not installed"
    if flask_python is not None and flask_python.exists():
        probe = "import importlib.metadata as m; print(m.version('pytest'))"
        out = subprocess.run([str(flask_python), "-c", probe], capture_output=True, text=True)
        found["pytest (flask's venv)"] = out.stdout.strip() or "unknown"
    return found


def measure_refs(
    tool: str, project: str, root: Path, targets: list[Target], repeats: int, data: Path
) -> dict[str, Any]:
    cache = data / "jedi-cache"
    if tool == "prism":
        shutil.rmtree(root / ".tomo", ignore_errors=True)
    if tool == "jedi":
        shutil.rmtree(cache, ignore_errors=True)
    job = {"tool": tool, "mode": "refs", "root": str(root), "project": project, "cache": str(cache)}
    log(f"{project}: {tool} cold")
    cold = run_worker({**job, "targets": [t.to_json() for t in targets], "repeats": repeats})
    warm: dict[str, Any] | None = None
    if tool in WARM and "error" not in cold:
        log(f"{project}: {tool} warm")
        warm = run_worker({**job, "targets": [targets[0].to_json()], "repeats": 0})
    return {"cold": cold, "warm": warm}


def measure_renames(tools: list[str], flask_root: Path, data: Path) -> dict[str, Any]:
    python = renametest.ensure_venv(data)
    work = data / "rename"
    pristine = renametest.fresh_copy(flask_root, work / "pristine")
    baseline = renametest.run_tests(python, pristine)
    names_before = renametest.public_names(pristine)
    log(f"flask tests on the pristine copy: {baseline['summary']}")
    rows: dict[str, Any] = {"baseline": baseline, "runs": []}
    for qualname in RENAMES:
        target = locate(pristine, "flask", qualname)
        new = f"{target.name}_rn"
        for tool in tools:
            copy = renametest.fresh_copy(flask_root, work / f"{tool}-{target.name}")
            log(f"rename {target.name} -> {new} with {tool}")
            job = {
                "tool": tool,
                "mode": "rename",
                "root": str(copy),
                "project": "flask",
                "target": target.to_json(),
                "new": new,
                "cache": str(data / "jedi-cache"),
            }
            result = run_worker(job, timeout=600)
            run: dict[str, Any] = {"qualname": qualname, "tool": tool, "new": new, "rename": result}
            if "error" not in result:
                (copy / "pyrightconfig.json").unlink(missing_ok=True)
                shutil.rmtree(copy / ".tomo", ignore_errors=True)
                run["tests"] = renametest.run_tests(python, copy)
                run["lines"], run["files"] = renametest.changed_lines(pristine, copy)
                after = renametest.public_names(copy)
                expected_gone = {f"{target.path}::Flask.{target.name}"}
                expected_new = {f"{target.path}::Flask.{new}"}
                run["names_gone"] = sorted((names_before - after) - expected_gone)
                run["names_new"] = sorted((after - names_before) - expected_new)
                run["renamed_itself"] = expected_gone <= names_before - after and expected_new <= after
                run["left"] = renametest.attribute_uses(copy, target.name)
            rows["runs"].append(run)
    return rows


# ------------------------------------------------------------------------------------------------------ comparing
def keys(query: dict[str, Any] | None, target: Target) -> set[Key] | None:
    """(path, line) of each reference, without the definition's own line (some tools list it, some do not)."""
    if query is None or "refs" not in query:
        return None
    return {(r[0], r[1]) for r in query["refs"]} - {(target.path, target.line)}


def find_query(result: dict[str, Any], qualname: str) -> dict[str, Any] | None:
    return next((q for q in result["cold"].get("queries", []) if q["qualname"] == qualname), None)


def text_hits(root: Path, name: str) -> set[Key]:
    """Lines of .py files where the bare name occurs as a word: an upper bound that includes every unrelated use."""
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    hits: set[Key] = set()
    for path in python_files(root):
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.add((path.relative_to(root).as_posix(), n))
    return hits


def compare(results: dict[str, dict[str, Any]], target: Target, root: Path) -> dict[str, Any]:
    sets = {tool: keys(find_query(res, target.qualname), target) for tool, res in results.items()}
    peer_sets = [s for t, s in sets.items() if t in PEERS and s is not None]
    complete = len(peer_sets) == len([t for t in PEERS if t in results])
    agreed = set.intersection(*peer_sets) if peer_sets and complete else set()
    union = set.union(*peer_sets) if peer_sets else set()
    out: dict[str, Any] = {"sets": sets, "agreed": agreed, "union": union, "text": text_hits(root, target.name)}
    prism_q = find_query(results["prism"], target.qualname) if "prism" in results else None
    if prism_q and "refs" in prism_q:
        conf = {(r[0], r[1]): (r[3], r[4]) for r in prism_q["refs"]}
        beyond = {k: v for k, v in conf.items() if k not in union and k != (target.path, target.line)}
        out["prism_missing"] = sorted(agreed - set(conf))
        out["prism_agreed_confirmed"] = sorted(k for k in agreed if conf.get(k, ("",))[0] == "confirmed")
        out["prism_agreed_ambiguous"] = sorted(k for k in agreed if k in conf and conf[k][0] != "confirmed")
        out["prism_beyond"] = beyond
        out["prism_confirmed_beyond"] = sorted(k for k, v in beyond.items() if v[0] == "confirmed")
        out["prism_ambiguous_beyond"] = sorted(k for k, v in beyond.items() if v[0] != "confirmed")
    return out


# ------------------------------------------------------------------------------------------------------ reporting
def fmt_s(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def fmt_ms(xs: list[float] | None) -> str:
    if not xs:
        return "n/a"
    xs = sorted(xs)
    return f"{xs[len(xs) // 2] * 1000:.1f}"


def ratio(x: float | None, base: float | None) -> str:
    if x is None or base is None or base <= 0:
        return ""
    return f" ({x / base:.1f}×)"


def cold_total(res: dict[str, Any]) -> float | None:
    cold = res["cold"]
    if "error" in cold or "open_s" not in cold:
        return None
    firsts = [q["first_s"] for q in cold.get("queries", []) if "first_s" in q]
    return float(cold["open_s"]) + sum(firsts) if firsts else None


def warm_total(res: dict[str, Any]) -> tuple[float | None, float | None]:
    warm = res.get("warm")
    if not warm or "error" in warm or not warm.get("queries") or "first_s" not in warm["queries"][0]:
        return None, None
    return float(warm["open_s"]), float(warm["open_s"]) + float(warm["queries"][0]["first_s"])


def err(res: dict[str, Any]) -> str:
    cold = res["cold"]
    if "error" in cold:
        return str(cold["error"])
    return "; ".join(
        f"{q['qualname'].rsplit('.', 1)[1]}: {q['error']}" for q in cold.get("queries", []) if "error" in q
    )


def refresh_cell(res: dict[str, Any], reopen: float | None) -> str:
    inproc = res["cold"].get("refresh_s")
    return f"{fmt_s(inproc)} / {fmt_s(reopen)}"


def project_table(all_results: dict[str, dict[str, dict[str, Any]]]) -> str:
    rows: list[list[object]] = []
    for project, results in all_results.items():
        prism_ok = "prism" in results and "error" not in results["prism"]["cold"]
        prism_cold = cold_total(results["prism"]) if prism_ok else None
        prism_peak = results["prism"]["cold"].get("peak_mb") if prism_ok else None
        for tool, res in results.items():
            cold = cold_total(res)
            refresh, warm = warm_total(res)
            peak = res["cold"].get("peak_mb")
            open_s = res["cold"].get("open_s")
            rows.append(
                [
                    project,
                    tool,
                    fmt_s(open_s),
                    fmt_s(cold) + ("" if tool == "prism" else ratio(cold, prism_cold)),
                    fmt_s(res["cold"].get("cpu_s")),
                    refresh_cell(res, refresh) if tool == "prism" else ("—" if tool not in WARM else "no index"),
                    fmt_s(warm) if tool in WARM else "— (nothing kept)",
                    f"{peak:.0f}" + ("" if tool == "prism" else ratio(peak, prism_peak)) if peak else "n/a",
                    err(res)[:120],
                ]
            )
    headers = [
        "project",
        "tool",
        "open / index (s)",
        "cold: open + every first answer (s, ×prism)",
        "cold process CPU (s)",
        "no-change refresh (s): in process / Graph.open in a new process",
        "warm start: open + first answer (s)",
        "peak MB (×prism)",
        "errors",
    ]
    return table(headers, rows)


def symbol_table(
    all_results: dict[str, dict[str, dict[str, Any]]],
    comparisons: dict[str, dict[str, Any]],
    targets: dict[str, Target],
) -> str:
    rows: list[list[object]] = []
    for qualname, cmp in comparisons.items():
        project = targets[qualname].project
        results = all_results[project]
        prism_q = find_query(results["prism"], qualname) if "prism" in results else None
        prism_rep = (
            sorted(prism_q["repeat_s"])[len(prism_q["repeat_s"]) // 2] if prism_q and prism_q.get("repeat_s") else None
        )
        for i, (tool, res) in enumerate(results.items()):
            q = find_query(res, qualname)
            s = cmp["sets"].get(tool)
            rep = q.get("repeat_s") if q else None
            med = sorted(rep)[len(rep) // 2] if rep else None
            found = "n/a" if s is None else f"{len(s & cmp['agreed'])}/{len(cmp['agreed'])}"
            found_ambiguous = ""
            if tool == "prism" and "prism_agreed_confirmed" in cmp:
                # a confirmed-only rename (prism's default) changes exactly the confirmed ones: judge it on those
                found = f"{len(cmp['prism_agreed_confirmed'])}/{len(cmp['agreed'])}"
                found_ambiguous = f"{len(cmp['prism_agreed_ambiguous'])}/{len(cmp['agreed'])}"
            extra = ""
            if tool == "prism" and "prism_beyond" in cmp:
                extra = (
                    f"{len(cmp['prism_ambiguous_beyond'])} ambiguous, {len(cmp['prism_confirmed_beyond'])} confirmed"
                )
            elif s is not None:
                extra = f"{len(s - cmp['union'])}" if tool not in PEERS else ""
            rows.append(
                [
                    f"`{qualname.split('.', 1)[1]}`" if i == 0 else "",
                    tool,
                    fmt_s(q.get("first_s")) if q else "n/a",
                    fmt_ms(rep) + ("" if tool == "prism" else ratio(med, prism_rep))
                    + (", a whole rename computed" if tool.startswith("rope") and rep else ""),
                    "n/a" if s is None else len(s),
                    found,
                    found_ambiguous,
                    extra,
                ]
            )
    headers = [
        "symbol",
        "tool",
        "first answer (s)",
        "repeat query (ms, ×prism)",
        "refs (lines)",
        "peers' agreed found (prism: confirmed)",
        "peers' agreed found only as ambiguous (prism)",
        "beyond all 3 peers",
    ]
    return table(headers, rows)


def rename_table(renames: dict[str, Any]) -> str:
    base = renames["baseline"]
    base_fail = set(base["failing"])
    rows: list[list[object]] = []
    for run in renames["runs"]:
        name = run["qualname"].rsplit(".", 1)[1]
        rn = run["rename"]
        if "error" in rn:
            rows.append([name, run["tool"], "error", "", "", "", "", rn["error"][:100]])
            continue
        tests = run["tests"]
        new_fail = sorted(set(tests["failing"]) - base_fail)
        over = len(run["names_gone"]) + len(run["names_new"])
        extra = ""
        if run["tool"] == "prism":
            reasons = Counter(
                e.split(" ", 1)[1].split(":")[0] if " " in e else "?" for e in rn.get("ambiguous_edits", [])
            )
            why = ", ".join(f"{r} {n}" for r, n in reasons.most_common(4))
            extra = f"{rn.get('confirmed')} confirmed applied, {rn.get('ambiguous')} ambiguous left" + (
                f" ({why})" if why else ""
            )
        if not run["renamed_itself"]:
            extra = (extra + "; " if extra else "") + "definition not renamed"
        rows.append(
            [
                name,
                run["tool"],
                f"{run['lines']} / {run['files']}",
                fmt_s(rn.get("seconds")),
                f"{tests['passed']} / {tests['failed']}",
                "**green**" if not new_fail else f"{len(new_fail)} new failures",
                over,
                f"{run['left']}; {extra}" if extra else run["left"],
            ]
        )
    headers = [
        "renamed",
        "tool",
        "lines / files changed",
        "rename (s)",
        "tests passed / failed",
        "vs pristine",
        "other public names changed",
        "`.old` uses left (any receiver); notes",
    ]
    note = f"Pristine copy: {base['summary']} (failing without any rename: {', '.join(base['failing']) or 'none'})."
    return note + "\n\n" + table(headers, rows)


def details(comparisons: dict[str, dict[str, Any]], targets: dict[str, Target]) -> str:
    out: list[str] = []
    for qualname, cmp in comparisons.items():
        agreed = cmp["agreed"]
        line = f"- `{qualname}`: the peers agree on {len(agreed)} lines, together find {len(cmp['union'])}; "
        line += f"the bare name occurs on {len(cmp['text'])} lines."
        if "prism_missing" in cmp:
            miss = cmp["prism_missing"]
            line += f" prism misses {len(miss)} agreed" + (
                ": " + ", ".join(f"{p}:{n}" for p, n in miss[:8]) if miss else ""
            )
            amb = cmp["prism_agreed_ambiguous"]
            line += f", confirms {len(cmp['prism_agreed_confirmed'])}" + (
                f" and finds {len(amb)} only as ambiguous (a confirmed-only rename leaves those: "
                + ", ".join(f"{p}:{n}" for p, n in amb[:8]) + (" …" if len(amb) > 8 else "") + ")"
                if amb else ""
            )
            beyond = cmp["prism_beyond"]
            if beyond:
                shown = sorted(beyond.items())[:8]
                line += "; beyond the peers: " + ", ".join(f"{p}:{n} {c[0]}" for (p, n), c in shown)
                line += " …" if len(beyond) > 8 else ""
        out.append(line.rstrip(".") + ".")
    return "\n".join(out)


def goals(all_results: dict[str, dict[str, dict[str, Any]]]) -> str:
    django = all_results.get("django", {}).get("prism")
    if not django:
        return ""
    cold = django["cold"]
    reopen, _ = warm_total(django)
    refresh = cold.get("refresh_s")
    reps = [x for q in cold.get("queries", []) for x in q.get("repeat_s", [])]
    q = max(reps) * 1000 if reps else None
    return (
        f"Goals (issue 4) for prism on Django: cold index {fmt_s(cold.get('open_s'))} s (goal < 5 s), "
        f"peak {cold.get('peak_mb', 0):.0f} MB (goal < 500), no-change refresh {fmt_s(refresh)} s in process, "
        f"{fmt_s(reopen)} s as Graph.open in a new process (goal < 0.5 s), "
        f"slowest repeat query {'n/a' if q is None else f'{q:.1f}'} ms (goal < 50 ms)."
    )


SYMBOL_NOTE = (
    "References are compared by (path, line), the definition's own line left out. "
    '"peers\' agreed" = lines that jedi, rope and basedpyright all report. For prism the agreed lines it finds are '
    "split by its label: the first column counts those it confirms (what a confirmed-only rename changes, so judge "
    "such a rename on that column), the next those it finds only as ambiguous (left for a person unless "
    '--apply-ambiguous). "beyond" = lines none of the three peers reports (for prism: how it labels them; for '
    "rope-unsure: how many it adds). rope has no find-references call here: its query is `Rename.get_changes`, the "
    "whole rename computed, so its repeat figure is the cost of a rename computation, not of a lookup."
)


def load_note(raw: dict[str, Any]) -> str:
    loads = [r["cold"].get("load1", 0.0) for p in raw["results"].values() for r in p.values()]
    where = f"up to {max(loads):.1f}" if loads else "not recorded"
    return (
        f"The machine was shared: {os.cpu_count()} cores used by other sessions while this ran (1-minute load "
        f"average {where} during the reference runs), so wall times are inflated and move from run to run; ratios "
        "from the same run and the CPU column are the fairer comparison."
    )


def versions_note(raw: dict[str, Any]) -> str:
    found = raw.get("versions")
    if not found:
        return "Peer versions were not recorded by this run."
    return "Versions, read from the installed packages: " + ", ".join(f"{k} {v}" for k, v in found.items()) + "."


def render(raw: dict[str, Any], roots: dict[str, Path]) -> str:
    all_results: dict[str, dict[str, dict[str, Any]]] = raw["results"]
    targets = {q: locate(roots[p], p, q) for p in all_results for q in SYMBOLS[p]}
    comparisons = {q: compare(all_results[t.project], t, roots[t.project]) for q, t in targets.items()}
    renames = raw.get("renames")
    parts = [
        f"prism measured from `{raw['prism']}`. Whole run {raw['elapsed_s'] / 60:.1f} min. "
        "Sources: " + ", ".join(PINS[p].replace("==", " ") for p in all_results) + " sdists. "
        "Peer set-up and caveats: docs/benchmarks-graph-notes.md.",
        versions_note(raw),
        goals(all_results),
        load_note(raw),
        "### Index, refresh, memory\n\n" + project_table(all_results),
        "### References per symbol\n\n" + SYMBOL_NOTE + "\n\n" + symbol_table(all_results, comparisons, targets),
        details(comparisons, targets),
        "" if not renames else "### Rename, then run flask's own tests (pytest "
        + raw.get("versions", {}).get("pytest (flask's venv)", "version not recorded") + ")\n\n"
        + rename_table(renames),
    ]
    return "\n\n".join(p for p in parts if p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="requests and flask only, fewer repeats")
    ap.add_argument("--data", type=Path, default=REPO / "bench" / ".cache", help="where sources and venvs are kept")
    ap.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}")
    ap.add_argument("--no-rename", action="store_true", help="skip the rename-and-test part")
    ap.add_argument("--no-write", action="store_true", help="print the section instead of writing docs/benchmarks.md")
    ap.add_argument("--prism-git", metavar="REPO[@REV]", help="measure the prism of another checkout's commit")
    ap.add_argument("--render-only", action="store_true", help="re-render the last run's DATA/graph-results.json")
    args = ap.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    data = args.data.resolve()
    raw_path = data / "graph-results.json"
    if args.render_only:
        raw = json.loads(raw_path.read_text(encoding="utf-8"))
        roots = fetch(data, list(raw["results"]))
    else:
        projects = ["requests", "flask"] if args.quick else ["requests", "flask", "django"]
        started = time.perf_counter()
        roots = fetch(data, projects)
        label = prism_snapshot(args.prism_git, data) if args.prism_git else prism_commit()
        raw = {
            "prism": label,
            "prism_git": args.prism_git,
            "quick": args.quick,
            "results": {},
            "renames": None,
            "elapsed_s": 0.0,
        }
        log(f"prism under test: {raw['prism']}")
        for project in projects:
            project_targets = [locate(roots[project], project, q) for q in SYMBOLS[project]]
            raw["results"][project] = {}
            for tool in tools:
                repeats = 2 if args.quick else 5
                raw["results"][project][tool] = measure_refs(
                    tool, project, roots[project], project_targets, repeats, data
                )
            raw_path.write_text(json.dumps(raw, indent=1), encoding="utf-8")  # keep what is measured so far
        if not args.no_rename:
            raw["renames"] = measure_renames(tools, roots["flask"], data)
        raw["versions"] = peer_versions(None if args.no_rename else data / "flaskvenv" / "bin" / "python")
        raw["elapsed_s"] = time.perf_counter() - started
        raw_path.write_text(json.dumps(raw, indent=1), encoding="utf-8")

    body = render(raw, roots)
    command = "python bench/graph.py" + (" --quick" if raw.get("quick") else "")
    if raw.get("prism_git"):
        command += f" --prism-git {raw['prism_git']}"
    if args.no_write:
        print(body)
    else:
        print(write_section("graph", "Code graph: prism vs jedi, rope, basedpyright", command, body))
        print(body)


if __name__ == "__main__":
    main()
