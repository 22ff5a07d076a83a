"""A configuration measured: the workload run ``repeats`` times, each on a fresh DB, and represented
by one real run: the one with the median of the study's metric, ops/s unless --objective names
another (the lower of the two middle ones for an even count), so that its ops/s, P99 and write amp
come from the same run."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from objectives.metrics import phase_details, summarize
from objectives.runner import IntervalObserver, Runner, RunResult
from objectives.workloads import Flag, Workload


@dataclass
class Measurement:
    """The representative run's metrics, phase details, OPTIONS file and commands; each repeat's metrics."""

    metrics: dict[str, float | None]
    details: list[dict[str, Any]]
    options_text: str
    commands: list[list[str]]
    repeats: list[dict[str, float | None]] = field(default_factory=list)
    representative: int = 0  # which repeat the metrics are from


def representative(each: list[dict[str, float | None]], metric: str = "ops_per_sec") -> int:
    """Which repeat stands for all: the one with the median ``metric`` (the lower middle one of an even
    count; a NaN, which the backend's check then refuses, is found as itself; a missing value counts 0)."""
    values = [m.get(metric) or 0.0 for m in each]
    return values.index(statistics.median_low(values))


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
    each = [summarize(r, operations) for r in runs]
    pick = representative(each, metric)
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "OPTIONS").write_text(runs[pick].options_text)
    return Measurement(each[pick], phase_details(runs[pick]), runs[pick].options_text, runs[pick].commands,
                       each if repeats > 1 else [], representative=pick)
