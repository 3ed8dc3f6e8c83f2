"""Containers: what a loop target, an unpacked name, a subscript or a generator's ``send`` takes.

A *shape* is what an iterable holds as far as it is known: declared by an annotation (``items: list[Item]``, ``->
tuple[list[Item], Recorder]``, ``d.items()`` of a ``dict[str, Field]``, a class's ``__iter__ -> Iterator[Item]``), a
literal whose elements are written out (``for f in [A(), B()]``: each of them), a tuple of known parts,
``enumerate``/``zip``/``sorted``... of known iterables, a comprehension's element. ``for x in ...``, ``a, b = ...``
and ``s[k]`` take their element, component or item from it; ``x = yield`` in a generator annotated ``Generator[Y, S,
R]`` is an S. Elements of different types are a union (an attribute is known only where all of them agree on it).
Ambiguous: an iterable with no declared or literal type, a subscript of something not declared a sequence or a
mapping, a starred target, a key that decides which of several types a mapping holds.
"""

from __future__ import annotations

import re
from typing import Any

from tomo.prism.pysource import comprehension_element, literal_items
from tomo.prism.resolve.core import _MAX_DEPTH, Core, Value
from tomo.prism.resolve.text import (
    _BUILTIN_ITER,
    _DICT_VIEW,
    _PROPERTY_DECORATORS,
    _after_last_subscript,
    _bare_qualifier,
    _component_ann,
    _item_ann,
    _keeps_return,
    _mapping_args,
    _matching_open,
    _parse,
    _pick,
    _split_top,
    _value_ann,
)


