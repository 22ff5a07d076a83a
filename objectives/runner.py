"""Running a workload with one configuration's flags: real db_bench processes, one per phase.

Each run gets a fresh temporary directory under the work dir (with a marker file; the DB lives
inside, a copy of a snapshot for trace workloads), a deadline for all its phases, and leaves behind
only its logs. db_bench runs in its own process group, never through a shell; its stdout/stderr go
to files in the run's log directory.

Every phase ends with a drain (docs/metrics.md): db_bench's ``flush`` and ``waitforcompaction`` in
the same process, after ``stats,levelstats,memstats`` record the LSM state a scored phase left. How
long the drain took is read from the DB's LOG (when the last flush or compaction ended), so the fixed
sleeps of ``waitforcompaction`` never count. With a memory limit, scored phases run in a memory
cgroup of their own (objectives.memory), their DB's files dropped from the page cache first. A
Runner's ``stop`` event, once set (a remote executor's worker told to stop), kills the running db_bench
as a timeout does: the run fails, its DB removed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import resource
import shutil
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from objectives import workdir
from objectives.contract import (
    DISK_FULL,
    STOPPED,
    EnvironmentFault,
    IntervalObserver,
    Preloaded,
    RunFailed,
    RunStopped,
)
from objectives.dbbench import DbBench
from objectives.defaults import Defaults, defaults_of
from objectives.flags import Flag, format_flag
from objectives.memory import Cgroups, MemoryCgroup, MemoryLimitError
from objectives.parser import Output, ParseError, parse, parse_report, require
from objectives.rocksdb_log import LogFacts, read_log
from objectives.workdir import (
    MARKER,
    clone_snapshot,
    latest_options,
    make_owned,
    mark,
    remove_owned,
    sweep_stale,
    tree_size,
)
from objectives.workloads import Phase, Workload

_KILL_GRACE = 3.0
_QUIET = 2.0  # seconds without a new report line (written every second) after which the operations have ended
# The flags every db_bench invocation gets from the runner itself.
RUNNER_FLAGS = {"db", "benchmarks", "use_existing_db", "statistics", "histogram", "progress_reports", "seed",
                "report_interval_seconds", "report_file"}
# db_bench writes each phase's throughput per second to <phase>.report.csv in the trial's log dir.
REPORT_INTERVAL_SECONDS = 1
# util-linux's setpriv makes the kernel SIGKILL db_bench when the tuner dies, even by SIGKILL.
_SETPRIV = shutil.which("setpriv")
# Appended to every phase when the workload drains (the default): the LSM state a scored phase left,
# then memtables flushed and compaction run until nothing is pending.
LSM_STATE = ("stats", "levelstats", "memstats")
DRAIN = ("flush", "waitforcompaction")
# A preloaded workload's timed phase ends as RocksDB's benchmark.sh `flush_mt_l0` leaves a DB: memtables
# and L0 flushed (compact0 merges every L0 file into L1, retrying after running compactions), then the
# compactions that leaves owed; so every configuration pays for the L0 files it left below the trigger,
# and none gains from where the phase happened to end in its L0 -> L1 cycle (docs/scale.md).
STEADY_DRAIN = ("flush", "compact0", "waitforcompaction")
# Preloaded DBs live in the work dir as rocksdb-tuner-preload-<key>/db; building one may take long.
PRELOAD_PREFIX = "rocksdb-tuner-preload-"
PRELOAD_TIMEOUT = 6 * 3600.0
# Signals that end db_bench from outside when the runner did not send them (its own stops, the trial
# timeout and a pruner's, never reach the classification): kill(1), a closed terminal, a supervisor.
OUTSIDE_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


@dataclass
class PhaseRun:
    """One db_bench invocation: its command, resources used, parsed output and LOG."""

    name: str
    scored: bool
    command: list[str]
    returncode: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    started_at: float = 0.0  # wall clock when db_bench was started
    output: Output = field(default_factory=Output)
    intervals: list[tuple[int, float]] = field(default_factory=list)
    log: LogFacts = field(default_factory=LogFacts)
    drain_seconds: float | None = None  # a draining scored phase: its ops' end to the last flush/compaction
    memory: dict[str, int | None] | None = None  # its memory cgroup's limit, peak and OOM kills
    host_oom_kills: int = 0  # the kernel's OOM kills on this host while it ran (/proc/vmstat)

    def operations_end(self) -> float:
        """When the phase's timed benchmarks ended: the DB's open (LOG) plus their seconds."""
        seconds = sum(r.operations / r.ops_per_sec for r in self.output.results if r.operations and r.ops_per_sec)
        return (self.log.opened or self.started_at) + seconds


@dataclass
class RunResult:
    phases: list[PhaseRun]
    db_size_bytes: int
    options_text: str
    seed: int
    checkpoint_seconds: float | None = None  # the copy of the snapshot it started on, when it did

    @property
    def commands(self) -> list[list[str]]:
        return [p.command for p in self.phases]


def phase_command(db_bench: str, phase: Phase, flags: Mapping[str, Flag], db: Path, seed: int, report: Path,
                  existing: bool, drain: tuple[str, ...]) -> list[str]:
    """The db_bench command line of one phase: its benchmarks, then (``drain``) the LSM state and the
    drain's; the runner's own flags, then ``flags``."""
    benchmarks = list(phase.benchmarks)
    if drain:
        benchmarks += [*(LSM_STATE if phase.scored else ()), *drain]
    fixed: dict[str, Flag] = {
        "db": str(db),
        "benchmarks": ",".join(benchmarks),
        "use_existing_db": existing,
        "statistics": True,
        "histogram": True,
        "progress_reports": False,
        "seed": seed,
        "report_interval_seconds": REPORT_INTERVAL_SECONDS,
        "report_file": str(report),
    }
    assert fixed.keys() == RUNNER_FLAGS
    return [db_bench, *(format_flag(k, v) for k, v in {**fixed, **flags}.items())]


def phase_drain(workload: Workload, index: int) -> tuple[str, ...]:
    """What ends phase ``index`` of ``workload``: a preload run in the run itself ends as one built once
    (:meth:`Runner.preload`: DRAIN); the phases on a preloaded DB, built once or in the run, as benchmark.sh
    leaves a steady state (STEADY_DRAIN); a load workload's, DRAIN; none where the workload does not drain."""
    if workload.runs_its_preload and index == 0:
        return DRAIN
    if not workload.drain:
        return ()
    return STEADY_DRAIN if workload.kind == "preloaded" or workload.runs_its_preload else DRAIN


