"""The db_bench backend: the study's workload run by objectives.runner on this host's db_bench."""

from __future__ import annotations

from pathlib import Path

from objectives.measurement import Measurement, measure
from objectives.runner import IntervalObserver
from objectives.workloads import Flag, Workload
from tuner.backends.base import Backend


class DbBenchBackend(Backend):
    name = "db_bench"
    per_second = True
    runs_workloads = True

    def _measure(self, flags: dict[str, Flag], log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Workload | None) -> Measurement:
        setup = self.setup
        assert setup.runner is not None and setup.workload is not None
        return measure(setup.runner, workload or setup.workload, flags, log_dir, repeats, setup.seed, observer,
                       setup.metric)
