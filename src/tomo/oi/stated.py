"""The examples a task states, as a test: ``merge_busy([(540, 600), (600, 660)]) should give [(540, 660)]``.

Why: a task that states a call and what it should give has already written its reproduction, and a small model asked
to write one does worse. Qwen2.5-Coder 1.5B, given that sentence, wrote three tests of merges that already worked;
given "to_roman(9) returns 'VIV' instead of 'IX', and 19 gives 'XVIV'", it asserted ``to_roman(19) == 'XVIV'``, the
bug itself, so no fix could pass. tomo reads only what the task says should come out: after "should give / return /
be" (or "must ..."), or after "instead of" when the sentence says what comes out now. A plain "gives" is what the code
does today, which may be the bug, and is never read as the expected value. Both sides must be Python: the call, and
a literal (``about 17.78`` or ``37.77...`` compare to that precision). The text is data: it is parsed, never run,
until the test it became runs in the sandbox like any other.

Also here: a model's test compares the numbers the task states to the precision the task states them in
(:func:`as_stated`), and the source surgery both need (:func:`replace_nodes`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_EXAMPLES = 4
_CALL_START = re.compile(r"(?<![\w.\"'])[A-Za-z_][\w.]*\(")
_SHOULD = re.compile(r"\s*,?\s*(?:should|must)\s+(?:still\s+)?(?:give|return|be|equal|produce|yield)(?:\s+back)?\s+",
                     re.IGNORECASE)
_NOW = re.compile(r"\s*,?\s*(?:returns|gives|yields|produces|is|comes out as|evaluates to)\s+", re.IGNORECASE)
_INSTEAD = re.compile(r"\s*,?\s*instead\s+of\s+", re.IGNORECASE)
_ABOUT = re.compile(r"(?:about|around|approximately|roughly|~)\s*", re.IGNORECASE)
_LONGEST = 300  # characters a call or a value may span
_PRINTED = re.compile(r"([^\s,;()\[\]{}'\"`]+?)[.,;:]?(?=\s|$)")  # a value as printed: 2024-03-02
_WRONG = re.compile(r"\b(?:but|should|wrong|instead|expected)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Example:
    """A call the task states and what it should give, as Python source."""

    call: str
    expected: str
    differs: bool = False  # the task reports ``expected`` as what the call wrongly gives (:func:`reported_examples`)

    @property
    def assertion(self) -> str:
        return f"assert {self.call} {'!=' if self.differs else '=='} {self.expected}"


def stated_examples(task: str) -> list[Example]:
    """Each call in ``task`` with the literal it should give, in order, at most ``MAX_EXAMPLES``."""
    found: list[Example] = []
    for match in _CALL_START.finditer(task):
        call = _call_at(task, match.start())
        if call is None:
            continue
        rest = match.start() + len(call)
        expected = _expected_after(task, rest)
        if expected and all(e.call != call for e in found):
            found.append(Example(" ".join(call.split()), expected))
    return found[:MAX_EXAMPLES]


def reported_examples(task: str) -> list[Example]:
    """Each call the task reports a wrong result of (``add_business_days(date(2024, 3, 1), 1) returns 2024-03-02,
    but ... should be Monday March 4th``), as an example that asserts the call no longer gives it: "returns", "gives"
    ... then a value, in a sentence that goes on with "but", "should", "wrong" or "instead". A value that is no Python
    literal (``2024-03-02``) is compared as the call's result printed. Why: such a task states what is wrong in
    Python and what is right only in prose, which the expected-value reader cannot take; Qwen 1.5B's test of it
    asserted 2024-03-02, the bug, three times. Such a test does not say what is right, so :mod:`tomo.oi.trials`
    gives it no more weight than a model's own test."""
    found: list[Example] = []
    for match in _CALL_START.finditer(task):
        call = _call_at(task, match.start())
        if call is None or _expected_after(task, match.start() + len(call)):
            continue
        now = _NOW.match(task, match.start() + len(call))
        if now is None:
            continue
        literal = literal_at(task, now.end())
        printed = _PRINTED.match(task, now.end())
        left = " ".join(call.split())
        if printed is not None and printed.group(1) != literal:  # `2024` only starts 2024-03-02
            left, value, end = f"str({left})", repr(printed.group(1)), now.end() + len(printed.group(0))
        elif literal is not None:
            value, end = literal, now.end() + len(literal)
        else:
            continue
        sentence = task[end:end + _LONGEST].split(". ", 1)[0]
        if _WRONG.search(sentence) and all(e.call != left for e in found):
            found.append(Example(left, value, differs=True))
    return found[:MAX_EXAMPLES]


