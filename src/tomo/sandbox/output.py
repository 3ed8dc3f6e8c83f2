"""A byte cap on a run's output that keeps the head and the tail, and says in words what it cut.

The head is where a program says what it is doing and the tail is where it says how it ended (the traceback, the
summary line), so both are kept and the middle is dropped. Memory stays bounded however much the program writes.

Live streaming (``on_output``) forwards the first ``cap`` bytes as they come; what a live viewer missed can be
printed at the end with :meth:`OutputCap.unstreamed_tail` and described with :meth:`OutputCap.stream_notice`.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable

OnOutput = Callable[[bytes], None]


class OutputCap:
    def __init__(self, cap: int, on_output: OnOutput | None = None) -> None:
        self.cap = cap
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self._head = bytearray()
        self._tail = bytearray()  # the last tail_cap bytes written after the head
        self.total = 0
        self.streamed = 0
        self._on_output = on_output

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        if self._on_output is not None and self.streamed < self.cap:
            live = chunk[: self.cap - self.streamed]
            self.streamed += len(live)
            self._on_output(bytes(live))
        room = self.head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > self.tail_cap:
                del self._tail[: len(self._tail) - self.tail_cap]

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    @property
    def cut_bytes(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def notice(self) -> str:
        return (
            f"[output cut: {self.cut_bytes:,} bytes in the middle were dropped; showing the first "
            f"{len(self._head):,} and the last {len(self._tail):,} of {self.total:,} bytes]"
        )

    def text(self) -> str:
        if not self.truncated:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", "replace")
        # Cut at character boundaries: a multi-byte character split by the cut is left out, not shown as "\ufffd".
        head = codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self._head), final=False)
        tail = bytes(self._tail)
        skip = 0
        while skip < min(3, len(tail)) and tail[skip] & 0xC0 == 0x80:  # continuation bytes of a cut character
            skip += 1
        return f"{head}\n{self.notice()}\n{tail[skip:].decode('utf-8', 'replace')}"

    def unstreamed_tail(self) -> bytes:
        """The kept tail bytes a live viewer has not seen yet."""
        tail_start = self.total - len(self._tail)
        return bytes(self._tail[max(0, self.streamed - tail_start):])

    def finish(self, on_cut: Callable[[str], None] | None = None) -> None:
        """Completes a live stream: sends the tail the viewer has not seen, saying first (``on_cut``) how much
        between the streamed head and that tail was dropped, if anything was."""
        if self._on_output is None or not self.truncated:
            return
        tail = self.unstreamed_tail()
        if on_cut is not None and self.total - self.streamed > len(tail):  # only when the viewer really misses bytes
            on_cut(self.stream_notice())
        self.streamed = self.total  # the viewer has now seen everything it will see
        if tail:
            self._on_output(tail)

    def stream_notice(self) -> str:
        """For a live viewer: how much between the streamed part and the tail printed after it was dropped."""
        gap = self.total - self.streamed - len(self.unstreamed_tail())
        return (
            f"output cut: {gap:,} bytes were not shown; the first {self.streamed:,} were streamed and the last "
            f"{len(self.unstreamed_tail()):,} follow ({self.total:,} bytes in all)"
        )
