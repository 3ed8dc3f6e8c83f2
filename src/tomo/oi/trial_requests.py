"""What a trial's model reads: the requests for a reproduction, a fix, a wrong line, and what they show of the
reproduction and the last failed trial. Kept apart from :mod:`tomo.oi.trials` (which decides what to ask and when)
because the wording is what the lab tunes: each request's docstring says which measured reply it answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

FAILURE_CHARS = 1500
"""How much of the reproduction's failing output a trial shows: the assertion and its values, not the whole log."""


NO_SMALL_CHANGE = "no small change of the code"
"""Words only the request for another test (after a search found nothing) holds: the lab's ceiling answers it."""
ANOTHER_TEST = (f"(A test written before fails now, but {NO_SMALL_CHANGE} makes it pass, so what it asserts may "
                "not be what the task says. Write a test of your own from the task's words: the call and the result "
                "the task states, or a property it says must hold.)")
"""Why another test is asked (:meth:`tomo.oi.trials.Trials._search_again`). The first test is not shown: in the s46
run, shown it with this note, Qwen 1.5B gave it back word for word, then again without one of its assertions."""


@dataclass(slots=True)
class Repro:
    """What judges the trials: a command that failed at the start (``path``: the test tomo wrote, or None when the
    project's own check was already failing) and what it printed then."""

    command: str
    output: str
    path: str | None = None
    code: str = ""
    guards: list[tuple[str, str]] = field(default_factory=list)  # (path, code) of second tests a fix must pass too
    by: str = "model"  # who wrote it: model, task (its own examples), reported (a result the task calls wrong) or
    # project (its failing tests)
    judge: str = ""  # what it is, in a doubt's words, when "a test the model wrote" would not say it


def reproduce_request(task: str, path: str, imports: Sequence[str], called: Sequence[str] = (),
                      earlier: tuple[str, str] | None = None, subject: tuple[str, str] | None = None,
                      example: str = "", note: str = "") -> str:
    """``subject``: (module, name) the example imports and calls, the project's own (Qwen 1.5B copied a placeholder
    example's `from module import function` word for word, three times); ``note``: a line said before the reply's
    form (why this test is asked)."""
    how = ("The project's tests import its code like this:\n```python\n" + "\n".join(imports) + "\n```\n"
           if imports else "")
    if called:
        names = ", ".join(f"`{n}`" for n in called)
        how += (f"The task's example calls {names}: the test calls {'it' if len(called) == 1 else 'them'} with the "
                "same arguments.\n")
    module, name = subject or ("module", "function")
    if example:
        how += f"One of the project's tests calls `{name}` like this:\n```python\n{example}\n```\n"
    if earlier is not None:
        how += f"An earlier test:\n```python\n{earlier[0].rstrip()}\n```\n{earlier[1]}\n"
    if note:
        how += f"{note}\n"
    return (f"{task}\n\nFirst, a test that shows the problem. Write one pytest test function that fails now because "
            "of the problem described, and will pass once it is fixed. When the task gives an example (a call and "
            "the result it should have), use exactly that call, and assert the result the task says is right, not "
            "the one it gets now. When the task gives no exact result, assert what it does say (a property it states, "
            "such as a total or an order), not a value you worked out yourself. When the task asks for several "
            "things, the test checks each of them. If the code reads a file, the test writes one first, under "
            "pytest's `tmp_path`. Do not fix anything yet.\n"
            f"{how}Reply with one block, labeled with the test's file:\n```python {path}\n"
            f"from {module} import {name}\n\n\ndef test_the_problem():\n    <call {name} as the task says, and assert "
            "the right result>\n```")


