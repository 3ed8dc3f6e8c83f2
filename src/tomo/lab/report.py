"""From lab records to figures: solve rates with Wilson intervals, false claims, tokens, wall time, and paired A/B
tests between variants (exact McNemar on the tasks both ran).

Everything here is a pure function of the records, so a report can be recomputed from the database at any time and
tested on records made up for the purpose. Small suites make wide intervals: the report prints them, so a difference
of two tasks is not read as a finding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import mean, median

from tomo.lab.records import RunRecord
from tomo.lab.replay import replayed_variant

Z95 = 1.959963984540054


def wilson(solved: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval: honest at 0 and at n, where the normal approximation says ±0."""
    if n == 0:
        return (0.0, 1.0)
    p = solved / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: under no difference, the discordant pairs split like fair coin tosses."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass(frozen=True, slots=True)
class Row:
    """One variant on one model."""

    variant: str
    args: str
    model: str
    runs: int
    solved: int
    claims: int
    false_claims: int
    errors: int
    timeouts: int
    input_tokens: float
    output_tokens: float
    wall_s: float
    by_kind: dict[str, tuple[int, int]]

    @property
    def rate(self) -> float:
        return self.solved / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.solved, self.runs)


@dataclass(frozen=True, slots=True)
class Pair:
    """Variant A against variant B on one model, over the (task, repeat)s both recorded."""

    model: str
    a: str
    b: str
    pairs: int
    both: int
    only_a: int
    only_b: int

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_a, self.only_b)


def rows(records: Iterable[RunRecord]) -> list[Row]:
    groups: dict[tuple[str, str, str], list[RunRecord]] = {}
    for record in records:
        groups.setdefault((record.variant, record.args, record.model), []).append(record)
    out = []
    for (variant, args, model), group in groups.items():
        kinds: dict[str, tuple[int, int]] = {}
        for record in group:
            solved, n = kinds.get(record.kind, (0, 0))
            kinds[record.kind] = (solved + record.solved, n + 1)
        out.append(Row(variant, args, model, len(group), sum(r.solved for r in group), sum(r.claim for r in group),
                       sum(r.false_claim for r in group), sum(r.outcome == "error" for r in group),
                       sum(r.outcome == "timeout" for r in group), mean(r.input_tokens for r in group),
                       mean(r.output_tokens for r in group), median(r.wall_s for r in group),
                       dict(sorted(kinds.items()))))
    return sorted(out, key=lambda r: (r.model, -r.rate, r.variant))


def pairs(records: Iterable[RunRecord]) -> list[Pair]:
    """Every two variants on the same model, compared on the runs both have."""
    verdicts: dict[tuple[str, str], dict[tuple[str, int], bool]] = {}
    for record in records:
        verdicts.setdefault((record.model, record.variant), {})[(record.task, record.repeat)] = record.solved
    out = []
    keys = sorted(verdicts)
    for i, (model, a) in enumerate(keys):
        for model_b, b in keys[i + 1:]:
            if model_b != model:
                continue
            out.append(_paired(model, a, b, verdicts[(model, a)], verdicts[(model, b)]))
    # a replay (model `replay:V`) against the runs it replays: variant V on the model that recorded it
    for model, b in keys:
        source = replayed_variant(model)
        for recorded, a in keys if source is not None else []:
            if a == source and replayed_variant(recorded) is None and recorded != "reference":
                out.append(_paired(model, a, b, verdicts[(recorded, a)], verdicts[(model, b)]))
    return out


def _paired(model: str, a: str, b: str, va: dict[tuple[str, int], bool], vb: dict[tuple[str, int], bool]) -> Pair:
    shared = va.keys() & vb.keys()
    return Pair(model, a, b, len(shared), sum(va[k] and vb[k] for k in shared),
                sum(va[k] and not vb[k] for k in shared), sum(vb[k] and not va[k] for k in shared))


def short_model(spec: str) -> str:
    return spec.rpartition("#")[2] if spec.startswith("openai-compat:") else spec


def markdown(suite: str, records: list[RunRecord], *, machine: str = "", command: str = "") -> str:
    """The report as a markdown section (what ``docs/benchmarks.md`` holds)."""
    table = rows(records)
    tasks = len({r.task for r in records})
    lines = [f"### lab: suite `{suite}` ({tasks} tasks)", ""]
    if machine or command:
        lines += [f"Measured on {machine or 'this machine'}" + (f" with `{command}`" if command else "") + ".", ""]
    lines += ["| model | variant | solved | 95% CI | false claims | claims | errors / timeouts | tokens in / out "
              "(mean) | wall (median) | by kind |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        low, high = r.interval
        kinds = ", ".join(f"{k} {s}/{n}" for k, (s, n) in r.by_kind.items())
        lines.append(f"| {short_model(r.model)} | {r.variant} | {r.solved}/{r.runs} ({r.rate:.0%}) | "
                     f"{low:.0%}–{high:.0%} | {r.false_claims} | {r.claims} | {r.errors} / {r.timeouts} | "
                     f"{r.input_tokens:,.0f} / {r.output_tokens:,.0f} | {r.wall_s:.0f} s | {kinds} |")
    lines += ["", "Variants: " + "; ".join(sorted({f"`{r.variant}` = `{r.args}`" for r in table})) + ".", ""]
    compared = [p for p in pairs(records) if p.pairs]
    if compared:
        lines += ["Paired (same tasks; exact McNemar):", "",
                  "| model | A | B | tasks | both solved | only A | only B | p |", "|---|---|---|---|---|---|---|---|"]
        for p in compared:
            lines.append(f"| {short_model(p.model)} | {p.a} | {p.b} | {p.pairs} | {p.both} | {p.only_a} | "
                         f"{p.only_b} | {p.p_value:.3f} |")
        lines.append("")
    return "\n".join(lines)


def to_json(records: list[RunRecord]) -> dict[str, object]:
    return {
        "rows": [{"variant": r.variant, "args": r.args, "model": r.model, "runs": r.runs, "solved": r.solved,
                  "rate": r.rate, "ci95": list(r.interval), "claims": r.claims, "false_claims": r.false_claims,
                  "errors": r.errors, "timeouts": r.timeouts, "mean_input_tokens": r.input_tokens,
                  "mean_output_tokens": r.output_tokens, "median_wall_s": r.wall_s,
                  "by_kind": {k: {"solved": s, "runs": n} for k, (s, n) in r.by_kind.items()}}
                 for r in rows(records)],
        "pairs": [{"model": p.model, "a": p.a, "b": p.b, "tasks": p.pairs, "both": p.both, "only_a": p.only_a,
                   "only_b": p.only_b, "p_value": p.p_value} for p in pairs(records)],
    }


def plot(records: list[RunRecord], path: str, title: str) -> None:
    """Solve rate per variant and model with its interval, as a PNG (matplotlib: the ``lab`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = rows(records)
    labels = [f"{r.variant}\n{short_model(r.model)}" for r in table]
    rates = [r.rate for r in table]
    errs = [[r.rate - r.interval[0] for r in table], [r.interval[1] - r.rate for r in table]]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(table)), 3.6))
    ax.bar(labels, rates, yerr=errs, capsize=4, color="#4a7bb7")
    ax.set_ylim(0, 1)
    ax.set_ylabel("solved (oracle), 95% CI")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
