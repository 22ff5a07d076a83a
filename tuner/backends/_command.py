"""The command backend: the user's own program, run on the OPTIONS file of each configuration.

``--command`` is a template split as a shell would split it (shlex), never run through one. In each
word

- ``{options}`` becomes the configuration's OPTIONS file and ``{db}`` a fresh, empty DB directory (both
  in a run directory of the work dir, removed afterwards), ``{seed}`` the study's seed;
- ``{data_bytes}`` the target's data in bytes (--target-data: the program loads, or expects, that
  much), and ``{duration}`` the run's length in seconds: --search-duration for the search's runs,
  --duration for the re-validation's (at the target), else --duration for every run. A template with
  ``{data_bytes}`` needs --target-data, one with ``{duration}`` --duration, and either flag needs its
  word in a template (else the program would not be told): refused in one line naming the flag.

With ``--load`` (a template of the same words but ``{duration}``), the program's DB is built once per
study (:meth:`CommandBackend.preload`, called by the engine before the first run that needs it, its
time counted toward --budget), on RocksDB's default OPTIONS file, outside any memory limit; every
run's ``{db}`` is then a hard-linked checkpoint of it (objectives.workdir.clone_snapshot, as db_bench's
preloaded DBs are copied): the built DB is never written, and is removed when the study ends or stops
(:meth:`Backend.teardown`; a resumed study builds it again).

The program runs in a process group of its own, killed after --trial-timeout; with a memory limit
(--target-memory, --memory-limit) each run, the processes it starts with it, is held in a memory
cgroup of its own (objectives.memory, as db_bench's scored phases are: page cache included, the DB's
files dropped from the page cache first), and an OOM kill fails the run naming the limit. It reports
metrics as JSON lines on stdout: the last object with ``ops_per_sec`` counts, with every other number
in it (``p99_us``, any named metric, which ``--objective`` and ``--constraint`` may name); other lines
are passed over. Its stdout and stderr are kept in the trial's log directory. A run that prints no
such line (or exits 127, a program it runs not found, printing none) broke the contract whatever the
configuration (ContractBroken, naming --command): the study stops at rocksdb-default's run.

The OPTIONS file is RocksDB's defaults (as rocksdict's RocksDB writes them for a new DB), or the file a
``--baseline`` gives, with the configuration's settings set under their OPTIONS keys (a trial's searched
options; a hand-found configuration's catalogued ones). What the trial records and checks is the OPTIONS file RocksDB wrote into
``{db}`` when the program opened it, or the one given when it wrote none.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from objectives.contract import RunTask, Task
from objectives.memory import Cgroups, MemoryCgroup, MemoryLimitError
from objectives.rocksdb_log import block_cache
from objectives.runner import PRELOAD_PREFIX, PRELOAD_TIMEOUT
from objectives.workdir import clone_snapshot, latest_options, make_owned, remove_owned, tree_size
from tuner import options_file
from tuner.backends.base import (
    DISK_FULL,
    STOPPED,
    Backend,
    Config,
    ContractBroken,
    Description,
    EnvironmentFault,
    Found,
    IntervalObserver,
    Measurement,
    Node,
    Preloaded,
    RunFailed,
    Setup,
    representative,
)
from tuner.fmt import fmt_bytes
from tuner.model import ExecutionConfig, MeasurementConfig, TuneConfig, UsageError

Metrics = dict[str, float | None]
DATA, DURATION = "{data_bytes}", "{duration}"  # the template's words for the target's data and a run's length
NO_METRICS = 'no JSON line with "ops_per_sec" on its stdout'
CONTRACT_DOC = "docs/workloads.md#tune-your-own-application: what it must print"
NOT_FOUND = 127  # the exit code of a shell that found no such program


class CommandBackend(Backend):
    name = "command"
    needs_command = True
    targets = True  # told the target's data ({data_bytes}) and each run's length ({duration}); runs in its memory
    distributed = True  # on Ray's workers (a --load's DB: the driver's, which workers on this host see)
    program: str | None = "--command"  # the flag giving the user's program (ContractBroken names it); None: ours

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.argv, self.load_argv = self.templates(setup)
        self.cgroups: Cgroups | None = None  # set by prepare() when runs have a memory limit
        self.stop = threading.Event()

    @staticmethod
    def templates(setup: Setup) -> tuple[list[str], list[str] | None]:
        """The words of its runs' command and of its load's (None: no load)."""
        return parse_template(setup.command or ""), parse_template(setup.load, "--load") if setup.load is not None else None

    def base_options(self) -> str:
        """The OPTIONS file every configuration starts from: RocksDB's defaults, as rocksdict writes them."""
        return rocksdb_defaults()

    @classmethod
    def task(cls, config: TuneConfig) -> RunTask:
        """The program as the study's workload: its --load (the preload), the target's data (--target-data,
        ``{data_bytes}``), each run's length (--duration, ``{duration}``; --search-duration for the search's
        runs); UsageError naming the flag when the templates and the flags do not agree."""
        m, d = config.measurement, config.target
        command, load = m.command or "", m.load or ""
        if DATA in command + load and d.target_data is None:
            raise UsageError(f"{'--command' if DATA in command else '--load'}: {DATA} is the target's data size in "
                             "bytes: give --target-data SIZE")
        if d.target_data is not None and DATA not in command + load:
            raise UsageError(f"--target-data: your program is not told it: put {DATA} in --command or --load")
        if DURATION in load:
            raise UsageError(f"--load: {DURATION} is a run's length; the load runs to its end: leave it out")
        if DURATION in command and m.duration is None:
            raise UsageError(f"--command: {DURATION} is each run's length in seconds: give --duration TIME (and "
                             "--search-duration for the search's shorter runs)")
        for flag, given in (("--duration", m.duration), ("--search-duration", m.search_duration)):
            if given is not None and DURATION not in command:
                raise UsageError(f"{flag}: your program is not told it: put {DURATION} in --command")
        return RunTask(cls.name, command, d.target_data or 0, m.duration, preloaded=m.load is not None)

    @classmethod
    def preload_path(cls, found: Found, work_dir: Path, workload: Task, seed: int) -> Path:
        """This process's own directory for the DB --load builds (a resumed study builds it again)."""
        return work_dir / f"{PRELOAD_PREFIX}command-{os.getpid()}-{workload.data_bytes()}-{seed}" / "db"

    @classmethod
    def on_node(cls, setup: Setup, execution: ExecutionConfig) -> Node:
        """The node can run the program: its templates' programs are found there and, with a memory limit,
        it has memory cgroups; else why not."""
        try:
            parse_template(setup.command or "")
            if setup.load is not None:
                parse_template(setup.load, "--load")
            if setup.memory_limit is not None:
                Cgroups.detect()
        except (ValueError, MemoryLimitError) as exc:
            return Node({}, error=str(exc))
        return Node({}, setup)

    @classmethod
    def describe(cls, workload: Task, measurement: MeasurementConfig) -> Description:
        size = f" at {fmt_bytes(workload.data_bytes())} of data" if workload.data_bytes() else ""
        each = f", {workload.duration:g} s per run" if workload.duration else ""
        return Description(cls.name, f"your program{size}{each} ({measurement.command})", "your program runs",
                           f"--load ({measurement.load}){size}" if measurement.load is not None else None, "--load")

    def prepare(self, stop: threading.Event | None = None) -> None:
        """The memory cgroups its runs are held in, when they have a memory limit; ValueError naming the
        flags when this host has none (a program cannot be held to it otherwise)."""
        self.stop = stop or self.stop
        limit = self.setup.memory_limit
        if limit is not None:
            try:
                self.cgroups = Cgroups.detect()
            except MemoryLimitError as exc:
                raise ValueError(f"--target-memory / --memory-limit: your program's runs cannot be held to "
                                 f"{fmt_bytes(limit)} here: {exc}") from None

    def memory_how(self, remote: bool) -> str | None:
        where = " on each worker node" if remote or self.cgroups is None else \
            f" (cgroup v{self.cgroups.version}, under {self.cgroups.parent})"
        return (f"a memory cgroup per run{where}: the program and what it starts, page cache included, its DB's "
                "files dropped from the page cache first")

    def preload(self, workload: Task, log_dir: Path) -> Preloaded:
        """Run --load once on an empty DB and RocksDB's default OPTIONS file (its output in ``log_dir``),
        outside any memory limit; the DB it built is where ``workload.snapshot`` says, removed at teardown."""
        if self.load_argv is None or workload.snapshot is None:
            raise RunFailed("the command backend builds a DB only with --load")
        final = Path(workload.snapshot).parent
        remove_owned(final)  # one a killed study of this process left (the tuner's: marked)
        log_dir.mkdir(parents=True, exist_ok=True)
        building = make_owned(self.setup.work_dir, f"{PRELOAD_PREFIX}building-")
        try:
            (building / "OPTIONS").write_text(self.base_options())
            (building / "db").mkdir()
            started = time.monotonic()
            run(self._argv(self.load_argv, building, log_dir, workload, "load"), log_dir, PRELOAD_TIMEOUT,
                self.stop, what="load")
            seconds = time.monotonic() - started
            os.rename(building, final)
        except OSError as exc:
            raise _os_failure("load", exc) from None
        finally:
            remove_owned(building)
        return Preloaded(final / "db", seconds, tree_size(final / "db"))

    def _measure(self, config: Config, log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Task | None) -> Measurement:
        """Run the command ``repeats`` times, each on a fresh DB (or a checkpoint of the DB --load built);
        the run with the median of the study's metric stands for all."""
        options = self.options_text(config)
        runs = [self._run(options, log_dir if repeats == 1 else log_dir / f"repeat-{i}", workload or self.setup.workload)
                for i in range(repeats)]
        each = [metrics for metrics, _, _, _ in runs]
        pick = representative(each, self.setup.metric)
        metrics, used, argv, memory = runs[pick]
        details: list[dict[str, Any]] = \
            [{"phase": self.name, "memory": memory, "memory_peak_bytes": memory.get("memory_peak_bytes")}] if memory else []
        return Measurement(metrics, details, used, [argv], each if repeats > 1 else [], representative=pick)

    def _words(self) -> dict[str, str]:
        """Placeholders of a subclass's templates beyond the command's own, filled for every run (none)."""
        return {}

    def _timeout(self, workload: Task | None) -> float:
        """Seconds one run of ``workload`` may take before it is killed: --trial-timeout."""
        return self.setup.timeout

    def options_text(self, config: Config) -> str:
        """:meth:`base_options`, or the OPTIONS file ``config`` applies over (``--baseline FILE``), with its
        settings under their OPTIONS keys; RunFailed naming a setting that has none (a db_bench flag only)."""
        keyless = next((s for s in config.settings if s.options_key is None), None)
        if keyless is not None:
            raise RunFailed(f"--{keyless.flag}: no OPTIONS key is known for it (it is in no space's parameters nor in "
                            "the option catalogue), so the command backend cannot set it")
        given = config.options_file
        try:
            base = Path(given).read_text() if given is not None else self.base_options()
        except OSError as exc:
            raise RunFailed(f"--baseline {given}: cannot read it: {exc.strerror}") from None
        try:
            return options_file.with_values(base, {s.options_key: s.value for s in config.settings if s.options_key})
        except ValueError as exc:
            raise RunFailed(f"OPTIONS file: {exc}") from None

    def _run(self, options: str, log_dir: Path, workload: Task | None,
             words: dict[str, str] | None = None) -> tuple[Metrics, str, list[str], dict[str, int | None]]:
        """One run in a directory of its own (the OPTIONS file, the DB), within the run's memory limit (the
        workload's, else the study's): its metrics, the OPTIONS file RocksDB wrote, its command line and
        its memory cgroup's report (empty without one)."""
        log_dir.mkdir(parents=True, exist_ok=True)
        tmp = make_owned(self.setup.work_dir)
        db = tmp / "db"
        try:
            (tmp / "OPTIONS").write_text(options)
            if workload is not None and workload.kind == "preloaded":
                if not workload.snapshot or not Path(workload.snapshot).is_dir():
                    raise EnvironmentFault(f"the DB {workload.snapshot} the run starts from is missing",
                                           "the DB --load builds (Backend.preload) is gone, or was never built")
                clone_snapshot(Path(workload.snapshot), db)
            else:
                db.mkdir()
            argv = self._argv(self.argv, tmp, log_dir, workload, words=words)
            limit = (workload.memory if workload else None) or self.setup.memory_limit
            cgroup = self.cgroups.for_run(limit, db) if limit and self.cgroups else None
            started = time.monotonic()
            stdout, memory = run(argv, log_dir, self._timeout(workload), self.stop, cgroup, program=self.program)
            metrics = {"wall_seconds": time.monotonic() - started, **read_metrics(stdout, self.program)}
            return metrics, _written(db) or options, argv, memory
        except OSError as exc:
            raise _os_failure("command", exc) from None
        finally:
            remove_owned(tmp)

    def _argv(self, template: list[str], tmp: Path, log_dir: Path, workload: Task | None,
              what: str = "command", words: dict[str, str] | None = None) -> list[str]:
        """``template``'s words filled in for a run directory ``tmp`` (its OPTIONS file and DB) and
        ``workload`` (its data and run length), and ``words`` (else :meth:`_words`) for the backend's own
        placeholders; the command line kept in ``log_dir``."""
        filled = {"{options}": str(tmp / "OPTIONS"), "{db}": str(tmp / "db"), "{seed}": str(self.setup.seed),
                  DATA: str(workload.data_bytes()) if workload is not None and workload.data_bytes() else "",
                  DURATION: f"{workload.duration:g}" if workload is not None and workload.duration else "",
                  **(self._words() if words is None else words)}
        argv = [_filled(word, filled) for word in template]
        (log_dir / f"{what}.command").write_text(shlex.join(argv) + "\n")
        return argv


