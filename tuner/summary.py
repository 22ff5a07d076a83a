"""What a finished study writes to ``summary.json``, typed and versioned: the outputs build a
:class:`Summary` and everything else reads it as attributes (``Summary.load(path).best.trial``), so
a misspelt key is an error where it is read, not a silent ``None``.

The file carries ``"schema": SCHEMA_VERSION``. A file without the key is from before the schema was
versioned (schema 0, the same layout with fewer keys) and reads the same way, its missing keys None
or empty; a newer or unknown schema is refused with one line naming the file. A part read from a
file writes back exactly the keys it was read with, in their order (keys this version does not
know are kept in ``extra``), so ``Summary.from_dict(d).to_dict()`` is ``d`` with the schema first.
Schema 2 names what measured ``build`` (a :class:`Build`, whatever the backend) and the runs' seed
``run_seed``; schema 1's and older's ``db_bench`` and ``db_bench_seed`` read as those two fields."""

from __future__ import annotations

import json
import statistics
import types
import typing
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Self

import optuna

SCHEMA_VERSION = 2  # bump when a key changes meaning or goes away; adding one needs no bump


class SummaryError(ValueError):
    """A summary.json that cannot be read: the message names the file (or the part) and why."""


@dataclass(frozen=True)
class Record:
    """A JSON object of summary.json: its known keys are fields, the others are kept in ``extra``."""

    extra: dict[str, Any] = field(default_factory=dict, kw_only=True, repr=False)
    _keys: tuple[str, ...] | None = field(default=None, kw_only=True, repr=False, compare=False)  # as read

    @classmethod
    def from_dict(cls, data: Any, where: str = "summary") -> Self:
        if not isinstance(data, dict):
            raise SummaryError(f"{where}: expected an object, found {type(data).__name__}")
        hints = _hints(cls)
        values = {name: _read(tp, data[name], f"{where}.{name}") for name, tp in hints.items() if name in data}
        return cls(**values, extra={k: v for k, v in data.items() if k not in hints}, _keys=tuple(data))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the keys it was read with, in their order; all of them when built in code."""
        hints = _hints(type(self))
        keys = self._keys if self._keys is not None else (*hints, *self.extra)
        return {k: _write(getattr(self, k) if k in hints else self.extra[k]) for k in keys}

    def updated(self, **changes: Any) -> Self:
        """A copy with ``changes``; a record read from a dict writes back its keys and these."""
        keys = self._keys if self._keys is None else (*self._keys, *(k for k in changes if k not in self._keys))
        return replace(self, **changes, _keys=keys)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """A record's JSON keys and their types, in the order of its fields."""
    if cls not in _HINTS:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = {f.name: hints[f.name] for f in fields(cls) if f.name not in ("extra", "_keys")}
    return _HINTS[cls]


