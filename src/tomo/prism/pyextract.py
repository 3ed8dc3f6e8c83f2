"""Python facts for one file, extracted with tree-sitter queries (no per-node Python walk: that is what makes it fast).

The extractor runs in worker processes and returns plain tuples/dicts that ``marshal`` can store. It records *facts*,
not conclusions: definitions, every name occurrence that could refer to something outside its own function (with
the receiver expression of an attribute as text), imports, assignments, parameters, returns, ``isinstance``
narrowings and identifier-like strings. Binding resolution happens at query time in :mod:`tomo.prism.resolve`,
so one changed file never forces other files to be re-parsed.
"""

from __future__ import annotations

import builtins
import marshal
import operator
import re
from bisect import bisect_right
from typing import Any

import tree_sitter_python as tsp
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

# Flags on a reference occurrence.
CALL = 1  # the name is the callee of a call
DEF = 2  # the defining occurrence (def/class name, assignment target that defines a module/class variable)
IMPORT = 4  # the imported name in ``from m import NAME``
MODPATH = 8  # a component of a module path in an import statement; recv holds the absolute dotted prefix
STRING = 16  # inside an identifier-like string literal; recv holds the enclosing call's function text
ALL = 32  # a string inside ``__all__``
KWARG = 64  # a keyword argument's name in a call; recv holds the callee's text

_start_byte = operator.attrgetter("start_byte")
_end_byte = operator.attrgetter("end_byte")
_end_start = operator.attrgetter("end_byte", "start_byte")

# capture kinds whose order cannot change a fact (each node sets a flag or a key of its own, or the step that reads
# them sorts what it keeps), so they are not sorted here; identifiers are sorted by _references, by start only
_ORDERLESS = frozenset({"id", "attr", "call", "kwpat", "str"})
MAX_TEXT = 160  # receiver / value texts longer than this are stored as "?" (never resolvable anyway)
_BUILTINS = frozenset(dir(builtins))
# bytes that can end an expression right before `.name` (no blank, no line continuation, no non-ASCII letter)
_EXPR_END = frozenset(range(33, 127)) - {ord("\\")}
_NEWLINE = re.compile(rb"\n")
_IDENT_BYTES = re.compile(rb"[A-Za-z_][\w.:]*")
_WORD = re.compile(r"[A-Za-z_]\w*")
_FIXTURE_NAME = re.compile(r"\bname\s*=\s*[\"'](\w+)[\"']")

_QUERY = """
(class_definition name: (identifier)) @class
(function_definition name: (identifier)) @func
(decorated_definition) @decorated
(import_statement) @import
(import_from_statement) @import
(attribute attribute: (identifier)) @attr
(keyword_argument name: (identifier) @kwarg)
(call function: [(identifier) (attribute)] @call)
(assignment) @asg
(augmented_assignment left: (_) @bind)
(for_statement left: (_) @bind)
(for_in_clause left: (_) @bind)
(named_expression name: (identifier) @bind)
(as_pattern alias: (_) @bind)
(lambda) @lambda
(case_pattern (dotted_name . (identifier) @capture .))
(keyword_pattern (dotted_name . (identifier) @capture .))
(keyword_pattern . (identifier) @kwpat)
(splat_pattern (identifier) @capture)
(as_pattern (case_pattern) (identifier) @capture)
(global_statement) @global
(nonlocal_statement) @global
(return_statement (_) @ret)
(yield (_) @yld)
(if_statement condition: (call function: (identifier) arguments: (argument_list . (identifier) . (_))) @nar.call)
(assert_statement (call function: (identifier) arguments: (argument_list . (identifier) . (_))) @nar.call)
(string_content) @str
(identifier) @id
"""

_lang = Language(tsp.language())
_parser: Parser | None = None
_query: Query | None = None


def _field_id(name: str) -> int:
    fid = _lang.field_id_for_name(name)
    if fid is None:
        raise LookupError(f"the Python grammar has no field {name!r}")
    return fid


class _F:
    """The grammar's field ids: child_by_field_id skips the lookup of the field's name (a string compare per field
    of the grammar) that child_by_field_name makes on each of its hundreds of thousands of calls in an index."""

    alias = _field_id("alias")
    arguments = _field_id("arguments")
    attribute = _field_id("attribute")
    body = _field_id("body")
    consequence = _field_id("consequence")
    definition = _field_id("definition")
    function = _field_id("function")
    left = _field_id("left")
    module_name = _field_id("module_name")
    name = _field_id("name")
    object = _field_id("object")
    parameters = _field_id("parameters")
    return_type = _field_id("return_type")
    right = _field_id("right")
    superclasses = _field_id("superclasses")
    type = _field_id("type")


def _setup() -> tuple[Parser, Query]:
    global _parser, _query
    if _parser is None or _query is None:
        _parser = Parser(_lang)
        _query = Query(_lang, _QUERY)  # one query, one traversal: captures for every fact at once
    return _parser, _query


