"""One-token changes of the lines a failing test ran: fixes tomo can try without a model.

Why: in the lab (issue 27) Qwen2.5-Coder 1.5B had a right reproduction of `merge_busy`'s back-to-back bug (the task's
own example) and still never touched the merge's `<`: every reply rewrote the validation above it. Many small bugs
are one token away from their fix (`<` for `<=`, `//` for `/`, a floor division where a ceiling belongs, a guard
that should not be there, two rows of a table in the wrong order), and a harness holding a failing test can try each
such change in a second. A change is proposed here, never judged: the trials lay it in and the reproduction and the
project's check judge it like any model's fix (:mod:`tomo.oi.trials`).

Only the lines the failing run executed are changed (and the module constants those definitions use), so a search
of a few dozen candidates covers the usual off-by-one, inverted-condition and wrong-operator bugs of a small
function. Every candidate parses; none touches a string, a comment or a line the test did not run.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tomo.oi.stated import replace_nodes
from tomo.prism.splice import is_docstring

MAX_MUTANTS = 80
"""The most candidates one search proposes: at about a second of sandboxed test each, a minute or two."""

_IMMUTABLE_CALLS = frozenset({"int", "float", "str", "bool", "bytes", "tuple", "frozenset", "len", "round", "abs",
                              "min", "max", "sum", "Fraction", "Decimal", "repr", "format", "hash", "id"})
"""Calls whose result a deep copy cannot change (:func:`_copies` leaves them alone)."""

_TOKEN_SWAPS: dict[str, tuple[str, ...]] = {
    "<": ("<=",), "<=": ("<",), ">": (">=",), ">=": (">",), "==": ("!=",), "!=": ("==",),
    "//": ("/",), "and": ("or",), "or": ("and",),
}
"""Operators and the ones a slip most often puts in their place (boundaries first: off-by-one is the commonest)."""


@dataclass(frozen=True, slots=True)
class Mutant:
    """A candidate fix: the whole new text of the file, and what changed (``line`` is 1-based) in words."""

    line: int
    what: str
    text: str
    tier: int = 0
    """Which kind is tried first: 0 for the changes the lab found bugs in, 1 for the textbook arithmetic and
    argument swaps, 2 for a variable read in another's place (the most numerous)."""


