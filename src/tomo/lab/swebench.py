"""SWE-bench Lite records as a lab suite, so `tomo lab run` measures real issues of real projects.

A record (one JSON line: instance_id, repo, base_commit, problem_statement, patch, test_patch, FAIL_TO_PASS,
PASS_TO_PASS) becomes a task directory of the format of :mod:`tomo.lab.suite`:

- ``repo/``: the repository's tree at base_commit (``git archive``), what the model starts from;
- ``hidden/``: the files the test_patch creates or changes, patched, and the oracle (``_oracle_swebench.py``, which
  runs the record's FAIL_TO_PASS and PASS_TO_PASS tests with pytest; the ids are in ``_swebench_tests.json``);
- ``reference/``: the files the gold patch changes, patched: what ``--model reference`` replays;
- ``task.toml``: kind ``fix``, the problem statement as the prompt (data, written as given), the oracle, and as the
  check the test files the test_patch touches, as they are at base.

Patches are applied by ``git apply`` in a scratch folder holding only the files they touch; the only thing read
from a diff is the list of its paths (``git apply --numstat``). Test ids are pytest node ids (``path::name``); a bare
function name (sympy's ids) is looked up in the files the test_patch touches. Repositories whose harness uses
another runner are refused by name (:data:`UNSUPPORTED`), before anything is written.

Nothing here prints: the CLI (``tomo lab swebench``) shows progress through the ``on_task`` callback.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tomo.errors import ConfigError
from tomo.lab.suite import load_task

ADAPTOR = "swebench"
"""``adaptor`` in the suite.toml this module writes: a folder holding it may be written over by a new build."""

ORACLE_FILE = "_oracle_swebench.py"
TESTS_FILE = "_swebench_tests.json"
ORACLE = f"python {ORACLE_FILE}"
ORACLE_TIMEOUT_S = 900.0
"""What the oracle may take: a sympy module's tests on two busy cores take minutes."""
CHECK = ("python", "-m", "pytest", "-q", "-p", "no:cacheprovider")

UNSUPPORTED: dict[str, str] = {
    "django/django": "its tests run with Django's own runner (tests/runtests.py, ids like `test_x (module.Class)`), "
                     "which this adaptor does not drive; it runs pytest only",
}
"""Repositories whose SWE-bench harness is not pytest, with the reason."""

REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch", "FAIL_TO_PASS",
            "PASS_TO_PASS")
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
_BARE = re.compile(r"[A-Za-z_]\w*")

ORACLE_SCRIPT = '''\
"""SWE-bench's verdict on this task: every FAIL_TO_PASS and PASS_TO_PASS test passes (exit 0), judged by pytest.

Written by `tomo lab swebench`; the tests are listed in _swebench_tests.json beside it. pytest runs from this folder
with the task's import roots first on PYTHONPATH (with a src/ layout an installed copy of the package would be
imported instead) and without the machine's own pytest plugins (the task's environment has none of them).
"""

import json
import os
import subprocess
import sys

with open("_swebench_tests.json", encoding="utf-8") as f:
    spec = json.load(f)
tests = list(dict.fromkeys(spec["fail_to_pass"] + spec["pass_to_pass"]))
env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
roots = [os.path.abspath(p) for p in spec["pythonpath"]]
env["PYTHONPATH"] = os.pathsep.join(roots + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
print(f"{spec['instance_id']}: {len(spec['fail_to_pass'])} FAIL_TO_PASS and {len(spec['pass_to_pass'])} "
      f"PASS_TO_PASS test(s)", flush=True)
argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "--tb=short", *tests]
sys.exit(subprocess.call(argv, env=env))
'''


@dataclass(frozen=True, slots=True)
class Record:
    """One SWE-bench instance, as the data file gives it (the test lists decoded)."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    version: str = ""


@dataclass(frozen=True, slots=True)
class Built:
    """What one task directory holds, for the CLI to show."""

    id: str
    repo: str
    base_commit: str
    check: str
    hidden: list[str]
    reference: list[str]
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    pythonpath: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def read_records(path: Path) -> list[Record]:
    """Every record of a SWE-bench JSONL file; a line that is not a record is an error naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}",
                          hint="pass the SWE-bench JSONL file, e.g. ../shared/data/swebench-lite/dev.jsonl") from exc
    records: list[Record] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if line.strip():
            records.append(_record(line, f"{path}:{n}"))
            if records[-1].instance_id in seen:
                raise ConfigError(f"{path}:{n}: instance {records[-1].instance_id} again",
                                  hint="each instance_id names one task folder: keep one line of each")
            seen.add(records[-1].instance_id)
    if not records:
        raise ConfigError(f"{path} holds no record", hint="one SWE-bench instance per line, as JSON")
    return records


