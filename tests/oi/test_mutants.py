"""One-token changes (`tomo.oi.mutants`) and the trials that try them (`--mutants`) in the real sandbox.

The bugs are the lab's: a merge that needs `<=` where it has `<`, a page count that floors, a layer guard that keeps
the first value, a table with 9 after 5. The search proposes; the reproduction and the project's check decide, and a
fix found against the model's own test is never called verified.
"""

from __future__ import annotations

import ast

from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import REPRO, RIGHT, SECOND, SHAPES, TASK, block, engine_for
from oi.test_trials import shapes as shapes  # the fixture: a project whose `double` adds 1 too many
from tomo.events import BlockOutput, ListSink, Notice, ReproductionKept
from tomo.oi.mutants import mutants
from tomo.oi.trials import trial_turn

MERGE = '''\
def merge(intervals):
    """Merges "<" touching ranges."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
'''


def changed_lines(before: str, after: str) -> list[str]:
    return [new for old, new in zip(before.splitlines(), after.splitlines(), strict=False) if old != new]


def test_operators_of_the_lines_the_test_ran_are_swapped_and_nothing_else_is_touched() -> None:
    found = mutants(MERGE, [5])
    whats = [m.what for m in found]
    assert "`<` → `<=`" in whats and "`and` → `or`" in whats and "condition negated" in whats
    fixed = next(m for m in found if m.what == "`<` → `<=`")
    assert changed_lines(MERGE, fixed.text) == ["        if merged and start <= merged[-1][1]:"]
    for mutant in found:
        ast.parse(mutant.text)  # every candidate parses
        assert mutant.line == 5 and '"<"' in mutant.text  # the docstring's "<" is text, never an operator
        assert len(changed_lines(MERGE, mutant.text)) == 1  # one line, the one the test ran
    assert all("[-2]" not in m.text and "[0][1]" not in m.text for m in found)  # an index is never moved
    assert mutants(MERGE, []) == [] and mutants("def broken(:\n", [1]) == []
    assert len(mutants(MERGE, range(1, 10), limit=3)) == 3


def test_a_floor_a_guard_and_a_table_have_their_own_changes() -> None:
    pages = "def pages(total, per_page):\n    return max(1, total // per_page)\n"
    whats = {m.what: m.text for m in mutants(pages, [2])}
    assert "return max(1, -(-(total) // (per_page)))" in whats["floor division → ceiling division"]
    assert "return max(1, total / per_page)" in whats["`//` → `/`"]
    layers = ("def load(layers):\n    merged = {}\n    for layer in layers:\n        for key, value in layer.items():\n"
              "            if key not in merged:\n                merged[key] = value\n    return merged\n")
    whats = {m.what: m.text for m in mutants(layers, [5])}
    dropped = whats["`if key not in merged:` dropped, its body kept"]
    assert "        for key, value in layer.items():\n            merged[key] = value\n    return merged" in dropped
    assert "if key in merged:" in whats["`not in` → `in`"]
    assert "if not (key not in merged):" in whats["condition negated"]
    table = 'TABLE = [\n    (10, "X"), (5, "V"), (9, "IX"),\n    (1, "I"),\n]\n\n\ndef first(): return TABLE[0]\n'
    swaps = [m for m in mutants(table, [], [(1, 4)]) if "swapped" in m.what]
    assert [m.what for m in swaps] == ['`(10, "X")` and `(5, "V")` swapped', '`(5, "V")` and `(9, "IX")` swapped',
                                       '`(9, "IX")` and `(1, "I")` swapped']
    assert '(10, "X"), (9, "IX"), (5, "V"),' in swaps[1].text
    assert mutants(table, [], []) == []  # a table only when it is one of the constants the suspects use


