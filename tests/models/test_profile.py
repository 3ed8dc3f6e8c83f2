"""The per-server capability profile: each behaviour real compatible servers were seen to have, met over real HTTP
(tests/models/picky.py reproduces it), and what tomo does about it: reshape, say so once, remember for the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from loopback import Canned, LoopbackServer, openai_body
from picky import Picky

from tomo.agents import Agent
from tomo.events import LimitReached, ListSink, Notice, UsageReported
from tomo.loop import Limits, run
from tomo.models import Message, ReplyDone, TextDelta, ToolCall, ToolSpec, Usage
from tomo.models._http import RetryPolicy, ServerRefused
from tomo.models.openai import OpenAIModel
from tomo.models.profile import FORCE_RETRY, forget_profiles, profile_for
from tomo.tools import Caller, Registry

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})
GREP = ToolSpec("grep", "Search.", {"type": "object", "properties": {"pattern": {"type": "string"}}})


async def _no_wait(_: float) -> None:
    return None


def serve(picky: Picky) -> LoopbackServer:
    return LoopbackServer(responder=picky)


def model(server: LoopbackServer, sink: ListSink | None = None) -> OpenAIModel:
    return OpenAIModel("smol", base_url=server.url + "/v1", key_env=None, provider="openai-compat",
                       retry=RetryPolicy(base_s=0.001, sleep=_no_wait), sink=sink)


def notices(sink: ListSink) -> list[str]:
    return [n.text for n in sink.of(Notice)]


def after_a_call() -> list[Message]:
    call = ToolCall("call_1", "read_file", {"path": "a.py"})
    return [Message.system("Be brief."), Message.user("read a.py"), Message.assistant("", [call]),
            Message.tool(call, "print('hi')"), Message.user("and now?")]


def chats(server: LoopbackServer) -> list[dict[str, Any]]:
    """The Chat Completions requests the server received (not the tokenizer's)."""
    return [r.json for r in server.requests if r.path.endswith("/chat/completions")]


def tool_call_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]


@pytest.fixture(autouse=True)
def fresh_profiles() -> Iterator[None]:
    """Profiles live for the process; a test starts from none (a reused port must not inherit one)."""
    forget_profiles()
    yield
    forget_profiles()


# ---- the content form of an assistant message that carries tool calls ------------------------------------------


async def test_a_tool_call_message_carries_content_as_a_string_so_a_template_server_takes_it() -> None:
    picky = Picky(content_missing_500=True, content_null_refused=True, replies=[("fine", [])])
    with serve(picky) as server:
        reply = await model(server).chat(after_a_call(), [READ])
    assert reply.text == "fine" and len(server.requests) == 1  # step 2 of a tool run: no 500, no retry
    assert tool_call_messages(chats(server)[0]) == [{
        "role": "assistant", "content": "",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]}]


async def test_a_server_that_refuses_empty_content_gets_it_left_out_and_that_is_remembered() -> None:
    sink = ListSink()
    picky = Picky(content_empty_refused=True, replies=[("one", []), ("two", [])])
    with serve(picky) as server:
        first = await model(server, sink).chat(after_a_call(), [READ])
        second = await model(server).chat(after_a_call(), [READ])  # another model object, same server
    assert (first.text, second.text) == ("one", "two")
    assert [("content" in tool_call_messages(b)[0]) for b in chats(server)] == [True, False, False]
    assert len(notices(sink)) == 1 and "content was a string" in notices(sink)[0] and "left out" in notices(sink)[0]
    assert profile_for(server.url + "/v1").content_form == "omit"


async def test_every_content_form_is_tried_in_turn_and_a_repeating_500_is_adapted_to_not_retried() -> None:
    picky = Picky(content_empty_refused=True, content_missing_500=True, replies=[("ok", [])])
    with serve(picky) as server:
        reply = await model(server).chat(after_a_call(), [READ])
    assert reply.text == "ok"
    forms = [tool_call_messages(b)[0].get("content", "<missing>") for b in chats(server)]
    # "" refused (400, not retried); left out: the same 500 twice, then adapted; null taken.
    assert forms == ["", "<missing>", "<missing>", None]


