"""Provider-specific behaviour: Anthropic's tool_result placement, Ollama's emulated force and context warning,
OpenAI-compatible options, and the retry policy itself."""

from __future__ import annotations

import email.utils
import json
import socket
import time

import pytest
from loopback import Canned, LoopbackServer, anthropic_body, jsonl, ollama_body, ollama_stream, openai_body, sse

from tomo.errors import ModelError, ModelUnavailable
from tomo.events import ListSink, Notice
from tomo.models import Message, ReplyDone, ToolCall, ToolSpec
from tomo.models import anthropic as anthropic_mod
from tomo.models import ollama as ollama_mod
from tomo.models._http import RetryPolicy, is_loopback, parse_retry_after
from tomo.models.ollama import OllamaModel, normalize_host
from tomo.models.openai import OpenAIModel

GREP = ToolSpec("grep", "Search.", {"type": "object", "properties": {"pattern": {"type": "string"}}})
READ = ToolSpec("read_file", "Read.", {"type": "object", "properties": {"path": {"type": "string"}}})


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def fast() -> RetryPolicy:
    return RetryPolicy(base_s=0.001, sleep=Sleeps())


# ---- Anthropic ----------------------------------------------------------------------------------------------------


def test_anthropic_tool_results_go_first_in_one_user_message_in_call_order() -> None:
    a, b = ToolCall("toolu_a", "grep", {"pattern": "x"}), ToolCall("toolu_b", "read_file", {"path": "p"})
    history = [
        Message.system("Be brief."), Message.system("Use tools."), Message.user("go"),
        Message.assistant("", [a, b]),
        Message.tool(b, "contents", is_error=False), Message.tool(a, "no such pattern", is_error=True),  # reversed
        Message.user("and now?"),
    ]
    body = anthropic_mod.to_request("claude-x", history, [GREP, READ])
    assert body["system"] == "Be brief.\n\nUse tools." and body["max_tokens"] == anthropic_mod.DEFAULT_MAX_TOKENS
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [  # no empty text block: the API rejects those
        {"type": "tool_use", "id": "toolu_a", "name": "grep", "input": {"pattern": "x"}},
        {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "p"}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "no such pattern", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "contents", "is_error": False},
        {"type": "text", "text": "and now?"},
    ]
    assert body["tool_choice"] == {"type": "auto"}


@pytest.mark.parametrize(("stop", "finish"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("tool_use", "tool_calls"), ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"), ("pause_turn", "length"), ("refusal", "content_filter"),
])
def test_anthropic_every_stop_reason_is_mapped(stop: str, finish: str) -> None:
    calls = [("toolu_1", "grep", {})] if stop == "tool_use" else []
    reply = anthropic_mod.from_response(anthropic_body("x", calls, stop=stop))
    assert (reply.finish, reply.raw_finish) == (finish, stop)


async def test_anthropic_mid_stream_error_event_is_a_clear_error() -> None:
    events = ['event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n',
              'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}\n\n']
    with LoopbackServer() as server:
        server.push(sse(events))
        model = anthropic_mod.AnthropicModel("c", base_url=server.url, api_key="k", retry=fast())
        with pytest.raises(ModelUnavailable, match="overloaded_error: busy"):
            _ = [e async for e in model.stream([Message.user("hi")])]


async def test_anthropic_sends_its_key_and_version_headers() -> None:
    with LoopbackServer() as server:
        server.push(Canned(body=anthropic_body("hi")))
        await anthropic_mod.AnthropicModel("c", base_url=server.url, api_key="sk-ant-1").chat([Message.user("x")])
        headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["x-api-key"] == "sk-ant-1" and headers["anthropic-version"] == anthropic_mod.API_VERSION


# ---- OpenAI-compatible --------------------------------------------------------------------------------------------


