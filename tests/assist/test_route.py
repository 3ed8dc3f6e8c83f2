"""`tomo run --engine auto`: a sentence that asks for a rename goes to the code graph (assist), the rest to oi; the
outcome is measured the same way on both routes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from assist_helpers import call, say

from tomo.assist.intent import rename_target

DEMO = Path(__file__).resolve().parents[2] / "src" / "tomo" / "demo" / "rename_total.json"
CHECK = f"{sys.executable} -m pytest -q -p no:cacheprovider"


def test_rename_sentences_are_recognised_and_others_are_not() -> None:
    assert rename_target("rename OrderLine.total to subtotal everywhere") == "subtotal"
    assert rename_target("Please rename the Invoice method sum_lines to `subtotal`, everywhere.") == "subtotal"
    assert rename_target("The name is cryptic. Rename it to\nReading everywhere") == "Reading"
    for other in ("fix rename_file so it writes to disk", "the renaming code writes to disk",
                  "Rename things. Then go to bed", "median() is wrong for even lengths"):
        assert rename_target(other) is None, other


def _run(run_tomo, root: Path, task: str, model: str, *extra: str):
    done = run_tomo("run", task, "--engine", "auto", "--model", model, "--root", str(root), "--sandbox", "local",
                    "--yes", "--json", *extra)
    return done, json.loads(done.stdout)


def test_a_rename_goes_to_the_graph_and_is_verified_by_the_measured_check(run_tomo, shop: Path) -> None:
    done, result = _run(run_tomo, shop, "rename OrderLine.total to subtotal everywhere", f"scripted:{DEMO}",
                        "--check", CHECK, "--exec-gate")
    assert done.returncode == 0, done.stderr
    assert result["outcome"] == "verified" and "executed the changed code" in result["reason"]
    assert result["files_changed"] == ["shop/lines.py", "shop/orders.py", "shop/report.py", "tests/test_lines.py"]
    assert "def subtotal" in (shop / "shop" / "lines.py").read_text()
    assert "tomo assist plans it in the code graph" in done.stderr


def test_without_a_check_a_graph_rename_is_unverified(run_tomo, shop: Path) -> None:
    done, result = _run(run_tomo, shop, "rename OrderLine.total to subtotal everywhere", f"scripted:{DEMO}")
    assert done.returncode == 3 and result["outcome"] == "unverified" and result["files_changed"]


def test_a_rename_the_graph_cannot_write_falls_back_to_the_oi_engine(run_tomo, shop: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [
        call("find_symbol", query="Nothing.here"), say("I could not find it."),  # assist: no plan, nothing written
        {"content": "```bash\necho looked\n```"}, say("Nothing to rename.")]}))  # then the oi engine's turn
    done, result = _run(run_tomo, shop, "rename Nothing.here to other everywhere", f"scripted:{script}")
    assert "the oi engine takes the task" in done.stderr
    assert result["outcome"] == "unchanged" and result["blocks"] == 1 and done.returncode == 0
