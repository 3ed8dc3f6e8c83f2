"""Scopes and imports of Go, for :mod:`tomo.prism.scopes`.

Package-level declarations (functions, types, vars, consts) are declared at the file's top; a bare name no scope in
its file declares is recorded as ``p`` (package scope: another file of the package may declare it). Locals follow
Go's blocks: a function's parameters, results, receiver and type parameters in the function; ``:=``, ``var``,
``const`` and ``type`` in the enclosing block, the ``if``/``for``/``switch``/``select`` statement or case clause;
a type switch's alias in the switch. Imports are declared at the top as the package they name, so ``pkg.H`` and
``pkg.T`` record the import path. Methods and fields are reached through a value: they stay properties.
"""

from __future__ import annotations

from tree_sitter import Node

from tomo.prism.scopes import Scopes, enclosing, top_level, walk

_SCOPES = frozenset({"source_file", "function_declaration", "method_declaration", "func_literal", "block",
                     "if_statement", "for_statement", "expression_switch_statement", "type_switch_statement",
                     "select_statement", "expression_case", "type_case", "default_case", "communication_case",
                     "function_type", "type_spec", "type_alias"})
_FUNCS = frozenset({"function_declaration", "method_declaration", "func_literal", "function_type", "type_spec",
                    "method_elem", "method_spec"})


def _names(sc: Scopes, node: Node | None, scope: Node) -> None:
    if node is None:
        return
    if node.type in ("identifier", "type_identifier"):
        sc.declare(node, scope)
    elif node.type == "expression_list":
        for ch in node.named_children:
            if ch.type == "identifier":
                sc.declare(ch, scope)


def _walrus(node: Node) -> bool:
    return any(ch.type == ":=" for ch in node.children)


def _import(sc: Scopes, spec: Node, facts: dict[str, object]) -> None:
    path_node = spec.child_by_field_name("path")
    if path_node is None:
        return
    path = sc.text(path_node).strip('"`')
    name = spec.child_by_field_name("name")
    if name is not None and name.type == "dot":
        facts["dot_import"] = 1  # bare names may come from that package: none of them is provable
        return
    if name is not None and name.type == "blank_identifier":
        return
    if name is not None:
        sc.declare(name, sc.root, ("n", f"{path}|{sc.text(name)}|1"))
        return
    parts = path.split("/")
    last = parts[-2] if len(parts) > 1 and parts[-1][:1] == "v" and parts[-1][1:].isdigit() else parts[-1]
    sc.decls.setdefault(sc.root.id, {}).setdefault(last, []).append(("n", f"{path}|{last}|0"))


def collect(sc: Scopes) -> dict[str, object]:
    root = sc.root
    facts: dict[str, object] = {}
    for n in walk(root):
        t = n.type
        parent = n.parent
        if t == "package_clause":
            for ch in n.named_children:
                facts["package"] = sc.text(ch)
        elif t == "function_declaration":
            sc.declare(n.child_by_field_name("name"), root)
        elif t in ("type_spec", "type_alias"):
            sc.declare(n.child_by_field_name("name"), enclosing(parent, _SCOPES, root))
        elif t in ("const_spec", "var_spec"):
            scope = enclosing(parent, _SCOPES, root)
            for ch in n.children_by_field_name("name"):
                sc.declare(ch, scope)
        elif t == "short_var_declaration" or (t in ("range_clause", "receive_statement") and _walrus(n)):
            _names(sc, n.child_by_field_name("left"), enclosing(parent, _SCOPES, root))
        elif t == "type_switch_statement":
            _names(sc, n.child_by_field_name("alias"), n)
        elif t in ("parameter_declaration", "variadic_parameter_declaration", "type_parameter_declaration"):
            owner = enclosing(parent, _FUNCS, root)
            for ch in n.children_by_field_name("name"):
                sc.declare(ch, owner)
        elif t == "import_spec":
            _import(sc, n, facts)
        elif t == "method_declaration":  # `func (t *T[P]) M()`: the receiver's type arguments declare P
            receiver = n.child_by_field_name("receiver")
            for m in walk(receiver) if receiver is not None else ():
                if m.type == "type_arguments":
                    for ident in walk(m):
                        if ident.type == "type_identifier":
                            sc.declare(ident, n)
    facts["tops"] = sorted(k for k, v in sc.decls.get(root.id, {}).items() if any(d[0] == "d" for d in v))
    sc.facts = facts
    return facts


def recv(sc: Scopes, node: Node) -> tuple[str, int]:
    t = node.type
    parent = node.parent
    if t == "field_identifier":
        if parent is not None and parent.type == "selector_expression":
            operand = parent.child_by_field_name("operand")
            if operand is not None and operand.type == "identifier":
                return _qualified(sc, operand, node), 0
        return "x:property", 0
    if t == "type_identifier" and parent is not None and parent.type == "qualified_type":
        pkg = parent.child_by_field_name("package")
        return (_qualified(sc, pkg, node) if pkg is not None else "x:property"), 0
    if parent is not None and parent.type == "literal_element" and parent.parent is not None \
            and parent.parent.type == "keyed_element" and parent == parent.parent.named_children[0]:
        return "x:key", 0  # `T{f: 1}`: a field name or a map key, which only types tell apart
    own = sc.own.get(node.id)
    if own is not None:
        return ":".join(own), 0
    found = sc.lookup(node, sc.text(node))
    if found is None:  # package scope: any file of the package may declare it (or a dot import)
        return ("x:dot import" if sc.facts.get("dot_import") else "p"), 0
    if len(found) != 1:
        return "x:multi", 0
    return ":".join(found[0]), 0


def _qualified(sc: Scopes, operand: Node, name: Node) -> str:
    found = sc.lookup(name, sc.text(operand))
    if found is not None and len(found) == 1 and found[0][0] == "n":
        return f"i:{sc.text(name)}:{found[0][1]}"
    return "x:property"


def def_data(sc: Scopes, def_node: Node, facts: dict[str, object]) -> dict[str, int]:
    """``top``: a package-level declaration, the only one of its name in this file."""
    return {"top": 1} if top_level(sc, def_node) else {}
