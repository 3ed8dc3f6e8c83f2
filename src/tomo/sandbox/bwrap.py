"""The strict sandbox: bubblewrap with a read-only root, a writable workspace, no network and no capabilities.

The flag set is not negotiable. Without ``--unshare-user`` a box started by root keeps its capabilities and can
remount / read-write; ``--disable-userns`` stops the code from making a new user namespace to get them back;
``--unshare-all`` gives it its own pid, network, ipc, uts and cgroup namespaces (so it sees only its own processes and
only a loopback interface); ``--die-with-parent`` and the pid namespace mean killing bwrap kills everything inside.

Two things bubblewrap cannot do alone, done here:
- limits: rlimits are set on bwrap before exec (inherited by everything inside), and a per-run cgroup bounds pids
  and memory where the machine lets tomo create one (RLIMIT_NPROC is useless when tomo runs as root, see cgroup.py);
- root's files: a box started by root runs as uid 65534 *inside*, but that uid maps to root outside, so it can read
  files root owns and may read (not write: / is read-only). $HOME and /root are hidden; known secret files
  (/etc/shadow and friends) are masked too. Run tomo as an ordinary user to remove the rest of that exposure.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tomo.errors import SandboxError
from tomo.sandbox.base import Launch, Sandbox, kill_group, rlimits_for
from tomo.sandbox.model import Limits
from tomo.sandbox.running import Running
from tomo.sandbox.seccomp import DENIED_X86_64, deny_program

BOX_UID = 65534
BOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Files only root may read, masked with /dev/null when the box runs with root's file identity.
SECRET_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/security/opasswd")
SECRET_DIRS = ("/etc/sudoers.d", "/etc/ssl/private", "/var/lib/sudo")
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`), "
    "or choose the unconfined box explicitly with `--sandbox local` ([sandbox] kind = \"local\" in tomo.toml)"
)
# Run in the box instead of a program that is on none of its PATH directories (the box sees the host's root).
MISSING_PROGRAM = ["/bin/sh", "-c",
                   "printf \"tomo: cannot run '%s': No such file or directory\\n\" \"$0\" >&2; exit 127"]

MIN_VERSION = (0, 8, 0)  # --disable-userns


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def bwrap_version(bwrap: str) -> tuple[int, ...]:
    """``bwrap --version`` as numbers (cached: it does not change while tomo runs)."""
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"cannot run {bwrap} --version: {exc}", hint=INSTALL_HINT) from exc
    words = out.split()
    numbers = words[-1].split(".") if words else []
    return tuple(int(n) for n in numbers if n.isdigit())


class BubblewrapSandbox(Sandbox):
    name = "strict"

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        use_cgroups: bool = True,
        python: str | None = None,
        bwrap: str | None = None,
        ro_paths: Sequence[str] = (),
        rw_paths: Sequence[str] = (),
        network: bool = False,
        seccomp: bool = True,
    ) -> None:
        super().__init__(limits, use_cgroups=use_cgroups, python=python)
        found = bwrap or find_bwrap()
        if found is None:
            raise SandboxError("the strict sandbox needs bubblewrap (`bwrap`), which is not installed",
                               hint=INSTALL_HINT)
        version = bwrap_version(found)
        if version < MIN_VERSION:
            have = ".".join(map(str, version)) or "an unknown version"
            raise SandboxError(
                f"bubblewrap {have} at {found} is too old: the strict box needs 0.8 or later for --disable-userns "
                "(without it, code in the box can make a user namespace and hold capabilities again)",
                hint="install a newer bubblewrap (Debian 12+, Ubuntu 24.04+), or choose `--sandbox local` explicitly",
            )
        self.bwrap = found
        self.ro_paths = [_existing(p, "ro_paths") for p in ro_paths]
        self.rw_paths = [_existing(p, "rw_paths") for p in rw_paths]
        self.network = network
        self.seccomp = deny_program() if seccomp else None

    def box_args(self, workspace: Path) -> list[str]:
        """The bwrap arguments before ``--`` (public so the benchmark can time bare bwrap with the same flags)."""
        for home in _homes():
            if _inside(home, str(workspace)):
                raise SandboxError(
                    f"the workspace {workspace} contains the home directory {home}, which the strict box hides",
                    hint="pass the project directory itself as the workspace (--root), not your home or above it",
                )
        args = [
            self.bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--uid", str(BOX_UID), "--gid", str(BOX_UID),
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        ]
        if self.network:
            args.append("--share-net")
        hidden = ["/tmp"]
        for home in _homes():
            args += ["--tmpfs", home]
            hidden.append(home)
        # The interpreter may live under a hidden directory (pyenv in ~, a venv in /tmp): bring it back read-only.
        for prefix in _python_roots(self.python):
            if any(_inside(prefix, h) for h in hidden):
                args += ["--ro-bind", prefix, prefix]
        if os.geteuid() == 0:
            args += _mask_secrets()
        for path in self.ro_paths:
            args += ["--ro-bind", path, path]
        for path in self.rw_paths:
            args += ["--bind", path, path]
        ws = str(workspace)
        args += ["--bind", ws, ws, "--chdir", ws, "--clearenv"]
        for key, value in self.box_env().items():
            args += ["--setenv", key, value]
        return args

    def box_env(self) -> dict[str, str]:
        path = os.path.dirname(self.python) + ":" + BOX_PATH
        return {"PATH": path, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "TERM": "dumb", "USER": "nobody"}

    def launch(self, argv: list[str], workspace: Path, limits: Limits) -> Launch:
        rlimits = rlimits_for(limits)
        if os.geteuid() != 0 and limits.max_pids:
            # Counted per real uid: only meaningful (and only enforced) when tomo is not root; cgroups do the rest.
            rlimits["nproc"] = limits.max_pids + _processes_of(os.getuid())
        fds: list[int] = []
        filter_args: list[str] = []
        if self.seccomp is not None:  # bwrap reads the compiled filter from a pipe (it is far below the pipe's buffer)
            read_end, write_end = os.pipe()
            os.write(write_end, self.seccomp)
            os.close(write_end)
            fds.append(read_end)
            filter_args = ["--seccomp", str(read_end)]
        if argv and self._missing(argv[0], workspace):
            argv = MISSING_PROGRAM + argv[:1]  # exit 127 as a shell (and the local box) would; bwrap itself exits 1
        return Launch(argv=[*self.box_args(workspace), *filter_args, "--", *argv], env={}, cwd="/", rlimits=rlimits,
                      new_session=False, fds=fds, session_flag="--new-session")

    def _missing(self, program: str, workspace: Path) -> bool:
        """True when ``program`` surely does not exist in the box. The box's files are a subset of the host's (the
        root read-only, some directories hidden behind empty tmpfs), so what the host lacks, the box lacks too."""
        if "/" not in program:
            return shutil.which(program, path=self.box_env()["PATH"]) is None
        return not os.path.lexists(os.path.join(workspace, program))  # relative to the box's cwd, the workspace

    async def stop(self, running: Running) -> None:
        """SIGKILL to bwrap: --die-with-parent kills the box's pid 1, and the kernel then kills its whole namespace."""
        await kill_group(running)
        if running.cgroups is not None:
            running.cgroups.kill_all()

    def describe(self) -> dict[str, object]:
        return {
            **super().describe(), "bwrap": self.bwrap, "network": self.network, "uid": BOX_UID,
            "seccomp": ("refuses the i386 and x32 ABIs and " + ", ".join(sorted(DENIED_X86_64))) if self.seccomp
            else "none on this machine",
            "ro_paths": self.ro_paths, "rw_paths": self.rw_paths,
        }


