from fractions import Fraction

from recipes import Recipe, scale
from shopping import shopping_list


def soup():
    return Recipe("Soup", 2).add("carrot", 3, "pcs").add("stock", "3/4", "l")


def test_original_unchanged():
    recipe = soup()
    scaled = scale(recipe, 6)
    assert [i.amount for i in recipe.ingredients] == [3, Fraction(3, 4)]
    assert [i.amount for i in scaled.ingredients] == [9, Fraction(9, 4)]
    assert recipe.servings == 2


def test_scaling_twice_does_not_compound():
    recipe = soup()
    scale(recipe, 4)
    assert scale(recipe, 4).ingredients[0].amount == 6


def test_shopping_list_same_recipe_twice():
    recipe = soup()
    assert shopping_list([(recipe, 4), (recipe, 2)])[("carrot", "pcs")] == 9
    assert recipe.ingredients[0].amount == 3


def test_adding_to_a_copy_leaves_the_original():
    recipe = soup()
    scale(recipe, 2).add("salt", 1, "pinch")
    assert len(recipe.ingredients) == 2
