"""The console's tables: tenants, users, memberships, sessions, workspaces, conversations and their messages.

SQLAlchemy Core over the engine :func:`tomo.store.db.connect` opens, so the same code runs on SQLite (the default,
``.tomo/console.sqlite``) and PostgreSQL. Every read that returns a tenant's data takes the tenant id as a required
argument and filters on it in SQL: a row of another tenant is indistinguishable from a row that does not exist, which
is what lets the web layer answer 404 for both.

Secrets are never stored as given: passwords are argon2 hashes (``argon2-cffi``) and session tokens are kept as
their SHA-256, so a copy of the database lets nobody log in or ride a session.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    delete,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from tomo.errors import ConfigError, TomoError, Unavailable
from tomo.store.db import connect, reach, sqlite_file

SCHEMA_VERSION = 1

metadata = MetaData()

tenants = Table(
    "console_tenants", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created_at", Float, nullable=False),
)

users = Table(
    "console_users", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("password_hash", Text, nullable=False),
    Column("is_admin", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
)

memberships = Table(
    "console_memberships", metadata,
    Column("user_id", Integer, ForeignKey("console_users.id", ondelete="CASCADE"), primary_key=True),
    Column("tenant_id", Integer, ForeignKey("console_tenants.id", ondelete="CASCADE"), primary_key=True),
    Column("role", String(20), nullable=False, default="member"),
    Column("created_at", Float, nullable=False),
)

sessions = Table(
    "console_sessions", metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user_id", Integer, ForeignKey("console_users.id", ondelete="CASCADE"), nullable=False),
    Column("tenant_id", Integer, ForeignKey("console_tenants.id", ondelete="CASCADE"), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Index("ix_console_sessions_expires", "expires_at"),
)

login_failures = Table(
    "console_login_failures", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(400), nullable=False),
    Column("at", Float, nullable=False),
    Index("ix_console_login_failures_key_at", "key", "at"),
)

workspaces = Table(
    "console_workspaces", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tenant_id", Integer, ForeignKey("console_tenants.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    # One path belongs to one tenant: two tenants sharing a repository would see each other's jobs in it.
    Column("path", Text, nullable=False, unique=True),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("tenant_id", "name", name="uq_console_workspace_name"),
)

conversations = Table(
    "console_conversations", metadata,
    Column("id", String(40), primary_key=True),
    Column("tenant_id", Integer, ForeignKey("console_tenants.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", Integer, ForeignKey("console_users.id", ondelete="CASCADE"), nullable=False),
    Column("title", String(200), nullable=False, default=""),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Index("ix_console_conversations_tenant", "tenant_id", "updated_at"),
)

messages = Table(
    "console_messages", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("conversation_id", String(40), ForeignKey("console_conversations.id", ondelete="CASCADE"),
           nullable=False),
    # user | assistant | tool | event (a warning or an error shown in the pane, never sent to the model)
    Column("role", String(20), nullable=False),
    Column("content", Text, nullable=False, default=""),
    # streaming (text still arriving) | done | error (the run failed after this was said)
    Column("status", String(20), nullable=False, default="done"),
    Column("data", JSON, nullable=False, default=dict),
    Column("created_at", Float, nullable=False),
    Index("ix_console_messages_conversation", "conversation_id", "id"),
)

meta = Table(
    "console_meta", metadata,
    Column("key", String(50), primary_key=True),
    Column("value", Text, nullable=False),
)


# ---- records ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tenant:
    id: int
    name: str


@dataclass(frozen=True, slots=True)
class User:
    id: int
    email: str
    is_admin: bool
    created_at: float
    tenants: tuple[Tenant, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "email": self.email, "is_admin": self.is_admin, "created_at": self.created_at,
                "tenants": [t.name for t in self.tenants]}


@dataclass(frozen=True, slots=True)
class Session:
    """A verified session: who, for which tenant, and the CSRF token its state-changing requests must send."""

    user: User
    tenant: Tenant
    csrf_token: str
    expires_at: float
    token_hash: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class Workspace:
    id: int
    tenant_id: int
    name: str
    path: str
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "path": self.path, "created_at": self.created_at}


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    tenant_id: int
    user_id: int
    title: str
    created_at: float
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created_at": self.created_at, "updated_at": self.updated_at}


@dataclass(frozen=True, slots=True)
class StoredMessage:
    id: int
    role: str
    content: str
    status: str
    data: dict[str, Any]
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "content": self.content, "status": self.status,
                "data": self.data, "created_at": self.created_at}


@dataclass(frozen=True, slots=True)
class LoginLimits:
    """Failed logins allowed per email and per client address within ``window_s`` before the console answers 429.

    Here, beside the failures it counts, so that ``tomo users list`` can say who is locked out by the same rule
    the console applies, and ``tomo users unlock`` can undo it."""

    per_email: int = 5
    per_address: int = 30
    window_s: float = 900.0


@dataclass(frozen=True, slots=True)
class Access:
    """What stands between a person and the console now: their live sessions, and the failed logins that lock them
    out until ``locked_until`` (``None``: not locked)."""

    sessions: int
    failed_logins: int
    locked_until: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "failed_logins": self.failed_logins, "locked_until": self.locked_until}


class StoreNotReady(TomoError):
    """The console's tables do not exist yet (``tomo serve --init`` was never run on this store)."""


