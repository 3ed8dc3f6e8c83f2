"""What the model reads after its blocks ran: each block's exit code and output, capped, and what tomo noticed.

The cap keeps the head and the tail (a traceback's last lines and a test summary are at the end; the command and its
first error are at the start) and says in words how much was cut from the middle, so the model never mistakes a
shortened output for the whole one.
"""

from __future__ import annotations

from collections.abc import Sequence

MODEL_OUTPUT_CHARS = 6_000
"""How much of one block's output the model reads (the user sees the sandbox's own, larger, cap)."""


def cap_output(text: str, limit: int = MODEL_OUTPUT_CHARS) -> tuple[str, bool]:
    """``text`` if it fits in ``limit`` characters, else its head and tail with the cut said in words between."""
    if len(text) <= limit:
        return text, False
    head_len = limit * 2 // 5
    tail_len = limit - head_len
    head, tail = text[:head_len], text[-tail_len:]
    # cut at line boundaries where one is near, so no line is shown half
    if (nl := head.rfind("\n")) > head_len // 2:
        head = head[: nl + 1]
    if 0 <= (nl := tail.find("\n")) < tail_len // 2:
        tail = tail[nl + 1:]
    cut = text[len(head): len(text) - len(tail)]
    lines = cut.count("\n")
    notice = (f"[tomo: {len(cut):,} characters ({lines:,} lines) of output were cut here; the first {len(head):,} "
              f"and the last {len(tail):,} of {len(text):,} are shown. Narrow the command (a single test, -q, "
              "| tail) to see the part you need.]")
    return f"{head.rstrip(chr(10))}\n{notice}\n{tail}", True


def block_report(number: int, runner: str, exit_code: int, output: str, *, seconds: float, notes: Sequence[str] = (),
                 changed: Sequence[str] = (), interrupted: bool = False, limit: int = MODEL_OUTPUT_CHARS,
                 unchanged_hint: str = "") -> str:
    """One block's result, as the model reads it."""
    shown, _ = cap_output(output, limit)
    status = "interrupted by the user (Ctrl-C)" if interrupted else f"exit code {exit_code}"
    parts = [f"[block {number} ({runner}) · {status} · {seconds:.1f} s]"]
    parts.append(shown.rstrip("\n") if shown.strip() else "(no output)")
    if interrupted:
        parts.append("[tomo: the user stopped this block with Ctrl-C; it and every process it started were killed. "
                     "Do not simply run it again: say what you were doing, or take a shorter step.]")
    for note in notes:
        if not note.startswith("output cut"):  # the sandbox's own cut notice is already in the output
            parts.append(f"[tomo: {note}]")
    if changed:
        more = f" and {len(changed) - 12} more" if len(changed) > 12 else ""
        parts.append(f"[tomo: this block changed {', '.join(changed[:12])}{more}]")
    elif not interrupted:  # said every time: a model that believes it fixed something must read that it did not
        parts.append(f"[tomo: this block changed no file. {unchanged_hint}]" if unchanged_hint
                     else "[tomo: this block changed no file]")
    return "\n".join(parts)
