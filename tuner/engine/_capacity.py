"""The study's last stage with --slo: how far rocksdb-default and the best configuration hold the SLO.

Each configuration's capacity is found by the backend (``Backend.capacity``, handed in as a function:
the engine never knows how a rate is offered), on the target's workload, its runs logged in
OUT/capacity/<configuration>/<rate>; the :class:`~tuner.summary.CapacityReport` is kept in the study,
so a resume with the same --slo does not measure it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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
from tuner.summary import CapacityOf, CapacityProbe, CapacityReport

# One configuration's search over offered rates: its flags, the SLO, a log directory, the workload and a
# line-per-rate callback (Backend.capacity).
CapacityOfFlags = Callable[[dict[str, Flag], Bound, Path, Workload | None, Callable[[str], None]], Capacity]


def capacities(parts: Prepared, store: StudyStore, bus: EventBus, snapshot: StudySnapshot,
               capacity: CapacityOfFlags) -> None:
    """rocksdb-default's and the best's (the re-validated winner, else the search's best) capacity at
    --slo, kept in the study as ``capacity``; nothing when the study keeps one for the same --slo."""
    measurement = parts.config.measurement
    slo_text = measurement.slo
    assert slo_text is not None
    kept = store.stored("capacity", CapacityReport)
    if kept is not None and kept.slo == slo_text:
        return
    slo = parse_slo(slo_text)
    entries = {b.name: dict(b.flags) for b in snapshot.baselines if b.name == DEFAULT_BASELINE}
    best = snapshot.best()
    if best is not None:
        entries[f"trial {best.number}"] = dict(parts.space.flags(best.params))
    workload = parts.plan.workload or parts.workload
    started = time.monotonic()
    found: list[CapacityOf] = []
    try:
        with stop_signals():
            for name, flags in entries.items():
                bus.note(f"capacity of {name} at {slo_text}: from {measurement.rate or 0:,.0f} ops/s up or down, "
                         "one run per rate")

                def say(line: str, who: str = name) -> None:
                    bus.note(f"capacity {who}: {line}")

                cap = capacity(flags, slo, parts.out / "capacity" / name.replace(" ", "-"), workload, say)
                found.append(CapacityOf(name=name, held=cap.held, failed=cap.failed, probes=[
                    CapacityProbe(offered=offered, value=run.metrics.get(slo.metric),
                                  delivered=run.metrics.get("delivered"),
                                  settled=bool(run.metrics["settled"]) if "settled" in run.metrics else None,
                                  held=holds(run, slo)) for offered, run in cap.probes]))
    except (KeyboardInterrupt, EnvironmentFault):
        bus.study_stopped(snapshot, "KILLED")
        raise
    store.keep("capacity", CapacityReport(slo=slo_text, metric=slo.metric, bound=slo.limit, configurations=found,
                                          seconds=time.monotonic() - started))
