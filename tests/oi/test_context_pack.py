"""Ranking on a small fixture repository where the answer is known, the preamble's budget, and the CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from oi.oi_support import copy_ctx_fixture, rank_in
from tomo.oi.context_pack import Pack, build, estimate_tokens, is_aside_path, is_test_path, seed


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_ctx_fixture(tmp_path)


def test_a_named_method_ranks_its_file_and_definition_first(repo: Path) -> None:
    pack = build(repo, "`Cart.total` returns the wrong amount after a discount is applied.")
    assert pack.files[0] == "shop/cart.py"
    assert pack.symbols[0] == "shop/cart.py::Cart.total"
    assert "Cart" in " ".join(pack.reasons["shop/cart.py"])


def test_the_innermost_traceback_frame_wins(repo: Path) -> None:
    task = """Checkout crashes:
Traceback (most recent call last):
  File "/srv/app/shop/cart.py", line 24, in apply_discount
    return cart.total()
  File "/srv/app/shop/cart.py", line 16, in total
    return round_price(gross - self.discount, 2)
  File "/srv/app/shop/pricing.py", line 14, in round_price
    raise ValueError("price must not be negative")
ValueError: price must not be negative
"""
    pack = build(repo, task)
    assert pack.files[:2] == ["shop/pricing.py", "shop/cart.py"]
    assert pack.symbols[0] == "shop/pricing.py::round_price"
    assert {"shop/cart.py::Cart.total", "shop/cart.py::apply_discount"} <= set(pack.symbols[:4])


def test_prose_without_code_names_falls_back_to_retrieval(repo: Path) -> None:
    pack = build(repo, "The warehouse count of units goes below zero when too many are reserved for orders.")
    assert pack.files[0] == "shop/inventory.py"
    assert pack.symbols[0].startswith("shop/inventory.py::Stock.")


def test_an_error_message_finds_the_code_that_raises_it(repo: Path) -> None:
    pack = build(repo, 'Users see "price must not be negative" when the basket is emptied.')
    assert pack.files[0] == "shop/pricing.py"


def test_tests_are_ranked_apart_from_the_code(repo: Path) -> None:
    pack = build(repo, "test_total_with_discount fails: Cart.total ignores apply_discount")
    assert pack.tests == ["tests/cart_checks.py"]
    assert "tests/cart_checks.py" not in pack.files
    assert pack.files[0] == "shop/cart.py"
    assert is_test_path("tests/cart_checks.py") and is_test_path("pkg/test_x.py")
    assert not is_test_path("django/test/testcases.py")  # a library package named `test` is code


def test_the_preamble_fits_its_budget_bodies_first(repo: Path) -> None:
    task = "`Cart.total` is wrong; `Stock.reserve` and `PriceRule.apply` and `send_receipt` may be involved."
    big = build(repo, task, budget_tokens=3000)
    assert "def total(self):" in big.text and "gross = sum(" in big.text  # the top definition's body
    small = build(repo, task, budget_tokens=200)
    assert estimate_tokens(small.text) <= 200
    assert "shop/cart.py" in small.text
    assert len(small.text) < len(big.text)


def test_a_warm_pack_answers_the_same_and_follows_edits(repo: Path) -> None:
    first = build(repo, "send_receipt emails the wrong address")
    assert (repo / ".tomo" / "index.sqlite").exists() and (repo / ".tomo" / "context.sqlite").exists()
    again = build(repo, "send_receipt emails the wrong address")
    assert (again.files, again.symbols) == (first.files, first.symbols)
    (repo / "shop" / "coupons.py").write_text("def send_receipt_coupon(address):\n    return address\n")
    moved = build(repo, "send_receipt_coupon returns nothing useful")
    assert moved.files[0] == "shop/coupons.py"


def test_a_seeded_checkout_packs_as_a_cold_one_and_tokenizes_only_what_differs(repo: Path, tmp_path: Path) -> None:
    task = "`Cart.total` returns the wrong amount after a discount is applied."
    copy, cold = tmp_path / "copy", tmp_path / "cold"
    for where in (copy, cold):
        shutil.copytree(repo, where, ignore=shutil.ignore_patterns(".tomo"))
        (where / "shop" / "cart.py").write_text((where / "shop" / "cart.py").read_text() + "\n# edited here\n")
    assert seed(copy, repo)  # builds the source's indexes first: the fixture had none
    assert (repo / ".tomo" / "index.sqlite").is_file() and (copy / ".tomo" / "context.sqlite").is_file()
    with closing(sqlite3.connect(copy / ".tomo" / "context.sqlite")) as conn:
        conn.execute("UPDATE docs SET hash='marker' WHERE path='shop/inventory.py'")  # a stale row, seen below
        conn.commit()
        hashes = dict(conn.execute("SELECT path, hash FROM docs"))
    assert not seed(copy, repo)  # never over an index already there
    seeded, fresh = build(copy, task), build(cold, task)
    assert (seeded.files, seeded.symbols, seeded.text) == (fresh.files, fresh.symbols, fresh.text)
    with closing(sqlite3.connect(copy / ".tomo" / "context.sqlite")) as conn:
        after = dict(conn.execute("SELECT path, hash FROM docs"))
    changed = {p for p in after if after[p] != hashes.get(p)}
    assert changed == {"shop/cart.py", "shop/inventory.py"}  # the edited file and the stale row, nothing else


def test_nothing_matches(repo: Path) -> None:
    pack = build(repo, "zzz qqq")
    assert pack == Pack(files=[], symbols=[], text=pack.text, tests=[], anchors=pack.anchors, seconds=pack.seconds)
    assert "Nothing in the repository matched" in pack.text


def test_cli_json_and_task_file(repo: Path, tmp_path: Path,
                                run_tomo: Callable[..., CompletedProcess[str]]) -> None:
    task = tmp_path / "task.md"
    task.write_text("Stock.reserve lets the count go negative")
    r = run_tomo("context-pack", f"@{task}", "--root", str(repo), "--json", "--budget", "500")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["files"][0] == "shop/inventory.py"
    assert out["symbols"][0] == "shop/inventory.py::Stock.reserve"
    assert set(out) >= {"files", "symbols", "tests", "text"}
    assert estimate_tokens(out["text"]) <= 500


def test_cli_text_is_printed_verbatim(repo: Path, run_tomo: Callable[..., CompletedProcess[str]]) -> None:
    (repo / "shop" / "markup.py").write_text('def bold_label():\n    return "[bold red]x[/]"\n')
    r = run_tomo("context-pack", "bold_label is broken", "--root", str(repo))
    assert r.returncode == 0, r.stderr
    assert '[bold red]x[/]' in r.stdout  # source text is data: never read as rich markup
    assert "shop/markup.py" in r.stdout and "ranked in" in r.stderr


def test_cli_notes_are_whole_lines_on_a_captured_stderr(repo: Path, tmp_path: Path,
                                                        run_tomo: Callable[..., CompletedProcess[str]]) -> None:
    """A missing language server is a note, not a failure; the note names the command whole (rich cut it at 80)."""
    server = str(tmp_path / "a-language-server-whose-path-alone-passes-the-eightieth-column")
    r = run_tomo("context-pack", "bold_label is broken", "--root", str(repo), "--lsp", server, env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note: ")]
    assert len(notes) == 1 and server in notes[0] and "language server not used" in notes[0], r.stderr


def test_cli_bad_input_says_what_was_wrong(repo: Path, tmp_path: Path,
                                           run_tomo: Callable[..., CompletedProcess[str]]) -> None:
    r = run_tomo("context-pack", f"@{tmp_path / 'missing.md'}", "--root", str(repo))
    assert r.returncode == 2 and "cannot read the task file" in r.stderr and "Traceback" not in r.stderr
    r = run_tomo("context-pack", "   ", "--root", str(repo))
    assert r.returncode == 2 and "task text is empty" in r.stderr
    r = run_tomo("context-pack", "x", "--root", str(tmp_path / "nope"))
    assert r.returncode == 2 and "nope does not exist" in r.stderr


def test_a_test_name_points_at_the_code_under_test(repo: Path) -> None:
    (repo / "tests" / "test_inventory.py").write_text("def test_release_twice():\n    assert True\n")
    task = "test_release_twice fails after the last change"
    pack = rank_in(repo, task)
    assert pack.files[0] == "shop/inventory.py"
    why = " ".join(pack.reasons["shop/inventory.py"])
    assert "module under test of `test_release_twice`" in why and "defines `release`" in why
    assert pack.tests[0] == "tests/test_inventory.py"
    off = rank_in(repo, task, test_map=0.0)
    assert "module under test" not in " ".join(off.reasons.get("shop/inventory.py", []))


def test_the_title_line_weighs_more_than_the_rest(repo: Path) -> None:
    task = ("Warehouse units go below zero\n\n"
            "Seen in a receipt email to the customer over SMTP; the receipt email is sent.")
    assert rank_in(repo, task).files[0] == "shop/inventory.py"
    assert rank_in(repo, task, title=0.0).files[0] == "shop/mailer.py"  # the body's words win without the title


def test_files_beside_the_product_are_recognised() -> None:
    assert is_aside_path("docs/conf.py") and is_aside_path("examples/plot/demo.py")
    assert is_aside_path("pkg/benchmarks/bench_io.py") and is_aside_path("asv_bench/benchmarks/x.py")
    assert not is_aside_path("django/db/models/query.py") and not is_aside_path("setup.py")
    assert not is_aside_path("sphinx/ext/autodoc/__init__.py")  # a name inside a package is not a directory rule


SNIPPET_TASK = """Reserving more units than the warehouse holds is accepted: the stock count goes below zero.

