"""Recovery of tool calls that weak models write as text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tomo.models.recover import recover_calls

TOOLS = {"read_file", "grep"}


def test_hermes_tagged_calls_several_and_surrounding_text() -> None:
    text = ('Reading both.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n'
            '<tool_call>{"name": "grep", "arguments": {"pattern": "x"}}</tool_call>')
    rest, calls = recover_calls(text, TOOLS)
    assert rest == "Reading both."
    assert [(c.name, c.args) for c in calls] == [("read_file", {"path": "a.py"}), ("grep", {"pattern": "x"})]
    assert len({c.id for c in calls}) == 2


def test_unclosed_tag_at_the_end_of_a_cut_reply() -> None:
    rest, calls = recover_calls('<tool_call>{"name": "grep", "arguments": {"pattern": "x"}}', TOOLS)
    assert rest == "" and [c.name for c in calls] == ["grep"]


def test_fenced_json_block_with_parameters_key() -> None:
    rest, calls = recover_calls('Sure:\n```json\n{"name": "grep", "parameters": {"pattern": "def"}}\n```\nDone.',
                                TOOLS)
    assert rest == "Sure:\n\nDone." and [(c.name, c.args) for c in calls] == [("grep", {"pattern": "def"})]


def test_bare_object_and_openai_function_shape_and_list() -> None:
    _, calls = recover_calls('{"name": "read_file", "arguments": "{\\"path\\": \\"b.py\\"}"}', TOOLS)
    assert [(c.name, c.args) for c in calls] == [("read_file", {"path": "b.py"})]
    _, calls = recover_calls('[{"type": "function", "function": {"name": "grep", "arguments": {"pattern": "a"}}},'
                             ' {"name": "read_file", "args": {"path": "c"}}]', TOOLS)
    assert [(c.name, c.args) for c in calls] == [("grep", {"pattern": "a"}), ("read_file", {"path": "c"})]


def test_invalid_json_naming_an_offered_tool_is_a_malformed_call() -> None:
    text = '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"</tool_call>'
    rest, [call] = recover_calls(text, TOOLS)
    assert rest == ""
    assert call.name == "read_file" and call.args == {} and call.malformed and "not valid JSON" in call.malformed
    assert call.raw_args == '{"name": "read_file", "arguments": {"path": "a.py"'
    _, [call] = recover_calls('{"name": "grep", "arguments": "{oops"}', TOOLS)
    assert call.malformed and call.raw_args == "{oops"


def test_things_that_are_not_calls_stay_text() -> None:
    for text in (
        '{"name": "delete_everything", "arguments": {}}',  # not an offered tool
        'The config is {"name": "grep"} in the middle of prose.',  # not the whole reply, not fenced/tagged
        '```json\n{"city": "Paris"}\n```',  # data, no tool name
        '[{"name": "grep", "arguments": {}}, {"x": 1}]',  # a list that is not all calls
        "<tool_call>not json and no name</tool_call>",
    ):
        assert recover_calls(text, TOOLS) == (text, [])
    assert recover_calls('{"name": "grep", "arguments": {}}', set()) == ('{"name": "grep", "arguments": {}}', [])


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_and_only_offered_names(text: str) -> None:
    rest, calls = recover_calls(text, TOOLS)
    assert all(c.name in TOOLS for c in calls)
    assert calls or rest == text


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers() | st.text(max_size=10), max_size=4),
       st.sampled_from(["tag", "fence", "bare"]))
def test_any_arguments_survive_every_wrapping(args: dict[str, object], style: str) -> None:
    obj = json.dumps({"name": "grep", "arguments": args})
    text = {"tag": f"<tool_call>{obj}</tool_call>", "fence": f"```json\n{obj}\n```", "bare": obj}[style]
    rest, [call] = recover_calls(text, TOOLS)
    assert rest == ""
    assert (rest, call.name, call.args, call.malformed) == ("", "grep", args, None)


def test_llama_function_tags_and_mistral_tool_calls_prefix() -> None:
    rest, calls = recover_calls('<function=read_file>{"path": "a.py"}</function> then '
                                '<function=grep>{"pattern": "x"</function>', TOOLS)
    assert rest == "then"
    assert [(c.name, c.args, bool(c.malformed)) for c in calls] == [("read_file", {"path": "a.py"}, False),
                                                                     ("grep", {}, True)]
    assert recover_calls("<function=rm>{}</function>", TOOLS) == ("<function=rm>{}</function>", [])
    rest, calls = recover_calls('[TOOL_CALLS] [{"name": "grep", "arguments": {"pattern": "main"}}]', TOOLS)
    assert rest == "" and [(c.name, c.args) for c in calls] == [("grep", {"pattern": "main"})]


def test_qwen_tools_tag_with_one_or_several_objects() -> None:
    # Qwen2.5's chat template lists the offered tools inside <tools>...</tools>; small Qwen models answer in it.
    rest, calls = recover_calls('Looking.\n<tools>\n{"name": "grep", "arguments": {"pattern": "x"}}\n</tools>', TOOLS)
    assert rest == "Looking." and [(c.name, c.args) for c in calls] == [("grep", {"pattern": "x"})]
    rest, calls = recover_calls('<tools>{"name": "grep", "arguments": {}}\n{"name": "read_file", "arguments": '
                                '{"path": "a"}}</tools>', TOOLS)
    assert rest == "" and [(c.name, c.args) for c in calls] == [("grep", {}), ("read_file", {"path": "a"})]
    rest, calls = recover_calls('<tool_call>{"name": "grep", "arguments": {}}</tools>', TOOLS)  # mixed tags
    assert rest == "" and [c.name for c in calls] == ["grep"]


def test_a_tool_definition_echoed_from_the_prompt_is_not_a_call() -> None:
    echoed = ('<tools>{"type": "function", "function": {"name": "grep", "description": "Search.", "parameters": '
              '{"type": "object", "properties": {"pattern": {"type": "string"}}}}}</tools>')
    assert recover_calls(echoed, TOOLS) == (echoed, [])


def test_a_reply_that_is_only_a_tool_name_is_a_call_without_arguments() -> None:
    for text in ("grep", " `grep` \n", "grep()"):
        rest, calls = recover_calls(text, TOOLS)
        assert rest == "" and [(c.name, c.args, c.malformed) for c in calls] == [("grep", {}, None)]
    for text in ("grep it", "delete_everything", "use grep"):
        assert recover_calls(text, TOOLS) == (text, [])
