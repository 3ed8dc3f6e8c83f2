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
