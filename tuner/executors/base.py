"""What every executor is (:class:`Executor`), the jobs it runs and the outcomes it returns, and the
one retry policy: a job whose worker was lost (its process or node died) is run once more; any
other failure is final. A failure of the environment rather than of the configuration
(``Outcome.fault``: a full disk, a vanished work directory, db_bench killed from outside) is
neither: the engine stops the study (:func:`settle` applies all three).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from objectives.contract import Task
from tuner.backends import Backend, Config, EnvironmentFault, Found, IntervalObserver, Measurement
from tuner.model import ExecutionConfig, TuneConfig
from tuner.summary import Build
from tuner.trials import TrialNode

RETRIES = 1


@dataclass(frozen=True)
class Job:
    """One configuration to measure, where its logs go, how many repeats."""

    key: str  # unique among the jobs in flight, e.g. "trial 12"
    config: Config
    log_dir: Path
    repeats: int
    observer: IntervalObserver | None = None  # per-second throughput watcher (a pruner); local only
    attempt: int = 0
    workload: Task | None = None  # another than the study's (--confirm-scale's scale)


@dataclass
class Outcome:
    """What became of a job: a measurement, or a failure reason (``lost`` when its worker died,
    ``stopped`` at (phase, second) when its observer stopped it, ``fault`` when the environment
    failed it, see tuner.backends.EnvironmentFault; ``broken`` when the program broke its backend's
    contract, see tuner.backends.ContractBroken)."""

    job: Job
    measurement: Measurement | None = None
    reason: str = ""
    lost: bool = False
    stopped: tuple[str, int] | None = None
    node: TrialNode | None = None  # where it ran, when that is not this process
    build: Build | None = None  # what the node measured with, when it is not the driver's
    fault: str | None = None
    broken: tuple[str, str] | None = None  # the run broke its backend's contract: (flag, what), RunFailed.broken


def keep_options(job: Job, measurement: Measurement) -> None:
    """The OPTIONS a measured job ran with, as ``log_dir/OPTIONS`` (what OPTIONS.ini is made from)."""
    job.log_dir.mkdir(parents=True, exist_ok=True)
    (job.log_dir / "OPTIONS").write_text(measurement.options_text)


def settle(outcome: Outcome, jobs: Jobs, note: Note) -> Job | None:
    """The retry policy, applied to an outcome: a lost worker's job is submitted once more to ``jobs``
    (and returned, its attempt counted); an environment fault raises EnvironmentFault naming the job;
    otherwise None: the outcome is final, a measurement or a failure."""
    if outcome.lost and outcome.job.attempt < RETRIES:
        note(f"{outcome.job.key}: {outcome.reason}; retrying it once")
        job = replace(outcome.job, attempt=outcome.job.attempt + 1)
        jobs.submit(job)
        return job
    raise_fault(outcome)
    return None


def raise_fault(outcome: Outcome) -> None:
    """Raise the EnvironmentFault an outcome reports, its reason naming the job; nothing otherwise."""
    if outcome.fault is not None:
        raise EnvironmentFault(outcome.fault, f"{outcome.job.key}: {outcome.reason}")


def failure_reason(outcome: Outcome) -> str:
    """The reason a failed job gives, counting the attempts of a lost one."""
    if outcome.lost:
        return f"worker lost {outcome.job.attempt + 1} times, last: {outcome.reason}"
    return outcome.reason


class ExecutorError(ValueError):
    """An executor cannot run this study (e.g. Ray is missing, a node lacks db_bench); the message
    names the flag."""


@dataclass(frozen=True)
class Slot:
    """What one trial may use: the cores it is pinned to and its share of memory. A serial study's
    slot is the host; with --parallel, a worker's cores and its node's memory divided among trials.
    ``neighbours``: how many other jobs may run beside a trial at once on a node, sharing its disk,
    memory bandwidth and page cache (0: none, e.g. one at a time, or one per node); the study then
    measures its baselines beside as many (tuner.engine._baselines)."""

    cores: int
    ram: int
    pinned: bool = False  # the trial's db_bench is pinned to ``cores`` distinct cores
    neighbours: int = 0


class Jobs(Protocol):
    """What the engine runs trials with: up to ``slots`` jobs at once, submitted and waited for (an
    :class:`Executor`, or the engine's wrapper of one)."""

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


class Executor(Jobs, Protocol):
    """Runs up to ``slots`` jobs at once. Built as ``Executor(execution, found, note)`` (the study's
    :class:`~tuner.model.ExecutionConfig`, what its backend found on this host, :meth:`Backend.find`,
    the db_bench its nodes must match among it; a :data:`Note` prints one line to the user);
    tuner.api calls :meth:`start`, prepares the study for the slot it returns, then calls
    :meth:`bind`; the engine submits jobs and waits for their outcomes."""

    remote: bool  # jobs run in other processes or on other hosts (memory limits are then the nodes')

    def __init__(self, execution: ExecutionConfig, found: Found | None, note: Note) -> None: ...

    @classmethod
    def check(cls, config: TuneConfig) -> None:
        """Refuse settings this executor cannot honour (UsageError naming the flag), before any work;
        the whole request, since another part may be what it cannot honour (e.g. --pruner)."""

    def start(self) -> Slot:
        """Reach and check the workers (ExecutorError naming the flag); what one trial may use there."""

    def bind(self, backend: Backend) -> None:
        """What every job measures with: the study's backend, prepared on this host (a remote executor
        rebuilds it on each worker from its class and setup, :class:`~tuner.executors.TaskSpec`).
        The study tears it down, not the executor."""


Note = Callable[[str], None]  # an executor's way to print one line to the user
