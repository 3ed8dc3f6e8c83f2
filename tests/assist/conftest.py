"""Fixtures for assist: a fresh copy of the bundled shop example, and a session over it with a fixed tag."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from assist_helpers import EXAMPLE

from tomo.assist import Session
from tomo.events import ListSink
from tomo.prism import Graph


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    dest = tmp_path / "shop"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".tomo", "__pycache__", ".pytest_cache"))
    return dest


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


@pytest.fixture
def session(shop: Path, sink: ListSink) -> Iterator[Session]:
    s = Session(Graph.open(shop), sink=sink, session_id="t1")
    yield s
    s.close()
