"""The console under load: 200 concurrent assistant conversations against one `tomo serve` on loopback.

Each conversation is one virtual person who sends TURNS messages in a row in their own conversation; every turn is a
real ``POST /v1/web/assistant`` streamed to its ``done`` event. The provider is scripted (``scripted:PATH``, no
model time): the reply streams some text, calls ``list_jobs`` (which reads the team's job store of the tenant's
workspace), then answers. So what is measured is the console: auth, the loop, the tool, the event stream and the
rows saved as the reply streams. The same run is made with the console's store on SQLite and on PostgreSQL (a
throwaway cluster started here), which are the peers.

Reported per store: turns per second over the whole run, latency of a turn (request to ``done``) p50/p99, time to
the first streamed text p50, errors (a non-200, an ``error`` event or a stream without ``done``), and whether every
message was saved (rows counted in the store afterwards).

    python -m bench.console_load                  # writes the "console" section of docs/benchmarks.md
    python -m bench.console_load --quick          # 20 conversations, no file written
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import httpx  # noqa: E402

try:
    from bench._report import table, write_section
except ImportError:  # run as a file
    sys.path.insert(0, str(ROOT))
    from bench._report import table, write_section

from tomo.store.console import ConsoleStore, messages  # noqa: E402
from tomo.store.db import connect, default_url  # noqa: E402
from tomo.store.jobs import JobStore, NewStage, NewWorker  # noqa: E402

PASSWORD = "load test password"
USERS = 10  # people; each drives CONVERSATIONS / USERS conversations at once with their one session


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Postgres:
    """A throwaway PostgreSQL cluster (initdb as the postgres user when run as root), on a free port."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise RuntimeError("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb)")
        self.bindir = Path(found[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="tomo-bench-pg-"))
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def __enter__(self) -> Postgres:
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=300"
        self._run("pg_ctl", "-D", str(data), "-l", str(self.root / "log"), "-o", opts, "-w", "start")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"


@dataclass
class Result:
    store: str
    conversations: int
    turns: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    first_text: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rows: int = 0
    rows_expected: int = 0


def prepare(url: str, work: Path) -> None:
    """Two tenants, USERS people, a workspace each with one finished team job."""
    from argon2 import PasswordHasher

    store = ConsoleStore.open(url, hasher=PasswordHasher())
    store.create_schema()
    for i in range(USERS):
        store.add_user(f"user{i}@t{i % 2}.example", PASSWORD, f"tenant-{i % 2}")
    for t in range(2):
        ws = work / f"repo-{t}"
        ws.mkdir(exist_ok=True)
        store.add_workspace(f"tenant-{t}", ws)
        jobs = JobStore(connect(default_url(ws, "team.sqlite")))
        jobs.create_schema()
        jobs.create_job(f"job-{t}", workspace=str(ws.resolve()), request="add a --json flag", budget=None,
                        graph={}, stages_=[NewStage("plan", [NewWorker("planner", "scripted")])])
        jobs.worker_finished(f"job-{t}", 0, 0, status="complete", output="a plan", input_tokens=10, output_tokens=5)
        jobs.job_finished(f"job-{t}", status="complete")
        jobs.engine.dispose()
    store.close()


def script(path: Path) -> None:
    answer = ("You have one job, job-0: it added a --json flag to the list command and is complete. " * 4).strip()
    path.write_text(json.dumps({"replies": [
        {"content": "Let me look at your team's jobs first.", "tool_calls": [{"name": "list_jobs", "args": {}}],
         "usage": {"input_tokens": 300, "output_tokens": 20}},
        {"content": answer, "usage": {"input_tokens": 420, "output_tokens": 60}},
    ]}))


