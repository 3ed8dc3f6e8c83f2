"""prism, jedi and rope scored against runtime truth: the call sites that really called a set of methods while a
real project's own test suite ran (recorded with ../shared/tools/callsites.py, a pytest plugin).

    python -m bench.callsites                  # score prism (this checkout and baseline commits), jedi and rope
    python -m bench.callsites --record         # re-record the truth first (runs each project's test suite)

The truth lives in bench/data/callsites.json (data we produced: projects, commits, targets, call sites); the
projects' own code is never committed. Check them out at the recorded commits under ``--src`` (default
/tmp/calls/src/<project>, e.g. from the ``fetch`` snapshots); a missing checkout is reported and skipped. Recording
pytest's own suite needs ``src/_pytest/_version.py`` in its checkout (setuptools-scm writes it on install; one line
``version = "9.1.0.dev0"`` will do); marshmallow's needs ``simplejson`` in the ``--python`` environment.

A *site* is a (file, line) where the calling frame stood when the target's code was entered. Only sites where the
target's name is written (on that line or the few after it, for a call spread over lines) can be found by a static
tool; the others (``cli()`` reaching ``Command.main`` through ``__call__``, callbacks) are counted apart.
Scores per tool: listed (a row on the site's name), confirmed (prism's confirmed rows; the peers have no
confidence, every row counts), falsely confirmed (a confirmed row on a line that really called a same-named decoy
target and never this one).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "callsites.json"
PLUGIN = REPO.parent / "shared" / "tools" / "callsites.py"  # ../shared, beside the repository (--plugin elsewhere)
BASELINES = "5c46e76,8792e83"  # main before issue 16; main before its second round (pytest, marshmallow added)
ERRORS: list[str] = []  # peers failing on a target: scored as finding nothing, named in the report
WINDOW = 4  # a call's name may sit a few lines below where the call expression starts

PROJECTS: dict[str, dict[str, Any]] = {
    "click": {
        "repo": "https://github.com/pallets/click", "tests": ["tests"],
        "targets": ["click.testing:CliRunner.invoke", "click.core:Command.invoke", "click.core:Context.invoke",
                    "click.core:Group.add_command", "click.core:Group.command", "click.core:Command.get_help",
                    "click.core:Context.get_help", "click.core:Command.main", "click.core:Parameter.get_default",
                    "click.core:Option.get_default", "click.core:Command.get_usage", "click.core:Context.get_usage"],
    },
    "flask": {
        # not FlaskClient.open: its one name site, `super().open(...)`, calls werkzeug's Client.open, which comes back
        # to FlaskClient.open on a redirect (the recorder skips werkzeug's frames): no static reference to it
        "repo": "https://github.com/pallets/flask", "tests": ["tests"],
        "targets": ["flask.app:Flask.app_context", "flask.app:Flask.test_request_context",
                    "flask.app:Flask.test_client", "flask.app:Flask.make_response", "flask.helpers:make_response",
                    "flask.app:Flask.url_for", "flask.helpers:url_for", "flask.sansio.scaffold:Scaffold.route",
                    "flask.sansio.app:App.add_url_rule", "flask.sansio.blueprints:Blueprint.add_url_rule",
                    "flask.sansio.app:App.register_blueprint", "flask.sansio.blueprints:Blueprint.register_blueprint",
                    "flask.sansio.scaffold:Scaffold.errorhandler", "flask.sansio.scaffold:Scaffold.before_request"],
    },
    "pluggy": {
        "repo": "https://github.com/pytest-dev/pluggy", "tests": ["testing"],
        "targets": ["pluggy._manager:PluginManager.register", "pluggy._manager:PluginManager.unregister",
                    "pluggy._manager:PluginManager.add_hookspecs", "pluggy._manager:PluginManager.get_plugin",
                    "pluggy._manager:PluginManager.is_registered", "pluggy._hooks:HookCaller.call_historic",
                    "pluggy._hooks:HookCaller.call_extra", "pluggy._hooks:HookCaller.get_hookimpls",
                    "pluggy._manager:PluginManager.get_hookcallers", "pluggy._result:Result.get_result",
                    "pluggy._result:Result.force_result", "pluggy._manager:PluginManager.subset_hook_caller"],
    },
    "attrs": {
        "repo": "https://github.com/python-attrs/attrs", "tests": ["tests"],
        "targets": ["attr._make:_ClassBuilder.build_class", "attr._make:Attribute.evolve", "attr._make:evolve",
                    "attr._make:_CountingAttr.validator", "attr._make:_CountingAttr.default",
                    "attr._make:_ClassBuilder.add_repr", "attr._make:_ClassBuilder.add_init",
                    "attr._make:_ClassBuilder.add_eq", "attr._make:_ClassBuilder.add_hash",
                    "attr._make:_ClassBuilder.add_setattr"],
    },
    "pytest": {
        "repo": "https://github.com/pytest-dev/pytest",
        "tests": ["testing/test_mark.py", "testing/test_legacypath.py", "testing/test_nodes.py",
                  "testing/test_capture.py", "testing/test_monkeypatch.py", "testing/test_skipping.py",
                  "testing/python/fixtures.py", "testing/test_pytester.py"],
        # the checkout's own pytest runs its suite: the environment's plugins (pytest-asyncio...) stay out
        "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "targets": ["_pytest.pytester:Pytester.makepyfile", "_pytest.legacypath:Testdir.makepyfile",
                    "_pytest.pytester:Pytester.runpytest", "_pytest.legacypath:Testdir.runpytest",
                    "_pytest.pytester:Pytester.inline_run", "_pytest.legacypath:Testdir.inline_run",
                    "_pytest.pytester:Pytester.getitem", "_pytest.legacypath:Testdir.getitem",
                    "_pytest.pytester:RunResult.assert_outcomes", "_pytest.pytester:LineMatcher.fnmatch_lines",
                    "_pytest.pytester:HookRecorder.assertoutcome", "_pytest.nodes:Node.get_closest_marker",
                    "_pytest.nodes:Node.add_marker", "_pytest.capture:MultiCapture.readouterr",
                    "_pytest.capture:CaptureFixture.readouterr", "_pytest.monkeypatch:MonkeyPatch.setenv",
                    "_pytest.config:Config.getoption"],
    },
    "marshmallow": {
        "repo": "https://github.com/marshmallow-code/marshmallow", "tests": ["tests"],  # needs simplejson
        "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "targets": ["marshmallow.schema:Schema.dump", "marshmallow.schema:Schema.load",
                    "marshmallow.schema:Schema.dumps", "marshmallow.schema:Schema.loads",
                    "marshmallow.schema:Schema.validate", "marshmallow.schema:Schema.from_dict",
                    "marshmallow.schema:Schema.get_attribute", "marshmallow.fields:Field.serialize",
                    "marshmallow.fields:Field.deserialize", "marshmallow.fields:Field.get_value",
                    "marshmallow.utils:get_value", "marshmallow.error_store:ErrorStore.store_error"],
    },
}

# Run in a subprocess per prism version: the baseline's src/ or this checkout's on PYTHONPATH.
_PRISM_JOB = """
import json, sys
from tomo.prism import Graph
root, defs = sys.argv[1], json.loads(sys.argv[2])
out = {}
with Graph.open(root) as g:
    for spec, where in defs.items():
        out[spec] = [(r.path, r.line, r.col, r.confidence, r.kind) for r in g.references(where)]
