"""The registry: schemas from signatures, the caller injected, the allow-list enforced, results capped in words."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from tomo.agents import Agent
from tomo.errors import TomoError, ToolDefinitionError
from tomo.models.messages import ToolCall
from tomo.tools import Caller, Registry, TenantId, parse_docstring, render_result

CALLER = Caller(user="ann", tenant=1147)


@dataclass
class Jobs:
    """A tiny tenant-scoped job store, with run counters so tests can prove what ran."""

    rows: dict[int, list[str]] = field(default_factory=lambda: {1147: ["build", "test"], 916: ["secret"]})
    runs: dict[str, int] = field(default_factory=dict)

    def registry(self) -> Registry:
        reg = Registry()

        def list_jobs(status: Literal["open", "done"] = "open", tenant_id: TenantId = 0) -> list[str]:
            """List the jobs of your tenant.

            Args:
                status: which jobs to list.
            """
            self.runs["list_jobs"] = self.runs.get("list_jobs", 0) + 1
            return [f"{job} ({status}, tenant {tenant_id})" for job in self.rows[int(tenant_id)]]

        async def show_job(job_id: int, caller: Caller, verbose: bool = False) -> dict[str, Any]:
            """Show one job of the caller's tenant."""
            self.runs["show_job"] = self.runs.get("show_job", 0) + 1
            await asyncio.sleep(0)
            return {"id": job_id, "tenant": caller.tenant, "user": caller.user, "verbose": verbose}

        def delete_job(job_id: int, tenant_id: TenantId) -> str:
            """Delete a job."""
            self.runs["delete_job"] = self.runs.get("delete_job", 0) + 1
            return f"deleted {job_id} of {tenant_id}"

        reg.register(list_jobs, unit="jobs")
        reg.register(show_job)
        reg.register(delete_job)
        return reg


READER = Agent("reader", tools=("list_jobs", "show_job"))


def call(name: str, args: dict[str, Any] | None = None, **kw: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, args=args or {}, **kw)


async def test_schema_comes_from_signature_and_docstring_and_hides_the_caller() -> None:
    reg = Jobs().registry()
    specs = {s.name: s for s in reg.specs(READER)}
    assert list(specs) == ["list_jobs", "show_job"]  # delete_job is not offered to the reader
    listing = specs["list_jobs"]
    assert listing.description == "List the jobs of your tenant."
    assert listing.parameters["properties"] == {
        "status": {"default": "open", "description": "which jobs to list.", "enum": ["open", "done"],
                   "type": "string"}}
    show = specs["show_job"].parameters
    assert set(show["properties"]) == {"job_id", "verbose"} and show["required"] == ["job_id"]
    assert show["additionalProperties"] is False


async def test_tenant_sent_by_the_model_is_dropped_and_the_call_runs_for_the_caller() -> None:
    jobs = Jobs()
    reg = jobs.registry()
    result = await reg.call(READER, call("list_jobs", {"tenant_id": 916}), CALLER)
    assert result.ok and result.dropped == ("tenant_id",)
    assert "secret" not in result.text and "build (open, tenant 1147)" in result.text
    assert "ignored 'tenant_id'" in result.text
    shown = await reg.call(READER, call("show_job", {"job_id": 3, "caller": {"tenant": 916}, "tenant": 916}), CALLER)
    assert shown.ok and shown.value == {"id": 3, "tenant": 1147, "user": "ann", "verbose": False}
    assert set(shown.dropped) == {"caller", "tenant"}


async def test_a_tool_outside_the_allow_list_never_runs_and_the_model_is_told_why() -> None:
    jobs = Jobs()
    reg = jobs.registry()
    result = await reg.call(READER, call("delete_job", {"job_id": 1}), CALLER)
    assert result.status == "refused"
    assert result.text == "tool 'delete_job' is not available to agent 'reader'; available: list_jobs, show_job"
    assert jobs.runs.get("delete_job", 0) == 0


async def test_unknown_tool_lists_what_is_available() -> None:
    result = await Jobs().registry().call(READER, call("grep", {"pattern": "x"}), CALLER)
    assert result.status == "error"
    assert result.text == "there is no tool named 'grep'; available: list_jobs, show_job"


