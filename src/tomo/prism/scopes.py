"""Lexical scopes for the languages without a type checker in prism (JavaScript, TypeScript, Go, Rust, Java).

At index time each language's binder declares every binding it can see (parameters, locals, nested functions and
classes, catch/for bindings, destructuring, imports) in the scope node where it is visible, and then stores, for every
name occurrence, *what it is bound to* as a short string in the occurrence's ``recv`` slot:

- ``d:LINE:COL:t|l`` — a declaration in this file at LINE:COL, ``t`` at the file's top level, ``l`` in an inner scope;
- ``i:NAME:SOURCE`` — the name NAME imported from module SOURCE (spelled as the import spells it);
- ``x:WHY`` — nothing provable (a property, a shorthand key, a name declared twice, inside ``with``, ...).

Query time (:mod:`tomo.prism.otherbind`) compares that with the symbol being asked about. Everything here is
deliberately conservative: a declaration form a binder does not know makes the names under it declared (so they
shadow), never invisible, because a wrong ``confirmed`` is worse than an ``ambiguous``.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

Decl = tuple[str, ...]
Pos = Callable[[Node], tuple[int, int]]  # a node's 1-based line and 0-based character column


class Scopes:
    """Declarations by scope node, and the declaration each binding identifier itself makes."""

    def __init__(self, root: Node, src: bytes, pos: Pos) -> None:
        self.root = root
        self.src = src
        self.pos = pos
        self.decls: dict[int, dict[str, list[Decl]]] = {}
        self.own: dict[int, Decl] = {}  # node id of a binding identifier -> its declaration
        self.poisoned: set[int] = set()  # scope nodes inside which no bare name can be resolved (JS `with`)
        self.facts: dict[str, object] = {}  # what the language's collect() found about the whole file

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def declare(self, ident: Node | None, scope: Node, decl: Decl | None = None, key: str = "") -> None:
        """Declare ``ident`` in ``scope`` (under ``key``, default its name: Java keeps one namespace per kind)."""
        if ident is None:
            return
        if decl is None:
            line, col = self.pos(ident)
            decl = ("d", str(line), str(col), "t" if scope.id == self.root.id else "l")
        self.decls.setdefault(scope.id, {}).setdefault(key or self.text(ident), []).append(decl)
        self.own[ident.id] = decl

    def lookup(self, node: Node, name: str) -> list[Decl] | None:
        """The declarations of ``name`` in the innermost scope around ``node`` that has any; None when none has."""
        n = node.parent
        while n is not None:
            if n.id in self.poisoned:
                return [("x", "with")]
            got = self.decls.get(n.id, {}).get(name)
            if got:
                return got
            n = n.parent
        return None

    def resolve(self, node: Node) -> str:
        """The ``recv`` string for a bare name: its binding identifier's own, or what the scopes around it bind."""
        own = self.own.get(node.id)
        if own is not None:
            return encode([own])
        found = self.lookup(node, self.text(node))
        return "x:free" if found is None else encode(found)


def encode(decls: list[Decl]) -> str:
    if len(decls) != 1:
        why = next((d for d in decls if d[0] == "x"), ("x", "multi"))
        return ":".join(why)
    return ":".join(decls[0])


def walk(root: Node) -> list[Node]:
    """Every named node, parents before children (an explicit stack: deep trees must not hit the recursion limit)."""
    out: list[Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.named_children))
    return out


def enclosing(node: Node | None, types: frozenset[str], root: Node) -> Node:
    """The nearest node from ``node`` upward (itself included) whose type is in ``types``; the root if none."""
    while node is not None:
        if node.type in types:
            return node
        node = node.parent
    return root


def top_level(sc: Scopes, def_node: Node) -> bool:
    """Whether a definition is declared at the file's top level, and is the only declaration of its name there."""
    own = sc.own.get(def_node.id)
    return (own is not None and own[0] == "d" and own[3] == "t"
            and len(sc.decls.get(sc.root.id, {}).get(sc.text(def_node), ())) == 1)
