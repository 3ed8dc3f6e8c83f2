"""What the model reads after a block: exit code, output capped head and tail with the cut said, timeouts said."""

from __future__ import annotations

from tomo.oi.feedback import block_report, cap_output


def test_short_output_is_untouched():
    assert cap_output("ok\n", 100) == ("ok\n", False)


def test_long_output_keeps_head_and_tail_and_says_the_cut_in_words():
    lines = [f"line {n}" for n in range(1, 2001)]
    text = "\n".join(lines) + "\n"
    shown, cut = cap_output(text, 1_000)
    assert cut
    assert shown.startswith("line 1\nline 2\n")
    assert shown.rstrip().endswith("line 2000")
    notice = next(ln for ln in shown.splitlines() if ln.startswith("[tomo:"))
    assert "characters" in notice and "lines) of output were cut here" in notice
    assert "line 1000\n" not in shown  # the middle is gone
    assert len(shown) < 1_000 + len(notice) + 2
    # no half lines: every kept line is a whole "line N"
    assert all(ln.startswith(("line ", "[tomo:")) and ln.split()[-1].rstrip("]").isascii() for ln in shown.splitlines())


def test_the_report_gives_exit_code_changes_and_the_sandbox_notes():
    report = block_report(2, "shell", 124, "started\n", seconds=30.0,
                          notes=["timed out after 30 s; the command and all its children were killed"],
                          changed=["a.py", "b.py"])
    assert report.startswith("[block 2 (shell) · exit code 124 · 30.0 s]")
    assert "[tomo: timed out after 30 s" in report
    assert "[tomo: this block changed a.py, b.py]" in report


def test_no_output_is_said_and_an_interrupt_is_explained():
    report = block_report(1, "python", 130, "", seconds=1.0, interrupted=True)
    assert "(no output)" in report and "interrupted by the user" in report and "Ctrl-C" in report


def test_the_report_caps_the_output():
    report = block_report(1, "python", 0, "x" * 50_000, seconds=0.1, limit=2_000)
    assert len(report) < 3_000 and "were cut here" in report
