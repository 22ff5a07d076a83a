"""The db_bench backend: the study's workload run by objectives.runner on db_bench. Everything of
db_bench's set-up is here: finding the binary and its defaults (per study, and on each worker node),
the runner with its memory cgroups, the preloaded DBs (built once, removed at the end)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from objectives.contract import Task
from objectives.dbbench import DbBench, DbBenchError, probe
from objectives.defaults import LIBRARY, DefaultsError, db_bench_defaults, defaults_of
from objectives.flags import OUTSIDE_FLAGS, RESERVED_FLAGS, Baseline
from objectives.measurement import measure
from objectives.rates import Rate
from objectives.runner import RUNNER_FLAGS, Runner, preload_dir
from objectives.trace import trace_workload
from objectives.workloads import Workload, load_workload
from search_spaces import Context, GiB, SearchSpace
from tuner.backends._rate import RateBackend, driver_beside
from tuner.backends.base import (
    Backend,
    Config,
    Description,
    EnvironmentFault,
    Found,
    IntervalObserver,
    Measurement,
    Node,
    Preloaded,
    Setup,
)
from tuner.fmt import fmt_bytes
from tuner.model import ExecutionConfig, MeasurementConfig, TuneConfig, UsageError
from tuner.summary import Build
from tuner.target import SHAPE, Target, scaled, shaped

UNREADABLE_DEFAULTS = "db_bench's defaults are unreadable"
DEFAULT_WORKLOAD = "fillrandom"
TARGET_WORKLOAD = "steady-overwrite"  # with --target-data: a load of the target's size in every run would cost minutes


def workload(task: Task) -> Workload:
    """``task`` as what the db_bench backend runs: one of its workloads (a study's task on this backend is)."""
    assert isinstance(task, Workload), f"the db_bench backend runs workloads, not {type(task).__name__}"
    return task


class DbBenchBackend(Backend):
    name = "db_bench"
    per_second = True
    workloads = True
    targets = True
    distributed = True
    finds_build = True
    serves = True

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.runner: Runner | None = None  # set by prepare()

    @classmethod
    def find(cls, config: TuneConfig) -> Found:
        """This host's db_bench (--db-bench, --rocksdb-version) and the defaults its runs start from
        (--defaults): DbBenchError, or UsageError when the defaults cannot be read."""
        execution = config.execution
        db_bench = probe(execution.db_bench, execution.rocksdb_version)
        try:
            defaults = defaults_of(db_bench, config.measurement.defaults)
        except DefaultsError as exc:
            raise UsageError(str(exc)) from None
        return Found(cls.name, db_bench, defaults, defaults.mode)

    @classmethod
    def on_node(cls, setup: Setup, execution: ExecutionConfig) -> Node:
        """The node's own db_bench (the usual discovery rules, or --db-bench's path there), or why it has
        none; its runs start from its own build's defaults (read in :meth:`prepare`)."""
        facts, db_bench = _node_db_bench(execution)
        if db_bench is None:
            return Node(facts, error=facts["db_bench_error"])
        found = setup.found or Found(cls.name)
        return Node(facts, replace(setup, found=replace(found, db_bench=db_bench, defaults=None)))

    @classmethod
    def task(cls, config: TuneConfig) -> Workload:
        """The workload --workload names: a preset, a file, or ``trace:TRACE`` (a RocksDB query trace replayed on
        copies of --db-snapshot, objectives.trace); none named, fillrandom, or with a --target-data the preloaded
        steady-overwrite. A preload each run runs (``each_run``) is its first phase, but on --db-snapshot, where
        runs start from the user's DB."""
        m = config.measurement
        chosen = str(m.workload if m.workload is not None else
                     TARGET_WORKLOAD if config.target.target_data is not None else DEFAULT_WORKLOAD)
        if chosen.startswith("trace:"):
            if not m.db_snapshot:
                raise UsageError("--workload trace:TRACE needs --db-snapshot DIR: the DB the trace was recorded on")
            return trace_workload(Path(chosen[len("trace:"):]), Path(m.db_snapshot))
        named = load_workload(chosen)
        if m.db_snapshot and named.kind != "preloaded":
            raise UsageError(f"--db-snapshot: workload {named.name} loads its DB from empty; a snapshot is where a "
                             "trace workload (trace:TRACE) or a preloaded one (rocksdb-tuner workloads) starts")
        return named if m.db_snapshot else named.loading_each_run()  # the user's DB is as its options wrote it

    @classmethod
    def sized(cls, task: Task, scale: float, host: Context, target: Target | None = None,
              searched: frozenset[str] = frozenset()) -> Workload:
        """The workload's expressions evaluated at ``scale`` on ``host``; with a ``target``, its LSM shape's flags
        the target's where the ``searched`` flags leave them (tuner.target.shaped)."""
        resolved = workload(task).resolve(scale, host)
        return resolved if target is None else replace(resolved, flags=shaped(resolved.flags, target, set(searched)))

    @classmethod
    def timed(cls, task: Task) -> bool:
        """Whether a phase's flags use the name ``duration`` (a timed phase)."""
        w = workload(task)
        values = [v for p in (*w.phases, *((w.preload,) if w.preload else ())) for v in p.flags.values()] + \
            list(w.flags.values())
        return any(isinstance(v, dict) and "duration" in v.get("expr", "") for v in values)

    @classmethod
    def shape_of(cls, task: Task, target: Target) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The workload's LSM shape flags that differ from the target's (tuner.target.scaled), and the shape its
        runs take: the target's under the workload's own."""
        flags = workload(task).flags
        return scaled(flags, target), {**target.shape, **{k: v for k, v in flags.items() if k in SHAPE}}

    @classmethod
    def default_config(cls, found: Found, task: Task, flags: list[str]) -> Config:
        """The defaults every run starts from (those found, else the library's of db_bench's version),
        else db_bench's own, under the workload's own flags (which come along), as S0's scaled
        memtable."""
        db_bench = found.db_bench
        assert db_bench is not None, "Backend.find first"
        return Config.of({**db_bench_defaults(flags, db_bench, found.defaults or defaults_of(db_bench)),
                          **workload(task).flags})

    @classmethod
    def hand_found(cls, workload_: Task) -> tuple[Baseline, ...]:
        """The workload's own (its ``[baselines]``, e.g. the five studies' hand-found optima)."""
        return workload(workload_).baselines

    @classmethod
    def check(cls, found: Found, workload_: Task, space: SearchSpace) -> None:
        """Tuned flags the tuner owns are refused; every flag must be known to this db_bench."""
        db_bench = found.db_bench
        assert db_bench is not None, "Backend.find first"
        for p in space.parameters:
            if p.flag in RESERVED_FLAGS | OUTSIDE_FLAGS:
                raise UsageError(f"space {space.name}: parameters.{p.name}.flag: --{p.flag} is set by the tuner "
                                 "or names a path outside the trial's DB directory; it cannot be tuned")
        w = workload(workload_)
        flags = set(w.all_flags()) | {p.flag for p in space.parameters} | RUNNER_FLAGS
        db_bench.check_flags(sorted(flags), where=f"workload {w.name} / space {space.name}")
        db_bench.check_benchmarks([b for phase in w.phases for b in phase.benchmarks], where=f"workload {w.name}")

    @classmethod
    def preload_path(cls, found: Found, work_dir: Path, workload_: Task, seed: int) -> Path:
        assert found.db_bench is not None and found.defaults is not None, "Backend.find first"
        return preload_dir(found.db_bench, work_dir, workload(workload_), seed, found.defaults) / "db"

    @classmethod
    def node_facts(cls, execution: ExecutionConfig) -> dict[str, Any]:
        return _node_db_bench(execution)[0]

    @classmethod
    def check_nodes(cls, found: Found, nodes: list[dict[str, Any]], execution: ExecutionConfig) -> str | None:
        """Every node has a db_bench, of the same version and build as this host's (unless
        --allow-mixed-db-bench)."""
        mine = found.build
        assert mine is not None
        problems = []
        for node in nodes:
            theirs = Build.from_dict(node["build"], "build") if node.get("build") else None
            if theirs is None:
                problems.append(f"{node['host']} ({node['ip']}): {node['db_bench_error']}")
            elif theirs.identity != mine.identity:
                problems.append(f"{node['host']} ({node['ip']}) has db_bench {theirs.version} "
                                f"({'assertions' if theirs.identity['assertions'] else 'release'}) at {theirs.path}")
        missing = [p for p in problems if "has db_bench" not in p]
        if missing or (problems and not execution.allow_mixed_db_bench):
            return (f"this study runs db_bench {mine.version} ({mine.kind}); " + "; ".join(problems)
                    + ("" if missing else ". Measurements would not compare; --allow-mixed-db-bench accepts it"))
        return None

    @classmethod
    def describe(cls, workload_: Task, measurement: MeasurementConfig) -> Description:
        w = workload(workload_)
        preload = (f"{', '.join(w.preload.benchmarks)} of {w.data_bytes() / GiB:,.2f} GiB (raw keys and "
                   "values), then a flush and the compactions it owes") if w.preload else None
        return Description(w.name, f"workload {w.name} ({fmt_bytes(w.data_bytes())} of data per trial)",
                           "scored phases run", preload, f"--workload {w.name}")

    def prepare(self, stop: threading.Event | None = None) -> None:
        """The runner, on the db_bench found, its memory cgroups when the study has a memory limit; on a
        node, the defaults of the node's build (EnvironmentFault when they cannot be read)."""
        setup, found = self.setup, self.setup.found
        assert found is not None and found.db_bench is not None, "Backend.find, or on_node, first"
        try:
            defaults = found.defaults or defaults_of(found.db_bench, found.mode)
        except DefaultsError as exc:  # the node's build cannot tell its library's defaults
            raise EnvironmentFault(UNREADABLE_DEFAULTS, str(exc)) from None
        self.runner = Runner(found.db_bench, work_dir=setup.work_dir, timeout=setup.timeout,
                             memory_limit=setup.memory_limit, defaults=defaults, stop=stop)

    def preload(self, workload_: Task, log_dir: Path) -> Preloaded:
        assert self.runner is not None, "prepare() first"
        return self.runner.preload(workload(workload_), log_dir, self.setup.seed)

    def memory_how(self, remote: bool) -> str | None:
        if remote:
            return "a memory cgroup per scored phase on each worker node (direct reads where a node has none)"
        assert self.runner is not None, "prepare() first"
        cgroups = self.runner.cgroups
        if cgroups is None:
            return self.runner.memory_fallback
        return (f"a memory cgroup per scored phase (cgroup v{cgroups.version}, under {cgroups.parent}), its DB's "
                "files dropped from the page cache first")

    def at_rate(self, rate: Rate, duration: float, data: int, memory: int | None,
                flag: str = "--serve-rate") -> Backend:
        """A rate backend on this study's build: the open_loop driver beside its db_bench runs each
        configuration (its settings under their OPTIONS keys, on the driver's library defaults) at ``rate``
        for ``duration`` seconds and its settle (or searches its capacity from ``rate``), each run on a
        checkpoint of a DB of ``data`` bytes the backend loads once (its preload), within ``memory`` bytes
        (a memory cgroup; None: none). Its refusals name ``flag``."""
        found = self.setup.found
        assert found is not None and found.db_bench is not None, "Backend.find first"
        if found.mode != LIBRARY:
            raise UsageError(f"{flag}: the driver runs on its RocksDB's library defaults; this study's runs "
                             f"start from another's (--defaults {found.mode})")
        driver_beside(found.db_bench.path, flag)
        task = RateBackend.run_task(rate.writes, data, duration, memory)
        snapshot = RateBackend.preload_path(found, self.setup.work_dir, task, self.setup.seed)
        return RateBackend(replace(self.setup, workload=replace(task, snapshot=str(snapshot)), rate=rate,
                                   command=None, load=None, needs=("p99.9_us",), preloaded=(snapshot,),
                                   memory_limit=memory))

    def _measure(self, config: Config, log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload_: Task | None) -> Measurement:
        """``config`` as db_bench's flags (:meth:`Config.flags`) over the workload's."""
        setup = self.setup
        assert self.runner is not None and setup.workload is not None, "prepare() first"
        return measure(self.runner, workload(workload_ or setup.workload), config.flags(), log_dir, repeats, setup.seed,
                       observer, setup.metric)


def _node_db_bench(execution: ExecutionConfig) -> tuple[dict[str, Any], DbBench | None]:
    """This node's db_bench as its facts say it (``build``, which the executor records where it is not the
    driver's, or ``db_bench_error``), and itself."""
    try:
        db_bench = probe(execution.db_bench, execution.rocksdb_version)
    except DbBenchError as exc:
        return {"db_bench_error": str(exc)}, None
    return {"build": Build.probed(db_bench.to_dict()).to_dict()}, db_bench
