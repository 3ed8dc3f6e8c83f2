"""The lab's runner, end to end: tomo's real CLI in a subprocess on a fresh copy, the oracle in tomo's sandbox, the
verdict recorded beside tomo's claim. The models are scripted (the engine ceiling replays a reference solution; a
script replays a wrong fix), so each verdict is known before the run and a wrong one fails the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomo.errors import ConfigError
from tomo.lab.ceiling import NO_SMALL_CHANGE, RETESTS
from tomo.lab.records import LabStore
from tomo.lab.runner import REFERENCE, Job, RunSettings, parse_variant, plan, run_all, run_job
from tomo.lab.suite import load_suite
from tomo.oi import trial_requests, trials

SMALL = load_suite("small")


def task(task_id: str):  # type: ignore[no-untyped-def]
    return SMALL.select([task_id])[0]


def test_variants_are_presets_or_named_flags() -> None:
    strict = parse_variant("strict")
    assert strict.verb == "run" and "--repro" in strict.flags
    gated = parse_variant("g=--exec-gate --check auto")  # as the shell hands over g="--exec-gate --check auto"
    assert gated.name == "g" and gated.args == ("run", "--exec-gate", "--check", "auto")
    assert parse_variant("a=assist --verify 'python -m pytest'").flags == ["--verify", "python -m pytest"]
    assert parse_variant("mini").verb == "mini"
    for bad, said in [("nosuch", "unknown variant"), ("x=run --model m", "--model"), ("x=exec ls", "starts with"),
                      ("x=run 'open", "quotes"), ("a b=run", "letters")]:
        with pytest.raises(ConfigError) as caught:
            parse_variant(bad)
        assert said in caught.value.message + (caught.value.hint or "")


def test_the_plan_skips_recorded_runs_and_takes_the_kinds_in_turn() -> None:
    strict = parse_variant("strict")
    jobs = plan(SMALL, SMALL.tasks, [strict], ["m"], 1, set())
    assert len(jobs) == len(SMALL.tasks)
    assert [j.task.kind for j in jobs[:4]] == ["feature", "fix", "rename", "repro"]
    done = {jobs[0].key(SMALL.name), jobs[5].key(SMALL.name)}
    both = plan(SMALL, SMALL.tasks, [strict, parse_variant("mini")], [REFERENCE], 1, set())
    assert {j.variant.name for j in both} == {"strict"}  # the peer has no engine ceiling to replay through
    left = plan(SMALL, SMALL.tasks, [strict], ["m"], 1, done)
    assert len(left) == len(jobs) - 2 and jobs[0] not in left and jobs[1] in left


def test_the_engine_ceiling_solves_a_repro_task_and_tomo_says_verified(tmp_path: Path) -> None:
    job = Job(task("repro-roman-nines"), parse_variant("strict"), REFERENCE, 0)
    record = run_job(job, SMALL.name, RunSettings(timeout_s=240, keep=tmp_path))
    assert record.error == "" and record.solved and record.claim and record.outcome == "verified"
    assert "tests/test_roman.py" in record.diff and "roman.py" in record.diff  # the test first, then the fix
    assert record.exit_code == 0 and '"kind": "turn_ended"' in record.transcript
    kept = tmp_path / "repro-roman-nines-strict-reference-0"
    assert (kept / "reference.json").is_file() and (kept / "repo" / "_oracle_repro.py").is_file()


def wrong_fix_script(where: Path) -> Path:
    """What a weak model did on this task: an edit the visible tests execute and pass, which is not the fix."""
    block = ("```bash\nsed -i 's/^    off = set(holidays)$/    off = set(holidays) | set()/' workdays.py\n"
             "python -m pytest -q -p no:cacheprovider\n```")
    where.write_text(json.dumps({"replies": [{"content": block}, {"content": "Fixed."}, {"content": "Fixed."}]}))
    return where


@pytest.mark.parametrize(("variant", "claims"), [("gated", True), ("strict", False)])
def test_a_wrong_fix_is_judged_by_the_oracle_and_a_false_claim_is_counted(tmp_path: Path, variant: str,
                                                                          claims: bool) -> None:
    """The exec gate alone certifies an executed, green edit: the oracle refutes it and the record says so. With
    the repro gate the same edit is never called verified (no failing check came first)."""
    script = wrong_fix_script(tmp_path / "wrong.json")
    flags = {"gated": "--exec-gate --check auto", "strict": "--exec-gate --repro --check auto"}[variant]
    chosen = parse_variant(f"{variant}=run {flags} --max-rounds 3")
    job = Job(task("fix-business-days"), chosen, f"scripted:{script}", 0)
    record = run_job(job, SMALL.name, RunSettings(timeout_s=240))
    assert "| set()" in record.diff and not record.solved
    assert "failed" in record.oracle_output or "Error" in record.oracle_output
    assert record.claim is claims and record.false_claim is claims
    assert record.outcome == ("verified" if claims else "unverified")


def test_a_run_that_outlives_its_timeout_is_stopped_and_recorded(tmp_path: Path) -> None:
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"replies": [{"content": "```bash\nsleep 60\n```"}, {"content": "done"}]}))
    job = Job(task("fix-split-bill"), parse_variant("plain"), f"scripted:{script}", 0)
    record = run_job(job, SMALL.name, RunSettings(timeout_s=3))
    assert record.outcome == "timeout" and not record.claim and "stopped after 3 s" in record.error
    assert record.wall_s < 30 and not record.solved


def test_run_all_records_each_run_and_resumes(tmp_path: Path) -> None:
    store = LabStore(f"sqlite:///{tmp_path / 'lab.sqlite'}")
    jobs = plan(SMALL, [task("rename-max-attempts")], [parse_variant("plain")], [REFERENCE], 1, store.keys())
    done = run_all(store, SMALL, jobs, RunSettings(timeout_s=240))
    assert [r.solved for r in done] == [True] and [r.task for r in store.records()] == ["rename-max-attempts"]
    assert done[0].outcome == "unverified" and not done[0].claim  # plain has no gate: never "verified"
    assert plan(SMALL, [task("rename-max-attempts")], [parse_variant("plain")], [REFERENCE], 1, store.keys()) == []
    store.close()


def test_the_ceiling_goes_red_first_exactly_when_the_variant_asks_and_runs_the_variants_check() -> None:
    from tomo.lab.ceiling import replies

    fix = task("fix-business-days")
    for flags in (["--repro"], ["--claim", "repro"], ["--claim=repro"]):
        steps = replies(fix, flags)
        assert len(steps) == 3 and "tests/test_hidden_workdays.py" in str(steps[0]["content"]), flags
    assert len(replies(fix, ["--claim", "exec"])) == 2 and len(replies(fix, [])) == 2
    assert "\nmake check\n```" in str(replies(fix, ["--check=make check"])[0]["content"])
    assert fix.check in str(replies(fix, ["--check", "auto"])[0]["content"])


TRIALS = "run --exec-gate --claim repro --check auto --engine auto --max-rounds 8 --strategy trials"


def test_the_ceiling_answers_trials_with_a_reproduction_then_edit_blocks() -> None:
    from tomo.lab.ceiling import replies

    flags = TRIALS.split()[1:]
    script = replies(task("fix-business-days"), flags)
    fix = [str(r["content"]) for r in script]
    assert len(fix) == 3 + RETESTS and "```python tests/test_hidden_workdays.py\n" in fix[0]
    # the same test for each request for another test, which comes only when no one-token change passed the first
    assert fix[1:1 + RETESTS] == [fix[0]] * RETESTS
    assert [r.get("when") for r in script] == [None, *[NO_SMALL_CHANGE] * RETESTS, None, None]
    assert NO_SMALL_CHANGE in trial_requests.ANOTHER_TEST and RETESTS >= trials.RETESTS  # the lab's copy holds
    assert "```python workdays.py\n" in fix[-2] and "```bash" not in "".join(fix)
    assert fix[-1].split("\n", 1)[1] == fix[0].split("\n", 1)[1]  # the second test tomo asks for after a pass
    failing = [str(r["content"]) for r in replies(task("fix-lru-eviction"), flags)]  # its visible check fails
    assert len(failing) == 2 and failing[0].startswith("The fix:") and "```python tests/" in failing[1]


def test_the_trials_ceiling_solves_a_feature_that_changes_an_existing_test_unverified(tmp_path: Path) -> None:
    # feature-latency-median adds a key the visible test_summary pins: the fix must change that test too
    heldout = load_suite("heldout")
    job = Job(heldout.select(["feature-latency-median"])[0], parse_variant(f"trials={TRIALS}"), REFERENCE, 0)
    record = run_job(job, heldout.name, RunSettings(timeout_s=240))
    assert record.error == "" and record.solved and record.outcome == "unverified" and not record.claim
    # a feature with no example of its own is asked for no test (tomo.oi.feature): the replay's test comes as a
    # first trial, which lacks `median` and is put back, so nothing failed before the change
    assert "tests/test_latency.py" in record.diff and "tests/test_tomo_repro.py" not in record.diff
