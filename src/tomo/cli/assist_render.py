"""What a person sees of an assist run: the loop's log, every payload the model did *not* see, and the final report.

:class:`AssistSink` is the loop's :class:`~tomo.cli.render.RichSink` plus a table for each ``PayloadRendered``
event (the full answer behind a receipt) and a line for the verify run.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tomo.assist import AssistOptions, Summary
from tomo.cli.render import RichSink
from tomo.cli.safe import esc, text
from tomo.events import CodeRan, Event, PayloadRendered, ToolCalled, ToolRefused

MAX_ROWS = 40
"""Rows drawn per table; a longer payload is drawn per file (its ambiguous rows always in full), and --json has all."""


class AssistSink(RichSink):
    """Draws each tool call as the call, the receipt the model read, then the payload only the user sees."""

    def __init__(self, console: Console | None = None, *, show_assistant: bool = True) -> None:
        super().__init__(console, show_assistant=show_assistant)
        self._handlers[PayloadRendered] = self._payload
        self._handlers[CodeRan] = self._ran
        self._pending: list[PayloadRendered] = []

    def emit(self, event: Event) -> None:
        super().emit(event)
        if not isinstance(event, PayloadRendered):
            for e in self._pending:  # a payload is emitted during its call: draw it after the call's receipt
                render_payload(self.console, e.operation, e.handle, e.payload)
            self._pending.clear()

    def close(self) -> None:
        super().close()
        for e in self._pending:
            render_payload(self.console, e.operation, e.handle, e.payload)
        self._pending.clear()

    def _payload(self, e: PayloadRendered) -> None:
        self._pending.append(e)

    def _tool(self, e: ToolCalled) -> None:
        mark = ("  ✓ ", "green") if e.ok else ("  ✗ ", "red")
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in e.args.items())
        self.console.print(Text.assemble(mark, text(f"{e.tool}({args})", "bold")))
        self.console.print(Text.assemble(("    model read: ", "dim"), text(e.summary, "cyan" if e.ok else "red")))

    def _refused(self, e: ToolRefused) -> None:
        self.console.print(Text.assemble(("  ⊘ refused ", "bold red"), text(e.tool, "bold")))
        self.console.print(Text.assemble(("    model read: ", "dim"), text(e.reason, "red")))

    def _ran(self, e: CodeRan) -> None:
        style, word = ("green", "passed") if e.exit_code == 0 and not e.timed_out else ("bold red", "FAILED")
        extra = ", timed out" if e.timed_out else ""
        self.console.print(Text(f"  verify {word} (exit {e.exit_code}{extra}, {e.seconds:.1f}s)", style=style))


def _table(title: str, *columns: str) -> Table:
    table = Table(box=None, padding=(0, 1))
    table.caption = title  # drawn above the table by _print
    for c in columns:
        if c in ("code", "reason"):  # one row per line: the source text is cut, --json has all of it
            table.add_column(c, no_wrap=True, overflow="ellipsis", max_width=44 if c == "code" else 30)
        else:
            table.add_column(c, no_wrap=True)
    return table


def _conf(c: str) -> str:
    return "[green]confirmed[/]" if c == "confirmed" else "[yellow]ambiguous[/]"


def _loc(row: dict[str, Any]) -> Text:
    return text(f"{row['path']}:{row['line']}:{row.get('col', 0)}")


def _t(value: Any) -> Text:
    """A table cell from a payload (source text, a name, a reason): text, never markup."""
    return text(value)


def render_payload(console: Console, op: str, handle: str, p: dict[str, Any]) -> None:
    """Draws one operation's full answer (the user's view of what the model got as a one-line receipt)."""
    shown = f"[dim]· payload of {esc(handle)}, for you only[/]"
    if op == "find_symbol":
        t = _table(f"symbols matching `{esc(p['query'])}` {shown}", "symbol", "kind", "location")
        for s in p["symbols"][:MAX_ROWS]:
            t.add_row(_t(s["qualname"]), _t(s["kind"]), _loc(s))
        _print(console, t, len(p["symbols"]))
    elif op == "definition":
        s = p["symbol"]
        console.print(f"    {esc(s['qualname'])} ({esc(s['kind'])}) at {esc(_loc(s))} {shown}")
    elif op == "references":
        _rows(console, f"references to {esc(p['symbol'])} {shown}", p["references"],
              ("location", "confidence", "kind", "code", "reason"),
              lambda r: (_loc(r), _conf(r["confidence"]), _t(r["kind"]), _t(r["text"][:60]), _t(r["reason"])))
    elif op == "callers":
        _rows(console, f"callers of {esc(p['symbol'])} {shown}", p["callers"],
              ("caller", "location", "confidence", "code"),
              lambda r: (_t(r["caller"]), _loc(r), _conf(r["confidence"]), _t(r["text"][:60])))
    elif op == "callees":
        _rows(console, f"calls made by {esc(p['symbol'])} {shown}", p["callees"], ("calls", "target", "location"),
              lambda r: (_t(r["name"]), _t(r["target"]) if r["target"] else text(r["reason"], "dim"), _loc(r)))
    elif op == "impact":
        _rows(console, f"impact of changing {esc(p['symbol'])} {shown}", p["items"],
              ("depth", "symbol", "via", "test", "confidence", "location"),
              lambda i: (str(i["depth"]), _t(i["symbol"]), _t(i["via"]), "test" if i["is_test"] else "",
                         _conf(i["confidence"]), _t(f"{i['path']}:{i['line']}")))
    elif op == "rename_plan":
        title = f"plan {esc(handle)}: rename {esc(p['symbol']['qualname'])} → {esc(p['new_name'])} {shown}"
        _rows(console, title, p["edits"], ("location", "confidence", "edit", "reason"),
              lambda e: (_loc(e), _conf(e["confidence"]), _t(f"{e['old']} → {e['new']}"), _t(e["reason"])))
        console.print(f"    {p['confirmed']:,} confirmed, {p['ambiguous']:,} ambiguous edits in {len(p['files'])} "
                      f"files; {len(p['conflicts'])} conflicts")
        for c in p["conflicts"]:
            console.print(f"    [red]conflict[/] {esc(_loc(c))}: {esc(c['reason'])}")
    elif op == "apply_plan":
        if p["written"]:
            console.print(f"    [bold green]wrote[/] plan {esc(p['plan'])}: {p['edits_applied']:,} edits in "
                          f"{len(p['files'])} files: {esc(', '.join(p['files'][:8]))}" +
                          (f" and {len(p['files']) - 8} more" if len(p["files"]) > 8 else ""))
        else:
            console.print(f"    [yellow]not written[/]: plan {esc(p['plan'])} chosen ({p['edits_chosen']:,} edits in "
                          f"{len(p['files'])} files); this run does not write (--apply)")
    elif op == "undo_apply":
        console.print(f"    [yellow]rolled back[/] {esc(p['apply'])}: restored {esc(', '.join(p['files']))}")


def _rows(console: Console, title: str, rows: list[dict[str, Any]], columns: tuple[str, ...], cells: Any) -> None:
    if len(rows) <= MAX_ROWS:
        t = _table(title, *columns)
        for r in rows:
            t.add_row(*cells(r))
        _print(console, t, len(rows))
        return
    per_file: Counter[tuple[str, str]] = Counter((r["path"], r.get("confidence", "confirmed")) for r in rows)
    t = _table(f"{title}: {len(rows):,} rows, per file", "file", "confirmed", "ambiguous")
    files = sorted({path for path, _ in per_file})
    for path in files[:MAX_ROWS]:
        t.add_row(_t(path), str(per_file[(path, "confirmed")]), str(per_file[(path, "ambiguous")] or ""))
    _print(console, t, 1)
    if len(files) > MAX_ROWS:
        console.print(f"    [dim]… and {len(files) - MAX_ROWS:,} more files (--json lists every row)[/]")
    ambiguous = [r for r in rows if r.get("confidence") == "ambiguous"]
    if ambiguous:
        a = _table("the ambiguous rows (check these)", *columns)
        for r in ambiguous[:MAX_ROWS]:
            a.add_row(*cells(r))
        _print(console, a, len(ambiguous))


def _print(console: Console, table: Table, total: int) -> None:
    title, table.caption = table.caption, None
    if total == 0:
        console.print(f"    {title}: [dim]none[/]")
        return
    console.print(f"    {title}")
    console.print(Padding(table, (0, 0, 0, 3)))
    if total > MAX_ROWS:
        console.print(f"    [dim]… {total - MAX_ROWS:,} more rows (--json lists every row)[/]")


def print_report(console: Console, s: Summary, options: AssistOptions) -> None:
    """The end of a run in a few lines: what changed, what was skipped and why, the verify result."""
    console.rule("[bold]assist: result")
    applied = [a for a in s.applies if a["written"]]
    if s.rolled_back:
        console.print(f"[bold red]changed: nothing[/] (verify failed; {len(s.rolled_back)} files restored byte for "
                      "byte)")
    elif applied:
        edits = sum(a["edits_applied"] for a in applied)
        console.print(f"[bold green]changed:[/] {edits:,} edits in {len(s.written)} files "
                      f"(plan {esc(', '.join(a['plan'] for a in applied))}): {esc(', '.join(s.written[:10]))}" +
                      (f" and {len(s.written) - 10} more" if len(s.written) > 10 else ""))
    else:
        console.print("[bold]changed:[/] nothing")
    skipped = [row for a in s.applies for row in a["skipped"]]
    if skipped:
        why = Counter(r["reason"] for r in skipped)
        reasons = esc(", ".join(f"{n} {reason}" for reason, n in why.most_common()))
        console.print(f"[yellow]skipped:[/] {len(skipped)} ambiguous edits ({reasons}): not proven, and "
                      "--apply-ambiguous was not given")
        for r in skipped[:10]:
            console.print(Text.assemble("  ", _loc(r), "  ", text(r["reason"])))
    for f in s.failed:
        if f["operation"] == "apply_plan":
            console.print(f"[yellow]not applied:[/] {esc(f['args'].get('handle'))}: {esc(f['error'])}")
    if s.refused:
        console.print(f"[yellow]refused:[/] {esc(', '.join(sorted(set(s.refused))))} (assist has no text search, file "
                      "reading or shell)")
    if s.verify is not None:
        v = s.verify
        last = v.output_tail[-1] if v.output_tail else ""
        word = "[bold green]passed[/]" if v.passed else "[bold red]FAILED[/]"
        console.print(f"[bold]verify:[/] `{esc(options.verify)}` {word} (exit {v.exit_code}, {v.seconds:.1f}s): "
                      f"{esc(last)}")
        if not v.passed:
            for line in v.output_tail[-10:]:
                console.print(text(f"  {line}"), highlight=False)
    if s.error:
        console.print(f"[bold red]the model failed:[/] {esc(s.error)}")
    for note in s.notes:
        if not note.startswith("the model failed"):
            console.print(f"[dim]note: {esc(note)}[/]")
    if s.stopped_by:
        console.print(f"[bold yellow]the model was stopped by the {esc(s.stopped_by)} limit[/]")
