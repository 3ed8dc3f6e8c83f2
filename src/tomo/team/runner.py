"""Runs a task graph: stages in order, the workers of a stage in parallel, a checkpoint after each one.

The store is the truth. A worker's checkpoint (its output, its usage, the job's totals) is one transaction written
after the model answered; a stage's checkpoint (its merged output, the next stage's input) is another. Everything
else is derived from the store when a job starts or resumes, so a process killed at any instant resumes from the
first worker without a checkpoint and never calls a finished worker again. A worker whose model answered but whose
checkpoint was not written runs again under the same idempotency key (see :mod:`tomo.team.context`).

:class:`Team` holds the parts one job needs (store, model chooser, tools, sink). The orchestration lives in
:meth:`Team._execute` for the local backend; the DBOS backend (:mod:`tomo.team.dbos_backend`) reuses the same
:meth:`Team.run_worker` and :meth:`Team.finish_stage`, so both write the same rows.
"""

from __future__ import annotations

import asyncio
import getpass
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tomo import loop
from tomo.agents import Agent
from tomo.errors import ConfigError, ModelError, TomoError
from tomo.events import JobDone, NullSink, Sink, StageDone, StageStarted, WorkerDone, WorkerStarted
from tomo.models.messages import Usage
from tomo.store.jobs import JobRecord, JobStore, NewStage, NewWorker, WorkerRecord, idempotency_key
from tomo.team import code as code_workers
from tomo.team import context
from tomo.team.graph import TaskGraph, Worker, WorkerOutput, describe
from tomo.team.roles import ModelChooser, TeamSettings
from tomo.tools import Caller, Registry


class TeamError(ConfigError):
    """A job cannot be run or resumed as asked (unknown id, id taken, a graph that does not fit the job)."""


@dataclass(frozen=True, slots=True)
class StageResult:
    """What ``on_stage_complete`` receives: the stage, its merged output (the next stage's input), its workers."""

    job_id: str
    index: int
    name: str
    output: str
    workers: list[WorkerRecord]


@dataclass(frozen=True, slots=True)
class JobResult:
    """How a run or resume ended. ``noop`` is true when resume found the job already complete."""

    job_id: str
    status: str
    reason: str
    output: str | None
    record: JobRecord
    noop: bool = False

    @property
    def message(self) -> str:
        if self.noop:
            return f"job {self.job_id} is already complete; nothing to resume"
        if self.status == "complete":
            return f"job {self.job_id} is complete"
        return f"job {self.job_id} is {self.status}: {self.reason}"


OnStageComplete = Callable[[StageResult], Awaitable[None] | None]
WorkerStatus = Literal["complete", "failed", "skipped", "budget"]


