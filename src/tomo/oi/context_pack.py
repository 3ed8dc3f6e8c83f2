"""The context pack: the files and definitions a task is about, found before the model's first round, with no model.

``build(root, task)`` reads the task text for anchors (:mod:`tomo.oi.context_anchors`: traceback frames, paths,
dotted names, identifiers, test names, error messages), resolves them in prism's index (definitions by name and by
qualified suffix, a class named beside its method, a frame's file and line), and ranks files and definitions by the
strength of that evidence. BM25 over identifier-aware tokens (:mod:`tomo.oi.context_search`) is a weaker signal
beside it, so a task without a single code name still gets an answer. Tests are ranked apart from the code under
test. An optional language server (``lsp="pylsp"``) adds its workspace symbols and references; any failure of it
leaves the result exactly as it would be without it.

The preamble (``Pack.text``) fits ``budget_tokens``: the ranked files with the reasons, then the most relevant
bodies, then signatures, then the rest as a list.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tomo.oi import context_anchors, context_history, context_search
from tomo.oi.context_anchors import Anchor
from tomo.oi.context_functions import frame_defs, name_match, title_of
from tomo.oi.context_history import History
from tomo.oi.context_search import Retrieval, bm25_spans, path_tokens, tokens
from tomo.prism import Graph
from tomo.prism import store as prism_store
from tomo.prism.indexer import Progress

DEFAULT_BUDGET = 3000
SHORT_BODY = 6  # lines: a definition this short is shown whole, past the three full bodies
CONSTANT_LINES = 12
"""The longest module constant shown with the code that uses it, in lines."""
_CONSTANT = re.compile(r"^(_*[A-Z][A-Z0-9_]*)\s*(?::[^=]+)?=(?!=)\s*\S")
LSP_TIMEOUT = 15.0  # seconds for the language server in all: start, initialize, every query
_TEST_NAMES = ("conftest.py", "tests.py")


def is_test_path(path: str) -> bool:
    """A test file: test_*.py / *_test.py / tests.py / conftest.py, or anything under a ``tests`` directory.

    Narrower than prism's rule on purpose: ``django/test/`` is library code a task can be about.
    """
    name = path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    return (stem.startswith("test_") or stem.endswith(("_test", "_tests")) or name in _TEST_NAMES
            or "/tests/" in f"/{path}")
_ASIDE_DIRS = frozenset({"doc", "docs", "example", "examples", "benchmarks", "benchmark", "asv_bench", "bench",
                         "scripts", "tools", "tutorials", "galleries", "gallery", "build_tools", "ci", "maint_tools"})


def is_aside_path(path: str) -> bool:
    """A file beside the product: under docs/, examples/, benchmarks/, scripts/, tools/... (any directory level)."""
    return any(part in _ASIDE_DIRS for part in path.split("/")[:-1])


CHARS_PER_TOKEN = 4  # the usual estimate for code; said so in the preamble's size, never used to bill anyone
HISTORY_WEIGHT = 3.0  # the git history's weight when asked for (`--history`), chosen on half A of the benchmark


@dataclass(frozen=True)
class Weights:
    """How much each kind of evidence counts. Defaults were set on half of the benchmark set (docs/context-pack.md)."""

    bm25: float = 3.0  # the top BM25 file gets this much; others in proportion
    bm25_code: float = 1.5  # BM25 again, on the tokens of the code-like anchors only
    anchor_scale: float = 0.0  # when set, anchor evidence is rescaled so the best-anchored file has this much
    refs: float = 0.0  # files that use (reference) several of the task's code names, the best one gets this much
    variants: bool = False  # add plain forms of the task's words to the BM25 query (renamed -> rename)
    specificity: float = 1.0  # a name defined in n files gives each definition 1/n**specificity of its weight
    member: float = 2.0  # a method whose class is also named in the task
    dotted: float = 2.0  # a dotted path in the task (the shares below say how it counts, by what it matched)
    dotted_module: float = 1.0  # ... it is a module: that module's file
    dotted_prefix: float = 0.5  # ... a prefix of it is a module (pkg.mod of pkg.mod.Class.attr): that module's file
    dotted_suffix: float = 1.0  # ... a definition's qualified name ends with it
    dotted_partial: float = 0.5  # ... a definition of its last part whose qualified name has some of the others
    dotted_snippet: float = 0.0  # ... and by where it was written: only in a fenced code block (a reproducer's
    # imports and calls name the API used, seldom the file to fix: on half A the gold file had such evidence in 4
    # of the 21 tasks with any, against 11 of 18 for paths in prose and 3 of 3 in backticks; docs/context-pack.md)
    name_snippet: float = 1.0  # a name written only in a fenced code block counts this share of a name's weight;
    # at 0.5 (chosen on A: @3 +1.8) held-out B lost a task @1 and gained 6 points of function @5, so it stays 1
    message: float = 1.0
    lsp_symbol: float = 0.5
    lsp_reference: float = 0.15
    fn_file: float = 1.0  # a definition inherits this share of its file's (normalized) score
    fn_body: float = 1.5  # BM25 of a definition's body against the task, normalized over the candidates
    fn_anchor: float = 2.0  # the definition's own anchor evidence, normalized over the candidates
    fn_name: float = 1.5  # idf-weighted overlap of a definition's qualified name with the task's words (title x2)
    fn_title: float = 0.0  # the same with the title's words only
    frame_names: bool = True  # a frame whose line is in another function goes to the function it names, if defined
    loose: float = 0.5  # factor for a file outside any package (a script, an example, docs/conf.py)
    aside: float = 0.5  # factor for a file under docs/, examples/, benchmarks/, scripts/, tools/ (seldom the fix)
    frames_in_repo: bool = True  # a frame's depth counts among the frames that resolve in the repo only
    test_map: float = 0.5  # a test name also names the code under test: test_foo_bar -> foo_bar, TestFoo -> Foo
    expand: float = 0.5  # BM25 on the module-path tokens of the files defining the task's rarest names
    fusion: str = "sum"  # "sum": weighted evidence added up; "rrf": reciprocal-rank fusion of the signals' rankings
    rrf_k: float = 10.0
    path_weight: float = 2.0  # how much a path token counts against a body token in BM25
    mentions: float = 0.3  # a name given n times weighs (1 + mentions * log2(n)) times as much
    title: float = 2.0  # BM25 again on the task's first line (an issue's title says what it is about)
    span: float = 0.0  # BM25 of the best function body in each of the span_top best files (a file-level rerank)
    span_top: int = 30
    history: float = 0.0  # files touched by past commits whose messages match the task (context_history.py);
    # off: at 3 (chosen on half A) it kept A @1 and @5 and cost held-out B 4.3 points @1 (docs/context-pack.md)
    history_top: int = 50  # how many matching commits vote
    history_decay: float = 0.05  # a commit's vote is divided by 1 + history_decay * its rank among the matches
    history_spread: float = 0.5  # and by (code files it touched) ** history_spread: sweeping commits count little
    top_files_for_functions: int = 10
    use_anchors: bool = True
    use_bm25: bool = True


@dataclass
class Pack:
    """What the pack found: ``files`` (code, best first), ``symbols`` (``path::Qualified.name``), the preamble."""

    files: list[str]
    symbols: list[str]
    text: str
    tests: list[str] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what went wrong on the side (a language server that failed)
    seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return {"files": self.files, "symbols": self.symbols, "tests": self.tests, "text": self.text,
                "reasons": {p: self.reasons[p] for p in self.files[:20] if p in self.reasons}, "notes": self.notes}


@dataclass(frozen=True, slots=True)
class _Def:
    qualname: str
    name: str
    kind: str
    path: str
    line: int
    col: int
    end_line: int
    local: str  # the qualified name inside its file: Class.method


class _Evidence:
    def __init__(self) -> None:
        self.files: dict[str, float] = defaultdict(float)
        self.defs: dict[_Def, float] = defaultdict(float)
        self.reasons: dict[str, list[str]] = defaultdict(list)

    def file(self, path: str, score: float, reason: str) -> None:
        if score <= 0:
            return
        self.files[path] += score
        if reason and len(self.reasons[path]) < 6 and reason not in self.reasons[path]:
            self.reasons[path].append(reason)

    def symbol(self, d: _Def, score: float) -> None:
        if score > 0:
            self.defs[d] += score


class _Index:
    """The queries the pack makes on prism's SQLite index (read only; prism owns the schema)."""

    def __init__(self, graph: Graph) -> None:
        self.conn = graph.conn
        self.modules: dict[str, str] = {}
        self.paths: list[str] = []
        self.by_base: dict[str, list[str]] = defaultdict(list)
        self.module_of: dict[str, str] = {}
        self.loose: set[str] = set()  # files outside any package: scripts, examples, docs' conf.py, setup.py
        for path, module, imp, is_pkg in self.conn.execute("SELECT path, module, import_name, is_pkg FROM files"):
            self.paths.append(path)
            if not is_pkg and "." not in (imp or ""):
                self.loose.add(path)
            self.by_base[path.rsplit("/", 1)[-1]].append(path)
            self.module_of[path] = module or ""
            for m in {module, imp}:
                if m:
                    self.modules.setdefault(m, path)
        self._defs: dict[str, list[_Def]] = {}

    def defs(self, name: str) -> list[_Def]:
        got = self._defs.get(name)
        if got is None:
            rows = self.conn.execute(
                "SELECT d.qualname, d.name, d.kind, f.path, d.line, d.col, d.end_line FROM defs d"
                " JOIN files f ON f.id=d.file_id WHERE d.name=?", (name,)).fetchall()
            got = [_Def(q, n, k, p, ln, c, e, self.local(p, q)) for q, n, k, p, ln, c, e in rows]
            self._defs[name] = got
        return got

    def defs_in(self, path: str) -> list[_Def]:
        rows = self.conn.execute(
            "SELECT d.qualname, d.name, d.kind, f.path, d.line, d.col, d.end_line FROM defs d"
            " JOIN files f ON f.id=d.file_id WHERE f.path=?", (path,)).fetchall()
        return [_Def(q, n, k, p, ln, c, e, self.local(p, q)) for q, n, k, p, ln, c, e in rows]

    def local(self, path: str, qualname: str) -> str:
        mod = self.module_of.get(path, "")
        if mod and qualname.startswith(mod + "."):
            return qualname[len(mod) + 1 :]
        return qualname

    def match_path(self, text: str) -> list[str]:
        """Indexed files that ``text`` (an absolute, relative or partial path) names, best match first."""
        t = text.replace("\\", "/").lstrip("./")
        base = t.rsplit("/", 1)[-1]
        cands = self.by_base.get(base, [])
        if not cands:
            return []
        exact = [p for p in cands if t == p or t.endswith("/" + p) or p.endswith("/" + t)]
        if exact:
            # longest shared suffix wins: site-packages/django/db/models/query.py -> django/db/models/query.py
            return sorted(exact, key=lambda p: -len(p))
        return cands if "/" not in t else []