async def test_a_one_token_fix_of_the_task_s_own_example_is_verified_without_a_model_fix(strict, shapes):
    """`double` adds 1 too many; the task states `double(2) should give 4`. tomo tries `1` → `2` (the
    reproduction still fails, put back) and `1` → `0`, which passes: the model is asked only for the second test."""
    model = TemperedScript([block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double(2) returns 5, but double(2) should give 4. Please fix double.", sink,
                     mutate=True)
    summary = engine.last
    assert summary.outcome == "verified" and summary.rounds == 1 and len(model.sent) == 1
    assert "Write a different test" in model.sent[0][-1].content  # the one request: the second test
    assert "return add(x, x) + 0\n" in (shapes / "shapes.py").read_text()
    said = [n.text for n in sink.of(Notice)]
    assert any(t.startswith("tomo tries") and "one-token changes" in t for t in said)
    assert any("passed the reproduction and the check: shapes.py:7: `1` → `0`" in t for t in said)
    assert not any("stays unverified" in t for t in said)


async def test_a_one_token_fix_of_the_model_s_own_test_is_never_called_verified(strict, shapes):
    """...and, since there is no claim to guard, no second test is asked for: the lab's model wrote a wrong one that
    put a right fix back."""
    wrong_second = "from shapes import double\n\n\ndef test_double_three():\n    assert double(3) == 7\n"
    model = TemperedScript([block("python", REPRO), block("python", wrong_second)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    summary = engine.last
    assert summary.outcome == "unverified" and not summary.verified and summary.rounds == 1
    assert len(model.sent) == 1 and not (shapes / "tests" / "test_tomo_repro_2.py").exists()
    assert "return add(x, x) + 0\n" in (shapes / "shapes.py").read_text()  # the change stays, said as unverified
    assert any("a test the model wrote" in n.text and "stays unverified" in n.text for n in sink.of(Notice))


async def test_when_no_one_token_change_passes_the_model_s_trials_go_on_from_the_code_as_it_was(strict, shapes):
    """A bug no single token fixes (a digit count added): every candidate (of the guard the test ran) is put back,
    and the model's fix is judged on the code the turn found."""
    counted = SHAPES.replace("    return add(x, x) + 1", "    if x < 0:\n        raise ValueError('no negatives')\n"
                                                           "    return add(x, x) + len(str(x))")
    (shapes / "shapes.py").write_text(counted)
    right = "def double(x):\n    return add(x, x)\n"
    model = TemperedScript([block("python shapes.py", right), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double(2) returns 5, but double(2) should give 4. Please fix double.", sink,
                     mutate=True)
    assert engine.last.outcome == "verified" and engine.last.rounds == 2
    assert (shapes / "shapes.py").read_text() == SHAPES.replace('    """Twice x."""\n    return add(x, x) + 1',
                                                                "    return add(x, x)")  # the model's whole def
    said = [n.text for n in sink.of(Notice)]
    assert any("tomo tries 5 one-token changes" in t for t in said)  # the textbook's swaps only when asked
    assert any("no one-token change made the reproduction and the check pass" in t for t in said)


async def test_when_no_one_token_change_passes_the_model_s_test_another_test_judges_a_second_search(strict,
                                                                                                    shapes):
    """The model's first test asserts `double(2) == 7`, which no one-token change reaches: tomo asks for another
    test in its place, and the search against it finds `1` → `0`; that test is the reproduction kept, and the fix,
    found against a test the model wrote, stays unverified."""
    wrong = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == 7\n"
    model = TemperedScript([block("python", wrong), block("python", REPRO)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double does not give twice its argument. Please fix double.", sink, mutate=True)
    summary = engine.last
    assert summary.outcome == "unverified" and summary.rounds == 2 and len(model.sent) == 2
    asked = model.sent[1][-1].content
    assert "no small change of the code" in asked and "double(2) == 7" not in asked  # the first test is not shown
    assert "return add(x, x) + 0\n" in (shapes / "shapes.py").read_text()
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO  # the second test judged, and stays
    said = [n.text for n in sink.of(Notice)]
    assert any("no one-token change made the reproduction and the check pass: tomo asks for another test" in t
               for t in said)
    assert any("another test of the problem (1 of 2)" in t for t in said)
    assert any("passed the reproduction and the check: shapes.py:7: `1` → `0`" in t for t in said)
    assert any("a test the model wrote" in t and "stays unverified" in t for t in said)


async def test_when_no_other_test_finds_a_change_the_first_test_judges_the_model_s_trials_again(strict, shapes):
    """A bug no single token fixes: the first test is right, another asked is no test, the next one's search finds
    nothing; the first test is back in its file, and the model's fix passes it and a second test (verified)."""
    counted = SHAPES.replace("    return add(x, x) + 1", "    if x < 0:\n        raise ValueError('no negatives')\n"
                                                           "    return add(x, x) + len(str(x))")
    (shapes / "shapes.py").write_text(counted)
    another = "from shapes import double\n\n\ndef test_double_two():\n    assert double(2) == 4\n"
    model = TemperedScript([block("python", REPRO), {"content": "I cannot write another."}, block("python", another),
                            block("python shapes.py", RIGHT), block("python", SECOND)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink, mutate=True)
    assert engine.last.outcome == "verified" and engine.last.rounds == 5 and len(model.sent) == 5
    assert (shapes / "tests" / "test_tomo_repro.py").read_text() == REPRO  # the first test, back and kept
    assert "double(2) == 4" in model.sent[3][-1].content and "test_double_two" not in model.sent[3][-1].content
    said = [n.text for n in sink.of(Notice)]
    assert sum("one-token changes of the lines" in t for t in said) == 2  # the first test's search, the third's
    assert any("(2 of 2)" in t for t in said) and any("is the first test again" in t for t in said)
    assert any("no one-token change made the reproduction and the check pass: it is set aside" in t for t in said)


def test_a_shared_mutable_default_and_an_ascii_letter_class_have_their_own_changes() -> None:
    cart = ('class Cart:\n    def __init__(self, owner: str, lines: dict[str, int] = {}) -> None:\n'
            '        """A cart."""\n        self.lines = lines\n')
    fixed = next(m for m in mutants(cart, [4]) if "shared default" in m.what)
    assert fixed.text == ('class Cart:\n'
                          '    def __init__(self, owner: str, lines: dict[str, int] | None = None) -> None:\n'
                          '        """A cart."""\n        if lines is None:\n            lines = {}\n'
                          '        self.lines = lines\n')
    assert not [m for m in mutants(cart, []) if "shared default" in m.what]  # the body never ran: not a suspect
    words = 'import re\n\n_WORD = re.compile(r"[a-z]+(?:\'[a-z]+)*")\nNOT_A_PATTERN = "[a-z]"\n'
    found = mutants(words, [], [(3, 4)])
    assert [m.what for m in found] == ["ASCII letters in `[a-z]+(?:'[a-z]+)*` made any letter"]
    assert '_WORD = re.compile(r"[^\\W\\d_]+(?:\'[^\\W\\d_]+)*")\nNOT_A_PATTERN = "[a-z]"' in found[0].text
    space: dict[str, object] = {}
    exec(found[0].text, space)  # the changed module: its pattern keeps accented words whole, digits out
    assert space["_WORD"].findall("Le café et l'été 2024") == ["Le", "café", "et", "l'été"]  # type: ignore[attr-defined]


async def test_a_one_token_fix_of_a_result_the_task_reports_as_wrong_is_kept_but_never_called_verified(strict,
                                                                                                         shapes):
    """"double(2) returns 5, but ...": the reproduction asserts 5 is gone (tomo.oi.stated.reported_examples), which
    `1` → `2` would pass as well as `1` → `0`; the project's check must hold, and the claim stays unverified."""
    (shapes / "tests" / "test_shapes.py").write_text(  # holds now, and `+ 2` breaks it
        "from shapes import double\n\n\ndef test_double_small():\n    assert double(0) <= 1\n")
    model = TemperedScript([])  # no model round at all
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double(2) returns 5, but twice 2 is 4. Please fix double.", sink, mutate=True)
    assert [k.by for k in sink.of(ReproductionKept)] == ["reported"]
    summary = engine.last
    assert summary.outcome == "unverified" and summary.rounds == 0 and not model.sent
    assert "return add(x, x) + 0\n" in (shapes / "shapes.py").read_text()
    said = [n.text for n in sink.of(Notice)]
    assert any("should no longer give `5`" in t for t in said)
    assert any("against a test that the result the task reports as wrong is gone" in t for t in said)
    tried = [b.output for b in sink.of(BlockOutput) if b.output.startswith("tomo tried")]
    assert tried[0].startswith("tomo tried `1` → `2`") and len(tried) == 2  # it passed the test, not the check


async def test_a_model_fix_of_a_result_the_task_reports_as_wrong_is_kept_unverified_and_asks_no_second_test(
        strict, shapes):
    model = TemperedScript([block("python shapes.py", RIGHT)])  # without --mutants: the model's fix
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "double(2) returns 5, but twice 2 is 4. Please fix double.", sink)
    assert engine.last.outcome == "unverified" and engine.last.rounds == 1 and len(model.sent) == 1
    assert "return add(x, x)\n" in (shapes / "shapes.py").read_text()
    assert any("only asserts that the result the task reports as wrong is gone" in n.text for n in sink.of(Notice))


LRU = '''\
from collections import OrderedDict


class LRU:
    def __init__(self, capacity):
        self.capacity = capacity
        self._data = OrderedDict()

    def get(self, key, default=None):
        if key in self._data:
            return self._data[key]
        return default

    def put(self, key, value):
        if key in self._data:
            self._data.move_to_end(key)
            self.log(value)
        self._data[key] = value
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def log(self, value):
        pass
'''


def test_a_call_on_the_object_s_state_made_under_a_guard_is_added_under_the_same_guard_in_a_sibling() -> None:
    # the lab's LRU cache: `put` refreshes an entry it finds, `get` does not, so a read never counts as use
    found = mutants(LRU, [10])  # `get`'s guard ran
    added = [m for m in found if "added under" in m.what]
    assert [m.what for m in added] == ["`self._data.move_to_end(key)` added under `if key in self._data:` in "
                                       "`get`, as `put` does"]  # `self.log(value)`: `get` has no `value`
    assert changed_lines(LRU, added[0].text)[0] == "            self._data.move_to_end(key)"
    namespace: dict[str, object] = {}
    exec(compile(added[0].text, "lru.py", "exec"), namespace)  # the candidate's behaviour: a read is a use
    cache = namespace["LRU"](2)  # type: ignore[operator]
    cache.put("a", 1), cache.put("b", 2), cache.get("a"), cache.put("c", 3)
    assert "a" in cache._data and "b" not in cache._data
    assert not [m for m in mutants(LRU, [16]) if "added under" in m.what]  # `put` has it already


TEXTBOOK = '''\
def change(old, new):
    """Percent change: (new - old) / old."""
    diff = new - old
    return diff / new * 100


def clamp(value, low, high):
    return min(low, max(value, high))


def spread(*values, **options):
    return -values[0] * 2, options


def mean(scores):
    present = [s for s in scores if s is not None]
    return sum(present) / len(scores)
'''


def test_textbook_swaps_change_binary_operators_bounds_operand_order_and_variables() -> None:
    whats = {(m.line, m.what): m for m in mutants(TEXTBOOK, range(1, 20), limit=500)}
    assert (3, "`-` → `+`") in whats and (4, "`/` → `*`") in whats and (4, "`*` → `/`") in whats
    assert "    return max(low, max(value, high))" in whats[(8, "`min` → `max`")].text
    assert (8, "`max` → `min`") in whats
    # `-values[0]` and `*values` are no binary operators; the product after them is
    assert [what for (line, what), m in whats.items() if line in (11, 12) and m.tier == 1] == ["`*` → `/`"]
    assert "    diff = old - new\n" in whats[(3, "`new` and `old` swapped")].text
    assert "    return sum(present) / len(present)\n" in whats[(17, "`scores` → `present`")].text
    assert "    return diff / old * 100\n" in whats[(4, "`new` → `old`")].text
    # a local is only read in another's place after it is assigned; callees and targets are never swapped
    assert (16, "`scores` → `present`") not in whats and (4, "`diff` → `diff`") not in whats
    assert not any(what.startswith(("`sum`", "`len`", "`present` → `s`")) for _, what in whats)
    assert (4, "`diff / new` and `100` swapped") not in whats  # a product's order changes nothing
    assert (4, "`diff` and `new` swapped") in whats
    grouped = mutants("def f(a, b, c):\n    return a - (b - c)\n", [2], limit=500)
    swapped = next(m for m in grouped if m.what == "`a` and `b - c` swapped")
    assert swapped.text == "def f(a, b, c):\n    return (b - c) - (a)\n"  # the brackets stay where they were
    for mutant in whats.values():
        ast.parse(mutant.text)


def test_the_lab_s_own_kinds_come_first_and_the_textbook_ones_only_fill_the_budget_left() -> None:
    found = mutants(TEXTBOOK, range(1, 20), limit=500)
    tiers = [m.tier for m in found]
    assert tiers == sorted(tiers) and {0, 1, 2} <= set(tiers)
    lab_kinds = [m for m in found if m.tier == 0]
    assert mutants(TEXTBOOK, range(1, 20), limit=len(lab_kinds)) == lab_kinds
    assert mutants(TEXTBOOK, range(1, 20), limit=500, textbook=False) == lab_kinds  # `tomo run` without --textbook


async def test_a_variable_read_in_another_s_place_is_found_for_the_task_s_own_example(strict, shapes):
    """`mean` divides by every score, the missing ones too: no operator swap fixes it, `len(scores)` →
    `len(present)` does; the task's own example judges it, and a second test of the model's confirms it."""
    (shapes / "shapes.py").write_text(TEXTBOOK)
    (shapes / "tests" / "test_shapes.py").write_text(
        "from shapes import clamp\n\n\ndef test_clamp_inside():\n    assert clamp(5, 5, 5) == 5\n")
    second = "from shapes import mean\n\n\ndef test_mean_one_missing():\n    assert mean([1, None]) == 1\n"
    model = TemperedScript([block("python", second)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "mean([2, None, 4]) returns 2.0, but mean([2, None, 4]) should give 3.0. "
                                 "Please fix mean.", sink, mutate=True, textbook=True)
    assert engine.last.outcome == "verified" and engine.last.rounds == 1
    assert "    return sum(present) / len(present)\n" in (shapes / "shapes.py").read_text()
    said = [n.text for n in sink.of(Notice)]
    assert any("passed the reproduction and the check: shapes.py:17: `scores` → `present`" in t for t in said)


async def test_without_textbook_the_search_keeps_to_the_lab_s_kinds(strict, shapes):
    """The same task without ``textbook``: no candidate reads another variable, so none passes, and the model's
    (scripted, wrong) fix is all the turn has: nothing is called done."""
    (shapes / "shapes.py").write_text(TEXTBOOK)
    (shapes / "tests" / "test_shapes.py").write_text(
        "from shapes import clamp\n\n\ndef test_clamp_inside():\n    assert clamp(5, 5, 5) == 5\n")
    model = TemperedScript([block("python shapes.py", "def mean(scores):\n    return 0\n")])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "mean([2, None, 4]) returns 2.0, but mean([2, None, 4]) should give 3.0. "
                                 "Please fix mean.", sink, mutate=True)
    said = [n.text for n in sink.of(Notice)]
    assert any("no one-token change made the reproduction and the check pass" in t for t in said), said
    assert not any("`scores` → `present`" in t for t in said)
    assert engine.last.outcome != "verified" and "len(scores)" in (shapes / "shapes.py").read_text()
