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


def test_an_error_escaping_a_verb_exits_with_its_row_of_the_table(tmp_path) -> None:
    """What `main()` exits with when a verb lets an error through: the model or the sandbox failing is 1 (an error),
    a model that is not set up is 2 (like any configuration), never the other way round."""
    from tomo.errors import (
        ConfigError,
        ModelAuthError,
        ModelError,
        ModelTimeout,
        ModelUnavailable,
        SandboxError,
        ScriptExhausted,
        Unavailable,
    )

    assert [e("x").exit_code for e in (ModelError, ModelTimeout, ScriptExhausted, SandboxError, Unavailable)] == [1] * 5
    assert [e("x").exit_code for e in (ConfigError, ModelAuthError, ModelUnavailable)] == [2] * 3
    raising = ("import sys, tomo.cli as c\nfrom tomo.errors import ModelTimeout\n"
               "def app():\n    raise ModelTimeout('the server did not answer', hint='start it')\n"
               "c.app = app\nc.main()\n")
    done = subprocess.run([sys.executable, "-c", raising], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1 and "the server did not answer" in done.stderr, (done.stdout, done.stderr)