def seed(root: str | os.PathLike[str], source: str | os.PathLike[str]) -> bool:
    """Give ROOT, a new checkout of SOURCE's code (a worktree), the pack's two indexes as copies of SOURCE's,
    building or refreshing SOURCE's first: each is keyed by path and content hash, so ROOT's first pack parses and
    tokenizes only the files that differ (a worker's first pack on Django: 0.3 s instead of 5.8, for every worker of a
    team). Returns whether ROOT's code index was seeded (not when ROOT had one already)."""
    with Graph.open(source) as graph:
        Retrieval(graph.root, graph.conn.execute("SELECT path, hash FROM files").fetchall()).close()
    target, origin = Path(root).resolve(), Path(source).resolve()
    seeded = prism_store.seed(target, origin)
    context_search.seed(target, origin)
    return seeded


def build(root: str | os.PathLike[str], task: str, *, lsp: str | Sequence[str] | None = None,
          budget_tokens: int = DEFAULT_BUDGET, progress: Progress | None = None,
          lsp_timeout: float = LSP_TIMEOUT, git_dir: str | os.PathLike[str] | None = None,
          git_rev: str | None = None, weights: Weights = Weights()) -> Pack:
    """The context pack for ``task`` in the repository at ``root`` (indexes it first if needed, incrementally).

    ``lsp`` is a language server command (``"pylsp"``); it gets ``lsp_timeout`` seconds in all, and on any failure
    the pack is what it would have been without it (``Pack.notes`` says why). ``progress(done, total)`` is called
    while prism parses files (a cold or stale index). With ``weights.history`` set, the git history up to
    ``git_rev`` (default ``HEAD``) of ``git_dir`` (default ``root/.git`` when there is one) is one more signal.
    """
    t0 = time.perf_counter()
    with Graph.open(root, progress=progress) as graph:
        retrieval = Retrieval(graph.root, graph.conn.execute("SELECT path, hash FROM files").fetchall())
        try:
            idx = _Index(graph)
            history, note = (context_history.open_history(retrieval.conn, graph.root, git_dir=git_dir, rev=git_rev)
                             if weights.history else (None, None))
            pack = rank(graph, retrieval, task, lsp=lsp, lsp_timeout=lsp_timeout, index=idx, history=history,
                        weights=weights)
            if note:
                pack.notes.append(note)
            pack.text = render(graph.root, pack, idx, budget_tokens)
        finally:
            retrieval.close()
    pack.seconds = time.perf_counter() - t0
    return pack


