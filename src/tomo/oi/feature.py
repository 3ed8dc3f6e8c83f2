"""A task that asks for something new (a feature): the names it adds, and the files a change will touch.

Why a feature is asked for differently from a fix: in the lab (issue 27; Qwen2.5-Coder 1.5B, 2 cores) no feature task
was solved in any run. The model's tests of a feature tested something else (for "add an option --delimiter" it
asserted a column's values as they are read today), so the trials then hunted a line at a time for a bug that was not
there; and a trial showed one definition, where a feature spans two files. So for a feature, :mod:`tomo.oi.trials`
writes no reproduction but the task's own examples, shows every file the task touches in full, asks for every
definition to add or change in one reply, and holds the reply to the task's words: each name the task asks for must
be in the code afterwards.
"""

from __future__ import annotations

import ast
import re
import symtable
import textwrap
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from tomo.oi.gates import is_test_path
from tomo.oi.mutants import Mutant, defaults_of, parses
from tomo.oi.stated import replace_nodes, source_of
from tomo.prism.splice import SpliceError, is_docstring, splice_python

BUILTINS = frozenset(dir(__import__("builtins"))).union(*(dir(t) for t in (str, bytes, list, dict, set, int)))
"""Names a task can call without the project defining them: builtins and the methods of builtin types."""
CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
FILE_LINES = 160
"""The longest file a feature request shows in full; a longer one shows the definitions the task names."""
SHOWN_LINES = 320
"""The most lines of code one feature request shows in all."""
MAX_COMPLETIONS = 8
"""The most ways to finish a parameter nothing reads that one trial tries (:func:`completions`)."""

_ADD = re.compile(r"\badd(?:s|ing)?\b", re.IGNORECASE)
_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b")
_INTRODUCED = re.compile(r"\b(?:parameter|argument|option|attribute|method|function|field|property)s?\s+"
                         r"(?:[`'\"](?P<quoted>[A-Za-z_]\w*)|(?P<word>[A-Za-z_]\w*)(?P<after>\s*[:(=])?)")
_MODULE_NAMES = frozenset({"__file__", "__path__", "__cached__", "__annotations__", "__builtins__", "__dict__"})
_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.MULTILINE)
_ANONYMOUS = frozenset({"listcomp", "setcomp", "dictcomp", "genexpr", "lambda"})  # their names are their function's
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_LIKE = re.compile(r"\blike\s+[\w./]+", re.IGNORECASE)  # "like parse_version does": named, not to change
_PLACE = re.compile(r"\s+(?:to|in|into)\s+(?:the\s+)?(?:module\s+|file\s+)?`?(?P<where>[\w./]*\w)`?")


def asked_for(task: str, sources: Mapping[str, str]) -> list[str]:
    """The names a task asks to add, in the task's order: names it calls (`is_newer(...)`, `Order.cancel()`), the
    words after "parameter", "attribute", "method"... (`a keyword parameter separator`), and command-line options
    (`--min-level`, written ``--min-level``), that no file of ``sources`` (path -> Python text) has yet. [] unless
    the task says "add": a fix names what exists, and a traceback's frames can name code the project does not ship.
    """
    if not _ADD.search(task):
        return []
    names, options = _known(sources.values())
    found: list[str] = []
    for match in CALL.finditer(task):
        if match.group(1) not in BUILTINS and match.group(1) not in names:
            found.append(match.group(1))
    for match in _INTRODUCED.finditer(task):  # a word that reads as code: quoted, snake_case, or a signature's
        name = match.group("quoted") or match.group("word")
        if (match.group("quoted") or "_" in name or match.group("after")) and name not in names | BUILTINS:
            found.append(name)
    for match in _OPTION.finditer(task):
        if f"--{match.group(1)}" not in options:
            found.append(f"--{match.group(1)}")
    return list(dict.fromkeys(found))


def missing(asked: Sequence[str], sources: Mapping[str, str]) -> list[str]:
    """The names of ``asked`` (:func:`asked_for`) that the code still lacks."""
    names, options = _known(sources.values())
    return [name for name in asked if name not in (options if name.startswith("--") else names)]


