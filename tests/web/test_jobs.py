"""The team's jobs in the console: read from the workspaces' own job stores (or the shared one TOMO_DB names), for
the caller's tenant only, through the REST routes, the page and the assistant's tools alike."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from web_support import PASSWORD, login, sse, write_job

from tomo.models.scripted import ScriptedModel
from tomo.store.console import ConsoleStore


@pytest.fixture
def world(store: ConsoleStore, store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Two tenants with a job each. With the console on SQLite, each job is in its workspace's own
    .tomo/team.sqlite; with the console on PostgreSQL, every job is in the one shared store TOMO_DB names (that same
    PostgreSQL database), where only the console's filter keeps the tenants apart."""
    if store_url.startswith("postgresql"):
        monkeypatch.setenv("TOMO_DB", store_url)
    else:
        monkeypatch.delenv("TOMO_DB", raising=False)
    store.add_user("ann@acme.example", PASSWORD, "acme", tenant_id=1147)
    store.add_user("bob@bolt.example", PASSWORD, "bolt", tenant_id=916)
    ann_ws, bob_ws = tmp_path / "acme-repo", tmp_path / "bolt-repo"
    for ws in (ann_ws, bob_ws):
        ws.mkdir()
    store.add_workspace("acme", ann_ws)
    store.add_workspace("bolt", bob_ws)
    write_job(ann_ws, "job-acme-1", "add a --json flag to tomo list", "acme's <b>diff</b>")
    write_job(bob_ws, "job-bolt-1", "bolt's secret migration", "bolt's output")
    return SimpleNamespace(store=store)


def test_a_tenant_sees_its_own_jobs_and_no_others(world: SimpleNamespace, serve: Any) -> None:
    server = serve(world.store)
    with server.client() as client:
        login(client, "ann@acme.example")
        listed = client.get("/v1/web/jobs").json()["jobs"]
        assert [j["job_id"] for j in listed] == ["job-acme-1"]
        assert listed[0]["workspace"] == "acme-repo" and listed[0]["stages_complete"] == 2
        assert client.get("/v1/web/jobs/job-bolt-1").status_code == 404
        assert client.get("/v1/web/jobs", params={"workspace": "bolt-repo"}).status_code == 404
        job = client.get("/v1/web/jobs/job-acme-1").json()
        assert [s["name"] for s in job["stages"]] == ["plan", "build"]
        assert job["stages"][1]["workers"][0]["output"] == "acme's <b>diff</b>"
        assert (job["input_tokens"], job["output_tokens"]) == (201, 21)
        page = client.get("/").text
    assert "add a --json flag to tomo list" in page and "acme&#39;s &lt;b&gt;diff&lt;/b&gt;" in page
    assert "secret migration" not in page


def test_the_assistant_lists_the_sessions_jobs_whatever_tenant_the_model_names(world: SimpleNamespace,
                                                                               serve: Any) -> None:
    model = ScriptedModel([
        {"tool_calls": [{"name": "list_jobs", "args": {"tenant_id": 916}},
                        {"name": "show_job", "args": {"job_id": "job-bolt-1", "tenant_id": 916}}]},
        {"content": "You have one job."},
    ])
    server = serve(world.store, model_factory=lambda: model)
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        response = client.post("/v1/web/assistant", json={"message": "jobs?"}, headers={"X-CSRF-Token": csrf})
    tools = [d for e, d in sse(response.text) if e == "tool"]
    assert [t["name"] for t in tools] == ["list_jobs", "show_job"]
    listed, shown = model.sent[1][-2], model.sent[1][-1]
    assert "job-acme-1" in listed.content and "job-bolt-1" not in listed.content
    assert shown.is_error and "there is no job 'job-bolt-1'" in shown.content
    assert "secret migration" not in json.dumps([m.content for m in model.sent[1]])


