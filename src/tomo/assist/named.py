"""The one symbol a rename sentence names, found by the harness so no model has to spell it.

A small model routed to assist with "Please rename the Invoice method sum_lines to subtotal" still has to pass the
symbol to ``rename_plan``; the lab saw Qwen2.5-Coder 1.5B pass the tool description's example
(``package.module.Class.method``) instead, so the plan failed and the task fell through to hand edits. The sentence
already says which symbol it means, and the code graph can check that deterministically: when the words of the
sentence name exactly one definition, the harness plans the rename itself and the model is not asked. When they
name none, or several that the sentence does not tell apart, this answers None and the model decides, as before.

Which words count: between "rename" and "to NEW" every word is looked up (that is where the sentence says what it
renames: "rename the method total to ..."); elsewhere only words that look like code (``snake_case``, ``ALL_CAPS``,
``CamelCase`` with an inner capital, dotted names, words in backticks or quotes), so the plain words of the rest of
the sentence ("name", "project", "it") never pick a symbol. Modules are never picked: renaming one moves a file.
"""

from __future__ import annotations

import re
from typing import Protocol

from tomo.assist.intent import rename_request
from tomo.prism.model import Symbol

_WORD = re.compile(r"[`'\"]?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[`'\"]?")
_QUOTES = "`'\""


class FindsSymbols(Protocol):
    def find_symbol(self, query: str, limit: int = 50) -> list[Symbol]: ...


def looks_like_code(word: str) -> bool:
    """``sum_lines``, ``MAX_TRIES``, ``TempRec``, ``Invoice.total``, `` `total` ``; not ``Rename`` or ``project``."""
    if word[:1] in _QUOTES and word[-1:] in _QUOTES and len(word) > 2:
        return True
    bare = word.strip(_QUOTES)
    return "_" in bare or "." in bare or any(c.isdigit() for c in bare) or any(c.isupper() for c in bare[1:])


def named_rename(text: str, graph: FindsSymbols) -> tuple[Symbol, str] | None:
    """``(symbol, new_name)`` when ``text`` asks for a rename and its words name exactly one definition."""
    request = rename_request(text)
    if request is None:
        return None
    between, new_name = request
    for words in (_words(between), [w for w in _words(text) if looks_like_code(w)]):
        found = _defined(words, new_name, graph)
        if found:
            one = _narrowed(found, _words(text))  # every word of the sentence may qualify
            return (one, new_name) if one is not None else None
    return None


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.strip(_QUOTES)]


def _defined(words: list[str], new_name: str, graph: FindsSymbols) -> list[Symbol]:
    found: dict[str, Symbol] = {}
    for word in words:
        bare = word.strip(_QUOTES)
        if bare == new_name:
            continue
        tail = bare.rsplit(".", 1)[-1]
        for symbol in graph.find_symbol(bare, limit=50):
            named = symbol.qualname == bare or symbol.qualname.endswith("." + bare) or symbol.name == bare
            if named and symbol.name == tail and symbol.kind not in ("module", "package"):
                found.setdefault(symbol.qualname, symbol)
    return list(found.values())


def _narrowed(found: list[Symbol], words: list[str]) -> Symbol | None:
    """The one symbol left once the sentence's other words are read as qualifiers ("the Invoice method sum_lines":
    ``Invoice.sum_lines``, not ``Receipt.sum_lines``); a symbol that qualifies another ("Invoice") gives way to it."""
    names = {w.strip(_QUOTES) for w in words}
    inner = [s for s in found if not any(o.qualname.startswith(s.qualname + ".") for o in found)]
    if len(inner) > 1:
        qualified = [s for s in inner if set(s.qualname.split(".")[:-1]) & names]
        inner = qualified or inner
    return inner[0] if len(inner) == 1 else None
