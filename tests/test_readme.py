"""The README's first code block is a promise to a new user: two commands, and CI runs the second one verbatim."""

import os
import re
import shlex
import subprocess
import sys
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


def _prose_paragraphs(text: str) -> list[str]:
    text = re.sub(r"^(`{3,}).*?^\1\s*$", "", text, flags=re.S | re.M)  # code blocks are not prose
    return [p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith(("#", "|"))]


def test_no_paragraph_of_the_readme_says_another_again() -> None:
    """Issue 28: the CI paragraph was there twice, the second a shorter copy of the first. A paragraph whose words
    are (nearly) all in another paragraph is a repeat; the closest two distinct paragraphs share about 60%."""
    paragraphs = _prose_paragraphs((ROOT / "README.md").read_text(encoding="utf-8"))
    words = [re.findall(r"[\w./'-]+", p.lower()) for p in paragraphs]
    for i, mine in enumerate(words):
        if len(mine) < 8:
            continue
        for j, other in enumerate(words):
            if i != j:
                shared = sum(w in set(other) for w in mine) / len(mine)
                assert shared < 0.9, f"README repeats itself:\n{paragraphs[i]}\n--- already says ---\n{paragraphs[j]}"


def test_the_seed_example_runs_in_the_copy_the_readme_makes(tmp_path: Path) -> None:
    """Issue 28: the `--seed` example started with `git worktree add`, which fails in the copy the README's Commands
    section makes (`cp -r examples/shop /tmp/shop`, not a git checkout). Its commands are run here as written, in
    that copy (under tmp_path), and print what the README shows."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = re.search(r"`(cp -r examples/shop (\S+) && cd \2)`", readme)
    assert setup, "the Commands section no longer says how to make the copy"
    copy = str(tmp_path / "shop")
    block = next(b for b in re.findall(r"```console\n(.*?)```", readme, re.S) if "--seed" in b)
    commands = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    seed = next(i for i, c in enumerate(commands) if "--seed" in c)
    assert commands[0] == "tomo graph index"
    steps = [f"cd {ROOT}", setup.group(1).replace(setup.group(2), copy), commands[0], commands[seed - 1],
             commands[seed]]
    # each step checked on its own line: `a && b` failing in `a` does not stop `set -e`, and a step may end in a comment
    script = "\n".join([f'tomo() {{ "{sys.executable}" -m tomo "$@"; }}',
                        *(f"{step}\n[ $? -eq 0 ] || {{ echo {shlex.quote('failed: ' + step)} >&2; exit 1; }}"
                          for step in steps)])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    shown = block.splitlines()[block.splitlines().index(f"$ {commands[seed]}") + 1]
    expected = re.escape(shown.replace(setup.group(2), copy)).replace(r"0\.01s", r"[\d.]+s")
    assert re.fullmatch(expected, done.stdout.splitlines()[-1]), (shown, done.stdout)
