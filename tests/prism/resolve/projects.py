"""Small projects several golden tests share: CORE (a base class, a subclass, factories) and DECOY (a class with the
same method names, whose uses must never be confirmed; CALL_DECOY is the one of the call-site tests)."""

from __future__ import annotations

CORE = """
class Base:
    def start(self):  # START
        return 1

class Engine(Base):
    def __init__(self, name: str):
        self.name = name

    def run(self) -> int:  # RUN
        return 2

def make() -> Engine:
    return Engine("x")

def build():
    return Engine("y")
"""


def core(defined: str) -> str:
    """CORE with the definition of ``defined`` ("start" or "run") marked, the other left plain."""
    return CORE.replace(f"# {defined.upper()}", "# refs: def").replace("# START", "").replace("# RUN", "")


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


CALL_DECOY = """
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
