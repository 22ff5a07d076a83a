"""The study engine: baselines, then one ask -> repair -> measure -> tell loop, then re-validation.

The engine asks the sampler (through Optuna) and hands configurations to an executor as jobs; it
never knows where a job runs, and the executor never knows which sampler chose. Everything it
learns goes to the study's storage; what happens is told to observers as events with a read-only
:class:`~tuner.model.StudySnapshot`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna

from tuner.backends import BACKENDS, EnvironmentFault
from tuner.engine import _attrs as attrs
from tuner.engine._baselines import Baselines, baseline_items
from tuner.engine._budget import Budget, usage
from tuner.engine._capacity import CapacityAt, capacities
from tuner.engine._lock import StudyBusy, StudyLock
from tuner.engine._loop import TrialLoop
from tuner.engine._preload import Build, Preloading
from tuner.engine._prepare import Prepared, prepare_out
from tuner.engine._proportion import Proportion
from tuner.engine._revalidation import ATTR as REVALIDATION
from tuner.engine._revalidation import Revalidator
from tuner.engine._serial import SerialRuns
from tuner.engine._served import AtRate, finalist_server, finalists_served, serve
from tuner.engine._signals import stop_signals
from tuner.engine._storage import StudyStore
from tuner.engine._warmstart import WarmStartError, named_starts, start_words, warm_start, warm_start_auto
from tuner.events import EventBus
from tuner.executors import Executor, Jobs
from tuner.model import DEFAULT_BASELINE, StudySnapshot, UsageError
from tuner.stats import Rounds, sample_rows
from tuner.summary import (
    CapacityReport,
    FidelityAgreement,
    MemoryLimit,
    Preload,
    Revalidation,
    ServedReport,
    SlotInfo,
    Startup,
    TargetInfo,
)
from tuner.target import lsm_levels


class Engine:
    """A prepared study with its storage open and its lock held; :meth:`run` measures."""

    def __init__(self, parts: Prepared, bus: EventBus, executor: Executor, memory: MemoryLimit | None = None,
                 build: Build | None = None):
        self.parts, self.bus, self.search, self.measurement = parts, bus, parts.config.search, parts.config.measurement
        self.memory = memory  # the memory limit and how it is enforced, for the snapshot
        self.revalidation: Revalidation | None = None
        self.executor: Jobs | None = executor
        self.lock = StudyLock(parts.storage, parts.name)
        try:
            self.lock.acquire()
        except StudyBusy as exc:
            self.close()
            raise UsageError(str(exc)) from None
        try:
            prepare_out(parts.out)
            self.store = StudyStore(parts)
            self.store.fidelity(self.search.fidelity)
            self.seeded = self._seed() if not self.store.study.trials else []
        except WarmStartError as exc:
            self.close()
            raise UsageError(str(exc)) from None
        except BaseException:
            self.close()
            raise
        given = parts.workload.snapshot if self.measurement.db_snapshot and parts.workload.kind == "preloaded" else None
        self.described = BACKENDS[self.measurement.backend].describe  # its words for what it measures
        self.executor = Preloading(executor, parts.workload, self.store, bus, parts.out, build,
                                   lambda workload: self.described(workload, self.measurement), given)
        self.serial = SerialRuns(self.executor, bus.note)
        n_baselines = len(baseline_items(parts))
        self.budget = Budget(self.search.budget, parts.plan, n_baselines + 1, len(parts.space.parameters))
        self.revalidator = Revalidator(self.store, self.serial.once, bus.note, parts.out,
                                   lambda seconds: self.proportion.afford(seconds), parts.score,
                                   not self.search.any_cost, parts.space.parameters)
        self.proportion = Proportion(parts, self.store, self.budget, self.revalidator, bus.note, self.snapshot,
                                     self._spent)

    def _spent(self) -> tuple[float, float]:
        """Machine seconds spent so far (re-validation included) and a re-validation run's length."""
        used = usage(self.snapshot(), self.parts.growth, self.budget.plan.k)
        return used.spent + (self.revalidator.seconds() if self.revalidation is None else 0.0), used.revalidation_run

    def close(self) -> None:
        """Let go of the executor and release the study lock."""
        if self.executor is not None:
            self.executor.close()
            self.executor = None
        self.lock.release()

    def _seed(self) -> list[str]:
        """A new study's starts (tuner.engine._warmstart): the defaults, the user's configuration, the
        benchmark.sh-style and the hand-found configurations, then --warm-start's; kept in the study for
        the trial loop."""
        notes: list[str] = []
        optional: list[attrs.Start] = []  # the copies first, so that they keep the earlier study's order and numbers
        parts, search = self.parts, self.search
        if search.warm_start == "auto":
            note, optional = warm_start_auto(self.store, Path(search.library), search.library_exclude)
            notes.append(note)
        elif search.warm_start:
            copied = warm_start(self.store, search.warm_start)
            notes.append(f"learns from {copied} trials of {search.warm_start} (not counted, never named best)")
        required = named_starts(parts.space, parts.found, parts.workload, hand_found=search.hand_found_first,
                                defaults=search.starts and search.sampler != "grid",
                                user=parts.reference if parts.user_baseline is not None else None)
        if required:
            program = not BACKENDS[self.measurement.backend].workloads
            notes.insert(0, f"runs {', '.join(start_words(s.name, program) for s in required)} first")
        attrs.set_starts(self.store, required + optional)
        attrs.set_seeded(self.store, notes)
        return notes

    @property
    def optuna_study(self) -> optuna.Study:
        return self.store.study

    def snapshot(self) -> StudySnapshot:
        p = self.parts
        found = (self.store.baseline(n) for n, _, _ in baseline_items(p))
        slot = SlotInfo(cores=p.slot.cores, ram_bytes=p.slot.ram, pinned=p.slot.pinned, neighbours=p.slot.neighbours)
        return StudySnapshot(name=p.name, uid=attrs.uid(self.store), out=p.out, storage=p.storage, config=p.config,
                             workload=p.workload, space=p.space, score=p.score, found=p.found,
                             run_seed=p.run_seed, trials_wanted=p.trials_wanted, work_dir=p.work_dir,
                             trials=self.store.trials(), baselines=tuple(b for b in found if b is not None),
                             revalidation=self.revalidation, slot=slot, memory=self.memory, target=self._target(),
                             seeded=tuple(attrs.seeded(self.store)), preload=self.store.stored("preload", Preload),
                             startup=self.store.stored("startup", Startup),
                             fidelity_agreement=self.store.stored("fidelity_agreement", FidelityAgreement),
                             defaults=p.found.defaults, widened=p.widened, breaks=p.breaks,
                             capacity=self.store.stored("capacity", CapacityReport),
                             served=self.store.stored("served", ServedReport),
                             served_guard=finalists_served(p, self.store, self.revalidation))

    def _target(self) -> TargetInfo | None:
        """What the study tunes for, and how its trials compare with it (what was scaled, and why)."""
        p = self.parts
        if p.target is None:
            return None
        trial_data = p.workload.data_bytes()
        rows, shape = BACKENDS[p.found.backend].shape_of(p.workload, p.target)
        if not p.target.assumed and trial_data < 0.99 * p.target.data:  # not the key count's rounding
            rows.insert(0, {"option": "data", "trial": trial_data, "target": p.target.data,
                            "why": "--scale: trials smaller than the target; the re-validation confirms at the target"})
            if p.target.memory and p.memory_limit and p.memory_limit < p.target.memory:
                rows.insert(1, {"option": "memory", "trial": p.memory_limit, "target": p.target.memory,
                                "why": "the target's memory:data ratio (at least 64 MiB and what rocksdb-default "
                                       "needs)"})
        return TargetInfo.from_dict({
            **p.target.to_dict(), "trial_data_bytes": trial_data, "trial_levels": lsm_levels(trial_data, shape),
            "trial_memory_bytes": p.memory_limit, "kind": p.workload.kind,
            "duration_seconds": p.workload.duration,  # set only for workloads with timed phases
            "confirm_duration_seconds": p.plan.workload.duration if p.plan.workload else p.workload.duration,
            "confirmed_at_bytes": p.plan.workload.data_bytes() if p.plan.workload else trial_data,
            "scaled": rows}, "target")

    # -- the study --------------------------------------------------------------------------------
    def run(self, sweep_stale: Callable[[], list[Path]], at_rate: AtRate | None = None) -> StudySnapshot:
        """The preloaded DB, baselines, trials up to --trials counted ones, re-validation; the final
        snapshot. ``sweep_stale`` removes trial directories that killed tuner runs left behind; ``at_rate``,
        with --serve-rate, the backend's runs at a rate, for the re-validation's served guard. An
        EnvironmentFault stops it wherever it strikes, recording no result for what it failed."""
        self.bus.study_started(self.snapshot())
        for note in self.seeded:
            self.bus.note(f"this new study {note}")
        for note in (*self.parts.narrowed, *self.parts.widened):
            self.bus.note(f"space {self.parts.space.name}: {note}")
        for name, broken in self.parts.breaks.items():
            self.bus.note(f"space {self.parts.space.name}: {name} breaks your constraint {'; '.join(broken)}: it is "
                          "measured for the comparison, not an option for the answer")
        if self.memory is not None and self.memory.limit_bytes is not None:
            runs = self.described(self.parts.workload, self.measurement).runs
            self.bus.note(f"{runs} within {self.memory.limit_bytes / 2**20:,.0f} MiB: {self.memory.how}")
        if self.parts.memory_note:
            self.bus.note(self.parts.memory_note)
        if self.measurement.db_snapshot and self.parts.workload.kind == "preloaded":
            self.bus.note(f"every run starts on a hard-linked copy of --db-snapshot {self.parts.workload.snapshot} "
                          "(never written); the timed phases use db_bench's keys and values of the workload")
        where = self.executor.describe() if self.executor else None
        if where:
            self.bus.note(where)
        stale = sweep_stale()
        if stale:
            self.bus.note(f"removed {len(stale)} trial directories left by killed tuner runs in {self.parts.work_dir}")
        try:
            with stop_signals():  # a Ctrl-C is not lost where Python cannot raise it (tuner.engine._signals)
                self.run_baselines()
                self.proportion.announce()
                self.run_trials()
                if self.parts.plan.k:  # --revalidate K
                    snapshot = self.snapshot()
                    serve = finalist_server(self.parts, self.store, self.bus, snapshot, at_rate, self._select_ops) \
                        if at_rate is not None else None
                    self.revalidation = self.revalidator.revalidate(snapshot, self.proportion.plan(),
                                                                  self.parts.reference, serve)
        except (KeyboardInterrupt, EnvironmentFault):  # stopped, to be resumed
            self.bus.study_stopped(self.snapshot(), "KILLED")
            raise
        except BaseException:
            self.bus.study_stopped(self.snapshot(), "FAILED")
            raise
        return self.snapshot()

    def _select_ops(self) -> float | None:
        """rocksdb-default's median ops/s in the selection's rounds, once they ran beside it (else None)."""
        saved = attrs.rounds(self.store, f"{REVALIDATION}:select")
        if saved is None or DEFAULT_BASELINE not in saved.samples:
            return None
        return sample_rows(saved, {DEFAULT_BASELINE: {"flags": {}}})[0].median("ops_per_sec")

    def run_baselines(self) -> None:
        """Measure each baseline once per study, as the trials run (tuner.engine._baselines)."""
        assert self.executor is not None
        Baselines(self.parts, self.store, self.executor, self.bus, self.snapshot).run()

    def run_trials(self) -> None:
        """Trials until --trials are counted or the --budget is spent (tuner.engine._loop)."""
        assert self.executor is not None
        TrialLoop(self.parts, self.store, self.executor, self.bus, self.budget, self.snapshot).run()

    def run_capacity(self, capacity_at: CapacityAt) -> StudySnapshot:
        """--slo: the capacity stage (tuner.engine._capacity), after the re-validation, its searches from
        the study's --rate, else from --serve-rate's rate (``auto`` when not given), on the function
        ``capacity_at`` gives for that start; the final snapshot."""
        capacities(self.parts, self.store, self.bus, self.snapshot(), capacity_at)
        return self.snapshot()

    def run_served(self, at_rate: AtRate) -> StudySnapshot:
        """--serve-rate: the answer and rocksdb-default at a rate (tuner.engine._served); the final snapshot."""
        serve(self.parts, self.store, self.bus, self.snapshot(), at_rate)
        return self.snapshot()

    def measure_interleaved(self, entries: dict[str, dict[str, Any]], rounds: int, attr: str,
                            what: str) -> Rounds:
        """Each entry's flags measured once per round, interleaved (see Revalidator.interleaved)."""
        return self.revalidator.interleaved(entries, rounds, attr, what)
