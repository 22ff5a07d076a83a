"""Runs one configuration at a time and waits for it (the re-validation's rounds, alone), on the study's
executor and under the same retry policy as the trial loop; an environment fault stops the study.
(The baselines run as the trials do: tuner.engine._baselines.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from objectives.contract import Task
from search_spaces.config import Config
from tuner.backends import Measurement, RunFailed
from tuner.executors import Job, Jobs, Outcome, failure_reason, settle


class SerialRuns:
    """Submits a job, waits for its outcome, runs a lost one once more; raises RunFailed, or
    EnvironmentFault for a failure that is not the configuration's."""

    def __init__(self, executor: Jobs, note: Callable[[str], None]):
        self.executor, self.note = executor, note

    def run(self, job: Job) -> Measurement:
        self.executor.submit(job)
        while True:
            outcome = self._wait_for(job.key)
            again = settle(outcome, self.executor, self.note)
            if again is not None:
                job = again
                continue
            if outcome.measurement is None:
                raise RunFailed(failure_reason(outcome))
            return outcome.measurement

    def once(self, key: str, config: Config, log_dir: Path, workload: Task | None = None) -> Measurement:
        """One run of a configuration (re-validation rounds), of another workload when given."""
        return self.run(Job(key, config, log_dir, 1, workload=workload))

    def _wait_for(self, key: str) -> Outcome:
        while True:
            for outcome in self.executor.wait(timeout=1.0):
                if outcome.job.key == key:
                    return outcome
