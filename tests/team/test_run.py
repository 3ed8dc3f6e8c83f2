"""The local backend on real SQLite with scripted models: parallel stages, merge, budget, resume, roles, keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_support import Recorder, make_team, reply, script

from tomo.agents import Agent
from tomo.config import Settings
from tomo.errors import ConfigError
from tomo.events import JobDone, ListSink, StageDone, WorkerDone, WorkerStarted
from tomo.loop import Limits
from tomo.models.messages import ToolCall
from tomo.team import (
    ModelChooser,
    Stage,
    StageResult,
    TaskGraph,
    Team,
    TeamError,
    TeamSettings,
    Worker,
    idempotency_key,
    parse_roles,
    parse_stages,
)
from tomo.team.graph import WorkerOutput, merge_under_headers
from tomo.tools import Registry

STAGES = "plan:planner | build:implementer,tester | review:reviewer"


def _roles(tmp_path: Path, delay: float = 0.0) -> dict[str, str]:
    return {
        "planner": script(tmp_path, "planner", reply("1. add the flag\n2. test it")),
        "implementer": script(tmp_path, "implementer", reply("diff: +--json", delay=delay)),
        "tester": script(tmp_path, "tester", reply("test_json passes", delay=delay)),
        "reviewer": script(tmp_path, "reviewer", reply("APPROVE")),
    }


async def test_a_job_runs_its_stages_in_order_and_merges_under_role_headers(tmp_path: Path) -> None:
    recorder = Recorder()
    roles = _roles(tmp_path)
    sink = ListSink()
    team = make_team(tmp_path, roles, primary=roles["planner"], recorder=recorder, sink=sink)
    seen: list[StageResult] = []
    result = await team.run(TaskGraph("j1", parse_stages(STAGES)), "add a --json flag", seen.append)
    assert result.status == "complete" and result.output == "## reviewer\n\nAPPROVE"
    assert [s.name for s in seen] == ["plan", "build", "review"]
    assert seen[1].output == "## implementer\n\ndiff: +--json\n\n## tester\n\ntest_json passes"
    # the reviewer was sent the request and the build stage's merged output
    (to_reviewer,) = recorder.sent_to(roles["reviewer"])
    assert "add a --json flag" in to_reviewer and seen[1].output in to_reviewer
    (to_implementer,) = recorder.sent_to(roles["implementer"])
    assert "1. add the flag" in to_implementer
    record = result.record
    assert [s.status for s in record.stages] == ["complete"] * 3
    assert (record.input_tokens, record.output_tokens) == (40, 20)  # four workers at 10+5
    assert [e.stage for e in sink.of(StageDone)] == ["plan", "build", "review"]
    assert sink.of(JobDone)[-1].status == "complete"


async def test_the_workers_of_a_stage_overlap_in_time(tmp_path: Path) -> None:
    roles = _roles(tmp_path, delay=0.4)
    team = make_team(tmp_path, roles, primary=roles["planner"])
    result = await team.run(TaskGraph("j1", parse_stages("build:implementer,tester")), "go")
    a, b = result.record.stages[0].workers
    assert a.started_at and a.ended_at and b.started_at and b.ended_at
    assert b.started_at < a.ended_at and a.started_at < b.ended_at  # the two intervals overlap


def test_merge_numbers_a_role_that_appears_twice() -> None:
    merged = merge_under_headers([WorkerOutput(0, "implementer", "a "), WorkerOutput(1, "implementer", "b"),
                                  WorkerOutput(2, "tester", "t")])
    assert merged == "## implementer 1\n\na\n\n## implementer 2\n\nb\n\n## tester\n\nt"


async def test_a_custom_merge_feeds_the_next_stage(tmp_path: Path) -> None:
    recorder = Recorder()
    roles = _roles(tmp_path)
    team = make_team(tmp_path, roles, primary=roles["planner"], recorder=recorder)

    def shortest(outputs: object) -> str:
        return min((o.output for o in outputs), key=len)  # type: ignore[attr-defined]

    graph = TaskGraph("j1", (Stage("build", (Worker("implementer"), Worker("tester")), shortest),
                             Stage("review", (Worker("reviewer"),))))
    result = await team.run(graph, "go")
    assert result.record.stages[0].output == "diff: +--json"
    assert "diff: +--json" in recorder.sent_to(roles["reviewer"])[0]
    assert "test_json passes" not in recorder.sent_to(roles["reviewer"])[0]


async def test_the_budget_stops_the_job_before_the_next_worker_and_keeps_what_finished(tmp_path: Path) -> None:
    recorder = Recorder()
    roles = {
        "planner": script(tmp_path, "planner", reply("plan", tokens=(60, 40))),
        "implementer": script(tmp_path, "implementer", reply("code", tokens=(60, 40))),
        "tester": script(tmp_path, "tester", reply("tests", tokens=(60, 40))),
        "reviewer": script(tmp_path, "reviewer", reply("APPROVE", tokens=(60, 40))),
    }
    sink = ListSink()
    team = make_team(tmp_path, roles, primary=roles["planner"], recorder=recorder, sink=sink)
    result = await team.run(TaskGraph("j1", parse_stages("plan:planner | build:implementer | review:reviewer"),
                                      budget=150), "go")
    assert result.status == "incomplete"
    assert "token budget (150)" in result.reason and "'review'" in result.reason and "--budget" in result.reason
    stages = result.record.stages
    assert [s.status for s in stages] == ["complete", "complete", "incomplete"]
    assert stages[2].workers[0].status == "skipped" and "not started" in (stages[2].workers[0].error or "")
    assert recorder.calls(roles["reviewer"]) == 0
    assert result.record.total_tokens == 200
    assert [e.status for e in sink.of(WorkerDone)] == ["complete", "complete", "skipped"]
    # resuming with a larger budget finishes the job without calling the finished workers again
    again = await team.resume("j1", budget=1000)
    assert again.status == "complete" and again.output == "## reviewer\n\nAPPROVE"
    assert [recorder.calls(roles[r]) for r in ("planner", "implementer", "reviewer")] == [1, 1, 1]
    assert again.record.budget == 1000


async def test_a_worker_stopped_mid_run_by_the_budget_leaves_the_job_incomplete(tmp_path: Path) -> None:
    registry = Registry()

    @registry.tool()
    def look(topic: str) -> str:
        """Look something up."""
        return f"notes on {topic}"

    agent = Agent("digger", "fast", "dig", ("look",), limits=Limits(max_steps=10))
    call = {"content": "", "tool_calls": [{"name": "look", "args": {"topic": "x"}}],
            "usage": {"input_tokens": 50, "output_tokens": 10}}
    spec = script(tmp_path, "digger", call, call, call, reply("done"))
    team = make_team(tmp_path, {"digger": spec}, primary=spec, registry=registry, agents={"digger": agent})
    result = await team.run(TaskGraph("j1", parse_stages("dig:@digger"), budget=100), "go")
    assert result.status == "incomplete"
    worker = result.record.stages[0].workers[0]
    assert worker.status == "failed" and "token budget" in (worker.error or "")
    assert worker.input_tokens + worker.output_tokens == 120  # two calls ran, the loop refused the third


async def test_a_worker_whose_model_fails_mid_run_keeps_its_usage(tmp_path: Path) -> None:
    registry = Registry()

    @registry.tool()
    def look(topic: str) -> str:
        """Look something up."""
        return f"notes on {topic}"

    agent = Agent("digger", "fast", "dig", ("look",))
    call = {"content": "", "tool_calls": [{"name": "look", "args": {"topic": "x"}}],
            "usage": {"input_tokens": 50, "output_tokens": 10}}
    spec = script(tmp_path, "digger", call)  # one reply, then the model fails (its script is exhausted)
    team = make_team(tmp_path, {}, primary=spec, registry=registry, agents={"digger": agent})
    result = await team.run(TaskGraph("j1", parse_stages("dig:@digger")), "go")
    assert result.status == "failed" and "no reply left" in result.reason
    worker = result.record.stages[0].workers[0]
    assert (worker.status, worker.input_tokens, worker.output_tokens) == ("failed", 50, 10)
    assert result.record.total_tokens == 60


async def test_a_failed_worker_fails_the_job_and_resume_reruns_only_it(tmp_path: Path) -> None:
    recorder = Recorder()
    roles = _roles(tmp_path)
    roles["tester"] = script(tmp_path, "tester", )  # an empty script: the tester's model has no reply
    team = make_team(tmp_path, roles, primary=roles["planner"], recorder=recorder)
    result = await team.run(TaskGraph("j1", parse_stages(STAGES)), "go")
    assert result.status == "failed"
    assert "'build'" in result.reason and "tester" in result.reason and "no reply left" in result.reason
    build = result.record.stages[1]
    assert [w.status for w in build.workers] == ["complete", "failed"] and build.status == "failed"
    assert result.record.stages[2].workers[0].status == "pending"
    script(tmp_path, "tester", reply("fixed tests"))  # the cause is fixed
    again = await team.resume("j1")
    assert again.status == "complete"
    assert [recorder.calls(roles[r]) for r in ("planner", "implementer", "reviewer")] == [1, 1, 1]
    assert recorder.calls(roles["tester"]) == 1  # the failed attempt made no call: its script was empty
    assert "fixed tests" in (again.record.stages[1].output or "")


async def test_resume_of_a_complete_job_is_a_noop_and_an_unknown_id_is_an_error(tmp_path: Path) -> None:
    recorder = Recorder()
    roles = _roles(tmp_path)
    team = make_team(tmp_path, roles, primary=roles["planner"], recorder=recorder)
    await team.run(TaskGraph("j1", parse_stages(STAGES)), "go")
    calls = len(recorder.models)
    again = await team.resume("j1")
    assert again.noop and again.status == "complete" and "already complete" in again.message
    assert len(recorder.models) == calls
    with pytest.raises(TeamError, match="no job with id 'nope'") as caught:
        await team.resume("nope")
    assert "j1" in caught.value.hint
    with pytest.raises(TeamError, match="already exists"):
        await team.run(TaskGraph("j1", parse_stages(STAGES)), "go")


async def test_a_store_shared_by_two_workspaces_keeps_each_job_to_its_own(tmp_path: Path) -> None:
    """One TOMO_DB for two projects: a job id taken in one is refused in the other with the other's path, and a job
    is never resumed from the other workspace, whose files its workers would change for the first one's request."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    recorder = Recorder()
    roles = _roles(tmp_path)
    team = make_team(tmp_path, roles, primary=roles["planner"], recorder=recorder)
    team.create(TaskGraph("j1", parse_stages(STAGES)), "go")  # started here (tmp_path), not run yet
    before = team.store.get_job("j1")
    other = Team(team.store, team.chooser, workspace=second)
    with pytest.raises(TeamError, match=f"already exists in this store, started in {tmp_path}") as taken:
        await other.run(TaskGraph("j1", parse_stages(STAGES)), "go there")
    assert taken.value.hint == "choose another --job-id"
    with pytest.raises(TeamError, match=f"job 'j1' was started in {tmp_path}, not in {second}") as foreign:
        await other.resume("j1", budget=5)
    assert foreign.value.hint == f"resume it there: tomo team resume j1 --workspace {tmp_path}"
    assert team.store.get_job("j1") == before  # nothing was written: no budget, no status
    assert recorder.models == []
    assert (await team.resume("j1")).status == "complete"  # from its own workspace it runs