def _record(line: str, where: str) -> Record:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc})", hint="one SWE-bench instance per line, as JSON") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a JSON {type(data).__name__}, not an object", hint="one instance per line")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ConfigError(f"{where}: no {', '.join(missing)}", hint=f"a SWE-bench record has {', '.join(REQUIRED)}")
    iid, repo = data["instance_id"], data["repo"]
    if not isinstance(iid, str) or not _SAFE_ID.fullmatch(iid):
        raise ConfigError(f"{where}: instance_id {iid!r} cannot name a folder",
                          hint="letters, digits, '_', '.' and '-', as SWE-bench's ids are")
    if not isinstance(repo, str) or not _REPO.fullmatch(repo):
        raise ConfigError(f"{where}: repo {repo!r} is not owner/name", hint="e.g. psf/requests")
    texts = {k: data[k] for k in ("base_commit", "problem_statement", "patch", "test_patch")}
    wrong = [k for k, v in texts.items() if not isinstance(v, str) or not v.strip()]
    if wrong:
        raise ConfigError(f"{where} ({iid}): {', '.join(wrong)} missing or empty", hint="each is a non-empty string")
    statement = data["problem_statement"].encode("utf-8", "replace").decode("utf-8")  # no lone surrogate to argv
    return Record(iid, repo, data["base_commit"].strip(), statement, data["patch"],
                  data["test_patch"], _tests(data["FAIL_TO_PASS"], f"{where} ({iid}) FAIL_TO_PASS"),
                  _tests(data["PASS_TO_PASS"], f"{where} ({iid}) PASS_TO_PASS"), str(data.get("version") or ""))


def _tests(value: object, where: str) -> tuple[str, ...]:
    """A test list: JSON-encoded, as SWE-bench ships it, or already a list."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: not a JSON list ({exc})", hint='e.g. "[\\"tests/test_x.py::test_y\\"]"') \
                from exc
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise ConfigError(f"{where}: not a list of test ids", hint="a JSON list of strings")
    return tuple(value)


def choose(records: list[Record], ids: Sequence[str] = (), repos: Sequence[str] = (),
           limit: int | None = None) -> list[Record]:
    """The records named by ``ids`` and of ``repos`` (all when neither is given), the first ``limit`` of them."""
    known = {r.instance_id for r in records}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ConfigError(f"no record {', '.join(map(repr, unknown[:5]))}{' ...' if len(unknown) > 5 else ''} in the "
                          "data", hint="--id takes an instance_id of the file, e.g. psf__requests-2148")
    have = {r.repo for r in records}
    absent = [r for r in repos if r not in have]
    if absent:
        raise ConfigError(f"no record of {', '.join(map(repr, absent))} in the data",
                          hint=f"its repositories: {', '.join(sorted(have))}")
    chosen = [r for r in records if (not ids or r.instance_id in ids) and (not repos or r.repo in repos)]
    if limit is not None:
        chosen = chosen[:limit]
    if not chosen:
        raise ConfigError("no record chosen", hint="--id, --repo and --limit together left nothing")
    return chosen


def parse_git_dirs(specs: Sequence[str]) -> dict[str, Path]:
    """``owner/name=GITDIR`` each: the git directory (bare, or a clone's ``.git``) holding each repository's history."""
    found: dict[str, Path] = {}
    for spec in specs:
        repo, eq, where = spec.partition("=")
        repo = repo.strip()
        if not eq or not _REPO.fullmatch(repo) or not where.strip():
            raise ConfigError(f"--git-dir {spec!r} is not owner/name=GITDIR",
                              hint="e.g. --git-dir psf/requests=~/src/requests/.git")
        path = Path(where.strip()).expanduser()
        if (path / ".git").is_dir():
            path = path / ".git"
        if not path.is_dir():
            raise ConfigError(f"--git-dir {repo}: {path} is not a folder",
                              hint="the git directory of a clone or a mirror")
        done = subprocess.run(["git", f"--git-dir={path}", "rev-parse", "--git-dir"], capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"--git-dir {repo}: {path} is not a git directory ({_last_line(done.stderr)})",
                              hint="pass a bare repository or a clone's .git folder")
        found[repo] = path.resolve()
    return found


def check_supported(records: Sequence[Record], git_dirs: dict[str, Path]) -> None:
    """Refuses, before anything is built, a record whose repository this adaptor cannot judge or was given no git
    directory for."""
    refused = sorted({r.repo for r in records if r.repo in UNSUPPORTED})
    if refused:
        count = sum(r.repo == refused[0] for r in records)
        raise ConfigError(f"{refused[0]} is not supported: {UNSUPPORTED[refused[0]]}",
                          hint=f"{count} chosen record(s) are of {refused[0]}: choose records of other repositories "
                               "with --repo or --id")
    unmapped = sorted({r.repo for r in records if r.repo not in git_dirs})
    if unmapped:
        raise ConfigError(f"no git directory for {', '.join(unmapped)}",
                          hint=f"pass --git-dir {unmapped[0]}=GITDIR (a clone or mirror holding its history), or "
                               "leave its records out with --repo/--id")


def check_out(out: Path) -> None:
    """Refuses a suite folder that is a file, or holds anything but a suite this module wrote."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file", hint="--out names a folder to write the suite into")
    if out.is_dir() and any(out.iterdir()) and not is_suite_of_ours(out):
        raise ConfigError(f"{out} is not empty and not a suite written by `tomo lab swebench`",
                          hint="choose a new or empty folder; a suite this command wrote is replaced whole")


