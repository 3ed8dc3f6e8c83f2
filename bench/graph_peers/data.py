"""The real code the graph benchmark measures on, and the symbols it asks about.

Sources come from PyPI sdists at pinned versions (``pip download --no-binary :all: --no-deps``), unpacked under the
data directory and never committed. Flask's sdist ships its own ``tests/``, which the rename-and-test run uses.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path

PINS = {"requests": "requests==2.34.2", "flask": "flask==3.1.3", "django": "django==5.2.19"}
DIRS = {"requests": "requests-2.34.2", "flask": "flask-3.1.3", "django": "django-5.2.19"}
SRC_LAYOUT = {"requests": True, "flask": True, "django": False}


@dataclass(frozen=True)
class Target:
    """A symbol to ask every tool about: its qualified name, and where its name token is defined."""

    project: str
    qualname: str
    path: str  # relative to the project root, POSIX
    line: int  # 1-based
    col: int  # 0-based, the first character of the name

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[1]

    def to_json(self) -> dict[str, object]:
        return asdict(self)


SYMBOLS: dict[str, list[str]] = {
    "requests": ["requests._internal_utils.to_native_string", "requests.sessions.Session.request"],
    "flask": ["flask.app.Flask.make_response"],
    "django": ["django.utils.functional.cached_property", "django.db.models.base.Model.full_clean"],
}
RENAMES = ["flask.app.Flask.make_response", "flask.app.Flask.test_request_context", "flask.app.Flask.test_client"]


def fetch(data: Path, projects: list[str]) -> dict[str, Path]:
    """Download (once) and unpack (once) each project's sdist; return project -> root directory."""
    dl, src = data / "dl", data / "src"
    dl.mkdir(parents=True, exist_ok=True)
    src.mkdir(parents=True, exist_ok=True)
    roots: dict[str, Path] = {}
    for project in projects:
        root = src / DIRS[project]
        if not root.is_dir():
            archive = dl / f"{DIRS[project]}.tar.gz"
            if not archive.exists():
                cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
                subprocess.run([*cmd, "-d", str(dl), PINS[project]], check=True)
            with tarfile.open(archive) as tar:
                tar.extractall(src, filter="data")
        roots[project] = root
    return roots


def module_file(root: Path, project: str, qualname: str) -> tuple[Path, list[str]]:
    """The file defining the longest module prefix of ``qualname``, and the rest of the name inside it."""
    base = root / "src" if SRC_LAYOUT[project] else root
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        mod = base.joinpath(*parts[:cut])
        for candidate in (mod.with_suffix(".py"), mod / "__init__.py"):
            if candidate.is_file():
                return candidate, parts[cut:]
    raise LookupError(f"no module for {qualname} under {base}")


def locate(root: Path, project: str, qualname: str) -> Target:
    """Find the name token of a definition with ``ast`` (independent of every tool being measured)."""
    path, rest = module_file(root, project, qualname)
    body: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    node: ast.stmt | None = None
    for name in rest:
        node = next(
            (
                n
                for n in body
                if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
            ),
            None,
        )
        if node is None:
            raise LookupError(f"{name} not found in {path}")
        body = node.body
    assert isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    line = path.read_text(encoding="utf-8").splitlines()[node.lineno - 1]
    col = line.index(node.name, node.col_offset)
    return Target(project, qualname, path.relative_to(root).as_posix(), node.lineno, col)


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".tomo" not in p.parts and ".ropeproject" not in p.parts)


def unparsable(root: Path) -> list[str]:
    """Files this Python cannot parse (Django ships deliberate syntax-error fixtures); rope aborts on them."""
    bad: list[str] = []
    for p in python_files(root):
        try:
            ast.parse(p.read_bytes())
        except (SyntaxError, ValueError):
            bad.append(p.relative_to(root).as_posix())
    return bad
