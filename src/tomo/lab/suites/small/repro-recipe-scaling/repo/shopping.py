"""The shopping list for a week's plan: every planned recipe scaled, amounts of the same thing added up."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from recipes import Recipe, scale


def shopping_list(plan: Iterable[tuple[Recipe, int]]) -> dict[tuple[str, str], Fraction]:
    """(ingredient, unit) -> total amount, for a plan of (recipe, servings) pairs."""
    totals: dict[tuple[str, str], Fraction] = {}
    for recipe, servings in plan:
        for item in scale(recipe, servings).ingredients:
            key = (item.name, item.unit)
            totals[key] = totals.get(key, Fraction(0)) + item.amount
    return totals