def rank(graph: Graph, retrieval: Retrieval, task: str, *, lsp: str | Sequence[str] | None = None,
         weights: Weights = Weights(), lsp_timeout: float = LSP_TIMEOUT, index: _Index | None = None,
         history: History | None = None) -> Pack:
    """Rank files, tests and definitions for ``task`` (no preamble; :func:`build` adds it).

    ``history`` (:func:`tomo.oi.context_history.open_history`) adds the files past commits on the same subject
    touched, a signal of its own (``weights.history``) beside BM25.
    """
    idx = index or _Index(graph)
    ev = _Evidence()
    anchors = context_anchors.extract(task)
    notes: list[str] = []
    signals: list[tuple[dict[str, float], float]] = []  # (file scores, weight) of each retrieval signal
    if weights.use_anchors:
        _resolve(idx, retrieval, anchors, ev, weights)
        if weights.anchor_scale and ev.files:  # the best-anchored file gets anchor_scale, others in proportion
            top = max(ev.files.values())
            for path in ev.files:
                ev.files[path] *= weights.anchor_scale / top
    if weights.use_bm25:
        signals.append((dict(retrieval.search(task, variants=weights.variants, path_weight=weights.path_weight)),
                        weights.bm25))
        if weights.bm25_code:  # the same, on the code-like words only: prose cannot drown them
            code_terms = list(dict.fromkeys(t for a in anchors if a.kind in ("name", "dotted") and a.weight >= 1.0
                                            for t in tokens(a.text)))
            signals.append((dict(retrieval.search_terms(code_terms, path_weight=weights.path_weight)),
                            weights.bm25_code))
        if weights.title:
            signals.append((dict(retrieval.search(title_of(task), path_weight=weights.path_weight)), weights.title))
        if weights.expand and weights.use_anchors:
            signals.append((dict(retrieval.search_terms(_expansion_terms(idx, anchors),
                                                        path_weight=weights.path_weight)), weights.expand))
    if history is not None and weights.history:
        signals.append((history.votes(task, idx.module_of, top=weights.history_top, decay=weights.history_decay,
                                      spread=weights.history_spread, is_test=is_test_path), weights.history))
    if weights.fusion == "rrf":
        _fuse_rrf(ev, signals, weights.rrf_k)
    else:
        for scores, weight in signals:
            top = max(scores.values(), default=0.0)
            for path, s in scores.items():
                ev.file(path, weight * s / top, "")
    if weights.span:
        _span_signal(graph.root, idx, retrieval, task, ev, weights)
    if weights.use_anchors and weights.refs:
        _uses(idx, anchors, ev, weights)
    if lsp is not None:
        notes += _lsp_signal(graph.root, lsp, anchors, idx, ev, weights, lsp_timeout)
    if weights.loose != 1.0:
        for path in idx.loose & set(ev.files):
            ev.files[path] *= weights.loose
    if weights.aside != 1.0:
        for path in ev.files:
            if is_aside_path(path):
                ev.files[path] *= weights.aside

    ranked = sorted(ev.files.items(), key=lambda kv: (-kv[1], kv[0]))
    code = [p for p, _ in ranked if not is_test_path(p)]
    tests = [p for p, _ in ranked if is_test_path(p)]
    symbols = _rank_symbols(graph.root, idx, retrieval, task, code, ev, weights)
    reasons = {p: ev.reasons[p] for p in code[:30] + tests[:10] if ev.reasons.get(p)}
    return Pack(files=code, symbols=symbols, text="", tests=tests, anchors=anchors, reasons=reasons, notes=notes)


