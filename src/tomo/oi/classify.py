"""Does a shell command execute the code, or only read it? The exec gate's rule for languages it cannot measure.

For Python the gate measures which changed lines ran (see ``_sitehook.py``); for JavaScript/TypeScript, Go, Rust,
shell and the rest it classifies the command: a test runner or the program itself **executes**; a compiler run
for its errors, a type checker, a linter or a formatter is **parse-only**; reading files, moving them, installing
packages or asking git is **neutral** (not a check at all). An unknown program counts as executing: it is a
program being run, and for the languages tomo cannot measure that is the honest default.

A block's shell text is split into simple commands on ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines. The block
is executing if any command is, parse-only if any is and none executes, else neutral. Its exit status speaks for
its check only when the last executing (or parse-only) command ends the block joined by ``&&`` alone: ``pytest;
echo done``, ``pytest || true`` and ``pytest | tail`` (without ``pipefail``) all exit 0 whatever the tests said.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Literal

Kind = Literal["executing", "parse-only", "neutral"]

_OPERATORS = {"&&", "||", ";", "|", "&", "\n", "|&", ";;"}

NEUTRAL = frozenset({
    "ls", "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "find", "fd", "echo", "printf",
    "pwd", "cd", "pushd", "popd", "wc", "diff", "cmp", "tree", "which", "type", "command", "true", "false", ":",
    "mkdir", "rmdir", "cp", "mv", "rm", "ln", "touch", "chmod", "chown", "sed", "awk", "sort", "uniq", "cut", "tr",
    "tee", "xxd", "od", "file", "stat", "du", "df", "date", "sleep", "export", "unset", "set", "source", ".", "alias",
    "patch", "git", "hg", "svn", "pip", "pip3", "uv", "poetry", "pipenv", "conda", "apt", "apt-get", "brew",
    "npm", "pnpm", "yarn", "bun", "cargo", "go", "curl", "wget", "tar", "unzip", "zip", "gzip", "jq", "yq",
    "basename", "dirname", "realpath", "readlink", "env", "printenv", "history", "clear", "exit", "return",
    "nl", "column", "fold", "rev", "paste", "join", "comm", "split", "base64", "md5sum", "sha256sum", "cls",
})
"""Programs that are not a check by themselves (package managers and toolchains are refined below by subcommand)."""

PARSE_ONLY = frozenset({
    "mypy", "dmypy", "pyright", "basedpyright", "pyre", "pytype", "ruff", "flake8", "pyflakes", "pylint",
    "pycodestyle", "pydocstyle", "black", "isort", "autopep8", "yapf", "bandit", "vulture", "pyupgrade",
    "tsc", "vue-tsc", "eslint", "prettier", "biome", "standard", "xo", "jshint", "tslint", "oxlint", "stylelint",
    "gofmt", "goimports", "staticcheck", "golangci-lint", "golint", "errcheck", "revive",
    "rustfmt", "rustc", "clippy-driver",
    "shellcheck", "shfmt", "checkbashisms",
    "gcc", "g++", "clang", "clang++", "cc", "javac", "kotlinc", "scalac", "swiftc", "cmake", "make-check-syntax",
    "ctags", "pre-commit", "yamllint", "hadolint", "markdownlint", "codespell", "typos",
})

EXECUTING = frozenset({
    "pytest", "py.test", "tox", "nox", "nose2", "ward", "hypothesis", "behave", "robot",
    "jest", "vitest", "mocha", "ava", "tap", "jasmine", "karma", "playwright", "cypress", "uvu", "c8", "nyc",
    "ts-node", "tsx", "node", "nodejs", "deno", "bun",
    "bats", "shunit2", "ruby", "rspec", "rake", "perl", "prove", "php", "phpunit", "java", "dotnet", "mvn", "gradle",
    "lua", "busted", "elixir", "mix", "swift", "julia", "Rscript", "ctest",
})

_PY_MODULE_PARSE_ONLY = frozenset({
    "py_compile", "compileall", "mypy", "pyright", "ruff", "flake8", "pyflakes", "pylint", "pycodestyle", "black",
    "isort", "pydocstyle", "bandit", "vulture", "tabnanny", "pyclbr", "ast", "tokenize", "json.tool", "symtable",
})
_PY_MODULE_NEUTRAL = frozenset({"pip", "venv", "ensurepip", "http.server", "site", "pydoc"})
_SCRIPT_PARSE_ONLY = ("lint", "typecheck", "type-check", "types", "tsc", "format", "fmt", "prettier", "check",
                      "build", "compile", "eslint")
_DENO: dict[str, Kind] = {"run": "executing", "test": "executing", "task": "executing", "eval": "executing",
                          "bench": "executing", "check": "parse-only", "lint": "parse-only", "fmt": "parse-only"}
_WRAPPERS = frozenset({"sudo", "time", "nice", "nohup", "stdbuf", "xvfb-run", "command", "exec", "builtin"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<(?P<dash>-?)\s*(?P<q>['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=q)")


@dataclass(frozen=True, slots=True)
class BlockClass:
    """A shell block's verdict: its kind, and whether its exit status is the status of its last check."""

    kind: Kind
    conclusive: bool
    commands: tuple[tuple[str, Kind], ...] = ()


