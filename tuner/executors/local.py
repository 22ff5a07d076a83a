"""Jobs measured one at a time in this process, by the study's backend (tuner.backends)."""

from __future__ import annotations

from objectives.runner import EnvironmentFault, RunFailed, RunStopped
from tuner.backends import Backend
from tuner.executors import Job, Outcome


class LocalExecutor:
    """One slot; :meth:`wait` runs the submitted job to its end (Ctrl-C interrupts it)."""

    slots = 1

    def __init__(self, backend: Backend):
        self.backend = backend
        self.pending: list[Job] = []

    def submit(self, job: Job) -> None:
        self.pending.append(job)

    def wait(self, timeout: float) -> list[Outcome]:
        if not self.pending:
            return []
        job = self.pending[0]
        try:
            m = self.backend.measure(job.flags, job.log_dir, job.repeats, job.observer, job.workload)
            job.log_dir.mkdir(parents=True, exist_ok=True)
            (job.log_dir / "OPTIONS").write_text(m.options_text)  # what OPTIONS.ini is made from
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
        self.pending.clear()  # the backend already killed its run and removed its DB

    def describe(self) -> str | None:
        return None

    def close(self) -> None:
        pass
