"""The measurement contract: what every backend is, in the spirit of MLOS's Environment (set up, run,
tear down) and Optuna's ``BaseSampler``. A new backend is one subclass in a file of this package and
one line in :data:`tuner.backends.BACKENDS`; the engine, executors, observers and outputs know backends
only through this module (docs/architecture.md, "Measurement backends").

Its life in a study:

- :meth:`Backend.find` (per study, before the request is prepared): the binary its runs use and what
  they start from (db_bench: the probed binary and its defaults), as a :class:`Found`; while the
  request is prepared, :meth:`Backend.task` gives the :class:`Task` its runs run (db_bench: the workload
  --workload names; the command backend: the program), :meth:`Backend.sized` sizes it (and shapes it like the
  target), :meth:`Backend.timed` says whether its length can be set, :meth:`Backend.default_config` says what the
  defaults' baseline runs, :meth:`Backend.hand_found` the configurations found by hand for the task,
  :meth:`Backend.check` refuses what its runs cannot take and :meth:`Backend.preload_path` names where
  a preloaded DB is built;
- ``Backend(setup)`` then :meth:`Backend.prepare` (per study on the driver, and per node on a
  worker after :meth:`Backend.on_node`): what every run needs there (db_bench: its runner, memory
  cgroups); :meth:`Backend.preload` builds a DB runs start from, once per study and node;
- :meth:`Backend.measure` (per run): a configuration (a :class:`Config`, which the backend renders in its
  own terms: each setting names its option in the catalogue, db_bench's flag and the OPTIONS file's key),
  a log directory and repeats -> a
  :class:`Measurement`, or :class:`RunFailed` (the configuration's failure; :class:`ContractBroken`
  when the user's program broke its backend's contract, which stops the study at rocksdb-default's run) or
  :class:`EnvironmentFault` (the study stops); every repeat's metrics pass :func:`check_metrics`;
- :meth:`Backend.teardown` (at the end): remove what it built (by default its preloaded DBs);
- :meth:`Backend.describe` and :meth:`Backend.memory_how`: what the console and the summary say it
  measured, and how it held runs to a memory limit.

What a backend can do it declares (class attributes the engine and ``check_backend`` ask), never by
its name."""

from __future__ import annotations

import abc
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from objectives.contract import (
    DISK_FULL,
    STOPPED,
    ContractBroken,
    EnvironmentFault,
    IntervalObserver,
    Measurement,
    Preloaded,
    RunFailed,
    RunStopped,
    RunTask,
    Task,
    representative,
)
from objectives.dbbench import DbBench
from objectives.defaults import LIBRARY, Defaults
from objectives.flags import Baseline
from objectives.rates import Capacity, Rate
from objectives.scores import Bound
from objectives.workdir import remove_owned
from search_spaces import Context, SearchSpace
from search_spaces.config import Config
from tuner.model import ExecutionConfig, MeasurementConfig, TuneConfig, UsageError
from tuner.summary import Build
from tuner.target import Target


@dataclass(frozen=True)
class Found:
    """What a backend found for a study on this host before it is prepared (:meth:`Backend.find`): the
    db_bench its runs use (the db_bench and rate backends' own, None for a backend that runs none) and
    the defaults they start from. Everything outside the backends reads what measured as :attr:`build`."""

    backend: str  # the backend's name (BACKENDS): a remote executor checks its nodes for it
    db_bench: DbBench | None = None
    defaults: Defaults | None = None  # None on a node until the node reads its own build's (``mode``)
    mode: str = LIBRARY  # what every run starts from (objectives.defaults.MODES)

    @property
    def build(self) -> Build | None:
        """What measured, as the study records it (summary.json's ``build``); None when nothing was probed."""
        return Build.probed(self.db_bench.to_dict()) if self.db_bench is not None else None


