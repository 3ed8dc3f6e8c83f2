"""Parts that must add up to the whole: when the task says so and the model's test expects parts that do not.

Why: for "split a 100.00 bill between 3 people ... The shares should always add up to the bill", Qwen2.5-Coder 1.5B
asserted `split_evenly(Decimal("100.00"), 3) == [Decimal("33.34")] * 3` (100.02): a test the right fix fails, so
every trial was judged by a wrong answer, while the one thing the task does say (the sum) was never tested. When
the model's expected parts contradict the sum the task states, tomo keeps the model's call and asserts the task's
property instead: the parts its call gives add up to the whole it passed. The arguments are still the model's, so
the test counts as the model's (a weak judge: a fix it passes needs a second test to be verified).

Read with :mod:`ast` only: the model's test is text, never run or imported here.
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, InvalidOperation

from tomo.oi.stated import equality_sides, source_of

ADDS_UP = re.compile(r"\b(?:adds?|added|sums?|summed|totals?)\s+(?:up\s+)?to\b", re.IGNORECASE)
"""The task's words for a whole its parts must make: "add up to the bill", "sum to the total"."""


def says_adds_up(task: str) -> bool:
    return ADDS_UP.search(task) is not None


def adds_up_test(code: str) -> str | None:
    """A test that the model's call gives parts adding up to the whole it passed, when one of its assertions
    compares that call to a list of numbers whose sum is not that whole; None when there is no such assertion (its
    parts add up, the call passes no one number that can be the whole, or the code does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found = _contradicted(code, node)
            if found is not None:
                call, whole = found
                kept = [source_of(code, n) for n in tree.body
                        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
                return "\n".join(kept) + (
                    "\n\n\ndef test_the_parts_add_up():\n"
                    f"    whole = {whole}\n"
                    f"    parts = {call}\n"
                    '    assert sum(parts) == whole, f"the parts {parts!r} add up to {sum(parts)}, not to {whole}"\n')
    return None


def _contradicted(code: str, test: ast.FunctionDef) -> tuple[str, str] | None:
    """(the call's source, the whole's source) of the first assertion in ``test`` whose expected parts do not add up
    to the one number the call passes besides their count, or are not as many as the one whole number it passes
    besides the whole: s44's `split_evenly(Decimal("90.01"), 3) == [Decimal("30.00")] * 3 + [Decimal("0.01")]` adds up
    and still no fix can pass it."""
    bound = {t.id: n.value for n in ast.walk(test) if isinstance(n, ast.Assign) and len(n.targets) == 1
             for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Call)}
    for node in ast.walk(test):
        if not isinstance(node, ast.Assert):
            continue
        for side, other in equality_sides(node.test):
            call = bound.get(side.id) if isinstance(side, ast.Name) else side
            parts = _numbers(other)
            if not isinstance(call, ast.Call) or not parts:
                continue
            wholes = [a for a in call.args if (n := _number(a)) is not None and n != len(parts)]
            if len(wholes) == 1 and sum(parts) != _number(wholes[0]):
                return source_of(code, call), source_of(code, wholes[0])
            counts = [a for a in wholes if isinstance(a, ast.Constant) and type(a.value) is int]
            if len(wholes) == 2 and len(counts) == 1:  # 4 parts for 3 people: `(Decimal("90.01"), 3)`, 30.00 x 3 + 0.01
                return source_of(code, call), source_of(code, next(a for a in wholes if a is not counts[0]))
    return None


def _numbers(node: ast.expr) -> list[Decimal]:
    """The values of a list or tuple literal of numbers (``[Decimal("33.34")] * 3`` and sums of such lists too); []
    for anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Constant) \
            and type(node.right.value) is int and 0 < node.right.value <= 1000:
        return _numbers(node.left) * node.right.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # `[Decimal("30.00")] * 3 + [Decimal("0.01")]`
        left, right = _numbers(node.left), _numbers(node.right)
        return left + right if left and right else []
    if not isinstance(node, ast.List | ast.Tuple) or not node.elts:
        return []
    values = [_number(e) for e in node.elts]
    return [v for v in values if v is not None] if all(v is not None for v in values) else []


def _number(node: ast.expr) -> Decimal | None:
    """A number literal or ``Decimal("33.34")`` as a Decimal (exact: 0.1 is the 0.1 it is written as)."""
    try:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return Decimal(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = _number(node.operand)
            return -inner if inner is not None else None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute) and len(node.args) == 1
                and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "Decimal"
                and isinstance(node.args[0], ast.Constant)):
            value = node.args[0].value
            return Decimal(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
    except InvalidOperation:
        return None
    return None
