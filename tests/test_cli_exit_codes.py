"""The working verbs share one exit-code table, and each one's --help says it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tomo.cli.exit_codes import EXIT_CODES, EXIT_TABLE


@pytest.mark.parametrize("verb", [["run"], ["assist"], ["team", "run"], ["team", "resume"]])
def test_every_working_verb_help_ends_with_the_table(verb: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "tomo", *verb, "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "400", "PATH": "/usr/bin:/bin", "TERM": "dumb"}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert " ".join(EXIT_TABLE.split()) in " ".join(done.stdout.split())


def test_the_table_is_the_documented_one() -> None:
    assert sorted(EXIT_CODES) == [0, 1, 2, 3, 130]
    for code in EXIT_CODES:
        assert f" {code} " in f" {EXIT_TABLE} "