async def test_when_no_form_is_taken_the_error_says_what_was_tried_and_the_profile_learns_nothing() -> None:
    picky = Picky(content_empty_refused=True, content_missing_500=True, content_null_refused=True)
    with serve(picky) as server, pytest.raises(ServerRefused) as info:
        await model(server).chat(after_a_call(), [READ])
    assert "tomo also reshaped the request" in info.value.hint and "left out" in info.value.hint
    assert profile_for(server.url + "/v1").content_form == "string" and profile_for(server.url + "/v1").learned == []


# ---- forced calls -----------------------------------------------------------------------------------------------


async def test_required_refused_with_one_tool_names_the_tool_and_remembers() -> None:
    sink = ListSink()
    picky = Picky(required="500")
    with serve(picky) as server:
        first = await model(server, sink).chat([Message.user("read it")], [READ], force_tools=True)
        second = await model(server).chat([Message.user("read it")], [READ], force_tools=True)
    assert [c.name for c in first.tool_calls] == ["read_file"] and [c.name for c in second.tool_calls] == ["read_file"]
    choices = [b["tool_choice"] for b in chats(server)]
    named = {"type": "function", "function": {"name": "read_file"}}
    assert choices == ["required", "required", named, named]  # the 500 is seen twice, then never again
    assert any('refused tool_choice "required"' in n for n in notices(sink))


async def test_required_refused_with_several_tools_asks_in_the_prompt_and_re_asks_once() -> None:
    sink = ListSink()
    picky = Picky(required="500", replies=[("I would rather talk.", []), ("", [("c1", "grep", {"pattern": "x"})])])
    with serve(picky) as server:
        reply = await model(server, sink).chat([Message.system("Be brief."), Message.user("go")], [READ, GREP],
                                               force_tools=True)
    assert [c.name for c in reply.tool_calls] == ["grep"]
    asked, again = chats(server)[-2], chats(server)[-1]
    assert asked["tool_choice"] == "auto"
    assert "You must answer this turn by calling one of the tools (read_file, grep)" in asked["messages"][0]["content"]
    assert again["messages"][-2] == {"role": "assistant", "content": "I would rather talk."}
    assert again["messages"][-1] == {"role": "user", "content": FORCE_RETRY.format(names="read_file, grep")}
    assert reply.usage.total == 36  # both requests are paid for


async def test_required_accepted_but_ignored_is_noticed_and_falls_back_to_the_named_tool() -> None:
    sink = ListSink()
    picky = Picky(required="ignored", replies=[("prose instead", [])])
    with serve(picky) as server:
        reply = await model(server, sink).chat([Message.user("read it")], [READ], force_tools=True)
        later = await model(server).chat([Message.user("read it")], [READ], force_tools=True)
    assert reply.tool_calls and later.tool_calls
    named = {"type": "function", "function": {"name": "read_file"}}
    assert [b["tool_choice"] for b in chats(server)][1:] == [named, named]
    assert any("does not enforce it" in n for n in notices(sink))


async def test_a_forced_call_that_never_comes_is_noticed_whatever_the_server_claimed() -> None:
    sink = ListSink()
    picky = Picky(required="ignored", named="ignored", replies=[("no", []), ("still no", []), ("nope", [])] * 2)
    with serve(picky) as server:
        reply = await model(server, sink).chat([Message.user("read it")], [READ], force_tools=True)
        assert reply.text == "still no" and not reply.tool_calls
        assert any("forced tool call came back without a call, twice" in n for n in notices(sink))
        third = await model(server).chat([Message.user("read it")], [READ], force_tools=True)
    assert chats(server)[-2]["tool_choice"] == "auto"  # both enforced forms are known not to work: the prompt
    assert "You must answer this turn by calling" in chats(server)[-2]["messages"][0]["content"]
    assert third.text == "no"


# ---- fields a server refuses --------------------------------------------------------------------------------------


