"""A recorded run's model replies, replayed through this build: what a rule change does to runs already paid for.

A lab run of Qwen 1.5B on the small suite takes an hour of two cores; a replay of its 22 transcripts takes minutes
and needs no model. ``--model replay:VARIANT`` answers each request of a run with the next reply the model gave in
the recorded run of the same task under VARIANT, in order, and the task's own oracle judges the result as always.

What it is not: a measurement of the model. A build that asks something the recorded build did not ask still gets
the recorded answer to the old question, and one that asks more than the model was asked runs out of replies (the
run ends in an error, said in the record). So a replay says "with these replies, this build would have solved the
task": it finds what a rule change breaks or mends in transcripts already recorded, before a real run measures it.
Only ``run`` variants are replayed: assist's replies are tool calls, and a mini-swe-agent run is no tomo transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tomo.errors import ConfigError
from tomo.lab.records import RunRecord

PREFIX = "replay:"
"""``replay:VARIANT``: the model spec of a replay of VARIANT's recorded runs."""
PEER = "mini"
"""The verb of the mini-swe-agent peer's variant (``tomo.lab.runner``)."""


def replayed_variant(model: str) -> str | None:
    """VARIANT of a ``replay:VARIANT`` model spec, or None for any other spec."""
    return model[len(PREFIX):] if model.startswith(PREFIX) else None


def recorded_replies(transcript: str) -> list[str]:
    """The model's replies in a tomo transcript (JSON lines), in order: each ``assistant_said`` event's text."""
    replies: list[str] = []
    for line in transcript.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by the record's cap
        if isinstance(event, dict) and event.get("kind") == "assistant_said" and isinstance(event.get("text"), str):
            replies.append(event["text"])
    return replies


def replies_by_run(records: Iterable[RunRecord], suite: str, variant: str) -> dict[tuple[str, int], list[str]]:
    """(task, repeat) -> the replies of VARIANT's recorded runs in ``suite``, which must come from one real model."""
    runs = [r for r in records if r.suite == suite and r.variant == variant and replayed_variant(r.model) is None
            and r.model != "reference"]
    if not runs:
        raise ConfigError(f"suite {suite!r} has no recorded run of variant {variant!r} by a model to replay",
                          hint="`tomo lab report --runs --db ...` lists the recorded runs; replay one of their "
                               "variants")
    verb = runs[0].args.split(" ", 1)[0]
    if verb != "run":
        what = "the mini-swe-agent peer, whose transcripts are not tomo's" if verb == PEER else \
            "assist's, whose replies are tool calls a transcript keeps no answer to"
        raise ConfigError(f"variant {variant!r} is {what}: only `run` variants can be replayed",
                          hint="replay a variant whose flags start with `run`")
    models = sorted({r.model for r in runs})
    if len(models) > 1:
        raise ConfigError(f"variant {variant!r} was run on {len(models)} models ({', '.join(models)}): a replay "
                          "answers with one model's replies", hint="record each model's runs under its own variant "
                                                                  "name, or keep one model's runs in this --db")
    return {(r.task, r.repeat): recorded_replies(r.transcript) for r in runs}


def write_script(replies: list[str], path: Path) -> Path:
    """The scripted model's file (:mod:`tomo.models.scripted`) that answers with ``replies`` in order."""
    path.write_text(json.dumps({"replies": [{"content": text} for text in replies]}), encoding="utf-8")
    return path
