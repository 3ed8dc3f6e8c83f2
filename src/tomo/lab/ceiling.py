"""The engine ceiling: a perfect model that replays each task's reference solution through tomo's own CLI.

What it reaches is the most any model can reach through that engine and those gates: a task the replay fails is a
broken task (its oracle refuses the reference) or an engine that gets in the way of a correct fix (a gate that
refuses a real verification, an edit that does not land). Either is a bug the ceiling finds before a real model's
score is read against it. The replay writes files the way a capable model does in the oi engine, with one shell
block per step; with ``--repro`` it first adds the reference's tests (or the hidden test, for a task whose reference
adds none) and runs the check red, then the fix, green. Under ``--strategy trials`` it answers the trials' requests
instead: the reproduction a perfect model writes (the reference's test, else the hidden one) in one block labeled
with its file, then each changed file whole in one edit block labeled with it (the oi engine lays in every definition
the block holds); the harness runs the checks.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tomo.lab.suite import Task

NO_SMALL_CHANGE = "no small change of the code"
"""The words only the trials' request for another test holds (``tomo.oi.trial_requests.NO_SMALL_CHANGE``: the lab
sits beside the engines and imports none; a test holds the two equal)."""
RETESTS = 3
"""Answers to that request at most: one more than the trials ask (``tomo.oi.trials.RETESTS``; a test holds it
above), as an answer not asked for is passed over."""

DEFAULT_CHECK = "python -m pytest -q -p no:cacheprovider"


def reference_files(task: Task) -> dict[str, str]:
    """The reference's files that differ from the task's start, by relative path."""
    changed: dict[str, str] = {}
    for path in sorted(task.reference.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(task.reference).as_posix()
        text = path.read_text(encoding="utf-8")
        start = task.repo / rel
        if not start.is_file() or start.read_text(encoding="utf-8") != text:
            changed[rel] = text
    return changed


def is_test(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or "/tests/" in f"/{rel}"


def hidden_tests(task: Task) -> dict[str, str]:
    """The test a perfect model writes to reproduce a task whose reference adds none: the task's own hidden test
    (red before the fix, green after, by construction)."""
    if not task.hidden.is_dir():
        return {}
    return {path.relative_to(task.hidden).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(task.hidden.rglob("test_*.py")) if "_original" not in path.parts}


def write_block(files: dict[str, str], check: str) -> str:
    """A bash block that writes ``files`` whole (quoted heredocs: the text is never expanded) and runs the check."""
    lines = ["I will write the change and run the project's check.", "", "```bash"]
    for rel, text in files.items():
        marker = _marker(text)
        parent = rel.rpartition("/")[0]
        if parent:
            lines.append(f"mkdir -p {shlex.quote(parent)}")
        lines.append(f"cat > {shlex.quote(rel)} <<'{marker}'")
        lines.append(text.rstrip("\n"))
        lines.append(marker)
    lines += [check, "```"]
    return "\n".join(lines)


def _marker(text: str) -> str:
    marker, n = "TOMO_REFERENCE_EOF", 0
    while marker in text:
        n += 1
        marker = f"TOMO_REFERENCE_EOF_{n}"
    return marker


def option(flags: list[str], name: str) -> str | None:
    """The value a variant gives option ``name`` (``--check CMD`` or ``--check=CMD``), or None."""
    for i, flag in enumerate(flags):
        if flag == name and i + 1 < len(flags):
            return flags[i + 1]
        if flag.startswith(name + "="):
            return flag.partition("=")[2]
    return None


def _check_of(task: Task, flags: list[str]) -> str:
    given = option(flags, "--check")
    return given if given not in (None, "auto") else task.check or DEFAULT_CHECK


def _wants_red_first(flags: list[str]) -> bool:
    """--repro keeps the turn open for a failing check before the fix; --claim repro makes it the price of the claim."""
    return "--repro" in flags or option(flags, "--claim") == "repro"


def trial_replies(task: Task) -> list[tuple[str, str]]:
    """The replies to a trial turn's requests, each with the words only its request holds ('' for any request): a
    reproduction (a test the reference adds, else the hidden one; none when the visible check already fails, as none
    is asked for), the same test again for each request for another test (asked only when no one-token change passed
    it), then every other changed file as edit blocks, then the reproduction again as the second test tomo asks for
    after a fix passed. When tomo writes the task's own
    examples as the reproduction it asks for none, and the reference's test comes as a first trial that fails: one
    round more, the same verdict (the lab cannot ask tomo which it will do without importing the engine). So too for a
    feature with no example of its own, for which tomo asks no test (:mod:`tomo.oi.feature`): the reference's test
    comes as a first trial, which lacks the new name and is put back, and the turn ends `unverified`."""
    files = reference_files(task)
    tests = {rel: text for rel, text in files.items() if is_test(rel) and not (task.repo / rel).exists()}
    tests = tests or hidden_tests(task)
    steps: list[tuple[str, str]] = []
    shown = ""
    if not task.visible_fails and tests:
        shown, text = next(iter(tests.items()))
        test = f"The test that shows the problem:\n\n```python {shown}\n{text.rstrip()}\n```"
        steps += [(test, ""), *[(test, NO_SMALL_CHANGE)] * RETESTS]
    fix = {rel: text for rel, text in files.items() if rel != shown}  # an existing test a feature changes, too
    steps.append(("The fix:\n\n" + "\n\n".join(f"```python {rel}\n{text.rstrip()}\n```" for rel, text in fix.items()),
                  ""))
    if tests:  # the second test tomo asks for after a pass: the reference's (or the hidden) test again
        rel, text = next(iter(tests.items()))
        steps.append((f"Another test of the task:\n\n```python {rel}\n{text.rstrip()}\n```", ""))
    return steps


def replies(task: Task, flags: list[str]) -> list[dict[str, object]]:
    if option(flags, "--strategy") == "trials":
        return [{"content": text, "finish": "stop", **({"when": when} if when else {})}
                for text, when in trial_replies(task)]
    files = reference_files(task)
    check = _check_of(task, flags)
    tests = {rel: text for rel, text in files.items() if is_test(rel)}
    rest = {rel: text for rel, text in files.items() if rel not in tests}
    steps: list[str] = []
    if _wants_red_first(flags) and rest:
        tests = tests or hidden_tests(task)
        steps += [write_block(tests, check), write_block(rest, check)]
    else:
        steps.append(write_block(files, check))
    steps.append("Done: the change is in place and the project's check passes.")
    return [{"content": text, "finish": "stop"} for text in steps]


def write_script(task: Task, flags: list[str], where: Path) -> Path:
    """The scripted model's file (``scripted:PATH``), outside the copy the model works on."""
    where.write_text(json.dumps({"replies": replies(task, flags)}, indent=1), encoding="utf-8")
    return where