async def test_refused_stream_options_is_dropped_and_usage_is_counted_by_tomo() -> None:
    sink = ListSink()
    picky = Picky(refuse_fields=("stream_options",), replies=[("hello there", [])])
    with serve(picky) as server:
        events = [e async for e in model(server, sink).stream([Message.user("hi")])]
    done = events[-1]
    assert isinstance(done, ReplyDone) and [e.text for e in events if isinstance(e, TextDelta)] == ["hello there"]
    assert ["stream_options" in b for b in chats(server)] == [True, False]
    assert done.reply.usage.estimated and done.reply.usage.output_tokens == 3  # "hello there" ≈ 11 chars / 4
    assert any("refused stream_options" in n for n in notices(sink))


async def test_refused_max_completion_tokens_becomes_max_tokens() -> None:
    picky = Picky(refuse_fields=("max_completion_tokens",), replies=[("a", []), ("b", [])])
    with serve(picky) as server:
        m = OpenAIModel("gpt", base_url=server.url + "/v1", api_key="k", retry=RetryPolicy(base_s=0.001))
        await m.chat([Message.user("x")], max_tokens=50)
        await m.chat([Message.user("x")], max_tokens=50)
    assert [("max_completion_tokens" in b, b.get("max_tokens")) for b in chats(server)] == [
        (True, None), (False, 50), (False, 50)]


async def test_a_bad_request_that_names_nothing_tomo_can_change_is_raised_at_once() -> None:
    with LoopbackServer() as server:
        server.push(Canned(400, {"error": {"message": "model is loading"}}))
        with pytest.raises(ServerRefused, match="model is loading"):
            await model(server).chat([Message.user("x")])
    assert len(server.requests) == 1


# ---- usage a server does not report -------------------------------------------------------------------------------


async def test_missing_stream_usage_is_counted_with_the_servers_tokenizer_and_marked_estimated() -> None:
    sink = ListSink()
    picky = Picky(stream_usage=False, tokenizer=True, replies=[("one two three", []), ("four", [])])
    with serve(picky) as server:
        m = model(server, sink)
        first = [e async for e in m.stream([Message.system("sys words"), Message.user("count me")])][-1]
        second = [e async for e in m.stream([Message.user("again")])][-1]
    assert isinstance(first, ReplyDone) and isinstance(second, ReplyDone)
    # the tokenizer counts words here: "sys words\ncount me" = 4, plus 4 a message; the answer is 3 words
    assert first.reply.usage == Usage(4 + 2 * 4, 3, estimated=True)
    assert second.reply.usage == Usage(1 + 4, 1, estimated=True)
    # prompt and answer are counted concurrently: the server may see them in either order
    assert sorted(picky.counted[:2]) == ["one two three", "sys words\ncount me"]
    said = [n for n in notices(sink) if "reports no token usage" in n]
    assert len(said) == 1 and "server's own tokenizer" in said[0]  # said once, not every step
    assert profile_for(server.url + "/v1").describe()["stream_usage"] == "missing"


async def test_missing_usage_without_a_tokenizer_is_estimated_from_the_text() -> None:
    picky = Picky(usage=False, replies=[("x" * 40, [])])
    with serve(picky) as server:
        reply = await model(server).chat([Message.user("y" * 80)])
    assert reply.usage == Usage(20 + 4, 10, estimated=True)
    assert profile_for(server.url + "/v1").tokenizer == "no"


async def test_a_token_budget_stops_a_streamed_run_on_a_server_that_reports_no_usage() -> None:
    registry = Registry()

    def read_file(path: str) -> str:
        """Read a file."""
        return "word " * 200

    registry.register(read_file)
    agent = Agent("reader", tools=("read_file",))
    call = ("c", "read_file", {"path": "a.py"})
    picky = Picky(stream_usage=False, tokenizer=True, replies=[("", [call])] * 10)
    sink = ListSink()
    with serve(picky) as server:
        out = await run(agent, model(server, sink), registry, Caller("ann", 1), "read everything",
                        Limits(max_tokens_total=600), sink, stream=True)
    assert out.stopped_by == "tokens" and out.usage.estimated and out.usage.total >= 600
    assert out.steps < 10 and sink.of(LimitReached)[0].limit == "tokens"
    assert sink.of(UsageReported)[-1].estimated