def classify_command(words: list[str]) -> Kind:
    """The kind of one simple command given as words (environment assignments and wrappers are skipped)."""
    words = _unwrap(words)
    if not words:
        return "neutral"
    program = os.path.basename(words[0])
    args = words[1:]
    first = next((a for a in args if not a.startswith("-")), "")
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*|py", program):
        return _python(args)
    if program in ("bash", "sh", "zsh", "dash", "ksh"):
        if any(a == "-n" or (a.startswith("-") and not a.startswith("--") and "n" in a[1:] and "c" not in a[1:])
               for a in args):
            return "parse-only"
        return "executing" if args else "neutral"
    if program in ("node", "nodejs"):
        if any(a in ("--check", "-c") for a in args):
            return "parse-only"
        return "executing" if args else "neutral"
    if program in ("npm", "pnpm", "yarn", "bun"):
        return _package_script(program, args, first)
    if program in ("npx", "pnpx", "bunx") or (program in ("pnpm", "yarn") and first == "exec"):
        rest = [a for a in args if a not in ("--yes", "-y", "--no-install")]
        return classify_command(rest) if rest else "neutral"
    if program == "deno":
        return _DENO.get(first, "neutral")
    if program == "go":
        return _go(args, first)
    if program == "cargo":
        return _cargo(args, first)
    if program in ("make", "gmake", "just", "task"):
        target = first.lower()
        if any(w in target for w in ("lint", "check", "fmt", "format", "type", "build", "vet")) or not target:
            return "parse-only"
        return "executing"
    if program == "coverage":
        return "executing" if first == "run" else "neutral"
    if program in ("uv", "poetry", "pipenv", "hatch", "pdm", "rye", "conda") and first == "run":
        rest = args[args.index("run") + 1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
        return classify_command(rest)
    if program in ("timeout", "gtimeout"):
        rest = [a for a in args if not a.startswith("-")]
        return classify_command(rest[1:]) if len(rest) > 1 else "neutral"
    if program == "xargs":
        rest = [a for a in args if not a.startswith("-")]
        return classify_command(rest) if rest else "neutral"
    if program in PARSE_ONLY:
        return "parse-only"
    if program in EXECUTING:
        return "executing"
    if program in NEUTRAL:
        return "neutral"
    return "executing"  # a program being run: ./app, ./target/debug/tool, a project's own script


def classify_block(source: str) -> BlockClass:
    """Classifies a shell block (see the module's rules). Unparsable text (an open quote) counts as executing,
    inconclusive: the shell will say what it made of it."""
    try:
        pieces = _split(source)
    except ValueError:
        return BlockClass("executing", False)
    commands: list[tuple[str, Kind]] = []
    last_check = -1
    kinds: list[Kind] = []
    for n, (words, _op) in enumerate(pieces):
        kind = classify_command(words)
        kinds.append(kind)
        commands.append((" ".join(words), kind))
        if kind != "neutral":
            last_check = n
    if "executing" in kinds:
        overall: Kind = "executing"
    elif "parse-only" in kinds:
        overall = "parse-only"
    else:
        overall = "neutral"
    pipefail = "pipefail" in source
    conclusive = last_check >= 0 and all(
        op in ("&&", "") or (op in ("|", "|&") and pipefail) for _w, op in pieces[last_check:]
    )
    return BlockClass(overall, conclusive, tuple(commands))


def _split(source: str) -> list[tuple[list[str], str]]:
    """Simple commands with the operator that follows each ('' after the last). Comments and blank lines vanish."""
    out: list[tuple[list[str], str]] = []
    words: list[str] = []
    for token in _tokens(source):
        if token in _OPERATORS:
            if words:
                out.append((words, token))
                words = []
            elif token != "\n" and out:
                out[-1] = (out[-1][0], token)
            continue
        words.append(token)
    if words:
        out.append((words, ""))
    if out and out[-1][1] in ("\n", ";", "&"):
        out[-1] = (out[-1][0], "")
    # a newline is a ';' for the shell's exit status
    return [(w, ";" if op == "\n" else op) for w, op in out]


def _tokens(source: str) -> list[str]:
    """shlex with newlines kept as tokens (it treats them as whitespace otherwise)."""
    tokens: list[str] = []
    for line_no, line in enumerate(_logical_lines(source)):
        if line_no:
            tokens.append("\n")
        sub = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        sub.whitespace_split = True
        sub.commenters = "#"
        tokens.extend(sub)
    return tokens


def _logical_lines(source: str) -> list[str]:
    """Lines joined across backslash continuations and open quotes (a quoted newline stays inside its word)."""
    lines: list[str] = []
    buffer = ""
    heredoc: tuple[str, bool] | None = None
    for raw in source.replace("\\\n", " ").split("\n"):
        if heredoc is not None:  # a heredoc's body is data for its command, not commands
            if (raw.lstrip("\t") if heredoc[1] else raw) == heredoc[0]:
                heredoc = None
            continue
        buffer = f"{buffer}\n{raw}" if buffer else raw
        if (marker := _HEREDOC.search(raw)) is not None:
            heredoc = (marker["word"], marker["dash"] == "-")
        try:
            shlex.split(buffer, comments=True)
        except ValueError:
            continue
        lines.append(buffer)
        buffer = ""
    if buffer:
        raise ValueError("unterminated quote")
    return [ln for ln in lines if ln.strip()]


def _unwrap(words: list[str]) -> list[str]:
    while words and (_ASSIGN.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
        while words and (words[0].startswith("-") or _ASSIGN.match(words[0])):
            words = words[1:]
        return _unwrap(words)
    return words


def _python(args: list[str]) -> Kind:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m" and i + 1 < len(args):
            module = args[i + 1]
            if module in _PY_MODULE_PARSE_ONLY or module.split(".")[0] in ("mypy", "ruff", "pylint", "flake8"):
                return "parse-only"
            if module in _PY_MODULE_NEUTRAL:
                return "neutral"
            if module in ("pytest", "unittest", "doctest", "nose2", "tox", "trace", "cProfile", "timeit", "coverage"):
                return "executing"
            return "executing"
        if a.startswith("-m") and len(a) > 2:
            return _python(["-m", a[2:], *args[i + 1:]])
        if a == "-c" or (a.startswith("-") and not a.startswith("--") and a.endswith("c")):
            return "executing"
        if a in ("-W", "-X") and i + 1 < len(args):
            i += 2
            continue
        if a.startswith("-") and a != "-":
            if a in ("--version", "-V", "-h", "--help"):
                return "neutral"
            i += 1
            continue
        return "executing"  # python script.py
    return "executing"  # a bare interpreter runs what its stdin holds (a heredoc, a pipe)


def _package_script(program: str, args: list[str], first: str) -> Kind:
    if first in ("test", "t", "tst") or (program == "bun" and first == "test"):
        return "executing"
    if first in ("start", "exec", "x", "dlx"):
        return "executing"
    if first in ("run", "run-script"):
        rest = [a for a in args[args.index(first) + 1:] if not a.startswith("-")]
        script = rest[0].lower() if rest else ""
        if not script:
            return "neutral"
        if program == "bun" and os.path.splitext(script)[1] in (".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx"):
            return "executing"
        if "test" in script or "e2e" in script or script in ("start", "dev", "serve"):
            return "executing"
        if any(word in script for word in _SCRIPT_PARSE_ONLY):
            return "parse-only"
        return "executing"
    if program == "bun" and os.path.splitext(first)[1] in (".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx"):
        return "executing"
    if program == "yarn" and first and first not in ("install", "add", "remove", "upgrade", "init", "why", "info"):
        return _package_script(program, ["run", *args], "run")
    return "neutral"


def _go(args: list[str], first: str) -> Kind:
    if first == "test":
        rest = args[args.index("test") + 1:]
        if "-c" in rest or "-list" in rest or any(a.startswith("-list=") for a in rest):
            return "parse-only"
        for n, a in enumerate(rest):
            pattern = rest[n + 1] if a == "-run" and n + 1 < len(rest) else a[5:] if a.startswith("-run=") else None
            if pattern is not None and pattern.strip("'\"") in ("^$", "XXX", "NONE", "^NONE$", "xxx"):
                return "parse-only"
        return "executing"
    if first == "run":
        return "executing"
    if first in ("vet", "build", "fmt", "install", "list", "doc"):
        return "parse-only"
    return "neutral"  # go mod, go get, go env


def _cargo(args: list[str], first: str) -> Kind:
    if first in ("test", "t", "bench", "nextest"):
        return "parse-only" if "--no-run" in args else "executing"
    if first in ("run", "r", "miri"):
        return "executing"
    if first in ("check", "c", "build", "b", "clippy", "fmt", "doc", "rustc"):
        return "parse-only"
    return "neutral"  # cargo add, cargo update, cargo tree