def email_key(email: str) -> str:
    """The key a failed login counts against for ``email`` (the console's per-person limit)."""
    return f"email:{email.strip().lower()}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def normalize_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` mean psycopg 3 (the driver tomo depends on), not psycopg2."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def _hasher() -> Any:
    try:
        from argon2 import PasswordHasher
    except ImportError as exc:  # pragma: no cover - part of the web extra
        raise ConfigError("argon2-cffi is not installed", hint="pip install 'tomo[web]'") from exc
    return PasswordHasher()


# ---- the store -------------------------------------------------------------------------------------------------------


class ConsoleStore:
    """Everything the console keeps. Thread-safe as SQLAlchemy engines are; methods are short transactions."""

    def __init__(self, engine: Engine, *, hasher: Any = None) -> None:
        """``hasher`` is an ``argon2.PasswordHasher``; the default uses argon2-cffi's parameters (RFC 9106's
        low-memory profile). Hashes record their parameters, so a store can be read with any hasher and a login
        re-hashes a password whose parameters are out of date."""
        self.engine = engine
        self._ph = hasher if hasher is not None else _hasher()

    @classmethod
    def open(cls, url: str, *, hasher: Any = None, create: bool = True) -> ConsoleStore:
        """The store at ``url``, connected once (a server that does not answer is
        :class:`~tomo.errors.Unavailable` here, in one line naming its host and port).

        ``create=False`` is for a verb that only reads: a SQLite file that is not there is
        :class:`StoreNotReady` ("nothing yet") instead of a new empty file and folder."""
        url = normalize_url(url)
        path = sqlite_file(url)
        if path is not None:
            if not create and not path.is_file():
                raise StoreNotReady(f"there is nothing yet: no console store at {path}",
                                    hint="`tomo serve --init` (with the same --db) creates it and a first admin")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise Unavailable(f"cannot create the folder of the SQLite store {path}: {exc.strerror or exc}",
                                  hint="give --db sqlite:///PATH in a folder you may write to") from exc
        store = cls(connect(url, pool_pre_ping=url.startswith("postgresql")), hasher=hasher)
        try:
            reach(store.engine)
        except Unavailable:
            store.close()
            raise
        return store

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    # ---- schema ------------------------------------------------------------------------------------------------------

    def create_schema(self) -> None:
        metadata.create_all(self.engine)
        with self._tx() as conn:
            if conn.execute(select(meta.c.value).where(meta.c.key == "schema")).scalar() is None:
                conn.execute(insert(meta).values(key="schema", value=str(SCHEMA_VERSION)))

    def is_ready(self) -> bool:
        return inspect(self.engine).has_table(meta.name)

    def require_ready(self) -> None:
        if not self.is_ready():
            raise StoreNotReady(f"the console store {self.url} has no tables yet",
                                hint="run `tomo serve --init` (with the same --db) to create them and a first admin")

    # ---- tenants and users -------------------------------------------------------------------------------------------

    def tenant(self, name: str, *, create: bool = False, tenant_id: int | None = None) -> Tenant:
        """The tenant called ``name``; ``create=True`` creates it when it is named for the first time."""
        name = name.strip()
        if not name:
            raise ConfigError("the tenant name is empty", hint="give --tenant NAME")
        with self._tx() as conn:
            row = conn.execute(select(tenants.c.id, tenants.c.name).where(tenants.c.name == name)).first()
            if row is not None:
                return Tenant(row.id, row.name)
            if not create:
                raise ConfigError(f"there is no tenant named {name!r}", hint="`tomo users list` shows the tenants")
            values: dict[str, Any] = {"name": name, "created_at": time.time()}
            if tenant_id is not None:
                values["id"] = tenant_id
            new_id = conn.execute(insert(tenants).values(**values)).inserted_primary_key[0]  # type: ignore[index]
        if tenant_id is not None and self.engine.dialect.name == "postgresql":
            self._bump_sequence(tenants)
        return Tenant(int(new_id), name)

    def _bump_sequence(self, table: Table) -> None:
        """After an insert with an explicit id, PostgreSQL's sequence must move past it."""
        from sqlalchemy import text

        with self._tx() as conn:
            conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                              f"(SELECT MAX(id) FROM {table.name}))"))

    def add_user(self, email: str, password: str, tenant: str, *, admin: bool = False,
                 tenant_id: int | None = None) -> User:
        """Creates the user (or adds a membership to an existing one) in ``tenant``, created if new."""
        email = _clean_email(email)
        if len(password) < 8:
            raise ConfigError("the password is shorter than 8 characters", hint="choose a longer password")
        team = self.tenant(tenant, create=True, tenant_id=tenant_id)
        now = time.time()
        with self._tx() as conn:
            user_id = conn.execute(select(users.c.id).where(users.c.email == email)).scalar()
            if user_id is None:
                user_id = conn.execute(insert(users).values(
                    email=email, password_hash=self._ph.hash(password), is_admin=admin, created_at=now,
                )).inserted_primary_key[0]  # type: ignore[index]
            else:
                conn.execute(update(users).where(users.c.id == user_id).values(
                    password_hash=self._ph.hash(password), is_admin=users.c.is_admin | admin))
            exists = conn.execute(select(memberships.c.user_id).where(
                memberships.c.user_id == user_id, memberships.c.tenant_id == team.id)).first()
            if exists is None:
                conn.execute(insert(memberships).values(user_id=user_id, tenant_id=team.id,
                                                        role="admin" if admin else "member", created_at=now))
        found = self.user(email)
        assert found is not None
        return found

    def user(self, email: str) -> User | None:
        with self._tx() as conn:
            row = conn.execute(select(users).where(users.c.email == _clean_email(email))).first()
            if row is None:
                return None
            return User(row.id, row.email, bool(row.is_admin), row.created_at, self._tenants_of(conn, row.id))

    def _tenants_of(self, conn: Connection, user_id: int) -> tuple[Tenant, ...]:
        rows = conn.execute(select(tenants.c.id, tenants.c.name).join(
            memberships, memberships.c.tenant_id == tenants.c.id).where(memberships.c.user_id == user_id)
            .order_by(memberships.c.created_at, tenants.c.id)).all()
        return tuple(Tenant(r.id, r.name) for r in rows)

    def list_users(self) -> list[User]:
        with self._tx() as conn:
            rows = conn.execute(select(users).order_by(users.c.id)).all()
            return [User(r.id, r.email, bool(r.is_admin), r.created_at, self._tenants_of(conn, r.id)) for r in rows]

    def _user_id(self, conn: Connection, email: str) -> tuple[int, str]:
        """The id of the user ``email`` (and the email as stored), or a :class:`ConfigError` naming it."""
        clean = _clean_email(email)
        user_id = conn.execute(select(users.c.id).where(users.c.email == clean)).scalar()
        if user_id is None:
            raise ConfigError(f"there is no user {clean!r} in the console store {self.url}",
                              hint="`tomo users list` shows who can log in; `tomo users add EMAIL --tenant NAME` "
                                   "adds someone")
        return int(user_id), clean

    def require_user(self, email: str) -> User:
        """The user ``email``, or the same :class:`ConfigError` as every account verb for one that is not there."""
        with self._tx() as conn:
            _, clean = self._user_id(conn, email)
        found = self.user(clean)
        assert found is not None
        return found

    def access(self, limits: LoginLimits) -> dict[int, Access]:
        """Every user's :class:`Access` by user id: live sessions, and failed logins within ``limits.window_s``
        with the moment the console lets them try again (the same arithmetic as its login route)."""
        now = time.time()
        since = now - limits.window_s
        with self._tx() as conn:
            people = conn.execute(select(users.c.id, users.c.email)).all()
            live: dict[int, int] = {int(uid): int(n) for uid, n in conn.execute(
                select(sessions.c.user_id, func.count()).where(sessions.c.expires_at > now)
                .group_by(sessions.c.user_id))}
            keys = {email_key(p.email): p.id for p in people}
            failed: dict[int, list[float]] = {}
            for key, at in conn.execute(select(login_failures.c.key, login_failures.c.at).where(
                    login_failures.c.key.in_(list(keys)), login_failures.c.at >= since)
                    .order_by(login_failures.c.at)):
                failed.setdefault(keys[key], []).append(float(at))
        result: dict[int, Access] = {}
        for person in people:
            times = failed.get(person.id, [])
            # locked while `per_email` failures are in the window: until the one that makes it so leaves it
            locked = times[len(times) - limits.per_email] + limits.window_s if len(times) >= limits.per_email \
                else None
            result[person.id] = Access(live.get(person.id, 0), len(times),
                                       locked if locked is not None and locked > now else None)
        return result

    def unlock(self, email: str) -> int:
        """Forgets the failed logins of ``email``, so the right password works at once instead of answering 429 until
        the window passes. Returns how many were forgotten. Raises for a user who is not there."""
        with self._tx() as conn:
            _, clean = self._user_id(conn, email)
            return int(conn.execute(delete(login_failures).where(login_failures.c.key == email_key(clean)))
                       .rowcount or 0)

    def set_password(self, email: str, password: str) -> int:
        """Replaces the password of ``email``. Their sessions end (whoever knew the old password is logged out with
        it) and their failed logins are forgotten (the new password works now). Returns the sessions ended."""
        if len(password) < 8:
            raise ConfigError("the password is shorter than 8 characters", hint="choose a longer password")
        new_hash = self._ph.hash(password)
        with self._tx() as conn:
            user_id, clean = self._user_id(conn, email)
            conn.execute(update(users).where(users.c.id == user_id).values(password_hash=new_hash))
            conn.execute(delete(login_failures).where(login_failures.c.key == email_key(clean)))
            return int(conn.execute(delete(sessions).where(sessions.c.user_id == user_id)).rowcount or 0)

    def revoke_sessions(self, email: str) -> int:
        """Ends every session of ``email`` (a stolen cookie stops working; they log in again). Returns how many."""
        with self._tx() as conn:
            user_id, _ = self._user_id(conn, email)
            return int(conn.execute(delete(sessions).where(sessions.c.user_id == user_id)).rowcount or 0)

    def remove_user(self, email: str) -> int:
        """Removes ``email``: their sessions end, and their memberships, their own conversations and their failed
        logins go with them, in one transaction. Rows are deleted here rather than left to ``ON DELETE CASCADE``, so
        a SQLite connection without foreign keys switched on cannot leave a live session behind. Returns the
        sessions ended."""
        with self._tx() as conn:
            user_id, clean = self._user_id(conn, email)
            ended = int(conn.execute(delete(sessions).where(sessions.c.user_id == user_id)).rowcount or 0)
            theirs = select(conversations.c.id).where(conversations.c.user_id == user_id)
            conn.execute(delete(messages).where(messages.c.conversation_id.in_(theirs)))
            conn.execute(delete(conversations).where(conversations.c.user_id == user_id))
            conn.execute(delete(memberships).where(memberships.c.user_id == user_id))
            conn.execute(delete(login_failures).where(login_failures.c.key == email_key(clean)))
            conn.execute(delete(users).where(users.c.id == user_id))
        return ended

    def has_admin(self) -> bool:
        with self._tx() as conn:
            return conn.execute(select(users.c.id).where(users.c.is_admin.is_(True)).limit(1)).first() is not None

    def check_password(self, email: str, password: str) -> User | None:
        """The user when the password is right, else ``None`` (an unknown email costs a hash too: no timing tell)."""
        from argon2.exceptions import InvalidHashError, VerificationError

        try:
            email = _clean_email(email)
        except ConfigError:
            return None
        with self._tx() as conn:
            row = conn.execute(select(users.c.id, users.c.password_hash).where(users.c.email == email)).first()
        if row is None:
            self._ph.hash(password)
            return None
        try:
            self._ph.verify(row.password_hash, password)
        except (VerificationError, InvalidHashError):
            return None
        if self._ph.check_needs_rehash(row.password_hash):
            with self._tx() as conn:
                conn.execute(update(users).where(users.c.id == row.id).values(password_hash=self._ph.hash(password)))
        return self.user(email)

    # ---- login rate limiting -----------------------------------------------------------------------------------------

    def recent_failures(self, key: str, window_s: float) -> tuple[int, float]:
        """How many failed logins ``key`` had in the last ``window_s`` seconds, and when the oldest of them was."""
        since = time.time() - window_s
        with self._tx() as conn:
            row = conn.execute(select(func.count(), func.min(login_failures.c.at)).where(
                login_failures.c.key == key, login_failures.c.at >= since)).first()
        return (int(row[0]), float(row[1] or 0.0)) if row else (0, 0.0)

    def record_failure(self, *keys: str) -> None:
        now = time.time()
        with self._tx() as conn:
            conn.execute(insert(login_failures), [{"key": k, "at": now} for k in keys])
            conn.execute(delete(login_failures).where(login_failures.c.at < now - 86_400))

    def clear_failures(self, key: str) -> None:
        with self._tx() as conn:
            conn.execute(delete(login_failures).where(login_failures.c.key == key))

    # ---- sessions ----------------------------------------------------------------------------------------------------

    def create_session(self, user: User, tenant: Tenant, ttl_s: float) -> tuple[str, Session]:
        """A new random token (returned once, stored hashed) with its own CSRF token."""
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        now = time.time()
        token_hash = hash_token(token)
        with self._tx() as conn:
            conn.execute(delete(sessions).where(sessions.c.expires_at <= now))  # sessions nobody came back to
            conn.execute(insert(sessions).values(token_hash=token_hash, user_id=user.id, tenant_id=tenant.id,
                                                 csrf_token=csrf, created_at=now, expires_at=now + ttl_s))
        return token, Session(user, tenant, csrf, now + ttl_s, token_hash)

    def session(self, token: str) -> Session | None:
        """The live session for ``token``; an unknown, expired or revoked one is ``None`` (expired rows go)."""
        if not token or len(token) > 200:
            return None
        token_hash = hash_token(token)
        with self._tx() as conn:
            row = conn.execute(
                select(sessions, users.c.email, users.c.is_admin, users.c.created_at.label("user_created"),
                       tenants.c.name.label("tenant_name"))
                .join(users, users.c.id == sessions.c.user_id)
                .join(tenants, tenants.c.id == sessions.c.tenant_id)
                .join(memberships, (memberships.c.user_id == sessions.c.user_id)
                      & (memberships.c.tenant_id == sessions.c.tenant_id))
                .where(sessions.c.token_hash == token_hash)).first()
            if row is None:
                return None
            if row.expires_at <= time.time():
                conn.execute(delete(sessions).where(sessions.c.token_hash == token_hash))
                return None
        tenant = Tenant(row.tenant_id, row.tenant_name)
        user = User(row.user_id, row.email, bool(row.is_admin), row.user_created, (tenant,))
        return Session(user, tenant, row.csrf_token, row.expires_at, token_hash)

    def delete_session(self, token: str) -> None:
        with self._tx() as conn:
            conn.execute(delete(sessions).where(sessions.c.token_hash == hash_token(token)))

    # ---- workspaces --------------------------------------------------------------------------------------------------

    def add_workspace(self, tenant: str, path: Path, name: str | None = None) -> Workspace:
        """Registers a repository for a tenant. A path already registered (to anyone) is refused."""
        root = path.expanduser().resolve()
        if not root.is_dir():
            raise ConfigError(f"{root} is not a directory", hint="register the root of a repository")
        team = self.tenant(tenant, create=True)
        label = (name or root.name).strip() or str(root)
        try:
            with self._tx() as conn:
                new_id = conn.execute(insert(workspaces).values(
                    tenant_id=team.id, name=label, path=str(root), created_at=time.time(),
                )).inserted_primary_key[0]  # type: ignore[index]
        except IntegrityError as exc:
            with self._tx() as conn:
                owner = conn.execute(select(tenants.c.name, workspaces.c.name.label("ws")).join(
                    tenants, tenants.c.id == workspaces.c.tenant_id).where(workspaces.c.path == str(root))).first()
            if owner is not None:
                raise ConfigError(f"{root} is already registered to tenant {owner.name!r} as {owner.ws!r}",
                                  hint="a repository belongs to one tenant: its jobs would show to both") from exc
            raise ConfigError(f"tenant {team.name!r} already has a workspace named {label!r}",
                              hint="choose another --name") from exc
        return Workspace(int(new_id), team.id, label, str(root), time.time())

    def workspaces(self, tenant_id: int) -> list[Workspace]:
        with self._tx() as conn:
            rows = conn.execute(select(workspaces).where(workspaces.c.tenant_id == tenant_id)
                                .order_by(workspaces.c.name)).all()
        return [Workspace(r.id, r.tenant_id, r.name, r.path, r.created_at) for r in rows]

    def all_workspaces(self) -> list[tuple[str, Workspace]]:
        with self._tx() as conn:
            rows = conn.execute(select(workspaces, tenants.c.name.label("tenant_name")).join(
                tenants, tenants.c.id == workspaces.c.tenant_id).order_by(tenants.c.name, workspaces.c.name)).all()
        return [(r.tenant_name, Workspace(r.id, r.tenant_id, r.name, r.path, r.created_at)) for r in rows]

    # ---- conversations -----------------------------------------------------------------------------------------------

    def create_conversation(self, tenant_id: int, user_id: int, title: str = "") -> Conversation:
        now = time.time()
        conv = Conversation("c_" + secrets.token_hex(12), tenant_id, user_id, title[:200], now, now)
        with self._tx() as conn:
            conn.execute(insert(conversations).values(id=conv.id, tenant_id=tenant_id, user_id=user_id,
                                                      title=conv.title, created_at=now, updated_at=now))
        return conv

    def conversations(self, tenant_id: int, user_id: int, limit: int = 100) -> list[Conversation]:
        with self._tx() as conn:
            rows = conn.execute(select(conversations).where(
                conversations.c.tenant_id == tenant_id, conversations.c.user_id == user_id)
                .order_by(conversations.c.updated_at.desc()).limit(limit)).all()
        return [Conversation(r.id, r.tenant_id, r.user_id, r.title, r.created_at, r.updated_at) for r in rows]

    def conversation(self, tenant_id: int, user_id: int, conversation_id: str) -> Conversation | None:
        """A conversation of this user in this tenant, else ``None`` (whoever else owns it)."""
        with self._tx() as conn:
            r = conn.execute(select(conversations).where(
                conversations.c.id == conversation_id, conversations.c.tenant_id == tenant_id,
                conversations.c.user_id == user_id)).first()
        return None if r is None else Conversation(r.id, r.tenant_id, r.user_id, r.title, r.created_at,
                                                   r.updated_at)

    def messages(self, conversation_id: str) -> list[StoredMessage]:
        with self._tx() as conn:
            rows = conn.execute(select(messages).where(messages.c.conversation_id == conversation_id)
                                .order_by(messages.c.id)).all()
        return [StoredMessage(r.id, r.role, r.content, r.status, dict(r.data or {}), r.created_at) for r in rows]

    def add_message(self, conversation_id: str, role: str, content: str, *, status: str = "done",
                    data: dict[str, Any] | None = None, title: str | None = None) -> int:
        now = time.time()
        with self._tx() as conn:
            new_id = conn.execute(insert(messages).values(
                conversation_id=conversation_id, role=role, content=content, status=status,
                data=_jsonable(data or {}), created_at=now)).inserted_primary_key[0]  # type: ignore[index]
            values: dict[str, Any] = {"updated_at": now}
            if title:
                values["title"] = title[:200]
            conn.execute(update(conversations).where(conversations.c.id == conversation_id).values(**values))
        return int(new_id)

    def update_message(self, message_id: int, *, content: str | None = None, status: str | None = None,
                       data: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {}
        if content is not None:
            values["content"] = content
        if status is not None:
            values["status"] = status
        if data is not None:
            values["data"] = _jsonable(data)
        if values:
            with self._tx() as conn:
                conn.execute(update(messages).where(messages.c.id == message_id).values(**values))

    def close(self) -> None:
        self.engine.dispose()


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return result


def _clean_email(email: str) -> str:
    email = email.strip().lower()
    if "@" not in email or len(email) > 320 or any(c.isspace() for c in email):
        raise ConfigError(f"{email!r} is not an email address", hint="write it as name@example.org")
    return email