async def test_invalid_arguments_name_the_field_and_what_was_expected() -> None:
    jobs = Jobs()
    reg = jobs.registry()
    bad_type = await reg.call(READER, call("show_job", {"job_id": "seven"}), CALLER)
    assert bad_type.status == "error"
    assert "job_id: expected integer, got 'seven'" in bad_type.text
    missing = await reg.call(READER, call("show_job", {}), CALLER)
    assert "job_id: required (expected integer), but missing" in missing.text
    assert "show_job takes: job_id (integer, required), verbose (boolean)" in missing.text
    extra = await reg.call(READER, call("list_jobs", {"state": "open"}), CALLER)
    assert "state: not a parameter of this tool" in extra.text
    enum = await reg.call(READER, call("list_jobs", {"status": "closed"}), CALLER)
    assert 'status: expected one of "open", "done", got \'closed\'' in enum.text
    assert jobs.runs == {}


async def test_malformed_json_is_not_run_and_is_shown_back() -> None:
    jobs = Jobs()
    bad = call("show_job", malformed="arguments are not valid JSON: Expecting ',' delimiter", raw_args='{"job_id": 3')
    result = await jobs.registry().call(READER, bad, CALLER)
    assert result.status == "error" and jobs.runs == {}
    assert "was not run: arguments are not valid JSON" in result.text and '{"job_id": 3' in result.text


async def test_a_handler_that_raises_comes_back_as_text() -> None:
    reg = Registry()

    def boom(n: int) -> str:
        raise KeyError(f"job {n} not found")

    def polite(n: int) -> str:
        raise TomoError("no such job", hint="list the jobs first")

    reg.register(boom)
    reg.register(polite)
    agent = Agent("a", tools=("boom", "polite"))
    result = await reg.call(agent, call("boom", {"n": 7}), CALLER)
    assert result.status == "error" and result.text == "tool 'boom' failed: KeyError: 'job 7 not found'"
    polite_result = await reg.call(agent, call("polite", {"n": 7}), CALLER)
    assert polite_result.text == "tool 'polite' failed: no such job (hint: list the jobs first)"


async def test_a_handler_that_calls_sys_exit_is_an_error_not_the_end_of_tomo() -> None:
    """A tool wrapping a command-line main (argparse exits on bad options) raises SystemExit, which is not an
    Exception: it must come back to the model as a failure, not end the whole run."""
    import argparse

    reg = Registry()

    def cli(flag: str) -> str:
        parser = argparse.ArgumentParser(prog="lint", exit_on_error=False)
        parser.add_argument("--level", type=int)
        parser.parse_args([flag, "high"])
        return "linted"

    reg.register(cli)
    result = await reg.call(Agent("a", tools=("cli",)), call("cli", {"flag": "--bogus"}), CALLER)
    assert result.status == "error"
    assert result.text.startswith("tool 'cli' failed: it called sys.exit(2)")


def test_capped_list_says_how_much_was_shown_in_words() -> None:
    refs = [f"src/mod_{i}.py:{i}: use_it()" for i in range(1234)]
    result = render_result("references", refs, cap=1000, unit="references")
    assert result.capped and result.total == 1234 and 0 < result.shown < 1234
    note = f"showing {result.shown:,} of 1,234 references; ask for a narrower query to see the rest."
    assert result.text.startswith(f"[{note}]") and result.text.endswith(f"[{note}]")
    assert len(result.text) < 1000 + 2 * len(note) + 10
    body = result.text.splitlines()[1:-1]
    assert body == refs[: result.shown]


def test_capped_text_is_cut_at_a_line_and_counted_in_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(3000))
    result = render_result("read", text, cap=500)
    assert result.capped and result.unit == "lines" and result.total == 3000
    first = result.text.splitlines()[0]
    assert first.startswith(f"[showing the first {result.shown:,} of 3,000 lines (")
    assert result.text.splitlines()[1:result.shown + 1] == text.splitlines()[: result.shown]
    one_line = render_result("blob", "x" * 10_000, cap=300)
    assert one_line.unit == "characters" and "showing the first 300 of 10,000 characters" in one_line.text


