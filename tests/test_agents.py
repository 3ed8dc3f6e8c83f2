"""Agents are configuration: loaded from tomo.toml, checked against the registry at load time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomo.agents import Agent, load_agents
from tomo.config import load_settings
from tomo.errors import ConfigError
from tomo.loop import Limits, run
from tomo.models.scripted import ScriptedModel
from tomo.tools import Caller, Registry


def make_registry() -> tuple[Registry, list[int]]:
    reg, deleted = Registry(), []

    def list_jobs() -> list[str]:
        """List jobs."""
        return ["a", "b"]

    def show_job(job_id: int) -> str:
        """Show a job."""
        return f"job {job_id}"

    def delete_job(job_id: int) -> str:
        """Delete a job."""
        deleted.append(job_id)
        return "deleted"

    for fn in (list_jobs, show_job, delete_job):
        reg.register(fn)
    return reg, deleted


def settings_from(tmp_path: Path, toml: str):  # type: ignore[no-untyped-def]
    (tmp_path / "tomo.toml").write_text(toml)
    return load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")


async def test_an_agent_defined_in_tomo_toml_runs_with_its_allow_list(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, """
[agents.reader]
tier = "fast"
prompt = "You read jobs; you never change them."
tools = ["list_jobs", "show_job"]
max_steps = 5

[agents.admin]
tools = ["list_jobs", "delete_job"]
force_tools = true
max_tokens_total = 9000
""")
    reg, deleted = make_registry()
    agents = load_agents(settings, reg)
    reader = agents["reader"]
    assert reader == Agent("reader", "fast", "You read jobs; you never change them.", ("list_jobs", "show_job"),
                           False, Limits(max_steps=5))
    assert agents["admin"].force_tools and agents["admin"].limits.max_tokens_total == 9000
    assert agents["admin"].limits.max_steps == Limits().max_steps
    model = ScriptedModel([{"tool_calls": [{"name": "delete_job", "args": {"job_id": 1}}]}, {"content": "no"}])
    out = await run(reader, model, reg, Caller("ann", 1147), "delete 1")
    assert deleted == [] and "not available to agent 'reader'" in out.messages[-2].content
    assert [s.name for s in model.sent_tools[0]] == ["list_jobs", "show_job"]


def test_an_unknown_tool_in_an_allow_list_is_a_config_error_at_load_time(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, '[agents.reader]\ntools = ["list_jobs", "show_jobs"]\n')
    with pytest.raises(ConfigError) as info:
        load_agents(settings, make_registry()[0])
    assert info.value.message == "agent 'reader' lists unknown tool 'show_jobs' in [agents.reader].tools"
    assert info.value.hint.startswith("did you mean 'show_job'? registered tools: delete_job, list_jobs, show_job")


def test_an_unknown_tier_is_a_config_error_unless_configured(tmp_path: Path) -> None:
    reg = make_registry()[0]
    with pytest.raises(ConfigError, match="tier 'huge', which is not defined"):
        load_agents(settings_from(tmp_path, '[agents.a]\ntier = "huge"\n'), reg)
    settings = settings_from(tmp_path, '[tiers]\nhuge = "ollama:big"\n[agents.a]\ntier = "huge"\n')
    assert load_agents(settings, reg)["a"].tier == "huge"


def test_a_tool_listed_twice_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="lists list_jobs more than once"):
        load_agents(settings_from(tmp_path, '[agents.a]\ntools = ["list_jobs", "list_jobs"]\n'),
                    make_registry()[0])


def test_limits_defaults_can_be_overridden_per_load() -> None:
    assert Limits().merge(max_steps=3, max_tool_calls=None) == Limits(max_steps=3)
    agent = Agent("x", tools=["a", "b"])  # type: ignore[arg-type]
    assert agent.tools == ("a", "b") and agent.allowed == frozenset({"a", "b"})


def test_every_limit_of_the_loop_can_be_set_per_agent(tmp_path: Path) -> None:
    toml = ("[agents.a]\ntools = [\"list_jobs\"]\nmax_steps = 7\nmax_tool_calls = 9\nmax_tokens_total = 5000\n"
            "max_malformed = 1\nmax_reply_tokens = 512\n")
    agent = load_agents(settings_from(tmp_path, toml), make_registry()[0])["a"]
    assert agent.limits == Limits(max_steps=7, max_tool_calls=9, max_tokens_total=5000, max_malformed=1,
                                  max_reply_tokens=512)
