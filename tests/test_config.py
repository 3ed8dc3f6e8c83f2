from pathlib import Path

import pytest

from tomo.config import load_settings
from tomo.errors import ConfigError


def test_layers_later_wins(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('model = "ollama:a"\n[tiers]\nfast = "ollama:small"\ndeep = "claude:big"\n')
    project = tmp_path / "proj" / "tomo.toml"
    project.parent.mkdir()
    project.write_text('[tiers]\nfast = "openai:gpt-4o-mini"\n[agents.reader]\ntools = ["list_jobs"]\n')
    settings = load_settings(project.parent, env={}, user_file=user)
    assert settings.model == "ollama:a"
    assert settings.tiers == {"fast": "openai:gpt-4o-mini", "deep": "claude:big"}
    assert settings.agents["reader"].tools == ["list_jobs"]
    assert settings.source == [str(user), str(project)]

    env_settings = load_settings(project.parent, env={"TOMO_MODEL": "scripted:x.json", "OLLAMA_HOST": "http://h:1"},
                                 user_file=user)
    assert env_settings.model == "scripted:x.json"
    assert env_settings.provider("ollama").base_url == "http://h:1"


def test_project_file_found_walking_up(tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text("[sandbox]\ntimeout_s = 5\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    settings = load_settings(deep, env={}, user_file=tmp_path / "missing.toml")
    assert settings.sandbox.timeout_s == 5


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text("[tiers\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert "tomo.toml" in str(info.value)


def test_bad_value_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text('[sandbox]\ntimeout_s = "soon"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert "sandbox.timeout_s" in str(info.value)


def test_unknown_sections_are_kept(tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text("[team]\nbudget = 1000\n")
    settings = load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert settings.section("team") == {"budget": 1000}
    assert settings.section("web") == {}


@pytest.mark.parametrize(("toml", "key"), [
    ('[sandbox]\nkind = "docker"\n', "sandbox.kind"),
    ("[sandbox]\ntimeout_s = -1\n", "sandbox.timeout_s"),
    ("[sandbox]\noutput_bytes = 10\n", "sandbox.output_bytes"),
    ("[sandbox]\nmax_pids = -5\n", "sandbox.max_pids"),
    ("[agents.reader]\nmax_steps = 0\n", "agents.reader.max_steps"),
    ("[agents.reader]\nmax_tokens_total = -100\n", "agents.reader.max_tokens_total"),
])
def test_out_of_range_values_name_the_file_and_the_key(tmp_path: Path, toml: str, key: str) -> None:
    """Caught when the file is read, with its name and the key, not later as a bare 'timeout must be positive'
    from the sandbox or a run that stops before its first step."""
    (tmp_path / "tomo.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert key in str(info.value) and str(tmp_path / "tomo.toml") in str(info.value)


def test_sandbox_kind_is_read_in_any_case(tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text('[sandbox]\nkind = " Local "\n')
    assert load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml").sandbox.kind == "local"


def test_relative_sandbox_paths_are_relative_to_the_file_that_names_them(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "tomo.toml").write_text('[sandbox]\nro_paths = ["data", "/srv/x", "~/cache"]\nrw_paths = ["out"]\n')
    settings = load_settings(project, env={}, user_file=tmp_path / "none.toml")
    assert settings.sandbox.ro_paths == [str(project / "data"), "/srv/x", "~/cache"]
    assert settings.sandbox.rw_paths == [str(project / "out")]
