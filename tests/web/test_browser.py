"""A real browser against a real `tomo serve`: Debian's chromium driven by Playwright (never `playwright install`).

It logs in through the form, sees only its tenant's jobs, finds the composer disabled when the assistant is off, and
with a scripted provider sends a message with the keyboard and watches the answer stream in with a tool row.
Missing chromium or Playwright skips here with the reason, and FAILS on CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_support import PASSWORD, free_port, write_job

from tomo.store.console import ConsoleStore

CHROMIUM = "/usr/bin/chromium"
SRC = Path(__file__).resolve().parents[2] / "src"
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
SHOTS = Path(os.environ.get("TOMO_WEB_SCREENSHOTS", "")) if os.environ.get("TOMO_WEB_SCREENSHOTS") else None


def _require_browser() -> Any:
    problem = None
    if not Path(CHROMIUM).exists():
        problem = f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = problem or "Playwright is not installed (pip install playwright; no `playwright install`)"
    if problem:
        if IN_CI:
            pytest.fail(problem)
        pytest.skip(problem)
    return sync_playwright


class TomoServe:
    """`tomo serve` in a subprocess on a free loopback port."""

    def __init__(self, db: str, env: dict[str, str], cwd: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full = {**os.environ, **env, "PYTHONPATH": str(SRC)}
        if "ASSISTANT_PROVIDER" not in env:
            full.pop("ASSISTANT_PROVIDER", None)
        self.log = cwd / f"serve-{self.port}.log"
        self.proc = subprocess.Popen([sys.executable, "-m", "tomo", "serve", "--db", db, "--port", str(self.port)],
                                     cwd=cwd, env=full, stdin=subprocess.DEVNULL, stdout=self.log.open("w"),
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tomo serve exited: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"tomo serve did not answer: {self.log.read_text()}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[dict[str, Any]]:
    sync_playwright = _require_browser()
    from argon2 import PasswordHasher

    db = f"sqlite:///{tmp_path / 'console.sqlite'}"
    store = ConsoleStore.open(db, hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    store.create_schema()
    store.add_user("ann@acme.example", PASSWORD, "acme")
    store.add_user("bob@bolt.example", PASSWORD, "bolt")
    for tenant, name in (("acme", "acme-repo"), ("bolt", "bolt-repo")):
        (tmp_path / name).mkdir()
        store.add_workspace(tenant, tmp_path / name)
    write_job(tmp_path / "acme-repo", "job-acme-1", "add a --json flag to tomo list", "the acme diff")
    write_job(tmp_path / "bolt-repo", "job-bolt-1", "bolt's secret migration", "bolt's output")
    store.close()
    script = tmp_path / "assistant.json"
    script.write_text(json.dumps({"replies": [
        {"content": "Let me look at your jobs.", "tool_calls": [{"name": "list_jobs", "args": {"tenant_id": 1}}]},
        {"content": "You have one job, job-acme-1: it added a --json flag and is complete."},
    ]}))
    off = TomoServe(db, {"TOMO_DB": ""}, tmp_path)
    on = TomoServe(db, {"TOMO_DB": "", "ASSISTANT_PROVIDER": f"scripted:{script}"}, tmp_path)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield {"off": off.url, "on": on.url, "browser": browser}
        finally:
            browser.close()
            off.stop()
            on.stop()


def _login(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.fill("#email", "ann@acme.example")
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")  # the keyboard submits the form
    page.wait_for_selector("#jobs")


def _shot(page: Any, name: str) -> None:
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)


def test_the_console_in_a_browser(site: dict[str, Any]) -> None:
    browser = site["browser"]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(site["off"] + "/")
    assert page.locator("form[action='/v1/web/login']").is_visible()
    page.fill("#email", "ann@acme.example")
    page.fill("#password", "wrong password")
    page.press("#password", "Enter")
    assert "Wrong email or password" in page.inner_text("#login-error")

    _login(page, site["off"])
    jobs = page.locator("#jobs .job")
    assert jobs.count() == 1
    assert "add a --json flag to tomo list" in jobs.first.inner_text()
    assert "secret migration" not in page.content()
    jobs.first.locator("summary").focus()
    page.keyboard.press("Enter")  # a job opens from the keyboard: its stages and outputs
    assert "the acme diff" in jobs.first.locator(".job-body").inner_text()
    assert page.is_disabled("#prompt") and page.is_disabled("#send")
    assert "not switched on here" in page.inner_text("#assistant-off")
    _shot(page, "console-off.png")
    page.close()

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    _login(page, site["on"])
    assert page.is_enabled("#prompt")
    page.fill("#prompt", "What are our jobs?")
    page.press("#prompt", "Enter")
    answer = page.locator(".msg.assistant", has_text="You have one job, job-acme-1")
    answer.wait_for(timeout=20_000)
    tool = page.locator(".row.tool")
    assert tool.count() == 1 and "list_jobs" in tool.inner_text() and "1 jobs" in tool.inner_text()
    assert page.locator(".msg.user").inner_text() == "What are our jobs?"
    page.wait_for_function("document.getElementById('usage').textContent.length > 0")
    assert "?c=c_" in page.url
    _shot(page, "console-on.png")
    page.reload()  # what streamed was saved: the conversation is there after a reload
    assert page.locator(".msg.assistant", has_text="You have one job, job-acme-1").count() == 1
    assert page.locator(".row.tool").count() == 1
    page.close()