@pytest.mark.parametrize("value", [[], "", "  \n", None, {}, ()])
def test_an_empty_result_says_it_is_empty(value: Any) -> None:
    result = render_result("list_jobs", value, unit="jobs")
    assert result.ok and result.text.startswith("empty result: list_jobs returned no ")


def test_a_generator_is_a_list_and_bytes_are_text() -> None:
    """A tool that yields its hits is counted and capped like one that returns a list, not shown as
    '<generator object ...>'; bytes read from a file are its text, not "b'...'"."""
    result = render_result("refs", (f"ref {i}" for i in range(500)), cap=200, unit="references")
    assert result.capped and result.total == 500 and "of 500 references" in result.text
    assert render_result("refs", iter([])).text == "empty result: refs returned no items."
    assert render_result("cat", "naïve\n".encode()).text == "naïve\n"


async def test_an_async_generator_tool_yields_its_result() -> None:
    reg = Registry()

    async def hits(n: int) -> AsyncIterator[str]:
        """Find hits."""
        for i in range(n):
            await asyncio.sleep(0)
            yield f"hit {i}"

    reg.register(hits, unit="hits")
    result = await reg.call(Agent("a", tools=("hits",)), call("hits", {"n": 3}), CALLER)
    assert result.ok and result.text == "hit 0\nhit 1\nhit 2" and result.value == ["hit 0", "hit 1", "hit 2"]


def test_structured_results_are_json_per_item() -> None:
    class Ref(BaseModel):
        path: str
        line: int

    @dataclass
    class Hit:
        path: str

    result = render_result("refs", [Ref(path="a.py", line=3), Hit("b.py"), {"k": 1}])
    assert result.text.splitlines() == ['{"path":"a.py","line":3}', '{"path": "b.py"}', '{"k": 1}']


async def test_per_tool_cap_applies_in_the_registry() -> None:
    reg = Registry()

    def many(n: int) -> list[int]:
        return list(range(n))

    reg.register(many, cap=200, unit="numbers")
    result = await reg.call(Agent("a", tools=("many",)), call("many", {"n": 1000}), CALLER)
    assert result.capped and "of 1,000 numbers" in result.text
    assert result.value == list(range(1000))  # the harness keeps the whole value; only the model's text is cut


def test_bad_tool_definitions_fail_at_registration() -> None:
    reg = Registry()

    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def star(*args: int) -> int:
        return 0

    def ok(x: int) -> int:
        return x

    with pytest.raises(ToolDefinitionError, match="parameter 'x' of tool 'untyped' has no type annotation"):
        reg.register(untyped)
    with pytest.raises(ToolDefinitionError, match="named parameters only"):
        reg.register(star)
    with pytest.raises(ToolDefinitionError, match="not allowed"):
        reg.register(ok, name="has space")
    reg.register(ok)
    with pytest.raises(ToolDefinitionError, match="already registered"):
        reg.register(ok)

    def spoofable(job_id: int, tenant_id: int) -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match="would let the model choose the tenant") as info:
        reg.register(spoofable)
    assert "TenantId" in info.value.hint


def test_docstring_parser_reads_google_and_rest_styles() -> None:
    summary, args = parse_docstring(
        "Find references.\n\nLonger text.\n\nArgs:\n    symbol: dotted name\n        of the symbol.\n"
        "    limit (int): how many.\n\nReturns:\n    things"
    )
    assert summary == "Find references.\n\nLonger text."
    assert args == {"symbol": "dotted name of the symbol.", "limit": "how many."}
    summary, args = parse_docstring("Do it.\n\n:param str path: where\n:param n: count\n:returns: x")
    assert (summary, args) == ("Do it.", {"path": "where", "n": "count"})


# ---- property: thousands of random calls, nothing escapes, nothing forbidden runs ---------------------------------

