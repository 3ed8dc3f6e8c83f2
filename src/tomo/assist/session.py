"""The dispatcher behind assist and ``tomo mcp``: prism operations by name, each answer kept under a handle.

``Session.invoke(tool, args)`` runs one graph operation and returns an :class:`OpResult`: the full payload (for the
person, the CLI's tables, an MCP client) and a one-line receipt (for a model inside assist). Handles belong to one
session: a handle carries its session's tag, so one from another session is refused by name, and a plan whose files
changed since it was made is refused as stale. Applying takes a plan handle, never the edits, which is what lets a
plan of any size be applied while a model only ever wrote ``p1-k3q``.

Writes are journalled (the bytes of every file before an apply) so the harness can roll an apply back byte for byte.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import secrets
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomo.errors import TomoError
from tomo.events import NullSink, PayloadRendered, Sink
from tomo.prism import Applied, Graph, LeavesReferences, Plan, leaves_warning, left_behind

MODEL_OPS = ("find_symbol", "definition", "references", "callers", "callees", "impact", "rename_plan", "apply_plan")
"""The operations a model may ask for inside assist: prism queries, a rename plan, and applying a plan by handle."""

OPS = (*MODEL_OPS, "undo_apply")
"""Everything the dispatcher answers; ``undo_apply`` is for the harness (rollback) and MCP clients only."""

_PREFIX = {"find_symbol": "s", "definition": "d", "references": "r", "callers": "c", "callees": "e", "impact": "i",
           "rename_plan": "p", "apply_plan": "a", "undo_apply": "u"}
_HANDLE = re.compile(r"^([a-z])(\d+)(?:-([a-z0-9]+))?$")
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


class HandleRefused(TomoError):
    """A handle that cannot be used here: unknown, from another session, stale, the wrong kind, or already used."""


@dataclass(frozen=True, slots=True)
class OpResult:
    """One operation's answer: ``receipt`` is what a model reads, ``payload`` what a person (or MCP client) gets."""

    handle: str
    operation: str
    receipt: str
    payload: dict[str, Any]


@dataclass(slots=True)
class _PlanRecord:
    plan: Plan
    hashes: dict[str, str]  # sha256 of every file the plan touches, when it was made
    applied_as: str | None = None


@dataclass(slots=True)
class _ApplyRecord:
    plan_handle: str
    before: dict[str, bytes]  # each written file's bytes before the apply
    after: dict[str, str]  # sha256 of each written file right after it
    undone_as: str | None = None


@dataclass(slots=True)
class _Records:
    plans: dict[str, _PlanRecord] = field(default_factory=dict)
    applies: dict[str, _ApplyRecord] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # handle -> operation
    counters: Counter[str] = field(default_factory=Counter)


