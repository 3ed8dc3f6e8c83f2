"""csvsum: add up one column of a CSV export.

    python csvsum.py expenses.csv --column amount
    python csvsum.py expenses.csv --column amount --where category=travel
    python csvsum.py export.csv --column amount --delimiter ';'

Amounts are summed as Decimal, so the printed total is exact.
"""

from __future__ import annotations

import argparse
import csv
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path


def read_column(
    path: Path, column: str, where: tuple[str, str] | None = None, delimiter: str = ","
) -> list[Decimal]:
    """The values of ``column`` as Decimal, from rows that match ``where`` (column, value) if given.

    Empty cells are skipped; a cell that is not a number raises ValueError naming its row.
    """
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        if reader.fieldnames is None or column not in reader.fieldnames:
            raise ValueError(f"no column {column!r} in {path} (columns: {', '.join(reader.fieldnames or [])})")
        values = []
        for number, row in enumerate(reader, start=2):
            if where is not None and row.get(where[0]) != where[1]:
                continue
            cell = (row[column] or "").strip()
            if not cell:
                continue
            try:
                values.append(Decimal(cell))
            except InvalidOperation:
                raise ValueError(f"row {number}: {cell!r} in column {column!r} is not a number") from None
    return values


def _where(text: str) -> tuple[str, str]:
    column, sep, value = text.partition("=")
    if not sep or not column:
        raise argparse.ArgumentTypeError(f"expected COLUMN=VALUE, got {text!r}")
    return column, value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="csvsum", description="Add up one column of a CSV file.")
    parser.add_argument("path", type=Path, help="the CSV file (first row: column names)")
    parser.add_argument("--column", "-c", required=True, help="the column to add up")
    parser.add_argument("--where", type=_where, help="only rows where COLUMN=VALUE")
    parser.add_argument("--delimiter", "-d", default=",", help="the field separator (default: ',')")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        values = read_column(args.path, args.column, args.where, delimiter=args.delimiter)
    except (OSError, ValueError) as exc:
        print(f"csvsum: {exc}", file=sys.stderr)
        return 1
    print(sum(values, Decimal(0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
