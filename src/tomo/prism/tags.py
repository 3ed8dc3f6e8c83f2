"""Definitions and name occurrences for JavaScript, TypeScript, Go, Rust and Java.

These languages get prism's shallow tier: definitions by tree-sitter query, references by name. A language with a
binder (:mod:`tomo.prism.jsbind` and friends) also records, for every occurrence, what it is bound to where that is
provable without types (see :mod:`tomo.prism.scopes`); query time turns that into ``confirmed`` or ``ambiguous``.
"""

from __future__ import annotations

import operator
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from tomo.prism import gobind, javabind, jsbind, rustbind
from tomo.prism.pyextract import DEF, _first_error
from tomo.prism.scopes import Scopes

_JS_DEFS = """
(function_declaration name: (identifier) @def.function)
(generator_function_declaration name: (identifier) @def.function)
(class_declaration name: (_) @def.class) @container
(method_definition name: (property_identifier) @def.method)
(variable_declarator name: (identifier) @def.variable)
"""
_TS_EXTRA = """
(interface_declaration name: (type_identifier) @def.interface) @container
(type_alias_declaration name: (type_identifier) @def.type)
(abstract_class_declaration name: (type_identifier) @def.class) @container
(enum_declaration name: (identifier) @def.enum)
"""
_JS_REFS = ("[(identifier) (property_identifier) (shorthand_property_identifier)"
            " (shorthand_property_identifier_pattern)] @ref")
_TS_REFS = ("[(identifier) (property_identifier) (type_identifier) (shorthand_property_identifier)"
            " (shorthand_property_identifier_pattern)] @ref")
_SPECS: dict[str, tuple[str, str]] = {
    "javascript": (_JS_DEFS, _JS_REFS),
    "typescript": (_JS_DEFS + _TS_EXTRA, _TS_REFS),
    "tsx": (_JS_DEFS + _TS_EXTRA, _TS_REFS),
    "go": ("""
(function_declaration name: (identifier) @def.function)
(method_declaration name: (field_identifier) @def.method)
(type_spec name: (type_identifier) @def.type)
(const_spec name: (identifier) @def.constant)
""", "[(identifier) (field_identifier) (type_identifier)] @ref"),
    "rust": ("""
(function_item name: (identifier) @def.function)
(struct_item name: (type_identifier) @def.struct)
(enum_item name: (type_identifier) @def.enum)
(trait_item name: (type_identifier) @def.trait) @container
(impl_item type: (type_identifier) @impl.name) @container
(const_item name: (identifier) @def.constant)
""", "[(identifier) (field_identifier) (type_identifier)] @ref"),
    "java": ("""
(class_declaration name: (identifier) @def.class) @container
(interface_declaration name: (identifier) @def.interface) @container
(enum_declaration name: (identifier) @def.enum) @container
(method_declaration name: (identifier) @def.method)
(constructor_declaration name: (identifier) @def.constructor)
(field_declaration declarator: (variable_declarator name: (identifier) @def.field))
""", "[(identifier) (type_identifier)] @ref"),
}

_BINDERS: dict[str, Any] = {"javascript": jsbind, "typescript": jsbind, "tsx": jsbind, "go": gobind,
                            "rust": rustbind, "java": javabind}

_cache: dict[str, tuple[Parser, Query, Query]] = {}


def _language(lang: str) -> Language:
    if lang == "javascript":
        import tree_sitter_javascript as m

        return Language(m.language())
    if lang in ("typescript", "tsx"):
        import tree_sitter_typescript as t

        return Language(t.language_tsx() if lang == "tsx" else t.language_typescript())
    if lang == "go":
        import tree_sitter_go as g

        return Language(g.language())
    if lang == "rust":
        import tree_sitter_rust as r

        return Language(r.language())
    if lang == "java":
        import tree_sitter_java as j

        return Language(j.language())
    raise ValueError(f"no tree-sitter grammar for {lang}")


def _setup(lang: str) -> tuple[Parser, Query, Query]:
    if lang not in _cache:
        language = _language(lang)
        defs, refs = _SPECS[lang]
        _cache[lang] = (Parser(language), Query(language, defs), Query(language, refs))
    return _cache[lang]


def extract(src: bytes, module: str, lang: str) -> dict[str, Any]:
    parser, dq, rq = _setup(lang)
    tree = parser.parse(src)
    root = tree.root_node
    caps = QueryCursor(dq).captures(root)
    containers: list[tuple[int, int, str]] = []
    for node in caps.get("container", []):
        name_node = node.child_by_field_name("name") or node.child_by_field_name("type")
        if name_node is not None:
            containers.append((node.start_byte, node.end_byte, src[name_node.start_byte : name_node.end_byte].decode()))
    containers.sort()

    def qual(byte: int, name: str) -> str:
        prefix = [c[2] for c in containers if c[0] <= byte < c[1] and c[2] != name]
        return ".".join([module, *prefix, name]) if module else ".".join([*prefix, name])

    defs: list[list[Any]] = []
    def_bytes: set[int] = set()
    def_nodes: list[Node] = []
    seen: dict[str, int] = {}
    for cap, nodes in caps.items():
        if not cap.startswith("def."):
            continue
        kind = cap[4:]
        for n in nodes:
            name = src[n.start_byte : n.end_byte].decode("utf-8", "replace")
            q = qual(n.start_byte, name)
            if q in seen:
                seen[q] += 1
                q = f"{q}@{seen[q]}"
            else:
                seen[q] = 0
            decl = n.parent if n.parent is not None else n
            defs.append([q, name, kind, n.start_point[0] + 1, n.start_point[1], decl.end_point[0] + 1, module, {}])
            def_nodes.append(n)
            def_bytes.add(n.start_byte)
    lines = None if src.isascii() else src.split(b"\n")

    def col_of(row: int, col: int) -> int:  # tree-sitter columns are bytes; prism's are characters
        return col if lines is None else len(lines[row][:col].decode("utf-8", "replace"))

    for d in defs:
        d[4] = col_of(d[3] - 1, d[4])
    binder = _BINDERS.get(lang)
    sc = Scopes(root, src, lambda n: (n.start_point[0] + 1, col_of(*n.start_point)))
    info: dict[str, Any] = {"scopes": [module]}
    if binder is not None:
        facts = binder.collect(sc)
        info["bind"] = facts
        for d, n in zip(defs, def_nodes, strict=True):
            d[7] = binder.def_data(sc, n, facts)
    refs: dict[str, list[tuple[Any, ...]]] = {}
    nodes = QueryCursor(rq).captures(root).get("ref", [])
    nodes.sort(key=operator.attrgetter("start_byte"))
    for n in nodes:
        name = src[n.start_byte : n.end_byte].decode("utf-8", "replace")
        row, col = n.start_point
        how, flags = binder.recv(sc, n) if binder is not None else (None, 0)
        if n.start_byte in def_bytes:
            flags |= DEF
        refs.setdefault(name, []).append((row + 1, col_of(row, col), 0, how, flags))
    error = _first_error(root) if root.has_error else None
    return {"defs": defs, "refs": refs, "info": info, "error": error}
