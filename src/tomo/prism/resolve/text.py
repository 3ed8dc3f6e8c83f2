"""What stored text says, read without the index: annotations (``list[Item]``, ``Callable[[A], R]``), call
arguments, expression chains (``a.b(x).c``), literals, and the words of the language prism trusts (decorators that
keep a function's return, property decorators, builtin types). Pure functions: every rule module reads text through
these, and none of them resolves a name.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_PROPERTY_DECORATORS = ("property", "cached_property", "functools.cached_property", "functional.cached_property")
_PARTIAL = re.compile(r"((?:functools\.)?partial)\(\s*([A-Za-z_][\w.]*)\s*(?:,.*)?\)", re.S)
_BUILTIN_ITER = re.compile(r"(enumerate|zip|sorted|reversed|list|tuple|set|frozenset|iter)\((.*)\)", re.S)
_DICT_VIEW = re.compile(r"(.+)\.(items|keys|values)\(\)", re.S)
# typing's and the builtins' iterables whose first argument is what iterating gives
_ITERABLES = frozenset({"list", "List", "Sequence", "MutableSequence", "Iterable", "Iterator", "Collection", "Set",
                        "set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet", "Reversible", "Generator",
                        "deque", "Deque", "KeysView", "ValuesView"})
_SEQUENCES = frozenset({"list", "List", "Sequence", "MutableSequence", "deque", "Deque"})
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict", "DefaultDict"})


def _generic(ann: str) -> tuple[str, list[str]] | None:
    """``typing.List[Item]`` -> ("List", ["Item"]); an optional one (``X | None``, ``Optional[X]``) is X."""
    text = ann.strip().strip("'\"")
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[9:-1]
    parts = [p for p in _split_top(text, "|") if p != "None"]
    if len(parts) != 1:
        return None
    text = parts[0]
    if "[" not in text or not text.endswith("]"):
        return None
    head = text.split("[", 1)[0].rsplit(".", 1)[-1]
    return head, _split_top(text[text.index("[") + 1:-1])


def _item_ann(ann: str, sequence_only: bool = False) -> str | None:
    """What iterating (with ``sequence_only``: indexing) a value of annotation ``ann`` gives."""
    g = _generic(ann)
    if g is None:
        return None
    head, args = g
    if head in ("tuple", "Tuple"):
        if len(args) == 2 and args[1] == "...":
            return args[0]
        return args[0] if args and len(set(args)) == 1 else None
    if head in (_SEQUENCES if sequence_only else _ITERABLES | _MAPPINGS):
        return args[0] if args else None
    if head == "ItemsView" and len(args) == 2 and not sequence_only:
        return f"tuple[{args[0]}, {args[1]}]"
    return None


def _component_ann(ann: str, i: int) -> str | None:
    """Element ``i`` of a value of annotation ``ann`` unpacked: a tuple's own part, else any element."""
    g = _generic(ann)
    if g is not None and g[0] in ("tuple", "Tuple") and not (len(g[1]) == 2 and g[1][1] == "..."):
        return g[1][i] if i < len(g[1]) else None
    return _item_ann(ann)


def _mapping_args(ann: str) -> tuple[str, str] | None:
    g = _generic(ann)
    return (g[1][0], g[1][1]) if g is not None and g[0] in _MAPPINGS and len(g[1]) == 2 else None


def _value_ann(ann: str) -> str | None:
    """The value type of a mapping annotation (what ``m[key]`` gives)."""
    kv = _mapping_args(ann)
    return kv[1] if kv else None


def _matching_open(text: str, opener: str) -> int | None:
    """Index of the bracket that opens the one closing ``text``."""
    closer = ")" if opener == "(" else "]"
    if not text.endswith(closer):
        return None
    level = 0
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        if c in ")]}":
            level += 1
        elif c in "([{":
            level -= 1
            if level == 0:
                return i if c == opener and i > 0 else None
    return None


def _after_last_subscript(text: str) -> int | None:
    """End index of the last top-level ``[...]`` in a dotted chain (``a.b["k"].c()`` -> after ``]``)."""
    level, end = 0, None
    for i, c in enumerate(text):
        if c in "([{":
            level += 1
        elif c in ")]}":
            level -= 1
            if c == "]" and level == 0:
                end = i + 1
    return end