def preload_dir(db_bench: DbBench, work_dir: Path, workload: Workload, seed: int, defaults: Defaults) -> Path:
    """Where ``workload``'s preloaded DB is built in the work dir (``<this>/db``): named by what builds
    it (benchmarks, flags, the defaults beneath them, seed, db_bench's binary and version), so a resumed
    study finds its own."""
    assert workload.preload is not None
    what = {"benchmarks": workload.preload.benchmarks, "flags": {**workload.flags, **workload.preload.flags},
            "defaults": defaults.flags, "seed": seed, "db_bench": [db_bench.path, db_bench.version]}
    key = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return work_dir / f"{PRELOAD_PREFIX}{key}"


class Runner:
    """Runs workloads on one db_bench binary under one work directory, every run on ``defaults``
    (objectives.defaults; the library's of db_bench's version unless given), scored phases within
    ``memory_limit`` bytes when one is given."""

    def __init__(self, db_bench: DbBench, work_dir: str | os.PathLike[str] | None = None, timeout: float = 600.0,
                 memory_limit: int | None = None, defaults: Defaults | None = None,
                 stop: threading.Event | None = None):
        self.db_bench = db_bench
        self.work_dir = Path(work_dir) if work_dir else workdir.prepare(None)
        self.timeout, self.memory_limit, self.stop = timeout, memory_limit, stop or threading.Event()
        self.defaults = defaults or defaults_of(db_bench)
        self.cgroups: Cgroups | None = None
        self.memory_fallback: str | None = None  # why scored phases read with direct I/O instead
        if memory_limit:
            self._detect()

    def _detect(self) -> None:
        """Find the memory cgroup hierarchy, else fall back to direct reads (said in memory_fallback)."""
        if self.cgroups is not None or self.memory_fallback is not None:
            return
        try:
            self.cgroups = Cgroups.detect()
        except MemoryLimitError as exc:
            self.memory_fallback = (f"no memory cgroup ({exc}): scored phases read with --use_direct_reads "
                                    "instead, so the page cache cannot hold what the block cache does not")

    def sweep_stale(self, keep: tuple[Path, ...] = ()) -> list[Path]:
        """Remove the trial and preload directories of gone tuners on this host, but ``keep`` (a resume's)."""
        return sweep_stale(self.work_dir, keep)

    def command(self, workload: Workload, index: int, flags: Mapping[str, Flag], db: Path, seed: int,
                report: Path) -> list[str]:
        return self._command(workload.phases[index], {**workload.phase_flags(index), **flags}, db, seed, report,
                             existing=index > 0 or workload.kind != "load", drain=phase_drain(workload, index))

    def _command(self, phase: Phase, flags: Mapping[str, Flag], db: Path, seed: int, report: Path, existing: bool,
                 drain: tuple[str, ...]) -> list[str]:
        direct = {"use_direct_reads": True} if phase.scored and self.memory_fallback else {}
        return phase_command(self.db_bench.path, phase, {**self.defaults.flags, **flags, **direct}, db, seed, report, existing,
                             drain)

    def preload(self, workload: Workload, log_dir: Path, seed: int = 1) -> Preloaded:
        """Build ``workload``'s DB once (its [preload] phase, then a flush and a wait for compaction) where
        its ``snapshot`` says (``<dir>/db``: a worker node's copy of the driver's, named alike), else at
        :meth:`preload_dir`; a DB built there before (a resumed study) is reused. Built in a temporary
        directory renamed when complete, so a killed build never passes for a DB."""
        final = Path(workload.snapshot).parent if workload.snapshot else \
            preload_dir(self.db_bench, self.work_dir, workload, seed, self.defaults)
        if (final / MARKER).is_file() and (final / "db" / "CURRENT").is_file():
            mark(final)  # ours now: a sweep by this process leaves it alone
            return Preloaded(final / "db", 0.0, tree_size(final / "db"), reused=True)
        assert workload.preload is not None
        log_dir.mkdir(parents=True, exist_ok=True)
        building = make_owned(self.work_dir, f"{PRELOAD_PREFIX}building-")
        report = log_dir / "preload.report.csv"
        cmd = self._command(workload.preload, {**workload.flags, **workload.preload.flags}, building / "db", seed,
                            report, existing=False, drain=DRAIN)
        try:
            run = self._execute("preload", cmd, log_dir, time.monotonic() + PRELOAD_TIMEOUT)
            self._read_phase(run, workload.preload.measured(), False, log_dir, report, building / "db")
            os.rename(building, final)
        except OSError as exc:
            reason = f"preload: {exc.strerror or exc}: {exc.filename or ''}".strip()
            raise (EnvironmentFault(DISK_FULL, reason) if exc.errno == errno.ENOSPC else RunFailed(reason)) from None
        finally:
            remove_owned(building)
        return Preloaded(final / "db", run.wall_seconds, tree_size(final / "db"))

    def run(self, workload: Workload, flags: Mapping[str, Flag], log_dir: Path, seed: int = 1,
            observer: IntervalObserver | None = None) -> RunResult:
        """Run every phase; raise RunFailed with a reason on any failure. The DB is always removed.

        ``observer`` sees the scored phases' per-second throughput while they run; when it returns
        True, db_bench is stopped and RunStopped raised."""
        log_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.timeout
        phases: list[PhaseRun] = []
        tmp: Path | None = None
        try:
            tmp = make_owned(self.work_dir)
            db = tmp / "db"
            if workload.kind == "preloaded" and not workload.snapshot:
                raise RunFailed("the workload's preloaded DB has not been built (Runner.preload)")
            if workload.snapshot:
                started = time.monotonic()
                clone_snapshot(Path(workload.snapshot), db)
                checkpoint = time.monotonic() - started
            for index, phase in enumerate(workload.phases):
                report = log_dir / f"{phase.name}.report.csv"
                cmd = self.command(workload, index, flags, db, seed, report)
                watch = (_ReportWatch(phase.name, report, observer) if phase.scored else
                         _ClockWatch(phase.name, observer)) if observer else None
                cgroup = self._cgroup(phase.scored, db, workload.memory or self.memory_limit)
                memory: dict[str, int | None] | None = None
                try:
                    run = self._execute(phase.name, cmd, log_dir, deadline, watch, cgroup)
                finally:
                    if cgroup is not None:
                        memory = cgroup.close()
                run.scored, run.memory = phase.scored, memory
                phases.append(run)
                self._read_phase(run, phase.measured(), workload.drain, log_dir, report, db)
            if not db.is_dir():  # removed from outside after db_bench last wrote it
                raise RunFailed(f"{db} vanished")
            return RunResult(phases, tree_size(db), latest_options(db), seed,
                             checkpoint if workload.snapshot else None)
        except OSError as exc:
            failed = RunFailed(f"{exc.strerror or exc}: {exc.filename or ''}".strip())
            raise _classified(failed, self.work_dir, tmp, workload, exc.errno == errno.ENOSPC) from None
        except RunFailed as exc:
            raise _classified(exc, self.work_dir, tmp, workload) from None
        finally:
            if tmp is not None:
                remove_owned(tmp)

    def _cgroup(self, scored: bool, db: Path, limit: int | None) -> MemoryCgroup | None:
        """A memory cgroup for a scored phase under a memory limit (the workload's own, else the
        runner's), its DB evicted from the page cache."""
        if not scored or limit is None:
            return None
        self._detect()
        return self.cgroups.for_run(limit, db) if self.cgroups is not None else None

    def _read_phase(self, run: PhaseRun, measured: tuple[str, ...], drain: bool, log_dir: Path, report: Path,
                    db: Path) -> None:
        """Parse a finished phase's output, report file and LOG; fail the run on a bad exit or output."""
        if report.is_file():
            run.intervals = parse_report(report.read_text(errors="replace"))
        stdout = (log_dir / f"{run.name}.stdout").read_text(errors="replace")
        stderr = (log_dir / f"{run.name}.stderr").read_text(errors="replace")
        if run.returncode != 0:
            reason = _exit_reason(run.name, run.returncode, stderr or stdout)
            cgroup_oom = MemoryCgroup.out_of_memory(run.memory)
            host_oom = run.returncode == -signal.SIGKILL and run.host_oom_kills > 0
            if cgroup_oom:
                reason += cgroup_oom
            elif host_oom:
                reason += " (out of memory: the kernel's OOM killer struck while it ran)"
            _fail(reason, run.returncode, stderr + stdout, bool(cgroup_oom) or host_oom)
        try:
            run.output = parse(stdout)
            require(run.output, measured)
        except ParseError as exc:
            _fail(f"phase {run.name}: {exc}", 0, stderr + stdout, False)
        run.log = read_log(db / "LOG")
        if run.scored and drain:
            run.drain_seconds = run.log.drain_seconds(run.operations_end())

    def _execute(self, name: str, cmd: list[str], log_dir: Path, deadline: float,
                 watch: _ReportWatch | _ClockWatch | None = None, cgroup: MemoryCgroup | None = None) -> PhaseRun:
        (log_dir / f"{name}.command").write_text(" ".join(cmd) + "\n")
        started, started_at, ooms = time.monotonic(), time.time(), _host_oom_kills()
        with open(log_dir / f"{name}.stdout", "wb") as out, open(log_dir / f"{name}.stderr", "wb") as err:
            argv = [_SETPRIV, "--pdeathsig", "KILL", "--", *cmd] if _SETPRIV else cmd
            if cgroup is not None:
                argv = cgroup.wrap(argv)
            pid = os.posix_spawn(
                argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                                         (os.POSIX_SPAWN_DUP2, err.fileno(), 2)],
                setsid=True,
            )
        status, usage, killed, stopped = None, None, False, None
        try:
            while status is None or usage is None:  # both set at once
                waited, st, ru = os.wait4(pid, os.WNOHANG)
                if waited:
                    status, usage = st, ru
                elif time.monotonic() > deadline or self.stop.is_set():
                    killed = True
                    _, status, usage = _kill(pid)
                elif watch is not None and (stopped := watch.poll()) is not None:
                    _, status, usage = _kill(pid)
                else:
                    time.sleep(0.05)
        finally:
            if status is None:  # interrupted (Ctrl-C) or an error in this loop: never leave db_bench running
                _kill(pid)
        wall = time.monotonic() - started
        if killed:
            why = STOPPED if self.stop.is_set() else f"timeout, killed after the trial's {self.timeout:g} s limit"
            raise RunFailed(f"phase {name}: {why}")
        if stopped is not None:
            raise RunStopped(name, stopped)
        return PhaseRun(
            name=name,
            scored=False,
            command=cmd,
            returncode=os.waitstatus_to_exitcode(status),
            wall_seconds=wall,
            cpu_seconds=usage.ru_utime + usage.ru_stime,
            peak_rss_bytes=usage.ru_maxrss * 1024,
            started_at=started_at,
            host_oom_kills=_host_oom_kills() - ooms,
        )


