"""Anchors: the concrete handles a task text gives on the code (names, paths, traceback frames, messages).

A task written by a person mixes prose with code: identifiers in backticks, dotted paths, a pasted traceback, an
error line, a failing test's name. Each of those is a claim about where the code is, and some claims are stronger
than others (a traceback frame names a file and a function; a snake_case word in prose only might be a name). This
module finds them and says how strong each one is; :mod:`tomo.oi.context_pack` resolves them in prism's index.

Pure text processing: no file system, no index, so it is cheap to test on crafted texts.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

AnchorKind = Literal["frame", "path", "dotted", "name", "test", "message"]

# how much one anchor of each origin is worth before the index says how specific it is
WEIGHTS = {"frame": 6.0, "path": 5.0, "code": 3.0, "prose": 1.0, "test": 2.5, "message": 2.0}

SOURCE_EXTS = ("py", "pyi", "pyx", "js", "jsx", "mjs", "ts", "tsx", "go", "rs", "java")

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
_FRAME_PY = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.]+))?')
_FRAME_PYTEST = re.compile(r"^\s*([\w./\\-]+\.py):(\d+):(?: in ([\w<>.]+))?", re.M)
_PATH = re.compile(r"(?<![\w.])((?:[\w.-]+[/\\])*[\w-]+\.(?:" + "|".join(SOURCE_EXTS) + r"))(?![\w])")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w(]*\.\w)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_ERROR_LINE = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)):\s*(.+)$", re.M)
_LOG_LINE = re.compile(r"^\s*(?:ERROR|WARNING|CRITICAL|FATAL|E )\s*:?\s*(.+)$", re.M)
_QUOTED = re.compile(r"[\"“']([^\"”'\n]{12,160})[\"”']")
_TEST_NAME = re.compile(r"(?<![\w.])(test_\w+|Test[A-Z]\w*)")

_NOISE = frozenset(set(keyword.kwlist) | {
    "self", "cls", "None", "True", "False", "print", "len", "str", "int", "float", "dict", "list", "set", "tuple",
    "object", "type", "isinstance", "super", "range", "open", "e.g", "i.e", "etc", "Traceback", "args", "kwargs",
    "http", "https", "www", "com", "org", "html", "github", "README", "TODO", "NOTE", "python", "Python", "pip",
})
_FILE_NOISE = ("site-packages/", "dist-packages/", "<frozen", "<string>", "<stdin>", "<ipython")


@dataclass(frozen=True, slots=True)
class Anchor:
    """One handle on the code: ``kind`` says what it is, ``text`` the name/path/message, ``weight`` how sure.

    ``line`` and ``function`` are set for traceback frames (and a path written as ``path:line``).
    ``order`` is the anchor's position in the text (frames: later is deeper in the stack).
    """

    kind: AnchorKind
    text: str
    weight: float
    line: int = 0
    function: str = ""
    order: int = 0
    count: int = 1  # names: on how many lines the task says it, a traceback left out (repeated = emphasised)
    snippet: bool = False  # written in a fenced code block only (a reproducer: its imports and calls), not in prose


def identifier_parts(ident: str) -> list[str]:
    """``LabelEncoder`` -> [label, encoder]; ``inverse_transform`` -> [inverse, transform]; ``HTTPError2`` -> ..."""
    out: list[str] = []
    for chunk in ident.split("_"):
        out += [p.lower() for p in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", chunk)]
    return [p for p in out if p]


def is_codeish(word: str) -> bool:
    """A word that reads as an identifier rather than English: snake_case, CamelCase, dunder, or with digits."""
    if word in _NOISE or len(word) < 3:
        return False
    if "_" in word.strip("_"):
        return True
    if word.startswith("__") and word.endswith("__"):
        return True
    inner_upper = any(c.isupper() for c in word[1:])
    return inner_upper and any(c.islower() for c in word)


def extract(text: str) -> list[Anchor]:
    """Every anchor in ``text``, strongest evidence per (kind, text) kept, in order of appearance."""
    found: dict[tuple[str, str, int], Anchor] = {}
    order = 0

    def add(a: Anchor) -> None:
        nonlocal order
        key = (a.kind, a.text, a.line)
        old = found.get(key)
        if old is None:
            order += 1
            found[key] = replace(a, order=order)
        else:  # said in the prose too, it is not a snippet's only
            if a.weight > old.weight:
                old = replace(a, line=a.line or old.line, function=a.function or old.function, order=old.order,
                              snippet=old.snippet)
            found[key] = replace(old, snippet=old.snippet and a.snippet)

    # traceback frames: the strongest evidence a text can carry (a file, a line and a function)
    for rx in (_FRAME_PY, _FRAME_PYTEST):
        for m in rx.finditer(text):
            path = m.group(1).replace("\\", "/")
            if any(n in path for n in _FILE_NOISE[2:]):
                continue
            func = m.group(3) or ""
            add(Anchor("frame", path, WEIGHTS["frame"], int(m.group(2)), "" if func.startswith("<") else func))
            if func and not func.startswith("<"):
                add(Anchor("name", func, WEIGHTS["code"]))

    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub(" ", text)
    spans = [m.group(1) for m in _INLINE.finditer(prose)]
    prose = _INLINE.sub(" ", prose)

    for chunk in blocks:
        _scan(chunk, WEIGHTS["code"], add, code=True, snippet=True)
    for chunk in spans:
        _scan(chunk, WEIGHTS["code"], add, code=True)
    _scan(prose, WEIGHTS["prose"], add, code=False)

    # error and log lines: the message is searched literally, the exception class is a name
    for m in _ERROR_LINE.finditer(text):
        cls, msg = m.group(1), m.group(2).strip()
        add(Anchor("name", cls.rsplit(".", 1)[-1], WEIGHTS["code"]))
        if len(msg) >= 8:
            add(Anchor("message", msg[:200], WEIGHTS["message"]))
    for m in _LOG_LINE.finditer(text):
        msg = m.group(1).strip()
        if len(msg) >= 12:
            add(Anchor("message", msg[:200], WEIGHTS["message"] * 0.75))
    for m in _QUOTED.finditer(text):
        msg = m.group(1).strip()
        if " " in msg and not msg.startswith(("http", "/")):
            add(Anchor("message", msg, WEIGHTS["message"] * 0.75))
    counts = _mentions(text, {a.text for a in found.values() if a.kind == "name"})
    out = [replace(a, count=counts.get(a.text, 1)) if a.kind == "name" and counts.get(a.text, 1) > 1 else a
           for a in found.values()]
    return sorted(out, key=lambda a: a.order)


def _mentions(text: str, names: set[str]) -> dict[str, int]:
    """On how many lines of ``text`` each name appears as a word, a pasted traceback's frames and their source
    lines left out (a stack repeats names by echo, not emphasis)."""
    lines = text.splitlines()
    skip: set[int] = set()
    for i, line in enumerate(lines):
        if _FRAME_PY.search(line) or _FRAME_PYTEST.match(line):
            skip.update((i, i + 1))
    words: dict[str, int] = {}
    for i, line in enumerate(lines):
        if i in skip:
            continue
        for w in set(_IDENT.findall(line)):
            if w in names:
                words[w] = words.get(w, 0) + 1
    return words


def _scan(chunk: str, weight: float, put: Callable[[Anchor], None], *, code: bool, snippet: bool = False) -> None:
    """Paths, dotted names, test names and identifiers in one span of text (code or prose; a fenced block's code is
    a ``snippet``)."""

    def add(a: Anchor) -> None:
        put(replace(a, snippet=True) if snippet else a)

    for m in _PATH.finditer(chunk):
        path = m.group(1).replace("\\", "/")
        if any(n in path for n in _FILE_NOISE[2:]):
            continue
        after = chunk[m.end() : m.end() + 8]
        lm = re.match(r":(\d+)", after)
        add(Anchor("path", path, WEIGHTS["path"], int(lm.group(1)) if lm else 0))
    for m in _TEST_NAME.finditer(chunk):
        add(Anchor("test", m.group(1), WEIGHTS["test"]))
    for m in _DOTTED.finditer(chunk):
        dotted = m.group(1)
        parts = dotted.split(".")
        if parts[-1] in SOURCE_EXTS or dotted.lower().startswith(("e.g", "i.e", "www.")):
            continue
        is_call = chunk[m.end() : m.end() + 1] == "("
        if not code and not is_call and len(parts) < 3 \
                and not any(is_codeish(p) or (p[:1].isupper() and i) for i, p in enumerate(parts)):
            continue  # "file.name" in prose with nothing code-like about it: likely a sentence break
        head = parts[1:] if parts[0] in ("self", "cls") else parts
        if len(head) >= 2:
            add(Anchor("dotted", ".".join(head), weight * 1.2))
        for p in head:
            if p not in _NOISE and len(p) > 1:
                add(Anchor("name", p, weight if (code or is_codeish(p)) else weight * 0.6))
    called = {m.group(1) for m in _CALL.finditer(chunk)}
    for m in _IDENT.finditer(chunk):
        word = m.group(0)
        if word in _NOISE or len(word) < 2:
            continue
        if code:
            # in code every identifier is a name; short lowercase words are usually locals
            w = weight if (is_codeish(word) or word[:1].isupper() or word in called) else weight * 0.5
            add(Anchor("name", word, w))
        elif is_codeish(word) or (word in called and len(word) > 3):
            add(Anchor("name", word, weight * (1.5 if word in called else 1.0)))
        elif word[:1].isupper() and word[1:].islower() and len(word) > 3 and m.start() > 0 \
                and chunk[m.start() - 1] not in ".\n" and not chunk[: m.start()].rstrip().endswith((".", "!", "?")):
            add(Anchor("name", word, weight * 0.3))  # a capitalized word mid-sentence may be a class (Field, Query)