class Serve:
    def __init__(self, url: str, work: Path, script_path: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "ASSISTANT_PROVIDER": f"scripted:{script_path}",
               "TOMO_DB": ""}
        self.log = (work / f"serve-{self.port}.log").open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "tomo", "serve", "--db", url, "--port", str(self.port)],
                                     cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def wait(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tomo serve exited; see its log")
            try:
                if httpx.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("tomo serve did not answer within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


async def login(client: httpx.AsyncClient, email: str) -> str:
    response = await client.post("/v1/web/login", json={"email": email, "password": PASSWORD})
    response.raise_for_status()
    return str((await client.get("/v1/web/me")).json()["csrf_token"])


async def conversation(client: httpx.AsyncClient, csrf: str, turns: int, result: Result) -> None:
    conv: str | None = None
    for turn in range(turns):
        started = time.perf_counter()
        first: float | None = None
        done = False
        try:
            async with client.stream("POST", "/v1/web/assistant", headers={"X-CSRF-Token": csrf},
                                     json={"message": f"what are our jobs? ({turn})", "conversation_id": conv},
                                     ) as response:
                if response.status_code != 200:
                    result.errors.append(f"HTTP {response.status_code}")
                    continue
                event = ""
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: "):
                        if event == "conversation":
                            conv = json.loads(line[6:])["id"]
                        elif event == "text" and first is None:
                            first = time.perf_counter() - started
                        elif event == "error":
                            result.errors.append("error event: " + json.loads(line[6:])["text"])
                        elif event == "done":
                            done = True
        except httpx.HTTPError as exc:
            result.errors.append(type(exc).__name__)
            continue
        if not done:
            result.errors.append("stream ended without done")
            continue
        result.latencies.append(time.perf_counter() - started)
        if first is not None:
            result.first_text.append(first)


async def drive(base: str, conversations: int, turns: int, result: Result) -> None:
    limits = httpx.Limits(max_connections=conversations + 10, max_keepalive_connections=conversations + 10,
                          keepalive_expiry=4.0)
    clients = [httpx.AsyncClient(base_url=base, timeout=300, limits=limits) for _ in range(USERS)]
    try:
        tokens = [await login(c, f"user{i}@t{i % 2}.example") for i, c in enumerate(clients)]
        started = time.perf_counter()
        await asyncio.gather(*(conversation(clients[n % USERS], tokens[n % USERS], turns, result)
                               for n in range(conversations)))
        result.seconds = time.perf_counter() - started
    finally:
        for client in clients:
            await client.aclose()


def count_rows(url: str) -> int:
    from sqlalchemy import func, select

    engine = connect(url)
    with engine.connect() as conn:
        n = int(conn.execute(select(func.count()).select_from(messages)).scalar() or 0)
    engine.dispose()
    return n


def measure(name: str, url: str, work: Path, levels: list[int], turns: int) -> list[Result]:
    """One server per store; the levels run one after the other against it (rows are counted cumulatively)."""
    prepare(url, work)
    script(work / "assistant.json")
    serve = Serve(url, work, work / "assistant.json")
    results = []
    expected = 0
    try:
        serve.wait()
        for conversations in levels:
            result = Result(name, conversations, turns)
            asyncio.run(drive(serve.base, conversations, turns, result))
            expected += conversations * turns * 4  # user, assistant (tool call), tool, assistant (answer)
            result.rows, result.rows_expected = count_rows(url), expected
            results.append(result)
    finally:
        serve.stop()
    return results


def pct(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:,.0f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200, help="conversations at once (the load)")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 conversations, no file written")
    args = parser.parse_args(argv)
    conversations = 20 if args.quick else args.conversations
    levels = [1, conversations]  # one conversation alone first: the latency without any queueing
    load = os.getloadavg()
    results: list[Result] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tomo-bench-console-") as tmp:
        work = Path(tmp) / "sqlite"
        work.mkdir()
        results += measure("SQLite", f"sqlite:///{work / 'console.sqlite'}", work, levels, args.turns)
        try:
            with Postgres() as pg:
                work = Path(tmp) / "postgresql"
                work.mkdir()
                results += measure("PostgreSQL", pg.url, work, levels, args.turns)
        except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
            notes.append(f"PostgreSQL not measured: {exc}")
    rows = []
    for r in results:
        done = len(r.latencies)
        rows.append([r.store, r.conversations, f"{done:,} / {r.conversations * r.turns:,}",
                     f"{done / r.seconds:,.1f}" if r.seconds else "-", pct(r.latencies, 0.5), pct(r.latencies, 0.99),
                     pct(r.first_text, 0.5), len(r.errors), f"{r.rows:,} / {r.rows_expected:,}"])
        print(f"{r.store} x{r.conversations}: {done} turns in {r.seconds:.1f} s; errors {len(r.errors)}"
              + (f" (first: {r.errors[0]})" if r.errors else ""))
    body = table(["store", "conversations", "turns done", "turns/s", "p50", "p99", "first text p50", "errors",
                  "rows saved / expected"], rows)
    after = os.getloadavg()
    body += (f"\n\n{conversations} conversations at once (and 1 alone, for the latency without queueing), "
             f"{args.turns} turns each, {USERS} logged-in people, one "
             "`tomo serve` (one uvicorn process) on loopback; scripted provider (no model time): each turn streams "
             "text, calls `list_jobs` (the tenant's job store), then answers. A turn is timed from the request to "
             "its `done` event. The machine has 2 cores shared with up to 9 other sessions at the time of this "
             "run (load average {:.1f} before, {:.1f} after), so absolute figures are low and noisy, and so is the "
             "ratio between the stores (it changed from run to run that day): compare the stores on a quiet "
             "machine.".format(load[0], after[0]))
    for note in notes:
        body += f"\n\n{note}"
    print(body)
    if not args.quick:
        write_section("console", "console: concurrent assistant conversations",
                      "python -m bench.console_load", body)


if __name__ == "__main__":
    main()