def stated_test(examples: list[Example]) -> str:
    """A pytest module with one test per example ('' for none), named so a failure says which one."""
    return "\n\n".join(f"def test_the_task_s_example_{n}():\n    {e.assertion}\n"
                       for n, e in enumerate(examples, 1))


def _call_at(text: str, start: int) -> str | None:
    """The longest call expression starting at ``start`` (a name, its arguments, the closing parenthesis)."""
    best = None
    end = text.find(")", start)
    while end != -1 and end - start < _LONGEST:
        piece = text[start:end + 1]
        try:
            node = ast.parse(piece.replace("\n", " "), mode="eval").body
        except SyntaxError:
            node = None
        if isinstance(node, ast.Call) and _is_name(node.func):
            best = piece
        end = text.find(")", end + 1)
    return best


def _is_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and _is_name(node.value))


def _expected_after(text: str, at: int) -> str | None:
    """The expected value the words after a call state, as Python source; None when they state none."""
    should = _SHOULD.match(text, at)
    if should:
        return _value_at(text, should.end())
    now = _NOW.match(text, at)
    if now:
        current = literal_at(text, now.end())
        if current is not None:
            instead = _INSTEAD.match(text, now.end() + len(current))
            if instead:
                return _value_at(text, instead.end())
    return None


def _value_at(text: str, at: int) -> str | None:
    """The literal at ``at``, as an exact value or, after "about" or before "...", a ``pytest.approx`` of it."""
    about = _ABOUT.match(text, at)
    start = about.end() if about else at
    literal = literal_at(text, start)
    if literal is None:
        return None
    truncated = text.startswith("...", start + len(literal))
    if not (about or truncated):
        return literal
    decimals = re.fullmatch(r"-?\d+\.(\d+)", literal)
    if decimals is None:
        return None  # "about 20": no precision to compare to
    places = len(decimals[1])
    tolerance = 10 ** -places if truncated else 0.5 * 10 ** -places  # 37.77... is below 37.78
    return f"pytest.approx({literal}, abs={round(tolerance, places + 1)!r})"


def literal_at(text: str, start: int) -> str | None:
    """The longest Python literal starting at ``start`` (a string, a number, a list of tuples ...)."""
    for end in range(min(len(text), start + _LONGEST), start, -1):
        if not (text[end - 1].isalnum() or text[end - 1] in ")]}'\""):
            continue
        piece = text[start:end]
        try:
            ast.literal_eval(piece.replace("\n", " "))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if end < len(text) and (text[end].isalnum() or text[end] == "_"):
            continue  # the start of a longer word, not a value ("1st")
        return piece
    return None