def fix_request(task: str, repro: Repro | None, target: tuple[str, str] | None,
                failed: tuple[str, str] | None = None, *, is_class: bool = False,
                focus: tuple[str, str, str] | None = None, unchanged: bool = False) -> str:
    """``focus``: (path, name, code) of a definition the failing test ran, shown in full as the likely place of the
    fix; ``unchanged``: the last trial gave the code back as it was (Qwen 1.5B did so five times in a row)."""
    if focus is not None:
        header = next((line for line in focus[2].splitlines() if line.lstrip().startswith(("def ", "async def "))),
                      f"def {focus[1].rsplit('.', 1)[-1]}(...):")
        indent = header[:len(header) - len(header.lstrip())]
        where = f"```python {focus[0]}\n{header}\n{indent}    <every line of the corrected definition>\n```"
    elif target is None:
        where = "```python path/to/module.py\ndef the_function(...):\n    <every line of it>\n```"
    elif is_class:
        where = (f"```python {target[0]}\nclass {target[1]}:\n    def the_method(self, ...):\n        <every line of "
                 "the corrected method>\n```\n(the methods you leave out stay as they are)")
    else:
        where = f"```python {target[0]}\ndef {target[1]}(...):\n    <every line of the corrected definition>\n```"
    shown = reproduced(repro)
    if focus is not None:
        shown += (f"\n\nThe failing test ran `{focus[1]}`; the fix may well go here (or in a name it uses):\n"
                  f"```python {focus[0]}\n{focus[2].rstrip()}\n```")
    if unchanged:
        shown += ("\n\nThe last answer gave the code back exactly as it is now, and that code fails the test: "
                  "change the line that makes it fail.")
    shown += earlier_fix(failed)
    return (f"{task}{shown}\n\nFix the code so that the test passes. Reply with the complete corrected definition "
            "(every line of the function or class that must change; change only what the problem needs), in a "
            f"block labeled with its file, for example\n{where}\nDo not change the tests.")


def line_request(task: str, repro: Repro | None, names: Sequence[str], view: str,
                 failed: tuple[str, str] | None = None, *, unchanged: bool = False) -> str:
    """A trial that asks for the wrong line(s) alone (:mod:`tomo.oi.line_fix`), in the failing test's ``names`` of
    one file, shown together: the lab saw Qwen 1.5B, shown `convert`, write the fix of `to_celsius` (the function
    it calls) on a line of `convert`."""
    shown = reproduced(repro)
    if unchanged:
        shown += "\n\nThe last answer changed nothing, and the code as it is fails the test."
    shown += earlier_fix(failed)
    ran = ", ".join(f"`{name}`" for name in names)
    here = "Here it is with its" if len(names) == 1 else "Here they are with their"
    return (f"{task}{shown}\n\nThe failing test ran {ran}. {here} line numbers in the file:\n```\n"
            f"{view}\n```\nA bug like this is most often one wrong line: a comparison, an off-by-one, a wrong "
            "operator or value. First say in one short sentence which line is wrong and why. Then reply with the "
            "corrected line, written as its number, a colon and the whole new line as it must be (more lines only if "
            "they are wrong too), in one block, for example:\n```\n"
            f"{_middle_number(view)}: <the whole corrected line>\n```\n"
            "Do not change the tests.")


def reproduced(repro: Repro | None) -> str:
    """What a trial request shows of the reproduction: the test the model wrote (none when the project's failing
    tests are the reproduction), its failing output, and any second test a fix must pass too."""
    if repro is None:
        return ""
    test = f"```python {repro.path}\n{repro.code.rstrip()}\n```\n" if repro.path else ""
    shown = (f"\n\nThis test reproduces the problem:\n{test}It fails now:\n```\n"
             f"{tail(repro.output, FAILURE_CHARS)}\n```")
    for path, code in repro.guards:
        shown += f"\nA fix must pass this second test too:\n```python {path}\n{code.rstrip()}\n```"
    return shown


def earlier_fix(failed: tuple[str, str] | None) -> str:
    """The last failed trial's diff and what it gave, for the next request."""
    if failed is None:
        return ""
    return (f"\n\nAn earlier fix did not work. It changed:\n```diff\n{failed[0]}\n```\nand then:\n```\n"
            f"{failed[1]}\n```\nWrite a different fix.")


def listed(names: Sequence[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _middle_number(view: str) -> int:
    """A line number of ``view`` for the example (its middle line: the example must not point at the likely bug)."""
    numbers = [int(line.split(":", 1)[0]) for line in view.splitlines()]
    return numbers[len(numbers) // 2]


def fenced(code: str) -> str:
    return f"```python\n{code}```\n"


def tail(text: str, limit: int) -> str:
    """The end of a pytest log (its failures and summary), at most ``limit`` characters."""
    text = text.strip()
    start = text.find("= FAILURES =")
    if start > 0:
        text = text[text.rfind("\n", 0, start) + 1:]
    return text if len(text) <= limit else "…\n" + text[-limit:]