def test_roles_resolve_through_tiers_and_fall_back_to_the_primary(tmp_path: Path) -> None:
    fast = script(tmp_path, "fast", reply("x"))
    deep = script(tmp_path, "deep", reply("x"))
    primary = script(tmp_path, "primary", reply("x"))
    settings = Settings(tiers={"fast": fast, "deep": deep})
    team = TeamSettings.from_settings(Settings.model_validate({"team": {"roles": {"tester": {"model": "deep"}}}}))
    chooser = ModelChooser(settings, primary=primary, roles={"planner": "fast", "reviewer": "claude:claude-x"},
                           team=team)
    assert chooser.spec_for("planner") == (fast, "roles map: planner=fast")
    assert chooser.spec_for("tester")[0] == deep  # from [team.roles.tester] model
    assert chooser.spec_for("reviewer")[0] == "claude:claude-x"
    spec, why = chooser.spec_for("implementer")
    assert spec == primary and "primary" in why
    assert chooser.spec_for("planner", "deep")[0] == deep  # the worker's own model wins
    # a tier tomo.toml does not map comes from the primary's provider table (an Anthropic primary -> its fast tier)
    chooser = ModelChooser(Settings(), primary="claude:claude-sonnet-4-5", roles={"planner": "fast"})
    assert chooser.spec_for("planner")[0] == "claude:claude-haiku-4-5"
    with pytest.raises(ConfigError, match="names no model"):
        ModelChooser(Settings(), primary=primary, roles={"planner": "openai:"}).spec_for("planner")