def touched(task: str, sources: Mapping[str, str], *, named_only: bool = False) -> list[str]:
    """The files a feature will most likely change, in order: those the task names (`csvsum.py`, `blog.slugs`,
    `events.apply_event`; not after "like"), then (unless ``named_only``) those that define a function, method or
    class whose name the task uses."""
    words = set(re.findall(r"[A-Za-z_]\w*", task))
    task = _LIKE.sub(" ", task)
    dotted = {part for match in _DOTTED.finditer(task) for part in _prefixes(match.group(0))}
    named: list[str] = []
    defining: list[str] = []
    for path, text in sources.items():
        if PurePosixPath(path).name == "__init__.py" and not _defined(text):
            continue  # a package's docstring: `blog.slugs` names the package too
        module = module_of(path)
        if path in task or re.search(rf"(?<![\w/.]){re.escape(PurePosixPath(path).name)}\b", task) \
                or module in dotted:
            named.append(path)
        elif words & _defined(text):
            defining.append(path)
    return named if named_only else named + defining


def shown(root: Path, paths: Sequence[str], task: str) -> list[tuple[str, str]]:
    """(path, code) for a feature request: each file whole when it is short, else the definitions in it whose names
    the task uses; at most ``SHOWN_LINES`` lines in all."""
    words = set(re.findall(r"[A-Za-z_]\w*", task))
    out: list[tuple[str, str]] = []
    budget = SHOWN_LINES
    for path in paths:
        try:
            text = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.splitlines()
        code = text if len(lines) <= FILE_LINES else _named_parts(text, words)
        size = len(code.splitlines())
        if not code.strip() or size > budget:
            continue
        out.append((path, code))
        budget -= size
    return out


def feature_request(task: str, files: Sequence[tuple[str, str]], asked: Sequence[str], *,
                    stated: str = "", failed: str = "", kept: Sequence[str] = ()) -> str:
    """One feature trial's request: the task, the files it touches, and the reply's shape (every definition to add or
    change, a block per file). ``stated``: the task's own examples as a test the change must pass; ``failed``: what
    the last trial wrote and why it failed; ``kept``: the files whose change from that trial stays laid in."""
    parts = [task]
    if files:
        parts.append("The code this touches, as it is now:\n" + "\n".join(
            f"```python {path}\n{code.rstrip()}\n```" for path, code in files))
    if stated:
        parts.append(stated)
    if failed:
        parts.append(failed)
    if kept:
        rest = [path for path, _code in files if path not in kept]
        parts.append(f"tomo kept that trial's change to {', '.join(kept)} (shown above as it is now): nothing was "
                     "found wrong in it. Write what is still missing or wrong" +
                     (f", in {', '.join(rest)} first." if rest else " elsewhere."))
    names = ", ".join(f"`{name}`" for name in asked)
    where, name = _example(task, files, asked)
    parts.append(f"Write the change the task asks for ({names} must exist afterwards). Reply with every definition "
                 "you add or change, complete (every line of it), in one block per file, labeled with the file's "
                 f"path, for example\n```python {where}\ndef {name}(...):\n    <every line of it>\n```\n"
                 "A method goes inside its class (`class Name:` with only the methods you add or change). Put an "
                 "import the new code needs at the top of its block. Do not change the tests.")
    return "\n\n".join(parts)


def _example(task: str, files: Sequence[tuple[str, str]], asked: Sequence[str]) -> tuple[str, str]:
    """(file, function) for the reply's example: a top-level function of a shown file that the task names, else a
    new function it asks for. Why not a placeholder: Qwen 1.5B wrote `def the_function(...)` into report.py, copied
    from the example, next to the `render_report` it was to change."""
    words = set(re.findall(r"[A-Za-z_]\w*", task))
    for path, code in files:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in words:
                return path, node.name
    new = next((name for name in asked if re.search(rf"(?<![\w.]){re.escape(name)}\(", task)), None)
    return (files[0][0] if files else "path/to/module.py"), new or "the_function"


class Fault(NamedTuple):
    """A function a change left half written, and what the model reads about it."""

    function: str  # qualified: `Inventory.low_stock`
    said: str
    param: str = ""  # the parameter it adds and never reads, if that is the fault


