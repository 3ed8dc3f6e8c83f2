"""Every adapter against a real loopback server speaking its provider's wire format: the cases the issue lists.

The same scenarios run for OpenAI, Anthropic and Ollama; a ``Wire`` per provider knows how that provider encodes a
reply, and how to read calls back out of a request ``to_request`` built (the round trip).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from loopback import (
    Call,
    Canned,
    LoopbackServer,
    anthropic_body,
    anthropic_stream,
    jsonl,
    ollama_body,
    ollama_stream,
    openai_body,
    openai_stream,
    split,
    sse,
)

from tomo.errors import ModelAuthError, ModelTimeout
from tomo.models import Message, ReplyDone, TextDelta, ToolCallDelta, ToolSpec
from tomo.models import anthropic as anthropic_mod
from tomo.models import ollama as ollama_mod
from tomo.models import openai as openai_mod
from tomo.models._http import HttpModel, RetryPolicy, ServerRefused
from tomo.models.anthropic import AnthropicModel
from tomo.models.ollama import OllamaModel
from tomo.models.openai import OpenAIModel

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}},
                                               "required": ["path"]})
GREP = ToolSpec("grep", "Search.", {"type": "object", "properties": {"pattern": {"type": "string"}}})
TOOLS = [READ, GREP]


@dataclass
class Sleeps:
    """The retry sleeper: records what it was asked to wait, waits nothing (no test waits for backoff)."""

    delays: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class Wire:
    name = ""
    path = ""
    length = ""  # the provider's own word for "cut off"
    forced_finish = ""  # what the provider answers to a forced call

    def model(self, url: str, retry: RetryPolicy, timeout_s: float = 5.0) -> HttpModel:
        raise NotImplementedError

    def text(self, content: str, finish: str | None = None) -> Canned:
        raise NotImplementedError

    def calls(self, calls: list[Call], finish: str | None = None, content: str = "") -> Canned:
        raise NotImplementedError

    def stream(self, text: list[str], calls: list[tuple[str, str, list[str]]]) -> Canned:
        raise NotImplementedError

    def calls_sent(self, body: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
        """The assistant calls found in a request body: what the provider would see of our history."""
        raise NotImplementedError

    def forced(self, body: dict[str, Any]) -> bool:
        raise NotImplementedError


class OpenAIWire(Wire):
    name, path, length, forced_finish = "openai", "/v1/chat/completions", "length", "stop"

    def model(self, url: str, retry: RetryPolicy, timeout_s: float = 5.0) -> HttpModel:
        return OpenAIModel("gpt-test", base_url=url + "/v1", api_key="sk-test", retry=retry, timeout_s=timeout_s)

    def text(self, content: str, finish: str | None = None) -> Canned:
        return Canned(body=openai_body(content, finish=finish or "stop"))

    def calls(self, calls: list[Call], finish: str | None = None, content: str = "") -> Canned:
        return Canned(body=openai_body(content or None, calls, finish or "tool_calls"))

    def stream(self, text: list[str], calls: list[tuple[str, str, list[str]]]) -> Canned:
        return sse(openai_stream(text, calls, "tool_calls"))

    def calls_sent(self, body: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
        return [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for m in body["messages"] for c in m.get("tool_calls", [])]

    def forced(self, body: dict[str, Any]) -> bool:
        return body.get("tool_choice") == "required"


class AnthropicWire(Wire):
    name, path, length, forced_finish = "anthropic", "/v1/messages", "max_tokens", "tool_use"

    def model(self, url: str, retry: RetryPolicy, timeout_s: float = 5.0) -> HttpModel:
        return AnthropicModel("claude-test", base_url=url, api_key="sk-ant-test", retry=retry, timeout_s=timeout_s)

    def text(self, content: str, finish: str | None = None) -> Canned:
        return Canned(body=anthropic_body(content, stop=finish or "end_turn"))

    def calls(self, calls: list[Call], finish: str | None = None, content: str = "") -> Canned:
        return Canned(body=anthropic_body(content, calls, finish or "tool_use"))

    def stream(self, text: list[str], calls: list[tuple[str, str, list[str]]]) -> Canned:
        return sse(anthropic_stream(text, calls, "tool_use"))

    def calls_sent(self, body: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
        return [(b["id"], b["name"], b["input"]) for m in body["messages"] for b in m["content"]
                if b["type"] == "tool_use"]

    def forced(self, body: dict[str, Any]) -> bool:
        return body.get("tool_choice") == {"type": "any"}


class OllamaWire(Wire):
    name, path, length, forced_finish = "ollama", "/api/chat", "length", "stop"

    def model(self, url: str, retry: RetryPolicy, timeout_s: float = 5.0) -> HttpModel:
        return OllamaModel("qwen-test", base_url=url, retry=retry, timeout_s=timeout_s)

    def text(self, content: str, finish: str | None = None) -> Canned:
        return Canned(body=ollama_body(content, done_reason=finish or "stop"))

    def calls(self, calls: list[Call], finish: str | None = None, content: str = "") -> Canned:
        return Canned(body=ollama_body(content, calls, finish or "stop"))  # Ollama says "stop" even with calls

    def stream(self, text: list[str], calls: list[tuple[str, str, list[str]]]) -> Canned:
        return jsonl(ollama_stream(text, [(cid, name, json.loads("".join(f))) for cid, name, f in calls], "stop"))

    def calls_sent(self, body: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
        # Ollama's history carries no call ids; pair by position instead.
        return [("", c["function"]["name"], c["function"]["arguments"])
                for m in body["messages"] for c in m.get("tool_calls", [])]

    def forced(self, body: dict[str, Any]) -> bool:
        system = body["messages"][0]
        return system["role"] == "system" and "must answer this turn by calling one of the tools" in system["content"]


WIRES = [OpenAIWire(), AnthropicWire(), OllamaWire()]


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def retry(sleeps: Sleeps) -> RetryPolicy:
    return RetryPolicy(base_s=0.01, sleep=sleeps)


def convo() -> list[Message]:
    return [Message.system("You are terse."), Message.user("What is in a.py?")]


def round_trip(wire: Wire, reply_calls: list[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Feed the reply back through the adapter's own to_request and read what the provider would see."""
    module = {"openai": openai_mod, "anthropic": anthropic_mod, "ollama": ollama_mod}[wire.name]
    history = [*convo(), Message.assistant("", reply_calls),
               *[Message.tool(c, f"result of {c.name}") for c in reply_calls]]
    body = module.to_request("m", history, TOOLS)  # type: ignore[attr-defined]
    return wire.calls_sent(body)


