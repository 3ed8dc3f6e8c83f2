"""Specs, tiers, detection and `tomo models`, with loopback servers standing in for Ollama and Anthropic."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loopback import Canned, LoopbackServer, anthropic_body

from tomo.config import ProviderSettings, Settings
from tomo.errors import ConfigError, ModelAuthError, ModelUnavailable
from tomo.models import Message, Model
from tomo.models.anthropic import AnthropicModel
from tomo.models.gateway import (
    BLESSED_OLLAMA,
    TIER_DEFAULTS,
    detect,
    detect_default_model,
    model_for_tier,
    model_from_spec,
    pick_blessed,
    probe_providers,
    split_spec,
    tier_table,
)
from tomo.models.ollama import OllamaModel
from tomo.models.openai import OpenAIModel
from tomo.models.scripted import ScriptedModel

NO_OLLAMA = {"OLLAMA_HOST": "127.0.0.1:9"}  # the discard port: nothing answers there


def tags(*names: str) -> Canned:
    return Canned(body={"models": [{"name": n, "model": n, "size": 1} for n in names]})


@pytest.mark.parametrize(("spec", "expected"), [
    ("ollama:qwen2.5-coder:7b", ("ollama", "qwen2.5-coder:7b")),
    ("qwen2.5-coder:7b", ("ollama", "qwen2.5-coder:7b")),
    ("llama3", ("ollama", "llama3")),
    ("claude:claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
    ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
    ("openai:gpt-4.1", ("openai", "gpt-4.1")),
    ("openai-compat:http://localhost:8000/v1#qwen", ("openai-compat", "http://localhost:8000/v1#qwen")),
    ("scripted:run.json", ("scripted", "run.json")),
])
def test_split_spec(spec: str, expected: tuple[str, str]) -> None:
    assert split_spec(spec) == expected


@pytest.mark.parametrize("spec", ["", "  ", "claude:", "openai: "])
def test_bad_specs_say_what_to_write(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        split_spec(spec)
    assert "write" in info.value.hint


def test_model_from_spec_builds_each_adapter_with_the_right_url(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "OLLAMA_HOST": "0.0.0.0:1234",
           "OPENAI_BASE_URL": "http://127.0.0.1:7/v1"}
    m = model_from_spec("qwen2.5-coder:7b", env=env)
    assert isinstance(m, OllamaModel) and m.endpoint.base_url == "http://127.0.0.1:1234"
    assert m.model == "qwen2.5-coder:7b"
    m = model_from_spec("claude:claude-haiku-4-5", env=env)
    assert isinstance(m, AnthropicModel) and m.endpoint.base_url == "https://api.anthropic.com"
    assert m.headers["x-api-key"] == "a"
    m = model_from_spec("openai:gpt-4.1", env=env)
    assert isinstance(m, OpenAIModel) and m.endpoint.base_url == "http://127.0.0.1:7/v1"
    assert m.max_tokens_field == "max_completion_tokens"
    m = model_from_spec("openai-compat:http://127.0.0.1:8000/v1#org/model:q4", env={})
    assert isinstance(m, OpenAIModel) and (m.endpoint.base_url, m.model) == ("http://127.0.0.1:8000/v1", "org/model:q4")
    assert m.max_tokens_field == "max_tokens" and "Authorization" not in m.headers
    script = tmp_path / "s.json"
    script.write_text('{"replies": [{"content": "hi"}]}')
    assert isinstance(model_from_spec(f"scripted:{script}"), ScriptedModel)
    for spec in ("ollama:q", "claude:c", "openai:o", "openai-compat:http://h/v1#m"):
        assert isinstance(model_from_spec(spec, env=env), Model)  # every adapter satisfies the one protocol


def test_tomo_toml_providers_win_over_the_environment() -> None:
    settings = Settings(providers={"ollama": ProviderSettings(base_url="http://10.1.1.1:11434", num_ctx=32768,
                                                              timeout_s=9, max_retries=5),
                                   "openai-compat": ProviderSettings(api_key_env="OPENROUTER_API_KEY")})
    m = model_from_spec("ollama:q", settings, env={"OLLAMA_HOST": "elsewhere"})
    assert isinstance(m, OllamaModel)
    assert (m.endpoint.base_url, m.num_ctx, m.timeout_s, m.retry.max_retries) == ("http://10.1.1.1:11434", 32768, 9, 5)
    m = model_from_spec("openai-compat:https://openrouter.ai/api/v1#mistralai/mistral-small", settings,
                        env={"OPENROUTER_API_KEY": "or-1"})
    assert isinstance(m, OpenAIModel) and m.headers["Authorization"] == "Bearer or-1"


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY is not set") as info:
        model_from_spec("claude:claude-haiku-4-5", env={})
    assert "export ANTHROPIC_API_KEY" in info.value.hint
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY"):
        model_from_spec("openai:gpt-4.1", env={})
    with pytest.raises(ConfigError, match="needs a base URL and a model name"):
        model_from_spec("openai-compat:qwen", env={})


async def test_a_spec_reaches_its_server_over_http() -> None:
    with LoopbackServer() as server:
        server.push(Canned(body=anthropic_body("hello from loopback")))
        model = model_from_spec("claude:claude-test", env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url})
        reply = await model.chat([Message.user("hi")])
        assert reply.text == "hello from loopback" and server.requests[0].path == "/v1/messages"


def test_pick_blessed_prefers_the_list_order_and_matches_untagged_entries() -> None:
    assert pick_blessed(["llama3.1:8b", "qwen3:8b", "phi3:mini"]) == "qwen3:8b"
    assert pick_blessed(["mistral-nemo:latest", "phi3:mini"]) == "mistral-nemo:latest"
    assert pick_blessed(["phi3:mini", "qwen2.5-coder:1.5b"]) is None
    assert all(len(why) > 20 for _, why in BLESSED_OLLAMA)  # every entry says why it is there


def test_detect_prefers_an_installed_blessed_ollama_model() -> None:
    with LoopbackServer() as server:
        server.routes["/api/tags"] = tags("phi3:mini", "llama3.1:8b", "qwen2.5-coder:7b")
        found = detect(env={"OLLAMA_HOST": server.url, "ANTHROPIC_API_KEY": "k"})
    assert found.spec == "ollama:qwen2.5-coder:7b" and "installed in Ollama" in found.reason


def test_detect_falls_back_to_anthropic_then_openai_then_explains() -> None:
    assert detect_default_model(env={**NO_OLLAMA, "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}) == \
        TIER_DEFAULTS["anthropic"]["fast"]
    assert detect_default_model(env={**NO_OLLAMA, "OPENAI_API_KEY": "o"}) == TIER_DEFAULTS["openai"]["fast"]
    with pytest.raises(ModelUnavailable, match=r"Ollama does not answer at http://127\.0\.0\.1:9") as info:
        detect_default_model(env=NO_OLLAMA)
    assert "ollama pull" in info.value.hint and "ANTHROPIC_API_KEY" in info.value.hint


def test_detect_with_only_unblessed_models_says_so() -> None:
    with LoopbackServer() as server:
        server.routes["/api/tags"] = tags("phi3:mini")
        with pytest.raises(ModelUnavailable, match=r"phi3:mini\), but none tomo trusts") as info:
            detect(env={"OLLAMA_HOST": server.url})
    assert "--model ollama:NAME" in info.value.hint


def test_configured_model_wins_over_detection() -> None:
    found = detect(Settings(model="openai:gpt-4.1"), env=NO_OLLAMA)
    assert found.spec == "openai:gpt-4.1" and "tomo.toml" in found.reason


def test_tiers_come_from_tomo_toml_else_the_providers_defaults() -> None:
    settings = Settings(model="claude:claude-sonnet-4-5", tiers={"deep": "openai:gpt-5"})
    table = tier_table(settings, env=NO_OLLAMA)
    assert table == {"fast": ("claude:claude-haiku-4-5", "default"),
                     "balanced": ("claude:claude-sonnet-4-5", "default"),
                     "deep": ("openai:gpt-5", "tomo.toml [tiers]")}
    local = tier_table(Settings(model="ollama:qwen3:8b"), env=NO_OLLAMA)
    assert {spec for spec, _ in local.values()} == {"ollama:qwen3:8b"}
    with pytest.raises(ConfigError, match="unknown tier"):
        tier_table(Settings(tiers={"huge": "x"}))
    model = model_for_tier("deep", settings, env={"OPENAI_API_KEY": "o"})
    assert isinstance(model, OpenAIModel) and model.model == "gpt-5"
    with pytest.raises(ConfigError, match="unknown tier 'smart'"):
        model_for_tier("smart", settings)


async def test_probe_reports_who_answers() -> None:
    with LoopbackServer() as ollama, LoopbackServer() as anthropic:
        ollama.routes["/api/tags"] = tags("qwen3:8b", "phi3:mini")
        anthropic.routes["/v1/models"] = Canned(401, {"error": {"message": "bad key"}})
        env = {"OLLAMA_HOST": ollama.url, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": anthropic.url}
        statuses = {s.provider: s for s in await probe_providers(env=env, timeout_s=1)}
    assert statuses["ollama"].ok and statuses["ollama"].detail == "2 model(s) available"
    assert not statuses["anthropic"].ok and "rejects the key (401)" in statuses["anthropic"].detail
    assert statuses["openai"].detail == "not probed: OPENAI_API_KEY is not set"


def test_tomo_models_json_and_table(run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    with LoopbackServer() as ollama:
        ollama.routes["/api/tags"] = tags("qwen2.5-coder:7b")
        env = {"OLLAMA_HOST": ollama.url, "XDG_CONFIG_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "",
               "OPENAI_API_KEY": "", "TOMO_MODEL": ""}
        result = run_tomo("models", "--json", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["default"]["spec"] == "ollama:qwen2.5-coder:7b"
        assert report["tiers"]["deep"] == {"spec": "ollama:qwen2.5-coder:7b", "from": "default"}
        assert [(p["provider"], p["ok"]) for p in report["providers"]] == [
            ("ollama", True), ("anthropic", False), ("openai", False)]
        (tmp_path / "tomo.toml").write_text('[tiers]\ndeep = "openai:gpt-5"\n')
        text = run_tomo("models", cwd=tmp_path, env=env)
    assert text.returncode == 0 and "default model  ollama:qwen2.5-coder:7b" in text.stdout
    assert "1 model(s) available" in text.stdout
    assert "openai:gpt-5" in text.stdout and "tomo.toml [tiers]" in text.stdout  # brackets are not rich markup


def test_tomo_models_without_any_model_explains_how_to_connect(run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    env = {**NO_OLLAMA, "XDG_CONFIG_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "",
           "TOMO_MODEL": ""}
    result = run_tomo("models", "--json", "--timeout", "0.5", cwd=tmp_path, env=env)
    report = json.loads(result.stdout)
    assert report["default"]["spec"] is None and "ollama pull" in report["default"]["hint"]
    assert report["tiers"] == {}

    (tmp_path / "tomo.toml").write_text('[tiers]\ndeep = "openai:gpt-5"\n')  # the tiers set are shown regardless
    report = json.loads(run_tomo("models", "--json", "--timeout", "0.5", cwd=tmp_path, env=env).stdout)
    assert report["tiers"] == {"deep": {"spec": "openai:gpt-5", "from": "tomo.toml [tiers]"}}