class _ReportWatch:
    """Follows a running phase's --report_file and hands each new second to the observer; once the
    report has gone quiet (db_bench's reporter writes every second while the operations run, stalled or
    not, and stops with them), each further second of the phase, its drain, as ``None``."""

    def __init__(self, phase: str, path: Path, observer: IntervalObserver):
        self.phase, self.path, self.observer = phase, path, observer
        self.seen = 0
        self.next_check = 0.0
        self.last: tuple[int, float] | None = None  # the last reported second, and when it was read
        self.told = 0  # the last second handed to the observer

    def poll(self) -> int | None:
        """The second at which the observer asked to stop, or None (checked twice a second)."""
        now = time.monotonic()
        if now < self.next_check:
            return None
        self.next_check = now + 0.5
        try:
            text = self.path.read_text(errors="replace")
        except OSError:
            return None
        complete = text[: text.rfind("\n") + 1]  # the reporter may be mid-line
        for second, qps in parse_report(complete)[self.seen:]:
            self.seen += 1
            self.last, self.told = (second, now), max(self.told, second)
            if self.observer(self.phase, second, qps):
                return second
        if self.last is None or now - self.last[1] < _QUIET:
            return None
        for second in range(self.told + 1, self.last[0] + int(now - self.last[1]) + 1):
            self.told = second
            if self.observer(self.phase, second, None):
                return second
        return None


