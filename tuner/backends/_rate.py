"""The rate backend: each configuration at a fixed offered rate, open loop (``tune --rate``).

Its runs are ``open_loop`` (objectives/build/open_loop.cc), built beside the release db_bench the study
finds (--rocksdb-version, --db-bench) and linked with the same RocksDB: writes (and reads) issued on a
schedule at --rate (--read-rate), each timed from when it was due, so a stall counts as the requests
queued behind it (objectives.open_loop). It is the command backend with the driver as its program:
the DB is loaded once per study with the library's defaults (keys in order, then flush and compaction),
every run works on a hard-linked checkpoint of it within the memory limit, on the configuration's
OPTIONS file (the driver's library defaults with the configuration's settings set, as the command
backend writes it).

A run reports ``p99.9_us`` (the default objective), the other percentiles, ``delivered``,
``stall_micros``, ``write_amp``, ``sst_bytes``, ... (docs/measure.md), any of which --objective and
--constraint may name. With --objective capacity a trial is a search over rates instead, its score
``held_ops_per_sec``, the highest rate it held --slo at.
"""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from objectives.contract import IntervalObserver, Measurement, Preloaded, RunFailed, RunTask, Task
from objectives.dbbench import DbBenchError, probe
from objectives.defaults import LIBRARY, db_bench_defaults, defaults_of
from objectives.open_loop import BINARY, KEY_SIZE, VALUE_SIZE, offered, run_timeout, warm_up_runs
from objectives.rates import ARRIVALS, BACKGROUND, Capacity, Rate, RateRun, capacity, scaled
from objectives.runner import PRELOAD_PREFIX
from objectives.scores import Bound
from objectives.workdir import latest_options
from search_spaces import GiB
from tuner.backends._command import CommandBackend
from tuner.backends.base import Config, Description, Found, Setup
from tuner.fmt import fmt_bytes
from tuner.model import MeasurementConfig, TuneConfig, UsageError

DEFAULT_DATA = 2 * GiB  # without --target-data: the default job's target
DEFAULT_DURATION = 60.0  # a minute at the rate: long enough to see whether compaction keeps up
DEFAULT_OBJECTIVE = "p99.9_us"
SIZES = ["--key_size", str(KEY_SIZE), "--value_size", str(VALUE_SIZE)]  # the default job's keys and values
RATES = ("{rate}", "{read_rate}")  # the template's words for the offered rates: the study's, or a capacity probe's
CAPACITY_RUNS = 8  # at most, per configuration: a bracket within CAPACITY_RESOLUTION from a start a few times off
CAPACITY_RESOLUTION = 0.1
STEP = (1 + CAPACITY_RESOLUTION) ** 2  # a search near a capacity already known: two resolution steps at a time
TRIAL_RUNS = 3  # --objective capacity: at most, per trial: from its start, 1.46x up or 0.68x down, or a bracket of STEP
START_FILE = "start.json"  # --objective capacity: beside the preloaded DB, the rate the trials' searches start from


