import json
from pathlib import Path

import pytest

from tomo.errors import ConfigError, ScriptExhausted
from tomo.models import Message, ReplyDone, TextDelta
from tomo.models.scripted import ScriptedModel


async def test_replays_in_order_and_records_what_it_was_sent(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [
        {"tool_calls": [{"name": "refs", "args": {"symbol": "a.b"}}]},
        {"content": "done", "finish": "length", "usage": {"input_tokens": 7, "output_tokens": 2}},
    ]}))
    model = ScriptedModel.from_file(script)
    first = await model.chat([Message.user("hi")])
    assert first.finish == "tool_calls" and first.tool_calls[0].args == {"symbol": "a.b"}
    second = await model.chat([Message.user("again")], force_tools=True)
    assert (second.text, second.finish, second.usage.total) == ("done", "length", 9)
    assert [m[0].content for m in model.sent] == ["hi", "again"] and model.forced == [False, True]
    with pytest.raises(ScriptExhausted, match="no reply left"):
        await model.chat([])


async def test_a_reply_with_when_answers_only_a_request_that_says_it_and_is_passed_over_otherwise() -> None:
    model = ScriptedModel([{"content": "first"}, {"content": "again", "when": "another test"},
                           {"content": "again", "when": "another test"}, {"content": "the fix"}])
    assert (await model.chat([Message.user("write a test")])).text == "first"
    assert (await model.chat([Message.user("ask"), Message.user("write another test")])).text == "again"
    assert (await model.chat([Message.user("another test"), Message.user("now fix it")])).text == "the fix"
    assert model.remaining == 0 and len(model.sent) == 3  # the second "again" was passed over, never sent
    with pytest.raises(ScriptExhausted):
        await ScriptedModel([{"content": "x", "when": "never said"}]).chat([Message.user("hello")])


async def test_broken_argument_json_becomes_a_malformed_call() -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "refs", "args": "{not json"}]}])
    call = (await model.chat([])).tool_calls[0]
    assert call.malformed and "not valid JSON" in call.malformed and call.raw_args == "{not json"


async def test_stream_ends_with_the_same_reply() -> None:
    model = ScriptedModel([{"content": "a fairly long reply, streamed in pieces"}])
    events = [e async for e in model.stream([])]
    assert isinstance(events[-1], ReplyDone)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == events[-1].reply.text


def test_bad_scripts_say_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}")
    with pytest.raises(ConfigError, match="no 'replies'"):
        ScriptedModel.from_file(tmp_path / "a.json")
    with pytest.raises(ConfigError, match="does not exist"):
        ScriptedModel.from_file(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="finish"):
        ScriptedModel([{"finish": "done"}])
