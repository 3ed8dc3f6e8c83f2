"""Reads the job table of the scheduler config: one job a line, ``name: every <duration>``."""

from __future__ import annotations

from durations import parse_duration


def load_jobs(text: str) -> dict[str, int]:
    """Map each job name to its interval in seconds. Blank lines and ``#`` comments are skipped."""
    jobs: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0]
        if not line.strip():
            continue
        name, sep, rule = line.partition(":")
        rule = rule.strip()
        if not sep or not rule.startswith("every "):
            raise ValueError(f"line {number}: expected 'name: every <duration>', got {line.strip()!r}")
        jobs[name.strip()] = parse_duration(rule[len("every "):])
    return jobs