async def test_a_bad_role_model_is_refused_before_the_job_is_written(tmp_path: Path) -> None:
    roles = _roles(tmp_path)
    roles["tester"] = "claude:"
    team = make_team(tmp_path, roles, primary=roles["planner"])
    with pytest.raises(ConfigError, match="names no model"):
        await team.run(TaskGraph("j1", parse_stages(STAGES)), "go")
    assert team.store.get_job("j1") is None


async def test_tools_of_an_agent_worker_see_its_idempotency_key(tmp_path: Path) -> None:
    registry = Registry()
    seen: list[str | None] = []

    @registry.tool()
    def open_ticket(title: str) -> str:
        """Open a ticket (a side effect a repeat must detect)."""
        seen.append(idempotency_key())
        return "ticket 7"

    agent = Agent("filer", "fast", "file tickets", ("open_ticket",))
    spec = script(tmp_path, "filer", {"content": "", "tool_calls": [{"name": "open_ticket", "args": {"title": "t"}}]},
                  reply("filed"))
    sink = ListSink()
    team = make_team(tmp_path, {}, primary=spec, registry=registry, agents={"filer": agent}, sink=sink)
    result = await team.run(TaskGraph("job-7", parse_stages("plan:planner | file:@filer")), "go")
    assert result.status == "complete"
    assert seen == ["job-7/1/0"]
    assert idempotency_key() is None  # outside a worker there is none
    assert [e.attempt for e in sink.of(WorkerStarted)] == [1, 1]
    assert ToolCall  # the scripted call above goes through the real registry


