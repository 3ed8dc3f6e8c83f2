"""A reference quotes its source line: the same text whether the query split the file itself or reused the lines
its source reading (pysource, for a loop target or a local assigned twice) had split with their breaks."""

from __future__ import annotations

from pathlib import Path

from tomo.prism import Graph

MODELS = "class Book:\n    def save(self):\n        pass\n"
# CRLF line breaks, a non-ASCII line, trailing whitespace, a form feed (no break for bytes, unlike for str)
USE = (
    "from models import Book\r\n"
    "\r\n"
    "\r\n"
    "def run(books):\r\n"
    "    for b in [Book(), Book()]:\r\n"
    "        b.save()  # déjà vu \t \r\n"
    "    b = Book()\r\n"
    "    b = Book()\r\n"
    "    b.save()\x0c  # after a form feed\r\n"
    "    Book().save()\r\n"
)


def test_a_quoted_line_is_the_files_line_however_it_was_split(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "use.py").write_bytes(USE.encode())
    with Graph.open(tmp_path) as g:
        refs = [r for r in g.references("models.Book.save") if r.path == "use.py"]
    lines = (tmp_path / "use.py").read_bytes().split(b"\n")
    assert [(r.line, r.text) for r in refs] == [
        (n, lines[n - 1].decode().strip()) for n in (6, 9, 10)]
    assert refs[0].text == "b.save()  # déjà vu" and refs[1].text == "b.save()\x0c  # after a form feed"
