"""Scopes, members and imports of Java, for :mod:`tomo.prism.scopes`.

Java keeps variables, methods and types apart, so names are declared under ``v:``, ``m:`` and ``t:`` keys. Members
(fields, methods, enum constants, member types) are declared in their class; parameters, locals, ``for``/catch/
resource/lambda/pattern variables and type parameters in their method, block or statement (an ``instanceof``
pattern variable in the whole enclosing method, since its scope follows the flow).

A class with a supertype (``extends``/``implements``, an enum, a record, an anonymous class) may inherit members
prism cannot see: a name looked up through it, and a method declared in it (an inherited overload may be the one
called), stays ambiguous. So do method names of ``java.lang.Object`` (``equals``, ``toString``, ...).

Recorded for query time: a qualifier's class in ``B.h()``/``B.h`` (declared in the file, imported by
``import a.B;``, or from the same package), static imports (``import static a.B.h;``), single-type imports, and a
type name with no declaration in the file (``q:``: the same package, if it has such a class).
"""

from __future__ import annotations

from tree_sitter import Node

from tomo.prism.pyextract import IMPORT
from tomo.prism.scopes import Decl, Scopes, encode, walk

_CLASSES = frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
                      "annotation_type_declaration"})
_OWNERS = _CLASSES | {"method_declaration", "constructor_declaration", "lambda_expression", "static_initializer",
                      "compact_constructor_declaration"}
_OBJECT_METHODS = frozenset({"equals", "hashCode", "toString", "getClass", "clone", "finalize", "notify",
                             "notifyAll", "wait"})


def _class_of(node: Node) -> Node | None:
    """The class (or anonymous class body) whose member ``node`` declares, if ``node`` sits directly in a body."""
    p = node.parent
    if p is not None and p.type == "enum_body_declarations":
        p = p.parent
    if p is None:
        return None
    if p.type in ("class_body", "interface_body", "enum_body", "annotation_type_body"):
        owner = p.parent
        if owner is not None and owner.type in _CLASSES:
            return owner
        return p  # an anonymous class body
    return None


def _enclosing(node: Node, types: frozenset[str], root: Node) -> Node:
    p = node.parent
    while p is not None:
        if p.type in types or (p.type == "block" and p.parent is not None and p.parent.type in _OWNERS):
            return p
        p = p.parent
    return root


def _scope_of_local(node: Node, root: Node) -> Node:
    """A local's scope: its block, switch group or ``for`` statement (the parent that holds the declaration)."""
    p = node.parent
    return p if p is not None else root


def collect(sc: Scopes) -> dict[str, object]:
    root = sc.root
    facts: dict[str, object] = {}
    classes: list[str] = []
    for n in walk(root):
        t = n.type
        parent = n.parent
        if t == "package_declaration":
            for ch in n.named_children:
                if ch.type in ("scoped_identifier", "identifier"):
                    facts["package"] = "".join(sc.text(ch).split())
        elif t == "import_declaration":
            _import(sc, n, facts)
        elif t in _CLASSES:
            name = n.child_by_field_name("name")
            owner = _class_of(n)
            scope = owner if owner is not None else (root if parent is root or parent is None or parent.id == root.id
                                                     else _scope_of_local(n, root))
            sc.declare(name, scope, key=f"t:{sc.text(name)}" if name is not None else "")
            if scope.id == root.id and name is not None:
                classes.append(sc.text(name))
            if (n.child_by_field_name("superclass") is not None or n.child_by_field_name("interfaces") is not None
                    or t in ("enum_declaration", "record_declaration")):
                sc.poisoned.add(n.id)  # an open class: see the module docstring
        elif t == "class_body" and parent is not None and parent.type == "object_creation_expression":
            sc.poisoned.add(n.id)
        elif t == "method_declaration":
            name = n.child_by_field_name("name")
            owner = _class_of(n)
            if name is not None and owner is not None:
                sc.declare(name, owner, key=f"m:{sc.text(name)}")
                if sc.text(name) in _OBJECT_METHODS:
                    sc.decls[owner.id][f"m:{sc.text(name)}"].append(("x", "object method"))
        elif t in ("field_declaration", "constant_declaration"):
            owner = _class_of(n)
            for d in n.children_by_field_name("declarator"):
                name = d.child_by_field_name("name")
                if owner is not None and name is not None:
                    sc.declare(name, owner, key=f"v:{sc.text(name)}")
        elif t == "enum_constant":
            owner = _class_of(n)
            name = n.child_by_field_name("name")
            if owner is not None and name is not None:
                sc.declare(name, owner, key=f"v:{sc.text(name)}")
        elif t == "local_variable_declaration":
            scope = _scope_of_local(n, root)
            for d in n.children_by_field_name("declarator"):
                _var(sc, d.child_by_field_name("name"), scope)
        elif t in ("formal_parameter", "spread_parameter", "receiver_parameter") and parent is not None:
            owner = parent.parent if parent.type == "formal_parameters" and parent.parent is not None else parent
            name = n.child_by_field_name("name")
            if name is None:  # `String... r`: the name sits in a variable_declarator
                for ch in n.named_children:
                    if ch.type == "variable_declarator":
                        name = ch.child_by_field_name("name")
            _var(sc, name, owner)
        elif t == "catch_formal_parameter" and parent is not None:
            _var(sc, n.child_by_field_name("name"), parent)
        elif t == "enhanced_for_statement":
            _var(sc, n.child_by_field_name("name"), n)
        elif t == "resource":
            stmt = parent.parent if parent is not None and parent.parent is not None else root
            _var(sc, n.child_by_field_name("name"), stmt)
        elif t == "lambda_expression":
            params = n.child_by_field_name("parameters")
            if params is not None and params.type == "identifier":
                _var(sc, params, n)
            elif params is not None and params.type == "inferred_parameters":
                for ch in params.named_children:
                    _var(sc, ch, n)
        elif t in ("instanceof_expression", "type_pattern", "record_pattern_component"):
            name = n.child_by_field_name("name")
            if name is None:
                idents = [ch for ch in n.named_children if ch.type == "identifier"]
                name = idents[-1] if idents and t != "instanceof_expression" else None
            _var(sc, name, _enclosing(n, _OWNERS, root))
        elif t == "type_parameter" and parent is not None and parent.parent is not None:
            for ch in n.named_children:
                if ch.type in ("type_identifier", "identifier"):
                    sc.declare(ch, parent.parent, key=f"t:{sc.text(ch)}")
                    break
    facts["classes"] = classes
    sc.facts = facts
    return facts


