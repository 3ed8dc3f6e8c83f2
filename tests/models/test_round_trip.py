"""to_request/from_response round trips: whatever a provider sends, tomo reads it and can send it back unchanged."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from loopback import anthropic_body, ollama_body, openai_body

from tomo.models import Message, ToolCall
from tomo.models import anthropic as anthropic_mod
from tomo.models import ollama as ollama_mod
from tomo.models import openai as openai_mod

json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                      max_size=3), max_leaves=8)
args_st = st.dictionaries(st.text(min_size=1, max_size=8), json_value, max_size=4)
calls_st = st.lists(st.tuples(st.from_regex(r"call_[a-z0-9]{4}", fullmatch=True), st.sampled_from(["grep", "read"]),
                              args_st), max_size=3, unique_by=lambda c: c[0])
text_st = st.text(max_size=60)


def assistant_wire(body: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in body["messages"] if m["role"] == "assistant")


@settings(max_examples=60, deadline=None)
@given(text_st, calls_st)
def test_openai(text: str, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    reply = openai_mod.from_response(openai_body(text or None, calls, "tool_calls" if calls else "stop"))
    assert reply.text == text and [(c.id, c.name, c.args) for c in reply.tool_calls] == calls
    assert reply.finish == ("tool_calls" if calls else "stop")
    sent = assistant_wire(openai_mod.to_request("m", [Message.user("q"), reply.message]))
    assert sent.get("content", "") == text
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in sent.get("tool_calls", [])] == calls


@settings(max_examples=60, deadline=None)
@given(text_st, calls_st)
def test_anthropic(text: str, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    reply = anthropic_mod.from_response(anthropic_body(text, calls, "tool_use" if calls else "end_turn"))
    assert reply.text == text and [(c.id, c.name, c.args) for c in reply.tool_calls] == calls
    body = anthropic_mod.to_request("m", [Message.user("q"), reply.message])
    if not text.strip() and not calls:  # the API rejects blank text blocks, so no assistant turn is sent
        assert [m["role"] for m in body["messages"]] == ["user"]
        return
    sent = assistant_wire(body)
    assert "".join(b["text"] for b in sent["content"] if b["type"] == "text") == (text if text.strip() else "")
    assert [(b["id"], b["name"], b["input"]) for b in sent["content"] if b["type"] == "tool_use"] == calls


@settings(max_examples=60, deadline=None)
@given(text_st, calls_st)
def test_ollama(text: str, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    reply = ollama_mod.from_response(ollama_body(text, calls, "stop"))
    assert reply.text == text and [(c.id, c.name, c.args) for c in reply.tool_calls] == calls
    assert reply.finish == ("tool_calls" if calls else "stop")
    sent = assistant_wire(ollama_mod.to_request("m", [Message.user("q"), reply.message]))
    assert sent["content"] == text  # never null
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in sent.get("tool_calls", [])] == [
        (n, a) for _, n, a in calls]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), st.sampled_from(["a", " ", "b c"])),
                min_size=1, max_size=6))
def test_anthropic_always_alternates_roles(turns: list[tuple[str, str]]) -> None:
    messages = [Message(role, text) for role, text in turns]  # type: ignore[arg-type]
    body = anthropic_mod.to_request("m", messages)
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert body.get("system", "") == "\n\n".join(t for r, t in turns if r == "system")
    sent_text = [b["text"] for m in body["messages"] for b in m["content"]]
    assert sent_text == [t for r, t in turns if r != "system" and t.strip()]  # blank blocks are rejected by the API


def test_tool_results_pair_with_their_calls_in_every_format() -> None:
    call = ToolCall("call_9", "grep", {"pattern": "x"})
    history = [Message.user("q"), Message.assistant("", [call]), Message.tool(call, "3 matches", is_error=True)]
    oa = openai_mod.to_request("m", history)["messages"][-1]
    assert oa == {"role": "tool", "tool_call_id": "call_9", "content": "3 matches"}
    an = anthropic_mod.to_request("m", history)["messages"][-1]["content"]
    assert an == [{"type": "tool_result", "tool_use_id": "call_9", "content": "3 matches", "is_error": True}]
    ol = ollama_mod.to_request("m", history)["messages"][-1]
    assert ol == {"role": "tool", "content": "3 matches", "tool_name": "grep"}
