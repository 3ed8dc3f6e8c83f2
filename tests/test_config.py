from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

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


def test_a_part_table_is_kept_for_its_part(tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text("[team]\nbudget = 1000\n")
    settings = load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert settings.section("team") == {"budget": 1000}
    assert settings.section("web") == {}


@pytest.mark.parametrize(("toml", "named", "guess"), [
    ('modle = "ollama:x"\n', "unknown key 'modle'", "did you mean 'model'?"),
    ("[sandboxx]\nkind = \"local\"\n", "unknown table [sandboxx]", "did you mean [sandbox]?"),
    ("[agent.reader]\ntier = \"fast\"\n", "unknown table [agent]", "did you mean [agents]?"),
    ("[teams]\nbudget = 5\n", "unknown table [teams]", "did you mean [team]?"),
    ('source = ["x"]\n', "unknown key 'source'", ""),  # what tomo records, not a setting
    ("[web]\nport = 1\n", "unknown table [web]", ""),
])
def test_an_unknown_top_level_key_is_an_error_naming_it_and_the_file(tmp_path: Path, toml: str, named: str,
                                                                    guess: str) -> None:
    """Issue 28: a misspelt key was kept and ignored, so the user's setting silently did nothing."""
    (tmp_path / "tomo.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert info.value.message == f"{tmp_path / 'tomo.toml'}: {named}"
    assert guess in info.value.hint and "a tomo.toml takes agents, model, providers, sandbox, team, tiers" \
        in info.value.hint
    if not guess:
        assert "did you mean" not in info.value.hint


def test_an_unknown_key_names_the_file_it_is_in_not_every_layer(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('modle = "a"\ntierz = 1\n[tiers]\nfast = "b"\n')
    (tmp_path / "tomo.toml").write_text('model = "c"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={}, user_file=user)
    assert info.value.message == f"{user}: unknown keys 'modle', 'tierz'"
    assert info.value.hint.startswith("did you mean 'model' for 'modle', 'tiers' for 'tierz'?")


def test_tomo_refuses_an_unknown_key_with_exit_2(tmp_path: Path, run_tomo: Callable[..., CompletedProcess[str]]) \
        -> None:
    """Through the real CLI: one error naming the file and the key, the hint with the near key, exit 2."""
    (tmp_path / "tomo.toml").write_text('[sandboxx]\nkind = "local"\n')
    done = run_tomo("models", cwd=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert done.returncode == 2, done.stderr
    assert f"{tmp_path / 'tomo.toml'}: unknown table [sandboxx]" in done.stderr
    assert "did you mean [sandbox]?" in done.stderr and "Traceback" not in done.stderr


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
