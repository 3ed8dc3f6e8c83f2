"""Shared by the sandbox tests (imported by basename: pytest puts this directory on sys.path)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tomo.sandbox import Limits

MiB = 1024 * 1024
SMALL = Limits(
    timeout_s=5, memory_bytes=512 * MiB, cpu_s=5, file_size_bytes=1 * MiB, open_files=64, max_pids=64,
    output_bytes=20_000,
)
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_bwrap() -> None:
    if shutil.which("bwrap") is not None:
        return
    if IN_CI:
        pytest.fail("bubblewrap is not installed on CI, so the escape battery cannot run: apt-get install bubblewrap")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap); the strict-box tests need it")


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker`` (how tests prove nothing was left running)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != "Z":
            found.append(int(entry))
    return found


async def wait_for_process(marker: str, seconds: float = 5.0) -> bool:
    """True once a process with ``marker`` runs (a child may not have exec'd yet when the block returns)."""
    import asyncio

    for _ in range(int(seconds / 0.02)):
        if processes_with(marker):
            return True
        await asyncio.sleep(0.02)
    return False