def _text(src: bytes, node: Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _short(src: bytes, node: Node | None) -> str | None:
    if node is None:
        return None
    a, b = node.start_byte, node.end_byte
    if b - a > MAX_TEXT:
        return "?"
    t = src[a:b].decode("utf-8", "replace")
    return " ".join(t.split()) if "\n" in t else t


def _value(src: bytes, node: Node | None) -> str | None:
    """Like _short, but a long call keeps its callee (``Foo(<many lines>)`` -> ``Foo()``): enough to type it."""
    if node is None:
        return None
    if node.end_byte - node.start_byte <= MAX_TEXT:
        return _short(src, node)
    if node.type == "call":
        fn = _short(src, node.child_by_field_id(_F.function))
        return f"{fn}()" if fn and fn != "?" else "?"
    return "?"


def _targets(node: Node, out: list[Node]) -> None:
    """Identifiers bound by an assignment target (tuples and splats unpacked; attributes/subscripts bind nothing)."""
    t = node.type
    if t == "identifier":
        out.append(node)
    elif t in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression",
               "list_splat_pattern", "as_pattern_target", "expression_list"):
        for ch in node.named_children:
            _targets(ch, out)


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or "/tests/" in f"/{path}" or "/test/" in f"/{path}")


def resolve_relative(module: str, is_pkg: bool, level: int, name: str) -> str:
    """Absolute module for ``from .{level} name import ...`` inside ``module``."""
    parts = module.split(".") if module else []
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    if name:
        parts.append(name)
    return ".".join(parts)


Scope = tuple[int, int, str, str]  # (start byte, end byte, qualname, kind), sorted by start
ExtraRef = tuple[str, int, int, str, str | None, int]  # (name, line, col, scope, recv, flags)


class _File:
    """What the extraction of one file has found so far; each step below reads and adds to it.

    The steps run in a fixed order (:func:`extract`): scopes first (everything else asks "which scope is this
    byte in?"), then the facts per capture kind, and the identifiers last, because whether an identifier is a
    reference depends on every binding found before it.
    """

    def __init__(self, src: bytes, module: str, is_pkg: bool, caps: dict[str, list[Node]],
                 has_error: bool = False) -> None:
        self.src = src
        self.has_error = has_error  # the tree has error nodes: read nothing from the text that a node would say
        self.module = module
        self.is_pkg = is_pkg
        self.caps = caps
        # columns are characters: only lines with non-ASCII bytes need converting from tree-sitter's byte columns
        self.lines = None if src.isascii() else [ln if not ln.isascii() else None for ln in src.split(b"\n")]
        self.defs: list[list[Any]] = []  # (qualname, name, kind, line, col, end_line, parent, data)
        self.def_index: dict[str, list[Any]] = {}
        self.scopes: list[Scope] = []
        self.scope_names: list[str] = [module]  # the module, then every scope's qualname (info["scopes"])
        # the file as segments whose innermost scope does not change: where each starts, and its scope's index in
        # scope_names (one bisect finds a byte's scope; a sweep in source order moves on at each segment's end)
        self.seg_starts: list[int] = [0]
        self.seg_scope: list[int] = [0]
        self.scope_of_node: dict[int, str] = {}  # a def/class node's start byte -> its qualname
        self.kind_of_scope: dict[str, str] = {module: "module"}
        self.parent_of_scope: dict[str, str] = {}
        self.name_scope: dict[int, str] = {}  # a def/class name's start byte -> the scope the name is bound in
        self.fixtures: dict[str, list[str]] = {}  # pytest fixture name -> the functions that provide it
        # binds[scope][name] = list of (line, kind, a, b)
        self.binds: dict[str, dict[str, list[tuple[Any, ...]]]] = {}
        self.skip_ids: set[int] = set()  # identifier start bytes that are not references (bindings handled elsewhere)
        self.ref_flags: dict[int, int] = {}  # extra flags for identifiers
        self.attr_start: dict[int, int] = {}  # an attribute's end byte (its name's) -> its start byte (its receiver's)
        self.call_ends: set[int] = set()  # where a callee ends: the identifier ending there is called
        self.extra_refs: list[ExtraRef] = []
        self.all_names: list[str] | None = None
        self.lambdas: list[tuple[int, int, set[str]]] = []
        self.globals_in: dict[str, set[str]] = {}
        self.returns: dict[str, list[tuple[int, str]]] = {}
        self.yields: dict[str, list[tuple[int, str]]] = {}
        self.narrow: list[tuple[str, str, str, int, int]] = []
        self.body_start: dict[str, int] = {}  # where a function's body starts: defaults and annotations come before

    def col_of(self, node: Node) -> int:
        row, col = node.start_point
        if self.lines is None:
            return col
        ln = self.lines[row]
        return col if ln is None else len(ln[:col].decode("utf-8", "replace"))

    def scope_at(self, byte: int) -> str:
        """The qualname of the innermost scope containing ``byte``."""
        return self.scope_names[self.seg_scope[bisect_right(self.seg_starts, byte) - 1]]

    def bind(self, scope: str, name: str, line: int, kind: str, a: Any = None, b: Any = None) -> None:
        self.binds.setdefault(scope, {}).setdefault(name, []).append((line, kind, a, b))


def parse(src: bytes) -> Tree:
    return _setup()[0].parse(src)


