"""The assistant endpoint against a scripted model that misbehaves: whose data a tool reads, which tools run, when a
run stops, what a cut-off looks like in the stream, and what is saved when the model or the connection fails.
Real HTTP to uvicorn on loopback; the stores are SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from web_support import PASSWORD, login, sse

from tomo.config import AgentSettings, Settings
from tomo.errors import ModelError
from tomo.models.messages import StreamEvent, TextDelta
from tomo.models.scripted import ScriptedModel
from tomo.store.console import ConsoleStore
from tomo.tools import Caller


@pytest.fixture
def world(store: ConsoleStore, tmp_path: Path) -> SimpleNamespace:
    ann = store.add_user("ann@acme.example", PASSWORD, "acme", tenant_id=1147)
    bob = store.add_user("bob@bolt.example", PASSWORD, "bolt", tenant_id=916)
    for name in ("acme-repo", "bolt-repo"):
        (tmp_path / name).mkdir()
    store.add_workspace("acme", tmp_path / "acme-repo")
    store.add_workspace("bolt", tmp_path / "bolt-repo")
    return SimpleNamespace(store=store, ann=ann, bob=bob, tmp=tmp_path)


def ask(client: httpx.Client, csrf: str, message: str, conversation_id: str | None = None,
        ) -> list[tuple[str, dict[str, Any]]]:
    response = client.post("/v1/web/assistant", json={"message": message, "conversation_id": conversation_id},
                           headers={"X-CSRF-Token": csrf})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse(response.text)
    assert events[-1][0] == "done"
    return events


def named(events: list[tuple[str, dict[str, Any]]], name: str) -> list[dict[str, Any]]:
    return [data for event, data in events if event == name]


def saved(client: httpx.Client, conversation_id: str) -> list[dict[str, Any]]:
    return list(client.get(f"/v1/web/conversations/{conversation_id}").json()["messages"])


def test_a_tenant_named_by_the_model_is_ignored(world: SimpleNamespace, serve: Any) -> None:
    model = ScriptedModel([
        {"content": "Looking.", "tool_calls": [{"name": "list_workspaces", "args": {"tenant_id": 916}}]},
        {"content": "You have acme-repo."},
    ])
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        events = ask(client, login(client, "ann@acme.example"), "which workspaces do we have?")
    [tool] = named(events, "tool")
    assert tool["name"] == "list_workspaces" and tool["ok"] and "ignored tenant_id" in tool["summary"]
    result = model.sent[1][-1]  # what the model read back: tenant 1147's workspace, not 916's
    assert result.role == "tool"
    assert "acme-repo" in result.content and "bolt-repo" not in result.content
    assert "ignored 'tenant_id'" in result.content
    assert named(events, "answer")[0]["completed"] is True


def test_a_tool_the_agent_lacks_never_runs_and_the_refusal_reaches_the_model(world: SimpleNamespace,
                                                                              serve: Any) -> None:
    ran: list[Caller] = []

    def drop_workspaces(caller: Caller) -> str:
        """Removes every workspace (registered in the console, but on no agent's allow-list)."""
        ran.append(caller)
        return "dropped"

    model = ScriptedModel([
        {"tool_calls": [{"name": "drop_workspaces", "args": {}}]},
        {"content": "I cannot do that here."},
    ])
    server = serve(world.store, model_factory=lambda: model, extra_tools=[drop_workspaces])
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        events = ask(client, csrf, "drop everything")
        conversation = named(events, "conversation")[0]["id"]
        rows = saved(client, conversation)
    assert ran == []
    [refused] = named(events, "refused")
    assert refused["name"] == "drop_workspaces" and "not available to agent 'console'" in refused["reason"]
    told = model.sent[1][-1]
    assert told.role == "tool" and told.is_error and "not available to agent 'console'" in told.content
    assert "drop_workspaces" not in [spec.name for spec in model.sent_tools[0]]
    tool_rows = [r for r in rows if r["role"] == "tool"]
    assert tool_rows[0]["data"]["refused"] is True


def test_a_model_that_keeps_calling_tools_is_stopped(world: SimpleNamespace, serve: Any) -> None:
    forever = [{"tool_calls": [{"name": "list_workspaces", "args": {}}]} for _ in range(30)]
    model = ScriptedModel(forever)
    settings = Settings(agents={"console": AgentSettings(tools=["list_workspaces"], max_tool_calls=3,
                                                         max_steps=20)})
    server = serve(world.store, model_factory=lambda: model, settings=settings)
    with server.client() as client:
        events = ask(client, login(client, "ann@acme.example"), "loop")
        rows = saved(client, named(events, "conversation")[0]["id"])
    assert len(named(events, "tool")) == 3
    [limit] = named(events, "limit")
    assert limit["limit"] == "tool_calls" and limit["value"] == 3
    answer = named(events, "answer")[0]
    assert answer["stopped_by"] == "tool_calls" and answer["completed"] is False
    assert model.remaining == 30 - 4  # stopped by arithmetic, long before the script ran out
    assert any(r["role"] == "event" and r["data"]["kind"] == "limit" for r in rows)


def test_a_length_finish_and_a_capped_result_are_in_the_stream(world: SimpleNamespace, serve: Any) -> None:
    for i in range(80):
        (world.tmp / f"service-{i:03d}").mkdir()
        world.store.add_workspace("acme", world.tmp / f"service-{i:03d}")
    model = ScriptedModel([
        {"tool_calls": [{"name": "list_workspaces", "args": {}}]},
        {"content": "There are many workspaces, among th", "finish": "length"},
    ])
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        events = ask(client, login(client, "ann@acme.example"), "list them all")
        rows = saved(client, named(events, "conversation")[0]["id"])
    [capped] = named(events, "capped")
    assert capped["name"] == "list_workspaces" and capped["shown"] < capped["total"] == 81
    assert f"showing {capped['shown']} of 81 workspaces" in model.sent[1][-1].content
    [truncated] = named(events, "truncated")
    assert "cut off" in truncated["text"]
    answer = named(events, "answer")[0]
    assert answer["truncated"] is True and answer["completed"] is False
    kinds = [r["data"].get("kind") for r in rows if r["role"] == "event"]
    assert "capped" in kinds and "truncated" in kinds  # still visible after a reload


def test_text_streams_in_pieces_and_the_next_turn_sees_the_conversation(world: SimpleNamespace,
                                                                        serve: Any) -> None:
    long = "The acme-repo workspace is the only one registered to your team today."
    model = ScriptedModel([
        {"content": "Checking.", "tool_calls": [{"name": "list_workspaces", "args": {}}],
         "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"content": long, "usage": {"input_tokens": 150, "output_tokens": 20}},
        {"content": "Still just acme-repo."},
    ])
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        events = ask(client, csrf, "what do we have?")
        conversation = named(events, "conversation")[0]["id"]
        texts = named(events, "text")
        assert len(texts) > 3 and "".join(t["text"] for t in texts) == "Checking." + long
        assert named(events, "usage")[-1] == {"input_tokens": 250, "output_tokens": 30}
        names = [e for e, _ in events]
        assert names.index("text") < names.index("tool") < names.index("answer") < names.index("done")
        ask(client, csrf, "and now?", conversation)
        rows = saved(client, conversation)
        listed = client.get("/v1/web/conversations").json()
    history = model.sent[2]
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert history[2].tool_calls[0].id == history[3].tool_call_id
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert rows[3]["content"] == long and rows[3]["status"] == "done"
    assert listed[0]["id"] == conversation and listed[0]["title"] == "what do we have?"


def test_a_model_failing_mid_run_keeps_what_was_said(world: SimpleNamespace, serve: Any) -> None:
    model = ScriptedModel([{"content": "Let me check the workspaces first.",
                            "tool_calls": [{"name": "list_workspaces", "args": {}}]}])  # then: no reply left
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        events = ask(client, login(client, "ann@acme.example"), "hello")
        rows = saved(client, named(events, "conversation")[0]["id"])
    [error] = named(events, "error")
    assert "no reply left" in error["text"]
    assert [e for e, _ in events][-3:] == ["answer", "error", "done"]
    answer = named(events, "answer")[0]
    assert answer["stopped_by"] == "error" and answer["completed"] is False and answer["tool_calls"] == 1
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "event"]
    assert rows[1]["content"] == "Let me check the workspaces first."
    assert rows[3]["data"]["kind"] == "error"


class BreaksMidReply(ScriptedModel):
    """A hosted model whose second reply breaks off after a few words (the server dropped the stream)."""

    async def stream(self, messages: Any, tools: Any = (), *, force_tools: bool = False,
                     max_tokens: int | None = None) -> AsyncIterator[StreamEvent]:
        if self.sent:
            self.sent.append(list(messages))
            yield TextDelta("The answer is ")
            yield TextDelta("that you have")
            raise ModelError("the provider closed the stream", provider="hosted", hint="try again")
        async for item in super().stream(messages, tools, force_tools=force_tools, max_tokens=max_tokens):
            yield item


def test_a_reply_that_breaks_off_keeps_its_words_and_ends_with_the_error(world: SimpleNamespace,
                                                                         serve: Any) -> None:
    model = BreaksMidReply([{"tool_calls": [{"name": "list_workspaces", "args": {}}]}])
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        events = ask(client, login(client, "ann@acme.example"), "hello")
        rows = saved(client, named(events, "conversation")[0]["id"])
    assert "".join(t["text"] for t in named(events, "text")) == "The answer is that you have"
    assert [e for e, _ in events][-2:] == ["error", "done"]
    assert named(events, "error")[0] == {"text": "the provider closed the stream", "hint": "try again"}
    assert [(r["role"], r["status"]) for r in rows] == [("user", "done"), ("assistant", "done"), ("tool", "done"),
                                                        ("assistant", "error"), ("event", "done")]
    assert rows[3]["content"] == "The answer is that you have"


def test_a_dropped_connection_loses_nothing(world: SimpleNamespace, serve: Any) -> None:
    model = ScriptedModel([
        {"content": "First part.", "tool_calls": [{"name": "list_workspaces", "args": {}}]},
        {"content": "The whole answer, said after the browser went away.", "delay_s": 0.5},
    ])
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        with client.stream("POST", "/v1/web/assistant", json={"message": "hi"},
                           headers={"X-CSRF-Token": csrf}) as response:
            lines = response.iter_lines()
            assert next(lines) == "event: conversation"
            conversation = json.loads(next(lines).removeprefix("data: "))["id"]
        deadline = time.monotonic() + 20
        rows: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            rows = saved(client, conversation)
            if len(rows) == 4 and rows[-1]["status"] == "done":
                break
            time.sleep(0.1)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[-1]["content"] == "The whole answer, said after the browser went away."


def test_without_a_provider_the_assistant_says_it_is_off(world: SimpleNamespace, serve: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSISTANT_PROVIDER", raising=False)
    server = serve(world.store)
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        status = client.get("/v1/web/me").json()["assistant"]
        assert status["enabled"] is False and "ASSISTANT_PROVIDER" in status["reason"]
        response = client.post("/v1/web/assistant", json={"message": "hi"}, headers={"X-CSRF-Token": csrf})
        assert response.status_code == 503 and "not switched on" in response.json()["detail"]
        assert client.get("/v1/web/workspaces").status_code == 200  # everything else works
        page = client.get("/").text
    assert 'id="send" disabled' in page and "not switched on here" in page
