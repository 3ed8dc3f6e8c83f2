"""Suspects (`tomo.oi.suspects`): trials show, one by one, the definitions the failing test really ran.

The project is the lab's LRU cache in small: the test that fails reads an entry and then overfills the cache, the bug
is in ``get`` (it never marks the entry as used), and the function a context pack or a first guess points at is
``put``. The runs are real: the reproduction runs in the sandbox under the exec gate's site hook.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oi.oi_support import LIMITS, PYTEST
from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, commands
from tomo.events import ListSink, Notice
from tomo.oi.context_pack import constant_spans, module_constants
from tomo.oi.engine import Engine, TurnSummary
from tomo.oi.gates import TurnGates
from tomo.oi.line_fix import anchored, corrected, numbered_lines, numbered_view, restated_lines, spans_of
from tomo.oi.suspects import definitions, frames, suspects
from tomo.oi.trials import Trials, trial_turn

CACHE = '''\
from collections import OrderedDict

_LIMIT_WORDS = ("capacity",)


class Cache:
    def __init__(self, capacity):
        self.capacity = capacity
        self._data = OrderedDict()

    def get(self, key):
        if key not in self._data:
            return None
        return self._data[key]

    def put(self, key, value):
        self._data[key] = value
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def clear(self):
        self._data.clear()


def unused(x):
    return x
'''
TESTS = '''\
from cache import Cache


def test_put_then_get():
    cache = Cache(2)
    cache.put("a", 1)
    assert cache.get("a") == 1


def test_reading_keeps_an_entry_fresh():
    cache = Cache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert cache.get("a") == 1
'''
# the second test, asked after a pass; it fails without the fix too (a read keeps 'x', so 'y' goes)
FRESH = "from cache import Cache\n\n\ndef test_fresh():\n    cache = Cache(2)\n    cache.put('x', 1)\n" \
    "    cache.put('y', 2)\n    cache.get('x')\n    cache.put('z', 3)\n    assert cache.get('y') is None\n"
TASK = "test_reading_keeps_an_entry_fresh fails: the cache throws away an entry we have just read. Fix the cache."
WRONG_PUT = '''\
    def put(self, key, value):
        if len(self._data) >= self.capacity and key not in self._data:
            self._data.popitem(last=False)
        self._data[key] = value
'''
RIGHT_GET = '''\
    def get(self, key):
        if key not in self._data:
            return None
        self._data.move_to_end(key)
        return self._data[key]
'''


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    root = one_module(tmp_path / "cache", "cache", CACHE, TESTS)
    (root / "conftest.py").write_text("")
    return root


def one_module(root: Path, module: str, code: str, test: str) -> Path:
    """A project of one module and its one test file (``tests/test_MODULE.py``)."""
    (root / "tests").mkdir(parents=True)
    (root / f"{module}.py").write_text(code)
    (root / "tests" / f"test_{module}.py").write_text(test)
    return root


def engine_for(model: TemperedScript, sandbox, root: Path, **kwargs) -> Engine:
    kwargs.setdefault("max_rounds", 4)
    return Engine(model, sandbox, workspace=root, context=False, limits=LIMITS, check=PYTEST, claim="repro", **kwargs)


async def test_each_trial_shows_the_next_definition_the_failing_test_ran(strict, cache):
    model = TemperedScript([block("python cache.py", WRONG_PUT), block("python cache.py", RIGHT_GET),
                            block("python", FRESH)])
    engine = engine_for(model, strict, cache)
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert engine.last.outcome == "verified" and "move_to_end" in (cache / "cache.py").read_text()
    # the project's failing test alone is the reproduction, run under the hook with every module watched
    assert commands(sink)[0] == f"{PYTEST} tests/test_cache.py::test_reading_keeps_an_entry_fresh"
    said = [n.text for n in sink.of(Notice) if "the failing test ran" in n.text]
    assert said and "`Cache.get`" in said[0] and "`Cache.put`" in said[0]
    assert "clear" not in said[0] and "unused" not in said[0]  # never ran, so never a suspect
    first, second = (sent[-1].content for sent in model.sent[:2])
    focus = "The failing test ran `{}`; the fix may well go here"
    # no context pack here and no frame in the project's code: the suspects come in the file's order
    assert focus.format("Cache.__init__") in first and focus.format("Cache.get") not in first
    assert focus.format("Cache.get") in second and "        return self._data[key]" in second
    assert "```python cache.py\n    def get(self, key):\n        <every line" in second  # the example is that method


async def test_a_trial_that_gave_the_code_back_unchanged_is_told_so(strict, cache):
    unchanged = CACHE.split("    def get", 1)[0].split("class Cache:\n", 1)[1]  # __init__ exactly as it is
    model = TemperedScript([block("python cache.py", unchanged), block("python cache.py", RIGHT_GET),
                            block("python", FRESH)])
    engine = engine_for(model, strict, cache)
    await trial_turn(engine, [], TASK, ListSink())
    first, second = (sent[-1].content for sent in model.sent[:2])
    told = "The last answer gave the code back exactly as it is now"
    assert told not in first and told in second
    assert engine.last.outcome == "verified"
    assert model.seen == [0.2, 1.0, 0.8]  # the trial after it is sampled hotter than a retry; the second test, hot


async def test_each_trial_in_a_row_that_tries_nothing_new_is_sampled_hotter_up_to_a_cap(strict, cache):
    unchanged = CACHE.split("    def get", 1)[0].split("class Cache:\n", 1)[1]
    prose = {"content": "The cache looks right to me."}
    emptied = WRONG_PUT.replace("popitem(last=False)", "clear()")
    model = TemperedScript([block("python cache.py", unchanged), prose, block("python cache.py", unchanged), prose,
                            block("python cache.py", WRONG_PUT), block("python cache.py", emptied)])
    engine = engine_for(model, strict, cache, max_rounds=7)  # six trials and the round kept for a second test
    sink = ListSink()
    await trial_turn(engine, [], TASK, sink)
    assert engine.last.outcome != "verified"
    # the last request asked for numbered lines; the whole method it got instead was tried all the same
    assert "with their line numbers" in model.sent[5][-1].content
    assert len([n for n in sink.of(Notice) if n.text.startswith("trial failed")]) == 2
    # unchanged, no edit, unchanged, no edit: 1.0, 1.2, then the cap; a trial that tried a fix cools, but after
    # repeats in this turn only to a step above the retry temperature (1.0, not 0.8)
    assert model.seen == [0.2, 1.0, 1.2, 1.2, 1.2, 1.0]


async def test_a_missing_feature_has_no_suspects(strict, cache):
    """A reproduction that fails on a name the task asks for ran only the code around the gap."""
    task = "Cache needs a size(), the number of entries."  # no "add": a feature tomo knows gets no model test
    repro = "from cache import Cache\n\n\ndef test_size():\n    cache = Cache(2)\n    cache.put('a', 1)\n" \
            "    assert cache.size() == 1\n"
    fixed = CACHE.replace("        return self._data[key]\n", "        self._data.move_to_end(key)\n        return "
                          "self._data[key]\n", 1)
    (cache / "cache.py").write_text(fixed)  # the project's own tests pass: the reproduction is the model's
    model = TemperedScript([block("python tests/test_repro.py", repro), block("python cache.py", WRONG_PUT)])
    engine = engine_for(model, strict, cache, max_rounds=3)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    assert any("reproduction kept" in n.text for n in sink.of(Notice))
    assert not any("the failing test ran" in n.text for n in sink.of(Notice))
    assert "The failing test ran" not in model.sent[1][-1].content


def test_suspects_come_in_the_preferred_order_then_the_deepest_frame_first(tmp_path: Path) -> None:
    (tmp_path / "cache.py").write_text(CACHE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cache.py").write_text(TESTS)
    names = {d.name: d for d in definitions(tmp_path, "cache.py")}
    assert list(names) == ["Cache.__init__", "Cache.get", "Cache.put", "Cache.clear", "unused"]
    ran = {"cache.py": {8, 9, 12, 14, 17, 18, 19}, "tests/test_cache.py": {5, 6, 7}}  # a test file is no suspect
    output = "tests/test_cache.py:16: in test_x\n    cache.put('c', 3)\ncache.py:19: in put\n    ...\n"
    assert frames(output) == [("cache.py", 19), ("tests/test_cache.py", 16)]
    assert [d.name for d in suspects(tmp_path, ran, output)] == ["Cache.put", "Cache.__init__", "Cache.get"]
    preferred = [("cache.py", "get")]  # a bare name matches the method
    assert [d.name for d in suspects(tmp_path, ran, output, preferred)] == ["Cache.get", "Cache.put",
                                                                           "Cache.__init__"]
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert definitions(tmp_path, "broken.py") == []


def test_a_private_module_constant_is_shown_with_the_code_that_uses_it() -> None:
    lines = ['_WHOLE = re.compile(r"(?:\\d+[hms])+")', "limit = 3", "MAX = 4"]
    assert module_constants(lines, ["    if not _WHOLE.fullmatch(text) or limit > MAX:"]) == [lines[0], lines[2]]


AGES = 'ADULT = 18\n\n\ndef is_adult(age):\n    """Whether someone of ``age`` may sign."""\n    return age > ADULT\n'
TEST_AGES = "from ages import is_adult\n\n\ndef test_eighteen_may_sign():\n    assert is_adult(18)\n"


async def test_every_second_round_asks_for_the_wrong_line_alone_and_tomo_lays_it_in(strict, tmp_path):
    root = one_module(tmp_path / "ages", "ages", AGES, TEST_AGES)
    rewrite = "def is_adult(age):\n    return age > ADULT + 1\n"  # the whole definition, still wrong
    line = "The comparison must include 18:\n```\n6:     return age >= ADULT\n```\n"
    nineteen = "from ages import is_adult\n\n\ndef test_bounds():\n    assert is_adult(18) and not is_adult(17)\n"
    model = TemperedScript([block("python ages.py", rewrite), {"content": line}, block("python", nineteen)])
    engine = engine_for(model, strict, root)
    sink = ListSink()
    await trial_turn(engine, [], "is_adult(18) is False, but 18-year-olds may sign. Fix it.", sink)
    assert engine.last.outcome == "verified"
    assert (root / "ages.py").read_text() == AGES.replace("age > ADULT", "age >= ADULT")  # that line, nothing else
    first, second = (sent[-1].content for sent in model.sent[:2])
    assert "with its line numbers" not in first
    assert "Here it is with its line numbers in the file:\n```\n1: ADULT = 18\n4: def is_adult(age):\n" in second
    assert "6:     return age > ADULT\n```" in second and "An earlier fix did not work" in second


async def test_a_line_reply_that_changes_nothing_is_asked_again_the_same_request_hotter(strict, tmp_path):
    """Qwen 1.5B gave a wrong line back unchanged in most samples of one request and the corrected one in some; the
    same request again is cheap (the server has its prompt cached), so it is asked again before the trials move on."""
    root = one_module(tmp_path / "ages", "ages", AGES, TEST_AGES)
    rewrite = "def is_adult(age):\n    return age > ADULT + 1\n"
    echo = {"content": "Line 6 is wrong.\n```\n6:     return age > ADULT\n```"}
    quoted = {"content": "The comparison on line 6 leaves 18 out:\n```\n6: return age > ADULT\n```\nIt must be:\n"
                         "```python\n6:     `return age >= ADULT`\n```"}
    nineteen = "from ages import is_adult\n\n\ndef test_bounds():\n    assert is_adult(18) and not is_adult(17)\n"
    model = TemperedScript([block("python ages.py", rewrite), echo, quoted, block("python", nineteen)])
    engine = engine_for(model, strict, root, max_rounds=5)
    sink = ListSink()
    await trial_turn(engine, [], "is_adult(18) is False, but 18-year-olds may sign. Fix it.", sink)
    assert engine.last.outcome == "verified" and engine.last.rounds == 4
    assert (root / "ages.py").read_text() == AGES.replace("age > ADULT", "age >= ADULT")
    assert model.sent[1] == model.sent[2]  # the very same request
    assert "First say in one short sentence which line is wrong" in model.sent[1][-1].content
    assert model.seen[1:3] == [0.8, 1.0]  # hotter for the second reply
    assert any(n.text.startswith("the corrected lines change nothing: the same request again, hotter (reply 2 of")
               for n in sink.of(Notice))


TEMPERATURE = ('def to_celsius(value):\n    return (value - 32) * 5 // 9\n\n\n'
               'def convert(value):\n    celsius = to_celsius(value)\n    return round(celsius, 2)\n')
TEST_TEMPERATURE = "from temperature import convert\n\n\ndef test_hundred():\n    assert convert(100) == 37.78\n"


async def test_the_line_form_shows_every_suspect_of_the_file_together(strict, tmp_path):
    """Shown `convert` alone, Qwen 1.5B wrote the fix of `to_celsius` (which `convert` calls) on a line of `convert`.
    A reply without a numbered line or an edit block is asked again like a line that changes nothing."""
    root = one_module(tmp_path / "units", "temperature", TEMPERATURE, TEST_TEMPERATURE)
    same = "def convert(value):\n    celsius = to_celsius(value)\n    return round(celsius, 1)\n"
    prose = {"content": "Line 2 divides with //, which drops the fraction."}
    fix = {"content": "```\n6: return (value - 32) * 5 / 9\n```"}  # the number of a line of convert
    freezing = "from temperature import convert\n\n\ndef test_above():\n    assert convert(33) == 0.56\n"
    model = TemperedScript([block("python temperature.py", same), block("python temperature.py", same), prose, fix,
                            block("python", freezing)])
    engine = engine_for(model, strict, root, max_rounds=6)
    sink = ListSink()
    await trial_turn(engine, [], "convert(100) gives 37 instead of 37.78. Fix it.", sink)
    assert engine.last.outcome == "verified"
    assert (root / "temperature.py").read_text() == TEMPERATURE.replace("5 // 9", "5 / 9")
    request = model.sent[2][-1].content
    assert model.sent[3] == model.sent[2]
    assert "The failing test ran `to_celsius`, `convert`. Here they are with their line numbers in the file:\n```\n" \
           "1: def to_celsius(value):\n2:     return (value - 32) * 5 // 9\n5: def convert(value):\n" in request
    assert any(n.text.startswith("the corrected lines are missing: the same request again") for n in sink.of(Notice))


def test_a_corrected_line_under_a_wrong_number_or_in_prose_is_read_as_the_line_it_is_alike_to() -> None:
    lines = TEMPERATURE.splitlines()
    allowed = {n for n, line in enumerate(lines, 1) if line.strip()}
    fix = "return (value - 32) * 5 / 9"
    assert anchored({6: fix}, lines, allowed) == {2: fix}  # nothing like line 6, alike to line 2
    assert anchored({2: "return (value - 32) * 5 // 10"}, lines, allowed) == {2: "return (value - 32) * 5 // 10"}
    assert anchored({6: "x = 1"}, lines, allowed) == {6: "x = 1"}  # alike to no line: its number stands
    prose = f"Line 2 `return (value - 32) * 5 // 9` drops the fraction (`//`). It should be `{fix}`."
    assert restated_lines(prose, lines, allowed) == {2: fix}  # the quote is the line as it is; `//` is alike to none
    assert restated_lines("```\nreturn (value - 32) * 5 // 9\n```", lines, allowed) == {}
    twice = ["def f(x):", "    return x + 1", "def g(x):", "    return x + 2"]
    assert restated_lines("It should be `return x + 3`.", twice, {1, 2, 3, 4}) == {}  # alike to two lines: neither


async def test_line_replies_stop_at_the_rounds_kept_for_a_second_test(strict, tmp_path):
    root = one_module(tmp_path / "ages", "ages", AGES, TEST_AGES)
    echo = {"content": "```\n6:     return age > ADULT\n```"}
    model = TemperedScript([block("python ages.py", "def is_adult(age):\n    return age > 19\n"), echo, echo])
    engine = engine_for(model, strict, root, max_rounds=3)  # two trials and the round kept for a second test
    await trial_turn(engine, [], "is_adult(18) is False, but 18-year-olds may sign. Fix it.", ListSink())
    assert engine.last.outcome != "verified" and engine.last.rounds == 2
    assert (root / "ages.py").read_text() == AGES


def test_numbered_lines_are_read_only_where_shown_and_must_parse(tmp_path: Path) -> None:
    (tmp_path / "ages.py").write_text(AGES)
    (definition,) = definitions(tmp_path, "ages.py")
    view, allowed = numbered_view(tmp_path, "ages.py", spans_of([definition], [(1, 1)]))
    assert view.splitlines()[0] == "1: ADULT = 18" and allowed == {1, 4, 5, 6}  # blank lines are not offered
    reply = "Line 6: return age >= ADULT\n2: import os\n6: return 0\n"
    assert numbered_lines(reply, allowed) == {6: "return age >= ADULT"}  # line 2 was not shown; the first 6 wins
    quoted = ("Line 6: `return age > ADULT` is wrong.\n```\n6: return age > ADULT\n```\nso\n"
              "```\n6: `return age >= 18`\n```")
    assert numbered_lines(quoted, allowed) == {6: "return age >= 18"}  # the last block with a line, its quotes off
    assert numbered_lines("```\n6: return age >= 18\n```\n```\nprint(1)\n```", allowed) == {6: "return age >= 18"}
    # s44: a number before a fence's opening line; the fence's label is no line of code
    assert numbered_lines("6: ```python\nreturn age >= 18\n```", allowed) == {}
    spans = spans_of([definition], [(1, 1)])
    assert corrected(tmp_path, "ages.py", {6: "return age >= ADULT"}, spans) == [
        'def is_adult(age):\n    """Whether someone of ``age`` may sign."""\n    return age >= ADULT']
    assert corrected(tmp_path, "ages.py", {1: "ADULT = 21"}, spans) == ["ADULT = 21"]  # a constant on its own
    assert corrected(tmp_path, "ages.py", {6: "return (age >="}, spans) == []  # would not parse: nothing to lay in
    assert corrected(tmp_path, "ages.py", {6: "return age > ADULT"}, spans) == []  # the same line: no edit


ROMAN = '''\
_TABLE = [
    (10, "X"), (5, "V"),
    (9, "IX"), (4, "IV"), (1, "I"),
]


def to_roman(number):
    out = []
    for value, numeral in _TABLE:
        while number >= value:
            out.append(numeral)
            number -= value
    return "".join(out)
'''
TEST_ROMAN = "from roman import to_roman\n\n\ndef test_nine():\n    assert to_roman(9) == 'IX'\n"


async def test_a_table_the_suspect_uses_is_shown_whole_and_a_line_of_it_can_be_corrected(strict, tmp_path):
    """The lab's roman numeral bug is the order of a table over three lines; one-line constants alone hid it."""
    root = one_module(tmp_path / "roman", "roman", ROMAN, TEST_ROMAN)
    wrong = "def to_roman(number):\n    return 'V' + 'IV' * (number == 9)\n"  # the first trial fails
    line = '```\n3:     (5, "V"), (4, "IV"), (1, "I"),\n2:     (10, "X"), (9, "IX"),\n```\n'
    nineteen = "from roman import to_roman\n\n\ndef test_nineteen():\n    assert to_roman(19) == 'XIX'\n"
    model = TemperedScript([block("python roman.py", wrong), {"content": line},
                            block("python", nineteen)])
    engine = engine_for(model, strict, root)
    await trial_turn(engine, [], "to_roman(9) returns 'VIV' instead of 'IX'. Fix it.", ListSink())
    assert engine.last.outcome == "verified"
    swapped = '(10, "X"), (9, "IX"),\n    (5, "V"), (4, "IV"), (1, "I"),'
    assert (root / "roman.py").read_text() == ROMAN.replace('(10, "X"), (5, "V"),\n    (9, "IX"), (4, "IV"), (1, "I"),',
                                                            swapped)
    first, second = (sent[-1].content for sent in model.sent[:2])
    assert '_TABLE = [\n    (10, "X"), (5, "V"),\n    (9, "IX"), (4, "IV"), (1, "I"),\n]\n\n\ndef to_roman' in first
    assert ' 1: _TABLE = [\n 2:     (10, "X"), (5, "V"),\n 3:     (9, "IX"), (4, "IV"), (1, "I"),\n 4: ]\n 7: def' \
        in second