class _ClockWatch:
    """Hands each second of an unscored phase (a load) to the observer as ``None``: what watches the
    time a run takes (the --budget's guard) sees its loads too."""

    def __init__(self, phase: str, observer: IntervalObserver):
        self.phase, self.observer = phase, observer
        self.started, self.told = time.monotonic(), 0

    def poll(self) -> int | None:
        """The second at which the observer asked to stop, or None."""
        while self.told < int(time.monotonic() - self.started):
            self.told += 1
            if self.observer(self.phase, self.told, None):
                return self.told
        return None


def _kill(pid: int) -> tuple[int, int, resource.struct_rusage]:
    """SIGTERM the process group, SIGKILL it after a grace period, reap and return wait4's answer."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    end = time.monotonic() + _KILL_GRACE
    while time.monotonic() < end:
        waited = os.wait4(pid, os.WNOHANG)
        if waited[0]:
            return waited
        time.sleep(0.05)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return os.wait4(pid, 0)


def _exit_reason(phase: str, code: int, text: str) -> str:
    if code < 0:
        try:
            what = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            what = f"killed by signal {-code}"
    else:
        what = f"exit code {code}"
    lines = [ln.strip() for ln in text.replace("\r", "\n").splitlines() if ln.strip()]
    last = lines[-1][:300] if lines else "no output"
    return f"phase {phase}: db_bench {what}: {last}"


def environment_fault(returncode: int, output: str, oom_killed: bool) -> str | None:
    """What outside the configuration made a db_bench phase fail (``returncode`` as os.waitstatus_to_exitcode
    gives it, ``output`` its stderr and stdout), or None when the failure is the configuration's own: a
    crash signal, db_bench's own error, an OOM kill (``oom_killed``: the OOM killer struck meanwhile).

    - ENOSPC in the output (RocksDB quotes strerror: "No space left on device"): the disk is full;
    - a signal of OUTSIDE_SIGNALS that the OOM killer did not send: db_bench was killed from outside.
    """
    if os.strerror(errno.ENOSPC) in output:
        return DISK_FULL
    if returncode < 0 and -returncode in OUTSIDE_SIGNALS and not oom_killed:
        return f"db_bench was killed from outside ({signal.Signals(-returncode).name})"
    return None


def _fail(reason: str, returncode: int, output: str, oom_killed: bool) -> NoReturn:
    """Raise a phase's failure: an EnvironmentFault when :func:`environment_fault` names one, else RunFailed."""
    fault = environment_fault(returncode, output, oom_killed)
    if fault is not None:
        raise EnvironmentFault(fault, reason)
    raise RunFailed(reason)


def _classified(failed: RunFailed, work_dir: Path, tmp: Path | None, workload: Workload,
                disk_full: bool = False) -> RunFailed | EnvironmentFault:
    """A failed run as an EnvironmentFault when the disk was full (``disk_full``) or what it ran in is
    gone: the work directory, the run's own directory, the DB it started from (a preloaded one, a
    snapshot); else as it was."""
    if disk_full:
        fault = DISK_FULL
    elif not work_dir.is_dir():
        fault = f"the work directory {work_dir} vanished"
    elif tmp is not None and not tmp.is_dir():
        fault = f"the run's directory {tmp} vanished"
    elif workload.snapshot and not Path(workload.snapshot).is_dir():
        fault = f"the DB {workload.snapshot} the run starts from vanished"
    else:
        return failed
    return EnvironmentFault(fault, failed.reason)


def _host_oom_kills() -> int:
    """How many processes the kernel's OOM killer has killed on this host since boot (0 where unknown)."""
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