def captures(tree: Tree) -> dict[str, list[Node]]:
    """Every capture of the one query, each kind's nodes in source order.

    QueryCursor.captures does not return a kind's nodes in a stable order (it varies from run to run): in source
    order, the first of two definitions wins every time and the rows are the same on every index. The start byte
    alone orders them (an int key sorts at twice the speed of a pair): no two nodes of one kind start at the same
    byte (each kind is statements, identifiers or the disjoint children of one node).
    """
    caps = QueryCursor(_setup()[1]).captures(tree.root_node)
    for kind, nodes in caps.items():
        if kind not in _ORDERLESS:
            nodes.sort(key=_start_byte)
    return caps


def extract(src: bytes, module: str, is_pkg: bool, path: str) -> dict[str, Any]:
    """All facts of one Python file. Never raises on bad syntax: the tree is partial and ``error`` says where."""
    tree = parse(src)
    return facts(src, module, is_pkg, tree, captures(tree))


def facts(src: bytes, module: str, is_pkg: bool, tree: Tree, caps: dict[str, list[Node]]) -> dict[str, Any]:
    """The facts of a parsed file from its captures (:func:`extract` in steps, so the indexer can time each)."""
    root = tree.root_node
    fx = _File(src, module, is_pkg, caps, root.has_error)
    error = _first_error(root) if fx.has_error else None
    _scopes(fx)
    _decorators(fx)
    _def_bindings(fx)
    _parameters(fx)
    _imports(fx)
    _attributes(fx)
    _keyword_arguments(fx)
    _calls(fx)
    _assignments(fx)
    _other_bindings(fx)
    _lambdas(fx)
    _patterns(fx)
    _globals(fx)
    _returns(fx)
    _narrowing(fx)
    _strings(fx)
    _body_starts(fx)
    refs = _references(fx)
    return {"defs": fx.defs, "refs": refs, "info": _info(fx), "error": error}


def _scopes(fx: _File) -> None:
    """Every def/class with its qualname, sorted by start; a def row for each."""
    src, module, caps = fx.src, fx.module, fx.caps
    scope_nodes: list[tuple[int, int, Node, str]] = []
    for n in caps.get("class", []):
        scope_nodes.append((n.start_byte, n.end_byte, n, "class"))
    for n in caps.get("func", []):
        scope_nodes.append((n.start_byte, n.end_byte, n, "function"))
    scope_nodes.sort(key=lambda e: (e[0], -e[1]))
    stack: list[Scope] = []
    seen_q: dict[str, int] = {}
    kind_of_scope = fx.kind_of_scope
    for start, end, node, kind in scope_nodes:
        while stack and stack[-1][1] <= start:
            stack.pop()
        parent = stack[-1][2] if stack else module
        pkind = kind_of_scope[parent]
        name_node = node.child_by_field_id(_F.name)
        name = _text(src, name_node) if name_node else "?"
        q = f"{parent}.{name}" if parent else name
        if q in seen_q:  # redefinition (e.g. property setter, if/else defs): keep qualnames unique
            seen_q[q] += 1
            q = f"{q}@{seen_q[q]}"
        else:
            seen_q[q] = 0
        real_kind = "method" if kind == "function" and pkind == "class" else kind
        entry = (start, end, q, real_kind)
        stack.append(entry)
        fx.scopes.append(entry)
        fx.scope_of_node[start] = q
        kind_of_scope[q] = real_kind
        fx.parent_of_scope[q] = parent
        data: dict[str, Any] = {}
        if kind == "class":
            sup = node.child_by_field_id(_F.superclasses)
            bases = []
            if sup is not None:
                for ch in sup.named_children:
                    if ch.type != "keyword_argument":
                        t = _short(src, ch)
                        if t:
                            bases.append(t)
            data["bases"] = bases
        else:
            rt = node.child_by_field_id(_F.return_type)
            if rt is not None:
                data["ret"] = _short(src, rt)
        if name_node is not None:
            fx.name_scope[name_node.start_byte] = parent
            fx.ref_flags[name_node.start_byte] = DEF  # the defining occurrence
        fx.defs.append([q, name, real_kind, node.start_point[0] + 1, fx.col_of(name_node) if name_node else 0,
                        node.end_point[0] + 1, parent, data])
    fx.def_index = {d[0]: d for d in fx.defs}
    _segments(fx)


def _segments(fx: _File) -> None:
    """Cut the file where its innermost scope changes."""
    fx.scope_names += [sc[2] for sc in fx.scopes]
    fx.seg_starts, fx.seg_scope = _cut(fx.scopes)


def _cut(spans: list[Any]) -> tuple[list[int], list[int]]:
    """Segments of a file by innermost span: where each starts and its span (1-based index into ``spans``, 0: none).

    ``spans`` are nested or disjoint (syntax nodes), sorted by start, an outer one before an inner one that starts
    at the same byte; each is a sequence whose first two items are its start and end byte.
    """
    starts, owner = [0], [0]
    stack: list[tuple[int, int]] = []  # (end byte, index) of the open spans
    for i, sp in enumerate(spans, 1):
        start = sp[0]
        while stack and stack[-1][0] <= start:
            starts.append(stack.pop()[0])
            owner.append(stack[-1][1] if stack else 0)
        stack.append((sp[1], i))
        starts.append(start)
        owner.append(i)
    while stack:
        starts.append(stack.pop()[0])
        owner.append(stack[-1][1] if stack else 0)
    return starts, owner