def unused_parameters(before: str, after: str) -> list[Fault]:
    """The parameters a change added (to a definition that had them not, or with a new definition) that its body
    never reads ("`function`'s `name`"): a feature half written. Why: asked for "a keyword parameter delimiter ...
    and have main pass the option to it", Qwen 1.5B added the parameter and the option, passed one to the other, and
    never gave it to the CSV reader; the project's check passed."""
    old = {f.name: set(f.params) for f in _signatures(before)}
    found: list[Fault] = []
    for name, params, used, _shape in _signatures(after):
        for param in params:
            if param not in old.get(name, ()) and param not in used and param not in ("self", "cls") \
                    and not param.startswith("_"):
                found.append(Fault(name, f"`{name}`'s `{param}`", param))
    return found


def undefined_names(before: str, after: str) -> list[Fault]:
    """The names a function of ``after`` reads that nothing defines (not a parameter, local, module name or builtin),
    and that ``before`` did not already read so ("`name` in `function`"). Why: Qwen 1.5B wrote `Inventory.low_stock`
    with `inventory.quantity(sku)` (the name of `render_report`'s parameter) inside the method; the project's check
    never called it, and the check passed."""
    old = set(_undefined(before))
    return [Fault(where, f"`{name}` in `{where}`") for where, name in _undefined(after) if (where, name) not in old]


def completions(text: str, function: str, param: str, limit: int = MAX_COMPLETIONS) -> list[Mutant]:
    """The ways to finish a parameter a change added to ``function`` and never read (:func:`unused_parameters`),
    each the whole new text: every constant of the body equal to the parameter's default replaced by the parameter
    (`"-"` -> `separator` in `slugify(..., separator="-")`), then the parameter passed on by keyword to one call of
    the body (`csv.DictReader(handle)` -> `csv.DictReader(handle, delimiter=delimiter)`). Why: Qwen 1.5B added
    `slugify`'s `separator` and `read_column`'s `delimiter` in every reply and never used either; what is left is
    mechanical, and the task's examples and the check judge it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    node = _function(tree.body, function.split("."))
    if node is None:
        return []
    body = node.body[1:] if node.body and is_docstring(node.body[0]) else node.body
    inner = [n for stmt in body for n in ast.walk(stmt)]
    found: list[Mutant] = []
    default = _default(node, param)
    if default is not None:
        same = [n for n in inner if isinstance(n, ast.Constant) and type(n.value) is type(default.value)
                and n.value == default.value and n.lineno == n.end_lineno]
        if same:
            new = replace_nodes(text, [(n, param) for n in same])
            found.append(Mutant(same[0].lineno, f"{ast.unparse(default)} -> {param} ({len(same)} in `{function}`)",
                                new))
    calls = sorted((n for n in inner if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        callee = call.func.id if isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if not callee or callee in BUILTINS or any(k.arg == param for k in call.keywords):
            continue  # a builtin (`len`, `str.strip`) takes no such keyword
        comma = ", " if call.args or call.keywords else ""
        new = replace_nodes(text, [(call, source_of(text, call)[:-1] + f"{comma}{param}={param})")])
        name = ast.unparse(call.func)
        found.append(Mutant(call.lineno, f"`{param}` passed on to `{name if len(name) <= 40 else callee}(...)`", new))
    return [m for m in found if parses(m.text)][:limit]


class Widening(NamedTuple):
    """A keyword a trial's call passes on to a project function that has no such parameter yet."""

    path: str  # the function's file
    function: str  # top-level: `slugify`
    param: str
    declared: str  # the parameter as the caller declares it: `separator: str = "-"`
    caller: str  # `permalink`


def missing_keywords(sources: Mapping[str, str], changed: Iterable[str]) -> list[Widening]:
    """The calls in ``changed`` files that pass a function's own parameter on by keyword (`slugify(title,
    separator=separator)` in `permalink(..., separator: str = "-")`) to a top-level function of the project that
    takes no such keyword: the other half of a feature, which the callee's file lacks. Why: asked to add
    `separator` to both, Qwen 1.5B wrote `permalink` right in six replies of eleven and never again gave `slugify`
    the parameter; what is left is mechanical (:func:`widened`, then :func:`completions`), and the task's examples
    and the check judge it."""
    found: dict[tuple[str, str, str], Widening] = {}
    for path in changed:
        try:
            tree = ast.parse(sources.get(path, ""))
        except (SyntaxError, ValueError):
            continue
        names = _imported_functions(tree, path, sources)
        for caller in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            declared = _declared(sources[path], caller)
            for call in ast.walk(caller):
                if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or \
                        call.func.id not in names:
                    continue
                name, where = call.func.id, names[call.func.id]
                callee = _function(ast.parse(sources[where]).body, [name])
                if callee is None or callee.args.vararg or callee.args.kwarg:
                    continue
                takes = {a.arg for a in [*callee.args.posonlyargs, *callee.args.args, *callee.args.kwonlyargs]}
                for keyword in call.keywords:
                    if keyword.arg and keyword.arg not in takes and keyword.arg in declared and \
                            isinstance(keyword.value, ast.Name) and keyword.value.id == keyword.arg:
                        found.setdefault((where, name, keyword.arg), Widening(
                            where, name, keyword.arg, declared[keyword.arg], caller.name))
    return list(found.values())


