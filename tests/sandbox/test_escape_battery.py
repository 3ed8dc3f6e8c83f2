"""The escape battery: code in the strict box tries to get out, and every attempt must be contained.

Each test runs real code in a real bubblewrap box and then checks the *host* (a file that must not exist, a process
that must still be alive, a server that must have seen no connection, a marker that must not be in /proc), not only
what the box printed. Some cases also run the same attempt in the local box to prove the attempt itself works, so a
contained result means the box contained it. Tests never aim at any address outside this machine's loopback.
"""

from __future__ import annotations

import os
import platform
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import SMALL, processes_with, require_bwrap

from tomo.sandbox import BubblewrapSandbox, LocalSandbox
from tomo.sandbox.cgroup import Cgroups

SRC = Path(__file__).resolve().parents[2] / "src"

# ---- writing outside the workspace -------------------------------------------------------------------------------


async def test_cannot_write_etc(strict: BubblewrapSandbox, repo: Path) -> None:
    name = f"/etc/tomo-escape-{secrets.token_hex(4)}"
    result = await strict.run(f"echo pwned > {name}", "shell", repo / "ws")
    assert result.exit_code != 0
    assert "Read-only file system" in result.output
    assert not Path(name).exists()


async def test_cannot_modify_an_existing_system_file(strict: BubblewrapSandbox, repo: Path) -> None:
    before = Path("/etc/hostname").read_bytes() if Path("/etc/hostname").exists() else None
    result = await strict.run("echo pwned >> /etc/hostname; echo pwned >> /etc/passwd", "shell", repo / "ws")
    assert result.exit_code != 0
    assert "pwned" not in Path("/etc/passwd").read_text()
    if before is not None:
        assert Path("/etc/hostname").read_bytes() == before


