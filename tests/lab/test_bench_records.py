"""The lab tables of docs/benchmarks.md are what the committed records say (bench/data/lab/*.jsonl).

A lab database stays on the machine that ran it; the runs behind the page are committed as `tomo lab export` lines,
so the page's tables can be made again anywhere, and this test makes them again and compares, row for row.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tomo.lab.records import RunRecord, from_jsonl
from tomo.lab.report import markdown

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "bench" / "data" / "lab"
PAGE = ROOT / "docs" / "benchmarks.md"


def _records() -> list[RunRecord]:
    return [r for path in sorted(RECORDS.glob("*.jsonl")) for r in from_jsonl(path.read_text("utf-8"), str(path))]


def _section(text: str, suite: str) -> str:
    begin, end = f"<!-- lab:{suite} -->", f"<!-- /lab:{suite} -->"
    assert text.count(begin) == 1 and text.count(end) == 1, f"one {begin} section in {PAGE.name}"
    return text.split(begin, 1)[1].split(end, 1)[0]


def _table_rows(section: str) -> list[str]:
    return [line for line in section.splitlines() if line.startswith("|")]


def test_the_committed_records_are_runs_each_recorded_once() -> None:
    records = _records()
    assert records, f"no records in {RECORDS}"
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys))
    assert all(r.model == "reference" or r.model.startswith(("openai-compat:", "replay:")) for r in records)


@pytest.mark.parametrize("suite", ["small", "heldout"])
def test_the_pages_lab_table_is_made_from_the_committed_records(suite: str) -> None:
    section = _section(PAGE.read_text("utf-8"), suite)
    command = section.split(f"`tomo lab report {suite}", 1)[1].split("`", 1)[0]
    words = shlex.split(command)
    variants = [words[i + 1] for i, word in enumerate(words) if word == "--variant"]
    assert variants, f"the {suite} section names no --variant"
    mine = [r for r in _records() if r.suite == suite and r.variant in variants]
    assert {r.variant for r in mine} == set(variants), "a variant the page names has no committed record"
    assert _table_rows(section) == _table_rows(markdown(suite, mine))
