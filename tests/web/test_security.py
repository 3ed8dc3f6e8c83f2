"""The console's locks: every route behind the session, CSRF on every change, cookies that cannot be forged, kept
after logout or after their time, or reused across a login, and no way to reach another tenant's rows. Run on SQLite
and on PostgreSQL."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import update
from web_support import PASSWORD, login

from tomo.models.scripted import ScriptedModel
from tomo.store.console import ConsoleStore, sessions
from tomo.web.app import LoginLimits
from tomo.web.auth import COOKIE, require_caller

PUBLIC = {("POST", "/v1/web/login")}


@pytest.fixture
def world(store: ConsoleStore, tmp_path: Path) -> SimpleNamespace:
    ann = store.add_user("ann@acme.example", PASSWORD, "acme", tenant_id=1147)
    bob = store.add_user("bob@bolt.example", PASSWORD, "bolt", tenant_id=916)
    for name in ("acme-repo", "bolt-repo"):
        (tmp_path / name).mkdir()
    ws_ann = store.add_workspace("acme", tmp_path / "acme-repo")
    ws_bob = store.add_workspace("bolt", tmp_path / "bolt-repo")
    conv_bob = store.create_conversation(916, bob.id, "bob's plans")
    store.add_message(conv_bob.id, "user", "bob's secret question")
    return SimpleNamespace(store=store, ann=ann, bob=bob, ws_ann=ws_ann, ws_bob=ws_bob, conv_bob=conv_bob)


def _web_routes(app: Any) -> list[tuple[str, str, Any]]:
    found = []
    for route in app.routes:
        path = getattr(route, "path", "")
        if path.startswith("/v1/web"):
            for method in sorted(getattr(route, "methods", ()) or ()):
                if method != "HEAD":
                    found.append((method, path, route))
    return found


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


def _uses(dependant: Any, fn: Any) -> bool:
    return any(d.call is fn or _uses(d, fn) for d in dependant.dependencies)


def test_every_route_answers_401_without_a_session(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store)
    routes = _web_routes(server.server.config.app)
    # the enumeration is real: the routes the issue names are all there (a new one is covered without listing it)
    names = {(m, p) for m, p, _ in routes}
    assert {("GET", "/v1/web/me"), ("GET", "/v1/web/jobs"), ("GET", "/v1/web/jobs/{job_id}"),
            ("GET", "/v1/web/workspaces"), ("POST", "/v1/web/conversations"), ("GET", "/v1/web/conversations"),
            ("GET", "/v1/web/conversations/{conversation_id}"), ("POST", "/v1/web/assistant"),
            ("POST", "/v1/web/logout")} <= names
    with server.client() as client:
        described = client.get("/openapi.json").json()["paths"]
        assert {(m.upper(), p) for p, ops in described.items() for m in ops} == names  # every route is described
        for method, path, route in routes:
            if (method, path) in PUBLIC:
                continue
            assert _uses(route.dependant, require_caller), f"{method} {path} does not use the auth dependency"
            response = client.request(method, _concrete(path), json={"message": "hi", "title": "x"},
                                      params={"q": "x"})
            assert response.status_code == 401, f"{method} {path} answered {response.status_code}"
            assert response.headers.get("www-authenticate")


def test_state_changing_requests_need_the_csrf_token(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store, model_factory=lambda: ScriptedModel([{"content": "ok"}]))
    changing = [(m, p) for m, p, _ in _web_routes(server.server.config.app)
                if m not in ("GET", "OPTIONS") and (m, p) not in PUBLIC]
    assert ("POST", "/v1/web/assistant") in changing
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        for method, path in changing:
            for headers in ({}, {"X-CSRF-Token": "not-the-token"}, {"X-CSRF-Token": ""}):
                response = client.request(method, _concrete(path), json={"message": "hi"}, headers=headers)
                assert response.status_code == 403, f"{method} {path} {headers}: {response.status_code}"
                assert "X-CSRF-Token" in response.json()["detail"]
        assert client.get("/v1/web/conversations").json() == []  # nothing was created by the refused requests
        made = client.post("/v1/web/conversations", json={"title": "t"}, headers={"X-CSRF-Token": csrf})
        assert made.status_code == 201
        assert client.get("/v1/web/me").status_code == 200  # the session survived the refused requests


def test_forged_expired_and_logged_out_cookies_fail(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store)
    with server.client() as client:
        client.cookies.set(COOKIE, "forged-" + "x" * 40, domain="127.0.0.1")
        assert client.get("/v1/web/me").status_code == 401
        client.cookies.clear()

        csrf = login(client, "ann@acme.example")
        token = client.cookies[COOKIE]
        with world.store.engine.begin() as conn:  # the session's time runs out
            conn.execute(update(sessions).values(expires_at=time.time() - 1))
        assert client.get("/v1/web/me").status_code == 401
        assert client.get("/", follow_redirects=False).text.count('action="/v1/web/login"') == 1

        csrf = login(client, "ann@acme.example")
        token = client.cookies[COOKIE]
        assert client.post("/v1/web/logout").status_code == 403  # logging out is a change: it needs the token
        assert client.post("/v1/web/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
        client.cookies.set(COOKIE, token, domain="127.0.0.1")  # a copy of the cookie kept from before the logout
        assert client.get("/v1/web/me").status_code == 401
        assert client.get("/v1/web/conversations").status_code == 401


def test_the_session_id_changes_at_login(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store)
    with server.client() as client:
        login(client, "ann@acme.example")
        first = client.cookies[COOKIE]
        login(client, "ann@acme.example")  # logging in again with the old cookie still set
        second = client.cookies[COOKIE]
        assert second != first
        assert client.get("/v1/web/me").status_code == 200
        client.cookies.set(COOKIE, first, domain="127.0.0.1")
        assert client.get("/v1/web/me").status_code == 401  # the old session ended at the new login
    with server.client() as other:  # a session id chosen by someone else (fixation) is not kept either
        other.cookies.set(COOKIE, "planted-session-id-planted-session-id", domain="127.0.0.1")
        login(other, "ann@acme.example")
        assert other.cookies[COOKIE] != "planted-session-id-planted-session-id"


def test_another_tenants_ids_answer_404(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store, model_factory=lambda: ScriptedModel([{"content": "never"}]))
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        headers = {"X-CSRF-Token": csrf}
        assert client.get(f"/v1/web/conversations/{world.conv_bob.id}").status_code == 404
        assert client.get(f"/v1/web/workspaces/{world.ws_bob.id}").status_code == 404
        assert client.get(f"/v1/web/workspaces/{world.ws_bob.id}/symbols", params={"q": "x"}).status_code == 404
        assert client.get(f"/v1/web/workspaces/{world.ws_ann.id}").status_code == 200
        asked = client.post("/v1/web/assistant", json={"message": "hi", "conversation_id": world.conv_bob.id},
                            headers=headers)
        assert asked.status_code == 404
        assert client.get("/v1/web/jobs/no-such-job").status_code == 404
        listed = client.get("/v1/web/workspaces").json()
        assert [w["name"] for w in listed] == ["acme-repo"]
        assert client.get("/v1/web/conversations").json() == []
        page = client.get(f"/?c={world.conv_bob.id}").text
        assert "bob&#39;s secret question" not in page and "bob's secret question" not in page
    assert [m.content for m in world.store.messages(world.conv_bob.id)] == ["bob's secret question"]


def test_logins_are_rate_limited(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store, login_limits=LoginLimits(per_email=3, per_address=100, window_s=600))
    with server.client() as client:
        for _ in range(3):
            wrong = client.post("/v1/web/login", json={"email": "ann@acme.example", "password": "nope-nope"})
            assert wrong.status_code == 401
        blocked = client.post("/v1/web/login", json={"email": "ann@acme.example", "password": PASSWORD})
        assert blocked.status_code == 429
        assert 0 < int(blocked.headers["retry-after"]) <= 600
        assert COOKIE not in client.cookies
        assert client.post("/v1/web/login", json={"email": "bob@bolt.example", "password": PASSWORD}).status_code == 200


def test_a_login_from_another_site_is_refused(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store)
    with server.client() as client:
        response = client.post("/v1/web/login", data={"email": "ann@acme.example", "password": PASSWORD},
                               headers={"Origin": "https://evil.example"})
        assert response.status_code == 403
        assert COOKIE not in client.cookies


def test_the_page_shows_data_as_text(store: ConsoleStore, tmp_path: Path, serve: Any) -> None:
    store.add_user("eve@acme.example", PASSWORD, "acme")
    (tmp_path / "repo").mkdir()
    store.add_workspace("acme", tmp_path / "repo", name="<script>alert(1)</script>")
    server = serve(store)
    with server.client() as client:
        login(client, "eve@acme.example")
        page = client.get("/")
        assert page.status_code == 200
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
        assert "<script>alert(1)</script>" not in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY" and page.headers["x-content-type-options"] == "nosniff"
        assert client.get("/v1/web/workspaces").headers["cache-control"] == "no-store"


def test_the_account_verbs_reach_live_sessions(world: SimpleNamespace, store_url: str, serve: Any,
                                               run_tomo: Any) -> None:
    """`tomo users revoke/set-password/remove/unlock`, run from the shell against the store a running console
    uses: a revoked, reset or removed person's cookie answers 401 on its next request, and an unlocked person's
    right password works at once instead of 429."""
    server = serve(world.store)

    def users(*args: str, stdin: str | None = None) -> Any:
        done = run_tomo("users", *args, "--db", store_url, "--json", input=stdin, env={"TOMO_DB": ""})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    with server.client() as laptop, server.client() as phone, server.client() as bob:
        login(laptop, "ann@acme.example")
        login(phone, "ann@acme.example")
        login(bob, "bob@bolt.example")
        assert users("revoke", "ann@acme.example") == {"email": "ann@acme.example", "sessions_ended": 2}
        for client in (laptop, phone):
            assert client.get("/v1/web/me").status_code == 401
            assert client.get("/v1/web/jobs").status_code == 401
        assert bob.get("/v1/web/me").status_code == 200  # only hers

        for _ in range(LoginLimits().per_email):
            wrong = laptop.post("/v1/web/login", json={"email": "ann@acme.example", "password": "not-hers!"})
            assert wrong.status_code == 401
        assert laptop.post("/v1/web/login", json={"email": "ann@acme.example", "password": PASSWORD}).status_code \
            == 429
        [ann] = [u for u in users("list") if u["email"] == "ann@acme.example"]
        assert ann["failed_logins"] == LoginLimits().per_email and ann["locked_until"] > time.time()
        assert users("unlock", "ann@acme.example")["failed_logins_forgotten"] == LoginLimits().per_email
        login(laptop, "ann@acme.example")  # the right password, at once

        assert users("set-password", "ann@acme.example", "--password-stdin",
                     stdin="a brand new password\n")["sessions_ended"] == 1
        assert laptop.get("/v1/web/me").status_code == 401
        assert phone.post("/v1/web/login", json={"email": "ann@acme.example", "password": PASSWORD}).status_code \
            == 401
        login(phone, "ann@acme.example", "a brand new password")

        assert users("remove", "ann@acme.example")["sessions_ended"] == 1
        assert phone.get("/v1/web/me").status_code == 401
        assert phone.post("/v1/web/login", json={"email": "ann@acme.example",
                                                 "password": "a brand new password"}).status_code == 401
        assert bob.get("/v1/web/me").status_code == 200