def _fuse_rrf(ev: _Evidence, signals: list[tuple[dict[str, float], float]], k: float) -> None:
    """Reciprocal-rank fusion: each signal (the anchors' evidence first) gives a file weight/(k + its rank).

    Ranks, not scores, are added, so a signal with a long flat tail cannot outweigh a sharp one; the anchors count
    as much as BM25 on the whole task (3), each signal of ``signals`` by its own weight.
    """
    rankings = [(dict(ev.files), 3.0), *signals]
    fused: dict[str, float] = defaultdict(float)
    for scores, weight in rankings:
        if not weight:
            continue
        for r, (path, _s) in enumerate(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])), 1):
            fused[path] += weight * 10.0 / (k + r)
    ev.files.clear()
    ev.files.update(fused)


def _span_signal(root: Path, idx: _Index, retrieval: Retrieval, task: str, ev: _Evidence, w: Weights) -> None:
    """Rerank the best files by their best definition: BM25 of each function body against the task, max per file.

    Whole-file BM25 favours long files that mention the task's words everywhere; the file whose one function says
    most of what the task says is likelier the one to change.
    """
    top = [p for p, _ in sorted(ev.files.items(), key=lambda kv: (-kv[1], kv[0])) if not is_test_path(p)]
    owners: list[str] = []
    spans: list[list[str]] = []
    for path in top[: w.span_top]:
        try:
            lines = (root / path).read_bytes().decode("utf-8", "replace").split("\n")
        except OSError:
            continue
        fns = [d for d in idx.defs_in(path) if d.kind in ("function", "method")]
        for d in fns:
            owners.append(path)
            spans.append(tokens("\n".join(lines[d.line - 1 : max(d.end_line, d.line)])))
        if not fns:
            owners.append(path)
            spans.append(tokens("\n".join(lines)))
    if not spans:
        return
    qterms = Counter(tokens(task))
    best: dict[str, float] = {}
    for path, s in zip(owners, bm25_spans(qterms, spans, retrieval.idf(qterms)), strict=True):
        best[path] = max(best.get(path, 0.0), s)
    top_s = max(best.values()) or 1.0
    for path, s in best.items():
        ev.file(path, w.span * s / top_s, "")


