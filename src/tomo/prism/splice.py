"""Symbol-anchored replace: a block of Python definitions laid into a file by name, not by line numbers or quoted text.

Why: a small model that is asked to fix a function writes the corrected function. It cannot reliably quote the old
text for a search-and-replace, count lines for a patch, or re-type a whole file; but it names the function right.
So the unit of an edit is a definition: each ``def``/``class`` of the block replaces the definition of the same name
in the file (decorators included, re-indented to where the old one stood), a method written alone replaces the one
method of that name, a class written with only some of its methods replaces those methods and keeps the rest, and a
name the file does not have is added. Imports the file lacks are added after its imports; a top-level assignment to
a name the file assigns replaces that assignment. What the block leaves out stays as it was (never a whole-file
rewrite: a model that writes "the file" often forgets its imports and constants). Anything else at the block's top
level (a call, a print, an ``if __name__`` demo) is not laid in: it is listed in :attr:`Splice.ignored`, so the
caller can say so.

Deterministic and pure: text in, text out; the new text must parse, or nothing is produced (:class:`SpliceError`).
"""

from __future__ import annotations

import ast
import itertools
import re
import textwrap
from dataclasses import dataclass, field

from tomo.errors import PrismError

Defn = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class SpliceError(PrismError):
    """The block cannot be laid into the file; nothing was produced."""


@dataclass(slots=True)
class Splice:
    """The new text and what happened: qualified names replaced and added, imports added, parts not laid in."""

    text: str
    replaced: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    whole: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.replaced or self.added or self.imports or self.whole)

    def describe(self) -> str:
        """One line a model or a person reads: what the edit did."""
        if self.whole:
            return "wrote the whole file (it did not parse, so nothing in it could be replaced by name)"
        parts = []
        if self.replaced:
            parts.append("replaced " + ", ".join(f"`{n}`" for n in self.replaced))
        if self.added:
            parts.append("added " + ", ".join(f"`{n}`" for n in self.added))
        if self.imports:
            parts.append("added import(s) " + "; ".join(f"`{i}`" for i in self.imports))
        return "; ".join(parts) or "nothing to lay in"


@dataclass(frozen=True, slots=True)
class _Change:
    start: int  # 0-based first line replaced
    end: int  # 0-based line after the last replaced (start == end: an insertion before ``start``)
    lines: list[str]


def splice_python(source: str, block: str, symbol: str | None = None) -> Splice:
    """Lays the definitions of ``block`` into ``source``. ``symbol`` (``name`` or ``Class.method``) anchors a block
    that holds one definition to that definition, whatever the block's own name for it."""
    block = _dotted_methods(textwrap.dedent(block).strip("\n") + "\n")
    block, new_tree, dropped = parse_block(block)
    _refuse_stubs(new_tree, source)
    try:
        old_tree: ast.Module | None = ast.parse(source)
    except SyntaxError:
        old_tree = None
    if old_tree is None:
        if symbol:
            raise SpliceError("the file does not parse, so its definitions cannot be found",
                              hint="write the whole corrected file in the block, without a ::symbol")
        return Splice(block, whole=True, ignored=dropped)
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block_lines = block.splitlines(keepends=True)
    result = Splice(source, ignored=dropped)
    changes: list[_Change] = []
    if symbol:
        _anchored(old_tree, new_tree, block_lines, symbol, changes, result)
    else:
        _merge_module(old_tree, new_tree, lines, block_lines, changes, result)
    text = _apply(lines, changes)
    _must_parse(text)
    result.text = text
    return result


# ---- finding and replacing ------------------------------------------------------------------------------------------


def _anchored(old: ast.Module, new: ast.Module, block_lines: list[str], symbol: str, changes: list[_Change],
              result: Splice) -> None:
    defs = [n for n in new.body if isinstance(n, _DEFS)]
    if len(defs) != 1:
        raise SpliceError(f"a block anchored to `{symbol}` must hold exactly one definition; it holds {len(defs)}",
                          hint="write only the new definition of that symbol in the block")
    target = _find(old.body, symbol.split("."))
    if target is None:
        raise SpliceError(f"`{symbol}` is not defined in the file",
                          hint="name a function, class or Class.method the file defines, or leave ::symbol out")
    changes.append(_replace(target, defs[0], block_lines))
    result.replaced.append(symbol)
    _note_ignored(new, result, allow=(*_DEFS, ast.Import, ast.ImportFrom))


