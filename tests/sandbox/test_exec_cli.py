"""`tomo exec`, run as a real subprocess: streaming, exit codes, 124 on timeout, notices on stderr, settings."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from sandbox_support import require_bwrap


@pytest.fixture
def bwrap() -> None:
    """For the tests that run the strict box (the others must run on a machine without bubblewrap too)."""
    require_bwrap()


@pytest.fixture
def no_bwrap_path(tmp_path: Path) -> str:
    """A PATH with the few programs these tests run and no bubblewrap: a machine without it, on any machine."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for program in ("sh", "true", "echo"):
        found = shutil.which(program)
        assert found is not None, program
        os.symlink(found, bin_dir / program)
    assert shutil.which("bwrap", path=str(bin_dir)) is None
    return str(bin_dir)


def test_runs_in_the_strict_box_and_exits_with_the_code(run_tomo, ws: Path, bwrap: None) -> None:
    out = run_tomo("exec", "--root", str(ws), "--", "sh", "-c", "echo hi > made.txt; id -u; pwd; exit 7")
    assert out.returncode == 7, out.stderr
    assert out.stdout == f"65534\n{ws}\n"
    assert (ws / "made.txt").read_text() == "hi\n"


@pytest.mark.parametrize("kind", ["strict", "local"])
def test_a_missing_program_exits_127_in_both_boxes(run_tomo, ws: Path, kind: str) -> None:
    """Like a shell: 127 and a sentence, not bwrap's bare exit 1 (which a script cannot tell from the program's)."""
    if kind == "strict":
        require_bwrap()
    out = run_tomo("exec", "--sandbox", kind, "--root", str(ws), "--", "no-such-program-tomo", "arg")
    assert out.returncode == 127, (kind, out.stderr)
    assert "tomo: cannot run 'no-such-program-tomo': No such file or directory" in out.stdout + out.stderr
    for path in ("./missing.sh", "/opt/no-such-dir-tomo/run"):  # a path, relative to the workspace or absolute
        out = run_tomo("exec", "--sandbox", kind, "--root", str(ws), "--", path)
        assert out.returncode == 127 and f"cannot run '{path}'" in out.stdout + out.stderr, (kind, path)


def test_timeout_exits_124_and_says_so(run_tomo, ws: Path, bwrap: None) -> None:
    out = run_tomo("exec", "--root", str(ws), "--timeout", "1", "--", "sh", "-c", "echo started; sleep 30")
    assert out.returncode == 124
    assert out.stdout == "started\n"
    assert "timed out after 1 s" in out.stderr


def test_cut_output_is_announced_on_stderr(run_tomo, ws: Path, bwrap: None) -> None:
    (ws / "tomo.toml").write_text("[sandbox]\noutput_bytes = 1000\n")
    out = run_tomo("exec", "--root", str(ws), "--", "seq", "1", "100000")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0] == "1" and lines[-1] == "100000"
    assert len(out.stdout) <= 1500  # streamed live: the first 1,000 bytes, then the last 500
    assert "output cut:" in out.stderr and "588,895 bytes in all" in out.stderr


def test_local_is_chosen_explicitly_and_json_reports_the_result(run_tomo, ws: Path) -> None:
    out = run_tomo("exec", "--sandbox", "local", "--json", "--root", str(ws), "--", "sh", "-c", "echo ok; exit 3")
    assert out.returncode == 3
    data = json.loads(out.stdout)
    assert data["sandbox"] == "local" and data["output"] == "ok\n" and data["exit_code"] == 3
    assert data["box"]["confines_files"] is False and data["box"]["network"] is True


def test_settings_choose_the_box(run_tomo, ws: Path) -> None:
    (ws / "tomo.toml").write_text('[sandbox]\nkind = "local"\ntimeout_s = 1\n')
    out = run_tomo("exec", "--json", "--root", str(ws), "--", "sleep", "30")
    data = json.loads(out.stdout)
    assert out.returncode == 124 and data["sandbox"] == "local" and data["timed_out"] is True


def test_bad_sandbox_kind_is_a_clear_error(run_tomo, ws: Path) -> None:
    out = run_tomo("exec", "--sandbox", "docker", "--root", str(ws), "--", "true")
    assert out.returncode == 125  # tomo failed, not the command
    assert "unknown sandbox kind 'docker'" in out.stderr and "auto, strict, local" in out.stderr


@pytest.mark.parametrize("kind", ["auto", "strict"])
def test_without_bubblewrap_tomo_refuses_and_says_how_to_fix_it(run_tomo, ws: Path, no_bwrap_path: str,
                                                                 kind: str) -> None:
    out = run_tomo("exec", "--sandbox", kind, "--root", str(ws), "--", "sh", "-c", "echo ran > ran.txt",
                   env={"PATH": no_bwrap_path})
    assert out.returncode == 125, out.stderr  # tomo failed, not the command
    what = "the default sandbox" if kind == "auto" else "the strict sandbox"
    assert f"{what} needs bubblewrap" in out.stderr and "apt-get install bubblewrap" in out.stderr
    assert "--sandbox local" in out.stderr
    assert "([sandbox] kind" in out.stderr  # brackets in a hint are printed, not eaten as markup
    assert not (ws / "ran.txt").exists()  # never run unconfined as a fallback
    assert "Traceback" not in out.stderr


def test_without_bubblewrap_the_local_box_still_runs_when_asked_for(run_tomo, ws: Path, no_bwrap_path: str) -> None:
    out = run_tomo("exec", "--sandbox", "local", "--root", str(ws), "--", "sh", "-c", "echo ran > ran.txt; echo ok",
                   env={"PATH": no_bwrap_path})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok\n" and (ws / "ran.txt").read_text() == "ran\n"


def test_missing_workspace_is_a_clear_error(run_tomo, tmp_path: Path, bwrap: None) -> None:
    out = run_tomo("exec", "--root", str(tmp_path / "nope"), "--", "true")
    assert out.returncode == 125 and "does not exist" in out.stderr


@pytest.mark.parametrize("kind", ["strict", "local"])
def test_a_pipe_reaches_the_command(run_tomo, ws: Path, kind: str) -> None:
    if kind == "strict":
        require_bwrap()
    out = run_tomo("exec", "--sandbox", kind, "--root", str(ws), "--", "tr", "a-z", "A-Z", input="piped in\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "PIPED IN\n"
