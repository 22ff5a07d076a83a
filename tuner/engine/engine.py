"""The study engine: baselines, then one ask -> repair -> measure -> tell loop, then re-validation.

The engine asks the sampler (through Optuna) and hands configurations to an executor as jobs; it
never knows where a job runs, and the executor never knows which sampler chose. Everything it
learns goes to the study's storage; what happens is told to observers as events with a read-only
:class:`~tuner.model.StudySnapshot`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import optuna

from objectives.runner import IntervalObserver, RunFailed
from tuner.engine.lock import StudyBusy, StudyLock
from tuner.engine.measurer import Measurer
from tuner.engine.prepare import Prepared, prepare_out
from tuner.engine.revalidation import Remeasure
from tuner.engine.storage import StudyStore
from tuner.engine.warmstart import WarmStartError, enqueue_hand_found, warm_start
from tuner.events import EventBus
from tuner.executors import Executor, Job, retried, should_retry
from tuner.model import DEFAULT_BASELINE, DEFAULT_BASELINE_DOC, StudySnapshot, UsageError, trial_log_dir
from tuner import ranking
from tuner.stats import spread

@dataclass
class _Running:
    trial: optuna.Trial
    params: dict[str, Any]
    started: float


class Engine:
    """A prepared study with its storage open and its lock held; :meth:`run` measures."""

    def __init__(self, parts: Prepared, bus: EventBus, executor: Executor, memory: dict[str, Any] | None = None):
        self.parts, self.bus, self.config = parts, bus, parts.config
        self.memory = memory  # the memory limit and how it is enforced, for the snapshot
        self.revalidation: dict[str, Any] | None = None
        self.executor: Executor | None = executor
        self.lock = StudyLock(parts.storage, parts.name)
        try:
            self.lock.acquire()
        except StudyBusy as exc:
            self.close()
            raise UsageError(str(exc)) from None
        try:
            prepare_out(parts.out)
            self.store = StudyStore(parts)
            self.seeded = self._seed() if not self.store.study.trials else []
        except WarmStartError as exc:
            self.close()
            raise UsageError(str(exc)) from None
        except BaseException:
            self.close()
            raise
        self.measurer = Measurer(executor, bus.note)
        self.remeasure = Remeasure(self.store, self.measurer.once, bus.note, parts.out)

    def close(self) -> None:
        """Let go of the executor and release the study lock."""
        if self.executor is not None:
            self.executor.close()
            self.executor = None
        self.lock.release()

    def _seed(self) -> list[str]:
        """A new study runs the hand-found configurations first and learns from --warm-start's trials."""
        notes = [f"runs {name} first" for name in enqueue_hand_found(self.store)] if self.config.hand_found_first else []
        if self.config.warm_start:
            copied = warm_start(self.store, self.config.warm_start)
            notes.append(f"learns from {copied} trials of {self.config.warm_start} (not counted, never named best)")
        return notes

    @property
    def optuna_study(self) -> optuna.Study:
        return self.store.study

    def snapshot(self) -> StudySnapshot:
        p = self.parts
        baselines = tuple(self.store.attr(f"baseline:{n}") for n, _, _ in self._baselines()
                          if self.store.attr(f"baseline:{n}") is not None)
        return StudySnapshot(name=p.name, uid=self.store.attr("uid"), out=p.out, storage=p.storage, config=p.config,
                             workload=p.workload, space=p.space, score=p.score, db_bench=p.db_bench,
                             db_bench_seed=p.db_bench_seed, trials_wanted=p.trials_wanted, work_dir=p.work_dir,
                             trials=self.store.trials(), baselines=baselines, revalidation=self.revalidation,
                             slot=p.slot.to_dict(), memory=self.memory)

    # -- the study --------------------------------------------------------------------------------
    def run(self, sweep_stale: Callable[[], list[Path]]) -> StudySnapshot:
        """Baselines, trials up to --trials counted ones, re-validation; the final snapshot.
        ``sweep_stale`` removes trial directories that killed tuner runs left behind."""
        self.bus.study_started(self.snapshot())
        for note in self.seeded:
            self.bus.note(f"this new study {note}")
        if self.memory:
            self.bus.note(f"scored phases run within {self.memory['limit_bytes'] / 2**20:,.0f} MiB: {self.memory['how']}")
        where = self.executor.describe() if self.executor else None
        if where:
            self.bus.note(where)
        stale = sweep_stale()
        if stale:
            self.bus.note(f"removed {len(stale)} trial directories left by killed tuner runs in {self.parts.work_dir}")
        try:
            self.run_baselines()
            self.run_trials()
            if self.config.revalidate:
                self.revalidation = self.remeasure.revalidate(self.snapshot(), self.parts.plan, self.parts.reference)
        except KeyboardInterrupt:
            self.bus.study_stopped(self.snapshot(), "KILLED")
            raise
        except BaseException:
            self.bus.study_stopped(self.snapshot(), "FAILED")
            raise
        return self.snapshot()

    def _baselines(self) -> list[tuple[str, dict[str, Any], str]]:
        items = [(DEFAULT_BASELINE, {}, DEFAULT_BASELINE_DOC)]
        if self.parts.user_baseline is not None:
            flags, doc = self.parts.user_baseline
            items.append((self.parts.reference.name, flags, doc))
        if self.config.baselines:
            items += [(b.name, b.flags, b.doc) for b in self.parts.workload.baselines]
        return items

    def run_baselines(self) -> None:
        """Measure each baseline once per study (kept in the study, so a resume skips them)."""
        for name, flags, doc in self._baselines():
            key = f"baseline:{name}"
            if self.store.attr(key) is not None:
                continue
            self.bus.baseline_started(name)
            log_dir = self.parts.out / "baselines" / name.replace(":", "-")
            record: dict[str, Any] = {"name": name, "flags": flags, "doc": doc, "log_dir": str(log_dir)}
            started = time.monotonic()
            try:
                m = self.measurer.measure(Job(key, flags, log_dir, self.config.repeats))
                record.update(state="COMPLETE", metrics=m.metrics, phases=m.details, commands=m.commands)
                if m.repeats:
                    record.update(repeats=m.repeats, spread_ops_per_sec=spread([r["ops_per_sec"] or 0.0 for r in m.repeats]))
            except RunFailed as exc:
                record.update(state="FAIL", reason=exc.reason, metrics={})
            record["seconds"] = round(time.monotonic() - started, 2)
            record["ended"] = time.time()
            self.store.set_attr(key, record)
            self.bus.baseline_done(self.snapshot(), record)

    def run_trials(self) -> None:
        """The loop: keep the executor's slots busy with asked configurations until --trials trials
        are counted; tell each outcome as it arrives."""
        assert self.executor is not None
        running: dict[str, _Running] = {}
        wanted = self.parts.trials_wanted
        try:
            while (counted := ranking.counted(self.store.trials())) + len(running) < wanted or running:
                if len(running) < self.executor.slots and counted + len(running) < wanted:
                    self._start_trial(running, counted)
                    continue
                for outcome in self.executor.wait(timeout=1.0):
                    job = outcome.job
                    if should_retry(outcome):
                        self.bus.note(f"{job.key}: {outcome.reason}; retrying it once")
                        running[job.key].trial.set_user_attr(f"lost_attempt_{job.attempt}", outcome.reason)
                        self.executor.submit(retried(job))
                        continue
                    entry = running.pop(job.key)
                    self.store.record(entry.trial, entry.params, outcome, time.monotonic() - entry.started)
                    snapshot = self.snapshot()
                    self.bus.trial_done(snapshot, snapshot.trials[entry.trial.number],
                                        time.monotonic() - entry.started)
        except KeyboardInterrupt:
            self.executor.cancel()
            for entry in running.values():
                self.store.interrupted(entry.trial)
            raise

    def _start_trial(self, running: dict[str, _Running], counted: int) -> None:
        """Ask for a configuration; a feasible one is submitted, a rejected one repaired."""
        asked = self._ask()
        if asked is None:
            return
        trial, params = asked
        self.bus.trial_started(trial.number, counted + len(running) + 1, self.parts.trials_wanted, params)
        observer = _pruning_observer(trial) if self.config.pruner != "none" else None
        job = Job(f"trial {trial.number}", self.parts.space.flags(params), trial_log_dir(self.parts.out, trial.number),
                  self.config.repeats, observer)
        running[job.key] = _Running(trial, params, time.monotonic())
        self.executor.submit(job)  # type: ignore[union-attr]

    def _ask(self) -> tuple[optuna.Trial, dict[str, Any]] | None:
        """The sampler's next configuration, or None when it broke a constraint.

        A proposal that breaks a constraint is never run: it is told as a FAIL with outcome
        "rejected", and the nearest feasible configuration (see SearchSpace.repair) is enqueued as
        the next trial. Samplers that ignore failed trials (GP) would otherwise propose it forever.
        """
        trial = self.store.study.ask()
        params = self.parts.space.suggest(trial)
        violations = self.parts.space.violations(params)
        if not violations:
            trial.set_user_attr("log_dir", str(trial_log_dir(self.parts.out, trial.number)))
            return trial, params
        self.store.reject(trial, violations)
        if self.parts.repair_rejected:
            repaired = self.parts.space.repair(params, seed=trial.number)
            self.store.study.enqueue_trial(repaired, user_attrs={"repaired_from": trial.number})
        self.bus.trial_rejected(self.snapshot(), trial.number, violations[0])
        return None

    def measure_interleaved(self, entries: dict[str, dict[str, Any]], rounds: int, attr: str,
                            what: str) -> dict[str, Any]:
        """Each entry's flags measured once per round, interleaved (see Remeasure.interleaved)."""
        return self.remeasure.interleaved(entries, rounds, attr, what)


def _pruning_observer(trial: optuna.Trial) -> IntervalObserver:
    """Reports the scored phases' mean ops/s so far at each second; True when the pruner says stop."""
    seen: list[float] = []

    def observe(_phase: str, _second: int, qps: float) -> bool:
        seen.append(qps)
        trial.report(sum(seen) / len(seen), len(seen))
        return trial.should_prune()

    return observe
