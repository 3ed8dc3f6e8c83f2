"""What makes a model's test a reproduction: it parses and defines a test, uses no placeholder, fails in a test and
by the problem (not by its own mistake, not with another exception than the task reports), and what tomo reads from
it (its calls, the names it uses and where they come from). Pure functions of text and syntax trees, so the trials
(:mod:`tomo.oi.trials`) judge a test the same way whoever wrote it."""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from tomo.oi.blocks import extract
from tomo.oi.feature import BUILTINS
from tomo.oi.next_step import failed_tests
from tomo.oi.project_tests import ProjectTest

PASSES = "it passes, so it does not show the problem"
"""Why a test that passes before any fix is no reproduction."""


_TEST_OWN_FAULT = re.compile(r"\b(NameError|ModuleNotFoundError|SyntaxError|IndentationError)\b|"
                             r"fixture '[^']+' not found|ImportError(?!: cannot import name)|"
                             r"missing \d+ required (?:positional|keyword-only) argument")


MISSING_NAME = re.compile(r"(?:cannot import name|has no attribute|unexpected keyword argument) '(?P<name>\w+)'")


IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_NOT_RAISED = re.compile(r"DID NOT RAISE <class '(?:[\w.]*\.)?(?P<name>\w+)'>")
_SPEAKS_OF_ERRORS = re.compile(r"\b(?:rais|refus|reject|error|exception|invalid|illegal|accept|allow|forbid|"
                               r"disallow|abort|complain|fail loudly)", re.IGNORECASE)
"""A task that says any of these may want an exception the test expects ("must not accept a negative amount"); one
that says none does not."""


# a frame whose line is a `raise` statement, the exception it raised and where: pytest's --tb=short, then its long
# form (the default: the frame's source, `>` at the raise, E lines, then `path.py:N: ExceptionName`)
_ERROR = r"E[ \t]+(?P<error>(?:[A-Za-z_][\w.]*\.)?(?P<name>[A-Za-z_]\w*)\b[^\n]*)"


_RAISE_FRAMES = (
    re.compile(r"^(?P<where>[^\s:][^:\n]*\.py):\d+: in [^\n]+\n[ \t]+raise\b[^\n]*\n(?:[ \t]*[\^~]+[ \t]*\n)?"
               + _ERROR, re.MULTILINE),
    re.compile(r"^>[ \t]+raise\b[^\n]*\n" + _ERROR + r"\n(?:E[^\n]*\n)*\n(?P<where>[^\s:][^:\n]*\.py):\d+: \w",
               re.MULTILINE),
)


_FILE_NAME_LINE = re.compile(r"(?:#\s*)?[\w.-]+(?:/[\w.-]+)*\.py:?")


_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")


_PLACEHOLDER_PATH = re.compile(r"(?:^|/)path/to/|\byour[_-]?(?:file|path|dir|folder)\b", re.IGNORECASE)


_NO_SUCH_FILE = re.compile(r"^E\s+(FileNotFoundError: [^\n]*)", re.MULTILINE)


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b.*$", re.MULTILINE)


_FRAME = re.compile(r'^\s*File "(?P<where>[^"\n]+\.py)", line \d+, in [^\n]+\n(?P<line>[^\n]*)$', re.MULTILINE)


_RAISED = re.compile(r"^E\s+((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b.*)$", re.MULTILINE)


def first_python(text: str) -> str:
    """The code of the reply's first python block, without a first line that only names a .py file: Qwen 1.5B wrote
    the test's path as the block's first line (```` ```python\ntests/test_tomo_repro.py ````), a NameError."""
    for block in extract(text).blocks:
        if block.runner == "python" and block.code.strip():
            first, _, rest = block.code.lstrip("\n").partition("\n")
            return rest if _FILE_NAME_LINE.fullmatch(first.strip()) else block.code
    return ""


def not_a_test(code: str) -> str:
    """Why ``code`` cannot be a reproduction ('' when it can)."""
    if not code.strip():
        return "the reply has no ```python block"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"the test does not parse (line {exc.lineno}: {exc.msg})"
    if not any(isinstance(n, ast.FunctionDef) and n.name.startswith("test") for n in tree.body):
        return "the block defines no test function (a `def test_...():` at the top level)"
    return ""


