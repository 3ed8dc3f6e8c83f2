"""What a model reads after a check failed: which tests fail, which of them this turn broke, and the one next step.

Measured on Qwen2.5-Coder 1.5B (the lab, issue 27): after a red check its next reply was, word for word, the
instruction that ended the task's first message; it sent that reply three times and the turn ended stuck. Replayed
with one more line after the failing output, naming the failing test and what to send, the same model answered with
an edit block. The line is tomo's, in tomo's brackets, and says what a careful reviewer would: the failing tests by
name, which of them passed before this turn (a change of this turn broke them), and the edit form.

Failing tests are read from pytest's short summary (``FAILED id`` / ``ERROR id``), the form ``-q`` and ``-ra`` print;
other tools' output gives no names, and the line then says only that the check failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)", re.M)
SHOWN = 3


def failed_tests(output: str) -> list[str]:
    """The test ids pytest's summary names as failed or in error, in its order, once each."""
    seen: dict[str, None] = {}
    for match in _SUMMARY.finditer(output):
        seen.setdefault(match.group("id"), None)
    return list(seen)


def next_step(failing: Iterable[str], baseline: set[str] | None, file: str | None) -> str:
    """The line after a failed check. ``baseline``: the tests that failed before the turn's first change (None: not
    known); ``file``: where the edit most likely goes (the file this turn last edited, else the task's best
    candidate)."""
    names = list(failing)
    said = f": {', '.join(names[:SHOWN])}{f' and {len(names) - SHOWN} more' if len(names) > SHOWN else ''}" \
        if names else ""
    broke = [n for n in names if baseline is not None and n not in baseline]
    why = ""
    if broke:
        which = "it" if len(broke) == 1 else "they"
        why = (f" ({', '.join(broke[:SHOWN])} passed before this turn's changes, so {which} broke because of a "
               "change made in this turn: keep what callers and tests rely on)")
    form = f"```python {file}" if file else "```python path/to/module.py"
    return (f"[tomo: the check failed{said}{why}. Next: send the whole corrected definition in a block labeled with "
            f"its file ({form}), then run the check again.]")