_METHOD_WRAPPER = re.compile(r"(staticmethod|classmethod)\(\s*([A-Za-z_][\w.]*)\s*\)")
# Receivers of these types are never an indexed symbol: `kwargs.get(...)` is not `QuerySet.get`.
_BUILTIN_TYPES = frozenset({"dict", "list", "tuple", "set", "frozenset", "str", "bytes", "bytearray", "int",
                            "float", "complex", "bool"})
_TYPING_CONTAINERS = frozenset({"Dict", "List", "Tuple", "Set", "FrozenSet", "typing.Dict", "typing.List",
                                "typing.Tuple", "typing.Set", "t.Dict", "t.List", "t.Tuple", "t.Set"})


# Decorators that leave what calling the function returns unchanged.
_RETURN_KEEPING = frozenset({"staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod", "override",
                             "typing.override", "typing_extensions.override", "cache", "functools.cache",
                             "lru_cache", "functools.lru_cache", "wraps", "functools.wraps", *_PROPERTY_DECORATORS})


_CONTEXT_MANAGERS = frozenset({"contextmanager", "contextlib.contextmanager", "asynccontextmanager",
                                "contextlib.asynccontextmanager"})
# Bases that add nothing an instance is asked for: they never hide the methods of the indexed bases.
_NEUTRAL_BASES = frozenset({"object", "Generic", "Protocol", "typing.Generic", "typing.Protocol", "t.Generic",
                            "t.Protocol", "typing_extensions.Protocol", "ABC", "abc.ABC"})
# Annotation wrappers whose first argument is the type: ClassVar[Runner] is a Runner.
_WRAPPERS = ("ClassVar[", "typing.ClassVar[", "t.ClassVar[", "Final[", "typing.Final[", "t.Final[",
             "Annotated[", "typing.Annotated[", "t.Annotated[", "typing_extensions.Annotated[")


def _bare_qualifier(ann: str) -> bool:
    """``x: Final = Foo()``: the annotation qualifies, the value says the type."""
    return ann.strip().rsplit(".", 1)[-1] in ("Final", "ClassVar")