def _decorators(fx: _File) -> None:
    """Decorator texts on their definition's data; pytest fixtures by the name they provide."""
    src = fx.src
    for n in fx.caps.get("decorated", []):
        target = n.child_by_field_id(_F.definition)
        if target is None:
            continue
        dq = fx.scope_of_node.get(target.start_byte)
        if dq is None:
            continue
        decs = [_decorator(src, d.named_children[0]) if d.named_children else "" for d in n.named_children
                if d.type == "decorator"]
        fx.def_index[dq][7]["decorators"] = decs
        for dec in decs:
            if dec and dec.split("(")[0].endswith("fixture"):
                m = _FIXTURE_NAME.search(dec)
                fx.fixtures.setdefault(m.group(1) if m else fx.def_index[dq][1], []).append(dq)
        # a decorated definition's start line is the decorator's; keep the def line (where the name is)


def _def_bindings(fx: _File) -> None:
    """Each def/class binds its name in its parent scope (its name got the DEF flag in _scopes)."""
    for d in fx.defs:
        q, name, line, parent = d[0], d[1], d[3], d[6]
        fx.bind(parent, name, line, "def", q)


def _parameters(fx: _File) -> None:
    """Parameters bind in their function (with annotation and position); the names go to the def's data."""
    src = fx.src
    for n in fx.caps.get("func", []):
        q = fx.scope_of_node[n.start_byte]
        params = n.child_by_field_id(_F.parameters)
        if params is None:
            continue
        idx = 0
        plist = []
        for p in params.named_children:
            t = p.type
            ann = None
            nm: Node | None
            if t == "identifier":
                nm = p
            elif t in ("typed_parameter",):
                nm = p.named_children[0] if p.named_children else None
                ann = _short(src, p.child_by_field_id(_F.type))
                if nm is not None and nm.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                    ann = "tuple" if nm.type == "list_splat_pattern" else "dict"  # *args / **kwargs
                    nm = nm.named_children[0] if nm.named_children else None
            elif t in ("default_parameter", "typed_default_parameter"):
                nm = p.child_by_field_id(_F.name)
                ann = _short(src, p.child_by_field_id(_F.type))
            elif t in ("list_splat_pattern", "dictionary_splat_pattern"):
                nm = p.named_children[0] if p.named_children else None
                ann = "tuple" if t == "list_splat_pattern" else "dict"  # *args / **kwargs
            else:
                continue
            if nm is None or nm.type != "identifier":
                continue
            pname = _text(src, nm)
            fx.bind(q, pname, nm.start_point[0] + 1, "param", ann, idx)
            plist.append(pname)
            fx.skip_ids.add(nm.start_byte)
            idx += 1
        fx.def_index[q][7]["params"] = plist


def _imports(fx: _File) -> None:
    """``import m``, ``import m as x``, ``from m import n [as x]``, ``from m import *``: bindings and path refs."""
    src, module, is_pkg = fx.src, fx.module, fx.is_pkg
    skip_ids, extra_refs, col_of = fx.skip_ids, fx.extra_refs, fx.col_of
    for n in fx.caps.get("import", []):
        scope = fx.scope_at(n.start_byte)
        line = n.start_point[0] + 1
        if n.type == "import_statement":
            for ch in n.named_children:
                if ch.type == "aliased_import":
                    dn = ch.child_by_field_id(_F.name)
                    alias = ch.child_by_field_id(_F.alias)
                    if dn is None or alias is None:
                        continue
                    mod = _text(src, dn)
                    fx.bind(scope, _text(src, alias), line, "module", mod)
                    skip_ids.add(alias.start_byte)
                    _modpath_refs(src, dn, "", scope, extra_refs, skip_ids, col_of)
                elif ch.type == "dotted_name":
                    mod = _text(src, ch)
                    first = mod.split(".")[0]
                    fx.bind(scope, first, line, "module", first)
                    _modpath_refs(src, ch, "", scope, extra_refs, skip_ids, col_of)
        else:
            mn = n.child_by_field_id(_F.module_name)
            if mn is None:
                continue
            if mn.type == "relative_import":
                level = 0
                name = ""
                for ch in mn.children:
                    if ch.type == "import_prefix":
                        level = ch.end_byte - ch.start_byte
                    elif ch.type == "dotted_name":
                        name = _text(src, ch)
                        base = resolve_relative(module, is_pkg, level, "")
                        _modpath_refs(src, ch, base, scope, extra_refs, skip_ids, col_of)
                absmod = resolve_relative(module, is_pkg, level, name)
            else:
                absmod = _text(src, mn)
                _modpath_refs(src, mn, "", scope, extra_refs, skip_ids, col_of)
            for ch in n.children_by_field_name("name"):
                if ch.type == "aliased_import":
                    dn = ch.child_by_field_id(_F.name)
                    alias = ch.child_by_field_id(_F.alias)
                    if dn is None or alias is None:
                        continue
                    local = _text(src, alias)
                    skip_ids.add(alias.start_byte)
                else:
                    dn = ch
                    local = _text(src, ch)
                orig = _text(src, dn)
                fx.bind(scope, local, line, "from", absmod, orig)
                for ident in dn.named_children:
                    skip_ids.add(ident.start_byte)
                if dn.named_children:
                    ident = dn.named_children[0]
                    extra_refs.append((orig, ident.start_point[0] + 1, col_of(ident), scope, absmod, IMPORT))
            for ch in n.named_children:
                if ch.type == "wildcard_import":
                    fx.binds.setdefault(scope, {}).setdefault("*", []).append((line, "star", absmod, None))


