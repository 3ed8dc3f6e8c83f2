"""`tomo lab run --model replay:VARIANT`: a recorded run's replies answer this build's requests, in the real CLI, on
a real SQLite file, judged by the task's own oracle.

The recorded run here is the s43 run of `fix-lru-eviction` as far as the model goes: its one reply was a second test
that `LRUCache(0)` refuses. The one-token search finds the fix without the model; this build counts the refusal as
the test's mistake, so the replay solves the task (unverified), where the recorded build had put the fix back.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tomo.errors import ConfigError
from tomo.lab.records import LabStore, RunRecord
from tomo.lab.replay import recorded_replies, replies_by_run

FLAGS = "run --exec-gate --claim repro --check auto --engine auto --max-rounds 12 --strategy trials --mutants"
MODEL = "openai-compat:http://127.0.0.1:8012/v1#qwen2.5-coder-1.5b"
SECOND = ("```python tests/test_tomo_repro.py\nfrom lru import LRUCache\n\ndef test_the_problem():\n"
          "    assert not LRUCache(0)._data, \"Cache should be empty when capacity is 0\"\n```")


def transcript(*replies: str) -> str:
    lines = [{"kind": "turn_started", "text": "not a reply"}, *({"kind": "assistant_said", "text": r} for r in replies)]
    return "\n".join(json.dumps(line) for line in lines) + '\n{"kind": "assistant_said", "te'  # cut by the cap


def recorded(task: str, *replies: str, model: str = MODEL, variant: str = "s43", args: str = FLAGS) -> RunRecord:
    return RunRecord(suite="small", task=task, kind="fix", variant=variant, args=args, model=model, repeat=0,
                     started="2026-12-06T00:00:00+00:00", wall_s=300.0, exit_code=0, claim=False,
                     outcome="unchanged", solved=False, transcript=transcript(*replies))


def test_the_replies_are_the_model_s_words_in_order_and_one_model_s() -> None:
    assert recorded_replies(transcript("first", "second")) == ["first", "second"]
    runs = [recorded("fix-a", "a1", "a2"), recorded("fix-b", "b1"), replace(recorded("fix-a"), model="reference")]
    assert replies_by_run(runs, "small", "s43") == {("fix-a", 0): ["a1", "a2"], ("fix-b", 0): ["b1"]}

    def refused(runs: list[RunRecord], variant: str = "s43") -> str:
        with pytest.raises(ConfigError) as caught:
            replies_by_run(runs, "small", variant)
        return caught.value.message

    assert "no recorded run of variant 'other'" in refused(runs, "other")
    assert "was run on 2 models" in refused([*runs, recorded("fix-c", model="ollama:qwen2.5-coder:7b")])
    assert "the mini-swe-agent peer" in refused([recorded("fix-a", args="mini")])
    assert "only `run` variants" in refused([recorded("fix-a", args="assist --yes")])


def test_a_replay_answers_with_the_recorded_replies_and_the_oracle_judges(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "lab.sqlite"
    store = LabStore(f"sqlite:///{db}")
    store.add(recorded("fix-lru-eviction", SECOND))
    store.add(recorded("fix-split-bill"))  # a run in which the model said nothing tomo kept
    store.close()
    args = ("lab", "run", "small", "--model", "replay:s43", "--variant", f"s44={FLAGS}", "--task",
            "fix-lru-eviction", "--task", "fix-split-bill", "--task", "rename-max-attempts", "--db", str(db),
            "--json", "--keep", str(tmp_path / "k"))
    done = run_tomo(*args, timeout=600)
    lines = {r["task"]: r for r in (json.loads(x) for x in done.stdout.splitlines() if x.startswith("{"))}
    lru, split, rename = lines["fix-lru-eviction"], lines["fix-split-bill"], lines["rename-max-attempts"]
    assert lru["model"] == "replay:s43" and lru["variant"] == "s44", lru
    assert lru["solved"] and not lru["claim"] and lru["outcome"] == "unverified", lru
    kept = (tmp_path / "k" / "fix-lru-eviction-s44-replay_s43-0" / "transcript.jsonl").read_text()
    assert recorded_replies(kept) == [SECOND]
    # the replies run out: the record's error says so first; no recorded run at all: its error says that
    assert not split["solved"] and split["outcome"] == "error", split
    assert split["error"].startswith("an error: the scripted model") and "has no reply left (it held 0)" in \
        split["error"].splitlines()[0], split["error"]
    assert not rename["solved"] and "no recorded run of rename-max-attempts" in rename["error"], rename
    assert done.returncode == 1 and "2 run(s) ended in an error" in done.stderr


def test_a_replay_is_refused_before_anything_runs_when_nothing_can_be_replayed(run_tomo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "lab.sqlite"
    store = LabStore(f"sqlite:///{db}")
    store.add(recorded("fix-lru-eviction", SECOND, args="mini", variant="mini"))
    store.add(recorded("fix-lru-eviction", SECOND))
    store.close()
    for variant, said in (("mini", "only `run` variants can be replayed"), ("s99", "no recorded run of variant")):
        done = run_tomo("lab", "run", "small", "--model", f"replay:{variant}", "--variant", f"x={FLAGS}", "--db",
                        str(db))
        assert done.returncode == 2 and said in done.stderr, done.stderr
    queued = run_tomo("lab", "run", "small", "--model", "replay:s43", "--variant", f"x={FLAGS}", "--db", str(db),
                      "--distributed")
    assert queued.returncode == 2 and "runs here, not on the queue" in queued.stderr, queued.stderr
    after = LabStore(f"sqlite:///{db}")
    assert len(after.keys()) == 2  # nothing was run or recorded
    after.close()
