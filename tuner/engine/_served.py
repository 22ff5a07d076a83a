"""--serve-rate: configurations and rocksdb-default served open loop at a rate, in paired rounds.

A study that measured peak throughput says nothing of what a service at a fixed request rate would see
of its answer: the tail, the stalls, whether the rate was delivered. With --serve-rate (writes/s, or
``auto``: 0.4 of the defaults' sustained ops/s in the study, tuner.engine._capacity.serve_rate, where
--slo's searches of a db_bench study start too) configurations run at the rate for --serve-duration
seconds beside rocksdb-default, in --serve-rounds paired rounds, each round in a fresh seeded order:

- in the re-validation, after the selection's rounds (:func:`finalist_server`, unless --any-cost): the
  leading finalist beside the defaults; when it serves beyond ranking.SERVED_MARGINS the next one, and so on
  (the re-validation's served guard: a finalist that serves worse does not win while another serves
  within it); each finalist's runs logged in OUT/served/<finalist>/<configuration>/round-<r>, and their
  reports, in the order served, the summary's ``served_guard`` (:func:`finalists_served`);
- at the end (:func:`serve`): the answer (the re-validated winner, else the search's best), unless the
  selection served it already; logged in OUT/served/<configuration>/round-<r>.

How a configuration runs at a rate is the backend's (``Backend.at_rate``, handed in as a function: the
engine never knows how a rate is offered). Each :class:`~tuner.summary.ServedReport` is kept in the study
after every run, so a resume measures only what is missing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from search_spaces.config import Config
from tuner.backends import EnvironmentFault, RunFailed
from tuner.engine._capacity import answer_and_default, serve_rate
from tuner.engine._prepare import Prepared
from tuner.engine._revalidation import Serve
from tuner.engine._signals import stop_signals
from tuner.engine._storage import StudyStore
from tuner.events import EventBus
from tuner.fmt import fmt_at_rate
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.stats import paired_ratio
from tuner.summary import Ratio, Revalidation, ServedReport, ServedRun

# One run of a configuration at the rate: the configuration and a log directory -> the run's metrics.
ServeConfig = Callable[[Config, Path], dict[str, float]]
# The backend's runs at a rate: given the rate (writes/s) and each run's length, one run's function.
AtRate = Callable[[float, float], ServeConfig]
ATTR = "served"
COMPARED = ("p99.9_us", "p99.99_us", "max_us", "stall_micros", "write_amp", "sst_bytes")  # the answer's / the defaults'


def serve(parts: Prepared, store: StudyStore, bus: EventBus, snapshot: StudySnapshot, at_rate: AtRate) -> None:
    """rocksdb-default and the answer at the rate in --serve-rounds paired rounds, kept in the study as
    ``served`` after each run; nothing more when the study keeps them all for the same rate, or when the
    re-validation's selection served the answer already (:func:`finalist_server`: then that report is kept)."""
    m = parts.config.revalidation
    entries = answer_and_default(parts, snapshot, bus, ATTR)
    if DEFAULT_BASELINE not in entries:
        bus.note(f"--serve-rate: {DEFAULT_BASELINE} was not measured; nothing to serve beside it")
        return
    names = list(entries)
    chosen = store.stored(f"{ATTR}:{names[-1]}", ServedReport) if len(names) > 1 else None
    if chosen is not None and _fits(chosen, m.serve_rate, m.serve_duration, m.serve_rounds, names):
        store.keep(ATTR, chosen)
        return
    try:
        at = serve_rate(m.serve_rate, snapshot)
    except RunFailed as exc:
        bus.note(str(exc))
        return
    try:
        served(parts, store, bus, at_rate, entries, at, ATTR)
    except (KeyboardInterrupt, EnvironmentFault):
        bus.study_stopped(snapshot, "KILLED")
        raise


