"""A task whose symptom is state shared between objects, and the test of that which tomo writes from a model's call.

Why: in the lab (issue 27) the task "customers are reporting items in their cart that they never added ... only
carts that are created empty" got three tests from Qwen2.5-Coder 1.5B that built one cart, filled it, and checked
its own count: all passed, so there was no reproduction, and the one-token search that has the fix (the shared
default `lines={}` made None and built per call) never ran. The bug is of a known shape: a parameter whose default is
a list, dict or set, stored on the object, is one object for every call that leaves it out. tomo can test exactly
that with the model's own call (it knows how to build a cart): made twice alike, the two must not share it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from tomo.oi.mutants import defaults_of, mutable_literal

_SHARED = re.compile(
    r"\b(?:someone\s+else|somebody\s+else|another\s+(?:user|customer|account|session|object|instance)|"
    r"other\s+(?:users|customers|accounts|sessions|objects|instances|people)|shared?|leak(?:s|ed|ing)?|"
    r"never\s+(?:added|put|set|asked\s+for)|left\s*overs?|stale)\b", re.IGNORECASE)


def says_shared(task: str) -> bool:
    """Whether the task's symptom reads as state one object gets from another ("items they never added", "someone
    else's items", "leaks into the next session")."""
    return bool(_SHARED.search(task))


def shared_default_test(code: str, sources: Mapping[str, str]) -> str | None:
    """A test that builds, as the model's test ``code`` does, an object of a project class whose ``__init__`` stores
    a parameter with a list, dict or set default on ``self`` and is called without it, twice, and asserts the two do
    not share that attribute; None when the test makes no such call with literal arguments."""
    stored = _stored_defaults(sources)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in stored):
            continue
        if not all(_literal(a) for a in [*node.args, *(k.value for k in node.keywords)]) or \
                any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        given = {k.arg for k in node.keywords}
        for index, param, attribute in stored[node.func.id]:
            if (index is not None and index < len(node.args)) or param in given:
                continue  # the call passes its own value: nothing shared
            call = ast.unparse(node)
            return "\n".join([*imports, "", "", f"def test_two_made_alike_do_not_share_{attribute}():",
                              f"    first = {call}",
                              f"    second = {call}",
                              f"    assert first.{attribute} is not second.{attribute}, "
                              f"{f'two objects made by {call} share one {attribute}'!r}", ""])
    return None


def _stored_defaults(sources: Mapping[str, str]) -> dict[str, list[tuple[int | None, str, str]]]:
    """Class name -> (its place among ``__init__``'s arguments after ``self``, the parameter, the attribute) for
    each parameter whose default is a list, dict or set that ``__init__`` stores on ``self`` as it is."""
    found: dict[str, list[tuple[int | None, str, str]]] = {}
    for text in sources.values():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            if init is None or not init.args.args:
                continue
            positional = [*init.args.posonlyargs, *init.args.args]
            me = positional[0].arg
            for arg, default in defaults_of(init):
                if not mutable_literal(default):
                    continue
                place = positional.index(arg) - 1 if arg in positional else None  # keyword-only: None
                for attribute in _stored_as(init, me, arg.arg):
                    found.setdefault(cls.name, []).append((place, arg.arg, attribute))
    return found


def _stored_as(init: ast.FunctionDef, me: str, param: str) -> list[str]:
    """The attributes ``__init__`` sets to the parameter itself (``self.lines = lines``)."""
    return [t.attr for n in ast.walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
            and n.value.id == param for t in n.targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me]


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return False
    return True