async def test_openai_compat_uses_max_tokens_and_openai_uses_max_completion_tokens() -> None:
    with LoopbackServer() as server:
        server.push(Canned(body=openai_body("a")), Canned(body=openai_body("b")))
        await OpenAIModel("m", base_url=server.url, api_key="k").chat([Message.user("x")], max_tokens=5)
        await OpenAIModel("m", base_url=server.url, provider="openai-compat", key_env=None).chat(
            [Message.user("x")], max_tokens=5)
        first, second = server.requests
    assert first.json["max_completion_tokens"] == 5 and "max_tokens" not in first.json
    assert second.json["max_tokens"] == 5 and "authorization" not in {k.lower() for k in second.headers}
    assert first.headers.get("Authorization") == "Bearer k"


async def test_openai_mid_stream_error_chunk_is_a_clear_error() -> None:
    with LoopbackServer() as server:
        server.push(sse(['data: {"error": {"message": "upstream died"}}\n\n']))
        model = OpenAIModel("m", base_url=server.url, api_key="k", retry=fast())
        with pytest.raises(ModelError, match=r"failed mid-stream.*upstream died"):
            _ = [e async for e in model.stream([Message.user("hi")])]


# ---- Ollama -------------------------------------------------------------------------------------------------------


def test_ollama_never_sends_null_content_and_names_tool_results() -> None:
    call = ToolCall("c1", "grep", {"pattern": "x"})
    body = ollama_mod.to_request("q", [Message.user("u"), Message.assistant("", [call]), Message.tool(call, "r")],
                                 [GREP], max_tokens=9)
    assert body["messages"][1] == {"role": "assistant", "content": "",
                                   "tool_calls": [{"function": {"name": "grep", "arguments": {"pattern": "x"}}}]}
    assert body["messages"][2] == {"role": "tool", "content": "r", "tool_name": "grep"}
    assert body["options"] == {"num_ctx": ollama_mod.DEFAULT_NUM_CTX, "num_predict": 9}
    assert "tool_choice" not in body


async def test_ollama_force_is_emulated_and_a_reply_without_a_call_is_re_asked_once() -> None:
    with LoopbackServer() as server:
        server.push(Canned(body=ollama_body("I think grep would help.")),
                    Canned(body=ollama_body("", [("", "grep", {"pattern": "x"})])))
        model = OllamaModel("q", base_url=server.url)
        reply = await model.chat([Message.system("Be brief."), Message.user("find x")], [GREP, READ],
                                 force_tools=True)
        first, second = server.posts
    assert [c.name for c in reply.tool_calls] == ["grep"] and reply.finish == "tool_calls"
    assert first["messages"][0]["content"].startswith("Be brief.\n\nYou must answer this turn by calling one of "
                                                      "the tools (grep, read_file)")
    assert second["messages"][-2] == {"role": "assistant", "content": "I think grep would help."}
    assert second["messages"][-1]["role"] == "user" and "grep, read_file" in second["messages"][-1]["content"]
    assert reply.usage.input_tokens == 22  # both calls are counted


async def test_ollama_force_re_asks_only_once_and_says_the_call_never_came() -> None:
    sink = ListSink()
    with LoopbackServer() as server:
        server.push(Canned(body=ollama_body("no")), Canned(body=ollama_body("still no")))
        reply = await OllamaModel("q", base_url=server.url, sink=sink).chat([Message.user("x")], [GREP],
                                                                            force_tools=True)
        assert len(server.requests) == 2
    assert reply.tool_calls == [] and reply.text == "still no" and reply.finish == "stop"
    assert [n.level for n in sink.of(Notice)] == ["warning"] and "came back without a call" in sink.of(Notice)[0].text
    # Without tools there is nothing to force: one request, no system rule.
    with LoopbackServer() as server:
        server.push(Canned(body=ollama_body("plain")))
        await OllamaModel("q", base_url=server.url).chat([Message.user("x")], [], force_tools=True)
        assert len(server.requests) == 1 and server.posts[0]["messages"][0]["role"] == "user"


