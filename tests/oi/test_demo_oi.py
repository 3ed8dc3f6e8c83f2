"""`tomo demo`'s oi scene: the exec gate refuses the first finish (after a parse-only check), then the turn ends
verified; the bug is planted in the copy only."""

from __future__ import annotations

import hashlib

from oi.oi_support import require_bwrap
from tomo.demo import example_project


def _tree_hash() -> str:
    root = example_project()
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def test_the_oi_scene_is_refused_once_then_verified(run_tomo):
    require_bwrap()
    before = _tree_hash()
    done = run_tomo("demo", "--no-scene2")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout.split("scene 3:", 1)[1]
    assert "1 failed, 5 passed" in out and "6 passed" in out
    assert "⊘ exec gate refused" in out and "never loaded" in out
    assert "exec gate: refused 1 time(s), then satisfied" in out
    assert "repro gate: satisfied" in out and "result: verified in 7 rounds, 5 blocks, in the strict sandbox" in out
    assert _tree_hash() == before  # the bundled example still has no bug


async def test_the_oi_scene_as_a_library(strict, tmp_path):
    from tomo.demo.oi_scene import run_oi_demo
    from tomo.events import GateBlocked, ListSink

    sink = ListSink()
    result = await run_oi_demo(tmp_path, sink, sandbox=strict)
    s = result.summary
    assert result.refused_then_verified and s.files_changed == ["shop/lines.py"] and s.rounds == 7
    assert [e.gate for e in sink.of(GateBlocked)] == ["exec"]
    assert s.gates["repro"].satisfied and "block 1 failed" in s.gates["repro"].reason
    assert "gross - gross * self.discount" in (result.workdir / "shop" / "lines.py").read_text()