def test_a_constant_is_shown_whole_only_when_its_brackets_close_within_a_few_lines() -> None:
    lines = ROMAN.splitlines()
    assert constant_spans(lines, ["for value, numeral in _TABLE:"]) == [(1, 4)]
    assert module_constants(lines, ["_TABLE"]) == lines[:4]
    long = ["_BIG = ["] + ["    1,"] * 20 + ["]"]
    assert constant_spans(long, ["_BIG"]) == []  # too long to show: the function alone


def test_a_name_the_task_calls_and_nothing_defines_is_a_feature_to_add(strict, cache: Path) -> None:
    """A reproduction of a feature fails in the code around the gap (an event handler refusing an unknown event):
    those are no suspects. A name the project imports (`date`) or a builtin type's method is no new name."""
    (cache / "cache.py").write_text("from datetime import date\n" + CACHE)
    gates = TurnGates(cache, exec_gate=True, repro=False)
    gates.start()
    engine = engine_for(TemperedScript([]), strict, cache)

    def new(task: str) -> list[str]:
        return Trials(engine, TurnSummary(), gates, ListSink().emit, task)._new_names()

    assert new("Please add Cache.size() and Cache.peek(key): size() counts the entries.") == ["size", "peek"]
    assert new("Cache.get(key) after date(2024, 1, 1) and name.strip() forgets the entry.") == []


