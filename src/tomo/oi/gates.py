"""When may a turn that edited code end? The exec gate and the repro gate, decided from evidence, not from words.

Every block a turn runs becomes a :class:`Check`: what it changed (content hashes before and after), how its shell
text classifies (:mod:`tomo.oi.classify`), its exit status, and -- for Python, measured by the site hook
(``_sitehook.py``) -- which changed lines ran and which workspace files had code run at all.

**Exec gate.** A turn that changed code may end only when its last check (the last block after the last code change
that was not neutral: ``ls``, ``git diff`` or a Python block that ran none of the workspace's code do not count) came
back green, with its exit status its own (not masked by ``; echo`` or ``|| true``), and executed the change: for each
changed Python file (outside tests, or the test files when only tests changed), at least one changed line that can
run did run -- a changed line inside a function body when the change touches one, so importing the module is not
enough; for other code files, the check was an executing command (a test runner, the program), not a compiler, type
checker or linter.

**Repro gate.** A turn that changed code outside tests (the fix) may end only when an executing check came back red
before the fix's first edit, and -- when the fix is in Python -- that red check ran code in a file the fix changed.
A fix reverted to the turn's start is no fix: the next edit starts it again, so "revert, reproduce, fix" works. A red
check that ran while an earlier fix was in place shows that fix's fault, not the problem, so it never counts.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import shutil
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tomo.events import Event, GateBlocked
from tomo.oi.classify import BlockClass, Kind, classify_block, classify_command
from tomo.oi.workspace import SKIP_DIRS, Scanner, Snapshot, changed_lines, language_of

__all__ = ["Check", "GateVerdict", "TurnGates", "classify_block", "classify_command", "is_test_path"]

HOOK_SOURCE = Path(__file__).with_name("_sitehook.py")
STATE_DIR = ".tomo/oi"

_TEST_NAME = re.compile(r"(^test_.*\.py$|.*_test\.py$|^conftest\.py$|.*_test\.go$|.*\.(test|spec)\.[cm]?[jt]sx?$)")
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})


def is_test_path(path: str) -> bool:
    """Tests by the usual conventions: a tests/ directory, test_*.py, *_test.go, *.test.ts, conftest.py."""
    parts = path.split("/")
    return bool(_TEST_NAME.match(parts[-1])) or any(p in _TEST_DIRS for p in parts[:-1])


@dataclass(slots=True)
class Check:
    """One block as evidence. ``lines`` and ``ran`` come from the site hook (relative paths); ``traced`` says
    whether any Python reported under the hook at all."""

    number: int
    runner: str
    code: str
    kind: Kind
    exit_code: int
    conclusive: bool = True
    timed_out: bool = False
    interrupted: bool = False
    changed: list[str] = field(default_factory=list)
    lines: dict[str, set[int]] = field(default_factory=dict)
    ran: set[str] = field(default_factory=set)
    traced: bool = False
    fixing: bool = False  # code outside tests differed from the turn's start when it ran: a red then shows that code

    @property
    def green(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.interrupted

    @property
    def red(self) -> bool:
        """A real failure: not a timeout, an interrupt, a missing program (127) or one that could not run (126)."""
        return self.exit_code not in (0, 124, 126, 127) and not self.timed_out and not self.interrupted

    @property
    def changed_code(self) -> list[str]:
        return [p for p in self.changed if language_of(p) is not None]


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """One gate's state. ``on`` False: the gate was not asked for (``satisfied`` is then None)."""

    on: bool
    satisfied: bool | None
    reason: str
    refusals: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"on": self.on, "satisfied": self.satisfied, "reason": self.reason, "refusals": self.refusals}