def mutants(text: str, lines: Iterable[int], constants: Iterable[tuple[int, int]] = (),
            limit: int = MAX_MUTANTS, *, textbook: bool = True) -> list[Mutant]:
    """The candidates for ``text`` (a Python file): changes of its ``lines`` (1-based), and reorderings of the list
    displays within ``constants`` (first and last line of each module constant). In the order of the lines, each
    line's token swaps first; duplicates and changes that do not parse are dropped; at most ``limit``. The
    textbook's swaps (tier 1 and 2) after all the lab's kinds, and only with ``textbook``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    wanted = set(lines)
    spans = list(constants)
    candidates = [*_token_swaps(text, wanted), *_structural(text, tree, wanted), *_reorderings(text, tree, spans),
                  *_mutable_defaults(text, tree, wanted), *_copies(text, tree, wanted),
                  *_letter_classes(text, tree, wanted, spans), *_sibling_calls(text, tree, wanted)]
    if textbook:
        candidates += [*_arithmetic_swaps(text, wanted), *_operand_swaps(text, tree, wanted),
                       *_variable_swaps(text, tree, wanted)]
    candidates.sort(key=lambda m: (m.tier, m.line))  # stable: within a line, token swaps before structural changes
    found: list[Mutant] = []
    seen = {text}
    for mutant in candidates:
        if mutant.text in seen or not parses(mutant.text):
            continue
        seen.add(mutant.text)
        found.append(mutant)
        if len(found) >= limit:
            break
    return found


# ---- token swaps ----------------------------------------------------------------------------------------------


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    """The tokens of ``text``; none when it does not tokenize (then no swap is proposed)."""
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []


def _token_swaps(text: str, lines: set[int]) -> Iterator[Mutant]:
    """Each operator of the lines swapped for its neighbours (`<` and `<=`), `in` and `not in` each for the other."""
    offsets = _line_offsets(text)
    tokens = _tokens(text)
    for index, token in enumerate(tokens):
        row = token.start[0]
        if row not in lines or token.type not in (tokenize.OP, tokenize.NAME):
            continue
        start = offsets[row - 1] + token.start[1]
        end = offsets[token.end[0] - 1] + token.end[1]
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        previous = tokens[index - 1] if index else None
        if token.string == "not" and following is not None and following.string == "in":
            stop = offsets[following.end[0] - 1] + following.end[1]
            yield Mutant(row, "`not in` → `in`", text[:start] + "in" + text[stop:])
        elif token.string == "in" and not (previous is not None and previous.string == "not"):
            yield Mutant(row, "`in` → `not in`", text[:start] + "not in" + text[end:])
        for other in _TOKEN_SWAPS.get(token.string, ()):
            yield Mutant(row, f"`{token.string}` → `{other}`", text[:start] + other + text[end:])


_ARITHMETIC_SWAPS: dict[str, str] = {"+": "-", "-": "+", "*": "/", "/": "*", "+=": "-=", "-=": "+=",
                                     "*=": "/=", "/=": "*=", "min": "max", "max": "min"}
"""The mutation-testing textbook's arithmetic replacements (PIT's math mutator, mutmut's operator swaps) and the
two bounds: tried after the lab's own kinds, which they must not crowd out of the search's budget."""

_OPERAND_ENDS = frozenset({")", "]", "}"})


def _arithmetic_swaps(text: str, lines: set[int]) -> Iterator[Mutant]:
    """`+` for `-`, `*` for `/` (and the augmented forms), `min` for `max`: each binary operator of the lines, and
    each call of `min` or `max`. Why a second tier: a sum where a difference belongs, a rate multiplied where it
    divides, a clamp with its bounds crossed are the commonest bugs outside the lab's suite, which its held-out
    tasks (never tuned on) may hold and the lab's own kinds never try. A `-` or `*` is binary only after an operand
    (a name that is not a keyword, a number, a string, a closing bracket): `-1`, `*args` and `f(*xs)` stay."""
    offsets = _line_offsets(text)
    tokens = _tokens(text)
    for index, token in enumerate(tokens):
        other = _ARITHMETIC_SWAPS.get(token.string)
        if token.start[0] not in lines or other is None or token.type not in (tokenize.OP, tokenize.NAME):
            continue
        previous = tokens[index - 1] if index else None
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.type == tokenize.NAME:
            if following is None or following.string != "(" or (previous is not None and previous.string in
                                                                 (".", "def")):
                continue  # `min` called, not `obj.min(` nor `def min(`
        elif token.string in ("+", "-", "*", "/") and not _ends_operand(previous):
            continue
        start = offsets[token.start[0] - 1] + token.start[1]
        end = offsets[token.end[0] - 1] + token.end[1]
        yield Mutant(token.start[0], f"`{token.string}` → `{other}`", text[:start] + other + text[end:], tier=1)


def _ends_operand(token: tokenize.TokenInfo | None) -> bool:
    if token is None:
        return False
    if token.type == tokenize.NAME:
        return not keyword.iskeyword(token.string) or token.string in ("True", "False", "None")
    return token.type in (tokenize.NUMBER, tokenize.STRING) or token.string in _OPERAND_ENDS


def _operand_swaps(text: str, tree: ast.Module, lines: set[int]) -> Iterator[Mutant]:
    """The two sides of a difference or a quotient swapped (`start - end` for `end - start`), on a line the test
    ran: the order of a non-commutative operation is a slip one operator swap cannot mend."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub | ast.Div | ast.FloorDiv | ast.Mod)
                and node.lineno in lines):
            continue
        left, right = _segment(text, node.left), _segment(text, node.right)
        if not left or not right:
            continue
        yield Mutant(node.lineno, f"`{left}` and `{right}` swapped",
                     replace_nodes(text, [(node.left, _grouped(node.right, right)),
                                          (node.right, _grouped(node.left, left))]), tier=1)