```python
import shop.mailer
shop.mailer.send_receipt("a@example.com", "2 pens reserved, 1 in the warehouse")
```
"""


def test_a_dotted_path_only_in_a_reproducer_is_no_pointer_to_its_module(repo: Path) -> None:
    # a snippet's imports and calls say which API the reporter used, not which file to fix (docs/context-pack.md)
    pack = rank_in(repo, SNIPPET_TASK)
    assert not any(r.startswith(("module", "names")) for r in pack.reasons["shop/mailer.py"])
    assert "defines `send_receipt`" in pack.reasons["shop/mailer.py"]  # its names still count as names
    assert pack.files == rank_in(repo, SNIPPET_TASK, dotted=0.0).files
    counted = rank_in(repo, SNIPPET_TASK, dotted_snippet=1.0).reasons["shop/mailer.py"]
    assert "module `shop.mailer`" in counted and "names `shop.mailer.send_receipt`" in counted
    # the same path written in the text is a pointer
    said = SNIPPET_TASK + "\nIt happens in `shop.mailer.send_receipt` too.\n"
    assert "names `shop.mailer.send_receipt`" in rank_in(repo, said).reasons["shop/mailer.py"]


def test_names_only_in_a_reproducer_can_be_damped(repo: Path) -> None:
    # an option, off by default (docs/context-pack.md: it cost held-out B a task @1 for +6 function @5)
    counted = rank_in(repo, SNIPPET_TASK).reasons["shop/mailer.py"]
    assert "defines `send_receipt`" in counted
    assert "shop/mailer.py" not in rank_in(repo, SNIPPET_TASK, name_snippet=0.0).reasons
    said = SNIPPET_TASK + "\nThe receipt comes from send_receipt() as well.\n"  # in prose too: a name like any
    assert "defines `send_receipt`" in rank_in(repo, said, name_snippet=0.0).reasons["shop/mailer.py"]


def test_short_definitions_are_shown_whole_with_the_constants_they_use(tmp_path: Path) -> None:
    steps = "".join(f"def step{i}(d):\n" + "".join(f"    x{j} = {j}\n" for j in range(5)) + "    return d\n\n\n"
                    for i in range(3))  # seven lines each: past three full bodies, a signature
    (tmp_path / "days.py").write_text(
        'SATURDAY = 5  # Monday is 0\nWEEKEND = (5, 6)\nTABLE = {\n    "a": 1,\n}\nunused = 3\n\n\n' + steps
        + "def add_days(d, n):\n    while n:\n        d += 1\n        if d.weekday() > SATURDAY:\n"
          "            continue\n        n -= is_workday(d)\n    return d\n\n\n"
          "def is_workday(d):\n    return d.weekday() < SATURDAY and TABLE\n")
    pack = build(tmp_path, "add_days(friday, 1) lands on a Saturday; step0, step1 and step2 are fine")
    assert pack.symbols.index("days.py::is_workday") >= 3  # ranked after three bodies
    assert "return d.weekday() < SATURDAY and TABLE" in pack.text  # short: whole anyway
    assert "signature)" in pack.text  # the long ones past three are still signatures
    tail = pack.text[pack.text.index("Module-level names the code above uses"):]
    assert "SATURDAY = 5  # Monday is 0" in tail
    assert 'TABLE = {\n    "a": 1,\n}\n' in tail  # a constant over a few lines is shown whole
    assert "WEEKEND" not in tail and "unused" not in tail  # not used
