"""The study's last stage with --slo: how far rocksdb-default and the best configuration hold the SLO.

Each configuration's capacity is found by the backend (``Backend.capacity``, handed in by tuner.api as a
function of the rate the searches start from: the engine never knows how a rate is offered), its runs
logged in OUT/capacity/<configuration>/<rate> (later rounds in .../round-<r>/<rate>). A rate study's
searches run its own workload from its rate (--rate and --read-rate), or, where its preload placed the
defaults' capacity (``Backend.placed``, --objective capacity), from there as a later round's do; a study
without --rate (db_bench's)
searches open loop on the backend --serve-rate runs on (``Backend.at_rate``), each rate one
--serve-duration run, from --serve-rate's rate (:func:`serve_rate`, which the served stage shares:
``auto`` when not given). With --capacity-rounds R
the searches run in R paired rounds, the configurations in a fresh seeded order each round, every
search of a round past the first starting from the same rate, near the capacities the round before
found (their geometric mean): a configuration's own last capacity would carry an early lucky run into
all its later searches (an A/A comparison, the defaults against their own start, came out 1.16x that
way). Each round's held rates pair into a ratio with its interval (tuner.stats.paired_ratio), since
one search per configuration places a capacity only within about a factor of two on a noisy host. The
:class:`~tuner.summary.CapacityReport` is kept in the study after every search, so a resume with the
same --slo and run length measures only what is missing.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from objectives.contract import Task
from objectives.rates import Capacity, holds, parse_slo, shared_start
from objectives.scores import Bound
from search_spaces.config import Config
from tuner.backends import BACKENDS, EnvironmentFault, RunFailed
from tuner.engine._prepare import Prepared
from tuner.engine._signals import stop_signals
from tuner.engine._storage import StudyStore
from tuner.events import EventBus
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.stats import paired_ratio
from tuner.summary import CapacityOf, CapacityProbe, CapacityReport, Ratio
from tuner.trials import TrialRecord

# One configuration's search over offered rates: the configuration, the SLO, a log directory, the workload, a
# line-per-rate callback, where to start (None: the study's rate; else an earlier round's capacity) and the
# most it held in earlier rounds (a miss far below it runs again: objectives.rates.capacity's held_before).
CapacityOfConfig = Callable[[Config, Bound, Path, Task | None, Callable[[str], None], float | None, float | None],
                            Capacity]
# The backend's capacity searches, given the rate (ops/s) the first round's start from.
CapacityAt = Callable[[float], CapacityOfConfig]
ATTR = "capacity"
# --serve-rate auto: a service's rate, meant to lie below both configurations' capacity at a tail bound. At 0.7 x on the
# default job's target the defaults and the answer both queued (P99.9 63-130 ms, the job at 4eb37f1); at 0.4 x the
# defaults held 1.3-9.0 ms and an answer whose tail was higher in every round 9.3-12.6 ms (experiments/service_level,
# served-low-56k-11.8.1-2026-12-06).
AUTO_SHARE = 0.4


def capacities(parts: Prepared, store: StudyStore, bus: EventBus, snapshot: StudySnapshot,
               capacity_at: CapacityAt) -> None:
    """rocksdb-default's and the best's (the re-validated winner, else the search's best) capacity at
    --slo in --capacity-rounds paired rounds, kept in the study as ``capacity`` after each search;
    nothing more when the study keeps them all for the same --slo and run length. A run that fails
    stops the stage, said on ``bus``: the study's outputs are written with what was measured."""
    measurement = parts.config.measurement
    slo_text, rounds = measurement.slo, measurement.capacity_rounds
    assert slo_text is not None
    slo = parse_slo(slo_text)
    entries = answer_and_default(parts, snapshot, bus, ATTR)
    # a rate study's searches run its workload; a db_bench study's the served backend's own runs (None)
    workload = (parts.plan.workload or parts.workload) if measurement.rate is not None else None
    try:
        start, how, placed = search_start(parts, snapshot, workload)
    except RunFailed as exc:
        bus.note(str(exc))
        return
    duration = (workload.duration or 0.0) if workload is not None else parts.config.revalidation.serve_duration
    kept = store.stored(ATTR, CapacityReport)
    if kept is not None and not kept.start:  # kept before its start and runs' length were: a rate study's
        kept = kept.updated(duration=duration, start=start, how=how, placed=placed)
    report = kept if kept is not None and (kept.slo, kept.rounds, kept.duration) == (slo_text, rounds, duration) \
        and [c.name for c in kept.configurations] == list(entries) else \
        CapacityReport(slo=slo_text, metric=slo.metric, bound=slo.limit, rounds=rounds,
                       configurations=[CapacityOf(name=name) for name in entries], duration=duration, start=start,
                       how=how, placed=placed)
    todo = [(r, name) for r in range(1, rounds + 1)
            for name in random.Random(f"{parts.config.search.seed or 0}:{ATTR}:{r}").sample(list(entries), len(entries))
            if len(_rounds_of(report, name)) < r]  # the others were measured before a resume
    if not todo:
        return
    capacity = capacity_at(report.start)
    started = time.monotonic() - report.seconds
    try:
        with stop_signals():
            for r, name in todo:
                try:
                    found = _search(parts, bus, capacity, slo, entries[name], name, r, report, workload)
                except RunFailed as exc:
                    bus.note(f"capacity of {name}: a run failed ({exc.reason}): the capacity stage stops; a resume "
                             "measures what is missing")
                    return
                report = _with(report, name, found, r, slo, time.monotonic() - started)
                store.keep(ATTR, report)
    except (KeyboardInterrupt, EnvironmentFault):
        bus.study_stopped(snapshot, "KILLED")
        raise


def search_start(parts: Prepared, snapshot: StudySnapshot, workload: Task | None) -> tuple[float, str, bool]:
    """The ops/s the first round's searches start from, where it came from, and whether the preload placed it:
    where the preload of ``workload`` (a rate study's) placed rocksdb-default's capacity (``Backend.placed``),
    else a rate study's offered rate (--rate and --read-rate), else --serve-rate's (:func:`serve_rate`,
    ``auto`` when not given); RunFailed when ``auto`` has no ops/s of rocksdb-default to go by."""
    m = parts.config.measurement
    placed = BACKENDS[m.backend].placed(workload) if workload is not None else None
    if placed is not None:
        return placed, f"where the preload placed {DEFAULT_BASELINE}'s capacity from --rate {m.rate or 0:g}", True
    if m.rate is not None:
        return (m.rate + m.read_rate, f"--rate {m.rate:g}" + (f" and --read-rate {m.read_rate:g}" if m.read_rate else ""),
                False)
    given = parts.config.revalidation.serve_rate
    rate, how = serve_rate(given or "auto", snapshot)
    return rate, how if given is not None else how.removeprefix("--serve-rate "), False


def serve_rate(given: float | str | None, snapshot: StudySnapshot, ops: float | None = None) -> tuple[float, str]:
    """The rate to serve at, and where it came from: --serve-rate's writes/s, or for ``auto``
    :data:`AUTO_SHARE` of rocksdb-default's median ops/s: ``ops`` when given (the re-validation's selection
    rounds'), else in the re-validation, else its search run."""
    if given is not None and given != "auto":
        return float(given), f"--serve-rate {float(given):g}"
    default = next((b for b in snapshot.baselines if b.name == DEFAULT_BASELINE), None)
    rounds = snapshot.revalidation.measured("ops_per_sec").get(DEFAULT_BASELINE) if snapshot.revalidation else None
    if ops is None:
        ops = rounds.median("ops_per_sec") if rounds is not None else None
    if ops is None and default is not None:
        ops = default.metrics.get("ops_per_sec")
    if not ops:
        raise RunFailed(f"--serve-rate auto: {DEFAULT_BASELINE}'s ops/s was not measured; give --serve-rate OPS")
    rate = float(f"{AUTO_SHARE * ops:.2g}")  # two significant digits: a rate a person would offer
    return rate, f"--serve-rate auto: {AUTO_SHARE:g} x {DEFAULT_BASELINE}'s {ops:,.0f} ops/s"


def answer_and_default(parts: Prepared, snapshot: StudySnapshot, bus: EventBus, stage: str) -> dict[str, Config]:
    """What a last stage measures: rocksdb-default's configuration (when it was measured) and the best's (the
    re-validated winner, else the search's best) by name; the best only as rocksdb-default when it is
    that configuration's own start, said on ``bus`` for ``stage``."""
    entries = {b.name: parts.space.config_of(b.flags) for b in snapshot.baselines if b.name == DEFAULT_BASELINE}
    best = snapshot.best()
    if best is not None and TrialRecord.of(best).enqueued == DEFAULT_BASELINE:
        bus.note(f"{stage}: the best, trial {best.number}, is {DEFAULT_BASELINE}'s configuration (its start): "
                 f"measured as {DEFAULT_BASELINE}")
    elif best is not None:
        entries[f"trial {best.number}"] = parts.space.config(best.params)
    return entries


def _search(parts: Prepared, bus: EventBus, capacity: CapacityOfConfig, slo: Bound, config: Config,
            name: str, r: int, report: CapacityReport, workload: Task | None) -> Capacity:
    """One configuration's search in round ``r``: from the report's start in the first (near it when the
    preload placed it), near the round before's capacities (:func:`_shared_start`) after, on ``workload``
    (None: the backend's own runs); a miss more than the search's resolution below the most it held in an
    earlier round runs again before it counts."""
    last = _shared_start(report, r) if r > 1 else (report.start if report.placed else None)
    before = [held for held in _rounds_of(report, name)[:r - 1] if held is not None]
    if last and r > 1:
        where = f"near {last:,.0f} ops/s, the last round's capacities"
    elif last:  # the first round of a placed start
        where = f"near {report.start:,.0f} ops/s ({report.how})"
    else:
        where = f"from {report.start:,.0f} ops/s ({report.how}) up or down"
    rounds, run = report.rounds, f"one {report.duration:g} s run" if report.duration else "one run"
    bus.note(f"capacity of {name} at {report.slo}" + (f", round {r}/{rounds}" if rounds > 1 else "")
             + f": {where}, {run} per rate")

    def say(line: str) -> None:
        bus.note(f"capacity {name}" + (f" (round {r})" if rounds > 1 else "") + f": {line}")

    logs = parts.out / "capacity" / name.replace(" ", "-")
    return capacity(config, slo, logs if r == 1 else logs / f"round-{r}", workload, say, last,
                    max(before) if before else None)


def _shared_start(report: CapacityReport, r: int) -> float | None:
    """Where every search of round ``r`` starts (:func:`objectives.rates.shared_start` of the capacities
    round ``r - 1`` found; None in the first round, or when no configuration held the SLO in the round
    before: the study's rate)."""
    if r == 1:
        return None
    return shared_start([held[r - 2] for c in report.configurations if len(held := _rounds_of(report, c.name)) >= r - 1])


def _rounds_of(report: CapacityReport, name: str) -> list[float | None]:
    """The held rate of each round measured so far for ``name``."""
    of = report.of(name)
    if of is None:
        return []
    return list(of.held_by_round) or ([of.held] if of.probes else [])  # a report of one round kept no rounds


def _with(report: CapacityReport, name: str, found: Capacity, r: int, slo: Bound, seconds: float) -> CapacityReport:
    """``report`` with ``name``'s round ``r`` search added: its probes, its round's held and failed rates,
    the medians over its rounds, and each configuration's paired ratio to the defaults' once two rounds
    of both are in."""
    configurations = []
    for c in report.configurations:
        if c.name == name:
            held, failed = [*c.held_by_round, found.held], [*c.failed_by_round, found.failed]
            probes = [*c.probes, *(CapacityProbe(offered=offered, value=run.metrics.get(slo.metric),
                                                 delivered=run.metrics.get("delivered"),
                                                 settled=bool(run.metrics["settled"]) if "settled" in run.metrics
                                                 else None, held=holds(run, slo), round=r)
                                   for offered, run in found.probes)]
            c = replace(c, held=_median(held), failed=_median(failed), probes=probes, held_by_round=held,
                        failed_by_round=failed)
        configurations.append(c)
    default = next((c for c in configurations if c.name == DEFAULT_BASELINE), None)
    vs = {}
    if default is not None and report.rounds > 1:
        for c in configurations:
            pairs = [(a, b) for a, b in zip(c.held_by_round, default.held_by_round)]
            if c.name != DEFAULT_BASELINE and len(pairs) >= 2:
                # a round in which no rate held has no ratio (paired_ratio passes over a 0)
                vs[c.name] = Ratio.from_dict({"against": DEFAULT_BASELINE, **paired_ratio(
                    [a or 0.0 for a, _ in pairs], [b or 0.0 for _, b in pairs]).to_dict()}, "capacity.vs_default")
    return replace(report, configurations=configurations, vs_default=vs, seconds=seconds)


def _median(values: list[float | None]) -> float | None:
    """The median of the rounds' rates when every round has one, else None."""
    return statistics.median(v for v in values if v is not None) if values and None not in values else None