NAMES = st.sampled_from(["list_jobs", "show_job", "delete_job", "grep", "", "show_job ", "LIST_JOBS"])
JSONISH = (st.none() | st.booleans() | st.integers(-5, 2000) | st.floats(allow_nan=True) | st.text(max_size=6)
           | st.lists(st.integers(), max_size=2) | st.fixed_dictionaries({"tenant": st.integers(900, 1200)}))
OPTIONAL = {
    "job_id": st.integers(0, 99) | JSONISH,
    "status": st.sampled_from(["open", "done", "closed"]),
    "verbose": st.booleans() | JSONISH,
    "tenant_id": st.sampled_from([916, 1147, 1000]),
    "tenant": st.sampled_from([916, 1147, 1000]),
    "caller": JSONISH,
}
ARGS = (st.fixed_dictionaries({}, optional=OPTIONAL)
        | st.fixed_dictionaries({}, optional={k: OPTIONAL[k] for k in ("job_id", "tenant_id", "status")})
        | st.dictionaries(st.text(max_size=6), JSONISH, max_size=3))
CALLS = st.builds(
    lambda name, args, broken: ToolCall("c", name, args, malformed="bad JSON" if broken else None,
                                        raw_args="{" if broken else None),
    NAMES, ARGS, st.booleans(),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CALLS, min_size=30, max_size=80))
def test_random_calls_never_escape_and_never_run_a_forbidden_handler(calls: list[ToolCall]) -> None:
    jobs = Jobs()
    reg = jobs.registry()

    async def go() -> None:
        for c in calls:
            result = await reg.call(READER, c, CALLER)
            assert result.status in ("ok", "refused", "error") and result.text
            if result.ok and isinstance(result.value, dict):
                assert result.value["tenant"] == 1147
            if result.ok and isinstance(result.value, list):
                assert all("tenant 1147" in row for row in result.value)

    asyncio.run(go())
    assert jobs.runs.get("delete_job", 0) == 0


async def test_a_slow_sync_tool_can_run_off_the_event_loop_thread() -> None:
    import threading

    reg = Registry()
    seen: list[str] = []

    def where() -> str:
        """Name the thread."""
        seen.append(threading.current_thread().name)
        return "ok"

    reg.register(where, thread=True)
    reg.register(where, name="inline")
    agent = Agent("a", tools=("where", "inline"))
    await reg.call(agent, call("where"), CALLER)
    await reg.call(agent, call("inline"), CALLER)
    assert seen[0] != threading.current_thread().name and seen[1] == threading.current_thread().name


async def test_a_result_that_cannot_be_shown_is_an_error_not_an_exception() -> None:
    class Opaque:
        def __str__(self) -> str:
            raise RuntimeError("no text for you")

    reg = Registry()

    def odd() -> Any:
        """Return something unprintable."""
        return Opaque()

    reg.register(odd)
    result = await reg.call(Agent("a", tools=("odd",)), call("odd"), CALLER)
    assert result.status == "error" and result.text == (
        "tool 'odd' ran but its result could not be shown: RuntimeError: no text for you")


class Span(BaseModel):
    path: str
    line: int


async def test_a_missing_nested_field_is_not_described_with_its_parents_type() -> None:
    reg = Registry()

    def show(span: Span) -> str:
        """Show a span."""
        return span.path

    reg.register(show)
    result = await reg.call(Agent("a", tools=("show",)), call("show", {"span": {"path": "a.py"}}), CALLER)
    assert result.status == "error" and "span.line: required, but missing" in result.text


async def test_parameters_named_like_pydantic_attributes_register_quietly_and_work() -> None:
    """`json`, `copy`, `model_name` are ordinary names for a tool's parameters; registering must neither fail nor
    print pydantic's warnings into the user's terminal."""
    import warnings

    reg = Registry()

    def convert(json: str, model_name: str, copy: int = 0) -> str:
        """Convert."""
        return f"{json}|{model_name}|{copy}"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg.register(convert)
    result = await reg.call(Agent("a", tools=("convert",)), call("convert", {"json": "j", "model_name": "m"}),
                            CALLER)
    assert result.text == "j|m|0"