# What each template must hand its program, and an example of it.
_NEEDS = {"--command": ("{options}", "the OPTIONS file", "--options {options} --db {db}"),
          "--load": ("{db}", "the DB directory to build", "--load --options {options} --db {db}")}


def _written(db: Path) -> str:
    """The OPTIONS file RocksDB wrote in ``db``, with the block cache's capacity its LOG printed (which
    the OPTIONS file leaves out), so that what the program got is checked for every searched option."""
    text = latest_options(db)
    capacity = block_cache(db / "LOG").get("BlockCache.capacity")
    return options_file.with_block_cache(text, int(capacity)) if text and capacity and capacity.isdigit() else text


def parse_template(template: str, flag: str = "--command") -> list[str]:
    """The words of a --command (or --load) template; ValueError naming the flag when it cannot run."""
    placeholder, what, example = _NEEDS[flag]
    try:
        argv = shlex.split(template)
    except ValueError as exc:
        raise ValueError(f"{flag}: cannot split {template!r}: {exc}") from None
    if not argv:
        raise ValueError(f"{flag}: give the program to run, e.g. {flag} 'python app.py {example}'")
    if not any(placeholder in word for word in argv):
        raise ValueError(f"{flag}: the program must be given {what}: put {placeholder} in it")
    if shutil.which(argv[0]) is None:
        raise ValueError(f"{flag}: {argv[0]}: no such program (not a path to an executable, nor on PATH)")
    return argv