def _find(body: list[ast.stmt], path: list[str]) -> Defn | None:
    for node in body:
        if isinstance(node, _DEFS) and node.name == path[0]:
            if len(path) == 1:
                return node
            return _find(node.body, path[1:]) if isinstance(node, ast.ClassDef) else None
    return None


def _merge_module(old: ast.Module, new: ast.Module, lines: list[str], block_lines: list[str],
                  changes: list[_Change], result: Splice) -> None:
    top = {n.name: n for n in old.body if isinstance(n, _DEFS)}
    assigned = {name: n for n in old.body for name in _assigned_names(n)}
    imported = {(a.asname or a.name).split(".")[0] for n in old.body if isinstance(n, ast.Import | ast.ImportFrom)
                for a in n.names}
    appended: list[list[str]] = []
    for node in new.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, _DEFS):
            found = top.get(node.name)
            if found is not None:
                if isinstance(found, ast.ClassDef) and isinstance(node, ast.ClassDef):
                    _merge_class(found, node, block_lines, changes, result, node.name)
                else:
                    changes.append(_replace(found, node, block_lines))
                    result.replaced.append(node.name)
                continue
            method = _lone_method(old, node)
            if method is not None:
                owner, target = method
                changes.append(_replace(target, node, block_lines))
                result.replaced.append(f"{owner}.{node.name}")
                continue
            home = _home_class(old, node)
            if home is not None:
                end = home.end_lineno or home.lineno
                indent = _indent_of(home.body[0]) if home.body else " " * (home.col_offset + 4)
                changes.append(_Change(end, end, ["\n", *_reindent(_segment(node, block_lines), indent)]))
                result.added.append(f"{home.name}.{node.name}")
                continue
            if node.name in imported:  # Qwen 1.5B copied `class Inventory` into report.py, which imports it
                result.ignored.append(f"{_what(node)} (the file imports `{node.name}`: a definition here would "
                                      "hide it; change it in the file that defines it)")
                continue
            appended.append(_segment(node, block_lines))
            result.added.append(node.name)
            continue
        if node is new.body[0] and is_docstring(node):
            continue  # a whole file's docstring: the file keeps its own, and saying so only read as a failure
        names = _assigned_names(node)
        if names and all(n in assigned for n in names) and len({id(assigned[n]) for n in names}) == 1:
            changes.append(_replace(assigned[names[0]], node, block_lines))
            result.replaced.append(", ".join(names))
            continue
        result.ignored.append(_what(node))
    _add_imports(old, new, block_lines, changes, result)
    if appended:
        tail = ["\n", "\n"] if lines and lines[-1].strip() else ["\n"]
        added: list[str] = []
        for i, seg in enumerate(appended):
            added += (tail if i == 0 else ["\n", "\n"]) + seg
        changes.append(_Change(len(lines), len(lines), added))


def _merge_class(old: ast.ClassDef, new: ast.ClassDef, block_lines: list[str], changes: list[_Change],
                 result: Splice, qual: str) -> None:
    """A class written with every one of its methods replaces the class; one written with only some replaces those
    (and the class attributes it assigns), keeping the rest."""
    old_members = {n.name: n for n in old.body if isinstance(n, _DEFS)}
    new_members = [n for n in new.body if isinstance(n, _DEFS)]
    if not new_members or set(old_members) <= {n.name for n in new_members}:
        changes.append(_replace(old, new, block_lines))
        result.replaced.append(qual)
        return
    old_assigned = {name: n for n in old.body for name in _assigned_names(n)}
    indent = _indent_of(old.body[0]) if old.body else " " * (old.col_offset + 4)
    extra: list[str] = []
    for member in new.body:
        if isinstance(member, _DEFS):
            found = old_members.get(member.name)
            if found is not None:
                changes.append(_replace(found, member, block_lines))
                result.replaced.append(f"{qual}.{member.name}")
            else:
                extra += ["\n", *_reindent(_segment(member, block_lines), indent)]
                result.added.append(f"{qual}.{member.name}")
            continue
        names = _assigned_names(member)
        if names and all(n in old_assigned for n in names) and len({id(old_assigned[n]) for n in names}) == 1:
            changes.append(_replace(old_assigned[names[0]], member, block_lines))
            result.replaced.append(f"{qual}.{names[0]}")
        elif not is_docstring(member):
            result.ignored.append(_what(member))
    if extra:
        end = old.end_lineno or old.lineno
        changes.append(_Change(end, end, extra))


