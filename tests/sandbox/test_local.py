"""The local box: unconfined on purpose, but its limits, its output cap and its cleanup are real."""

from __future__ import annotations

import os
import secrets
import signal
from pathlib import Path

import pytest
from sandbox_support import SMALL, processes_with, wait_for_process

from tomo.errors import SandboxError
from tomo.sandbox import Limits, LocalSandbox
from tomo.sandbox.cgroup import Cgroups


async def test_runs_shell_and_python_in_the_workspace(local: LocalSandbox, ws: Path) -> None:
    shell = await local.run("pwd; echo out; echo err >&2; exit 5", "shell", ws)
    assert shell.exit_code == 5 and shell.output == f"{ws}\nout\nerr\n" and shell.ok is False
    py = await local.run("print(6 * 7)", "py", ws)
    assert py.output == "42\n" and py.exit_code == 0 and py.ok


async def test_argv_lists_run_without_a_shell(local: LocalSandbox, ws: Path) -> None:
    result = await local.run(["printf", "%s|", "a b", "$HOME"], "argv", ws)
    assert result.output == "a b|$HOME|"


async def test_environment_is_inherited(local: LocalSandbox, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMO_LOCAL_VISIBLE", "yes")
    result = await local.run("echo $TOMO_LOCAL_VISIBLE", "shell", ws)
    assert result.output == "yes\n"


async def test_rlimits_apply(local: LocalSandbox, ws: Path) -> None:
    result = await local.run("ulimit -v; ulimit -f; ulimit -n; ulimit -t; ulimit -c", "bash", ws)
    memory_cgroup, _ = Cgroups.create(1, 1024 * 1024)
    bounded = memory_cgroup is not None and memory_cgroup.bounds_memory
    if memory_cgroup is not None:
        memory_cgroup.remove()
    # with a memory cgroup bounding the tree there is no address-space limit (it breaks JVMs and counts nothing real)
    address_space = "unlimited" if bounded else str(SMALL.memory_bytes // 1024)
    assert result.output.split() == [address_space, str(SMALL.file_size_bytes // 1024), str(SMALL.open_files),
                                     str(SMALL.cpu_s), "0"]


async def test_without_a_memory_cgroup_the_address_space_is_limited(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tomo.sandbox import cgroup

    monkeypatch.setattr(cgroup, "ROOT", ws / "no-cgroupfs")
    result = await LocalSandbox(SMALL).run("ulimit -v", "bash", ws)
    assert result.output.split() == [str(SMALL.memory_bytes // 1024)]


async def test_huge_file_is_stopped(local: LocalSandbox, ws: Path) -> None:
    result = await local.run("head -c 5000000 /dev/zero > big", "shell", ws)
    assert result.exit_code != 0 and (ws / "big").stat().st_size <= SMALL.file_size_bytes


async def test_timeout_kills_a_setsid_grandchild(local: LocalSandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"
    result = await local.run(f"(setsid sh -c 'sleep 60; : {marker}' &); sleep 60", "shell", ws,
                             SMALL.with_(timeout_s=1))
    assert result.timed_out and result.exit_code == 124
    assert processes_with(marker) == []


async def test_nothing_is_left_after_a_normal_exit(local: LocalSandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"
    result = await local.run(f"(setsid nohup sh -c 'sleep 60; : {marker}' >/dev/null 2>&1 &); "
                             f"sh -c 'sleep 60; : {marker}' & echo bye", "shell", ws)
    assert result.exit_code == 0 and result.output == "bye\n"
    assert processes_with(marker) == []


async def test_cpu_limit(local: LocalSandbox, ws: Path) -> None:
    result = await local.run("while True: pass", "python", ws, SMALL.with_(cpu_s=1, timeout_s=30))
    assert result.exit_code == 128 + signal.SIGXCPU and not result.timed_out
    assert "CPU-time limit (1 s of CPU)" in result.notes[0]


async def test_cancelled_run_leaves_nothing(local: LocalSandbox, ws: Path) -> None:
    import asyncio

    marker = f"m{secrets.token_hex(6)}"
    task = asyncio.create_task(local.run(f"sh -c 'sleep 60; : {marker}'", "shell", ws))
    assert await wait_for_process(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert processes_with(marker) == []


async def test_missing_program_is_exit_127(local: LocalSandbox, ws: Path) -> None:
    result = await local.run(["no-such-program-tomo"], "argv", ws)
    assert result.exit_code == 127 and "cannot run 'no-such-program-tomo'" in result.output


def test_bad_inputs_are_clear_errors(local: LocalSandbox, ws: Path) -> None:
    with pytest.raises(SandboxError, match="cannot run language 'cobol'") as info:
        local.run_sync("x", "cobol", ws)
    assert "use one of" in info.value.hint
    with pytest.raises(SandboxError, match="does not exist"):
        local.run_sync("true", "shell", ws / "missing")
    with pytest.raises(SandboxError, match="cannot be /"):
        local.run_sync("true", "shell", "/")
    with pytest.raises(SandboxError, match="empty command"):
        local.run_sync([], "argv", ws)
    with pytest.raises(SandboxError, match="at most"):
        local.run_sync("#" * 200_000, "python", ws)
    with pytest.raises(SandboxError, match="timeout must be positive"):
        Limits(timeout_s=0)


def test_sync_helper_from_a_plain_function(ws: Path) -> None:
    result = LocalSandbox(Limits(timeout_s=10)).run_sync(["sh", "-c", "echo $$ > pid; echo done"], "argv", ws)
    assert result.output == "done\n"
    assert not Path(f"/proc/{(ws / 'pid').read_text().strip()}").exists() or os.getpid() == 1


async def test_without_cgroups_the_run_says_so_once(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tomo.sandbox import cgroup

    monkeypatch.setattr(cgroup, "ROOT", ws / "no-cgroupfs")
    box = LocalSandbox(SMALL)
    first = await box.run("echo one", "shell", ws)
    second = await box.run("echo two", "shell", ws)
    assert first.output == "one\n" and second.output == "two\n"
    assert any(n.startswith("no cgroup limits") for n in first.notes)
    assert not any(n.startswith("no cgroup limits") for n in second.notes)
    assert box.cgroups_unavailable and "no cgroup pids controller" in box.cgroups_unavailable


async def test_runs_in_its_own_session_and_process_group(local: LocalSandbox, ws: Path) -> None:
    result = await local.run("import os\nprint(os.getsid(0), os.getpgid(0), os.getppid())", "python", ws)
    sid, pgid, parent = (int(x) for x in result.output.split())
    assert sid != os.getsid(0) and pgid != os.getpgid(0)
    assert sid == pgid == parent  # the launcher leads both, and is the command's parent (the subreaper)


async def test_a_failing_output_callback_still_cleans_up(local: LocalSandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"

    def broken(chunk: bytes) -> None:
        raise BrokenPipeError("the reader went away")

    with pytest.raises(BrokenPipeError):
        await local.run(f"sh -c 'sleep 60; : {marker}' & echo hi; sleep 60", "shell", ws, on_output=broken)
    assert processes_with(marker) == []