async def test_the_way_a_forced_call_finally_worked_is_what_the_profile_records() -> None:
    picky = Picky(required="500")
    with serve(picky) as server:
        m = model(server)
        await m.chat([Message.user("read it")], [READ], force_tools=True)
    assert (m.profile.required, m.profile.named) == ("rejected", "works")


async def test_a_stream_answered_with_nothing_twice_is_a_refusal_adapted_to() -> None:
    sink = ListSink()
    picky = Picky(required="500")
    with serve(picky) as server:
        events = [e async for e in model(server, sink).stream([Message.user("read it")], [READ], force_tools=True)]
    done = events[-1]
    assert isinstance(done, ReplyDone) and [c.name for c in done.reply.tool_calls] == ["read_file"]
    assert done.reply.finish == "tool_calls"
    assert [b["tool_choice"] for b in chats(server)] == ["required", "required",
                                                         {"type": "function", "function": {"name": "read_file"}}]
    assert any('refused tool_choice "required"' in n for n in notices(sink))


async def test_an_empty_stream_with_nothing_to_change_is_an_error_not_a_reply() -> None:
    with LoopbackServer() as server:
        server.push(*[Canned(200, chunks=[], content_type="text/event-stream")] * 4)
        m = model(server)
        with pytest.raises(ServerRefused, match="empty stream"):
            [e async for e in m.stream([Message.user("hi")])]
    # twice as sent; stream_options is the one thing left to change: twice without it; then the error
    assert ["stream_options" in b for b in chats(server)] == [True, True, False, False]
    assert m.profile.stream_options  # what did not help is not remembered


async def test_a_server_that_cannot_stream_with_tools_gets_whole_replies_shown_at_once() -> None:
    sink = ListSink()
    picky = Picky(required="500", stream_auto_fails=True, replies=[("I will look.", [("c1", "grep", {})])])
    with serve(picky) as server:
        m = model(server, sink)
        events = [e async for e in m.stream([Message.user("find it")], [READ, GREP], force_tools=True)]
    done = events[-1]
    assert isinstance(done, ReplyDone) and [c.name for c in done.reply.tool_calls] == ["grep"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["I will look."]  # shown, in one piece
    sent = chats(server)
    assert [(b["stream"], b["tool_choice"]) for b in sent] == [
        (True, "required"), (True, "required"), (True, "auto"), (True, "auto"), (False, "auto")]
    assert m.profile.stream_tools is False and m.profile.stream_options  # the right thing was changed
    assert any("cannot stream a reply while tools are offered" in n for n in notices(sink))


async def test_a_server_that_ignores_stream_and_answers_whole_is_read_as_one_reply() -> None:
    with LoopbackServer() as server:
        server.push(Canned(200, openai_body("all at once", [("c1", "read_file", {"path": "a"})], "tool_calls")))
        events = [e async for e in model(server).stream([Message.user("hi")], [READ])]
    done = events[-1]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["all at once"]
    assert isinstance(done, ReplyDone) and done.reply.finish == "tool_calls" and done.reply.tool_calls[0].args == {
        "path": "a"}
    assert done.reply.usage.total == 18 and len(server.requests) == 1


def test_estimated_tokens_are_shown_with_a_tilde_and_reported_ones_without() -> None:
    import io

    from rich.console import Console

    from tomo.cli.render import RichSink
    from tomo.events import ModelCalled

    out = io.StringIO()
    sink = RichSink(Console(file=out, width=200, highlight=False))
    sink.emit(ModelCalled("a", "m", 1, "stop", 1200, 34, 0.5, estimated=True))
    sink.emit(UsageReported("a", 1200, 34, estimated=True))
    sink.emit(ModelCalled("a", "m", 2, "stop", 10, 2, 0.5))
    sink.emit(UsageReported("a", 10, 2))
    sink.close()
    lines = out.getvalue().splitlines()
    assert "~1,200 in / ~34 out" in lines[0]
    assert "tokens: ~1,200 in · ~34 out · ~1,234 total (estimated: the server reported none)" in lines[1]
    assert "10 in / 2 out" in lines[2] and "~" not in lines[2] + lines[3]
