"""Runs at a fixed offered rate, whatever runs them: the load offered (:class:`Rate`), what a run reports
(:class:`RateRun`: its metrics, per-second series and windows), an SLO on its tail (:func:`parse_slo`,
:func:`holds`) and the capacity search over rates (:func:`capacity`, rounds of it
starting at :func:`shared_start`). The open-loop driver (objectives.open_loop)
runs them; the engine reads them through the backends that serve a rate."""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from objectives.scores import Bound

PERCENTILES = ("p50_us", "p99_us", "p99.9_us", "p99.99_us", "max_us")
ARRIVALS = ("constant", "poisson")
BACKGROUND = ("normal", "low")  # RocksDB's flush and compaction threads at the requests' CPU priority, or nice 19


@dataclass(frozen=True)
class Second:
    """One second of a run: requests due in it, completed in it, their tail, the DB at its end, and what
    could have paused the requests in it: RocksDB's longest call, the latest wake-up, the background's
    writes, the request threads' wait for a CPU and the host's CPU time."""

    t: int
    due: int
    completed: int
    p99_us: float
    max_us: float
    service_max_us: float  # the longest Put or Get issued in the second, issue to done
    woke_max_us: float  # the latest a thread woke for a request it slept until
    stall_micros: int  # since the run began
    l0_files: int
    pending_compaction_bytes: int
    flush_bytes: int  # written by flushes in the second
    compaction_bytes: int  # written by compactions in the second
    compactions_running: int  # at its end
    run_delay_ms: float  # the request threads' time runnable but not running (summed over threads)
    host_busy_ms: float  # the host's CPU time in the second, all processes (at most 1,000 per core)
    host_steal_ms: float  # CPU time the hypervisor gave to others while the host wanted it


@dataclass(frozen=True)
class Window:
    """One consecutive window of a run (``--windows``): its length and first second, the requests due in
    it, their tail (from the per-second histograms: ~6 % buckets) and how many were slower than each of
    the driver's thresholds (``over_us``; a count adds up over windows, a percentile does not)."""

    seconds: int
    start: int
    due: int
    p99_us: float
    p999_us: float
    p9999_us: float
    max_us: float
    over_us: dict[int, int] = field(default_factory=dict)  # threshold (us) -> requests slower than it

    @classmethod
    def of(cls, record: dict[str, Any]) -> Window:
        return cls(seconds=int(record["seconds"]), start=int(record["start"]), due=int(record["due"]),
                   p99_us=record["p99_us"], p999_us=record["p99.9_us"], p9999_us=record["p99.99_us"],
                   max_us=record["max_us"], over_us={int(k): int(v) for k, v in record.get("over_us", {}).items()})

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "start": self.start, "due": self.due, "p99_us": self.p99_us,
                "p99.9_us": self.p999_us, "p99.99_us": self.p9999_us, "max_us": self.max_us,
                "over_us": {str(k): v for k, v in self.over_us.items()}}


@dataclass(frozen=True)
class RateRun:
    """What one run at a rate reported: its metrics line (``ops_per_sec``, ``delivered``, ``p99.9_us``,
    ``stall_micros``, ``l0_files``, ``write_amp``, ``stalls.<cause>``, ...) and its per-second series."""

    metrics: dict[str, float]
    series: tuple[Second, ...]
    rocksdb_version: str
    load_seconds: float | None = None
    memory: dict[str, int | None] = field(default_factory=dict)
    windows: tuple[Window, ...] = ()
    kernel_waits: dict[str, int] = field(default_factory=dict)  # --slow_call_us: kernel stack -> samples

    def __getitem__(self, name: str) -> float:
        return self.metrics[name]

    def to_dict(self) -> dict[str, object]:
        return {**self.metrics, "rocksdb_version": self.rocksdb_version, "load_seconds": self.load_seconds,
                **self.memory, "series": [vars(s) for s in self.series],
                **({"windows": [w.to_dict() for w in self.windows]} if self.windows else {}),
                **({"kernel_waits": self.kernel_waits} if self.kernel_waits else {})}


