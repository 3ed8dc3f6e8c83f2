"""`tomo serve --init`, `tomo users` and `tomo workspaces` from the shell, against a SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


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
    assert header.split() == ["email", "tenants", "admin", "since"] and row.split()[:3] == ["root@acme.example",
                                                                                            "acme", "yes"]
