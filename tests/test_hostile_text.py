"""Text from outside is printed as text, by every renderer, end to end through the CLI where there is a CLI.

Outside text is source lines, file names, model replies, tool results and command output. Rich must not read it as
markup (``[/foo]`` was a MarkupError traceback, ``items[i]`` lost its ``[i]``, ``[link=...]`` became a link) and the
terminal must not obey its control characters: tomo shows them as escapes (ESC prints as the four characters
``\\x1b``; see tomo.cli.safe). Each test asserts the exact text that comes out, and that no raw ESC does.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tomo.assist import AssistOptions
from tomo.assist.engine import Summary, Verify
from tomo.cli.safe import esc, text, visible
from tomo.demo import DemoRun
from tomo.events import (
    AssistantSaid,
    JsonlSink,
    LimitReached,
    ModelCalled,
    ModelFailed,
    ModelThinking,
    Notice,
    TextStreamed,
    ToolCalled,
    ToolRefused,
)

ESC_RED = "\x1b[31mred\x1b[0m"
ESC_SHOWN = "\\x1b[31mred\\x1b[0m"  # how tomo prints it: visible, not obeyed
MARKUP = ["[/foo]", "[bold red]x", "[link=file:///etc/passwd]y", "items[i]"]
LONG = "L" * 10_000
SAID = " ".join([*MARKUP, ESC_RED])  # a model reply holding every hostile string
SAID_SHOWN = " ".join([*MARKUP, ESC_SHOWN])


def tomo_env() -> dict[str, str]:
    """The environment run_tomo gives the CLI (these tests need raw bytes or a terminal, which it does not do)."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "200"}


