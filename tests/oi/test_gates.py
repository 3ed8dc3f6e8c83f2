"""The exec and repro gates against scripted models that try to cheat, in the real strict sandbox.

Each cheat is one way a model can claim "done" on an edit it never ran: compiling it, parsing it, running a test
that never imports it, or one that imports it but never reaches the changed function, hiding a failure behind
``|| true``, and finishing green without ever having seen the bug (repro). Every refusal must name what is missing;
the honest path must pass on its first try.
"""

from __future__ import annotations

from pathlib import Path

from oi.oi_support import FIX, GREEN, PYTEST, RED, py, say, sh
from tomo.events import GateBlocked, ListSink, TurnEnded


async def run_turn(make_engine, sandbox, root: Path, replies, **kwargs):
    engine, model = make_engine(sandbox, root, replies, **kwargs)
    sink = ListSink()
    messages = await engine.turn([], "make the failing test pass", sink)
    return engine.last, messages, sink, model


def texts(messages) -> str:
    return "\n".join(m.content for m in messages)


async def test_the_honest_path_passes_both_gates_first_time(make_engine, strict, project):
    summary, _messages, sink, _ = await run_turn(make_engine, strict, project, [RED, FIX, GREEN, say("fixed add")],
                                                exec_gate=True, repro=True)
    assert summary.ended_by == "model" and summary.verified
    assert summary.gates["exec"].satisfied and summary.gates["exec"].refusals == 0
    assert summary.gates["repro"].satisfied and "block 1 failed" in summary.gates["repro"].reason
    assert summary.files_changed == ["calc.py"]
    assert "return a + b" in (project / "calc.py").read_text()
    assert not sink.of(GateBlocked)
    assert sink.of(TurnEnded)[0].verified
    assert not (project / ".tomo" / "oi").exists()  # the hook and its traces are gone


async def test_py_compile_does_not_pass_the_exec_gate(make_engine, strict, project):
    summary, messages, sink, _ = await run_turn(
        make_engine, strict, project, [FIX, sh("python -m py_compile calc.py"), say("done, it compiles")],
        exec_gate=True, max_rounds=3)
    assert summary.ended_by == "rounds" and not summary.verified
    verdict = summary.gates["exec"]
    assert verdict.satisfied is False and verdict.refusals == 1
    assert "calc.py" in verdict.reason and "never loaded" in verdict.reason
    assert [e.gate for e in sink.of(GateBlocked)] == ["exec"]
    assert "you cannot end the turn yet" in messages[-1].content  # the model was told what is missing


async def test_ast_parse_in_python_does_not_pass(make_engine, strict, project):
    check = py("import ast\nast.parse(open('calc.py').read())\nprint('parses fine')")
    summary, messages, _, _ = await run_turn(make_engine, strict, project, [FIX, check, say("done")], exec_gate=True,
                                             max_rounds=3)
    assert not summary.verified
    assert "parses fine" in texts(messages)
    # a Python block that ran none of the workspace's code is no check at all
    assert "no check ran after that" in summary.gates["exec"].reason


async def test_a_test_that_never_imports_the_changed_module_does_not_pass(make_engine, strict, project):
    summary, messages, _, _ = await run_turn(
        make_engine, strict, project, [FIX, sh(f"{PYTEST} tests/test_other.py"), say("tests pass")], exec_gate=True,
        max_rounds=3)
    assert "1 passed" in texts(messages)
    assert not summary.verified and "calc.py" in summary.gates["exec"].reason


async def test_a_test_that_imports_the_module_but_skips_the_changed_function_does_not_pass(make_engine, strict,
                                                                                         project):
    summary, messages, _, _ = await run_turn(
        make_engine, strict, project, [FIX, sh(f"{PYTEST} tests/test_area.py"), say("tests pass")], exec_gate=True,
        max_rounds=3)
    assert "1 passed" in texts(messages)
    reason = summary.gates["exec"].reason
    assert not summary.verified
    assert "loaded but none of its changed lines ran" in reason and "line 5" in reason


async def test_a_failure_hidden_behind_or_true_does_not_pass(make_engine, strict, project):
    # the "fix" is wrong (still subtracts), and `|| true` turns the failing run green
    wrong = sh("sed -i 's/return a - b/return b - a/' calc.py")
    summary, _, _, _ = await run_turn(make_engine, strict, project,
                                      [wrong, sh(f"{PYTEST} tests/test_calc.py || true"), say("done")],
                                      exec_gate=True, max_rounds=3)
    assert not summary.verified and "exit status is not its check's" in summary.gates["exec"].reason


async def test_a_failing_check_keeps_the_gate_shut(make_engine, strict, project):
    wrong = sh("sed -i 's/return a - b/return b - a/' calc.py")
    summary, _, _, _ = await run_turn(make_engine, strict, project, [wrong, RED, say("done")], exec_gate=True,
                                      max_rounds=3)
    assert not summary.verified and "failed (exit 1)" in summary.gates["exec"].reason


async def test_green_without_red_is_refused_by_the_repro_gate(make_engine, strict, project):
    summary, _messages, sink, _ = await run_turn(make_engine, strict, project, [FIX, GREEN, say("fixed")],
                                                exec_gate=True, repro=True, max_rounds=3)
    assert summary.gates["exec"].satisfied  # the check did execute the fix...
    repro = summary.gates["repro"]
    assert repro.satisfied is False and repro.refusals == 1  # ...but nothing showed the bug first
    assert "not preceded by a failing check" in repro.reason
    assert [e.gate for e in sink.of(GateBlocked)] == ["repro"]
    assert not summary.verified


