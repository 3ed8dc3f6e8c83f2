"""What a project's own pytest tests show a model that must write one: how they call a function, and the helpers
(fixtures, constants) they lean on.

Why: asked for a test, Qwen2.5-Coder 1.5B called the function the way it guessed (a ``str`` where the project passes
a ``Path``, a fixture it named but never defined), three times in a row, while the project's tests next to it called
the same function right. A small model copies well, so the trials (:mod:`tomo.oi.trials`) show it a real test that
calls the function, copy in the fixtures its test names from the file that defines them, and pass the project's
fixture where its test passes None for an object it could not build.

Read with :mod:`ast` only: the tests are the project's text, never run or imported here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tomo.oi.stated import replace_nodes, source_of

EXAMPLE_LINES = 40
"""The longest example (the test and its helpers) a request shows."""
PYTEST_FIXTURES = frozenset({
    "request", "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "capsys", "capsysbinary", "capfd",
    "capfdbinary", "caplog", "monkeypatch", "recwarn", "pytestconfig", "record_property", "record_testsuite_property",
    "record_xml_attribute", "cache", "doctest_namespace", "testdir", "pytester",
})


@dataclass(frozen=True, slots=True)
class ProjectTest:
    """One of the project's test files: its source, parsed, and its top-level definitions by name."""

    path: str
    source: str
    tree: ast.Module

    def definitions(self) -> dict[str, ast.stmt]:
        found: dict[str, ast.stmt] = {}
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found[node.target.id] = node
        return found

    def segment(self, node: ast.stmt) -> str:
        """The node's source with its decorators."""
        lines = self.source.splitlines()
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return "\n".join(lines[first - 1:node.end_lineno])

    def with_helpers(self, names: Iterable[str]) -> list[str]:
        """The sources of ``names`` and of every top-level definition they use, in the file's order."""
        defined = self.definitions()
        wanted: set[str] = set()
        todo = [n for n in names if n in defined]
        while todo:
            name = todo.pop()
            if name in wanted:
                continue
            wanted.add(name)
            node = defined[name]
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                used |= {a.arg for a in node.args.args}  # the fixtures a fixture asks for
            todo += [u for u in used if u in defined and u not in wanted]
        nodes = sorted({id(defined[n]): defined[n] for n in wanted}.values(), key=lambda n: n.lineno)
        return [self.segment(n) for n in nodes]


def read_tests(root: Path, skip_prefix: str = "test_tomo_repro") -> list[ProjectTest]:
    """The project's pytest files at the root and under ``tests/``, parsed (files that do not parse are left out)."""
    found: list[ProjectTest] = []
    for path in sorted(root.glob("tests/**/test_*.py")) + sorted(root.glob("test_*.py")):
        if path.name.startswith(skip_prefix):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        found.append(ProjectTest(path.relative_to(root).as_posix(), source, tree))
    return found


def example_calling(files: Iterable[ProjectTest], name: str) -> str:
    """The shortest test that calls ``name`` (``name(...)`` or ``x.name(...)``), with the fixtures and constants it
    uses, or '' when none does or it would be longer than ``EXAMPLE_LINES``."""
    best = ""
    for file in files:
        for node in file.tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test") and _calls(node, name)):
                continue
            helpers = file.with_helpers([a.arg for a in node.args.args] + [
                n.id for n in ast.walk(node) if isinstance(n, ast.Name)])
            text = "\n\n\n".join([*helpers, file.segment(node)])
            if text.count("\n") < EXAMPLE_LINES and (not best or text.count("\n") < best.count("\n")):
                best = text
    return best


def missing_fixtures(tree: ast.Module, files: Iterable[ProjectTest]) -> list[str]:
    """The sources to add so that the fixtures ``tree``'s tests ask for exist: each one the project's test files
    define (with what it uses), for a name that is no pytest fixture and not defined in ``tree`` itself."""
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    asked = [a.arg for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
             for a in n.args.args]
    wanted = [a for a in dict.fromkeys(asked) if a not in PYTEST_FIXTURES and a not in own]
    return _copied(wanted, files, lambda node: isinstance(node, ast.FunctionDef) and bool(node.decorator_list))


def missing_helpers(names: Iterable[str], files: Iterable[ProjectTest]) -> list[str]:
    """The sources to add so that ``names`` (what a test reads and nothing binds) exist: each a plain helper one of
    the project's test files defines at the top (a function that builds a sample object, a class, a constant), with
    what it uses; not a test, and not a fixture (pytest refuses a fixture called directly). Why: Qwen 1.5B's three
    reproductions of repro-recipe-scaling in the s43 run each called `pancakes()`, the recipe-building helper of the
    project's tests/test_recipes.py, without defining it, and tomo refused them as using a name nothing defines."""
    return _copied([n for n in names if not n.startswith("test")], files,
                   lambda node: not getattr(node, "decorator_list", None))


