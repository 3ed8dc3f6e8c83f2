"""What a real Qwen2.5-Coder 1.5B on llama-cpp-python wrote when it meant a tool call, replayed byte for byte.

``data/qwen25_coder_tools_tag.json`` says how it was recorded. The streamed answers go back through a loopback
server, so the adapter reads them exactly as it read the real server: SSE framing, llama-cpp-python's chunks, no usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loopback import Canned, LoopbackServer

from tomo.models import Message, ReplyDone, ToolSpec
from tomo.models._http import RetryPolicy
from tomo.models.openai import OpenAIModel
from tomo.models.recover import recover_calls

DATA = json.loads((Path(__file__).resolve().parent / "data" / "qwen25_coder_tools_tag.json").read_text("utf-8"))
CASES = DATA["cases"]


def tools_of(request: dict[str, Any]) -> list[ToolSpec]:
    return [ToolSpec(t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
            for t in request["tools"]]


def messages_of(request: dict[str, Any]) -> list[Message]:
    return [Message(m["role"], m["content"]) for m in request["messages"]]


def replayed(case: dict[str, Any]) -> Canned:
    if "response_sse" in case:
        events = [part + "\n\n" for part in case["response_sse"].split("\n\n") if part.strip()]
        return Canned(chunks=events, content_type=case["content_type"])
    return Canned(case["status"], case["response"])


def streamed_text(case: dict[str, Any]) -> str:
    """What the model wrote, as the recorded stream's text deltas joined."""
    return "".join(json.loads(line[len("data: "):])["choices"][0]["delta"].get("content") or ""
                   for line in case["response_sse"].splitlines() if line.startswith("data: {"))


def chat_posts(server: LoopbackServer) -> list[Any]:
    return [r.json for r in server.requests if r.path.endswith("/chat/completions")]


async def test_a_call_written_in_tools_tags_is_a_call_and_no_re_ask_is_sent() -> None:
    case = CASES[0]
    assert streamed_text(case).startswith("<tools>\n{") and streamed_text(case).endswith("}\n</tools>")
    with LoopbackServer() as server:
        server.push(replayed(case))
        model = OpenAIModel("qwen2.5-coder-1.5b", base_url=server.url + "/v1", provider="openai-compat",
                            key_env=None, retry=RetryPolicy(base_s=0.001))
        events = [e async for e in model.stream(messages_of(case["request"]), tools_of(case["request"]),
                                                force_tools=True)]
        await model.aclose()
    reply = events[-1].reply if isinstance(events[-1], ReplyDone) else None
    assert reply is not None
    assert [(c.name, c.args, c.malformed) for c in reply.tool_calls] == [
        ("definition", {"symbol": "shop.lines.OrderLine.total"}, None)]
    assert reply.finish == "tool_calls" and reply.text == ""
    # The forced request was answered with a call: tomo did not ask a second time "you did not call a tool".
    assert len(chat_posts(server)) == 1
    # llama-cpp-python sent no usage in the stream: the counts are tomo's, and marked so.
    assert reply.usage.estimated and reply.usage.output_tokens > 0


def test_the_bare_tool_name_of_the_re_ask_is_a_call_without_arguments() -> None:
    case = CASES[1]
    text = streamed_text(case)
    assert text == "find_symbol"
    names = [t.name for t in tools_of(case["request"])]
    rest, calls = recover_calls(text, names)
    assert rest == "" and [(c.name, c.args) for c in calls] == [("find_symbol", {})]
    assert recover_calls("find_symbol is the tool I would use", names)[1] == []  # prose naming a tool stays prose


async def test_a_fenced_call_with_the_usage_the_server_reported() -> None:
    case = CASES[2]
    with LoopbackServer() as server:
        server.push(replayed(case))
        model = OpenAIModel("qwen2.5-coder-1.5b", base_url=server.url + "/v1", provider="openai-compat",
                            key_env=None, retry=RetryPolicy(base_s=0.001))
        reply = await model.chat(messages_of(case["request"]), tools_of(case["request"]))
        await model.aclose()
    assert [(c.name, c.args) for c in reply.tool_calls] == [("definition", {"symbol": "OrderLine.total"})]
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.estimated) == (242, 29, False)
