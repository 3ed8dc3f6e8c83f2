"""Shared by the console tests (imported by basename: pytest puts this directory on sys.path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from pg_cluster import free_port
from tomo.store.db import connect, default_url
from tomo.store.jobs import JobStore, NewStage, NewWorker

PASSWORD = "correct horse battery"
SRC = Path(__file__).resolve().parents[2] / "src"


def tomo_process(*args: str, **env: str) -> subprocess.Popen[str]:
    """``tomo ARGS`` from this checkout's sources, running on (for a verb that does not end by itself: serve)."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
               **env}
    return subprocess.Popen([sys.executable, "-m", "tomo", *args], env=environ, text=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class Server:
    """uvicorn serving ``app`` on a free loopback port in a thread: real HTTP, in this process (so a test can hold
    the scripted model the app uses and read what it was sent)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the console did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)


def login(client: httpx.Client, email: str, password: str = PASSWORD) -> str:
    """Logs ``client`` in; returns the CSRF token from GET /v1/web/me."""
    response = client.post("/v1/web/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    me = client.get("/v1/web/me")
    assert me.status_code == 200, me.text
    return str(me.json()["csrf_token"])


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Server-sent events as (name, data) pairs."""
    events = []
    for block in text.split("\n\n"):
        name, data = "message", ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        if data:
            events.append((name, json.loads(data)))
    return events


def write_job(workspace: Path, job_id: str, request: str, output: str) -> None:
    """A finished two-worker job, written through the team's own store API the way a `tomo team` run writes it."""
    jobs = JobStore(connect(default_url(workspace, "team.sqlite")))
    jobs.create_schema()
    jobs.create_job(job_id, workspace=str(workspace.resolve()), request=request, budget=50_000, graph={},
                    stages_=[NewStage("plan", [NewWorker("planner", "scripted")]),
                             NewStage("build", [NewWorker("implementer", "scripted")])])
    for stage, text in enumerate((f"plan for {request}", output)):
        jobs.stage_started(job_id, stage, request)
        jobs.worker_started(job_id, stage, 0, "scripted")
        jobs.worker_finished(job_id, stage, 0, status="complete", output=text, input_tokens=100 + stage,
                             output_tokens=10 + stage)
        jobs.stage_finished(job_id, stage, status="complete", output=text)
    jobs.job_finished(job_id, status="complete")
    jobs.engine.dispose()
