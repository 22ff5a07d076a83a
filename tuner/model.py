"""The data model every layer shares: a study's settings, a read-only snapshot of it, its result.

Nothing here runs anything. The engine fills a :class:`StudySnapshot` from its storage; observers
and outputs read it (ranking through :mod:`tuner.ranking`), and never reach back into the engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optuna.trial import FrozenTrial

from objectives.contract import Task
from objectives.defaults import LIBRARY, Defaults
from objectives.scores import Bound, Direction, Score
from search_spaces import SearchSpace
from tuner import ranking
from tuner.summary import (
    BaselineRun,
    Build,
    CapacityReport,
    FidelityAgreement,
    MachineSeconds,
    MemoryLimit,
    Preload,
    Revalidation,
    ServedReport,
    SlotInfo,
    Startup,
    Summary,
    TargetInfo,
    TrialRow,
)
from tuner.trials import BaselineRecord, TrialRecord

if TYPE_CHECKING:
    from tuner.backends import Found

DEFAULT_BASELINE = "rocksdb-default"
DEFAULT_BASELINE_DOC = "none of the tuned options set: the defaults every run starts from"


class UsageError(ValueError):
    """A tuning request that cannot start; the message names the flag or field."""


@dataclass(frozen=True)
class MeasurementConfig:
    """What each configuration runs and how it is measured (``tune --help``'s "measurement")."""

    workload: str | Path | None = None  # None: fillrandom, or steady-overwrite with a --target-data
    backend: str = "db_bench"  # what measures a configuration (tuner.backends.BACKENDS)
    command: str | None = None  # --backend command: the program to run, with {options} and {db} in it
    load: str | None = None  # --backend command: builds the program's DB once per study, with {db} in it
    rate: float | None = None  # --backend rate: writes offered per second, open loop
    read_rate: float = 0.0  # --backend rate: reads offered per second beside them
    arrivals: str = "constant"  # --backend rate: constant gaps or poisson
    background_priority: str = "normal"  # --backend rate: RocksDB's flush and compaction threads at nice 19 if "low"
    slo: str | None = None  # --backend rate: the capacity of the best and rocksdb-default at this bound, at the end
    capacity_rounds: int = 1  # --slo: paired rounds of each one's capacity search (2 or more: a ratio and its interval)
    scale: float | None = None  # the trials' data size factor: 1 without a target; with one, set to reach it
    duration: float | None = None  # seconds of each timed phase (--duration; the workload's own by default)
    search_duration: float | None = None  # the search's trials' timed phases (--search-duration), when shorter
    db_snapshot: Path | None = None  # the DB a trace replays on, or a preloaded workload's runs start from
    defaults: str = LIBRARY  # what every run starts from (objectives.defaults.MODES): the library's, or 7.8.3's pins
    drain: bool = True  # charge deferred flushes and compactions (sustained ops/s); False: burst ops/s
    baselines: bool = True
    repeats: int = 1
    trial_timeout: float = 600.0


@dataclass(frozen=True)
class TargetConfig:
    """The DB the answer is for, and the memory its trials run in (``tune --help``'s "the target")."""

    target_data: int | None = None  # raw bytes of the production DB the answer is for (--target-data)
    target_memory: int | None = None  # what RocksDB may use there, page cache included (--target-memory)
    base_options: Path | None = None  # the user's OPTIONS: every option not searched stays as it is there
    memory_limit: int | None = None  # scored phases run in a memory cgroup of this many bytes
    memory_budget: int | None = None


@dataclass(frozen=True)
class SearchConfig:
    """What is searched, for which score, and how configurations are chosen (``tune --help``'s "search")."""

    space: str | Path | SearchSpace | None = None  # a preset name, a file, a space built in code; None: the backend's
    trials: int | None = 20  # measured trials; None with a --budget: as many as it allows
    budget: float | None = None  # seconds of machine time (db_bench wall time) for the whole study
    fidelity: tuple[float, ...] | None = None  # multi-fidelity rungs: fractions of the data size, the last 1
    sampler: str = "auto"  # see tuner.samplers.choose
    objective: str | None = None  # throughput, multi, capacity or a metric the runs report; None: Backend.objective
    prefer: dict[str, float] | None = None  # --objective multi: weights of ops_per_sec, p99_us, write_amp (1 each)
    max_p99_us: float | None = None
    max_write_amp: float | None = None
    constraints: tuple[Bound, ...] = ()  # --constraint METRIC<=VALUE / METRIC>=VALUE
    seed: int | None = None  # the sampler's; also db_bench's --seed and the re-validation's order
    pruner: str = "none"
    pruner_warmup: int = 4  # experiments/pruning/results/pruning*.json: 2 s pruned too eagerly on fillrandom
    warm_start: str | None = None  # an earlier study (its dir, summary.json or name), or "auto"
    library: Path = Path("runs")  # where --warm-start auto looks for finished studies
    library_exclude: tuple[str, ...] = ()  # studies whose name contains one of these are never picked
    starts: bool = True  # measure db_bench's defaults and the benchmark.sh-style configuration first
    any_cost: bool = False  # --any-cost: finalists may cost more than rocksdb-default beyond ranking.COST_MARGINS
    hand_found_first: bool = True  # a new study runs the workload's hand-found configurations first


@dataclass(frozen=True)
class RevalidationConfig:
    """How the answer and its gain are confirmed after the search (``tune --help``'s "re-validation")."""

    revalidate: int = 3  # finalists re-measured after the search (0: single runs, not re-validated)
    revalidate_rounds: int = 5  # estimation rounds at least ...
    revalidate_max_rounds: int = 10  # ... and at most, while the interval is wider than interval_target
    interval_target: float = 0.10  # the gain's 95 % interval: high / low - 1
    ablation: bool = True  # re-measure the best with each option put back to the reference's value
    baseline: Path | None = None  # the user's configuration (OPTIONS file or db_bench flags): the reference
    confirm_scale: float | None = None  # re-validate at this --scale instead of the search's
    revalidation_time: float | None = None  # without --budget: its machine time at most (None: see below)
    revalidate_as_asked: bool = False  # without --budget: the sizes above as given; else fitted to about the search's time
    serve_rate: float | str | None = None  # after the re-validation, the answer and rocksdb-default open loop at
    # this many writes/s ("auto": a share of the defaults' sustained ops/s), a study without --rate
    serve_rounds: int = 3  # --serve-rate: paired rounds
    serve_duration: float = 60.0  # --serve-rate: seconds of each run (then its settle)


@dataclass(frozen=True)
class ExecutionConfig:
    """Where trials run and with which db_bench (``tune --help``'s "execution"); what executors read."""

    executor: str | None = None  # where trials run (tuner.executors.EXECUTORS); None: ray if on_ray, else local
    parallel: int = 1  # trials at once, on Ray workers when > 1 (tuner.executors._ray)
    ray_address: str | None = None  # an existing Ray cluster ("auto", "HOST:PORT", "ray://HOST:PORT")
    cpus_per_trial: int | None = None  # default: the cluster's CPUs / --parallel, at least 1
    one_trial_per_node: bool = False
    allow_mixed_db_bench: bool = False
    db_bench: str | None = None  # an explicit binary; each Ray node resolves its own otherwise
    rocksdb_version: str | None = None  # pick the db_bench build of this RocksDB version (e.g. "9.11")
    work_dir: Path | None = None  # where trial DBs are created (on each node)

    @property
    def on_ray(self) -> bool:
        """Trials run on Ray workers (--executor ray, or by default --parallel > 1 or --ray-address)."""
        if self.executor is not None:
            return self.executor == "ray"
        return self.parallel > 1 or bool(self.ray_address)


@dataclass(frozen=True)
class TrackingConfig:
    """Where the study is kept and what it writes (``tune --help``'s "tracking and outputs")."""

    study: str | None = None
    storage: str | None = None
    out: Path | None = None
    mlflow: bool = True
    mlflow_uri: str | None = None
    experiment: str | None = None
    plots: bool = True
    tags: dict[str, str] = field(default_factory=dict)  # extra MLflow tags on every run of the study


PARTS: dict[str, type] = {"measurement": MeasurementConfig, "target": TargetConfig, "search": SearchConfig,
                          "revalidation": RevalidationConfig, "execution": ExecutionConfig, "tracking": TrackingConfig}
_PART_OF: dict[str, str] = {f.name: part for part, kind in PARTS.items() for f in fields(kind)}


@dataclass(frozen=True, init=False)
class TuneConfig:
    """Everything a study needs, in parts: one per group of ``tune --help`` after its "start here"
    (whose flags each land in one of them), each read by the
    components it concerns (the executors read ``execution``, the re-validation ``revalidation``,
    MLflow ``tracking``).

    Built from the parts' fields by name, as the CLI's flags name them, each landing in its part:
    ``TuneConfig(workload="fillrandom", trials=20)``; a part may be given whole, and named fields
    then change it. ``dataclasses.replace(config, scale=2.0)`` goes through the same constructor.
    A field is read from its part: ``config.search.trials``."""

    measurement: MeasurementConfig
    target: TargetConfig
    search: SearchConfig
    revalidation: RevalidationConfig
    execution: ExecutionConfig
    tracking: TrackingConfig

    def __init__(self, *, measurement: MeasurementConfig | None = None, target: TargetConfig | None = None,
                 search: SearchConfig | None = None, revalidation: RevalidationConfig | None = None,
                 execution: ExecutionConfig | None = None, tracking: TrackingConfig | None = None,
                 **changes: Any) -> None:
        unknown = sorted(set(changes) - set(_PART_OF))
        if unknown:
            raise TypeError(f"TuneConfig() got an unexpected keyword argument {unknown[0]!r}")
        given = {"measurement": measurement, "target": target, "search": search,
                 "revalidation": revalidation, "execution": execution, "tracking": tracking}
        for name, kind in PARTS.items():
            part = given[name] or kind()
            object.__setattr__(self, name, replace(part, **{k: v for k, v in changes.items() if _PART_OF[k] == name}))


@dataclass(frozen=True)
class Answer:
    """What a study recommends: a trial to use, or a baseline to keep (the reference, when nothing beat
    it); with the re-validated gain of the best tuned configuration over the reference, all None when
    there was no re-validation (the answer is then the search's best trial)."""

    trial: int | None  # the trial to use; None: keep ``kept``
    kept: str | None  # the baseline kept
    why: str
    best: str | None = None  # the re-validated best tuned configuration ("trial 28"): the gain is its own
    reference: str | None = None  # what it was measured against
    ratio: float | None = None  # its ops/s over the reference's: geometric mean of paired rounds
    ci95: tuple[float, float] | None = None
    p_value: float | None = None
    verdict: str | None = None  # faster | tie | slower | not measured
    rounds: int | None = None  # the paired rounds the ratio is of


@dataclass
class TuneResult:
    """What a study found: best configuration, baselines, every trial, the written summary and the answer."""

    study_name: str
    out: Path
    best_params: dict[str, Any]
    best_metrics: dict[str, float | None]
    baselines: list[BaselineRun]
    trials: list[TrialRow]  # every trial but rejected proposals
    summary: Summary = field(default_factory=Summary)  # summary.json, typed
    answer: Answer | None = None


@dataclass(frozen=True)
class StudySnapshot:
    """A study as stored at one moment: its settings, trials, baselines and re-validation."""

    name: str
    uid: str
    out: Path
    storage: str
    config: TuneConfig  # as run: the sampler ``auto`` stood for is filled in
    workload: Task
    space: SearchSpace
    score: Score
    found: Found  # what the backend found for the study (its build, the defaults its runs start from)
    run_seed: int  # the runs' --seed
    trials_wanted: int
    work_dir: Path
    trials: tuple[FrozenTrial, ...]
    baselines: tuple[BaselineRecord, ...]
    revalidation: Revalidation | None = None
    slot: SlotInfo = field(default_factory=SlotInfo)  # what one trial may use (cores, memory)
    memory: MemoryLimit | None = None  # the scored phases' memory limit and how it is enforced
    seeded: tuple[str, ...] = ()  # what the new study ran first or learned from (starts, --warm-start)
    target: TargetInfo | None = None  # what the study tunes for (tuner.target) and what its trials scaled
    preload: Preload | None = None  # the preloaded DB the trials start from: path, size, seconds
    startup: Startup | None = None  # the sampler's start-up: trials expected, its size
    fidelity_agreement: FidelityAgreement | None = None  # --fidelity: each rung's agreement with the full size
    defaults: Defaults | None = None  # what every db_bench run started from (None: no db_bench measured)
    widened: tuple[str, ...] = ()  # what of the space was widened to hold the references, in words
    breaks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # references breaking the user's constraints
    capacity: CapacityReport | None = None  # --slo: the best's and rocksdb-default's capacity, after the re-validation
    served: ServedReport | None = None  # --serve-rate: the answer and rocksdb-default open loop at a rate, at the end
    served_guard: tuple[ServedReport, ...] = ()  # --serve-rate: each finalist the re-validation served, in order

    @property
    def build(self) -> Build | None:
        """What measured the study's runs (None: nothing was probed, e.g. a program)."""
        return self.found.build

    @property
    def directions(self) -> list[Direction]:
        return self.score.directions

    def by_outcome(self) -> dict[str, list[FrozenTrial]]:
        return ranking.by_outcome(self.trials)

    def counted(self) -> int:
        """Trials that count toward --trials."""
        return ranking.counted(self.trials)

    def best(self) -> FrozenTrial | None:
        """The re-validated winner after a re-validation, else the best trial by the ranking rule."""
        return ranking.best(self.trials, self.directions, self.revalidation, self.weights)

    @property
    def weights(self) -> tuple[float, ...] | None:
        """--prefer's weight of each objective, in the score's order (1 where not given)."""
        prefer = self.config.search.prefer
        return tuple(prefer.get(m, 1.0) for m in self.score.metrics) if prefer else None

    def pareto_front(self) -> list[FrozenTrial]:
        return ranking.pareto_front(self.by_outcome()["complete"], self.directions)

    def machine_seconds(self) -> MachineSeconds:
        """db_bench's wall time so far: baselines, trials (all rungs and repeats), re-validation."""
        return machine_seconds(self.trials, self.baselines, self.revalidation, self.preload)

    def log_dir(self, number: int) -> Path:
        return trial_log_dir(self.out, number)


WARM_START = "warm-start"  # the outcome of a trial copied from an earlier study
# A trial's provenance (user attribute "provenance"): "start", "warm start", "neighbour of a rejected
# proposal", "copied from an earlier study", or the sampler's own: "random initial point" or "model
# proposal" (tuner.samplers._startup), "random point", "grid point", "<name> proposal".
WARM_START_PROVENANCE = "warm start"  # an earlier study's configuration, run as an optional start


def measured_here(trials: Iterable[FrozenTrial]) -> list[FrozenTrial]:
    """The trials this study ran (warm-start copies were measured by another study)."""
    return [t for t in trials if TrialRecord.of(t).outcome != WARM_START]


def machine_seconds(trials: Iterable[FrozenTrial], baselines: Iterable[BaselineRecord],
                    revalidation: Revalidation | None, preload: Preload | None = None) -> MachineSeconds:
    """Seconds of db_bench per part of a study (the baselines' with the copies that ran only beside them)."""
    parts = (preload.seconds if preload else 0.0,
             sum((b.seconds or 0.0) + (b.neighbour_seconds or 0.0) for b in baselines),
             sum(TrialRecord.of(t).seconds or 0.0 for t in measured_here(trials)),
             revalidation.seconds if revalidation else 0.0)
    return MachineSeconds(*parts, total=sum(parts))


def trial_log_dir(out: Path, number: int) -> Path:
    """Where a trial's db_bench logs go: ``OUT/trials/NNNN``."""
    return out / "trials" / f"{number:04d}"
