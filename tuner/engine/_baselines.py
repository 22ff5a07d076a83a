"""The baselines, measured under the trials' conditions.

The search compares each trial with the baselines ("vs default"), so they must run as the trials do.
With --parallel, trials run beside one another on a node (pinned to cores of their own, but sharing
its disk, memory bandwidth and page cache): the executor's slot says how many run beside one
(:attr:`tuner.executors.Slot.neighbours`). The baselines then run as many at once
(:func:`side_by_side`): the baselines themselves, and in a slot no baseline needs, for as long as one
still runs, a copy of one (a neighbour: its result is not kept, its machine time is counted); the
copies still running when the last baseline ends are stopped. Each baseline records the fewest runs
that were beside it. Without neighbours they run one at a time, as before. The re-validation runs one
at a time either way (tuner.engine._revalidation): its ratios compare runs made alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tuner.backends import hand_found, missing_metric
from tuner.engine._prepare import Prepared
from tuner.engine._storage import StudyStore
from tuner.events import EventBus
from tuner.executors import Job, Jobs, Outcome, failure_reason, raise_fault, settle
from tuner.model import DEFAULT_BASELINE, DEFAULT_BASELINE_DOC, StudySnapshot, UsageError
from tuner.stats import spread
from tuner.trials import BaselineRecord


@dataclass(frozen=True)
class Ended:
    """A job run by :func:`side_by_side`, ended: its outcome (after the retry policy), its seconds from
    submission, the fewest other runs that were in flight beside it, and the machine seconds of the
    neighbour copies that ended since the job before it (counted with it)."""

    outcome: Outcome
    seconds: float
    neighbours: int
    copies_seconds: float


@dataclass
class _InFlight:
    job: Job
    started: float
    neighbours: int
    copy_of: Job | None = None  # a neighbour copy: the job it copies


class _SideBySide:
    """The state of one :func:`side_by_side` call."""

    def __init__(self, executor: Jobs, jobs: list[Job], neighbours: int, started: Callable[[Job], None],
                 note: Callable[[str], None]):
        self.executor, self.started, self.note = executor, started, note
        self.todo, self.copyable = list(jobs), list(jobs)
        self.width = max(1, min(executor.slots, neighbours + 1))
        self.running: dict[str, _InFlight] = {}
        self.copies = 0
        self.copies_seconds = 0.0

    def primaries(self) -> bool:
        return bool(self.todo) or any(r.copy_of is None for r in self.running.values())

    def fill(self) -> None:
        """Start the next jobs, then copies while a job runs, up to the width; note each job's neighbours."""
        while len(self.running) < self.width:
            if self.todo:
                job = self.todo.pop(0)
                self.started(job)
                self._submit(job, None)
            elif self.primaries() and self.copyable:
                template = self.copyable[self.copies % len(self.copyable)]
                copy = replace(template, key=f"{template.key} (neighbour {self.copies})", observer=None, attempt=0,
                               log_dir=template.log_dir.parent / "neighbours" / f"{self.copies}-{template.log_dir.name}")
                self.copies += 1
                self._submit(copy, template)
            else:
                break
        for entry in self.running.values():
            entry.neighbours = min(entry.neighbours, len(self.running) - 1)

    def _submit(self, job: Job, copy_of: Job | None) -> None:
        self.executor.submit(job)  # a preloaded DB's build, before the first job that needs it, is not its run
        self.running[job.key] = _InFlight(job, time.monotonic(), self.width - 1, copy_of)

    def arrived(self, outcome: Outcome) -> Ended | None:
        """A job's end (None for a copy's, a retried job's, or one already stopped)."""
        entry = self.running.pop(outcome.job.key, None)
        if entry is None:
            return None
        if entry.copy_of is not None:
            self.copies_seconds += time.monotonic() - entry.started
            raise_fault(outcome)  # never retried; but a full disk stops the study whichever run meets it
            if outcome.measurement is None and entry.copy_of in self.copyable:  # it would fail again
                self.copyable.remove(entry.copy_of)
            return None
        again = settle(outcome, self.executor, self.note)
        if again is not None:
            self.running[again.key] = replace(entry, job=again)
            return None
        if not self.primaries():
            self.stop()
        ended = Ended(outcome, time.monotonic() - entry.started, entry.neighbours, self.copies_seconds)
        self.copies_seconds = 0.0
        return ended

    def stop(self) -> None:
        """Stop every run still in flight (the copies, once no job is left to need a neighbour)."""
        if not self.running:
            return
        self.executor.cancel()
        now = time.monotonic()
        self.copies_seconds += sum(now - r.started for r in self.running.values() if r.copy_of is not None)
        self.running.clear()


