"""What every measurement backend is: given a configuration and where its logs go, run it and
return its metrics (in the spirit of Optuna's ``BaseSampler``). A new backend is one subclass in a
file of this package and one line in :data:`tuner.backends.BACKENDS`."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from objectives.measurement import Measurement
from objectives.runner import IntervalObserver, Runner
from objectives.workloads import Flag, Workload


@dataclass(frozen=True)
class Setup:
    """What a study gives its backend (tuner.api builds it once the study is prepared)."""

    work_dir: Path  # where run directories (and their DBs) are made, and removed
    timeout: float  # seconds one run may take (--trial-timeout)
    seed: int  # the run's seed (--seed, else 1)
    options_keys: dict[str, str]  # the searched parameters' flag -> OPTIONS key
    workload: Workload | None = None  # the db_bench workload the study runs
    runner: Runner | None = None  # db_bench's runner
    command: str | None = None  # --command's template


class Backend(abc.ABC):
    """Measures configurations. :meth:`measure` raises RunFailed (the configuration's failure, one
    line of reason) or EnvironmentFault (objectives.runner) instead of returning a Measurement; the
    executor keeps the Measurement's OPTIONS text as ``log_dir/OPTIONS``."""

    name: ClassVar[str]
    per_second: ClassVar[bool] = False  # measure() takes a per-second observer: pruners work
    runs_workloads: ClassVar[bool] = False  # it runs db_bench workloads: --workload, --fidelity, targets, Ray
    needs_command: ClassVar[bool] = False  # it runs --command

    def __init__(self, setup: Setup):
        self.setup = setup

    @abc.abstractmethod
    def measure(self, flags: dict[str, Flag], log_dir: Path, repeats: int, observer: IntervalObserver | None = None,
                workload: Workload | None = None) -> Measurement:
        """Run the configuration ``flags`` (db_bench flag names, as the space's parameters give them)
        ``repeats`` times, logs under ``log_dir``; ``workload`` another than the study's (db_bench only)."""
