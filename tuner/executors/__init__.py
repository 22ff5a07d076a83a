"""Executors measure configurations: here in this process (:mod:`._local`) or on Ray workers
(:mod:`._ray`). The engine hands them jobs and collects outcomes; it never knows where a job ran,
and an executor never knows which sampler chose the configuration. A new executor (Slurm,
Kubernetes: docs/architecture.md) is one file with a class following :class:`Executor`, reusing
the worker's side (:class:`TaskSpec`, :func:`measure_task`, :func:`outcome_of`, from :mod:`._task`), and a
line in :data:`EXECUTORS`. The protocol (:mod:`.base`) is public; the other modules are private, what
they offer exported here.
"""

from __future__ import annotations

from tuner.executors._local import LocalExecutor
from tuner.executors._ray import RayExecutor
from tuner.executors._task import TaskSpec, measure_task, outcome_of
from tuner.executors.base import (
    Executor,
    ExecutorError,
    Job,
    Jobs,
    Note,
    Outcome,
    Slot,
    failure_reason,
    keep_options,
    raise_fault,
    settle,
)
from tuner.model import ExecutionConfig, UsageError

EXECUTORS: dict[str, type[Executor]] = {
    "local": LocalExecutor,
    "ray": RayExecutor,
}


def executor_class(execution: ExecutionConfig) -> type[Executor]:
    """Where a study's trials run: --executor, else Ray with --parallel > 1 or --ray-address, else
    this process."""
    name = execution.executor or ("ray" if execution.on_ray else "local")
    if name not in EXECUTORS:
        raise UsageError(f"--executor: unknown {name!r} (choose from {', '.join(EXECUTORS)})")
    return EXECUTORS[name]


__all__ = ["EXECUTORS", "Executor", "ExecutorError", "Job", "Jobs", "LocalExecutor", "Note", "Outcome", "RayExecutor", "Slot",
           "TaskSpec", "executor_class", "failure_reason", "keep_options", "measure_task", "outcome_of", "raise_fault",
           "settle"]