def side_by_side(executor: Jobs, jobs: list[Job], neighbours: int, started: Callable[[Job], None],
                 ended: Callable[[Ended], None], note: Callable[[str], None]) -> None:
    """Run ``jobs`` with ``neighbours`` + 1 runs in flight (at most the executor's slots): the jobs in
    order, and while one of them still runs, copies of them in turn (a job whose copy failed is not
    copied again); ``started`` is told each job as it is submitted, ``ended`` each as it ends. With 0
    neighbours, one at a time. A lost job runs once more; a fault (EnvironmentFault) from any run, Ctrl-C,
    or an error from ``ended`` stops every run in flight."""
    batch = _SideBySide(executor, jobs, neighbours, started, note)
    try:
        while batch.primaries():
            batch.fill()
            for outcome in executor.wait(timeout=1.0):
                done = batch.arrived(outcome)
                if done is not None:
                    ended(done)
    except BaseException:
        batch.stop()
        raise


def baseline_items(parts: Prepared) -> list[tuple[str, dict[str, Any], str]]:
    """The study's baselines: (name, flags, description), rocksdb-default first."""
    defaults, measurement = parts.found.defaults, parts.config.measurement
    items: list[tuple[str, dict[str, Any], str]] = [
        (DEFAULT_BASELINE, {}, f"none of the tuned options set: {defaults.describe()}" if defaults else DEFAULT_BASELINE_DOC)]
    if parts.user_baseline is not None:
        flags, doc = parts.user_baseline
        items.append((parts.reference.name, flags, doc))
    if measurement.baselines:
        items += [(b.name, b.flags, b.doc) for b in hand_found(parts.found, parts.workload)]
    return items


@dataclass
class Baselines:
    """Measures each baseline once per study, as the trials run (kept in the study: a resume skips them)."""

    parts: Prepared
    store: StudyStore
    executor: Jobs
    bus: EventBus
    snapshot: Callable[[], StudySnapshot]

    def run(self) -> None:
        todo = {f"baseline:{name}": (name, flags, doc) for name, flags, doc in baseline_items(self.parts)
                if self.store.baseline(name) is None}
        repeats, neighbours = self.parts.config.measurement.repeats, self.parts.slot.neighbours
        jobs = [Job(key, self.parts.space.config_of(flags), self.parts.out / "baselines" / name.replace(":", "-"), repeats)
                for key, (name, flags, _) in todo.items()]
        if jobs and neighbours:
            self.bus.note(f"baselines run as the trials do, each beside {neighbours} other run(s) at once (a copy of "
                          "a baseline where none is left, its result not kept); the re-validation runs one at a time")

        def ended(done: Ended) -> None:
            name, flags, doc = todo[done.outcome.job.key]
            record = replace(self._record(name, flags, doc, done.outcome), seconds=round(done.seconds, 2),
                             ended=time.time(), neighbours=done.neighbours,
                             neighbour_seconds=round(done.copies_seconds, 2) or None)
            self.store.set_baseline(record)
            self.bus.baseline_done(self.snapshot(), record)

        side_by_side(self.executor, jobs, neighbours, lambda job: self.bus.baseline_started(todo[job.key][0]), ended,
                     self.bus.note)

    def _record(self, name: str, flags: dict[str, Any], doc: str, outcome: Outcome) -> BaselineRecord:
        log_dir, m = str(outcome.job.log_dir), outcome.measurement
        if m is None:
            reason = failure_reason(outcome)
            self._check_named(name, reason, outcome.broken)
            return BaselineRecord(name, flags, doc, log_dir, "FAIL", reason=reason)
        return BaselineRecord(name, flags, doc, log_dir, "COMPLETE", metrics=m.metrics, phases=m.details,
                              commands=m.commands, repeats=m.repeats or None, spread_ops_per_sec=spread(
                                  [r["ops_per_sec"] or 0.0 for r in m.repeats]).to_dict() if m.repeats else None)

    def _check_named(self, baseline: str, reason: str, broken: tuple[str, str] | None = None) -> None:
        """The first run, rocksdb-default's, broke its backend's contract (``broken``: the flag that gave
        the program, and what it did not do; every configuration's run would), or lacks a metric the user
        named for the score (--objective, --constraint, --max-*): one UsageError naming the flag, not a
        study of failed runs."""
        if baseline != DEFAULT_BASELINE:
            return
        if broken is not None:
            raise UsageError(f"{broken[0]}: the program broke the contract at {DEFAULT_BASELINE}'s run: {broken[1]}")
        flag = self.parts.score.flag_of(missing_metric(reason) or "")
        if flag is not None:
            raise UsageError(f"{flag}: rocksdb-default's run has no such metric: {reason}")
