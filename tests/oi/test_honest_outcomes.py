"""Issue 26: "verified" only when a check ran the changed code green, and a weak model is told the truth.

The scripted models here replay what a real small coder model (Qwen2.5-Coder 1.5B on llama.cpp) was seen doing: it
types the corrected function as a ```python block, which defines the function in a process that exits and changes
no file, then says "fixed". The harness must never certify that, must tell the model what its block did, and must
give it an edit form it gets right.
"""

from __future__ import annotations

import asyncio

from oi.oi_support import GREEN, LIMITS, PYTEST, RED, say, sh
from oi.test_engine import StartSink
from tomo.events import GateBlocked, LimitReached, ListSink, Notice, TurnEnded
from tomo.models.scripted import ScriptedModel
from tomo.oi.engine import Engine

FIXED_ADD = "def add(a, b):\n    return a + b\n"


def py_block(code: str, label: str = "python") -> dict[str, str]:
    return {"content": f"Here is the corrected function:\n\n```{label}\n{code}```\n"}


async def turn(make_engine, sandbox, project, replies, **kwargs):
    engine, model = make_engine(sandbox, project, replies, **kwargs)
    sink = ListSink()
    messages = await engine.turn([], "add() subtracts; make it add", sink)
    return engine.last, messages, sink, model


async def test_a_typed_function_that_changes_nothing_is_never_verified(make_engine, strict, project):
    typed = py_block(FIXED_ADD + "\nprint(add(2, 3))\n")  # it runs: defines add, prints 5, writes nothing
    summary, messages, sink, model = await turn(make_engine, strict, project,
                                                [typed, say("fixed"), say("fixed, really")], exec_gate=True)
    assert "return a - b" in (project / "calc.py").read_text()  # nothing was written
    assert summary.outcome == "unchanged" and not summary.verified and summary.files_changed == []
    report = messages[2].content
    assert "this block changed no file" in report
    assert "`add` is defined in calc.py" in report and "```python calc.py" in report  # where, and the edit form
    assert summary.pushed_back == 1 and [e.gate for e in sink.of(GateBlocked)] == ["change"]
    assert "no file of the project has changed" in model.sent[2][-1].content
    ended = sink.of(TurnEnded)[0]
    assert ended.outcome == "unchanged" and not ended.verified and "no file changed" in ended.reason


async def test_without_a_gate_nothing_changed_is_unchanged_and_not_pushed_back(make_engine, strict, project):
    summary, _, sink, _ = await turn(make_engine, strict, project, [py_block(FIXED_ADD + "print(1)\n"), say("fixed")])
    assert summary.outcome == "unchanged" and not summary.verified and summary.pushed_back == 0
    assert not sink.of(GateBlocked)


async def test_push_back_can_be_switched_off(make_engine, strict, project):
    summary, _, _, model = await turn(make_engine, strict, project, [say("fixed")], exec_gate=True, push_back=False)
    assert summary.outcome == "unchanged" and summary.pushed_back == 0 and model.remaining == 0


async def test_a_labeled_edit_block_is_laid_into_its_file_and_verified_by_a_real_check(make_engine, strict, project):
    replies = [py_block(FIXED_ADD, "python calc.py"), GREEN, say("fixed add")]
    summary, messages, _, _ = await turn(make_engine, strict, project, replies, exec_gate=True)
    text = (project / "calc.py").read_text()
    assert "return a + b" in text and "def area(r):" in text and "import math" in text  # the rest kept
    assert "replaced `add`" in messages[2].content and "this block changed calc.py" in messages[2].content
    assert summary.outcome == "verified" and summary.verified and summary.files_changed == ["calc.py"]


async def test_an_edit_without_a_check_is_unverified_even_without_a_gate(make_engine, strict, project):
    summary, _, _, _ = await turn(make_engine, strict, project, [py_block(FIXED_ADD, "python calc.py"), say("done")])
    assert summary.outcome == "unverified" and not summary.verified
    assert "no check ran" in summary.reason


async def test_a_definitions_only_block_is_an_edit_of_the_one_file_that_defines_it(make_engine, strict, project):
    replies = [py_block(FIXED_ADD), GREEN, say("fixed")]
    summary, messages, _, _ = await turn(make_engine, strict, project, replies, exec_gate=True)
    assert "return a + b" in (project / "calc.py").read_text()
    assert "laid it into that file instead of running it" in messages[2].content
    assert summary.verified


async def test_a_test_command_typed_after_the_definition_is_left_out_not_a_reason_to_refuse(make_engine, strict,
                                                                                             project):
    replies = [py_block(FIXED_ADD + "\n# run the tests\npython -m pytest -q\n"), GREEN, say("fixed")]
    summary, messages, _, _ = await turn(make_engine, strict, project, replies, exec_gate=True)
    assert "return a + b" in (project / "calc.py").read_text()
    assert "pytest" not in (project / "calc.py").read_text()
    assert "which is not Python (`python -m pytest -q`)" in messages[2].content
    assert summary.verified


