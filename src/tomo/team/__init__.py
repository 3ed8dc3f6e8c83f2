"""team: a task graph of roles (planner, researcher, implementer, tester, reviewer) that survives crashes.

Stages run in order and the workers of a stage in parallel; a merge turns a stage's outputs into the next stage's
input; every finished worker and stage is a checkpoint in the job store (:mod:`tomo.store.jobs`), so a job killed at
any point resumes without calling a finished worker again. ``--backend dbos`` runs the same graph on DBOS.
"""

from tomo.team.context import current_worker, idempotency_key
from tomo.team.graph import (
    MERGES,
    Stage,
    TaskGraph,
    Worker,
    WorkerOutput,
    merge_concat,
    merge_under_headers,
    parse_stages,
)
from tomo.team.roles import ROLE_PROMPTS, ModelChooser, TeamSettings, check_roles, parse_roles
from tomo.team.runner import JobResult, StageResult, Team, TeamError

__all__ = [
    "MERGES",
    "ROLE_PROMPTS",
    "JobResult",
    "ModelChooser",
    "Stage",
    "StageResult",
    "TaskGraph",
    "Team",
    "TeamError",
    "TeamSettings",
    "Worker",
    "WorkerOutput",
    "check_roles",
    "current_worker",
    "idempotency_key",
    "merge_concat",
    "merge_under_headers",
    "parse_roles",
    "parse_stages",
]