def new_session_id() -> str:
    """Four characters that tell this session's handles from any other's (32**4 ids; no 0/o, 1/l/i confusion)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(4))


class Session:
    """One conversation's view of a repository's graph. Not thread-safe: one caller at a time (the loop, an MCP
    server's event loop)."""

    def __init__(self, graph: Graph, *, sink: Sink | None = None, session_id: str | None = None,
                 refresh: bool = False) -> None:
        """``refresh`` re-reads files changed on disk before every query (a long-lived MCP server, where the user
        edits between calls); a plan always refreshes first, whatever this says."""
        self.graph = graph
        self.refresh = refresh
        self.root = graph.root
        self.sink = sink or NullSink()
        self.id = session_id or new_session_id()
        self._r = _Records()
        self._ops: dict[str, Callable[..., OpResult]] = {name: getattr(self, f"_op_{name}") for name in OPS}

    @classmethod
    def open(cls, root: str | os.PathLike[str], *, sink: Sink | None = None) -> Session:
        return cls(Graph.open(root), sink=sink)

    def close(self) -> None:
        self.graph.close()

    # ---- the dispatcher --------------------------------------------------------------------------------------------

    def invoke(self, tool: str, args: Mapping[str, Any] | None = None) -> OpResult:
        """Runs operation ``tool`` with ``args``; emits the full payload to the sink; returns the receipt too.

        Raises :class:`TomoError` (with a hint) for anything the caller must fix: an unknown operation, bad
        arguments, an unknown symbol, a refused handle.
        """
        fn = self._ops.get(tool)
        if fn is None:
            raise TomoError(f"there is no graph operation named {tool!r}", hint=f"operations: {', '.join(OPS)}")
        if self.refresh and tool in ("find_symbol", "definition", "references", "callers", "callees", "impact"):
            self.graph.refresh()
        try:
            result = fn(**dict(args or {}))
        except TypeError as exc:
            if "argument" not in str(exc):
                raise
            raise TomoError(f"bad arguments for {tool}: {exc}", hint=f"{tool} takes {_params(fn)}") from exc
        self.sink.emit(PayloadRendered(result.handle, result.operation, result.payload))
        return result

    __call__ = invoke

    def _handle(self, op: str) -> str:
        prefix = _PREFIX[op]
        self._r.counters[prefix] += 1
        handle = f"{prefix}{self._r.counters[prefix]}-{self.id}"
        self._r.kinds[handle] = op
        return handle

    def resolve(self, handle: str, want: str) -> str:
        """The canonical form of ``handle`` if it names an answer of kind ``want`` in this session; else refused."""
        text = handle.strip()
        m = _HANDLE.match(text)
        if m is None:
            raise HandleRefused(f"`{handle}` is not a handle",
                                hint=f"pass the handle from a receipt, like {_PREFIX[want]}1-{self.id}")
        prefix, number, tag = m.groups()
        if tag is not None and tag != self.id:
            raise HandleRefused(f"handle `{text}` belongs to another session ({tag}), not this one ({self.id})",
                                hint=f"handles live for one session: run {want} again here and use its handle")
        canonical = f"{prefix}{number}-{self.id}"
        kind = self._r.kinds.get(canonical)
        if kind is None:
            mine = ", ".join(h for h, k in self._r.kinds.items() if k == want) or "none yet"
            raise HandleRefused(f"there is no handle `{text}` in this session",
                                hint=f"{want} handles in this session: {mine}")
        if kind != want:
            raise HandleRefused(f"`{text}` is a {kind} result, not a {want} result",
                                hint=f"pass a handle from {want}")
        return canonical

    # ---- queries ---------------------------------------------------------------------------------------------------

    def _op_find_symbol(self, query: str, limit: int = 20) -> OpResult:
        found = self.graph.find_symbol(query, limit=max(1, min(limit, 200)))
        h = self._handle("find_symbol")
        listed = "; ".join(f"{s.qualname} ({s.kind}, {s.path}:{s.line})" for s in found[:5])
        more = f"; and {len(found) - 5} more shown to the user" if len(found) > 5 else ""
        receipt = (f"symbols {h}: {_n(len(found), 'match', 'matches')} for `{query}`" +
                   (f": {listed}{more}" if found else "; try a shorter or different part of the name"))
        return OpResult(h, "find_symbol", receipt, {"query": query, "symbols": [_asdict(s) for s in found]})

    def _op_definition(self, symbol: str) -> OpResult:
        s = self.graph.definition(symbol)
        h = self._handle("definition")
        receipt = f"definition {h}: {s.qualname} is a {s.kind} at {s.path}:{s.line}"
        return OpResult(h, "definition", receipt, {"symbol": _asdict(s)})

    def _op_references(self, symbol: str) -> OpResult:
        sym = self.graph.symbol(symbol)
        refs = self.graph.references(sym)
        h = self._handle("references")
        amb = [r for r in refs if r.confidence == "ambiguous"]
        files = sorted({r.path for r in refs})
        receipt = (f"refs {h}: {_n(len(refs), 'reference')} to {sym.qualname} in {_n(len(files), 'file')}, "
                   f"{len(amb)} ambiguous{_reasons(r.reason for r in amb)}")
        payload = {"symbol": sym.qualname, "references": [_asdict(r) for r in refs], "files": files,
                   "confirmed": len(refs) - len(amb), "ambiguous": len(amb)}
        return OpResult(h, "references", receipt, payload)

    def _op_callers(self, symbol: str) -> OpResult:
        sym = self.graph.symbol(symbol)
        callers = self.graph.callers(sym)
        h = self._handle("callers")
        funcs = list(dict.fromkeys(c.symbol.qualname for c in callers))
        amb = sum(c.reference.confidence == "ambiguous" for c in callers)
        named = ", ".join(funcs[:5]) + (f" and {len(funcs) - 5} more" if len(funcs) > 5 else "")
        receipt = (f"callers {h}: {_n(len(callers), 'call site')} of {sym.qualname} in "
                   f"{_n(len(funcs), 'function')}, {amb} ambiguous" + (f": {named}" if funcs else ""))
        payload = {"symbol": sym.qualname,
                   "callers": [{"caller": c.symbol.qualname, **_asdict(c.reference)} for c in callers]}
        return OpResult(h, "callers", receipt, payload)

    def _op_callees(self, symbol: str) -> OpResult:
        sym = self.graph.symbol(symbol)
        callees = self.graph.callees(sym)
        h = self._handle("callees")
        targets = list(dict.fromkeys(c.symbol.qualname if c.symbol else c.name for c in callees))
        bound = sum(c.symbol is not None for c in callees)
        named = ", ".join(targets[:8]) + (f" and {len(targets) - 8} more" if len(targets) > 8 else "")
        receipt = (f"callees {h}: {sym.qualname} makes {_n(len(callees), 'call')}, {bound} bound to a definition"
                   + (f": {named}" if targets else ""))
        payload = {"symbol": sym.qualname,
                   "callees": [{"name": c.name, "target": c.symbol.qualname if c.symbol else None,
                                **_asdict(c.reference)} for c in callees]}
        return OpResult(h, "callees", receipt, payload)

    def _op_impact(self, symbol: str, depth: int = 3) -> OpResult:
        sym = self.graph.symbol(symbol)
        depth = max(1, min(depth, 8))
        items = self.graph.impact(sym, max_depth=depth)
        h = self._handle("impact")
        tests = sum(i.is_test for i in items)
        amb = sum(i.confidence == "ambiguous" for i in items)
        receipt = (f"impact {h}: changing {sym.qualname} may affect {_n(len(items), 'symbol')} within depth {depth}"
                   f" ({tests} of them tests, {amb} ambiguous)")
        payload = {"symbol": sym.qualname, "depth": depth,
                   "items": [{"symbol": i.symbol.qualname, "path": i.symbol.path, "line": i.symbol.line,
                              "depth": i.depth, "via": i.via, "is_test": i.is_test, "confidence": i.confidence}
                             for i in items]}
        return OpResult(h, "impact", receipt, payload)

    # ---- rename: plan, apply, undo ---------------------------------------------------------------------------------

    def _op_rename_plan(self, symbol: str, new_name: str) -> OpResult:
        plan = self.graph.rename_plan(symbol, new_name)
        h = self._handle("rename_plan")
        self._r.plans[h] = _PlanRecord(plan, {p: _sha(self.root / p) for p in plan.file_hashes})
        amb = plan.ambiguous
        conflicts = (f"{_n(len(plan.conflicts), 'conflict')}: {plan.conflicts[0].reason}"
                     f" at {plan.conflicts[0].path}:{plan.conflicts[0].line}" if plan.conflicts else "0 conflicts")
        left = left_behind(plan)
        warning = f"WARNING: {leaves_warning(plan, left)}, so applying it is refused unless the user allows " \
                  "ambiguous edits; " if left else ""
        receipt = (f"plan {h}: {warning}rename {plan.symbol.qualname} to {plan.new_name}: "
                   f"{_n(len(plan.confirmed), 'confirmed edit')} in {_n(len({e.path for e in plan.confirmed}), 'file')}"
                   f", {len(amb)} ambiguous{_reasons(e.reason for e in amb)}, {conflicts}")
        return OpResult(h, "rename_plan", receipt, plan_payload(plan))

    def _op_apply_plan(self, handle: str, include_ambiguous: bool = False, dry_run: bool = False) -> OpResult:
        ph = self.resolve(handle, "rename_plan")
        rec = self._r.plans[ph]
        plan = rec.plan
        if rec.applied_as is not None:
            raise HandleRefused(f"plan {ph} was already applied (as {rec.applied_as})",
                                hint="make a new rename plan if more edits are needed")
        changed = [p for p, digest in rec.hashes.items() if _sha(self.root / p) != digest]
        if changed:
            more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            raise HandleRefused(f"plan {ph} is stale: {', '.join(changed[:3])}{more} changed since it was made; "
                                "nothing was written", hint="make a new rename plan and apply that handle")
        if plan.conflicts:
            c = plan.conflicts[0]
            raise HandleRefused(f"plan {ph} has {_n(len(plan.conflicts), 'conflict')} ({c.reason} at "
                                f"{c.path}:{c.line}); nothing was written", hint="plan a rename to another name")
        behind = [] if include_ambiguous else left_behind(plan)
        if behind and not dry_run:
            raise LeavesReferences(plan, behind)
        chosen = [e for e in plan.edits if e.confidence == "confirmed" or include_ambiguous]
        left = [e for e in plan.edits if not (e.confidence == "confirmed" or include_ambiguous)]
        skipped = [{"path": e.path, "line": e.line, "col": e.col, "reason": e.reason or e.confidence} for e in left]
        files = sorted({e.path for e in chosen})
        if dry_run:
            h = self._handle("apply_plan")
            payload = {"plan": ph, "written": False, "include_ambiguous": include_ambiguous, "files": files,
                       "edits_applied": 0, "edits_chosen": len(chosen), "skipped": skipped}
            receipt = (f"chosen {h}: plan {ph} ({_n(len(chosen), 'edit')} in {_n(len(files), 'file')}) is chosen; "
                       "nothing was written: this run only shows the plan, the user applies it after review"
                       + (f"; WARNING: {leaves_warning(plan, behind)}" if behind else ""))
            return OpResult(h, "apply_plan", receipt, payload)
        before = {p: (self.root / p).read_bytes() for p in files}
        applied: Applied = self.graph.apply(plan, include_ambiguous=include_ambiguous)
        h = self._handle("apply_plan")
        rec.applied_as = h
        self._r.applies[h] = _ApplyRecord(ph, before, {p: _sha(self.root / p) for p in applied.files})
        payload = {"plan": ph, "written": True, "include_ambiguous": include_ambiguous, "files": list(applied.files),
                   "edits_applied": applied.edits_applied, "edits_chosen": len(chosen), "skipped": skipped}
        receipt = (f"applied {h}: plan {ph}: {_n(applied.edits_applied, 'edit')} written to "
                   f"{_n(len(applied.files), 'file')}; "
                   + (f"{len(left)} ambiguous left unapplied{_reasons(e.reason for e in left)}" if left
                      else "nothing left unapplied"))
        return OpResult(h, "apply_plan", receipt, payload)

    def _op_undo_apply(self, handle: str, force: bool = False) -> OpResult:
        ah = self.resolve(handle, "apply_plan")
        rec = self._r.applies.get(ah)
        if rec is None:
            raise HandleRefused(f"{ah} chose a plan without writing it; there is nothing to undo",
                                hint="undo takes the handle of an apply that wrote files")
        if rec.undone_as is not None:
            raise HandleRefused(f"{ah} was already undone (as {rec.undone_as})", hint="nothing left to undo")
        edited = [p for p, digest in rec.after.items() if _sha(self.root / p) != digest]
        if edited and not force:
            raise HandleRefused(f"{', '.join(edited[:3])} changed after {ah} was applied; nothing was restored",
                                hint="pass force=true to restore the bytes from before the apply anyway")
        for path, data in rec.before.items():
            _write_atomic(self.root / path, data)
        self.graph.refresh()
        h = self._handle("undo_apply")
        rec.undone_as = h
        self._r.plans[rec.plan_handle].applied_as = None
        payload = {"apply": ah, "plan": rec.plan_handle, "files": sorted(rec.before), "overwrote_later_edits": edited}
        receipt = f"undone {h}: {ah} rolled back; {_n(len(rec.before), 'file')} restored to their bytes before it"
        return OpResult(h, "undo_apply", receipt, payload)


# ---- helpers -----------------------------------------------------------------------------------------------------


def plan_payload(plan: Plan) -> dict[str, Any]:
    return {"symbol": _asdict(plan.symbol), "new_name": plan.new_name,
            "edits": [_asdict(e) for e in plan.edits], "conflicts": [_asdict(c) for c in plan.conflicts],
            "files": plan.files, "confirmed": len(plan.confirmed), "ambiguous": len(plan.ambiguous),
            "left_unrenamed": [{"path": e.path, "line": e.line, "col": e.col, "reason": e.reason}
                               for e in left_behind(plan)]}


def _asdict(obj: Any) -> dict[str, Any]:
    return dataclasses.asdict(obj)


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def _reasons(reasons: Any) -> str:
    """`` (1 docs, 2 untyped receiver `item`)``: why edits are ambiguous, the commonest first, at most three kinds."""
    counts = Counter(r or "unproven" for r in reasons)
    if not counts:
        return ""
    top = [f"{n} {reason}" for reason, n in counts.most_common(3)]
    rest = len(counts) - 3
    return " (" + ", ".join(top) + (f", {rest} other reasons" if rest > 0 else "") + ")"


def _sha(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tomo-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _params(fn: Callable[..., Any]) -> str:
    import inspect

    return ", ".join(str(p) for p in inspect.signature(fn).parameters.values()) or "no arguments"
