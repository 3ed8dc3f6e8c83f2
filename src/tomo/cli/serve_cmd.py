"""`tomo serve` (the web console), `tomo users` (who may use it: add, list, unlock, set-password, revoke, remove) and
`tomo workspaces add/list` (what they see).

The store is ``--db URL`` if given, else ``TOMO_DB``, else ``.tomo/console.sqlite`` under the current directory:
the same resolution for every verb here, so `tomo users add` writes where `tomo serve` reads.
"""

from __future__ import annotations

import errno
import json
import secrets
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tomo.cli import app
from tomo.cli.rows import print_rows
from tomo.errors import ConfigError, Unavailable

if TYPE_CHECKING:
    from tomo.store.console import ConsoleStore

users_app = typer.Typer(help="Manage the people who may log in to the console.", no_args_is_help=True)
workspaces_app = typer.Typer(help="Register repositories to a tenant for the console.", no_args_is_help=True)
app.add_typer(users_app, name="users")
app.add_typer(workspaces_app, name="workspaces")

DB_HELP = "store URL: sqlite:///PATH or postgresql://USER@HOST/DB (default: TOMO_DB, else .tomo/console.sqlite)"


def _open(db: str | None, *, ready: bool = True, create: bool = False) -> ConsoleStore:
    """The console store every verb here uses. Only ``tomo serve --init`` creates one (``create``): any other verb
    on a SQLite store that is not there says there is nothing yet and leaves no file or folder behind; a server that
    does not answer is one line naming its host and port (exit 1)."""
    try:
        from tomo.store.console import ConsoleStore
    except ImportError as exc:
        raise ConfigError(f"the console needs its extra dependencies ({exc.name} is missing)",
                          hint="pip install 'tomo[web]'") from exc
    from tomo.store.db import default_url

    store = ConsoleStore.open(db or default_url(Path.cwd(), "console.sqlite", create=False), create=create)
    if ready:
        store.require_ready()
    return store


def _password(from_stdin: bool) -> tuple[str, bool]:
    """The password from stdin (first line), or a new random one (shown once)."""
    if not from_stdin:
        return secrets.token_urlsafe(12), True
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        raise ConfigError("--password-stdin read an empty password",
                          hint="pipe it in: echo \"$PW\" | tomo users add ...")
    return line, False


@app.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="address to listen on"),
    port: int = typer.Option(8000, "--port", metavar="PORT", help="port to listen on"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
    init: bool = typer.Option(False, "--init", help="create the tables and a first admin, then exit"),
    admin_email: str = typer.Option("admin@localhost", "--admin-email", metavar="EMAIL",
                                    help="the first admin's email (--init)"),
    tenant: str = typer.Option("default", "--tenant", metavar="TENANT", help="the first admin's tenant (--init)"),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="read the admin's password from stdin"),
    log_level: str = typer.Option("warning", "--log-level", metavar="LEVEL", help="uvicorn's log level"),
) -> None:
    """Run the web console (jobs, workspaces and the assistant) for the people of a team."""
    store = _open(db, ready=not init, create=init)
    if init:
        store.create_schema()
        if store.has_admin():
            typer.echo(f"The console store {store.url} is already set up (it has an admin).")
            typer.echo("Add people with: tomo users add EMAIL --tenant NAME")
            return
        password, generated = _password(password_stdin)
        user = store.add_user(admin_email, password, tenant, admin=True)
        typer.echo(f"Created the console store {store.url} and admin {user.email} in tenant {tenant!r}.")
        if generated:
            typer.echo(f"Password (shown once): {password}")
        typer.echo(f"Start it with `tomo serve{f' --db {db}' if db else ''}`, open {_where(host, port)} and log in "
                   f"as {user.email}.")
        return
    import uvicorn

    from tomo.config import load_settings
    from tomo.web import create_app

    web = create_app(store, settings=load_settings())
    # the port is ours before the console says where it is: a busy port is one line and exit 1, never an
    # announcement followed by uvicorn's own error
    listening = listen(host, port)
    port = int(listening.getsockname()[1])  # --port 0: the one the system chose
    on = web.state.console.assistant.enabled
    typer.echo(f"tomo console on {_where(host, port)} (store {store.url}; assistant "
               f"{'on' if on else 'off: set ASSISTANT_PROVIDER to switch it on'}). Ctrl+C stops it.")
    # keep-alive longer than clients' own idle expiry (httpx, browsers: <= 5 s), so a client never sends a request
    # on a connection the server is closing at that moment
    config = uvicorn.Config(web, host=host, port=port, log_level=log_level, proxy_headers=False,
                            timeout_keep_alive=30)
    uvicorn.Server(config).run(sockets=[listening])


