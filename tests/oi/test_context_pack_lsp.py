"""The language-server path with the real pylsp, and the fallback when the server is missing, crashes or hangs.

pylsp (python-lsp-server) is an optional tool: where it is missing the pylsp test skips, except under CI=true where
it FAILS. The hanging server is a real process that reads its input and never answers.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from oi.oi_support import copy_ctx_fixture
from tomo.oi.context_pack import build
from tomo.oi.lsp import LspClient, LspError

TASK = "round_price raises on an empty basket"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_ctx_fixture(tmp_path)


def _require_pylsp() -> str:
    exe = shutil.which("pylsp")
    if exe is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("pylsp is not installed: `pip install python-lsp-server` (required on CI)")
        pytest.skip("pylsp is not installed (pip install python-lsp-server)")
    return exe


def _hanging_server(tmp_path: Path) -> tuple[list[str], Path]:
    script = tmp_path / "hang.py"
    pidfile = tmp_path / "hang.pid"
    script.write_text(
        "import os, sys, time\n"
        f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "while sys.stdin.buffer.read(1):\n"
        "    pass\n"
        "time.sleep(600)\n")
    return [sys.executable, str(script)], pidfile


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_pylsp_adds_its_references(repo: Path) -> None:
    exe = _require_pylsp()
    with LspClient([exe], repo, timeout=60) as client:
        caps = client.initialize()
        assert caps.get("referencesProvider")
        refs = client.references("shop/pricing.py", 12, 4)  # def round_price
    assert ("shop/cart.py", 16) in refs
    pack = build(repo, TASK, lsp=[exe], lsp_timeout=60)
    assert pack.notes == []
    assert "language server: uses `round_price`" in pack.reasons["shop/cart.py"]
    assert pack.files[0] == "shop/pricing.py"


def test_a_missing_server_changes_nothing(repo: Path) -> None:
    plain = build(repo, TASK)
    with_missing = build(repo, TASK, lsp="no-such-language-server --stdio")
    assert (with_missing.files, with_missing.symbols, with_missing.tests) == (plain.files, plain.symbols, plain.tests)
    assert len(with_missing.notes) == 1 and "cannot start language server 'no-such-language-server'" \
        in with_missing.notes[0]


def test_a_hanging_server_times_out_and_changes_nothing(repo: Path, tmp_path: Path) -> None:
    plain = build(repo, TASK)
    command, pidfile = _hanging_server(tmp_path)
    t0 = time.monotonic()
    hung = build(repo, TASK, lsp=command, lsp_timeout=1.5)
    assert time.monotonic() - t0 < 30  # bounded by the timeout, not by the server (which sleeps 600 s)
    assert (hung.files, hung.symbols, hung.text) == (plain.files, plain.symbols, plain.text)
    assert "did not answer initialize within 1.5 s" in hung.notes[0]
    assert _gone(int(pidfile.read_text()))  # the server's process was killed, not left behind


def test_a_crashing_server_changes_nothing(repo: Path) -> None:
    plain = build(repo, TASK)
    crashed = build(repo, TASK, lsp=[sys.executable, "-c", "import sys; sys.exit(3)"], lsp_timeout=10)
    assert (crashed.files, crashed.symbols) == (plain.files, plain.symbols)
    assert "exit" in crashed.notes[0]


def test_client_rejects_an_empty_command(repo: Path) -> None:
    with pytest.raises(LspError, match="empty language server command"):
        LspClient("", repo)