def not_failing_by_the_problem(exit_code: int, output: str, task: str = "", *, refusals: bool = False) -> str:
    """Why a reproduction's run does not show the problem ('' when it does). It must fail in a test (pytest exit 1),
    and not by its own mistake: a name nothing defines, a module that does not exist, a syntax error. A missing
    attribute, keyword or importable name is the problem only when the task names it (a feature asked for:
    ``Order.cancel``); otherwise the test made it up (the lab saw ``cart.total(cart.prices)``). A name the task asks
    for that cannot be imported yet fails at collection (pytest exit 2), and that counts too.

    With ``refusals`` (a first reproduction), also an input the code refuses (:func:`refused_input`)."""
    if exit_code == 0:
        return PASSES
    asked = set(IDENTIFIER.findall(task))
    for match in MISSING_NAME.finditer(output):
        name = match.group("name")
        if name not in asked:
            return (f"it fails by its own mistake ({match.group(0)}: the task names no `{name}`), not because of "
                    "the problem")
    if exit_code == 2 and any(m.group("name") in asked for m in MISSING_NAME.finditer(output)):
        return ""
    if exit_code != 1 or not failed_tests(output):
        return f"pytest could not run it as a test (exit {exit_code})"
    fault = _TEST_OWN_FAULT.search(output)
    if fault:
        return f"it fails by its own mistake ({fault.group(0)}), not because of the problem"
    # s46: lru's second test wanted `cache.get('a')` to raise ValueError, a task about entries thrown away too early
    # says nothing of errors; that failure put the search's right fix back
    invented = _NOT_RAISED.search(output)
    if invented and invented["name"] not in asked and not _SPEAKS_OF_ERRORS.search(task):
        return (f"it expects {invented['name']}, and the task speaks of no error or refusal: the test asks for "
                "something the task does not, not the problem")
    refused = refused_input(output, task) if refusals else ""
    if refused:
        return refused
    error = reported_error(task)
    raised = [m[1] for m in _RAISED.finditer(output)]
    other = [r for r in raised if not r.startswith("AssertionError")]  # an assertion checks a result: it may stand
    if error and other and not any(_shape(r) == _shape(error) for r in raised):
        return (f"the task's traceback ends in `{error}`, and the test raised `{other[0][:80]}` instead, so it shows "
                "another failure")
    return ""


def refused_input(output: str, task: str) -> str:
    """Why a test fails by what it gave the code rather than by the problem ('' if not): an exception a `raise`
    statement outside the tests throws on purpose, or a file that does not exist, when the task names neither.

    Measured: of 60 tests Qwen 1.5B wrote and tomo kept in eleven lab runs (those rebuilt from the transcripts), 51
    fail on the task's reference solution too, so no fix could pass them; five of those failed by the code's own
    refusal of their input (`OutOfStock: cannot ship 8 x C-300: only 7 on hand`, Fraction's `TypeError: both
    arguments should be Rational instances`). A task about a wrong refusal names it (its traceback, or "raises
    PageOutOfRange")."""
    asked = set(IDENTIFIER.findall(task))
    frames = sorted((m for pattern in _RAISE_FRAMES for m in pattern.finditer(output)), key=lambda m: m.start())
    if frames:
        last = frames[-1]
        where = PurePosixPath(last["where"])
        quoted = [a or b for a, b in _QUOTED.findall(last["error"])]  # "unknown event 'cancel'": what the task adds
        if (last["name"] not in asked and not where.name.startswith("test_") and where.name != "conftest.py"
                and not any(q.strip() and q in task for q in quoted)):
            shown = where.name if where.is_absolute() else str(where)  # a library's file by its name
            return (f"it fails by `{last['error'][:80]}`, which {shown} raises on purpose, and the task "
                    f"names no {last['name']}: the test gives the code something it refuses by design, not the "
                    "problem")
    missing = _NO_SUCH_FILE.search(output)
    if missing and "FileNotFoundError" not in asked:
        return (f"it fails by its own mistake ({missing[1][:100]}): a test makes the files it reads, for example in "
                "pytest's tmp_path")
    return ""


def reported_error(task: str) -> str:
    """The exception line that ends a Python traceback quoted in ``task`` (``TypeError: 'NoneType' object is not
    iterable``), or ''. The lab saw Qwen 1.5B pass `None` for the network, fail with another TypeError, and have
    that kept as the reproduction of a crash it never reached."""
    found = _EXCEPTION_LINE.search(_traceback(task))
    return found[0].strip() if found else ""


def _traceback(task: str) -> str:
    """What follows the first "Traceback (most recent call last)" the task quotes ('' without one)."""
    return task.partition("Traceback (most recent call last)")[2]


def crash_site(task: str) -> tuple[str, str] | None:
    """(file, source line) of the last frame of the traceback the task quotes, when that line crashed rather than
    refused on purpose (a `raise` statement is a refusal): ``("transit/fares.py", "zones = {network.zone(stop) for
    stop in route}")``. None without a traceback."""
    frames = _FRAME.findall(_traceback(task))
    if not frames:
        return None
    where, line = frames[-1]
    return None if re.match(r"raise\b", line.strip()) else (where, line.strip())


