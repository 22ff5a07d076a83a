"""A configuration measured: the workload run ``repeats`` times, each on a fresh DB, and represented
by one real run: the one with the median of the study's metric, ops/s unless --objective names
another (the lower of the two middle ones for an even count), so that its ops/s, P99 and write amp
come from the same run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from objectives.contract import IntervalObserver, Measurement, representative
from objectives.flags import Flag
from objectives.metrics import metrics_of, phase_details
from objectives.runner import Runner, RunResult
from objectives.workloads import Workload


def measure(runner: Runner, workload: Workload, flags: Mapping[str, Flag], log_dir: Path, repeats: int, seed: int,
            observer: IntervalObserver | None = None, metric: str = "ops_per_sec") -> Measurement:
    """Run the workload ``repeats`` times one after the other; with repeats, run i logs to
    ``log_dir/repeat-i``. ``observer`` (a pruner's) watches the first run only. Raises RunFailed
    or RunStopped like :meth:`Runner.run`."""
    runs: list[RunResult] = []
    for i in range(repeats):
        where = log_dir if repeats == 1 else log_dir / f"repeat-{i}"
        runs.append(runner.run(workload, flags, where, seed=seed, observer=observer if i == 0 else None))
    operations = {p.name: p.operations for p in workload.phases if p.operations}
    each = [metrics_of(r, operations) for r in runs]
    pick = representative(each, metric)
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "OPTIONS").write_text(runs[pick].options_text)
    return Measurement(each[pick], phase_details(runs[pick]), runs[pick].options_text, runs[pick].commands,
                       each if repeats > 1 else [], representative=pick)
