"""A task that says a call leaves its input alone (`tomo.oi.left_alone`): the test tomo writes from the model's call,
run by real pytest, and a trial turn whose one-token search finds the copy, in the real sandbox.

The project is the lab's `repro-recipe-scaling`: `scale` copies the recipe's list but not its ingredients, so scaling
the copy scales the recipe. Qwen 1.5B's test asserted a scaled amount and got the amount wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oi.oi_support import run_pytest
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.left_alone import left_alone_test, says_left_alone
from tomo.oi.mutants import mutants
from tomo.oi.trials import trial_turn

RECIPES = '''\
"""Recipes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Ingredient:
    name: str
    amount: float


@dataclass
class Recipe:
    title: str
    servings: int
    ingredients: list[Ingredient] = field(default_factory=list)

    def add(self, name, amount):
        self.ingredients.append(Ingredient(name, amount))
        return self


def scale(recipe, servings):
    """A copy of ``recipe`` for ``servings`` people."""
    factor = servings / recipe.servings
    scaled = Recipe(recipe.title, servings, list(recipe.ingredients))
    for item in scaled.ingredients:
        item.amount *= factor
    return scaled
'''
COPYING = RECIPES.replace("list(recipe.ingredients))", "[Ingredient(i.name, i.amount) for i in recipe.ingredients])")
TASK = ("Planning the pancakes for 8 people doubles the recipe itself. scale() is supposed to return a copy and leave "
        "the recipe alone. Start with a test that fails because of this, then fix the bug.")
MODEL_TEST = '''\
from recipes import Recipe, scale


def test_the_problem():
    pancakes = Recipe("Pancakes", 4).add("flour", 200)
    assert scale(pancakes, 8).ingredients[0].amount == 500
'''


@pytest.fixture
def pantry(tmp_path: Path) -> Path:
    root = tmp_path / "pantry"
    (root / "tests").mkdir(parents=True)
    (root / "recipes.py").write_text(RECIPES)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_recipes.py").write_text(
        "from recipes import Recipe, scale\n\n\ndef test_scaled():\n"
        "    assert scale(Recipe('P', 2).add('egg', 1), 4).ingredients[0].amount == 2\n")
    return root


def test_the_task_s_words_say_whether_a_call_must_leave_its_input_alone():
    assert says_left_alone(TASK)
    assert says_left_alone("median() must not reorder the caller's list")
    assert says_left_alone("Sort them without modifying the input, please.")
    assert not says_left_alone("Copy the file to the backup folder and leave a comment.")
    assert not says_left_alone("scale() returns 400 g for 8 people, but it should give 400 g.")


def test_the_model_s_call_becomes_a_test_that_fails_on_the_bug_and_passes_on_the_fix(pantry: Path):
    test = left_alone_test(MODEL_TEST, {"scale"})
    assert test is not None and 'pancakes = Recipe("Pancakes", 4).add("flour", 200)' in test
    assert "arguments = (pancakes, 8)" in test and "500" not in test  # the model's wrong value is gone
    failed = run_pytest(pantry, "test_alone.py", test)
    assert failed.returncode == 1 and "the call changed what it was given" in failed.stdout
    (pantry / "recipes.py").write_text(COPYING)
    assert run_pytest(pantry, "test_alone.py", test).returncode == 0
    assert left_alone_test(MODEL_TEST, {"plan"}) is None  # it never calls what the task names


def test_a_method_call_keeps_its_object_in_what_must_stay_as_it_was():
    code = "from m import Box\n\n\ndef test_it():\n    box = Box()\n    box.sorted_items(reverse=True)\n"
    test = left_alone_test(code, {"sorted_items"})
    assert test is not None and "receiver = box" in test and "receiver.sorted_items(*arguments, **keywords)" in test
    assert "keywords = {'reverse': True}" in test and "_state((receiver, arguments, keywords,))" in test


def test_a_value_built_from_a_parameter_is_deep_copied_as_a_candidate():
    found = {m.what: m.text for m in mutants(RECIPES, range(26, 31))}
    copied = found["`Recipe(recipe.title, servings, list(recipe.ingredients))` deep-copied"]
    assert "scaled = copy.deepcopy(Recipe(recipe.title, servings, list(recipe.ingredients)))" in copied
    assert "from dataclasses import dataclass, field\nimport copy\n" in copied
    assert not any("servings / recipe.servings" in w for w in found)  # arithmetic: no copy changes it


async def test_the_left_alone_test_judges_and_a_deep_copy_passes_it_without_a_model_fix(strict, pantry):
    model = TemperedScript([block("python", MODEL_TEST)])
    engine = engine_for(model, strict, pantry)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    kept = sink.of(ReproductionKept)
    assert len(kept) == 1 and kept[0].by == "model" and "the call changed what it was given" in kept[0].code
    said = [n.text for n in sink.of(Notice)]
    assert any("leaves what it is given alone; tomo wrote" in t for t in said), said
    assert "copy.deepcopy(Recipe(" in (pantry / "recipes.py").read_text()
    assert any("a test tomo built on the model's call" in t and "stays unverified" in t for t in said), said
    # the arguments are the model's: a fix found by search against its test is never called verified
    assert engine.last.outcome == "unverified" and not engine.last.verified and len(model.sent) == 1
