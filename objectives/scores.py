"""Scores: what the optimizer sees of a trial's metrics, and the budgets it must respect.

``throughput`` maximizes ops/s of the scored phases. ``multi`` is a Pareto study over
(ops/s up, P99 down, write amplification down). Budgets (``max_p99_us``, ``max_write_amp``) are
Optuna constraints: a value <= 0 means satisfied; they are never folded into the score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["maximize", "minimize"]  # an objective value's, as Optuna takes it
OBJECTIVES = ("throughput", "multi")
_TERMS: dict[str, tuple[tuple[str, Direction], ...]] = {
    "throughput": (("ops_per_sec", "maximize"),),
    "multi": (("ops_per_sec", "maximize"), ("p99_us", "minimize"), ("write_amp", "minimize")),
}
_UNITS = {"ops_per_sec": "ops/s", "p99_us": "P99 us", "write_amp": "write amp"}


class ScoreError(ValueError):
    """A metric the score needs is missing from a run."""


@dataclass(frozen=True)
class Score:
    """Turns metrics into objective values and constraint values."""

    objective: str = "throughput"
    max_p99_us: float | None = None
    max_write_amp: float | None = None

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"--objective: unknown {self.objective!r} (choose from {', '.join(OBJECTIVES)})")
        for name, value in (("--max-p99-us", self.max_p99_us), ("--max-write-amp", self.max_write_amp)):
            if value is not None and not value > 0:
                raise ValueError(f"{name}: must be > 0, got {value}")

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(m for m, _ in _TERMS[self.objective])

    @property
    def directions(self) -> list[Direction]:
        return [d for _, d in _TERMS[self.objective]]

    @property
    def labels(self) -> tuple[str, ...]:
        """Human names of the objective values, e.g. ("ops/s", "P99 us")."""
        return tuple(_UNITS[m] for m in self.metrics)

    @property
    def needed(self) -> tuple[str, ...]:
        """The metrics a run must report to be scored: the objective's, then the budgets'."""
        budgets = (("p99_us", self.max_p99_us), ("write_amp", self.max_write_amp))
        return tuple(dict.fromkeys([*self.metrics, *(m for m, limit in budgets if limit is not None)]))

    @property
    def constrained(self) -> bool:
        return self.max_p99_us is not None or self.max_write_amp is not None

    def values(self, metrics: dict[str, float | None]) -> list[float]:
        return [self._need(metrics, m) for m in self.metrics]

    def constraints(self, metrics: dict[str, float | None]) -> list[float]:
        """One value per budget, <= 0 when the budget holds."""
        out = []
        if self.max_p99_us is not None:
            out.append(self._need(metrics, "p99_us") - self.max_p99_us)
        if self.max_write_amp is not None:
            out.append(self._need(metrics, "write_amp") - self.max_write_amp)
        return out

    def describe(self) -> str:
        parts = [f"{d} {_UNITS[m]}" for m, d in _TERMS[self.objective]]
        if self.max_p99_us is not None:
            parts.append(f"P99 <= {self.max_p99_us:g} us")
        if self.max_write_amp is not None:
            parts.append(f"write amp <= {self.max_write_amp:g}")
        return ", ".join(parts)

    @staticmethod
    def _need(metrics: dict[str, float | None], name: str) -> float:
        value = metrics.get(name)
        if value is None:
            raise ScoreError(f"metric {name} is undefined for this run (e.g. no bytes written, no histogram)")
        return float(value)
