"""One exit-code table for the verbs that do work (run, assist, team), so a script reads every one the same way.

0 means the work is done and shown to work, never merely that the model said so. Each verb's ``--help`` ends with
:data:`EXIT_TABLE`; tests/test_cli_exit_codes.py holds them to it.
"""

from __future__ import annotations

OK, ERROR, USAGE, NOT_DONE, INTERRUPTED = 0, 1, 2, 3, 130

EXIT_CODES: dict[int, str] = {
    OK: "done: verified (a file changed and a passing check ran the changed code), or a run without a gate that "
        "changed nothing (a question answered); assist: the plan was written (and --verify passed); team: every "
        "worker finished",
    ERROR: "an error: the model, its server or the sandbox failed",
    USAGE: "a usage error: a bad option, argument, --root or configuration, or a model that is not set up (no key, "
           "nothing listening where it was named)",
    NOT_DONE: "not done: changed but not verified, nothing changed with a gate on or with --apply, a gate "
              "unsatisfied, the rounds or the budget ran out, verify failed",
    INTERRUPTED: "interrupted (Ctrl-C)",
}

EXIT_TABLE = "Exit codes: 0 done (verified); 3 not done (unverified, unchanged with a gate or --apply, a limit); " \
             "1 an error; 2 a usage error; 130 Ctrl-C."
"""The line every working verb's help ends with (the docs carry :data:`EXIT_CODES` in full)."""