def _grouped(node: ast.expr, written: str) -> str:
    """``written`` in parentheses unless it is an atom, so it binds the same wherever it is moved."""
    atoms = ast.Name | ast.Constant | ast.Attribute | ast.Call | ast.Subscript | ast.List | ast.Tuple | ast.Dict
    return written if isinstance(node, atoms) else f"({written})"


MAX_VARIABLES = 8
"""A function with more locals than this has its variables left alone: the swaps grow as the square of them."""


def _variable_swaps(text: str, tree: ast.Module, lines: set[int]) -> Iterator[Mutant]:
    """A variable read on a line the test ran replaced by another of the same function (a parameter, or a local
    assigned before that line): `len(scores)` where `len(present)` was meant, `total / new` for `total / old`.
    Only in functions with at most ``MAX_VARIABLES`` of them, and never the target of an assignment or a callee."""
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or not _ran_body(function, lines):
            continue
        arguments = function.args
        params = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                  if a.arg not in ("self", "cls")]
        assigned: dict[str, int] = {}
        scoped = {id(n) for c in ast.walk(function) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)}
        for node in ast.walk(function):  # a comprehension's variable is no name outside it
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in params \
                    and id(node) not in scoped:
                assigned[node.id] = min(assigned.get(node.id, node.lineno), node.lineno)
        if len(params) + len(assigned) > MAX_VARIABLES:
            continue
        callees = {id(n.func) for n in ast.walk(function) if isinstance(n, ast.Call)}
        for node in ast.walk(function):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.lineno in lines
                    and id(node) not in callees and (node.id in params or node.id in assigned)):
                continue
            others = [p for p in params if p != node.id] + \
                     [name for name, first in assigned.items() if name != node.id and first < node.lineno]
            for other in others:
                yield Mutant(node.lineno, f"`{node.id}` → `{other}`", replace_nodes(text, [(node, other)]), tier=2)


# ---- structural changes ---------------------------------------------------------------------------------------


def _structural(text: str, tree: ast.Module, lines: set[int]) -> Iterator[Mutant]:
    """Floor division made a ceiling, an `if` negated or (without `else`) dropped with its body kept, an integer
    moved by one (not an index: `pair[1]` for `pair[0]` is rarely the slip, and `[-1]` is everywhere): each on a
    line the test ran."""
    indices = {id(n) for sub in ast.walk(tree) if isinstance(sub, ast.Subscript) for n in ast.walk(sub.slice)}
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) not in lines:
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            left, right = _segment(text, node.left), _segment(text, node.right)
            yield _replaced(text, node, f"-(-({left}) // ({right}))", "floor division → ceiling division")
        elif isinstance(node, ast.If):
            yield from _guard_changes(text, node)
        elif isinstance(node, ast.Constant) and type(node.value) is int and id(node) not in indices:
            for step in (1, -1):
                yield _replaced(text, node, str(node.value + step), f"`{node.value}` → `{node.value + step}`")


def _guard_changes(text: str, node: ast.If) -> Iterator[Mutant]:
    """`if C:` negated, and one without `else` replaced by its body (a guard that should not be there: a later
    layer that must override an earlier one, not only fill its gaps)."""
    condition = _segment(text, node.test)
    yield _replaced(text, node.test, f"not ({condition})", "condition negated")
    if node.orelse:
        return
    body_start, body_end = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
    if body_start == node.lineno:  # `if C: x` on one line: nothing to dedent
        return
    lines = text.splitlines(keepends=True)
    indent = _indent(lines[node.lineno - 1])
    body = lines[body_start - 1:body_end]
    inner = min((_indent(line) for line in body if line.strip()), key=len, default=indent)
    dedented = [indent + line[len(inner):] if line.startswith(inner) else line for line in body]
    new = lines[:node.lineno - 1] + dedented + lines[(node.end_lineno or body_end):]
    yield Mutant(node.lineno, f"`if {condition}:` dropped, its body kept", "".join(new))


# ---- reorderings ----------------------------------------------------------------------------------------------


