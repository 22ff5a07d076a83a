"""What a study records on each Optuna trial (its user attributes), typed: the engine writes them
with :func:`record` and everything else reads them as :class:`TrialRecord` attributes, so a misspelt
name is an error where it is written, not a silent ``None`` where it is read. A baseline's run, kept
as a study attribute (``baseline:<name>``), is a :class:`BaselineRecord` the same way."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Self

import optuna
from optuna.trial import FrozenTrial

from tuner.summary import Build, Record

RUNG_PREFIX = "rung_"  # rung_<n>: the trial's run at --fidelity rung n
LOST_PREFIX = "lost_attempt_"  # lost_attempt_<n>: why a Ray worker's attempt n was lost


@dataclass(frozen=True)
class Stored:
    """A part of a trial's record stored as a JSON object of its fields (a dataclass's)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """The part a stored object holds (keys of other versions are passed over)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PrunedAt(Stored):
    """Where a pruned trial stopped: at ``second`` of ``phase`` (the pruner), or after a --fidelity rung
    (``phase`` "scale F", ``second`` None)."""

    phase: str
    second: int | None = None


@dataclass(frozen=True)
class TrialNode(Stored):
    """Where a worker ran a trial (--parallel on an executor of nodes): its node, the cores it was pinned
    to and when it measured (seconds since the epoch). Stored as a JSON object of these keys."""

    node_id: str | None = None
    host: str | None = None
    ip: str | None = None
    cores_used: list[int] | None = None
    measured_from: float | None = None
    measured_to: float | None = None


@dataclass(frozen=True)
class RungRun(Stored):
    """A --fidelity trial's run at one rung (scale ``scale`` of the workload): its metrics and the memory
    limit it ran within. Stored as the ``rung_<n>`` attribute, a JSON object of these keys."""

    scale: float
    ops_per_sec: float | None = None
    burst_ops_per_sec: float | None = None
    p99_us: float | None = None
    write_amp: float | None = None
    memory_limit_bytes: int | None = None


@dataclass(frozen=True)
class TrialRecord:
    """One trial's record. ``outcome`` is complete, failed, pruned, rejected, interrupted or
    warm-start; a trial the tuner has not told yet has none."""

    outcome: str | None = None
    fail_reason: str | None = None  # failed, rejected, interrupted: why, in one line
    seconds: float | None = None  # db_bench (or program) wall time the trial took
    metrics: dict[str, Any] | None = None  # the measured metrics of a complete trial
    constraints: list[float] = field(default_factory=list)  # Optuna's constraint values: > 0 breaks a budget
    over_cost: list[str] | None = None  # with the cost guard: the ranking.COST_MARGINS metrics its run exceeded
    provenance: str | None = None  # how its configuration was chosen (a start, a model proposal, ...)
    enqueued: str | None = None  # the named start it ran as
    repaired_from: int | None = None  # the rejected proposal it is the nearest feasible neighbour of
    warm_start_from: str | None = None  # study#trial it was copied from
    audit: bool = False  # a --fidelity configuration that climbs every rung unpruned
    pruned_at: PrunedAt | None = None
    pruned_by: str | None = None  # what stopped it, when not the pruner
    node: TrialNode | None = None  # the node that ran it, under an executor of nodes (Ray, processes)
    attempts: int | None = None
    build: Build | None = None  # what the worker measured with, when not the driver's
    log_dir: str | None = None
    repeats: list[dict[str, Any]] | None = None  # each run's metrics under --repeats
    spread_ops_per_sec: dict[str, float] | None = None  # min, max, cv, n of --repeats' ops/s
    phases: list[dict[str, Any]] | None = None  # each db_bench phase's details
    commands: list[list[str]] | None = None
    options_mismatch: list[str] | None = None  # searched options RocksDB did not take as asked, a line each
    value_estimate: float | None = None  # a pruned trial's full-size ops/s as the rungs estimate it
    rungs: dict[int, RungRun] = field(default_factory=dict)
    lost_attempts: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, trial: FrozenTrial | optuna.Trial) -> TrialRecord:
        """The record of ``trial`` (attributes of other names, from other versions, are passed over)."""
        attrs = trial.user_attrs
        values = {name: attrs[name] for name in _FIELDS if name in attrs}
        for name, part in (("pruned_at", PrunedAt), ("node", TrialNode)):
            if isinstance(values.get(name), dict):  # stored as a JSON object
                values[name] = part.from_dict(values[name])
        if isinstance(values.get("build"), dict):
            values["build"] = Build.from_dict(values["build"], "build")
        elif isinstance(attrs.get("db_bench"), dict):  # as versions before Build kept the worker's
            values["build"] = Build.probed(attrs["db_bench"])
        values["rungs"] = {int(k[len(RUNG_PREFIX):]): RungRun.from_dict(v) for k, v in attrs.items() if k.startswith(RUNG_PREFIX)}
        values["lost_attempts"] = {int(k[len(LOST_PREFIX):]): v for k, v in attrs.items() if k.startswith(LOST_PREFIX)}
        return cls(**values)

    def metric(self, name: str) -> float | None:
        """A measured metric, None where the trial has none."""
        return (self.metrics or {}).get(name)


@dataclass(frozen=True)
class BaselineRecord:
    """A baseline's single run, as the study keeps it: its flags, ``state`` COMPLETE (its metrics and
    details) or FAIL (the ``reason``), when it ended, and how it ran: alone, or beside ``neighbours``
    other runs as the trials of a study with --parallel run (tuner.engine._baselines)."""

    name: str
    flags: dict[str, Any] = field(default_factory=dict)  # the db_bench flags (or options) it ran with
    doc: str = ""
    log_dir: str | None = None
    state: str | None = None  # COMPLETE or FAIL
    reason: str | None = None  # FAIL: why, in one line
    metrics: dict[str, Any] = field(default_factory=dict)
    phases: list[dict[str, Any]] | None = None  # each db_bench phase's details
    commands: list[list[str]] | None = None
    repeats: list[dict[str, Any]] | None = None  # each run's metrics under --repeats
    spread_ops_per_sec: dict[str, float] | None = None  # min, max, cv, n of --repeats' ops/s
    seconds: float | None = None  # wall time the run took
    ended: float | None = None  # when it ended (seconds since the epoch)
    neighbours: int | None = None  # the fewest other runs beside it at once (0: alone; None: not recorded, alone)
    neighbour_seconds: float | None = None  # machine time of the copies run only as neighbours, counted with it

    @property
    def complete(self) -> bool:
        return self.state == "COMPLETE"

    @classmethod
    def of(cls, attr: dict[str, Any]) -> BaselineRecord:
        """The record a study attribute holds (keys of other names, from other versions, are passed over)."""
        return cls(**{f.name: attr[f.name] for f in dataclasses.fields(cls) if attr.get(f.name) is not None})

    def to_attr(self) -> dict[str, Any]:
        """The study attribute: the fields that are set."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