@dataclass(frozen=True)
class Setup:
    """What a study gives its backend (tuner.api builds it once the study is prepared): typed and
    picklable, so that a remote executor rebuilds the backend on each worker from it."""

    work_dir: Path  # where run directories (and their DBs) are made, and removed
    timeout: float  # seconds one run may take (--trial-timeout)
    seed: int  # the run's seed (--seed, else 1)
    workload: Task | None = None  # what the study's runs run
    command: str | None = None  # --command's template
    needs: tuple[str, ...] = ("ops_per_sec",)  # the metrics every run must report (the score's: Score.needed)
    load: str | None = None  # --load's template: builds the program's DB once per study (the command backend)
    found: Found | None = None  # what Backend.find found (on a node: what Backend.on_node found there)
    memory_limit: int | None = None  # runs (db_bench: its scored phases) run within a memory cgroup of this size
    preloaded: tuple[Path, ...] = ()  # the preloaded DBs the study's runs start from, removed at teardown
    rate: Rate | None = None  # what the rate backend offers (--rate, --read-rate, --arrivals)
    slo: Bound | None = None  # --objective capacity: each measurement is a search for the rate that holds it

    @property
    def metric(self) -> str:
        """The score's first metric (``needs`` lists it first): the median of repeats is taken of it."""
        return self.needs[0] if self.needs else "ops_per_sec"


@dataclass(frozen=True)
class Node:
    """What a backend found on a worker node (:meth:`Backend.on_node`): its facts for the node's record,
    and the setup its runs use there, or why it cannot measure there (``error``)."""

    facts: dict[str, Any]
    setup: Setup | None = None
    error: str | None = None


@dataclass(frozen=True)
class Description:
    """What the console and the summary say a study measured."""

    name: str  # what the study is named after (its name's first word): the workload, or the backend
    measured: str  # the console's words, e.g. "workload fillrandom (111 MiB of data per trial)"
    runs: str = "measurements run"  # what runs within the memory limit, e.g. "scored phases run", "your program runs"
    preload: str | None = None  # how the DB runs start from is built (a preloaded workload), e.g. "fillrandom of 2 GiB"
    builder: str = "--workload"  # the flag that says what builds it, which a failed build names


_MISSING = re.compile(r"(\w+): missing, and the study's score needs it")


def check_metrics(metrics: dict[str, float | None], needs: tuple[str, ...]) -> None:
    """RunFailed naming the first metric that is missing though ``needs`` has it (and those the run
    reported), not a finite number, or negative (ops_per_sec: not above 0), e.g. ``ops_per_sec = inf:
    not a finite number``."""
    for name in needs:
        if metrics.get(name) is None:
            reported = ", ".join(sorted(k for k, v in metrics.items() if v is not None))
            raise RunFailed(f"{name}: missing, and the study's score needs it (the run reported {reported or 'none'})")
    for name, value in metrics.items():
        if value is None:
            continue
        if not math.isfinite(value):
            raise RunFailed(f"{name} = {value:g}: not a finite number")
        if value < 0 or (name == "ops_per_sec" and value == 0):
            raise RunFailed(f"{name} = {value:g}: must be {'> 0' if name == 'ops_per_sec' else '>= 0'}")


def missing_metric(reason: str) -> str | None:
    """The metric a run's failure ``reason`` (from :func:`check_metrics`) says is missing, else None."""
    match = _MISSING.match(reason)
    return match[1] if match else None