def _expansion_terms(idx: _Index, anchors: list[Anchor]) -> list[str]:
    """The module-path tokens of the files that define the task's rarest code names (one to three files each).

    A task that names ``QuerySet.update`` is likely about ``db/models/query`` and its neighbours: their path words
    let BM25 find the module next door that the task did not name.
    """
    out: list[str] = []
    for a in anchors:
        if a.kind != "name" or a.weight < 3.0 or not (context_anchors.is_codeish(a.text) or a.text[:1].isupper()):
            continue
        files = {d.path for d in idx.defs(a.text) if not is_test_path(d.path)}
        if 1 <= len(files) <= 3:
            for path in sorted(files):
                out += path_tokens(path)
    return list(dict.fromkeys(out))[:60]


# ---- resolving anchors ---------------------------------------------------------------------------------------------

_KIND_FACTOR = {"class": 1.0, "function": 0.9, "method": 0.8, "variable": 0.4, "attribute": 0.3}


def _resolve(idx: _Index, retrieval: Retrieval, anchors: list[Anchor], ev: _Evidence, w: Weights) -> None:
    names: dict[str, float] = {}
    for a in anchors:
        if a.kind == "name":
            weight = a.weight * (1.0 + w.mentions * math.log2(a.count)) if w.mentions else a.weight
            if a.snippet:
                weight *= w.name_snippet
            names[a.text] = max(names.get(a.text, 0.0), weight)
    frames = [a for a in anchors if a.kind == "frame"]

    if w.frames_in_repo:  # library frames (site-packages, the standard library) say nothing about the repo
        frames = [a for a in frames if idx.match_path(a.text)]
    frame_files: dict[str, float] = {}
    for i, a in enumerate(frames):
        depth = 0.4 + 0.6 * (i + 1) / len(frames)  # the innermost frame is the likeliest place
        for path in idx.match_path(a.text)[:1]:
            # one file, one frame's worth: a file the stack passes through twice is not twice as likely
            gain = a.weight * depth - frame_files.get(path, 0.0)
            if gain > 0:
                frame_files[path] = a.weight * depth
                ev.file(path, gain, f"traceback frame line {a.line}" + (f" in {a.function}" if a.function else ""))
            for d in frame_defs(idx.defs_in(path), a.line, a.function, by_name=w.frame_names):
                ev.symbol(d, a.weight * depth)

    for a in anchors:
        if a.kind == "path":
            hits = idx.match_path(a.text)
            for path in hits[:5]:
                ev.file(path, a.weight / len(hits[:5]), f"path `{a.text}` in the task")
                if a.line:
                    for d in idx.defs_in(path):
                        if d.kind in ("function", "method") and d.line <= a.line <= max(d.end_line, d.line):
                            ev.symbol(d, a.weight)
        elif a.kind == "dotted":
            _dotted(idx, a, ev, w)
        elif a.kind == "test":  # evidence for the tests ranking only: `TestCase` in django/test/ is not a test
            tests = [d for d in idx.defs(a.text) if is_test_path(d.path)]
            for d in tests:
                ev.file(d.path, a.weight / len(tests), f"test `{a.text}` named in the task")
            if w.test_map:
                _test_to_code(idx, a, [d.path for d in tests], names, ev, w.test_map)
        elif a.kind == "message":
            hits = retrieval.phrase(a.text)
            for path in hits[:10]:
                ev.file(path, w.message * a.weight / len(hits[:10]), "error/log message text found here")

    for name, weight in names.items():
        defs = idx.defs(name)
        if not defs:
            continue
        nfiles = len({d.path for d in defs})
        spec = 1.0 / nfiles ** w.specificity
        best: dict[str, tuple[float, str]] = {}
        for d in defs:
            s = weight * spec * _KIND_FACTOR.get(d.kind, 0.5)
            label = name
            parent = d.local.rsplit(".", 1)[0] if "." in d.local else ""
            if parent and parent.rsplit(".", 1)[-1] in names:  # `Cls` and `method` both named: Cls.method
                s += w.member * weight * _KIND_FACTOR.get(d.kind, 0.5)
                label = f"{parent.rsplit('.', 1)[-1]}.{name}"
            ev.symbol(d, s)
            if s > best.get(d.path, (0.0, ""))[0]:
                best[d.path] = (s, label)
        for path, (s, label) in best.items():
            ev.file(path, s, f"defines `{label}`")


