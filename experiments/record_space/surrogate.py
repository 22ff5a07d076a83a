"""A surrogate benchmark fitted on real db_bench runs, as HPOBench and YAHPO Gym build theirs.

experiments/record_space/record_space.py measured a few hundred random configurations of the default space
(twice each, hours apart). A forest of extremely randomized trees (scikit-learn) learns log ops/s
from a configuration's features over every recorded run; the noise is the pooled spread of the
repeats of one configuration (in log space). A sampler's proposal is answered with the forest's
prediction plus noise of that size, so samplers meet a landscape shaped like the real one, and the
real noise, without a db_bench run per proposal. How far to trust it is measured: the rank
correlation of its predictions with held-out configurations' measured means (k-fold, by
configuration).
"""

from __future__ import annotations

import json
import math
import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau, spearmanr
from sklearn.ensemble import ExtraTreesRegressor

from objectives.workloads import load_workload
from search_spaces import Context, SearchSpace, load_space
from search_spaces.parameters import CategoricalParam

DATA = Path(__file__).with_name("results")  # record_space.py's recordings


def load_recording(name: str, data: Path = DATA) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, runs) of <data>/<name>.json and .jsonl (runs that failed left out)."""
    header = json.loads((data / f"{name}.json").read_text())
    runs = [r for r in map(json.loads, (data / f"{name}.jsonl").read_text().splitlines()) if "metrics" in r]
    return header, runs


SPACE = Path(__file__).with_name("space.toml")  # the default space as the recordings were made in it


def space_of(header: dict[str, Any]) -> SearchSpace:
    """The recordings' space (:data:`SPACE`) as the recording resolved it (its full data size, its memory budget)."""
    spec = {"write": "fillrandom", "read": "reads-beyond-memory"}[header["workload"]]
    scale = header.get("scale", 1.0)
    workload = load_workload(spec).resolve(scale, Context.of_host())
    host = Context.of_host()
    budget = header.get("memory_budget_bytes") or host.ram // 4
    return load_space(SPACE).resolve(Context(cores=host.cores, ram=host.ram, data=workload.data_bytes(),
                                                 scale=scale, budget=budget))


def features(space: SearchSpace, params: dict[str, Any]) -> list[float]:
    """Numbers in [0, 1] per parameter (log-scaled where the space is), one-hot choices; an inactive
    conditional parameter is -1."""
    out: list[float] = []
    for p in space.parameters:
        value = params.get(p.name)
        if isinstance(p, CategoricalParam):
            out += [1.0 if value == c else 0.0 for c in p.choices]
        elif value is None:
            out.append(-1.0)
        else:
            out.append(p.position(value))
    return out


@dataclass
class Surrogate:
    """log ops/s = forest(features) + noise."""

    space: SearchSpace
    noise: float  # standard deviation of log ops/s between repeats of one configuration
    model: ExtraTreesRegressor

    @classmethod
    def fit(cls, space: SearchSpace, runs: list[dict[str, Any]], params: dict[str, dict[str, Any]],
            seed: int = 0) -> Surrogate:
        x = np.array([features(space, params[r["config"]]) for r in runs])
        y = np.array([math.log(r["metrics"]["ops_per_sec"]) for r in runs])
        model = ExtraTreesRegressor(n_estimators=300, min_samples_leaf=2, random_state=seed, n_jobs=1).fit(x, y)
        return cls(space, pooled_noise(runs), model)

    def mean(self, params: dict[str, Any]) -> float:
        """Predicted ops/s (no noise)."""
        return math.exp(float(self.model.predict(np.array([features(self.space, params)]))[0]))

    def observe(self, params: dict[str, Any], rng: random.Random) -> float:
        """One simulated run: the prediction with the measured noise."""
        return self.mean(params) * math.exp(rng.gauss(0.0, self.noise))


def pooled_noise(runs: list[dict[str, Any]]) -> float:
    """The standard deviation of log ops/s between repeats of one configuration, pooled."""
    by_config: dict[str, list[float]] = {}
    for r in runs:
        by_config.setdefault(r["config"], []).append(math.log(r["metrics"]["ops_per_sec"]))
    within = [statistics.variance(v) for v in by_config.values() if len(v) > 1]
    return math.sqrt(statistics.fmean(within)) if within else 0.0


def validate(space: SearchSpace, runs: list[dict[str, Any]], params: dict[str, dict[str, Any]], folds: int = 5,
             seed: int = 0) -> dict[str, float]:
    """k-fold by configuration: rank correlation of predictions with held-out measured means."""
    names = sorted({r["config"] for r in runs})
    random.Random(seed).shuffle(names)
    predicted, measured = [], []
    for k in range(folds):
        held = set(names[k::folds])
        model = Surrogate.fit(space, [r for r in runs if r["config"] not in held], params, seed)
        for name in sorted(held):
            ops = [r["metrics"]["ops_per_sec"] for r in runs if r["config"] == name]
            predicted.append(model.mean(params[name]))
            measured.append(statistics.fmean(ops))
    return {"spearman": float(spearmanr(predicted, measured).statistic),
            "kendall": float(kendalltau(predicted, measured).statistic), "configurations": len(names),
            "folds": folds}


def optimum(surrogate: Surrogate, samples: int = 20000, seed: int = 0) -> tuple[float, dict[str, Any]]:
    """The best predicted ops/s over many random feasible configurations (and its configuration)."""
    rng = random.Random(seed)
    batch: list[dict[str, Any]] = []
    while len(batch) < samples:
        params = surrogate.space.sample(rng)
        if not surrogate.space.violations(params):
            batch.append(params)
    predictions = surrogate.model.predict(np.array([features(surrogate.space, p) for p in batch]))
    i = int(np.argmax(predictions))
    return math.exp(float(predictions[i])), batch[i]
