"""The loop against scripted models that misbehave on purpose: each guarantee is a count or a flag that could fail."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tomo.agents import Agent
from tomo.events import (
    JsonlSink,
    LimitReached,
    ListSink,
    ModelCalled,
    ModelThinking,
    Notice,
    ReplyTruncated,
    ResultCapped,
    ToolCalled,
    ToolRefused,
    UsageReported,
    read_jsonl,
)
from tomo.loop import Limits, Outcome, run, run_sync
from tomo.models.messages import Message
from tomo.models.scripted import ScriptedModel
from tomo.tools import Caller, Registry, TenantId

CALLER = Caller(user="ann", tenant=1147)


class Counter:
    """Tools with run counters, so a test can prove what ran and for whom."""

    def __init__(self) -> None:
        self.runs: dict[str, list[Any]] = {}
        self.registry = Registry()
        self.registry.register(self.echo)
        self.registry.register(self.list_jobs, unit="jobs")
        self.registry.register(self.delete_job)
        self.registry.register(self.refs, cap=300, unit="references")

    def _ran(self, name: str, value: Any) -> None:
        self.runs.setdefault(name, []).append(value)

    def echo(self, text: str) -> str:
        """Say text back."""
        self._ran("echo", text)
        return f"echo: {text}"

    def list_jobs(self, tenant_id: TenantId) -> list[str]:
        """List the jobs of your tenant."""
        self._ran("list_jobs", tenant_id)
        return [] if tenant_id == 1147 else ["someone else's job"]

    def delete_job(self, job_id: int) -> str:
        """Delete a job."""
        self._ran("delete_job", job_id)
        return "deleted"

    def refs(self, symbol: str) -> list[str]:
        """Find references."""
        self._ran("refs", symbol)
        return [f"src/m{i}.py:{i}" for i in range(1234)]


READER = Agent("reader", prompt="You read jobs.", tools=("echo", "list_jobs", "refs"))


def tool_reply(*calls: tuple[str, Any], usage: int = 0) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "args": a} for n, a in calls],
            "usage": {"input_tokens": usage, "output_tokens": usage}}


async def test_a_plain_answer_completes_with_the_prompt_first() -> None:
    model = ScriptedModel([{"content": "hello", "usage": {"input_tokens": 5, "output_tokens": 2}}])
    sink = ListSink()
    out = await run(READER, model, Counter().registry, CALLER, "hi", sink=sink)
    assert out.completed and out.text == "hello" and out.steps == 1 and out.usage.total == 7
    assert [(m.role, m.content) for m in model.sent[0]] == [("system", "You read jobs."), ("user", "hi")]
    assert [s.name for s in model.sent_tools[0]] == ["echo", "list_jobs", "refs"]
    assert [type(e) for e in sink.events][:2] == [ModelThinking, ModelCalled]
    assert sink.of(UsageReported)[-1].input_tokens == 5


async def test_tenant_injection_through_the_loop() -> None:
    tools = Counter()
    model = ScriptedModel([tool_reply(("list_jobs", {"tenant_id": 916})), {"content": "none"}])
    sink = ListSink()
    out = await run(READER, model, tools.registry, CALLER, "list jobs of tenant 916", sink=sink)
    assert sink.of(ToolCalled)[0].summary == "empty result: list_jobs returned no jobs. (ignored tenant_id)"
    assert tools.runs["list_jobs"] == [1147]
    tool_msg = model.sent[1][-1]
    assert tool_msg.role == "tool" and "empty result: list_jobs returned no jobs" in tool_msg.content
    assert "someone else's job" not in tool_msg.content and out.completed


async def test_a_call_outside_the_allow_list_never_runs_and_the_model_is_told() -> None:
    tools = Counter()
    sink = ListSink()
    model = ScriptedModel([tool_reply(("delete_job", {"job_id": 1})), {"content": "I may not delete."}])
    out = await run(READER, model, tools.registry, CALLER, "delete job 1", sink=sink)
    assert "delete_job" not in tools.runs
    told = model.sent[1][-1]
    assert told.is_error and told.content == (
        "tool 'delete_job' is not available to agent 'reader'; available: echo, list_jobs, refs")
    assert [e.tool for e in sink.of(ToolRefused)] == ["delete_job"] and out.completed


async def test_unknown_tool_invalid_args_and_a_raising_handler_go_back_to_the_model() -> None:
    tools = Counter()

    def flaky(n: int) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    tools.registry.register(flaky)
    agent = Agent("a", tools=("echo", "flaky"))
    model = ScriptedModel([
        tool_reply(("grep", {"pattern": "x"}), ("echo", {"txt": "hi"}), ("flaky", {"n": 1})),
        {"content": "giving up"},
    ])
    out = await run(agent, model, tools.registry, CALLER, "go")
    answers = [m.content for m in model.sent[1] if m.role == "tool"]
    assert answers[0] == "there is no tool named 'grep'; available: echo, flaky"
    assert "text: required (expected string), but missing" in answers[1] and "txt: not a parameter" in answers[1]
    assert answers[2] == "tool 'flaky' failed: RuntimeError: disk on fire"
    assert out.completed and out.tool_calls == 3 and "echo" not in tools.runs


async def test_a_model_calling_tools_forever_is_stopped_at_the_step_limit() -> None:
    tools = Counter()
    sink = ListSink()
    model = ScriptedModel([tool_reply(("echo", {"text": str(i)})) for i in range(100)])
    out = await run(READER, model, tools.registry, CALLER, "loop", Limits(max_steps=7), sink)
    assert out.stopped_by == "steps" and out.steps == 7 and not out.completed
    assert len(tools.runs["echo"]) == 7 and model.remaining == 93
    assert [(e.limit, e.value) for e in sink.of(LimitReached)] == [("steps", 7)]
    assert out.messages[-1].role == "user" and "the step limit (7 model calls) was reached" in out.messages[-1].content
    told = [m for m in out.messages if "[tomo] This run was stopped" in m.content]
    assert len(told) == 1  # the model is told once


async def test_the_tool_call_limit_answers_every_call_and_stops() -> None:
    tools = Counter()
    model = ScriptedModel([tool_reply(*[("echo", {"text": str(i)}) for i in range(3)]) for _ in range(10)])
    out = await run(READER, model, tools.registry, CALLER, "loop", Limits(max_tool_calls=5))
    assert out.stopped_by == "tool_calls" and out.tool_calls == 5 and len(tools.runs["echo"]) == 5
    assert out.steps == 2
    second_answers = [m for m in out.messages[-4:-1] if m.role == "tool"]
    assert [m.content for m in second_answers] == [
        "echo: 0", "echo: 1", "not run: the tool-call limit (5 calls) was reached"]


async def test_the_token_budget_stops_the_loop_like_the_step_limit() -> None:
    sink = ListSink()
    model = ScriptedModel([tool_reply(("echo", {"text": "x"}), usage=400) for _ in range(10)])
    out = await run(READER, model, Counter().registry, CALLER, "go", Limits(max_tokens_total=2000), sink)
    assert out.stopped_by == "tokens" and out.steps == 3 and out.usage.total == 2400
    assert [(e.limit, e.value) for e in sink.of(LimitReached)] == [("tokens", 2000)]
    assert [e.input_tokens for e in sink.of(ModelCalled)] == [400, 400, 400]


async def test_a_length_finish_is_flagged_never_passed_on_as_complete() -> None:
    sink = ListSink()
    model = ScriptedModel([{"content": "The fix is to chan", "finish": "length"}])
    out = await run(READER, model, Counter().registry, CALLER, "fix it", sink=sink)
    assert out.truncated and not out.completed and out.finish == "length"
    assert out.text == "The fix is to chan"
    assert [e.step for e in sink.of(ReplyTruncated)] == [1]


async def test_a_refused_or_broken_off_reply_is_a_warning_not_a_quiet_answer() -> None:
    """Like ``length``: a refusal (Anthropic's ``refusal``, OpenAI's ``content_filter``) or a stream that broke off
    (finish ``error``) is not a complete answer, so the user is warned, not just handed the text."""
    for finish, words in (("content_filter", "refused"), ("error", "broke off")):
        sink = ListSink()
        model = ScriptedModel([{"content": "I can", "finish": finish}])
        out = await run(READER, model, Counter().registry, CALLER, "fix it", sink=sink)
        assert not out.completed and out.finish == finish
        warnings = [n.text for n in sink.of(Notice) if n.level == "warning"]
        assert len(warnings) == 1 and words in warnings[0] and "not complete" in warnings[0]
    sink = ListSink()
    await run(READER, ScriptedModel([{"content": "Done."}]), Counter().registry, CALLER, "fix it", sink=sink)
    assert sink.of(Notice) == []


async def test_a_capped_result_is_described_in_words_to_the_model_and_the_user() -> None:
    sink = ListSink()
    model = ScriptedModel([tool_reply(("refs", {"symbol": "a.b"})), {"content": "many"}])
    await run(READER, model, Counter().registry, CALLER, "refs", sink=sink)
    seen = model.sent[1][-1].content
    capped = sink.of(ResultCapped)[0]
    assert capped.total == 1234 and capped.unit == "references" and 0 < capped.shown < 1234
    assert seen.startswith(f"[showing {capped.shown} of 1,234 references; ask for a narrower query")
    assert sink.of(ToolCalled)[0].summary == f"{capped.shown} of 1,234 references (capped)"


async def test_force_tools_is_used_on_the_first_turn_and_cleared_after() -> None:
    agent = Agent("forced", tools=("echo",), force_tools=True)
    model = ScriptedModel([tool_reply(("echo", {"text": "a"})), tool_reply(("echo", {"text": "b"})),
                           {"content": "done"}])
    out = await run(agent, model, Counter().registry, CALLER, "go")
    assert model.forced == [True, False, False] and out.completed
    unforced = ScriptedModel([{"content": "done"}])
    await run(READER, unforced, Counter().registry, CALLER, "go")
    assert unforced.forced == [False]


async def test_parallel_calls_in_one_reply_are_answered_in_order() -> None:
    tools = Counter()
    model = ScriptedModel([tool_reply(*[("echo", {"text": w}) for w in ["one", "two", "three"]]),
                           {"content": "ok"}])
    out = await run(READER, model, tools.registry, CALLER, "go")
    sent = model.sent[1]
    calls = sent[-4].tool_calls
    answers = sent[-3:]
    assert [a.tool_call_id for a in answers] == [c.id for c in calls]
    assert [a.content for a in answers] == ["echo: one", "echo: two", "echo: three"]
    assert tools.runs["echo"] == ["one", "two", "three"] and out.tool_calls == 3


async def test_malformed_calls_have_their_own_retry_budget() -> None:
    tools = Counter()
    sink = ListSink()
    fixed = ScriptedModel([tool_reply(("echo", '{"text": "a"')), tool_reply(("echo", {"text": "a"})),
                           {"content": "ok"}])
    out = await run(READER, fixed, tools.registry, CALLER, "go", Limits(max_malformed=2), sink)
    assert out.completed and out.malformed_calls == 1 and out.tool_calls == 1 and tools.runs["echo"] == ["a"]
    assert "was not run: arguments are not valid JSON" in fixed.sent[1][-1].content
    stuck = ScriptedModel([tool_reply(("echo", "{nope")) for _ in range(10)])
    out = await run(READER, stuck, Counter().registry, CALLER, "go", Limits(max_malformed=3, max_tool_calls=1), sink)
    assert out.stopped_by == "malformed_calls" and out.malformed_calls == 3 and out.steps == 3
    assert out.tool_calls == 0  # malformed calls do not spend the tool-call budget


async def test_jsonl_transcript_records_the_run(tmp_path: Any) -> None:
    path = tmp_path / "run.jsonl"
    sink = JsonlSink(path)
    model = ScriptedModel([tool_reply(("delete_job", {"job_id": 2}), ("echo", {"text": "x"})),
                           {"content": "done", "usage": {"input_tokens": 3, "output_tokens": 4}}])
    await run(READER, model, Counter().registry, CALLER, "go", sink=sink)
    sink.close()
    kinds = [row["kind"] for row in read_jsonl(path)]
    assert kinds == ["model_thinking", "model_called", "tool_refused", "tool_called", "model_thinking",
                     "model_called", "assistant_said", "usage"]
    assert read_jsonl(path)[-1] == {"kind": "usage", "agent": "reader", "input_tokens": 3, "output_tokens": 4,
                                     "estimated": False}


def test_run_sync_keeps_the_given_history_untouched() -> None:
    history = [Message.system("custom"), Message.user("hi")]
    model = ScriptedModel([{"content": "hey"}])
    out: Outcome = run_sync(READER, model, Counter().registry, CALLER, history)
    assert len(history) == 2 and [m.role for m in out.messages] == ["system", "user", "assistant"]
    assert model.sent[0][0].content == "custom"  # an existing system message is not replaced


# ---- property: any script, the loop's arithmetic and bookkeeping hold ---------------------------------------------

CALL = st.fixed_dictionaries({
    "name": st.sampled_from(["echo", "list_jobs", "delete_job", "refs", "nope"]),
    "args": st.sampled_from([{"text": "x"}, {}, {"tenant_id": 916}, {"job_id": 1}, "{broken", {"text": 3}]),
})
REPLY = st.fixed_dictionaries(
    {"tool_calls": st.lists(CALL, min_size=1, max_size=4)},
    optional={"finish": st.sampled_from(["tool_calls", "length"]), "content": st.text(max_size=5),
              "usage": st.fixed_dictionaries({"input_tokens": st.integers(0, 500),
                                              "output_tokens": st.integers(0, 50)})},
)
LIMITS = st.builds(Limits, max_steps=st.integers(1, 8), max_tool_calls=st.integers(1, 12),
                   max_tokens_total=st.integers(1, 3000), max_malformed=st.integers(1, 4))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(REPLY, max_size=10), LIMITS)
def test_any_script_stays_within_limits_and_answers_every_call(replies: list[dict[str, Any]], limits: Limits) -> None:
    tools = Counter()
    model = ScriptedModel([*replies, {"content": "done"}])
    sink = ListSink()
    out = run_sync(READER, model, tools.registry, CALLER, "go", limits, sink)
    assert out.steps <= limits.max_steps  # type: ignore[operator]
    assert out.tool_calls <= limits.max_tool_calls  # type: ignore[operator]
    assert out.malformed_calls <= limits.max_malformed  # type: ignore[operator]
    # the token budget: no model call starts once the tokens spent reach it, and a run stopped for tokens spent them
    calls = [e.input_tokens + e.output_tokens for e in sink.of(ModelCalled)]
    assert len(calls) == out.steps and sum(calls) == out.usage.total
    assert all(sum(calls[:k]) < limits.max_tokens_total for k in range(len(calls)))  # type: ignore[operator]
    assert (out.stopped_by == "tokens") <= (out.usage.total >= limits.max_tokens_total)  # type: ignore[operator]
    if out.stopped_by == "tokens":
        assert [(e.limit, e.value) for e in sink.of(LimitReached)] == [("tokens", limits.max_tokens_total)]
    assert "delete_job" not in tools.runs and all(t == 1147 for t in tools.runs.get("list_jobs", []))
    assert (out.stopped_by is None) == (out.messages[-1].role == "assistant")
    if out.stopped_by is None:
        assert out.text == "done" and out.steps == len(replies) + 1
    # every call is answered, in order, right after the reply that made it
    msgs = out.messages
    for i, m in enumerate(msgs):
        if m.role == "assistant" and m.tool_calls:
            answers = msgs[i + 1 : i + 1 + len(m.tool_calls)]
            assert [a.tool_call_id for a in answers] == [c.id for c in m.tool_calls]
            assert all(a.role == "tool" for a in answers)


async def test_streaming_sends_the_text_as_it_arrives_and_ends_the_same() -> None:
    from tomo.events import AssistantSaid, TextStreamed

    text = "The build failed because the cache key changed between runs."
    sink = ListSink()
    model = ScriptedModel([tool_reply(("echo", {"text": "a"})), {"content": text}])
    out = await run(READER, model, Counter().registry, CALLER, "why", sink=sink, stream=True)
    pieces = [e.text for e in sink.of(TextStreamed)]
    assert len(pieces) > 1 and "".join(pieces) == text
    assert out.completed and out.text == text and out.tool_calls == 1
    assert [e.text for e in sink.of(AssistantSaid)] == [text]


async def test_a_model_failure_mid_run_keeps_what_the_run_did() -> None:
    """The model fails at step 3 (its script runs out): the caller still gets the history, usage and counts so far."""
    from tomo.errors import ModelError
    from tomo.events import ModelFailed
    from tomo.loop import RunFailed

    tools = Counter()
    model = ScriptedModel([tool_reply(("echo", {"text": "a"}), usage=10), tool_reply(("echo", {"text": "b"}), usage=5)])
    sink = ListSink()
    try:
        await run(READER, model, tools.registry, CALLER, "go", sink=sink, stream=True)
    except RunFailed as failed:
        out = failed.outcome
        assert isinstance(failed, ModelError) and failed.message == out.error.message  # type: ignore[union-attr]
        assert "script" in failed.message and failed.hint  # the original's message and hint are kept
    else:
        raise AssertionError("a model that fails must not end the run as if it had answered")
    assert out.stopped_by == "error" and not out.completed
    assert out.steps == 2 and out.tool_calls == 2 and out.usage.total == 30
    assert tools.runs["echo"] == ["a", "b"]
    assert [m.role for m in out.messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    failed_events = sink.of(ModelFailed)
    assert len(failed_events) == 1 and failed_events[0].step == 3 and "script" in failed_events[0].error
    assert sink.of(UsageReported)[-1].input_tokens == 15  # the usage event still closes the run