@dataclass(frozen=True)
class Rate:
    """The load: writes (overwrites of random keys) and reads (random Gets) in operations per second, for
    ``duration`` seconds and then, with ``settle``, on while RocksDB flushes and compacts what the window
    left, for at most ``duration`` more (the driver's ``--settle``); RocksDB's flush and compaction
    threads at the request threads' CPU priority, or with ``background`` "low" at the lowest (nice 19: the
    driver's ``--background_priority``), as a service on few cores may run them."""

    writes: float
    reads: float = 0.0
    duration: float = 60.0
    threads: int = 1
    read_threads: int = 1
    arrivals: str = "constant"
    seed: int = 1
    settle: bool = True
    windows: tuple[int, ...] = ()  # lengths (s) of the consecutive windows whose tails the run reports
    background: str = "normal"  # or "low": RocksDB's background threads at nice 19
    slow_call_us: float = 0.0  # RocksDB calls slower than this: where their time went (the driver's --slow_call_us)


# The share of due requests a run must complete for a rate to count as held, beside the SLO itself.
DELIVERED = 0.99
_US_PER = {"us": 1.0, None: 1.0, "ms": 1e3, "s": 1e6}  # microseconds per unit of a latency
_LATENCY = re.compile(r"^\s*([\d.]+)\s*(us|ms|s)?\s*$")
_SLO = re.compile(r"^\s*((?:read_|write_)?(?:p\d+(?:\.\d+)?|max|mean))(_us)?\s*<=\s*([\d.]+)\s*(us|ms|s)?\s*$")


def parse_slo(text: str, rate: Rate | None = None) -> Bound:
    """``p99.9<=2ms`` (also ``p99<=500us``, ``max<=1s``, ``p99.9_us<=2000``; ``read_p99.9<=2ms`` and
    ``write_...`` bound the reads' or the writes' own tail) as a bound on a latency metric in
    microseconds; ValueError naming --slo, also when the ``rate`` offers no reads beside its writes for a
    read_ or write_ bound to be told apart."""
    match = _SLO.match(text)
    if not match:
        raise ValueError(f"--slo: {text!r} is not a latency bound such as p99.9<=2ms (p50, p99, p99.9, p99.99, "
                         "max, each also as read_p99.9 or write_p99.9; us, ms or s)")
    if rate is not None and match[1].startswith(("read_", "write_")) and not (rate.writes and rate.reads):
        raise ValueError(f"--slo: {text!r} bounds the {match[1].split('_')[0]}s' own tail, which a run tells apart "
                         "only with both writes and reads offered: give --read-rate")
    return Bound(f"{match[1]}_us", float(match[3]) * _US_PER[match[4]], flag="--slo")


def parse_latency(text: str) -> float:
    """``1ms``, ``500us``, ``0.5s`` or ``2000`` (microseconds) in microseconds, > 0; ValueError otherwise."""
    match = _LATENCY.match(text)
    try:
        value = float(match[1]) * _US_PER[match[2]] if match else 0.0
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(f"{text!r} is not a latency above 0 such as 1ms (us, ms or s)")
    return value


def missed(run: RateRun, slo: Bound) -> list[str]:
    """Why ``run`` did not hold ``slo`` (empty when it held): fewer than DELIVERED of the requests due
    completed, a tail beyond the bound, or, for a run with a settle, RocksDB still behind on the window's
    flushes and compactions when the settle ended."""
    why = []
    if run["delivered"] < DELIVERED:
        why.append(f"delivered under {DELIVERED:.0%}")
    if slo.excess(run[slo.metric]) > 0:
        why.append(f"{slo.metric} over {slo.limit:,.0f}")
    if run.metrics.get("settled", 1.0) <= 0:
        why.append(f"compaction behind after a {run.metrics.get('settle_s', 0.0):.0f} s settle")
    return why


def holds(run: RateRun, slo: Bound) -> bool:
    """A rate is held when nothing was :func:`missed`."""
    return not missed(run, slo)


