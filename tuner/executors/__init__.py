"""Executors measure configurations: here in this process (:mod:`.local`) or on Ray workers
(:mod:`.ray`). The engine hands them jobs and collects outcomes; it never knows where a job ran,
and an executor never knows which sampler chose the configuration.

One retry policy serves every executor: a job whose worker was lost (its process or node died) is
run once more; any other failure is final. A failure of the environment rather than of the
configuration (``Outcome.fault``: a full disk, a vanished work directory, db_bench killed from
outside) is neither: the engine stops the study (:func:`raise_fault`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from objectives.measurement import Measurement
from objectives.runner import EnvironmentFault, IntervalObserver
from objectives.workloads import Flag, Workload

RETRIES = 1


@dataclass(frozen=True)
class Job:
    """One configuration to measure: its flags, where its logs go, how many repeats."""

    key: str  # unique among the jobs in flight, e.g. "trial 12"
    flags: dict[str, Flag]
    log_dir: Path
    repeats: int
    observer: IntervalObserver | None = None  # per-second throughput watcher (a pruner); local only
    attempt: int = 0
    workload: Workload | None = None  # another than the study's (--confirm-scale's scale)


@dataclass
class Outcome:
    """What became of a job: a measurement, or a failure reason (``lost`` when its worker died,
    ``stopped`` at (phase, second) when its observer stopped it, ``fault`` when the environment
    failed it, see objectives.runner.EnvironmentFault)."""

    job: Job
    measurement: Measurement | None = None
    reason: str = ""
    lost: bool = False
    stopped: tuple[str, int] | None = None
    node: dict[str, Any] | None = None  # where it ran, when that is not this process
    db_bench: dict[str, Any] | None = None  # the node's db_bench, when it is not the driver's
    fault: str | None = None


def should_retry(outcome: Outcome) -> bool:
    """The retry policy: a lost worker's job runs once more."""
    return outcome.lost and outcome.job.attempt < RETRIES


def retried(job: Job) -> Job:
    return replace(job, attempt=job.attempt + 1)


def raise_fault(outcome: Outcome) -> None:
    """Raise the EnvironmentFault an outcome reports, its reason naming the job; nothing otherwise."""
    if outcome.fault is not None:
        raise EnvironmentFault(outcome.fault, f"{outcome.job.key}: {outcome.reason}")


def failure_reason(outcome: Outcome) -> str:
    """The reason a failed job gives, counting the attempts of a lost one."""
    if outcome.lost:
        return f"worker lost {outcome.job.attempt + 1} times, last: {outcome.reason}"
    return outcome.reason


class Executor(Protocol):
    """Runs up to ``slots`` jobs at once."""

    slots: int

    def submit(self, job: Job) -> None:
        """Start a job (a local executor runs it in :meth:`wait`)."""

    def wait(self, timeout: float) -> list[Outcome]:
        """Outcomes of jobs that finished, waiting up to ``timeout`` seconds for one."""

    def cancel(self) -> None:
        """Stop every job in flight (Ctrl-C); their DB directories are removed."""

    def describe(self) -> str | None:
        """One line on where jobs run, or None for this process."""

    def close(self) -> None:
        """Let go of workers and connections."""