async def test_inference_can_be_switched_off_and_never_guesses_between_files(make_engine, strict, project):
    summary, _, _, _ = await turn(make_engine, strict, project, [py_block(FIXED_ADD), say("ok")], infer_edits=False)
    assert summary.outcome == "unchanged"
    (project / "other.py").write_text("def add(a, b):\n    return 0\n")  # now two files define add
    summary, messages, _, _ = await turn(make_engine, strict, project, [py_block(FIXED_ADD), say("ok")])
    assert summary.outcome == "unchanged" and "this block changed no file" in messages[2].content


async def test_an_edit_may_not_leave_the_project(make_engine, strict, project, tmp_path):
    outside = tmp_path / "outside.py"
    replies = [{"content": f"```python ../outside.py\nx = 1\n```\n```python {outside}\nx = 1\n```\n"
                           "```python .git/hooks/x.py\nx = 1\n```"}, say("done")]
    summary, messages, _, _ = await turn(make_engine, strict, project, replies)
    assert not outside.exists() and not (project / ".git").exists()
    report = messages[2].content
    assert "leaves the project" in report and report.count("Nothing was written") == 3
    assert summary.outcome == "unchanged"


async def test_the_project_check_runs_when_the_model_edits_and_stops(make_engine, strict, project):
    replies = [py_block(FIXED_ADD, "python calc.py"), say("fixed")]
    summary, messages, _, _ = await turn(make_engine, strict, project, replies, exec_gate=True, check=f"{PYTEST} tests")
    assert "tomo ran the project's check" in messages[2].content and "3 passed" in messages[2].content
    assert summary.outcome == "verified" and summary.blocks == 2


async def test_a_failing_project_check_goes_back_to_the_model(make_engine, strict, project):
    wrong = py_block("def add(a, b):\n    return a * b\n", "python calc.py")
    replies = [wrong, say("fixed"), py_block(FIXED_ADD, "python calc.py"), say("fixed now")]
    summary, messages, _, model = await turn(make_engine, strict, project, replies, exec_gate=True,
                                             check=f"{PYTEST} tests")
    assert "1 failed" in messages[2].content and "exit code 1" in messages[2].content
    assert summary.outcome == "verified" and model.remaining == 0


async def test_the_same_reply_again_and_again_ends_the_turn(make_engine, strict, project):
    same = sh("echo same")
    summary, _, sink, model = await turn(make_engine, strict, project, [same] * 5 + [say("never")], max_repeats=3)
    assert summary.ended_by == "stuck" and summary.rounds == 4 and model.remaining == 2
    assert sink.of(LimitReached)[0].limit == "repeats"
    assert summary.outcome == "unchanged"


async def test_one_ctrl_c_that_kills_the_only_check_leaves_the_turn_unverified(make_engine, strict, project):
    slow_green = sh(f"sleep 46.5 && {PYTEST} tests")
    replies = [py_block(FIXED_ADD, "python calc.py"), slow_green, say("done, the tests pass")]
    engine, _ = make_engine(strict, project, replies)
    sink = StartSink()
    task = asyncio.create_task(engine.turn([], "fix add", sink))
    await sink.started.wait()  # the edit
    sink.started.clear()
    await sink.started.wait()  # the check
    await asyncio.sleep(1.0)
    engine.interrupt()
    await task
    summary = engine.last
    assert summary.ended_by == "model" and summary.files_changed == ["calc.py"]
    assert summary.outcome == "unverified" and "interrupted" in summary.reason


async def test_every_block_says_whether_it_changed_a_file(make_engine, strict, project):
    _, messages, _, _ = await turn(make_engine, strict, project, [RED, say("it fails")])
    block, _, after = messages[2].content.partition("\n\n[tomo: the check failed")
    assert block.rstrip().endswith("[tomo: this block changed no file]") and after  # then the next step (red check)


async def test_the_push_back_names_the_context_packs_best_definition(make_engine, strict, project):
    summary, _, _, model = await turn(make_engine, strict, project, [say("I changed add."), say("done")],
                                      exec_gate=True, context=True)
    assert summary.pushed_back == 1 and summary.outcome == "unchanged"
    push = model.sent[1][-1].content
    assert "describing a change" in push and "```python calc.py\ndef add(...):" in push


async def test_a_reply_that_broke_off_ends_the_turn_as_an_error_and_runs_nothing(make_engine, strict, project):
    """A stream that ended without a finish reason (llama-cpp-python gives the slot to a newer request) is half a
    reply: its complete-looking block is not run, and the turn is an error, never "unchanged" by the model's word."""
    broken = {"content": "```bash\necho WROTE > marker.txt\n```\n", "finish": "error"}
    summary, _, sink, model = await turn(make_engine, strict, project, [broken, say("done")], exec_gate=True)
    assert not (project / "marker.txt").exists()
    assert summary.ended_by == "error" and summary.outcome == "error" and not summary.verified
    assert "broke off" in summary.reason and model.remaining == 1
    assert sink.of(TurnEnded)[0].outcome == "error"


