"""The approval gate: who says yes before a block runs. One policy, several faces (the CLI's prompt, the console's).

:class:`AskingGate` holds the policy -- yes runs this block, no refuses it, always runs this one and every later one
of the session without asking -- and asks through whatever function its owner gives it, so the terminal and the web
console share the rule and differ only in how they ask.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

from tomo.oi.blocks import Block

Answer = Literal["yes", "no", "always"]
_ANSWERS: dict[str, Answer] = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always", "always": "always"}


class Gate(Protocol):
    """Sees each block before it runs; True runs it."""

    async def approve(self, block: Block, number: int) -> bool: ...


class ApproveAll:
    """``--yes``: every block runs."""

    async def approve(self, block: Block, number: int) -> bool:
        return True


class RefuseAll:
    """Nothing runs (a dry look at what a model would do)."""

    async def approve(self, block: Block, number: int) -> bool:
        return False


class AskingGate:
    """Asks ``ask(block, number)`` for "y", "n" or "always" (any case, or the full words); after "always" it stops
    asking. An answer it does not know counts as no: a block never runs on a misunderstanding."""

    def __init__(self, ask: Callable[[Block, int], str | Awaitable[str]]) -> None:
        self.ask = ask
        self.always = False

    async def approve(self, block: Block, number: int) -> bool:
        if self.always:
            return True
        raw = self.ask(block, number)
        answer = _ANSWERS.get(str(await raw if inspect.isawaitable(raw) else raw).strip().lower(), "no")
        if answer == "always":
            self.always = True
        return answer != "no"


def parse_answer(text: str) -> Answer | None:
    """The answer ``text`` means, or None (the CLI asks again)."""
    return _ANSWERS.get(text.strip().lower())