async def test_ollama_stream_with_force_re_asks_and_ends_with_one_reply() -> None:
    with LoopbackServer() as server:
        server.push(jsonl(ollama_stream(["thinking ", "aloud"], [], "stop")),
                    jsonl(ollama_stream([], [("", "grep", {"pattern": "y"})], "stop")))
        events = [e async for e in OllamaModel("q", base_url=server.url).stream([Message.user("x")], [GREP],
                                                                                 force_tools=True)]
    done = [e for e in events if isinstance(e, ReplyDone)]
    assert len(done) == 1 and events[-1] is done[0]
    assert [(c.name, c.args) for c in done[0].reply.tool_calls] == [("grep", {"pattern": "y"})]


async def test_ollama_warns_when_a_request_clearly_exceeds_num_ctx() -> None:
    sink = ListSink()
    with LoopbackServer() as server:
        server.push(Canned(body=ollama_body("ok")), Canned(body=ollama_body("ok")))
        model = OllamaModel("q", base_url=server.url, num_ctx=1000, sink=sink)
        await model.chat([Message.user("short question")])
        assert sink.of(Notice) == []
        await model.chat([Message.user("word " * 2000)])  # ~2,500 tokens by the estimate
        assert server.posts[1]["options"]["num_ctx"] == 1000  # still sent as configured, not cut
    [notice] = sink.of(Notice)
    assert notice.level == "warning" and "num_ctx is 1,000" in notice.text and "[providers.ollama]" in notice.text


@pytest.mark.parametrize(("host", "url"), [
    ("localhost", "http://localhost:11434"), ("0.0.0.0", "http://127.0.0.1:11434"),
    ("10.0.0.5:9000", "http://10.0.0.5:9000"), ("https://ollama.example.com/", "https://ollama.example.com"),
    ("http://127.0.0.1:11434", "http://127.0.0.1:11434"), (":11500", "http://127.0.0.1:11500"),
    ("0.0.0.0:11500", "http://127.0.0.1:11500"),
])
def test_ollama_host_is_read_the_way_ollama_reads_it(host: str, url: str) -> None:
    assert normalize_host(host) == url


def _free_port() -> int:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_connection_refused_on_this_machine_is_not_retried_and_says_how_to_start_ollama() -> None:
    policy = fast()
    with pytest.raises(ModelUnavailable, match=r"nothing is listening at ollama .* did not retry") as info:
        await OllamaModel("q", base_url=f"http://127.0.0.1:{_free_port()}", retry=policy).chat([Message.user("x")])
    assert "ollama serve" in info.value.hint and policy.sleep.delays == []  # type: ignore[attr-defined]


async def test_connection_refused_on_a_local_compatible_server_says_to_start_it() -> None:
    policy = fast()
    model = OpenAIModel("m", base_url=f"http://localhost:{_free_port()}/v1", key_env=None, provider="openai-compat",
                        retry=policy)
    with pytest.raises(ModelUnavailable, match="nothing is listening at openai-compat") as info:
        await model.chat([Message.user("x")])
    assert "tomo models" in info.value.hint and policy.sleep.delays == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:11434", True), ("http://localhost:8080/v1", True), ("http://[::1]:1234", True),
    ("127.0.0.2:11434", True), ("http://gpu-box:11434", False), ("https://api.openai.com/v1", False),
    ("http://10.0.0.5:8000/v1", False),
])
def test_is_loopback(url: str, local: bool) -> None:
    assert is_loopback(url) is local


async def test_ollama_404_says_to_pull_the_model() -> None:
    with LoopbackServer() as server:
        server.push(Canned(404, {"error": "model 'qwen9' not found"}))
        with pytest.raises(ModelError, match="model 'qwen9' not found") as info:
            await OllamaModel("qwen9", base_url=server.url).chat([Message.user("x")])
    assert info.value.hint == "pull it with `ollama pull qwen9`"


