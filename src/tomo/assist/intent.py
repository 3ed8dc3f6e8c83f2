"""Which engine a sentence belongs to, decided by the harness before any model runs.

A rename is a graph operation: prism proves every reference and the plan is applied by handle, so a model that only
has to name the symbol and the new name (assist) does it better than one that edits files by hand, and a small model
far better. ``tomo run --engine auto`` sends a sentence that asks for a rename to assist and everything else to the oi
engine. The test is deliberately plain (the verb "rename" followed, later in the sentence, by "to NAME"), so a person
can predict the route from the sentence; the route taken is said in the log.
"""

from __future__ import annotations

import re

_RENAME = re.compile(
    r"\brename\b(?P<rest>(?:[^.!?]|[.](?=\S)){0,120}?)"  # within one sentence (a dotted name's dots are not ends)
    r"\b(?:to|into|as)\s+[`'\"]?(?P<new>[A-Za-z_][A-Za-z0-9_]*)[`'\"]?", re.I | re.S)


def rename_target(text: str) -> str | None:
    """The new name when ``text`` asks to rename something ("rename the method total to subtotal everywhere",
    "Rename it to Reading"), else None."""
    request = rename_request(text)
    return request[1] if request else None


def rename_request(text: str) -> tuple[str, str] | None:
    """``(between, new)``: the words between "rename" and "to NEW" (where a sentence says what it renames) and the
    new name, when ``text`` asks for a rename; else None."""
    match = _RENAME.search(text)
    return (match["rest"], match["new"]) if match else None
