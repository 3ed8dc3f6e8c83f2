"""logfilter: print the lines of an application log that match.

    python logfilter.py app.log --grep timeout
    python logfilter.py app.log --grep timeout --ignore-case --count
    python logfilter.py app.log --min-level warning

Log lines look like ``2024-03-01 12:00:07 WARNING payment: gateway slow``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
_LINE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (?P<level>[A-Z]+) ")


def level_of(line: str) -> str | None:
    """The level named in a log line, or None for lines that do not start like a log record."""
    match = _LINE.match(line)
    if match is None or match["level"] not in LEVELS:
        return None
    return match["level"]


def at_least(line: str, minimum: str) -> bool:
    """Whether ``line`` is a log record at level ``minimum`` or above."""
    level = level_of(line)
    return level is not None and LEVELS.index(level) >= LEVELS.index(minimum)


def matching(lines: Iterable[str], pattern: str | None, ignore_case: bool = False) -> Iterator[str]:
    """The lines that contain ``pattern`` (all lines when it is None), without their line endings."""
    needle = pattern.lower() if pattern and ignore_case else pattern
    for line in lines:
        line = line.rstrip("\n")
        haystack = line.lower() if ignore_case else line
        if needle is None or needle in haystack:
            yield line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="logfilter", description="Print the matching lines of a log file.")
    parser.add_argument("path", type=Path)
    parser.add_argument("--grep", metavar="TEXT", help="only lines containing TEXT")
    parser.add_argument("--ignore-case", "-i", action="store_true", help="match TEXT in any case")
    parser.add_argument("--count", action="store_true", help="print how many lines match instead of the lines")
    parser.add_argument("--min-level", type=str.upper, choices=LEVELS, metavar="LEVEL",
                        help=f"only records at LEVEL or above ({', '.join(LEVELS)}, any case)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with args.path.open(encoding="utf-8") as handle:
            found = list(matching(handle, args.grep, args.ignore_case))
        if args.min_level is not None:
            found = [line for line in found if at_least(line, args.min_level)]
    except OSError as exc:
        print(f"logfilter: cannot read {args.path}: {exc.strerror}", file=sys.stderr)
        return 1
    if args.count:
        print(len(found))
    else:
        for line in found:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
