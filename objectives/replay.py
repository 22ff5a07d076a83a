"""A replay objective: answers from a table of recorded real db_bench measurements.

The table (``experiments/data/sampler-grid.json``, written by ``experiments/record_grid.py``) holds,
for every point of a small grid, the ops/s of each repeated real run. ``observe`` snaps a proposed
configuration to the nearest recorded point (per parameter, on a log scale where the parameter is
log-scaled) and returns one of its recorded runs at random, so a sampler meets the real noise;
``mean`` is the point's true value (the mean of its runs), used to score the sampler.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from search_spaces import SearchSpace

Point = tuple[Any, ...]


class ReplayError(ValueError):
    """The table does not cover the space it is asked about."""


@dataclass
class ReplayTable:
    space: SearchSpace
    names: tuple[str, ...]
    runs: dict[Point, list[float]]

    @classmethod
    def load(cls, path: Path, space: SearchSpace) -> ReplayTable:
        data = json.loads(Path(path).read_text())
        names = tuple(data["parameters"])
        missing = set(names) ^ {p.name for p in space.parameters}
        if missing:
            raise ReplayError(f"{path}: parameters {sorted(missing)} are not both in the table and the space")
        runs = {tuple(p["params"][n] for n in names): list(p["ops_per_sec"]) for p in data["points"] if p["ops_per_sec"]}
        if not runs:
            raise ReplayError(f"{path}: no recorded runs")
        return cls(space, names, runs)

    def snap(self, params: dict[str, Any]) -> Point:
        """The recorded point nearest to ``params``, parameter by parameter."""
        point = []
        for i, name in enumerate(self.names):
            values = sorted({p[i] for p in self.runs})
            where = math.log if getattr(self.space.parameter(name), "log", False) else float
            point.append(min(values, key=lambda v: abs(where(v) - where(params[name]))))
        key = tuple(point)
        if key not in self.runs:
            raise ReplayError(f"no recorded point {dict(zip(self.names, key))}")
        return key

    def observe(self, point: Point, rng: random.Random) -> float:
        return rng.choice(self.runs[point])

    def mean(self, point: Point) -> float:
        return sum(self.runs[point]) / len(self.runs[point])

    def optimum(self) -> float:
        return max(self.mean(p) for p in self.runs)

    def noise_cv(self) -> float:
        """Median coefficient of variation of the repeated runs of one point."""
        cvs = sorted(_cv(r) for r in self.runs.values() if len(r) > 1)
        return cvs[len(cvs) // 2] if cvs else 0.0


def _cv(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) / mean
