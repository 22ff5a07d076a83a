"""Executors measure configurations: here in this process (:mod:`.local`) or on Ray workers
(:mod:`.ray`). The engine hands them jobs and collects outcomes; it never knows where a job ran,
and an executor never knows which sampler chose the configuration. A new executor (Slurm,
Kubernetes: docs/architecture.md) is one file with a class following :class:`Executor`, reusing
the worker's side in :mod:`.task`, and a line in :data:`EXECUTORS`.
"""

from __future__ import annotations

from tuner.executors.base import (Executor, ExecutorError, Job, Note, Outcome, Slot, failure_reason, keep_options,
                                  raise_fault, retried, should_retry)
from tuner.executors.local import LocalExecutor
from tuner.executors.ray import RayExecutor
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


__all__ = ["EXECUTORS", "Executor", "ExecutorError", "Job", "LocalExecutor", "Note", "Outcome", "RayExecutor", "Slot",
           "executor_class", "failure_reason", "keep_options", "raise_fault", "retried", "should_retry"]
