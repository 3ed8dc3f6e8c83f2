"""Specs, tiers, detection and `tomo models`, with loopback servers standing in for Ollama and Anthropic."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loopback import Canned, LoopbackServer, anthropic_body

from tomo.config import ProviderSettings, Settings
from tomo.errors import ConfigError, ModelAuthError, ModelError, ModelUnavailable
from tomo.events import ListSink, Notice
from tomo.models import Message, Model
from tomo.models._http import LOCAL_TIMEOUT_S, RetryPolicy
from tomo.models.anthropic import AnthropicModel
from tomo.models.blessed import BLESSED_FILE, load_blessed
from tomo.models.gateway import (
    TIER_DEFAULTS,
    detect,
    detect_default_model,
    local_server_urls,
    model_for_tier,
    model_from_spec,
    pick_blessed,
    probe_providers,
    spec_note,
    split_spec,
    tier_table,
)
from tomo.models.ollama import OllamaModel
from tomo.models.openai import OpenAIModel
from tomo.models.scripted import ScriptedModel

# A measured list of the tests' own (tomo's shipped blessed.json changes whenever the lab measures again): ranked
# qwen2.5-coder-7b, mistral-nemo, qwen3-8b, qwen2.5-coder-1.5b; llama3.1-8b and smollm2-135m measured, not blessed.
BLESSED = str(Path(__file__).parent / "data" / "blessed.json")
# The discard port: nothing answers there; and no local server is looked for (the usual ports of a shared machine
# may hold anything).
NO_OLLAMA = {"OLLAMA_HOST": "127.0.0.1:9", "TOMO_LOCAL_SERVERS": "", "TOMO_BLESSED": BLESSED}


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


def test_a_model_is_named_by_a_spec_that_makes_it_again(tmp_path: Path) -> None:
    # Logs, transcripts and sessions show model.name: pasted back into --model it must reach the same model.
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    script = tmp_path / "s.json"
    script.write_text('{"replies": [{"content": "hi"}]}')
    for spec, name in (("openai-compat:http://127.0.0.1:8012/v1#qwen2.5-coder-1.5b", None), ("ollama:q", None),
                       ("qwen2.5-coder:7b", "ollama:qwen2.5-coder:7b"), ("claude:c", "anthropic:c"),
                       ("openai:gpt-4.1", None), (f"scripted:{script}", None)):
        model = model_from_spec(spec, env=env)
        assert model.name == (name or spec)
        again = model_from_spec(model.name, env=env)
        assert (type(again), getattr(again, "endpoint", None) and again.endpoint.base_url) == \
            (type(model), getattr(model, "endpoint", None) and model.endpoint.base_url)


def test_a_server_on_this_machine_gets_a_long_read_timeout_unless_one_is_set() -> None:
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    assert model_from_spec("openai-compat:http://127.0.0.1:8012/v1#qwen", env=env).timeout_s == LOCAL_TIMEOUT_S
    assert model_from_spec("ollama:q", env={"OLLAMA_HOST": "localhost"}).timeout_s == LOCAL_TIMEOUT_S
    assert model_from_spec("openai-compat:https://openrouter.ai/api/v1#m", env=env).timeout_s == 120
    assert model_from_spec("claude:c", env=env).timeout_s == 120
    assert model_from_spec("ollama:q", env={"OLLAMA_HOST": "http://gpu-box:11434"}).timeout_s == 300
    settings = Settings(providers={"openai-compat": ProviderSettings(timeout_s=30)})
    assert model_from_spec("openai-compat:http://localhost:8000/v1#m", settings, env=env).timeout_s == 30


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


def test_pick_blessed_ranks_by_the_measured_figures_and_reads_an_untagged_alias_as_latest() -> None:
    blessed = load_blessed(path=Path(BLESSED))
    assert [m.name for m in blessed.ranked] == ["qwen2.5-coder-7b", "mistral-nemo", "qwen3-8b", "qwen2.5-coder-1.5b"]
    assert pick_blessed(["llama3.1:8b", "qwen3:8b", "phi3:mini"], blessed) == "qwen3:8b"  # llama3.1: false claims
    assert pick_blessed(["qwen3:8b", "mistral-nemo:latest"], blessed) == "mistral-nemo:latest"  # the better rate
    assert pick_blessed(["phi3:mini", "mistral-nemo:12b"], blessed) is None  # an untagged alias is :latest only
    assert blessed.figures(blessed.ranked[0]) == ("solved 15/22 of small (ceiling 20/22), 0 false claim(s), measured "
                                                  "2026-11-30 on lab-2core")


def test_detect_prefers_an_installed_blessed_ollama_model() -> None:
    with LoopbackServer() as server:
        server.routes["/api/tags"] = tags("phi3:mini", "llama3.1:8b", "qwen2.5-coder:7b")
        found = detect(env={**NO_OLLAMA, "OLLAMA_HOST": server.url, "ANTHROPIC_API_KEY": "k"})
    assert found.spec == "ollama:qwen2.5-coder:7b" and "installed in Ollama" in found.reason
    assert "blessed: solved 15/22 of small" in found.reason


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
            detect(env={**NO_OLLAMA, "OLLAMA_HOST": server.url})
        assert "--model ollama:NAME" in info.value.hint
        assert info.value.hint.startswith("`ollama pull qwen2.5-coder:7b` (blessed: solved 15/22")
        with pytest.raises(ModelUnavailable, match="none tomo trusts") as info:  # the list tomo ships: none blessed
            detect(env={**NO_OLLAMA, "OLLAMA_HOST": server.url, "TOMO_BLESSED": str(BLESSED_FILE)})
    assert "--model ollama:NAME" in info.value.hint and "no blessed model" in info.value.hint


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
        env = {"OLLAMA_HOST": ollama.url, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": anthropic.url,
               "TOMO_LOCAL_SERVERS": ""}
        statuses = {s.provider: s for s in await probe_providers(env=env, timeout_s=1)}
    assert statuses["ollama"].ok and statuses["ollama"].detail == "2 model(s) available"
    assert not statuses["anthropic"].ok and "rejects the key (401)" in statuses["anthropic"].detail
    assert statuses["openai"].detail == "not probed: OPENAI_API_KEY is not set"


def test_tomo_models_json_and_table(run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    with LoopbackServer() as ollama:
        ollama.routes["/api/tags"] = tags("qwen2.5-coder:7b")
        env = {**NO_OLLAMA, "OLLAMA_HOST": ollama.url, "XDG_CONFIG_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "",
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



# ---- a spec that names no provider says so (issue 9) ------------------------------------------------------------


@pytest.mark.parametrize(("spec", "suggestion"), [
    ("cluade:sonnet", "did you mean claude:sonnet?"), ("opnai:gpt-4.1", "did you mean openai:gpt-4.1?"),
    ("anthropc:claude-haiku-4-5", "did you mean anthropic:claude-haiku-4-5?"),
    ("openai-compt:http://h/v1#m", "did you mean openai-compat:http://h/v1#m?"),
    ("gemni:pro", "Gemini speaks the OpenAI API: openai-compat:"), ("lm-studio:x", "openai-compat:http://localhost:1234"),
])
def test_a_mistyped_provider_is_named_with_a_did_you_mean(spec: str, suggestion: str) -> None:
    note, typo = spec_note(spec)
    prefix = spec.partition(":")[0]
    assert typo and note.startswith(f"read {spec!r} as an Ollama model: no provider is named {prefix!r} (providers: "
                                    "ollama, claude, anthropic, openai, openai-compat, scripted)")
    assert suggestion in note


@pytest.mark.parametrize("spec", ["qwen2.5-coder:7b", "llama3.1:8b", "llava:7b", "codellama:7b", "openchat:7b",
                                  "olama:qwen", "gemma3:4b"])
def test_real_ollama_names_are_not_taken_for_typos(spec: str) -> None:
    note, typo = spec_note(spec)
    assert not typo and "did you mean" not in note and note.startswith(f"read {spec!r} as an Ollama model")


@pytest.mark.parametrize("spec", ["ollama:qwen2.5-coder:7b", "mistral-nemo", "claude:x"])
def test_a_spec_with_a_provider_or_no_prefix_has_no_note(spec: str) -> None:
    assert spec_note(spec) == ("", False)


def test_a_mistyped_provider_is_said_when_the_model_is_made() -> None:
    sink = ListSink()
    model = model_from_spec("cluade:sonnet", sink=sink, env=NO_OLLAMA)
    assert isinstance(model, OllamaModel) and model.model == "cluade:sonnet"  # still what a bare spec means
    said = sink.of(Notice)
    assert [n.level for n in said] == ["warning"] and "did you mean claude:sonnet?" in said[0].text
    sink = ListSink()
    model_from_spec("qwen2.5-coder:7b", sink=sink, env=NO_OLLAMA)
    assert sink.of(Notice) == []  # an ordinary Ollama name is not a warning


async def test_the_error_of_a_spec_read_as_ollama_says_so_and_a_refused_local_port_is_not_retried() -> None:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = model_from_spec("gemni:pro", env={"OLLAMA_HOST": f"127.0.0.1:{port}"},
                            retry=RetryPolicy(base_s=0.001, sleep=sleep))
    with pytest.raises(ModelUnavailable) as info:
        await model.chat([Message.user("hi")])
    message = str(info.value)
    assert message.startswith("read 'gemni:pro' as an Ollama model: no provider is named 'gemni'")
    assert "nothing is listening at ollama" in message and sleeps == []


async def test_a_404_for_a_mistyped_spec_carries_the_did_you_mean() -> None:
    with LoopbackServer() as server:
        server.push(Canned(404, {"error": "model 'cluade:sonnet' not found"}))
        model = model_from_spec("cluade:sonnet", env={"OLLAMA_HOST": server.url})
        with pytest.raises(ModelError, match=r"did you mean claude:sonnet\?.*not found"):
            await model.chat([Message.user("hi")])


# ---- OpenAI-compatible servers on this machine -------------------------------------------------------------------


def models_list(*ids: str) -> Canned:
    return Canned(body={"object": "list", "data": [{"id": i, "object": "model", "owned_by": "me"} for i in ids]})


def test_the_usual_local_ports_are_looked_at_unless_tomo_local_servers_says_otherwise() -> None:
    assert local_server_urls({}) == [("http://127.0.0.1:8080/v1", "llama.cpp's llama-server"),
                                     ("http://127.0.0.1:1234/v1", "LM Studio"),
                                     ("http://127.0.0.1:8000/v1", "vLLM or llama-cpp-python")]
    assert local_server_urls({"TOMO_LOCAL_SERVERS": "1234, http://box:5000/v1/"}) == [
        ("http://127.0.0.1:1234/v1", "LM Studio"), ("http://box:5000/v1", "")]
    assert local_server_urls({"TOMO_LOCAL_SERVERS": ""}) == []


def test_detect_uses_a_local_server_only_when_nothing_else_is_connected() -> None:
    with LoopbackServer() as local, LoopbackServer() as other:
        local.routes["/v1/models"] = models_list("smollm2", "other")
        other.routes["/v1/models"] = Canned(404, {"detail": "Not Found"})  # something else on a usual port
        servers = f"{other.url}/v1,{local.url}/v1"
        found = detect(env={**NO_OLLAMA, "TOMO_LOCAL_SERVERS": servers})
        assert found.spec == f"openai-compat:{local.url}/v1#smollm2" and "first of its 2 model(s)" in found.reason
        assert "(named in TOMO_LOCAL_SERVERS)" in found.reason
        keyed = detect(env={**NO_OLLAMA, "TOMO_LOCAL_SERVERS": servers, "OPENAI_API_KEY": "o"})
        assert keyed.spec == TIER_DEFAULTS["openai"]["fast"]
    with pytest.raises(ModelUnavailable, match=r"no OpenAI-compatible server serves a model at http://127\.0\.0\.1:9/v1"):
        detect(env={**NO_OLLAMA, "TOMO_LOCAL_SERVERS": "9"})


def test_a_blessed_model_served_locally_comes_before_keys_and_other_served_models() -> None:
    with LoopbackServer() as first, LoopbackServer() as second, LoopbackServer() as ollama:
        first.routes["/v1/models"] = models_list("smollm2-135m", "my-own-model")  # measured, not blessed; unknown
        second.routes["/v1/models"] = models_list("qwen2.5-coder-1.5b")  # blessed, by its local alias
        env = {**NO_OLLAMA, "TOMO_LOCAL_SERVERS": f"{first.url}/v1,{second.url}/v1", "ANTHROPIC_API_KEY": "k"}
        found = detect(env=env)
        assert found.spec == f"openai-compat:{second.url}/v1#qwen2.5-coder-1.5b"
        assert found.reason == (f"served at {second.url}/v1; blessed: solved 11/22 of small (ceiling 20/22), 0 false "
                                "claim(s), measured 2026-11-30 on lab-2core")
        # the better-ranked blessed model wins, whichever way it is reached: Ollama's qwen3-8b (12/22) over the served
        # 1.5b (11/22), and the served 7b (15/22) over Ollama's qwen3-8b
        ollama.routes["/api/tags"] = tags("qwen3:8b", "phi3:mini")
        env["OLLAMA_HOST"] = ollama.url
        assert detect(env=env).spec == "ollama:qwen3:8b"
        second.routes["/v1/models"] = models_list("qwen2.5-coder-7b")
        assert detect(env=env).spec == f"openai-compat:{second.url}/v1#qwen2.5-coder-7b"
        # no blessed model served and none installed: the key comes first, then any served model, as before
        second.routes["/v1/models"] = models_list("my-other-model")
        ollama.routes["/api/tags"] = tags("phi3:mini")
        assert detect(env=env).spec == TIER_DEFAULTS["anthropic"]["fast"]
        assert detect(env={**env, "ANTHROPIC_API_KEY": ""}).spec == f"openai-compat:{first.url}/v1#smollm2-135m"


def test_without_a_measured_list_a_served_model_comes_after_the_keys_as_before() -> None:
    with LoopbackServer() as local:
        local.routes["/v1/models"] = models_list("qwen2.5-coder-1.5b")
        env = {**NO_OLLAMA, "TOMO_LOCAL_SERVERS": f"{local.url}/v1", "OPENAI_API_KEY": "o",
               "TOMO_BLESSED": str(BLESSED_FILE)}  # the shipped list: nothing measured yet
        assert detect(env=env).spec == TIER_DEFAULTS["openai"]["fast"]
        found = detect(env={**env, "OPENAI_API_KEY": ""})
    assert found.spec == f"openai-compat:{local.url}/v1#qwen2.5-coder-1.5b" and "blessed" not in found.reason


@pytest.mark.parametrize(("content", "said"), [
    (None, "does not exist"),
    ("{ not json", "is not JSON (line 1"),
    ('{"generated": "2026-11-30T12:00:00Z", "machine": "m", "tomo_version": "0.1.0", "rule": "r", "suites": {}, '
     '"models": [{"name": "x"}]}', "does not match the schema (models.0.spec: Field required; 8 more)"),
    ('{"generated": "yesterday", "machine": "m", "tomo_version": "0.1.0", "rule": "r", "suites": {}, "models": []}',
     "does not match the schema (generated: "),
    ("[]", "does not match the schema (the top level: "),
])
def test_a_missing_or_broken_blessed_file_is_an_empty_list_and_a_note(tmp_path: Path, content: str | None,
                                                                       said: str) -> None:
    path = tmp_path / "blessed.json"
    if content is not None:
        path.write_text(content)
    blessed = load_blessed({"TOMO_BLESSED": str(path)})
    assert blessed.ranked == [] and blessed.measured == [] and blessed.data is None
    assert blessed.note.startswith(f"no blessed list: {path} ") and said in blessed.note
    assert "tomo lab bless" in blessed.note
    with LoopbackServer() as ollama:  # detection goes on as without a list: the key, then the error
        ollama.routes["/api/tags"] = tags("qwen2.5-coder:7b")
        env = {**NO_OLLAMA, "OLLAMA_HOST": ollama.url, "TOMO_BLESSED": str(path)}
        assert detect(env={**env, "OPENAI_API_KEY": "o"}).spec == TIER_DEFAULTS["openai"]["fast"]
        with pytest.raises(ModelUnavailable, match="none tomo trusts") as info:
            detect(env=env)
    assert said in info.value.hint


def test_the_shipped_list_reads_and_blesses_no_model_it_measured() -> None:
    # written by `tomo lab bless small` from this machine's lab runs (docs/benchmarks.md): one model, below the rule
    blessed = load_blessed({})
    assert blessed.source == BLESSED_FILE and blessed.data is not None and blessed.note == ""
    assert [(m.name, m.blessed) for m in blessed.measured] == [("qwen2.5-coder-1.5b", False)]
    assert blessed.ranked == [] and blessed.summary().startswith("0 of 1 measured model(s) blessed")


def test_tomo_models_shows_the_measured_list(run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    env = {**NO_OLLAMA, "XDG_CONFIG_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "",
           "TOMO_MODEL": ""}
    report = json.loads(run_tomo("models", "--json", "--timeout", "0.5", cwd=tmp_path, env=env).stdout)
    blessed = report["blessed"]
    assert (blessed["source"], blessed["machine"], blessed["note"]) == (BLESSED, "lab-2core", None)
    assert [(m["name"], m["solved"], m["tasks"], m["false_claims"], m["blessed"]) for m in blessed["models"]][:2] == [
        ("qwen3-8b", 12, 22, 0, True), ("qwen2.5-coder-7b", 15, 22, 0, True)]
    assert blessed["suites"] == {"small": {"variant": "oi --exec-gate", "ceiling": {"solved": 20, "tasks": 22}}}
    text = run_tomo("models", "--timeout", "0.5", cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    table = lines[lines.index(next(line for line in lines if line.startswith("model "))) + 1:][:6]
    assert [" ".join(line.split()) for line in table] == [  # best first: the blessed by rate, then the others
        "qwen2.5-coder-7b small 15/22 20/22 0 yes", "mistral-nemo small 13/22 20/22 0 yes",
        "qwen3-8b small 12/22 20/22 0 yes", "qwen2.5-coder-1.5b small 11/22 20/22 0 yes",
        "llama3.1-8b small 14/22 20/22 3 no", "smollm2-135m small 0/22 20/22 0 no"]
    assert "measured 2026-11-30 on lab-2core" in text.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    text = run_tomo("models", "--timeout", "0.5", cwd=tmp_path, env={**env, "TOMO_BLESSED": str(broken)})
    assert text.returncode == 0 and f"no blessed list: {broken} is not JSON" in text.stdout


async def test_probe_lists_what_local_servers_serve() -> None:
    with LoopbackServer() as local, LoopbackServer() as web:
        local.routes["/v1/models"] = models_list("smollm2")
        web.routes["/v1/models"] = Canned(200, "<html>a web app</html>", content_type="text/html")
        env = {**NO_OLLAMA, "TOMO_LOCAL_SERVERS": f"{local.url}/v1,{web.url}/v1,9"}
        rows = [s.to_dict() for s in await probe_providers(env=env, timeout_s=1) if s.provider == "local"]
    assert rows[0] == {"provider": "local", "base_url": f"{local.url}/v1", "ok": True,
                       "detail": "serves 1 model(s): smollm2", "models": ["smollm2"],
                       "spec": f"openai-compat:{local.url}/v1#smollm2"}
    assert not rows[1]["ok"] and "not an OpenAI-compatible server" in rows[1]["detail"]
    assert not rows[2]["ok"] and rows[2]["detail"].startswith("no answer (ConnectError")


def test_tomo_models_shows_a_local_server_and_the_spec_to_use_it(run_tomo: Callable[..., Any], tmp_path: Path) -> None:
    with LoopbackServer() as local:
        local.routes["/v1/models"] = models_list("smollm2")
        env = {**NO_OLLAMA, "XDG_CONFIG_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "",
               "TOMO_MODEL": "", "TOMO_LOCAL_SERVERS": f"{local.url}/v1"}
        report = json.loads(run_tomo("models", "--json", cwd=tmp_path, env=env).stdout)
        text = run_tomo("models", cwd=tmp_path, env=env)
    spec = f"openai-compat:{local.url}/v1#smollm2"
    assert report["default"]["spec"] == spec and report["tiers"]["fast"]["spec"] == spec
    assert report["providers"][-1]["models"] == ["smollm2"]
    assert text.returncode == 0 and f"--model {spec}" in text.stdout and "serves 1 model(s): smollm2" in text.stdout