def _unsubscript(base: str) -> str:
    """``Validator[T]`` -> ``Validator``: a generic base is its class."""
    return base.split("[", 1)[0] if base.endswith("]") else base


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at the commas (or ``sep``) outside brackets."""
    out, level, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            level += 1
        elif c in ")]}":
            level -= 1
        elif c == sep and level == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out


def _callable_args(ann: str, result: bool = False) -> list[str] | None:
    """``Callable[[A, B], R]`` -> [A, B] (with ``result``: [A, B, R]); ``Callable[Concatenate[A, P], R]`` -> [A].

    None when ``ann`` is not a Callable annotation with listed parameters.
    """
    text = ann.strip().strip("'\"")
    head = text.split("[", 1)[0]
    if head.rsplit(".", 1)[-1] != "Callable" or not text.endswith("]"):
        return None
    parts = _split_top(text[len(head) + 1:-1])
    if len(parts) != 2:
        return None
    params, ret = parts
    if params.startswith("[") and params.endswith("]"):
        args = [a for a in _split_top(params[1:-1]) if a]
    elif params.split("[", 1)[0].rsplit(".", 1)[-1] == "Concatenate" and params.endswith("]"):
        args = _split_top(params[params.index("[") + 1:-1])[:-1]
    elif result:
        args = []  # `Callable[..., R]`: only the result is known
    else:
        return None
    return [*args, ret] if result else args


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _keeps_return(decorator: str) -> bool:
    return decorator.split("(", 1)[0] in _RETURN_KEEPING or decorator.endswith((".setter", ".getter"))


def _call_argument(lines: list[str], line: int, col: int, idx: int, name: str) -> str | None:
    """The text of argument ``idx`` (or keyword ``name``) of the call whose name ends at ``line``:``col``, in a file
    of ``lines`` (read with newlines translated, as ``Path.read_text`` does)."""
    if not lines:
        return None
    text = "\n".join(lines[line - 1:line + 30])[col:].lstrip()
    if not text.startswith("("):
        return None
    args: list[str] = []
    level, start = 0, 1
    for i, c in enumerate(text):
        if c in "\"'":
            return None  # a string literal among the arguments: not worth a tokenizer here
        if c in "([{":
            level += 1
        elif c in ")]}":
            level -= 1
            if level == 0:
                args.append(text[start:i])
                break
        elif c == "," and level == 1:
            args.append(text[start:i])
            start = i + 1
    else:
        return None
    args = [" ".join(a.split()) for a in args if a.strip()]
    if any(a.startswith("*") for a in args):
        return None
    for a in args:
        key, eq, value = a.partition("=")
        if eq and key.strip() == name and not value.startswith("="):
            return value.strip()
    positional = [a for a in args if not re.match(r"^\w+\s*=[^=]", a)]
    return positional[idx] if idx < len(positional) else None


def _literal_type(rhs: str | None) -> str | None:
    """The builtin type of a literal right-hand side (``{}``, ``[...]``, ``"..."``, ``3``), else None."""
    if not rhs or rhs == "?":
        return None
    c = rhs[0]
    if c == "[":
        return "list"
    if c == "{":
        return "dict" if rhs == "{}" or ":" in rhs else "set"
    if c in "\"'":
        return "str"
    if c.isdigit():
        return "float" if "." in rhs or "e" in rhs.lower() else "int"
    if len(rhs) > 1 and c in "fFbBrRuU" and rhs[1] in "\"'":
        return "bytes" if c in "bB" else "str"
    return None


def _line_of(entry: tuple[Any, ...]) -> int:
    return int(entry[0])


def _redefined(q: str) -> str:
    """``m.f@1`` -> ``m.f``: a redefinition is stored under its own qualname but binds the same name."""
    head, _, last = q.rpartition(".")
    base = last.split("@", 1)[0]
    return f"{head}.{base}" if head else base


def same_name(q: str, target: str) -> bool:
    """Whether ``q`` is ``target`` or another definition of the same name in the same namespace (a rename renames
    them together: the name is one binding, whichever definition it holds)."""
    # without an "@" a name is its own plain name: most calls (every occurrence a query classifies) stop at the test
    return q == target or (("@" in q or "@" in target) and _redefined(q) == _redefined(target))


def _pick(entries: list[tuple[Any, ...]], line: int) -> tuple[Any, ...]:
    """The binding in effect at ``line``: the last one at or before it, else the first one after it."""
    best = None
    for e in entries:  # entries are not in source order (tree-sitter captures are grouped by pattern)
        if e[0] <= line and (best is None or e[0] >= best[0]):
            best = e
    return best if best is not None else min(entries, key=lambda e: e[0])


_WORD_RUN = re.compile(r"\w+")  # str.isalnum() or "_", character for character (the same Unicode test)
_BRACKET = re.compile(r"[()\[\]{}]")


@functools.lru_cache(maxsize=65536)
def _parse(text: str) -> tuple[tuple[str, str], ...]:
    """``a.b(x).c[0]`` -> [("name","a"),("attr","b"),("call",""),("attr","c"),("sub","")]; [] if not that shape.

    Names and brackets are found with regular expressions rather than character by character: a query parses a
    thousand receiver and value texts, most of them calls whose arguments hold no bracket to count."""
    ops: list[tuple[str, str]] = []
    i, n = 0, len(text)
    expect_name = True
    while i < n:
        c = text[i]
        if expect_name:
            if c == " " and ops:
                i += 1
                continue
            m = _WORD_RUN.match(text, i)
            if m is None or c.isdigit():
                return ()
            ops.append(("name" if not ops else "attr", m.group()))
            i = m.end()
            expect_name = False
        elif c == ".":
            expect_name = True
            i += 1
        elif c == " " and ops:
            i += 1  # a chain over several lines, `b.add_eq()\n .add_order()`, is stored `b.add_eq() .add_order()`
        elif c in "([":
            level, j = 0, n
            for b in _BRACKET.finditer(text, i):
                if b.group() in "([{":
                    level += 1
                else:
                    level -= 1
                    if level == 0:
                        j = b.start()
                        break
            if j >= n or text[j] != (")" if c == "(" else "]"):
                return ()
            ops.append(("call" if c == "(" else "sub", ""))
            i = j + 1
        else:
            return ()
    return () if expect_name else tuple(ops)
