"""Jobs measured one at a time in this process, by the runner on this host's db_bench."""

from __future__ import annotations

from objectives.measurement import measure
from objectives.runner import EnvironmentFault, Runner, RunFailed, RunStopped
from objectives.workloads import Workload
from tuner.executors import Job, Outcome


class LocalExecutor:
    """One slot; :meth:`wait` runs the submitted job to its end (Ctrl-C interrupts it)."""

    slots = 1

    def __init__(self, runner: Runner, workload: Workload, seed: int):
        self.runner, self.workload, self.seed = runner, workload, seed
        self.pending: list[Job] = []

    def submit(self, job: Job) -> None:
        self.pending.append(job)

    def wait(self, timeout: float) -> list[Outcome]:
        if not self.pending:
            return []
        job = self.pending[0]
        try:
            m = measure(self.runner, job.workload or self.workload, job.flags, job.log_dir, job.repeats, self.seed,
                        job.observer)
            outcome = Outcome(job, measurement=m)
        except RunStopped as exc:
            outcome = Outcome(job, reason=str(exc), stopped=(exc.phase, exc.second))
        except RunFailed as exc:
            outcome = Outcome(job, reason=exc.reason)
        except EnvironmentFault as exc:
            outcome = Outcome(job, reason=exc.reason, fault=exc.fault)
        self.pending.pop(0)
        return [outcome]

    def cancel(self) -> None:
        self.pending.clear()  # the runner already killed db_bench and removed its DB

    def describe(self) -> str | None:
        return None

    def close(self) -> None:
        pass
