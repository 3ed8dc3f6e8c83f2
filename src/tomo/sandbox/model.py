"""The sandbox's value types: what a run may use (`Limits`) and what it produced (`ExecResult`).

They are plain frozen dataclasses so engines, the CLI and tests can build and compare them without a sandbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from tomo.config import SandboxSettings
from tomo.errors import SandboxError

Language = Literal["shell", "python", "argv"]

_ALIASES: dict[str, Language] = {
    "shell": "shell", "sh": "shell", "bash": "shell", "console": "shell", "zsh": "shell",
    "python": "python", "py": "python", "python3": "python",
    "argv": "argv",
}

MiB = 1024 * 1024
_DEFAULTS = SandboxSettings()

# One argument to execve may not exceed MAX_ARG_STRLEN (32 pages); stay well below it.
MAX_CODE_BYTES = 120_000


def normalize_language(language: str) -> Language:
    """Maps the fence names models write (``sh``, ``py``, ``python3``) to the two runners."""
    found = _ALIASES.get(language.strip().lower())
    if found is None:
        known = ", ".join(sorted(_ALIASES))
        raise SandboxError(f"cannot run language {language!r}", hint=f"use one of: {known}")
    return found


@dataclass(frozen=True, slots=True)
class Limits:
    """What one run may use. ``None`` or 0 leaves a limit unset; sizes are in bytes, times in seconds."""

    # The defaults are [sandbox]'s defaults (tomo.config), so a Limits() and an empty tomo.toml mean the same box.
    timeout_s: float = _DEFAULTS.timeout_s
    memory_bytes: int = _DEFAULTS.memory_mb * MiB
    cpu_s: int = _DEFAULTS.cpu_s
    file_size_bytes: int = _DEFAULTS.file_size_mb * MiB
    open_files: int = _DEFAULTS.open_files
    max_pids: int = _DEFAULTS.max_pids
    output_bytes: int = _DEFAULTS.output_bytes

    @classmethod
    def from_settings(cls, settings: SandboxSettings) -> Limits:
        return cls(
            timeout_s=settings.timeout_s,
            memory_bytes=settings.memory_mb * MiB,
            cpu_s=settings.cpu_s,
            file_size_bytes=settings.file_size_mb * MiB,
            open_files=settings.open_files,
            max_pids=settings.max_pids,
            output_bytes=settings.output_bytes,
        )

    def with_(self, **changes: float | int) -> Limits:
        return replace(self, **changes)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise SandboxError(f"timeout must be positive, got {self.timeout_s}", hint="pass a timeout in seconds > 0")
        if self.output_bytes < 64:
            raise SandboxError(f"output cap of {self.output_bytes} bytes is too small", hint="use at least 64 bytes")


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of one run.

    ``output`` is stdout and stderr interleaved as the process wrote them; when it was longer than the cap it keeps the
    head and the tail with a line in the middle that says how much was cut. ``exit_code`` is the process's code,
    128+N when a signal N ended it, and 124 on timeout (like coreutils ``timeout``). ``notes`` say in words what the
    box did to the run (timed out, output cut, a limit hit), for people and models alike.
    """

    exit_code: int
    output: str
    truncated: bool = False
    timed_out: bool = False
    duration: float = 0.0
    total_bytes: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def build_argv(command_or_code: str | Sequence[str], language: str, python: str) -> list[str]:
    """Turns a shell string, Python source or an argv list into the argv the box executes."""
    if not isinstance(command_or_code, str):
        argv = [str(a) for a in command_or_code]
        if not argv:
            raise SandboxError("empty command", hint="give the program to run, e.g. `tomo exec -- ls -la`")
        return argv
    lang = normalize_language(language)
    if lang == "argv":
        raise SandboxError("language 'argv' needs a list of arguments, not a string", hint="pass a list")
    size = len(command_or_code.encode())
    if size > MAX_CODE_BYTES:
        raise SandboxError(
            f"the {lang} block is {size:,} bytes; one block may be at most {MAX_CODE_BYTES:,}",
            hint="write the code to a file in the workspace and run that file",
        )
    if lang == "python":
        return [python, "-u", "-c", command_or_code]
    return ["/bin/bash", "-c", command_or_code] if _has_bash() else ["/bin/sh", "-c", command_or_code]


def _has_bash() -> bool:
    import os

    return os.access("/bin/bash", os.X_OK)
