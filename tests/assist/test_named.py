"""The harness finds the one symbol a rename sentence names (``tomo.assist.named``), or declines and lets the model
decide; on the run route a named rename is planned and applied without a model call."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from tomo.assist.named import looks_like_code, named_rename
from tomo.prism import Graph

SUITES = Path(__file__).resolve().parents[2] / "src" / "tomo" / "lab" / "suites"
CHECK = f"{sys.executable} -m pytest -q -p no:cacheprovider"


@pytest.fixture
def billing(tmp_path: Path) -> Graph:
    root = tmp_path / "billing"
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "__init__.py").write_text("")
    (root / "billing" / "settings.py").write_text("MAX_TRIES = 3\nname = 'billing'\n")
    (root / "billing" / "docs.py").write_text(
        "class Invoice:\n    def sum_lines(self):\n        return 1\n\n\n"
        "class Receipt:\n    def sum_lines(self):\n        return 2\n\n\n"
        "class TempRec:\n    pass\n\n\ndef total(x):\n    return x\n\n\ndef method():\n    return 0\n")
    return Graph.open(root)


def _named(text: str, graph: Graph) -> str | None:
    found = named_rename(text, graph)
    return f"{found[0].qualname} -> {found[1]}" if found else None


def test_the_words_of_the_sentence_name_one_symbol(billing: Graph) -> None:
    assert _named("Please rename the Invoice method sum_lines to subtotal, everywhere.", billing) == \
        "billing.docs.Invoice.sum_lines -> subtotal"
    assert _named("rename Receipt.sum_lines to subtotal", billing) == "billing.docs.Receipt.sum_lines -> subtotal"
    assert _named("MAX_TRIES counts attempts. Rename the constant to MAX_ATTEMPTS everywhere.", billing) == \
        "billing.settings.MAX_TRIES -> MAX_ATTEMPTS"
    assert _named("The class name TempRec is cryptic. Rename it to TemperatureReading.", billing) == \
        "billing.docs.TempRec -> TemperatureReading"
    assert _named("rename the function total to grand_total", billing) == "billing.docs.total -> grand_total"


def test_it_declines_when_the_sentence_does_not_tell_symbols_apart(billing: Graph) -> None:
    assert _named("rename sum_lines to subtotal", billing) is None  # Invoice's or Receipt's
    assert _named("The name is cryptic. Rename it to Label.", billing) is None  # plain words pick nothing
    assert _named("rename settings to config", billing) is None  # a module: renaming it moves a file
    assert _named("rename nothing_here to other", billing) is None
    assert _named("fix sum_lines so it adds tax", billing) is None  # not a rename


def test_code_like_words() -> None:
    assert all(map(looks_like_code, ["sum_lines", "MAX_TRIES", "TempRec", "Invoice.total", "`total`", "v2"]))
    assert not any(map(looks_like_code, ["Rename", "project", "it", "Invoice"]))


@pytest.mark.parametrize("task", sorted(p.parent for p in SUITES.glob("*/rename-*/task.toml")), ids=lambda p: p.name)
def test_every_rename_task_of_the_lab_suites_names_its_symbol(task: Path, tmp_path: Path) -> None:
    spec = tomllib.loads((task / "task.toml").read_text())
    old = spec["oracle"].split()[-1]  # `python _oracle_rename.py OLD`
    repo = shutil.copytree(task / "repo", tmp_path / "repo")  # the index goes in the copy, never the bundled suite
    with Graph.open(repo) as graph:
        found = named_rename(spec["prompt"], graph)
    assert found is not None and found[0].name == old


def test_a_named_rename_is_planned_by_the_harness_without_a_model_call(run_tomo, shop: Path, tmp_path: Path) -> None:
    script = tmp_path / "none.json"
    script.write_text(json.dumps({"replies": []}))  # a model call would exhaust the script: an error
    done = run_tomo("run", "rename OrderLine.total to subtotal everywhere", "--engine", "auto", "--model",
                    f"scripted:{script}", "--root", str(shop), "--sandbox", "local", "--yes", "--json",
                    "--check", CHECK, "--exec-gate")
    result = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert result["outcome"] == "verified" and result["rounds"] == 0
    assert "the harness plans its rename to subtotal without asking the model" in done.stderr
    assert "def subtotal" in (shop / "shop" / "lines.py").read_text()
