"""The study's last stage with --serve-rate: the answer and rocksdb-default served open loop at a rate.

A study that measured peak throughput says nothing of what a service at a fixed request rate would see
of its answer: the tail, the stalls, whether the rate was delivered. After the re-validation the answer
(the re-validated winner, else the search's best) and rocksdb-default each run at the rate (--serve-rate
writes/s, or ``auto``: 0.7 of the defaults' sustained ops/s in the study, tuner.engine._capacity.serve_rate,
where --slo's searches of a db_bench study start too) for --serve-duration seconds, in --serve-rounds
paired rounds, the two in a fresh seeded order each round. How a configuration runs at a rate is the
backend's (``Backend.at_rate``, handed in as a function: the engine never knows how a rate is offered);
each run is logged in OUT/served/<configuration>/round-<r>. The :class:`~tuner.summary.ServedReport` is
kept in the study after every run, so a resume measures only what is missing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from objectives.workloads import Flag
from tuner.backends import EnvironmentFault, RunFailed
from tuner.engine._capacity import answer_and_default, serve_rate
from tuner.engine._prepare import Prepared
from tuner.engine._signals import stop_signals
from tuner.engine._storage import StudyStore
from tuner.events import EventBus
from tuner.fmt import fmt_at_rate
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.stats import paired_ratio
from tuner.summary import Ratio, ServedReport, ServedRun

# One run of a configuration at the rate: its flags and a log directory -> the run's metrics.
ServeFlags = Callable[[dict[str, Flag], Path], dict[str, float]]
# The backend's runs at a rate: given the rate (writes/s) and each run's length, one run's function.
AtRate = Callable[[float, float], ServeFlags]
ATTR = "served"
COMPARED = ("p99.9_us", "p99.99_us", "max_us", "stall_micros", "write_amp", "sst_bytes")  # the answer's / the defaults'


def serve(parts: Prepared, store: StudyStore, bus: EventBus, snapshot: StudySnapshot, at_rate: AtRate) -> None:
    """rocksdb-default and the answer at the rate in --serve-rounds paired rounds, kept in the study as
    ``served`` after each run; nothing more when the study keeps them all for the same rate."""
    m = parts.config.revalidation
    entries = answer_and_default(parts, snapshot, bus, ATTR)
    if DEFAULT_BASELINE not in entries:
        bus.note(f"--serve-rate: {DEFAULT_BASELINE} was not measured; nothing to serve beside it")
        return
    try:
        rate, how = serve_rate(m.serve_rate, snapshot)
    except RunFailed as exc:
        bus.note(str(exc))
        return
    kept = store.stored(ATTR, ServedReport)
    report = kept if kept is not None and (kept.rate, kept.duration, kept.rounds, kept.names) == (
        rate, m.serve_duration, m.serve_rounds, list(entries)) else \
        ServedReport(rate=rate, how=how, duration=m.serve_duration, rounds=m.serve_rounds, names=list(entries))
    todo = [(r, name) for r in range(1, report.rounds + 1)
            for name in random.Random(f"{parts.config.search.seed or 0}:{ATTR}:{r}").sample(list(entries), len(entries))
            if not any(run.round == r and run.name == name for run in report.runs)]
    if not todo:
        return
    bus.note(f"served open loop at {rate:,.0f} writes/s ({how}): {', '.join(entries)}, {report.rounds} paired "
             f"round{'s' if report.rounds > 1 else ''} of {report.duration:g} s and its settle")
    run = at_rate(rate, report.duration)
    started = time.monotonic() - report.seconds
    try:
        with stop_signals():
            for r, name in todo:
                logs = parts.out / ATTR / name.replace(" ", "-") / f"round-{r}"
                try:
                    done = ServedRun(name=name, round=r, metrics=run(entries[name], logs))
                except RunFailed as exc:
                    done = ServedRun(name=name, round=r, failed=str(exc))
                bus.note(f"served {name}, round {r}/{report.rounds}: {served_words(done)}")
                report = _with(report, done, time.monotonic() - started)
                store.keep(ATTR, report)
    except (KeyboardInterrupt, EnvironmentFault):
        bus.study_stopped(snapshot, "KILLED")
        raise


def served_words(run: ServedRun) -> str:
    """One run at the rate in a few words: what was delivered, the tail, the stalls (or why it failed)."""
    return f"failed: {run.failed}" if run.failed is not None else fmt_at_rate(dict(run.metrics))


def _with(report: ServedReport, done: ServedRun, seconds: float) -> ServedReport:
    """``report`` with ``done`` added and, once two rounds of both are in, the answer's figures over the
    defaults', paired by round."""
    runs = [*report.runs, done]
    vs: dict[str, Ratio] = {}
    answer = next((n for n in report.names if n != DEFAULT_BASELINE), None)
    if answer is not None:
        by = {(r.name, r.round): r.metrics for r in runs if r.failed is None}
        both = sorted({r for (_, r) in by if (answer, r) in by and (DEFAULT_BASELINE, r) in by})
        for metric in COMPARED:
            pairs = [(by[(answer, r)][metric], by[(DEFAULT_BASELINE, r)][metric]) for r in both
                     if metric in by[(answer, r)] and metric in by[(DEFAULT_BASELINE, r)]]
            if len(pairs) >= 2:
                vs[metric] = Ratio.from_dict({"against": DEFAULT_BASELINE, **paired_ratio(
                    [a for a, _ in pairs], [b for _, b in pairs]).to_dict()}, f"served.vs_default.{metric}")
    return replace(report, runs=runs, vs_default=vs, seconds=seconds)

