"""Scopes and imports of JavaScript and TypeScript, for :mod:`tomo.prism.scopes`.

Where a binding is visible: ``var`` and function declarations in the nearest function (hoisted; a function declared
in a block counts for the whole function, the wider of the two readings), ``let``/``const``/``class`` and TypeScript's
``interface``/``type``/``enum``/``namespace`` in the nearest block, parameters and a function expression's own name
in the function, a catch parameter in the catch clause, ``for (let x of ...)`` in the loop, type parameters in their
declaration, imports at the top. Values and types share one namespace here: a local of either kind shadows both,
which can only make more uses ambiguous.
"""

from __future__ import annotations

from tree_sitter import Node

from tomo.prism.pyextract import IMPORT
from tomo.prism.scopes import Scopes, enclosing, top_level, walk

_FUNCS = frozenset({"program", "function_declaration", "generator_function_declaration", "function_expression",
                    "function", "generator_function", "arrow_function", "method_definition", "class_static_block",
                    "function_signature"})
_BLOCKS = _FUNCS | {"statement_block", "for_statement", "for_in_statement", "catch_clause", "switch_body",
                    "class_body"}
_FUNC_DECLS = frozenset({"function_declaration", "generator_function_declaration", "function_signature"})
_FUNC_EXPRS = frozenset({"function_expression", "function", "generator_function"})
_BLOCK_DECLS = frozenset({"class_declaration", "abstract_class_declaration", "interface_declaration",
                          "type_alias_declaration", "enum_declaration", "internal_module", "module"})
_IDENTS = frozenset({"identifier", "type_identifier", "shorthand_property_identifier_pattern"})


def _pattern(sc: Scopes, node: Node | None, scope: Node) -> None:
    """Declare every name a binding pattern introduces (destructuring, defaults, rest, TS parameters)."""
    if node is None:
        return
    t = node.type
    if t in _IDENTS:
        sc.declare(node, scope)
    elif t in ("required_parameter", "optional_parameter"):
        _pattern(sc, node.child_by_field_name("pattern"), scope)
    elif t in ("assignment_pattern", "object_assignment_pattern"):
        _pattern(sc, node.child_by_field_name("left"), scope)
    elif t == "pair_pattern":
        _pattern(sc, node.child_by_field_name("value"), scope)
    elif t in ("object_pattern", "array_pattern", "rest_pattern"):
        for ch in node.named_children:
            _pattern(sc, ch, scope)
    elif t in ("this", "comment", "type_annotation", "accessibility_modifier", "override_modifier"):
        return
    else:  # a form this binder does not know: every name in it is taken as declared (it shadows, never leaks)
        for n in walk(node):
            if n.type in _IDENTS:
                sc.declare(n, scope)


def _import(sc: Scopes, node: Node) -> None:
    src_node = node.child_by_field_name("source")
    source = sc.text(src_node)[1:-1] if src_node is not None else ""
    for n in walk(node):
        if n.type == "import_specifier":
            name, alias = n.child_by_field_name("name"), n.child_by_field_name("alias")
            if name is None:
                continue
            if alias is None:
                sc.declare(name, sc.root, ("i", sc.text(name), source))
            else:
                sc.own[name.id] = ("i", sc.text(name), source)  # the exported name: an edit, not a local binding
                sc.declare(alias, sc.root)
        elif n.type == "namespace_import":
            for ch in n.named_children:
                if ch.type == "identifier":
                    sc.declare(ch, sc.root, ("n", source))
        elif n.type == "import_clause":
            for ch in n.named_children:
                if ch.type == "identifier":  # the default import
                    sc.declare(ch, sc.root, ("i", "default", source))
        elif n.type == "import_require_clause":
            for ch in n.named_children:
                if ch.type == "identifier":
                    sc.declare(ch, sc.root)
                    break


