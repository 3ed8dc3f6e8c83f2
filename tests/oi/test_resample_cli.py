"""`tomo run` against a real loopback server on the OpenAI wire: after a reply that did nothing new, the next request
asks for a hotter sample (the second attempt starts from the task, the file put back); `--no-resample` keeps the
working temperature and the one attempt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from models.loopback import LoopbackServer, openai_stream, sse

SRC = Path(__file__).resolve().parents[2] / "src"
EDIT = "```python calc.py\ndef add(a, b):\n    return a + b\n```\n"


def _run(tmp_path: Path, *flags: str) -> list[float | None]:
    root = tmp_path / "p"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
           "TOMO_LOCAL_SERVERS": "", "TOMO_MODEL": ""}
    with LoopbackServer() as server:
        server.push(*(sse(openai_stream([text], [], "stop")) for text in (EDIT, EDIT, EDIT, "Done.")))
        done = subprocess.run([sys.executable, "-m", "tomo", "run", "make add add", "--model",
                               f"openai-compat:{server.url}/v1#tiny", "--root", str(root), "--sandbox", "local",
                               "--yes", "--no-context", "--json", *flags],
                              capture_output=True, text=True, env=env, timeout=120)
        asked = [r.json.get("temperature") for r in server.requests if r.path.endswith("/chat/completions")]
    result = json.loads(done.stdout)
    assert result["files_changed"] == ["calc.py"], done.stderr
    assert result["rewinds"] == (0 if flags else 1)
    return asked


@pytest.mark.parametrize(("flags", "expected"), [((), [0.2, 0.2, 0.8, 0.2]),
                                                    (("--no-resample",), [0.2, 0.2, 0.2, 0.2])])
def test_the_reply_after_a_repeat_is_asked_for_hotter(tmp_path: Path, flags: tuple[str, ...],
                                                      expected: list[float]) -> None:
    assert _run(tmp_path, *flags) == expected
