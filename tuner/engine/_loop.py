"""The one trial loop: ask -> repair -> measure -> tell, with up to the executor's slots in flight.

The sampler proposes (through Optuna's ask); a proposal that breaks a constraint is told as rejected
and its nearest feasible neighbour enqueued; a feasible one is a job for the executor; outcomes are
told as they arrive, under the retry policy. With --fidelity a configuration first climbs the rungs
(smaller data sizes), and successive halving decides at each whether it goes on; the first
configurations climb them all unpruned, and a rung that ranks them unlike the full size is skipped
from then on (tuner.rungs).

With a --budget, a trial still running when the search's share of it is spent is stopped and told
pruned (:func:`_observer`), so that one very slow configuration cannot overrun the budget. A trial
whose drain has already held its throughput under half the defaults' (:data:`HOPELESS`) is stopped
there too: it is no candidate, and waiting for its compactions would only spend the budget.

Ctrl-C, and a failure of the environment rather than of the configuration (an EnvironmentFault: a
full disk, a vanished work directory, db_bench killed from outside), stop the loop: the jobs in
flight are cancelled and their trials told "interrupted", which no sampler learns from and
--trials does not count; after a fault their configurations are enqueued to run again on resume.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import optuna
from optuna.trial import TrialState

from tuner import options_file, ranking, rungs
from tuner.backends import EnvironmentFault, IntervalObserver
from tuner.engine import _attrs as attrs
from tuner.engine._budget import Budget, Growth, usage
from tuner.engine._prepare import Prepared
from tuner.engine._storage import StudyStore
from tuner.engine._warmstart import STARTS_SHARE, next_start
from tuner.events import EventBus
from tuner.executors import Job, Jobs, Outcome, settle
from tuner.model import DEFAULT_BASELINE, WARM_START_PROVENANCE, StudySnapshot, trial_log_dir
from tuner.samplers import Startup, provenance, startup_size
from tuner.summary import FidelityAgreement
from tuner.summary import Startup as StartupSize
from tuner.trials import RungRun, TrialRecord, record, record_lost_attempt, record_rung
from tuner.trials import attrs as trial_attrs

# --fidelity: rung i reports its ops/s as Optuna's intermediate value at step RUNG_BASE ** i.
RUNG_BASE = rungs.REDUCTION
RUNG_METRICS = ("ops_per_sec", "burst_ops_per_sec", "p99_us", "write_amp")  # what a rung's run keeps (RungRun)
# A trial maximizing ops/s is stopped in its drain once its operations over the seconds it has run fall
# under this share of rocksdb-default's search run: its score can only fall further, and an answer must beat
# the defaults (what such trials cost the default jobs: docs/search.md#trials-that-cannot-be-the-answer).
HOPELESS = 0.5


@dataclass
class _Running:
    trial: optuna.Trial
    params: dict[str, Any]
    started: float
    rung: int = 0


class TrialLoop:
    """Runs a study's trials until --trials are counted or the --budget would be exceeded."""

    def __init__(self, parts: Prepared, store: StudyStore, executor: Jobs, bus: EventBus, budget: Budget,
                 snapshot: Callable[[], StudySnapshot]):
        self.parts, self.store, self.executor, self.bus, self.budget = parts, store, executor, bus, budget
        self.search, self.snapshot = parts.config.search, snapshot

    def run(self) -> None:
        """Keep the executor's slots busy with asked configurations; tell each outcome as it
        arrives (with --fidelity, a configuration climbs the rungs first)."""
        running: dict[str, _Running] = {}
        self._size_startup()
        try:
            while True:
                counted = ranking.counted(self.store.trials())
                if len(running) < self.executor.slots and self._may_start(counted, len(running)):
                    self._start_trial(running, counted)
                    continue
                if not running:
                    return
                for outcome in self.executor.wait(timeout=1.0):
                    self._arrived(running, outcome)
        except KeyboardInterrupt:
            pass  # told below, once the handler is left
        except EnvironmentFault as exc:
            self._stop(running, f"not the configuration's failure: {exc}", rerun=True)
            raise
        # Only after Ctrl-C, outside its handler: a Ctrl-C inside a storage read leaves the read's cursor in the
        # traceback, and its lock refuses every write until the traceback is freed (StudyStore.after_interrupt).
        self._stop(running, "interrupted by the user (Ctrl-C)", rerun=False)
        raise KeyboardInterrupt

    def _stop(self, running: dict[str, _Running], reason: str, rerun: bool) -> None:
        """Cancel the jobs in flight; their trials are told interrupted (``rerun``: to run again)."""
        self.executor.cancel()
        self.store.after_interrupt()
        for entry in running.values():
            self.store.interrupted(entry.trial, reason, rerun)

    def _expected(self, counted: int, running: int) -> int | None:
        """The trials expected to count: --trials, or what --budget allows (None before a run's length is known)."""
        if self.search.budget is None:
            return self.parts.trials_wanted
        used = usage(self.snapshot(), self.parts.growth, self.budget.plan.k)
        left = self.budget.trials_left(used.spent, used.per_run, running, used.revalidation_run)
        return None if left is None else min(self.parts.trials_wanted, counted + running + left)

    def _size_startup(self) -> None:
        """Size the sampler's start-up (random initial points, starts included) to the trials expected,
        once the baselines measured a run's length; decided once and kept for a resume."""
        sampler = self.parts.sampler
        if not isinstance(sampler, Startup):
            return
        size = (self.store.stored("startup", StartupSize) or StartupSize()).size
        if size is None:
            expected = self._expected(ranking.counted(self.store.trials()), 0)
            if expected is None:
                return
            size = startup_size(expected)
            self.store.keep("startup", StartupSize(expected_trials=expected, size=size))
            self.bus.note(f"the sampler's model proposes after {size} trials (starts and random initial "
                          f"points), a quarter of the {expected} expected")
        sampler.size = size

    def _may_start(self, counted: int, running: int) -> bool:
        if counted + running >= self.parts.trials_wanted:
            return False
        used = usage(self.snapshot(), self.parts.growth, self.budget.plan.k)
        return self.budget.allows(used.spent, used.per_run, running, used.revalidation_run)

    def _arrived(self, running: dict[str, _Running], outcome: Outcome) -> None:
        job = outcome.job
        if settle(outcome, self.executor, self.bus.note) is not None:
            record_lost_attempt(running[job.key].trial, job.attempt, outcome.reason)
            return
        entry = running.pop(job.key)
        if self._climbed(entry, outcome, running):
            return
        self.store.record(entry.trial, entry.params, outcome, time.monotonic() - entry.started)
        _note_not_applied(self.store, self.bus, entry.trial)
        self._judge_rungs()
        snapshot = self.snapshot()
        self.bus.trial_done(snapshot, snapshot.trials[entry.trial.number], time.monotonic() - entry.started)

    def _climbed(self, entry: _Running, outcome: Outcome, running: dict[str, _Running]) -> bool:
        """With --fidelity, a measured rung below the top: reported (Optuna's intermediate value at step
        RUNG_BASE ** rung), then pruned by successive halving (told, True) or run at the next rung
        (resubmitted, True); False otherwise. Audit configurations are never pruned."""
        ladder = self.parts.rungs
        if not ladder or entry.rung == len(ladder) - 1 or outcome.measurement is None:
            return False
        trial, metrics = entry.trial, outcome.measurement.metrics
        scale, value = ladder[entry.rung].scale, metrics.get("ops_per_sec") or 0.0
        trial.report(value, RUNG_BASE ** entry.rung)
        limits = [d["memory"]["memory_limit_bytes"] for d in outcome.measurement.details if d.get("memory")]
        record_rung(trial, entry.rung, RungRun(scale, **{k: metrics.get(k) for k in RUNG_METRICS},
                                               memory_limit_bytes=max(limits, default=None)))
        trials = self.store.trials()
        if not TrialRecord.of(trial).audit and not rungs.promoted(value, rungs.rivals(trials, entry.rung, trial.number)):
            estimate = rungs.full_size_estimate(value, rungs.audit_pairs(trials, entry.rung))
            if estimate is not None:  # the model learns how far below the rest it ran, not only that it did
                record(trial, value_estimate=estimate)
            self.store.pruned(trial, f"scale {scale:g}", None, time.monotonic() - entry.started)
            snapshot = self.snapshot()
            self.bus.trial_done(snapshot, snapshot.trials[trial.number], time.monotonic() - entry.started)
            return True
        entry.rung += 1
        job = replace(outcome.job, workload=ladder[entry.rung], attempt=0,
                      log_dir=trial_log_dir(self.parts.out, trial.number) / f"rung-{entry.rung}")
        record(trial, log_dir=str(job.log_dir))  # the highest rung's logs and OPTIONS file
        running[job.key] = entry
        self.executor.submit(job)
        return True

    def _start_trial(self, running: dict[str, _Running], counted: int) -> None:
        """Ask for a configuration; a feasible one is submitted, a rejected one repaired."""
        self._queue_start(counted, len(running))
        asked = self._ask()
        if asked is None:
            return
        trial, params = asked
        self.bus.trial_started(trial.number, counted + len(running) + 1, self.parts.trials_wanted, params)
        observer = _observer(trial, self.search.pruner != "none", self.budget, self.snapshot, bool(self.parts.rungs),
                             self.parts.growth, _hopeless(self.parts, self.store) if self.budget.seconds else None)
        ladder, first = self.parts.rungs, self._first_rung(trial)
        log_dir = trial_log_dir(self.parts.out, trial.number) / (f"rung-{first}" if ladder else "")
        if ladder:
            record(trial, log_dir=str(log_dir))  # the highest rung's logs and OPTIONS file
        job = Job(f"trial {trial.number}", self.parts.space.config(params), log_dir,
                  self.parts.config.measurement.repeats, observer, workload=ladder[first] if ladder else None)
        running[job.key] = _Running(trial, params, time.monotonic(), first)
        self.executor.submit(job)

    def _first_rung(self, trial: optuna.Trial) -> int:
        """With --fidelity, the rung a new configuration starts at: the first ones climb every rung
        unpruned (an audit), then the lowest rung that ranks as the full size does (tuner.rungs)."""
        if not self.parts.rungs:
            return 0
        decided = self.store.stored("fidelity_agreement", FidelityAgreement)
        if decided is not None:
            return decided.start_rung
        if rungs.auditing(self.store.trials()) < rungs.AUDITED:
            record(trial, audit=True)
        return 0

    def _judge_rungs(self) -> None:
        """Once the audit configurations are measured at the full size, judge each rung's agreement
        with it, once (a resume keeps the judgement)."""
        if not self.parts.rungs or self.store.stored("fidelity_agreement", FidelityAgreement) is not None:
            return
        trials = self.store.trials()
        if len(rungs.audited(trials)) < rungs.AUDITED:
            return
        decided = rungs.judge(trials, list((self.search.fidelity or ())[:-1]))
        self.store.keep("fidelity_agreement", decided)
        self.bus.note(rungs.describe(decided))

    def _queue_start(self, counted: int, running: int) -> None:
        """Enqueue the study's next start (tuner.engine._warmstart.next_start), unless a configuration
        waits already (a repaired proposal, or a start a killed run had enqueued)."""
        queue = attrs.starts(self.store)
        trials = self.store.trials()
        if not queue or any(t.state == TrialState.WAITING for t in trials):
            return
        expected = self._expected(counted, running)
        start, left_out = next_start(queue, trials, expected)
        if start is not None:
            self.store.study.enqueue_trial(start.params, user_attrs=trial_attrs(
                enqueued=start.name, provenance=WARM_START_PROVENANCE if start.optional else "start"))
        elif left_out:
            note = (f"left out {', '.join(left_out)}: the starts may take at most {100 * STARTS_SHARE:.0f} % of the "
                    f"{expected} trials expected, the rest is the sampler's")
            attrs.set_seeded(self.store, [*attrs.seeded(self.store), note])
            self.bus.note(note)

    def _ask(self) -> tuple[optuna.Trial, dict[str, Any]] | None:
        """The sampler's next configuration, or None when it broke a constraint.

        A proposal that breaks a constraint is never run: it is told as a FAIL with outcome
        "rejected", and the nearest feasible configuration (see SearchSpace.repair) is enqueued as
        the next trial. Samplers that ignore failed trials (GP) would otherwise propose it forever.
        """
        trial = self.store.study.ask()
        params = self.parts.space.suggest(trial)  # Optuna consults the sampler at the first suggestion
        if TrialRecord.of(trial).provenance is None:  # not a start, a warm start or a repaired proposal
            record(trial, provenance=provenance(self.parts.sampler, self.search.sampler, trial.number))
        violations = self.parts.space.violations(params)
        if not violations:
            record(trial, log_dir=str(trial_log_dir(self.parts.out, trial.number)))
            return trial, params
        self.store.reject(trial, violations)
        then = "the grid point is skipped"
        if self.parts.repair_rejected:
            repaired = self.parts.space.repair(params, seed=trial.number)
            self.store.study.enqueue_trial(repaired, user_attrs=trial_attrs(
                repaired_from=trial.number, provenance="neighbour of a rejected proposal"))
            then = "the nearest feasible configuration runs next"
        self.bus.trial_rejected(self.snapshot(), trial.number, f"{violations[0]}; {then}")
        return None


