"""A task that says a call must leave its input alone, and the test of that which tomo writes from a model's call.

Why: in the lab (issue 27) the task "scale() is supposed to return a copy and leave the recipe alone" got a test
from Qwen2.5-Coder 1.5B that asserted a scaled amount, and got it wrong (2/3 l of milk expected as 25/3), so no fix
could pass it. The task's own sentence is a better judge than any value the model computes: whatever the arguments,
after the call they must be as they were. The model's test still knows how to build them (`Recipe("Pancakes", 4)
.add("flour", "200", "g")...`), so tomo keeps its call and asserts the property instead.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

from tomo.oi.stated import source_of

_ALONE = re.compile(
    r"\b(?:returns?\s+a\s+(?:new\s+)?copy|leaves?\s+(?:the|its|their|my|our|your|a|an)?\s*(?:\w+\s+){0,2}alone"
    r"|(?:must|should|does)\s*(?:not|n't)\s+(?:modify|change|mutate|reorder|alter|touch)"
    r"|without\s+(?:modifying|changing|mutating|reordering|altering))", re.IGNORECASE)

STATE = '''def _state(value, depth=0):
    """What a value holds, compared before and after the call (objects without __eq__ too)."""
    if depth > 12:
        return repr(value)
    if isinstance(value, dict):
        return {repr(k): _state(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_state(v, depth + 1) for v in value]]
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in value)
    fields = getattr(value, "__dict__", None)
    slots = [s for c in type(value).__mro__ for s in getattr(c, "__slots__", ()) if hasattr(value, s)]
    if (fields is not None or slots) and not isinstance(value, type):
        found = {**(fields or {}), **{s: getattr(value, s) for s in slots}}
        return [type(value).__name__, _state(found, depth + 1)]
    return value
'''
"""The comparison the test uses: structure and values, so a class without ``__eq__`` compares by what it holds."""


def says_left_alone(task: str) -> bool:
    """Whether the task says a call must leave what it is given as it was ("return a copy", "leave the recipe
    alone", "must not reorder the caller's list")."""
    return bool(_ALONE.search(task))


def left_alone_test(code: str, names: Collection[str]) -> str | None:
    """A test that calls what the model's test ``code`` calls first among ``names`` (functions the task names), with
    the same arguments built the same way, and asserts they are as they were afterwards; None when the test calls
    none of them, or its call is not a plain statement's (a lambda's, a comprehension's)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for test in tree.body:
        if not (isinstance(test, ast.FunctionDef) and test.name.startswith("test")):
            continue
        for index, statement in enumerate(test.body):
            call = next((n for n in ast.walk(statement) if isinstance(n, ast.Call) and _callee(n) in names), None)
            if call is None or any(isinstance(n, ast.Lambda | ast.comprehension) for n in ast.walk(statement)):
                continue
            return _written(code, tree, test, index, call)
    return None


def _written(code: str, tree: ast.Module, test: ast.FunctionDef, index: int, call: ast.Call) -> str:
    imports = [source_of(code, n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    helpers = [source_of(code, n) for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Assign)
               and n is not test and not (isinstance(n, ast.FunctionDef) and n.name.startswith("test"))]
    before = [_dedented(code, s) for s in test.body[:index]]
    func = call.func
    held = ["arguments", "keywords"]
    lines = [*before]
    target = source_of(code, func)
    if isinstance(func, ast.Attribute):  # a method: its object must stay as it was too
        lines.append(f"receiver = {source_of(code, func.value)}")
        target = f"receiver.{func.attr}"
        held.insert(0, "receiver")
    positional = [source_of(code, a) for a in call.args]
    named = [f"{k.arg!r}: {source_of(code, k.value)}" for k in call.keywords if k.arg is not None]
    lines.append(f"arguments = ({', '.join(positional)}{',' if len(positional) == 1 else ''})")
    lines.append(f"keywords = {{{', '.join(named)}}}")
    state = f"({', '.join(held)},)"
    lines.append(f"before = _state({state})")
    lines.append(f"{target}(*arguments, **keywords)")
    lines.append(f"assert _state({state}) == before, \"the call changed what it was given\"")
    name = _callee(call)
    body = "\n".join("    " + line for chunk in lines for line in chunk.splitlines())
    parts = ["\n".join(dict.fromkeys(imports)), *helpers, STATE.rstrip("\n"),
             f"def test_{name}_leaves_what_it_is_given_as_it_was():\n{body}"]
    return "\n\n\n".join(p for p in parts if p) + "\n"


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _dedented(code: str, statement: ast.stmt) -> str:
    """A statement of the test's body, as its own lines without the body's indentation."""
    lines = code.splitlines()[statement.lineno - 1:statement.end_lineno]
    indent = statement.col_offset
    return "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines)