class RateBackend(CommandBackend):
    name = "rate"
    needs_command = False
    needs_rate = True
    finds_build = True  # --rocksdb-version and --db-bench choose the build whose driver runs
    distributed = False  # the driver's DB is loaded on this host
    program = None  # open_loop is the tuner's own: a run of it that prints no metrics fails as any failed run
    objective = DEFAULT_OBJECTIVE
    space = "service"  # the default space and when writes slow or stop (search_spaces/presets/service.toml)
    shown = ("failed_ops_per_sec", "delivered", "p50_us", "p99_us", "p99.9_us", "p99.99_us", "max_us", "stall_micros",
             "l0_files", "settle_s", "write_amp")

    @staticmethod
    def templates(setup: Setup) -> tuple[list[str], list[str] | None]:
        """open_loop's run at the rate on ``{db}`` and ``{options}``, and its load of ``{data_bytes}``."""
        found = setup.found
        assert found is not None and found.db_bench is not None and setup.rate is not None, "RateBackend.find first"
        driver = str(driver_beside(found.db_bench.path))
        return ([driver, "run", "--db", "{db}", "--options", "{options}", "--data", "{data_bytes}",
                 "--duration", "{duration}", "--settle", "{duration}", "--seed", "{seed}", *SIZES,
                 *offered(setup.rate, RATES)],
                [driver, "load", "--db", "{db}", "--data", "{data_bytes}", *SIZES])

    def _words(self) -> dict[str, str]:
        assert self.setup.rate is not None
        return rate_words(self.setup.rate)

    def _timeout(self, workload: Task | None) -> float:
        """--trial-timeout, or what a run of ``workload``'s length needs with its settle if more: a
        10-minute run may settle for 10 more."""
        duration = workload.duration if workload is not None and workload.duration else 0.0
        return max(self.setup.timeout, run_timeout(duration))

    def capacity(self, config: Config, slo: Bound, log_dir: Path, workload: Task | None = None,
                 say: Callable[[str], None] = lambda _: None, start: float | None = None,
                 held_before: float | None = None) -> Capacity:
        """From the study's rate up or down by doubling or halving, or from ``start`` ops/s (writes and
        reads in the study's proportion) by two resolution steps (objectives.rates.capacity), each
        rate one run of ``workload`` (the study's by default) on a checkpoint of the loaded DB, logs in
        ``log_dir/<rate>`` (a rate run again in ``log_dir/<rate>-again``), a miss far below ``held_before``
        run again before it counts."""
        assert self.setup.rate is not None
        rate, step = self.setup.rate, 2.0
        if start is not None:  # near an earlier round's capacity: a bracket in about three runs
            step, rate = STEP, scaled(rate, start)
        return capacity(_Runs(self, self.options_text(config), log_dir, workload), rate, slo, CAPACITY_RESOLUTION,
                        CAPACITY_RUNS, say, step, held_before)

    def _measure(self, config: Config, log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Task | None) -> Measurement:
        """A run at the study's rate, as the command backend's; with --objective capacity (``Setup.slo``) a
        search instead: from where the preload put the trials' searches (:meth:`_start`) up or down by STEP,
        then halving the gap to CAPACITY_RESOLUTION, at most TRIAL_RUNS runs (logs in ``log_dir/<rate>``, a line
        per rate in ``capacity.log``), as one run's metrics (:meth:`Capacity.metrics`)."""
        slo = self.setup.slo
        if slo is None:
            return super()._measure(config, log_dir, repeats, observer, workload)
        assert self.setup.rate is not None
        runs = _Runs(self, self.options_text(config), log_dir, workload)
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / "capacity.log", "a") as said:  # a line per rate as it ends
            found = capacity(runs, self._start(workload), slo, CAPACITY_RESOLUTION, TRIAL_RUNS,
                             lambda line: print(line, file=said, flush=True), STEP)
        (log_dir / "capacity.json").write_text(json.dumps(found.to_dict(), indent=1) + "\n")
        metrics: dict[str, float | None] = {**found.metrics()}
        return Measurement(metrics, [], runs.written, runs.argv)

    @classmethod
    def default_config(cls, found: Found, task: Task, flags: list[str]) -> Config:
        """The library's defaults the driver's runs start from, as the searched options' values (read by
        the release db_bench's library_defaults beside it, block cache included): rocksdb-default runs
        first among the trials, and the space holds it."""
        assert found.db_bench is not None, "Backend.find first"
        return Config.of(db_bench_defaults(flags, found.db_bench, defaults_of(found.db_bench)))

    def base_options(self) -> str:
        """The driver's library defaults, as its RocksDB writes them for a new DB."""
        return library_options(self.argv[0])

    @classmethod
    def find(cls, config: TuneConfig) -> Found:
        """The release db_bench the study runs (--db-bench, --rocksdb-version) with its open_loop beside
        it; UsageError saying how to build one."""
        execution = config.execution
        try:
            db_bench = probe(execution.db_bench, execution.rocksdb_version)
        except DbBenchError as exc:
            raise UsageError(f"--rate: {exc}") from None
        driver_beside(db_bench.path)
        return Found(cls.name, db_bench, None, LIBRARY)

    @classmethod
    def task(cls, config: TuneConfig) -> RunTask:
        """A run at the rate on the loaded DB: the target's data (default 2 GiB), --duration (default a
        minute; --search-duration for the search's runs)."""
        m, d = config.measurement, config.target
        if m.rate is None:
            raise UsageError("--rate: the rate backend offers writes at a rate: give --rate OPS (e.g. --rate 30000)")
        if not m.rate > 0 or not m.read_rate >= 0:
            raise UsageError(f"--rate / --read-rate: ops per second, > 0 (and >= 0 for reads), got {m.rate:g} and "
                             f"{m.read_rate:g}")
        if m.arrivals not in ARRIVALS:
            raise UsageError(f"--arrivals: {m.arrivals!r} is not one of {', '.join(ARRIVALS)}")
        if m.background_priority not in BACKGROUND:
            raise UsageError(f"--background-priority: {m.background_priority!r} is not one of {', '.join(BACKGROUND)}")
        if m.defaults != LIBRARY:
            raise UsageError(f"--defaults {m.defaults}: the rate backend starts from its RocksDB's library defaults")
        if config.search.objective == "throughput":
            raise UsageError("--objective throughput: at a fixed rate every configuration that keeps up delivers the "
                             f"same ops/s; name a latency or a cost, e.g. --objective {DEFAULT_OBJECTIVE} (the default "
                             "with --rate), stall_micros or write_amp, or capacity with --slo")
        data = d.target_data or DEFAULT_DATA
        return cls.run_task(m.rate, data, m.duration or DEFAULT_DURATION)

    @classmethod
    def run_task(cls, writes: float, data: int, duration: float, memory: int | None = None) -> RunTask:
        """A run of the driver offering ``writes`` per second for ``duration`` seconds on a DB of ``data`` bytes it
        loads once, within ``memory`` bytes when given."""
        return RunTask(cls.name, f"open_loop at {writes:g} writes/s", data, duration, preloaded=True, memory=memory)

    @classmethod
    def offers_reads(cls, config: TuneConfig) -> bool:
        """Only with --read-rate: the driver's runs offer writes alone otherwise."""
        return config.measurement.read_rate > 0

    @classmethod
    def context_names(cls, config: TuneConfig) -> dict[str, float]:
        """``write_bytes``: the bytes per second the offered writes carry (--rate x the key and value
        size), what a rate limiter on flush and compaction is scaled to (the service space)."""
        return {"write_bytes": (config.measurement.rate or 0) * (KEY_SIZE + VALUE_SIZE)}

    def preload(self, workload: Task, log_dir: Path) -> Preloaded:
        """The command backend's load, then the library's defaults at the study's rate for WARM_UP_SECONDS of
        runs on checkpoints of it (objectives.open_loop.warm_up_runs), scored nowhere, logs in
        ``log_dir/warm-up-<i>``: a DB's first minutes of runs after its load miss tails its later runs hold, and
        the baseline, the first to run on it, would carry them. Their time counts as the preload's."""
        built = super().preload(workload, log_dir)
        started = time.monotonic()
        assert workload.duration, "a rate study's runs have a length"
        for i in range(1, warm_up_runs(workload.duration) + 1):
            try:
                self._run(self.base_options(), log_dir / f"warm-up-{i}", workload)
            except RunFailed as exc:
                raise RunFailed(f"warm-up run {i} (the library's defaults at --rate, within --target-memory): "
                                f"{exc.reason}") from None
        said = self._place(workload, built.path.parent, log_dir / "start") if self.setup.slo is not None else ""
        return replace(built, seconds=built.seconds + time.monotonic() - started, said=said)

    def _place(self, workload: Task, beside: Path, log_dir: Path) -> str:
        """--objective capacity: the library's defaults' capacity search from --rate (doubling or halving, then
        halving the gap to a bracket of STEP, at most CAPACITY_RUNS runs; logs in ``log_dir/<rate>``), and
        where it puts the trials' searches (:func:`trial_start`), kept in ``beside/START_FILE`` and, with the
        search, in ``log_dir/capacity.json``; that, in words.
        A trial's few runs then tell configurations apart around the defaults' capacity on this host and DB,
        wherever --rate lies."""
        assert self.setup.rate is not None and self.setup.slo is not None
        rate, slo = self.setup.rate, self.setup.slo
        try:
            found = capacity(_Runs(self, self.base_options(), log_dir, workload), rate, slo, STEP - 1, CAPACITY_RUNS)
        except RunFailed as exc:
            raise RunFailed(f"the library's defaults' capacity search from --rate: {exc.reason}") from None
        start = trial_start(found, rate.writes + rate.reads)
        placed = json.dumps({"start": start, **found.to_dict()}, indent=1) + "\n"
        for where in (beside / START_FILE, log_dir / "capacity.json"):  # the runs', and the study's logs
            where.write_text(placed)
        held = f"held {found.held:,.0f} ops/s" if found.held is not None else "held no rate tried"
        failed = f", not {found.failed:,.0f}" if found.failed is not None else ""
        return (f"the library's defaults {held} at {slo.describe()}{failed} ({len(found.probes)} runs from --rate): "
                f"each trial searches from {start:,.0f} ops/s")

    def _start(self, workload: Task | None) -> Rate:
        """The study's rate, scaled to where the preload put the trials' searches (:meth:`placed`), else as given."""
        assert self.setup.rate is not None
        task = workload or self.setup.workload
        start = self.placed(task) if task is not None else None
        return self.setup.rate if start is None else scaled(self.setup.rate, start)

    @classmethod
    def placed(cls, workload: Task) -> float | None:
        """--objective capacity: where the preload put the trials' searches, its START_FILE beside the DB
        ``workload`` starts from; None when there is none."""
        placed = Path(workload.snapshot).parent / START_FILE if workload.snapshot else None
        return float(json.loads(placed.read_text())["start"]) if placed is not None and placed.is_file() else None

    @classmethod
    def preload_path(cls, found: Found, work_dir: Path, workload: Task, seed: int) -> Path:
        return work_dir / f"{PRELOAD_PREFIX}rate-{os.getpid()}-{workload.data_bytes()}-{seed}" / "db"

    @classmethod
    def describe(cls, workload: Task, measurement: MeasurementConfig) -> Description:
        reads = f" + {measurement.read_rate:,.0f} reads/s" if measurement.read_rate else ""
        nice = ", flush and compaction at nice 19" if measurement.background_priority == "low" else ""
        assert workload.duration, "a rate study's runs have a length"
        return Description(cls.name, f"open loop at {measurement.rate or 0:,.0f} writes/s{reads} ({measurement.arrivals} "
                                     f"arrivals, latency from each request's due time{nice}), {fmt_bytes(workload.data_bytes())} "
                                     f"of data, {workload.duration:g} s per run", "runs at the rate",
                           f"open_loop load of {fmt_bytes(workload.data_bytes())} (keys in order, the library's defaults), "
                           f"then {warm_up_runs(workload.duration)} runs of them at the rate, not "
                           "scored (a DB's first minutes of runs miss tails later runs hold)",
                           "--target-data")


