"""The Python API, and the one place (with the CLI, which uses it) that wires a study together:
the engine, the executor its trials run on, the observers of its events, and its outputs.

    from tuner import tune
    result = tune(workload="fillrandom", space="default", trials=20, sampler="tpe", seed=1)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna

from objectives.contract import Task
from objectives.rates import Capacity, Rate, parse_slo
from objectives.scores import Bound
from objectives.workdir import sweep_stale
from tuner.backends import BACKENDS, Backend, Config, Found, Setup
from tuner.engine import CapacityOfConfig, Engine, Prepared, ServeConfig, check_values, prepare, pruner_of, score_of
from tuner.events import EventBus, Observer
from tuner.executors import ExecutorError, executor_class
from tuner.model import StudySnapshot, TuneConfig, TuneResult, UsageError
from tuner.observers import ConsoleProgress, SilentProgress, TrackingError, make_tracker
from tuner.outputs import write_outputs, write_plots
from tuner.stats import Rounds
from tuner.summary import MemoryLimit


class Study:
    """A study ready to run: inputs checked, its backend found and prepared (db_bench probed, its
    runner and memory cgroups, when the backend runs db_bench), storage opened and locked.

    ``Study(TuneConfig(...), progress).run()`` measures baselines and trials, writes the outputs
    and returns the :class:`TuneResult`."""

    def __init__(self, config: TuneConfig, progress: Observer | None = None):
        check_values(config)
        score = score_of(config.search, BACKENDS[config.measurement.backend])
        try:
            self.tracker = make_tracker(config.tracking)
        except TrackingError as exc:
            raise UsageError(str(exc)) from None
        pruner = pruner_of(config.search, score)
        execution, measurement = config.execution, config.measurement
        found = BACKENDS[measurement.backend].find(config)  # per study, before the request is prepared
        observers: list[Observer] = [progress or SilentProgress()]
        if self.tracker is not None:
            observers.append(self.tracker)
        self.bus = EventBus(observers)
        executor = executor_class(execution)(execution, found, self.bus.note)
        try:
            try:
                slot = executor.start()  # before anything is written: Ray or a node may refuse
            except ExecutorError as exc:
                raise UsageError(str(exc)) from None
            self.parts: Prepared = prepare(config, score, pruner, found, slot)
            try:
                self.backend: Backend = BACKENDS[measurement.backend](self._setup(found))
                self.backend.prepare()  # per study, on this host
                self.served: list[Backend] = []  # the backends of --serve-rate and a db_bench study's --slo
                self._serving: dict[tuple[float, float], Callable[[], Backend]] = {}  # --serve-rate's, by rate and length
                reval = config.revalidation
                slo = measurement.slo is not None and self.backend.serves  # its capacity on the served backend
                if reval.serve_rate is not None or slo:  # refused now, not after the study, if it cannot run
                    self.backend.at_rate(Rate(1.0), reval.serve_duration, *self._target,
                                         "--serve-rate" if reval.serve_rate is not None else "--slo")
            except ValueError as exc:  # the backend refuses its setup (e.g. a --command it cannot run)
                raise UsageError(str(exc)) from None
            executor.bind(self.backend)
        except BaseException:
            executor.close()
            raise
        self.remote = executor.remote
        self.engine = Engine(self.parts, self.bus, executor, self._memory(), self.backend.preload)

    def _setup(self, found: Found) -> Setup:
        """What the study's backend (--backend) measures with: what it found, the workload, the metrics its
        score needs, the memory limit and the preloaded DBs runs start from."""
        p, measurement = self.parts, self.parts.config.measurement
        return Setup(p.work_dir, measurement.trial_timeout, p.run_seed, p.workload, measurement.command,
                     p.score.needed, measurement.load, found, p.memory_limit, tuple(self._preloaded),
                     Rate(measurement.rate, measurement.read_rate, arrivals=measurement.arrivals,
                          background=measurement.background_priority)
                     if measurement.rate is not None else None,
                     parse_slo(measurement.slo) if p.score.objective == "capacity" and measurement.slo else None)

    def _memory(self) -> MemoryLimit | None:
        limit = self.parts.memory_limit
        if limit is None:
            return None
        how = self.backend.memory_how(self.remote)
        deployment = self.parts.config.target
        source = "--memory-limit" if deployment.memory_limit else "--target-memory" if deployment.target_memory else \
            f"workload data / {self.parts.workload.data_to_memory:g} (data_to_memory)"
        return MemoryLimit(limit_bytes=limit, how=how, source=source)

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
                keep = tuple(path.parent for path in self.backend.setup.preloaded)
                serving = self.config.revalidation.serve_rate is not None
                snapshot = self.engine.run(lambda: sweep_stale(self.parts.work_dir, keep),
                                           self._at_rate if serving else None)
                if self.config.measurement.slo:
                    snapshot = self.engine.run_capacity(self._capacity_at)
                if serving:
                    snapshot = self.engine.run_served(self._at_rate)
                sweep_stale(self.parts.work_dir, keep)  # what a killed run's workers left, if they outlived its start
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

    @property
    def _preloaded(self) -> list[Path]:
        """The preloaded DBs the study built, which the trials and the re-validation at the target start
        from (not a --db-snapshot: the user's)."""
        workloads = (self.parts.workload, self.parts.plan.workload)
        return [Path(w.snapshot) for w in workloads if w is not None and w.kind == "preloaded" and w.snapshot
                and not self.parts.config.measurement.db_snapshot]

    def _plots(self, snapshot: StudySnapshot) -> Path | None:
        if not self.config.tracking.plots:
            return None
        dest, notes = write_plots(snapshot)
        for note in notes:
            self.bus.note(f"plot {note}")
        return dest

    def measure_interleaved(self, entries: dict[str, dict[str, Any]], rounds: int, attr: str,
                            what: str) -> Rounds:
        """Each entry's flags measured once per round, interleaved, saved in the study as ``attr``."""
        return self.engine.measure_interleaved(entries, rounds, attr, what)

    @property
    def _target(self) -> tuple[int, int | None]:
        """The data of the DB the answer is for and the memory it runs in: the target's, else the trials'."""
        target = self.parts.target
        if target is None:
            return self.parts.workload.data_bytes(), self.parts.memory_limit
        return target.data, target.memory or self.parts.memory_limit

    def _capacity_at(self, start: float) -> CapacityOfConfig:
        """--slo: one configuration's capacity search. A rate study's backend searches from its --rate
        (``start``); a db_bench study's from ``start`` ops/s open loop on the backend --serve-rate runs on,
        each rate one --serve-duration run on the DB both stages share (:meth:`_on_driver`)."""
        if self.backend.needs_rate:
            return self.backend.capacity
        served = self._on_driver(start, self.config.revalidation.serve_duration, "capacity")

        def capacity(config: Config, slo: Bound, log_dir: Path, workload: Task | None,
                     say: Callable[[str], None], last: float | None, held_before: float | None) -> Capacity:
            # its own runs: never the study's workload
            return served().capacity(config, slo, log_dir, None, say, last, held_before)
        return capacity

    def _at_rate(self, rate: float, duration: float) -> ServeConfig:
        """--serve-rate: one run of a configuration at ``rate`` writes/s for ``duration`` s on the backend's
        ``at_rate`` (:meth:`_on_driver`: one per rate and length, which the re-validation's served guard and
        the last stage share)."""
        if (rate, duration) not in self._serving:
            self._serving[rate, duration] = self._on_driver(rate, duration, "served")
        served = self._serving[rate, duration]

        def run(config: Config, log_dir: Path) -> dict[str, float]:
            metrics = served().measure(config, log_dir, 1).metrics
            return {k: float(v) for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        return run

    def _on_driver(self, rate: float, duration: float, stage: str) -> Callable[[], Backend]:
        """The backend's ``at_rate`` backend at ``rate`` writes/s, ``duration`` s per run, within the
        target's memory: built now (torn down at :meth:`close`), prepared at its first use, when it also
        loads the DB of the target's data unless a stage before loaded it (the capacity and served stages
        run on one DB; the load's logs in OUT/<stage>/load)."""
        served = self.backend.at_rate(Rate(rate), duration, *self._target)
        self.served.append(served)
        ready: list[Backend] = []

        def backend() -> Backend:
            if not ready:
                workload = served.setup.workload
                assert workload is not None and workload.snapshot is not None
                served.prepare()
                if not Path(workload.snapshot).is_dir():
                    served.preload(workload, self.parts.out / stage / "load")
                ready.append(served)
            return served
        return backend

    def close(self) -> None:
        """Release the study lock and the executor, and tear the backends down: what they built for the
        study (preloaded DBs: a resume builds them again; the DB --load built) is removed (a finished run
        has done so already)."""
        self.engine.close()
        for backend in (self.backend, *self.served):
            backend.teardown()


def tune(**kwargs: Any) -> TuneResult:
    """Run a study from a tuning script: ``tune(workload="fillrandom", trials=20, sampler="tpe")``.

    Keyword arguments are :class:`TuneConfig`'s: its parts' fields by name (or a part whole);
    progress goes to stderr unless a ``progress`` observer is given.
    """
    progress = kwargs.pop("progress", None) or ConsoleProgress()
    return Study(TuneConfig(**kwargs), progress).run()
