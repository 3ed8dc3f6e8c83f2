from pathlib import Path

from tomo.events import JsonlSink, LimitReached, ListSink, ToolCalled, read_jsonl


def test_jsonl_transcript_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    sink = JsonlSink(path)
    sink.emit(ToolCalled(agent="a", tool="refs", args={"symbol": "x"}, ok=True))
    sink.emit(LimitReached(agent="a", limit="steps", value=3))
    sink.close()
    rows = read_jsonl(path)
    assert [r["kind"] for r in rows] == ["tool_called", "limit_reached"]
    assert rows[0]["args"] == {"symbol": "x"}
    assert rows[1]["value"] == 3


def test_list_sink_filters_by_type() -> None:
    sink = ListSink()
    sink.emit(LimitReached(agent="a", limit="steps", value=1))
    sink.emit(ToolCalled(agent="a", tool="t", args={}, ok=False))
    assert [e.limit for e in sink.of(LimitReached)] == ["steps"]