def finalist_server(parts: Prepared, store: StudyStore, bus: EventBus, snapshot: StudySnapshot, at_rate: AtRate,
                    default_ops: Callable[[], float | None]) -> Serve | None:
    """The re-validation's served guard: a function that serves one finalist beside rocksdb-default at --serve-rate
    (``auto``: from ``default_ops``, the defaults' median ops/s in the selection's rounds, when it has one) in
    --serve-rounds paired rounds, kept in the study as ``served:<finalist>``; None when rocksdb-default's run did
    not complete."""
    m = parts.config.revalidation
    default = {b.name: parts.space.config_of(b.flags) for b in snapshot.baselines
               if b.name == DEFAULT_BASELINE and b.complete}
    if not default:
        return None
    rates: list[tuple[float, str]] = []

    def serve_one(name: str, config: Config) -> ServedReport:
        if not rates:  # once, when the selection's rounds are in
            rates.append(serve_rate(m.serve_rate, snapshot, default_ops()))
        return served(parts, store, bus, at_rate, {**default, name: config}, rates[0], f"{ATTR}:{name}")
    return serve_one


def finalists_served(parts: Prepared, store: StudyStore, revalidation: Revalidation | None) -> tuple[ServedReport, ...]:
    """The re-validation's served guard as kept: each finalist's report beside rocksdb-default, in the order
    served (those beyond it, then the winner when it served within); empty when it served none (no --serve-rate,
    or --any-cost). Only reports of these runs count (the rate given, the run length and rounds): one a resume
    with other settings left in the study does not."""
    m, select = parts.config.revalidation, revalidation.select if revalidation is not None else None
    if select is None or select.winner is None or m.serve_rate is None or parts.config.search.any_cost:
        return ()
    names = [*select.served_out, *([select.winner] if select.winner not in select.served_out else [])]
    return tuple(r for n in names if (r := store.stored(f"{ATTR}:{n}", ServedReport)) is not None
                 and _fits(r, m.serve_rate, m.serve_duration, m.serve_rounds, [DEFAULT_BASELINE, n]))


def served(parts: Prepared, store: StudyStore, bus: EventBus, at_rate: AtRate, entries: dict[str, Config],
           at: tuple[float, str], attr: str) -> ServedReport:
    """``entries`` (rocksdb-default first) at the rate ``at`` (writes/s, and where it came from) in --serve-rounds
    paired rounds, each round in a fresh seeded order, kept in the study as ``attr`` after each run (a resume
    measures only what is missing); each run's logs in OUT/served/<configuration>/round-<r> (the finalists'
    of the selection in OUT/served/<finalist>/<configuration>/round-<r>)."""
    m = parts.config.revalidation
    (rate, how), names = at, list(entries)
    kept = store.stored(attr, ServedReport)
    report = kept if kept is not None and _fits(kept, rate, m.serve_duration, m.serve_rounds, names) else \
        ServedReport(rate=rate, how=how, duration=m.serve_duration, rounds=m.serve_rounds, names=names)
    todo = [(r, name) for r in range(1, report.rounds + 1)
            for name in random.Random(f"{parts.config.search.seed or 0}:{attr}:{r}").sample(names, len(names))
            if not any(run.round == r and run.name == name for run in report.runs)]
    if not todo:
        return report
    beside = attr.partition(":")[2]
    bus.note(f"served open loop at {rate:,.0f} writes/s ({how}): {', '.join(entries)}, {report.rounds} paired "
             f"round{'s' if report.rounds > 1 else ''} of {report.duration:g} s and its settle"
             + (" (the served guard of the re-validation's finalists)" if beside else ""))
    run = at_rate(rate, report.duration)
    started = time.monotonic() - report.seconds
    where = parts.out / ATTR / beside.replace(" ", "-") if beside else parts.out / ATTR
    with stop_signals():
        for r, name in todo:
            try:
                done = ServedRun(name=name, round=r, metrics=run(entries[name], where / name.replace(" ", "-")
                                                                 / f"round-{r}"))
            except RunFailed as exc:
                done = ServedRun(name=name, round=r, failed=str(exc))
            bus.note(f"served {name}" + (f" (beside {beside})" if beside and name != beside else "")
                     + f", round {r}/{report.rounds}: {served_words(done)}")
            report = _with(report, done, time.monotonic() - started)
            store.keep(attr, report)
    return report


def _fits(report: ServedReport, rate: float | str | None, duration: float, rounds: int, names: list[str]) -> bool:
    """Whether a kept ``report`` is of these runs: the same configurations, run length and rounds, and the
    rate given (any, for ``auto``)."""
    return (report.duration, report.rounds, report.names) == (duration, rounds, names) and (
        rate in (None, "auto") or report.rate == float(rate))


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

