"""Jobs measured one at a time in this process, by the study's backend (tuner.backends)."""

from __future__ import annotations

from search_spaces import host_cores, host_ram_bytes
from tuner.backends import Backend, EnvironmentFault, Found, RunFailed, RunStopped
from tuner.executors.base import Job, Note, Outcome, Slot, keep_options
from tuner.model import ExecutionConfig, TuneConfig, UsageError


class LocalExecutor:
    """One slot, the whole host; :meth:`wait` runs the submitted job to its end (Ctrl-C interrupts it)."""

    slots = 1
    remote = False

    def __init__(self, execution: ExecutionConfig | None = None, found: Found | None = None,
                 note: Note | None = None):
        self.backend: Backend | None = None  # set by bind()
        self.pending: list[Job] = []

    @classmethod
    def check(cls, config: TuneConfig) -> None:
        execution = config.execution
        for flag, given in (("--parallel", execution.parallel > 1), ("--ray-address", execution.ray_address)):
            if given:
                raise UsageError(f"{flag}: runs trials on Ray; --executor local runs one at a time in this process")

    def start(self) -> Slot:
        return Slot(host_cores(), host_ram_bytes())

    def bind(self, backend: Backend) -> None:
        self.backend = backend

    def submit(self, job: Job) -> None:
        self.pending.append(job)

    def wait(self, timeout: float) -> list[Outcome]:
        if not self.pending:
            return []
        assert self.backend is not None, "bind() first"
        job = self.pending[0]
        try:
            m = self.backend.measure(job.config, job.log_dir, job.repeats, job.observer, job.workload)
            keep_options(job, m)
            outcome = Outcome(job, measurement=m)
        except RunStopped as exc:
            outcome = Outcome(job, reason=str(exc), stopped=(exc.phase, exc.second))
        except RunFailed as exc:
            outcome = Outcome(job, reason=exc.reason, broken=exc.broken)
        except EnvironmentFault as exc:
            outcome = Outcome(job, reason=exc.reason, fault=exc.fault)
        self.pending.pop(0)
        return [outcome]

    def cancel(self) -> None:
        self.pending.clear()  # the backend already killed its run and removed its DB

    def describe(self) -> str | None:
        return None

    def close(self) -> None:
        self.backend = None  # the study tears its backend down