def as_stated(code: str, task: str) -> tuple[str, list[str]]:
    """``code`` with each float the task states (``37.8``, ``-17.78``, three significant digits or more) compared to
    the precision the task states it in: ``pytest.approx(37.8)``, ``pytest.approx(37.8, abs=0.01)`` or ``== 37.8``
    becomes ``pytest.approx(37.8, abs=0.05)``. Qwen 1.5B's test for "it should be 37.8 °C" asserted
    ``pytest.approx(37.8)``, which the right answer (37.77...) fails, so no fix could pass it. A number the task
    does not state is widened so only inside ``pytest.approx`` with no tolerance: the test asks for "about" that
    number, and its second test for the same task asserted ``approx(37.78)``, which put the right fix back. Returns
    the code and the numbers widened; code that does not parse, as it is."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    edits: list[tuple[ast.expr, str]] = []
    widened: list[str] = []
    for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Call) and _is_approx(node.func) and len(node.args) == 1:
            # `approx(37.78)`, no tolerance: the test's own number, meant to the precision it is written in
            stated = _stated(code, node.args[0], task) or (None if node.keywords else _stated(code, node.args[0]))
            if stated and _tighter(node, float(stated[0]), float(stated[1])):
                edits.append((node, f"{source_of(code, node.func)}({stated[0]}, abs={stated[1]})"))
                widened.append(stated[0])
        else:
            for side, _other in equality_sides(node):
                stated = _stated(code, side, task)
                if stated:
                    edits.append((side, f"pytest.approx({stated[0]}, abs={stated[1]})"))
                    widened.append(stated[0])
    return (replace_nodes(code, edits), widened) if edits else (code, [])


def _tighter(call: ast.Call, value: float, half: float) -> bool:
    """Whether ``pytest.approx(value, ...)`` compares more tightly than ``half`` a unit: no tolerance given, or an
    ``abs=``/``rel=`` number below it (Qwen 1.5B's second test for "37.8 °C" asserted ``approx(37.8, abs=0.01)``,
    and the right fix, 37.77..., was put back for it). A tolerance that is no number, or another argument, stands."""
    for keyword in call.keywords:
        given = keyword.value
        if keyword.arg not in ("abs", "rel") or not (isinstance(given, ast.Constant)
                                                      and isinstance(given.value, int | float)):
            return False
        tolerance = float(given.value)
        if (tolerance if keyword.arg == "abs" else tolerance * abs(value)) >= half:
            return False
    return True


def _is_approx(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "approx") or (
        isinstance(func, ast.Attribute) and func.attr == "approx" and isinstance(func.value, ast.Name)
        and func.value.id == "pytest")


def _stated(code: str, node: ast.expr, task: str | None = None) -> tuple[str, str] | None:
    """The float literal ``node`` is (sign included) and half a unit of its last digit, when it has three
    significant digits or more and the ``task`` (if given) states it; else None."""
    number = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node
    if not (isinstance(number, ast.Constant) and type(number.value) is float):
        return None
    text = source_of(code, number)
    match = re.fullmatch(r"(\d+)\.(\d+)", text)
    if match is None or len((match.group(1) + match.group(2)).lstrip("0")) < 3:
        return None
    if task is not None and not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d.]*\d)", task):
        return None
    return source_of(code, node), repr(round(0.5 * 10 ** -len(match.group(2)), len(match.group(2)) + 1))


def equality_sides(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """``(a, b)`` and ``(b, a)`` for ``a == b`` (either side may be the call, the other the expected value); [] for
    anything else."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        return [(node.left, node.comparators[0]), (node.comparators[0], node.left)]
    return []


def source_of(code: str, node: ast.AST) -> str:
    """``node``'s text in ``code`` ('' when it has no position)."""
    return ast.get_source_segment(code, node) or ""


def replace_nodes(code: str, edits: Iterable[tuple[ast.expr | ast.stmt | ast.arg, str]]) -> str:
    """``code`` with each node's text replaced, from the last so earlier positions hold (ast's columns count UTF-8
    bytes, hence the encoding)."""
    data = code.encode()
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode()))
    spans = sorted(((starts[n.lineno - 1] + n.col_offset,
                     starts[(n.end_lineno or n.lineno) - 1] + (n.end_col_offset or n.col_offset), text)
                    for n, text in edits), reverse=True)
    for start, end, text in spans:
        data = data[:start] + text.encode() + data[end:]
    return data.decode()