def is_suite_of_ours(path: Path) -> bool:
    try:
        meta = tomllib.loads((path / "suite.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("adaptor") == ADAPTOR


def build_suite(records: Sequence[Record], git_dirs: dict[str, Path], out: Path, *, name: str, source: str,
                on_task: Callable[[int, Record], None] | None = None) -> list[Built]:
    """Writes the suite of ``records`` to ``out``, whole or not at all: it is built in a folder beside ``out`` and
    renamed into place at the end. ``out`` must be new, empty, or a suite this function wrote before (replaced)."""
    check_supported(records, git_dirs)
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        built: list[Built] = []
        for i, record in enumerate(records):
            if on_task:
                on_task(i, record)
            built.append(build_task(record, git_dirs[record.repo], building / record.instance_id))
        _write_suite_toml(building, name, source, records)
        _swap_in(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return built


def _swap_in(building: Path, out: Path) -> None:
    if not out.exists():
        building.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    out.rename(old)
    try:
        building.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _write_suite_toml(where: Path, name: str, source: str, records: Sequence[Record]) -> None:
    repos = sorted({r.repo for r in records})
    description = (f"SWE-bench Lite: {len(records)} task(s) of {', '.join(repos)}, from {source}; each judged by "
                   "its FAIL_TO_PASS and PASS_TO_PASS tests under pytest")
    lines = [f"name = {toml_string(name)}", f"description = {toml_string(description)}",
             "version = 1", f"adaptor = {toml_string(ADAPTOR)}", f"source = {toml_string(source)}",
             f"instances = {toml_list([r.instance_id for r in records])}", ""]
    (where / "suite.toml").write_text("\n".join(lines), encoding="utf-8")


def build_task(record: Record, git_dir: Path, dest: Path) -> Built:
    """One task directory: repo/, hidden/, reference/ and task.toml (see the module's docstring)."""
    if record.repo in UNSUPPORTED:
        raise ConfigError(f"{record.repo} is not supported: {UNSUPPORTED[record.repo]}", hint="leave its records out")
    where = record.instance_id
    commit = _commit(git_dir, record.base_commit, where)
    tests = _paths(record.test_patch, f"{where}: test_patch")
    gold = _paths(record.patch, f"{where}: patch")
    at_base = set(_ls_tree(git_dir, commit, tests))
    tree = dest / "repo"
    tree.mkdir(parents=True)
    _extract(git_dir, commit, tree, [], where)
    hidden = _patched(git_dir, commit, record.test_patch, tests, f"{where}: test_patch")
    reference = _patched(git_dir, commit, record.patch, gold, f"{where}: patch")
    f2p, dropped = _node_ids(record.fail_to_pass, hidden, record, "FAIL_TO_PASS")
    p2p, dropped_too = _node_ids(record.pass_to_pass, hidden, record, "PASS_TO_PASS")
    if not f2p:
        raise ConfigError(f"{record.instance_id}: no FAIL_TO_PASS test to run", hint="the record cannot be judged")
    roots = import_roots(tree)
    _write_files(dest / "hidden", hidden)
    spec = {"instance_id": record.instance_id, "repo": record.repo, "base_commit": commit,
            "fail_to_pass": f2p, "pass_to_pass": p2p, "pythonpath": roots, "dropped": dropped + dropped_too}
    (dest / "hidden" / TESTS_FILE).write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    (dest / "hidden" / ORACLE_FILE).write_text(ORACLE_SCRIPT, encoding="utf-8")
    _write_files(dest / "reference", reference)
    visible = [p for p in tests if p in at_base and p.endswith(".py")]
    check = check_command(visible, roots)
    _write_task_toml(dest, record, commit, check)
    task = load_task(dest)  # what the lab will read: a task this function cannot load back is its own bug
    if task.prompt != record.problem_statement.strip():
        raise AssertionError(f"{record.instance_id}: task.toml does not give the problem statement back")
    return Built(record.instance_id, record.repo, commit, check, sorted(hidden), sorted(reference), f2p, p2p, roots,
                 dropped + dropped_too)


def check_command(test_files: Sequence[str], roots: Sequence[str]) -> str:
    """The visible check: the touched test files as they are at base, run as the oracle runs its tests."""
    if not test_files:
        return ""
    env = ["env", f"PYTHONPATH={os.pathsep.join(roots)}"] if roots else []
    return shlex.join([*env, *CHECK, *test_files])


def import_roots(tree: Path) -> list[str]:
    """Folders to put first on PYTHONPATH: ``src`` when the project keeps its packages there (flask, pytest), so
    the tests import the task's code and not an installed release of the same package."""
    src = tree / "src"
    if src.is_dir() and any((p / "__init__.py").is_file() for p in src.iterdir() if p.is_dir()):
        return ["src"]
    return []


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return _run(["git", f"--git-dir={git_dir}", *args])


def _run(argv: list[str], *, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd)


def _commit(git_dir: Path, commit: str, where: str) -> str:
    done = _git(git_dir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if done.returncode != 0:
        raise ConfigError(f"{where}: base commit {commit} is not in {git_dir}",
                          hint="pass a --git-dir that holds the repository's full history")
    return done.stdout.decode().strip()


def _paths(patch: str, where: str) -> list[str]:
    """The files a patch touches, as git reads them (``git apply --numstat``); a patch that deletes, renames or
    copies a file is refused (an overlay can add and change files, not take them away)."""
    listed = _run(["git", "apply", "--numstat", "-z", "-"], stdin=patch.encode())
    summary = _run(["git", "apply", "--summary", "-"], stdin=patch.encode())
    if listed.returncode != 0 or summary.returncode != 0:
        said = (listed.stderr or summary.stderr).decode(errors="replace")
        raise ConfigError(f"{where} is not a patch git can read: {_last_line(said)}",
                          hint="the record's diff, as SWE-bench ships it")
    for line in summary.stdout.decode(errors="replace").splitlines():
        words = line.split()
        if words[:1] in (["delete"], ["rename"], ["copy"]):
            raise ConfigError(f"{where}: {line.strip()}",
                              hint="this adaptor takes patches that add and change files only")
    paths = [entry.split("\t", 2)[2] for entry in listed.stdout.decode(errors="surrogateescape").split("\0")
             if entry.count("\t") >= 2]
    if not paths:
        raise ConfigError(f"{where} touches no file", hint="the record's diff, as SWE-bench ships it")
    return paths


def _ls_tree(git_dir: Path, commit: str, paths: Sequence[str]) -> list[str]:
    done = _git(git_dir, "ls-tree", "-r", "--name-only", "-z", commit, "--", *paths)
    return [p for p in done.stdout.decode(errors="surrogateescape").split("\0") if p]


def _extract(git_dir: Path, commit: str, dest: Path, paths: Sequence[str], where: str) -> None:
    """``git archive COMMIT [-- PATHS] | tar -x -C DEST``."""
    with tempfile.TemporaryFile() as errors:
        archive = subprocess.Popen(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit,
                                    *(["--", *paths] if paths else [])], stdout=subprocess.PIPE, stderr=errors)
        assert archive.stdout is not None
        tar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, capture_output=True)
        archive.stdout.close()
        code = archive.wait()
        errors.seek(0)
        said = errors.read().decode(errors="replace")
    if code != 0 or tar.returncode != 0:
        raise ConfigError(f"{where}: cannot extract {commit[:12]} from {git_dir}: "
                          f"{_last_line(said or tar.stderr.decode(errors='replace'))}",
                          hint="is the git directory whole? `git fsck` tells")


def _patched(git_dir: Path, commit: str, patch: str, paths: Sequence[str], where: str) -> dict[str, bytes]:
    """The files ``patch`` touches, after ``git apply`` on their versions at ``commit`` (a scratch repository holding
    only those files, so a large tree is never copied)."""
    with tempfile.TemporaryDirectory(prefix="tomo-swebench-") as scratch_name:
        scratch = Path(scratch_name)
        _run(["git", "init", "-q"], cwd=scratch)
        existing = _ls_tree(git_dir, commit, paths)
        if existing:
            _extract(git_dir, commit, scratch, existing, where)
        done = _run(["git", "apply", "--whitespace=nowarn", "-"], stdin=patch.encode(), cwd=scratch)
        if done.returncode != 0:
            raise ConfigError(f"{where} does not apply at {commit[:12]}: "
                              f"{_last_line(done.stderr.decode(errors='replace'))}",
                              hint="is the base commit the record's? the patch must apply to it as is")
        files: dict[str, bytes] = {}
        for rel in paths:
            path = scratch / rel
            if not path.is_file():
                raise ConfigError(f"{where} leaves no file {rel}", hint="patches that delete files are not taken")
            files[rel] = path.read_bytes()
    return files


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _node_ids(ids: Sequence[str], test_files: dict[str, bytes], record: Record,
              which: str) -> tuple[list[str], list[str]]:
    """pytest node ids for the record's test ids: ``path::name`` as given; a bare function name (sympy's harness
    names tests so) becomes ``path::name`` for each file the test_patch touches that defines it. Second, the ids
    dropped: fragments of pytest's progress output (``[100%]``) that SWE-bench's log parser took for tests."""
    out: list[str] = []
    dropped: list[str] = []
    index: dict[str, list[str]] | None = None
    for test in ids:
        if test.startswith("["):
            dropped.append(test)
            continue
        if "::" in test:
            out.append(test)
            continue
        if not _BARE.fullmatch(test):
            raise ConfigError(f"{record.instance_id} ({record.repo}): {which} test {test!r} is not a pytest node id "
                              "(path::name) nor a test function's name",
                              hint=f"{record.repo}'s harness names tests its own way: this adaptor runs pytest only")
        if index is None:
            index = _definitions(test_files, record)
        found = index.get(test, [])
        if not found:
            raise ConfigError(f"{record.instance_id}: {which} test {test!r} is defined in none of the files the "
                              f"test_patch touches ({', '.join(sorted(test_files))})",
                              hint="a bare test name is looked up there; name the test as path::name instead")
        out += [f"{path}::{test}" if not cls else f"{path}::{cls}::{test}" for path, cls in
                (f.split("\0") for f in found)]
    return list(dict.fromkeys(out)), dropped


def _definitions(test_files: dict[str, bytes], record: Record) -> dict[str, list[str]]:
    """Test function name -> ``path\\0class`` ('' for a module-level function) in the touched .py test files."""
    index: dict[str, list[str]] = {}
    for rel, data in sorted(test_files.items()):
        if not rel.endswith(".py"):
            continue
        try:
            tree = ast.parse(data, filename=rel)
        except (SyntaxError, ValueError) as exc:
            raise ConfigError(f"{record.instance_id}: {rel} (patched) does not parse on this Python: {exc}",
                              hint="its tests cannot be found by name") from exc
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                index.setdefault(node.name, []).append(f"{rel}\0")
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        index.setdefault(item.name, []).append(f"{rel}\0{node.name}")
    return index


def _write_task_toml(dest: Path, record: Record, commit: str, check: str) -> None:
    tags = ["swebench", record.repo, *([f"version:{record.version}"] if record.version else [])]
    lines = [f"id = {toml_string(record.instance_id)}", 'kind = "fix"',
             f"prompt = {toml_multiline(record.problem_statement.strip())}",
             f"oracle = {toml_string(ORACLE)}", f"check = {toml_string(check)}",
             f"timeout_s = {ORACLE_TIMEOUT_S:.0f}", f"tags = {toml_list(tags)}", "",
             "[swebench]", f"instance_id = {toml_string(record.instance_id)}", f"repo = {toml_string(record.repo)}",
             f"base_commit = {toml_string(commit)}", f"version = {toml_string(record.version)}", ""]
    (dest / "task.toml").write_text("\n".join(lines), encoding="utf-8")


def _escape(text: str, keep: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch in keep:
            out.append(ch)
        elif ch in "\n\t\r\b\f":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def toml_string(text: str) -> str:
    """A TOML basic string holding ``text`` exactly (no character is read as anything but itself)."""
    return f'"{_escape(text, "")}"'


def toml_multiline(text: str) -> str:
    """A TOML multi-line basic string holding ``text`` exactly, its lines kept as lines (readable in task.toml).
    Written here, not by tomli-w: its multi-line strings write a CR LF as a bare line break, which reads back as LF,
    and 55 of the 101 problem statements of ../shared's SWE-bench Lite dev split hold CR LF (the builder's
    round-trip check would refuse them)."""
    return f'"""\n{_escape(text, chr(10) + chr(9))}"""'


def toml_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(toml_string(i) for i in items) + "]"


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"
