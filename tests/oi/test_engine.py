"""The oi engine's turn: the rounds limit, the approval gate, model errors, Ctrl-C, the context pack, prompts."""

from __future__ import annotations

import asyncio
import os
import sys
import types
from pathlib import Path

import pytest

from oi.oi_support import FIX, GREEN, py, say, sh
from tomo.errors import ConfigError
from tomo.events import BlockStarted, GateBlocked, LimitReached, ListSink, Notice
from tomo.oi.approval import AskingGate, RefuseAll
from tomo.oi.engine import Engine
from tomo.oi.prompts import system_prompt


async def test_the_turn_returns_every_message_with_the_users_first(make_engine, strict, project):
    engine, model = make_engine(strict, project, [sh("echo hello"), say("said hello")])
    messages = await engine.turn([], "say hello", ListSink())
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0].content == "say hello"
    assert "[block 1 (shell) · exit code 0" in messages[2].content and "hello" in messages[2].content
    assert model.sent[0][0].role == "system" and "fenced block" in model.sent[0][0].content
    assert engine.last.ended_by == "model" and engine.last.blocks == 1 and engine.last.rounds == 2


async def test_max_rounds_stops_a_model_that_never_stops(make_engine, strict, project):
    engine, model = make_engine(strict, project, [sh(f"echo round {n}") for n in range(10)], max_rounds=3)
    sink = ListSink()
    messages = await engine.turn([], "loop forever", sink)
    assert engine.last.ended_by == "rounds" and engine.last.rounds == 3 and model.remaining == 7
    assert sink.of(LimitReached)[0].value == 3
    assert not engine.last.verified
    assert "round 2" in messages[-1].content  # the last block's output is kept for the session


async def test_a_refused_block_never_runs_and_ends_the_turn(make_engine, strict, project):
    replies = [{"content": "```bash\ntouch made-by-block-1\n```\n```bash\ntouch made-by-block-2\n```"}, say("ok")]
    engine, model = make_engine(strict, project, replies, gate=RefuseAll())
    sink = ListSink()
    messages = await engine.turn([], "make files", sink)
    assert not (project / "made-by-block-1").exists() and not (project / "made-by-block-2").exists()
    assert engine.last.ended_by == "refused" and model.remaining == 1 and engine.last.blocks == 0
    assert "the user declined to run block 1" in messages[-1].content
    assert "nor did the 1 block(s)" in messages[-1].content
    assert [e.gate for e in sink.of(GateBlocked)] == ["approval"]


async def test_always_stops_asking_and_no_refuses(make_engine, strict, project):
    asked: list[int] = []
    answers = iter(["always"])

    def ask(block, number):
        asked.append(number)
        return next(answers)

    engine, _ = make_engine(strict, project, [sh("touch a"), sh("touch b"), say("done")], gate=AskingGate(ask))
    await engine.turn([], "make files", ListSink())
    assert asked == [1] and (project / "a").exists() and (project / "b").exists()
    gate = AskingGate(lambda block, number: "what?")  # an answer it does not know is a no
    engine, _ = make_engine(strict, project, [sh("touch c"), say("done")], gate=gate)
    await engine.turn([], "make a file", ListSink())
    assert not (project / "c").exists() and engine.last.ended_by == "refused"


async def test_a_model_error_returns_what_the_turn_did(make_engine, strict, project):
    engine, _ = make_engine(strict, project, [FIX])  # the script runs out after one reply
    sink = ListSink()
    messages = await engine.turn([], "fix it", sink)
    assert engine.last.ended_by == "error" and "no reply left" in (engine.last.error or "")
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert engine.last.files_changed == ["calc.py"]
    assert any(n.level == "error" for n in sink.of(Notice))


async def test_only_unrunnable_blocks_are_told_once(make_engine, strict, project):
    diff = say("```diff\n-return a - b\n+return a + b\n```")
    engine, model = make_engine(strict, project, [diff, diff])
    messages = await engine.turn([], "fix it", ListSink())
    assert "Nothing was run" in messages[2].content and "'diff'" in messages[2].content
    assert engine.last.ended_by == "model" and engine.last.rounds == 2 and model.remaining == 0


async def test_a_block_over_the_size_limit_is_explained_not_run(make_engine, strict, project):
    engine, _ = make_engine(strict, project, [py("x = 1\n" * 30_000), say("ok")])
    messages = await engine.turn([], "big", ListSink())
    assert "not run" in messages[2].content and "at most" in messages[2].content