def _test_to_code(idx: _Index, a: Anchor, test_files: list[str], names: dict[str, float], ev: _Evidence,
                  share: float) -> None:
    """A test's name names the code under test: ``test_foo_bar`` -> ``foo_bar`` (and ``foo``), ``TestFoo`` -> ``Foo``;
    ``tests/test_mod.py`` -> ``mod``. Each becomes a name anchor at ``share`` of the test's weight, resolved with
    the others (so it meets the same specificity rule)."""
    cands: list[str] = []
    t = a.text
    if t.startswith("test_"):
        rest = t[5:]
        cands.append(rest)
        parts = rest.split("_")
        cands += ["_".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]
    elif t.startswith("Test") and len(t) > 4:
        cands.append(t[4:])
    for path in test_files[:3]:
        stem = path.rsplit("/", 1)[-1].removesuffix(".py")
        if stem.startswith("test_") and len(stem) > 5:
            code = [p for p in idx.by_base.get(stem[5:] + ".py", []) if not is_test_path(p)]
            for p in code[:3]:
                ev.file(p, a.weight * share / len(code[:3]), f"module under test of `{a.text}`")
    for c in cands:
        if len(c) >= 4 and c not in names and idx.defs(c):
            names[c] = a.weight * share


def _uses(idx: _Index, anchors: list[Anchor], ev: _Evidence, w: Weights) -> None:
    """Files that use several of the task's code names (prism's references, by name): the code that ties them."""
    names: dict[str, float] = {}
    for a in anchors:
        if a.kind == "name" and a.weight >= 1.0 and (context_anchors.is_codeish(a.text) or a.text[:1].isupper()):
            names[a.text] = max(names.get(a.text, 0.0), a.weight)
    if len(names) < 2:
        return
    per_file: dict[str, float] = defaultdict(float)
    per_file_names: dict[str, int] = defaultdict(int)
    for name, weight in names.items():
        rows = idx.conn.execute("SELECT DISTINCT f.path FROM refs r JOIN files f ON f.id=r.file_id WHERE r.name=?",
                                (name,)).fetchall()
        if not rows or len(rows) > 300:
            continue
        spec = 1.0 / math.log2(2 + len(rows))
        for (path,) in rows:
            per_file[path] += weight * spec
            per_file_names[path] += 1
    top = max(per_file.values(), default=0.0)
    for path, s in per_file.items():
        if per_file_names[path] >= 2:
            ev.file(path, w.refs * s / top, "")


def _dotted(idx: _Index, a: Anchor, ev: _Evidence, w: Weights) -> None:
    """A dotted path: the module it is (or its longest module prefix), and the definitions whose qualified names end
    with it (or share some of its parts), each weighted by its own share of ``w``."""
    # written only in a fenced block: a reproducer's import or call, which API was used (seldom the fix)
    weight = a.weight * (w.dotted_snippet if a.snippet else 1.0) * w.dotted
    parts = a.text.split(".")
    module = idx.modules.get(a.text)
    if module is not None:
        # a package's __init__ is where names are re-exported, seldom where they are written
        factor = 0.3 if module.endswith("/__init__.py") else 1.0
        ev.file(module, weight * w.dotted_module * factor, f"module `{a.text}`")
        return
    for k in range(len(parts) - 1, 0, -1):  # pkg.mod.Class.attr: the longest prefix that is a module
        path = idx.modules.get(".".join(parts[:k]))
        if path is not None:
            if not path.endswith("/__init__.py"):  # `sympy.core.Mul` says nothing about sympy/core/__init__.py
                ev.file(path, weight * w.dotted_prefix, f"module prefix `{'.'.join(parts[:k])}`")
            break
    defs = idx.defs(parts[-1])
    if not defs:
        return
    suffix = "." + ".".join(parts)
    scored = []
    for d in defs:
        q = "." + d.qualname
        if q.endswith(suffix):
            scored.append((d, 1.0, w.dotted_suffix))
            continue
        qparts = set(d.qualname.split("."))
        share = sum(1 for p in parts[:-1] if p in qparts) / max(1, len(parts) - 1)
        if share > 0:
            scored.append((d, 0.5 * share, w.dotted_partial * share))
    if not scored:
        return
    total = sum(s for _, s, _k in scored)  # the ambiguity is shared out whatever each kind of match is worth
    for d, _s, kept in scored:
        score = weight * kept / max(1.0, total)
        ev.symbol(d, score)
        ev.file(d.path, score, f"names `{a.text}`")