def _copied(names: Iterable[str], files: Iterable[ProjectTest], wanted: Callable[[ast.stmt], bool]) -> list[str]:
    """For each of ``names``, the first of ``files`` whose top-level definition of it is ``wanted``: that definition
    and what it uses (:meth:`ProjectTest.with_helpers`), each source once, in the order found."""
    files = list(files)
    added: list[str] = []
    for name in names:
        for file in files:
            node = file.definitions().get(name)
            if node is not None and wanted(node):
                added += [s for s in file.with_helpers([name]) if s not in added]
                break
    return added


def with_pytest_fixtures(code: str) -> tuple[str, list[str]]:
    """``code`` with each pytest fixture its tests use without asking for it (a free ``tmp_path``, or
    ``pytest.helpers.tmp_path``, which Qwen 1.5B wrote in three reproductions in a row) made a parameter of that
    test, and ``tmp_path("name")`` (the same reproductions) made ``tmp_path / "name"``; and the fixtures added. Code
    that does not parse is returned as it is."""
    names = "|".join(sorted(PYTEST_FIXTURES))
    code = re.sub(rf"\bpytest(?:\.\w+)*\.({names})\b", r"\1", code)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    joined = [(call, f"(tmp_path / {source_of(code, call.args[0])})") for call in ast.walk(tree)
              if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "tmp_path"
              and len(call.args) == 1 and not call.keywords]
    if joined:  # `tmp_path("defaults.ini")`, as if the fixture made files: it is a directory to join names to
        code = replace_nodes(code, joined)
        tree = ast.parse(code)
    wanted: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
            stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            used = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
            wanted[node.name] = [f for f in dict.fromkeys(used) if f in PYTEST_FIXTURES and f not in params | stored]
    return _with_params(code, tree, wanted)


def fixtures_for_none(code: str, files: Iterable[ProjectTest], task: str = "") -> tuple[str, list[str]]:
    """``code`` with each ``None`` its tests pass where one of the project's tests passes a fixture to the same
    function in the same place (``fare(None, "Central", "Airport")`` beside the project's ``fare(net, ...)``)
    replaced by that fixture, made a parameter of the test (:func:`missing_fixtures` then copies it in). Why: every
    reproduction Qwen 1.5B wrote for fix-route-same-stop in the three lab runs before this (9 of 9) passed None for
    the network it could not build, while the project's test beside it passed its fixture `net`. Not when the task
    speaks of None: then None may be the point. Returns the code and what was passed (`fare`'s `net`) for the notice."""
    if re.search(r"\bNone\b", task):
        return code, []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    passed = _fixtures_passed(files)
    edits: list[tuple[ast.expr, str]] = []
    wanted: dict[str, list[str]] = {}
    said: list[str] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
            continue
        params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
            name = _called_name(call)
            for place, arg in _arguments(call):
                fixture = passed.get((name, place))
                if fixture is None or not (isinstance(arg, ast.Constant) and arg.value is None):
                    continue
                edits.append((arg, fixture))
                if fixture not in params:
                    wanted.setdefault(node.name, []).append(fixture)
                    params.add(fixture)
                said.append(f"`{fixture}` to `{name}`")
    if not edits:
        return code, []
    code = replace_nodes(code, edits)
    code, _ = _with_params(code, ast.parse(code), wanted)
    return code, list(dict.fromkeys(said))


def _fixtures_passed(files: Iterable[ProjectTest]) -> dict[tuple[str, int | str], str]:
    """(function, argument position or keyword) -> the fixture a project's test passes there (the first one seen)."""
    found: dict[tuple[str, int | str], str] = {}
    for file in files:
        for node in file.tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                continue
            params = {a.arg for a in node.args.args}
            for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
                name = _called_name(call)
                for place, arg in _arguments(call):
                    if name and isinstance(arg, ast.Name) and arg.id in params:
                        found.setdefault((name, place), arg.id)
    return found


def _arguments(call: ast.Call) -> list[tuple[int | str, ast.expr]]:
    """Each argument of ``call`` with its place: its position, or its keyword."""
    return [*enumerate(call.args), *((k.arg, k.value) for k in call.keywords if k.arg)]


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _with_params(code: str, tree: ast.Module, wanted: dict[str, list[str]]) -> tuple[str, list[str]]:
    """``code`` with the parameters ``wanted`` (test name -> names) added first to each of those tests' own."""
    lines = code.splitlines(keepends=True)
    added: list[str] = []
    for node in sorted((n for n in tree.body if isinstance(n, ast.FunctionDef) and wanted.get(n.name)),
                       key=lambda n: n.lineno, reverse=True):  # from the bottom, so earlier lines stay put
        params = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
        row = node.lineno - 1
        opening = re.search(rf"def\s+{node.name}\s*\(", lines[row])
        if opening is None:
            continue
        at = opening.end()
        lines[row] = lines[row][:at] + ", ".join(wanted[node.name]) + (", " if params else "") + lines[row][at:]
        added += [f for f in wanted[node.name] if f not in added]
    return "".join(lines), added


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(call, ast.Call) and _called_name(call) == name for call in ast.walk(node))

