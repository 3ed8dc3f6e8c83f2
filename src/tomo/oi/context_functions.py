"""Which definitions a task is about: evidence on functions and methods that file-level evidence cannot give.

The context pack ranks functions inside its best files by their file's score, BM25 of their body and their own
anchor evidence. Two things are missing from that, and they live here:

- **Names.** A task says what it is about in words: "the ``inverse_transform`` of ``LabelEncoder`` fails on empty
  lists" names ``LabelEncoder.inverse_transform`` even when neither is in backticks, and an issue title like
  "Pipeline should implement __len__" names ``Pipeline.__len__``. A body's BM25 is diluted by everything else the
  function does; its qualified name is a short, deliberate summary of it. :func:`name_match` scores each candidate by
  the idf-weighted overlap between its name's parts and the task's words, the title's words counting twice (an issue's
  first line says what it is about).
- **Frames from another version.** A traceback pasted into an issue was produced by the reporter's version of the
  code, so its line numbers drift from the tree being searched; a frame's line can land in the neighbour of the
  function it names. :func:`frame_defs` trusts the frame's function name over its line when the two disagree and the
  file defines that name.

Pure functions over names, texts and line ranges: no index, no file system, so they are cheap to test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, TypeVar

from tomo.oi.context_search import tokens

IdfOf = Callable[[Iterable[str]], dict[str, float]]
_CALLABLE = ("function", "method")


def title_of(task: str) -> str:
    """The task's first non-empty line: an issue's title."""
    return next((line for line in task.splitlines() if line.strip()), "")


def name_terms(qualname: str) -> list[str]:
    """The tokens of a qualified name, once each: ``Cart.apply_discount`` -> cart, applydiscount, apply, discount."""
    return list(dict.fromkeys(tokens(qualname.replace(".", " "))))


def name_match(task: str, qualnames: Sequence[str], idf: IdfOf, *, body: float = 1.0,
               title: float = 2.0) -> list[float]:
    """For each qualified name, the idf-weighted overlap of its tokens with the task's words.

    A token the task's title says counts ``title`` times its idf, one the rest of the task says ``body`` times
    (``body=0`` gives a title-only match). Presence, not frequency: a word said ten times in a pasted log says no
    more about the function's name than one said once. ``idf`` maps terms to their inverse document frequency in the
    repository (``Retrieval.idf``), so ``get`` or ``test`` say little and ``discount`` says much.
    """
    head = set(tokens(title_of(task)))
    words = set(tokens(task)) if body else set()
    terms = [name_terms(q) for q in qualnames]
    weight: dict[str, float] = {}
    for ts in terms:
        for t in ts:
            if t not in weight:
                weight[t] = title if t in head else body if t in words else 0.0
    said = [t for t, w in weight.items() if w > 0]
    if not said:
        return [0.0] * len(qualnames)
    df = idf(said)
    return [sum(weight[t] * df.get(t, 0.0) for t in ts if weight[t] > 0) for ts in terms]


class Span(Protocol):
    """A definition as the pack knows it: its name, kind and line range (``_Def`` fits)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


S = TypeVar("S", bound=Span)


def frame_defs(defs: Sequence[S], line: int, function: str = "", *, by_name: bool = True) -> list[S]:
    """The functions of one file that a traceback frame (``line``, in ``function``) points at.

    The functions whose lines hold ``line``; but when ``by_name`` and none of those is called ``function`` while the
    file defines a function of that name, those instead: the reporter's line numbers come from another version of
    the file, the function's name does not drift.
    """
    at = [d for d in defs if d.kind in _CALLABLE and d.line <= line <= max(d.end_line, d.line)]
    if not by_name or not function or any(d.name == function for d in at):
        return at
    named = [d for d in defs if d.kind in _CALLABLE and d.name == function]
    return named or at