# ---- the retry policy ---------------------------------------------------------------------------------------------


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy()
    for retry, full in [(0, 0.5), (1, 1.0), (2, 2.0), (5, 8.0), (9, 8.0)]:
        for _ in range(20):
            assert 0.75 * full <= policy.delay(retry) <= full
    assert policy.delay(0, retry_after=30) == 30
    assert policy.delay(0, retry_after=61) <= 0.5  # an absurd Retry-After falls back to the backoff


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = time.time()
    date = email.utils.formatdate(now + 10, usegmt=True)
    assert 8 <= (parse_retry_after({"retry-after": date}, now=now) or 0) <= 10.5
    assert parse_retry_after({}) is None and parse_retry_after({"retry-after": "soon"}) is None


async def test_409_and_408_are_retried_but_400_is_not() -> None:
    with LoopbackServer() as server:
        server.push(Canned(409, {"error": {"message": "conflict"}}), Canned(408, "timeout"),
                    Canned(body=openai_body("ok")))
        reply = await OpenAIModel("m", base_url=server.url, api_key="k", retry=fast()).chat([Message.user("x")])
        assert reply.text == "ok" and len(server.requests) == 3
    with LoopbackServer() as server:
        server.push(Canned(400, {"error": {"message": "Unrecognized request argument supplied: foo"}}))
        with pytest.raises(ModelError, match=r"rejected the request \(400\): Unrecognized request argument") as info:
            await OpenAIModel("m", base_url=server.url, api_key="k", retry=fast()).chat([Message.user("x")])
        assert len(server.requests) == 1 and info.value.status == 400


def test_loopback_answers_are_real_json() -> None:
    assert json.loads(json.dumps(openai_body("x")))["choices"][0]["message"]["content"] == "x"


async def test_a_context_overflow_400_says_to_shorten_the_context() -> None:
    message = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens."
    with LoopbackServer() as server:
        server.push(Canned(400, {"error": {"message": message, "code": "context_length_exceeded"}}))
        with pytest.raises(ModelError, match="too long for 'm'") as info:
            await OpenAIModel("m", base_url=server.url, api_key="k", retry=fast()).chat([Message.user("x")])
    assert "shorten the context" in info.value.hint


async def test_each_retry_is_reported_on_the_sink() -> None:
    sink = ListSink()
    with LoopbackServer() as server:
        server.push(Canned(503, "busy"), Canned(429, "slow", headers={"retry-after-ms": "20"}),
                    Canned(body=anthropic_body("ok")))
        model = anthropic_mod.AnthropicModel("c", base_url=server.url, api_key="k", retry=fast(), sink=sink)
        assert (await model.chat([Message.user("x")])).text == "ok"
    texts = [n.text for n in sink.of(Notice)]
    assert len(texts) == 2 and "HTTP 503; retry 1 of 2" in texts[0] and "HTTP 429; retry 2 of 2 in 0.02 s" in texts[1]


async def test_a_stream_that_stalls_after_it_started_is_a_timeout_not_a_retry() -> None:
    first = 'data: {"choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n'
    with LoopbackServer() as server:
        # The server sends one chunk, then nothing for longer than the read timeout.
        server.push(Canned(chunks=[first], content_type="text/event-stream", stall_s=1.0))
        model = OpenAIModel("m", base_url=server.url, api_key="k", retry=fast(), timeout_s=0.3)
        seen: list[object] = []
        with pytest.raises(ModelError, match="stopped mid-stream") as info:
            async for event in model.stream([Message.user("x")]):
                seen.append(event)
        assert len(server.requests) == 1
    assert seen and "not retried" in info.value.message


def test_ollama_thinking_is_not_the_answer_and_not_a_call() -> None:
    body = ollama_body('<think>maybe {"name": "grep", "arguments": {}}</think>\n\nThe answer is 4.')
    reply = ollama_mod.from_response(body, ["grep"])
    assert reply.text == "The answer is 4." and reply.tool_calls == []
    cut = ollama_mod.from_response(ollama_body("<think>still thinking when the budget ran out", done_reason="length"))
    assert cut.text == "" and cut.finish == "length"
    assert ollama_mod.from_response(ollama_body("Plain <think> in the middle")).text == "Plain <think> in the middle"


