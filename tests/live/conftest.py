"""Fixtures of the live tier: one real llama_cpp.server per chat format, started on first use and stopped at the end
of the session (see live_support.py for what runs and why)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import LiveServer, require_live, start, stop

from tomo.models.profile import forget_profiles

Running = dict[str, tuple[subprocess.Popen[bytes], LiveServer]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.live)


@pytest.fixture(scope="session")
def servers() -> Iterator[Running]:
    """Started on first use, one per chat format, stopped at the end of the session."""
    running: Running = {}
    yield running
    for process, _ in running.values():
        stop(process)


def _server(servers: Running, chat_format: str, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    require_live()
    if chat_format not in servers:
        servers[chat_format] = start(chat_format, tmp_path_factory.mktemp("llama"))
    process, server = servers[chat_format]
    assert process.poll() is None, f"the {chat_format} server died:\n{server.tail()}"
    forget_profiles()  # each test meets the server as a new session would
    return server


@pytest.fixture
def fc(servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """The server with ``--chat_format chatml-function-calling``: tools by grammar."""
    return _server(servers, "chatml-function-calling", tmp_path_factory)


@pytest.fixture
def plain(servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """The server with the model's own chat template: tools are not part of the prompt."""
    return _server(servers, "template", tmp_path_factory)


@pytest.fixture(params=["chatml-function-calling", "template"])
def live(request: pytest.FixtureRequest, servers: Running, tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """Each chat format in turn."""
    return _server(servers, request.param, tmp_path_factory)
