"""Choosing a box: strict by default, never a silent fallback, settings from tomo.toml respected."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_support import require_bwrap

from tomo.config import SandboxSettings
from tomo.errors import SandboxError
from tomo.sandbox import BubblewrapSandbox, Limits, LocalSandbox, make_sandbox


def test_auto_is_strict_when_bubblewrap_exists() -> None:
    require_bwrap()
    box = make_sandbox("auto", SandboxSettings(timeout_s=7, memory_mb=100))
    assert isinstance(box, BubblewrapSandbox)
    assert box.limits == Limits(timeout_s=7, memory_bytes=100 * 1024 * 1024)


@pytest.mark.parametrize("kind", ["auto", "strict"])
def test_no_bubblewrap_means_a_refusal_not_a_fallback(kind: str, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError) as info:
        make_sandbox(kind)
    assert "not installed" in info.value.message
    assert "apt-get install bubblewrap" in info.value.hint and "--sandbox local" in info.value.hint


def test_local_must_be_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert isinstance(make_sandbox("local"), LocalSandbox)
    assert isinstance(make_sandbox(None, SandboxSettings(kind="local")), LocalSandbox)


def test_unknown_kind() -> None:
    with pytest.raises(SandboxError, match="unknown sandbox kind 'podman'"):
        make_sandbox("podman")


def test_extra_paths_are_checked_and_bound(tmp_path: Path) -> None:
    require_bwrap()
    with pytest.raises(SandboxError, match="does not exist") as info:
        make_sandbox("strict", SandboxSettings(ro_paths=[str(tmp_path / "missing")]))
    assert "ro_paths" in info.value.hint
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.txt").write_text("input\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    box = make_sandbox("strict", SandboxSettings(ro_paths=[str(data)], rw_paths=[str(cache)]))
    result = box.run_sync(f"cat {data}/in.txt; echo x > {data}/no.txt; echo y > {cache}/yes.txt", "shell", ws)
    assert result.output.startswith("input\n") and "Read-only file system" in result.output
    assert not (data / "no.txt").exists() and (cache / "yes.txt").read_text() == "y\n"


def test_network_flag_shares_the_host_network(tmp_path: Path) -> None:
    require_bwrap()
    box = make_sandbox("strict", SandboxSettings(network=True))
    result = box.run_sync("cat /proc/net/dev | wc -l", "shell", tmp_path)
    closed = make_sandbox("strict").run_sync("cat /proc/net/dev | wc -l", "shell", tmp_path)
    assert int(closed.output) == 3  # two header lines and lo
    assert int(result.output) > 3


def test_a_venv_under_the_hidden_home_still_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$HOME is hidden in the box, but an interpreter that lives there (a venv, pyenv) is bound back read-only."""
    import subprocess
    import sys
    import tempfile

    require_bwrap()
    home = Path(tempfile.mkdtemp(prefix="tomo-home-", dir="/var/tmp"))
    try:
        (home / "secret.txt").write_text("hidden\n")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
        monkeypatch.setenv("HOME", str(home))
        box = BubblewrapSandbox(python=str(home / "venv" / "bin" / "python"))
        code = f"import sys, os\nprint(sys.prefix)\nprint(os.path.exists({str(home / 'secret.txt')!r}))"
        result = box.run_sync(code, "python", tmp_path)
    finally:
        import shutil

        shutil.rmtree(home, ignore_errors=True)
    assert result.output.split() == [str(home / "venv"), "False"], result.output
    assert result.exit_code == 0


@pytest.mark.parametrize("argv", [["git", "--version"], ["node", "-e", "require('fs').readdir('.', () => {})"],
                                  ["java", "-version"]], ids=["git", "node", "java"])
def test_common_tools_run_in_the_strict_box(argv: list[str], tmp_path: Path) -> None:
    """The seccomp filter and the limits must not break ordinary toolchains (node's libuv probes io_uring, a JVM
    reserves gigabytes of address space)."""
    import shutil

    from tomo.sandbox.cgroup import Cgroups

    require_bwrap()
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed here")
    if argv[0] == "java":
        made, why = Cgroups.create(1, 1024 * 1024)
        bounded = made is not None and made.bounds_memory
        if made is not None:
            made.remove()
        if not bounded:
            pytest.skip(f"without a memory cgroup the address-space limit applies, and a JVM needs more ({why})")
    result = make_sandbox("strict").run_sync(argv, "argv", tmp_path)
    assert result.exit_code == 0, result.output


def test_too_old_bubblewrap_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "bwrap"  # stands in for Ubuntu 22.04's bubblewrap, which lacks --disable-userns
    old.write_text("#!/bin/sh\necho 'bubblewrap 0.6.1'\n")
    old.chmod(0o755)
    with pytest.raises(SandboxError, match=r"bubblewrap 0\.6\.1 .* too old") as info:
        make_sandbox("strict", bwrap=str(old))
    assert "--sandbox local" in info.value.hint


def test_home_cannot_be_the_workspace(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Binding $HOME as the workspace would undo hiding it (and hand the code ~/.ssh): the strict box refuses."""
    require_bwrap()
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    box = BubblewrapSandbox()
    for workspace in (home, tmp_path):
        with pytest.raises(SandboxError, match="contains the home directory") as info:
            box.run_sync("true", "shell", workspace)
        assert "--root" in info.value.hint
    assert box.run_sync("pwd", "shell", home / "project").output == f"{home / 'project'}\n"