def _lsp_signal(root: Path, command: str | Sequence[str], anchors: list[Anchor], idx: _Index, ev: _Evidence,
                w: Weights, timeout: float = 10.0) -> list[str]:
    """Evidence from a language server; on any failure no evidence at all (and a note saying why)."""
    from tomo.oi.lsp import LspClient, LspError

    names = sorted({a.text for a in anchors
                    if a.kind == "name" and (context_anchors.is_codeish(a.text) or a.text[:1].isupper())},
                   key=lambda n: -len(n))[:12]
    gained = _Evidence()
    deadline = time.monotonic() + timeout
    try:
        with LspClient(command, root, timeout=timeout) as client:
            caps = client.initialize()
            if caps.get("workspaceSymbolProvider"):
                for name in names:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    for found, path, _line in client.workspace_symbols(name, timeout=left):
                        if found.split("(")[0].rsplit(".", 1)[-1] == name:
                            gained.file(path, w.lsp_symbol, f"language server: `{name}` defined here")
            if caps.get("referencesProvider"):
                top = sorted(ev.defs.items(), key=lambda kv: -kv[1])[:3]
                for d, _s in top:
                    left = deadline - time.monotonic()
                    if left <= 0 or not d.path.endswith(".py"):
                        break
                    for path, _line in client.references(d.path, d.line, d.col, timeout=left):
                        if path != d.path:
                            gained.file(path, w.lsp_reference, f"language server: uses `{d.name}`")
    except LspError as exc:
        return [f"language server not used: {exc.message}"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"language server not used: {type(exc).__name__}: {exc}"]
    for path, s in gained.files.items():
        if path in idx.module_of:  # only files prism knows: a server's view of vendored code is not the repo's
            ev.file(path, s, gained.reasons[path][0] if gained.reasons[path] else "")
    return []


# ---- definitions ---------------------------------------------------------------------------------------------------


def _rank_symbols(root: Path, idx: _Index, retrieval: Retrieval, task: str, code: list[str], ev: _Evidence,
                  w: Weights) -> list[str]:
    top_files = code[: w.top_files_for_functions]
    if not top_files:
        return []
    fmax = max(ev.files[p] for p in top_files) or 1.0
    cands: list[_Def] = []
    spans: list[list[str]] = []
    for path in top_files:
        try:
            lines = (root / path).read_bytes().decode("utf-8", "replace").split("\n")
        except OSError:
            continue
        for d in idx.defs_in(path):
            if d.kind not in ("function", "method"):
                continue
            cands.append(d)
            spans.append(tokens("\n".join(lines[d.line - 1 : max(d.end_line, d.line)])))
    qterms = Counter(tokens(task))
    body = bm25_spans(qterms, spans, retrieval.idf(qterms)) if cands else []
    bmax = max(body, default=0.0) or 1.0
    amax = max((ev.defs.get(d, 0.0) for d in cands), default=0.0) or 1.0
    locals_ = [d.local for d in cands]
    zeros = [0.0] * len(cands)
    named = _normalized(name_match(task, locals_, retrieval.idf), w.fn_name) if w.fn_name else zeros
    titled = (_normalized(name_match(task, locals_, retrieval.idf, body=0.0, title=1.0), w.fn_title)
              if w.fn_title else zeros)
    scored: dict[str, float] = {}
    for d, b, n, t in zip(cands, body, named, titled, strict=True):
        s = (w.fn_file * ev.files[d.path] / fmax + w.fn_body * b / bmax + w.fn_anchor * ev.defs.get(d, 0.0) / amax
             + n + t)
        key = f"{d.path}::{d.local}"
        scored[key] = max(scored.get(key, 0.0), s)
    # anchored definitions outside the top files still count (a frame deep in another module)
    for d, s in ev.defs.items():
        if d.kind in ("function", "method") and not is_test_path(d.path):
            key = f"{d.path}::{d.local}"
            scored.setdefault(key, w.fn_anchor * s / amax)
    return [k for k, _ in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))]


def _normalized(scores: list[float], weight: float) -> list[float]:
    """``scores`` scaled so the best gets ``weight`` (all zeros when ``weight`` is 0 or nothing scored)."""
    top = max(scores, default=0.0)
    if not weight or top <= 0:
        return [0.0] * len(scores)
    return [weight * x / top for x in scores]


# ---- the preamble --------------------------------------------------------------------------------------------------