async def test_a_fix_that_only_the_project_s_failing_test_passes_is_caught_by_a_second_test(strict, tmp_path):
    """Measured on the held-out suite: a trial passed the project's one failing test (and the rest of its tests) with
    a fix that is wrong for every other income, and tomo said verified. The second test is asked for then too."""
    root = one_module(tmp_path / "ages", "ages", AGES, TEST_AGES)
    overfit = "def is_adult(age):\n    return True\n"
    child = "from ages import is_adult\n\n\ndef test_a_child_may_not_sign():\n    assert not is_adult(10)\n"
    model = TemperedScript([block("python ages.py", overfit), block("python", child),
                            {"content": "```\n6:     return age >= ADULT\n```"}])
    engine = engine_for(model, strict, root)
    sink = ListSink()
    await trial_turn(engine, [], "is_adult(18) is False, but 18-year-olds may sign. Fix it.", sink)
    assert any("a second test, asked afresh, fails on this fix: ages.py put back, and tests/test_tomo_repro.py judges "
               "the next trials with the project's failing tests" in n.text for n in sink.of(Notice))
    assert engine.last.outcome == "verified" and engine.last.rounds == 3
    assert (root / "ages.py").read_text() == AGES.replace("age > ADULT", "age >= ADULT")
    assert (root / "tests" / "test_tomo_repro.py").read_text() == child  # it judged the fix, so it stays
    assert "A fix must pass this second test too" in model.sent[2][-1].content  # and the next request shows it