class Shapes(Core):
    # Shapes: what an iterable holds, as far as it is known. ("ann", fid, scope, text): declared by an annotation;
    # ("lit", fid, scope, line, texts): a literal whose elements are written out; ("tup", [shapes]): a tuple of
    # known parts; ("seq", shape): an iterable of one element shape; ("alt", [shapes]): one of several;
    # ("val", value): a value, nothing more. None: unknown.

    def _source_bound(self, fid: int, scope: str, name: str, line: int) -> Value:
        """A ``for`` target or an unpacked name: the type of the element it takes, when the iterable's declared
        type says it (``items: list[Item]``, ``-> tuple[list[Item], Recorder]``, ``d.items()`` of a
        ``dict[str, Field]``) or its literal lists every element (``for f in [A(), B()]``: each of them)."""
        return self._shape_value(self._origin_shape(fid, scope, name, line, 0), 0)

    def _origin_shape(self, fid: int, scope: str, name: str, line: int, depth: int) -> Any:
        src = self._source(fid)
        got = src.origin(name, line) if src is not None else None
        if got is None:
            return None
        key = ("origin", fid, name, line)
        if self._cycle(key):
            return None
        self._stack.add(key)
        try:
            how, text, path = got
            shape = self._shape(fid, scope, text, line, depth + 1)
            if how == "for":
                shape = self._item(shape, depth + 1)
            for i in path:
                shape = self._component(shape, i, depth + 1)
            return shape
        finally:
            self._stack.discard(key)

    def _sent(self, fid: int, scope: str) -> Value:
        """``x = yield ...`` in a generator annotated ``-> Generator[Y, S, R]``: x is what ``send`` passes, an S."""
        d = self.definition(scope)
        ann = (d[8].get("ret") or "") if d is not None and d[3] in ("function", "method") else ""
        text = ann.strip().strip("'\"")
        if text.split("[", 1)[0].rsplit(".", 1)[-1] != "Generator" or not text.endswith("]"):
            return None
        args = _split_top(text[text.index("[") + 1:-1])
        return self.type_of_annotation(fid, self._parent(fid, scope), args[1], 1) if len(args) == 3 else None

    def _literal_of(self, fid: int, scope: str, text: str, line: int,
                    depth: int) -> tuple[tuple[int, str, int], list[str]] | None:
        """The element texts of the list or tuple literal a name holds (assigned once), and where to read them."""
        v = self.eval(fid, scope, text, line, depth + 1)
        if v is None:
            return None
        if v[0] == "local":
            where, value, name = (v[1], v[2], v[5]), v[3], text
        elif v[0] == "def":
            d = self.definition(v[1])
            if d is None or d[3] != "variable" or d[8].get("ann"):
                return None
            where, value, name = (d[0], d[7], d[4]), d[8].get("value"), d[2]
            if len(self.info(d[0]).binds(d[7]).get(d[2], ())) != 1:
                return None  # rebound somewhere: which list is in effect is not proven
        else:
            return None
        if value == "?":
            src = self._source(where[0])
            value = src.assigned(name, where[2]) if src is not None else None
        lit = literal_items(value) if value else None
        return (where, lit[1]) if lit is not None else None

    def _declared(self, fid: int, scope: str, text: str, line: int, depth: int) -> tuple[int, str, str] | None:
        """(file, scope, annotation) that declares the type of expression ``text``, when one does."""
        if (depth > _MAX_DEPTH and self._cut()) or not text:
            return None
        ops = _parse(text)
        if not ops and text.endswith("]"):
            ops = (("name", ""), ("sub", ""))  # only the last step matters below
        if not ops:
            return None
        op = ops[-1][0]
        if len(ops) == 1:
            v = self.lookup(fid, scope, text, line)
            for e in self.info(fid).binds(scope).get(text, ()):
                if e[1] == "param" and e[2]:
                    return fid, self._parent(fid, scope), e[2]
            if v is not None and v[0] == "local":
                if v[4] and not _bare_qualifier(v[4]):
                    return v[1], v[2], v[4]
                return self._declared(v[1], v[2], v[3], v[5], depth + 1) if v[3] and v[3] != "?" else None
            if v is not None and v[0] == "def":
                d = self.definition(v[1])
                if d is not None and d[3] in ("variable", "attribute") and d[8].get("ann"):
                    return d[0], d[7], d[8]["ann"]
            return None
        if op == "attr":
            prefix, attr = text[:text.rfind(".")], ops[-1][1]
            rv = self.type_of(self.eval(fid, scope, prefix, line, depth + 1), depth + 1)
            if rv is None or rv[0] not in ("inst", "def"):
                return None
            m = self.member(rv[1], attr)
            d = self.definition(m) if m else None
            if d is None:
                return None
            if d[3] in ("variable", "attribute"):
                if d[8].get("ann") and not _bare_qualifier(d[8]["ann"]):
                    return d[0], d[7], d[8]["ann"]
                anns = {a for e in self.info(d[0]).binds(d[7]).get(d[2], ()) if e[1] == "attr"
                        and (a := self._declared_attr(d[0], e))}  # `self.x = {}  # type: dict[str, F]` declares
                return (d[0], d[7], anns.pop()) if len(anns) == 1 else None
            decs = d[8].get("decorators", [])
            if d[3] == "method" and any(x in _PROPERTY_DECORATORS for x in decs) and d[8].get("ret"):
                return d[0], d[7], d[8]["ret"]
            return None
        if op == "call":
            open_at = _matching_open(text, "(")
            if open_at is None:
                return None
            v = self.eval(fid, scope, text[:open_at], line, depth + 1)
            q = v[1] if v is not None and v[0] in ("bound", "def") else None
            d = self.definition(q) if q else None
            if d is None or d[3] not in ("function", "method") or not d[8].get("ret"):
                return None
            if not all(_keeps_return(x) for x in d[8].get("decorators", [])):
                return None
            ret = d[8]["ret"]
            return None if ret.strip("'\"").rsplit(".", 1)[-1] == "Self" else (d[0], d[7], ret)
        if op == "sub":
            open_at = _matching_open(text, "[")
            if open_at is None:
                return None
            decl = self._declared(fid, scope, text[:open_at], line, depth + 1)
            if decl is None:
                return None
            index = text[open_at + 1:-1].strip()
            got = _value_ann(decl[2]) or (
                _component_ann(decl[2], int(index)) if index.isdigit() else _item_ann(decl[2], sequence_only=True))
            return (decl[0], decl[1], got) if got else None
        return None

    def _shape(self, fid: int, scope: str, text: str, line: int, depth: int) -> Any:
        if not text or text == "?" or (depth > _MAX_DEPTH and self._cut()):
            return None
        if text[0] in "([{":
            lit = literal_items(text)
            if lit is not None:
                return ("lit", fid, scope, line, lit[1])
            element = comprehension_element(text)  # its loop variables are bound in this scope too
            return ("seq", self._shape(fid, scope, element, line, depth + 1)) if element else None
        if text.isidentifier() and self.info(fid).kinds.get(scope) in ("function", "method"):
            entries = self.info(fid).binds(scope).get(text) or []
            e = (_pick(entries, line) if len(entries) == 1 else self._reaching(fid, scope, text, entries, line)
                 ) if entries else None
            if e is not None and e[1] == "assign" and e[2] is None:  # itself a loop target or unpacked
                return self._origin_shape(fid, scope, text, e[0], depth + 1)
            if e is not None and e[1] == "assign" and len(entries or ()) > 1:  # the one assignment reaching it
                rhs = e[2]
                if rhs == "?":
                    src = self._source(fid)
                    rhs = src.assigned(text, e[0]) if src is not None else None
                return self._shape(fid, scope, rhs, e[0], depth + 1) if rhs else None
        m = _BUILTIN_ITER.fullmatch(text)
        if m and self.lookup(fid, scope, m.group(1), line) in (None, ("builtin", m.group(1))):
            args = [a for a in _split_top(m.group(2)) if a and not re.match(r"^\w+\s*=[^=]", a)]
            if not args or any(a.startswith("*") for a in args):
                return None
            items = [self._item(self._shape(fid, scope, a, line, depth + 1), depth + 1) for a in args]
            if m.group(1) == "enumerate":
                return ("seq", ("tup", [("val", ("ext", "builtins.int")), items[0]]))
            if m.group(1) == "zip":
                return ("seq", ("tup", items))
            return ("seq", items[0])
        m = _DICT_VIEW.fullmatch(text)
        if m:
            decl = self._declared(fid, scope, m.group(1), line, depth + 1)
            kv = _mapping_args(decl[2]) if decl is not None else None
            if decl is not None and kv is not None:
                key = ("ann", decl[0], decl[1], kv[0])
                val = ("ann", decl[0], decl[1], kv[1])
                return ("seq", ("tup", [key, val]) if m.group(2) == "items" else key if m.group(2) == "keys" else val)
        declared = self._declared(fid, scope, text, line, depth + 1)
        if declared is not None:
            return ("ann", *declared)
        value = self.eval(fid, scope, text, line, depth + 1)
        if value is not None and value[0] in ("local", "def"):
            held = self._literal_of(fid, scope, text, line, depth + 1)
            if held is not None:
                return ("lit", held[0][0], held[0][1], held[0][2], held[1])
            rhs = value[3] if value[0] == "local" else None
            if rhs == "?" and text.isidentifier():  # too long for the index: the source has it
                src = self._source(value[1])
                rhs = src.assigned(text, value[5]) if src is not None else None
            if rhs and rhs != "?":
                return self._shape(value[1], value[2], rhs, value[5], depth + 1)
        return ("val", self.type_of(value, depth + 1))

    def _item(self, shape: Any, depth: int) -> Any:
        """The shape of what iterating ``shape`` gives."""
        if shape is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        tag = shape[0]
        if tag == "ann":
            fid, scope, ann = shape[1:]
            if self._declared_class(fid, scope, ann) is None:
                item = _item_ann(ann)
                return ("ann", fid, scope, item) if item else None
            return self._item(("val", self.type_of_annotation(fid, scope, ann, depth + 1)), depth + 1)
        if tag == "lit":
            return ("alt", [self._shape(shape[1], shape[2], t, shape[3], depth + 1) for t in shape[4]])
        if tag == "seq":
            return shape[1]
        if tag == "tup":
            return ("alt", shape[1])
        if tag == "alt":
            return ("alt", [self._item(x, depth + 1) for x in shape[1]])
        v = shape[1]
        if v is not None and v[0] == "inst":  # an indexed iterable class: `def __iter__(self) -> Iterator[Item]`
            m = self.member(v[1], "__iter__")
            d = self.definition(m) if m else None
            if d is not None and d[8].get("ret") and not d[8].get("decorators"):
                item = _item_ann(d[8]["ret"])
                return ("ann", d[0], d[7], item) if item else None
        return None

    def _component(self, shape: Any, i: int, depth: int) -> Any:
        """The shape of element ``i`` when ``shape`` is unpacked (``a, b = shape``)."""
        if shape is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        tag = shape[0]
        if tag == "ann":
            fid, scope, ann = shape[1:]
            if self._declared_class(fid, scope, ann) is not None:
                return self._item(shape, depth + 1)
            part = _component_ann(ann, i)
            return ("ann", fid, scope, part) if part else None
        if tag == "lit":
            return self._shape(shape[1], shape[2], shape[4][i], shape[3], depth + 1) if i < len(shape[4]) else None
        if tag == "tup":
            return shape[1][i] if i < len(shape[1]) else None
        if tag == "alt":
            return ("alt", [self._component(x, i, depth + 1) for x in shape[1]])
        return self._item(shape, depth + 1)  # unpacking iterates: `(a,) = items`

    def _shape_value(self, shape: Any, depth: int) -> Value:
        if shape is None or (depth > _MAX_DEPTH and self._cut()):
            return None
        tag = shape[0]
        if tag == "ann":
            return self.type_of_annotation(shape[1], shape[2], shape[3], depth + 1)
        if tag in ("lit", "tup", "seq"):
            return None  # a container: what is asked of it is a builtin's method at most, never an indexed one
        if tag == "alt":
            got = {self._shape_value(x, depth + 1) for x in shape[1]}
            if None in got or not got:
                return None
            return got.pop() if len(got) == 1 else ("union", tuple(sorted(got, key=repr)))
        return shape[1]

    def _declared_class(self, fid: int, scope: str, ann: str) -> str | None:
        """The indexed class an annotation names (then it is no typing container, whatever it is called)."""
        v = self.type_of_annotation(fid, scope, ann, 1)
        return v[1] if v is not None and v[0] == "inst" else None

    def _eval_subscripted(self, fid: int, scope: str, text: str, line: int, depth: int) -> Value:
        """``s.fields["name"].load``: the item's type from the declared type of what is subscripted (a
        ``dict[str, Field]`` attribute, a ``list[Item]`` return), then the rest of the chain as usual."""
        cut = _after_last_subscript(text)
        if cut is None:
            return None
        decl = self._declared(fid, scope, text[:cut], line, depth + 1)
        value = self.type_of_annotation(*decl, depth + 1) if decl is not None else None
        rest = _parse("x" + text[cut:])[1:] if cut < len(text) else ()
        if cut < len(text) and not rest:
            return None
        return self._apply(fid, value, rest, depth)
