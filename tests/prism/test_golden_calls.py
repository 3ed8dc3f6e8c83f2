"""Golden tests for the call sites that runtime truth showed prism leaving unconfirmed (issue 16, second round):
submodules a package imports into itself, the class reached through ``self.__class__``, fixtures that pytest
plugins provide. Each project has a same-named decoy (``Decoy``) whose uses must never be confirmed, and a case
where the mechanism must not apply.
"""

from __future__ import annotations

DECOY = """
class Decoy:
    def deserialize(self, x):
        return x

    def run(self):
        return 1

    def readouterr(self):
        return 0

    def evolve(self):
        return self
"""


def test_a_submodule_the_package_imports_into_itself(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "pkg/__init__.py": """
            from . import fields
            from . import other
        """,
        "pkg/fields.py": """
            class Field:
                def deserialize(self, x):  # refs: def
                    return x
        """,
        "pkg/other.py": """
            class Field:
                def deserialize(self, x):
                    return x
        """,
        "rebound/__init__.py": """
            from . import fields
            fields = make_fields()
        """,
        "rebound/fields.py": """
            class Field:
                def deserialize(self, x):
                    return x
        """,
        "use.py": """
            from pkg import fields, other
            import pkg
            from rebound import fields as rfields

            fields.Field().deserialize(1)  # refs: confirmed
            pkg.fields.Field().deserialize(2)  # refs: confirmed
            other.Field().deserialize(3)
            rfields.Field().deserialize(4)  # refs: ambiguous(untyped receiver)
        """,
    }, "pkg.fields.Field.deserialize")


def test_loop_targets_and_unpacked_names_take_their_element_type(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from typing import Iterator, Sequence
            from decoy import Decoy

            class Item:
                def run(self):  # refs: def
                    return 1

            class Bag:
                def __iter__(self) -> Iterator[Item]:
                    return iter([])

            def collect() -> tuple[list[Item], Decoy]:
                return [], Decoy()

            def pairs() -> list[tuple[str, Item]]:
                return []

            def table() -> dict[str, Item]:
                return {}
        """,
        "use.py": """
            from typing import Sequence
            from app import Item, Bag, collect, pairs, table
            from decoy import Decoy

            def f(items: list[Item], seq: Sequence[Item] | None, bag: Bag, decoys: list[Decoy], raw):
                for a in items:
                    a.run()  # refs: confirmed
                for i, b in enumerate(seq):
                    b.run()  # refs: confirmed
                for c in bag:
                    c.run()  # refs: confirmed
                got, rec = collect()
                (first,) = got
                first.run()  # refs: confirmed
                rec.run()
                for name, (d, e) in zip(items, pairs()):
                    name.run()  # refs: confirmed
                    d.run()
                    e.run()  # refs: confirmed
                for key, g in table().items():
                    g.run()  # refs: confirmed
                for h in [Item(), Item()]:
                    h.run()  # refs: confirmed
                for k in [Item(), Decoy()]:
                    k.run()  # refs: ambiguous(different types)
                for m in decoys:
                    m.run()
                for n in raw:
                    n.run()  # refs: ambiguous(untyped receiver)
                head, *rest = items
                head.run()  # refs: ambiguous(untyped receiver)
                for p in sorted(items, key=id):
                    p.run()  # refs: confirmed
        """,
        "decoy.py": DECOY,
    }, "app.Item.run")


def test_the_assignment_that_reaches_a_use_decides(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from decoy import Decoy

            class Context:
                def run(self):  # refs: def
                    return 1

            def make() -> Context:
                return Context()

            def f(chain, items):
                if not chain:
                    ctx = make()
                    with ctx:
                        ctx.run()  # refs: confirmed
                    return
                ctx = Decoy()
                ctx.run()
                for ctx in items:
                    ctx.run()  # refs: ambiguous(untyped receiver)

            def g(flag):
                c = make()
                if flag:
                    c = Decoy()
                c.run()  # refs: ambiguous(different types)

            def h(n):
                c = make()
                while n:
                    c.run()  # refs: ambiguous(different types)
                    c = Decoy()

            def k():
                try:
                    c = Decoy()
                    c = make()
                except ValueError:
                    c.run()  # refs: ambiguous(different types)
        """,
        "decoy.py": DECOY,
    }, "app.Context.run")


def test_chains_over_several_lines_and_receivers_too_long_to_store(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from decoy import Decoy

            class Builder:
                def add_eq(self):
                    return self

                def add_order(self):
                    return self

                def run(self):  # refs: def
                    return 1

            def use():
                b = Builder()
                b.add_eq().add_order().run()  # refs: confirmed
                (
                    b.add_eq()
                    .add_order()
                    .run()  # refs: confirmed
                )
                (
                    b.add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .add_eq()
                    .add_order()
                    .run()  # refs: confirmed
                )
                (
                    Decoy()
                    .run()
                )
        """,
        "decoy.py": DECOY,
    }, "app.Builder.run")


def test_an_attribute_declared_in_any_assignment_has_that_type(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from decoy import Decoy

            class Config:
                def run(self):  # refs: def
                    return 1

            class Node:
                def __init__(self, parent=None, config=None):
                    if parent is not None:
                        self.config = parent.config
                    else:
                        self.config: Config = config
                    self.other = parent.other
                    self.other: Config = config
                    self.other: Decoy = config
                    self.queue = []  # type: list[Config]

                def go(self):
                    self.config.run()  # refs: confirmed
                    self.other.run()  # refs: ambiguous(untyped receiver)
                    self.queue[0].run()  # refs: confirmed
        """,
        "decoy.py": DECOY,
    }, "app.Config.run")


def test_comprehensions_their_elements_and_their_own_variables(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from decoy import Decoy

            class Attribute:
                @classmethod
                def make(cls, name):
                    return cls()

                def evolve(self):  # refs: def
                    return self

            def f(names, items: list[Attribute]):
                make = Attribute.make
                a = Decoy()
                own = [
                    make(n)
                    for n in names
                ]
                own = [a.evolve() for a in own]  # refs: confirmed
                others = [a.evolve() for a in items]  # refs: confirmed
                a.evolve()
                mixed = [a for a in items] + [a.evolve()]  # refs: ambiguous(different types)
                for x in (b.evolve() for b in items):  # refs: confirmed
                    pass
        """,
        "decoy.py": DECOY,
    }, "app.Attribute.evolve")
