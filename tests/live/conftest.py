"""Fixtures of the live tier: one real llama_cpp.server per model and chat format, started on first use and stopped
at the end of the session (see live_support.py for what runs and why)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import QWEN, QWEN_SMALL, SMOL, LiveServer, require_live, start, stop

from tomo.models.profile import forget_profiles

Running = dict[tuple[str, str], tuple[subprocess.Popen[bytes], LiveServer]]

collect_ignore = ["data"]  # the tasks' projects hold tests of their own, failing on purpose


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.live)
            item.add_marker(pytest.mark.xdist_group("live"))  # one worker, so one server per model, not one each


@pytest.fixture(scope="session")
def servers() -> Iterator[Running]:
    """Started on first use, one per model and chat format, stopped at the end of the session."""
    running: Running = {}
    yield running
    for process, _ in running.values():
        stop(process)


def _server(servers: Running, model: str, chat_format: str, tmp_path_factory: pytest.TempPathFactory,
            **options: object) -> LiveServer:
    require_live()
    key = (model, chat_format)
    if key not in servers:
        servers[key] = start(chat_format, tmp_path_factory.mktemp("llama"), model, **options)  # type: ignore[arg-type]
    process, server = servers[key]
    assert process.poll() is None, f"the {model} server ({chat_format}) died:\n{server.tail()}"
    forget_profiles()  # each test meets the server as a new session would
    return server


@pytest.fixture
def fc(servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """SmolLM2 with ``--chat_format chatml-function-calling``: tools by grammar."""
    return _server(servers, SMOL, "chatml-function-calling", tmp_path_factory)


@pytest.fixture
def plain(servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """SmolLM2 with its own chat template: tools are not part of the prompt."""
    return _server(servers, SMOL, "template", tmp_path_factory)


@pytest.fixture(params=["chatml-function-calling", "template"])
def live(request: pytest.FixtureRequest, servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """SmolLM2 with each chat format in turn."""
    return _server(servers, SMOL, request.param, tmp_path_factory)


@pytest.fixture
def qwen(servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """Qwen2.5-Coder 1.5B with ``chatml-function-calling`` (Qwen's own prompt format is ChatML): a call comes by
    grammar, so it parses every time. Its own template writes calls as ``<tool_call>`` text that is often malformed
    JSON (doubled braces, copied from the template's example: in 3 of 4 short runs at least one call), which would
    make "the call reached the handler" a coin toss; a conversation without tools is the same under either."""
    return _server(servers, QWEN, "chatml-function-calling", tmp_path_factory, n_ctx=4096)


@pytest.fixture
def qwen_small(servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """Qwen2.5-Coder 0.5B with its own template, llama.cpp's log verbose (what the AMX-safe test reads)."""
    return _server(servers, QWEN_SMALL, "template", tmp_path_factory, n_ctx=1024, verbose=True)
