"""The Python API, and the one place (with the CLI, which uses it) that wires a study together:
the engine, the executor its trials run on, the observers of its events, and its outputs.

    from tuner import tune
    result = tune(workload="fillrandom", space="default", trials=20, sampler="tpe", seed=1)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna

from objectives.runner import Runner
from tuner.engine import Engine, Prepared, check_values, prepare, pruner_of, score_of
from tuner.events import EventBus, Observer
from tuner.executors import Executor
from tuner.executors.local import LocalExecutor
from tuner.executors.ray import ParallelError, RayExecutor
from tuner.model import StudySnapshot, TuneConfig, TuneResult, UsageError
from tuner.observers.mlflow import TrackingError, make_tracker
from tuner.observers.progress import ConsoleProgress, SilentProgress
from tuner.outputs.plots import write_plots
from tuner.outputs.report import write_outputs


class Study:
    """A study ready to run: inputs checked, db_bench probed, storage opened and locked.

    ``Study(TuneConfig(...), progress).run()`` measures baselines and trials, writes the outputs
    and returns the :class:`TuneResult`."""

    def __init__(self, config: TuneConfig, progress: Observer | None = None):
        check_values(config)
        score = score_of(config)
        try:
            self.tracker = make_tracker(config.mlflow, config.mlflow_uri, config.experiment)
        except TrackingError as exc:
            raise UsageError(str(exc)) from None
        self.parts: Prepared = prepare(config, score, pruner_of(config, score))
        self.runner = Runner(self.parts.db_bench, work_dir=self.parts.work_dir, timeout=config.trial_timeout)
        observers: list[Observer] = [progress or SilentProgress()]
        if self.tracker is not None:
            observers.append(self.tracker)
        self.bus = EventBus(observers)
        self.engine = Engine(self.parts, self.bus, self._executor)

    def _executor(self, parts: Prepared, bus: EventBus) -> Executor:
        if not parts.config.on_ray:
            return LocalExecutor(self.runner, parts.workload, parts.db_bench_seed)
        executor = RayExecutor(parts.config, parts.workload, parts.db_bench, parts.db_bench_seed, bus.note)
        try:
            executor.start()
        except ParallelError as exc:
            executor.close()
            raise UsageError(str(exc)) from None
        return executor

    @property
    def name(self) -> str:
        return self.parts.name

    @property
    def out(self) -> Path:
        return self.parts.out

    @property
    def config(self) -> TuneConfig:
        return self.parts.config

    @property
    def optuna_study(self) -> optuna.Study:
        return self.engine.optuna_study

    def snapshot(self) -> StudySnapshot:
        return self.engine.snapshot()

    def run(self) -> TuneResult:
        """Baselines, trials, re-validation; then summary, OPTIONS.ini, comparison and plots."""
        try:
            try:
                snapshot = self.engine.run(self.runner.sweep_stale)
            except TrackingError as exc:  # the store refused the study's parent run
                raise UsageError(str(exc)) from None
            try:
                result = write_outputs(snapshot, self.tracker.link(snapshot.uid) if self.tracker else None)
                plots = self._plots(snapshot)
            except KeyboardInterrupt:
                self.bus.study_stopped(snapshot, "KILLED")
                raise
            except BaseException:
                self.bus.study_stopped(snapshot, "FAILED")
                raise
            self.bus.study_finished(snapshot, result, plots)
            return result
        finally:
            self.close()

    def _plots(self, snapshot: StudySnapshot) -> Path | None:
        if not self.config.plots:
            return None
        dest, notes = write_plots(snapshot)
        for note in notes:
            self.bus.note(f"plot {note}")
        return dest

    def measure_interleaved(self, entries: dict[str, dict[str, Any]], rounds: int, attr: str,
                            what: str) -> dict[str, Any]:
        """Each entry's flags measured once per round, interleaved, saved in the study as ``attr``."""
        return self.engine.measure_interleaved(entries, rounds, attr, what)

    def close(self) -> None:
        """Release the study lock and the executor (a finished run has done so already)."""
        self.engine.close()


def tune(**kwargs: Any) -> TuneResult:
    """Run a study from a tuning script: ``tune(workload="fillrandom", trials=20, sampler="tpe")``.

    Keyword arguments are the fields of :class:`TuneConfig`; progress goes to stderr unless a
    ``progress`` observer is given.
    """
    progress = kwargs.pop("progress", None) or ConsoleProgress()
    return Study(TuneConfig(**kwargs), progress).run()
