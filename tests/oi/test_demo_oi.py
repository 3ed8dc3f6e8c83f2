"""`tomo demo`'s oi scene: the exec gate refuses the first finish (after a parse-only check), then the turn ends
verified; the bug is planted in the copy only."""

from __future__ import annotations

import hashlib
import json

from oi_support import require_bwrap

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


def test_the_oi_scene_in_json(run_tomo):
    require_bwrap()
    done = run_tomo("demo", "--json", "--no-scene2", "--oi")
    assert done.returncode == 0, done.stderr
    scenes = json.loads(done.stdout)
    oi = scenes[-1]
    assert oi["scene"] == "oi" and oi["verified"] is True and oi["files_changed"] == ["shop/lines.py"]
    assert oi["gates"]["exec"]["refusals"] == 1 and oi["gates"]["repro"]["satisfied"] is True