_FIELDS = tuple(f.name for f in dataclasses.fields(TrialRecord) if f.name not in ("rungs", "lost_attempts"))
ORIGIN = ("enqueued", "repaired_from", "provenance")  # what a re-run of a configuration keeps


def attrs(**values: Any) -> dict[str, Any]:
    """User attributes of these record fields (for ``enqueue_trial``); an unknown name is a TypeError."""
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise TypeError(f"not a TrialRecord field: {', '.join(unknown)}")
    return values


def record(trial: optuna.Trial, **values: Any) -> None:
    """Write record fields on a running trial (a part that is a record, as a JSON object)."""
    for name, value in attrs(**values).items():
        trial.set_user_attr(name, value.to_dict() if isinstance(value, (Stored, Record)) else value)


def record_rung(trial: optuna.Trial, rung: int, run: RungRun) -> None:
    """Write the trial's run at ``rung``."""
    trial.set_user_attr(f"{RUNG_PREFIX}{rung}", run.to_dict())


def record_lost_attempt(trial: optuna.Trial, attempt: int, reason: str) -> None:
    trial.set_user_attr(f"{LOST_PREFIX}{attempt}", reason)


def origin(record_: TrialRecord) -> dict[str, Any]:
    """What a re-run of the trial's configuration is enqueued with: the start or repair it was."""
    return {name: getattr(record_, name) for name in ORIGIN if getattr(record_, name) is not None}