class Team:
    """Runs and resumes jobs against one store.

    ``agents`` (with the ``registry`` that holds their tools) serve workers that name an agent; ``code_runner`` serves
    workers with ``code=True`` (none by default: ``tomo team`` gives the oi engine). ``sink`` receives the team's events
    (stage and worker started/done, job done) and the loop's events of every worker.
    """

    def __init__(self, store: JobStore, chooser: ModelChooser, *, workspace: Path, sink: Sink | None = None,
                 registry: Registry | None = None, agents: Mapping[str, Agent] | None = None,
                 code_runner: code_workers.CodeRunner | None = None, backend: str = "local",
                 rechoose: bool = False) -> None:
        self.store = store
        self.chooser = chooser
        self.workspace = workspace.resolve()
        self.sink = sink or NullSink()
        self.registry = registry or Registry()
        self.agents = dict(agents or {})
        self._code_runner = code_runner
        self.backend = backend
        self.rechoose = rechoose
        self.caller = Caller(user=_user(), tenant="local", workspace=self.workspace)

    @property
    def settings(self) -> TeamSettings:
        return self.chooser.team

    # ---- entry points ------------------------------------------------------------------------------------------

    def create(self, graph: TaskGraph, request: str) -> None:
        """Writes the job, every stage and worker pending, in one transaction. Checks every role's model first."""
        if not request.strip():
            raise TeamError("the request is empty", hint='say what the team should do: tomo team "add a --json flag"')
        self.check(graph)
        existing = self.store.get_job(graph.job_id)
        if existing is not None:
            elsewhere = existing.workspace != str(self.workspace)
            raise TeamError(f"a job with id {graph.job_id!r} already exists in this store"
                            + (f", started in {existing.workspace}" if elsewhere else ""),
                            hint="choose another --job-id" if elsewhere else
                            f"resume it with `tomo team resume {graph.job_id}`, or choose another --job-id")
        stages = [NewStage(s.name, [NewWorker(w.label, self.chooser.spec_for(w.role, self._explicit(w))[0])
                                    for w in s.workers]) for s in graph.stages]
        self.store.create_job(graph.job_id, workspace=str(self.workspace), request=request, budget=graph.budget,
                              graph=graph.to_dict(), stages_=stages, backend=self.backend)

    def check(self, graph: TaskGraph) -> None:
        """Refuses, before anything is written, a graph naming an unknown agent or a role whose model is malformed."""
        for stage in graph.stages:
            for worker in stage.workers:
                if worker.agent and worker.agent not in self.agents:
                    raise TeamError(f"stage {stage.name!r} names agent {worker.agent!r}, which is not defined",
                                    hint=f"add [agents.{worker.agent}] to tomo.toml (defined: "
                                    f"{', '.join(sorted(self.agents)) or 'none'})")
                self.chooser.spec_for(worker.role, self._explicit(worker))

    async def run(self, graph: TaskGraph, request: str, on_stage_complete: OnStageComplete | None = None) -> JobResult:
        """Creates the job and runs it to the end (complete, incomplete at the budget, or failed)."""
        self.create(graph, request)
        return await self._execute(graph, on_stage_complete)

    async def resume(self, job_id: str, on_stage_complete: OnStageComplete | None = None, *,
                     graph: TaskGraph | None = None, budget: int | None = None) -> JobResult:
        """Continues ``job_id`` from its first unfinished worker. ``budget`` raises (or sets) the job's ceiling."""
        self.check_workspace(job_id)
        graph = self.load(job_id, graph, budget=budget)
        record = self._record(job_id)
        if record.status == "complete":
            return JobResult(job_id, "complete", record.reason, _final_output(record), record, noop=True)
        return await self._execute(graph, on_stage_complete)

    def check_workspace(self, job_id: str) -> None:
        """Refuses to resume, from another workspace, a job a store shared between workspaces (one TOMO_DB) holds:
        its workers would change this workspace's files for the other's request. A queue's worker process does not
        ask: on another machine the same project may live at another path."""
        record = self.store.get_job(job_id)  # an unknown id is :meth:`load`'s to explain
        owner = record.workspace if record is not None else str(self.workspace)
        if owner != str(self.workspace):
            raise TeamError(f"job {job_id!r} was started in {owner}, not in {self.workspace}",
                            hint=f"resume it there: tomo team resume {job_id} --workspace {owner}")

    def load(self, job_id: str, graph: TaskGraph | None = None, *, budget: int | None = None) -> TaskGraph:
        """The job's graph as stored (or ``graph``, which must have the same shape), with ``budget`` applied."""
        stored = self.store.graph_of(job_id)
        if stored is None:
            known = self.store.job_ids()[:5]
            raise TeamError(f"no job with id {job_id!r} in this store",
                            hint=("`tomo team list` shows the jobs; recent: " + ", ".join(known)) if known
                            else "this store holds no jobs yet; start one with `tomo team REQUEST`")
        if graph is None:
            graph = TaskGraph.from_dict(job_id, stored)
        elif [len(s.workers) for s in graph.stages] != [len(s["workers"]) for s in stored["stages"]]:
            raise TeamError(f"the graph given for job {job_id} does not have the stored shape "
                            f"({describe(TaskGraph.from_dict(job_id, stored).stages)})",
                            hint="resume with the graph the job was started with")
        if budget is not None:
            if budget < 1:
                raise TeamError(f"the budget must be a positive number of tokens, not {budget}", hint="--budget N")
            self.store.set_budget(job_id, budget)
            graph = TaskGraph(job_id, graph.stages, budget, graph.meta)
        else:
            record = self._record(job_id)
            graph = TaskGraph(job_id, graph.stages, record.budget, graph.meta)
        return graph

    # ---- the local orchestration -------------------------------------------------------------------------------

    async def _execute(self, graph: TaskGraph, on_stage_complete: OnStageComplete | None) -> JobResult:
        job_id = graph.job_id
        record = self._record(job_id)
        self.store.job_resumed(job_id)
        for index, stage in enumerate(graph.stages):
            stored = record.stages[index]
            if stored.status == "complete":
                continue
            stage_input = self.stage_input(record, index)
            self.store.stage_started(job_id, index, stage_input)
            todo = [w.index for w in stored.workers if w.status != "complete"]
            self.sink.emit(StageStarted(job_id, stage.name, index, len(todo)))
            await asyncio.gather(*(self.run_worker(graph, index, j, record.request, stage_input) for j in todo))
            verdict = self.finish_stage(graph, index)
            record = self._record(job_id)
            if verdict is not None:
                return self.end(job_id, *verdict)
            if on_stage_complete is not None:
                done = record.stages[index]
                result = on_stage_complete(StageResult(job_id, index, stage.name, done.output or "", done.workers))
                if inspect.isawaitable(result):
                    await result
        return self.end(job_id, "complete", "")

    def stage_input(self, record: JobRecord, index: int) -> str:
        """Stage 0 reads the request; every later stage reads the merged output of the one before."""
        return record.request if index == 0 else (record.stages[index - 1].output or "")

    def finish_stage(self, graph: TaskGraph, index: int) -> tuple[Literal["failed", "incomplete"], str] | None:
        """Merges a stage whose workers all ended and writes its checkpoint; or says why the job cannot go on."""
        job_id, stage = graph.job_id, graph.stages[index]
        stored = self._record(job_id).stages[index]
        failed = [w for w in stored.workers if w.status == "failed"]
        budget_stopped = [w for w in failed if (w.error or "").startswith(_BUDGET_WORDS)]
        skipped = [w for w in stored.workers if w.status in ("skipped", "pending", "running")]
        hard = [w for w in failed if w not in budget_stopped]
        if hard:
            self.store.stage_finished(job_id, index, status="failed", output=None)
            first = hard[0]
            return "failed", (f"stage {stage.name!r}: worker {first.index} ({first.role}) failed: {first.error}; "
                              f"fix the cause and run `tomo team resume {job_id}`")
        if budget_stopped or skipped:
            spent = self.store.tokens_spent(job_id)
            self.store.stage_finished(job_id, index, status="incomplete", output=None)
            left = len(budget_stopped) + len(skipped)
            return "incomplete", (f"the token budget ({graph.budget:,}) was spent ({spent:,} tokens used) in stage "
                                  f"{stage.name!r} with {left} worker(s) unfinished; what finished is kept: resume "
                                  f"with a larger budget, `tomo team resume {job_id} --budget N`")
        outputs = [WorkerOutput(w.index, w.role, w.output or "") for w in stored.workers]
        merged = stage.merge(outputs)
        self.store.stage_finished(job_id, index, status="complete", output=merged)
        tokens = sum(w.input_tokens + w.output_tokens for w in stored.workers)
        self.sink.emit(StageDone(job_id, stage.name, len(stored.workers), tokens))
        return None

    def end(self, job_id: str, status: Literal["complete", "failed", "incomplete"], reason: str) -> JobResult:
        self.store.job_finished(job_id, status=status, reason=reason)
        record = self._record(job_id)
        self.sink.emit(JobDone(job_id, status, reason, record.input_tokens, record.output_tokens))
        return JobResult(job_id, status, reason, _final_output(record) if status == "complete" else None, record)

    def _record(self, job_id: str) -> JobRecord:
        record = self.store.get_job(job_id)
        if record is None:
            raise TeamError(f"no job with id {job_id!r} in this store", hint="`tomo team list` shows the jobs")
        return record

    # ---- one worker ---------------------------------------------------------------------------------------------

    def _spec(self, job_id: str, stage: int, index: int, worker: Worker) -> str:
        """The model chosen when the job was created, unless this Team was told to choose again (a resume with
        --model or --roles); a process that only serves a queue needs no roles of its own."""
        if not self.rechoose:
            stored = self.store.worker_model(job_id, stage, index)
            if stored:
                return stored
        return self.chooser.spec_for(worker.role, self._explicit(worker))[0]

    def _explicit(self, worker: Worker) -> str | None:
        if worker.model:
            return worker.model
        if worker.role in self.chooser.roles:
            return None
        if worker.agent and worker.agent in self.agents:
            return self.agents[worker.agent].tier
        return None

    async def run_worker(self, graph: TaskGraph, stage_index: int, worker_index: int, request: str,
                         stage_input: str, *, executor: str = "") -> WorkerStatus:
        """Runs one worker unless the budget is spent, and writes its checkpoint (one transaction)."""
        job_id = graph.job_id
        stage = graph.stages[stage_index]
        worker = stage.workers[worker_index]
        label = worker.label
        spent = self.store.tokens_spent(job_id)
        if graph.budget is not None and spent >= graph.budget:
            reason = f"not started: the job's token budget ({graph.budget:,}) was spent ({spent:,} used)"
            self.store.workers_skipped(job_id, stage_index, [worker_index], reason)
            self.sink.emit(WorkerDone(job_id, stage.name, worker_index, label, "skipped", error=reason))
            return "skipped"
        spec = self._spec(job_id, stage_index, worker_index, worker)
        attempt = self.store.worker_started(job_id, stage_index, worker_index, spec, executor)
        self.sink.emit(WorkerStarted(job_id, stage.name, worker_index, label, spec, attempt))
        key = idempotency_key(job_id, stage_index, worker_index)
        token = context.enter(context.WorkerContext(job_id, stage_index, worker_index, label, key, attempt))
        started = time.perf_counter()
        remaining = None if graph.budget is None else graph.budget - spent
        try:
            status, output, usage, error = await self._attempt(worker, spec, key, request, stage_input,
                                                               stage_index, stage.name, remaining)
        finally:
            context.leave(token)
        self.store.worker_finished(job_id, stage_index, worker_index, status="complete" if status == "complete"
                                   else "failed", output=output, input_tokens=usage.input_tokens,
                                   output_tokens=usage.output_tokens, error=error)
        self.sink.emit(WorkerDone(job_id, stage.name, worker_index, label,
                                  "complete" if status == "complete" else "failed", usage.input_tokens,
                                  usage.output_tokens, time.perf_counter() - started, error or ""))
        return status

    async def _attempt(self, worker: Worker, spec: str, key: str, request: str, stage_input: str,
                       stage_index: int, stage_name: str, remaining: int | None,
                       ) -> tuple[WorkerStatus, str | None, Usage, str | None]:
        task = _task(request, stage_input, stage_index, stage_name)
        try:
            model = self.chooser.model(spec)
            if worker.code or self._role_codes(worker):
                return await self._code(worker, model, key, task)
            agent = self._agent_for(worker, remaining)
            outcome = await loop.run(agent, model, self.registry, self.caller, task, agent.limits, self.sink)
        except loop.RunFailed as exc:  # the model failed mid-run: what it spent before is still spent
            return "failed", exc.outcome.text or None, exc.outcome.usage, _one_line(exc)
        except ModelError as exc:
            return "failed", None, Usage(), _one_line(exc)
        except TomoError as exc:
            return "failed", None, Usage(), _one_line(exc)
        if outcome.completed:
            return "complete", outcome.text, outcome.usage, None
        if outcome.stopped_by == "tokens":
            return "budget", outcome.text or None, outcome.usage, (
                f"{_BUDGET_WORDS} before this worker finished")
        if outcome.stopped_by is not None:
            return "failed", outcome.text or None, outcome.usage, f"stopped by the loop's {outcome.stopped_by} limit"
        if outcome.truncated:
            return "failed", outcome.text or None, outcome.usage, (
                "the reply was cut off for length; raise the worker's max_tokens")
        return "failed", outcome.text or None, outcome.usage, f"the model's reply ended with {outcome.finish!r}"

    def _role_codes(self, worker: Worker) -> bool:
        conf = self.settings.roles.get(worker.role)
        return bool(conf and conf.code)

    def _agent_for(self, worker: Worker, remaining: int | None) -> Agent:
        if worker.agent:
            base = self.agents[worker.agent]
            ceiling = base.limits.max_tokens_total
            total = remaining if ceiling is None else (ceiling if remaining is None else min(ceiling, remaining))
            limits = loop.Limits(base.limits.max_steps, base.limits.max_tool_calls, total,
                                 base.limits.max_malformed, worker.max_tokens or base.limits.max_reply_tokens)
            prompt = worker.prompt or base.prompt
            return Agent(base.name, base.tier, prompt, base.tools, base.force_tools, limits)
        prompt = worker.prompt or self.settings.prompt_for(worker.role)
        limits = loop.Limits(max_steps=8, max_tokens_total=remaining, max_reply_tokens=worker.max_tokens)
        return Agent(worker.role, "balanced", prompt, (), False, limits)

    async def _code(self, worker: Worker, model: object, key: str,
                    task: str) -> tuple[WorkerStatus, str | None, Usage, str | None]:
        runner = self._code_runner
        if runner is None:
            raise ConfigError(f"worker {worker.label} is a code worker, but this team was given no code engine",
                              hint="drop code = true for this role, or build the Team with code_runner= (tomo team "
                                   "gives it the oi engine, tomo.cli.team_oi.OiRunner)")
        worktree = await code_workers.worktree_for(self.workspace, key, runner)
        prompt = worker.prompt or self.settings.prompt_for(worker.role)
        result = await runner(f"{prompt}\n\n{task}", worktree, model, self.sink)  # type: ignore[arg-type]
        diff = await code_workers.diff_of(worktree)
        return "complete", code_workers.report(result, diff, worktree), result.usage, None


_BUDGET_WORDS = "stopped by the job's token budget"


def _task(request: str, stage_input: str, stage_index: int, stage_name: str) -> str:
    if stage_index == 0:
        return f"Request:\n{request}"
    return (f"Request:\n{request}\n\nYou work in stage {stage_name!r}. What the team produced in the stage before "
            f"this one:\n\n{stage_input}")


def _one_line(exc: TomoError) -> str:
    return exc.message + (f" (hint: {exc.hint})" if exc.hint else "")


def _final_output(record: JobRecord) -> str | None:
    done = [s for s in record.stages if s.status == "complete"]
    return done[-1].output if done and len(done) == len(record.stages) else None


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "team"
