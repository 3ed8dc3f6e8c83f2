"""A Python file's syntax tree, read at query time for the few bindings the stored facts leave untyped.

The index keeps a name bound by a ``for`` loop, by tuple unpacking or by a test's ``parametrize`` without a value
(storing every iterable and argument list would cost every file the index for a handful of queries). When a query
meets such a name as a receiver, the resolver asks this module where the value came from: the text of the
iterable and which element of it, or the argument values the test is called with. Everything returned is source
text for the resolver to evaluate; nothing here decides a type.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from pathlib import Path

# (how, expression text, path): "for" (an element of the iterable) or "unpack" (the value itself), then
# the index of the element taken at each level of nested tuple targets: `for i, (a, b) in x` binds b as (1, 1).
Origin = tuple[str, str, tuple[int, ...]]


_CACHE_SIZE = 256  # files; a query over Django reads a few dozen
_KEPT = (ast.For, ast.AsyncFor, ast.Assign, ast.FunctionDef, ast.AsyncFunctionDef)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)  # statements that hold no block
# a definition from the index: its first line (the ``def``/``class`` line), its last line, its kind
Span = tuple[int, int, str]
# a parsed piece: (top-level piece, piece inside it or -1); (-1, -1) is the whole file; (-2, line) the function
# defined at that line, parsed alone
Key = tuple[int, int]
_WHOLE: Key = (-1, -1)
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class Source:
    """One file's tree and the lookups over it; a file that does not parse answers nothing.

    A query asks about a few lines of a few dozen files, and parsing a whole file costs more than the query (Django's
    QuerySet.filter reads 37 files): so, given the spans of the file's definitions (``defs``, from the index), only
    the piece that holds the asked line is parsed. Every lookup stays inside one top-level statement (``reaching``
    inside one function, ``receiver`` on one line), and a piece is a run of complete top-level statements: from the
    line after the previous top-level definition to the end of this one (its decorators and the module-level
    statements before it included), or the statements after the last one. Inside a top-level class, the same cut at
    its methods (those least indented) gives smaller pieces: the first (what precedes the class, its ``class`` line
    and its first method, often ``__init__``) parsed as it stands, a class cut short; the others under an ``if 1:``
    line. A piece that does not
    parse on its own (which is how a cut inside an ``if``/``try`` shows), a line outside every piece, a file whose
    bytes or encoding could make a piece read differently from the whole: the next larger piece, at last the whole
    file, is parsed, as without ``defs``. A line inside a function (after its ``def`` line) is read from that
    function alone, smaller still (see :meth:`_tree_at`): the reaching-assignment check, the most frequent lookup,
    never needs more than its function.
    """

    def __init__(self, path: Path, defs: Iterable[Span] = ()) -> None:
        try:
            self._data: bytes | None = path.read_bytes()
        except OSError:
            self._data = None
        self._decoded: list[str] | None = None
        self._trees: dict[Key, ast.Module | None] = {}  # piece -> its tree, None if it does not parse
        self._starts: list[int] = []  # first and last line of each top-level piece
        self._ends: list[int] = []
        self._subs: dict[int, tuple[list[int], list[int]] | None] = {}  # top-level piece -> lines inside it
        self._classes: dict[int, tuple[int, int]] = {}  # top-level piece of a class -> the class's first, last line
        self._raw: list[bytes] = []
        self._spans: list[Span] = []  # the definitions' spans, sorted, once the cut trusts them
        self._span_lines: list[int] = []  # their first lines, for bisect
        self._by_line: dict[int, list[ast.AST]] = {}
        self._attrs: dict[Key, dict[tuple[int, int], ast.Attribute]] = {}
        self._bound: dict[int, frozenset[str]] = {}  # id of a statement (alive in _trees) -> the names it binds
        self.cut(defs)

    @staticmethod
    def load(path: Path, defs: Iterable[Span] = (), stamp: tuple[int, int] | None = None) -> Source:
        """The file's tree, shared by the queries of this process until the file changes. ``defs`` are the spans of
        its definitions as indexed when the file had ``stamp`` (mtime in ns, size): used only if it still has it."""
        try:
            st = path.stat()
            key = (str(path), st.st_mtime_ns, st.st_size)
        except OSError:
            return Source(path)
        fresh = stamp == key[1:]
        got = _CACHE.get(key)
        if got is None:
            got = Source(path, defs if fresh else ())
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = got
        elif fresh and not got._starts:
            got.cut(defs)
        return got

    def cut(self, defs: Iterable[Span]) -> None:
        """Split the file into pieces at the ends of its top-level definitions, and a top-level class at the ends of
        its methods (see the class). A def not at column 0 is nested (in a class, a function, an ``if``)."""
        data = self._data
        if self._trees or self._starts or not data or b"\0" in data or (
                b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
            return  # null bytes fail the whole parse; a lone CR is a line break to Python, not to the indexer
        raw = data.splitlines(keepends=True)
        for head in raw[:2]:
            m = _COOKIE.match(head)
            if m and m.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
                return  # a piece after line 2 would be read without the file's encoding
        spans = sorted({d for d in defs if 0 < d[0] <= d[1] <= len(raw)})
        starts: list[int] = []
        ends: list[int] = []
        classes: list[tuple[int, int, int]] = []  # (piece, class line, class end)
        prev = 0
        for line, end, kind in spans:
            if kind == "method" or _indent(raw[line - 1]) != 0:
                continue
            if line <= prev:
                return  # overlapping spans at column 0: not what the index writes, so trust none
            if kind == "class":
                classes.append((len(starts), line, end))
            starts.append(prev + 1)
            ends.append(end)
            prev = end
        if not starts:
            return
        if prev < len(raw):
            starts.append(prev + 1)
            ends.append(len(raw))
        self._raw, self._starts, self._ends = raw, starts, ends
        self._spans, self._span_lines = spans, [d[0] for d in spans]
        self._classes = {piece: (first, last) for piece, first, last in classes}

    def _sub(self, piece: int) -> tuple[list[int], list[int]] | None:
        """The first and last lines of the sub-pieces of a top-level class's piece (cut at its least indented
        methods), or None when it is not cut; found when a line of it is first asked (most lines are read from
        their function alone, see :meth:`_tree_at`)."""
        if piece in self._subs:
            return self._subs[piece]
        got = None
        if piece in self._classes:
            first, last = self._classes[piece]
            raw, spans, lines = self._raw, self._spans, self._span_lines
            methods = [(line, end, _indent(raw[line - 1])) for line, end, kind in
                       spans[bisect_right(lines, first):bisect_right(lines, last)] if kind == "method" and end <= last]
            depth = min((m[2] for m in methods), default=0)
            cuts = [(line, end) for line, end, d in methods if d == depth]
            # the first sub-piece is the head of the top-level piece (what precedes the class, the class line, its
            # first method): a class cut short, parsed as it stands; the others are runs of its body
            sub = ([self._starts[piece]] + [e + 1 for _, e in cuts[:-1]], [e for _, e in cuts])
            if depth and len(cuts) > 1 and all(a <= line for a, (line, _) in zip(sub[0][1:], cuts[1:], strict=True)):
                got = sub
        self._subs[piece] = got
        return got

    @property
    def lines(self) -> list[bytes]:
        """The file's lines with their line breaks, as cut (empty when the file is read whole: no spans trusted)."""
        return self._raw

    @property
    def tree(self) -> ast.Module | None:
        """The whole file's tree (None if it does not parse)."""
        if _WHOLE not in self._trees:
            try:
                self._trees[_WHOLE] = ast.parse(self._data, type_comments=True) if self._data is not None else None
            except (SyntaxError, ValueError, RecursionError):
                self._trees[_WHOLE] = None
        return self._trees[_WHOLE]

    def _tree_at(self, line: int) -> tuple[Key, ast.Module | None]:
        """The key and tree of the smallest parsed text that answers for ``line``: the innermost function or
        method whose body (or signature after its ``def`` line) holds it, else :meth:`_piece`'s.

        Every lookup at such a line descends into that function and no further out (what precedes its ``def``
        line, its decorators included, lies on earlier lines), so the function parsed alone answers as the
        whole file does; and a function is most often a fraction of its piece (a top-level function comes with
        the module statements before it, a class's first method with the whole head of the class)."""
        span = self._innermost(line)
        if span is not None:
            tree = self._def_tree(span)
            if tree is not None:
                return (-2, span[0]), tree
        return self._piece(line)

    def _innermost(self, line: int) -> Span | None:
        """The span of the innermost function or method with ``def`` line < ``line`` <= its last line."""
        i = bisect_left(self._span_lines, line)
        while i > 0:
            i -= 1
            span = self._spans[i]
            if span[1] >= line and span[2] != "class":
                return span  # (spans start before the line: the last that holds it is the innermost)
            if _indent(self._raw[span[0] - 1]) == 0:
                return None  # a top-level definition that is no function holding the line: none further up is
        return None

    def _def_tree(self, span: Span) -> ast.Module | None:
        """One function or method parsed alone (from its ``def`` line; an indented one under an ``if 1:`` line),
        or None when it cannot answer as the whole file: it does not parse alone, or the code after its last line
        is indented deeper than its ``def`` (then the index's span would end inside it)."""
        first, last, _kind = span
        key: Key = (-2, first)
        if key in self._trees:
            return self._trees[key]
        raw = self._raw
        indent = raw[first - 1][:_indent(raw[first - 1])]
        tree: ast.Module | None = None
        after = next((x for x in raw[last:] if x.strip() and not x.lstrip().startswith(b"#")), None)
        if after is None or indent.startswith(after[:_indent(after)]):
            head = b"\n" * (first - 1) if not indent else b"\n" * (first - 2) + b"if 1:\n"
            try:
                tree = ast.parse(head + b"".join(raw[first - 1:last]), type_comments=True)
            except (SyntaxError, ValueError, RecursionError):
                tree = None
            body = tree.body if tree is not None else []
            if indent and len(body) == 1 and isinstance(body[0], ast.If):
                body = body[0].body
            if not (len(body) == 1 and isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef))
                    and body[0].lineno == first):
                tree = None  # not exactly the one function: the span is not what the file holds
        self._trees[key] = tree
        return tree

    def _function(self, def_line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function defined at ``def_line``, from its own tree when it parses alone, else from its piece's."""
        i = bisect_left(self._span_lines, def_line)
        if i < len(self._spans) and self._spans[i][0] == def_line and self._spans[i][2] != "class":
            tree = self._def_tree(self._spans[i])
            if tree is not None:
                node = tree.body[0]
                return node.body[0] if isinstance(node, ast.If) else node  # type: ignore[return-value]
        return next((n for n in self._nodes_at(def_line) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                    None)

    def _piece(self, line: int) -> tuple[Key, ast.Module | None]:
        """The key and tree of the smallest piece that holds ``line`` and parses, else of the whole file."""
        i = bisect_left(self._ends, line)
        if i < len(self._ends) and self._starts[i] <= line:
            sub = self._sub(i)
            j = bisect_left(sub[1], line) if sub is not None else -1
            if sub is not None and j < len(sub[1]) and sub[0][j] <= line:
                got = self._parse((i, j), sub[0][j], sub[1][j])
                if got is not None:
                    return (i, j), got
            got = self._parse((i, -1), self._starts[i], self._ends[i])
            if got is not None:
                return (i, -1), got
        return _WHOLE, self.tree

    def _parse(self, key: Key, first: int, last: int) -> ast.Module | None:
        if key not in self._trees:
            # blank lines before the piece give its nodes their lines in the file (cheaper than moving them after);
            # an indented piece (a class's methods after its first) goes under an `if 1:` on the line before it
            head = b"\n" * (first - 1) if key[1] <= 0 else b"\n" * (first - 2) + b"if 1:\n"
            try:
                self._trees[key] = ast.parse(head + b"".join(self._raw[first - 1:last]), type_comments=True)
            except (SyntaxError, ValueError, RecursionError):
                self._trees[key] = None
        return self._trees[key]

    @property
    def _lines(self) -> list[str]:
        if self._decoded is None:
            self._decoded = self._data.decode("utf-8", "replace").splitlines() if self._data is not None else []
        return self._decoded

    def receiver(self, line: int, col: int, name: str) -> str | None:
        """The whole text of the object whose attribute ``name`` is at ``line``:``col`` (in characters): for the
        receivers too long for the index (a builder chain over many lines)."""
        key, tree = self._tree_at(line)
        attrs = self._attrs.get(key)
        if attrs is None:
            attrs = self._attrs[key] = {}
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.Attribute) and node.end_lineno is not None and node.end_col_offset is not None:
                    attrs[(node.end_lineno, node.end_col_offset - len(node.attr.encode()))] = node
        if tree is None or not 0 < line <= len(self._lines):
            return None
        found = attrs.get((line, len(self._lines[line - 1][:col].encode())))
        return ast.unparse(found.value) if found is not None and found.attr == name else None

    def _nodes_at(self, line: int) -> list[ast.AST]:
        """The loops, assignments, functions and comprehensions that start at ``line``, found by descending only
        into the statements whose lines hold it (a walk of the whole tree costs more than the query)."""
        got = self._by_line.get(line)
        if got is not None:
            return got
        got = []
        tree = self._tree_at(line)[1]
        body: list[ast.stmt] | None = tree.body if tree is not None else None
        while body:
            st = next((x for x in body if x.lineno <= line <= (x.end_lineno or x.lineno)), None)
            if st is None:
                break
            if st.lineno == line and isinstance(st, _KEPT):
                got.append(st)
            for child in ast.iter_child_nodes(st):
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    continue
                got += [n for n in ast.walk(child) if isinstance(n, ast.comprehension) and n.target.lineno == line]
            body = next((b for b in _blocks(st) if b[0].lineno <= line <= (b[-1].end_lineno or 0)), None)
        self._by_line[line] = got
        return got

    def origin(self, name: str, line: int) -> Origin | None:
        """Where ``name``, bound at ``line`` by a loop target or an unpacking assignment, takes its value from."""
        for node in self._nodes_at(line):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                path = _path_to(node.target, name)
                if path is not None and not isinstance(node, ast.AsyncFor):
                    return "for", ast.unparse(node.iter), path
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                path = _path_to(node.targets[0], name)
                if path:  # a plain `x = ...` is stored with its value already
                    return "unpack", ast.unparse(node.value), path
        return None

    def assigned(self, name: str, line: int) -> str | None:
        """The full text of the value of ``name = <value>`` at ``line`` (the index keeps only short ones)."""
        for node in self._nodes_at(line):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id == name:
                return ast.unparse(node.value)
        return None

    def reaching(self, def_line: int, name: str, line: int) -> int | None:
        """The line of the one binding of local ``name`` that reaches its use at ``line`` in the function defined
        at ``def_line``, when the code's structure proves it; else None.

        Walking out from the use: the nearest earlier statement of the same block that binds the name decides,
        if it is a plain assignment (one that binds it only inside a branch or a loop proves nothing); a ``for``
        or ``with`` whose target binds it decides for its body. Leaving a loop body, any binding of the name in
        the loop may come round again; leaving an ``except``/``else``/``finally``, the ``try`` body may have
        bound it: either way, nothing is proven.
        """
        func = self._function(def_line)
        if func is None:
            return None
        path: list[tuple[list[ast.stmt], int, ast.AST]] = []  # (block, index of the statement holding the use, owner)
        block: list[ast.stmt] = func.body
        owner: ast.AST = func
        while True:
            idx = next((i for i, st in enumerate(block)
                        if st.lineno <= line <= (st.end_lineno or st.lineno)), None)
            if idx is None:
                return None
            path.append((block, idx, owner))
            st = block[idx]
            inner = next((b for b in _blocks(st) if b and b[0].lineno <= line <= (b[-1].end_lineno or 0)), None)
            if inner is None:
                break
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                return None  # the use is in a nested scope
            block, owner = inner, st
        innermost = path[-1][0][path[-1][1]]
        text = self._text(innermost)  # (a comprehension is written with the keyword `for`)
        comp = _comprehension_binding(innermost, name, line) if text is None or b"for" in text else None
        if comp is not None:
            return comp if comp > 0 else None  # the use is a comprehension's own variable (or may be)
        for level in range(len(path) - 1, -1, -1):
            block, idx, owner = path[level]
            st = block[idx]
            inside = path[level + 1][0] if level + 1 < len(path) else None
            if inside is not None and inside is getattr(st, "body", None) and _binds_in_header(st, name):
                return st.lineno  # `for x in ...:` / `with ... as x:` around the use
            for prev in reversed(block[:idx]):
                if self._binds(prev, name):
                    if isinstance(prev, (ast.Assign, ast.AnnAssign)) and _target_binds(prev, name):
                        return prev.lineno
                    return None
            if isinstance(owner, (ast.For, ast.AsyncFor, ast.While)) and any(
                    self._binds(x, name) for x in owner.body + owner.orelse):
                return None  # a later binding in the loop comes round again
            if isinstance(owner, ast.Try) and block is not owner.body and any(self._binds(x, name) for x in owner.body):
                return None
            if isinstance(owner, ast.Try) and block is not owner.body and any(
                    self._binds(x, name) for h in owner.handlers for x in h.body):
                return None
        return None

    def _binds(self, st: ast.stmt, name: str) -> bool:
        """Whether anything in ``st`` (nested functions and classes aside) may bind ``name``: the names a statement
        binds are collected once, as ``reaching`` asks about the same statements for each use it is given; and a
        statement whose ASCII text lacks the name cannot bind it (a non-ASCII text may spell it another way:
        identifiers are NFKC-normalised), so most statements are never walked."""
        got = self._bound.get(id(st))
        if got is None:
            text = self._text(st)
            if text is not None and name.isascii() and name.encode() not in text:
                return False
            if text is not None and isinstance(st, _SIMPLE) and b":=" not in text:
                # no walrus: in a simple statement only the assignment targets bind (a comprehension's variables
                # are its own), so the value, often a long call, need not be walked
                targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(
                    st, (ast.AugAssign, ast.AnnAssign)) else []
                got = frozenset().union(*map(_bound_names, targets))
            else:
                got = _bound_names(st)
            self._bound[id(st)] = got
        return name in got

    def _text(self, st: ast.stmt) -> bytes | None:
        """The ASCII source lines of statement ``st`` (decorators included), or None: no lines kept, or non-ASCII
        text (identifiers are NFKC-normalised, so a name may be spelled another way there)."""
        if not self._raw:
            return None
        first = min([st.lineno, *(d.lineno for d in getattr(st, "decorator_list", ()))])
        text = b"".join(self._raw[first - 1:st.end_lineno or st.lineno])
        return text if text.isascii() else None

    def constructions(self, def_line: int, name: str) -> list[tuple[int, int]] | None:
        """Where the function defined at ``def_line`` makes an object of the class ``name`` it defines: (line,
        column just past the name, in characters) of each call ``name(...)`` in its own body.

        None unless those are all the ways the class can be reached: the name used otherwise (assigned, passed,
        returned, a base, a decorator's argument), used inside another function, lambda or class (its arguments
        would be read in the wrong scope), bound again (a parameter, an import, ``global``/``nonlocal``, a second
        ``class``/``def``), or an object made again from what it is (``type(x)``, ``x.__class__``, ``cls``, a
        ``classmethod``) anywhere in the function.
        """
        fn = self._function(def_line)
        if fn is None:
            return None
        callees = {id(n.func) for n in ast.walk(fn) if isinstance(n, ast.Call)}
        found: list[tuple[int, int]] = []
        classes = 0
        todo: list[tuple[ast.AST, bool]] = [(ch, False) for ch in ast.iter_child_nodes(fn)]
        while todo:
            node, nested = todo.pop()
            if isinstance(node, ast.Name):
                if node.id in ("type", "cls", "classmethod"):
                    return None
                if node.id == name:
                    if nested or not isinstance(node.ctx, ast.Load) or id(node) not in callees:
                        return None
                    line = self._lines[node.lineno - 1] if 0 < node.lineno <= len(self._lines) else ""
                    end = node.end_col_offset or 0
                    found.append((node.lineno, len(line.encode()[:end].decode("utf-8", "replace"))))
            elif isinstance(node, ast.Attribute) and node.attr == "__class__":
                return None
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                if not isinstance(node, ast.ClassDef) or nested:
                    return None
                classes += 1
            elif ((isinstance(node, ast.arg) and node.arg == name)
                  or (isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name)
                  or (isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names)):
                return None  # the name bound again: which calls make the class is not proven
            inner = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
            todo += [(ch, inner) for ch in ast.iter_child_nodes(node)]
        return sorted(found) if classes == 1 else None

    def type_comment(self, line: int) -> str | None:
        """The ``# type: X`` comment of the assignment at ``line`` (PEP 484's annotation for older code)."""
        for node in self._nodes_at(line):
            if isinstance(node, ast.Assign) and node.type_comment and not node.type_comment.startswith("ignore"):
                return node.type_comment.strip()
        return None

    def parametrized(self, def_line: int, param: str) -> list[str] | str | None:
        """The values a ``@pytest.mark.parametrize`` on the function defined at ``def_line`` gives ``param``.

        A list of value texts, or the text of the name holding them (``parametrize("f", ALL_FIELDS)``); None when
        no parametrize names it, when it is ``indirect`` (the values go to a fixture) or when the values are not
        written out.
        """
        for node in self._nodes_at(def_line):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for dec in node.decorator_list:
                if not (isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("parametrize")):
                    continue
                args = list(dec.args)
                kw = {k.arg: k.value for k in dec.keywords if k.arg}
                names_node = args[0] if args else kw.get("argnames")
                values_node = args[1] if len(args) > 1 else kw.get("argvalues")
                names = _argnames(names_node)
                if names is None or param not in names or values_node is None:
                    continue
                if "indirect" in kw and not (isinstance(kw["indirect"], ast.Constant) and not kw["indirect"].value):
                    return None
                if not isinstance(values_node, (ast.List, ast.Tuple)):
                    text = ast.unparse(values_node)
                    return text if len(names) == 1 and isinstance(values_node, (ast.Name, ast.Attribute)) else None
                return _column(values_node.elts, names.index(param), len(names))
        return None


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t\f")) if line.strip() else -1


def _comprehension_binding(st: ast.stmt, name: str, line: int) -> int | None:
    """For a use of ``name`` at ``line`` in statement ``st``: None when no comprehension there binds the name (the
    statements decide); the line of the target that binds it when every use of the name on that line is inside one
    and the same comprehension that does; 0 when it cannot be told apart."""
    comps = [c for c in ast.walk(st) if isinstance(c, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
             and c.lineno <= line <= (c.end_lineno or c.lineno)
             and any(_path_to(g.target, name) is not None for g in c.generators)]
    if not comps:
        return None
    uses = [n for n in ast.walk(st) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            and n.lineno == line]
    owners = set()
    for use in uses:
        holding = [c for c in comps if any(n is use for n in _comprehension_scope(c))]
        if not holding:
            return 0  # this use reads the name outside the comprehension
        owners.add(id(min(holding, key=lambda c: ((c.end_lineno or 0) - c.lineno, c.end_col_offset or 0))))
    if len(owners) != 1:
        return 0
    comp = next(c for c in comps if id(c) in owners)
    gen = next(g for g in comp.generators if _path_to(g.target, name) is not None)
    return gen.target.lineno


def _comprehension_scope(c: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> list[ast.AST]:
    """The nodes evaluated inside a comprehension's own scope: all but its first iterable."""
    first = set(map(id, ast.walk(c.generators[0].iter)))
    return [n for n in ast.walk(c) if id(n) not in first]


def _blocks(st: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement."""
    out: list[list[ast.stmt]] = []
    for field in ("body", "orelse", "finalbody"):
        b = getattr(st, field, None)
        if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
            out.append(b)
    for h in getattr(st, "handlers", []) or []:
        out.append(h.body)
    for c in getattr(st, "cases", []) or []:
        out.append(c.body)
    return out


def _target_binds(st: ast.Assign | ast.AnnAssign, name: str) -> bool:
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    return any(_path_to(t, name) is not None for t in targets)


def _binds_in_header(st: ast.stmt, name: str) -> bool:
    if isinstance(st, (ast.For, ast.AsyncFor)):
        return _path_to(st.target, name) is not None
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return any(i.optional_vars is not None and _path_to(i.optional_vars, name) is not None for i in st.items)
    return False


def _bound_names(node: ast.AST) -> frozenset[str]:
    """Every name that something in ``node`` (nested functions and classes aside) may bind."""
    out: set[str] = set()
    for n in _walk_scope(node):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if n.name is not None:
                out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest is not None:
            out.add(n.rest)
    return frozenset(out)


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for ch in ast.iter_child_nodes(n):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                yield ch  # its name binds here; its body is another scope
                if not isinstance(ch, ast.Lambda):
                    todo.extend(ch.decorator_list)
                continue
            if isinstance(ch, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                # its variables are its own; its first iterable and any `:=` inside belong to this scope
                todo.append(ch.generators[0].iter)
                yield from (w.target for w in ast.walk(ch) if isinstance(w, ast.NamedExpr))
                continue
            todo.append(ch)


def _argnames(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [n.strip() for n in node.value.split(",") if n.strip()]
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [str(e.value) for e in node.elts]  # type: ignore[attr-defined]
    return None


def _column(rows: list[ast.expr], idx: int, width: int) -> list[str] | None:
    """Argument ``idx`` of each parameter set: the row itself for one name, its element for several."""
    out = []
    for row in rows:
        if isinstance(row, ast.Call) and ast.unparse(row.func).endswith("param"):  # pytest.param(v, id=...)
            items: list[ast.expr] = list(row.args)
        elif width == 1:
            items = [row]
        elif isinstance(row, (ast.Tuple, ast.List)):
            items = list(row.elts)
        else:
            return None  # a row computed elsewhere
        if len(items) != width or any(isinstance(e, ast.Starred) for e in items):
            return None
        out.append(ast.unparse(items[idx]))
    return out or None


def _path_to(target: ast.expr, name: str) -> tuple[int, ...] | None:
    """The element path of ``name`` inside an assignment target; None if it is not there or sits under a star
    (``a, *rest = x``: rest is a list, not an element)."""
    if isinstance(target, ast.Name):
        return () if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in target.elts):
            return None
        for i, e in enumerate(target.elts):
            sub = _path_to(e, name)
            if sub is not None:
                return (i, *sub)
    return None


def comprehension_element(text: str) -> str | None:
    """``[f(x) for x in xs]`` (or a set comprehension, a generator expression) -> ``f(x)``: what each element is."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    return ast.unparse(node.elt) if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) else None


def literal_items(text: str) -> tuple[bool, list[str]] | None:
    """``[a, b]`` / ``(a, b)`` / ``{a, b}`` -> (is a tuple, element texts); None for anything else or a starred
    element (its items are not written out)."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or any(isinstance(e, ast.Starred) for e in node.elts):
        return None
    return isinstance(node, ast.Tuple), [ast.unparse(e) for e in node.elts]


_CACHE: dict[tuple[str, int, int], Source] = {}