def _lone_method(old: ast.Module, node: ast.stmt) -> tuple[str, Defn] | None:
    """A method written alone (``def total(self)``): the one method of that name in the file's classes, if exactly
    one class has it."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    args = node.args.posonlyargs + node.args.args
    if not args or args[0].arg not in ("self", "cls"):
        return None
    found = [(c.name, m) for c in old.body if isinstance(c, ast.ClassDef)
             for m in c.body if isinstance(m, _DEFS) and m.name == node.name]
    return found[0] if len(found) == 1 else None


def _add_imports(old: ast.Module, new: ast.Module, block_lines: list[str], changes: list[_Change],
                 result: Splice) -> None:
    have = {ast.unparse(n) for n in old.body if isinstance(n, ast.Import | ast.ImportFrom)}
    own = _top_level_names(old)
    wanted = []
    for node in new.body:
        if isinstance(node, ast.ImportFrom) and all(a.name in own and a.asname is None for a in node.names):
            # `from versions import parse_version` written into versions.py (Qwen 1.5B did): a circular import of
            # what the file defines itself, or a shadow of it
            result.ignored.append(_what(node) + " (the file defines it)")
            continue
        if isinstance(node, ast.Import | ast.ImportFrom) and ast.unparse(node) not in have:
            wanted.append(ast.unparse(node))
            have.add(ast.unparse(node))
    if not wanted:
        return
    anchor = 0
    for node in old.body:
        if isinstance(node, ast.Import | ast.ImportFrom) or (anchor == 0 and is_docstring(node)):
            anchor = node.end_lineno or node.lineno
        elif not (isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)):
            break
    changes.append(_Change(anchor, anchor, [w + "\n" for w in wanted]))
    result.imports += wanted


# ---- text ----------------------------------------------------------------------------------------------------------


def _replace(old: ast.stmt, new: ast.stmt, block_lines: list[str]) -> _Change:
    start = _first_line(old) - 1
    end = old.end_lineno or old.lineno
    return _Change(start, end, _reindent(_segment(new, block_lines), " " * old.col_offset))


def _segment(node: ast.stmt, block_lines: list[str]) -> list[str]:
    return block_lines[_first_line(node) - 1: node.end_lineno or node.lineno]


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _reindent(segment: list[str], indent: str) -> list[str]:
    body = textwrap.dedent("".join(segment))
    return [(indent + line) if line.strip() else line for line in body.splitlines(keepends=True)]


def _indent_of(node: ast.stmt) -> str:
    return " " * node.col_offset


def _apply(lines: list[str], changes: list[_Change]) -> str:
    ordered = sorted(changes, key=lambda c: (c.start, c.end))
    for before, after in itertools.pairwise(ordered):
        if after.start < before.end:
            raise SpliceError("the block replaces the same part of the file twice",
                              hint="write each definition once in the block")
    out = list(lines)
    for change in reversed(ordered):
        out[change.start: change.end] = change.lines
    return "".join(out)


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)] if all(
            isinstance(t, ast.Name) for t in node.targets) else []
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def is_docstring(node: ast.stmt) -> bool:
    """A bare string statement: a module's, class's or function's docstring where it stands first."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _note_ignored(tree: ast.Module, result: Splice, allow: tuple[type, ...]) -> None:
    for node in tree.body:
        if not isinstance(node, allow) and not (node is tree.body[0] and is_docstring(node)):
            result.ignored.append(_what(node))


def _top_level_names(tree: ast.Module) -> set[str]:
    """The functions, classes and assigned names a module defines at its top level (not the ones it imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        else:
            names.update(_assigned_names(node))
    return names


def _what(node: ast.stmt) -> str:
    text = ast.unparse(node).splitlines()[0] if not is_docstring(node) else "a docstring"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"line {node.lineno}: `{text}`"


def _refuse_stubs(tree: ast.Module, source: str) -> None:
    """A definition whose body is only ``...`` (a signature shown for reference, or "the rest as before") would
    replace real code with nothing: refused, unless the file's own definition is such a stub too."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = [n for n in node.body if not is_docstring(n)]
        if body and all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and n.value.value is Ellipsis
                        for n in body):
            if f"def {node.name}(" in source and _stub_in(source, node.name):
                continue
            raise SpliceError(f"`{node.name}` has only `...` as its body, which would replace its code with nothing",
                              hint="write the whole definition, every line of its body")