def _where(host: str, port: int) -> str:
    return f"http://{'localhost' if host in ('127.0.0.1', '::1') else host}:{port}/"


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening, or :class:`~tomo.errors.Unavailable` in one line that
    names the port (busy, or below 1024 without the right) and how to choose another. Port 0 lets the system
    choose a free one."""
    if not 0 <= port <= 65535:  # getaddrinfo would quietly take 70000 as 70000 % 65536
        raise ConfigError(f"--port {port} is not a port (0 to 65535)", hint="e.g. --port 8000")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigError(f"--host {host} is not an address to listen on ({exc})",
                          hint="use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)") from exc
    sock = socket.socket(family, kind, proto)
    # uvicorn's own choice: a restart is not refused while the last run's closed connections linger in TIME_WAIT
    # (a port another process listens on is still refused: that is EADDRINUSE below)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)  # uvicorn's backlog; listening now also catches a port bound but not yet listened on
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise Unavailable(f"port {port} on {host} is in use by another process (another `tomo serve`?)",
                              hint=f"stop that process, or choose another port: tomo serve --port {port + 1}") from exc
        if exc.errno == errno.EACCES:
            raise Unavailable(f"may not listen on port {port} on {host} ({exc.strerror})",
                              hint="ports below 1024 need privileges: choose --port 8000 or another above 1023") \
                from exc
        if exc.errno == errno.EADDRNOTAVAIL:
            raise ConfigError(f"--host {host} is not an address of this machine ({exc.strerror})",
                              hint="use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)") from exc
        raise Unavailable(f"cannot listen on {host} port {port}: {exc.strerror or exc}",
                          hint="choose another --port or --host") from exc
    return sock


@users_app.command("add")
def users_add(
    email: str = typer.Argument(..., metavar="EMAIL", help="the person's email (their login)"),
    tenant: str = typer.Option(..., "--tenant", metavar="TENANT", help="the tenant they belong to (created when new)"),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="read the password from stdin"),
    admin: bool = typer.Option(False, "--admin", help="make them an admin"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """Add a person to a tenant (an existing person gets the new tenant and password)."""
    store = _open(db)
    password, generated = _password(password_stdin)
    user = store.add_user(email, password, tenant, admin=admin)
    typer.echo(f"{user.email} can log in to tenant(s) {', '.join(t.name for t in user.tenants)}.")
    if generated:
        typer.echo(f"Password (shown once): {password}")


@users_app.command("list")
def users_list(
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """List the people who may log in, with their tenants, live sessions, and who is locked out (until when)."""
    from tomo.store.console import LoginLimits

    store = _open(db)
    people = store.list_users()
    access = store.access(LoginLimits())  # the console's own limits (tomo serve has no option to change them)
    if as_json:
        typer.echo(json.dumps([{**u.to_dict(), **access[u.id].to_dict()} for u in people], indent=2))
        return
    print_rows(("email", "tenants", "admin", "since", "sessions", "locked"),
               [(user.email, ", ".join(t.name for t in user.tenants), "yes" if user.is_admin else "",
                 _day(user.created_at), str(access[user.id].sessions), _locked(access[user.id].locked_until))
                for user in people])


@users_app.command("unlock")
def users_unlock(
    email: str = typer.Argument(..., metavar="EMAIL", help="the person's email (their login)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """Let a person log in again after too many wrong passwords: their failed logins are forgotten."""
    store = _open(db)
    user = store.require_user(email)
    forgotten = store.unlock(user.email)
    if as_json:
        typer.echo(json.dumps({"email": user.email, "failed_logins_forgotten": forgotten}))
        return
    typer.echo(f"{user.email} can log in again ({_n(forgotten, 'failed login')} forgotten)." if forgotten else
               f"{user.email} was not locked out (no failed logins to forget).")


@users_app.command("set-password")
def users_set_password(
    email: str = typer.Argument(..., metavar="EMAIL", help="the person's email (their login)"),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="read the new password from stdin (default: a random one, shown once)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """Give a person a new password: their sessions end and their failed logins are forgotten.

    The password never goes on the command line (other users of the machine see it there): pipe it in with
    --password-stdin, or let tomo choose one and show it once."""
    store = _open(db)
    user = store.require_user(email)  # before the password is read: a mistyped email costs no one a password
    password, generated = _password(password_stdin)
    ended = store.set_password(user.email, password)
    if as_json:
        typer.echo(json.dumps({"email": user.email, "sessions_ended": ended,
                               **({"password": password} if generated else {})}))
        return
    typer.echo(f"{user.email} has a new password; {_n(ended, 'session')} ended.")
    if generated:
        typer.echo(f"Password (shown once): {password}")


@users_app.command("revoke")
def users_revoke(
    email: str = typer.Argument(..., metavar="EMAIL", help="the person's email (their login)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """End every session of a person (a lost laptop, a leaked cookie): they stay, and log in again."""
    store = _open(db)
    user = store.require_user(email)
    ended = store.revoke_sessions(user.email)
    if as_json:
        typer.echo(json.dumps({"email": user.email, "sessions_ended": ended}))
        return
    typer.echo(f"{user.email}: {_n(ended, 'session')} ended.")


@users_app.command("remove")
def users_remove(
    email: str = typer.Argument(..., metavar="EMAIL", help="the person's email (their login)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """Remove a person: their sessions end, and their memberships and their own conversations go with them."""
    store = _open(db)
    user = store.require_user(email)
    ended = store.remove_user(user.email)
    if as_json:
        typer.echo(json.dumps({"email": user.email, "removed": True, "sessions_ended": ended}))
        return
    typer.echo(f"{user.email} is removed ({_n(ended, 'session')} ended); they can no longer log in.")


@workspaces_app.command("add")
def workspaces_add(
    path: Path = typer.Argument(..., metavar="DIR", help="the repository's root directory"),
    tenant: str = typer.Option(..., "--tenant", metavar="TENANT", help="the tenant it belongs to (created when new)"),
    name: str | None = typer.Option(None, "--name", help="its name in the console (default: the folder's name)"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """Register a repository to a tenant: its team jobs show in the console and the assistant can query its code."""
    ws = _open(db).add_workspace(tenant, path, name)
    typer.echo(f"Workspace {ws.name!r} ({ws.path}) belongs to tenant {tenant!r}.")


@workspaces_app.command("list")
def workspaces_list(
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=DB_HELP),
) -> None:
    """List the registered workspaces and their tenants."""
    rows = _open(db).all_workspaces()
    if as_json:
        typer.echo(json.dumps([{"tenant": t, **ws.to_dict()} for t, ws in rows], indent=2))
        return
    print_rows(("tenant", "name", "path"), [(tenant_name, ws.name, str(ws.path)) for tenant_name, ws in rows])


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _locked(until: float | None) -> str:
    import datetime as dt

    return "" if until is None else f"until {dt.datetime.fromtimestamp(until, tz=dt.UTC):%H:%M} UTC"


def _day(ts: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).strftime("%Y-%m-%d")