def test_a_job_run_with_tomo_team_shows_up(tmp_path: Path, run_tomo: Any, serve: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOMO_DB", raising=False)
    from argon2 import PasswordHasher

    store = ConsoleStore.open(f"sqlite:///{tmp_path / 'console.sqlite'}",
                              hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    store.create_schema()
    store.add_user("ann@acme.example", PASSWORD, "acme")
    workspace = tmp_path / "shop"
    workspace.mkdir()
    store.add_workspace("acme", workspace)
    script = tmp_path / "team.json"
    script.write_text(json.dumps({"replies": [{"content": "Plan: one flag.",
                                               "usage": {"input_tokens": 40, "output_tokens": 9}}]}))
    done = run_tomo("team", "run", "add a --json flag", "--model", f"scripted:{script}", "--stages", "plan:planner",
                    "--workspace", str(workspace), "--job-id", "job-from-cli", env={"TOMO_DB": ""})
    assert done.returncode == 0, done.stderr
    server = serve(store)
    with server.client() as client:
        login(client, "ann@acme.example")
        job = client.get("/v1/web/jobs/job-from-cli").json()
    assert job["status"] == "complete" and job["stages"][0]["workers"][0]["output"] == "Plan: one flag."
    assert (job["input_tokens"], job["output_tokens"]) == (40, 9)
    store.close()


def test_a_job_id_in_two_workspaces_never_reaches_the_wrong_one(store: ConsoleStore, tmp_path: Path, serve: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workspaces of one tenant, each with its own job store, both hold a job "fix-login" (ids are unique per
    store only). Asked without a workspace the console names both and shows neither (409); asked with one it shows
    that one's; a job id of workspace A asked for in workspace B is not there (404), and neither is B's job in A."""
    monkeypatch.delenv("TOMO_DB", raising=False)
    store.add_user("ann@acme.example", PASSWORD, "acme")
    front, back = tmp_path / "front", tmp_path / "back"
    for ws in (front, back):
        ws.mkdir()
    ws_front = store.add_workspace("acme", front)
    ws_back = store.add_workspace("acme", back)
    write_job(front, "fix-login", "fix the login form", "front's change")
    write_job(back, "fix-login", "fix the login endpoint", "back's change")
    write_job(front, "only-front", "restyle the header", "front only")
    model = ScriptedModel([
        {"tool_calls": [{"name": "show_job", "args": {"job_id": "fix-login"}},
                        {"name": "show_job", "args": {"job_id": "fix-login", "workspace": "back"}}]},
        {"content": "done"},
    ])
    server = serve(store, model_factory=lambda: model)
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        listed = client.get("/v1/web/jobs").json()["jobs"]
        assert sorted((j["job_id"], j["workspace"], j["workspace_id"]) for j in listed) == [
            ("fix-login", "back", ws_back.id), ("fix-login", "front", ws_front.id),
            ("only-front", "front", ws_front.id)]

        both = client.get("/v1/web/jobs/fix-login")
        assert both.status_code == 409
        assert "2 of your workspaces (back, front)" in both.json()["detail"] and "change" not in both.text

        def output(job: dict[str, Any]) -> str:
            return str(job["stages"][1]["workers"][0]["output"])

        for ws, text in ((ws_front, "front's change"), (ws_back, "back's change")):
            for name in (ws.name, str(ws.id)):
                shown = client.get("/v1/web/jobs/fix-login", params={"workspace": name})
                assert shown.status_code == 200 and output(shown.json()) == text
                assert shown.json()["workspace_id"] == ws.id
        assert client.get("/v1/web/jobs/only-front").status_code == 200  # one match needs no workspace
        crossed = client.get("/v1/web/jobs/only-front", params={"workspace": "back"})
        assert crossed.status_code == 404 and "front only" not in crossed.text
        assert client.get("/v1/web/jobs/only-front", params={"workspace": str(ws_back.id)}).status_code == 404

        page = client.get("/").text
        assert f'data-job-id="fix-login" data-workspace-id="{ws_front.id}"' in page
        assert f'data-job-id="fix-login" data-workspace-id="{ws_back.id}"' in page
        sse(client.post("/v1/web/assistant", json={"message": "show fix-login"}, headers={"X-CSRF-Token": csrf}).text)
    unqualified, qualified = model.sent[1][-2], model.sent[1][-1]
    assert unqualified.is_error and "2 of your workspaces" in unqualified.content
    assert "change" not in unqualified.content
    assert "back's change" in qualified.content and "front's change" not in qualified.content