def _reorderings(text: str, tree: ast.Module, spans: list[tuple[int, int]]) -> Iterator[Mutant]:
    """Two neighbouring items of a list display in a module constant swapped (a table read in order, one row
    misplaced: the lab's roman numerals had 9 after 5)."""
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        if not any(first <= node.lineno <= last for first, last in spans):
            continue
        for display in ast.walk(node.value):
            if not isinstance(display, ast.List):
                continue
            for a, b in zip(display.elts, display.elts[1:], strict=False):
                first, second = _segment(text, a), _segment(text, b)
                yield Mutant(a.lineno, f"`{first}` and `{second}` swapped",
                             replace_nodes(text, [(a, second), (b, first)]))


# ---- idioms ---------------------------------------------------------------------------------------------------

_MUTABLE_CALLS = frozenset({"list", "dict", "set"})
_REGEX_FUNCTIONS = frozenset({"compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "subn",
                              "split"})
_ASCII_LETTERS = ("[a-zA-Z]", "[A-Za-z]", "[a-z]", "[A-Z]")
_LETTERS = r"[^\W\d_]"
"""Any letter in any script: a word character that is neither a digit nor the underscore."""


def _mutable_defaults(text: str, tree: ast.Module, lines: set[int]) -> Iterator[Mutant]:
    """A parameter whose default is a list, dict or set made None, and the value built afresh in the body (every
    call that leaves it out shares one object: a cart created empty gets another cart's items), for each definition
    whose body the test ran."""
    lines_of = text.splitlines(keepends=True)
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not _ran_body(node, lines):
            continue
        pairs = defaults_of(node)
        first = node.body[0]
        documented = is_docstring(first) and len(node.body) > 1
        anchor = node.body[1] if documented else first
        if anchor.lineno == node.lineno:  # `def f(x=[]): return x` on one line: no body to add to
            continue
        indent = _indent(lines_of[anchor.lineno - 1])
        for argument, default in pairs:
            if not mutable_literal(default):
                continue
            built = _segment(text, default)
            fresh = f"if {argument.arg} is None:\n{indent}    {argument.arg} = {built}\n{indent}"
            edits: list[tuple[ast.expr | ast.stmt, str]] = [(default, "None"),
                                                            (anchor, fresh + _segment(text, anchor))]
            hint = argument.annotation
            if hint is not None and "None" not in _segment(text, hint):  # `dict[str, int]` says None now too
                edits.append((hint, _segment(text, hint) + " | None"))
            yield Mutant(default.lineno, f"the shared default `{argument.arg}={built}` made None and built per call",
                         replace_nodes(text, edits))


def _sibling_calls(text: str, tree: ast.Module, lines: set[int]) -> Iterator[Mutant]:
    """A call on the object's own state that one method makes under a guard, added under the same guard in another
    method whose guard the test ran: `self._data.move_to_end(key)` under `if key in self._data:` in `put` and not in
    `get`, so reading an entry never counted as using it (the lab's LRU cache: no one-token change can add a line,
    and Qwen 1.5B never did in eight trials). Only a call whose names the method has as parameters."""
    lines_of = text.splitlines(keepends=True)
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        guarded = [(method, node) for method in cls.body if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                   and method.args.args for node in ast.walk(method) if isinstance(node, ast.If)]
        for method, node in guarded:
            first = node.body[0]
            if node.lineno not in lines or first.lineno == node.lineno:
                continue
            me = method.args.args[0].arg
            params = {a.arg for a in [*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs]}
            have = {ast.dump(s) for s in node.body}
            for other, twin in guarded:
                if other is method or other.args.args[0].arg != me or ast.dump(twin.test) != ast.dump(node.test):
                    continue
                for statement in twin.body:
                    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                            and _rooted_at(statement.value.func, me)) or ast.dump(statement) in have:
                        continue
                    if not {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} <= params:
                        continue
                    call = _segment(text, statement)
                    indent = _indent(lines_of[first.lineno - 1])
                    yield Mutant(first.lineno, f"`{call}` added under `if {_segment(text, node.test)}:` in "
                                               f"`{method.name}`, as `{other.name}` does",
                                 replace_nodes(text, [(first, f"{call}\n{indent}{_segment(text, first)}")]))