def trial_start(found: Capacity, rate: float) -> float:
    """Where a capacity study's trials search from: the middle (geometric) of the defaults' bracket, the
    rate they held when none tried failed, the lowest that failed over STEP when none held (``rate``, the
    study's, when nothing ran)."""
    if found.held is not None and found.failed is not None:
        return math.sqrt(found.held * found.failed)
    if found.held is not None:
        return found.held
    return found.failed / STEP if found.failed is not None else rate


class _Runs:
    """A configuration's runs at the rates a capacity search offers, on a checkpoint of the loaded DB each,
    logs in ``log_dir/<rate>`` (a rate run again: ``<rate>-again``): what RocksDB wrote as its OPTIONS and
    the command lines, kept."""

    def __init__(self, backend: RateBackend, options: str, log_dir: Path, workload: Task | None):
        self.backend, self.options, self.log_dir, self.workload = backend, options, log_dir, workload
        self.written = options
        self.argv: list[list[str]] = []
        self.ran: set[str] = set()

    def run(self, rate: Rate) -> RateRun:
        name = f"{rate.writes + rate.reads:.0f}"
        name = f"{name}-again" if name in self.ran else name
        self.ran.add(name)
        metrics, self.written, argv, _ = self.backend._run(
            self.options, self.log_dir / name, self.workload or self.backend.setup.workload, rate_words(rate))
        self.argv.append(argv)
        return RateRun({k: v for k, v in metrics.items() if v is not None}, (), "")


def rate_words(rate: Rate) -> dict[str, str]:
    """The template's rate words (RATES) for ``rate``."""
    return dict(zip(RATES, (f"{rate.writes:g}", f"{rate.reads:g}"), strict=True))


def driver_beside(db_bench: str, flag: str = "--rate") -> Path:
    """The open_loop built beside ``db_bench``; UsageError naming ``flag`` and saying how to build it."""
    driver = Path(db_bench).resolve().parent / BINARY
    if not os.access(driver, os.X_OK):
        raise UsageError(f"{flag}: no {BINARY} beside {db_bench}: `make db_bench` builds it beside the release "
                         "db_bench (--rocksdb-version X.Y for another version)")
    return driver


@functools.cache
def library_options(driver: str) -> str:
    """The OPTIONS file the driver's RocksDB writes for a new DB on its library defaults."""
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-defaults-") as tmp:
        subprocess.run([driver, "load", "--db", f"{tmp}/db", "--data", str(KEY_SIZE + VALUE_SIZE), *SIZES],
                       check=True, capture_output=True, timeout=120)
        return latest_options(Path(tmp) / "db")
