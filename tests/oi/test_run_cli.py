"""`tomo run` as scripts and CI use it: the JSON contract, exit codes 0/3/1, sessions saved and continued."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from oi.oi_support import FIX, GREEN, RED, require_bwrap, say, sh


def script(tmp_path: Path, replies: list[dict], name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"replies": replies}))
    return f"scripted:{path}"


def run_json(run_tomo, project: Path, model: str, *extra: str):
    done = run_tomo("run", "make the failing test pass", "--model", model, "--root", str(project), "--sandbox",
                    "strict", "--exec-gate", "--repro", "--yes", "--json", *extra)
    return done, (json.loads(done.stdout) if done.stdout.strip() else None)


def test_a_verified_run_exits_0_with_the_json_contract(run_tomo, project, tmp_path):
    require_bwrap()
    done, result = run_json(run_tomo, project, script(tmp_path, [RED, FIX, GREEN, say("fixed")]))
    assert done.returncode == 0, done.stderr
    assert set(result) >= {"verified", "gates", "rounds", "blocks", "files_changed", "session"}
    assert result["verified"] is True and result["rounds"] == 4 and result["blocks"] == 3
    assert result["files_changed"] == ["calc.py"]
    assert result["gates"]["exec"]["satisfied"] is True and result["gates"]["repro"]["satisfied"] is True
    session = project / ".tomo" / "sessions" / f"{result['session']}.json"
    saved = json.loads(session.read_text())
    assert [m["role"] for m in saved["messages"]] == ["user", *["assistant", "user"] * 3, "assistant"]
    assert "block 1" in done.stderr  # the log goes to stderr under --json


def test_an_unverified_run_exits_3(run_tomo, project, tmp_path):
    require_bwrap()
    replies = [FIX, sh("python -m py_compile calc.py"), say("done"), say("really done")]
    done, result = run_json(run_tomo, project, script(tmp_path, replies), "--max-rounds", "4")
    assert done.returncode == 3, done.stderr
    assert result["verified"] is False and result["ended_by"] == "rounds"
    assert result["gates"]["exec"]["satisfied"] is False and result["gates"]["exec"]["refusals"] == 2


def test_a_model_failure_exits_1_and_keeps_the_session(run_tomo, project, tmp_path):
    require_bwrap()
    done, result = run_json(run_tomo, project, script(tmp_path, [RED]))
    assert done.returncode == 1
    assert result["ended_by"] == "error" and "no reply left" in result["error"]
    saved = json.loads((project / ".tomo" / "sessions" / f"{result['session']}.json").read_text())
    assert len(saved["messages"]) == 3


def test_a_bad_model_spec_exits_1_and_says_why(run_tomo, project, tmp_path):
    done, result = run_json(run_tomo, project, f"scripted:{tmp_path / 'missing.json'}")
    assert done.returncode == 1
    assert "does not exist" in done.stderr and result["error"] and result["verified"] is False


def test_a_session_is_saved_and_continued(run_tomo, project, tmp_path):
    require_bwrap()
    first, one = run_json(run_tomo, project, script(tmp_path, [RED, say("the add test fails"), say("still failing")],
                                                    "one.json"))
    # gated, nothing changed: pushed back once, then honestly "unchanged" and exit 3, never "verified"
    assert first.returncode == 3 and one["files_changed"] == [] and one["outcome"] == "unchanged"
    assert not one["verified"] and one["pushed_back"] == 1
    second = run_tomo("run", "now fix it", "--continue", "--model", script(tmp_path, [FIX, GREEN, say("fixed")],
                                                                              "two.json"),
                      "--root", str(project), "--sandbox", "strict", "--yes", "--exec-gate", "--json")
    two = json.loads(second.stdout)
    assert second.returncode == 0 and two["session"] == one["session"] and two["verified"]
    saved = json.loads((project / ".tomo" / "sessions" / f"{one['session']}.json").read_text())
    users = [m["content"] for m in saved["messages"] if m["role"] == "user" and not m["content"].startswith("[")]
    assert len(users) == 2 and users[1] == "now fix it"
    assert users[0].startswith("make the failing test pass")  # (followed by the context pack, where it is installed)
    assert [t["task"] for t in saved["meta"]["turns"]] == ["make the failing test pass", "now fix it"]


def test_continue_without_a_session_is_a_clear_error(run_tomo, project, tmp_path):
    done = run_tomo("run", "go on", "--continue", "--model", script(tmp_path, [say("hi")]), "--root", str(project),
                    "--sandbox", "local", "--yes")
    assert done.returncode == 1 and "no saved session" in done.stderr


def test_the_tools_engine_runs_behind_the_same_gates(run_tomo, project, tmp_path):
    require_bwrap()
    pytest_cmd = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider"
    replies = [
        {"tool_calls": [{"name": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
        {"tool_calls": [{"name": "run", "args": {"command": "python -m py_compile calc.py"}}]},
        {"content": "done"},
        {"tool_calls": [{"name": "run", "args": {"command": f"{pytest_cmd} tests/test_calc.py"}}]},
        {"content": "done, tested"},
    ]
    done = run_tomo("run", "fix add", "--engine", "tools", "--model", script(tmp_path, replies), "--root", str(project),
                    "--sandbox", "strict", "--yes", "--exec-gate", "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert result["verified"] and result["gates"]["exec"]["refusals"] == 1 and result["files_changed"] == ["calc.py"]


def test_the_terminal_log_shows_blocks_output_and_a_summary(run_tomo, project, tmp_path):
    require_bwrap()
    done = run_tomo("run", "look", "--model", script(tmp_path, [sh("echo '[bold]not markup[/]'"), say("done")]),
                    "--root", str(project), "--sandbox", "strict", "--yes")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "block 1" in out and "[bold]not markup[/]" in out  # command output is data, never markup
    assert "summary" in out and "rounds 2" in out  # no gate, nothing changed: exit 0, but never called verified
    assert "result: unchanged: no file changed in this turn" in out and "result: verified" not in out


def _env() -> dict[str, str]:
    """As tests/conftest.py's run_tomo: this checkout's sources first."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = dict(os.environ)
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _wait_for_process(marker: str, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                        return True
                except OSError:
                    continue
        time.sleep(0.1)
    return False


def test_ctrl_c_stops_the_block_and_twice_ends_the_turn_with_the_session_saved(project, tmp_path):
    require_bwrap()
    model = script(tmp_path, [sh("sleep 49.25"), sh("sleep 49.75"), say("never asked")])
    proc = subprocess.Popen([sys.executable, "-m", "tomo", "run", "wait", "--model", model, "--root", str(project),
                             "--sandbox", "strict", "--yes", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=_env())
    try:
        assert _wait_for_process("sleep 49.25")
        proc.send_signal(signal.SIGINT)  # stops block 1; the model is told and writes block 2
        assert _wait_for_process("sleep 49.75")
        proc.send_signal(signal.SIGINT)  # ends the turn
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    result = json.loads(out)
    assert result["ended_by"] == "interrupted" and result["blocks"] == 2
    saved = json.loads((project / ".tomo" / "sessions" / f"{result['session']}.json").read_text())
    contents = [m["content"] for m in saved["messages"]]
    assert any("interrupted by the user (Ctrl-C)" in c for c in contents)
    assert not _wait_for_process("sleep 49.", timeout=0.5)  # nothing left running


def test_an_empty_task_is_a_usage_error(run_tomo, project, tmp_path):
    done = run_tomo("run", "  ", "--model", script(tmp_path, [say("hi")]), "--root", str(project), "--yes")
    assert done.returncode == 2 and "TASK is empty" in done.stderr
    assert not (project / ".tomo").exists()  # nothing started, nothing saved


def test_an_unchecked_edit_exits_3_and_says_why_even_without_a_gate(run_tomo, project, tmp_path):
    require_bwrap()
    edit = {"content": "```python calc.py\ndef add(a, b):\n    return a + b\n```"}
    done = run_tomo("run", "fix add", "--model", script(tmp_path, [edit, say("fixed")]), "--root", str(project),
                    "--sandbox", "strict", "--yes", "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 3 and result["outcome"] == "unverified" and not result["verified"]
    assert result["files_changed"] == ["calc.py"] and "no check ran" in result["reason"]
    assert set(result["usage"]) == {"input_tokens", "output_tokens", "estimated"}


def claim_json(run_tomo, project: Path, model: str, *extra: str):
    done = run_tomo("run", "make the failing test pass", "--model", model, "--root", str(project), "--sandbox",
                    "strict", "--exec-gate", "--yes", "--json", *extra)
    return done, json.loads(done.stdout)


def test_claim_repro_says_verified_only_after_red_then_green_and_never_keeps_the_turn_open(run_tomo, project,
                                                                                          tmp_path):
    """--claim repro: the exec gate keeps the turn open until a passing check ran the fix (as before); "verified"
    also needs a failing check before the fix, and its absence costs the claim, never a round."""
    require_bwrap()
    fixed_blind = script(tmp_path, [FIX, GREEN, say("fixed")], "blind.json")  # no red first: a fix nobody saw fail
    done, result = claim_json(run_tomo, project, fixed_blind, "--claim", "repro")
    assert done.returncode == 3 and result["outcome"] == "unverified" and result["rounds"] == 3
    assert "--claim repro also asks for a failing check before the fix" in result["reason"]
    assert result["gates"]["repro"]["on"] is False  # judged, not enforced
    (project / "calc.py").write_text((project / "calc.py").read_text().replace("a + b", "a - b"))
    seen_red = script(tmp_path, [RED, FIX, GREEN, say("fixed")], "red.json")
    done, result = claim_json(run_tomo, project, seen_red, "--claim", "repro")
    assert done.returncode == 0 and result["outcome"] == "verified" and result["verified"] is True
    (project / "calc.py").write_text((project / "calc.py").read_text().replace("a + b", "a - b"))
    done, result = claim_json(run_tomo, project, script(tmp_path, [FIX, GREEN, say("fixed")], "exec.json"))
    assert done.returncode == 0 and result["verified"] is True  # the default claim: exec evidence is enough
    bad = run_tomo("run", "x", "--model", fixed_blind, "--root", str(project), "--claim", "vibes")
    assert bad.returncode == 2 and "--claim" in bad.stderr and "exec, repro" in bad.stderr
