"""`tomo serve`, `tomo users` and `tomo workspaces` from the shell, against a SQLite store; and every verb that opens a
store (the console's, the team's) when the store is not there yet or its server does not answer."""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import httpx
from web_support import free_port, tomo_process


def test_init_users_and_workspaces(tmp_path: Path, run_tomo: Any) -> None:
    db = f"sqlite:///{tmp_path / 'c.sqlite'}"
    env = {"TOMO_DB": ""}
    empty = run_tomo("users", "list", "--db", db, env=env)
    assert empty.returncode == 2 and "tomo serve --init" in empty.stderr

    init = run_tomo("serve", "--init", "--db", db, "--admin-email", "root@acme.example", "--tenant", "acme",
                    env=env)
    assert init.returncode == 0, init.stderr
    assert "log in as root@acme.example" in init.stdout
    password = init.stdout.split("Password (shown once): ", 1)[1].split()[0]
    assert len(password) >= 12

    added = run_tomo("users", "add", "Bob@Bolt.example", "--tenant", "bolt", "--password-stdin", "--db", db,
                     input="a long enough password\n", env=env)
    assert added.returncode == 0, added.stderr
    assert "bob@bolt.example can log in to tenant(s) bolt" in added.stdout and "shown once" not in added.stdout

    (tmp_path / "shop").mkdir()
    ws = run_tomo("workspaces", "add", str(tmp_path / "shop"), "--tenant", "bolt", "--db", db, env=env)
    assert ws.returncode == 0, ws.stderr
    taken = run_tomo("workspaces", "add", str(tmp_path / "shop"), "--tenant", "acme", "--db", db, env=env)
    assert taken.returncode == 2 and "already registered to tenant 'bolt'" in taken.stderr

    listed = run_tomo("users", "list", "--json", "--db", db, env=env)
    people = {u["email"]: u for u in json.loads(listed.stdout)}
    assert people["root@acme.example"]["is_admin"] and people["root@acme.example"]["tenants"] == ["acme"]
    assert people["bob@bolt.example"]["tenants"] == ["bolt"] and not people["bob@bolt.example"]["is_admin"]


def test_listings_in_a_pipe_keep_every_column_whole(tmp_path: Path, run_tomo: Any) -> None:
    """A deep workspace path and a bracketed name come out whole and as text in a pipe (rich cut them at 80)."""
    db = f"sqlite:///{tmp_path / 'c.sqlite'}"
    env = {"TOMO_DB": "", "COLUMNS": "80"}
    init = run_tomo("serve", "--init", "--db", db, "--admin-email", "root@acme.example", "--tenant", "acme", env=env)
    assert init.returncode == 0, init.stderr
    deep = tmp_path / ("a-directory-name-long-enough-that-the-path-alone-passes-eighty-columns" * 2) / "shop"
    deep.mkdir(parents=True)
    ws = run_tomo("workspaces", "add", str(deep), "--tenant", "acme", "--name", "[bold]shop", "--db", db, env=env)
    assert ws.returncode == 0, ws.stderr
    listed = run_tomo("workspaces", "list", "--db", db, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [ln.split() for ln in listed.stdout.splitlines()] == [["tenant", "name", "path"],
                                                                  ["acme", "[bold]shop", str(deep.resolve())]]
    users = run_tomo("users", "list", "--db", db, env=env)
    header, row = users.stdout.splitlines()
    assert header.split() == ["email", "tenants", "admin", "since", "sessions", "locked"]
    assert row.split()[:3] == ["root@acme.example", "acme", "yes"] and row.split()[4:] == ["0"]


# ---- a store that is not there, a server that does not answer, a port that is taken ----------------------------

STORE_VERBS = (("serve",), ("users", "list"), ("users", "list", "--json"), ("workspaces", "list"),
               ("users", "add", "ann@acme.example", "--tenant", "acme"), ("team", "list"), ("team", "show", "j1"))


def _one_error(result: Any) -> str:
    """The error a verb printed: its line and its hint, and nothing else (no traceback)."""
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr and len(lines) == 2, result.stderr
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), result.stderr
    return lines[0]


def test_an_unreachable_server_is_one_line_naming_host_and_port(run_tomo: Any) -> None:
    """Nothing listens on the port: every verb that opens the store says where it tried (never the password) and
    exits 1, whether the URL comes from --db or from TOMO_DB."""
    port = free_port()
    url = f"postgresql://ann:hunter2-secret@127.0.0.1:{port}/console"
    for verb in STORE_VERBS:
        for args, env in (((*verb, "--db", url), {"TOMO_DB": ""}), (verb, {"TOMO_DB": url})):
            result = run_tomo(*args, env=env, timeout=60)
            assert result.returncode == 1, (args, result.stderr)
            line = _one_error(result)
            assert f"127.0.0.1:{port}" in line and "Connection refused" in line, line
            assert "hunter2" not in result.stderr + result.stdout
            assert "console on" not in result.stdout


def test_a_server_that_answers_no_is_one_line_too(postgres: Any, run_tomo: Any) -> None:
    """A real PostgreSQL that refuses the database: its reason, its host and port, still no password."""
    url = f"postgresql://postgres:hunter2-secret@127.0.0.1:{postgres.port}/no_such_db"
    for verb in (("users", "list"), ("serve",), ("team", "list")):
        result = run_tomo(*verb, "--db", url, env={"TOMO_DB": ""}, timeout=60)
        assert result.returncode == 1, result.stderr
        line = _one_error(result)
        assert f"127.0.0.1:{postgres.port}" in line and 'database "no_such_db" does not exist' in line, line
        assert "hunter2" not in result.stderr


