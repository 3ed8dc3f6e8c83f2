"""Where lab runs are kept: one row per (suite, task, variant, model, repeat), SQLite by default, PostgreSQL by URL
(through :func:`tomo.store.db.connect`, as the team's checkpoints). A row is written once, when its run is judged, so a
run interrupted mid-way leaves nothing and is simply run again: that is what makes ``tomo lab run`` resumable."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from sqlalchemy import Boolean, Column, Float, Integer, MetaData, String, Table, Text, UniqueConstraint, select

from tomo.store.db import connect

METADATA = MetaData()
RUNS = Table(
    "lab_runs", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("suite", String(200), nullable=False),
    Column("task", String(200), nullable=False),
    Column("kind", String(20), nullable=False),
    Column("variant", String(200), nullable=False),
    Column("args", Text, nullable=False),
    Column("model", String(500), nullable=False),
    Column("repeat", Integer, nullable=False),
    Column("started", String(40), nullable=False),
    Column("wall_s", Float, nullable=False),
    Column("exit_code", Integer, nullable=False),
    Column("claim", Boolean, nullable=False),
    Column("outcome", String(40), nullable=False),
    Column("solved", Boolean, nullable=False),
    Column("oracle_output", Text, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("diff", Text, nullable=False),
    Column("transcript", Text, nullable=False),
    Column("tomo_version", String(40), nullable=False),
    Column("machine", String(200), nullable=False),
    Column("error", Text, nullable=False),
    UniqueConstraint("suite", "task", "variant", "args", "model", "repeat", name="lab_run_key"),
)


@dataclass(slots=True)
class RunRecord:
    """One judged run. ``claim``: tomo said verified (or the peer said it submitted); ``solved``: the task's own
    oracle passed. A false claim is ``claim and not solved``."""

    suite: str
    task: str
    kind: str
    variant: str
    args: str
    model: str
    repeat: int
    started: str
    wall_s: float
    exit_code: int
    claim: bool
    outcome: str
    solved: bool
    oracle_output: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    diff: str = ""
    transcript: str = ""
    tomo_version: str = ""
    machine: str = ""
    error: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        return (self.suite, self.task, self.variant, self.args, self.model, self.repeat)

    @property
    def false_claim(self) -> bool:
        return self.claim and not self.solved


def default_db(cwd: Path | None = None) -> str:
    folder = (cwd or Path.cwd()) / ".tomo"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'lab.sqlite'}"


def db_url(db: str | None) -> str:
    """``--db``: a URL, a file path, or (None) ``.tomo/lab.sqlite`` under the current directory."""
    if db is None:
        return default_db()
    if "://" in db:
        return db
    return f"sqlite:///{Path(db).resolve()}"


class LabStore:
    def __init__(self, url: str) -> None:
        self.engine = connect(url)
        METADATA.create_all(self.engine)

    def add(self, record: RunRecord) -> None:
        with self.engine.begin() as conn:
            conn.execute(RUNS.insert().values(**asdict(record)))

    def keys(self) -> set[tuple[str, str, str, str, str, int]]:
        cols = [RUNS.c.suite, RUNS.c.task, RUNS.c.variant, RUNS.c.args, RUNS.c.model, RUNS.c.repeat]
        with self.engine.connect() as conn:
            return {tuple(r) for r in conn.execute(select(*cols))}

    def records(self, suite: str | None = None) -> list[RunRecord]:
        query = select(RUNS).order_by(RUNS.c.id)
        if suite:
            query = query.where(RUNS.c.suite == suite)
        names = [f.name for f in fields(RunRecord)]
        with self.engine.connect() as conn:
            return [RunRecord(**{n: row._mapping[n] for n in names}) for row in conn.execute(query)]

    def close(self) -> None:
        self.engine.dispose()


def as_dict(record: RunRecord, *, heavy: bool = False) -> dict[str, Any]:
    data = asdict(record)
    if not heavy:
        for key in ("diff", "transcript", "oracle_output"):
            data.pop(key)
    data["false_claim"] = record.false_claim
    return data
