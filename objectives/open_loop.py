"""RocksDB at a fixed offered rate, each request timed from when it was due (``open_loop``, built from
objectives/build/open_loop.cc beside each release db_bench, linked with the same RocksDB).

db_bench's ``--benchmark_write_rate_limit`` is closed loop: a stalled writer issues fewer requests,
and a stall counts as one slow sample. ``open_loop`` keeps a schedule (constant or Poisson arrivals at
the offered rate), so a second-long stall shows as the second of requests queued behind it, in the
percentiles, the per-second series and the share of the offered rate that was delivered.

:class:`Loaded` builds a DB of the target's data with the configuration once (outside any memory
limit); each :meth:`Loaded.run` takes a checkpoint of it, drops its files from the page cache and runs a
rate on it within the memory limit: what ``rocksdb-tuner measure`` prints (the rates, what a run reports, the
SLO and the capacity search are objectives.rates').
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from objectives.dbbench import CACHE_DIR
from objectives.memory import Cgroups, MemoryCgroup, evict, read_through
from objectives.rates import Rate, RateRun, Second, Window
from objectives.workdir import clone_snapshot, make_owned, remove_owned, tree_size

BINARY = "open_loop"
# The default job's keys and values (steady-overwrite, as RocksDB's benchmark.sh): 20 B and 400 B.
KEY_SIZE, VALUE_SIZE = 20, 400
# The first minutes of runs after a load miss tails the later runs hold (docs/measure.md, "The first runs on a
# DB after its load"): that long of runs at the rate, scored nowhere, comes before the first measured one, in
# WARM_UP_MOST runs at most (the records' 30 s runs were in line by their third to fifth run).
WARM_UP_SECONDS = 120.0
WARM_UP_MOST = 4


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


def parse(stdout: str) -> RateRun:
    """A run's stdout: its ``{"series": ...}`` line, its ``{"windows": ...}`` and ``{"kernel_waits": ...}``
    lines when asked for, and its metrics line (the last with ops_per_sec)."""
    series: list[Second] = []
    windows: list[Window] = []
    kernel_waits: dict[str, int] = {}
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
        elif "kernel_waits" in record:
            kernel_waits = {w["stack"]: int(w["samples"]) for w in record["kernel_waits"]}
        elif "ops_per_sec" in record:
            metrics = {k: float(v) for k, v in record.items()}
    if metrics is None:
        raise OpenLoopError(f"open_loop printed no metrics line: {stdout[-300:]!r}")
    return RateRun(metrics, tuple(series), version, windows=tuple(windows), kernel_waits=kernel_waits)


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
    so one load serves many rates. With ``read_once`` every file of it is read once after the load
    (objectives.memory.read_through). A context manager: the directory is removed on exit."""

    def __init__(self, driver: Driver, work_dir: Path, data: int, options: Path | None = None,
                 memory_limit: int | None = None, say: Callable[[str], None] = lambda _: None,
                 key_size: int = KEY_SIZE, value_size: int = VALUE_SIZE, age: int = 0, read_once: bool = False):
        self.driver, self.work_dir, self.data, self.options, self.age = driver, work_dir, data, options, age
        self.read_once = read_once
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
            if self.read_once:
                started = time.monotonic()
                read = read_through(self.dir / "db")
                self.say(f"read its {read / 2**30:.2f} GiB once in {time.monotonic() - started:.0f} s")
        except BaseException:
            remove_owned(self.dir)
            raise
        return self

    def __exit__(self, *_: object) -> None:
        remove_owned(self.dir)

    def _options(self) -> list[str]:
        return ["--options", str(self.options)] if self.options else []

    def warm_up(self, rate: Rate) -> None:
        """:func:`warm_up_runs` runs of ``rate`` on it with its own options, their figures thrown away."""
        runs = warm_up_runs(rate.duration)
        self.say(f"warming up: {runs} runs of {rate.duration:g} s at {rate.writes + rate.reads:,.0f} ops/s, not scored "
                 "(a DB's first minutes of runs after its load miss tails later runs hold)")
        for _ in range(runs):
            self.run(rate)

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
                               *self.sizes, *self._options(), *driver_flags(rate)],
                               timeout=run_timeout(rate.duration, rate.settle), cgroup=cgroup)
        finally:
            remove_tree(db)
        result = parse(out)
        return dataclasses.replace(result, load_seconds=self.seconds, memory=memory)


def warm_up_runs(duration: float) -> int:
    """How many runs of ``duration`` seconds make WARM_UP_SECONDS: one at least, WARM_UP_MOST at most."""
    return min(WARM_UP_MOST, max(1, math.ceil(WARM_UP_SECONDS / duration - 1e-9)))


def offered(rate: Rate, rates: tuple[str, str] | None = None) -> list[str]:
    """The driver's flags for what ``rate`` offers: the rates (or the words ``rates`` for them), their threads,
    the arrivals, and the background threads' priority they compete with."""
    writes, reads = rates or (f"{rate.writes:g}", f"{rate.reads:g}")
    return ["--rate", writes, "--read_rate", reads, "--threads", str(rate.threads),
            "--read_threads", str(rate.read_threads), "--arrivals", rate.arrivals,
            "--background_priority", rate.background]


def driver_flags(rate: Rate) -> list[str]:
    """The driver's flags for a run of ``rate``: what it offers, for how long, its --settle (as long as the
    window at most, with ``settle``), its seed, the windows whose tails it reports and the calls whose time it
    breaks down."""
    return [*offered(rate), "--duration", f"{rate.duration:g}",
            *(["--settle", f"{rate.duration:g}"] if rate.settle else []), "--seed", str(rate.seed),
            *(["--windows", ",".join(map(str, rate.windows))] if rate.windows else []),
            *(["--slow_call_us", f"{rate.slow_call_us:g}"] if rate.slow_call_us else [])]


def remove_tree(path: Path) -> None:
    """A run's checkpoint inside a directory this process owns (never anything else)."""
    if path.exists():
        shutil.rmtree(path)
