"""Settings, lowest first: built-in defaults, ``~/.config/tomo/tomo.toml``, the project's tomo.toml, the environment.

Precedence, lowest first: built-in defaults < user file (``~/.config/tomo/tomo.toml``) < project file (the first
``tomo.toml`` found walking up from the working directory) < environment variables. A table this module does not
model (``[team]``) is kept as a plain dict (``extra="allow"``) so its part can read and check it without this module
knowing its shape; but every top-level name a file may use is listed here (:data:`PART_TABLES`), because a misspelt
key (``modle = ...``, ``[sandboxx]``) that is silently kept means a setting the user believes in and tomo ignores.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tomo.errors import ConfigError

PROJECT_FILE = "tomo.toml"

PART_TABLES: tuple[str, ...] = ("team",)
"""Top-level tables a part above this module reads for itself (``Settings.section``): allowed by name here,
checked key by key by their part (``tomo.team.roles.TeamSettings``). A new part's table is added to this list."""


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tomo" / PROJECT_FILE


class ProviderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base_url: str | None = None
    api_key_env: str | None = None
    # Seconds to wait for an answer; unset: 900 for a server on this machine, else 120 (Ollama 300). models/_http.py
    timeout_s: float | None = Field(default=None, gt=0)
    max_retries: int = 2
    num_ctx: int | None = None  # Ollama only
    # sampling temperature sent with every request; None: the provider's default, except local OpenAI-compatible
    # servers, which get LOCAL_TEMPERATURE (llama.cpp's servers default to 0.8, too loose for code)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tier: str = "balanced"
    prompt: str = ""
    tools: list[str] = Field(default_factory=list)
    force_tools: bool = False
    max_steps: int | None = Field(default=None, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_tokens_total: int | None = Field(default=None, ge=1)
    max_malformed: int | None = Field(default=None, ge=1)
    max_reply_tokens: int | None = Field(default=None, ge=1)


SandboxKind = Literal["auto", "strict", "local"]
SANDBOX_KINDS: tuple[SandboxKind, ...] = get_args(SandboxKind)


class SandboxSettings(BaseModel):
    """Checked here, so a bad value is reported with the file and the key rather than at the first run."""

    model_config = ConfigDict(extra="forbid")
    kind: SandboxKind = "auto"
    timeout_s: float = Field(default=60.0, gt=0)
    memory_mb: int = Field(default=2048, ge=0)  # 0 leaves a limit unset
    cpu_s: int = Field(default=120, ge=0)
    file_size_mb: int = Field(default=256, ge=0)
    open_files: int = Field(default=256, ge=0)
    max_pids: int = Field(default=256, ge=0)
    output_bytes: int = Field(default=200_000, ge=64)
    network: bool = False
    ro_paths: list[str] = Field(default_factory=list)
    rw_paths: list[str] = Field(default_factory=list)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind_any_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class Settings(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None  # a spec; overrides detection
    tiers: dict[str, str] = Field(default_factory=dict)
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    agents: dict[str, AgentSettings] = Field(default_factory=dict)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    source: list[str] = Field(default_factory=list, description="files the settings were read from")

    def provider(self, name: str) -> ProviderSettings:
        return self.providers.get(name) or ProviderSettings()

    def section(self, name: str) -> dict[str, Any]:
        """A table this module does not model (``[team]``, ``[web]`` ...), as a plain dict."""
        extra = self.model_extra or {}
        value = extra.get(name, {})
        return value if isinstance(value, dict) else {}


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", hint="fix the line named above") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}", hint="check the path and its permissions") from exc


def file_keys() -> tuple[str, ...]:
    """The top-level keys and tables a tomo.toml may hold, sorted: the modelled settings and :data:`PART_TABLES`
    (``source`` is what tomo records, not something a file sets)."""
    return tuple(sorted((set(Settings.model_fields) - {"source"}) | set(PART_TABLES)))


def check_keys(path: Path, data: dict[str, Any]) -> None:
    """Refuses a top-level key or table that no part of tomo reads, naming it, the file, and the closest known key.

    Checked per file, before the layers merge, so the error names the file the typo is in rather than every file.
    """
    known = file_keys()
    unknown = [key for key in data if key not in known]
    if not unknown:
        return
    tables = {key for key in unknown if isinstance(data[key], dict)}

    def shown(key: str, as_table: bool) -> str:
        return f"[{key}]" if as_table else repr(key)

    names = ", ".join(shown(key, key in tables) for key in unknown)
    guesses = {key: shown(match[0], key in tables) for key in unknown
               if (match := difflib.get_close_matches(key, known, n=1, cutoff=0.6))}
    if len(unknown) == 1 and guesses:
        hint = f"did you mean {guesses[unknown[0]]}? "
    elif guesses:
        hint = f"did you mean {', '.join(f'{g} for {shown(k, k in tables)}' for k, g in guesses.items())}? "
    else:
        hint = ""
    kind = "table" if len(tables) == len(unknown) else "key" if not tables else "key or table"
    plural = {"table": "tables", "key": "keys", "key or table": "keys and tables"}[kind]
    raise ConfigError(f"{path}: unknown {kind if len(unknown) == 1 else plural} {names}",
                      hint=f"{hint}a tomo.toml takes {', '.join(known)} (see README, 'Configuration')")


def _anchor_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Relative ``[sandbox]`` paths are relative to the file that names them, not to wherever tomo was started."""
    sandbox = data.get("sandbox")
    if not isinstance(sandbox, dict):
        return data
    anchored = dict(sandbox)
    for key in ("ro_paths", "rw_paths"):
        paths = sandbox.get(key)
        if isinstance(paths, list):
            anchored[key] = [str(base / p) if isinstance(p, str) and not p.startswith(("/", "~")) else p
                             for p in paths]
    return {**data, "sandbox": anchored}


def find_project_file(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None


def _env_overrides(env: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if env.get("TOMO_MODEL"):
        data["model"] = env["TOMO_MODEL"]
    providers: dict[str, Any] = {}
    base_url_vars = (("ollama", "OLLAMA_HOST"), ("anthropic", "ANTHROPIC_BASE_URL"), ("openai", "OPENAI_BASE_URL"))
    for provider, var in base_url_vars:
        if env.get(var):
            providers[provider] = {"base_url": env[var]}
    if providers:
        data["providers"] = providers
    return data


def load_settings(
    cwd: Path | None = None,
    *,
    env: dict[str, str] | None = None,
    user_file: Path | None = None,
    project_file: Path | None = None,
) -> Settings:
    """Reads every layer and validates the result; a bad value raises ConfigError naming the file and the key."""
    env = dict(os.environ) if env is None else env
    cwd = cwd or Path.cwd()
    layers: list[tuple[str, dict[str, Any]]] = []
    user = user_file if user_file is not None else user_config_path()
    if user.is_file():
        layers.append((str(user), read_toml(user)))
    project = project_file if project_file is not None else find_project_file(cwd)
    if project is not None and project.is_file():
        layers.append((str(project), read_toml(project)))
    merged: dict[str, Any] = {}
    for name, data in layers:
        check_keys(Path(name), data)
        merged = _deep_merge(merged, _anchor_paths(data, Path(name).parent))
    merged = _deep_merge(merged, _env_overrides(env))
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        where = ", ".join(name for name, _ in layers) or "the environment"
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid settings in {where}: {problems}", hint="see README, 'Configuration'") from exc
    settings.source = [name for name, _ in layers]
    return settings