def _homes() -> list[str]:
    homes = {os.path.realpath(os.path.expanduser("~")), "/root"}
    return sorted(h for h in homes if h != "/" and os.path.isdir(h))


def _python_roots(python: str) -> list[str]:
    """Directories the interpreter needs: the venv (sys.prefix), the install it came from, and the real binary's."""
    real = os.path.realpath(python)
    roots = {
        os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix),
        os.path.dirname(os.path.dirname(os.path.abspath(python))), os.path.dirname(os.path.dirname(real)),
    }
    return sorted(r for r in roots if r not in ("/", "/usr") and os.path.isdir(r))


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _mask_secrets() -> list[str]:
    args: list[str] = []
    for path in SECRET_FILES:
        if os.path.isfile(path):
            args += ["--ro-bind", "/dev/null", path]
    ssh = Path("/etc/ssh")
    if ssh.is_dir():
        for key in sorted(ssh.glob("ssh_host_*_key")):
            args += ["--ro-bind", "/dev/null", str(key)]
    for path in SECRET_DIRS:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
    return args


def _existing(path: str, setting: str) -> str:
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.exists(real):
        raise SandboxError(f"[sandbox] {setting} names {path}, which does not exist",
                           hint=f"fix {setting} in tomo.toml")
    if real == "/":
        raise SandboxError(f"[sandbox] {setting} cannot be /", hint="name the directories the code needs")
    return real


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count