def by_keyword(sources: Mapping[str, str], changed: Iterable[str]) -> dict[str, tuple[str, list[str]]]:
    """The ``changed`` files whose calls pass a name as the last positional argument of a project function, into a
    parameter of another name, while the function has a parameter of that very name (`slugify(title, separator)`
    where `slugify(title, max_length=60, separator="-")`): each such argument passed by keyword instead (path ->
    (the new text, what was passed)). Why: in the s42 run Qwen 1.5B's `permalink` passed `separator` into
    `slugify`'s `max_length`, and every way tomo tried to finish `slugify` then failed on it."""
    found: dict[str, tuple[str, list[str]]] = {}
    for path in changed:
        text = sources.get(path, "")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        names = _imported_functions(tree, path, sources)
        edits: list[tuple[ast.expr, str]] = []
        said: list[str] = []
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in names
                    and call.args and isinstance(call.args[-1], ast.Name)):
                continue
            try:
                callee = _function(ast.parse(sources[names[call.func.id]]).body, [call.func.id])
            except (SyntaxError, ValueError):
                continue
            if callee is None or callee.args.vararg:
                continue
            positional = [a.arg for a in [*callee.args.posonlyargs, *callee.args.args]]
            by_name = {a.arg for a in [*callee.args.args, *callee.args.kwonlyargs]}
            place, arg = len(call.args) - 1, call.args[-1]
            optional = place >= len(positional) - len(callee.args.defaults)  # left out, the slot keeps its default
            if place < len(positional) and optional and positional[place] != arg.id and arg.id in by_name and \
                    arg.id not in positional[:place] and all(k.arg != arg.id for k in call.keywords):
                edits.append((arg, f"{arg.id}={arg.id}"))
                said.append(f"`{arg.id}` to `{call.func.id}` (by position it was `{positional[place]}`)")
        if edits:
            new = replace_nodes(text, edits)
            if parses(new):
                found[path] = (new, said)
    return found


def widened(text: str, function: str, declared: str) -> str | None:
    """``text`` with ``declared`` (`separator: str = "-"`) added after the last parameter of the top-level
    ``function``; None when it has none, or takes ``*args`` or ``**kwargs``."""
    try:
        node = _function(ast.parse(text).body, [function])
    except (SyntaxError, ValueError):
        return None
    if node is None or node.args.vararg or node.args.kwarg:
        return None
    args = node.args
    if args.kwonlyargs:
        last, default = args.kwonlyargs[-1], args.kw_defaults[-1]
    elif args.args or args.posonlyargs:
        positional = [*args.posonlyargs, *args.args]
        last, default = positional[-1], (args.defaults[-1] if args.defaults else None)
    else:
        return None
    end = default or last.annotation
    new = replace_nodes(text, [(end or last, f"{source_of(text, end or last)}, {declared}")])
    return new if parses(new) else None