async def test_an_unknown_agent_is_refused_before_the_job_is_written(tmp_path: Path) -> None:
    spec = script(tmp_path, "x", reply("x"))
    team = make_team(tmp_path, {}, primary=spec)
    with pytest.raises(TeamError, match="agent 'ghost'"):
        await team.run(TaskGraph("j1", parse_stages("a:@ghost")), "go")
    assert team.store.get_job("j1") is None


@pytest.mark.parametrize(("text", "words"), [
    ("plan", "not NAME:ROLE"),
    ("plan: | b:x", "not NAME:ROLE"),
    ("pl an:planner", "stage name"),
    ("a:impl*0", "1 to 32"),
    ("a:x | a:y", "used twice"),
    ("a:@", "not a name"),
])
def test_bad_stages_are_clear_errors(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        TaskGraph("j", parse_stages(text))


def test_roles_text_is_role_equals_tier_or_spec() -> None:
    assert parse_roles("planner=fast, implementer=claude:claude-sonnet-4-5,") == {
        "planner": "fast", "implementer": "claude:claude-sonnet-4-5"}
    with pytest.raises(ConfigError, match="ROLE=TIER_OR_SPEC"):
        parse_roles("planner")


def test_stage_text_parses_counts_and_agents() -> None:
    stages = parse_stages(" plan:planner | build: implementer*2 , @qa ")
    assert [(w.role, w.agent) for w in stages[1].workers] == [("implementer", None), ("implementer", None),
                                                              ("qa", "qa")]
    graph = TaskGraph("j", stages, 10)
    assert TaskGraph.from_dict("j", graph.to_dict()) == graph