def test_openai_stream_fragments_of_parallel_calls_may_interleave() -> None:
    from tomo.models.openai import StreamAccumulator, from_response

    def chunk(index: int, **fn: str) -> dict[str, object]:
        call: dict[str, object] = {"index": index, "function": fn}
        if "name" in fn:
            call["id"] = ""  # a compatible server that sends empty ids
        return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}

    acc = StreamAccumulator()
    for c in (chunk(0, name="grep", arguments=""), chunk(1, name="read_file", arguments='{"pa'),
              chunk(0, arguments='{"pattern": '), chunk(1, arguments='th": "b"}'), chunk(0, arguments='"a"}'),
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}):
        acc.feed(c)
    reply = from_response(acc.response())
    assert [(c.name, c.args) for c in reply.tool_calls] == [("grep", {"pattern": "a"}), ("read_file", {"path": "b"})]
    assert all(c.id for c in reply.tool_calls) and reply.finish == "tool_calls"  # "stop" + calls = tool_calls


async def test_openai_compatible_stream_without_call_indices_or_with_repeated_names() -> None:
    """Some compatible servers send tool-call fragments with no ``index`` (or ``"index": null``), and some repeat the
    whole name in every fragment; the calls must still come out whole, over real HTTP."""
    def chunk(*calls: dict[str, object], finish: str | None = None) -> str:
        body = {"choices": [{"index": 0, "delta": {"tool_calls": list(calls)} if calls else {},
                             "finish_reason": finish}]}
        return f"data: {json.dumps(body)}\n\n"

    chunks = [
        chunk({"index": None, "id": "c1", "function": {"name": "grep", "arguments": '{"pattern"'}}),
        chunk({"function": {"arguments": ': "a"}'}}),  # no index, no id: continues the last call
        chunk({"id": "c2", "function": {"name": "read_file", "arguments": ""}}),  # a new id: a new call
        chunk({"id": "c2", "function": {"name": "read_file", "arguments": '{"path": "b"}'}}),  # name repeated
        chunk(finish="tool_calls"), "data: [DONE]\n\n",
    ]
    with LoopbackServer() as server:
        server.push(sse(chunks))
        model = OpenAIModel("m", base_url=server.url, api_key="k", provider="openai-compat", retry=fast())
        events = [e async for e in model.stream([Message.user("x")], [GREP, READ])]
    reply = events[-1].reply  # type: ignore[union-attr]
    assert [(c.id, c.name, c.args, c.malformed) for c in reply.tool_calls] == [
        ("c1", "grep", {"pattern": "a"}, None), ("c2", "read_file", {"path": "b"}, None)]
    assert reply.finish == "tool_calls"


def test_openai_compatible_stream_without_indices_or_ids_tells_calls_apart_by_name_and_json() -> None:
    """No index and no id at all: a named fragment after a whole call starts the next call (two greps in a row are
    two calls), while a repeated name on unfinished arguments continues the same call."""
    from tomo.models.openai import StreamAccumulator, from_response

    def chunk(**fn: str) -> dict[str, object]:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": fn}]}, "finish_reason": None}]}

    acc = StreamAccumulator()
    for c in (chunk(name="grep", arguments='{"pattern": "a"}'), chunk(name="grep", arguments='{"pattern"'),
              chunk(name="grep", arguments=': "b"}'), chunk(arguments="")):
        acc.feed(c)
    calls = from_response(acc.response()).tool_calls
    assert [(c.name, c.args) for c in calls] == [("grep", {"pattern": "a"}), ("grep", {"pattern": "b"})]