def _var(sc: Scopes, name: Node | None, scope: Node) -> None:
    if name is not None and name.type == "identifier":
        sc.declare(name, scope, key=f"v:{sc.text(name)}")


def _import(sc: Scopes, n: Node, facts: dict[str, object]) -> None:
    static = any(ch.type == "static" for ch in n.children)
    star = any(ch.type == "asterisk" for ch in n.children)
    path = next((ch for ch in n.named_children if ch.type in ("scoped_identifier", "identifier")), None)
    if path is None or star:
        if static:
            facts["static_star"] = 1
        return
    name = path.child_by_field_name("name") if path.type == "scoped_identifier" else path
    scope = path.child_by_field_name("scope") if path.type == "scoped_identifier" else None
    if name is None:
        return
    qual = "".join(sc.text(scope).split()) if scope is not None else ""
    text = sc.text(name)
    if static:  # a static import brings every member of that name: fields and methods
        cls = scope.child_by_field_name("name") if scope is not None and scope.type == "scoped_identifier" else scope
        outer = scope.child_by_field_name("scope") if scope is not None and scope.type == "scoped_identifier" else None
        if cls is not None:  # `a.B` in `import static a.B.h;` names the class B
            sc.own[cls.id] = ("i", sc.text(cls), "".join(sc.text(outer).split()) + "|type" if outer else "|type")
        decl: Decl = ("i", text, f"{qual}|static")
        sc.declare(name, sc.root, decl, key=f"v:{text}")
        sc.declare(name, sc.root, decl, key=f"m:{text}")
    else:
        sc.declare(name, sc.root, ("i", text, f"{qual}|type"), key=f"t:{text}")


def _lookup(sc: Scopes, node: Node, key: str) -> list[Decl] | None:
    """Innermost declaration under ``key``; through an open class (see the module docstring): inherited, unknown."""
    n = node.parent
    while n is not None:
        got = sc.decls.get(n.id, {}).get(key)
        if n.id in sc.poisoned:
            if got and not key.startswith("m:"):
                return got
            return [("x", "inherited")]
        if got:
            return got
        n = n.parent
    return None


def _type(sc: Scopes, node: Node, name: str) -> str:
    """What the type name ``name`` at ``node`` is: a class in this file, an import, or ``q:`` (same package)."""
    found = _lookup(sc, node, f"t:{name}")
    if found is None:
        return f"q:{name}"
    return encode(found)