def _attributes(fx: _File) -> None:
    """Where each attribute starts, by where it ends: _references reads an attribute name's receiver from there.

    The query captures the attribute nodes, not their names: every name is an identifier that _references sees
    anyway, and an attribute ends where its name ends. Its receiver (``a.b.c``: ``c`` is read on ``a.b``) is the
    attribute's text up to the dot before the name; asking the name node for its previous sibling instead walks
    the tree down from the root, a microsecond on each of the thousands of attributes of a file.
    """
    fx.attr_start = dict(map(_end_start, fx.caps.get("attr", [])))


def _receiver(fx: _File, name: Node, start: int | None) -> str | None:
    """The receiver text of ``name`` when the source text alone cannot give it (see _references); None when
    ``name`` is no attribute's name.

    That is when something else than the dot comes between the receiver and the name (a blank, a comment, a line
    break), when the receiver is too long to keep whole (a long call keeps its callee), and in a tree with errors,
    where an error node may be the previous sibling or end the attribute: then the nodes are asked.
    """
    if fx.has_error:
        p = name.parent
        if p is None or p.type != "attribute" or p.child_by_field_id(_F.attribute) != name:
            return None
    elif start is None:
        return None
    r = name.prev_named_sibling
    if r is None:
        return "?"
    return _value(fx.src, r) or "?"


def _keyword_arguments(fx: _File) -> None:
    """A keyword argument's name is no reference by itself; in a call it may name a field of the callee."""
    src = fx.src
    for n in fx.caps.get("kwarg", []):
        fx.skip_ids.add(n.start_byte)
        # Node.parent walks down from the root: each step up is asked once
        kw = n.parent
        args = kw.parent if kw is not None else None
        call = args.parent if args is not None and args.type == "argument_list" else None
        if call is not None and call.type == "call":
            # `Line(qty=2)`: names a field when the callee is a class; recv is the callee's text
            callee = _short(src, call.child_by_field_id(_F.function))
            fx.extra_refs.append((_text(src, n), n.start_point[0] + 1, fx.col_of(n), fx.scope_at(n.start_byte),
                                  callee or "?", KWARG))


def _calls(fx: _File) -> None:
    """The callee's name (``f(...)``, ``x.f(...)``) gets the CALL flag: _references gives it to the identifier
    that ends where a callee ends.

    The query captures the identifier and attribute callees in one pattern; in a tree without errors an
    attribute ends with its name, so no node is asked anything but where it ends (with errors, an error node
    may come last: the name is asked for).
    """
    callees = fx.caps.get("call", [])
    if not fx.has_error:
        fx.call_ends = set(map(_end_byte, callees))
        return
    for n in callees:
        if n.type == "attribute":
            n = n.child_by_field_id(_F.attribute)  # type: ignore[assignment]
        if n is not None and n.type == "identifier":
            fx.call_ends.add(n.end_byte)


def _assignments(fx: _File) -> None:
    """``x = v`` binds x (a module/class variable is also a def); ``self.a = v`` in a method defines an attribute."""
    src, defs, def_index, ref_flags = fx.src, fx.defs, fx.def_index, fx.ref_flags
    for n in fx.caps.get("asg", []):
        left = n.child_by_field_id(_F.left)
        if left is None:
            continue
        scope = fx.scope_at(n.start_byte)
        right = n.child_by_field_id(_F.right)
        while right is not None and right.type == "assignment":  # `ib = attr = attrib`: every target gets the value
            right = right.child_by_field_id(_F.right)
        typ = n.child_by_field_id(_F.type)
        line = n.start_point[0] + 1
        rtext = _value(src, right)
        ttext = _short(src, typ)
        skind = fx.kind_of_scope.get(scope, "module")
        if left.type == "identifier":
            name = _text(src, left)
            fx.bind(scope, name, line, "assign", rtext, ttext)
            if skind in ("module", "class") and name not in def_index.get(f"{scope}.{name}", ()):
                q = f"{scope}.{name}"
                if q not in def_index:
                    d = [q, name, "variable", line, fx.col_of(left), n.end_point[0] + 1, scope,
                         {"value": rtext, "ann": ttext}]
                    defs.append(d)
                    def_index[q] = d
                    ref_flags[left.start_byte] = ref_flags.get(left.start_byte, 0) | DEF
                if name == "__all__" and skind == "module" and right is not None and right.type in ("list", "tuple") \
                        and all(s.type == "string" for s in right.named_children) and src.count(b"__all__") == 1:
                    # a literal list, never changed (no `+=`, `.extend`, concatenation): else exports are unknown
                    fx.all_names = [_text(src, s).strip("'\"") for s in right.named_children]
        elif left.type == "attribute":
            obj = left.child_by_field_id(_F.object)
            attr = left.child_by_field_id(_F.attribute)
            if obj is not None and attr is not None and obj.type == "identifier" and skind == "method":
                oname = _text(src, obj)
                plist2: list[str] = def_index[scope][7].get("params") or []
                if plist2 and oname == plist2[0]:
                    cls = fx.parent_of_scope.get(scope, "")
                    aname = _text(src, attr)
                    q = f"{cls}.{aname}"
                    fx.bind(cls, aname, line, "attr", rtext, ttext)
                    if q not in def_index:
                        d = [q, aname, "attribute", line, fx.col_of(attr), line, cls, {"value": rtext, "ann": ttext}]
                        defs.append(d)
                        def_index[q] = d
                        ref_flags[attr.start_byte] = ref_flags.get(attr.start_byte, 0) | DEF
        else:
            tl: list[Node] = []
            _targets(left, tl)
            for tn in tl:
                fx.bind(scope, _text(src, tn), line, "assign", None, None)