def render(root: Path, pack: Pack, idx: _Index, budget_tokens: int) -> str:
    """The preamble: ranked files with reasons, then bodies, then signatures, then the rest as a list, in budget."""
    budget = max(200, budget_tokens) * CHARS_PER_TOKEN
    head = ("Context pack (tomo, from the task text and the code graph; a starting point, verify before relying "
            "on it).\n")
    out = [head]
    used = len(head)

    def put(s: str) -> bool:
        nonlocal used
        if used + len(s) > budget:
            return False
        out.append(s)
        used += len(s)
        return True

    if not pack.files and not pack.tests:
        put("\nNothing in the repository matched the task's names or words.\n")
        return "".join(out)
    put("\nFiles most likely involved:\n")
    for i, p in enumerate(pack.files[:8], 1):
        why = "; ".join(pack.reasons.get(p, [])[:3]) or "words of the task"
        if not put(f"{i}. {p} ({why})\n"):
            break
    if pack.tests:
        put("Tests near it: " + ", ".join(pack.tests[:5]) + "\n")

    defs: dict[str, _Def] = {}
    for path in dict.fromkeys(s.split("::", 1)[0] for s in pack.symbols[:20]):
        for d in idx.defs_in(path):
            defs[f"{d.path}::{d.local}"] = d
    shown: list[str] = []
    rest: list[str] = []
    bodies = 0
    lines_cache: dict[str, list[str]] = {}
    in_full: dict[str, list[str]] = {}  # per file, the lines of the definitions shown whole
    for key in pack.symbols[:20]:
        found = defs.get(key)
        if found is None:
            rest.append(key)
            continue
        d = found
        lines = lines_cache.get(d.path)
        if lines is None:
            try:
                lines = (root / d.path).read_bytes().decode("utf-8", "replace").split("\n")
            except OSError:
                lines = []
            lines_cache[d.path] = lines
        src = lines[d.line - 1 : max(d.end_line, d.line)]
        block = None
        if (bodies < 3 and len(src) <= 80) or len(src) <= SHORT_BODY:  # a short one costs what its signature does
            block = _fence(f"{key} (lines {d.line}-{max(d.end_line, d.line)})", src)
            if used + len(block) <= budget * 0.8:
                bodies += 1
                in_full.setdefault(d.path, []).extend(src)
            else:
                block = None
        if block is None:
            block = _fence(f"{key} (line {d.line}, signature)", _signature(src))
        if used + len(block) <= budget * 0.9 and put(block):
            shown.append(key)
        else:
            rest.append(key)
    for path, body in in_full.items():
        used_names = module_constants(lines_cache.get(path, []), body)
        if used_names:
            put(f"\nModule-level names the code above uses, as {path} has them:\n```{path}\n"
                + "\n".join(used_names) + "\n```\n")
    more = [k for k in pack.symbols[:40] if k not in shown and k not in rest] if len(pack.symbols) > 20 else []
    if rest or more:
        items = rest + more
        line = "Also relevant: " + ", ".join(items) + "\n"
        while items and not put(line):
            items = items[:-1]
            line = "Also relevant: " + ", ".join(items) + (" ...\n" if items else "\n")
    return "".join(out)


def module_constants(file_lines: list[str], body: list[str]) -> list[str]:
    """The lines of the file's top-level constant assignments whose name ``body`` uses (``SATURDAY = 5  # Monday is
    0``, or a table over a few lines). A fix often turns on such a value, and a model shown only the function guesses
    it."""
    return [file_lines[n - 1].rstrip() for start, end in constant_spans(file_lines, body)
            for n in range(start, end + 1)]


def constant_spans(file_lines: list[str], body: list[str]) -> list[tuple[int, int]]:
    """(first, last) line numbers, from 1, of the top-level constant assignments whose name ``body`` uses: one line,
    or up to ``CONSTANT_LINES`` until its brackets close (the roman numeral ``_TABLE`` whose order was the bug). At
    most eight."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(body)))
    found: list[tuple[int, int]] = []
    for number, line in enumerate(file_lines, 1):
        match = _CONSTANT.match(line)
        if not match or match[1] not in words:
            continue
        end = number
        while _open_brackets("\n".join(file_lines[number - 1:end])) > 0 and end - number < CONSTANT_LINES:
            end += 1
        lines = file_lines[number - 1:end]
        if _open_brackets("\n".join(lines)) == 0 and all(len(text) <= 160 for text in lines):
            found.append((number, end))
    return found[:8]


def _open_brackets(text: str) -> int:
    return sum(text.count(a) - text.count(b) for a, b in ("()", "[]", "{}"))


def _signature(src: list[str]) -> list[str]:
    """The ``def``/``class`` header through its colon, and the docstring's first line when there is one."""
    out: list[str] = []
    for line in src:
        out.append(line)
        if line.rstrip().endswith(":") and not line.lstrip().startswith("@"):
            break
        if len(out) > 8:
            break
    rest = src[len(out) : len(out) + 2]
    if rest and rest[0].strip().startswith(('"""', "'''", 'r"""')):
        out.append(rest[0])
    indent = len(out[0]) - len(out[0].lstrip()) if out else 0
    out.append(" " * (indent + 4) + "...")
    return out


def _fence(title: str, src: list[str]) -> str:
    """A definition as the file has it now, in a fence labeled with its file, not ```python: a model reads a
    ```python block as "run this", and a small one re-runs it. The file label is also the edit form (tomo.oi.edits):
    the same block, corrected, replaces the definition."""
    body = "\n".join(src)
    ticks = "````" if "```" in body else "```"
    path = title.split("::", 1)[0]
    return f"\n{title}, as the file has it now:\n{ticks}{path}\n{body}\n{ticks}\n"


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)
