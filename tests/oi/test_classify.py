"""The exec gate's classifier: executing or parse-only over a labeled corpus of real check commands, and when a
block's exit status speaks for its check."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tomo.oi.classify import classify_block

CORPUS = Path(__file__).parent / "data" / "check_commands.tsv"


def corpus() -> list[tuple[str, str, str]]:
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            language, label, command = line.split("\t")
            rows.append((language, label, command))
    return rows


def test_the_corpus_is_large_and_covers_every_language():
    rows = corpus()
    assert len(rows) >= 60
    by_language = Counter(language for language, _, _ in rows)
    for language in ("python", "javascript", "typescript", "go", "rust", "shell"):
        assert by_language[language] >= 4, language
    labels = Counter(label for _, label, _ in rows)
    assert set(labels) == {"executing", "parse-only"} and min(labels.values()) >= 25


@pytest.mark.parametrize(("language", "label", "command"), corpus(), ids=lambda v: v if " " in v else None)
def test_each_command_is_classified_as_labeled(language, label, command):
    assert classify_block(command).kind == label


@pytest.mark.parametrize("command", ["ls -la", "cat shop/orders.py", "git diff", "git status", "echo done",
                                     "pip install -e .", "npm install", "cargo add serde", "go mod tidy",
                                     "sed -n 1,20p shop/orders.py", "grep -rn total shop"])
def test_reading_and_installing_are_not_checks(command):
    assert classify_block(command).kind == "neutral"


@pytest.mark.parametrize(("block", "kind", "conclusive"), [
    ("pytest -q", "executing", True),
    ("cd shop && pytest -q", "executing", True),
    ("pytest -q; echo finished", "executing", False),
    ("pytest -q || true", "executing", False),
    ("pytest -q | tail -5", "executing", False),
    ("set -o pipefail\npytest -q | tail -5", "executing", True),
    ("python -m py_compile a.py && pytest -q", "executing", True),
    ("pytest -q && git diff", "executing", True),
    ("ruff check . && mypy src", "parse-only", True),
    ("cat > t.py <<'EOF'\nimport subprocess\npytest\nEOF\ngit diff", "neutral", False),
    ("python - <<'EOF'\nimport shop\nEOF", "executing", True),
    ("# run the tests\npytest \\\n  -q tests", "executing", True),
])
def test_a_block_is_executing_if_any_command_is_and_its_status_counts_only_at_the_end(block, kind, conclusive):
    found = classify_block(block)
    assert (found.kind, found.conclusive) == (kind, conclusive)


def test_an_open_quote_is_executing_but_inconclusive():
    found = classify_block("python -c 'print(1)")
    assert found.kind == "executing" and not found.conclusive