def clean(out: subprocess.CompletedProcess[str]) -> None:
    """No traceback, and no raw ESC on stdout: without a terminal rich adds none, so any would be the data's."""
    assert "Traceback" not in out.stderr, out.stderr
    assert "\x1b" not in out.stdout and "\x1b" not in out.stderr


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A project whose source lines and file names are hostile, with a 10,000-character line and invalid UTF-8;
    its own path holds ``[/foo]`` too (``x[`` / ``foo]``), since commands print the root they index."""
    root = tmp_path / "x[" / "foo]"
    root.mkdir(parents=True)
    (root / "m.py").write_bytes(
        ('def target(x):\n    return x\n\n'
         'a = target("[/foo]")\n'
         'b = target("[bold red]x")\n'
         'c = target("[link=file:///etc/passwd]y")\n'
         f'd = target("{ESC_RED}")\n'
         'e = target(items[i])\n'
         f'g = target("{LONG}")\n').encode() + b'f = target("\xff\xfe not utf-8")\n')
    (root / "[bold red]x.py").write_text("from m import target\n\n\ndef use():\n    return target(1)\n")
    (root / f"{ESC_RED}.py").write_text("from m import target\ntarget(3)\n")
    return root


CODE_SHOWN = ['a = target("[/foo]")', 'b = target("[bold red]x")', 'c = target("[link=file:///etc/passwd]y")',
              f'd = target("{ESC_SHOWN}")', 'e = target(items[i])', 'f = target("\ufffd\ufffd not utf-8")']


# ---- tomo graph -----------------------------------------------------------------------------------------------


def test_graph_refs_prints_source_lines_and_file_names_as_text(run_tomo, hostile: Path) -> None:
    out = run_tomo("graph", "refs", "m.target", "--root", str(hostile))
    assert out.returncode == 0, out.stderr
    clean(out)
    for shown in [*CODE_SHOWN, "[bold red]x.py:5:11", f"{ESC_SHOWN}.py:2:0", 'g = target("' + "L" * 68]:
        assert shown in out.stdout, shown
    assert "12 references: 12 confirmed, 0 ambiguous" in out.stdout
    data = json.loads(run_tomo("graph", "refs", "m.target", "--root", str(hostile), "--json").stdout)
    assert {r["text"] for r in data} >= {f'g = target("{LONG}")', f'd = target("{ESC_RED}")'}  # --json has all


def test_graph_callers_symbols_and_rename_plan_print_names_as_text(run_tomo, hostile: Path) -> None:
    callers = run_tomo("graph", "callers", "m.target", "--root", str(hostile))
    assert callers.returncode == 0, callers.stderr
    clean(callers)
    assert "[bold red]x.py:5:11" in callers.stdout and "return target(1)" in callers.stdout
    symbols = run_tomo("graph", "symbols", "use", "--root", str(hostile))
    clean(symbols)
    assert "[bold red]x.py:4:4" in symbols.stdout, symbols.stdout
    plan = run_tomo("graph", "rename-plan", "m.target", "t2", "--root", str(hostile))
    assert plan.returncode == 0, plan.stderr
    clean(plan)
    assert "[bold red]x.py:5:11" in plan.stdout and f"{ESC_SHOWN}.py:2:0" in plan.stdout


def test_an_unknown_hostile_symbol_is_an_error_that_quotes_it_as_text(run_tomo, hostile: Path) -> None:
    out = run_tomo("graph", "refs", f"[/foo]{ESC_RED}", "--root", str(hostile))
    assert out.returncode == 2
    clean(out)
    assert f"[/foo]{ESC_SHOWN}" in out.stderr and "error:" in out.stderr


def test_graph_index_lists_a_broken_file_by_its_name(run_tomo, hostile: Path) -> None:
    (hostile / "[b]broken[i].py").write_text("def (:\n")
    out = run_tomo("graph", "index", "--root", str(hostile))
    assert out.returncode == 0, out.stderr
    clean(out)
    assert "  [b]broken[i].py: " in out.stdout, out.stdout


# ---- tomo assist: the model's words and the payloads it did not see ---------------------------------------------


def test_assist_prints_model_text_receipts_and_payload_tables_as_text(run_tomo, hostile: Path,
                                                                      tmp_path: Path) -> None:
    script = tmp_path / "session.json"
    script.write_text(json.dumps({"replies": [
        {"tool_calls": [{"name": "references", "args": {"symbol": "m.target"}}]},
        {"tool_calls": [{"name": f"grep{ESC_RED}", "args": {"pattern": "[/foo]"}}]},
        {"content": SAID},
    ]}))
    out = run_tomo("assist", "look", "--model", f"scripted:{script}", "--root", str(hostile))
    assert out.returncode == 0, out.stdout + out.stderr
    clean(out)
    assert SAID_SHOWN in out.stdout  # the model's reply, every bracket and escape shown as it was
    for shown in [*CODE_SHOWN[:5], "[bold red]x.py:5:11", f"{ESC_SHOWN}.py:2:0", f"refused grep{ESC_SHOWN}"]:
        assert shown in out.stdout, shown


def test_print_report_shows_verify_output_notes_and_errors_as_text() -> None:
    summary = Summary(task="t", model="m", session="s", notes=[f"note [/foo] {ESC_RED}"],
                      error=f"provider said [bold red]x {ESC_RED}", refused=["[link=file:///etc/passwd]y"],
                      verify=Verify(command="v", exit_code=1, passed=False, seconds=0.1,
                                    output_tail=["FAILED tests/test_a.py::test_x[items[i]]", ESC_RED]))
    buf = io.StringIO()
    from tomo.cli.assist_render import print_report

    print_report(Console(file=buf, width=200), summary, AssistOptions(verify="pytest [-k x]"))
    out = buf.getvalue()
    assert "\x1b" not in out
    for shown in [f"note: note [/foo] {ESC_SHOWN}", f"provider said [bold red]x {ESC_SHOWN}",
                  "refused: [link=file:///etc/passwd]y", "  FAILED tests/test_a.py::test_x[items[i]]",
                  f"  {ESC_SHOWN}", "`pytest [-k x]` FAILED"]:
        assert shown in out, (shown, out)


# ---- the loop's live renderer and tomo replay ---------------------------------------------------------------


def hostile_events() -> list:
    return [ModelCalled("reader", f"ollama:{ESC_RED}[/foo]", 1, "tool_calls", 3, 4, 0.5),
            ToolCalled("reader", "echo", {"text": "[/foo]"}, True, f"summary [bold red]x {ESC_RED}"),
            ToolRefused("reader", "[/foo]", f"not allowed [link=file:///etc/passwd]y {ESC_RED}"),
            Notice("warning", f"notice items[i] {ESC_RED}"),
            ModelFailed("reader", 2, f"HTTP 500: [/foo] {ESC_RED}", "ollama", 500),
            AssistantSaid("reader", SAID),
            AssistantSaid("reader", LONG),
            LimitReached("[/foo]", "steps", 2)]


def test_tomo_replay_prints_every_event_field_as_text(run_tomo, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    sink = JsonlSink(transcript)
    for event in hostile_events():
        sink.emit(event)
    sink.close()
    out = run_tomo("replay", str(transcript))
    assert out.returncode == 0, out.stderr
    clean(out)
    for shown in [f"ollama:{ESC_SHOWN}[/foo]", f"echo(text=\"[/foo]\") → summary [bold red]x {ESC_SHOWN}",
                  f"⊘ refused [/foo]: not allowed [link=file:///etc/passwd]y {ESC_SHOWN}",
                  f"warning: notice items[i] {ESC_SHOWN}", f"HTTP 500: [/foo] {ESC_SHOWN}",
                  f"reader: {SAID_SHOWN}", "■ [/foo] stopped"]:
        assert shown in out.stdout, shown
    assert "".join(out.stdout.split()).count(LONG) == 1  # the long reply, wrapped but whole


def test_the_live_sink_on_a_terminal_shows_escapes_instead_of_sending_them() -> None:
    """On a real terminal rich adds its own styles; the data's ESC must still not reach the screen raw."""
    from tomo.cli.render import RichSink

    buf = io.StringIO()
    sink = RichSink(Console(file=buf, force_terminal=True, width=200, highlight=False))
    sink.emit(ModelThinking("[/foo]", f"m{ESC_RED}", 1))
    sink.emit(TextStreamed("[/foo]", f"[bold red]x {ESC_RED}"))
    for event in hostile_events():
        sink.emit(event)
    sink.close()
    out = buf.getvalue()
    assert ESC_RED not in out and "\x1b[31mred" not in out
    assert SAID_SHOWN in out and f"HTTP 500: [/foo] {ESC_SHOWN}" in out