def _other_bindings(fx: _File) -> None:
    """Targets of ``+=``, ``for``, comprehensions, ``:=`` and ``as`` (``with X() as x`` keeps what x is)."""
    src = fx.src
    for n in fx.caps.get("bind", []):
        scope = fx.scope_at(n.start_byte)
        tl: list[Node] = []
        _targets(n, tl)
        rhs = None
        ap = n.parent
        if ap is not None and ap.type == "as_pattern" and ap.parent is not None and ap.parent.type == "with_item":
            # `with X() as x`: x is what X().__enter__() returns (usually the object itself)
            value = _value(src, ap.named_children[0]) if ap.named_children else None
            if value and value != "?" and len(tl) == 1:
                rhs = f"{value}.__enter__()"
        for tn in tl:
            fx.bind(scope, _text(src, tn), tn.start_point[0] + 1, "assign", rhs, None)


def _lambdas(fx: _File) -> None:
    """Lambda parameters: local to the lambda's body (a lambda is no scope of its own in this model)."""
    src = fx.src
    for n in fx.caps.get("lambda", []):
        params, body = n.child_by_field_id(_F.parameters), n.child_by_field_id(_F.body)
        if params is None or body is None:
            continue
        lnames: set[str] = set()
        for p in params.named_children:
            nm = p.child_by_field_id(_F.name) if p.type == "default_parameter" else \
                p.named_children[0] if p.type in ("list_splat_pattern", "dictionary_splat_pattern") \
                and p.named_children else p
            if nm is not None and nm.type == "identifier":
                lnames.add(_text(src, nm))
                fx.skip_ids.add(nm.start_byte)
        if lnames:
            fx.lambdas.append((body.start_byte, body.end_byte, lnames))


def _patterns(fx: _File) -> None:
    """match/case capture patterns (`case x:`, `case P(k=x)`, `case [*x]`, `case P() as x`) bind, never read."""
    for n in fx.caps.get("capture", []):
        fx.skip_ids.add(n.start_byte)
        fx.bind(fx.scope_at(n.start_byte), _text(fx.src, n), n.start_point[0] + 1, "assign", None, None)
    for n in fx.caps.get("kwpat", []):
        fx.skip_ids.add(n.start_byte)  # the attribute name in `case P(k=...)`


def _globals(fx: _File) -> None:
    """``global x`` makes x the module's in that scope; ``nonlocal x`` names an enclosing function's local."""
    for n in fx.caps.get("global", []):
        scope = fx.scope_at(n.start_byte)
        for ch in n.named_children:
            if ch.type != "identifier":
                continue
            if n.type == "global_statement":
                fx.globals_in.setdefault(scope, set()).add(_text(fx.src, ch))
            else:  # nonlocal: a local of an enclosing function, never a module-level symbol
                fx.skip_ids.add(ch.start_byte)


def _returns(fx: _File) -> None:
    """What each function returns and yields, as text (typed at query time)."""
    src = fx.src
    for n in fx.caps.get("ret", []):
        scope = fx.scope_at(n.start_byte)
        t = _value(src, n)
        if t and t != "?":
            fx.returns.setdefault(scope, []).append((n.start_point[0] + 1, t))
    for n in fx.caps.get("yld", []):
        t = _value(src, n)
        if t and t != "?":
            fx.yields.setdefault(fx.scope_at(n.start_byte), []).append((n.start_point[0] + 1, t))


def _narrowing(fx: _File) -> None:
    """``if isinstance(x, T):`` narrows x in its body; ``assert isinstance(x, T)`` to the end of the scope."""
    src = fx.src
    for c in fx.caps.get("nar.call", []):
        f = c.child_by_field_id(_F.function)
        if f is None or _text(src, f) != "isinstance":
            continue
        args = c.child_by_field_id(_F.arguments)
        if args is None or len(args.named_children) < 2:
            continue
        var, typ = args.named_children[0], args.named_children[1]
        scope = fx.scope_at(c.start_byte)
        cp = c.parent
        body = cp.child_by_field_id(_F.consequence) if cp is not None and cp.type == "if_statement" else None
        if body is not None:
            start, end = body.start_point[0] + 1, body.end_point[0] + 1
        else:  # assert isinstance(...): narrows to the end of the scope
            start = c.start_point[0] + 1
            sd = fx.def_index.get(scope)
            end = sd[5] if sd else 10**9
        fx.narrow.append((scope, _text(src, var), _short(src, typ) or "?", start, end))


