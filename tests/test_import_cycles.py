"""The house has no circles: no two of tomo's modules import each other, directly or round a longer loop; and each
part imports only the layers below it (LAYERS, the table of docs/DESIGN.md).

What counts as an import (read from the source with ``ast``, nothing is imported):

- every ``import``/``from ... import`` at module level, inside ``if``/``try`` blocks too;
- those under ``if TYPE_CHECKING:`` as well: a circle of types is still two modules that must know each other, and
  each circle this test was written to keep out (agents/loop, prism graph/rename, sandbox base/session, web
  app/auth/page) hid in one, or in a function;
- those inside a function or method as well: deferring an import is for start-up time, not a way to hide a circle.
  One kind is not counted: a package's ``__init__`` importing its *own* submodules inside a function. That is how
  ``tomo.cli`` loads a verb's module when the verb runs (the verb registers itself on ``tomo.cli.app``); Python
  always runs a package's ``__init__`` before any of its submodules, so the package is whole by then and the
  submodule's own import of it is not a circle that can bite.

``importlib.import_module("...")`` with a computed name is not seen. An edge goes to the deepest tomo module the
import names (``from tomo.team import code`` reaches ``tomo.team.code``; ``from tomo.prism import Graph`` reaches
``tomo.prism``, the package). Only tomo's package is scanned: directories with an ``__init__.py`` all the way up
(``tomo/lab/suites`` holds projects, not tomo's code).
"""

from __future__ import annotations

import ast
import functools
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src"


def _modules(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if not all((root / Path(*rel.parts[:i]) / "__init__.py").is_file() for i in range(1, len(rel.parts))):
            continue  # not inside tomo's package: data that happens to be Python
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _target(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The tomo modules ``module`` imports, by the rules of the docstring."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()

    def add(name: str, lazy: bool) -> None:
        target = _target(name, modules)
        if target is None or target == module:
            return
        if lazy and is_package and target.startswith(module + "."):
            return  # a package loading its own part on demand (see the docstring)
        found.add(target)

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, lazy)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = here[: len(here) - (child.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for alias in child.names:  # `from pkg import mod` names a module; `from mod import name` does not
                    add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base, lazy)
            visit(child, inner)

    visit(ast.parse(path.read_bytes(), str(path)), False)
    return found


@functools.cache
def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return None


def test_tomo_has_no_import_cycles() -> None:
    graph = import_graph()
    assert "tomo.prism.graph" in graph and "tomo.prism.rename" in graph["tomo.prism.graph"]  # the scan sees tomo
    cycle = find_cycle(graph)
    assert cycle is None, (
        "import cycle: " + " -> ".join(cycle) + ". Move what both need into a module below them, or have the "
        "lower one name what it needs as a Protocol (tomo.loop.LoopAgent, tomo.prism.rename.RenameSource, "
        "tomo.sandbox.session.Host); see the rules in tests/test_import_cycles.py")


@pytest.mark.parametrize(("files", "cycle"), [
    ({"a.py": "from tomo import b\n", "b.py": "import tomo.a\n"}, True),
    ({"a.py": "from tomo.b import X\n", "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
      "    from tomo.a import Y\n"}, True),
    ({"a.py": "from tomo.b import X\n", "b.py": "def f():\n    from tomo.a import Y\n"}, True),
    ({"a.py": "from . import b\n", "b.py": "from .a import Y\n"}, True),
    ({"a.py": "from tomo.b import X\n", "b.py": "import os\n"}, False),
    ({"pkg/__init__.py": "def load():\n    from tomo.pkg import part\n", "pkg/part.py": "from tomo.pkg import app\n"},
     False),
    ({"pkg/__init__.py": "from tomo.pkg import part\n", "pkg/part.py": "from tomo.pkg import app\n"}, True),
    ({"x/mod.py": "from tomo import b\n", "b.py": "from tomo.x import mod\n"}, False),  # x/ is no package
])
def test_the_rules_on_small_packages(tmp_path: Path, files: dict[str, str], cycle: bool) -> None:
    (tmp_path / "tomo").mkdir()
    (tmp_path / "tomo" / "__init__.py").write_text("")
    for name, text in files.items():
        path = tmp_path / "tomo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.startswith("pkg/"):
            (tmp_path / "tomo" / "pkg" / "__init__.py").touch()
        path.write_text(text)
    assert (find_cycle(import_graph(tmp_path)) is not None) is cycle


# The house of docs/DESIGN.md, bottom first: a module may import the layers below its own, and inside its layer only
# what its row lists. The parts of one row that are not listed are side by side and never import each other (the
# engines meet only in tomo.cli, which hands team the oi engine through tomo.cli.team_oi).
LAYERS: list[dict[str, set[str]]] = [
    {"errors": set(), "config": {"errors"}, "events": {"errors"}},
    {"models": set(), "prism": set(), "sandbox": set(), "store": set()},
    {"tools": set(), "loop": {"tools"}, "agents": {"loop", "tools"}},
    {"assist": set(), "oi": set(), "team": set(), "lab": set()},
    {"web": set(), "mcp_server": set(), "demo": set()},
    {"cli": set(), "__main__": {"cli"}},
]


def _part(module: str) -> str:
    """The part of the house a module belongs to: tomo.prism.resolve.core is prism; tomo itself is "" (its version)."""
    return module.split(".")[1] if module.count(".") else ""


def test_each_part_imports_only_the_layers_below_it() -> None:
    level = {part: i for i, row in enumerate(LAYERS) for part in row}
    graph = import_graph()
    parts = {_part(m) for m in graph} - {""}
    assert parts == set(level), f"parts not placed in LAYERS (and in docs/DESIGN.md): {sorted(parts ^ set(level))}"
    wrong = []
    for module, imported in sorted(graph.items()):
        here = _part(module)
        for target in sorted(imported):
            there = _part(target)
            if there in ("", here) or level[there] < level[here] or there in LAYERS[level[here]][here]:
                continue
            wrong.append(f"{module} imports {target}")
    assert not wrong, "imports against the house of docs/DESIGN.md:\n" + "\n".join(wrong)