class TurnGates:
    """The evidence of one turn and the gates' verdicts on it. ``measure`` installs the site hook for each block."""

    def __init__(self, root: Path, *, exec_gate: bool, repro: bool, measure: bool = True,
                 claim_repro: bool = False) -> None:
        self.root = root
        self.exec_gate = exec_gate
        self.repro = repro
        self.claim_repro = claim_repro  # --claim repro: "verified" also needs the repro gate's evidence
        self._measure = measure
        self.scanner = Scanner(root)
        self.baseline: Snapshot = Snapshot()
        self.current: Snapshot = Snapshot()
        self.checks: list[Check] = []
        self.first_fix: int | None = None  # the first check of the current fix (code outside tests changed)
        self.refusals = {"exec": 0, "repro": 0}
        self.watch_also: list[str] = []  # files whose executed lines the next blocks record too (trials' suspects)
        self.doubts: list[str] = []  # what the harness found the evidence does not cover: no "verified" while any
        self._trace_root = root / STATE_DIR / "trace"
        self._hook_dir = root / STATE_DIR / "hook"

    @property
    def measure(self) -> bool:
        """Evidence is measured on every turn, gates or not: "verified" is never said without it."""
        return self._measure or self.exec_gate or self.repro

    # ---- the turn ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        self.baseline = self.scanner.snapshot(keep_code=True)
        self.current = self.baseline
        if self.measure:
            self._hook_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HOOK_SOURCE, self._hook_dir / "sitecustomize.py")
            shutil.rmtree(self._trace_root, ignore_errors=True)

    def prepare(self, number: int) -> dict[str, str]:
        """Before block ``number``: the environment that turns the hook on, with the files to watch (empty when the
        gates are off)."""
        if not self.measure:
            return {}
        trace = self._trace_root / str(number)
        shutil.rmtree(trace, ignore_errors=True)
        trace.mkdir(parents=True)
        watched = [str(self.root / p) for p in dict.fromkeys([*self.changed_python(), *self.watch_also])]
        (trace / "watch.json").write_text(json.dumps({"root": str(self.root), "files": watched,
                                                      "skip_dirs": sorted(SKIP_DIRS)}), encoding="utf-8")
        return {"TOMO_OI_TRACE": str(trace), "PYTHONPATH": str(self._hook_dir)}

    def record(self, number: int, runner: str, code: str, exit_code: int, *, timed_out: bool = False,
               interrupted: bool = False, kind: Kind | None = None) -> Check:
        """After block ``number``: what it changed, what it was, what it ran. ``kind`` overrides the classifier (an
        editing tool call is neutral: a change, not a check)."""
        after = self.scanner.snapshot()
        changed = after.changed_since(self.current)
        self.current = after
        if kind is not None:
            klass = BlockClass(kind, kind != "neutral")
        else:
            klass = BlockClass("executing", True) if runner == "python" else classify_block(code)
        check = Check(number, runner, code, klass.kind, exit_code, conclusive=klass.conclusive, timed_out=timed_out,
                      interrupted=interrupted, changed=changed)
        if self.measure:
            self._read_traces(self._trace_root / str(number), check)
            if runner == "python" and check.traced and not check.ran and not changed:
                check.kind = "neutral"  # it ran none of the workspace's code and changed nothing: it only looked
        check.fixing = any(not is_test_path(p) for p in self.changed_code())
        if not check.fixing:
            self.first_fix = None  # no fix (any more): a fix reverted to the start is no fix, so a red may come first
        elif self.first_fix is None and any(not is_test_path(p) for p in check.changed_code):
            self.first_fix = number
        self.checks.append(check)
        return check

    def set_aside(self, check: Check) -> None:
        """``check`` shows nothing about the code (a reproduction test tomo found failing by its own mistake: a name it
        never imported): it stays in the record as a neutral block, never as evidence."""
        check.kind, check.conclusive = "neutral", False

    def restorable(self, paths: Sequence[str]) -> bool:
        """Whether every path can be put back byte for byte: the turn's start kept its bytes (a code file), or had no
        such file."""
        base = self.baseline
        return all(p in base.contents or p not in base.hashes for p in paths)

    def put_back(self, paths: Sequence[str]) -> list[str]:
        """``paths`` as the turn's start had them: the kept bytes written back, a file the turn added removed.
        Returns the paths it could not put back (files the start had but did not keep: they are not code)."""
        base, left = self.baseline, []
        for rel in paths:
            full = self.root / rel
            if rel in base.contents:
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_bytes(base.contents[rel])
            elif rel not in base.hashes:
                full.unlink(missing_ok=True)
            else:
                left.append(rel)
        return left

    def files_changed(self) -> list[str]:
        """Every file that differs from the turn's start (code or not)."""
        return self.current.changed_since(self.baseline)

    def changed_code(self) -> list[str]:
        return [p for p in self.files_changed() if language_of(p) is not None]

    def changed_python(self) -> list[str]:
        return [p for p in self.changed_code() if p.endswith(".py") and p in self.current.hashes]

    # ---- verdicts ---------------------------------------------------------------------------------------------

    def verdicts(self) -> dict[str, GateVerdict]:
        return {"exec": self._exec_verdict(), "repro": self._repro_verdict()}

    def evidence(self) -> GateVerdict:
        """The exec gate's test, asked of every turn: did a passing check execute the changed code? Unlike the gate,
        a turn that changed no code has no evidence (there is nothing to verify)."""
        if not self.changed_code():
            changed = self.files_changed()
            return GateVerdict(True, False, "no file changed" if not changed else
                               f"only files that are not code changed ({_names(changed)}): there is nothing to run")
        ok, reason = self.exec_evidence()
        if ok and self.doubts:
            return GateVerdict(True, False, f"{reason}, but " + "; ".join(self.doubts))
        if ok and self.claim_repro:
            reproduced, why = self.repro_evidence()
            if not reproduced:
                return GateVerdict(True, False, f"{reason}, but --claim repro also asks for a failing check before "
                                                f"the fix: {why}")
        return GateVerdict(True, ok, reason)

    def unsatisfied(self) -> list[tuple[str, str]]:
        """The gates that are on and would keep the turn open, with what is missing."""
        return [(name, v.reason) for name, v in self.verdicts().items() if v.on and not v.satisfied]

    def refuse(self, missing: Sequence[tuple[str, str]], emit: Callable[[Event], None]) -> None:
        """The model tried to end the turn with ``missing`` unsatisfied: count it against each gate and say it."""
        for name, reason in missing:
            self.refusals[name] += 1
            emit(GateBlocked(name, reason))

    def _exec_verdict(self) -> GateVerdict:
        on, refusals = self.exec_gate, self.refusals["exec"]
        if not on:
            return GateVerdict(False, None, "off", refusals)
        ok, reason = self.exec_evidence()
        return GateVerdict(True, ok, reason, refusals)

    def _repro_verdict(self) -> GateVerdict:
        on, refusals = self.repro, self.refusals["repro"]
        if not on:
            return GateVerdict(False, None, "off", refusals)
        ok, reason = self.repro_evidence()
        return GateVerdict(True, ok, reason, refusals)

    def unchecked(self) -> bool:
        """Code changed in this turn and no check (a block that is not neutral) ran after the last change."""
        if not self.changed_code():
            return False
        last_change = max((c.number for c in self.checks if c.changed_code), default=0)
        return not any(c.number > last_change and c.kind != "neutral" for c in self.checks)

    def exec_evidence(self) -> tuple[bool, str]:
        changed = self.changed_code()
        if not changed:
            return True, "no code changed in this turn"
        last_change = max((c.number for c in self.checks if c.changed_code), default=0)
        after = [c for c in self.checks if c.number > last_change and c.kind != "neutral"]
        if not after:
            last = next(c for c in self.checks if c.number == last_change)
            return False, (f"the code changed in block {last_change} ({_names(last.changed_code)}) and no check ran "
                           "after that; run the tests (or the program) that exercise the change, in a block of its "
                           "own, and make them pass")
        last = after[-1]
        where = f"the last check (block {last.number})"
        if last.timed_out:
            return False, f"{where} timed out; run a check that finishes"
        if last.interrupted:
            return False, f"{where} was interrupted; run it again to the end"
        if not last.conclusive:
            return False, (f"{where}'s exit status is not its check's (the check is followed by other commands, "
                           "`|| ...`, or a pipe without `set -o pipefail`); run the check as the block's last command")
        if not last.green:
            return False, f"{where} failed (exit {last.exit_code}); fix the code or the test until it passes"
        missing = self._not_executed(last)
        if missing:
            return False, f"{where} passed but did not execute the change: " + "; ".join(missing)
        return True, f"{where} passed and executed the changed code"

    def _not_executed(self, check: Check) -> list[str]:
        changed = self.changed_code()
        outside = [p for p in changed if not is_test_path(p)]
        required = outside or changed
        missing: list[str] = []
        other = [p for p in required if not p.endswith(".py")]
        if other and check.kind != "executing":
            only = check.kind.replace("-", " ")
            missing.append(f"{_names(other)} changed, and `{_first_line(check.code)}` only {only} checks; run its "
                           "tests or the program itself")
        for path in (p for p in required if p.endswith(".py") and p in self.current.hashes):
            wanted, why = self.required_lines(path)
            if not wanted:
                continue
            ran = check.lines.get(path, set())
            if not ran & wanted:
                if not check.traced:
                    how = ("no Python ran under tomo's measuring hook (parse-only tools, `python -I` and `-E` do not "
                           "count)")
                elif path in check.ran:
                    how = "the module was loaded but none of its changed lines ran"
                else:
                    how = "the module was never loaded"
                missing.append(f"{path}: no changed line ran ({_ranges(wanted)}{why}; {how})")
        return missing

    def required_lines(self, path: str) -> tuple[set[int], str]:
        """The changed lines of ``path`` a check must reach at least one of: those inside function bodies when the
        change touches one (importing the module runs only its top level), else every changed line that can run."""
        full = self.root / path
        try:
            new = full.read_bytes()
        except OSError:
            return set(), ""
        old = self.baseline.contents.get(path)  # None for a new file, or one too large to keep: all lines changed
        changed = changed_lines(old, new)
        try:
            source = new.decode("utf-8", "replace")
            tree = ast.parse(source)
            code = compile(tree, path, "exec")
        except (SyntaxError, ValueError):
            return changed, ", and the file does not parse, so nothing in it can run"
        runnable = _code_lines(code) & changed
        in_functions = runnable & _function_body_lines(tree)
        if in_functions:
            return in_functions, ", in function bodies"
        return runnable, ""

    def repro_evidence(self) -> tuple[bool, str]:
        fix_files = [p for p in self.changed_code() if not is_test_path(p)]
        if not fix_files:
            return True, "no code outside tests changed in this turn (no fix to reproduce)"
        first_fix = self.first_fix if self.first_fix is not None else 0
        # a red under an earlier, reverted fix showed that fix's fault, not the problem
        before = [c for c in self.checks if c.number < first_fix and not c.fixing]
        python_fix = [p for p in fix_files if p.endswith(".py")]
        for check in reversed(before):
            if not (check.red and check.conclusive and check.kind == "executing"):
                continue
            if python_fix and not set(python_fix) & check.ran:
                continue
            return True, f"block {check.number} failed (exit {check.exit_code}) before the fix, in block {first_fix}"
        reds = [c for c in before if c.red and c.conclusive and c.kind == "executing"]
        if reds and python_fix:
            return False, (f"the checks that failed before the fix (block {', '.join(str(c.number) for c in reds)}) "
                           f"never ran {_names(python_fix)}; a reproduction must fail in the code the fix changes")
        return False, (f"the fix ({_names(fix_files)}, first changed in block {first_fix}) was not preceded by a "
                       "failing check; reproduce the problem first: revert the fix, run a test that fails because of "
                       "it, then fix it and run the test again")

    # ---- traces -----------------------------------------------------------------------------------------------

    def _read_traces(self, trace: Path, check: Check) -> None:
        root = str(self.root).rstrip("/") + "/"
        try:
            names = sorted(os.listdir(trace))
        except OSError:
            return
        for name in names:
            if not (name.startswith("trace-") and name.endswith(".json")):
                continue
            try:
                data = json.loads((trace / name).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            check.traced = True
            for full, numbers in data.get("lines", {}).items():
                if full.startswith(root):
                    check.lines.setdefault(full[len(root):], set()).update(int(n) for n in numbers)
            check.ran.update(full[len(root):] for full in data.get("ran", []) if full.startswith(root))
        shutil.rmtree(trace, ignore_errors=True)

    def close(self) -> None:
        """Removes the hook and any trace left behind (the workspace keeps only sessions under .tomo/)."""
        shutil.rmtree(self.root / STATE_DIR / "trace", ignore_errors=True)
        shutil.rmtree(self._hook_dir, ignore_errors=True)
        with contextlib.suppress(OSError):  # leave no empty .tomo/oi behind
            (self.root / STATE_DIR).rmdir()


def _code_lines(code: types.CodeType) -> set[int]:
    lines = {line for _s, _e, line in code.co_lines() if line is not None}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            lines |= _code_lines(const)
    return lines


def _function_body_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            start = node.body[0].lineno
            lines.update(range(start, (node.end_lineno or start) + 1))
        elif isinstance(node, ast.Lambda):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _names(paths: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _ranges(lines: set[int]) -> str:
    ordered = sorted(lines)
    spans: list[str] = []
    start = prev = ordered[0]
    for n in [*ordered[1:], 0]:
        if n == prev + 1:
            prev = n
            continue
        spans.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = n
    return ("line " if len(ordered) == 1 else "lines ") + ", ".join(spans[:6]) + (" ..." if len(spans) > 6 else "")


def _first_line(code: str) -> str:
    line = next((ln.strip() for ln in code.splitlines() if ln.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


Verdicts = dict[str, GateVerdict]
GateName = Literal["exec", "repro"]
