"""Progress of a study on stderr: a bar with the best so far and an ETA, one line per trial."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

from optuna.trial import FrozenTrial

from objectives.scores import label
from tuner.backends import BACKENDS
from tuner.events import Observer
from tuner.fmt import fmt_duration, fmt_ops, fmt_value
from tuner.model import StudySnapshot, TuneResult
from tuner.trials import BaselineRecord, TrialRecord


class SilentProgress(Observer):
    """Reports nothing; the base of every progress reporter."""


Progress = SilentProgress


class ConsoleProgress(SilentProgress):
    """Lines on stderr; on a terminal also a tqdm bar whose postfix shows the best so far."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.bar: Any = None
        self.durations: list[float] = []
        self.initial = 0  # trials already measured when the study started (a resume)
        self.parallel = 1  # trials in flight at once
        self.started = time.monotonic()  # reset by study_started

    def _line(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def study_started(self, snapshot: StudySnapshot) -> None:
        s, build, measurement = snapshot, snapshot.build, snapshot.config.measurement
        measured = BACKENDS[measurement.backend].describe(s.workload, measurement).measured
        self._line(f"study {s.name}: {measured}, space {s.space.name}, sampler {s.config.search.sampler}, "
                   f"{s.score.describe()}")
        used = f"{build.program} {build.version} at {build.path} ({build.kind}); " if build is not None else ""
        self._line(f"{used}storage {s.storage}")
        if s.defaults is not None:
            flags = s.defaults.command_line()
            self._line(f"every run starts from {s.defaults.describe()}" + (f": {flags}" if flags else ""))
        if build is not None and build.warning:
            self._line(f"WARNING: {build.warning}")
        done = s.counted()
        self.durations, self.initial = [], done  # one Progress may serve several studies in turn
        self.started = time.monotonic()
        self.parallel = max(1, s.config.execution.parallel)
        if done:
            of = f" of {s.trials_wanted}" if s.config.search.trials is not None else ""
            self._line(f"resuming: {done}{of} trials already measured")
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=s.trials_wanted if s.config.search.trials is not None else None, initial=done,
                            file=self.stream, unit="trial", dynamic_ncols=True, leave=True)

    def note(self, text: str) -> None:
        self._line(text)

    def baseline_started(self, name: str) -> None:
        self._line(f"baseline {name}: running")

    def baseline_done(self, snapshot: StudySnapshot, record: BaselineRecord) -> None:
        beside = f", beside {record.neighbours} other run(s) as a trial" if record.neighbours else ""
        if record.complete:
            self._line(f"baseline {record.name}: {_measured(snapshot, record.metrics)} ({record.seconds or 0.0:.0f}s"
                       f"{beside})")
        else:
            self._line(f"baseline {record.name}: FAILED: {record.reason}")

    def trial_rejected(self, snapshot: StudySnapshot, number: int, reason: str) -> None:
        self._line(f"trial {number}: not run, breaks {reason}")

    def trial_done(self, snapshot: StudySnapshot, trial: FrozenTrial, seconds: float) -> None:
        best, total = snapshot.best(), snapshot.trials_wanted
        self.durations.append(seconds)
        done = len(self.durations)
        remaining = total - self.initial - done
        per_trial = sum(self.durations) / done / min(self.parallel, max(remaining, 1))
        eta = fmt_duration(remaining * per_trial) if remaining > 0 else "0s"
        budget = snapshot.config.search.budget
        if budget:  # machine time, not trials, decides: say how much of it is spent
            spent = snapshot.machine_seconds().total
            eta = (f"{fmt_duration(max(0.0, budget - spent) / self.parallel)} "
                   f"({fmt_duration(spent)} of the {fmt_duration(budget)} budget spent)")
        metric = snapshot.score.metric
        best_text = (f"best {fmt_value(TrialRecord.of(best).metric(metric))} {label(metric)} (trial {best.number})"
                     if best else "best -")
        record = TrialRecord.of(trial)
        if record.outcome == "complete" and record.metrics is not None:
            what = _measured(snapshot, record.metrics)
        elif record.outcome == "pruned" and record.pruned_at is not None:
            at = record.pruned_at
            so_far = trial.intermediate_values.get(max(trial.intermediate_values, default=0))
            where = f"at {at.phase}" if at.second is None else f"after {at.second} s of {at.phase}"
            what = f"pruned {where}" + (f" ({fmt_ops(so_far)} ops/s so far)" if so_far is not None else "") + (
                f" by {record.pruned_by}" if record.pruned_by else "")
        else:
            what = f"FAILED: {record.fail_reason or '?'}"
        self._line(f"trial {trial.number}: {what} ({seconds:.0f}s) | {best_text} | ETA {eta}")
        if self.bar is not None:
            self.bar.set_postfix_str(best_text, refresh=False)
            self.bar.update(1)

    def study_finished(self, snapshot: StudySnapshot, result: TuneResult, plots: Path | None) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self._line(f"done in {fmt_duration(time.monotonic() - self.started)}; wrote {result.out / 'summary.json'}"
                   f", {result.out / 'OPTIONS.ini'} and {result.out / 'comparison.md'}")
        mlflow = result.summary.mlflow
        if mlflow:
            self._line(f"MLflow: parent run {mlflow.run_id} in experiment {mlflow.experiment_id} of "
                       f"{mlflow.uri} (review it with: rocksdb-tuner ui)")


_OWN = ("wall_seconds",)  # what the command backend adds to a program's metrics (the line gives the run's seconds)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _measured(snapshot: StudySnapshot, m: dict[str, float | None]) -> str:
    """A run's figures: the study's metric first when it is another than ops/s, then ops/s, P99, write amp;
    a program's, the study's metric first, then the others it reported (those its backend shows), by their names."""
    metric = snapshot.score.metric
    backend = BACKENDS[snapshot.config.measurement.backend]
    if not backend.workloads:
        named = sorted((k for k, v in m.items() if v is not None and k not in _OWN
                        and (backend.shown is None or k in backend.shown or k == metric)),
                       key=lambda k: (k != metric, backend.shown.index(k) if backend.shown and k in backend.shown else 0))
        return ", ".join(f"{k} {fmt_value(m[k])}" for k in named)
    own = "" if metric in ("ops_per_sec", "p99_us", "write_amp") else f"{metric} {fmt_value(m.get(metric))}, "
    return (f"{own}{fmt_ops(m.get('ops_per_sec'))} ops/s, P99 {_num(m.get('p99_us'))} us, "
            f"write amp {_num(m.get('write_amp'))}")