def _strings(fx: _File) -> None:
    """Identifier-like strings: each word is an occurrence, with the call (or ``__all__``) it appears in."""
    src, lines, extra_refs = fx.src, fx.lines, fx.extra_refs
    fullmatch = _IDENT_BYTES.fullmatch
    # most strings are no identifier: sort only those that are (captures come unordered)
    words = [n for n in fx.caps.get("str", []) if n.end_byte - n.start_byte <= 120
             and fullmatch(src, n.start_byte, n.end_byte)]
    words.sort(key=_start_byte)
    for n in words:
        sa, sb = n.start_byte, n.end_byte
        s = src[sa:sb].decode("utf-8", "replace")
        # context: string_content < string < (argument_list < call) | list/tuple < assignment(__all__)
        ctx = ""
        flags = STRING
        sp = n.parent
        pp = sp.parent if sp is not None else None
        if pp is not None:
            ptype = pp.type
            if ptype == "argument_list":
                ppp = pp.parent
                if ppp is not None and ppp.type == "call":
                    ctx = _short(src, ppp.child_by_field_id(_F.function)) or ""
            elif ptype in ("list", "tuple"):
                ppp = pp.parent
                if ppp is not None and ppp.type == "assignment":
                    left = ppp.child_by_field_id(_F.left)
                    if left is not None and _text(src, left) == "__all__":
                        flags |= ALL
        row, base_col = n.start_point
        if lines is not None:
            base_col = fx.col_of(n)
        scope = fx.scope_at(sa)
        recv = ctx + "|" + s
        for m in _WORD.finditer(s):
            extra_refs.append((m.group(), row + 1, base_col + m.start(), scope, recv, flags))


def _body_starts(fx: _File) -> None:
    for n in fx.caps.get("func", []):
        body = n.child_by_field_id(_F.body)
        if body is not None:
            fx.body_start[fx.scope_of_node[n.start_byte]] = body.start_byte


def _references(fx: _File) -> dict[str, list[tuple[Any, ...]]]:
    """Every identifier that could refer to something outside its function, then the extra occurrences.

    An occurrence is ``(line, col, scope index, receiver text, flags)``; its scope is an index into
    ``info["scopes"]``, a fraction of the bytes of the qualname. This loop runs for every identifier of the file, so
    everything it asks per identifier is an index or a comparison: what depends on the scope is looked up once per
    scope, the scope and the line change only when the sweep crosses a segment's or a line's end.
    """
    src, lines, scope_names = fx.src, fx.lines, fx.scope_names
    skip_ids, ref_flags, name_scope, attr_start = fx.skip_ids, fx.ref_flags, fx.name_scope, fx.attr_start
    has_error = fx.has_error  # then every identifier is asked whether it is an attribute's name (see _receiver)
    expr_end = _EXPR_END
    call_ends = fx.call_ends
    lambdas = fx.lambdas
    lambda_names = set().union(*(ln[2] for ln in lambdas)) if lambdas else set()

    def lambda_local(byte: int, name: str) -> bool:
        return any(a <= byte < b and name in ns for a, b, ns in lambdas)

    sidx = {q: i for i, q in enumerate(scope_names)}
    # per scope index: a function's local names (None elsewhere), where its body starts, the enclosing scope
    nscopes = len(scope_names)
    local_names: list[set[str] | None] = [None] * nscopes
    body_start: list[int] = [0] * nscopes
    parent: list[int] = [0] * nscopes
    kind_of_scope, binds, globals_in = fx.kind_of_scope, fx.binds, fx.globals_in
    for q, p in fx.parent_of_scope.items():
        parent[sidx[q]] = sidx[p]
    for q, i in sidx.items():
        if q in binds and kind_of_scope.get(q) in ("function", "method"):
            local_names[i] = set(binds[q]) - globals_in.get(q, set())
        body_start[i] = fx.body_start.get(q, 0)
    builtins_here = _BUILTINS.difference(binds.get(fx.module, ()))  # a module may define `open`, `id`, ...

    refs: dict[str, list[tuple[Any, ...]]] = {}
    ids = fx.caps.get("id", [])
    ids.sort(key=_start_byte)  # captures do not come in source order; both sweeps need it
    text = src.decode("ascii") if lines is None else None  # ASCII: byte offsets are str offsets
    newlines = [m.start() for m in _NEWLINE.finditer(src)]
    never = len(src) + 1
    seg_starts, seg_scope = fx.seg_starts, fx.seg_scope
    seg_end = seg_starts[1] if len(seg_starts) > 1 else never
    si = 0  # the current segment's scope index
    row = line_start = 0
    line_end = newlines[0] if newlines else never
    for n in ids:
        b = n.start_byte
        if b in skip_ids:
            continue
        e = n.end_byte
        name = text[b:e] if text is not None else src[b:e].decode("utf-8", "replace")
        start = attr_start.get(e)  # the attribute whose name this is
        recv: str | None
        if start is not None and b - start <= MAX_TEXT + 1 and src[b - 1] == 46 and src[b - 2] in expr_end \
                and not has_error:  # `recv.name`, nothing between the receiver, the dot ("." is 46) and the name
            t = src[start : b - 1].decode("utf-8", "replace")
            recv = (" ".join(t.split()) if "\n" in t else t) or "?"
        else:
            recv = None if start is None and not has_error else _receiver(fx, n, start)
        if recv is None and (name == "self" or name == "cls") and b not in ref_flags and e not in call_ends:
            continue  # the receiver parameter itself: by far the most common name, never a reference
        if b >= seg_end:
            k = bisect_right(seg_starts, b)
            si = seg_scope[k - 1]
            seg_end = seg_starts[k] if k < len(seg_starts) else never
        scope = si
        flags = ref_flags.get(b, 0)
        if e in call_ends:
            flags |= CALL
        if flags & DEF and b in name_scope:
            scope = sidx[name_scope[b]]  # a def/class name is bound in the enclosing scope
        if lambda_names:
            if recv is None and name in lambda_names and lambda_local(b, name):
                continue
            head = _WORD.match(recv) if recv is not None else None
            if head is not None and head.group() in lambda_names and lambda_local(b, head.group()):
                recv = f"({recv})"  # the receiver is a lambda parameter: untyped, never resolved outside
        if recv is None and not flags & DEF:
            ln = local_names[scope]
            if ln is not None and name in ln:
                if b >= body_start[scope]:
                    continue  # a local variable of its function: never a reference to anything else
                scope = parent[scope]  # `def f(x=x)`, `def f(A: A)`: the header reads the enclosing scope
            if name in builtins_here:
                continue
        if b >= line_end:
            row = bisect_right(newlines, b)  # the newlines before b: tree-sitter's row
            line_start = newlines[row - 1] + 1
            line_end = newlines[row] if row < len(newlines) else never
        col = b - line_start
        if lines is not None:
            line_bytes = lines[row]
            if line_bytes is not None:
                col = len(line_bytes[:col].decode("utf-8", "replace"))
        occ = (row + 1, col, scope, recv, flags)
        got = refs.get(name)
        if got is None:
            refs[name] = [occ]
        else:
            got.append(occ)
    for name, line, col, sq, xrecv, flags in fx.extra_refs:
        refs.setdefault(name, []).append((line, col, sidx.get(sq, 0), xrecv, flags))
    return refs


