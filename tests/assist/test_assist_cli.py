"""`tomo assist` end to end in a subprocess: a recorded session, real files, real verify, JSON and the terminal view."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from assist_helpers import RENAME, call, say, sources

from tomo.cli.assist_cmd import resolve_model
from tomo.errors import ConfigError
from tomo.models.scripted import ScriptedModel

TASK = "rename OrderLine.total to subtotal everywhere"


def script(tmp_path: Path) -> str:
    path = tmp_path / "session.json"
    # a recorded model cannot know the session's tag, so it names its plan by the bare handle
    path.write_text(json.dumps({"replies": [call("rename_plan", **RENAME), call("apply_plan", handle="p1"),
                                            say("Renamed; two ambiguous places left for you.")]}))
    return f"scripted:{path}"


def test_json_report_lists_what_changed_what_was_skipped_and_verify(run_tomo, shop: Path, tmp_path: Path) -> None:
    done = run_tomo("assist", TASK, "--model", script(tmp_path), "--root", str(shop), "--apply",
                    "--verify", f'{sys.executable} -c "pass"', "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    s = out["summary"]
    assert s["written"] == ["shop/lines.py", "shop/orders.py", "shop/report.py", "tests/test_lines.py"]
    assert [r["reason"] for r in s["applies"][0]["skipped"]] == ["docs", "untyped receiver `item`"]
    assert s["verify"]["passed"] is True and s["ok"] is True
    plan = next(p for p in out["payloads"] if p["operation"] == "rename_plan")
    assert len(plan["payload"]["edits"]) == 9


def test_terminal_view_shows_receipts_payload_and_report(run_tomo, shop: Path, tmp_path: Path) -> None:
    done = run_tomo("assist", TASK, "--model", script(tmp_path), "--root", str(shop))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model read: plan p1-" in out and "7 confirmed edits in 4 files" in out
    assert "payload of p1-" in out and "tests/test_lines.py:12:22" in out
    assert "changed: nothing" in out and "was not written: this run does not write (pass --apply)" in out


def test_failing_verify_exits_3_and_restores_the_files(run_tomo, shop: Path, tmp_path: Path) -> None:
    before = sources(shop)
    done = run_tomo("assist", TASK, "--model", script(tmp_path), "--root", str(shop), "--apply-ambiguous",
                    "--verify", f'{sys.executable} -c "raise SystemExit(4)"')
    assert done.returncode == 3 and "verify failed (exit 4); every edit was rolled back" in done.stderr
    assert "verify:" in done.stdout and "FAILED (exit 4" in done.stdout and "restored byte for byte" in done.stdout
    assert sources(shop) == before


def test_ctrl_c_after_an_apply_says_which_files_stay_written_and_unverified(shop: Path, tmp_path: Path,
                                                                             tomo_environ: dict[str, str]) -> None:
    """typer ends a Ctrl-C with a silent exit 130; after the model applied a plan the user must learn that files
    changed and were never verified (verify runs after the model's loop). A real SIGINT, mid-reply."""
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"replies": [call("rename_plan", **RENAME), call("apply_plan", handle="p1"),
                                            {**say("Renamed."), "delay_s": 60}]}))
    before = sources(shop)
    proc = subprocess.Popen([sys.executable, "-m", "tomo", "assist", TASK, "--model", f"scripted:{path}", "--root",
                             str(shop), "--apply"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=tomo_environ)
    try:
        deadline = time.monotonic() + 60
        while sources(shop) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sources(shop) != before, "the plan was never applied"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert ("interrupted (Ctrl-C); a plan applied before it left 4 file(s) written and not verified: shop/lines.py, "
            "shop/orders.py, shop/report.py, tests/test_lines.py") in " ".join(err.split()), err
    assert "Traceback" not in err


def test_a_missing_script_is_a_clear_error(run_tomo, shop: Path, tmp_path: Path) -> None:
    done = run_tomo("assist", TASK, "--model", f"scripted:{tmp_path / 'nope.json'}", "--root", str(shop))
    assert done.returncode == 2
    assert "does not exist" in done.stderr and "hint:" in done.stderr


def test_without_the_gateway_only_scripted_specs_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "tomo.models.gateway", None)  # importing it now raises ImportError
    with pytest.raises(ConfigError, match="needs the model gateway") as err:
        resolve_model("ollama:qwen2.5-coder:7b")
    assert "scripted:PATH" in err.value.hint
    with pytest.raises(ConfigError, match="no --model given"):
        resolve_model(None)
    assert isinstance(resolve_model(script(tmp_path)), ScriptedModel)


