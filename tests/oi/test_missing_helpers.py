"""A model's test that calls a helper of the project's tests without defining it (`tomo.oi.project_tests`), and a
trial turn on the lab's `repro-recipe-scaling` that reproduces the bug once tomo copies the helper in, in the real
sandbox, judged at the end by the task's own oracle.

Qwen 1.5B's three reproductions of that task in the s43 run each called `pancakes()`, the recipe-building helper of
the project's tests/test_recipes.py, and tomo refused all three as using a name nothing defines.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tomo
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.project_tests import missing_helpers, read_tests
from tomo.oi.trials import trial_turn

TASK_DIR = Path(tomo.__file__).parent / "lab" / "suites" / "small" / "repro-recipe-scaling"
TASK = (TASK_DIR / "task.toml").read_text().split('"""')[1].strip()
MODEL_TEST = '''\
from recipes import scale


def test_the_problem():
    recipe = pancakes()
    scale(recipe, 8)
    assert str(recipe.ingredients[0]) == "200 g flour"
'''
SECOND = '''\
from recipes import scale


def test_twice():
    recipe = pancakes()
    scale(recipe, 8)
    assert str(scale(recipe, 8).ingredients[0]) == "400 g flour"
'''


@pytest.fixture
def recipes(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(TASK_DIR / "repo", root)
    return root


def test_a_helper_of_the_project_s_tests_is_copied_with_what_it_uses_but_never_a_test_or_a_fixture(recipes):
    (recipes / "tests" / "conftest.py").write_text("")
    (recipes / "tests" / "test_more.py").write_text(
        "import pytest\n\nLIMIT = 3\n\n\ndef big(n=LIMIT):\n    return n * 2\n\n\n@pytest.fixture\ndef cake():\n"
        "    return 1\n\n\ndef test_big():\n    assert big() == 6\n")
    tests = read_tests(recipes)
    assert missing_helpers(["pancakes"], tests) == [
        'def pancakes():\n    return Recipe("Pancakes", 4).add("flour", 200, "g").add("milk", "1/3", "l")'
        '.add("egg", 2, "pcs")']
    assert missing_helpers(["big"], tests) == ["LIMIT = 3", "def big(n=LIMIT):\n    return n * 2"]
    assert missing_helpers(["cake", "test_big", "nowhere"], tests) == []


async def test_the_copied_helper_reproduces_the_bug_and_the_fix_passes_the_task_s_oracle(strict, recipes):
    right = (TASK_DIR / "reference" / "recipes.py").read_text().split("\n\n\n")[-1]
    model = TemperedScript([block("python", MODEL_TEST), block("python recipes.py", right), block("python", SECOND)])
    engine = engine_for(model, strict, recipes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert "tomo copied the helpers the test used from the project's tests: pancakes" in said, said
    assert any("from recipes import Recipe" in t for t in said if t.startswith("tomo added the imports")), said
    kept = sink.of(ReproductionKept)
    assert kept and kept[0].by == "model" and "def pancakes():" in kept[0].code
    assert engine.last.outcome == "verified", said
    shutil.copytree(TASK_DIR / "hidden", recipes, dirs_exist_ok=True)
    oracle = subprocess.run([sys.executable, "_oracle_repro.py"], cwd=recipes, capture_output=True, text=True,
                            timeout=120)
    assert oracle.returncode == 0, oracle.stdout + oracle.stderr