# ---- tomo exec -------------------------------------------------------------------------------------------------


def test_exec_passes_bytes_through_to_a_pipe_unchanged(run_tomo, tmp_path: Path) -> None:
    """Into a pipe or a file the command's output is data: byte for byte, escapes included."""
    ws = tmp_path / "ws"
    ws.mkdir()
    out = subprocess.run([sys.executable, "-m", "tomo", "exec", "--sandbox", "local", "--root", str(ws), "--",
                          "printf", "[/foo] \\033[31mred\\033[0m \\377\\n"], capture_output=True, env=tomo_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"[/foo] \x1b[31mred\x1b[0m \xff\n"


def test_exec_on_a_terminal_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tomo", "exec", "--sandbox", "local", "--root", str(ws), "--",
         "printf", "[/foo] \\033[31mred\\033[0m \\033]0;title\\007 \\377 é\\n"],
        stdout=terminal, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=tomo_env())
    os.close(terminal)
    shown = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
    assert shown.decode() == "[/foo] \\x1b[31mred\\x1b[0m \\x1b]0;title\\a \\xff é\r\n"


def test_exec_errors_quote_a_hostile_path_as_text(run_tomo, tmp_path: Path) -> None:
    out = run_tomo("exec", "--sandbox", "local", "--root", str(tmp_path / f"[/foo]{ESC_RED}"), "--", "true")
    assert out.returncode == 125
    clean(out)
    assert f"[/foo]{ESC_SHOWN}" in out.stderr and "does not exist" in out.stderr


# ---- tomo run (the oi engine's log) and tomo team -------------------------------------------------------------


def test_run_shows_model_text_and_block_output_as_text(run_tomo, tmp_path: Path) -> None:
    """The code in the box is not trusted: what it prints reaches the terminal shown, not obeyed."""
    project = tmp_path / "proj"
    project.mkdir()
    script = tmp_path / "run.json"
    script.write_text(json.dumps({"replies": [
        {"content": f"{SAID}\n\n```bash\nprintf '[/foo] \\033[31mred\\033[0m [link=file:///etc/passwd]y\\n'\n```\n"},
        {"content": "done"},
    ]}))
    out = run_tomo("run", "look", "--model", f"scripted:{script}", "--root", str(project), "--sandbox", "local",
                   "--yes", "--no-context", env={"TERM": "dumb"})
    assert out.returncode == 0, out.stdout + out.stderr
    clean(out)
    assert f"[/foo] {ESC_SHOWN} [link=file:///etc/passwd]y" in out.stdout  # the block's output
    assert SAID_SHOWN in out.stdout  # the model's words around the block


