"""Scopes, modules and ``use`` paths of Rust, for :mod:`tomo.prism.scopes`.

Items (``fn``, ``struct``, ``enum``, ``trait``, ``type``, ``const``, ``static``, ``mod``) are declared in the module or
block that holds them; associated items of ``impl`` and ``trait`` blocks are not bare names and are not declared. An
inline ``mod`` is a wall: a name used inside it is looked up in it, then in its one glob import (``use super::*``),
never in the enclosing module. Locals: ``let``/``if let``/``while let``/``match``/``for`` patterns and parameters
(a bare identifier in a pattern is taken as a binding, so a constant used as a pattern only makes uses ambiguous),
closures, generic parameters. ``use crate::a::h`` / ``use super::a::h`` / ``use self::a::h`` and the same paths in
code record the path and the inline modules around the use, so query time can resolve them against file modules.
Inside a macro call only the arguments of the standard expression macros (``println!``, ``format!``, ``vec!``, ...)
are read as code.
"""

from __future__ import annotations

from tree_sitter import Node

from tomo.prism.pyextract import IMPORT
from tomo.prism.scopes import Decl, Scopes, encode, top_level, walk

_ITEMS = frozenset({"function_item", "struct_item", "enum_item", "union_item", "trait_item", "type_item",
                    "const_item", "static_item", "mod_item", "macro_definition", "function_signature_item"})
_EXPR_MACROS = frozenset({"println", "print", "eprintln", "eprint", "format", "format_args", "write", "writeln",
                          "vec", "assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq",
                          "debug_assert_ne", "panic", "dbg", "todo", "unimplemented", "unreachable"})
_PATH_ROOTS = ("crate", "super", "self")


def _item_scope(node: Node, root: Node) -> Node | None:
    """Where an item or ``use`` is declared: its block, module body or the file; None inside an impl or trait."""
    p = node.parent
    while p is not None:
        if p.type == "block" or p is root or p.id == root.id:
            return p
        if p.type == "declaration_list":
            owner = p.parent
            return p if owner is not None and owner.type == "mod_item" else None
        p = p.parent
    return root


def _pattern(sc: Scopes, node: Node | None, scope: Node) -> None:
    if node is None:
        return
    t = node.type
    if t in ("identifier", "shorthand_field_identifier"):
        sc.declare(node, scope)
    elif t in ("tuple_struct_pattern", "struct_pattern"):
        for i, ch in enumerate(node.children):
            if ch.is_named and node.field_name_for_child(i) != "type":
                _pattern(sc, ch, scope)
    elif t == "field_pattern":
        inner = node.child_by_field_name("pattern")
        _pattern(sc, inner if inner is not None else node.child_by_field_name("name"), scope)
    elif t == "match_pattern":
        for i, ch in enumerate(node.children):
            if ch.is_named and node.field_name_for_child(i) != "condition":
                _pattern(sc, ch, scope)
    elif t in ("scoped_identifier", "scoped_type_identifier", "type_identifier", "primitive_type", "self",
               "lifetime", "string_literal", "integer_literal", "char_literal", "boolean_literal", "float_literal"):
        return  # a path, a type or a literal: not a binding
    elif t == "parameter":
        _pattern(sc, node.child_by_field_name("pattern"), scope)
    else:  # tuple, slice, ref, mut, or, captured (`x @ ..`), reference patterns; and any form not listed here
        for ch in node.named_children:
            _pattern(sc, ch, scope)


def _path_text(sc: Scopes, node: Node | None) -> str:
    return "".join(sc.text(node).split()) if node is not None else ""


def _inline(sc: Scopes, node: Node) -> str:
    """The inline modules around ``node``, outermost first, as ``a::b`` ("" at the file's own module)."""
    names = []
    p = node.parent
    while p is not None:
        if p.type == "mod_item":
            name = p.child_by_field_name("name")
            if name is not None:
                names.append(sc.text(name))
        p = p.parent
    return "::".join(reversed(names))


def _use(sc: Scopes, node: Node | None, prefix: str, scope: Node, where: str) -> None:
    """Declare what one ``use`` tree brings in: ``("i", name, "path|inline")``, globs under ``*``."""
    if node is None:
        return
    t = node.type

    def join(s: str) -> str:
        return f"{prefix}::{s}" if prefix and s else prefix or s

    if t == "identifier":
        sc.declare(node, scope, ("i", sc.text(node), f"{prefix}|{where}"))
    elif t == "scoped_identifier":
        name = node.child_by_field_name("name")
        if name is not None:
            full = join(_path_text(sc, node.child_by_field_name("path")))
            sc.declare(name, scope, ("i", sc.text(name), f"{full}|{where}"))
    elif t == "use_as_clause":
        target, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        if target is not None and target.type == "scoped_identifier":
            name = target.child_by_field_name("name")
            if name is not None:
                full = join(_path_text(sc, target.child_by_field_name("path")))
                sc.own[name.id] = ("i", sc.text(name), f"{full}|{where}")
        elif target is not None and target.type == "identifier":
            sc.own[target.id] = ("i", sc.text(target), f"{prefix}|{where}")
        if alias is not None:
            sc.declare(alias, scope)
    elif t == "scoped_use_list":
        path = join(_path_text(sc, node.child_by_field_name("path")))
        _use(sc, node.child_by_field_name("list"), path, scope, where)
    elif t == "use_list":
        for ch in node.named_children:
            _use(sc, ch, prefix, scope, where)
    elif t == "use_wildcard":
        inner = list(node.named_children)
        path = join(_path_text(sc, inner[0])) if inner else prefix
        sc.decls.setdefault(scope.id, {}).setdefault("*", []).append(("g", f"{path}|{where}"))


