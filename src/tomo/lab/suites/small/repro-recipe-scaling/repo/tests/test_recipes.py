from fractions import Fraction

import pytest

from recipes import Recipe, scale
from shopping import shopping_list


def pancakes():
    return Recipe("Pancakes", 4).add("flour", 200, "g").add("milk", "1/3", "l").add("egg", 2, "pcs")


def test_scale_up():
    big = scale(pancakes(), 8)
    assert big.servings == 8
    assert [str(i) for i in big.ingredients] == ["400 g flour", "2/3 l milk", "4 pcs egg"]


def test_scale_down_keeps_fractions():
    assert scale(pancakes(), 1).ingredients[1].amount == Fraction(1, 12)


def test_servings_must_be_positive():
    with pytest.raises(ValueError):
        scale(pancakes(), 0)


def test_shopping_list_adds_up():
    bread = Recipe("Bread", 1).add("flour", 500, "g")
    assert shopping_list([(pancakes(), 2), (bread, 1)])[("flour", "g")] == 600
