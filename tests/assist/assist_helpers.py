"""Helpers shared by the assist tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
RENAME = {"symbol": "shop.lines.OrderLine.total", "new_name": "subtotal"}


def sources(root: Path) -> dict[str, bytes]:
    """Every source file's bytes (the index under .tomo is the harness's, not the project's)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".tomo" not in p.parts and "__pycache__" not in p.parts
            and ".pytest_cache" not in p.parts}


def call(name: str, **args: object) -> dict[str, object]:
    """One scripted reply that makes one tool call."""
    return {"tool_calls": [{"name": name, "args": args}]}


def say(text: str) -> dict[str, object]:
    return {"content": text}


def make_fanout(root: Path, files: int = 40, calls_per_file: int = 50) -> int:
    """A package with one function called ``files * calls_per_file`` times across ``files`` modules.

    Returns the number of call sites. Every call is bound through a from-import, so every edit is confirmed.
    """
    pkg = root / "fan"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("def compute(x):\n    return x + 1\n")
    for i in range(files):
        body = "".join(f"    total += compute({j})\n" for j in range(calls_per_file))
        (pkg / f"mod_{i:03d}.py").write_text(
            f"from fan.core import compute\n\n\ndef run_{i:03d}():\n    total = 0\n{body}    return total\n")
    return files * calls_per_file
