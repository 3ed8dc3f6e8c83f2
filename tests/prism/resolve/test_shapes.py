"""Golden tests of resolve/shapes.py: loop targets, unpacking and comprehensions take their element's type."""

from __future__ import annotations

from .projects import CALL_DECOY


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
        "decoy.py": CALL_DECOY,
    }, "app.Item.run")


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
        "decoy.py": CALL_DECOY,
    }, "app.Attribute.evolve")