async def test_a_long_task_is_restated_at_the_end_of_the_first_message_cut_between_words(make_engine, strict,
                                                                                         project):
    task = "add() subtracts; make it add. " + "The totals are wrong everywhere downstream. " * 30
    engine, model = make_engine(strict, project, [say("ok")], context=True)
    await engine.turn([], task, ListSink())
    first = model.sent[0][-1].content
    restated = first[first.rindex("Task: ") + len("Task: "):first.rindex("\nYour first reply:")]
    assert restated.endswith(" …") and 900 < len(restated) <= 1002
    assert " ".join(task.split()).startswith(restated.removesuffix(" …"))
    assert restated.removesuffix(" …").split()[-1] in task.split()  # a whole word, never half of one


class TemperedScript(ScriptedModel):
    """A scripted model with a temperature, as the OpenAI-compatible adapter has: records it at every call."""

    def __init__(self, replies, temperature=0.2):
        super().__init__(replies)
        self.temperature = temperature
        self.seen: list[float | None] = []

    async def chat(self, messages, tools=(), **kwargs):
        self.seen.append(self.temperature)
        return await super().chat(messages, tools, **kwargs)


async def test_after_a_reply_that_did_nothing_new_the_next_is_sampled_hotter(strict, project):
    same = py_block("def add(a, b):\n    return a - b\n", "python calc.py")  # what the file already holds
    model = TemperedScript([py_block(FIXED_ADD, "python calc.py"), py_block(FIXED_ADD, "python calc.py"), same,
                            say("done")])
    engine = Engine(model, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10, max_rewinds=0)
    sink = ListSink()
    await engine.turn([], "add() subtracts; make it add", sink)
    # 1: an edit; 2: the same reply again (stale); 3: hot; 3 puts the old code back (a change); 4: normal
    # (no fresh start here: max_rewinds=0; see the rewind test below)
    assert model.seen == [0.2, 0.2, 0.8, 0.2] and model.temperature == 0.2
    assert any("sampled at temperature 0.8 (it was 0.2)" in n.text for n in sink.of(Notice))
    no_op = TemperedScript([same, say("done")])
    engine = Engine(no_op, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10, max_rewinds=0)
    await engine.turn([], "again", ListSink())
    assert no_op.seen == [0.2, 0.8]  # an edit identical to the file is stale too
    default = TemperedScript([same, say("done")], temperature=None)
    engine = Engine(default, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10)
    await engine.turn([], "again", ListSink())
    assert default.seen == [None, None]  # the provider's default is never overridden
    off = TemperedScript([same, say("done")])
    engine = Engine(off, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10, retry_temperature=None)
    await engine.turn([], "again", ListSink())
    assert off.seen == [0.2, 0.2]


async def test_a_block_too_long_to_run_is_said_to_the_model_and_in_the_log(make_engine, strict, project):
    huge = sh("echo start\n# " + "x" * 130_000 + "\n")
    summary, messages, sink, _ = await turn(make_engine, strict, project, [huge, say("done")])
    assert "not run" in messages[2].content and "at most 120,000" in messages[2].content
    (shown,) = [e for e in sink.events if type(e).__name__ == "BlockOutput"]
    assert shown.exit_code == 2 and "at most 120,000" in shown.output
    assert summary.outcome == "unchanged"


async def test_a_stale_reply_starts_the_attempt_over_from_the_task_with_the_file_put_back(strict, project):
    wrong = py_block("def add(a, b):\n    return a * b\n", "python calc.py")
    model = TemperedScript([wrong, GREEN, wrong, py_block(FIXED_ADD, "python calc.py"), GREEN, say("fixed")])
    engine = Engine(model, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10, exec_gate=True,
                    check=PYTEST)
    sink = ListSink()
    messages = await engine.turn([], "add() subtracts; make it add", sink)
    summary = engine.last
    # round 3 re-sent the wrong code (stale): the file went back to `a - b` and round 4 saw the task alone, hotter
    assert [len(sent) for sent in model.sent] == [2, 4, 6, 2, 4, 6]
    assert model.seen == [0.2, 0.2, 0.2, 0.8, 0.2, 0.2]
    assert summary.rewinds == 1 and summary.verified and summary.rounds == 6
    assert "return a + b" in (project / "calc.py").read_text()
    assert any("attempt 2" in n.text and "calc.py put back" in n.text for n in sink.of(Notice))
    assert "a * b" not in "".join(m.content for m in messages)  # the saved conversation is the last attempt's


async def test_no_rewind_without_a_temperature_to_raise_or_beyond_the_limit(strict, project):
    wrong = py_block("def add(a, b):\n    return a * b\n", "python calc.py")
    plain = ScriptedModel([wrong, wrong, say("done")])  # no temperature: a fresh start would answer the same
    engine = Engine(plain, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10)
    await engine.turn([], "add() subtracts; make it add", ListSink())
    assert engine.last.rewinds == 0 and "a * b" in (project / "calc.py").read_text()
    stuck = TemperedScript([wrong] * 7 + [say("done")])
    engine = Engine(stuck, strict, workspace=project, context=False, limits=LIMITS, max_rounds=10, max_rewinds=2)
    await engine.turn([], "again", ListSink())
    assert engine.last.rewinds == 2
