"""A result the task reports as what the code gives now, asserted gone on the model's own call.

Why: in the lab (issue 27) the task "For "Le café et le thé. Café!" the top words come out as [('caf', 2), ('le',
2)]" got a test from Qwen2.5-Coder 1.5B that made the right call and expected `[("caf", 3), ("le", 2)]`: the bug
counted wrong. tomo's one-token search then found the right fix (ASCII letters made any letter, giving `[('café',
2), ('le', 2)]`) and the model's expected value failed it. The task's own words know what is wrong, and the model's
call knows how to reach it; what is right the task says only in prose. So when the model's call gives exactly the
value the task reports, and the model expected something else, tomo asserts that value gone instead. Such a test
says nothing of what is right, so a fix it passes is kept but never verified (as with
:func:`tomo.oi.stated.reported_examples`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from tomo.oi.stated import equality_sides, literal_at

_REPORTED = re.compile(r"\b(?:returns|gives|yields|produces|prints|(?:comes?|came)\s+out\s+as|evaluates\s+to"
                       r"|(?:we|I)\s+get|as\s+lasting|(?:is\s+)?shown\s+as)\s+", re.IGNORECASE)
_NEGATED = re.compile(r"(?:\b(?:no|not|never)|n't)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)  # "it never returns 5"
_NOT_NOW = re.compile(r"\b(?:should|must|expected|expect|want|wanted|correct|right|supposed)\b", re.IGNORECASE)
_ENDS = re.compile(r"(?:[.,;:!?)]?(?:\s|$))")  # what may follow a whole value
_BEFORE = 80  # characters before a report that may say it is what is wanted, not what happens


def reported_values(task: str) -> list[str]:
    """The values the task says the code gives now (``come out as [('caf', 2), ('le', 2)]``, ``returns 'VIV'``), as
    Python source: a literal after "returns", "gives", "comes out as", "as lasting" ..., in a sentence that does
    not say it is what should happen, nor that it does not ("it never returns 5"). "as lasting" (never a bare "lasts",
    which as often states what is right: "a night shift lasts 8 hours"): the dev
    suite's "shows a meeting from 09:15 to 10:00 as lasting -45 minutes" got three tests from Qwen 1.5B asserting
    -45, the bug. Booleans and None are left out: "a function that returns True only when" states a rule."""
    found: list[str] = []
    for match in _REPORTED.finditer(task):
        sentence = re.split(r"[.!?;]\s|\bbut\b|\bhowever\b", task[max(0, match.start() - _BEFORE):match.start()])[-1]
        if _NOT_NOW.search(sentence) or _NEGATED.search(sentence):
            continue
        literal = literal_at(task, match.end())
        after = task[match.end() + len(literal):][:2] if literal else ""
        if literal is None or not _ENDS.match(after):
            continue  # `2024` only starts 2024-03-02
        if after.startswith(":") and literal_at(task, match.end() + len(literal) + len(after)) is not None:
            continue  # a key of a mapping shown in part ("gives 'server.port': '8000'"), not the value
        source = " ".join(literal.split())
        value = ast.literal_eval(source)
        if isinstance(value, bool) or value is None or source in found:
            continue
        found.append(source)
    return found


def reported_value_test(code: str, values: Sequence[str], task: str = "") -> str | None:
    """The model's test ``code`` with each ``assert CALL == EXPECTED`` made ``assert CALL not in (VALUE, ...)``: its
    call, the task's report, when EXPECTED is a literal unlike every reported value and one the ``task`` does not
    state (then it is the task's, not a guess: "double(2) returns 5, and twice 2 is 4"). Its other assertions are
    dropped (they are the model's guesses too), its other statements kept (they build the call's arguments). Only a
    call on an input the task writes counts. None when no assertion is such a comparison."""
    try:
        tree = ast.parse(code)
        reported = [ast.parse(v, mode="eval").body for v in values]
        wrong = [ast.literal_eval(v) for v in values]
    except (SyntaxError, ValueError):
        return None
    tests = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test")]
    kept: list[ast.stmt] = []
    for test in tests:
        body: list[ast.stmt] = []
        changed = False
        bound: dict[str, ast.expr] = {}  # what the test's names hold: `text = "Le café ..."`
        for statement in test.body:
            if not isinstance(statement, ast.Assert):
                if isinstance(statement, ast.Assign):
                    bound.update((t.id, statement.value) for t in statement.targets if isinstance(t, ast.Name))
                body.append(statement)
                continue
            call = _compared_call(statement.test, wrong, task)
            if call is not None and _on_the_task_s_input(call, bound, task):
                body.append(ast.Assert(ast.Compare(call, [ast.NotIn()], [ast.Tuple(reported, ast.Load())])))
                changed = True
        if changed:
            test.body = body
            kept.append(test)
    if not kept:
        return None
    tree.body = [node for node in tree.body if node not in tests or node in kept]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def asserts_reported(code: str, values: Sequence[str], task: str) -> str | None:
    """The reported value (as the task writes it) that one of ``code``'s assertions expects as a call's right result,
    on an input the task writes: ``assert to_roman(19) == 'XVIV'`` where the task says "19 gives 'XVIV'". Such a test
    asserts the bug. None when no assertion does. Why: Qwen 1.5B's second test of repro-roman-nines asserted exactly
    that, and its failure put back the right fix the task's own examples had passed."""
    try:
        tree = ast.parse(code)
        wrong = [(v, ast.literal_eval(v)) for v in values]
    except (SyntaxError, ValueError):
        return None
    for test in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")):
        bound: dict[str, ast.expr] = {}
        for statement in test.body:
            if isinstance(statement, ast.Assign):
                bound.update((t.id, statement.value) for t in statement.targets if isinstance(t, ast.Name))
            if not isinstance(statement, ast.Assert):
                continue
            for side, expected in _literal_sides(statement.test):
                same = next((source for source, value in wrong if type(value) is type(expected)
                             and value == expected), None)
                if same is not None and _on_the_task_s_input(side, bound, task):
                    return same
    return None


def _compared_call(test: ast.expr, wrong: Sequence[Any], task: str) -> ast.expr | None:
    """The side of ``CALL == LITERAL`` (either way round) that calls something, when the literal is none of
    ``wrong`` and the task does not state it: the model guessed another value than the one the task reports."""
    for side, expected in _literal_sides(test):
        if all(expected != w for w in wrong) and not _stated_in(task, expected):
            return side
    return None


def _literal_sides(test: ast.expr) -> list[tuple[ast.expr, Any]]:
    """Each side of ``test`` (``SIDE == LITERAL``, either way round) that calls something, with the literal's value."""
    found: list[tuple[ast.expr, Any]] = []
    for side, other in equality_sides(test):
        try:
            expected = ast.literal_eval(other)
        except (ValueError, SyntaxError, TypeError):
            continue
        if any(isinstance(n, ast.Call) for n in ast.walk(side)):
            found.append((side, expected))
    return found


def _on_the_task_s_input(call: ast.expr, bound: dict[str, ast.expr], task: str) -> bool:
    """Whether the call is made on an input the task writes (a constant among its arguments, or in what a name it
    reads holds): the task reports its value for that input, not for any. Why: for "double(2) returns 5" a model's
    `double(3) == 9` is no report of 5."""
    nodes = [*ast.walk(call), *(n for name in ast.walk(call) if isinstance(name, ast.Name) and name.id in bound
                                for n in ast.walk(bound[name.id]))]
    return any(_stated_in(task, n.value) for n in nodes if isinstance(n, ast.Constant)
               and n.value is not None and not isinstance(n.value, bool))


def _stated_in(task: str, value: Any) -> bool:
    """Whether ``task`` writes ``value`` (as Python writes it, or printed): a number as a whole number, not a digit
    of another."""
    squeezed = " ".join(task.split())
    spellings = {repr(value), str(value), repr(value).replace("'", '"')}
    return any(re.search(rf"(?<![\w.]){re.escape(text)}(?![\w]|\.\d)", squeezed) for text in spellings if text)