def _read(tp: Any, value: Any, where: str) -> Any:
    """``value`` from JSON as type ``tp``: records (in lists and dicts too) become their dataclass (a
    record already built is taken as it is), a list read as a tuple where ``tp`` is one."""
    if value is None:
        return None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        (tp,) = [a for a in args if a is not type(None)]
        return _read(tp, value, where)
    if isinstance(tp, type) and issubclass(tp, Record):
        return value if isinstance(value, tp) else tp.from_dict(value, where)
    if origin is list and isinstance(value, list):
        return [_read(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple and isinstance(value, list):
        return tuple(value)
    if origin is dict and isinstance(value, dict):
        return {k: _read(args[1], v, f"{where}.{k}") for k, v in value.items()}
    return value


def _write(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_write(v) for v in value]
    if isinstance(value, dict):
        return {k: _write(v) for k, v in value.items()}
    return value


# -- the parts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Build(Record):
    """What measured a study's runs, as its backend found it (tuner.backends ``Found.build``): the program,
    its version and where it is. Only ``identity`` is compared: a resumed study, a warm start's source and
    a worker node must have the same for their measurements to compare; ``details`` is all the backend
    says of it, in its own keys. A backend that probes nothing has none (None)."""

    program: str = ""  # what ran, as the outputs name it, e.g. "db_bench"
    version: str | None = None
    path: str | None = None  # where it is on the host that found it
    kind: str | None = None  # what sort of build, e.g. "release"
    identity: dict[str, Any] = field(default_factory=dict)  # what must be the same for measurements to compare
    details: dict[str, Any] = field(default_factory=dict)  # the backend's own record of it
    warning: str | None = None  # what the console warns of it, e.g. a build with assertions

    @classmethod
    def probed(cls, record: dict[str, Any]) -> Build:
        """The build a probed db_bench's record names (objectives.dbbench.DbBench.to_dict; a node's, a trial's
        or a study's ``"db_bench"`` as versions before :class:`Build` kept it): the db_bench and rate backends'
        own, and how older records read. Its identity is its version and whether it has assertions, not its
        path."""
        assertions = record.get("assertions")
        return cls(program="db_bench", version=record.get("version"), path=record.get("path"), kind=record.get("build"),
                   identity={"version": record.get("version"), "assertions": assertions}, details=dict(record),
                   warning=ASSERTIONS_WARNING if assertions else None)

    def words(self) -> str:
        """The build as an error names it: ``db_bench 9.11.2 (assertions=False) at PATH``."""
        rest = ", ".join(f"{k}={v}" for k, v in self.identity.items() if k != "version")
        return f"{self.program} {self.version}" + (f" ({rest})" if rest else "") + f" at {self.path}"


ASSERTIONS_WARNING = ("this db_bench was built with assertions: it runs slower and shifts the CPU/IO balance; "
                      "'make db_bench' builds a release one, which the tuner then prefers.")


@dataclass(frozen=True)
class DefaultsInfo(Record):
    """What every db_bench run started from (objectives.defaults.Defaults.to_dict)."""

    mode: str | None = None
    version: str | None = None
    describe: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    unset: list[str] = field(default_factory=list)
    source: str | None = None


@dataclass(frozen=True)
class Host(Record):
    cpu: str | None = None  # the model name of the host that wrote the summary (before it was kept: None)
    cores: int | None = None
    ram_bytes: int | None = None
    memory_budget_bytes: int | None = None


@dataclass(frozen=True)
class MemoryLimit(Record):
    """The scored phases' memory limit and how it was enforced."""

    limit_bytes: int | None = None
    how: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class SlotInfo(Record):
    """What one trial may use (tuner.executors.Slot): its cores, its share of memory, whether pinned,
    and how many other runs may run beside it at once on a node (0: none)."""

    cores: int | None = None
    ram_bytes: int | None = None
    pinned: bool = False
    neighbours: int = 0


@dataclass(frozen=True)
class TrialCounts(Record):
    """Trials per outcome (tuner.ranking.OUTCOMES; warm-start copies, when any, in ``extra``)."""

    complete: int = 0
    failed: int = 0
    pruned: int = 0
    rejected: int = 0
    interrupted: int = 0

    def counts(self) -> dict[str, int]:
        """Every outcome's count, by its name."""
        return self.to_dict()


@dataclass(frozen=True)
class MachineSeconds(Record):
    """Seconds of db_bench (or the program) per part of the study."""

    preload: float = 0.0
    baselines: float = 0.0
    trials: float = 0.0
    revalidation: float = 0.0
    total: float = 0.0


@dataclass(frozen=True)
class When(Record):
    first_trial_started: str | None = None  # "YYYY-MM-DD HH:MM:SS UTC"
    last_trial_ended: str | None = None


@dataclass(frozen=True)
class Startup(Record):
    """The sampler's start-up: the trials expected and its size."""

    expected_trials: int | None = None
    size: int | None = None


@dataclass(frozen=True)
class RungAgreement(Record):
    """A --fidelity rung's rank agreement with the full size over the audited configurations."""

    scale: float = 1.0
    n: int = 0
    kendall_tau: float | None = None  # None: too few configurations, or all tied
    p_value: float | None = None
    agrees: bool = False


@dataclass(frozen=True)
class FidelityAgreement(Record):
    """--fidelity's judgement (tuner.rungs.judge): each rung's agreement and where new configurations start."""

    rungs: list[RungAgreement] = field(default_factory=list)
    threshold: float | None = None  # Kendall's tau at or above which a rung agrees
    start_rung: int = 0
    start_scale: float = 1.0
    audited: list[int] = field(default_factory=list)  # the trials that climbed every rung


@dataclass(frozen=True)
class TrialRow(Record):
    """A trial as a study's result lists it: its outcome, configuration and figures or why it failed."""

    number: int | None = None
    outcome: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] | None = None
    reason: str | None = None
    provenance: str | None = None


@dataclass(frozen=True)
class BestTrial(Record):
    trial: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    feasible: bool = True
    log_dir: str = ""  # its db_bench logs and OPTIONS file
    provenance: str | None = None
    start: str | None = None  # the named start it ran as (rocksdb-default: the defaults' own configuration)
    options_mismatch: list[str] | None = None


@dataclass(frozen=True)
class BaselineRun(Record):
    """A baseline's single run: ``params`` are the db_bench flags it ran with."""

    name: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    doc: str = ""
    state: str | None = None  # COMPLETE or FAIL
    metrics: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    neighbours: int | None = None  # other runs beside it at once, as the trials had (0 or None: alone)


@dataclass(frozen=True)
class Spread(Record):
    min: float | None = None
    max: float | None = None
    cv: float | None = None
    n: int | None = None


@dataclass(frozen=True)
class Ratio(Record):
    """How many times better one configuration is than ``against``, paired by round (tuner.stats.gain)."""

    against: str | None = None
    n: int | None = None
    method: str | None = None
    ratio: float | None = None
    ci95: list[float] | None = None
    p_value: float | None = None
    verdict: str | None = None  # faster | tie | slower | not measured


@dataclass(frozen=True)
class Measured(Record):
    """A configuration measured in re-validation rounds (tuner.stats.sample_rows): its samples of each
    metric and their medians are in ``extra``, by the metric's name; read them with the methods."""

    name: str = ""
    trial: int | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None
    spread: Spread | None = None

    def samples(self, metric: str) -> list[float]:
        return list(self.extra.get(metric) or [])

    def median(self, metric: str) -> float | None:
        return self.extra.get(f"median_{metric}")


@dataclass(frozen=True)
class Ablation(Ratio):
    """The best against itself with ``param`` put back to the reference's value."""

    param: str = ""
    value: Any = None
    reference_value: Any = None


@dataclass(frozen=True)
class RankCorrelation(Record):
    """The finalists' order where the answer was confirmed against the search's."""

    confirm_scale: float | None = None
    confirm_data_bytes: int | None = None
    confirm_duration_seconds: float | None = None
    search_best: str | None = None
    confirmed_best: str | None = None
    changed: bool = False
    search_ops_per_sec: list[float | None] = field(default_factory=list)
    confirm_ops_per_sec: list[float | None] = field(default_factory=list)
    kendall_tau: float | None = None


@dataclass(frozen=True)
class Selection(Record):
    """The re-validation's first stage: the finalists measured to choose the winner."""

    rounds: int = 0
    configurations: list[Measured] = field(default_factory=list)
    winner: str | None = None
    costly: list[str] = field(default_factory=list)  # finalists beyond the cost guard in these rounds (not winners)
    breaking: list[str] = field(default_factory=list)  # finalists whose medians here break the user's bounds
    served_out: list[str] = field(default_factory=list)  # finalists that served beyond the served guard (not winners)
    vs_reference: dict[str, Ratio] = field(default_factory=dict)
    distance_to_winner: dict[str, float] = field(default_factory=dict)
    rank_correlation: RankCorrelation | None = None


@dataclass(frozen=True)
class Minimal(Record):
    """The winner with only the options that matter (the rest at the reference's values)."""

    params: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    reset: list[str] = field(default_factory=list)
    rounds: int = 0
    configurations: list[Measured] = field(default_factory=list)
    vs_reference: Ratio | None = None
    vs_full: Ratio | None = None


@dataclass(frozen=True)
class Revalidation(Record):
    """The finalists re-measured in fresh paired rounds: the winner, its gain over the reference."""

    reference: str | None = None
    plan: dict[str, Any] = field(default_factory=dict)
    select: Selection | None = None
    rounds: int = 0
    configurations: list[Measured] = field(default_factory=list)
    best: str | None = None  # "trial 28"; None when no finalist was measured
    best_trial: int | None = None
    best_vs_reference: Ratio | None = None
    metric: str | None = None
    maximize: bool | None = None
    vs: dict[str, Ratio] = field(default_factory=dict)
    noise_cv_reference: float | None = None
    ablation: list[Ablation] = field(default_factory=list)
    minimal: Minimal | None = None
    seconds: float = 0.0
    kept_out: int = 0  # complete trials the cost guard kept from the finalists (all of them: no best)

    def measured(self, metric: str) -> dict[str, Measured]:
        """The estimation rounds' configurations that have a median of ``metric``, by name."""
        return {c.name: c for c in self.configurations if c.median(metric) is not None}


@dataclass(frozen=True)
class ComparisonRow(Record):
    """A row of the closing comparison: the metric columns (by metric name) are in ``extra``."""

    name: str = ""
    spread: Spread | None = None
    vs_reference: Ratio | None = None
    vs_default: float | None = None

    def value(self, metric: str) -> Any:
        return self.extra.get(metric)


@dataclass(frozen=True)
class ExplainedOption(Record):
    """One tuned option of the best, explained (tuner.outputs._explain)."""

    param: str = ""
    best: Any = None
    default: Any = None
    importance: float | None = None
    direction: str | None = None
    ablation: Ablation | None = None  # measured in the re-validation, when it was
    text: str = ""


@dataclass(frozen=True)
class Explanation(Record):
    importance: dict[str, float] = field(default_factory=dict)
    options: list[ExplainedOption] = field(default_factory=list)


@dataclass(frozen=True)
class Tracking(Record):
    """Where MLflow tracks the study."""

    uri: str | None = None
    experiment_id: str | None = None
    run_id: str | None = None
    view: str | None = None


@dataclass(frozen=True)
class Failure(Record):
    trial: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class Scaled(Record):
    """An option the trials ran at another value than the target (and why)."""

    option: str = ""
    trial: Any = None
    target: Any = None
    why: str = ""


@dataclass(frozen=True)
class Shape(Record):
    """The target's LSM shape: RocksDB's options that size its files and levels."""

    target_file_size_base: int | None = None
    target_file_size_multiplier: int | None = None
    max_bytes_for_level_base: int | None = None
    max_bytes_for_level_multiplier: float | None = None
    level0_file_num_compaction_trigger: int | None = None
    level0_slowdown_writes_trigger: int | None = None
    level0_stop_writes_trigger: int | None = None
    num_levels: int | None = None
    level_compaction_dynamic_level_bytes: bool | None = None


@dataclass(frozen=True)
class TargetInfo(Record):
    """What the study tuned for (tuner.target.Target) and how its trials relate to it."""

    data_bytes: int | None = None
    memory_bytes: int | None = None
    shape: Shape = field(default_factory=Shape)
    base: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    assumed: bool = False
    levels: int | None = None
    trial_data_bytes: int | None = None
    trial_levels: int | None = None
    trial_memory_bytes: int | None = None
    kind: str | None = None  # the workload's: load, preloaded, replay
    duration_seconds: float | None = None  # the search's timed phases
    confirm_duration_seconds: float | None = None  # the re-validation's
    confirmed_at_bytes: int | None = None
    scaled: list[Scaled] = field(default_factory=list)


@dataclass(frozen=True)
class PreloadedDb(Record):
    path: str | None = None
    size_bytes: int | None = None
    seconds: float = 0.0
    data_bytes: int | None = None


@dataclass(frozen=True)
class Offered(Record):
    """What a study at a rate offered every run (tune --rate, --read-rate, --arrivals, --background-priority)."""

    writes: float = 0.0  # per second
    reads: float = 0.0
    arrivals: str = "constant"
    background: str = "normal"  # or "low": flush and compaction at nice 19


@dataclass(frozen=True)
class Preload(Record):
    """The preloaded DBs the runs start from: the trials' and (at another size) the target's."""

    seconds: float = 0.0
    builds: int = 0
    trials: PreloadedDb | None = None
    target: PreloadedDb | None = None


@dataclass(frozen=True)
class CapacityProbe(Record):
    """One offered rate of a capacity search: the SLO's metric there, what was delivered, whether
    RocksDB caught up within the settle, and whether the rate held the SLO."""

    offered: float = 0.0
    value: float | None = None
    delivered: float | None = None
    settled: bool | None = None
    held: bool = False
    round: int = 1  # the paired round of capacity searches it belongs to


@dataclass(frozen=True)
class CapacityOf(Record):
    """One configuration's capacity at the SLO: the highest rate tried that held it and the lowest that
    did not (single runs: a bracket, not an interval; over rounds, the medians of each round's), each
    round's, and every rate tried in the order tried."""

    name: str = ""
    held: float | None = None
    failed: float | None = None
    probes: list[CapacityProbe] = field(default_factory=list)
    held_by_round: list[float | None] = field(default_factory=list)  # one per round (none recorded: one round)
    failed_by_round: list[float | None] = field(default_factory=list)


@dataclass(frozen=True)
class CapacityReport(Record):
    """``tune --slo``: the capacity of the answer's candidate and of rocksdb-default at the SLO, after
    the re-validation (a rate study's runs at its rate, or a db_bench study's open loop on the served
    backend of --serve-rate)."""

    slo: str = ""  # as given, e.g. p99.9<=10ms
    metric: str = ""  # the SLO's metric, e.g. p99.9_us
    bound: float = 0.0  # its bound, in the metric's unit
    configurations: list[CapacityOf] = field(default_factory=list)
    seconds: float = 0.0
    rounds: int = 1  # paired rounds: in each, every configuration's search over rates, in a random order
    vs_default: dict[str, Ratio] = field(default_factory=dict)  # 2+ rounds: each one's held rate over the defaults'
    duration: float = 0.0  # seconds of each run at a rate (then its settle); 0.0 in records from before it was kept
    start: float = 0.0  # ops/s the first round's searches started from; 0.0 in records from before it was kept
    how: str = ""  # where that start came from, e.g. "--rate 60000" or "auto: 0.4 x rocksdb-default's 142,000 ops/s"
    placed: bool = False  # that start is where the preload placed rocksdb-default's capacity: searched as later rounds'

    def of(self, name: str) -> CapacityOf | None:
        return next((c for c in self.configurations if c.name == name), None)


@dataclass(frozen=True)
class ServedRun(Record):
    """One run of ``tune --serve-rate``: a configuration open loop at the rate in one paired round."""

    name: str = ""
    round: int = 1
    metrics: dict[str, float] = field(default_factory=dict)  # the driver's: p99.9_us, p99.99_us, delivered, ...
    failed: str | None = None  # why the run failed, if it did


@dataclass(frozen=True)
class ServedReport(Record):
    """``tune --serve-rate``: the answer and rocksdb-default open loop at one offered rate after the
    re-validation, in paired rounds: what a service at that rate would see of each."""

    rate: float = 0.0  # writes offered per second
    how: str = ""  # where the rate came from, e.g. "--serve-rate 50000" or "0.4 x rocksdb-default's 142,000 ops/s"
    duration: float = 0.0  # seconds of each run (then its settle)
    rounds: int = 1
    names: list[str] = field(default_factory=list)  # rocksdb-default first, then the answer (when it is not it)
    runs: list[ServedRun] = field(default_factory=list)
    seconds: float = 0.0
    vs_default: dict[str, Ratio] = field(default_factory=dict)  # metric -> the answer's over the defaults', by round

    def median(self, name: str, metric: str) -> float | None:
        """``name``'s median of ``metric`` over its runs that reported it."""
        values = [r.metrics[metric] for r in self.runs if r.name == name and r.metrics.get(metric) is not None]
        return statistics.median(values) if values else None


@dataclass(frozen=True)
class Budget(Record):
    """A bound the user set on a metric (objectives.scores.Bound: --constraint, --max-p99-us, --max-write-amp):
    at most ``limit`` when ``upper``, else at least."""

    metric: str = ""
    limit: float = 0.0
    upper: bool = True
    flag: str = "--constraint"


@dataclass(frozen=True)
class CostlyBest(Record):
    """The search's best at any cost, when the cost guard kept it from the finalists: its search run's
    objective over rocksdb-default's and what it cost beyond the guard's margins (its value over the
    defaults')."""

    trial: int = 0
    gain: float | None = None  # how many times better than rocksdb-default's run (tuner.stats.improvement)
    over: dict[str, float] = field(default_factory=dict)  # metric -> its value / the defaults'


@dataclass(frozen=True)
class StudyAnswer(Record):
    """The study's answer after a re-validation: use the best, or keep the reference ``name``."""

    recommend: str = ""  # best | reference
    name: str = ""
    why: str = ""


@dataclass(frozen=True)
class Summary(Record):
    """A finished study: what ran, what it found and what it recommends (``summary.json``)."""

    study: str | None = None
    workload: str | None = None
    backend: str = "db_bench"
    command: str | None = None  # --backend command: the program
    space: str | None = None
    space_searched: dict[str, Any] | None = None
    sampler: str | None = None
    objective: str | None = None
    objective_description: str | None = None
    objective_metric: str = "ops_per_sec"  # what gains are ratios of
    objective_maximize: bool = True
    seed: int | None = None
    run_seed: int | None = None  # the runs' --seed (summaries of schema 1 and older: "db_bench_seed")
    scale: float | None = None
    drain: bool = True
    data_bytes: int | None = None
    build: Build | None = None  # what measured (schema 1 and older: "db_bench"); None when nothing was probed
    defaults: DefaultsInfo | None = None
    host: Host | None = None
    slot: SlotInfo | None = None
    memory: MemoryLimit | None = None
    storage: str | None = None
    trials: TrialCounts = field(default_factory=TrialCounts)
    machine_seconds: MachineSeconds = field(default_factory=MachineSeconds)
    when: When | None = None
    budget_seconds: float | None = None
    fidelity: list[float] | None = None
    fidelity_agreement: FidelityAgreement | None = None
    seeded: list[str] = field(default_factory=list)
    startup: Startup | None = None
    provenance: dict[str, int] | None = None
    best: BestTrial | None = None
    baselines: list[BaselineRun] = field(default_factory=list)
    repeats: int = 1
    revalidation: Revalidation | None = None
    comparison: list[ComparisonRow] = field(default_factory=list)
    explanation: Explanation | None = None
    mlflow: Tracking | None = None
    failures: list[Failure] = field(default_factory=list)
    target: TargetInfo | None = None
    preload: Preload | None = None
    answer: StudyAnswer | None = None
    offered: Offered | None = None  # tune --rate: the load every run was offered
    capacity: CapacityReport | None = None  # tune --slo: the capacity of the best and rocksdb-default
    served: ServedReport | None = None  # tune --serve-rate: the answer and rocksdb-default open loop at a rate
    served_guard: list[ServedReport] = field(default_factory=list)  # each finalist the re-validation served, in order
    costly: CostlyBest | None = None  # the search's best when the cost guard kept it from the finalists
    cost_guard: bool = True  # the cost guard held the answer (--any-cost: False)
    breaks: dict[str, list[str]] = field(default_factory=dict)  # references that break the user's constraints
    budgets: list[Budget] = field(default_factory=list)  # the user's bounds on metrics, which the answer keeps
    pareto: list[TrialRow] | None = None  # multi-objective: the front's trials
    recommendation: str | None = None  # multi-objective: how the best was chosen on the front

    @classmethod
    def from_dict(cls, data: Any, where: str = "summary") -> Self:
        """A summary from its JSON object; an unknown ``schema`` is a :class:`SummaryError`."""
        if isinstance(data, dict):
            version = data.get("schema", 0)
            if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= SCHEMA_VERSION:
                raise SummaryError(f"{where}: unknown summary schema {version!r}: this rocksdb-tuner reads schema "
                                   f"{SCHEMA_VERSION} and older (was it written by a newer one?)")
            data = {k: v for k, v in data.items() if k != "schema"}
        summary = super().from_dict(data, where)
        old = summary.extra  # schema 1 and older: kept as read (written back so), read as the new fields
        if old.get("db_bench") is not None:
            summary = replace(summary, build=Build.probed(old["db_bench"]))
        if old.get("db_bench_seed") is not None:
            summary = replace(summary, run_seed=old["db_bench_seed"])
        return summary

    @classmethod
    def load(cls, path: str | Path) -> Summary:
        """The summary a study wrote to ``path``."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise SummaryError(f"{path}: cannot read it: {exc}") from None
        return cls.from_dict(data, str(path))

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, **super().to_dict()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def optuna_study(self, out: Path | None = None) -> optuna.Study:
        """The Optuna study it summarizes, loaded from its storage (a KeyError when not there). ``out``: the
        directory the summary was read from; a SQLite file the stored URL names (absolute to where the study
        ran) but that is not there is read from ``out``, where the study's OUT keeps it."""
        if not self.study or not self.storage:
            raise SummaryError(f"summary of {self.study or 'a study'}: it names no study and storage")
        storage = self.storage
        stored = Path(storage.removeprefix("sqlite:///"))
        if out is not None and storage.startswith("sqlite:///") and not stored.exists():
            storage = f"sqlite:///{out / stored.name}"
        return optuna.load_study(study_name=self.study, storage=storage)

    def baseline(self, name: str) -> BaselineRun | None:
        return next((b for b in self.baselines if b.name == name), None)