async def test_plain_text(wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    server.push(wire.text("a.py holds one function."))
    reply = await wire.model(server.url, retry).chat(convo())
    assert (reply.text, reply.finish, reply.tool_calls) == ("a.py holds one function.", "stop", [])
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (11, 7)
    sent = server.requests[0]
    assert sent.path == wire.path and sent.json["stream"] is False
    assert "What is in a.py?" in json.dumps(sent.json["messages"])


async def test_streamed_reply_with_a_tool_call_split_across_chunks(
    wire: Wire, server: LoopbackServer, retry: RetryPolicy
) -> None:
    args = json.dumps({"path": "src/a.py"})
    server.push(wire.stream(["Let me ", "look."], [("call_1", "read_file", split(args, 3))]))
    events = [e async for e in wire.model(server.url, retry).stream(convo(), TOOLS)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me look."
    fragments = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {e.name for e in fragments if e.name} == {"read_file"}
    assert json.loads("".join(e.args_fragment for e in fragments)) == {"path": "src/a.py"}
    assert isinstance(events[-1], ReplyDone) and sum(isinstance(e, ReplyDone) for e in events) == 1
    reply = events[-1].reply
    assert reply.text == "Let me look." and reply.finish == "tool_calls"
    assert [(c.name, c.args, c.malformed) for c in reply.tool_calls] == [("read_file", {"path": "src/a.py"}, None)]
    assert server.requests[0].json["stream"] is True


async def test_one_tool_call(wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    server.push(wire.calls([("call_1", "read_file", {"path": "a.py"})]))
    reply = await wire.model(server.url, retry).chat(convo(), TOOLS)
    assert reply.finish == "tool_calls"
    [call] = reply.tool_calls
    assert (call.name, call.args, call.malformed) == ("read_file", {"path": "a.py"}, None) and call.id
    assert [t["function"]["name"] if "function" in t else t["name"] for t in server.requests[0].json["tools"]] == [
        "read_file", "grep"]
    assert [(n, a) for _, n, a in round_trip(wire, reply.tool_calls)] == [("read_file", {"path": "a.py"})]


async def test_parallel_tool_calls_keep_their_order(wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    server.push(wire.calls([("call_a", "grep", {"pattern": "def "}), ("call_b", "read_file", {"path": "b.py"})]))
    reply = await wire.model(server.url, retry).chat(convo(), TOOLS)
    assert [(c.name, c.args) for c in reply.tool_calls] == [("grep", {"pattern": "def "}),
                                                             ("read_file", {"path": "b.py"})]
    assert len({c.id for c in reply.tool_calls}) == 2
    back = round_trip(wire, reply.tool_calls)
    assert [(n, a) for _, n, a in back] == [("grep", {"pattern": "def "}), ("read_file", {"path": "b.py"})]
    if wire.name != "ollama":
        assert [i for i, _, _ in back] == [c.id for c in reply.tool_calls]


async def test_cut_off_reply_is_length(wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    server.push(wire.text("The file a.py contains a fun", wire.length))
    reply = await wire.model(server.url, retry).chat(convo(), max_tokens=8)
    assert (reply.finish, reply.raw_finish) == ("length", wire.length)
    body = server.requests[0].json
    assert 8 in (body.get("max_completion_tokens"), body.get("max_tokens"), body.get("options", {}).get("num_predict"))


async def test_forced_tool_call(wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    server.push(wire.calls([("call_1", "grep", {"pattern": "x"})], finish=wire.forced_finish))
    reply = await wire.model(server.url, retry).chat(convo(), TOOLS, force_tools=True)
    assert reply.finish == "tool_calls" and [c.name for c in reply.tool_calls] == ["grep"]
    assert wire.forced(server.requests[0].json)


async def test_empty_call_id_gets_one_made_up(wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    server.push(wire.calls([("", "read_file", {"path": "a.py"}), ("", "grep", {"pattern": "y"})]))
    reply = await wire.model(server.url, retry).chat(convo(), TOOLS)
    ids = [c.id for c in reply.tool_calls]
    assert all(ids) and len(set(ids)) == 2
    tool_msgs = [Message.tool(c, "ok") for c in reply.tool_calls]
    assert [m.tool_call_id for m in tool_msgs] == ids


async def test_invalid_argument_json_is_a_malformed_call(wire: Wire, server: LoopbackServer,
                                                         retry: RetryPolicy) -> None:
    broken = '{"path": "a.py",'
    if wire.name == "anthropic":  # only a stream can carry broken JSON in Anthropic's format
        server.push(wire.stream([], [("toolu_1", "read_file", [broken])]))
        events = [e async for e in wire.model(server.url, retry).stream(convo(), TOOLS)]
        reply = events[-1].reply  # type: ignore[union-attr]
    else:
        server.push(wire.calls([("call_1", "read_file", broken)]))
        reply = await wire.model(server.url, retry).chat(convo(), TOOLS)
    [call] = reply.tool_calls
    assert call.name == "read_file" and call.args == {} and call.raw_args == broken
    assert call.malformed and "not valid JSON" in call.malformed
    # Replaying a malformed call must still produce a request the provider accepts (arguments an object).
    assert [a for _, _, a in round_trip(wire, reply.tool_calls)] == [{}]


async def test_text_only_tool_call_from_a_weak_model_is_recovered(
    wire: Wire, server: LoopbackServer, retry: RetryPolicy
) -> None:
    server.push(wire.text('I will read it.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}'
                          "</tool_call>"))
    reply = await wire.model(server.url, retry).chat(convo(), TOOLS)
    assert [(c.name, c.args) for c in reply.tool_calls] == [("read_file", {"path": "a.py"})]
    assert reply.text == "I will read it." and reply.finish == "tool_calls"


async def test_text_mentioning_an_unknown_tool_stays_text(wire: Wire, server: LoopbackServer,
                                                          retry: RetryPolicy) -> None:
    text = '```json\n{"name": "rm_rf", "arguments": {}}\n```'
    server.push(wire.text(text))
    reply = await wire.model(server.url, retry).chat(convo(), TOOLS)
    assert reply.tool_calls == [] and reply.text == text and reply.finish == "stop"


async def test_429_with_retry_after_then_success(wire: Wire, server: LoopbackServer, retry: RetryPolicy,
                                                 sleeps: Sleeps) -> None:
    server.push(Canned(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "3"}), wire.text("ok"))
    reply = await wire.model(server.url, retry).chat(convo())
    assert reply.text == "ok" and len(server.requests) == 2
    assert sleeps.delays == [3.0]  # the server's Retry-After, not the backoff


async def test_500_twice_then_success(wire: Wire, server: LoopbackServer, retry: RetryPolicy, sleeps: Sleeps) -> None:
    server.push(Canned(500, {"error": {"message": "boom"}}), Canned(503, "upstream down"), wire.text("ok"))
    reply = await wire.model(server.url, retry).chat(convo())
    assert reply.text == "ok" and len(server.requests) == 3
    assert len(sleeps.delays) == 2 and 0.0075 <= sleeps.delays[0] <= 0.01 and 0.015 <= sleeps.delays[1] <= 0.02


async def test_500_three_times_gives_up_with_a_clear_error(wire: Wire, server: LoopbackServer,
                                                           retry: RetryPolicy) -> None:
    server.push(*[Canned(500, {"error": {"message": f"boom {i}"}}) for i in range(3)])  # a flaky server: retried
    with pytest.raises(Exception, match=rf"{wire.name} .* kept failing \(500\) after retries: boom 2"):
        await wire.model(server.url, retry).chat(convo())
    assert len(server.requests) == 3


async def test_a_500_that_repeats_for_the_same_request_is_not_retried_as_transient(
        wire: Wire, server: LoopbackServer, retry: RetryPolicy) -> None:
    # llama-cpp-python's template errors look like this: the same 500 for the same payload, every time.
    server.push(*[Canned(500, {"error": {"message": "'dict object' has no attribute 'x'"}})] * 3)
    with pytest.raises(ServerRefused, match=r"failed the same way twice for the same request \(500\)"):
        await wire.model(server.url, retry).chat(convo())
    assert len(server.requests) == 2


async def test_a_remote_server_that_times_out_is_retried(wire: Wire, server: LoopbackServer,
                                                         retry: RetryPolicy) -> None:
    server.push(*[Canned(delay_s=1.0, body=wire.text("late").body)] * 3)
    model = wire.model(server.url, retry, timeout_s=0.2)
    model.local = False  # the policy for a server elsewhere (a hosted API, a pool behind a load balancer)
    with pytest.raises(ModelTimeout, match=f"{wire.name} .* did not answer within 0.2 s") as info:
        await model.chat(convo())
    assert len(server.requests) == 3  # the first try and two retries
    assert f"[providers.{wire.name}]" in info.value.hint


async def test_a_local_server_still_generating_gets_the_request_once(wire: Wire, server: LoopbackServer,
                                                                    retry: RetryPolicy) -> None:
    # llama-cpp-python works on one request at a time: a retry would queue a second generation behind the first.
    server.push(*[Canned(delay_s=1.0, body=wire.text("late").body)] * 3)
    with pytest.raises(ModelTimeout, match=f"{wire.name} .* did not answer within 0.2 s") as info:
        await wire.model(server.url, retry, timeout_s=0.2).chat(convo())
    assert len(server.requests) == 1
    assert "still generating" in info.value.message and "did not send the request again" in info.value.message
    assert f"raise timeout_s under [providers.{wire.name}]" in info.value.hint and "it is 0.2 s" in info.value.hint


async def test_401_names_the_variable_and_is_not_retried(wire: Wire, server: LoopbackServer,
                                                         retry: RetryPolicy) -> None:
    server.push(Canned(401, {"error": {"type": "authentication_error", "message": "invalid x-api-key"}}))
    with pytest.raises(ModelAuthError, match="rejected the API key \\(401\\): invalid x-api-key") as info:
        await wire.model(server.url, retry).chat(convo())
    assert len(server.requests) == 1
    expected = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "ollama": "API key"}[wire.name]
    assert expected in info.value.hint


async def test_stream_errors_before_the_first_byte_are_retried(wire: Wire, server: LoopbackServer,
                                                               retry: RetryPolicy) -> None:
    server.push(Canned(529 if wire.name == "anthropic" else 502, {"error": {"message": "overloaded"}}),
                wire.stream(["hi"], []))
    events = [e async for e in wire.model(server.url, retry).stream(convo())]
    assert isinstance(events[-1], ReplyDone) and events[-1].reply.text == "hi"
    assert len(server.requests) == 2