def _os_failure(what: str, exc: OSError) -> Exception:
    """An OSError of a run (or the load) as the run's failure, or an environment fault for a full disk."""
    reason = f"{what}: {exc.strerror or exc}: {exc.filename or ''}".strip()
    return EnvironmentFault(DISK_FULL, reason) if exc.errno == errno.ENOSPC else RunFailed(reason)


def _filled(word: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        word = word.replace(placeholder, value)
    return word


def run(argv: list[str], log_dir: Path, timeout: float, stop: threading.Event | None = None,
        cgroup: MemoryCgroup | None = None, what: str = "command",
        program: str | None = None) -> tuple[str, dict[str, int | None]]:
    """Run ``argv`` in its own process group (within ``cgroup``, which is removed after), output to
    ``<what>.stdout``/``.stderr`` in ``log_dir``: its stdout and the cgroup's report (empty without
    one), or RunFailed on a timeout, a ``stop`` or a failed exit (an OOM kill says the cgroup's limit);
    ContractBroken naming ``program`` (the user's program's flag) for exit code 127 with no metrics."""
    if cgroup is not None:  # the stub that enters the cgroup execs a path
        argv = cgroup.wrap([shutil.which(argv[0]) or argv[0], *argv[1:]])
    memory: dict[str, int | None] = {}
    killed = None  # why it was killed: its time ran out, or the study stops
    with open(log_dir / f"{what}.stdout", "wb") as out, open(log_dir / f"{what}.stderr", "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        deadline = time.monotonic() + timeout
        try:
            while killed is None and proc.poll() is None:
                if time.monotonic() > deadline:
                    killed = (f"timeout, killed after the trial's {timeout:g} s limit (--trial-timeout)"
                              if what == "command" else f"timeout, killed after {timeout:g} s")
                elif stop is not None and stop.is_set():
                    killed = STOPPED
                else:
                    time.sleep(0.05)
        finally:
            if proc.returncode is None:  # killed, or Ctrl-C: never leave the program running
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if cgroup is not None:
                memory = cgroup.close()
    if killed is not None:
        raise RunFailed(f"{what}: {killed}")
    stdout = (log_dir / f"{what}.stdout").read_text(errors="replace")
    stderr = (log_dir / f"{what}.stderr").read_text(errors="replace")
    if proc.returncode != 0:
        how = f"exit code {proc.returncode}"
        if proc.returncode < 0:
            try:
                how = f"killed by {signal.Signals(-proc.returncode).name}"
            except ValueError:
                how = f"killed by signal {-proc.returncode}"
        lines = [ln.strip() for ln in (stderr or stdout).splitlines() if ln.strip()]
        reason = f"{what}: {how}: {lines[-1][:300] if lines else 'no output'}{MemoryCgroup.out_of_memory(memory) or ''}"
        if os.strerror(errno.ENOSPC) in stderr + stdout:
            raise EnvironmentFault(DISK_FULL, reason)
        if proc.returncode == NOT_FOUND and program and '"ops_per_sec"' not in stdout:
            raise ContractBroken(reason, program, f"{how}, a program it runs was not found: "
                                                  f"{lines[-1][:300] if lines else 'no output'}")
        raise RunFailed(reason)
    return stdout, memory


def read_metrics(stdout: str, program: str | None = None) -> Metrics:
    """The metrics of the last JSON line on stdout that has ``ops_per_sec``; RunFailed when a line
    that opens a JSON object does not parse, none has ``ops_per_sec`` (ContractBroken naming ``program``,
    the user's program's flag, when given), or a metric is not a number (what the numbers may be, every
    backend's alike: tuner.backends.base.check_metrics)."""
    found: tuple[int, dict[str, object]] | None = None
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip().startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise RunFailed(f"command: malformed JSON on stdout line {number}: {exc}") from None
        if isinstance(record, dict) and "ops_per_sec" in record:
            found = number, record
    if found is None:
        reason = f"command: no metrics: {NO_METRICS}"
        raise ContractBroken(reason, program, f"{NO_METRICS} ({CONTRACT_DOC})") if program else RunFailed(reason)
    number, record = found
    metrics: dict[str, float | None] = {}
    for key, value in record.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise RunFailed(f"command: stdout line {number}: metric {key} is not a number: {value!r}")
        metrics[key] = None if value is None else float(value)
    return metrics


@functools.cache
def rocksdb_defaults() -> str:
    """RocksDB's default OPTIONS file, as rocksdict's RocksDB writes it for a new DB."""
    import rocksdict

    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-defaults-") as tmp:
        options = rocksdict.Options(raw_mode=True)
        options.create_if_missing(True)
        rocksdict.Rdict(f"{tmp}/db", options).close()
        return latest_options(Path(tmp) / "db")
