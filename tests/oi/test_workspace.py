"""Edit detection: content hashes before and after, however the file was written; tomo's state, VCS folders and
caches are not edits; changed lines for the exec gate."""

from __future__ import annotations

import os

from oi.oi_support import LIMITS, say, sh
from tomo.events import ListSink
from tomo.oi.workspace import Scanner, changed_lines


def test_content_not_mtime_decides(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    scanner = Scanner(tmp_path)
    before = scanner.snapshot(keep_code=True)
    assert before.contents["a.py"] == b"x = 1\n"
    os.utime(tmp_path / "a.py", (1, 1))  # touched, same content
    assert scanner.snapshot().changed_since(before) == []
    (tmp_path / "a.py").write_text("x = 2\n")
    (tmp_path / "b.txt").write_text("new")
    assert scanner.snapshot().changed_since(before) == ["a.py", "b.txt"]


def test_tomo_state_vcs_and_caches_are_not_edits(tmp_path):
    scanner = Scanner(tmp_path)
    before = scanner.snapshot()
    for rel in (".tomo/sessions/s.json", ".git/index", ".hg/store", "__pycache__/a.cpython-311.pyc",
                ".pytest_cache/v", "pkg/__pycache__/m.pyc", "node_modules/x/index.js", "mod.pyc", "x.egg-info/PKG"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("data")
    assert scanner.snapshot().changed_since(before) == []


def test_changed_lines():
    old = b"a\nb\nc\nd\n"
    assert changed_lines(old, b"a\nB\nc\nd\n") == {2}
    assert changed_lines(old, b"a\nb\nnew\nc\nd\n") == {3}
    assert changed_lines(old, b"a\nc\nd\n") == {1, 2}  # a deletion marks the lines around it
    assert changed_lines(None, b"x\ny\n") == {1, 2}
    assert changed_lines(old, old) == set()


async def test_sed_python_and_heredoc_edits_all_count(make_engine, strict, project):
    replies = [
        sh("sed -i 's/a - b/a + b/' calc.py"),
        {"content": "```python\nopen('notes.txt', 'w').write('hi')\n```"},
        sh("cat > extra.py <<'EOF'\nVALUE = 1\nEOF\nmkdir -p .git && echo ref > .git/HEAD && echo x > .tomo-not-state"),
        say("done"),
    ]
    engine, _ = make_engine(strict, project, replies)
    messages = await engine.turn([], "edit", ListSink())
    assert engine.last.files_changed == [".tomo-not-state", "calc.py", "extra.py", "notes.txt"]
    assert "[tomo: this block changed calc.py]" in messages[2].content
    assert "[tomo: this block changed notes.txt]" in messages[4].content
    assert "this block changed .tomo-not-state, extra.py]" in messages[6].content


async def test_long_output_is_capped_for_the_model_and_a_timeout_is_said(make_engine, strict, project):
    replies = [{"content": "```python\nfor n in range(20000):\n    print('line', n)\n```"}, sh("sleep 20"), say("ok")]
    engine, _ = make_engine(strict, project, replies, limits=LIMITS.with_(timeout_s=2))
    messages = await engine.turn([], "noisy", ListSink())
    capped = messages[2].content
    assert "line 0\n" in capped and "line 19999" in capped and "were cut here" in capped and len(capped) < 8_000
    timed = messages[4].content
    assert "exit code 124" in timed and "timed out after 2 s" in timed
