"""The console's store on SQLite and PostgreSQL: secrets kept only as hashes, tenants created on first mention,
one repository to one tenant, and every read of a tenant's rows filtered by the tenant."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import select
from web_support import PASSWORD

from tomo.errors import ConfigError
from tomo.store.console import Access, ConsoleStore, LoginLimits, email_key, hash_token, sessions, users


def test_passwords_and_session_tokens_are_stored_as_hashes(store: ConsoleStore) -> None:
    user = store.add_user(" Ann@Acme.Example ", PASSWORD, "acme")
    assert user.email == "ann@acme.example" and [t.name for t in user.tenants] == ["acme"]
    with store.engine.connect() as conn:
        stored = conn.execute(select(users.c.password_hash)).scalar_one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert store.check_password("ANN@acme.example", PASSWORD) == store.user("ann@acme.example")
    assert store.check_password("ann@acme.example", "wrong password") is None
    assert store.check_password("nobody@acme.example", PASSWORD) is None
    token, session = store.create_session(user, user.tenants[0], ttl_s=60)
    with store.engine.connect() as conn:
        kept = conn.execute(select(sessions.c.token_hash)).scalar_one()
    assert kept == hash_token(token) and token not in kept
    found = store.session(token)
    assert found is not None and found.tenant.name == "acme" and found.csrf_token == session.csrf_token
    assert store.session(token + "x") is None


def test_a_second_tenant_is_a_membership_and_ids_can_be_chosen(store: ConsoleStore) -> None:
    store.add_user("ann@acme.example", PASSWORD, "acme", tenant_id=1147)
    both = store.add_user("ann@acme.example", PASSWORD + "2", "bolt")
    assert [t.name for t in both.tenants] == ["acme", "bolt"]
    assert store.tenant("acme").id == 1147
    assert store.tenant("bolt").id > 1147  # the sequence moved past the chosen id (PostgreSQL)
    assert store.check_password("ann@acme.example", PASSWORD) is None  # the password was replaced
    with pytest.raises(ConfigError, match="shorter than 8"):
        store.add_user("bob@bolt.example", "short", "bolt")
    with pytest.raises(ConfigError, match="not an email"):
        store.add_user("bob", PASSWORD, "bolt")


def test_a_repository_belongs_to_one_tenant(store: ConsoleStore, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    ws = store.add_workspace("acme", repo)
    assert ws.path == str(repo.resolve()) and ws.name == "repo"
    with pytest.raises(ConfigError, match="already registered to tenant 'acme'"):
        store.add_workspace("bolt", tmp_path / "." / "repo")
    with pytest.raises(ConfigError, match="not a directory"):
        store.add_workspace("acme", tmp_path / "missing")
    assert [w.name for w in store.workspaces(store.tenant("acme").id)] == ["repo"]
    assert store.workspaces(store.tenant("bolt", create=True).id) == []


def test_conversations_are_read_by_tenant_and_user(store: ConsoleStore) -> None:
    ann = store.add_user("ann@acme.example", PASSWORD, "acme")
    bob = store.add_user("bob@acme.example", PASSWORD, "acme")
    acme = ann.tenants[0].id
    conv = store.create_conversation(acme, ann.id, "ann's")
    store.add_message(conv.id, "user", "hello", data={"n": 1})
    found = store.conversation(acme, ann.id, conv.id)
    assert found is not None and found.id == conv.id and found.updated_at >= conv.updated_at
    assert store.conversation(acme, bob.id, conv.id) is None  # a colleague's conversation is theirs
    assert store.conversation(acme + 1, ann.id, conv.id) is None
    assert [c.id for c in store.conversations(acme, ann.id)] == [conv.id]
    [message] = store.messages(conv.id)
    assert (message.role, message.content, message.data) == ("user", "hello", {"n": 1})


def test_accounts_can_be_unlocked_reset_revoked_and_removed(store: ConsoleStore) -> None:
    """The account verbs on the real store: each names an unknown user as such, and each ends exactly the sessions
    it says it ends."""
    ann = store.add_user("ann@acme.example", PASSWORD, "acme")
    bob = store.add_user("bob@acme.example", PASSWORD, "acme")
    acme = ann.tenants[0]
    for verb in (store.unlock, store.revoke_sessions, store.remove_user, store.require_user,
                 lambda e: store.set_password(e, PASSWORD)):
        with pytest.raises(ConfigError, match=r"there is no user 'nobody@acme\.example'"):
            verb("Nobody@acme.example")

    first, _ = store.create_session(ann, acme, ttl_s=60)
    second, _ = store.create_session(ann, acme, ttl_s=60)
    bobs, _ = store.create_session(bob, acme, ttl_s=60)
    assert store.revoke_sessions("ANN@acme.example") == 2
    assert store.session(first) is None and store.session(second) is None
    assert store.session(bobs) is not None  # only hers

    limits = LoginLimits(per_email=3, window_s=600)
    for _ in range(3):
        store.record_failure(email_key("ann@acme.example"), "address:10.0.0.1")
    access = store.access(limits)
    assert access[ann.id].failed_logins == 3 and access[ann.id].locked_until is not None
    assert access[ann.id].locked_until > time.time() + 590 and access[bob.id] == Access(1, 0, None)
    assert store.unlock("ann@acme.example") == 3
    assert store.access(limits)[ann.id] == Access(0, 0, None)
    assert store.recent_failures("address:10.0.0.1", 600)[0] == 3  # unlocking a person frees the person only
    assert store.unlock("ann@acme.example") == 0

    kept, _ = store.create_session(ann, acme, ttl_s=60)
    store.record_failure(email_key("ann@acme.example"))
    with pytest.raises(ConfigError, match="shorter than 8"):
        store.set_password("ann@acme.example", "short")
    assert store.session(kept) is not None  # a refused change changes nothing
    assert store.set_password("ann@acme.example", "a brand new password") == 1
    assert store.session(kept) is None and store.access(limits)[ann.id].failed_logins == 0
    assert store.check_password("ann@acme.example", PASSWORD) is None
    assert store.check_password("ann@acme.example", "a brand new password") == store.user("ann@acme.example")

    last, _ = store.create_session(ann, acme, ttl_s=60)
    conv = store.create_conversation(acme.id, ann.id, "ann's")
    store.add_message(conv.id, "user", "hello")
    assert store.remove_user("ann@acme.example") == 1
    assert store.session(last) is None and store.user("ann@acme.example") is None
    assert store.check_password("ann@acme.example", "a brand new password") is None
    assert store.conversation(acme.id, ann.id, conv.id) is None and store.messages(conv.id) == []
    assert [u.email for u in store.list_users()] == ["bob@acme.example"] and store.session(bobs) is not None
    with pytest.raises(ConfigError, match="there is no user"):
        store.remove_user("ann@acme.example")
