"""One driver per tool: each answers references (timed) and performs a rename in a scratch copy.

Every driver returns references as ``(path, line, col, confidence, reason)`` with a root-relative POSIX path, 1-based
line and 0-based column, so the tools can be compared line by line. The peers' fairness settings follow
docs/benchmarks-graph-notes.md: jedi with its file limits lifted, rope with source folders, unparsable files excluded,
basedpyright waited on until its answer stops changing.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.graph_peers.data import SRC_LAYOUT, Target, python_files, unparsable
from bench.graph_peers.lsp import LspClient, uri

Ref = tuple[str, int, int, str, str]
REPEAT_BUDGET_S = 8.0
Result = dict[str, Any]


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def _query_all(targets: list[Target], ask: Callable[[Target], list[Ref]], repeats: int) -> list[Result]:
    """First answer (cold for this symbol) then ``repeats`` more of the same question, timed one by one."""
    out: list[Result] = []
    for t in targets:
        row: Result = {"qualname": t.qualname}
        try:
            row["first_s"], refs = _timed(functools.partial(ask, t))
            row["repeat_s"] = []
            for _ in range(repeats):  # a slow tool gets fewer repeats: at least one, then up to REPEAT_BUDGET_S
                row["repeat_s"].append(_timed(functools.partial(ask, t))[0])
                if sum(row["repeat_s"]) > REPEAT_BUDGET_S:
                    break
            row["refs"] = sorted(set(refs))
        except Exception as exc:  # a tool failing on one symbol is a result, not a crash
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        out.append(row)
    return out


def _rel(root: Path, path: Path | str) -> str:
    return Path(path).resolve().relative_to(root.resolve()).as_posix()


# ----------------------------------------------------------------------------------------------------------- jedi
def _jedi_setup(root: Path, project: str, cache: Path) -> Any:
    import jedi
    import jedi.inference.references as jrefs

    jrefs._PARSED_FILE_LIMIT = 10**9  # lifted (PEERS.md): jedi otherwise stops after a few files
    jrefs._OPENED_FILE_LIMIT = 10**9
    jedi.settings.cache_directory = str(cache)
    extra = [str(root / "src")] if SRC_LAYOUT[project] else []
    return jedi.Project(root, added_sys_path=extra)


def jedi_refs(root: Path, project: str, targets: list[Target], repeats: int, cache: Path) -> Result:
    import jedi

    setup_s, proj = _timed(lambda: _jedi_setup(root, project, cache))

    def ask(t: Target) -> list[Ref]:
        script = jedi.Script(path=str(root / t.path), project=proj)
        names = script.get_references(t.line, t.col, scope="project")
        return [
            (_rel(root, n.module_path), n.line, n.column, "confirmed", "")
            for n in names
            if n.module_path is not None and str(n.module_path).startswith(str(root))
        ]

    return {"open_s": setup_s, "queries": _query_all(targets, ask, repeats), "notes": ["file limits lifted"]}


def jedi_rename(root: Path, project: str, target: Target, new: str, cache: Path) -> Result:
    import jedi

    t0 = time.perf_counter()  # every rename is timed from the tool's set-up to the files written
    proj = _jedi_setup(root, project, cache)
    script = jedi.Script(path=str(root / target.path), project=proj)
    refactoring = script.rename(target.line, target.col, new_name=new)
    refactoring.apply()
    return {"seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------------------------------------- rope
def _rope_project(root: Path, project: str) -> tuple[Any, list[Any]]:
    from rope.base.project import Project

    prefs: dict[str, Any] = {"source_folders": ["src"] if SRC_LAYOUT[project] else []}
    proj = Project(str(root), ropefolder=None, **prefs)
    bad = set(unparsable(root))  # rope aborts on Django's deliberate syntax-error fixture (PEERS.md)
    resources = [proj.get_resource(_rel(root, p)) for p in python_files(root) if _rel(root, p) not in bad]
    return proj, resources


def _rope_changes(proj: Any, resources: list[Any], t: Target, new: str, unsure: bool) -> Any:
    from rope.refactor.rename import Rename

    resource = proj.get_resource(t.path)
    text = resource.read()
    offset = sum(len(line) for line in text.splitlines(keepends=True)[: t.line - 1]) + t.col
    kwargs: dict[str, Any] = {"resources": resources}
    if unsure:
        kwargs["unsure"] = lambda _occurrence: True
    return Rename(proj, resource, offset).get_changes(new, **kwargs)


def _changed_lines(old: str, new: str, new_name: str) -> list[tuple[int, int]]:
    """The (line, col) of each rewritten occurrence, from a line diff of a file before and after the rename."""
    a, b = old.splitlines(), new.splitlines()
    hits: list[tuple[int, int]] = []
    for tag, i1, i2, j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "replace":
            continue
        for k in range(i2 - i1):
            line = b[j1 + k] if j1 + k < len(b) else ""
            col = line.find(new_name)
            hits.append((i1 + k + 1, max(col, 0)))
    return hits


def rope_refs(root: Path, project: str, targets: list[Target], repeats: int, unsure: bool) -> Result:
    setup_s, (proj, resources) = _timed(lambda: _rope_project(root, project))
    new = "zz_bench_renamed"

    def ask(t: Target) -> list[Ref]:
        changes = _rope_changes(proj, resources, t, new, unsure)
        refs: list[Ref] = []
        for change in changes.changes:
            path = change.resource.path
            for line, col in _changed_lines(change.resource.read(), change.new_contents, new):
                refs.append((path, line, col, "confirmed", ""))
        return refs

    notes = ["source_folders=src" if SRC_LAYOUT[project] else "source_folders auto", "unparsable files excluded"]
    if unsure:
        notes.append("unsure=always")
    result = {"open_s": setup_s, "queries": _query_all(targets, ask, repeats), "notes": notes}
    proj.close()
    return result


def rope_rename(root: Path, project: str, target: Target, new: str, unsure: bool) -> Result:
    t0 = time.perf_counter()
    proj, resources = _rope_project(root, project)
    changes = _rope_changes(proj, resources, target, new, unsure)
    proj.do(changes)
    proj.close()
    return {"seconds": time.perf_counter() - t0}


# --------------------------------------------------------------------------------------------------- basedpyright
def _pyright_settings(project: str) -> Callable[[str], Any]:
    analysis = {"diagnosticMode": "openFilesOnly", "extraPaths": ["src"] if SRC_LAYOUT[project] else []}

    def settings(section: str) -> Any:
        if section.endswith(".analysis"):
            return analysis
        return {"analysis": analysis} if section in ("basedpyright", "python") else {}

    return settings


def _pyright_config(root: Path, project: str) -> None:
    """Search the whole project: requests and flask limit pyright to ``src`` in pyproject.toml, which would hide
    every reference in tests. A pyrightconfig.json in the (scratch) root takes precedence over pyproject.toml."""
    config = {"include": ["."], "extraPaths": ["src"] if SRC_LAYOUT[project] else []}
    (root / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")


async def _pyright_session(root: Path, project: str) -> LspClient:
    _pyright_config(root, project)
    client = await LspClient.start(["basedpyright-langserver", "--stdio"], root, _pyright_settings(project))
    caps = {"window": {"workDoneProgress": True}, "workspace": {"configuration": True, "workspaceEdit": {}}}
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": uri(root),
            "workspaceFolders": [{"uri": uri(root), "name": root.name}],
            "capabilities": caps,
        },
    )
    await client.notify("initialized", {})
    return client


async def _wait_for_workspace(client: LspClient, notes: list[str]) -> None:
    """Until pyright has enumerated the workspace, references only cover open files (the first answers on Django
    list the declaration alone); its log line "Found N source files" marks the end of that enumeration."""
    try:
        await asyncio.wait_for(client.files_found.wait(), 120)
    except TimeoutError:
        notes.append("no 'Found N source files' within 120 s")


async def _open(client: LspClient, path: Path) -> None:
    params = {"textDocument": {"uri": uri(path), "languageId": "python", "version": 1, "text": path.read_text()}}
    await client.notify("textDocument/didOpen", params)


def _from_uri(root: Path, u: str) -> str | None:
    from urllib.parse import unquote, urlparse

    p = Path(unquote(urlparse(u).path))
    try:
        return _rel(root, p)
    except ValueError:
        return None


async def _pyright_refs_async(root: Path, project: str, targets: list[Target], repeats: int) -> Result:
    t0 = time.perf_counter()
    client = await _pyright_session(root, project)
    for rel in {t.path for t in targets}:
        await _open(client, root / rel)
    notes: list[str] = ["diagnosticMode=openFilesOnly", "pyrightconfig include=."]
    await _wait_for_workspace(client, notes)
    open_s = time.perf_counter() - t0

    async def ask(t: Target) -> list[Ref]:
        params = {
            "textDocument": {"uri": uri(root / t.path)},
            "position": {"line": t.line - 1, "character": t.col},
            "context": {"includeDeclaration": True},
        }
        locs = await client.request("textDocument/references", params) or []
        refs: list[Ref] = []
        for loc in locs:
            rel = _from_uri(root, loc["uri"])
            if rel is not None:
                start = loc["range"]["start"]
                refs.append((rel, start["line"] + 1, start["character"], "confirmed", ""))
        return sorted(set(refs))

    queries: list[Result] = []
    for t in targets:
        row: Result = {"qualname": t.qualname}
        try:
            # The first answers are partial until analysis finishes: re-ask until two answers agree (PEERS.md).
            start = time.perf_counter()
            prev, asks = await ask(t), 1
            first_stable = time.perf_counter() - start
            while True:
                await asyncio.sleep(0.5)
                cur = await ask(t)
                asks += 1
                if cur == prev and (asks >= 3 or time.perf_counter() - start > 2):
                    break
                if cur != prev:
                    first_stable = time.perf_counter() - start
                prev = cur
                if time.perf_counter() - start > 120:
                    notes.append(f"{t.name}: answer never stabilised in 120 s")
                    break
            row["first_s"] = first_stable
            times = []
            for _ in range(repeats):
                q0 = time.perf_counter()
                await ask(t)
                times.append(time.perf_counter() - q0)
            row["repeat_s"] = times
            row["refs"] = prev
            row["asks_until_stable"] = asks
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        queries.append(row)
    await client.shutdown()
    return {"open_s": open_s, "queries": queries, "notes": notes}


def pyright_refs(root: Path, project: str, targets: list[Target], repeats: int) -> Result:
    return asyncio.run(_pyright_refs_async(root, project, targets, repeats))


async def _pyright_rename_async(root: Path, project: str, target: Target, new: str) -> Result:
    t0 = time.perf_counter()
    client = await _pyright_session(root, project)
    await _open(client, root / target.path)
    await _wait_for_workspace(client, [])
    params = {
        "textDocument": {"uri": uri(root / target.path)},
        "position": {"line": target.line - 1, "character": target.col},
    }
    ref_params = {**params, "context": {"includeDeclaration": True}}
    prev = None
    while True:  # wait for analysis the same way as for references
        cur = await client.request("textDocument/references", ref_params)
        if cur == prev or time.perf_counter() - t0 > 120:
            break
        prev = cur
        await asyncio.sleep(0.5)
    edit = await client.request("textDocument/rename", {**params, "newName": new}) or {}
    await client.shutdown()
    changes: dict[str, list[Any]] = dict(edit.get("changes") or {})
    for doc in edit.get("documentChanges") or []:
        if "edits" in doc:
            changes.setdefault(doc["textDocument"]["uri"], []).extend(doc["edits"])
    for u, edits in changes.items():
        rel = _from_uri(root, u)
        if rel is None:
            continue
        _apply_lsp_edits(root / rel, edits)
    return {"seconds": time.perf_counter() - t0}


def _apply_lsp_edits(path: Path, edits: list[Any]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        s, en = e["range"]["start"], e["range"]["end"]
        if s["line"] != en["line"]:
            raise ValueError("multi-line rename edit")
        line = lines[s["line"]]
        lines[s["line"]] = line[: s["character"]] + e["newText"] + line[en["character"] :]
    path.write_text("".join(lines), encoding="utf-8")


def pyright_rename(root: Path, project: str, target: Target, new: str) -> Result:
    return asyncio.run(_pyright_rename_async(root, project, target, new))


# ---------------------------------------------------------------------------------------------------------- prism
def prism_refs(root: Path, project: str, targets: list[Target], repeats: int) -> Result:
    from tomo.prism import Graph  # type: ignore[attr-defined]

    open_s, graph = _timed(lambda: Graph.open(root))
    notes: list[str] = []

    def ask(t: Target) -> list[Ref]:
        if not hasattr(graph, "references"):
            raise NotImplementedError("Graph.references is missing")
        refs = graph.references(t.qualname)
        return [
            (
                r.path,
                r.line,
                r.col,
                getattr(r, "confidence", "?"),
                f"{getattr(r, 'kind', '')}: {getattr(r, 'reason', '')}",
            )
            for r in refs
        ]

    queries = _query_all(targets, ask, repeats)
    stats = getattr(graph, "stats", None)
    if stats is not None:
        notes.append(f"stats: {stats() if callable(stats) else stats}"[:300])
    refresh_s = None
    if callable(getattr(graph, "refresh", None)):  # no file changed: this is the incremental refresh's floor
        refresh_s = min(_timed(graph.refresh)[0] for _ in range(max(repeats, 1)))
    close = getattr(graph, "close", None)
    if callable(close):
        close()
    return {"open_s": open_s, "queries": queries, "notes": notes, "refresh_s": refresh_s}


def prism_rename(root: Path, project: str, target: Target, new: str) -> Result:
    from tomo.prism import Graph  # type: ignore[attr-defined]

    t0 = time.perf_counter()
    graph = Graph.open(root)
    plan = graph.rename_plan(target.qualname, new)
    applied = graph.apply(plan, include_ambiguous=False)
    return {
        "seconds": time.perf_counter() - t0,
        "confirmed": len(plan.confirmed),
        "ambiguous": len(plan.ambiguous),
        "conflicts": len(plan.conflicts),
        "applied": getattr(applied, "edits_applied", None),
        "ambiguous_edits": [f"{e.path}:{e.line} {e.reason}" for e in plan.ambiguous],
    }


def median_ms(values: list[float]) -> float | None:
    return statistics.median(values) * 1000 if values else None