async def test_cannot_write_home(strict: BubblewrapSandbox, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = repo / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    box = BubblewrapSandbox(SMALL)
    await box.run(f"echo pwned > {home}/.bashrc; mkdir -p {home}/.ssh && echo key > {home}/.ssh/authorized_keys",
                  "shell", repo / "ws")
    assert list(home.iterdir()) == []


# The most privilege code can get without a box: as root, the host as it is; as anyone else, root of a user namespace
# of its own, with every capability there. bwrap makes that namespace, so it works wherever the strict box does.
NAMESPACE_ROOT = ("--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL", "--bind", "/", "/",
                  "--dev-bind", "/dev", "/dev", "--proc", "/proc")


def every_way(command: str) -> str:
    """``command`` as it is, then as root of a user namespace of its own: the attempt at its strongest, whoever runs
    it. The box gets the same line, so it must stop both."""
    return f"{command}; {shlex.join(['bwrap', *NAMESPACE_ROOT, 'sh', '-c', command])}"


async def unconfined_control(local: LocalSandbox, command: str, ws: Path, succeeded: str) -> None:
    """Runs ``command`` (every way, see :func:`every_way`) with nothing confining it and requires ``succeeded`` in its
    output: only an attempt that works unconfined proves, by failing in the box, that the box stopped it. As root the
    plain attempt works; without root, the user namespace's capabilities make it work (chroot) -- so the proof needs
    no root, and a failure here is a failure, never a skip."""
    control = await local.run(every_way(command), "shell", ws)
    assert succeeded in control.output, (f"the attempt does not work even unconfined (uid {os.geteuid()}), so its "
                                         f"failure in the box would prove nothing: {control.output.strip()[-300:]!r}")


def writable_home(monkeypatch: pytest.MonkeyPatch, spare: Path) -> Path:
    """A home directory the caller can really write and the box must hide: root's /root, else the caller's own
    (``~``; a fresh one under ``spare`` when that is not writable, as for a service account)."""
    if os.geteuid() == 0:
        return Path("/root")
    home = Path(os.path.realpath(Path.home()))
    if home != Path("/") and os.access(home, os.W_OK):
        return home
    spare.mkdir()
    monkeypatch.setenv("HOME", str(spare))
    return spare


async def test_cannot_write_a_home_directory(strict: BubblewrapSandbox, local: LocalSandbox, repo: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The box lays an empty tmpfs over /root and the caller's home. Written unconfined first (root's /root as root,
    the caller's own home otherwise), so the file's absence after the box's attempt is the box's doing."""
    home = writable_home(monkeypatch, repo / "home")
    control = home / f"tomo-control-{secrets.token_hex(4)}"
    try:
        await unconfined_control(local, f"echo pwned > {control} && echo WROTE", repo / "ws", "WROTE")
        assert control.read_text() == "pwned\n"
    finally:
        control.unlink(missing_ok=True)
    name = f"tomo-escape-{secrets.token_hex(4)}"
    result = await strict.run(every_way(f"echo pwned > {home}/{name}"), "shell", repo / "ws")
    assert not (home / name).exists(), result.output  # the box's home is its own: nothing reaches the host's


async def test_cannot_write_the_repo_above_the_workspace(strict: BubblewrapSandbox, repo: Path) -> None:
    result = await strict.run("echo pwned > ../escape.txt; echo pwned > ../setup.py; rm -f ../setup.py",
                              "shell", repo / "ws")
    assert "Read-only file system" in result.output
    assert not (repo / "escape.txt").exists()
    assert (repo / "setup.py").read_text() == "ORIGINAL\n"


async def test_cannot_write_through_a_symlink(strict: BubblewrapSandbox, repo: Path) -> None:
    ws = repo / "ws"
    (ws / "up").symlink_to(repo)
    (ws / "etc").symlink_to("/etc")
    result = await strict.run("echo pwned > up/via-link.txt; echo pwned > etc/via-link.txt", "shell", ws)
    assert result.exit_code != 0
    assert not (repo / "via-link.txt").exists()
    assert not Path("/etc/via-link.txt").exists()


async def test_cannot_write_through_proc_self_root(strict: BubblewrapSandbox, repo: Path) -> None:
    result = await strict.run(
        f"echo pwned > /proc/self/root{repo}/proc-root.txt; echo pwned > /proc/1/root{repo}/proc-root.txt",
        "shell", repo / "ws",
    )
    assert result.exit_code != 0
    assert not (repo / "proc-root.txt").exists()


async def test_every_top_level_directory_is_read_only(strict: BubblewrapSandbox, repo: Path) -> None:
    code = (
        "import os\n"
        "skip = {'tmp', 'proc', 'dev', 'root'}\n"
        "for d in sorted(os.listdir('/')):\n"
        "    p = os.path.join('/', d)\n"
        "    if d in skip or not os.path.isdir(p) or os.path.islink(p):\n"
        "        continue\n"
        "    try:\n"
        "        open(os.path.join(p, '.tomo-probe'), 'w').close(); print('WROTE', p)\n"
        "    except OSError as e:\n"
        "        print('denied', p, e.errno)\n"
    )
    result = await strict.run(code, "python", repo / "ws")
    assert result.exit_code == 0, result.output
    assert "WROTE" not in result.output
    assert "denied /etc" in result.output and "denied /usr" in result.output


async def test_cannot_write_cgroup_files(strict: BubblewrapSandbox, repo: Path) -> None:
    result = await strict.run("echo $$ > /sys/fs/cgroup/pids/cgroup.procs || echo $$ > /sys/fs/cgroup/cgroup.procs; "
                              "echo max > /sys/fs/cgroup/pids/pids.max", "shell", repo / "ws")
    assert result.exit_code != 0
    assert "Read-only file system" in result.output or "Permission denied" in result.output


# ---- reading secrets ---------------------------------------------------------------------------------------------


async def test_home_is_hidden(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_bwrap()
    home = repo / "home"
    home.mkdir()
    (home / ".netrc").write_text("machine example password hunter2\n")
    monkeypatch.setenv("HOME", str(home))
    result = await BubblewrapSandbox(SMALL).run(f"ls -A {home} | wc -l; cat {home}/.netrc", "shell", repo / "ws")
    assert "hunter2" not in result.output
    assert result.output.splitlines()[0] == "0"


async def test_root_home_is_hidden(strict: BubblewrapSandbox, repo: Path) -> None:
    result = await strict.run("ls -A /root | grep -v '^.pyenv$' | wc -l", "shell", repo / "ws")
    assert result.output.strip() == "0"  # only the interpreter, re-bound read-only when it lives under /root


async def test_parent_environment_is_not_passed(strict: BubblewrapSandbox, repo: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    secret = secrets.token_hex(12)
    monkeypatch.setenv("TOMO_BATTERY_SECRET", secret)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    result = await strict.run("env; cat /proc/self/environ | tr '\\0' '\\n'", "shell", repo / "ws")
    assert secret not in result.output
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "TERM", "USER", "PWD", "SHLVL", "_", "OLDPWD"}


async def test_host_init_environment_is_unreadable(strict: BubblewrapSandbox, repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    secret = secrets.token_hex(12)
    monkeypatch.setenv("TOMO_BATTERY_SECRET", secret)
    result = await strict.run("cat /proc/1/cmdline | tr '\\0' ' '; echo; cat /proc/1/environ; "
                              f"cat /proc/{os.getpid()}/environ", "shell", repo / "ws")
    assert secret not in result.output
    assert result.output.split()[0].endswith("bwrap")  # pid 1 is the box's own init, not the host's


@pytest.mark.skipif(os.geteuid() != 0, reason="only a box started by root shares root's file identity")
async def test_root_only_files_are_masked(strict: BubblewrapSandbox, repo: Path) -> None:
    result = await strict.run("cat /etc/shadow; echo; wc -c < /etc/shadow", "shell", repo / "ws")
    assert "root:" not in result.output


# ---- the network -------------------------------------------------------------------------------------------------


@pytest.fixture
def loopback_server() -> Iterator[tuple[int, list[str]]]:
    """A TCP server on the host's 127.0.0.1 that records every connection it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    seen: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen.append("connection")
            conn.sendall(b"hello from the host\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join()
    server.close()


CONNECT = (
    "import socket, sys\n"
    "s = socket.socket(); s.settimeout(1)\n"
    "try:\n"
    "    s.connect(('127.0.0.1', {port})); print('CONNECTED', s.recv(100))\n"
    "except OSError as e:\n"
    "    print('refused', e)\n"
)


async def test_host_loopback_server_is_unreachable(strict: BubblewrapSandbox, local: LocalSandbox, ws: Path,
                                                   loopback_server: tuple[int, list[str]]) -> None:
    port, seen = loopback_server
    control = await local.run(CONNECT.format(port=port), "python", ws)
    assert "CONNECTED" in control.output and len(seen) == 1  # the attempt works when nothing confines it
    result = await strict.run(CONNECT.format(port=port), "python", ws)
    assert "refused" in result.output
    assert len(seen) == 1


async def test_only_loopback_interface(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run(
        "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))\n"
        "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))", "python", ws)
    assert result.output.split() == ["['lo']", "['lo']"]


async def test_host_abstract_unix_socket_is_unreachable(strict: BubblewrapSandbox, ws: Path) -> None:
    name = f"\0tomo-battery-{secrets.token_hex(4)}"
    server = socket.socket(socket.AF_UNIX)
    server.bind(name)
    server.listen()
    try:
        code = ("import socket\ns = socket.socket(socket.AF_UNIX)\n"
                f"try:\n    s.connect({name!r}); print('CONNECTED')\nexcept OSError as e:\n    print('refused', e)")
        result = await strict.run(code, "python", ws)
    finally:
        server.close()
    assert "refused" in result.output


async def test_outbound_connection_has_no_route(strict: BubblewrapSandbox, ws: Path) -> None:
    # The only address used is the box's own view of a loopback alias; nothing leaves this machine either way.
    result = await strict.run("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                              "try:\n    s.connect(('127.0.0.2', 9)); print('ok', s.getsockname())\n"
                              "except OSError as e:\n    print('err', e)\n"
                              "print(open('/proc/net/route').read().count('\\n'))", "python", ws)
    assert result.output.strip().splitlines()[-1] == "1"  # the routing table is only its header: no default route


# ---- privileges --------------------------------------------------------------------------------------------------


async def test_cannot_remount_root_read_write(strict: BubblewrapSandbox, repo: Path) -> None:
    result = await strict.run(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.mount(None, b'/', None, 32 | 4096, None)\n"  # MS_REMOUNT | MS_BIND
        "print('mount', r, os.strerror(ctypes.get_errno()))\n"
        "try:\n    open('/etc/tomo-remount', 'w'); print('WROTE')\nexcept OSError as e:\n    print('denied', e)",
        "python", repo / "ws")
    assert "mount -1" in result.output and "WROTE" not in result.output
    assert not Path("/etc/tomo-remount").exists()


async def test_cannot_mount_anything(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("mkdir m; mount -t tmpfs none m; mount --bind / m; mount -o remount,rw /", "shell", ws)
    assert result.exit_code != 0
    assert not os.path.ismount(ws / "m")


async def test_cannot_create_a_user_namespace(strict: BubblewrapSandbox, local: LocalSandbox, ws: Path) -> None:
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "r = libc.unshare(0x10000000)\nprint('unshare', r, os.strerror(ctypes.get_errno()))")  # CLONE_NEWUSER
    result = await strict.run(code, "python", ws)
    assert "unshare -1" in result.output
    shell = await strict.run("unshare --user --map-root-user id -u", "shell", ws)
    assert shell.exit_code != 0


async def test_no_capabilities_and_no_new_privileges(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Uid)' /proc/self/status", "shell", ws)
    fields = dict(line.split(":", 1) for line in result.output.strip().splitlines())
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(fields[cap].strip(), 16) == 0, cap
    assert fields["NoNewPrivs"].strip() == "1"
    assert fields["Uid"].split()[0] == "65534"


async def test_cannot_setuid_to_root(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("import os\ntry:\n    os.setuid(0); print('ROOT')\nexcept OSError as e:\n"
                              "    print('denied', e)\nprint(os.getuid(), os.geteuid())", "python", ws)
    assert "ROOT" not in result.output
    assert result.output.strip().endswith("65534 65534")


async def test_cannot_chroot(strict: BubblewrapSandbox, local: LocalSandbox, ws: Path) -> None:
    """chroot needs CAP_SYS_CHROOT: root has it, and anyone gets it in a user namespace of their own, so the control
    works for every caller; in the box neither way does (no capabilities, no nested user namespace)."""
    await unconfined_control(local, "chroot / /bin/true && echo CHROOTED", ws, "CHROOTED")
    result = await strict.run(every_way("chroot / /bin/true && echo CHROOTED"), "shell", ws)
    assert "CHROOTED" not in result.output
    assert result.exit_code != 0


async def test_cannot_mknod(strict: BubblewrapSandbox, local: LocalSandbox, ws: Path) -> None:
    """A device node (kernel memory, a disk) needs CAP_MKNOD in the host's own user namespace, which only root holds.
    The box is tried first, whoever runs the test. As root, the control then makes the nodes unconfined, so the box's
    refusal is the box's. Without root the kernel refuses them to the caller even with a user namespace's every
    capability, and the box, started by the caller (bwrap not setuid), can hold no more: that is proven instead."""
    attempt = "mknod ./{d}/mem c 1 1 && echo MADE; mknod ./{d}/sda b 8 0 && echo MADE"
    (ws / "box").mkdir()
    result = await strict.run(every_way(attempt.format(d="box")), "shell", ws)
    assert "MADE" not in result.output
    assert list((ws / "box").iterdir()) == []
    (ws / "control").mkdir()
    if os.geteuid() == 0:
        await unconfined_control(local, attempt.format(d="control"), ws, "MADE")
        assert (ws / "control" / "mem").is_char_device() and (ws / "control" / "sda").is_block_device()
        return
    control = await local.run(every_way(attempt.format(d="control")), "shell", ws)
    assert "MADE" not in control.output and control.output.count("Operation not permitted") == 4, control.output
    bwrap = shutil.which("bwrap")
    assert bwrap is not None and not os.stat(bwrap).st_mode & stat.S_ISUID, (
        f"{bwrap} is setuid: the box starts with root's privileges, which only a run as root can show it drops")


async def test_no_block_devices_or_kernel_memory(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("find /dev -type b | wc -l; ls /dev/mem /dev/kmem /dev/port 2>&1 | grep -c 'No such'",
                              "shell", ws)
    assert result.output.split() == ["0", "3"]


async def test_cannot_write_proc_sys(strict: BubblewrapSandbox, ws: Path) -> None:
    before = Path("/proc/sys/kernel/hostname").read_text()
    result = await strict.run("echo pwned > /proc/sys/kernel/hostname; echo 1 > /proc/sys/vm/drop_caches; "
                              "echo b > /proc/sysrq-trigger; hostname pwned", "shell", ws)
    assert result.exit_code != 0
    assert Path("/proc/sys/kernel/hostname").read_text() == before


# ---- other processes ---------------------------------------------------------------------------------------------


async def test_cannot_see_or_signal_host_processes(strict: BubblewrapSandbox, ws: Path,
                                                   sentinel: subprocess.Popen[bytes]) -> None:
    result = await strict.run(f"kill -9 {sentinel.pid}; kill -9 {os.getpid()}; ps -e -o pid= | wc -l", "shell", ws)
    assert sentinel.poll() is None  # still alive
    assert int(result.output.split()[-1]) <= 5  # the box sees only itself


async def test_cannot_ptrace_a_host_process(strict: BubblewrapSandbox, ws: Path,
                                            sentinel: subprocess.Popen[bytes]) -> None:
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"r = libc.ptrace(16, {sentinel.pid}, 0, 0)\n"  # PTRACE_ATTACH
            "print('ptrace', r, os.strerror(ctypes.get_errno()))")
    result = await strict.run(code, "python", ws)
    assert "ptrace -1" in result.output
    status = Path(f"/proc/{sentinel.pid}/status").read_text()
    assert "TracerPid:\t0" in status
    assert sentinel.poll() is None


# ---- resources ---------------------------------------------------------------------------------------------------


async def test_fork_bomb_is_contained(strict: BubblewrapSandbox, ws: Path) -> None:
    marker = f"bomb{secrets.token_hex(4)}"
    result = await strict.run(f"b{marker}() {{ b{marker} | b{marker} & }}; b{marker}; sleep 30", "shell", ws,
                              SMALL.with_(timeout_s=2))
    assert processes_with(marker) == []
    assert any("process limit (64)" in n for n in result.notes), result.notes


FORK_LOOP = (
    "import os, time\nn = 0\nfor _ in range(500):\n    try:\n        pid = os.fork()\n"
    "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30); os._exit(0)\n    n += 1\n"
    "print('forked', n)"
)


async def test_fork_count_stops_at_the_pids_limit(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run(FORK_LOOP, "python", ws)
    if "forked" in result.output:  # a cgroup refused the forks past the limit
        assert int(result.output.split()[-1]) < SMALL.max_pids
        assert any("process limit (64) refused" in n for n in result.notes)
    else:  # no cgroup here: the watchdog killed the run
        assert any("process limit (64) was exceeded" in n for n in result.notes), result.notes


async def test_without_cgroups_the_pids_watchdog_kills_the_run(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_bwrap()
    from tomo.sandbox import cgroup

    monkeypatch.setattr(cgroup, "ROOT", ws / "no-cgroupfs")  # as on a machine where tomo cannot make cgroups
    marker = f"m{secrets.token_hex(6)}"
    result = await BubblewrapSandbox(SMALL).run(FORK_LOOP.replace("time.sleep(30)", f"os.execvp('sh', ['sh', '-c', "
                                                                  f"'sleep 30; : {marker}'])"), "python", ws)
    assert "forked" not in result.output
    assert any("no cgroup limits" in n for n in result.notes)
    assert any("process limit (64) was exceeded" in n for n in result.notes), result.notes
    assert processes_with(marker) == []


async def test_memory_hog_is_stopped(strict: BubblewrapSandbox, ws: Path) -> None:
    # Touch every page: the memory cgroup counts real use (OOM kill); without one, RLIMIT_AS refuses the allocation.
    result = await strict.run("b = bytearray(2 * 1024**3)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n"
                              "print('ALLOCATED')", "python", ws)
    assert "ALLOCATED" not in result.output
    assert result.exit_code != 0
    assert "MemoryError" in result.output or any("memory limit (512 MiB) killed" in n for n in result.notes)


async def test_memory_hog_without_cgroups_meets_the_address_space_limit(ws: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    require_bwrap()
    from tomo.sandbox import cgroup

    monkeypatch.setattr(cgroup, "ROOT", ws / "no-cgroupfs")
    result = await BubblewrapSandbox(SMALL).run("x = bytearray(2 * 1024**3)\nprint('ALLOCATED')", "python", ws)
    assert "ALLOCATED" not in result.output and "MemoryError" in result.output


async def test_memory_hog_across_processes_hits_the_cgroup(strict: BubblewrapSandbox, ws: Path) -> None:
    cgroups, why = Cgroups.create(8, 64 * 1024 * 1024)
    if cgroups is None or (len(cgroups.dirs) < 2 and cgroups.version == "v1"):
        pytest.skip(f"no memory cgroup on this machine ({why or 'memory controller not mounted'}); "
                    "each process is still bounded by RLIMIT_AS")
    cgroups.remove()
    # Each process stays under RLIMIT_AS (512 MiB) but together they want 4 x 200 MiB against a 256 MiB cgroup.
    code = ("import os\nfor _ in range(3):\n    if os.fork() == 0:\n        break\n"
            "b = bytearray(200 * 1024**2)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nprint('done')")
    result = await strict.run(code, "python", ws, SMALL.with_(memory_bytes=256 * 1024 * 1024))
    assert result.output.count("done") < 4
    assert any("memory limit" in n for n in result.notes), result.notes


async def test_cpu_spin_is_stopped_by_the_cpu_limit(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("while True: pass", "python", ws, SMALL.with_(cpu_s=1, timeout_s=30))
    assert not result.timed_out
    assert result.exit_code in (128 + signal.SIGXCPU, 128 + signal.SIGKILL)
    assert any("CPU-time limit" in n or "SIGKILL" in n for n in result.notes)


async def test_wall_clock_timeout(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("echo started; sleep 60", "shell", ws, SMALL.with_(timeout_s=1))
    assert result.timed_out and result.exit_code == 124
    assert result.output == "started\n"
    assert "timed out after 1 s" in result.notes[0]


async def test_infinite_output_is_capped(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("yes tomo", "shell", ws, SMALL.with_(timeout_s=1, output_bytes=1000))
    assert result.timed_out and result.truncated
    assert result.total_bytes > 100_000
    assert len(result.output) < 1300
    assert result.output.startswith("tomo\ntomo\n") and result.output.endswith("tomo\n")
    assert "bytes in the middle were dropped" in result.output


async def test_setsid_child_does_not_outlive_the_timeout(strict: BubblewrapSandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"
    result = await strict.run(f"setsid sh -c 'sleep 60; : {marker}' & sleep 0.2; echo up; sleep 60", "shell", ws,
                              SMALL.with_(timeout_s=1))
    assert result.timed_out and "up" in result.output
    assert processes_with(marker) == []


async def test_daemon_is_not_left_behind_after_a_normal_exit(strict: BubblewrapSandbox, ws: Path) -> None:
    marker = f"m{secrets.token_hex(6)}"
    result = await strict.run(f"(setsid nohup sh -c 'sleep 60; : {marker}' >/dev/null 2>&1 &); echo left", "shell", ws)
    assert result.exit_code == 0 and not result.timed_out
    assert processes_with(marker) == []


async def test_huge_file_is_stopped_by_the_file_size_limit(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("head -c 50000000 /dev/zero > big.bin", "shell", ws)
    assert result.exit_code != 0
    assert (ws / "big.bin").stat().st_size <= SMALL.file_size_bytes


async def test_open_files_are_limited(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("fs = []\ntry:\n    while True: fs.append(open('/dev/null'))\n"
                              "except OSError as e:\n    print(len(fs), e.errno)", "python", ws)
    opened, errno = result.output.split()
    assert int(opened) < SMALL.open_files and errno == "24"  # EMFILE


# ---- what must still work ----------------------------------------------------------------------------------------


async def test_workspace_is_writable_and_files_persist(strict: BubblewrapSandbox, repo: Path) -> None:
    ws = repo / "ws"
    first = await strict.run("mkdir -p out && echo kept > out/result.txt", "shell", ws)
    assert first.exit_code == 0
    assert (ws / "out" / "result.txt").read_text() == "kept\n"
    second = await strict.run("cat out/result.txt", "shell", ws)
    assert second.output == "kept\n"


async def test_private_tmp_does_not_persist(strict: BubblewrapSandbox, ws: Path) -> None:
    await strict.run("echo one > /tmp/scratch", "shell", ws)
    result = await strict.run("cat /tmp/scratch", "shell", ws)
    assert result.exit_code != 0


async def test_python_runs_and_exit_codes_propagate(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("import sys, json\nprint(json.dumps({'ok': sum(range(10))}))\nsys.exit(3)", "python", ws)
    assert result.output == '{"ok": 45}\n' and result.exit_code == 3
    shell = await strict.run("exit 42", "shell", ws)
    assert shell.exit_code == 42


async def test_output_cap_keeps_head_and_tail(strict: BubblewrapSandbox, ws: Path) -> None:
    result = await strict.run("seq 1 100000", "shell", ws, SMALL.with_(output_bytes=2000))
    lines = result.output.splitlines()
    assert lines[0] == "1" and lines[-1] == "100000"
    assert result.truncated and not result.timed_out and result.exit_code == 0
    assert any(line.startswith("[output cut:") for line in lines)


def test_premise_without_unshare_user_root_can_remount(repo: Path) -> None:
    """Why the flag set is mandatory: the same box without --unshare-user, started by root, turns a read-only bind
    back to read-write and writes through it (aimed at a scratch directory, so no real file is touched); tomo's box,
    started the same way, cannot. Without root, "started by root" is started by root of a user namespace of the
    caller's own (NAMESPACE_ROOT): the capabilities that make the remount work are the same, only scoped to it."""
    require_bwrap()
    target = repo / "ws"
    as_root = [] if os.geteuid() == 0 else ["bwrap", *NAMESPACE_ROOT]
    argv = [*as_root, "bwrap", "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev",
            "/dev", "--proc", "/proc", "--ro-bind", str(target), str(target), "sh", "-c",
            f"mount -o remount,bind,rw {target} && echo escaped > {target}/proof"]
    premise = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert (target / "proof").read_text() == "escaped\n", premise.stderr
    (target / "proof").unlink()
    box = (f"from pathlib import Path\nfrom tomo.sandbox import BubblewrapSandbox, Limits\n"
           f"r = BubblewrapSandbox(Limits(timeout_s=10)).run_sync("
           f"'mount -o remount,bind,rw {target}; echo escaped > {target}/../proof2', 'shell', Path('{target}'))\n"
           "print('exit', r.exit_code)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([*as_root, sys.executable, "-c", box], capture_output=True, text=True, timeout=60,
                            env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] != ["exit", "0"] and not (repo / "proof2").exists(), result.stdout


@pytest.mark.skipif(platform.machine() != "x86_64", reason="tomo's seccomp table is for x86-64 only")
async def test_kernel_attack_surface_syscalls_are_refused(strict: BubblewrapSandbox, ws: Path) -> None:
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nbuf = ctypes.create_string_buffer(120)\n"
        "for name, nr, args in [('io_uring_setup', 425, (8, buf)), ('keyctl', 250, (0, -3, 0)),\n"
        "                       ('bpf', 321, (0, 0, 0)), ('userfaultfd', 323, (0,)), ('x32', 0x40000000 + 39, ()),\n"
        "                       ('getpid', 39, ())]:\n"
        "    r = libc.syscall(nr, *args)\n"
        "    print(name, 'errno', ctypes.get_errno() if r < 0 else 'none')"
    )
    result = await strict.run(code, "python", ws)
    lines = dict(line.split(" ", 1) for line in result.output.strip().splitlines())
    for name in ("io_uring_setup", "keyctl", "bpf", "userfaultfd", "x32"):
        assert lines[name] == "errno 1", (name, result.output)  # EPERM: the filter's answer
    assert lines["getpid"] == "errno none"  # ordinary calls are untouched
