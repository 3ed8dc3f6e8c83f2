"""`--engine tools`: the tool loop with a coding toolset, behind the same sandbox, approval and gates."""

from __future__ import annotations

from oi.oi_support import LIMITS, PYTEST
from tomo.events import BlockStarted, GateBlocked, ListSink
from tomo.models.scripted import ScriptedModel
from tomo.oi.approval import RefuseAll
from tomo.oi.tools_engine import ToolsEngine


def call(name: str, **args) -> dict:
    return {"tool_calls": [{"name": name, "args": args}]}


def engine_for(sandbox, root, replies, **kwargs) -> tuple[ToolsEngine, ScriptedModel]:
    model = ScriptedModel(replies)
    return ToolsEngine(model, sandbox, workspace=root, limits=LIMITS, **kwargs), model


async def test_a_parse_only_run_is_refused_and_a_real_test_passes(strict, project):
    replies = [call("edit_file", path="calc.py", old="a - b", new="a + b"), call("run", command="ruff check calc.py"),
               {"content": "done"}, call("run", command=f"{PYTEST} tests/test_calc.py"), {"content": "done, tested"}]
    engine, _ = engine_for(strict, project, replies, exec_gate=True)
    sink = ListSink()
    messages = await engine.turn([], "fix add", sink)
    s = engine.last
    assert s.verified and s.rounds == 5 and s.blocks == 2 and s.files_changed == ["calc.py"]
    assert [e.gate for e in sink.of(GateBlocked)] == ["exec"]
    refusal = next(m.content for m in messages if "cannot end the turn" in m.content)
    assert "with the run tool" in refusal and "calc.py" in refusal
    assert messages[0].role == "user" and messages[0].content == "fix add"  # no system message in what is saved


async def test_paths_stay_in_the_workspace_and_out_of_tomos_state(strict, project):
    replies = [call("read_file", path="../outside.txt"), call("write_file", path=".tomo/sessions/x.json", content="{}"),
               call("edit_file", path="calc.py", old="return", new="yield"), call("read_file", path="calc.py", start=4,
                                                                                  end=5),
               {"content": "looked"}]
    (project.parent / "outside.txt").write_text("secret")
    engine, _ = engine_for(strict, project, replies)
    messages = await engine.turn([], "look around", ListSink())
    tool_texts = [m.content for m in messages if m.role == "tool"]
    assert "outside the workspace" in tool_texts[0] and "secret" not in tool_texts[0]
    assert "inside .tomo/" in tool_texts[1] and not (project / ".tomo" / "sessions" / "x.json").exists()
    assert "occurs 2 times" in tool_texts[2]
    assert tool_texts[3] == ("    4  def add(a, b):\n    5      return a - b\n"
                             "[lines 4-5 of 9; ask for more with start/end]")
    assert engine.last.files_changed == []


async def test_commands_pass_the_approval_gate(strict, project):
    replies = [call("run", command="touch made"), {"content": "ok"}]
    engine, _ = engine_for(strict, project, replies, gate=RefuseAll())
    sink = ListSink()
    messages = await engine.turn([], "make a file", sink)
    assert not (project / "made").exists()
    assert "declined" in next(m.content for m in messages if m.role == "tool")
    assert len(sink.of(BlockStarted)) == 1 and [e.gate for e in sink.of(GateBlocked)] == ["approval"]


async def test_a_model_failure_keeps_what_the_run_did(strict, project):
    engine, _ = engine_for(strict, project, [call("edit_file", path="calc.py", old="a - b", new="a + b")])
    messages = await engine.turn([], "fix add", ListSink())
    assert engine.last.ended_by == "error" and "no reply left" in (engine.last.error or "")
    assert [m.role for m in messages] == ["user", "assistant", "tool"] and engine.last.files_changed == ["calc.py"]
