"""The command backend: the user's own program, run on the OPTIONS file of each configuration.

``--command`` is a template split as a shell would split it (shlex), never run through one. In each
word ``{options}`` becomes the configuration's OPTIONS file, ``{db}`` a fresh, empty DB directory and
``{seed}`` the study's seed; both files live in a run directory of the work dir, removed afterwards.
With ``--load`` (a template of the same words), the program's DB is built once per study, before the
first run, on RocksDB's default OPTIONS file, and every run's ``{db}`` is a hard-linked checkpoint of
it instead (objectives.workdir.clone_snapshot, as db_bench's preloaded DBs are copied): the built DB is
never written, and removed when the study ends (:meth:`CommandBackend.teardown`).
The program runs in a process group of its own, killed after --trial-timeout, and reports metrics
as JSON lines on stdout: the last object with ``ops_per_sec`` counts, with every other number in it
(``p99_us``, any named metric, which ``--objective`` and ``--constraint`` may name); other lines are
passed over. Its stdout and stderr are kept in the
trial's log directory.

The OPTIONS file is RocksDB's defaults (as rocksdict's RocksDB writes them for a new DB) with the
searched options set. What the trial records and checks is the OPTIONS file RocksDB wrote into
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
import time
from pathlib import Path

from objectives.rocksdb_log import block_cache
from objectives.runner import PRELOAD_PREFIX, PRELOAD_TIMEOUT
from objectives.workdir import clone_snapshot, latest_options, make_owned, remove_owned
from objectives.workloads import Flag, Workload
from tuner import options_file
from tuner.backends.base import (
    DISK_FULL,
    Backend,
    EnvironmentFault,
    IntervalObserver,
    Measurement,
    RunFailed,
    Setup,
    representative,
)

Metrics = dict[str, float | None]


class CommandBackend(Backend):
    name = "command"
    needs_command = True

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.argv = parse_template(setup.command or "")
        self.load_argv = parse_template(setup.load, "--load") if setup.load is not None else None
        self.loaded: Path | None = None  # the directory of the DB --load built (its "db"), once built
        self.load_failed: str | None = None  # why --load failed: every run fails with it, none loads again

    def _measure(self, flags: dict[str, Flag], log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Workload | None) -> Measurement:
        """Run the command ``repeats`` times, each on a fresh DB; the run with the median of the study's
        metric stands for all."""
        if workload is not None:
            raise RunFailed("the command backend runs no db_bench workload")
        options = self.options_text(flags)
        runs = [self._run(options, log_dir if repeats == 1 else log_dir / f"repeat-{i}") for i in range(repeats)]
        each = [metrics for metrics, _, _ in runs]
        pick = representative(each, self.setup.metric)
        metrics, used, argv = runs[pick]
        return Measurement(metrics, [], used, [argv], each if repeats > 1 else [], representative=pick)

    def options_text(self, flags: dict[str, Flag]) -> str:
        """RocksDB's default OPTIONS file with ``flags`` set under their parameters' OPTIONS keys."""
        keys = self.setup.options_keys
        unknown = sorted(set(flags) - set(keys))
        if unknown:
            raise RunFailed(f"--{unknown[0]}: not a searched parameter's flag, so it has no OPTIONS key the command "
                            "backend could set")
        try:
            return options_file.with_values(rocksdb_defaults(), {keys[f]: v for f, v in flags.items()})
        except ValueError as exc:
            raise RunFailed(f"OPTIONS file: {exc}") from None

    def _run(self, options: str, log_dir: Path) -> tuple[Metrics, str, list[str]]:
        loaded = self._loaded()
        log_dir.mkdir(parents=True, exist_ok=True)
        tmp = make_owned(self.setup.work_dir)
        try:
            (tmp / "OPTIONS").write_text(options)
            if loaded is not None:
                clone_snapshot(loaded, tmp / "db")
            else:
                (tmp / "db").mkdir()
            argv = self._argv(self.argv, tmp, log_dir)
            started = time.monotonic()
            stdout = run(argv, log_dir, self.setup.timeout)
            metrics = {"wall_seconds": time.monotonic() - started, **read_metrics(stdout)}
            return metrics, _written(tmp / "db") or options, argv
        except OSError as exc:
            raise _os_failure("command", exc) from None
        finally:
            remove_owned(tmp)

    def _argv(self, template: list[str], tmp: Path, log_dir: Path) -> list[str]:
        """``template``'s words filled in for a run directory ``tmp`` (its OPTIONS file and DB), the
        command line kept in ``log_dir``."""
        words = {"{options}": str(tmp / "OPTIONS"), "{db}": str(tmp / "db"), "{seed}": str(self.setup.seed)}
        argv = [_filled(word, words) for word in template]
        (log_dir / "command.command").write_text(shlex.join(argv) + "\n")
        return argv

    def _loaded(self) -> Path | None:
        """The DB --load built for the study (None without --load): built on the first run that needs it,
        in a directory of the work dir, on RocksDB's default OPTIONS file; its logs in ``--out``/load.
        RunFailed (``--load: ...``) when the load failed, for this run and every later one."""
        if self.load_argv is None:
            return None
        if self.loaded is None and self.load_failed is None:
            tmp = make_owned(self.setup.work_dir, f"{PRELOAD_PREFIX}command-")
            logs = (self.setup.logs or tmp) / "load"
            try:
                logs.mkdir(parents=True, exist_ok=True)
                (tmp / "OPTIONS").write_text(rocksdb_defaults())
                (tmp / "db").mkdir()
                run(self._argv(self.load_argv, tmp, logs), logs, PRELOAD_TIMEOUT)
                self.loaded = tmp
            except RunFailed as exc:
                self.load_failed = f"--load: {exc.reason} (logs in {logs})"
            except OSError as exc:
                raise _os_failure("--load", exc) from None
            finally:
                if self.loaded is None:
                    remove_owned(tmp)
        if self.load_failed is not None:
            raise RunFailed(self.load_failed)
        assert self.loaded is not None
        return self.loaded / "db"

    def teardown(self) -> None:
        """Remove the DB --load built."""
        if self.loaded is not None:
            remove_owned(self.loaded)
            self.loaded = None


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


def run(argv: list[str], log_dir: Path, timeout: float) -> str:
    """Run ``argv`` in its own process group, output to ``command.stdout``/``.stderr`` in ``log_dir``;
    its stdout, or RunFailed on a timeout or a failed exit."""
    with open(log_dir / "command.stdout", "wb") as out, open(log_dir / "command.stderr", "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if proc.returncode is None:  # the timeout, or Ctrl-C: never leave the program running
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    if timed_out:
        raise RunFailed(f"command: timeout, killed after the trial's {timeout:g} s limit (--trial-timeout)")
    stdout = (log_dir / "command.stdout").read_text(errors="replace")
    stderr = (log_dir / "command.stderr").read_text(errors="replace")
    if proc.returncode != 0:
        what = f"exit code {proc.returncode}"
        if proc.returncode < 0:
            try:
                what = f"killed by {signal.Signals(-proc.returncode).name}"
            except ValueError:
                what = f"killed by signal {-proc.returncode}"
        lines = [ln.strip() for ln in (stderr or stdout).splitlines() if ln.strip()]
        reason = f"command: {what}: {lines[-1][:300] if lines else 'no output'}"
        if os.strerror(errno.ENOSPC) in stderr + stdout:
            raise EnvironmentFault(DISK_FULL, reason)
        raise RunFailed(reason)
    return stdout


def read_metrics(stdout: str) -> Metrics:
    """The metrics of the last JSON line on stdout that has ``ops_per_sec``; RunFailed when a line
    that opens a JSON object does not parse, none has ``ops_per_sec``, or a metric is not a number
    (what the numbers may be, every backend's alike: tuner.backends.base.check_metrics)."""
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
        raise RunFailed('command: no metrics: no JSON line with "ops_per_sec" on its stdout')
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
