"""Scores: what the optimizer sees of a trial's metrics, and the budgets it must respect.

``throughput`` maximizes ops/s of the scored phases. ``multi`` is a Pareto study over
(ops/s up, P99 down, write amplification down). ``capacity`` maximizes the highest offered rate a
configuration holds an SLO at (``held_ops_per_sec``: the rate backend's runs with --slo). Any other
objective names one metric the runs report: ``METRIC`` (maximized, or minimized when it is a latency, a time, a size or write
amplification: :func:`sense_alone`), ``METRIC:max`` or ``METRIC:min``. Budgets (``max_p99_us``, ``max_write_amp`` and any
:class:`Bound`, ``--constraint METRIC<=VALUE``) are Optuna constraints: a value <= 0 means
satisfied; they are never folded into the score.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

Direction = Literal["maximize", "minimize"]  # an objective value's, as Optuna takes it
OBJECTIVES = ("throughput", "multi", "capacity")  # or a metric: METRIC, METRIC:max, METRIC:min
HELD = "held_ops_per_sec"  # --objective capacity's metric: the highest offered rate a run held the SLO at
_TERMS: dict[str, tuple[tuple[str, Direction], ...]] = {
    "throughput": (("ops_per_sec", "maximize"),),
    "multi": (("ops_per_sec", "maximize"), ("p99_us", "minimize"), ("write_amp", "minimize")),
    "capacity": ((HELD, "maximize"),),
}
_SENSE: dict[str, Direction] = {**dict(_TERMS["multi"]), **dict(_TERMS["capacity"])}  # the direction a metric named alone takes
_UNITS = {"ops_per_sec": "ops/s", "p99_us": "P99 us", "write_amp": "write amp", "db_size_bytes": "disk",
          HELD: "held ops/s"}
_NAMED = re.compile(r"([A-Za-z_][\w.]*)(?::(min|max))?")  # p99.9_us: a dot in a percentile
_BOUND = re.compile(r"\s*([A-Za-z_][\w.]*)\s*(<=|>=)\s*(\S+)\s*")


_COSTS = re.compile(r".*(_us|_micros|_s|_seconds|_bytes)|write_amp|l0_files")  # less is better


def sense_alone(metric: str) -> Direction:
    """The direction a metric named alone takes: min for a latency, a time, a size or write amp, else max."""
    return _SENSE.get(metric) or ("minimize" if _COSTS.fullmatch(metric) else "maximize")


class ScoreError(ValueError):
    """A metric the score needs is missing from a run."""


def label(metric: str) -> str:
    """How a metric is printed: ``ops/s``, ``P99 us``, ``write amp``, ``disk``, else its own name."""
    return _UNITS.get(metric, metric)


@dataclass(frozen=True)
class Bound:
    """A budget on one metric: at most ``limit`` (``upper``), else at least."""

    metric: str
    limit: float
    upper: bool = True
    flag: str = "--constraint"  # the flag that set it

    @classmethod
    def parse(cls, text: str) -> Bound:
        """``p99_us<=500`` or ``ops_per_sec>=20000``; ValueError naming --constraint."""
        match = _BOUND.fullmatch(text)
        try:
            limit = float(match[3]) if match else math.nan
        except ValueError:
            limit = math.nan
        if match is None or not math.isfinite(limit):
            raise ValueError(f"--constraint: {text!r} is not METRIC<=NUMBER or METRIC>=NUMBER (e.g. p99_us<=500)")
        return cls(match[1], limit, match[2] == "<=")

    def excess(self, value: float) -> float:
        """How far ``value`` is past the bound (<= 0 when it holds)."""
        return value - self.limit if self.upper else self.limit - value

    def describe(self) -> str:
        return f"{self.metric} {'<=' if self.upper else '>='} {self.limit:g}"


@dataclass(frozen=True)
class Score:
    """Turns metrics into objective values and constraint values."""

    objective: str = "throughput"
    max_p99_us: float | None = None
    max_write_amp: float | None = None
    bounds: tuple[Bound, ...] = ()  # --constraint

    def __post_init__(self) -> None:
        if self.objective not in _TERMS and not _NAMED.fullmatch(self.objective):
            raise ValueError(f"--objective: {self.objective!r} is not throughput, multi, capacity or a metric the runs report: "
                             "METRIC, METRIC:max or METRIC:min (e.g. p99_us:min)")
        for name, value in (("--max-p99-us", self.max_p99_us), ("--max-write-amp", self.max_write_amp)):
            if value is not None and not value > 0:
                raise ValueError(f"{name}: must be > 0, got {value}")

    @property
    def terms(self) -> tuple[tuple[str, Direction], ...]:
        """(metric, direction) of each objective value."""
        if self.objective in _TERMS:
            return _TERMS[self.objective]
        match = _NAMED.fullmatch(self.objective)
        assert match is not None
        name, sense = match[1], match[2]
        sense_of: dict[str, Direction] = {"max": "maximize", "min": "minimize"}
        return ((name, sense_of[sense] if sense else sense_alone(name)),)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(m for m, _ in self.terms)

    @property
    def directions(self) -> list[Direction]:
        return [d for _, d in self.terms]

    @property
    def metric(self) -> str:
        """The metric gains are ratios of, and the re-validation chooses by: the first objective's."""
        return self.metrics[0]

    @property
    def maximize(self) -> bool:
        return self.directions[0] == "maximize"

    @property
    def labels(self) -> tuple[str, ...]:
        """Human names of the objective values, e.g. ("ops/s", "P99 us")."""
        return tuple(label(m) for m in self.metrics)

    @property
    def budgets(self) -> tuple[Bound, ...]:
        """Every budget, --max-p99-us and --max-write-amp first."""
        given = (("p99_us", self.max_p99_us, "--max-p99-us"), ("write_amp", self.max_write_amp, "--max-write-amp"))
        return (*(Bound(m, limit, flag=flag) for m, limit, flag in given if limit is not None), *self.bounds)

    @property
    def needed(self) -> tuple[str, ...]:
        """The metrics a run must report to be scored: the objective's, then the budgets'."""
        return tuple(dict.fromkeys([*self.metrics, *(b.metric for b in self.budgets)]))

    def flag_of(self, metric: str) -> str | None:
        """The flag that named ``metric`` for the score (None for the default objective's ops/s)."""
        if metric in self.metrics and self.objective not in _TERMS:
            return "--objective"
        return next((b.flag for b in self.budgets if b.metric == metric), None)

    @property
    def constrained(self) -> bool:
        return bool(self.budgets)

    def values(self, metrics: dict[str, float | None]) -> list[float]:
        return [self._need(metrics, m) for m in self.metrics]

    def constraints(self, metrics: dict[str, float | None]) -> list[float]:
        """One value per budget, <= 0 when the budget holds."""
        return [b.excess(self._need(metrics, b.metric)) for b in self.budgets]

    def describe(self) -> str:
        parts = [f"{d} {label(m)}" for m, d in self.terms]
        return ", ".join([*parts, *(b.describe() for b in self.budgets)])

    @staticmethod
    def _need(metrics: dict[str, float | None], name: str) -> float:
        value = metrics.get(name)
        if value is None:
            raise ScoreError(f"metric {name} is undefined for this run (e.g. no bytes written, no histogram)")
        return float(value)