def _imported_functions(tree: ast.Module, path: str, sources: Mapping[str, str]) -> dict[str, str]:
    """The top-level functions of the project ``tree`` can call by a bare name (name -> their file): its own, and
    those it imports by `from module import name`."""
    found = {n.name: path for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            base = node.module.replace(".", "/")
            where = next((p for p in (f"{base}.py", f"{base}/__init__.py") if p in sources), None)
            if where is None:
                continue
            for alias in node.names:
                if alias.asname is None and alias.name in _defined_functions(sources[where]):
                    found[alias.name] = where
    return found


def _defined_functions(text: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _declared(text: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """A function's parameters with a default, as its source declares them (name -> `name: str = "-"`)."""
    return {a.arg: f"{source_of(text, a)} = {source_of(text, d)}" if a.annotation else
            f"{a.arg}={source_of(text, d)}" for a, d in defaults_of(node)}


def set_outside_init(text: str, names: Collection[str]) -> list[Fault]:
    """The attributes of ``names`` (those a task asks for) that a class's methods set on ``self`` while its
    ``__init__`` never does ("`Order.refund_due` is set only in `Order.cancel`"): an object that never ran that
    method has no such attribute. Why: asked for "an attribute refund_due: False for every order, and set to True
    when a paid order is cancelled", Qwen 1.5B set it in `cancel` alone, and the project's check passed."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[Fault] = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        methods = [n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        init = next((m for m in methods if m.name == "__init__"), None)
        if init is None:
            continue
        in_init = _self_attributes(init)
        for method in methods:
            if method is init:
                continue
            for name in sorted((_self_attributes(method) & set(names)) - in_init):
                found.append(Fault(f"{cls.name}.__init__", f"`{cls.name}.{name}` is set only in "
                                                           f"`{cls.name}.{method.name}`"))
    return list(dict.fromkeys(found))


def without(after: str, before: str, functions: Iterable[str]) -> str | None:
    """``after`` with each of ``functions`` as ``before`` had it: what is sound in a half-written change. None when
    one is new, nested, or cannot be laid back. Why: Qwen 1.5B's replies to the CSV task got the option and its
    passing right and `read_column` half wrong, one file; putting back the whole file threw the right part away."""
    try:
        tree = ast.parse(before)
    except (SyntaxError, ValueError):
        return None
    lines = before.splitlines()
    text = after
    for name in dict.fromkeys(functions):
        node = _function(tree.body, name.split("."))
        if node is None:
            return None
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        try:
            text = splice_python(text, textwrap.dedent("\n".join(lines[start - 1:node.end_lineno])), name).text
        except SpliceError:
            return None
    return text


def unchanged_files(task: str, before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The files the task names (:func:`touched`: `workflow.py`, `events.apply_event`) that ``after`` has as
    ``before`` had them: a feature half written. Why: asked to make "the cancel event from the queue
    (events.apply_event)" cancel the order, Qwen 1.5B changed workflow.py alone, and the project's check passed."""
    named = touched(task, before, named_only=True)
    return [path for path in named if after.get(path, before[path]) == before[path]]


class Misplaced(NamedTuple):
    """A name the task asks for in one place that a change defines only elsewhere (:func:`misplaced`)."""

    name: str  # as the task writes it: `is_newer`, `Inventory.low_stock`
    path: str  # the file the task puts it in
    found: list[tuple[str, str]]  # (file, qualified name) where the change defines it instead


def placements(task: str, asked: Sequence[str], sources: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Where the task puts each name it asks for (name -> (file, qualified name)): "add a function
    is_newer(candidate: str, current: str) -> bool to versions.py", "a method Inventory.low_stock(self, ...) ->
    list[str] in inventory/stock.py". The place must be a file of ``sources`` (by path, module or unique file name);
    a name the task places nowhere, or only in a function ("a parameter separator to blog.slugs.slugify"), has
    none."""
    found: dict[str, tuple[str, str]] = {}
    for name in asked:
        if name.startswith("--"):
            continue
        for match in re.finditer(rf"(?<![\w.])(?:(?P<owner>[A-Za-z_]\w*)\.)?{re.escape(name)}\b", task):
            end = _after_signature(task, match.end())
            place = _PLACE.match(task, end)
            path = _source_path(place.group("where"), sources) if place else None
            if path is not None:
                owner = match.group("owner")
                found[name] = (path, f"{owner}.{name}" if owner else name)
                break
    return found


def misplaced(task: str, asked: Sequence[str], code: Mapping[str, str]) -> list[Misplaced]:
    """The names of ``asked`` the task puts in a file (:func:`placements`) that ``code`` defines, but not there:
    `from versions import is_newer` fails while updater.py has it. Why: Qwen 1.5B wrote the version task's
    is_newer into updater.py (twice) and once as a method of a class of its own in versions.py; the project's check
    passed, and the hidden test could not import it."""
    out: list[Misplaced] = []
    for name, (path, qualified) in placements(task, asked, code).items():
        try:
            tree = ast.parse(code.get(path, ""))
        except (SyntaxError, ValueError):
            continue
        if _function(tree.body, qualified.split(".")) is not None:
            continue
        elsewhere = [(p, f.name) for p, text in code.items() for f in _signatures(text)
                     if f.name.rsplit(".", 1)[-1] == name and (p, f.name) != (path, qualified)]
        if elsewhere:
            out.append(Misplaced(qualified, path, elsewhere))
    return out


def unchanged_functions(task: str, before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The functions the task names by their module (`updater.needs_update`, `events.apply_event`) that ``after``
    has as ``before`` had them. Why: told to "make updater.needs_update(installed, available) use" the new
    is_newer, Qwen 1.5B added a class with a method of that name and left the function as it was; its file changed,
    so :func:`unchanged_files` saw nothing."""
    task = _LIKE.sub(" ", task)
    found: list[str] = []
    for match in _DOTTED.finditer(task):
        dotted = match.group(0)
        for module in _prefixes(dotted)[:-1]:
            path = _source_path(module, before)
            rest = dotted[len(module) + 1:]
            old = {f.name: f.shape for f in _signatures(before[path])} if path is not None else {}
            if path is None or path not in after or rest not in old:
                continue  # `latency` is a package too: `latency.report.summarize` is read on
            if {f.name: f.shape for f in _signatures(after[path])}.get(rest) == old[rest] and \
                    not _reads_changed(before[path], after[path], rest):
                found.append(dotted)
            break
    return list(dict.fromkeys(found))


def _reads_changed(before: str, after: str, function: str) -> bool:
    """Whether ``function`` reads a top-level name of its module (a table, a helper) that ``after`` defines
    otherwise than ``before``: the order task's "cancel" event is a new entry of the handler table that
    `events.apply_event` reads, and the function itself stays as it was."""
    used = next((f.used for f in _signatures(before) if f.name == function), set())
    old, new = _top_level(before), _top_level(after)
    return any(old.get(name) != new.get(name) for name in used if name in old or name in new)


def _top_level(text: str) -> dict[str, str]:
    """Each top-level name of ``text`` (assigned, or a function or class) -> the dump of what defines it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    found[target.id] = ast.dump(node)
    return found


def _after_signature(text: str, at: int) -> int:
    """Where the text after a name goes on, past its parameters ``(...)`` and a return annotation ``-> list[str]``
    if the task writes them."""
    at = _past_brackets(text, at)
    arrow = re.compile(r"\s*->\s*").match(text, at)
    if arrow:
        at = arrow.end()
        while at < len(text) and not text[at].isspace():
            at = _past_brackets(text, at) if text[at] in "([" else at + 1
    return at


def _past_brackets(text: str, at: int) -> int:
    """The index after the bracket opening at ``at`` closes (``at`` itself when no bracket opens there)."""
    if at >= len(text) or text[at] not in "([":
        return at
    depth = 0
    for index in range(at, min(len(text), at + 300)):
        if text[index] in "([":
            depth += 1
        elif text[index] in ")]":
            depth -= 1
            if depth == 0:
                return index + 1
    return at


def module_of(path: str) -> str | None:
    """The dotted module of a project file importable from the root (``pkg/mod.py`` -> ``pkg.mod``), or None."""
    if not path.endswith(".py") or is_test_path(path):
        return None
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


def _source_path(where: str, sources: Mapping[str, str]) -> str | None:
    """The file of ``sources`` that ``where`` names: its path, its module (`latency.stats`), or a file name no other
    file has."""
    where = where.rstrip(".")
    if where in sources:
        return where
    by_module = [p for p in sources if module_of(p) == where]
    if by_module:
        return by_module[0]
    by_name = [p for p in sources if PurePosixPath(p).name == where]
    return by_name[0] if len(by_name) == 1 else None


def _self_attributes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The attributes a method assigns on ``self`` (its first parameter)."""
    if not function.args.args:
        return set()
    me = function.args.args[0].arg
    return {t.attr for n in ast.walk(function) if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me}


def _default(node: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> ast.Constant | None:
    """The constant default of ``param``, if it has one."""
    return next((d for a, d in defaults_of(node) if a.arg == param and isinstance(d, ast.Constant)), None)


def _function(body: Sequence[ast.stmt], path: Sequence[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in body:
        if len(path) == 1 and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == path[0]:
            return node
        if len(path) > 1 and isinstance(node, ast.ClassDef) and node.name == path[0]:
            return _function(node.body, path[1:])
    return None


def _undefined(text: str) -> list[tuple[str, str]]:
    try:
        top = symtable.symtable(text, "<module>", "exec")
    except (SyntaxError, ValueError):
        return []
    if _STAR_IMPORT.search(text):
        return []  # `from x import *`: any name may be defined
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    defined |= _MODULE_NAMES
    found: list[tuple[str, str]] = []

    def visit(table: symtable.SymbolTable, prefix: str) -> None:
        for child in table.get_children():
            name = prefix.rstrip(".") if child.get_name() in _ANONYMOUS else f"{prefix}{child.get_name()}"
            if child.get_type() == "function":
                found.extend((name, s.get_name()) for s in child.get_symbols()
                             if s.is_global() and not s.is_declared_global() and s.is_referenced()
                             and s.get_name() not in defined and s.get_name() not in BUILTINS)
            visit(child, f"{name}." if name else "")

    visit(top, "")
    return list(dict.fromkeys(found))


class _Function(NamedTuple):
    name: str  # qualified: `Order.cancel`
    params: list[str]
    used: set[str]  # the names its body reads
    shape: str  # its AST, dumped: equal when only its comments or layout changed


def _signatures(text: str) -> list[_Function]:
    """Each function and method of ``text``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[_Function] = []

    def visit(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                          *([args.vararg] if args.vararg else []),
                                          *([args.kwarg] if args.kwarg else [])]]
                used = {n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
                out.append(_Function(prefix + node.name, params, used, ast.dump(node)))

    visit(tree.body, "")
    return out


# ---- helpers ----------------------------------------------------------------------------------------------


def _known(texts: Iterable[str]) -> tuple[set[str], set[str]]:
    """Every identifier the code uses or defines (names, attributes, parameters, keywords, imports), and the
    command-line options its strings hold (``"--min-level"``)."""
    names: set[str] = set()
    options: set[str] = set()
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.arg | ast.keyword) and node.arg:
                names.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                options.update(m.group(0) for m in _OPTION.finditer(node.value))
    return names, options


def _defined(text: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def _prefixes(dotted: str) -> list[str]:
    """`blog.slugs.slugify` -> blog, blog.slugs, blog.slugs.slugify: the module may be any prefix."""
    parts = dotted.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _named_parts(text: str, words: set[str]) -> str:
    """The top-level definitions of a long file whose names the task uses (a class whole)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ""
    lines = text.splitlines()
    chunks = [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
              and node.name in words]
    return "\n\n\n".join("\n".join(lines[min([n.lineno, *(d.lineno for d in n.decorator_list)]) - 1:
                                         n.end_lineno or n.lineno]) for n in chunks)


class HalfWritten(NamedTuple):
    """What a feature trial's change leaves out or gets wrong, found before anything runs (:func:`half_written`)."""

    fault: str  # short, for the notice ('' when nothing is wrong)
    report: str  # what the model reads
    at_fault: dict[str, list[str]]  # file -> its functions at fault
    unread: list[tuple[str, Fault]]  # the one parameter nothing reads that tomo can finish, else []
    widen: list[Widening]  # the one keyword passed on to a function without it that tomo can finish, else []
    aside: dict[str, list[str]]  # the other functions at fault, laid back as the turn found them to finish it


def half_written(task: str, asked: Sequence[str], start: Mapping[str, str], before: Mapping[str, str],
                 now: Mapping[str, str], changed: Sequence[str]) -> HalfWritten:
    """The faults of a feature trial's change: the names the task ``asked`` for still lacking, a file the task names
    left unchanged, an attribute set outside ``__init__``, a parameter nothing reads, a keyword passed on to a
    function without it, a name nothing defines. ``start``: the code outside the tests as the turn found it;
    ``before``: each changed file as the turn found it; ``now``: the project's Python files as they are now."""
    code = {p: text for p, text in now.items() if not is_test_path(p)}
    faults: list[str] = []
    reports: list[str] = []
    lacking = [f"`{name}`" for name in missing(asked, code)]  # a test's `median` is none
    if lacking:  # no file's fault: a file that adds another name the task asks for may stay (Trials._holdable)
        faults.append(f"it lacks {', '.join(lacking)}")
        reports.append(f"the task asks for {', '.join(lacking)}, which the code still lacks after this trial")
    astray = misplaced(task, [name for name in asked if f"`{name}`" not in lacking], code)
    for each in astray:
        where = ", ".join(f"`{name}` in {path}" for path, name in each.found)
        module = module_of(each.path) or each.path
        kind = (f"a method of class `{each.name.split('.')[0]}`" if "." in each.name
                else f"a function at the top level, so that `from {module} import {each.name}` works")
        faults.append(f"`{each.name}` not where the task puts it, in {each.path}")
        reports.append(f"the task asks for `{each.name}` in {each.path} ({kind}); this trial defines {where} "
                       "instead")
    untouched = unchanged_files(task, start, code)
    if untouched:
        faults.append(f"{', '.join(untouched)} unchanged")
        reports.append(f"the task names {', '.join(untouched)}, which this trial left as it was: the change is "
                       "half written")
    kept_as_was = [] if untouched else unchanged_functions(task, start, code)
    if kept_as_was:
        named = ", ".join(f"`{name}`" for name in kept_as_was)
        faults.append(f"{named} unchanged")
        reports.append(f"the task names {named}, which this trial left as it was: the change is half written")
    outside = [f.said for path in changed if path.endswith(".py") and not is_test_path(path)
               for f in set_outside_init(code.get(path, ""), asked)]
    if outside:  # no file's fault either: what is missing is a line of `__init__`
        faults.append(f"{', '.join(outside)}")
        reports.append(f"{', '.join(outside)}, so an object that never ran it has no such attribute: set it in "
                       "`__init__` too")

    def compared(compare: Callable[[str, str], list[Fault]]) -> dict[str, list[Fault]]:
        found = {path: compare(before.get(path, ""), now[path]) for path in changed
                 if path.endswith(".py") and path in now and path in before}
        return {path: faults for path, faults in found.items() if faults}

    unused = compared(unused_parameters)
    if unused:
        found = [f.said for each in unused.values() for f in each]
        faults.append(f"nothing reads {', '.join(found)}")
        reports.append(f"this trial adds {', '.join(found)}, which nothing in the code reads: the change is half "
                       "written")
    widen = [] if lacking or outside else missing_keywords(code, changed)
    if widen:  # a TypeError when it runs
        found = [f"`{w.caller}` passes `{w.param}` on to `{w.function}`" for w in widen]
        faults.append(f"{', '.join(found)}, which has no such parameter")
        reports.append(f"{', '.join(found)}, which has no such parameter (a TypeError when it runs)")
    unknown = compared(undefined_names)
    if unknown:
        found = [f.said for each in unknown.values() for f in each]
        faults.append(f"nothing defines {', '.join(found)}")
        reports.append(f"this trial reads {', '.join(found)}, which nothing defines there (a NameError when it runs)")
    # one parameter nothing reads, or one keyword passed on to a function without it (its file may be left
    # unchanged), and nothing else wrong but names other functions read and nothing defines (laid back as the turn
    # found them first): tomo can try to finish it (Trials._complete)
    unread = [(path, f) for path, each in unused.items() for f in each]
    aside = {path: [f.function for f in each] for path, each in unknown.items()}
    laid_aside = {f.rsplit(".", 1)[-1] for each in aside.values() for f in each}
    finish_unread = len(unread) == 1 and not widen and not untouched and not kept_as_was and \
        unread[0][1].function not in aside.get(unread[0][0], [])
    finish_widen = len(widen) == 1 and not unread and set(untouched) <= {widen[0].path} and \
        widen[0].caller not in laid_aside and all(n == f"{module_of(widen[0].path)}.{widen[0].function}"
                                                  for n in kept_as_was)  # the function tomo widens may be named
    finishable = not lacking and not outside and not astray and (finish_unread or finish_widen)
    if not finishable:
        unread, widen, aside = [], [], {}
    if not faults:
        return HalfWritten("", "", {}, unread, widen, aside)
    at_fault = {path: [f.function for f in [*unused.get(path, []), *unknown.get(path, [])]]
                for path in dict.fromkeys([*unused, *unknown])}
    for each in astray:  # a definition in the wrong place is not kept for the next trial (Trials._holdable)
        for path, name in each.found:
            at_fault.setdefault(path, []).append(name)
    return HalfWritten("; ".join(faults), f"[tomo: {'; '.join(reports)}. Nothing was run]", at_fault, unread, widen,
                       aside)
