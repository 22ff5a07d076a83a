"""A configuration measured: the workload run ``repeats`` times, each on a fresh DB; median metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from objectives.metrics import median_metrics, phase_details, summarize
from objectives.runner import IntervalObserver, Runner, RunResult
from objectives.workloads import Flag, Workload


@dataclass
class Measurement:
    """Median metrics, the first run's phase details, the OPTIONS file and commands, each repeat's metrics."""

    metrics: dict[str, float | None]
    details: list[dict[str, object]]
    options_text: str
    commands: list[list[str]]
    repeats: list[dict[str, float | None]] = field(default_factory=list)


def measure(runner: Runner, workload: Workload, flags: dict[str, Flag], log_dir: Path, repeats: int, seed: int,
            observer: IntervalObserver | None = None) -> Measurement:
    """Run the workload ``repeats`` times one after the other; with repeats, run i logs to
    ``log_dir/repeat-i``. ``observer`` (a pruner's) watches the first run only. Raises RunFailed
    or RunStopped like :meth:`Runner.run`."""
    runs: list[RunResult] = []
    for i in range(repeats):
        where = log_dir if repeats == 1 else log_dir / f"repeat-{i}"
        runs.append(runner.run(workload, flags, where, seed=seed, observer=observer if i == 0 else None))
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "OPTIONS").write_text(runs[-1].options_text)
    each = [summarize(r) for r in runs]
    return Measurement(median_metrics(each), phase_details(runs[0]), runs[-1].options_text, runs[0].commands,
                       each if repeats > 1 else [])
