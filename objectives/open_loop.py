"""RocksDB at a fixed offered rate, each request timed from when it was due (``open_loop``, built from
objectives/build/open_loop.cc beside each release db_bench, linked with the same RocksDB).

db_bench's ``--benchmark_write_rate_limit`` is closed loop: a stalled writer issues fewer requests,
and a stall counts as one slow sample. ``open_loop`` keeps a schedule (constant or Poisson arrivals at
the offered rate), so a second-long stall shows as the second of requests queued behind it, in the
percentiles, the per-second series and the share of the offered rate that was delivered.

:class:`Loaded` builds a DB of the target's data with the configuration once (outside any memory
limit); each :meth:`Loaded.run` takes a checkpoint of it, drops its files from the page cache and runs a
rate on it within the memory limit: what ``rocksdb-tuner measure`` prints; :func:`capacity` searches the
highest rate that holds an SLO.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from objectives.dbbench import CACHE_DIR
from objectives.memory import Cgroups, MemoryCgroup, evict
from objectives.scores import Bound
from objectives.workdir import clone_snapshot, make_owned, remove_owned, tree_size

BINARY = "open_loop"
# The default job's keys and values (steady-overwrite, as RocksDB's benchmark.sh): 20 B and 400 B.
KEY_SIZE, VALUE_SIZE = 20, 400
PERCENTILES = ("p50_us", "p99_us", "p99.9_us", "p99.99_us", "max_us")
ARRIVALS = ("constant", "poisson")
BACKGROUND = ("normal", "low")  # RocksDB's flush and compaction threads at the requests' CPU priority, or nice 19


class OpenLoopError(RuntimeError):
    """What was asked cannot run (no driver of that version, no such OPTIONS file); the message says why."""


class DriverFailed(OpenLoopError):
    """The driver ran and failed: it exited non-zero (its last line of stderr, an OOM kill) or timed out."""


@dataclass(frozen=True)
class Driver:
    """One ``open_loop`` binary: where, and the RocksDB version it is linked with."""

    path: Path
    version: str


def drivers() -> list[Driver]:
    """Every built driver in the release builds' cache, newest RocksDB first."""
    found = []
    for build in CACHE_DIR.glob("*-release"):
        if (build / BINARY).is_file() and os.access(build / BINARY, os.X_OK):
            found.append(Driver(build / BINARY, build.name.removesuffix("-release")))
    return sorted(found, key=lambda d: tuple(int(p) if p.isdigit() else 0 for p in d.version.split(".")), reverse=True)


def find(version: str | None = None) -> Driver:
    """The driver of RocksDB ``version`` (``X.Y`` or ``X.Y.Z``), else the newest; OpenLoopError saying
    how to build one when there is none."""
    built = drivers()
    match = [d for d in built if version is None or d.version == version or d.version.startswith(version + ".")]
    if match:
        return match[0]
    have = ", ".join(d.version for d in built) or "none"
    wanted = f" of RocksDB {version}" if version else ""
    raise OpenLoopError(f"no open_loop driver{wanted} in {CACHE_DIR} (built: {have}): `make db_bench"
                        f"{' ROCKSDB_VERSION=' + version if version else ''}` builds it beside db_bench")


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

    def __getitem__(self, name: str) -> float:
        return self.metrics[name]

    def to_dict(self) -> dict[str, object]:
        return {**self.metrics, "rocksdb_version": self.rocksdb_version, "load_seconds": self.load_seconds,
                **self.memory, "series": [vars(s) for s in self.series],
                **({"windows": [w.to_dict() for w in self.windows]} if self.windows else {})}


