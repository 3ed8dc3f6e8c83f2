"""Python facts for one file, extracted with tree-sitter queries (no per-node Python walk: that is what makes it fast).

The extractor runs in worker processes and returns plain tuples/dicts that ``marshal`` can store. It records *facts*,
not conclusions: definitions, every name occurrence that could refer to something outside its own function (with
the receiver expression of an attribute as text), imports, assignments, parameters, returns, ``isinstance``
narrowings and identifier-like strings. Binding resolution happens at query time in :mod:`tomo.prism.resolve`,
so one changed file never forces other files to be re-parsed.
"""

from __future__ import annotations

import bisect
import builtins
import marshal
import operator
import re
from typing import Any

import tree_sitter_python as tsp
from tree_sitter import Language, Node, Parser, Query, QueryCursor

# Flags on a reference occurrence.
CALL = 1  # the name is the callee of a call
DEF = 2  # the defining occurrence (def/class name, assignment target that defines a module/class variable)
IMPORT = 4  # the imported name in ``from m import NAME``
MODPATH = 8  # a component of a module path in an import statement; recv holds the absolute dotted prefix
STRING = 16  # inside an identifier-like string literal; recv holds the enclosing call's function text
ALL = 32  # a string inside ``__all__``
KWARG = 64  # a keyword argument's name in a call; recv holds the callee's text

_start_byte = operator.attrgetter("start_byte")
MAX_TEXT = 160  # receiver / value texts longer than this are stored as "?" (never resolvable anyway)
_BUILTINS = frozenset(dir(builtins))
_SELF_CLS = (b"self", b"cls")
_IDENT_BYTES = re.compile(rb"[A-Za-z_][\w.:]*")
_WORD = re.compile(r"[A-Za-z_]\w*")
_FIXTURE_NAME = re.compile(r"\bname\s*=\s*[\"'](\w+)[\"']")

