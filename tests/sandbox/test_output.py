"""The output cap: bounded memory, head and tail kept, the cut said in words, and live streaming that adds up."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tomo.sandbox.output import OutputCap


def test_short_output_is_kept_whole() -> None:
    cap = OutputCap(100)
    cap.feed(b"hello ")
    cap.feed(b"world\n")
    assert cap.text() == "hello world\n" and not cap.truncated


def test_long_output_keeps_head_and_tail_and_says_what_was_cut() -> None:
    cap = OutputCap(10)
    cap.feed(b"HEAD_" + b"x" * 1000 + b"_TAIL")
    text = cap.text()
    assert text.startswith("HEAD_") and text.endswith("_TAIL")
    assert cap.truncated and cap.cut_bytes == 1000
    assert "1,000 bytes in the middle were dropped" in text and "of 1,010 bytes" in text


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.binary(max_size=50), max_size=30), limit=st.integers(min_value=2, max_value=120))
def test_cap_matches_a_slice_of_the_whole(chunks: list[bytes], limit: int) -> None:
    whole = b"".join(chunks)
    cap = OutputCap(limit)
    streamed: list[bytes] = []
    cap_live = OutputCap(limit, streamed.append)
    for chunk in chunks:
        cap.feed(chunk)
        cap_live.feed(chunk)
    assert cap.total == len(whole)
    if len(whole) <= limit:
        assert not cap.truncated and cap.text() == whole.decode("utf-8", "replace")
        assert b"".join(streamed) == whole
    else:
        head, tail = whole[: limit // 2], whole[len(whole) - (limit - limit // 2):]
        assert cap.truncated and cap.cut_bytes == len(whole) - len(head) - len(tail)
        if whole.isascii():  # no character for the cut to split: the text is exactly head, notice, tail
            assert cap.text() == f"{head.decode()}\n{cap.notice()}\n{tail.decode()}"
        assert b"".join(streamed) == whole[:limit]
        notices: list[str] = []
        cap_live.finish(notices.append)
        # a live viewer sees the first `limit` bytes, then (after the notice) only the tail it has not seen
        assert b"".join(streamed) == whole[:limit] + whole[max(limit, len(whole) - len(tail)):]
        dropped = max(limit, len(whole) - len(tail)) - limit
        assert len(notices) == (1 if dropped else 0)  # a viewer who missed nothing is not told of a cut
        assert not notices or f"{dropped:,} bytes were not shown" in notices[0]


def test_a_live_viewer_who_saw_every_byte_is_not_told_of_a_cut() -> None:
    """121 bytes under a 100-byte cap: the result keeps 50 + 50, but live, the first 100 and then the missing 21
    are shown: every byte. Saying "output cut: 0 bytes were not shown" would be noise."""
    streamed: list[bytes] = []
    notices: list[str] = []
    cap = OutputCap(100, streamed.append)
    whole = b"a" * 59 + b"\n" + b"b" * 60 + b"\n"
    cap.feed(whole)
    cap.finish(notices.append)
    assert b"".join(streamed) == whole and notices == [] and cap.truncated


def test_the_cut_never_splits_a_character() -> None:
    """Head and tail end at byte counts; a two-byte character cut in half must not become a replacement mark."""
    cap = OutputCap(10)  # head 5 bytes, tail 5 bytes: both cuts fall in the middle of an "é"
    cap.feed("é".encode() * 100)
    head, notice, tail = cap.text().split("\n")
    assert (head, tail) == ("éé", "éé") and "\ufffd" not in cap.text() and notice.startswith("[output cut")
    whole = OutputCap(100)
    whole.feed("é".encode() * 10)  # not cut: every character is kept
    assert whole.text() == "é" * 10
