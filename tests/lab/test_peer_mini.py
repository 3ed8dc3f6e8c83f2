"""The mini-swe-agent peer, driven through its own Python API against a real loopback server that speaks the
OpenAI wire format: what it sends is the peer's own prompt, what it runs changes the copy, and its claim (it
submitted) comes back as the JSON the lab records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tomo.lab.peer_mini import model_kwargs

pytest.importorskip("minisweagent", reason="the peer needs the lab extra: pip install -e '.[lab]'")

from models.loopback import Canned, LoopbackServer, openai_body

SRC = Path(__file__).resolve().parents[2] / "src"


def tomo_env() -> dict[str, str]:
    """This checkout's sources for the child, as tests/conftest.py's run_tomo (whose module is not importable by
    name: in a whole run, ``conftest`` is whichever folder's was imported last, e.g. tests/assist/conftest.py)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}


def action(command: str) -> Canned:
    return Canned(body=openai_body(f"THOUGHT: next step.\n\n```mswea_bash_command\n{command}\n```"))


def test_the_peer_runs_its_actions_in_the_copy_and_reports_its_submission(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.push(action("echo peer-was-here > note.txt"), action("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"))
        done = subprocess.run(
            [sys.executable, "-m", "tomo.lab.peer_mini", "--model", f"openai-compat:{server.url}/v1#tiny",
             "--root", str(tmp_path), "--steps", "5", "--transcript", str(tmp_path / "t.jsonl"), "--",
             "Leave a note."], capture_output=True, text=True, env=tomo_env(), timeout=180)
        sent = [r.json for r in server.requests if r.path.endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["submitted"] and result["outcome"] == "submitted" and result["steps"] == 2
    assert result["usage"] == {"input_tokens": 22, "output_tokens": 14}
    assert (tmp_path / "note.txt").read_text() == "peer-was-here\n"
    assert sent[0]["model"] == "tiny" and "Leave a note." in sent[0]["messages"][1]["content"]
    assert sent[0]["max_tokens"] == 4096 and sent[0]["temperature"] == 0.2  # tomo's cap and local temperature
    assert "mswea_bash_command" in sent[0]["messages"][0]["content"]  # mini's own text-mode prompt
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) >= 4


def test_the_peer_takes_only_openai_compatible_specs() -> None:
    assert model_kwargs("openai-compat:http://127.0.0.1:8012/v1#qwen") == {
        "model_name": "openai/qwen", "api_base": "http://127.0.0.1:8012/v1", "api_key": "sk-local"}
    with pytest.raises(SystemExit, match="openai-compat:URL#NAME"):
        model_kwargs("ollama:qwen2.5-coder:7b")
