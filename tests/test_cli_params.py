"""tomo.cli.plain_params: str, bool and Path parameters parsed without pydantic, with exactly typer's results.

The same typer command is run over the same arguments twice, each in a fresh interpreter: once with typer's own
coercion and once with plain_params installed. Every value (its type and text) and every error message must be the
same; and the plain run must really have skipped pydantic while it parsed only str, bool and Path parameters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

SCRIPT = r'''
import json, sys
from pathlib import Path
import typer
from typer.testing import CliRunner

import tomo.cli  # both runs: its help names (tomo.cli.help_names) change usage lines, which this test does not compare

if sys.argv[1] == "plain":
    from tomo.cli.plain_params import install
    assert install(), "plain_params does not apply to this typer"

app = typer.Typer()


def shown(**values: object) -> None:
    print(json.dumps({k: [type(v).__name__, str(v)] for k, v in values.items()}))


@app.command()
def plain(name: str = typer.Argument(...), root: Path = typer.Option(Path("."), "--root"),
          must: Path = typer.Option(None, "--must", exists=True, dir_okay=False),
          real: Path = typer.Option(None, "--real", resolve_path=True), flag: bool = typer.Option(False, "--flag"),
          maybe: str | None = typer.Option(None, "--maybe"), count: int = typer.Option(3, "--count")) -> None:
    shown(name=name, root=root, must=must, real=real, flag=flag, maybe=maybe, count=count)


@app.command()
def other(least: int = typer.Option(1, "--least", min=1), many: list[Path] = typer.Option([], "--many"),
          ratio: float = typer.Option(0.5, "--ratio")) -> None:
    shown(least=least, many=many, ratio=ratio)


PLAIN = [["x"], ["ünï cödé"], ["x", "--root", "a/b/"], ["x", "--root", "./"], ["x", "--root", ""],
         ["x", "--root", "-"], ["x", "--must", "file.txt"], ["x", "--real", "adir/../file.txt"], ["x", "--flag"],
         ["x", "--maybe", "m"], ["x", "--maybe", ""], ["x", "--count", "7"], ["x", "--count", "-007"], []]
# typer's own coercion: a path that fails its check (the message quotes the text as given), an int that is not plain
# digits, an int with bounds, a list, a float
OTHER = [["plain", "x", "--must", "missing/"], ["plain", "x", "--must", "adir"], ["plain", "x", "--count", "seven"],
         ["plain", "x", "--count", " 7"], ["plain", "x", "--count", "+7"], ["plain", "x", "--count", "1_000"],
         ["plain", "x", "--count", "7.0"], ["other"], ["other", "--least", "0"], ["other", "--least", "2"],
         ["other", "--many", "a/", "--many", "b"], ["other", "--ratio", "2"]]
runner = CliRunner()
out = {}
for args in [["plain", *a] for a in PLAIN]:
    res = runner.invoke(app, args, env={"COLUMNS": "120"})
    out[" ".join(args)] = [res.exit_code, res.output]
pydantic_for_plain = "pydantic" in sys.modules
for args in OTHER:
    res = runner.invoke(app, args, env={"COLUMNS": "120"})
    out[" ".join(args)] = [res.exit_code, res.output]
print(json.dumps({"results": out, "pydantic_for_plain": pydantic_for_plain}))
'''


def run(mode: str, cwd: Path) -> dict:  # type: ignore[type-arg]
    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_plain_params_give_typers_values_and_errors(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "adir").mkdir()
    typer_own, plain = run("typer", tmp_path), run("plain", tmp_path)
    assert plain["results"] == typer_own["results"]
    assert not plain["pydantic_for_plain"]  # it really took the plain path
    results = {k.removeprefix("plain "): v for k, v in plain["results"].items()}
    ok = json.loads(results["x --root a/b/"][1])
    assert ok["root"] == ["PosixPath", "a/b"] and ok["flag"] == ["bool", "False"]
    assert ok["maybe"] == ["NoneType", "None"]
    assert ok["count"] == ["int", "3"] and json.loads(results["x --count -007"][1])["count"] == ["int", "-7"]
    assert json.loads(results["x --real adir/../file.txt"][1])["real"] == ["PosixPath", str(tmp_path / "file.txt")]
    assert results["x --must missing/"][0] == 2 and "'missing/' does not exist" in results["x --must missing/"][1]
    assert results["x --must adir"][0] == 2 and "is a directory" in results["x --must adir"][1]
    assert results["x --count seven"][0] == 2 and results["other --least 0"][0] == 2
    assert results["plain"][0] == 2 and "Missing argument" in results["plain"][1]
