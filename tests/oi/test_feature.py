"""Features (`tomo.oi.feature` and the trials' feature turn): what a task asks to add, the files it touches, and a
turn that asks for the whole change at once and holds each trial to the task's words, in the real sandbox.

The scripted replies are the shapes seen from Qwen2.5-Coder 1.5B in the lab: a change that adds half of what the task
asks (one file of two), then the whole of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oi.test_honest_outcomes import TemperedScript
from oi.test_trials import block, engine_for, shapes  # noqa: F401  (a fixture)
from tomo.events import ListSink, Notice, ReproductionKept
from tomo.oi.feature import (
    asked_for,
    by_keyword,
    completions,
    half_written,
    misplaced,
    missing,
    missing_keywords,
    placements,
    set_outside_init,
    shown,
    touched,
    unchanged_files,
    unchanged_functions,
    undefined_names,
    unused_parameters,
    widened,
    without,
)
from tomo.oi.trials import trial_turn

SOURCES = {
    "report.py": "from stock import Inventory\n\n\ndef render_report(inventory):\n    return 'ok'\n",
    "stock.py": "class Inventory:\n    def __init__(self):\n        self.items = {}\n",
    "cli.py": "import argparse\n\n\ndef main(argv):\n    parser = argparse.ArgumentParser()\n"
              "    parser.add_argument('--grep')\n    return parser.parse_args(argv)\n",
    "pkg/__init__.py": '"""A package."""\n',
}


def test_a_feature_asks_for_the_names_options_and_parameters_the_code_lacks():
    task = ("Add a method Inventory.low_stock(self, threshold: int = 5), give render_report a parameter "
            "low_stock_threshold: int = 5, an attribute `refund_due`, and an option --min-level next to --grep.")
    assert asked_for(task, SOURCES) == ["low_stock", "low_stock_threshold", "refund_due", "--min-level"]


def test_a_fix_or_plain_words_after_function_ask_for_nothing():
    # no "add": a fix names what exists, and a traceback can name code the project does not ship
    assert asked_for("on_tap_out(trip) crashes in kiosk/main.py: please fix render_report", SOURCES) == []
    # "function that" is English, not a name; render_report and --grep exist already
    assert asked_for("Add a function that renders, like render_report(inventory) with --grep does.", SOURCES) == []


def test_the_names_still_missing_are_read_from_the_code_not_its_comments():
    asked = ["low_stock", "--min-level"]
    commented = {**SOURCES, "stock.py": SOURCES["stock.py"] + "# low_stock comes later; --min-level too\n"}
    assert missing(asked, commented) == asked
    done = {**SOURCES, "stock.py": SOURCES["stock.py"] + "    def low_stock(self):\n        return []\n",
            "cli.py": SOURCES["cli.py"].replace("'--grep'", "'--min-level'")}
    assert missing(asked, done) == []


def test_the_files_touched_are_those_the_task_names_then_those_defining_what_it_uses(tmp_path: Path):
    task = "Add Inventory.low_stock() in stock.py and use it in pkg.report's render_report."
    assert touched(task, SOURCES) == ["stock.py", "report.py"]  # the package's docstring is no place for it
    for path, text in SOURCES.items():
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(text)
    assert shown(tmp_path, ["stock.py", "report.py"], task) == [("stock.py", SOURCES["stock.py"]),
                                                                ("report.py", SOURCES["report.py"])]


def test_a_parameter_a_change_adds_and_never_reads_is_a_half_written_feature():
    before = "def read(path, where=None):\n    return open(path)\n"
    after = ("def read(path, where=None, delimiter=','):\n    return open(path)\n\n\nclass Stock:\n"
             "    def low(self, threshold=5):\n        return [k for k, n in self.items if n < threshold]\n\n\n"
             "def new(_unused, size):\n    return 1\n")
    assert [f.said for f in unused_parameters(before, after)] == ["`read`'s `delimiter`", "`new`'s `size`"]
    assert unused_parameters(before, before) == []  # `where` was never read before either: not this change's


def test_a_name_a_changed_function_reads_and_nothing_defines_is_found_before_anything_runs():
    before = "import os\n\n\nclass Stock:\n    def skus(self):\n        return sorted(os.environ)\n"
    after = before + ("\n    def low(self, threshold=5):\n        return [s for s in self.skus() if inventory.get(s)]\n"
                      "\n\ndef path():\n    return __file__, len(os.sep), helper()\n\n\ndef helper():\n    return 1\n")
    # in its comprehension, said as its own
    assert [(f.function, f.said) for f in undefined_names(before, after)] == [("Stock.low",
                                                                               "`inventory` in `Stock.low`")]
    old_fault = "def f():\n    return g()\n"
    assert undefined_names(old_fault, old_fault + "\n\ndef h():\n    return 2\n") == []  # not this change's
    assert undefined_names("", "from m import *\n\n\ndef f():\n    return g()\n") == []  # anything may be g


HALF = "def triple(x):\n    return x * 3\n"
WHOLE = "def triple(x, plus=0):\n    return x * 3 + plus\n\n\ndef double(x, plus=0):\n    return add(x, x) + plus\n"


async def test_a_feature_turn_asks_for_no_test_and_puts_back_a_trial_that_lacks_a_name(strict, shapes):  # noqa: F811
    model = TemperedScript([block("python shapes.py", HALF), block("python shapes.py", WHOLE)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "Add triple(x) to shapes.py, and a keyword parameter plus=0 to double and triple.",
                     sink)
    first = model.sent[0][-1].content
    assert "First, a test" not in first and "```python shapes.py\ndef add(a, b):" in first  # the file, whole
    assert "for example\n```python shapes.py\ndef double(...):" in first  # a name the task uses, no placeholder
    said = [n.text for n in sink.of(Notice)]
    # nothing ran; the half that adds `triple` stays laid in, since lacking `plus` is no fault of the file
    assert any("lacks `plus`" in t and "shapes.py kept for the next trial" in t for t in said), said
    again = model.sent[1][-1].content  # shows the code as the turn found it, and what the last trial lacked
    assert "asks for `plus`, which the code still lacks" in again and "+def triple(x):" in again
    assert "```python shapes.py\ndef add(a, b):\n    return a + b\n\n\ndef double(x):" in again
    assert "tomo kept that trial's change to shapes.py" in again and again.count("def triple(x):") == 2  # code, diff
    assert not sink.of(ReproductionKept)
    text = (shapes / "shapes.py").read_text()
    assert "def triple(x, plus=0)" in text and "def double(x, plus=0)" in text
    # the check passed, but nothing failed before the change: the change stays, the claim is not "verified"
    assert engine.last.outcome == "unverified" and not engine.last.verified and engine.last.rounds == 2


async def test_a_feature_s_own_example_is_its_reproduction_and_the_whole_change_is_verified(strict,
                                                                                          shapes):  # noqa: F811
    second = "from shapes import double\n\n\ndef test_plus_zero():\n    assert double(2) == 5\n"
    right = "def double(x, plus=1):\n    return add(x, x) + plus\n"
    model = TemperedScript([block("python shapes.py", right), block("python", second)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "Add a keyword parameter plus: int = 1 to double. double(2, plus=3) should give 7.",
                     sink)
    kept = sink.of(ReproductionKept)
    assert [k.by for k in kept] == ["task"]
    assert "This test reproduces the problem" in model.sent[0][-1].content  # the example, shown to the trial
    assert engine.last.verified and engine.last.outcome == "verified"
    assert "def double(x, plus=1)" in (shapes / "shapes.py").read_text()


async def test_a_feature_trial_that_adds_a_parameter_it_never_reads_is_put_back(strict, shapes):  # noqa: F811
    unread = "def double(x, plus=0):\n    return add(x, x)\n"
    read = "def double(x, plus=0):\n    return add(x, x) + plus\n"
    model = TemperedScript([block("python shapes.py", unread), block("python shapes.py", read)])
    engine = engine_for(model, strict, shapes)
    sink = ListSink()
    await trial_turn(engine, [], "Add a keyword parameter plus=0 to double.", sink)
    assert "adds `double`'s `plus`, which nothing in the code reads" in model.sent[1][-1].content
    assert "return add(x, x) + plus" in (shapes / "shapes.py").read_text() and engine.last.rounds == 2


async def test_a_feature_trial_that_reads_a_name_nothing_defines_is_put_back(strict, shapes):  # noqa: F811
    unknown = "def double(x, plus=0):\n    return add(x, x) + plus + offset\n"
    read = "def double(x, plus=0):\n    return add(x, x) + plus\n"
    model = TemperedScript([block("python shapes.py", unknown), block("python shapes.py", read)])
    engine = engine_for(model, strict, shapes)
    await trial_turn(engine, [], "Add a keyword parameter plus=0 to double.", ListSink())
    assert "reads `offset` in `double`, which nothing defines there" in model.sent[1][-1].content
    assert "return add(x, x) + plus\n" in (shapes / "shapes.py").read_text() and engine.last.rounds == 2


WORDS = 'def join_words(words):\n    return "-".join(w.lower() for w in words)\n'
LABELS = "from words import join_words\n\n\ndef label(name):\n    return join_words(name.split())\n"
SEP_TASK = ("Add a keyword parameter sep: str = '-' to words.join_words and to labels.label(name, sep='-'), which "
            "passes it on to join_words.")
RIGHT_LABELS = ('from words import join_words\n\n\ndef label(name, sep="-"):\n'
                '    return join_words(name.split(), sep=sep)\n')
# never reads `sep`, and no way to finish it (no "-" to replace, no call but builtins): tomo keeps or puts back
HALF_WORDS = 'def join_words(words, sep="-"):\n    return chr(45).join(w.lower() for w in words)\n'
UNREAD_WORDS = 'def join_words(words, sep="-"):\n    return "-".join(w.lower() for w in words)\n'
RIGHT_WORDS = 'def join_words(words, sep="-"):\n    return sep.join(w.lower() for w in words)\n'


def two_halves(label_code: str, words_code: str) -> dict[str, str]:
    return {"content": f"Here.\n\n```python labels.py\n{label_code}```\n\n```python words.py\n{words_code}```\n"}


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    root = tmp_path / "labels"
    (root / "tests").mkdir(parents=True)
    (root / "words.py").write_text(WORDS)
    (root / "labels.py").write_text(LABELS)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_labels.py").write_text(
        "from labels import label\n\n\ndef test_label():\n    assert label('Hello World') == 'hello-world'\n")
    return root


async def test_a_feature_trial_s_right_half_stays_laid_in_while_its_faulty_half_is_asked_again(strict, labels):
    # the lab's slug task: `permalink` passed the separator on in every reply, `slugify` never read it
    model = TemperedScript([two_halves(RIGHT_LABELS, HALF_WORDS), block("python words.py", RIGHT_WORDS)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], SEP_TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("words.py put back" in t and "labels.py kept for the next trial" in t for t in said), said
    again = model.sent[1][-1].content
    assert "tomo kept that trial's change to labels.py" in again and "join_words(name.split(), sep=sep)" in again
    assert "in words.py first" in again and "for example\n```python words.py\ndef join_words(...)" in again
    assert again.index("```python words.py\ndef join_words(words):") < again.index("```python labels.py")
    assert (labels / "labels.py").read_text() == RIGHT_LABELS and (labels / "words.py").read_text() == RIGHT_WORDS
    assert engine.last.rounds == 2 and engine.last.outcome == "unverified"  # a feature with no reproduction


async def test_a_kept_half_is_put_back_when_no_trial_passes(strict, labels):
    # the second reply gives back only the kept half: nothing new, so nothing runs; the rounds run out
    model = TemperedScript([two_halves(RIGHT_LABELS, HALF_WORDS), block("python labels.py", RIGHT_LABELS)])
    engine = engine_for(model, strict, labels, max_rounds=2)
    sink = ListSink()
    await trial_turn(engine, [], SEP_TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("changed nothing new" in t for t in said)
    assert any(t.startswith("no trial passed: labels.py put back") for t in said), said
    assert (labels / "labels.py").read_text() == LABELS and (labels / "words.py").read_text() == WORDS
    assert engine.last.outcome != "verified" and not engine.last.verified


async def test_a_trial_that_fails_its_run_puts_back_the_kept_half_too(strict, labels):
    wrong = 'def join_words(words, sep="-"):\n    return sep.join(w.upper() for w in words)\n'
    model = TemperedScript([two_halves(RIGHT_LABELS, HALF_WORDS), block("python words.py", wrong),
                            two_halves(RIGHT_LABELS, RIGHT_WORDS)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], SEP_TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("labels.py, words.py put back" in t and "kept" not in t for t in said), said
    assert "tomo kept" not in model.sent[2][-1].content and "def label(name):" in model.sent[2][-1].content
    assert (labels / "words.py").read_text() == RIGHT_WORDS and engine.last.rounds == 3


def test_a_file_the_task_names_and_a_change_leaves_as_it_was_is_found_but_not_one_named_after_like():
    before = {"versions.py": "def parse_version(text):\n    return tuple(text.split('.'))\n",
              "updater.py": "def needs_update(installed, available):\n    return installed != available\n",
              "catalogue.py": "def entries():\n    return []\n"}
    task = ("Add is_newer(candidate, current) to versions.py (invalid versions raise ValueError like "
            "catalogue.entries does). Then make updater.needs_update use it.")
    after = {**before, "versions.py": before["versions.py"] + "\n\ndef is_newer(a, b):\n    return a > b\n"}
    assert unchanged_files(task, before, after) == ["updater.py"]  # catalogue.py is named after "like"
    done = {**after, "updater.py": "def needs_update(old, new):\n    return is_newer(new, old)\n"}
    assert unchanged_files(task, before, done) == []


async def test_a_feature_trial_that_leaves_a_named_file_as_it_was_keeps_its_new_half_and_is_asked_again(strict,
                                                                                                         labels):
    # the lab's version task: is_newer written into versions.py, updater.needs_update never made to use it
    task = "Add a keyword parameter sep: str = '-' to words.py's join_words, and make labels.label pass sep='_'."
    underscored = 'from words import join_words\n\n\ndef label(name):\n    return join_words(name.split(), sep="_")\n'
    model = TemperedScript([block("python words.py", RIGHT_WORDS), block("python labels.py", underscored)])
    (labels / "tests" / "test_labels.py").write_text(
        "from labels import label\n\n\ndef test_label():\n    assert label('Hello World') == 'hello_world'\n")
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("(labels.py unchanged); words.py kept for the next trial" in t for t in said), said
    assert "the task names labels.py, which this trial left as it was" in model.sent[1][-1].content
    assert (labels / "labels.py").read_text() == underscored and (labels / "words.py").read_text() == RIGHT_WORDS
    assert engine.last.rounds == 2


TWO = ('def join_words(words):\n    return "-".join(w.lower() for w in words)\n\n\n'
       'def title_words(text):\n    return join_words(text.title().split())\n')


def test_without_lays_back_the_functions_at_fault_and_keeps_the_rest():
    after = TWO.replace("words):", 'words, sep="-"):').replace("title_words(text)", 'title_words(text, sep="-")') \
        .replace("split())", "split(), sep=sep)")
    kept = without(after, TWO, ["join_words"])
    assert kept == TWO.replace("title_words(text)", 'title_words(text, sep="-")').replace("split())",
                                                                                          "split(), sep=sep)")
    assert without(after, TWO, ["brand_new"]) is None  # a new function at fault: nothing sound to keep by name


async def test_a_feature_trial_s_sound_function_stays_laid_in_when_another_in_its_file_is_half_written(strict,
                                                                                                       labels):
    # the lab's CSV task: the option and its passing right, `read_column`'s new parameter never read, one file
    (labels / "words.py").write_text(TWO)
    task = "Add a keyword parameter sep: str = '-' to words.join_words and to title_words, which passes it on."
    half = ('def join_words(words, sep="-"):\n    return chr(45).join(w.lower() for w in words)\n\n\n'
            'def title_words(text, sep="-"):\n    return join_words(text.title().split(), sep=sep)\n')
    model = TemperedScript([block("python words.py", half), block("python words.py", RIGHT_WORDS)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("words.py (but `join_words`, as the turn found it) kept for the next trial" in t for t in said), said
    again = model.sent[1][-1].content
    assert "def title_words(text, sep=\"-\"):" in again and 'def join_words(words):\n    return "-"' in again
    text = (labels / "words.py").read_text()
    assert RIGHT_WORDS in text and "return join_words(text.title().split(), sep=sep)" in text
    assert engine.last.rounds == 2


def test_a_parameter_nothing_reads_is_finished_by_its_default_s_constants_then_by_passing_it_on():
    text = ('import csv\n\n\ndef read(handle, sep: str = ","):\n    """Rows split at ","."""\n'
            '    rows = csv.reader(handle)\n    return [",".join(r) for r in rows if len(r) > 0]\n')
    ways = completions(text, "read", "sep")
    assert [w.what for w in ways] == ["',' -> sep (1 in `read`)", "`sep` passed on to `csv.reader(...)`"]
    assert 'return [sep.join(r) for r' in ways[0].text and '"""Rows split at ","."""' in ways[0].text
    assert "rows = csv.reader(handle, sep=sep)" in ways[1].text  # len() and str.join take no such keyword
    assert completions(text, "absent", "sep") == [] and completions("def (", "read", "sep") == []


async def test_tomo_finishes_a_feature_trial_whose_one_fault_is_a_parameter_nothing_reads(strict, labels):
    # the lab's slug task: `slugify` got `separator="-"` in every reply and kept writing "-"
    task = ("Add a keyword parameter sep: str = '-' to words.join_words. join_words(['A', 'b'], sep='_') should "
            "give 'a_b'.")
    second = "from words import join_words\n\n\ndef test_default():\n    assert join_words(['X', 'y']) == 'x-y'\n"
    model = TemperedScript([block("python words.py", UNREAD_WORDS), block("python", second)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any(t.startswith("tomo finished the trial's change: '-' -> sep") for t in said), said
    assert (labels / "words.py").read_text() == RIGHT_WORDS
    assert engine.last.verified and engine.last.rounds == 2  # the task's own example, then a second test


LABEL_ALL = "\n\ndef label_all(names):\n    return [label(n) for n in names]\n"


async def test_tomo_lays_back_a_function_that_reads_an_undefined_name_and_finishes_the_unread_parameter(strict,
                                                                                                         labels):
    # the lab's slug task: `slugify`'s separator unread, and `archive_links` passing on a `separator` it never had;
    # put back whole, `slugify` never got the parameter again
    many = LABELS + LABEL_ALL
    (labels / "labels.py").write_text(many)
    wrong_many = RIGHT_LABELS + LABEL_ALL.replace("label(n)", "label(n, sep=sep)")
    task = SEP_TASK + " join_words(['A', 'b'], sep='_') should give 'a_b'."
    second = ("from words import join_words\n\n\ndef test_default():\n"
              "    assert join_words(['X', 'y'], sep='+') == 'x+y'\n")
    model = TemperedScript([two_halves(wrong_many, UNREAD_WORDS), block("python", second)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any(t.startswith("tomo tries 1 way to finish `join_words`'s `sep`") and
               t.endswith("with `label_all` in labels.py as the turn found it") for t in said), said
    assert any(t.startswith("tomo finished the trial's change: '-' -> sep") for t in said), said
    assert (labels / "words.py").read_text() == RIGHT_WORDS
    assert (labels / "labels.py").read_text() == RIGHT_LABELS + LABEL_ALL
    assert engine.last.verified and engine.last.rounds == 2


async def test_a_finish_that_fails_puts_the_laid_back_function_back_into_the_trial_before_it_is_judged(strict,
                                                                                                     labels):
    many = LABELS + LABEL_ALL
    (labels / "labels.py").write_text(many)
    wrong_many = RIGHT_LABELS + LABEL_ALL.replace("label(n)", "label(n, sep=sep)")
    task = SEP_TASK + " join_words(['A', 'b'], sep='_') should give 'A_b'."  # no finish keeps the case
    model = TemperedScript([two_halves(wrong_many, UNREAD_WORDS), two_halves(wrong_many, UNREAD_WORDS)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert "no way to finish `join_words`'s `sep` passed" in said, said
    # the trial then fails as it would have: the next request shows what it wrote (not the laid-back text), and
    # labels.py's sound `label` is kept with `label_all` as the turn found it
    assert "+    return [label(n, sep=sep) for n in names]" in model.sent[1][-1].content
    assert any("labels.py (but `label_all`, as the turn found it) kept for the next trial" in t for t in said), said
    assert (labels / "labels.py").read_text() == many and (labels / "words.py").read_text() == WORDS
    assert not engine.last.verified


def test_a_keyword_passed_on_to_a_function_that_lacks_it_is_found_and_the_parameter_added():
    sources = {"words.py": WORDS, "labels.py": RIGHT_LABELS.replace('sep="-"', 'sep: str = "-"'),
               "other.py": "from words import join_words\n\n\ndef shout(x, sep='!'):\n"
                           "    return join_words(x, sep=sep.upper())\n"}  # not its own parameter passed on
    found = missing_keywords(sources, ["labels.py", "other.py"])
    assert [(w.path, w.function, w.param, w.declared, w.caller) for w in found] == [
        ("words.py", "join_words", "sep", 'sep: str = "-"', "label")]
    assert missing_keywords({**sources, "words.py": RIGHT_WORDS}, ["labels.py"]) == []  # it takes `sep` now
    assert widened(WORDS, "join_words", 'sep: str = "-"') == WORDS.replace("(words)", '(words, sep: str = "-")')
    assert widened("def f(a, *, b=1):\n    pass\n", "f", "c=2") == "def f(a, *, b=1, c=2):\n    pass\n"
    assert widened("def f(*args):\n    pass\n", "f", "c=2") is None  # it takes anything already
    assert widened("def f():\n    pass\n", "f", "c=2") is None


async def test_tomo_adds_the_parameter_a_trial_passes_on_to_a_function_it_left_unchanged_and_finishes_it(strict,
                                                                                                         labels):
    # the lab's slug task: `permalink` passed `separator` on to `slugify` in six replies of eleven, and `slugify`
    # came back unchanged (or as the example's placeholder) every time after the first
    task = SEP_TASK + " join_words(['A', 'b'], sep='_') should give 'a_b'."
    second = ("from words import join_words\n\n\ndef test_default():\n"
              "    assert join_words(['X', 'y'], sep='+') == 'x+y'\n")
    model = TemperedScript([block("python labels.py", RIGHT_LABELS), block("python", second)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any(t.startswith("tomo tries 1 way to finish `label`'s `sep`, passed on to `join_words`, which lacks it: "
                            "`sep=\"-\"` added to `join_words`, then") for t in said), said
    assert any(t.startswith("tomo finished the trial's change: `sep=\"-\"` added to `join_words`, '-' -> sep")
               for t in said), said
    assert (labels / "words.py").read_text() == RIGHT_WORDS and (labels / "labels.py").read_text() == RIGHT_LABELS
    assert engine.last.verified and engine.last.rounds == 2


async def test_a_keyword_passed_on_to_a_function_that_lacks_it_is_a_fault_found_before_anything_runs(strict,
                                                                                                     labels):
    # words.py changed (a comment), but `join_words` still has no `sep`, and `chr(45)` leaves nothing to finish
    (labels / "words.py").write_text(WORDS.replace('"-"', "chr(45)"))
    commented = "# joins words\n" + WORDS.replace('"-"', "chr(45)")
    model = TemperedScript([two_halves(RIGHT_LABELS, commented), block("python words.py", HALF_WORDS.replace(
        "chr(45)", "sep"))])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], SEP_TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("`label` passes `sep` on to `join_words`, which has no such parameter" in t for t in said), said
    again = model.sent[1][-1].content
    assert "`label` passes `sep` on to `join_words`, which has no such parameter (a TypeError when it runs)" in again
    assert (labels / "words.py").read_text() == HALF_WORDS.replace("chr(45)", "sep")
    assert engine.last.rounds == 2


LIMITED = 'def join_words(words, limit=10):\n    return "-".join(w.lower() for w in words[:limit])\n'
SEP_LIMITED = 'def join_words(words, limit=10, sep="-"):\n    return sep.join(w.lower() for w in words[:limit])\n'
BY_POSITION = 'from words import join_words\n\n\ndef label(name, sep="-"):\n    return join_words(name.split(), sep)\n'


def test_a_name_passed_by_position_into_a_parameter_of_another_name_is_passed_by_keyword():
    sources = {"words.py": SEP_LIMITED, "labels.py": BY_POSITION}
    assert by_keyword(sources, ["labels.py"]) == {"labels.py": (
        BY_POSITION.replace("(name.split(), sep)", "(name.split(), sep=sep)"),
        ["`sep` to `join_words` (by position it was `limit`)"])}
    for call in ("(name.split(), limit)", "(name.split(), 5)", "(name.split(), sep, sep=sep)"):
        assert by_keyword({**sources, "labels.py": BY_POSITION.replace("(name.split(), sep)", call)},
                          ["labels.py"]) == {}  # the slot's own name, a constant, a keyword already given
    assert by_keyword({**sources, "words.py": LIMITED}, ["labels.py"]) == {}  # no parameter of that name
    required = SEP_LIMITED.replace("limit=10", "limit")  # by keyword, `limit` would be missing: a TypeError
    assert by_keyword({**sources, "words.py": required}, ["labels.py"]) == {}


async def test_a_trial_s_name_passed_into_the_wrong_parameter_is_passed_by_keyword_and_verified(strict, labels):
    """The lab's slug task (s42): `permalink` passed `separator` as `slugify`'s `max_length`, so every way to
    finish `slugify` failed on a TypeError."""
    (labels / "words.py").write_text(LIMITED)
    task = SEP_TASK + " label('Hello World', sep='_') should give 'hello_world'."
    second = "from labels import label\n\n\ndef test_plus():\n    assert label('A b', sep='+') == 'a+b'\n"
    model = TemperedScript([two_halves(BY_POSITION, SEP_LIMITED), block("python", second)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert "tomo passed `sep` to `join_words` (by position it was `limit`) by keyword (labels.py)" in said, said
    assert (labels / "labels.py").read_text() == BY_POSITION.replace("split(), sep)", "split(), sep=sep)")
    assert engine.last.outcome == "verified", said


BOX = ("class Box:\n    def __init__(self, name):\n        self.name = name\n        self.items = []\n\n"
       "    def put(self, item):\n        self.items.append(item)\n")


def test_an_asked_attribute_set_only_outside_init_is_found():
    after = BOX + "\n    def close(self):\n        self.closed = True\n        self.items = []\n"
    assert [(f.function, f.said) for f in set_outside_init(after, ["closed"])] == [
        ("Box.__init__", "`Box.closed` is set only in `Box.close`")]
    assert set_outside_init(after, ["items"]) == []  # __init__ sets it
    assert set_outside_init(after.replace("self.items = []\n\n", "self.items = []\n        self.closed = False\n\n"),
                            ["closed"]) == []


async def test_a_trial_that_sets_an_asked_attribute_only_in_its_new_method_keeps_the_method_and_is_asked_again(
        strict, labels):
    # the lab's order-cancel: `refund_due` set in `cancel` alone; the check never made an order without cancelling
    (labels / "box.py").write_text(BOX)
    task = "Add a method Box.close(), and boxes get an attribute `closed`: False for every box, True once closed."
    half = "class Box:\n    def close(self):\n        self.closed = True\n"
    whole = "class Box:\n    def __init__(self, name):\n        self.name = name\n        self.items = []\n" \
            "        self.closed = False\n"
    model = TemperedScript([block("python box.py", half), block("python box.py", whole)])
    engine = engine_for(model, strict, labels)
    sink = ListSink()
    await trial_turn(engine, [], task, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("(`Box.closed` is set only in `Box.close`); box.py kept for the next trial" in t for t in said), said
    assert "so an object that never ran it has no such attribute: set it in `__init__` too" in \
        model.sent[1][-1].content
    text = (labels / "box.py").read_text()
    assert "self.closed = False" in text and "def close(self):\n        self.closed = True" in text
    assert engine.last.rounds == 2


VERSIONS = "def parse_version(text):\n    return tuple(int(p) for p in text.lstrip('v').split('.'))\n"
UPDATER = "import versions\n\n\ndef needs_update(installed, available):\n    return installed != available\n"
VERSION_TASK = ("Please add a function is_newer(candidate: str, current: str) -> bool to versions.py that returns True "
                "only when candidate is a strictly higher version. Then make updater.needs_update(installed, "
                "available) use it.")
IS_NEWER = "def is_newer(candidate, current):\n    return parse_version(candidate) > parse_version(current)\n"


def test_the_place_a_task_puts_a_new_name_is_read_past_its_signature_and_return_annotation():
    sources = {"versions.py": VERSIONS, "updater.py": UPDATER, "inventory/stock.py": "class Inventory:\n    pass\n"}
    assert placements(VERSION_TASK, ["is_newer"], sources) == {"is_newer": ("versions.py", "is_newer")}
    method = ("Add a method Inventory.low_stock(self, threshold: int = 5) -> list[str] in inventory/stock.py: the "
              "SKUs below threshold. Give render_report a parameter low_stock_threshold: int = 5.")
    assert placements(method, ["low_stock", "low_stock_threshold"], sources) == {
        "low_stock": ("inventory/stock.py", "Inventory.low_stock")}
    by_module = "Add median(values: Sequence[float]) -> float to inventory.stock (the mean of the middle two)."
    assert placements(by_module, ["median"], sources) == {"median": ("inventory/stock.py", "median")}
    # a parameter goes into a function, not a file; a place that is no file of the project is none
    assert placements("Add a keyword parameter separator: str = '-' to updater.needs_update.", ["separator"],
                      sources) == {}
    assert placements("Add is_newer(a, b) to the version checks.", ["is_newer"], sources) == {}


def test_a_new_function_defined_only_outside_the_file_the_task_names_is_misplaced():
    astray = {"versions.py": VERSIONS, "updater.py": UPDATER + "\n\n" + IS_NEWER}
    assert misplaced(VERSION_TASK, ["is_newer"], astray) == [
        ("is_newer", "versions.py", [("updater.py", "is_newer")])]
    in_a_class = {"versions.py": VERSIONS + "\n\nclass _Version:\n    @staticmethod\n    " +
                  IS_NEWER.replace("\n    ", "\n        "), "updater.py": UPDATER}
    assert misplaced(VERSION_TASK, ["is_newer"], in_a_class)[0].found == [("versions.py", "_Version.is_newer")]
    placed = {"versions.py": VERSIONS + "\n\n" + IS_NEWER, "updater.py": UPDATER + "\n\n" + IS_NEWER}
    assert misplaced(VERSION_TASK, ["is_newer"], placed) == []  # it is where the task says (a copy elsewhere too)
    method = "Add Inventory.low_stock() in stock.py."
    top = {"stock.py": "class Inventory:\n    pass\n\n\ndef low_stock(inventory):\n    return []\n"}
    assert misplaced(method, ["low_stock"], top)[0].found == [("stock.py", "low_stock")]
    assert misplaced(method, ["low_stock"], {"stock.py": "class Inventory:\n    def low_stock(self):\n"
                                                          "        return []\n"}) == []


def test_a_function_the_task_names_by_its_module_and_a_change_leaves_as_it_was_is_found():
    before = {"versions.py": VERSIONS, "updater.py": UPDATER}
    beside = {"versions.py": VERSIONS + "\n\n" + IS_NEWER, "updater.py": UPDATER + (
        "\n\nclass Updater:\n    def needs_update(self, installed, available):\n"
        "        return versions.is_newer(available, installed)\n")}
    assert unchanged_files(VERSION_TASK, before, beside) == []  # its file changed: the check before this one
    assert unchanged_functions(VERSION_TASK, before, beside) == ["updater.needs_update"]
    used = {**beside, "updater.py": UPDATER.replace("installed != available",
                                                   "versions.is_newer(available, installed)")}
    assert unchanged_functions(VERSION_TASK, before, used) == []
    # a new entry of the table the function reads changes what it does: the order task's "cancel" event
    events = "HANDLERS = {'pay': str.upper}\n\n\ndef apply_event(order, event):\n    return HANDLERS[event](order)\n"
    task = "Add Order.cancel() in workflow.py; the cancel event (events.apply_event) must cancel the order."
    table = {"events.py": events.replace("str.upper}", "str.upper, 'cancel': str.lower}")}
    assert unchanged_functions(task, {"events.py": events}, table) == []
    assert unchanged_functions(task, {"events.py": events}, {"events.py": events + "\nX = 1\n"}) == [
        "events.apply_event"]


def test_a_named_function_left_as_it_was_still_lets_tomo_finish_the_keyword_passed_on_to_it():
    # words.py changed (a comment) and `join_words` did not: the fault is said, and it is the function tomo widens
    start = {"words.py": WORDS, "labels.py": LABELS}
    now = {"words.py": "# joins words\n" + WORDS, "labels.py": RIGHT_LABELS}
    found = half_written(SEP_TASK, ["sep"], start, start, now, ["words.py", "labels.py"])
    assert found.fault.startswith("`words.join_words` unchanged; `label` passes `sep` on to `join_words`")
    assert [(w.function, w.param) for w in found.widen] == [("join_words", "sep")]
    other = SEP_TASK + " Also make labels.title use it."
    start["labels.py"] = now["labels.py"] = LABELS + "\n\ndef title(name):\n    return name.title()\n"
    now["labels.py"] = now["labels.py"].replace(LABELS, RIGHT_LABELS)
    assert half_written(other, ["sep"], start, start, now, ["words.py", "labels.py"]).widen == []


@pytest.fixture
def versions(tmp_path: Path) -> Path:
    root = tmp_path / "versions"
    (root / "tests").mkdir(parents=True)
    (root / "versions.py").write_text(VERSIONS)
    (root / "updater.py").write_text(UPDATER)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_updater.py").write_text(
        "from updater import needs_update\n\n\ndef test_same():\n    assert not needs_update('1.0', '1.0')\n")
    return root


async def test_a_feature_trial_that_writes_the_new_function_into_another_file_is_put_back_and_told_where(strict,
                                                                                                        versions):
    # the lab's version task: is_newer written into updater.py, so `from versions import is_newer` failed
    model = TemperedScript([
        block("python updater.py", UPDATER.replace("installed != available", "is_newer(available, installed)")
              + "\n\n" + IS_NEWER.replace("parse_version", "versions.parse_version")),
        {"content": "```python versions.py\n" + VERSIONS + "\n\n" + IS_NEWER + "```\n\n```python updater.py\n"
                    + UPDATER.replace("installed != available", "versions.is_newer(available, installed)") + "```\n"},
    ])
    engine = engine_for(model, strict, versions)
    sink = ListSink()
    await trial_turn(engine, [], VERSION_TASK, sink)
    said = [n.text for n in sink.of(Notice)]
    assert any("trial failed: updater.py put back" in t and "`is_newer` not where the task puts it, in versions.py" in t
               for t in said), said
    assert ("the task asks for `is_newer` in versions.py (a function at the top level, so that `from versions "
            "import is_newer` works); this trial defines `is_newer` in updater.py instead") in model.sent[1][-1].content
    assert "def is_newer" in (versions / "versions.py").read_text()
    assert "def is_newer" not in (versions / "updater.py").read_text() and engine.last.rounds == 2