async def test_a_red_that_never_reaches_the_fixed_code_does_not_count(make_engine, strict, project):
    fake_red = sh("python -c 'import sys; sys.exit(1)'")
    summary, _, _, _ = await run_turn(make_engine, strict, project, [fake_red, FIX, GREEN, say("fixed")],
                                      exec_gate=True, repro=True, max_rounds=4)
    assert summary.gates["exec"].satisfied
    assert summary.gates["repro"].satisfied is False and "never ran calc.py" in summary.gates["repro"].reason


async def test_a_refused_model_that_then_runs_the_tests_passes(make_engine, strict, project):
    replies = [RED, FIX, sh("python -m py_compile calc.py"), say("done"), GREEN, say("now really done")]
    summary, _messages, _, model = await run_turn(make_engine, strict, project, replies, exec_gate=True, repro=True)
    assert summary.verified and summary.ended_by == "model"
    assert summary.gates["exec"].refusals == 1 and summary.rounds == 6
    # the refusal the model read named the file and said a parse-only check does not count
    refusal = next(m.content for m in model.sent[4] if "cannot end the turn" in m.content)
    assert "calc.py" in refusal


async def test_other_languages_need_an_executing_command(make_engine, local, tmp_path):
    root = tmp_path / "sh"
    root.mkdir()
    (root / "greet.sh").write_text("echo hello\n")
    edit = sh("printf 'echo hello, world\\n' > greet.sh")
    summary, _, _, _ = await run_turn(make_engine, local, root, [edit, sh("bash -n greet.sh"), say("done")],
                                      exec_gate=True, max_rounds=3)
    assert not summary.verified and "only parse only checks" in summary.gates["exec"].reason
    (root / "greet.sh").write_text("echo hello\n")
    summary, _, _, _ = await run_turn(make_engine, local, root, [edit, sh("bash greet.sh"), say("done")],
                                      exec_gate=True)
    assert summary.verified


async def test_a_block_that_edits_and_tests_at_once_is_asked_to_check_again(make_engine, strict, project):
    both = sh(f"sed -i 's/return a - b/return a + b/' calc.py && {PYTEST} tests/test_calc.py")
    summary, _, _, _ = await run_turn(make_engine, strict, project, [both, say("done")], exec_gate=True, max_rounds=2)
    assert not summary.verified and "no check ran after that" in summary.gates["exec"].reason


async def test_no_edit_needs_no_check_but_is_never_verified(make_engine, strict, project):
    summary, _, _, _ = await run_turn(make_engine, strict, project, [sh("ls"), say("nothing to do"), say("none")],
                                      exec_gate=True, repro=True)
    assert summary.gates["exec"].satisfied and summary.gates["repro"].satisfied  # no gate has anything to refuse
    assert not summary.verified and summary.outcome == "unchanged" and summary.files_changed == []
    assert summary.pushed_back == 1 and summary.rounds == 3  # asked once more, and the ask cost a round


async def test_revert_reproduce_refix_satisfies_the_repro_gate(make_engine, strict, project):
    revert = sh("sed -i 's/return a + b/return a - b/' calc.py")
    replies = [FIX, GREEN, say("fixed"), revert, RED, FIX, GREEN, say("reproduced, then fixed")]
    summary, _, _, _ = await run_turn(make_engine, strict, project, replies, exec_gate=True, repro=True)
    assert summary.verified and summary.gates["repro"].refusals == 1
    assert summary.gates["repro"].reason == "block 4 failed (exit 1) before the fix, in block 5"


async def test_a_python_block_that_only_looks_after_the_tests_does_not_undo_them(make_engine, strict, project):
    look = py("print(open('calc.py').read())")
    summary, _, _, _ = await run_turn(make_engine, strict, project, [RED, FIX, GREEN, look, say("done")],
                                      exec_gate=True, repro=True)
    assert summary.verified and "block 3" in summary.gates["exec"].reason


async def test_an_edit_in_the_same_second_as_a_test_run_is_never_judged_by_stale_bytecode(make_engine, strict, project):
    """Python reuses a .pyc whose source kept its size and mtime second: a run, a same-size edit and a re-run inside
    one second would execute the old code. Blocks write no bytecode, so the re-run sees the edit (the mtimes are
    pinned here to make the race certain)."""
    pin = "touch -d @1000000000 calc.py"
    block = sh(f"{pin}; python -c 'import calc'; sed -i 's/return a - b/return a + b/' calc.py; {pin}; "
               "python -c 'import calc; print(\"sum\", calc.add(2, 3))'")
    _summary, messages, _sink, _ = await run_turn(make_engine, strict, project, [block, say("done")])
    assert "sum 5" in texts(messages) and "sum -1" not in texts(messages)
    assert not list(project.rglob("*.pyc"))


async def test_a_red_under_an_earlier_reverted_fix_is_not_a_reproduction(make_engine, strict, project):
    # a wrong fix, its red test, the original put back, the right fix: the only red showed the wrong fix's fault
    wrong = sh("sed -i 's/return a - b/return a * b/' calc.py")
    revert = sh("sed -i 's/return a \\* b/return a - b/' calc.py")
    replies = [wrong, RED, revert, FIX, GREEN, say("fixed"), say("fixed, really")]
    summary, _, _, _ = await run_turn(make_engine, strict, project, replies, exec_gate=True, repro=True,
                                      max_rounds=7)
    assert summary.gates["exec"].satisfied
    assert summary.gates["repro"].satisfied is False and "not preceded by a failing check" in \
        summary.gates["repro"].reason
    assert not summary.verified