def test_team_shows_worker_output_as_text(run_tomo, tmp_path: Path) -> None:
    planner = tmp_path / "planner.json"
    planner.write_text(json.dumps({"replies": [{"content": f"plan {SAID}", "usage": {"input_tokens": 3,
                                                                                   "output_tokens": 2}}]}))
    done = run_tomo("team", "go", "--stages", "plan:planner", "--roles", f"planner=scripted:{planner}",
                    "--job-id", "h1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    clean(done)
    assert f"plan {SAID_SHOWN}" in done.stdout
    shown = run_tomo("team", "show", "h1", cwd=tmp_path)
    clean(shown)
    assert f"plan {SAID_SHOWN}" in shown.stdout


# ---- tomo demo's diff, tomo models -----------------------------------------------------------------------------


def test_demo_diff_prints_changed_lines_and_paths_as_text(tmp_path: Path) -> None:
    from tomo.cli.demo_cmd import _diff

    path = "[bold red]x.py"
    run = DemoRun(tmp_path, "t", Summary(task="t", model="m", session="s"), "v",
                  before={path: "a = items[i]\nb = '[/foo]'\n"}, after={path: f"a = items[j]\nb = '{ESC_RED}'\n"})
    buf = io.StringIO()
    _diff(Console(file=buf, width=200), run)
    out = buf.getvalue()
    assert "\x1b" not in out
    for shown in ["[bold red]x.py  +2 -2", "  -a = items[i]", "  -b = '[/foo]'", "  +a = items[j]",
                  f"  +b = '{ESC_SHOWN}'"]:
        assert shown in out, (shown, out)


def test_models_prints_tier_specs_from_tomo_toml_as_text(run_tomo, tmp_path: Path) -> None:
    (tmp_path / "tomo.toml").write_text(
        '[tiers]\nfast = "ollama:[/foo]"\nbalanced = "ollama:[bold red]x"\ndeep = "ollama:\\u001b[31mred"\n')
    out = run_tomo("models", "--timeout", "0.2", cwd=tmp_path,
                   env={"OLLAMA_HOST": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "",
                        "TOMO_MODEL": ""})
    clean(out)
    for shown in ["ollama:[/foo]", "ollama:[bold red]x", "ollama:\\x1b[31mred"]:
        assert shown in out.stdout, (shown, out.stdout)


def test_models_in_a_pipe_prints_a_long_spec_and_every_detail_whole(run_tomo, tmp_path: Path) -> None:
    """A pipe is read by a script or a model: rich laid the tables out at 80 columns and cut a long spec with '…'."""
    spec = "openai:a-model-name-long-enough-to-pass-eighty-columns@http://127.0.0.1:9/v1/and/a/path/beyond"
    (tmp_path / "tomo.toml").write_text(f'[tiers]\nfast = "{spec}"\n')
    out = run_tomo("models", "--timeout", "0.2", cwd=tmp_path,
                   env={"OLLAMA_HOST": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "",
                        "TOMO_MODEL": "", "COLUMNS": "80"})
    lines = out.stdout.splitlines()
    assert [ln.split() for ln in lines if ln.startswith("fast ")] == [["fast", spec, "tomo.toml", "[tiers]"]], lines
    assert "…" not in out.stdout
    anthropic = [ln for ln in lines if ln.startswith("anthropic ")]
    assert len(anthropic) == 1 and anthropic[0].endswith("not probed: ANTHROPIC_API_KEY is not set"), lines


# ---- the helpers themselves ------------------------------------------------------------------------------------


def test_safe_helpers_keep_text_and_show_controls() -> None:
    assert visible("tab\tnew\nline") == "tab\tnew\nline"
    assert visible("a\rb\x07c\x00\x7f\x9b") == "a\\rb\\ac\\0\\x7f\\x9b"
    assert visible("\u202eevil") == "\\u202eevil"  # a bidi override is shown, not obeyed
    assert visible(b"\xffname".decode("utf-8", "surrogateescape")) == "\\xffname"
    buf = io.StringIO()
    value = "trailing backslash\\"
    Console(file=buf, width=200).print(f"[b]{esc(value)}[/b]", text("[/foo]"))
    assert buf.getvalue() == "trailing backslash\\ [/foo]\n"


def test_a_long_graph_listing_is_plain_text_with_every_column(run_tomo, tmp_path: Path) -> None:
    """In a pipe (and past LONG rows on a terminal) `graph refs` prints plain aligned text, not a rich table: the
    cells are still never markup and their control characters are still shown."""
    from tomo.cli.rows import LONG

    calls = "".join(f"target({i})\n" for i in range(LONG + 20))
    (tmp_path / "m.py").write_text('def target(x):\n    return x\n\ntarget("[red]x[/red]")\n'
                                   f'target("{ESC_RED}")\n' + calls)
    out = run_tomo("graph", "refs", "m.target", "--root", str(tmp_path))
    assert out.returncode == 0, out.stderr
    clean(out)
    lines = out.stdout.splitlines()
    row = next(ln for ln in lines if ln.startswith("m.py:4:0"))
    assert row.split() == ["m.py:4:0", "confirmed", "call", 'target("[red]x[/red]")']  # the markup printed literally
    assert any(ln.startswith("m.py:5:0") and f'target("{ESC_SHOWN}")' in ln for ln in lines)
    rows = [ln for ln in lines if ln.startswith("m.py:")]
    assert len(rows) == LONG + 23  # the definition, the two hostile calls, the others: none cut
    assert len({ln.index("call") for ln in rows if "call" in ln}) == 1  # the columns are aligned
    assert f"{LONG + 23} references: {LONG + 23} confirmed, 0 ambiguous" in out.stdout