def parse(stdout: str) -> RateRun:
    """A run's stdout: its ``{"series": ...}`` line, its ``{"windows": ...}`` line when asked for, and its
    metrics line (the last with ops_per_sec)."""
    series: list[Second] = []
    windows: list[Window] = []
    version = ""
    metrics: dict[str, float] | None = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if "series" in record:
            series = [Second(**s) for s in record["series"]]
            version = record.get("rocksdb_version", "")
        elif "windows" in record:
            windows = [Window.of(w) for w in record["windows"]]
        elif "ops_per_sec" in record:
            metrics = {k: float(v) for k, v in record.items()}
    if metrics is None:
        raise OpenLoopError(f"open_loop printed no metrics line: {stdout[-300:]!r}")
    return RateRun(metrics, tuple(series), version, windows=tuple(windows))


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

    def offered(self, rates: tuple[str, str] | None = None) -> list[str]:
        """The driver's flags for what is offered: the rates (or the words ``rates`` for them), their
        threads, the arrivals, and the background threads' priority they compete with."""
        writes, reads = rates or (f"{self.writes:g}", f"{self.reads:g}")
        return ["--rate", writes, "--read_rate", reads, "--threads", str(self.threads),
                "--read_threads", str(self.read_threads), "--arrivals", self.arrivals,
                "--background_priority", self.background]

    def argv(self) -> list[str]:
        return [*self.offered(), "--duration", f"{self.duration:g}", *self.settling(), "--seed", str(self.seed),
                *(["--windows", ",".join(map(str, self.windows))] if self.windows else [])]

    def settling(self) -> list[str]:
        """The driver's --settle: as long as the window at most, or nothing without ``settle``."""
        return ["--settle", f"{self.duration:g}"] if self.settle else []


def run_timeout(duration: float, settle: bool = True) -> float:
    """Seconds a driver's run of a ``duration``-second window may take before it is killed: the window,
    its settle (as long again at most) and ten minutes for opening the DB and closing it."""
    return duration * (2 if settle else 1) + 600


def run(argv: list[str], timeout: float, cgroup: MemoryCgroup | None = None) -> tuple[str, dict[str, int | None]]:
    """Run the driver in its own process group (within ``cgroup``): its stdout and the cgroup's report,
    or DriverFailed with its last line of stderr; killed on a timeout or Ctrl-C."""
    if cgroup is not None:
        argv = cgroup.wrap(argv)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    memory: dict[str, int | None] = {}
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DriverFailed(f"open_loop: no result after {timeout:g} s, killed") from None
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if cgroup is not None:
            memory = cgroup.close()
    if proc.returncode != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        oom = MemoryCgroup.out_of_memory(memory) or ""
        raise DriverFailed(f"open_loop exited {proc.returncode}: {lines[-1] if lines else 'no output'}{oom}")
    return out, memory


class Loaded:
    """A DB of ``data`` bytes the driver built with ``options`` (the library's defaults when None), aged
    by ``age`` bytes of random overwrites (the driver's --age), in a directory of the work dir this
    process owns; each run gets a checkpoint of it (hard-linked SST files),
    so one load serves many rates. A context manager: the directory is removed on exit."""

    def __init__(self, driver: Driver, work_dir: Path, data: int, options: Path | None = None,
                 memory_limit: int | None = None, say: Callable[[str], None] = lambda _: None,
                 key_size: int = KEY_SIZE, value_size: int = VALUE_SIZE, age: int = 0):
        self.driver, self.work_dir, self.data, self.options, self.age = driver, work_dir, data, options, age
        self.memory_limit, self.say = memory_limit, say
        self.sizes = ["--key_size", str(key_size), "--value_size", str(value_size)]
        self.cgroups = Cgroups.detect() if memory_limit else None
        self.seconds = 0.0

    def __enter__(self) -> Loaded:
        self.dir = make_owned(self.work_dir)
        try:
            aged = f", then {self.age / 2**30:.2f} GiB of random overwrites" if self.age else ""
            self.say(f"loading {self.data / 2**30:.2f} GiB (keys in order{aged}, then flush and compaction)")
            started = time.monotonic()
            run([str(self.driver.path), "load", "--db", str(self.dir / "db"), "--data", str(self.data),
                 *(["--age", str(self.age)] if self.age else []), *self.sizes, *self._options()], timeout=6 * 3600)
            self.seconds = time.monotonic() - started
            self.say(f"loaded in {self.seconds:.0f} s ({tree_size(self.dir / 'db') / 2**30:.2f} GiB on disk)")
        except BaseException:
            remove_owned(self.dir)
            raise
        return self

    def __exit__(self, *_: object) -> None:
        remove_owned(self.dir)

    def _options(self) -> list[str]:
        return ["--options", str(self.options)] if self.options else []

    def run(self, rate: Rate) -> RateRun:
        """``rate`` on a fresh checkpoint of the DB, its files dropped from the page cache, within the
        memory limit."""
        db = self.dir / "run"
        remove_tree(db)
        clone_snapshot(self.dir / "db", db)
        try:
            cgroup = self.cgroups.for_run(self.memory_limit, db) if self.cgroups and self.memory_limit else None
            if cgroup is None:  # for_run evicts the DB's files
                evict(db)
            out, memory = run([str(self.driver.path), "run", "--db", str(db), "--data", str(self.data),
                               *self.sizes, *self._options(), *rate.argv()],
                               timeout=run_timeout(rate.duration, rate.settle), cgroup=cgroup)
        finally:
            remove_tree(db)
        result = parse(out)
        return dataclasses.replace(result, load_seconds=self.seconds, memory=memory)


