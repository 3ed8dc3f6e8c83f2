"""The extractor gives the same facts for the same source every time (tree-sitter's captures come in no fixed order)."""

from __future__ import annotations

import marshal

from tomo.prism import pyextract

SOURCE = b'''
class Account:
    def open(self, owner):
        self.owner = owner
        self.balance = 0
        total = 0

    def reset(self):
        self.balance = 1
        self.owner = None
        total = 1

    def close(self):
        self.balance = 2
        return self.owner

limit = 1
limit = 2
'''


def _facts(src: bytes) -> bytes:
    f = pyextract.extract(src, "bank", False, "bank.py")
    info = dict(f["info"])
    info["binds"] = {k: marshal.loads(v) for k, v in info["binds"].items()}
    return marshal.dumps((f["defs"], f["refs"], info))


def test_same_source_same_facts_every_time() -> None:
    runs = {_facts(SOURCE) for _ in range(60)}
    assert len(runs) == 1


def test_first_assignment_in_source_defines_the_attribute() -> None:
    defs = {d[0]: d for d in pyextract.extract(SOURCE, "bank", False, "bank.py")["defs"]}
    assert defs["bank.Account.owner"][3] == 4  # `self.owner = owner` in open, not the later ones
    assert defs["bank.Account.balance"][3] == 5
    assert defs["bank.limit"][3] == 17