@dataclass(frozen=True)
class Capacity:
    """The highest offered rate tried that held the SLO (``held``) and the lowest that did not
    (``failed``); every run, in the order run (a rate run ``again`` appears twice, its miss first)."""

    slo: Bound
    held: float | None
    failed: float | None
    probes: tuple[tuple[float, RateRun], ...]
    again: tuple[float, ...] = ()  # rates whose miss was run again (far below held_before), in the order run

    def metrics(self) -> dict[str, float]:
        """The search as one run's metrics (--objective capacity): ``held_ops_per_sec`` (0 when no rate
        tried held), ``failed_ops_per_sec`` (when one failed), ``capacity_runs``, ``wall_seconds`` (all
        its runs'), and the rest from the run at the held rate (else the lowest rate tried): its tail,
        delivery, stalls and costs."""
        held = [run for offered, run in self.probes if offered == self.held and holds(run, self.slo)]
        shown = held[0] if held else min(self.probes, key=lambda p: p[0])[1]
        return {**shown.metrics, "held_ops_per_sec": self.held or 0.0,
                **({"failed_ops_per_sec": self.failed} if self.failed is not None else {}),
                "capacity_runs": float(len(self.probes)),
                "wall_seconds": sum(run.metrics.get("wall_seconds", 0.0) for _, run in self.probes)}

    def to_dict(self) -> dict[str, object]:
        return {"slo": self.slo.describe(), "delivered_at_least": DELIVERED, "held": self.held, "failed": self.failed,
                "again": list(self.again),
                "probes": [{"offered": offered, **run.to_dict()} for offered, run in self.probes]}


class AtRate(Protocol):
    """What runs a configuration at an offered rate: a :class:`Loaded` DB, or a backend's runs."""

    def run(self, rate: Rate) -> RateRun: ...


def scaled(rate: Rate, total: float) -> Rate:
    """``rate`` with its writes and reads scaled together to ``total`` ops/s."""
    share = total / (rate.writes + rate.reads)
    return dataclasses.replace(rate, writes=rate.writes * share, reads=rate.reads * share)


def capacity(loaded: AtRate, rate: Rate, slo: Bound, resolution: float = 0.1, most: int = 12,
             say: Callable[[str], None] = lambda _: None, step: float = 2.0,
             held_before: float | None = None) -> Capacity:
    """The highest offered rate whose run holds ``slo``: from ``rate`` (writes and reads scaled together),
    up or down by ``step`` times (doubling or halving) until one holds and one does not, then halving the
    gap (geometrically) until the two are within ``resolution`` of each other, or ``most`` rates. Each
    rate runs once, but for a miss more than ``resolution`` below ``held_before`` (the most the
    configuration held in an earlier round), which runs again and counts only if it misses again: what
    else runs on a host only ever lengthens a tail, so such a miss is as likely the host's. A miss nearer
    is within the search's own resolution and runs once, as every rate near a capacity does."""
    held: float | None = None
    failed: float | None = None
    probes: list[tuple[float, RateRun]] = []
    again: list[float] = []
    offered = rate.writes + rate.reads
    while len(probes) - len(again) < most:
        result = loaded.run(scaled(rate, offered))
        probes.append((offered, result))
        why = missed(result, slo)
        ok = not why
        repeat = not ok and held_before is not None and offered * (1 + resolution) <= held_before \
            and offered not in again
        say(f"{offered:,.0f} ops/s: {'holds' if ok else 'does not hold'} {slo.describe()} "
            f"({slo.metric} {result[slo.metric]:,.0f}, delivered {result['delivered']:.1%}"
            + ("" if ok else f"; {', '.join(why)}") + ")"
            + (f"; it held {held_before:,.0f} ops/s in an earlier round: running it again" if repeat else ""))
        if repeat:
            again.append(offered)
            continue
        if ok:
            held = offered
        else:
            failed = offered
        if held is not None and failed is not None:
            if failed / held <= 1 + resolution:
                break
            offered = math.sqrt(held * failed)
        else:
            offered = offered * step if ok else offered / step
        if offered < 1:
            break
    return Capacity(slo, held, failed, tuple(probes), tuple(again))


def shared_start(held: list[float | None]) -> float | None:
    """Where every capacity search of a round starts: the geometric mean of the rates the round before
    held (None when none held). A configuration's own last capacity would carry an early lucky run into
    all its later searches."""
    rates = [r for r in held if r is not None]
    return statistics.geometric_mean(rates) if rates else None