def _alive(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


async def _interrupt_when_running(engine: Engine, sink: StartSink, times: int) -> None:
    for _ in range(times):
        await sink.started.wait()
        sink.started.clear()
        await asyncio.sleep(1.0)  # let the block's process start inside the box
        engine.interrupt()


class StartSink(ListSink):
    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()

    def emit(self, event) -> None:
        super().emit(event)
        if isinstance(event, BlockStarted):
            self.started.set()


async def test_ctrl_c_stops_the_block_tells_the_model_and_saves(make_engine, strict, project):
    saved: list[int] = []
    marker = "sleep 47.5"
    replies = [{"content": f"```bash\necho started; {marker}; echo never\n```\n```bash\ntouch after\n```"},
               say("stopped as asked")]
    engine, model = make_engine(strict, project, replies, checkpoint=lambda new: saved.append(len(new)))
    sink = StartSink()
    turn = asyncio.create_task(engine.turn([], "wait", sink))
    await _interrupt_when_running(engine, sink, 1)
    messages = await turn
    report = messages[2].content
    assert "interrupted by the user" in report and "started" in report and "never" not in report
    assert "did not run" in report and not (project / "after").exists()  # the next block was not run
    assert engine.last.ended_by == "model"  # the model was told and answered
    assert "interrupted" in model.sent[1][-1].content
    assert saved and not _alive(marker)


async def test_a_second_ctrl_c_ends_the_turn(make_engine, strict, project):
    replies = [sh("sleep 48.5"), sh("sleep 48.5"), say("never asked")]
    saved: list[int] = []
    engine, model = make_engine(strict, project, replies, checkpoint=lambda new: saved.append(len(new)))
    sink = StartSink()
    turn = asyncio.create_task(engine.turn([], "wait", sink))
    await _interrupt_when_running(engine, sink, 1)
    await sink.started.wait()
    await asyncio.sleep(1.0)
    engine.interrupt()
    messages = await turn
    assert engine.last.ended_by == "interrupted" and model.remaining == 1
    assert messages[-1].role == "user" and "interrupted" in messages[-1].content
    assert saved[-1] == len(messages) and not _alive("sleep 48.5")


async def test_the_context_pack_is_injected_once_when_available(make_engine, strict, project, monkeypatch):
    # tomo.oi.context_pack is another part's module; this stand-in proves only how the engine uses one.
    calls = []

    def build(root, task, *, lsp=None, budget_tokens=0):
        calls.append((Path(root), task, lsp, budget_tokens))
        return types.SimpleNamespace(files=[], symbols=[], text="## context\ncalc.add is defined in calc.py:4")

    monkeypatch.setitem(sys.modules, "tomo.oi.context_pack", types.SimpleNamespace(build=build))
    engine, _model = make_engine(strict, project, [say("ok"), say("ok again")], context=True, lsp="pylsp")
    first = await engine.turn([], "fix add", ListSink())
    assert first[0].content.startswith("fix add\n\n## context\ncalc.add is defined in calc.py:4\n\n")
    assert first[0].content.endswith("then a ```bash block that runs the tests.")  # the first step, said last
    assert calls == [(project.resolve(), "fix add", "pylsp", 1500)]
    second = await engine.turn(first, "and now?", ListSink())
    assert second[0].content == "and now?" and len(calls) == 1  # once per session, not per turn


async def test_a_failing_context_pack_is_a_warning_not_a_failure(make_engine, strict, project, monkeypatch):
    def build(root, task, *, lsp=None, budget_tokens=0):
        raise RuntimeError("index is broken")

    monkeypatch.setitem(sys.modules, "tomo.oi.context_pack", types.SimpleNamespace(build=build))
    engine, _ = make_engine(strict, project, [say("ok")], context=True)
    sink = ListSink()
    messages = await engine.turn([], "fix add", sink)
    assert messages[0].content == "fix add" and engine.last.ended_by == "model"
    assert any("index is broken" in n.text for n in sink.of(Notice))


def test_directives_are_opt_in_and_name_nothing_of_a_task():
    base = system_prompt()
    both = system_prompt(["verify", "repro"])
    assert both.startswith(base.rstrip("\n")) and len(both) > len(base)
    assert "Verify by running" in both and "Reproduce first" in both and "Verify by running" not in base
    for word in ("calc", "shop", "pytest", "test_", ".py"):  # the edit form's one example is a neutral placeholder
        assert word not in both.replace("```python path/to/module.py", "").replace("```python", "")
    with pytest.raises(ConfigError, match="unknown directive"):
        system_prompt(["speed"])


async def test_python_blocks_are_fresh_processes(make_engine, strict, project):
    engine, _ = make_engine(strict, project, [py("x = 41"), py("print(x + 1)"), say("ok")])
    messages = await engine.turn([], "count", ListSink())
    assert "NameError" in messages[4].content and "exit code 1" in messages[4].content


async def test_the_exec_gate_counts_a_green_check_after_the_edit(make_engine, local, project):
    engine, _ = make_engine(local, project, [FIX, GREEN, say("done")], exec_gate=True)
    await engine.turn([], "fix", ListSink())
    assert engine.last.verified  # the local box runs the same hook


async def test_a_streamed_reply_is_shown_as_it_arrives_and_run_the_same(make_engine, strict, project):
    from tomo.events import TextStreamed

    engine, _ = make_engine(strict, project, [sh("echo streamed"), say("done")], stream=True)
    sink = ListSink()
    messages = await engine.turn([], "stream", sink)
    assert "".join(e.text for e in sink.of(TextStreamed)).startswith("I will run this.")
    assert "streamed" in messages[2].content and engine.last.ended_by == "model"
