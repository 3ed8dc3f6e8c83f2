"""Anchor extraction on crafted task texts: what each kind of text gives, and how strong."""

from __future__ import annotations

from tomo.oi.context_anchors import WEIGHTS, Anchor, extract, identifier_parts


def _by(anchors: list[Anchor], kind: str) -> dict[str, Anchor]:
    return {a.text: a for a in anchors if a.kind == kind}


def test_traceback_frames_give_path_line_and_function_in_stack_order() -> None:
    text = """Saving fails:

Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/shop/cart.py", line 16, in total
    return round_price(gross - self.discount, 2)
  File "shop/pricing.py", line 14, in round_price
    raise ValueError("price must not be negative")
ValueError: price must not be negative
"""
    anchors = extract(text)
    frames = [a for a in anchors if a.kind == "frame"]
    assert [(f.text, f.line, f.function) for f in frames] == [
        ("/home/me/venv/lib/python3.11/site-packages/shop/cart.py", 16, "total"),
        ("shop/pricing.py", 14, "round_price"),
    ]
    assert frames[0].order < frames[1].order  # the innermost frame comes last
    assert frames[0].weight == WEIGHTS["frame"]
    names = _by(anchors, "name")
    assert {"total", "round_price", "ValueError"} <= set(names)
    assert "price must not be negative" in _by(anchors, "message")


def test_pytest_style_frames() -> None:
    text = "src/pkg/core.py:88: in parse_header\n    raise KeyError(key)\nE   KeyError: 'content-type'\n"
    frames = [a for a in extract(text) if a.kind == "frame"]
    assert [(f.text, f.line, f.function) for f in frames] == [("src/pkg/core.py", 88, "parse_header")]


def test_dotted_paths_and_code_spans() -> None:
    text = ("Calling `django.db.models.query.QuerySet.bulk_create()` with `ignore_conflicts=True` drops the ids; "
            "see also self.connection.ops.bulk_insert_sql in the backend.")
    anchors = extract(text)
    dotted = _by(anchors, "dotted")
    assert "django.db.models.query.QuerySet.bulk_create" in dotted
    assert "connection.ops.bulk_insert_sql" in dotted  # `self.` is dropped: it names nothing in the repository
    names = _by(anchors, "name")
    # in a code span every identifier counts fully; in prose only code-like words do
    assert names["bulk_create"].weight == WEIGHTS["code"]
    assert names["ignore_conflicts"].weight == WEIGHTS["code"]
    assert "bulk_insert_sql" in names and names["bulk_insert_sql"].weight < WEIGHTS["code"]
    assert "drops" not in names and "backend" not in names


def test_fenced_code_counts_as_code_and_prose_words_do_not() -> None:
    text = "The report is wrong.\n\n```python\nfrom shop.cart import Cart\ncart = Cart()\ncart.total()\n```\n"
    names = _by(extract(text), "name")
    assert names["Cart"].weight == WEIGHTS["code"]
    assert names["total"].weight == WEIGHTS["code"]  # called in code
    assert "report" not in names and "wrong" not in names
    assert "shop.cart" in _by(extract(text), "dotted")


def test_file_paths_with_line_numbers_and_test_names() -> None:
    text = "Look at sklearn/preprocessing/label.py:128 -- test_inverse_transform_empty in TestLabelEncoder fails."
    anchors = extract(text)
    paths = _by(anchors, "path")
    assert paths["sklearn/preprocessing/label.py"].line == 128
    tests = _by(anchors, "test")
    assert {"test_inverse_transform_empty", "TestLabelEncoder"} <= set(tests)


def test_prose_identifiers_camel_and_snake_case() -> None:
    names = _by(extract("When LabelEncoder gets an empty list, inverse_transform breaks; plain words do not."), "name")
    assert {"LabelEncoder", "inverse_transform"} <= set(names)
    assert "plain" not in names and "When" not in names  # a sentence's first word is not a class


def test_log_lines_and_quoted_messages() -> None:
    text = ('Server prints\nERROR: connection pool exhausted after retries\n'
            'and the UI says "could not reserve stock units".')
    messages = _by(extract(text), "message")
    assert "connection pool exhausted after retries" in messages
    assert "could not reserve stock units" in messages


def test_identifier_parts() -> None:
    assert identifier_parts("LabelEncoder") == ["label", "encoder"]
    assert identifier_parts("inverse_transform") == ["inverse", "transform"]
    assert identifier_parts("HTTPResponseError") == ["http", "response", "error"]
    assert identifier_parts("__init__") == ["init"]


def test_text_without_anchors() -> None:
    assert extract("") == []
    assert [a for a in extract("it is slow and nobody knows why") if a.kind != "name"] == []


def test_a_name_said_on_several_lines_counts_them_and_a_traceback_echo_does_not() -> None:
    text = """`Stock.reserve` goes negative.
Calling reserve twice makes it worse,
and reserve never checks the units (reserve, reserve: one line counts once).
Traceback (most recent call last):
  File "shop/inventory.py", line 14, in release
    self.units[product] += release_units
"""
    names = _by(extract(text), "name")
    assert names["reserve"].count == 3  # on three lines (a code span, prose twice)
    assert names["release"].count == 1  # only in the frame and its source line: an echo, not emphasis
    assert names["Stock"].count == 1


def test_a_path_only_in_a_fenced_block_is_a_snippets() -> None:
    text = ("Reserving too much is accepted.\n\n```python\nimport shop.mailer\n"
            "shop.inventory.Stock().reserve('pen', 2)\n```\nThe count in `shop.inventory.Stock` goes below zero.")
    dotted = {a.text: a for a in extract(text) if a.kind == "dotted"}
    assert dotted["shop.mailer"].snippet  # only in the reproducer
    assert not dotted["shop.inventory.Stock"].snippet  # in the block and in the prose's backticks: a pointer
    assert not any(a.snippet for a in extract("Calling `shop.mailer.send_receipt` fails.") if a.kind == "dotted")
