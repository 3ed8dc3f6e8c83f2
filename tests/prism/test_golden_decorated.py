"""Golden tests for issue 16: decorated names, fixtures under long decorators, bases outside the index, parameters
typed from elsewhere, chains through annotated class attributes. Each project has a same-named decoy (``Decoy``)
whose uses must never be confirmed.
"""

from __future__ import annotations

DECOY = """
class Decoy:
    def add(self, x):
        return x

    def step(self):
        return self

    def run(self):
        return 1

    def reject(self, x):
        return x

    def start(self):
        return 0
"""


def test_attribute_chains_through_annotated_class_attributes(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "jobs.py": """
            from __future__ import annotations
            import dataclasses
            from typing import ClassVar, Optional
            from decoy import Decoy

            class Runner:
                def start(self):  # refs: def
                    return 1

            class Job:
                runner: Runner
                spare: Optional[Runner] = None
                shared: ClassVar[Runner]
                decoy: Decoy

                def __init__(self, runner):
                    self.runner = runner

            @dataclasses.dataclass
            class Task:
                job: Job
                other: "Decoy" = dataclasses.field(default_factory=Decoy)

            def go(job: Job, task: Task):
                job.runner.start()  # refs: confirmed
                job.spare.start()  # refs: confirmed
                job.shared.start()  # refs: confirmed
                task.job.runner.start()  # refs: confirmed
                job.decoy.start()
                task.other.start()
        """,
        "decoy.py": DECOY,
    }, "jobs.Runner.start")


def test_generic_returns_final_attributes_and_annotated_getattr(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "hooks.py": """
            from typing import TYPE_CHECKING, Final, Generic, TypeVar
            from decoy import Decoy

            T = TypeVar("T")

            class Caller:
                def call_historic(self):  # refs: def
                    return 1

            class Result(Generic[T]):
                @classmethod
                def from_call(cls, f) -> "Result[T]":
                    return cls()

                def call_historic(self):
                    return 2

            class Relay:
                if TYPE_CHECKING:
                    def __getattr__(self, name: str) -> Caller: ...

            class Bag:
                def __getattr__(self, name):
                    return Decoy()

            class Manager:
                def __init__(self) -> None:
                    self.hook: Final = Relay()
                    self.bag: Final = Bag()

            def go(pm: Manager):
                pm.hook.anything.call_historic()  # refs: confirmed
                pm.bag.anything.call_historic()  # refs: ambiguous(untyped receiver)
                Result.from_call(go).call_historic()
        """,
        "decoy.py": DECOY,
    }, "hooks.Caller.call_historic")


def test_chained_assignments_and_class_body_fields(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "fields.py": """
            class Counting:
                def validator(self, f):  # refs: def
                    return f

            def attrib(default=None):
                return Counting()

            def unknown_field():
                return make_it()

            ib = attr = attrib
        """,
        "use.py": """
            import fields
            from decoy import Decoy

            a = fields.ib(default=42)
            b = fields.attr()
            a.validator(1)  # refs: confirmed
            b.validator(2)  # refs: confirmed

            class C:
                x: int = fields.attrib()
                y: list = fields.unknown_field()
                z: Decoy = fields.attrib()
                w: Decoy = Decoy()

                @x.validator  # refs: confirmed
                def _check(self, attribute, value):
                    pass

                @y.validator  # refs: ambiguous(untyped receiver)
                def _check_y(self, attribute, value):
                    pass

                @z.validator  # refs: confirmed
                def _check_z(self, attribute, value):
                    pass

                @w.validator
                def _check_w(self, attribute, value):
                    pass
        """,
        "decoy.py": DECOY + """
    def validator(self, f):
        return f
""",
    }, "fields.Counting.validator")