def past_the_crash(task: str, root: Path, ran: dict[str, set[int]], output: str) -> str:
    """Why a test that fails by an assertion is no reproduction of the crash the task reports ('' if it is): it ran
    the line the task's traceback crashed at and got past it, so that line did not crash on what the test gave it.
    Why: for "the ticket machine crashes when someone taps in and out at the same station" (TypeError in `fare`), Qwen
    1.5B asserted the fare of a trip between two other stops, which ran the crashing line and failed on the amount;
    every fix was judged by a price the task never names. A test that asserts on what the crash comes from
    (`shortest_route(net, "B", "B") == ["B"]`) does not reach that line, and one that crashes there raises the
    reported error: both stay."""
    site = crash_site(task)
    error = reported_error(task)
    raised = [m[1] for m in _RAISED.finditer(output)]
    if site is None or not error or not raised or any(not r.startswith("AssertionError") for r in raised):
        return ""
    where, line = site
    for path, lines in ran.items():
        if not (path == where or path.endswith("/" + where) or where.endswith("/" + path)):
            continue
        with contextlib.suppress(OSError, UnicodeDecodeError):
            source = (root / path).read_text(encoding="utf-8").splitlines()
            at = [n for n in sorted(lines) if 0 < n <= len(source) and source[n - 1].strip() == line]
            if at:
                return (f"it runs {path} line {at[0]} (`{line[:80]}`), where the task's traceback ends in "
                        f"`{error[:80]}`, and gets past it, so it shows another failure than the crash: give the code "
                        "what makes that line fail")
    return ""


def _shape(error: str) -> str:
    """An exception line with its quoted values and numbers blanked: the test may call with other values."""
    return re.sub(r"\d+", "0", re.sub(r"'[^']*'|\"[^\"]*\"", "''", error)).strip()


def imports_in_tests(tests: Sequence[ProjectTest]) -> list[str]:
    """How the project's own tests import the code (each statement once, in file order), so the reproduction
    imports it the same way."""
    found = [ast.unparse(n) for t in tests for n in t.tree.body if isinstance(n, ast.ImportFrom | ast.Import)]
    return list(dict.fromkeys(found))


def imports_of(path: Path) -> list[str]:
    """The top-level import statements of a Python file, one per line (none when it cannot be read)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    return [ast.unparse(n) for n in tree.body if isinstance(n, ast.ImportFrom | ast.Import)]


def bindings(statement: str) -> dict[str, str]:
    """The names an import statement binds, each with the statement that binds it alone."""
    try:
        (node,) = ast.parse(statement).body
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        for alias in node.names:
            if alias.name != "*":
                bound = alias.asname or alias.name
                found[bound] = f"from {node.module} import {alias.name}" + (f" as {alias.asname}" if alias.asname
                                                                              else "")
    elif isinstance(node, ast.Import):
        for alias in node.names:
            found[alias.asname or alias.name.split(".")[0]] = (f"import {alias.name} as {alias.asname}" if alias.asname
                                                                else f"import {alias.name.split('.')[0]}")
    return found


def unbound(tree: ast.Module) -> set[str]:
    """Names the code reads and binds nowhere (not a builtin): what a missing import leaves."""
    import builtins

    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return set()  # a star import binds names no reading of the text can list
    bound = set(dir(builtins))
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound


def has_ellipsis(code: str) -> bool:
    """``...`` used as a value in a test: an example's placeholder copied, never a real argument."""
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(ast.parse(code)))


def placeholder_path(code: str) -> str:
    """A string in a test that is a placeholder for a path ('path/to/your/file.csv'), or ''. The lab saw Qwen 1.5B's
    test of a CSV option fail by the missing option first, and then, on the right fix, by the file it never made."""
    strings = (n.value for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return next((s for s in strings if _PLACEHOLDER_PATH.search(s)), "")


def defined_names(sources: Sequence[str]) -> list[str]:
    names: list[str] = []
    for source in sources:
        with contextlib.suppress(SyntaxError):
            for node in ast.parse(source).body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.append(node.name)
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def repeated_calls(second: str, first: str) -> list[str]:
    """The calls of the ``second`` test when each is one the ``first`` already makes, with the same arguments
    (``parse_duration('1h 30m')``); [] when the second calls something new, or nothing tomo can compare. Builtins and
    pytest's own calls are not counted."""
    def calls(code: str) -> set[str]:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return set()
        found: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            root = func
            while isinstance(root, ast.Attribute | ast.Call):
                root = root.value if isinstance(root, ast.Attribute) else root.func
            if isinstance(root, ast.Name) and (root.id == "pytest" or (func is root and root.id in BUILTINS)):
                continue
            found.add(ast.unparse(node))
        return found

    made = calls(second)
    return sorted(made) if made and made <= calls(first) else []
