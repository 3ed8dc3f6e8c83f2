"""Writes one benchmark's table into docs/benchmarks.md between its own markers, leaving the others alone.

Each bench script owns a section ``<!-- bench:NAME -->`` ... ``<!-- /bench:NAME -->``; re-running a script replaces
only its own section, so benchmarks can run in any order and on different days.
"""

from __future__ import annotations

import platform
import re
import time
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADER = "# Benchmarks\n\nEach section is written by the script it names; re-run it to refresh that section only.\n"


def machine() -> str:
    import os

    python = f"{platform.python_implementation()} {platform.python_version()}"
    return f"{python}, {os.cpu_count()} cores, {platform.machine()}"


def write_section(name: str, title: str, command: str, body: str) -> Path:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else HEADER
    stamp = time.strftime("%Y-%m-%d")
    section = (
        f"<!-- bench:{name} -->\n## {title}\n\n`{command}` — {stamp}, {machine()}\n\n{body.strip()}\n"
        f"<!-- /bench:{name} -->"
    )
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    return DOC


def table(headers: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