async def test_a_second_test_the_code_refuses_leaves_the_project_s_failing_test_the_judge(strict, tmp_path):
    """s43 lost lru's right fix: the project's failing test passed it, and the second test's `LRUCache(0)` raised
    the code's own "capacity must be at least 1", which put the fix back. An input the code refuses by design is
    the second test's mistake: the fix stays, checked once by the project's test, so unverified."""
    guarded = AGES.replace("    return age > ADULT", "    if age < 0:\n        raise ValueError(f'age must not be "
                                                     "negative, got {age}')\n    return age > ADULT")
    root = one_module(tmp_path / "ages", "ages", guarded, TEST_AGES)
    fixed = guarded.replace("age > ADULT", "age >= ADULT")
    negative = "from ages import is_adult\n\n\ndef test_unborn():\n    assert not is_adult(-1)\n"
    model = TemperedScript([block("python ages.py", fixed.split("\n\n\n", 1)[1]), block("python", negative)])
    engine = engine_for(model, strict, root)
    sink = ListSink()
    await trial_turn(engine, [], "is_adult(18) is False, but 18-year-olds may sign. Fix it.", sink)
    assert (root / "ages.py").read_text() == fixed
    assert not (root / "tests" / "test_tomo_repro.py").exists()
    assert engine.last.outcome == "unverified" and engine.last.rounds == 2
    assert any("the second test fails by its own mistake, so the fix is checked once, by a test that covers one "
               "case of the project" in n.text for n in sink.of(Notice))


async def test_a_refusal_the_fix_itself_added_is_no_mistake_of_the_second_test(strict, tmp_path):
    """The code as the turn found it takes `is_adult(-1)`; a fix that makes it raise is what the second test
    caught, so the fix is put back as before."""
    root = one_module(tmp_path / "ages", "ages", AGES, TEST_AGES)
    raising = ("def is_adult(age):\n    if age < 0:\n        raise ValueError(f'age must not be negative, got {age}')\n"
               "    return age >= ADULT\n")
    negative = "from ages import is_adult\n\n\ndef test_unborn():\n    assert not is_adult(-1)\n"
    model = TemperedScript([block("python ages.py", raising), block("python", negative),
                            {"content": "```\n6:     return age >= ADULT\n```"}])
    engine = engine_for(model, strict, root)
    sink = ListSink()
    await trial_turn(engine, [], "is_adult(18) is False, but 18-year-olds may sign. Fix it.", sink)
    assert any("a second test, asked afresh, fails on this fix: ages.py put back" in n.text for n in sink.of(Notice))
    assert (root / "ages.py").read_text() == AGES.replace("age > ADULT", "age >= ADULT")
    assert engine.last.outcome == "verified" and engine.last.rounds == 3