def test_reading_verbs_leave_no_file_behind(tmp_path: Path, run_tomo: Any) -> None:
    """In a fresh directory (the default SQLite stores), a verb that only reads says there is nothing yet and creates
    no .tomo folder and no database file; only `tomo serve --init` creates the console's store."""
    env = {"TOMO_DB": ""}
    for verb in (("users", "list"), ("workspaces", "list"), ("serve",)):
        result = run_tomo(*verb, cwd=tmp_path, env=env)
        assert result.returncode == 2 and "nothing yet" in _one_error(result), result.stderr
        assert "tomo serve --init" in result.stderr
    listed = run_tomo("team", "list", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and "no jobs" in listed.stdout, listed.stderr
    as_json = run_tomo("team", "list", "--json", cwd=tmp_path, env=env)
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
    shown = run_tomo("team", "show", "j1", cwd=tmp_path, env=env)
    assert shown.returncode == 2 and "no job has run in" in _one_error(shown)
    named = run_tomo("users", "list", "--db", f"sqlite:///{tmp_path / 'elsewhere' / 'c.sqlite'}", env=env)
    assert named.returncode == 2 and "nothing yet" in named.stderr
    assert list(tmp_path.iterdir()) == []
    init = run_tomo("serve", "--init", cwd=tmp_path, env=env)
    assert init.returncode == 0, init.stderr
    assert (tmp_path / ".tomo" / "console.sqlite").is_file()


def test_a_busy_port_is_one_line_and_no_announcement(tmp_path: Path, run_tomo: Any) -> None:
    db = f"sqlite:///{tmp_path / 'c.sqlite'}"
    assert run_tomo("serve", "--init", "--db", db, env={"TOMO_DB": ""}).returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_tomo("serve", "--db", db, "--port", str(port), env={"TOMO_DB": ""}, timeout=60)
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""  # no "tomo console on ..." for a console that never listened
    line = _one_error(result)
    assert f"port {port}" in line and "in use" in line
    bad = run_tomo("serve", "--db", db, "--port", "70000", env={"TOMO_DB": ""})
    assert bad.returncode == 2 and "--port 70000 is not a port" in _one_error(bad) and bad.stdout == ""


def test_serve_announces_the_port_it_listens_on(tmp_path: Path) -> None:
    """The announcement comes after the bind, and names the port the console answers on (--port 0: the system's
    choice)."""
    db = f"sqlite:///{tmp_path / 'c.sqlite'}"
    init = tomo_process("serve", "--init", "--db", db, TOMO_DB="")
    assert init.wait(120) == 0
    proc = tomo_process("serve", "--db", db, "--port", "0", TOMO_DB="")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"tomo console on http://localhost:(\d+)/", line)
        assert match and match.group(1) != "0", line
        deadline = time.monotonic() + 30
        while True:  # listening since the announcement; answering once uvicorn's loop runs
            try:
                health = httpx.get(f"http://127.0.0.1:{match.group(1)}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr and proc.stderr.read()
                time.sleep(0.1)
        assert health.json() == {"status": "ok"}
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_account_verbs_from_the_shell(tmp_path: Path, run_tomo: Any) -> None:
    """unlock, set-password, revoke, remove: an unknown person is named as such (exit 2, nothing asked or changed),
    a password never goes on the command line, and each verb says what it did."""
    db = f"sqlite:///{tmp_path / 'c.sqlite'}"
    env = {"TOMO_DB": ""}
    assert run_tomo("serve", "--init", "--db", db, "--admin-email", "root@acme.example", env=env).returncode == 0
    for verb in ("unlock", "set-password", "revoke", "remove"):
        unknown = run_tomo("users", verb, "Nobody@Acme.example", "--db", db, env=env, input="a long password\n")
        assert unknown.returncode == 2 and unknown.stdout == ""
        assert "there is no user 'nobody@acme.example'" in _one_error(unknown) and "tomo users list" in unknown.stderr
        helped = run_tomo("users", verb, "--help", env={**env, "TERM": "dumb", "NO_COLOR": "1"})
        assert helped.returncode == 0 and "EMAIL" in helped.stdout
        assert not re.search(r"--password(?!-stdin)", helped.stdout)  # no way to put a password on argv

    unlocked = run_tomo("users", "unlock", "root@acme.example", "--db", db, env=env)
    assert unlocked.returncode == 0 and "was not locked out" in unlocked.stdout
    chosen = run_tomo("users", "set-password", "root@acme.example", "--db", db, env=env)
    assert chosen.returncode == 0 and "0 sessions ended" in chosen.stdout
    password = chosen.stdout.split("Password (shown once): ", 1)[1].split()[0]
    assert len(password) >= 12
    piped = run_tomo("users", "set-password", "root@acme.example", "--password-stdin", "--json", "--db", db,
                     env=env, input="a long password\n")
    assert json.loads(piped.stdout) == {"email": "root@acme.example", "sessions_ended": 0}  # no password echoed
    revoked = run_tomo("users", "revoke", "root@acme.example", "--db", db, env=env)
    assert revoked.returncode == 0 and "root@acme.example: 0 sessions ended." in revoked.stdout
    listed = run_tomo("users", "list", "--db", db, env=env)
    assert listed.stdout.splitlines()[0].split() == ["email", "tenants", "admin", "since", "sessions", "locked"]
    removed = run_tomo("users", "remove", "root@acme.example", "--db", db, env=env)
    assert removed.returncode == 0 and "root@acme.example is removed" in removed.stdout
    assert json.loads(run_tomo("users", "list", "--json", "--db", db, env=env).stdout) == []