def _hopeless(parts: Prepared, store: StudyStore) -> float | None:
    """The ops/s under which a trial's drain stops it in a study with a --budget (:data:`HOPELESS` of
    rocksdb-default's search run), when it maximizes ops/s on runs of one size; else None. Without a budget
    every trial asked for runs to its end: --trials N measures N configurations."""
    baseline = store.baseline(DEFAULT_BASELINE)
    if parts.score.objective != "throughput" or parts.rungs or baseline is None:
        return None
    ops = baseline.metrics.get("ops_per_sec") if baseline.state == "COMPLETE" else None
    return HOPELESS * ops if ops else None


def _note_not_applied(store: StudyStore, bus: EventBus, trial: optuna.Trial) -> None:
    """Say once, at the first trial that shows it, which searched options the measured DB did not take
    as asked (its OPTIONS file, the block cache's capacity from its LOG)."""
    mismatch = TrialRecord.of(trial).options_mismatch
    if mismatch and not attrs.options_not_applied(store):
        attrs.set_options_not_applied(store, sorted(options_file.mismatched(mismatch)))
        bus.note(f"trial {trial.number}: not applied as asked: {'; '.join(mismatch)}; left out of the importance "
                 "and the why")


def _observer(trial: optuna.Trial, prunes: bool, budget: Budget, snapshot: Callable[[], StudySnapshot],
              rungs: bool, growth: Growth, hopeless: float | None = None) -> IntervalObserver | None:
    """The run's watcher: the pruner's on the scored phases; with a --budget a guard that stops a trial
    still running, in any phase, when the search's share of the budget is spent (:meth:`Budget.search_left`): such a
    configuration is many times slower than the median and would otherwise overrun the budget (a
    random point of S2 ran 119 s against a 6 s median and overran a 116 s budget by 95 s); and with
    ``hopeless`` (ops/s) one that stops a trial in its drain once its operations over the seconds it has
    run are fewer: its sustained ops/s can only fall further. A stopped trial is told pruned, with its
    mean ops/s so far reported, drain seconds as 0 (unless the pruner or --fidelity's rungs report), so
    the samplers learn it as bad."""
    pruning = _pruning_observer(trial) if prunes else None
    if budget.seconds is None and hopeless is None:
        return pruning
    limit = None
    if budget.seconds is not None:
        used = usage(snapshot(), growth, budget.plan.k)
        limit = budget.search_left(used.spent, used.per_run, used.revalidation_run)
    reports, started, seen = pruning is None and not rungs, time.monotonic(), []
    done: dict[str, float] = {}  # each scored phase's operations so far

    def observe(phase: str, second: int, qps: float | None) -> bool:
        if qps is not None:
            if pruning is not None and pruning(phase, second, qps):
                return True
            done[phase] = done.get(phase, 0.0) + qps
        scored = phase in done  # it reported operations: an unscored phase (a load) never does
        if reports and scored:
            seen.append(qps or 0.0)
            trial.report(sum(seen) / len(seen), len(seen))
        if qps is None and scored and hopeless is not None and done[phase] / second < hopeless:
            record(trial, pruned_by=f"its drain: under {HOPELESS:g} of rocksdb-default's {hopeless / HOPELESS:,.0f} ops/s")
            return True
        if limit is None or time.monotonic() - started <= limit:
            return False
        record(trial, pruned_by=f"the --budget: ran past the {limit:.0f} s the search had left")
        return True

    return observe


def _pruning_observer(trial: optuna.Trial) -> IntervalObserver:
    """Reports the scored phases' mean ops/s so far at each second; True when the pruner says stop."""
    seen: list[float] = []

    def observe(_phase: str, _second: int, qps: float | None) -> bool:
        if qps is None:  # the drain: the pruner compares trials at the same second of their operations
            return False
        seen.append(qps)
        trial.report(sum(seen) / len(seen), len(seen))
        return trial.should_prune()

    return observe
