"""The relay guarantee: a plan of 2,000 edits is applied by handle; the model never sees nor re-emits one edit."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from assist_helpers import call, make_fanout, say

from tomo.assist import AssistOptions, Session, run
from tomo.events import ListSink, PayloadRendered
from tomo.models.scripted import ScriptedModel
from tomo.prism import Graph


async def test_a_2000_edit_plan_is_applied_by_handle_without_the_model_seeing_an_edit(tmp_path: Path) -> None:
    sites = make_fanout(tmp_path)
    assert sites == 2_000
    sink = ListSink()
    session = Session(Graph.open(tmp_path), sink=sink, session_id="rl1")
    model = ScriptedModel([call("rename_plan", symbol="fan.core.compute", new_name="calculate"),
                           call("apply_plan", handle="p1-rl1"), say("renamed")])
    check = (f'{sys.executable} -c "import fan.mod_039 as m; assert m.run_039() == sum(range(1, 51))"')
    try:
        summary = await run("rename compute to calculate", model, session.invoke,
                            AssistOptions(root=tmp_path, apply=True, verify=check), sink)
    finally:
        session.close()

    # every edit was applied, and the result runs
    plan = next(e.payload for e in sink.of(PayloadRendered) if e.operation == "rename_plan")
    assert len(plan["edits"]) >= 2_000 and plan["ambiguous"] == 0
    assert summary.applies[0]["edits_applied"] == len(plan["edits"])
    text = "".join(p.read_text() for p in (tmp_path / "fan").glob("mod_*.py"))
    assert text.count("calculate(") == 2_000 and "compute" not in text
    assert summary.verify is not None and summary.verify.passed

    # what the model was sent: receipts only; not one path, position or line of the 2,000 edits
    sent = "\n".join(m.content + "".join(str(c.args) for c in m.tool_calls)
                     for request in model.sent for m in request)
    assert "mod_" not in sent and "total +=" not in sent
    assert not re.search(r"\.py:\d+", sent)
    tool_text = [m.content for m in model.sent[-1] if m.role == "tool"]
    assert tool_text[0].startswith(f"plan p1-rl1: rename fan.core.compute to calculate: {len(plan['edits']):,} "
                                   "confirmed edits in 41 files, 0 ambiguous, 0 conflicts")
    assert sum(len(t) for t in tool_text) < 400
    # and what it sent: a symbol, a name, a handle
    emitted = [c.args for request in model.sent for m in request if m.role == "assistant" for c in m.tool_calls]
    assert emitted[-1] == {"handle": "p1-rl1"}
