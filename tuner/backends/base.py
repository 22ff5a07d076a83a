"""What every measurement backend is: given a configuration and where its logs go, run it and
return its metrics (in the spirit of Optuna's ``BaseSampler``). A new backend is one subclass in a
file of this package and one line in :data:`tuner.backends.BACKENDS`. Every backend's metrics pass
:func:`check_metrics` before the engine sees them."""

from __future__ import annotations

import abc
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from objectives.measurement import Measurement
from objectives.runner import IntervalObserver, RunFailed, Runner
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
    needs: tuple[str, ...] = ("ops_per_sec",)  # the metrics every run must report (the score's: Score.needed)
    load: str | None = None  # --load's template: builds the program's DB once per study (the command backend)
    logs: Path | None = None  # where the backend's set-up (a --load) keeps its logs: the study's --out

    @property
    def metric(self) -> str:
        """The score's first metric (``needs`` lists it first): the median of repeats is taken of it."""
        return self.needs[0] if self.needs else "ops_per_sec"


_MISSING = re.compile(r"(\w+): missing, and the study's score needs it")


def check_metrics(metrics: dict[str, float | None], needs: tuple[str, ...]) -> None:
    """RunFailed naming the first metric that is missing though ``needs`` has it (and those the run
    reported), not a finite number, or negative (ops_per_sec: not above 0), e.g. ``ops_per_sec = inf:
    not a finite number``."""
    for name in needs:
        if metrics.get(name) is None:
            reported = ", ".join(sorted(k for k, v in metrics.items() if v is not None))
            raise RunFailed(f"{name}: missing, and the study's score needs it (the run reported {reported or 'none'})")
    for name, value in metrics.items():
        if value is None:
            continue
        if not math.isfinite(value):
            raise RunFailed(f"{name} = {value:g}: not a finite number")
        if value < 0 or (name == "ops_per_sec" and value == 0):
            raise RunFailed(f"{name} = {value:g}: must be {'> 0' if name == 'ops_per_sec' else '>= 0'}")


def missing_metric(reason: str) -> str | None:
    """The metric a run's failure ``reason`` (from :func:`check_metrics`) says is missing, else None."""
    match = _MISSING.match(reason)
    return match[1] if match else None


class Backend(abc.ABC):
    """Measures configurations. :meth:`measure` raises RunFailed (the configuration's failure, one
    line of reason) or EnvironmentFault (objectives.runner) instead of returning a Measurement; the
    executor keeps the Measurement's OPTIONS text as ``log_dir/OPTIONS``. A subclass implements
    :meth:`_measure`."""

    name: ClassVar[str]
    per_second: ClassVar[bool] = False  # measure() takes a per-second observer: pruners work
    runs_workloads: ClassVar[bool] = False  # it runs db_bench workloads: --workload, --fidelity, targets, Ray
    needs_command: ClassVar[bool] = False  # it runs --command

    def __init__(self, setup: Setup):
        self.setup = setup

    def measure(self, flags: dict[str, Flag], log_dir: Path, repeats: int, observer: IntervalObserver | None = None,
                workload: Workload | None = None) -> Measurement:
        """Run the configuration ``flags`` (db_bench flag names, as the space's parameters give them)
        ``repeats`` times, logs under ``log_dir``; ``workload`` another than the study's (db_bench only).
        Each repeat's metrics pass :func:`check_metrics`, or the run fails."""
        m = self._measure(flags, log_dir, repeats, observer, workload)
        for metrics in m.repeats or [m.metrics]:
            check_metrics(metrics, self.setup.needs)
        return m

    def close(self) -> None:  # noqa: B027 (an optional hook: most backends set up nothing to remove)
        """Remove what the backend set up for the study (e.g. the DB --load built); nothing by default."""

    @abc.abstractmethod
    def _measure(self, flags: dict[str, Flag], log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Workload | None) -> Measurement:
        """The backend's own measurement, as :meth:`measure` describes it, before its metrics are checked."""
