"""The log of `tomo run` as a pipe reads it, and `tomo replay` of its transcript, in a subprocess with a scripted model.

In a pipe (an agent's shell, a CI log) every line is whole: a block's code is the program the model wrote, and a line
cut at 80 columns reads as two lines of another program. A replay of a run's transcript ends as the live log did.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oi.oi_support import CALC, FIX, GREEN, TEST_CALC, require_bwrap, say, sh

LONG = 'print("' + "a" * 191 + '")'  # a 200-character line of code; it prints a 191-character line


def script(tmp_path: Path, replies: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"replies": replies}))
    return f"scripted:{path}"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "conftest.py").write_text("")
    return root


def test_a_piped_log_prints_a_long_code_line_and_its_output_whole(run_tomo: Callable[..., Any],
                                                                   tmp_path: Path) -> None:
    assert len(LONG) == 200
    model = script(tmp_path, [{"content": f"Printing it.\n\n```python\n{LONG}\n```\n"}, say("done")])
    done = run_tomo("run", "print a long line", "--model", model, "--root", str(project(tmp_path)), "--sandbox",
                    "local", "--yes", "--no-context", env={"COLUMNS": "80"})  # a pipe's width when none is set
    lines = done.stdout.splitlines()
    assert LONG in lines, done.stdout
    assert "a" * 191 in lines
    assert "── block 1 · python (round 1)" in lines


def test_replay_of_a_run_transcript_shows_what_the_live_log_showed(run_tomo: Callable[..., Any],
                                                                   tmp_path: Path) -> None:
    require_bwrap()
    # The model edits, offers a compile as proof (the exec gate refuses it), then runs the tests: a verified turn.
    replies = [FIX, sh("python -m py_compile calc.py && echo compiles"), say("done"), GREEN, say("done, tested")]
    transcript = tmp_path / "run.jsonl"
    live = run_tomo("run", "fix add", "--model", script(tmp_path, replies), "--root", str(project(tmp_path)),
                    "--sandbox", "strict", "--yes", "--exec-gate", "--no-context", "--transcript", str(transcript))
    assert live.returncode == 0, (live.stdout, live.stderr)
    shown = run_tomo("replay", str(transcript))
    assert shown.returncode == 0, shown.stderr

    def log(text: str) -> list[str]:  # the session's id is the run's, not the transcript's: left out
        return [line.split(" · session ")[0] for line in text.splitlines()]

    assert log(shown.stdout) == log(live.stdout)
    for expected in ("── block 2 · shell (round 2)", "python -m py_compile calc.py && echo compiles", "compiles",
                     "⊘ exec gate refused: ", "   → exit 0", "oi: done, tested", "files changed: calc.py",
                     "✓ exec gate: ", "result: verified"):
        assert any(line.startswith(expected) for line in log(shown.stdout)), expected
    assert any(line.startswith("turn ended: the model ended it · rounds 5 · blocks run 3") for line in
               shown.stdout.splitlines())