_QUERY = """
(class_definition name: (identifier) @class.name) @class
(function_definition name: (identifier) @func.name) @func
(decorated_definition) @decorated
(import_statement) @import
(import_from_statement) @import
(attribute attribute: (identifier) @attr.name)
(keyword_argument name: (identifier) @kwarg)
(call function: (_) @call.fn)
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

_lang: Language | None = None
_parser: Parser | None = None
_query: Query | None = None


def _setup() -> tuple[Parser, Query]:
    global _lang, _parser, _query
    if _parser is None or _query is None:
        _lang = Language(tsp.language())
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
        fn = _short(src, node.child_by_field_name("function"))
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


def extract(src: bytes, module: str, is_pkg: bool, path: str) -> dict[str, Any]:
    """All facts of one Python file. Never raises on bad syntax: the tree is partial and ``error`` says where."""
    parser, query = _setup()
    tree = parser.parse(src)
    root = tree.root_node
    caps = QueryCursor(query).captures(root)
    # columns are characters: only lines with non-ASCII bytes need converting from tree-sitter's byte columns
    lines = None if src.isascii() else [ln if not ln.isascii() else None for ln in src.split(b"\n")]

    def col_of(node: Node) -> int:
        row, col = node.start_point
        if lines is None:
            return col
        ln = lines[row]
        return col if ln is None else len(ln[:col].decode("utf-8", "replace"))

    error = None
    if root.has_error:
        error = _first_error(root)

    # ---- scopes: every def/class with its qualname, sorted by start --------------------------------------------
    # scope entries: (start_byte, end_byte, qualname, kind)
    defs: list[list[Any]] = []  # (qualname, name, kind, line, col, end_line, parent, data)
    scope_nodes: list[tuple[int, int, Node, str]] = []
    for n in caps.get("class", []):
        scope_nodes.append((n.start_byte, n.end_byte, n, "class"))
    for n in caps.get("func", []):
        scope_nodes.append((n.start_byte, n.end_byte, n, "function"))
    scope_nodes.sort(key=lambda e: (e[0], -e[1]))
    scopes: list[tuple[int, int, str, str]] = []  # (start, end, qualname, kind)
    stack: list[tuple[int, int, str, str]] = []
    scope_of_node: dict[int, str] = {}
    kind_of_scope: dict[str, str] = {module: "module"}
    parent_of_scope: dict[str, str] = {}
    seen_q: dict[str, int] = {}
    name_scope: dict[int, str] = {}
    for start, end, node, kind in scope_nodes:
        while stack and stack[-1][1] <= start:
            stack.pop()
        parent = stack[-1][2] if stack else module
        pkind = kind_of_scope[parent]
        name_node = node.child_by_field_name("name")
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
        scopes.append(entry)
        scope_of_node[start] = q
        kind_of_scope[q] = real_kind
        parent_of_scope[q] = parent
        data: dict[str, Any] = {}
        if kind == "class":
            sup = node.child_by_field_name("superclasses")
            bases = []
            if sup is not None:
                for ch in sup.named_children:
                    if ch.type != "keyword_argument":
                        t = _short(src, ch)
                        if t:
                            bases.append(t)
            data["bases"] = bases
        else:
            rt = node.child_by_field_name("return_type")
            if rt is not None:
                data["ret"] = _short(src, rt)
        if name_node is not None:
            name_scope[name_node.start_byte] = parent
        defs.append([q, name, real_kind, node.start_point[0] + 1, col_of(name_node) if name_node else 0,
                     node.end_point[0] + 1, parent, data])
    def_index = {d[0]: d for d in defs}

    starts = [s[0] for s in scopes]

    def scope_at(byte: int) -> str:
        # innermost scope containing byte (scopes sorted by start, nested ones after their parent)
        i = bisect.bisect_right(starts, byte) - 1
        while i >= 0:
            s, e, q, _ = scopes[i]
            if s <= byte < e:
                return q
            i -= 1
        return module

    fixtures: dict[str, list[str]] = {}  # pytest fixture name -> the functions that provide it
    # ---- decorators --------------------------------------------------------------------------------------------
    for n in caps.get("decorated", []):
        target = n.child_by_field_name("definition")
        if target is None:
            continue
        dq = scope_of_node.get(target.start_byte)
        if dq is None:
            continue
        decs = [_decorator(src, d.named_children[0]) if d.named_children else "" for d in n.named_children
                if d.type == "decorator"]
        def_index[dq][7]["decorators"] = decs
        for dec in decs:
            if dec and dec.split("(")[0].endswith("fixture"):
                m = _FIXTURE_NAME.search(dec)
                fixtures.setdefault(m.group(1) if m else def_index[dq][1], []).append(dq)
        # a decorated definition's start line is the decorator's; keep the def line (where the name is)

    # ---- bindings per scope ----------------------------------------------------------------------------------
    # binds[scope][name] = list of (line, kind, a, b)
    binds: dict[str, dict[str, list[tuple[Any, ...]]]] = {}

    def bind(scope: str, name: str, line: int, kind: str, a: Any = None, b: Any = None) -> None:
        binds.setdefault(scope, {}).setdefault(name, []).append((line, kind, a, b))

    skip_ids: set[int] = set()  # identifier start bytes that are not references (bindings handled elsewhere)
    ref_flags: dict[int, int] = {}  # extra flags for identifiers
    ref_recv: dict[int, str] = {}
    extra_refs: list[tuple[str, int, int, str, str | None, int]] = []  # (name, line, col, scope, recv, flags)

    for d in defs:
        q, name, kind, line = d[0], d[1], d[2], d[3]
        parent = d[6]
        bind(parent, name, line, "def", q)
    for n in caps.get("class.name", []) + caps.get("func.name", []):
        ref_flags[n.start_byte] = DEF

    # parameters
    for n in caps.get("func", []):
        q = scope_of_node[n.start_byte]
        params = n.child_by_field_name("parameters")
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
                ann = _short(src, p.child_by_field_name("type"))
                if nm is not None and nm.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                    ann = "tuple" if nm.type == "list_splat_pattern" else "dict"  # *args / **kwargs
                    nm = nm.named_children[0] if nm.named_children else None
            elif t in ("default_parameter", "typed_default_parameter"):
                nm = p.child_by_field_name("name")
                ann = _short(src, p.child_by_field_name("type"))
            elif t in ("list_splat_pattern", "dictionary_splat_pattern"):
                nm = p.named_children[0] if p.named_children else None
                ann = "tuple" if t == "list_splat_pattern" else "dict"  # *args / **kwargs
            else:
                continue
            if nm is None or nm.type != "identifier":
                continue
            pname = _text(src, nm)
            bind(q, pname, nm.start_point[0] + 1, "param", ann, idx)
            plist.append(pname)
            skip_ids.add(nm.start_byte)
            idx += 1
        def_index[q][7]["params"] = plist

    # imports
    for n in caps.get("import", []):
        scope = scope_at(n.start_byte)
        line = n.start_point[0] + 1
        if n.type == "import_statement":
            for ch in n.named_children:
                if ch.type == "aliased_import":
                    dn = ch.child_by_field_name("name")
                    alias = ch.child_by_field_name("alias")
                    if dn is None or alias is None:
                        continue
                    mod = _text(src, dn)
                    bind(scope, _text(src, alias), line, "module", mod)
                    skip_ids.add(alias.start_byte)
                    _modpath_refs(src, dn, "", scope, extra_refs, skip_ids, col_of)
                elif ch.type == "dotted_name":
                    mod = _text(src, ch)
                    first = mod.split(".")[0]
                    bind(scope, first, line, "module", first)
                    _modpath_refs(src, ch, "", scope, extra_refs, skip_ids, col_of)
        else:
            mn = n.child_by_field_name("module_name")
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
                    dn = ch.child_by_field_name("name")
                    alias = ch.child_by_field_name("alias")
                    if dn is None or alias is None:
                        continue
                    local = _text(src, alias)
                    skip_ids.add(alias.start_byte)
                else:
                    dn = ch
                    local = _text(src, ch)
                orig = _text(src, dn)
                bind(scope, local, line, "from", absmod, orig)
                for ident in dn.named_children:
                    skip_ids.add(ident.start_byte)
                if dn.named_children:
                    ident = dn.named_children[0]
                    extra_refs.append((orig, ident.start_point[0] + 1, col_of(ident), scope, absmod, IMPORT))
            for ch in n.named_children:
                if ch.type == "wildcard_import":
                    binds.setdefault(scope, {}).setdefault("*", []).append((line, "star", absmod, None))

    # attributes: receiver text
    for a in caps.get("attr.name", []):
        r = a.prev_named_sibling
        ref_recv[a.start_byte] = (_value(src, r) or "?") if r is not None else "?"

    for n in caps.get("kwarg", []):
        skip_ids.add(n.start_byte)
        args = n.parent.parent if n.parent is not None else None
        if args is not None and args.type == "argument_list" and args.parent is not None \
                and args.parent.type == "call":
            # `Line(qty=2)`: names a field when the callee is a class; recv is the callee's text
            callee = _short(src, args.parent.child_by_field_name("function"))
            extra_refs.append((_text(src, n), n.start_point[0] + 1, col_of(n), scope_at(n.start_byte),
                               callee or "?", KWARG))

    for n in caps.get("call.fn", []):
        if n.type == "identifier":
            ref_flags[n.start_byte] = ref_flags.get(n.start_byte, 0) | CALL
        elif n.type == "attribute":
            an = n.child_by_field_name("attribute")
            if an is not None:
                ref_flags[an.start_byte] = ref_flags.get(an.start_byte, 0) | CALL

    # assignments
    all_names: list[str] | None = None
    for n in caps.get("asg", []):
        left = n.child_by_field_name("left")
        if left is None:
            continue
        scope = scope_at(n.start_byte)
        right = n.child_by_field_name("right")
        while right is not None and right.type == "assignment":  # `ib = attr = attrib`: every target gets the value
            right = right.child_by_field_name("right")
        typ = n.child_by_field_name("type")
        line = n.start_point[0] + 1
        rtext = _value(src, right)
        ttext = _short(src, typ)
        skind = kind_of_scope.get(scope, "module")
        if left.type == "identifier":
            name = _text(src, left)
            bind(scope, name, line, "assign", rtext, ttext)
            if skind in ("module", "class") and name not in def_index.get(f"{scope}.{name}", ()):
                q = f"{scope}.{name}"
                if q not in def_index:
                    d = [q, name, "variable", line, col_of(left), n.end_point[0] + 1, scope,
                         {"value": rtext, "ann": ttext}]
                    defs.append(d)
                    def_index[q] = d
                    ref_flags[left.start_byte] = ref_flags.get(left.start_byte, 0) | DEF
                if name == "__all__" and skind == "module" and right is not None and right.type in ("list", "tuple") \
                        and all(s.type == "string" for s in right.named_children) and src.count(b"__all__") == 1:
                    # a literal list, never changed (no `+=`, `.extend`, concatenation): else exports are unknown
                    all_names = [_text(src, s).strip("'\"") for s in right.named_children]
        elif left.type == "attribute":
            obj = left.child_by_field_name("object")
            attr = left.child_by_field_name("attribute")
            if obj is not None and attr is not None and obj.type == "identifier" and skind == "method":
                oname = _text(src, obj)
                plist2: list[str] = def_index[scope][7].get("params") or []
                if plist2 and oname == plist2[0]:
                    cls = parent_of_scope.get(scope, "")
                    aname = _text(src, attr)
                    q = f"{cls}.{aname}"
                    bind(cls, aname, line, "attr", rtext, ttext)
                    if q not in def_index:
                        d = [q, aname, "attribute", line, col_of(attr), line, cls, {"value": rtext, "ann": ttext}]
                        defs.append(d)
                        def_index[q] = d
                        ref_flags[attr.start_byte] = ref_flags.get(attr.start_byte, 0) | DEF
        else:
            tl: list[Node] = []
            _targets(left, tl)
            for tn in tl:
                bind(scope, _text(src, tn), line, "assign", None, None)

    for n in caps.get("bind", []):
        scope = scope_at(n.start_byte)
        tl = []
        _targets(n, tl)
        rhs = None
        ap = n.parent
        if ap is not None and ap.type == "as_pattern" and ap.parent is not None and ap.parent.type == "with_item":
            # `with X() as x`: x is what X().__enter__() returns (usually the object itself)
            value = _value(src, ap.named_children[0]) if ap.named_children else None
            if value and value != "?" and len(tl) == 1:
                rhs = f"{value}.__enter__()"
        for tn in tl:
            bind(scope, _text(src, tn), tn.start_point[0] + 1, "assign", rhs, None)

    # lambda parameters: local to the lambda's body (a lambda is no scope of its own in this model)
    lambdas: list[tuple[int, int, set[str]]] = []
    for n in caps.get("lambda", []):
        params, body = n.child_by_field_name("parameters"), n.child_by_field_name("body")
        if params is None or body is None:
            continue
        lnames: set[str] = set()
        for p in params.named_children:
            nm = p.child_by_field_name("name") if p.type == "default_parameter" else \
                p.named_children[0] if p.type in ("list_splat_pattern", "dictionary_splat_pattern") \
                and p.named_children else p
            if nm is not None and nm.type == "identifier":
                lnames.add(_text(src, nm))
                skip_ids.add(nm.start_byte)
        if lnames:
            lambdas.append((body.start_byte, body.end_byte, lnames))
    lambda_names = set().union(*(ln[2] for ln in lambdas)) if lambdas else set()

    def lambda_local(byte: int, name: str) -> bool:
        return any(a <= byte < b and name in ns for a, b, ns in lambdas)

    # match/case capture patterns (`case x:`, `case P(k=x)`, `case [*x]`, `case P() as x`) bind, never read
    for n in caps.get("capture", []):
        skip_ids.add(n.start_byte)
        bind(scope_at(n.start_byte), _text(src, n), n.start_point[0] + 1, "assign", None, None)
    for n in caps.get("kwpat", []):
        skip_ids.add(n.start_byte)  # the attribute name in `case P(k=...)`

    globals_in: dict[str, set[str]] = {}
    for n in caps.get("global", []):
        scope = scope_at(n.start_byte)
        for ch in n.named_children:
            if ch.type != "identifier":
                continue
            if n.type == "global_statement":
                globals_in.setdefault(scope, set()).add(_text(src, ch))
            else:  # nonlocal: a local of an enclosing function, never a module-level symbol
                skip_ids.add(ch.start_byte)

    # returns
    returns: dict[str, list[tuple[int, str]]] = {}
    for n in caps.get("ret", []):
        scope = scope_at(n.start_byte)
        t = _value(src, n)
        if t and t != "?":
            returns.setdefault(scope, []).append((n.start_point[0] + 1, t))
    yields: dict[str, list[tuple[int, str]]] = {}
    for n in caps.get("yld", []):
        t = _value(src, n)
        if t and t != "?":
            yields.setdefault(scope_at(n.start_byte), []).append((n.start_point[0] + 1, t))

    # isinstance narrowing
    narrow: list[tuple[str, str, str, int, int]] = []
    nar_calls = caps.get("nar.call", [])
    for c in nar_calls:
        f = c.child_by_field_name("function")
        if f is None or _text(src, f) != "isinstance":
            continue
        args = c.child_by_field_name("arguments")
        if args is None or len(args.named_children) < 2:
            continue
        var, typ = args.named_children[0], args.named_children[1]
        scope = scope_at(c.start_byte)
        cp = c.parent
        body = cp.child_by_field_name("consequence") if cp is not None and cp.type == "if_statement" else None
        if body is not None:
            start, end = body.start_point[0] + 1, body.end_point[0] + 1
        else:  # assert isinstance(...): narrows to the end of the scope
            start = c.start_point[0] + 1
            sd = def_index.get(scope)
            end = sd[5] if sd else 10**9
        narrow.append((scope, _text(src, var), _short(src, typ) or "?", start, end))

    # ---- identifier-like strings -------------------------------------------------------------------------------
    for n in caps.get("str", []):
        sa, sb = n.start_byte, n.end_byte
        if sb - sa > 120 or not _IDENT_BYTES.fullmatch(src, sa, sb):
            continue
        s = src[sa:sb].decode("utf-8", "replace")
        # context: string_content < string < (argument_list < call) | list/tuple < assignment(__all__)
        ctx = ""
        flags = STRING
        sp = n.parent
        pp = sp.parent if sp is not None else None
        if pp is not None and pp.type == "argument_list" and pp.parent is not None and pp.parent.type == "call":
            fn = pp.parent.child_by_field_name("function")
            ctx = _short(src, fn) or ""
        elif pp is not None and pp.type in ("list", "tuple") and pp.parent is not None \
                and pp.parent.type == "assignment":
            left = pp.parent.child_by_field_name("left")
            if left is not None and _text(src, left) == "__all__":
                flags |= ALL
        line = n.start_point[0] + 1
        base_col = col_of(n)
        scope = scope_at(n.start_byte)
        for m in _WORD.finditer(s):
            extra_refs.append((m.group(), line, base_col + m.start(), scope, ctx + "|" + s, flags))

    body_start: dict[str, int] = {}  # where a function's body starts: defaults and annotations come before it
    for n in caps.get("func", []):
        body = n.child_by_field_name("body")
        if body is not None:
            body_start[scope_of_node[n.start_byte]] = body.start_byte

    # ---- identifiers -> references -----------------------------------------------------------------------------
    local_names: dict[str, set[str]] = {}
    for scope, names in binds.items():
        if kind_of_scope.get(scope) in ("function", "method"):
            local_names[scope] = set(names) - globals_in.get(scope, set())
    module_names = set(binds.get(module, {}))

    # occurrences store their scope as an index into info["scopes"]: a fraction of the bytes of the qualname
    scope_list = [module] + [sc[2] for sc in scopes]
    sidx = {q: i for i, q in enumerate(scope_list)}
    refs: dict[str, list[tuple[Any, ...]]] = {}
    si = 0
    nscopes = len(scopes)
    sstack: list[tuple[int, int, str, str]] = []
    ids = caps.get("id", [])
    ids.sort(key=_start_byte)  # captures do not come in source order; the scope sweep needs it
    for n in ids:
        b = n.start_byte
        if b in skip_ids:
            continue
        e = n.end_byte
        recv = ref_recv.get(b)
        if recv is None and e - b <= 4 and src[b:e] in _SELF_CLS and b not in ref_flags:
            continue  # the receiver parameter itself: by far the most common name, never a reference
        # advance the scope sweep (identifiers come in source order)
        while si < nscopes and scopes[si][0] <= b:
            while sstack and sstack[-1][1] <= scopes[si][0]:
                sstack.pop()
            sstack.append(scopes[si])
            si += 1
        while sstack and sstack[-1][1] <= b:
            sstack.pop()
        scope = sstack[-1][2] if sstack else module
        flags = ref_flags.get(b, 0)
        name = src[b:e].decode("utf-8", "replace")
        if b in name_scope:
            scope = name_scope[b]
        if lambda_names:
            if recv is None and name in lambda_names and lambda_local(b, name):
                continue
            head = _WORD.match(recv) if recv is not None else None
            if head is not None and lambda_local(b, head.group()):
                recv = f"({recv})"  # the receiver is a lambda parameter: untyped, never resolved outside
        if recv is None and not flags & DEF:
            ln = local_names.get(scope)
            if ln is not None and name in ln:
                if b >= body_start.get(scope, 0):
                    continue  # a local variable of its function: never a reference to anything else
                scope = parent_of_scope[scope]  # `def f(x=x)`, `def f(A: A)`: the header reads the enclosing scope
            if name in _BUILTINS and name not in module_names:
                continue
        row, col = n.start_point
        if lines is not None:
            col = col_of(n)
        occ = (row + 1, col, sidx[scope], recv, flags)
        got = refs.get(name)
        if got is None:
            refs[name] = [occ]
        else:
            got.append(occ)
    for name, line, col, scope, recv, flags in extra_refs:
        refs.setdefault(name, []).append((line, col, sidx.get(scope, 0), recv, flags))

    info = {
        # scopes as parallel lists (qualname, kind, parent index): each qualname is stored once
        "scopes": scope_list,
        "skind": [kind_of_scope.get(q, "module") for q in scope_list],
        "sparent": [sidx.get(parent_of_scope[q], 0) if q in parent_of_scope else -1 for q in scope_list],
        # bindings per scope, each marshalled on its own: a query decodes only the scopes it looks into
        "binds": {scope: marshal.dumps(b) for scope, b in binds.items()},
        "fixtures": fixtures,
        "globals": {k: sorted(v) for k, v in globals_in.items()},
        "narrow": narrow,
        "all": all_names,
        "returns": returns,
        "yields": yields,
    }
    return {"defs": defs, "refs": refs, "info": info, "error": error}


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
    fn = _short(src, node.child_by_field_name("function"))
    args = node.child_by_field_name("arguments")
    if not fn or fn == "?" or args is None or args.type != "argument_list":
        return "?"
    kept: list[str] = []
    positional = 0
    for a in args.named_children:
        if a.type == "keyword_argument":
            k = a.child_by_field_name("name")
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