async def test_openai_compatible_content_as_a_list_of_parts_is_read_as_text() -> None:
    """Mistral's reasoning models answer ``content`` as a list of parts, in whole replies and in stream deltas."""
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}, {"type": "text", "text": "Done."}]
    body = openai_body(None)
    body["choices"][0]["message"]["content"] = parts
    delta = {"choices": [{"index": 0, "delta": {"content": parts}, "finish_reason": "stop"}]}
    with LoopbackServer() as server:
        server.push(Canned(body=body), sse([f"data: {json.dumps(delta)}\n\n", "data: [DONE]\n\n"]))
        model = OpenAIModel("m", base_url=server.url, api_key="k", provider="openai-compat", retry=fast())
        whole = await model.chat([Message.user("x")])
        events = [e async for e in model.stream([Message.user("x")])]
    assert whole.text == "Done." and events[-1].reply.text == "Done."  # type: ignore[union-attr]


async def test_a_compatible_server_that_wants_a_key_says_where_to_name_it() -> None:
    with LoopbackServer() as server:
        server.push(Canned(401, {"error": {"message": "missing bearer token"}}))
        model = OpenAIModel("m", base_url=server.url, key_env=None, provider="openai-compat", retry=fast())
        with pytest.raises(ModelError, match="rejected the API key") as info:
            await model.chat([Message.user("x")])
    assert "api_key_env under [providers.openai-compat]" in info.value.hint


async def test_a_reply_cap_the_model_does_not_allow_says_where_to_lower_it() -> None:
    """Anthropic's default cap (8192) is more than older models allow; the 400 must say which setting to lower."""
    body = {"type": "error", "error": {"type": "invalid_request_error",
                                       "message": "max_tokens: 8192 > 4096, which is the maximum allowed number of "
                                                  "output tokens for claude-3-haiku-20240307"}}
    with LoopbackServer() as server:
        server.push(Canned(400, body))
        model = anthropic_mod.AnthropicModel("claude-3-haiku-20240307", base_url=server.url, api_key="k",
                                             retry=fast())
        with pytest.raises(ModelError, match="refuses the reply-length cap") as info:
            await model.chat([Message.user("x")])
    assert "max_reply_tokens" in info.value.hint and len(server.requests) == 1


async def test_a_stream_chunk_that_is_not_json_is_a_clear_error() -> None:
    with LoopbackServer() as server:
        server.push(sse(["data: <html>oops</html>\n\n"]))
        model = OpenAIModel("m", base_url=server.url, api_key="k", retry=fast())
        with pytest.raises(ModelError, match="stream chunk that is not JSON") as info:
            _ = [e async for e in model.stream([Message.user("hi")])]
    assert "base URL" in info.value.hint


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
async def test_a_stream_cut_before_its_end_marker_finishes_with_error(provider: str) -> None:
    text = {"openai": sse(['data: {"choices": [{"index": 0, "delta": {"content": "half"}}]}\n\n']),
            "anthropic": sse(['event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
                              '"delta": {"type": "text_delta", "text": "half"}}\n\n']),
            "ollama": jsonl(['{"message": {"role": "assistant", "content": "half"}, "done": false}\n'])}[provider]
    with LoopbackServer() as server:
        server.push(text)
        model = {"openai": lambda: OpenAIModel("m", base_url=server.url, api_key="k"),
                 "anthropic": lambda: anthropic_mod.AnthropicModel("c", base_url=server.url, api_key="k"),
                 "ollama": lambda: OllamaModel("q", base_url=server.url)}[provider]()
        events = [e async for e in model.stream([Message.user("x")])]
    assert isinstance(events[-1], ReplyDone)
    assert (events[-1].reply.text, events[-1].reply.finish) == ("half", "error")


def test_finish_follows_the_calls_actually_present() -> None:
    from tomo.models.openai import from_response

    assert from_response(openai_body("", [], "tool_calls")).finish == "stop"
    assert from_response(openai_body("", [("c", "grep", {})], "stop")).finish == "tool_calls"
    assert from_response(openai_body("", [("c", "grep", '{"pat')], "length")).finish == "length"
