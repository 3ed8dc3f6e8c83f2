"""A rename that would leave a program half-renamed refuses to write, in the CLI, the library and assist.

Outside Python, an apply of the confirmed edits alone while same-name references prism could not prove remain is
refused (nothing written, exit status non-zero) unless the ambiguous edits are asked for; the plan says so first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomo.assist import AssistOptions, Session, run
from tomo.models.scripted import ScriptedModel
from tomo.prism import Graph, LeavesReferences, left_behind

from .conftest import write_project

PROVABLE = {"web/a.js": "function h() {}; h();\nexport { h };\n",
            "web/b.js": "import { h } from './a';\nh();\n"}
UNPROVABLE = {**PROVABLE, "web/c.js": "const a = require('./a');\na.h();\nfunction g(h) { return h; }\n"}


def _bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".tomo" not in p.parts}


def test_a_fully_proven_rename_applies_and_exits_0(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, PROVABLE)
    out = run_tomo("graph", "rename", "web.a.h", "h2", "--apply", "--root", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "web/a.js").read_text() == "function h2() {}; h2();\nexport { h2 };\n"
    assert (tmp_path / "web/b.js").read_text() == "import { h2 } from './a';\nh2();\n"


def test_cli_refuses_to_leave_references_and_writes_nothing(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, UNPROVABLE)
    before = _bytes(tmp_path)
    dry = run_tomo("graph", "rename", "web.a.h", "h2", "--root", str(tmp_path))
    assert dry.returncode == 0
    first = dry.stdout.splitlines()[0]
    assert first.startswith("warning: applying only the confirmed edits would rename `h` and leave 3")
    out = run_tomo("graph", "rename", "web.a.h", "h2", "--apply", "--root", str(tmp_path))
    assert out.returncode == 2
    err = " ".join(out.stderr.split())
    assert "leave 3 same-name references that prism could not prove unrenamed" in err
    assert "web/c.js:2:2, web/c.js:3:11, web/c.js:3:23" in err and "nothing was written" in err
    assert "--apply-ambiguous" in err
    assert _bytes(tmp_path) == before
    plan = json.loads(run_tomo("graph", "rename-plan", "web.a.h", "h2", "--json", "--root", str(tmp_path)).stdout)
    assert [(r["path"], r["line"]) for r in plan["left_unrenamed"]] == [("web/c.js", 2), ("web/c.js", 3),
                                                                       ("web/c.js", 3)]
    done = run_tomo("graph", "rename", "web.a.h", "h2", "--apply", "--apply-ambiguous", "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "web/c.js").read_text() == "const a = require('./a');\na.h2();\nfunction g(h2) { return h2; }\n"


def test_library_apply_refuses_unless_ambiguous_edits_are_included(tmp_path: Path) -> None:
    write_project(tmp_path, UNPROVABLE)
    before = _bytes(tmp_path)
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("web.a.h", "h2")
        assert [(e.path, e.line, e.col) for e in left_behind(plan)] == [("web/c.js", 2, 2), ("web/c.js", 3, 11),
                                                                        ("web/c.js", 3, 23)]
        with pytest.raises(LeavesReferences) as err:
            g.apply(plan)
        assert len(err.value.left) == 3
        assert _bytes(tmp_path) == before
        applied = g.apply(plan, include_ambiguous=True)
    assert applied.edits_applied == 8 and applied.edits_skipped == 0


def test_python_plans_apply_their_confirmed_edits_as_before(tmp_path: Path) -> None:
    write_project(tmp_path, {"m.py": "def h():\n    pass\n\n\ndef use(x):\n    h()\n    x.h()\n"})
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("m.h", "h2")
        assert [e.confidence for e in plan.edits] == ["confirmed", "confirmed", "ambiguous"]
        assert left_behind(plan) == []
        g.apply(plan)
    assert (tmp_path / "m.py").read_text() == "def h2():\n    pass\n\n\ndef use(x):\n    h2()\n    x.h()\n"


def _script(handle: str = "p1-t1") -> ScriptedModel:
    return ScriptedModel([{"tool_calls": [{"name": "rename_plan", "args": {"symbol": "web.a.h", "new_name": "h2"}}]},
                          {"tool_calls": [{"name": "apply_plan", "args": {"handle": handle}}]},
                          {"content": "renamed"}])


async def test_assist_apply_refuses_and_the_run_is_not_ok(tmp_path: Path) -> None:
    write_project(tmp_path, UNPROVABLE)
    before = _bytes(tmp_path)
    session = Session(Graph.open(tmp_path), session_id="t1")
    try:
        model = _script()
        summary = await run("rename h", model, session.invoke, AssistOptions(root=tmp_path, apply=True))
    finally:
        session.close()
    assert _bytes(tmp_path) == before
    assert not summary.ok and summary.written == []
    assert summary.left_unrenamed is not None and "leave 3 same-name references" in summary.left_unrenamed
    receipts = [m.content for m in model.sent[-1] if m.role == "tool"]
    assert receipts[0].startswith("plan p1-t1: WARNING: applying only the confirmed edits would rename `h` and "
                                  "leave 3 same-name references")
    assert "leave 3 same-name references" in receipts[1] and "nothing was written" in receipts[1]
    assert any(n.startswith("the harness did not apply the last plan p1-t1") for n in summary.notes)


async def test_assist_applies_everything_with_apply_ambiguous(tmp_path: Path) -> None:
    write_project(tmp_path, UNPROVABLE)
    session = Session(Graph.open(tmp_path), session_id="t1")
    try:
        summary = await run("rename h", _script(), session.invoke,
                            AssistOptions(root=tmp_path, apply=True, apply_ambiguous=True))
    finally:
        session.close()
    assert summary.ok and summary.left_unrenamed is None
    assert summary.written == ["web/a.js", "web/b.js", "web/c.js"]
    assert "a.h2();" in (tmp_path / "web/c.js").read_text()


def test_assist_cli_exits_3_and_writes_nothing(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = write_project(tmp_path / "proj", UNPROVABLE)
    before = _bytes(root)
    script = tmp_path / "session.json"
    script.write_text(json.dumps({"replies": [
        {"tool_calls": [{"name": "rename_plan", "args": {"symbol": "web.a.h", "new_name": "h2"}}]},
        {"tool_calls": [{"name": "apply_plan", "args": {"handle": "p1"}}]}, {"content": "renamed"}]}))
    out = run_tomo("assist", "rename h to h2", "--model", f"scripted:{script}", "--root", str(root), "--apply",
                   "--json")
    assert out.returncode == 3, out.stdout + out.stderr
    summary = json.loads(out.stdout)["summary"]
    assert summary["ok"] is False and summary["written"] == []
    assert "leave 3 same-name references" in summary["left_unrenamed"]
    assert _bytes(root) == before


async def test_an_mcp_client_is_refused_until_it_includes_the_ambiguous_edits(tmp_path: Path) -> None:
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.types import TextContent

    def text(result: object) -> str:
        content = result.content  # type: ignore[attr-defined]
        assert isinstance(content[0], TextContent)
        return content[0].text

    write_project(tmp_path, UNPROVABLE)
    before = _bytes(tmp_path)
    src = Path(__file__).resolve().parents[2] / "src"
    params = StdioServerParameters(command=sys.executable, args=["-m", "tomo", "mcp", "--root", str(tmp_path)],
                                   env={"PYTHONPATH": str(src)})
    async with Client(params, read_timeout_seconds=60) as client:
        plan = await client.call_tool("rename_plan", {"symbol": "web.a.h", "new_name": "h2"})
        receipt, payload = text(plan).split("\n", 1)
        assert "WARNING: applying only the confirmed edits would rename `h` and leave 3" in receipt
        assert len(json.loads(payload)["left_unrenamed"]) == 3
        handle = receipt.split(":", 1)[0].removeprefix("plan ")
        refused = await client.call_tool("apply_plan", {"handle": handle})
        assert refused.is_error and "leave 3 same-name references" in text(refused)
        assert _bytes(tmp_path) == before
        applied = await client.call_tool("apply_plan", {"handle": handle, "include_ambiguous": True})
        assert not applied.is_error and "8 edits written to 3 files" in text(applied)
    assert "a.h2();" in (tmp_path / "web/c.js").read_text()