def test_the_models_own_notices_reach_the_user(run_tomo, shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A retry (and Ollama's context-window warning) is emitted by the model adapter; `tomo assist` must give the
    model the run's sink, or the user never sees them."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "models"))  # the gateway's loopback servers
    from loopback import Canned, LoopbackServer, ollama_body

    with LoopbackServer(lambda _: Canned(body=ollama_body("Nothing to rename."))) as server:
        server.push(Canned(500, {"error": "model runner crashed"}))
        done = run_tomo("assist", TASK, "--model", "ollama:qwen-test", "--root", str(shop),
                        env={"OLLAMA_HOST": server.url})
    assert done.returncode == 0, done.stderr
    assert "HTTP 500; retry 1 of 2" in done.stdout


def test_a_run_that_never_started_leaves_no_transcript(run_tomo, shop: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    for bad_model in (f"scripted:{tmp_path / 'no-such-script.json'}", "claude:claude-x"):
        done = run_tomo("assist", TASK, "--model", bad_model, "--root", str(shop), "--transcript", str(transcript),
                        env={"ANTHROPIC_API_KEY": ""})
        assert done.returncode == 2 and "error:" in done.stderr, (bad_model, done.stdout, done.stderr)
        assert not transcript.exists(), bad_model
    into_a_dir = run_tomo("assist", TASK, "--model", script(tmp_path), "--root", str(shop), "--transcript",
                          str(tmp_path))
    assert into_a_dir.returncode == 2 and "is a directory" in into_a_dir.stderr and "Traceback" not in into_a_dir.stderr


def test_transcript_is_written_and_replays_as_the_same_run(run_tomo, shop: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    done = run_tomo("assist", TASK, "--model", script(tmp_path), "--root", str(shop), "--transcript", str(transcript))
    assert done.returncode == 0, done.stderr
    kinds = [json.loads(line)["kind"] for line in transcript.read_text().splitlines()]
    assert kinds.count("model_called") == 3 and kinds.count("payload_rendered") == 2
    shown = run_tomo("replay", str(transcript))
    assert shown.returncode == 0, shown.stderr
    assert "rename_plan(" in shown.stdout and "9 edits" in shown.stdout and "(shown to you only)" in shown.stdout


def test_apply_that_applied_nothing_exits_3_and_says_so(run_tomo, shop: Path, tmp_path: Path) -> None:
    path = tmp_path / "looked.json"
    path.write_text(json.dumps({"replies": [call("find_symbol", query="OrderLine.total"),
                                            say("Done: I renamed it.")]}))  # a claim with no plan behind it
    before = sources(shop)
    done = run_tomo("assist", TASK, "--model", f"scripted:{path}", "--root", str(shop), "--apply", "--json")
    assert done.returncode == 3, done.stderr
    assert "nothing was applied" in done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["outcome"] == "unchanged" and summary["verified"] is False and summary["written"] == []
    assert sources(shop) == before


def test_a_verified_apply_says_verified(run_tomo, shop: Path, tmp_path: Path) -> None:
    done = run_tomo("assist", TASK, "--model", script(tmp_path), "--root", str(shop), "--apply", "--json",
                    "--verify", f"{sys.executable} -c pass")
    summary = json.loads(done.stdout)["summary"]
    assert done.returncode == 0 and summary["outcome"] == "verified" and summary["verified"] is True
