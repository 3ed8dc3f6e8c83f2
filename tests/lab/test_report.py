"""The lab's statistics on records made up for the purpose: the figures a report prints must be right."""

from __future__ import annotations

import pytest

from tomo.lab.records import RunRecord
from tomo.lab.report import markdown, mcnemar_exact, pairs, rows, to_json, wilson


def rec(task: str, variant: str, solved: bool, claim: bool = False, kind: str = "fix", model: str = "m",
        outcome: str = "unverified", tokens: int = 100) -> RunRecord:
    return RunRecord(suite="s", task=task, kind=kind, variant=variant, args=f"run --{variant}", model=model,
                     repeat=0, started="2026-12-04T00:00:00+00:00", wall_s=10.0, exit_code=0 if claim else 3,
                     claim=claim, outcome=outcome, solved=solved, input_tokens=tokens, output_tokens=tokens // 10)


def test_wilson_interval_is_honest_at_the_edges() -> None:
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-3)  # the normal approximation would say 0..0
    low, high = wilson(10, 10)
    assert high == pytest.approx(1.0) and low == pytest.approx(0.7225, abs=1e-3)
    low, high = wilson(7, 22)
    assert low < 7 / 22 < high
    assert wilson(0, 0) == (0.0, 1.0)


def test_exact_mcnemar_counts_only_the_discordant_pairs() -> None:
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)  # six of six one way: p = 2 * 0.5**6
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)


def test_rows_count_solved_claims_and_false_claims_per_variant() -> None:
    records = [rec("a", "gated", True, claim=True), rec("b", "gated", False, claim=True),  # b: a false claim
               rec("c", "gated", False), rec("a", "plain", True), rec("b", "plain", False, kind="rename"),
               rec("c", "plain", False, outcome="timeout")]
    by_variant = {r.variant: r for r in rows(records)}
    gated, plain = by_variant["gated"], by_variant["plain"]
    assert (gated.solved, gated.runs, gated.claims, gated.false_claims) == (1, 3, 2, 1)
    assert (plain.solved, plain.false_claims, plain.timeouts) == (1, 0, 1)
    assert plain.by_kind == {"fix": (1, 2), "rename": (0, 1)}


def test_pairs_compare_variants_on_the_tasks_both_ran() -> None:
    records = [rec("a", "x", True), rec("b", "x", True), rec("c", "x", False), rec("d", "x", True),
               rec("a", "y", False), rec("b", "y", True), rec("c", "y", True)]  # y never ran d
    (pair,) = pairs(records)
    assert (pair.a, pair.b, pair.pairs, pair.both, pair.only_a, pair.only_b) == ("x", "y", 3, 1, 1, 1)
    assert pairs([*records, rec("a", "x", True, model="other")]) == [pair]  # other models are not paired with m


def test_markdown_and_json_carry_the_same_figures() -> None:
    records = [rec("a", "gated", True, claim=True), rec("b", "gated", False, claim=True), rec("a", "mini", False),
               rec("b", "mini", False)]
    text = markdown("s", records, machine="x86_64 2 cores", command="tomo lab report s")
    assert "| m | gated | 1/2 (50%) |" in text and "| m | mini | 0/2 (0%) |" in text
    assert "| 1 | 2 |" in text  # gated: one false claim of two claims
    assert "| m | gated | mini | 2 | 0 | 1 | 0 | 1.000 |" in text
    data = to_json(records)
    gated = next(r for r in data["rows"] if r["variant"] == "gated")  # type: ignore[union-attr]
    assert gated["false_claims"] == 1 and gated["solved"] == 1 and gated["ci95"][0] < 0.5 < gated["ci95"][1]


def test_a_replay_is_paired_with_the_runs_it_replays_not_with_the_ceiling() -> None:
    recorded = [rec("a", "s43", True), rec("b", "s43", False), rec("c", "s43", False)]
    ceiling = [rec(t, "s43", True, model="reference") for t in "abc"]
    replayed = [rec("a", "r44", True, model="replay:s43"), rec("b", "r44", True, model="replay:s43")]
    (pair,) = pairs(recorded + ceiling + replayed)
    assert (pair.model, pair.a, pair.b, pair.pairs, pair.both, pair.only_a, pair.only_b) == (
        "replay:s43", "s43", "r44", 2, 1, 0, 1)