def _rooted_at(node: ast.expr, name: str) -> bool:
    """Whether ``node`` is an attribute of ``name`` (`self._data.move_to_end`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _copies(text: str, tree: ast.Module, lines: set[int]) -> Iterator[Mutant]:
    """A value built from a parameter, deep-copied where it is assigned (`scaled = Recipe(..., list(recipe.
    ingredients))` kept the recipe's own ingredient objects, and scaling the copy scaled the recipe): for each
    assignment the test ran in a definition's body. ``import copy`` is added when the module lacks it."""
    imported = any(isinstance(n, ast.Import) and any(a.name == "copy" and a.asname is None for a in n.names)
                   for n in tree.body)
    anchor = max((n.end_lineno or n.lineno for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)),
                 default=0)
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]} - {"self", "cls"}
        for statement in (n for stmt in node.body for n in ast.walk(stmt)):
            if not isinstance(statement, ast.Assign | ast.AnnAssign) or statement.value is None \
                    or statement.lineno not in lines:
                continue
            value = statement.value
            if not any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(value)) or \
                    "deepcopy" in _segment(text, value) or _immutable(value):
                continue
            changed = replace_nodes(text, [(value, f"copy.deepcopy({_segment(text, value)})")])
            if not imported:
                rows = changed.splitlines(keepends=True)
                rows.insert(anchor, "import copy\n")
                changed = "".join(rows)
            shown = _segment(text, value)
            yield Mutant(statement.lineno, f"`{shown if len(shown) <= 60 else shown[:57] + '...'}` deep-copied",
                         changed)


def _immutable(node: ast.expr) -> bool:
    """A value no copy changes: arithmetic, a comparison, a number or string built by a known call."""
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Compare | ast.BoolOp | ast.Constant | ast.JoinedStr):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _IMMUTABLE_CALLS


def defaults_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """A function's parameters that have a default, each with it (positional ones, then keyword-only)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]


def mutable_literal(node: ast.expr) -> bool:
    """A list, dict or set built where it stands (`[]`, `{}`, `set()`): one object every evaluation shares when it
    is a default."""
    if isinstance(node, ast.List | ast.Dict | ast.Set):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _MUTABLE_CALLS


def _ran_body(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: set[int]) -> bool:
    return any(getattr(n, "lineno", None) in lines for stmt in node.body for n in ast.walk(stmt))


def _letter_classes(text: str, tree: ast.Module, lines: set[int], spans: list[tuple[int, int]]) -> Iterator[Mutant]:
    """An ASCII letter class in a regular expression (`[a-z]`) made any letter (`[^\\W\\d_]`): a word of "café"
    or "Zürich" is chopped at the accent. For a pattern given to `re` on a line the test ran or in a constant the
    suspects use."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in _REGEX_FUNCTIONS and node.args):
            continue
        pattern = node.args[0]
        if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
            continue
        if pattern.lineno not in lines and not any(a <= pattern.lineno <= b for a, b in spans):
            continue
        value = pattern.value
        for ascii_class in _ASCII_LETTERS:
            value = value.replace(ascii_class, _LETTERS)
        if value != pattern.value:
            yield _replaced(text, pattern, _literal(value, _segment(text, pattern)),
                            f"ASCII letters in `{pattern.value}` made any letter")


def _literal(value: str, written: str) -> str:
    """``value`` as a string literal, raw like ``written`` when it was raw and can stay so."""
    quote = written[1:2]
    if written[:1] in "rR" and quote in "'\"" and quote not in value and not value.endswith("\\"):
        return f"r{quote}{value}{quote}"
    return repr(value)


# ---- text -------------------------------------------------------------------------------------------


def _segment(text: str, node: ast.expr | ast.stmt) -> str:
    return ast.get_source_segment(text, node) or ""


def _replaced(text: str, node: ast.expr | ast.stmt, new: str, what: str) -> Mutant:
    return Mutant(node.lineno, what, replace_nodes(text, [(node, new)]))


def _line_offsets(text: str) -> list[int]:
    starts, total = [], 0
    for line in text.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def parses(text: str) -> bool:
    """Whether ``text`` is Python that parses (a candidate that does not is never proposed)."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