def collect(sc: Scopes) -> dict[str, object]:
    root = sc.root
    for n in walk(root):
        t = n.type
        parent = n.parent
        if t in _ITEMS:
            scope = _item_scope(n, root)
            if scope is not None:
                sc.declare(n.child_by_field_name("name"), scope)
        elif t == "use_declaration":
            scope = _item_scope(n, root)
            if scope is not None:
                _use(sc, n.child_by_field_name("argument"), "", scope, _inline(sc, n))
        elif t == "let_declaration" and parent is not None:
            _pattern(sc, n.child_by_field_name("pattern"), parent)
        elif t == "parameters" and parent is not None:
            for ch in n.named_children:
                if ch.type == "parameter":
                    _pattern(sc, ch.child_by_field_name("pattern"), parent)
        elif t == "closure_parameters" and parent is not None:
            for ch in n.named_children:
                _pattern(sc, ch, parent)
        elif t in ("for_expression", "match_arm"):
            _pattern(sc, n.child_by_field_name("pattern"), n)
        elif t == "let_condition" and parent is not None:
            owner = parent
            while owner.parent is not None and owner.type not in ("if_expression", "while_expression"):
                owner = owner.parent
            _pattern(sc, n.child_by_field_name("pattern"), owner)
        elif t == "type_parameters" and parent is not None:
            for ch in n.named_children:
                name = ch.child_by_field_name("name") or ch.child_by_field_name("left")
                if ch.type != "lifetime_parameter" and name is not None:
                    sc.declare(name, parent)
    return {}


def _lookup(sc: Scopes, node: Node, name: str) -> list[Decl] | None:
    """Innermost declaration of ``name``; a scope's single glob import when the scope has one and no declaration
    of ``name``; None past an inline module's wall."""
    n = node.parent
    while n is not None:
        here = sc.decls.get(n.id, {})
        got = here.get(name)
        if got:
            return got
        globs = here.get("*")
        if globs:  # a glob import in a block or module is looked at before any outer scope
            return [("i", name, globs[0][1])] if len(globs) == 1 else [("x", "glob imports")]
        if n.type == "mod_item":
            return None  # the wall: the enclosing module's names are not in scope here
        n = n.parent
    return None


def recv(sc: Scopes, node: Node) -> tuple[str, int]:
    own = sc.own.get(node.id)
    in_use = _within(node, "use_declaration")
    if own is not None:
        return ":".join(own), IMPORT if in_use else 0
    if in_use:
        return "x:path", 0  # a module on the way to the imported name
    t = node.type
    parent = node.parent
    if t == "field_identifier":
        return "x:property", 0
    if parent is None:
        return "x:free", 0
    if parent.type in _ITEMS or parent.type == "function_signature_item":
        return "x:associated item", 0  # an item name that declares nothing bare: a method of an impl or trait
    if parent.type in ("lifetime", "label"):
        return "x:lifetime", 0
    if parent.type == "shorthand_field_initializer":
        return "x:shorthand", 0
    if _within(node, "attribute_item") or _within(node, "inner_attribute_item"):
        return "x:attribute", 0
    if parent.type == "macro_invocation":
        return "x:macro", 0
    tree = _within(node, "token_tree")
    if tree is not None:
        call: Node | None = tree
        while call is not None and call.type != "macro_invocation":
            call = call.parent
        mac = call.child_by_field_name("macro") if call is not None else None
        prev = node.prev_sibling
        if mac is None or sc.text(mac) not in _EXPR_MACROS or (prev is not None and prev.type in (".", "::")):
            return "x:macro", 0
    if parent.type in ("scoped_identifier", "scoped_type_identifier") and node == parent.child_by_field_name("name"):
        path = _path_text(sc, parent.child_by_field_name("path"))
        if path.split("::")[0] in _PATH_ROOTS:
            return f"i:{sc.text(node)}:{path}|{_inline(sc, node)}", 0
        return "x:path", 0
    found = _lookup(sc, node, sc.text(node))
    return ("x:free" if found is None else encode(found)), 0


def _within(node: Node, kind: str) -> Node | None:
    p = node.parent
    while p is not None:
        if p.type == kind:
            return p
        p = p.parent
    return None


def def_data(sc: Scopes, def_node: Node, facts: dict[str, object]) -> dict[str, int]:
    """``top``: an item of the file's own module (not in an inline ``mod``, a block or an impl), the only one of its
    name there."""
    return {"top": 1} if top_level(sc, def_node) else {}
