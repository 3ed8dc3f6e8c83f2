"""The README's first code block is a promise to a new user: two commands, and CI runs the second one verbatim."""

import re
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

ROOT = Path(__file__).resolve().parents[1]


def _first_block() -> list[str]:
    match = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert match, "README.md has no ```bash block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def test_readme_opens_with_exactly_the_demo_and_the_test_command() -> None:
    demo, tests = _first_block()
    assert demo.endswith("tomo demo") and "pytest" in tests


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    tests = _first_block()[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert tests in ci_lines, f".ci/run must run {tests!r} as written in the README"


def test_ci_sets_ci_true_before_it_runs_anything() -> None:
    """The tests that skip where PostgreSQL, dbos or bwrap is missing fail instead under CI=true; .ci/run installs
    them, so it must say it is CI (issue 28) or a broken install would pass as a row of skips."""
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert "export CI=true" in lines, ".ci/run must export CI=true"
    first_work = next(i for i, line in enumerate(lines) if line.startswith(("apt-get", "pip ", "python ")))
    assert lines.index("export CI=true") < first_work, "CI=true must be set before .ci/run installs or tests"


def test_the_configuration_example_is_valid(tmp_path: Path) -> None:
    from tomo.config import load_settings

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```toml\n(.*?)```", text, re.S)
    assert match, "README.md shows no tomo.toml example"
    (tmp_path / "tomo.toml").write_text(match.group(1))
    settings = load_settings(tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert settings.model == "ollama:qwen2.5-coder:7b"
    assert settings.agents["reader"].tools == ["list_jobs", "show_job"]
    assert settings.sandbox.kind == "strict"


def test_the_docs_state_the_precedence_the_code_applies(tmp_path: Path) -> None:
    """User file < project file < environment, in the code (each layer names a model) and in the order the README's
    Configuration section and docs/DESIGN.md name the layers."""
    from tomo.config import load_settings

    user, project = tmp_path / "user.toml", tmp_path / "tomo.toml"
    user.write_text('model = "from-user"\n')
    assert load_settings(tmp_path, env={}, user_file=user, project_file=tmp_path / "none.toml").model == "from-user"
    project.write_text('model = "from-project"\n')
    assert load_settings(tmp_path, env={}, user_file=user).model == "from-project"
    assert load_settings(tmp_path, env={"TOMO_MODEL": "from-env"}, user_file=user).model == "from-env"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Configuration"):][:800]
    design = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    bullet = design[design.index("- Configuration"):][:400]
    for text in (section, bullet):
        order = [text.index("built-in defaults"), text.index("~/.config/tomo/tomo.toml"),
                 text.index("project's `tomo.toml`"), text.index("the environment")]
        assert order == sorted(order), text


def test_the_team_example_runs_from_the_files_it_names(tmp_path: Path,
                                                        run_tomo: Callable[..., CompletedProcess[str]]) -> None:
    """The README's `tomo team` example names scripted models under examples/team/: they exist, and a run gives the
    totals the README prints."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    roles = re.search(r"--roles (planner=scripted:\S+)", readme)
    assert roles, "the README's team example names no scripted roles"
    spec = ",".join(f"{role}=scripted:{ROOT / path}" for role, path in
                    (item.split("=scripted:", 1) for item in roles.group(1).split(",")))
    done = run_tomo("team", "add a --json flag to tomo list", "--budget", "20000", "--job-id", "json-flag",
                    "--roles", spec, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    for line in ("APPROVE: small, tested, matches the request.", "job json-flag is complete",
                 "2,768 tokens (2,608 in, 160 out)"):
        assert line in printed and line in readme, line
