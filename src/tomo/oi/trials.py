"""Trials: reproduce once, then try fixes, each from the task alone and each judged by the reproduction.

Why a second way to run a turn: in the lab (issue 27) Qwen2.5-Coder 1.5B held no conversation. After a failed check
it re-sent its own earlier reply, even when sampled hot, and a turn's later rounds were copies of its first. What it
did do, from a short fresh request, was write one small thing right some of the time. So a trial turn asks small,
fresh questions and lets the harness judge each answer:

1. **Reproduce.** The model writes one pytest test that should fail because of the problem (the task's own example,
   when it gives one). tomo writes it to a file of its choosing, adds the imports it used without writing them, and
   runs it. It is kept only when it fails in a test (exit 1), not by its own mistake (a name nothing defines);
   otherwise it is removed, and the next request shows it with the verdict ("it passes, so it asserts what the code
   does now"). A project whose check already fails at the start has its reproduction: its failing tests.
2. **Try.** Each trial is one request: the task, the context pack, the test and its failure, and at most the last
   failed trial's diff with what it gave (never a conversation to copy from). tomo lays the edit in and runs the
   test, then the project's check. The request shows in full one definition the failing test ran (its suspects,
   :mod:`tomo.oi.suspects`), the next trial the next one, and every second round over them asks for the wrong line
   alone (:mod:`tomo.oi.line_fix`). The first trial whose check is green and ran the changed code ends the turn.
   Otherwise every file it changed is put back byte for byte and the next trial is sampled hotter. A trial that
   writes what an earlier one wrote is not run again.
3. **Check twice.** After a trial passed, a second test asked afresh must pass on the fix too; if it fails, the fix
   is put back and both tests judge the next trials.

Every run is a block the gates measure, as in a conversation turn, so "verified" means what it always means: the
test failed before the fix, and a passing check executed the changed code. A turn whose trials all fail leaves the
files as it found them (the reproduction test removed too). The model's own commands are never run here: its only
job in a trial is the edit.

What the model reads is :mod:`tomo.oi.trial_requests`; what makes its test a reproduction, :mod:`tomo.oi.repro_checks`;
what a feature trial's change gets wrong before anything runs, :func:`tomo.oi.feature.half_written`.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import re
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from tomo.errors import ModelError
from tomo.events import (
    AssistantSaid,
    BlockOutput,
    LimitReached,
    ModelCalled,
    ModelThinking,
    Notice,
    NullSink,
    ReproductionKept,
    Sink,
)
from tomo.models.base import at_temperature
from tomo.models.messages import Message, Reply
from tomo.oi.adds_up import adds_up_test, says_adds_up
from tomo.oi.blocks import Block, extract
from tomo.oi.context_pack import constant_spans, module_constants
from tomo.oi.engine import AGENT, BROKEN_REPLY, Engine, TurnSummary, end_turn
from tomo.oi.feature import (
    BUILTINS,
    CALL,
    Fault,
    Widening,
    asked_for,
    by_keyword,
    completions,
    feature_request,
    half_written,
    missing,
    module_of,
    shown,
    touched,
    widened,
    without,
)
from tomo.oi.gates import Check, TurnGates, is_test_path
from tomo.oi.left_alone import left_alone_test, says_left_alone
from tomo.oi.line_fix import numbered_view, reply_fix, spans_of
from tomo.oi.mutants import MAX_MUTANTS, Mutant, mutants
from tomo.oi.project_tests import (
    ProjectTest,
    example_calling,
    fixtures_for_none,
    missing_fixtures,
    missing_helpers,
    read_tests,
    with_pytest_fixtures,
)
from tomo.oi.prompts import system_prompt
from tomo.oi.reported_value import asserts_reported, reported_value_test, reported_values
from tomo.oi.repro_checks import (
    IDENTIFIER,
    MISSING_NAME,
    PASSES,
    bindings,
    defined_names,
    first_python,
    has_ellipsis,
    imports_in_tests,
    imports_of,
    not_a_test,
    not_failing_by_the_problem,
    past_the_crash,
    placeholder_path,
    refused_input,
    repeated_calls,
    unbound,
)
from tomo.oi.shared_default import says_shared, shared_default_test
from tomo.oi.stated import Example, as_stated, reported_examples, stated_examples, stated_test
from tomo.oi.suspects import Definition, definitions, suspects
from tomo.oi.trial_requests import (
    ANOTHER_TEST,
    FAILURE_CHARS,
    Repro,
    earlier_fix,
    fenced,
    fix_request,
    line_request,
    listed,
    reproduce_request,
    reproduced,
    tail,
)

REPRO_TRIES = 3
"""Requests for a reproduction before the trials go on without one (judged by the project's check alone)."""
HEAT_STEP = 0.2
"""How much hotter each trial in a row that tried nothing new is sampled than the retry temperature."""
MAX_HEAT = 1.2
"""The hottest a trial is sampled: hotter, a 1.5B model's code stops parsing more often than it changes."""
LINE_SAMPLES = 3
"""Replies to one line-form request at most, while they change nothing new (:meth:`Trials._line_trial`)."""
DIFF_LINES = 40
"""The longest diff of a failed trial the next one reads."""
RETESTS = 2
"""Other tests of the problem asked, each judging a search of its own, when the search finds nothing against the
model's first test (:meth:`Trials._search_again`)."""
REPRO_NAME = "test_tomo_repro.py"
TRIAL_REPLY_TOKENS = 2048
"""One trial reply's cap. Measured (Qwen 1.5B, 402 model replies in the lab's transcripts): median 127 tokens, 99th
percentile 1,288, the longest below the cap 1,595; two replies ran to the engine's 4,096 in a loop (497 s and 590 s
on 2 cores, more than half a task's budget) and changed nothing."""


STRATEGIES = ("conversation", "trials")
"""How ``tomo run`` runs a turn: :meth:`Engine.turn` (one conversation, the default), or :func:`trial_turn`."""


def runs_pytest(check: str | None) -> bool:
    """Trials write a pytest test, so the project's check must be a pytest run."""
    return bool(check) and re.search(r"(^|\s|/)(pytest|py\.test)(\s|$)", check or "") is not None


class _TestContext(NamedTuple):
    tests: list[ProjectTest]  # the project's tests, read with ast
    imports: list[str]  # how they import the code
    called: list[str]  # the project's functions the task calls
    subject: tuple[str, str] | None  # (module, name) the example imports and calls
    example: str  # the project's shortest test that calls it


class Trials:
    """One trial turn (see the module). Built per turn by :func:`trial_turn`."""

    def __init__(self, engine: Engine, summary: TurnSummary, gates: TurnGates, emit: Callable[[Any], None],
                 user: str = "", *, mutate: bool = False, textbook: bool = False) -> None:
        self.engine = engine
        self.mutate = mutate  # try one-token changes of what the failing test ran before asking for fixes
        self.textbook = textbook  # and the textbook's swaps after the lab's own kinds (tomo.oi.mutants, tier 1 and 2)
        self.user = user  # the task as the user wrote it (without the context pack)
        self.summary = summary
        self.gates = gates
        self.emit = emit
        self.seen: set[str] = set()
        self.rejected: tuple[str, str] | None = None  # the last test that was no reproduction, and why
        self.failed: tuple[str, str] | None = None  # the last trial that failed: its diff, and the failure
        self.messages: list[Message] = []  # the last exchange: what the session keeps
        self.suspects: list[Definition] = []  # what the failing test ran, in the order trials focus on them
        self.ran: dict[str, set[int]] = {}  # the lines of each project file the failing test ran
        self.tried = 0  # trials asked so far (the next one's place in the suspects' rotation)
        self.same = False  # the last trial gave the code back as it was
        self.stale = 0  # trials in a row that tried nothing new (no edit, the code unchanged, or an earlier fix)
        self.repeats = 0  # trials of the whole turn that tried nothing new (they keep later trials a step hotter)
        self.named: list[tuple[str, str]] = []  # the definitions the task names: a passing fix should run them
        self.since = 0  # the first block of the current trial
        self.lines: set[str] = set()  # the edit blocks line-form trials laid in so far
        self.asked: list[str] = []  # the names a feature task asks to add (tomo.oi.feature); [] for a fix
        self.held: dict[str, bytes] = {}  # files a failed feature trial left laid in for the next (_holdable)
        self.unread: list[tuple[str, Fault]] = []  # the last trial's parameter nothing reads, which tomo can finish
        self.widen: list[Widening] = []  # the last trial's keywords passed on to a function that lacks them
        self.aside: dict[str, list[str]] = {}  # the last trial's other functions at fault, laid back to finish it
        # its own system prompt: the conversation's ("run the tests in a bash block") is wrong here, and the lab saw
        # Qwen 1.5B answer a trial with a bash block, and once with the conversation prompt itself
        self.system = system_prompt(base="trials")

    # ---- the turn ---------------------------------------------------------------------------------------------

    async def run(self, task: str, baseline: set[str] | None) -> None:
        self.asked = asked_for(self.user, self._sources())
        if self.asked:
            self.emit(Notice("info", f"a feature: the task asks for {listed(self.asked)}, which the code does not "
                                     "have yet. tomo shows the files it touches and asks for the whole change at "
                                     "once; each trial must add every one of them"))
        repro = await self._reproduce(task, baseline)
        if repro is None:
            self.emit(Notice("warning", "no reproduction: the trials are judged by the project's check alone, so "
                                        "tomo cannot say the problem was reproduced"))
        if repro is not None and repro.path:  # the model's own test: what it runs is checked against the task
            self.named = self._named()
            self.gates.watch_also = sorted({path for path, _name in self.named})
        if self.mutate and repro is not None and (await self._search(task, repro)
                                                  or await self._search_again(task, repro)):
            self._passed()
            return
        while self._rounds_left(repro):
            if self.engine.ended:
                raise _Interrupted
            if await self._trial(task, repro) and await self._confirmed(task, repro):
                if self.asked and repro is None:  # a red check of a trial put back is no reproduction of it
                    self._doubt("a feature with no reproduction: no test of it failed before the change")
                if repro is not None and repro.by == "reported":
                    self._doubt("the reproduction only asserts that the result the task reports as wrong is gone, "
                                "not what is right")
                self._passed()
                return
        self.summary.ended_by = "rounds"
        self.emit(LimitReached(AGENT, "rounds", self.engine.max_rounds))
        self.release()
        written = [*([repro.path] if repro.path else []), *(path for path, _code in repro.guards)] if repro else []
        if written:  # no fix passed: the turn leaves the files as it found them
            for path in written:
                (self.engine.root / path).unlink(missing_ok=True)
            self._record_restore()
            self.emit(Notice("info", f"no trial made the reproduction pass: {', '.join(written)} removed, every file "
                                     "is as the turn found it"))

    def _passed(self) -> None:
        """A fix passed: the turn ends, unverified when a definition the task names never ran green."""
        self.summary.ended_by = "model"
        missing = self._uncovered(self.since)
        if missing:
            self._doubt(f"the task names {', '.join(missing)}, which no passing test ran, so the change is not shown "
                        "to do what the task asks there")

    def _doubt(self, doubt: str) -> None:
        self.gates.doubts.append(doubt)
        self.emit(Notice("warning", f"{doubt}: the turn stays unverified"))

    async def _stated(self, path: str) -> Repro | None:
        """The task's own examples (a call and what it should give) as the reproduction, when they fail now by the
        problem: no round spent, and no expected value for a model to get wrong. None: the model writes one."""
        by = "task"
        examples = self._runnable(stated_examples(self.user))
        if not examples:  # else a result the task reports as wrong, which says less (tomo.oi.stated)
            by, examples = "reported", self._runnable(reported_examples(self.user))
        if not examples:
            return None
        code, why = self._prepared(fenced(stated_test(examples)))
        if not why:
            repro, why, _output = await self._run_as_reproduction(path, code, by_model=False)
            if repro is not None:
                repro.by = by
                self.emit(ReproductionKept(path, code, by))
                said = "; ".join(f"`{e.call}` should {'no longer ' if e.differs else ''}give `{e.expected}`"
                                 for e in examples)
                self.emit(Notice("info", f"reproduction kept: the task's own examples ({said}) fail before any fix; "
                                         f"tomo wrote them as {path}"))
                return repro
        self.emit(Notice("info", f"the task's own examples are no reproduction ({why}): the model writes one"))
        return None

    def _runnable(self, examples: Sequence[Example]) -> list[Example]:
        """The examples whose test tomo can write (each alone: one on an undefined object drops only itself)."""
        return [e for e in examples if not self._prepared(fenced(stated_test([e])), quiet=True)[1]]

    async def _run_as_reproduction(self, path: str, code: str, *,
                                   by_model: bool = True) -> tuple[Repro | None, str, str]:
        """Runs ``code`` as the test at ``path``: the reproduction when it fails by the problem; else it is removed
        and its run set aside (it showed nothing about the code). Also why not, and its output. A model's test may
        not fail by an input the code refuses; the task's own examples may (the refusal is what it reports)."""
        command = self._write_test(path, code)
        output = await self._watched(command)
        last = self.gates.checks[-1]
        why = not_failing_by_the_problem(last.exit_code, output, self.user, refusals=by_model)
        if not why and by_model:
            why = past_the_crash(self.user, self.engine.root, last.lines, output)
        if why:
            self.gates.set_aside(last)
            (self.engine.root / path).unlink(missing_ok=True)
            self._record_restore()
            return None, why, output
        self.messages.append(Message.user(output))
        repro = Repro(command, output, path, code)
        self._localise(repro)
        return repro, "", output

    @property
    def _check(self) -> str:
        """The project's check: :func:`trial_turn` runs trials only with a pytest one."""
        assert self.engine.check is not None
        return self.engine.check

    async def _reproduce(self, task: str, baseline: set[str] | None) -> Repro | None:
        check = self._check
        if baseline:  # the project already ships a failing test: that is the reproduction
            command = f"{check} {' '.join(shlex.quote(t) for t in sorted(baseline))}"  # those tests alone
            output = await self._watched(command)
            if self.gates.checks[-1].exit_code != 1:  # the ids did not select them (another rootdir): the whole check
                command, output = check, await self._watched(check)
            self.emit(Notice("info", f"the project's check already fails ({', '.join(sorted(baseline)[:3])}): it is "
                                     "the reproduction the trials must make pass"))
            repro = Repro(command, output, code=self._test_sources(sorted(baseline)), by="project")
            self._localise(repro)
            return repro
        path = self._repro_path()
        stated = await self._stated(path)
        if stated is not None:
            return stated
        if self.asked:  # the lab's tests of a feature tested something else (tomo.oi.feature)
            self.emit(Notice("info", "tomo asks the model for no test of a feature (in the lab its tests of a feature "
                                     "tested something else): the trials are judged by the project's check"))
            return None
        for attempt in range(REPRO_TRIES):
            if not self._room_for_a_test():
                return None
            kept = await self._model_test(task, path, self.rejected, hot=attempt > 0)
            if kept is not None:
                return kept
        return None

    async def _model_test(self, task: str, path: str, earlier: tuple[str, str] | None, *,
                          hot: bool, note: str = "") -> Repro | None:
        """One request for the model's test, repaired and run: the reproduction, or None (``self.rejected`` then
        holds the test and why it is none, for the next request)."""
        reply = await self._ask(self._test_request(task, path, earlier, note), hot=hot)
        code, why = self._prepared(reply.message.content)
        if why:
            self.emit(Notice("info", f"not a reproduction: {why}"))
            self._said(f"[tomo: not a reproduction: {why}.]")
            self.rejected = (code, f"It is not a reproduction: {why}. Write a better one.") if code.strip() else None
            return None
        kept = (await self._adds_up(path, code) or await self._left_alone(path, code)
                or await self._reported_value(path, code))
        if kept is not None:
            return kept
        kept, why, output = await self._run_as_reproduction(path, code)
        if kept is not None:
            self.emit(ReproductionKept(path, code, "model"))
            self.emit(Notice("info", f"reproduction kept: {path} fails before any fix"))
            return kept
        if why == PASSES:
            kept = await self._shared_default(path, code)
            if kept is not None:
                return kept
        self.rejected = (code, _rejection(why, output) + " Write a better one.")
        self.emit(Notice("info", f"not a reproduction: {why}; {path} removed"))
        self._said(f"{output}\n[tomo: not a reproduction: {why}; {path} removed.]")
        return None

    async def _adds_up(self, path: str, code: str) -> Repro | None:
        """When the task says the parts add up to a whole and the model expected parts that do not: the model's call
        asserted to give parts that do (:mod:`tomo.oi.adds_up`), kept when it fails now; else None (the model's own
        test is tried). It counts as the model's test: its arguments are the model's."""
        test = adds_up_test(code) if says_adds_up(self.user) else None
        return await self._built_test(
            path, test, "asserted to give parts that add up to the whole", ": its own test is tried",
            f"the task says the parts add up to the whole and the model expected parts that do not; tomo wrote {path} "
            "from the model's call, asserting they do", judge="a test tomo built on the model's call (the task's "
                                                              "property, but the model's arguments)")

    async def _left_alone(self, path: str, code: str) -> Repro | None:
        """When the task says a call leaves what it is given alone: the model's test turned into a test of that
        (:mod:`tomo.oi.left_alone`), kept when it fails now; else None (the model's own test is tried). It counts as
        the model's test: its arguments are the model's."""
        names = self._project.called
        test = left_alone_test(code, names) if names and says_left_alone(self.user) else None
        return await self._built_test(
            path, test, "asserted to leave what it is given as it was", ": its own test is tried",
            f"the task says the call leaves what it is given alone; tomo wrote {path} from the model's call, "
            "asserting that", judge="a test tomo built on the model's call (the task's property, but the model's "
                                    "arguments)")

    async def _shared_default(self, path: str, code: str) -> Repro | None:
        """When the task's symptom reads as state one object gets from another and the model's test passed: a test
        that two objects its call makes alike share no list, dict or set default (:mod:`tomo.oi.shared_default`),
        kept when it fails now; else None. It counts as the model's test: its arguments are the model's."""
        test = shared_default_test(code, self._code()) if says_shared(self.user) else None
        return await self._built_test(
            path, test, "made twice and asserted to share no default", "",
            f"the model's test passed, but the task reads as state one object gets from another; tomo wrote {path} "
            "from the model's call, asserting two objects made alike share no list, dict or set default",
            judge="a test tomo built on the model's call (that two objects made alike share nothing)")

    async def _reported_value(self, path: str, code: str) -> Repro | None:
        """When the task reports what the code gives now: the model's test turned into a test that its call no longer
        gives it (:mod:`tomo.oi.reported_value`), kept when it fails now (the call gives exactly that); else None
        (the model's own test is tried). It says nothing of what is right: a fix it passes is never verified."""
        values = reported_values(self.user)
        test = reported_value_test(code, values, self.user) if values else None
        return await self._built_test(
            path, test, "asserted not to give what the task reports", ": its own test is tried",
            f"the model's call gives {' or '.join(values)}, which the task reports, and the model expected otherwise; "
            f"tomo wrote {path} asserting it gone (the model's expected value is its own guess)", by="reported")

    async def _built_test(self, path: str, test: str | None, asserted: str, then: str, said: str, *,
                          by: str = "model", judge: str = "") -> Repro | None:
        """A test tomo built from the model's call (``asserted`` what), run as the reproduction: kept when it fails
        now by the problem, with who it counts as (``by``) and what judges (``judge``); else None, said."""
        if test is None:
            return None
        kept, why, _output = await self._run_as_reproduction(path, test)
        if kept is None:
            self.emit(Notice("info", f"the model's call, {asserted}, is no reproduction ({why}){then}"))
            return None
        kept.by, kept.judge = by, judge
        self.emit(ReproductionKept(path, test, by))
        self.emit(Notice("info", f"reproduction kept: {said}, and it fails before any fix"))
        return kept

    async def _passes_without(self, fix: Sequence[str], path: str) -> bool:
        """Whether the second test at ``path``, green on the fix, is green without it too (the fix set aside for one
        run, then laid in again): then it is no evidence about the fix. Why: the lab's model wrote second tests of
        what already worked as often as of the problem."""
        run, _output = await self._without(fix, path)
        if run.green:
            self.gates.set_aside(run)
        return run.green

    async def _refused_without(self, fix: Sequence[str], path: str) -> bool:
        """Whether the second test at ``path``, refused by the code on the fix, is refused without the fix too: then
        the refusal is the code's design, not something the fix added (a fix may raise where it should not)."""
        run, output = await self._without(fix, path)
        self.gates.set_aside(run)
        return not run.green and bool(refused_input(output, self.user))

    async def _without(self, fix: Sequence[str], path: str) -> tuple[Check, str]:
        """The run (and output) of the test at ``path`` with the fix set aside once, then the fix laid in again."""
        laid = {p: (self.engine.root / p).read_bytes() for p in fix if (self.engine.root / p).exists()}
        self.gates.put_back(fix)
        self._record_restore()
        output = await self._command(f"{self._check} {shlex.quote(path)}")
        run = self.gates.checks[-1]
        for rel, data in laid.items():
            (self.engine.root / rel).write_bytes(data)
        self._record_restore()
        return run, output

    def _test_sources(self, ids: Sequence[str]) -> str:
        """The source of the project's tests ``ids`` (``path::name``, ``path::Class::name[case]``): what its failing
        check asserts, for :func:`repeated_calls`."""
        found: list[str] = []
        for test_id in ids:
            path, _, rest = test_id.partition("::")
            name = rest.split("[", 1)[0].rsplit("::", 1)[-1]
            try:
                text = (self.engine.root / path).read_text(encoding="utf-8")
                tree = ast.parse(text)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                continue
            found += [ast.get_source_segment(text, n) or "" for n in ast.walk(tree)
                      if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
        return "\n\n\n".join(dict.fromkeys(f for f in found if f))

    @staticmethod
    def _reserved(repro: Repro | None) -> int:
        """Rounds kept back from the trials: one for the second test, until a second test judges them too."""
        return 1 if repro is not None and not repro.guards else 0

    @cached_property
    def _project(self) -> _TestContext:
        """What a test request shows and a test's repairs use, read from the project once per turn."""
        tests = read_tests(self.engine.root)
        called = self._called()
        subject = self._subject(called)
        return _TestContext(tests, imports_in_tests(tests), called, subject,
                            example_calling(tests, subject[1]) if subject else "")

    def _test_request(self, task: str, path: str, earlier: tuple[str, str] | None, note: str = "") -> str:
        known = self._project
        return reproduce_request(task, path, known.imports[:8], known.called, earlier, known.subject, known.example,
                                 note)

    def _prepared(self, reply: str, *, quiet: bool = False) -> tuple[str, str]:
        """The test in ``reply`` after the repairs tomo can make from the project's own text (fixtures, imports), and
        why it is no test to run ('' when it is one). ``quiet``: the repairs are not announced (a trial run)."""
        emit = (lambda _event: None) if quiet else self.emit
        tests, imports = self._project.tests, self._project.imports
        code = first_python(reply)
        why = not_a_test(code)
        if why:
            return code, why
        code, asked = with_pytest_fixtures(code)
        if asked:
            emit(Notice("info", "tomo made the pytest fixtures the test used without asking for them its "
                                "parameters: " + ", ".join(asked)))
        code, filled = fixtures_for_none(code, tests, self.user)
        if filled:
            emit(Notice("info", "tomo passed the project's fixtures where the test passed None and the project's "
                                "tests pass them: " + ", ".join(filled)))
        code, widened = as_stated(code, self.user)
        if widened:
            emit(Notice("info", "tomo compares the numbers the task states to the precision it states them in "
                                "(and a number in `pytest.approx` with no tolerance to the precision it is written "
                                "in): " + ", ".join(dict.fromkeys(widened))))
        fixtures = missing_fixtures(ast.parse(code), tests)
        if fixtures:
            code = "\n\n\n".join(fixtures) + "\n\n\n" + code
            emit(Notice("info", "tomo copied the fixtures the test asked for from the project's tests: "
                                + ", ".join(defined_names(fixtures))))
        code, added = self._with_imports(code, imports)
        helpers = missing_helpers(sorted(unbound(ast.parse(code))), tests)
        if helpers:  # after the imports: a name the project's code defines is imported, not copied from a test
            code, more = self._with_imports(_after_imports(code, helpers), imports)
            added += more
            emit(Notice("info", "tomo copied the helpers the test used from the project's tests: "
                                + ", ".join(defined_names(helpers))))
        if added:
            emit(Notice("info", "tomo added the imports the test used without writing them: " + "; ".join(added)))
        unknown = sorted(unbound(ast.parse(code)))
        if unknown:
            return code, (f"it uses {', '.join(f'`{n}`' for n in unknown[:4])}, which nothing defines: write the real "
                          "values")
        if has_ellipsis(code):
            return code, "it passes `...` where a value belongs: write the real values"
        placeholder = placeholder_path(code)
        if placeholder:
            return code, (f"it reads {placeholder!r}, an example's placeholder, not a file: a test writes the files "
                          "it reads (pytest's tmp_path) and passes their paths")
        values = reported_values(self.user)
        bug = asserts_reported(code, values, self.user) if values else None
        if bug is not None:
            return code, (f"it asserts {bug} as the right result, which the task reports as what the code gives now "
                          "(the bug): assert what the task says is right")
        return code, ""

    def _write_test(self, path: str, code: str) -> str:
        """Writes the test to ``path``; the command that runs it alone (the project's own way to run pytest)."""
        (self.engine.root / path).parent.mkdir(parents=True, exist_ok=True)
        (self.engine.root / path).write_text(code if code.endswith("\n") else code + "\n", encoding="utf-8")
        return f"{self._check} {shlex.quote(path)}"

    async def _confirmed(self, task: str, repro: Repro | None) -> bool:
        """After a trial passed: a second test, asked afresh and run on the fix. A model's test is a weak judge (the
        lab saw Qwen 1.5B's test assert a footer for page 3 of 2, and a trial "fix" it by breaking `has_previous`,
        with the project's check green), and so is a project's one failing test (a trial passed `test_top_bracket`
        with `min(income - lower, upper is None or ...)`, wrong above it): a fix the second test fails is put back,
        and both judge the next trials, unless the first is the task's own examples: then the fix stays, unverified. A
        second test that is no test, or passes, leaves the verdict to the first;
        when the first is the model's or the project's one failing test, a second that passes without the fix too,
        only repeats the first one's calls, is no test or fails by its own mistake (or no round is left for one)
        shows nothing more, and the turn stays unverified: the fix was checked once, by a weak judge. False: the
        trial does not stand."""
        if repro is None or repro.guards or repro.by == "reported":
            return True  # "reported": never verified, so there is no claim for a second test to guard
        weak = repro.by in ("model", "project")
        if self.summary.rounds >= self.engine.max_rounds:  # _reserved keeps a round back: a safety net
            if weak:
                self._doubt(f"no round was left for a second test, so the fix is checked once, {_judged_by(repro)}")
            return True
        fix = [p for p in self.gates.files_changed() if not self._protected(p, repro)]
        path = self._repro_path()
        again = (repro.code, "This test shows the problem. Write a different test of what the task asks (another "
                             "call from the task, or another thing it says must hold), so a fix is checked twice."
                 ) if repro.path else None
        reply = await self._ask(self._test_request(task, path, again), hot=True)
        code, why = self._prepared(reply.message.content)
        if why:
            self.emit(Notice("info", f"the second test is no test ({why}): the first one's verdict stands"))
            if weak:
                self._doubt(f"the second test is no test, so the fix is checked once, {_judged_by(repro)}")
            return True
        output = await self._command(self._write_test(path, code))
        last = self.gates.checks[-1]
        # an input the code refuses by design (the code as the turn found it refuses it too: a fix may add a wrong
        # raise) is the second test's mistake, when the first judge is not the model's: the lab's first tests are
        # often wrong, and putting the fix back never claims too much; but s43 put back lru's right fix for the
        # project's failing test because `LRUCache(0)` raised the code's own "capacity must be at least 1"
        why = not_failing_by_the_problem(last.exit_code, output, self.user)
        refused = "" if why else refused_input(output, self.user)
        if refused and repro.by != "model" and await self._refused_without(fix, path):
            why = refused
        if last.green and weak and await self._passes_without(fix, path):
            self._doubt("the second test passes without the fix too, so it shows nothing about the fix, which is "
                        f"checked once, {_judged_by(repro)}")
        # the task's own examples are the task's words: a second test that fails where they pass is likelier wrong
        # than the fix (s41/s42: `approx(37.78)`, `to_roman(19) == 'XVIV'`, `convert(37, ...)` put back right fixes)
        overruled = not last.green and not why and repro.by == "task"
        if last.green or why or overruled:
            self.gates.set_aside(last)
            (self.engine.root / path).unlink(missing_ok=True)
            self._record_restore()
            await self._command(self._check)  # the last check after the last change is the project's
            if overruled:
                self._doubt(f"a second test, asked afresh, fails on this fix ({path} removed), while the task's own "
                            "examples pass: the fix stays")
                return True
            said = "passes on the fix too" if last.green else f"fails by its own mistake ({why})"
            self.emit(Notice("info", f"a second test, asked afresh, {said}: {path} removed, the first test's "
                                     "verdict stands"))
            repeated = repeated_calls(code, repro.code) if last.green and weak else []
            if repeated:  # the lab: `parse_duration("1h 30m")` again, after a fix that broke what the task means
                self._doubt(f"the second test only repeats the first one's {', '.join(f'`{c}`' for c in repeated)}, "
                            f"so the fix is checked once, {_judged_by(repro)}")
            elif not last.green and weak:
                self._doubt(f"the second test fails by its own mistake, so the fix is checked once, "
                            f"{_judged_by(repro)}")
            return True
        self.emit(ReproductionKept(path, code, "second"))
        first = repro.path or "the project's failing tests"  # None: those tests are the reproduction
        self.emit(Notice("warning", f"a second test, asked afresh, fails on this fix: {', '.join(fix)} put back, and "
                                    f"{path} judges the next trials with {first}"))
        self.failed = (self._diff(fix), tail(output, FAILURE_CHARS))
        self._put_back(fix)
        repro.guards.append((path, code))
        return False

    async def _trial(self, task: str, repro: Repro | None) -> bool:
        """One trial: True when its fix made the reproduction and the check pass (the turn ends)."""
        target = self._tested(repro) or self.engine.target()
        is_class = target is not None and self._is_class(*target)
        focus, by_line = self._focus()
        if self.asked:
            text = (await self._ask(self._feature_request(task, repro), hot=bool(self.seen),
                                    heat=self._heat())).message.content
        elif focus is not None and by_line:
            text = await self._line_trial(task, repro, focus)
        else:
            shown: tuple[str, str, str] | None = None
            if focus is not None:
                target, is_class = (focus.path, focus.name.rsplit(".", 1)[-1]), False
                shown = (focus.path, focus.name, self._with_constants(focus))
            reply = await self._ask(fix_request(task, repro, target, self.failed, is_class=is_class, focus=shown,
                                                unchanged=self.same), hot=bool(self.seen), heat=self._heat())
            text = reply.message.content
        edits = self._edits(text, repro)
        self.since = self.summary.blocks + 1
        if not edits:
            self._said("[tomo: this trial wrote no edit block for a project file; nothing was tried.]")
            self.seen.add("")
            self._tried_nothing_new()
            return False
        reports = [self.engine.apply_edit_block(b, self._next_block(), self.gates, self.emit) for b in edits]
        changed = [p for p in self.gates.files_changed() if not self._protected(p, repro)]
        for path, (now, keywords) in by_keyword(self._sources(changed), changed).items():
            (self.engine.root / path).write_text(now, encoding="utf-8")
            self.emit(Notice("info", f"tomo passed {', '.join(keywords)} by keyword ({path})"))
        own = self._own(changed)
        key = _fingerprint(self.engine.root, changed)
        self.same = not own
        if not own or key in self.seen:
            self._tried_nothing_new()
            self.emit(Notice("info", "this trial changed nothing new (no file, or what an earlier trial wrote): not "
                                     "run again"))
            self._undo(own)
            self._said("\n\n".join(reports))
            self.seen.add(key)
            return False
        self.seen.add(key)
        self.stale = 0
        fault, report, faulty = self._half_written(changed) if self.asked else ("", "", {})
        if report:
            reports.append(report)
        passed = not fault and await self._judged(repro, reports)
        self._said("\n\n".join(reports))
        if fault and (self.unread or self.widen) and await self._complete(repro):
            passed = True
        if passed:
            self.held = {}  # part of the fix now
            return True
        self.failed = (self._diff(changed), tail(reports[-1], FAILURE_CHARS))
        kept = self._holdable(changed, faulty) if fault else {}
        back = [p for p in dict.fromkeys([*changed, *self.held]) if p not in kept]
        parts = [f"{p} (but {', '.join(f'`{f}`' for f in faulty[p])}, as the turn found it)" if faulty.get(p)
                 else p for p in kept]
        held = (f"; {', '.join(parts)} kept for the next trial, which sees the change (it adds what the task asks "
                "for, and nothing was found wrong in it)") if kept else ""
        undone = f": {', '.join(back)} put back as the turn found {'it' if len(back) == 1 else 'them'}" if back else ""
        self.emit(Notice("info", f"trial failed{undone}" + (f" ({fault})" if fault else "") + held))
        for path, data in kept.items():
            (self.engine.root / path).write_bytes(data)
        self._put_back(back)
        self.held = kept
        return False

    async def _judged(self, repro: Repro | None, reports: list[str]) -> bool:
        """Runs the reproduction, the second tests and the check on the laid-in fix, each after the last passed (the
        reports gain their outputs): True when the check is green and ran the changed code."""
        check = self._check
        commands = [repro.command] if repro is not None and repro.command != check else []
        commands += [f"{check} {shlex.quote(path)}" for path, _code in (repro.guards if repro else [])]
        for command in [*commands, check]:
            reports.append(await self._command(command))
            if not self.gates.checks[-1].green:
                break
        # a feature with no reproduction is judged by the check alone, which may not reach the new code (a new
        # event's branch): the turn cannot be verified then (no red before the change), but its change can stand
        unjudged = repro is None and bool(self.asked)
        return self.gates.checks[-1].green and (unjudged or self.gates.exec_evidence()[0])

    # ---- one-token changes (tomo.oi.mutants) ----------------------------------------------------------------

    async def _search(self, task: str, repro: Repro, then: str = "") -> bool:
        """The one-token changes of what the failing test ran (:mod:`tomo.oi.mutants`), each laid in and judged
        like a model's fix: True when one passed. A fix found this way against the model's own test stays
        unverified: the lab found most of the model's tests wrong, and a search finds whatever satisfies the test it
        is given. So it is not asked to pass a second test either, which guards a claim of "verified" and has none
        to guard here: on `fix-config-override` the model's first test was right, a search's fix passed it, and a
        second test asserting the wrong port put the right fix back."""
        candidates = self._mutants()
        if not candidates:
            return False
        self.emit(Notice("info", f"tomo tries {len(candidates)} one-token changes of the lines the failing test ran "
                                 "(an operator, a bound, a guard, a table's order, a variable), each judged by the "
                                 "reproduction and the check, before it asks the model for a fix"))
        for path, mutant in candidates:
            if self.engine.ended:
                raise _Interrupted
            weak = repro.by in ("model", "reported")
            if await self._mutant_trial(path, mutant, repro) and (weak or await self._confirmed(task, repro)):
                where = f"{path}:{mutant.line}: {mutant.what}"
                self.emit(Notice("info", f"a one-token change passed the reproduction and the check: {where}"))
                if weak:
                    judge = repro.judge or (
                        "a test the model wrote, whose expected values the task does not state" if repro.by == "model"
                        else "a test that the result the task reports as wrong is gone, which does not say what is "
                             "right")
                    self._doubt(f"the fix ({where}) is one tomo found by trying changes against {judge}")
                return True
        then = then or ("tomo asks for another test" if _retested(repro) else "the model's trials go on")
        self.emit(Notice("info", f"no one-token change made the reproduction and the check pass: {then}"))
        return False

    async def _search_again(self, task: str, repro: Repro) -> bool:
        """When no one-token change passed the model's own test: another test of the problem, asked afresh, judges a
        second search in the first one's place, up to ``RETESTS`` times. True when a change passed one (that test is
        then the reproduction, and the fix unverified like any the search finds against a model's test); else the
        first test is back as the trials' judge. Why: in the lab's records (s42 to s45, 23 turns on small and held-out
        tasks whose search failed) no turn was saved by the model's fixes after a failed search, and the model's
        tests were the usual fault (config-override asserted `server.port` for a top-level key, split-bill split a
        bill with no remainder), while the same tasks' bugs are one token away (a guard, a bound)."""
        path = repro.path
        if not _retested(repro) or path is None:
            return False
        first = (self.suspects, self.ran)
        for attempt in range(1, RETESTS + 1):
            if not self._room_for_a_test() or self.engine.ended:
                break
            self.emit(Notice("info", f"tomo asks for another test of the problem ({attempt} of {RETESTS}), and tries "
                                     "the one-token changes against it in the first test's place"))
            (self.engine.root / path).unlink(missing_ok=True)  # the check must not run the first test meanwhile
            self._record_restore()
            other = await self._model_test(task, path, None, hot=True, note=ANOTHER_TEST)
            if other is not None and other.code != repro.code and await self._search(task, other,
                                                                                     then="it is set aside"):
                return True
            self._write_test(path, repro.code)
            self._record_restore()
            self.suspects, self.ran = first
        self.emit(Notice("info", f"{path} is the first test again: it judges the model's trials"))
        return False

    def _mutants(self) -> list[tuple[str, Mutant]]:
        """The candidates, suspect by suspect (the lines of its body the failing test ran, and the tables it uses),
        each file's text changed once per candidate; at most ``MAX_MUTANTS`` in all. The textbook's swaps only when
        asked (``--textbook``): over every function of the small suite's fix tasks there are 8 to 36 candidates of
        the lab's kinds and 18 to 217 textbook ones, so they fill a search to its cap, and on the held-out suite
        (s49h) four of seven runs then met their ten-minute limit, solving none more."""
        found: list[tuple[str, Mutant]] = []
        seen: set[str] = set()
        for suspect in self.suspects:
            try:
                text = (self.engine.root / suspect.path).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            lines = suspect.body & self.ran.get(suspect.path, set())
            for mutant in mutants(text, lines, self._constant_spans(suspect), textbook=self.textbook):
                if mutant.text not in seen:
                    seen.add(mutant.text)
                    found.append((suspect.path, mutant))
        found.sort(key=lambda pair: pair[1].tier)  # stable: every suspect's lab kinds before any textbook swap
        return found[:MAX_MUTANTS]

    async def _mutant_trial(self, path: str, mutant: Mutant, repro: Repro | None, *,
                            restore: bytes | None = None) -> bool:
        """One candidate laid in and judged (:meth:`_judged`); put back unless it passed (to ``restore`` when given:
        the trial's own text, which a completion finishes)."""
        self.since = self.summary.blocks + 1
        (self.engine.root / path).write_bytes(mutant.text.encode("utf-8"))
        number = self._next_block()
        check = self.gates.record(number, "edit", f"{path}:{mutant.line}: {mutant.what}", 0, kind="neutral")
        diff = self._diff([path])
        self.emit(BlockOutput(number, f"tomo tried {mutant.what} ({path}, line {mutant.line})\n{diff}", 0, [],
                              check.changed))
        self.seen.add(_fingerprint(self.engine.root, [path]))
        reports = [f"[tomo tried {mutant.what} in {path}, line {mutant.line}]\n{diff}"]
        if await self._judged(repro, reports):
            self._said("\n\n".join(reports))
            return True
        if restore is None:
            self._put_back([path])
        else:
            (self.engine.root / path).write_bytes(restore)
            self._record_restore()
        return False

    async def _complete(self, repro: Repro | None) -> bool:
        """A feature trial whose one fault is a parameter nothing reads, finished by tomo (:func:`tomo.oi.feature.
        completions`), each way laid in and judged like a fix: True when one passed. The trial's other functions at
        fault (a name nothing defines) are laid back as the turn found them first. Otherwise the trial's text is
        back as it wrote it, and the trial fails as it would have. Why the laying back: Qwen 1.5B's first slug
        trial wrote `slugify`'s `separator` unread and passed `separator` on in `archive_links`, which has none;
        `slugify`, put back, never got the parameter again in eleven replies."""
        if self.unread:
            path, fault = self.unread[0]
            function, param, added = fault.function, fault.param, ""
            said, why = fault.said, "which nothing reads"
        else:
            path, function, param, added = self.widen[0].path, self.widen[0].function, self.widen[0].param, \
                self.widen[0].declared
            said, why = f"`{self.widen[0].caller}`'s `{param}`", f"passed on to `{function}`, which lacks it"
        trial = self._laid_back(self.aside)
        if trial is None:
            return False
        try:
            text = (self.engine.root / path).read_bytes()
            start = widened(text.decode("utf-8"), function, added) if added else text.decode("utf-8")
            ways = completions(start, function, param) if start else []
        except (OSError, UnicodeDecodeError):
            ways = []
        ways = [Mutant(w.line, f"`{added}` added to `{function}`, {w.what}", w.text) for w in ways] if added else ways
        if ways:
            aside = "; ".join(f"{', '.join(f'`{f}`' for f in functions)} in {where}"
                              for where, functions in self.aside.items())
            count = f"{len(ways)} way{'s' if len(ways) > 1 else ''}"
            self.emit(Notice("info", f"tomo tries {count} to finish {said}, {why}: " +
                                     (f"`{added}` added to `{function}`, then " if added else "") +
                                     "the parameter for each constant equal to its default, or passed on to one "
                                     "call, each judged like a fix" +
                                     (f", with {aside} as the turn found it" if aside else "")))
        for way in ways:
            if self.engine.ended:
                raise _Interrupted
            if await self._mutant_trial(path, way, repro, restore=text):
                self.emit(Notice("info", f"tomo finished the trial's change: {way.what} ({path}, line {way.line})"))
                return True
        if ways:
            self.emit(Notice("info", f"no way to finish {said} passed"))
        for where, data in trial.items():
            (self.engine.root / where).write_bytes(data)
        return False

    def _laid_back(self, functions: Mapping[str, list[str]]) -> dict[str, bytes] | None:
        """Each file's ``functions`` laid back as the turn found them (:func:`tomo.oi.feature.without`): the files'
        bytes as the trial wrote them (path -> bytes), to put the trial back with; None, and nothing written, when
        one cannot be laid back (a new function)."""
        trial: dict[str, bytes] = {}
        laid: dict[str, str] = {}
        for path, names in functions.items():
            try:
                data = (self.engine.root / path).read_bytes()
                before = self.gates.baseline.contents.get(path, b"").decode("utf-8")
                now = without(data.decode("utf-8"), before, names)
            except (OSError, UnicodeDecodeError):
                return None
            if now is None:
                return None
            trial[path], laid[path] = data, now
        for path, now in laid.items():
            (self.engine.root / path).write_text(now, encoding="utf-8")
        return trial

    async def _line_trial(self, task: str, repro: Repro | None, focus: Definition) -> str:
        """A trial's fix as corrected lines (:mod:`tomo.oi.line_fix`): the edit blocks tomo lays in, or the reply
        itself when it gives no line (an edit block, if any). A reply whose lines change nothing, only what an
        earlier line-form trial tried, or are missing, is asked again, the same request and hotter, up to
        ``LINE_SAMPLES`` replies. Each is a round, but the server has the request's prompt cached: in the lab such
        a reply took 12.6 s (median of 52; 5.7-38 s), a fresh request 24 s (median of 161). The lab saw Qwen 1.5B
        give the wrong line back unchanged in most replies, and the right one in some of the same request's."""
        shown = sorted((d for d in self.suspects if d.path == focus.path), key=lambda d: d.start) or [focus]
        spans = spans_of(shown, [span for d in shown for span in self._constant_spans(d)])
        view, allowed = numbered_view(self.engine.root, focus.path, spans)
        request = line_request(task, repro, [d.name for d in shown], view, self.failed, unchanged=self.same)
        for sample in range(1, LINE_SAMPLES + 1):
            reply = await self._ask(request, hot=bool(self.seen), heat=self._heat())
            changes, blocks = reply_fix(reply.message.content, self.engine.root, focus.path, spans, allowed)
            text = ("".join(f"```python {focus.path}\n{code}\n```\n" for code in blocks) if changes
                    else reply.message.content)
            new = bool(blocks) and text not in self.lines if changes else bool(self._edits(text, repro))
            if new or sample == LINE_SAMPLES or not self._rounds_left(repro):
                break
            self._tried_nothing_new()
            why = ("were tried before" if blocks else "change nothing") if changes else "are missing"
            self.emit(Notice("info", f"the corrected lines {why}: the same request again, hotter (reply "
                                     f"{sample + 1} of {LINE_SAMPLES})"))
        if blocks:
            self.lines.add(text)
        return text

    def _feature_request(self, task: str, repro: Repro | None) -> str:
        """A feature trial's request (:func:`tomo.oi.feature.feature_request`): the files the task touches, as they
        are now (a failed trial was put back)."""
        files = shown(self.engine.root, touched(self.user, self._code()), self.user)
        files.sort(key=lambda f: f[0] in self.held)  # what is still to write first: the reply's example names it
        return feature_request(task, files, self.asked, stated=reproduced(repro).strip(),
                               failed=earlier_fix(self.failed).strip(), kept=list(self.held))

    def _half_written(self, changed: Sequence[str]) -> tuple[str, str, dict[str, list[str]]]:
        """What a feature trial's change leaves out or gets wrong, found before anything runs (:func:`tomo.oi.
        feature.half_written`): a short fault, the report the model reads, and the files at fault with their
        functions at fault; ("", "", {}) when nothing. What tomo can finish is kept for :meth:`_complete`."""
        before: dict[str, str] = {}
        for path in changed:
            with contextlib.suppress(UnicodeDecodeError):
                before[path] = self.gates.baseline.contents.get(path, b"").decode("utf-8")
        found = half_written(self.user, self.asked, self._code_at_start(), before, self._sources(changed), changed)
        self.unread, self.widen, self.aside = found.unread, found.widen, found.aside
        return found.fault, found.report, found.at_fault

    def _code_at_start(self) -> dict[str, str]:
        """The project's code outside the tests as the turn found it (path -> text)."""
        return {p: b.decode("utf-8", "replace") for p, b in self.gates.baseline.contents.items()
                if p.endswith(".py") and not is_test_path(p)}

    def _holdable(self, changed: Sequence[str], faulty: Mapping[str, list[str]]) -> dict[str, bytes]:
        """The files of a failed feature trial that stay laid in for the next one (path -> the bytes kept): code
        outside the tests that now has a name the task asks for and lacked it, without the functions at fault (as
        the turn found them; a file whose fault is a new function is not kept). Why: the
        lab saw Qwen 1.5B write `permalink(..., separator)` right in every reply and `slugify`'s half wrong, so each
        trial put back both; a next trial that sees the right half in place is asked for the other half only."""
        kept: dict[str, bytes] = {}
        for path in changed:
            if not path.endswith(".py") or is_test_path(path):
                continue
            with contextlib.suppress(OSError, UnicodeDecodeError):
                before = self.gates.baseline.contents.get(path, b"").decode("utf-8")
                now: str | None = (self.engine.root / path).read_text(encoding="utf-8")
                if now is not None and faulty.get(path):
                    now = without(now, before, faulty[path])
                if now is not None and now != before and \
                        len(missing(self.asked, {path: now})) < len(missing(self.asked, {path: before})):
                    kept[path] = now.encode("utf-8")
        return kept

    def _own(self, changed: Sequence[str]) -> list[str]:
        """The files this trial changed itself: those that differ from what the last trial left laid in (``held``),
        or from the turn's start."""
        own: list[str] = []
        for path in dict.fromkeys([*changed, *self.held]):
            try:
                now: bytes | None = (self.engine.root / path).read_bytes()
            except OSError:
                now = None
            if now != self.held.get(path, self.gates.baseline.contents.get(path)):
                own.append(path)
        return own

    def _undo(self, paths: Sequence[str]) -> None:
        """This trial's own changes undone: a held file as the last trial left it, any other as the turn found it."""
        if not paths:
            return
        for path in paths:
            if path in self.held:
                (self.engine.root / path).write_bytes(self.held[path])
        self.gates.put_back([p for p in paths if p not in self.held])
        self._record_restore()

    def release(self) -> None:
        """The files a failed feature trial left laid in, put back when the turn ends without a passing trial: no
        half-written change is left behind."""
        if self.held:
            paths = list(self.held)
            self._put_back(paths)
            self.emit(Notice("info", f"no trial passed: {', '.join(paths)} put back as the turn found "
                                     f"{'it' if len(paths) == 1 else 'them'}"))

    def _protected(self, path: str, repro: Repro | None) -> bool:
        return _protected(path, repro, feature=bool(self.asked))

    def _code(self, also: Sequence[str] = ()) -> dict[str, str]:
        """:meth:`_sources` outside the tests: the code a feature changes."""
        return {p: t for p, t in self._sources(also).items() if not is_test_path(p)}

    def _sources(self, also: Sequence[str] = ()) -> dict[str, str]:
        """The project's Python files as they are now (path -> text): those the turn found, and ``also``."""
        out: dict[str, str] = {}
        for path in dict.fromkeys([*self.gates.baseline.hashes, *also]):
            if path.endswith(".py"):
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    out[path] = (self.engine.root / path).read_text(encoding="utf-8")
        return out

    def _edits(self, text: str, repro: Repro | None) -> list[Block]:
        """The edit blocks of ``text`` for project files a trial may change (never the reproduction)."""
        blocks = self.engine.recognise(extract(text)).blocks
        return [b for b in blocks if b.edits and b.target and not self._protected(b.target, repro)]

    def _room_for_a_test(self) -> bool:
        """Whether a request for a test leaves a round for a trial after it, and one for that trial's second test."""
        return self.summary.rounds < self.engine.max_rounds - 2

    def _rounds_left(self, repro: Repro | None) -> bool:
        return self.summary.rounds < self.engine.max_rounds - self._reserved(repro)

    # ---- the model --------------------------------------------------------------------------------------------

    def _tried_nothing_new(self) -> None:
        self.stale += 1
        self.repeats += 1

    def _heat(self) -> float | None:
        """The temperature of a trial after trials in a row that tried nothing new: the retry temperature, hotter by
        ``HEAT_STEP`` for each, at most ``MAX_HEAT`` (Qwen 1.5B gave one function back unchanged five times in a
        row at 0.8). Once a trial of the turn tried nothing new, every later one is at least a step hotter: in the
        s47 lab run (small), after a failed trial at the retry temperature Qwen 1.5B gave an earlier trial back 16
        times in 27 (a round lost each time: 18 of the run's 76 requests, 5 of feature-low-stock's 12), after a
        hotter one once in 15. None (the usual temperature) while the turn's trials all tried something."""
        base = self.engine.retry_temperature
        steps = self.stale or min(self.repeats, 1)
        if base is None or not steps:
            return None
        return min(MAX_HEAT, round(base + HEAT_STEP * steps, 2))

    async def _ask(self, text: str, *, hot: bool, heat: float | None = None) -> Reply:
        """One fresh request (the system prompt and ``text`` alone), counted as a round; sampled at ``heat`` when
        given, else at the retry temperature when ``hot``."""
        engine, summary = self.engine, self.summary
        self.emit(ModelThinking(AGENT, engine.model.name, summary.rounds + 1))
        self.messages = [Message.user(text)]
        started = time.perf_counter()
        with at_temperature(engine.model, heat if heat is not None else engine.retry_temperature if hot else None):
            reply, interrupted = await engine.guarded(
                engine.ask_once([Message.system(self.system), *self.messages], self.emit, cap=TRIAL_REPLY_TOKENS))
        if interrupted or reply is None:
            raise _Interrupted
        summary.rounds += 1
        summary.usage += reply.usage
        self.emit(ModelCalled(AGENT, engine.model.name, summary.rounds, reply.finish, reply.usage.input_tokens,
                              reply.usage.output_tokens, time.perf_counter() - started, reply.usage.estimated))
        if reply.finish == "error":
            raise ModelError(BROKEN_REPLY, provider=engine.model.name)
        self.messages.append(Message.assistant(reply.message.content))
        if reply.message.content:
            self.emit(AssistantSaid(AGENT, reply.message.content))
        return reply

    def _said(self, text: str) -> None:
        self.messages.append(Message.user(text))

    # ---- the files --------------------------------------------------------------------------------------------

    def _repro_path(self) -> str:
        root = self.engine.root
        folder = "tests/" if (root / "tests").is_dir() else ""
        stem = REPRO_NAME.removesuffix(".py")
        path, n = f"{folder}{REPRO_NAME}", 1
        while (root / path).exists():
            n += 1
            path = f"{folder}{stem}_{n}.py"
        return path

    def _tested(self, repro: Repro | None) -> tuple[str, str] | None:
        """(file, name) of the first project function the reproduction calls: where the fix most likely goes, and
        surer than the context pack's guess (which ranked a neighbouring method first in the lab)."""
        if repro is None or not repro.path:
            return None
        try:
            tree = ast.parse(repro.code)
        except SyntaxError:
            return None
        called = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        names = list(dict.fromkeys(called))
        homes = self.engine.homes(names) if names else {}
        for name in names:
            paths = sorted(set(homes.get(name, [])))
            if len(paths) == 1 and not is_test_path(paths[0]):
                return paths[0], name
        return None

    def _localise(self, repro: Repro) -> None:
        """The suspects of a reproduction that fails inside the code (:mod:`tomo.oi.suspects`). None for a missing
        feature (`has no attribute 'cancel'`): what ran then is the code around the gap, not the place to fill it."""
        if MISSING_NAME.search(repro.output) or self._new_names():
            return
        tested = self._tested(repro) or self.engine.target()
        preferred = [tested] if tested else []
        preferred += [(k.partition("::")[0], k.partition("::")[2]) for k in self.engine.targets]
        self.ran = {path: set(lines) for path, lines in self.gates.checks[-1].lines.items()}
        self.suspects = suspects(self.engine.root, self.ran, repro.output, preferred)
        if self.suspects:
            self.emit(Notice("info", "the failing test ran " + ", ".join(f"`{d.name}` ({d.path})" for d in
                                                                          self.suspects) + ": the trials take them "
                                     "in turn"))

    def _new_names(self) -> list[str]:
        """The names the task calls (``Order.cancel()``) that the project does not define: a feature to add. What a
        reproduction of it runs (`apply_event` refusing an unknown event) is not where the new code goes; the lab
        saw trials spent rewriting `apply_event` and `Order.__init__` instead of adding `cancel`."""
        words = [w for w in dict.fromkeys(m.group(1) for m in CALL.finditer(self.user)) if w not in BUILTINS]
        if not words:
            return []
        homes = self.engine.homes(words)
        root = self.engine.root
        imported = {name for rel in self.gates.baseline.hashes if rel.endswith(".py")
                    for line in imports_of(root / rel) for name in bindings(line)}  # `date` is no new name
        return [w for w in words if not homes.get(w) and w not in imported]

    def _focus(self) -> tuple[Definition | None, bool]:
        """The suspect this trial shows in full, each in turn, and whether it asks for corrected lines
        (:mod:`tomo.oi.line_fix`: every second round over the suspects) rather than the whole definition. None
        without suspects: the request then names the reproduction's subject or the context pack's best."""
        self.tried += 1
        if not self.suspects:
            return None, False
        turn = self.tried - 1
        return self.suspects[turn % len(self.suspects)], (turn // len(self.suspects)) % 2 == 1

    def _constant_spans(self, definition: Definition) -> list[tuple[int, int]]:
        """Where the module constants ``definition`` uses stand in its file (first and last line)."""
        lines = self._file_lines(definition)
        return constant_spans(lines, definition.source(self.engine.root).splitlines()) if lines else []

    def _constants(self, definition: Definition) -> list[str]:
        """The lines of the module constants ``definition`` uses, as its file has them."""
        lines = self._file_lines(definition)
        return module_constants(lines, definition.source(self.engine.root).splitlines()) if lines else []

    def _file_lines(self, definition: Definition) -> list[str]:
        try:
            return (self.engine.root / definition.path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []

    def _with_constants(self, definition: Definition) -> str:
        """``definition``'s source, after the module constants it uses (`_WHOLE = re.compile(...)`): the lab's
        whitespace bug was in such a pattern, not in the function that used it, and its roman numeral bug in a
        table."""
        code = definition.source(self.engine.root)
        constants = self._constants(definition)
        return ("\n".join(constants) + "\n\n\n" + code) if constants else code

    async def _watched(self, command: str) -> str:
        """``command`` run with every project module watched, so its check records which of their lines ran."""
        before = self.gates.watch_also
        self.gates.watch_also = self._modules()
        try:
            return await self._command(command)
        finally:
            self.gates.watch_also = before

    def _modules(self) -> list[str]:
        return [p for p in self.gates.baseline.hashes if p.endswith(".py") and not is_test_path(p)]

    def _named(self) -> list[tuple[str, str]]:
        """(path, qualified name) of the project's functions and methods the task names by name (`read_column`,
        `main`), in the files it names, else in every module: what a change the task asks for should run."""
        words = set(IDENTIFIER.findall(self.user))
        modules = self._modules()
        named = [p for p in modules if p in self.user or re.search(rf"(?<![\w/.]){re.escape(Path(p).name)}\b",
                                                                   self.user)]
        return [(path, d.name) for path in named or modules for d in definitions(self.engine.root, path)
                if d.name.rsplit(".", 1)[-1] in words]

    def _uncovered(self, since: int) -> list[str]:
        """The named definitions (:meth:`_named`) no passing run since block ``since`` executed, as the files are
        now (a fix moves lines)."""
        ran: dict[str, set[int]] = {}
        for check in self.gates.checks:
            if check.number >= since and check.green:
                for path, lines in check.lines.items():
                    ran.setdefault(path, set()).update(lines)
        missing: list[str] = []
        for path, name in self.named:
            now = next((d for d in definitions(self.engine.root, path) if d.name == name), None)
            if now is not None and not now.body & ran.get(path, set()):
                missing.append(f"`{name}` ({path})")
        return missing

    def _is_class(self, path: str, name: str) -> bool:
        """Whether ``name`` in ``path`` is a class: the example then shows a method inside it (the lab saw a class
        replaced by a function named like it, after an example of the form `def Cart(...)`)."""
        try:
            from tomo.prism import Graph

            with Graph.open(self.engine.root) as graph:
                return any(s.kind == "class" for s in graph.find_symbol(name, limit=20)
                           if s.name == name and s.path == path)
        except Exception:  # an example is a help, never a reason to fail the trial
            return False

    def _subject(self, called: Sequence[str]) -> tuple[str, str] | None:
        """(module, name) for the reproduction's example: the first function the task calls (``called``), else the
        context pack's best definition (a method's class)."""
        homes = self.engine.homes(list(called)) if called else {}
        for name in called:
            paths = sorted(set(homes.get(name, [])))
            module = module_of(paths[0]) if len(paths) == 1 else None
            if module:
                return module, name
        for key in self.engine.targets:
            path, _, qual = key.partition("::")
            module = module_of(path)
            if module and qual:
                return module, qual.split(".")[0]
        return None

    def _called(self) -> list[str]:
        """The project's functions the task's own words call (``name(...)``): what the reproduction should call.
        Measured: asked to use the task's example, Qwen 1.5B tested a neighbouring function instead."""
        words = list(dict.fromkeys(m.group(1) for m in CALL.finditer(self.user)))
        homes = self.engine.homes(words) if words else {}
        return [w for w in words if homes.get(w)]

    def _with_imports(self, code: str, test_imports: Sequence[str]) -> tuple[str, list[str]]:
        """``code`` with an import for each name it uses and never binds, when the project says where it comes from:
        an import in its tests or in the module under test, or the project file that defines it. Measured: Qwen
        1.5B's reproductions failed on `NameError: name 'Path' is not defined` more often than on anything else.
        ``pytest`` is always known."""
        tree = ast.parse(code)
        missing = unbound(tree)
        if not missing:
            return code, []
        homes = self.engine.homes(sorted(missing), importable=True)
        defined: dict[str, str] = {}
        for name, paths in homes.items():
            modules = {module_of(p) for p in paths} - {None}
            if len(set(paths)) == 1 and len(modules) == 1:
                defined[name] = f"from {modules.pop()} import {name}"
        sources = [self.engine.root / p for p in sorted({p for ps in homes.values() for p in ps})]
        known: dict[str, str] = {}
        for line in [*test_imports, *self._module_imports(tree),
                     *(line for path in sources for line in imports_of(path))]:
            for name, statement in bindings(line).items():
                known.setdefault(name, statement)
        known.setdefault("pytest", "import pytest")  # trials run pytest, so it is there even if no test imports it
        known.update(defined)
        added = [known[n] for n in sorted(missing) if n in known]
        return ("\n".join(dict.fromkeys(added)) + "\n" + code if added else code), list(dict.fromkeys(added))

    def _module_imports(self, tree: ast.Module) -> list[str]:
        """The top-level imports of the project modules the test imports from (where `Decimal` comes from)."""
        found: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                path = self.engine.root / (node.module.replace(".", "/") + ".py")
                found += imports_of(path)
        return found

    def _diff(self, paths: Sequence[str]) -> str:
        """What a trial changed, as a unified diff against the turn's start (at most ``DIFF_LINES`` lines)."""
        lines: list[str] = []
        for rel in paths:
            old = self.gates.baseline.contents.get(rel, b"").decode("utf-8", "replace").splitlines(keepends=True)
            try:
                new = (self.engine.root / rel).read_text(encoding="utf-8").splitlines(keepends=True)
            except (OSError, UnicodeDecodeError):
                continue
            lines += difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}", n=1)
        return "".join(lines[:DIFF_LINES]).rstrip("\n")

    def _put_back(self, paths: Sequence[str]) -> None:
        """A failed trial's files as the turn found them (a file the turn added is removed)."""
        for path in paths:
            self.held.pop(path, None)
        left = self.gates.put_back(paths)
        if left:
            self.emit(Notice("warning", f"{', '.join(left)} stayed as the trial left it: tomo keeps the bytes of code "
                                        "files only"))
        self._record_restore()

    def _record_restore(self) -> None:
        """The put-back as a neutral block, so the gates see the fix gone (the next trial's edit starts a new fix)."""
        self.gates.record(self._next_block(), "edit", "put back", 0, kind="neutral")

    def _next_block(self) -> int:
        self.summary.blocks += 1
        return self.summary.blocks

    async def _command(self, command: str) -> str:
        return await self.engine.run_command(command, self._next_block(), self.gates, self.emit,
                                             round_=self.summary.rounds)


class _Interrupted(Exception):
    """Ctrl-C while the model was answering: the turn ends."""


async def trial_turn(engine: Engine, history: Sequence[Message], user: str, sink: Sink | None = None, *,
                     mutate: bool = False, textbook: bool = False) -> list[Message]:
    """A whole turn by trials (see the module); the same contract as :meth:`Engine.turn`, which runs the turn
    instead when trials cannot: a later turn of a session, or a check that is not pytest. ``mutate``: try one-token
    changes of what the failing test ran before the model's fixes (:mod:`tomo.oi.mutants`); ``textbook``: the
    textbook's swaps among them too."""
    sink = sink or NullSink()
    emit = sink.emit
    if history or not runs_pytest(engine.check):
        emit(Notice("warning", "trials need a first turn and a pytest check (--check); this turn is a conversation"))
        return await engine.turn(history, user, sink)
    summary = engine.last = TurnSummary()
    engine.begin_turn()
    task = engine.with_context(user, history, emit, first_step=False)
    baseline = await engine.baseline_failures()
    gates = TurnGates(engine.root, exec_gate=engine.exec_gate, repro=engine.repro,
                      claim_repro=engine.claim == "repro")
    gates.start()
    trials = Trials(engine, summary, gates, emit, user, mutate=mutate, textbook=textbook)
    emit(Notice("info", "trials: tomo asks for a test that reproduces the problem, then for fixes, each from the task "
                        "alone and each judged by that test and the project's check"))
    try:
        await trials.run(task, baseline)
    except _Interrupted:
        summary.ended_by = "interrupted"
        trials.release()
    except ModelError as exc:
        summary.ended_by, summary.error = "error", exc.message
        emit(Notice("error", f"the model failed: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")))
        trials.release()
    finally:
        end_turn(summary, gates, emit)
    new = trials.messages
    if engine.checkpoint is not None:
        engine.checkpoint(new)
    return new


# ---- helpers ----------------------------------------------------------------------------------------------


def _rejection(why: str, output: str) -> str:
    """What the next request says about a test that was no reproduction."""
    if why.startswith("it passes"):
        return ("It passes now, so it asserts what the code does now, which the task says is wrong. Assert the "
                "result the task says is right.")
    line = next((ln.strip() for ln in output.splitlines() if ln.startswith("E ")), "")
    return f"It is not a reproduction: {why}" + (f" ({line[1:].strip()})." if line else ".")


def _protected(path: str, repro: Repro | None, *, feature: bool = False) -> bool:
    """A file no trial may change: the reproduction and a second test, or every test when the project's failing
    check is the reproduction (the tests are then the specification) or there is none (the check is then the only
    judge), except for a feature. Other tests may change with the code: a feature can change what an existing test
    asserts (the ceiling found one in the held-out suite), and a feature with no reproduction is never verified."""
    if repro is None:
        return not feature and is_test_path(path)
    if repro.path is None:
        return is_test_path(path)
    return path == repro.path or any(path == guard for guard, _code in repro.guards)


def _after_imports(code: str, sources: Sequence[str]) -> str:
    """``code`` with ``sources`` put after its leading imports (a copied constant may use what they import)."""
    body = ast.parse(code).body
    first = next((n for n in body if not isinstance(n, ast.Import | ast.ImportFrom)), None)
    lines = code.splitlines(keepends=True)
    decorators = getattr(first, "decorator_list", [])
    at = len(lines) if first is None else min([first.lineno, *(d.lineno for d in decorators)]) - 1
    return "".join(lines[:at]) + "\n\n" + "\n\n\n".join(sources) + "\n\n\n" + "".join(lines[at:]).lstrip("\n")


def _retested(repro: Repro) -> bool:
    """Whether a search that finds nothing against ``repro`` is tried against other tests (the model's own)."""
    return RETESTS > 0 and repro.by == "model" and repro.path is not None


def _judged_by(repro: Repro) -> str:
    """The weak first judge of a fix, in a doubt's words (a model's test, or the project's one failing test)."""
    return "by a test that " + ("the model wrote" if repro.by == "model" else "covers one case of the project")


def _fingerprint(root: Path, paths: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for rel in sorted(paths):
        digest.update(rel.encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update((root / rel).read_bytes())
    return digest.hexdigest()