class Backend(abc.ABC):
    """Measures configurations, through the lifecycle the module describes. A subclass implements
    :meth:`_measure`, and overrides the other steps it needs."""

    name: ClassVar[str]
    # What it can do; engine/_prepare.check_backend refuses, naming the flag, what it cannot.
    per_second: ClassVar[bool] = False  # measure() takes a per-second observer: --pruner
    workloads: ClassVar[bool] = False  # runs workloads --workload names: --workload, --fidelity, --scale, ...
    targets: ClassVar[bool] = False  # runs at a target's size and memory: --target-data, --memory-limit, ...
    distributed: ClassVar[bool] = False  # runs on other processes' and nodes' workers: --parallel, --ray-address
    finds_build: ClassVar[bool] = False  # runs a RocksDB build it finds (db_bench's): --db-bench, --rocksdb-version, --defaults
    needs_command: ClassVar[bool] = False  # it runs --command
    needs_rate: ClassVar[bool] = False  # it offers --rate
    serves: ClassVar[bool] = False  # its configurations can also run open loop at a rate: --serve-rate, --slo
    objective: ClassVar[str] = "throughput"  # the score when --objective is not given
    space: ClassVar[str] = "default"  # the space preset when --space is not given
    shown: ClassVar[tuple[str, ...] | None] = None  # the metrics a run's console line shows (None: all it reported)

    def __init__(self, setup: Setup):
        self.setup = setup

    @classmethod
    def find(cls, config: TuneConfig) -> Found:
        """Per study, before the request is prepared: what its runs use on this host; nothing by default."""
        return Found(cls.name)

    @classmethod
    def task(cls, config: TuneConfig) -> Task:
        """The task a request's runs run, at its own size (:meth:`sized` sizes it), checked against the request
        (UsageError naming the flag): by default one run per configuration, of the backend's own making."""
        return RunTask(cls.name)

    @classmethod
    def sized(cls, task: Task, scale: float, host: Context, target: Target | None = None,
              searched: frozenset[str] = frozenset()) -> Task:
        """``task`` at ``scale`` times its own size on ``host``; with a ``target``, in the target's shape where the
        ``searched`` options (their flags) leave it: by default its scale alone (a program sizes its own DB)."""
        return replace(task, scale=scale)

    @classmethod
    def timed(cls, task: Task) -> bool:
        """Whether ``task``'s runs last :attr:`Task.duration` (--duration, --search-duration set it): by default."""
        return True

    @classmethod
    def shape_of(cls, task: Task, target: Target) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """How ``task``'s runs differ from the ``target`` in its LSM shape (the summary's ``scaled`` rows: option,
        trial, target, why) and the shape they run in (tuner.target.SHAPE's options): by default none, the target's."""
        return [], dict(target.shape)

    @classmethod
    def default_config(cls, found: Found, task: Task, flags: list[str]) -> Config:
        """The configuration the defaults' baseline (rocksdb-default) runs: each of ``flags`` at the value its
        runs are given (named as the catalogue names it: :meth:`Config.of`); by default none (a program runs on
        its own defaults)."""
        return Config()

    @classmethod
    def hand_found(cls, workload: Task) -> tuple[Baseline, ...]:
        """The configurations found by hand for ``workload`` that a study measures beside the defaults and may
        start from (--baselines, the starts, the warm start's): none by default."""
        return ()

    @classmethod
    def offers_reads(cls, config: TuneConfig) -> bool:
        """Whether a study's runs may read (what db_bench's workloads or a program do is theirs to say): by
        default yes, and the options that serve reads alone are searched."""
        return True

    @classmethod
    def placed(cls, workload: Task) -> float | None:
        """Where the preload placed capacity searches on ``workload``'s DB, in ops/s (rocksdb-default's capacity
        there, found after the DB's build: a search from it brackets in a few runs); None when it placed none, as
        by default."""
        return None

    @classmethod
    def context_names(cls, config: TuneConfig) -> dict[str, float]:
        """Names this backend's studies give a space's expressions beside the host's and the target's
        (search_spaces.context); none by default."""
        return {}

    @classmethod  # noqa: B027 (an optional hook: most backends have nothing to check)
    def check(cls, found: Found, workload: Task, space: SearchSpace) -> None:
        """Per study, once the workload and space are sized for the trials' slot: refuse what its runs
        cannot take (one error naming the flag or field); nothing by default."""

    @classmethod
    def preload_path(cls, found: Found, work_dir: Path, workload: Task, seed: int) -> Path:
        """Where :meth:`preload` builds ``workload``'s DB in ``work_dir`` (a directory of its own there,
        removed whole), named by what builds it so that a resumed study finds its own."""
        raise UsageError(f"--workload {workload.name}: the {cls.name} backend builds no preloaded DB")

    @classmethod
    def node_facts(cls, execution: ExecutionConfig) -> dict[str, Any]:
        """What a worker node has for this backend (e.g. its db_bench, or why it has none), which a remote
        executor reports and checks before any run there; nothing by default."""
        return {}

    @classmethod
    def check_nodes(cls, found: Found, nodes: list[dict[str, Any]], execution: ExecutionConfig) -> str | None:
        """Why the study cannot run on these nodes (their :meth:`node_facts` among their facts), as
        what it found on this host (``found``) compares with them, else None; any node by default."""
        return None

    @classmethod
    def on_node(cls, setup: Setup, execution: ExecutionConfig) -> Node:
        """On a worker node, before a run there: what the node has for this backend and the setup its
        runs use there (its work dir is set by the worker); the driver's setup by default."""
        return Node({}, setup)

    @classmethod
    def describe(cls, workload: Task, measurement: MeasurementConfig) -> Description:
        """What a study measured, for the console and the summary: by default the backend and its command."""
        return Description(cls.name, f"backend {cls.name}" + (f" ({measurement.command})" if measurement.command else ""))

    def prepare(self, stop: threading.Event | None = None) -> None:  # noqa: B027 (an optional hook)
        """Per study on the driver, or per node on a worker (``stop``: set when the worker must stop its
        run): set up what every run needs; nothing by default."""

    def preload(self, workload: Task, log_dir: Path) -> Preloaded:
        """Build ``workload``'s preloaded DB (its logs in ``log_dir``), which its runs start from."""
        raise RunFailed(f"the {self.name} backend builds no preloaded DB")

    def memory_how(self, remote: bool) -> str | None:
        """How runs are held to the study's memory limit (``remote``: on other nodes), in words."""
        return None

    def measure(self, config: Config, log_dir: Path, repeats: int, observer: IntervalObserver | None = None,
                workload: Task | None = None) -> Measurement:
        """Run ``config`` ``repeats`` times, logs under ``log_dir``; ``workload`` another than the study's
        (the target's in the re-validation: its size, phase length and memory).
        Each repeat's metrics pass :func:`check_metrics`, or the run fails."""
        m = self._measure(config, log_dir, repeats, observer, workload)
        for metrics in m.repeats or [m.metrics]:
            check_metrics(metrics, self.setup.needs)
        return m

    def capacity(self, config: Config, slo: Bound, log_dir: Path, workload: Task | None = None,
                 say: Callable[[str], None] = lambda _: None, start: float | None = None,
                 held_before: float | None = None) -> Capacity:
        """--slo: the highest offered rate at which ``config`` holds ``slo``, from the study's rate, or near
        ``start`` ops/s (an earlier round's capacity), a miss far below ``held_before`` (the most it held in
        an earlier round) run again before it counts, runs logged under ``log_dir`` (a backend that offers a
        rate, ``needs_rate``)."""
        raise NotImplementedError(f"the {self.name} backend offers no rate to search")

    def at_rate(self, rate: Rate, duration: float, data: int, memory: int | None,
                flag: str = "--serve-rate") -> Backend:
        """--serve-rate and a db_bench study's --slo (a backend that ``serves``): a backend that runs this
        study's configurations open loop at ``rate`` for ``duration`` seconds on a DB of ``data`` bytes it
        loads once, within ``memory`` bytes (its :meth:`prepare`, :meth:`preload` of its own workload and
        :meth:`teardown` are the caller's); a UsageError naming ``flag`` when it cannot."""
        raise NotImplementedError(f"the {self.name} backend runs nothing at a rate")

    def teardown(self) -> None:
        """Remove what the backend built for the study: its preloaded DBs (``Setup.preloaded``, the DB
        --load built among them), temporary like any run's (a resumed study builds them again)."""
        for path in self.setup.preloaded:
            remove_owned(path.parent)

    @abc.abstractmethod
    def _measure(self, config: Config, log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Task | None) -> Measurement:
        """The backend's own measurement, as :meth:`measure` describes it, before its metrics are checked."""


__all__ = ["DISK_FULL", "STOPPED", "Backend", "Config", "ContractBroken", "Description", "EnvironmentFault", "Found",
           "IntervalObserver", "Measurement", "Node", "Preloaded", "RunFailed", "RunStopped", "Setup", "Task",
           "check_metrics", "missing_metric", "representative"]
