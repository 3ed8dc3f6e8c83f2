"""Where lab runs are kept: one row per (suite, task, variant, model, repeat), SQLite by default, PostgreSQL by URL
(through :func:`tomo.store.db.connect`, as the team's checkpoints). A row is written once, when its run is judged, so a
run interrupted mid-way leaves nothing and is simply run again: that is what makes ``tomo lab run`` resumable."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import Boolean, Column, Float, Integer, MetaData, String, Table, Text, UniqueConstraint, select
from sqlalchemy.exc import IntegrityError

from tomo.errors import ConfigError
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
EXECUTORS = Table(
    "lab_executors", METADATA,
    Column("executor_id", String(200), primary_key=True),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("seen_at", Float, nullable=False),
)
"""The processes serving the distributed lab's queue, each heartbeating once a second (see
:mod:`tomo.lab.distributed`): how a live one knows that another died with a run in hand."""

Key = tuple[str, str, str, str, str, int]


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
    def key(self) -> Key:
        return (self.suite, self.task, self.variant, self.args, self.model, self.repeat)

    @property
    def false_claim(self) -> bool:
        return self.claim and not self.solved


def default_db(cwd: Path | None = None, *, create: bool = True) -> str:
    folder = (cwd or Path.cwd()) / ".tomo"
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'lab.sqlite'}"


def db_url(db: str | None, *, create: bool = True) -> str:
    """``--db``: a URL, a file path, or (None) ``.tomo/lab.sqlite`` under the current directory (its folder made
    only when ``create``)."""
    if db is None:
        return default_db(create=create)
    if "://" in db:
        return db
    return f"sqlite:///{Path(db).resolve()}"


def open_for_reading(db: str | None) -> LabStore:
    """The store a reading verb (report, bless) reads: a SQLite file that does not exist is an error, never created
    (a report asked of the wrong folder must not leave an empty database behind)."""
    url = db_url(db, create=False)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise ConfigError(f"no lab runs recorded in {url.removeprefix('sqlite:///')}: the file does not exist",
                          hint="run some with `tomo lab run SUITE --model SPEC`, or name the database with --db")
    return LabStore(url)


class LabStore:
    def __init__(self, url: str) -> None:
        self.engine = connect(url)
        METADATA.create_all(self.engine)

    def add(self, record: RunRecord) -> None:
        with self.engine.begin() as conn:
            conn.execute(RUNS.insert().values(**asdict(record)))

    def add_once(self, record: RunRecord) -> bool:
        """Records ``record`` unless its key is recorded already; False when it was. Two processes that judged the
        same run (a worker taken for dead that was not) race on the unique key: the loser's row is simply not
        needed, so its constraint violation is not an error."""
        if self.has(record.key):
            return False
        try:
            self.add(record)
        except IntegrityError:
            if self.has(record.key):
                return False
            raise
        return True

    def add_new(self, records: Iterable[RunRecord]) -> tuple[int, int]:
        """Records each of ``records`` whose key is not recorded yet, all in one transaction (an import that fails
        half-way leaves the database as it was); ``(added, already recorded)``. Two records of one key in
        ``records`` count the second as already recorded."""
        added = skipped = 0
        with self.engine.begin() as conn:
            known = {tuple(r) for r in conn.execute(select(RUNS.c.suite, RUNS.c.task, RUNS.c.variant, RUNS.c.args,
                                                               RUNS.c.model, RUNS.c.repeat))}
            for record in records:
                if record.key in known:
                    skipped += 1
                    continue
                conn.execute(RUNS.insert().values(**asdict(record)))
                known.add(record.key)
                added += 1
        return added, skipped

    def keys(self, suite: str | None = None) -> set[Key]:
        cols = [RUNS.c.suite, RUNS.c.task, RUNS.c.variant, RUNS.c.args, RUNS.c.model, RUNS.c.repeat]
        query = select(*cols)
        if suite:
            query = query.where(RUNS.c.suite == suite)
        with self.engine.connect() as conn:
            return {tuple(r) for r in conn.execute(query)}

    def has(self, key: Key) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(RUNS.c.id).where(*_is_key(key)).limit(1)).first() is not None

    def get(self, key: Key) -> RunRecord | None:
        names = [f.name for f in fields(RunRecord)]
        with self.engine.connect() as conn:
            row = conn.execute(select(RUNS).where(*_is_key(key)).limit(1)).first()
        return None if row is None else RunRecord(**{n: row._mapping[n] for n in names})

    def records(self, suite: str | None = None) -> list[RunRecord]:
        query = select(RUNS).order_by(RUNS.c.id)
        if suite:
            query = query.where(RUNS.c.suite == suite)
        names = [f.name for f in fields(RunRecord)]
        with self.engine.connect() as conn:
            return [RunRecord(**{n: row._mapping[n] for n in names}) for row in conn.execute(query)]

    def heartbeat(self, executor_id: str, host: str, pid: int) -> None:
        with self.engine.begin() as conn:
            done = conn.execute(EXECUTORS.update().where(EXECUTORS.c.executor_id == executor_id)
                                .values(seen_at=time.time(), host=host, pid=pid))
            if done.rowcount == 0:
                conn.execute(EXECUTORS.insert().values(executor_id=executor_id, host=host, pid=pid,
                                                       seen_at=time.time()))

    def executors(self) -> list[tuple[str, str, int, float]]:
        """``(executor_id, host, pid, seen_at)`` of every process that serves (or served and died)."""
        cols = [EXECUTORS.c.executor_id, EXECUTORS.c.host, EXECUTORS.c.pid, EXECUTORS.c.seen_at]
        with self.engine.connect() as conn:
            return [(str(r[0]), str(r[1]), int(r[2]), float(r[3])) for r in conn.execute(select(*cols))]

    def forget_executor(self, executor_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(EXECUTORS.delete().where(EXECUTORS.c.executor_id == executor_id))

    def close(self) -> None:
        self.engine.dispose()


def _is_key(key: Key) -> list[Any]:
    suite, task, variant, args, model, repeat = key
    return [RUNS.c.suite == suite, RUNS.c.task == task, RUNS.c.variant == variant, RUNS.c.args == args,
            RUNS.c.model == model, RUNS.c.repeat == repeat]


def as_dict(record: RunRecord, *, heavy: bool = False) -> dict[str, Any]:
    data = asdict(record)
    if not heavy:
        for key in ("diff", "transcript", "oracle_output"):
            data.pop(key)
    data["false_claim"] = record.false_claim
    return data


_RECORD = TypeAdapter(RunRecord)
_ONE_RECORD = "each line must be one record, as `tomo lab export` writes"


def to_jsonl(records: Iterable[RunRecord], *, transcripts: bool = False) -> str:
    """Records as JSON lines, the form a lab's figures travel in (a database stays on the machine that ran it; the
    lines can be committed beside the report they made). Without ``transcripts`` each line keeps its diff and the
    oracle's output but not the transcript, which is most of a record's size; a replay needs it."""
    lines = []
    for record in records:
        data = asdict(record)
        if not transcripts:
            data.pop("transcript")
        lines.append(json.dumps(data, ensure_ascii=False, sort_keys=True))
    return "".join(line + "\n" for line in lines)


def from_jsonl(text: str, source: str) -> list[RunRecord]:
    """The records of :func:`to_jsonl`'s lines (``tomo lab report --runs --json``'s ``false_claim`` is derived and
    allowed). Every line is checked before any is returned: a bad one is an error naming ``source``, its line and
    what was wrong, so an import takes the whole file or nothing."""
    names = {f.name for f in fields(RunRecord)}
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where} is not JSON: {exc.msg}",
                              hint=_ONE_RECORD) from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{where} is not a record (a JSON object)",
                              hint=_ONE_RECORD)
        data.pop("false_claim", None)
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"{where} has fields a lab record does not: {', '.join(unknown)}",
                              hint=f"a record's fields are {', '.join(sorted(names))}")
        try:
            records.append(_RECORD.validate_json(json.dumps(data), strict=True))  # JSON mode: an object is a record
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"{where} is not a lab record: {problems}",
                              hint=_ONE_RECORD) from exc
    return records