def _stub_in(source: str, name: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
               and all(isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) for b in n.body)
               for n in ast.walk(tree))


def _home_class(old: ast.Module, node: ast.stmt) -> ast.ClassDef | None:
    """The class a new method written alone (``def cancel(self)``, no class has one) belongs to: the file's only
    class, or its only class with methods. A ``self`` function at the top level is never what was meant (the lab saw
    Qwen 1.5B's `cancel` added as one, and the test still found no `Order.cancel`); with several classes the block
    must say which."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    args = node.args.posonlyargs + node.args.args
    if not args or args[0].arg not in ("self", "cls"):
        return None
    classes = [c for c in old.body if isinstance(c, ast.ClassDef)]
    with_methods = [c for c in classes if any(isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) for m in c.body)]
    if len(classes) == 1 or len(with_methods) == 1:  # an exception class with no methods is no home for one
        return classes[0] if len(classes) == 1 else with_methods[0]
    if classes:
        names = ", ".join(c.name for c in classes[:4])
        raise SpliceError(f"`def {node.name}({args[0].arg}, ...)` is a new method, and the file has several classes "
                          f"({names})", hint=f"write it inside its class: `class {classes[0].name}:` with the method "
                                             "indented under it")
    return None


_DOTTED_DEF = re.compile(r"^(async\s+def|def)\s+([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*\(")


def _dotted_methods(block: str) -> str:
    """``def Order.cancel(self):`` at the top level, which no Python parses, as the method it means: a ``class
    Order:`` around it (merged into the file's class as a partial class). Measured: Qwen 1.5B wrote its methods this
    way after an example naming ``Order.cancel``."""
    lines = block.splitlines(keepends=True)
    if not any(_DOTTED_DEF.match(line) for line in lines):
        return block
    out: list[str] = []
    owner: str | None = None
    for line in lines:
        match = _DOTTED_DEF.match(line)
        if match:
            if owner != match[2]:
                out.append(f"class {match[2]}:\n")
                owner = match[2]
            out.append(f"    {match[1]} {match[3]}{line[match.end(3):]}")
        elif line[:1].strip():  # a statement at the top level ends the class
            owner = None
            out.append(line)
        else:
            out.append(f"    {line}" if owner and line.strip() else line)
    return "".join(out)


def parse_block(block: str) -> tuple[str, ast.Module, list[str]]:
    """The block's tree; a block whose definitions parse but which ends in lines that are not Python (a small model
    appends the test command or a sentence to its edit) is cut before those lines, which are named so the caller
    can say they were left out. Only a tail that starts at the top level is cut, after at least one whole
    definition: a syntax error inside a definition is still an error."""
    try:
        return block, ast.parse(block), []
    except SyntaxError as exc:
        error = exc
    lines = block.splitlines(keepends=True)
    bad = min(max((error.lineno or 1) - 1, 0), len(lines) - 1)
    cut = next((i for i in range(bad, 0, -1) if lines[i][:1].strip() and not lines[i].startswith("#")), 0)
    tail = [line for line in lines[cut:] if line.strip()]
    opens = ("def ", "class ", "async ", "@", "if ", "for ", "while ", "with ", "try:", "import ", "from ")
    if cut and not any(line[:1].isspace() for line in tail) and not tail[0].startswith(opens):
        head = "".join(lines[:cut])
        try:
            tree = ast.parse(head)
        except SyntaxError:
            tree = None
        if tree is not None and any(isinstance(n, _DEFS) for n in tree.body):
            where = f"line {cut + 1}" if len(lines) == cut + 1 else f"lines {cut + 1}-{len(lines)}"
            first = tail[0].strip() if len(tail[0].strip()) <= 60 else tail[0].strip()[:57] + "..."
            verb = "is" if where.startswith("line ") else "are"
            return head, tree, [f"{where} of the block, which {verb} not Python (`{first}`): a command goes in "
                                "its own ```bash block"]
    raise SpliceError(f"the block does not parse: line {error.lineno}: {error.msg}",
                      hint="write valid Python: whole definitions, consistently indented")


def _must_parse(text: str) -> None:
    try:
        ast.parse(text)
    except SyntaxError as exc:  # a bug here or a block that only parses alone: never write broken code
        raise SpliceError(f"the file would not parse after the edit: line {exc.lineno}: {exc.msg}",
                          hint="write whole definitions; the block is laid in by name") from None