def _info(fx: _File) -> dict[str, Any]:
    scope_list = fx.scope_names
    sidx = {q: i for i, q in enumerate(scope_list)}
    parent_of_scope = fx.parent_of_scope
    return {
        # scopes as parallel lists (qualname, kind, parent index): each qualname is stored once
        "scopes": scope_list,
        "skind": [fx.kind_of_scope.get(q, "module") for q in scope_list],
        "sparent": [sidx.get(parent_of_scope[q], 0) if q in parent_of_scope else -1 for q in scope_list],
        # bindings per scope, each marshalled on its own: a query decodes only the scopes it looks into
        "binds": {scope: marshal.dumps(b) for scope, b in fx.binds.items()},
        "fixtures": fx.fixtures,
        "globals": {k: sorted(v) for k, v in fx.globals_in.items()},
        "narrow": fx.narrow,
        "all": fx.all_names,
        "returns": fx.returns,
        "yields": fx.yields,
    }


_KEPT_KEYWORDS = ("name", "argnames", "scope", "autouse")


def _decorator(src: bytes, node: Node) -> str:
    """A decorator's text; a long call keeps its callee and the arguments that name things.

    ``@pytest.mark.parametrize(("a", "b"), [<many lines>])`` is stored as ``pytest.mark.parametrize(("a", "b"))``:
    the names it gives values to are what decides which parameters are fixtures. When the argument naming them is
    itself too long, the whole decorator stays unknown ("?").
    """
    text = _short(src, node) or ""
    if text != "?" or node.type != "call":
        return text
    fn = _short(src, node.child_by_field_id(_F.function))
    args = node.child_by_field_id(_F.arguments)
    if not fn or fn == "?" or args is None or args.type != "argument_list":
        return "?"
    kept: list[str] = []
    positional = 0
    for a in args.named_children:
        if a.type == "keyword_argument":
            k = a.child_by_field_id(_F.name)
            if k is None or _text(src, k) not in _KEPT_KEYWORDS:
                continue
        elif a.type in ("comment",):
            continue
        else:
            positional += 1
            if positional > 1:
                continue
        t = _short(src, a)
        if not t or t == "?":
            if fn.endswith("parametrize") and (positional == 1 or a.type == "keyword_argument"):
                return "?"
            continue
        kept.append(t)
    return f"{fn}({', '.join(kept)})"


def _modpath_refs(src: bytes, dn: Node, base: str, scope: str, out: list[tuple[str, int, int, str, str | None, int]],
                  skip: set[int], col_of: Any) -> None:
    prefix = base
    for ident in dn.named_children:
        skip.add(ident.start_byte)
        name = _text(src, ident)
        out.append((name, ident.start_point[0] + 1, col_of(ident), scope, prefix, MODPATH))
        prefix = f"{prefix}.{name}" if prefix else name


def _first_error(root: Node) -> str:
    """Line/col of the first syntax error, found by descending only into subtrees that contain one."""
    node = root
    while True:
        nxt = None
        for ch in node.children:
            if ch.is_error or ch.is_missing:
                r, c = ch.start_point
                what = "missing " + ch.type if ch.is_missing else "syntax error"
                return f"{what} at line {r + 1}, col {c}"
            if ch.has_error:
                nxt = ch
                break
        if nxt is None:
            r, c = node.start_point
            return f"syntax error at line {r + 1}, col {c}"
        node = nxt