def collect(sc: Scopes) -> dict[str, object]:
    """Declare every binding of the file; returns file facts (the name the default export binds, if any)."""
    root = sc.root
    facts: dict[str, object] = {}
    for n in walk(root):
        t = n.type
        parent = n.parent
        if t in _FUNC_DECLS:
            sc.declare(n.child_by_field_name("name"), enclosing(parent, _FUNCS, root))
        elif t in _FUNC_EXPRS or t == "class":
            sc.declare(n.child_by_field_name("name"), n)
        elif t in _BLOCK_DECLS:
            sc.declare(n.child_by_field_name("name"), enclosing(parent, _BLOCKS, root))
        elif t == "variable_declarator" and parent is not None:
            where = _FUNCS if parent.type == "variable_declaration" else _BLOCKS
            _pattern(sc, n.child_by_field_name("name"), enclosing(parent.parent, where, root))
        elif t == "formal_parameters" and parent is not None:
            for ch in n.named_children:
                _pattern(sc, ch, parent)
        elif t == "arrow_function" or t == "catch_clause":
            _pattern(sc, n.child_by_field_name("parameter"), n)
        elif t == "for_in_statement":
            kind = n.child_by_field_name("kind")
            if kind is not None:
                scope = enclosing(parent, _FUNCS, root) if sc.text(kind) == "var" else n
                _pattern(sc, n.child_by_field_name("left"), scope)
        elif t == "type_parameter" and parent is not None and parent.parent is not None:
            sc.declare(n.child_by_field_name("name"), parent.parent)
        elif t == "mapped_type_clause" and parent is not None:  # `{ [K in keyof T]: K }`
            sc.declare(n.child_by_field_name("name"), parent)
        elif t == "infer_type":  # `T extends Array<infer U> ? U : never`
            owner = enclosing(parent, frozenset({"conditional_type"}), root)
            for ch in n.named_children[:1]:
                sc.declare(ch, owner)
        elif t == "import_statement":
            _import(sc, n)
        elif t == "with_statement":
            body = n.child_by_field_name("body")
            if body is not None:
                sc.poisoned.add(body.id)
        elif t == "export_specifier" and (alias := n.child_by_field_name("alias")) is not None:
            aliases = facts.setdefault("aliases", [])
            assert isinstance(aliases, list)
            aliases.append(sc.text(alias))  # `export {g as h}`: the module's `h` may be another binding
        elif t == "export_statement" and any(ch.type == "default" for ch in n.children):
            decl = n.child_by_field_name("declaration")
            value = n.child_by_field_name("value")
            target = decl.child_by_field_name("name") if decl is not None else value
            if target is not None and target.type in ("identifier", "type_identifier"):
                facts["default"] = sc.text(target)
    return facts


def recv(sc: Scopes, node: Node) -> tuple[str, int]:
    """What the occurrence ``node`` is bound to (see :mod:`tomo.prism.scopes`), and IMPORT for a name that an import
    or a re-export spells."""
    how = _recv(sc, node)
    p = node.parent
    in_import = p is not None and (p.type in ("import_specifier", "import_clause", "namespace_import")
                                   or (p.type == "export_specifier" and how.startswith("i:")))
    return how, IMPORT if in_import else 0


def _recv(sc: Scopes, node: Node) -> str:
    t = node.type
    parent = node.parent
    if t == "shorthand_property_identifier":
        return "x:shorthand"
    if t == "shorthand_property_identifier_pattern" and node.id not in sc.own:
        return "x:shorthand"
    if t == "property_identifier":
        if parent is not None and parent.type == "member_expression":
            obj = parent.child_by_field_name("object")
            if obj is not None and obj.type == "identifier":
                found = sc.lookup(obj, sc.text(obj))
                if found is not None and len(found) == 1 and found[0][0] == "n":
                    return f"i:{sc.text(node)}:{found[0][1]}"
        return "x:property"
    if parent is not None and parent.type == "export_specifier":
        stmt = parent.parent.parent if parent.parent is not None else None
        src_node = stmt.child_by_field_name("source") if stmt is not None else None
        if node == parent.child_by_field_name("alias"):
            return "x:export alias"
        if src_node is not None:  # export {h} from './a': a name of that module
            return f"i:{sc.text(node)}:{sc.text(src_node)[1:-1]}"
    if parent is not None and parent.type in ("jsx_opening_element", "jsx_closing_element",
                                              "jsx_self_closing_element") and sc.text(node)[:1].islower():
        return "x:jsx tag"  # `<div>`: an intrinsic element, a string to React, not the variable `div`
    if parent is not None and parent.type in ("nested_type_identifier", "nested_identifier") and \
            node != parent.named_children[0]:
        return "x:property"
    return sc.resolve(node)


def def_data(sc: Scopes, def_node: Node, facts: dict[str, object]) -> dict[str, int]:
    """``top``: the definition is the file's only top-level binding of its name and no other binding is exported
    under that name (so an import of the name reaches it); ``default``: it is also the module's default export."""
    aliases = facts.get("aliases")
    if not top_level(sc, def_node) or (isinstance(aliases, list) and sc.text(def_node) in aliases):
        return {}
    return {"top": 1, "default": 1} if facts.get("default") == sc.text(def_node) else {"top": 1}
