"""`tomo demo` end to end: offline, scripted, real edits verified by the example's own tests, scene 2 rolled back."""

from __future__ import annotations

import json


def test_demo_runs_offline_and_says_what_happened(run_tomo) -> None:
    done = run_tomo("demo", env={"OLLAMA_HOST": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "scripted replay" in out
    assert "⊘ refused grep" in out and "Use find_symbol" in out
    assert "model read: plan p1-demo: rename shop.lines.OrderLine.total to subtotal: 7 confirmed edits" in out
    assert "changed: 7 edits in 4 files (plan p1-demo)" in out
    assert "verify: `python -m pytest -q` passed" in out and "6 passed" in out
    assert "-        return line.total()" in out and "+        return line.subtotal()" in out
    # scene 2: the unproven edit breaks describe(invoice); verify fails and everything is restored
    assert "AttributeError: 'Invoice' object has no attribute 'subtotal'" in out
    assert "byte-identical to the original: yes" in out
    assert 'tomo assist "rename OrderLine.total to subtotal everywhere" --model ollama:qwen2.5-coder:7b' in out


def test_demo_json(run_tomo) -> None:
    done = run_tomo("demo", "--json", "--no-scene2")
    assert done.returncode == 0, done.stderr
    (scene,) = json.loads(done.stdout)
    assert scene["changed"] == ["shop/lines.py", "shop/orders.py", "shop/report.py", "tests/test_lines.py"]
    assert scene["verify"]["passed"] is True and scene["refused"] == ["grep"]


def test_demo_in_a_pipe_keeps_each_line_whole(run_tomo) -> None:
    """An 80-column pipe (a log, an agent's shell) gets the next command to run on one line, ready to copy."""
    done = run_tomo("demo", "--no-scene2", "--no-oi", env={"COLUMNS": "80", "OLLAMA_HOST": "http://127.0.0.1:9"})
    assert done.returncode == 0, done.stdout + done.stderr
    hint = ('  tomo assist "rename OrderLine.total to subtotal everywhere" --model ollama:qwen2.5-coder:7b --root DIR'
            ' --apply --verify "python -m pytest -q"')
    assert hint in done.stdout.splitlines()