print(json.dumps(out))
"""


def git_head(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def record(name: str, root: Path, python: str, plugin: Path) -> dict[str, Any]:
    """Run the project's suite under the callsites plugin; the truth for its targets."""
    spec = PROJECTS[name]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "truth.json"
        env = {**os.environ, "CALLSITES_TARGETS": ",".join(spec["targets"]), "CALLSITES_OUT": str(out),
               "PYTHONPATH": f"{plugin.parent}:src", **spec.get("env", {})}
        cmd = [python, "-m", "pytest", "-p", "callsites", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
               *spec["tests"]]
        print(f"recording {name}: {' '.join(cmd)}", flush=True)
        subprocess.run(cmd, cwd=root, env=env, check=False, stdout=subprocess.DEVNULL)
        targets = json.loads(out.read_text())
    return {"repo": spec["repo"], "commit": git_head(root), "test_command": "python -m pytest -p callsites "
            + " ".join(spec["tests"]), "targets": targets}


def prism_refs(root: Path, src: Path, truth: dict[str, Any]) -> dict[str, list[list[Any]]]:
    defs = {spec: t["definition"] for spec, t in truth["targets"].items()}
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run([sys.executable, "-c", _PRISM_JOB, str(root), json.dumps(defs)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"prism from {src} failed: {proc.stderr[-1500:]}")
    return {k: [list(r) for r in v] for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def peer_refs(tool: str, root: Path, name: str, truth: dict[str, Any]) -> dict[str, list[list[Any]]]:
    from bench.graph_peers import data, peers

    data.SRC_LAYOUT[name] = True  # the peers' set-up reads the layout by project name (all three use src/)
    targets = []
    for spec, t in truth["targets"].items():
        path, line, col = t["definition"].rsplit(":", 2)
        targets.append(data.Target(name, spec.replace(":", "."), path, int(line), int(col)))
    if tool == "jedi":
        res = peers.jedi_refs(root, name, targets, 0, Path(tempfile.gettempdir()) / "bench-callsites-jedi")
    else:
        res = peers.rope_refs(root, name, targets, 0, unsure=False)
    out: dict[str, list[list[Any]]] = {}
    for spec, q in zip(truth["targets"], res["queries"], strict=True):
        if "error" in q:
            print(f"  {tool} on {spec}: {q['error']}")  # scored as finding nothing
            ERRORS.append(f"{tool} on {name} {spec}: {q['error'].split(':')[0]}")
        out[spec] = [[r[0], r[1], r[2], "confirmed", "reference"] for r in q.get("refs", [])]
    return out


def name_line(root: Path, path: str, line: int, name: str, cache: dict[str, list[str]]) -> int | None:
    """The line of a site where the target's name is written, or None when the call does not name it."""
    if path not in cache:
        try:
            cache[path] = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    word = re.compile(rf"\b{re.escape(name)}\b")
    for ln in range(line, min(line + WINDOW, len(lines)) + 1):
        if word.search(lines[ln - 1]):
            return ln
    return None


def score(root: Path, truth: dict[str, Any], refs: dict[str, list[list[Any]]]) -> dict[str, Any]:
    cache: dict[str, list[str]] = {}
    sites: dict[str, set[tuple[str, int]]] = {}
    implicit = 0
    for spec, t in truth["targets"].items():
        name = spec.rsplit(".", 1)[-1]
        got = set()
        for path, line in t["sites"]:
            ln = name_line(root, path, line, name, cache)
            if ln is None:
                implicit += 1
            else:
                got.add((path, ln))
        sites[spec] = got
    total = listed = confirmed = false = 0
    missed: list[str] = []
    for spec, want in sites.items():
        name = spec.rsplit(".", 1)[-1]
        rows = [r for r in refs.get(spec, []) if r[4] not in ("definition", "import", "string")]
        at = {(r[0], r[1]): r[3] for r in rows}
        for site in want:
            total += 1
            if site in at:
                listed += 1
                confirmed += at[site] == "confirmed"
            if at.get(site) != "confirmed":
                missed.append(f"{spec} {site[0]}:{site[1]} ({at.get(site, 'not listed')})")
        decoy_sites = set().union(*(s for o, s in sites.items() if o != spec and o.rsplit(".", 1)[-1] == name))
        false += sum(1 for r in rows if r[3] == "confirmed" and (r[0], r[1]) in decoy_sites - want)
    return {"sites": total, "implicit": implicit, "listed": listed, "confirmed": confirmed, "false": false,
            "missed": sorted(missed)}


def baseline_src(rev: str) -> Path:
    dest = Path(tempfile.gettempdir()) / f"bench-callsites-baseline-{rev}"
    if not (dest / "src").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest / "src"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default="/tmp/calls/src", help="directory holding one checkout per project")
    ap.add_argument("--record", action="store_true", help="re-record the truth by running each project's tests")
    ap.add_argument("--python", default=sys.executable, help="interpreter with the projects' test deps (--record)")
    ap.add_argument("--baseline", default=BASELINES,
                    help="comma-separated prism commits to compare with (default: %(default)s)")
    ap.add_argument("--projects", default=",".join(PROJECTS))
    ap.add_argument("--plugin", type=Path, default=PLUGIN, help="the recording plugin (default: %(default)s)")
    args = ap.parse_args()
    stored: dict[str, Any] = json.loads(DATA.read_text()) if DATA.exists() else {}
    if args.record and not args.plugin.exists():
        print(f"{args.plugin} is missing (pass --plugin): cannot record; scoring the stored truth only.")
        args.record = False
    rows: list[list[object]] = []
    details: list[str] = []
    bases = {f"prism @{rev}": baseline_src(rev) for rev in args.baseline.split(",") if rev}
    for name in args.projects.split(","):
        root = Path(args.src) / name
        if not (root / ".git").exists():
            print(f"{name}: no checkout at {root} (fetch {PROJECTS[name]['repo']} there): skipped")
            continue
        if args.record:
            stored[name] = record(name, root, args.python, args.plugin)
            DATA.parent.mkdir(parents=True, exist_ok=True)
            DATA.write_text(json.dumps(stored, indent=1) + "\n")
        truth = stored.get(name)
        if truth is None:
            print(f"{name}: no recorded truth in {DATA}: run with --record")
            continue
        if git_head(root) != truth["commit"]:
            print(f"{name}: checkout is at {git_head(root)}, the truth at {truth['commit']}: skipped")
            continue
        results = {}
        for tool in (*bases, "prism", "jedi", "rope"):
            print(f"{name}: {tool} ...", flush=True)
            try:
                refs = (prism_refs(root, bases[tool], truth) if tool in bases
                        else prism_refs(root, REPO / "src", truth) if tool == "prism"
                        else peer_refs(tool, root, name, truth))
                results[tool] = score(root, truth, refs)
            except Exception as exc:  # a tool failing is a result, not a crash
                print(f"  {tool} failed: {exc}")
                continue
            s = results[tool]
            rows.append([name, tool, s["sites"], s["listed"], s["confirmed"], s["false"]])
            print(f"  sites {s['sites']} listed {s['listed']} confirmed {s['confirmed']} false {s['false']}")
        if "prism" in results:
            miss = results["prism"]["missed"]
            details.append(f"- {name} @ {truth['commit'][:12]} ({truth['repo']}): {len(truth['targets'])} targets, "
                           f"truth from `{truth['test_command']}`; "
                           f"{results['prism']['implicit']} sites that do not name the target (not scored); "
                           f"prism unconfirmed: " + ("; ".join(miss) if miss else "none"))
    if not rows:
        print("nothing scored")
        return 0
    from bench._report import table, write_section

    body = (table(["project", "tool", "name sites", "listed", "confirmed", "falsely confirmed"],
                  [[*r[:3], f"{r[3]} ({100 * r[3] / max(r[2], 1):.1f}%)", f"{r[4]} ({100 * r[4] / max(r[2], 1):.1f}%)",
                    r[5]] for r in rows])
            + "\n\n" + "\n".join(details) + "\n\n"
            + (f"Peer errors (the target scores nothing for that tool): {'; '.join(ERRORS)}\n\n" if ERRORS else "")
            + "Truth: bench/data/callsites.json (call sites recorded by ../shared/tools/callsites.py while each "
              "project's own test suite ran). prism @REV is prism at that commit, prism this checkout; jedi and "
              "rope have no confidence, so every row they give counts as confirmed. Falsely confirmed = a confirmed "
              "row on a line that really called a same-named decoy target and never this one. Measured on a shared "
              f"2-core machine (1-minute load {os.getloadavg()[0]:.1f} at the end): counts, not timings.\n")
    print(write_section("callsites", "Runtime call sites: prism vs jedi, rope", "python -m bench.callsites", body))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
