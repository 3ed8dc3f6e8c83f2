"""Recipes and scaling them to a number of servings. Amounts are Fractions, so 1/3 cup stays exact."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction


@dataclass
class Ingredient:
    name: str
    amount: Fraction
    unit: str

    def __str__(self) -> str:
        return f"{self.amount} {self.unit} {self.name}"


@dataclass
class Recipe:
    title: str
    servings: int
    ingredients: list[Ingredient] = field(default_factory=list)

    def add(self, name: str, amount: str | int, unit: str) -> Recipe:
        """Add an ingredient ('1/3' cup, 200 g ...); returns the recipe so calls can be chained."""
        self.ingredients.append(Ingredient(name, Fraction(amount), unit))
        return self


def scale(recipe: Recipe, servings: int) -> Recipe:
    """A copy of ``recipe`` for ``servings`` people; ``recipe`` itself is left as it was."""
    if servings < 1:
        raise ValueError(f"servings must be at least 1, got {servings}")
    factor = Fraction(servings, recipe.servings)
    scaled = Recipe(recipe.title, servings, list(recipe.ingredients))
    for ingredient in scaled.ingredients:
        ingredient.amount *= factor
    return scaled