def recv(sc: Scopes, node: Node) -> tuple[str, int]:
    own = sc.own.get(node.id)
    parent = node.parent
    if parent is not None and parent.type == "scoped_identifier" and _within(node, "import_declaration"):
        return (":".join(own), IMPORT) if own is not None else ("x:path", 0)
    if _within(node, "package_declaration") or _within(node, "import_declaration"):
        return ("x:path", 0) if own is None else (":".join(own), IMPORT)
    if own is not None:
        return ":".join(own), 0
    if parent is None:
        return "x:free", 0
    text = sc.text(node)
    pt = parent.type
    if pt in ("labeled_statement", "break_statement", "continue_statement"):
        return "x:label", 0
    if pt == "switch_label":
        return "x:case label", 0  # `case A:` names a constant of the switched value's type, not a lexical name
    if pt == "element_value_pair" and node == parent.child_by_field_name("key"):
        return "x:annotation element", 0
    if pt == "constructor_declaration" and node == parent.child_by_field_name("name"):
        owner = _class_of(parent)
        name = owner.child_by_field_name("name") if owner is not None and owner.type in _CLASSES else None
        if name is not None and sc.text(name) == text:
            return ":".join(sc.own.get(name.id, ("x", "constructor"))), 0
        return "x:constructor", 0
    if pt in ("scoped_type_identifier", "scoped_identifier") and node != parent.named_children[0]:
        return "x:path", 0
    if node.type == "type_identifier":
        return _type(sc, node, text), 0
    if pt == "method_invocation" and node == parent.child_by_field_name("name"):
        obj = parent.child_by_field_name("object")
        if obj is None:
            found = _lookup(sc, node, f"m:{text}")
            if found is None:
                return ("x:static import on demand" if sc.facts.get("static_star") else "x:free"), 0
            return encode(found), 0
        return _member(sc, obj, text), 0
    if pt == "field_access" and node == parent.child_by_field_name("field"):
        obj = parent.child_by_field_name("object")
        return (_member(sc, obj, text) if obj is not None else "x:property"), 0
    if pt == "method_reference" and node != parent.named_children[0]:
        return "x:property", 0
    found = _lookup(sc, node, f"v:{text}")
    if found is not None:
        return encode(found), 0
    if _is_qualifier(node):  # `B` in `B.h()`: not a variable here, so a type
        return _type(sc, node, text), 0
    return ("x:static import on demand" if sc.facts.get("static_star") else "x:free"), 0


def _is_qualifier(node: Node) -> bool:
    p = node.parent
    return p is not None and (
        (p.type in ("method_invocation", "field_access") and node == p.child_by_field_name("object"))
        or (p.type == "method_reference" and node == p.named_children[0]))


def _member(sc: Scopes, obj: Node, name: str) -> str:
    """``Q.name``: a member of class Q when Q is a type here (not a variable), else a property of a value."""
    if obj.type != "identifier":
        return "x:property"
    q = sc.text(obj)
    var = _lookup(sc, obj, f"v:{q}")
    if var is not None:
        return "x:inherited" if var == [("x", "inherited")] else "x:property"
    t = _type(sc, obj, q)
    if t.startswith("d:"):
        _, line, col, _where = t.split(":")
        return f"i:{name}:file|{line}|{col}"
    if t.startswith("i:"):
        _, cls, source = t.split(":", 2)
        return f"i:{name}:fqn|{source.split('|')[0]}.{cls}"
    if t.startswith("q:"):
        return f"i:{name}:pkg|{q}"
    return "x:property"


def _within(node: Node, kind: str) -> Node | None:
    p = node.parent
    while p is not None:
        if p.type == kind:
            return p
        p = p.parent
    return None


def def_data(sc: Scopes, def_node: Node, facts: dict[str, object]) -> dict[str, object]:
    """``top``: a top-level class; ``owner``/``owner_at``: the top-level class a member belongs to directly, and
    ``single``: it is the only member of its name and kind there (no overloads)."""
    decl = def_node.parent
    if decl is None:
        return {}
    name = sc.text(def_node)
    if decl.type in _CLASSES:
        return {"top": 1} if _class_of(decl) is None and decl.parent is not None and \
            decl.parent.id == sc.root.id else {}
    member = decl.parent if decl.type == "variable_declarator" else decl
    owner = _class_of(member) if member is not None else None
    if owner is None or owner.type not in _CLASSES or owner.parent is None or owner.parent.id != sc.root.id:
        return {}
    oname = owner.child_by_field_name("name")
    if oname is None:
        return {}
    key = f"m:{name}" if decl.type == "method_declaration" else f"v:{name}"
    data: dict[str, object] = {"owner": sc.text(oname), "owner_at": "|".join(sc.own.get(oname.id, ("", "", ""))[1:3])}
    same = sc.decls.get(owner.id, {}).get(key, ())
    if len(same) == 1 and (key.startswith("v:") or owner.id not in sc.poisoned):  # inherited overloads: not single
        data["single"] = 1
    return data
