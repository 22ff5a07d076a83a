"""The study's last stage with --slo: how far rocksdb-default and the best configuration hold the SLO.

Each configuration's capacity is found by the backend (``Backend.capacity``, handed in as a function:
the engine never knows how a rate is offered), on the target's workload, its runs logged in
OUT/capacity/<configuration>/<rate> (later rounds in .../round-<r>/<rate>). With --capacity-rounds R
the searches run in R paired rounds, the configurations in a fresh seeded order each round, every
search of a round past the first starting from the same rate, near the capacities the round before
found (their geometric mean): a configuration's own last capacity would carry an early lucky run into
all its later searches (an A/A comparison, the defaults against their own start, came out 1.16x that
way). Each round's held rates pair into a ratio with its interval (tuner.stats.paired_ratio), since
one search per configuration places a capacity only within about a factor of two on a noisy host. The
:class:`~tuner.summary.CapacityReport` is kept in the study after every search, so a resume with the
same --slo measures only what is missing.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from objectives.open_loop import Capacity, holds, parse_slo
from objectives.scores import Bound
from objectives.workloads import Flag, Workload
from tuner.backends import EnvironmentFault
from tuner.engine._prepare import Prepared
from tuner.engine._signals import stop_signals
from tuner.engine._storage import StudyStore
from tuner.events import EventBus
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.stats import paired_ratio
from tuner.summary import CapacityOf, CapacityProbe, CapacityReport, Ratio
from tuner.trials import TrialRecord

# One configuration's search over offered rates: its flags, the SLO, a log directory, the workload, a
# line-per-rate callback, and where to start (None: the study's rate; else an earlier round's capacity).
CapacityOfFlags = Callable[[dict[str, Flag], Bound, Path, Workload | None, Callable[[str], None], float | None],
                           Capacity]
ATTR = "capacity"


def capacities(parts: Prepared, store: StudyStore, bus: EventBus, snapshot: StudySnapshot,
               capacity: CapacityOfFlags) -> None:
    """rocksdb-default's and the best's (the re-validated winner, else the search's best) capacity at
    --slo in --capacity-rounds paired rounds, kept in the study as ``capacity`` after each search;
    nothing more when the study keeps them all for the same --slo."""
    measurement = parts.config.measurement
    slo_text, rounds = measurement.slo, measurement.capacity_rounds
    assert slo_text is not None
    slo = parse_slo(slo_text)
    entries = answer_and_default(parts, snapshot, bus, ATTR)
    kept = store.stored(ATTR, CapacityReport)
    report = kept if kept is not None and kept.slo == slo_text and kept.rounds == rounds \
        and [c.name for c in kept.configurations] == list(entries) else \
        CapacityReport(slo=slo_text, metric=slo.metric, bound=slo.limit, rounds=rounds,
                       configurations=[CapacityOf(name=name) for name in entries])
    workload = parts.plan.workload or parts.workload
    started = time.monotonic() - report.seconds
    try:
        with stop_signals():
            for r in range(1, rounds + 1):
                order = random.Random(f"{parts.config.search.seed or 0}:{ATTR}:{r}").sample(list(entries), len(entries))
                for name in order:
                    if len(_rounds_of(report, name)) >= r:
                        continue  # measured before a resume
                    found = _search(parts, bus, capacity, slo, entries[name], name, r, rounds, workload,
                                    _shared_start(report, r))
                    report = _with(report, name, found, r, slo, time.monotonic() - started)
                    store.keep(ATTR, report)
    except (KeyboardInterrupt, EnvironmentFault):
        bus.study_stopped(snapshot, "KILLED")
        raise


def answer_and_default(parts: Prepared, snapshot: StudySnapshot, bus: EventBus, stage: str) -> dict[str, dict[str, Flag]]:
    """What a last stage measures: rocksdb-default's flags (when it was measured) and the best's (the
    re-validated winner, else the search's best) by name; the best only as rocksdb-default when it is
    that configuration's own start, said on ``bus`` for ``stage``."""
    entries = {b.name: dict(b.flags) for b in snapshot.baselines if b.name == DEFAULT_BASELINE}
    best = snapshot.best()
    if best is not None and TrialRecord.of(best).enqueued == DEFAULT_BASELINE:
        bus.note(f"{stage}: the best, trial {best.number}, is {DEFAULT_BASELINE}'s configuration (its start): "
                 f"measured as {DEFAULT_BASELINE}")
    elif best is not None:
        entries[f"trial {best.number}"] = dict(parts.space.flags(best.params))
    return entries


def _search(parts: Prepared, bus: EventBus, capacity: CapacityOfFlags, slo: Bound, flags: dict[str, Flag],
            name: str, r: int, rounds: int, workload: Workload | None, last: float | None) -> Capacity:
    """One configuration's search in round ``r``: from the study's rate in the first, near ``last`` (the
    round before's capacities, :func:`_shared_start`) after."""
    rate = parts.config.measurement.rate or 0
    where = f"near {last:,.0f} ops/s, the last round's capacities" if last else f"from {rate:,.0f} ops/s up or down"
    bus.note(f"capacity of {name} at {parts.config.measurement.slo}"
             + (f", round {r}/{rounds}" if rounds > 1 else "") + f": {where}, one run per rate")

    def say(line: str) -> None:
        bus.note(f"capacity {name}" + (f" (round {r})" if rounds > 1 else "") + f": {line}")

    logs = parts.out / "capacity" / name.replace(" ", "-")
    return capacity(flags, slo, logs if r == 1 else logs / f"round-{r}", workload, say, last)


def _shared_start(report: CapacityReport, r: int) -> float | None:
    """Where every search of round ``r`` starts: the geometric mean of the capacities round ``r - 1``
    found (None in the first round, or when no configuration held the SLO in the round before: the
    study's rate)."""
    if r == 1:
        return None
    last = [rate for c in report.configurations
            if len(held := _rounds_of(report, c.name)) >= r - 1 and (rate := held[r - 2]) is not None]
    return statistics.geometric_mean(last) if last else None


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
