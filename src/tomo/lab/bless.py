"""``tomo lab bless``: the blessed list, written from lab records and nothing else.

A model is blessed for a suite when, under its best variant, it solved at least :data:`NEAR` of what the engine
ceiling (the ``reference`` model) solved under the same variant, on at least :data:`MIN_TASKS` tasks, and tomo never
claimed a success the oracle refuted. The file records the rule in words beside the figures, so ``tomo models`` can
show why a model is (not) on it. :mod:`tomo.models.blessed` reads it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomo
from tomo.errors import ConfigError
from tomo.lab.records import RunRecord
from tomo.lab.replay import replayed_variant
from tomo.lab.report import Row, rows, short_model
from tomo.lab.runner import REFERENCE, machine

NEAR = 0.8
MIN_TASKS = 10
RULE = (f"blessed: under its best variant the model solved at least {NEAR:.0%} of what the engine ceiling solved on "
        f"the same suite and variant, on at least {MIN_TASKS} tasks, with no false claim (tomo said verified and the "
        "task's oracle failed)")


def _aliases(spec: str) -> dict[str, str | None]:
    provider, _, name = spec.partition(":")
    if provider == "openai-compat":
        return {"ollama": None, "local": short_model(spec)}
    if provider == "ollama":
        return {"ollama": name, "local": None}
    return {"ollama": None, "local": None}


def bless(suite: str, records: list[RunRecord], *, when: datetime | None = None) -> dict[str, Any]:
    """The file's content for ``suite``. The ceiling must have been measured: a blessing is relative to it."""
    table = rows(r for r in records if r.suite == suite)
    ceilings = {r.variant: r for r in table if r.model == REFERENCE}
    if not ceilings:
        raise ConfigError(f"suite {suite!r} has no ceiling runs (model 'reference') in these records",
                          hint=f"run `tomo lab run {suite} --model reference --variant ...` with the same variants")
    models: list[dict[str, Any]] = []
    best_by_model: dict[str, Row] = {}
    for row in table:
        if row.model == REFERENCE or replayed_variant(row.model) is not None or row.variant not in ceilings:
            continue
        best = best_by_model.get(row.model)
        # equal rates: the variant measured on more tasks says more (3/11 and 6/22 are both 27%)
        if best is None or (row.rate, -row.false_claims, row.runs) > (best.rate, -best.false_claims, best.runs):
            best_by_model[row.model] = row
    ranked = sorted(best_by_model.items(), key=lambda kv: -kv[1].rate)
    for spec, row in ranked:
        ceiling = ceilings[row.variant]
        blessed = (row.false_claims == 0 and row.runs >= MIN_TASKS and row.rate >= NEAR * ceiling.rate)
        models.append({"name": short_model(spec), "spec": spec, "aliases": _aliases(spec), "suite": suite,
                       "variant": f"{row.variant} = {row.args}", "solved": row.solved, "tasks": row.runs,
                       "rate": round(row.rate, 4), "ceiling_rate": round(ceiling.rate, 4),
                       "false_claims": row.false_claims, "blessed": blessed})
    # the ceiling the best model is read against (of equal ceilings, the first would name another variant)
    variant = ceilings[ranked[0][1].variant] if ranked else max(ceilings.values(), key=lambda r: r.rate)
    return {
        "generated": (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "tomo_version": tomo.__version__,
        "rule": RULE,
        "suites": {suite: {"variant": f"{variant.variant} = {variant.args}",
                           "ceiling": {"solved": variant.solved, "tasks": variant.runs}}},
        "models": models,
    }


def write(data: dict[str, Any], path: Path) -> None:
    """Atomic: a reader (tomo's start-up) sees the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