def remove_tree(path: Path) -> None:
    """A run's checkpoint inside a directory this process owns (never anything else)."""
    if path.exists():
        shutil.rmtree(path)


# The share of due requests a run must complete for a rate to count as held, beside the SLO itself.
DELIVERED = 0.99
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
    scale = {"us": 1.0, None: 1.0, "ms": 1e3, "s": 1e6}[match[4]]
    return Bound(f"{match[1]}_us", float(match[3]) * scale, flag="--slo")


def holds(run: RateRun, slo: Bound) -> bool:
    """A rate is held when the run completed DELIVERED of the requests due, its tail is within ``slo`` and,
    when it settled, RocksDB caught up with the window's flushes and compactions within the settle."""
    settled = run.metrics.get("settled", 1.0) > 0
    return run["delivered"] >= DELIVERED and slo.excess(run[slo.metric]) <= 0 and settled


@dataclass(frozen=True)
class Capacity:
    """The highest offered rate tried that held the SLO (``held``) and the lowest that did not
    (``failed``); every rate tried, in the order tried."""

    slo: Bound
    held: float | None
    failed: float | None
    probes: tuple[tuple[float, RateRun], ...]

    def to_dict(self) -> dict[str, object]:
        return {"slo": self.slo.describe(), "delivered_at_least": DELIVERED, "held": self.held, "failed": self.failed,
                "probes": [{"offered": offered, **run.to_dict()} for offered, run in self.probes]}


class AtRate(Protocol):
    """What runs a configuration at an offered rate: a :class:`Loaded` DB, or a backend's runs."""

    def run(self, rate: Rate) -> RateRun: ...


def capacity(loaded: AtRate, rate: Rate, slo: Bound, resolution: float = 0.1, most: int = 12,
             say: Callable[[str], None] = lambda _: None, step: float = 2.0) -> Capacity:
    """The highest offered rate whose run holds ``slo``: from ``rate`` (writes and reads scaled together),
    up or down by ``step`` times (doubling or halving) until one holds and one does not, then halving the
    gap (geometrically) until the two are within ``resolution`` of each other, or ``most`` runs. Each
    rate runs once."""
    held: float | None = None
    failed: float | None = None
    probes: list[tuple[float, RateRun]] = []
    total = rate.writes + rate.reads
    offered = total
    while len(probes) < most:
        scale = offered / total
        result = loaded.run(dataclasses.replace(rate, writes=rate.writes * scale, reads=rate.reads * scale))
        probes.append((offered, result))
        ok = holds(result, slo)
        say(f"{offered:,.0f} ops/s: {'holds' if ok else 'does not hold'} {slo.describe()} "
            f"({slo.metric} {result[slo.metric]:,.0f}, delivered {result['delivered']:.1%})")
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
    return Capacity(slo, held, failed, tuple(probes))
