"""Tool calls written as text by weak local models, turned back into real calls.

Small models often answer a tool-calling request with the call in their text instead of the native field: a bare JSON
object, a fenced ```json block, Qwen/Hermes-style ``<tool_call>{...}</tool_call>``, ``<tools>{...}</tools>`` (Qwen2.5's
chat template lists the offered tools inside ``<tools>`` tags, and Qwen2.5-Coder 1.5B was seen answering in that tag:
tests/models/data/qwen25_coder_tools_tag.json), Llama-3.1-style ``<function=NAME>{...}</function>``, Mistral-style
``[TOOL_CALLS] [...]``, or nothing but the name of an offered tool (what the same model answered when asked to reply
"with the tool call only": recovered with no arguments, so the registry tells the model which ones it left out). A
tag may hold several objects one after another. Each adapter runs :func:`recover_calls` when a reply has no native
call and tools were offered. Only names of offered tools are recovered, so prose that merely contains JSON stays
prose, and a tool's definition echoed back from the prompt is not a call; a call whose arguments are not valid JSON
becomes a call marked ``malformed`` (the loop tells the model), never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from tomo.models._http import make_call_id, parse_args
from tomo.models.messages import Finish, Message, Reply, ToolCall, Usage

_TAGGED = re.compile(r"<(?:tool_call|tools)>\s*(.*?)\s*(?:</(?:tool_call|tools)>|$)", re.S)
_FENCED = re.compile(r"```(?:json|tool_call|tool)?[ \t]*\n(.*?)\n?```", re.S)
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*(\[.*\]|\{.*\})", re.S)
_FUNCTION = re.compile(r"<function=([\w.\-]+)>\s*(.*?)\s*</function>", re.S)
_NAME = re.compile(r'"(?:name|tool|function)"\s*:\s*"([^"]+)"')
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_BARE_NAME = re.compile(r"`?([\w.\-]+)(?:\(\s*\))?`?")


def recover_calls(text: str, tool_names: Collection[str]) -> tuple[str, list[ToolCall]]:
    """Returns ``(remaining_text, calls)``; with no recognisable call, ``(text, [])`` unchanged."""
    if not tool_names or not text:
        return text, []
    bare = _BARE_NAME.fullmatch(text.strip())
    if bare and bare.group(1) in tool_names:
        return "", [ToolCall(make_call_id("recovered"), bare.group(1), {})]
    if "{" not in text:
        return text, []
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    for match in _FUNCTION.finditer(text):
        if match.group(1) in tool_names:
            args, malformed, raw = parse_args(match.group(2) or "{}")
            calls.append(ToolCall(make_call_id("recovered"), match.group(1), args, malformed, raw))
            spans.append(match.span())
    if calls:
        return _cut(text, spans), calls
    for pattern in (_TAGGED, _MISTRAL, _FENCED):
        calls, spans = [], []
        for match in pattern.finditer(text):
            found = _calls_from_snippet(match.group(1), tool_names)
            if found:
                calls += found
                spans.append(match.span())
        if calls:
            return _cut(text, spans), calls
    stripped = text.strip()
    if stripped.startswith(("{", "[")) and stripped.endswith(("}", "]")):
        calls = _calls_from_snippet(stripped, tool_names)
        if calls:
            return "", calls
    return text, []


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    kept, last = [], 0
    for start, end in spans:
        kept.append(text[last:start])
        last = end
    kept.append(text[last:])
    return "".join(kept).strip()


def _json_values(snippet: str) -> Any:
    """One JSON value, or several written one after the other (as a list): ``{...}\n{...}`` in one tag."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at = len(snippet) - len(snippet.lstrip())
    while True:
        value, at = decoder.raw_decode(snippet, at)
        values.append(value)
        while at < len(snippet) and snippet[at] in " \t\r\n,":
            at += 1
        if at == len(snippet):
            return values[0] if len(values) == 1 else values


def _calls_from_snippet(snippet: str, tool_names: Collection[str]) -> list[ToolCall]:
    try:
        value = _json_values(snippet)
    except json.JSONDecodeError as exc:
        # Broken JSON: if it clearly names an offered tool, it is a malformed call the model should hear about.
        named = _NAME.search(snippet)
        if named and named.group(1) in tool_names:
            return [ToolCall(make_call_id("recovered"), named.group(1), {},
                             malformed=f"the tool call written as text is not valid JSON: {exc.msg}",
                             raw_args=snippet)]
        return []
    items = value if isinstance(value, list) else [value]
    calls = [call for item in items if (call := _call_from_object(item, tool_names)) is not None]
    # A list is only a list of calls when every item is one; otherwise it is data the model is showing.
    return calls if len(calls) == len(items) else []


def _call_from_object(item: Any, tool_names: Collection[str]) -> ToolCall | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # {"type": "function", "function": {"name", "arguments"}}
        item = item["function"]
    name = item.get("name") or item.get("tool")
    if not isinstance(name, str) or name not in tool_names:
        return None
    if "description" in item and isinstance(item.get("parameters"), dict) and "properties" in item["parameters"]:
        return None  # the tool's definition, echoed back from the prompt's <tools> list: not a call
    raw: Any = next((item[k] for k in _ARG_KEYS if k in item), {})
    args, malformed, raw_text = parse_args(raw)
    return ToolCall(make_call_id("recovered"), name, args, malformed=malformed, raw_args=raw_text)


def finish_reply(
    text: str,
    calls: list[ToolCall],
    raw_finish: str | None,
    table: dict[str, Finish],
    tool_names: Collection[str],
    usage: Usage,
    model: str,
) -> Reply:
    """The last step of every adapter's ``from_response``: recover text calls, then normalise the finish.

    Calls are detected by their presence, not by the finish reason: OpenAI answers ``stop`` to a forced call and
    Ollama always says ``stop``; a ``tool_calls`` finish with no call in it is ``stop``. A reply cut off mid-call
    keeps ``length`` so the loop knows it is incomplete.
    An unknown finish reason is treated as ``stop`` (the raw value is kept in ``raw_finish``).
    """
    if not calls and tool_names:
        text, calls = recover_calls(text, tool_names)
    finish: Finish = table.get(raw_finish or "", "stop")
    if calls and finish == "stop":
        finish = "tool_calls"
    elif not calls and finish == "tool_calls":  # nothing to run: the loop must not wait for results
        finish = "stop"
    return Reply(Message.assistant(text, calls), finish, usage, raw_finish, model)
