"""scikit-optimize behind Optuna's sampler interface (optuna-integration 5 no longer ships one).

For each trial a fresh ``skopt.Optimizer`` over the parameters every finished trial shares (the
intersection search space) is told all finished trials and asked for one point. Failed or rejected
trials are told as the worst value seen, so the model steers away from them. Conditional
parameters outside that space are sampled independently. Only skopt's GP and ET estimators are
offered: its GBRT path breaks with numpy >= 2.4 (``np.in1d`` is gone).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.search_space import IntersectionSearchSpace
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

ESTIMATORS = ("GP", "ET")


class SkoptSampler(optuna.samplers.BaseSampler):
    def __init__(
        self,
        seed: int | None = None,
        base_estimator: str = "GP",
        n_initial_points: int = 10,
        acq_func: str = "gp_hedge",
    ) -> None:
        if base_estimator not in ESTIMATORS:
            raise ValueError(f"skopt base_estimator must be one of {ESTIMATORS}, got {base_estimator!r}")
        self._rng = np.random.RandomState(seed)
        self._independent = optuna.samplers.RandomSampler(seed=seed)
        self._search_space = IntersectionSearchSpace()
        self._estimator = base_estimator
        self._n_initial = n_initial_points
        self._acq_func = acq_func

    def reseed_rng(self) -> None:
        self._rng.seed()
        self._independent.reseed_rng()

    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        space = self._search_space.calculate(study)
        return {k: d for k, d in space.items() if not d.single()}

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        if len(study.directions) > 1:
            raise ValueError("the skopt sampler supports single-objective studies only")
        import skopt

        names = sorted(search_space)
        dims = [_dimension(search_space[n]) for n in names]
        sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
        xs, ys, bad = [], [], []
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)):
            if not all(n in t.params and _contains(search_space[n], t.params[n]) for n in names):
                continue
            point = [_to_skopt(search_space[n], t.params[n]) for n in names]
            if t.state == TrialState.COMPLETE and t.values and math.isfinite(t.values[0]):
                xs.append(point)
                ys.append(sign * t.values[0])
            else:
                bad.append(point)
        if bad and ys:
            worst = max(ys)
            xs += bad
            ys += [worst + abs(worst) * 0.1 + 1e-9] * len(bad)
        optimizer = skopt.Optimizer(
            dims,
            base_estimator=self._estimator,
            n_initial_points=self._n_initial,
            acq_func=self._acq_func,
            random_state=self._rng.randint(2**31 - 1),
        )
        if xs:
            optimizer.tell(xs, ys)
        point = optimizer.ask()
        return {n: _from_skopt(search_space[n], v) for n, v in zip(names, point)}

    def sample_independent(
        self, study: optuna.Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        return self._independent.sample_independent(study, trial, param_name, param_distribution)


def _contains(d: BaseDistribution, value: Any) -> bool:
    if isinstance(d, CategoricalDistribution):
        return value in d.choices
    if isinstance(d, (IntDistribution, FloatDistribution)):
        return isinstance(value, (int, float)) and d.low <= value <= d.high
    return False


def _dimension(d: BaseDistribution) -> Any:
    import skopt.space as sp

    if isinstance(d, IntDistribution):
        return sp.Integer(d.low, d.high, prior="log-uniform" if d.log else "uniform")
    if isinstance(d, FloatDistribution):
        return sp.Real(d.low, d.high, prior="log-uniform" if d.log else "uniform")
    if isinstance(d, CategoricalDistribution):
        return sp.Categorical(list(range(len(d.choices))))
    raise ValueError(f"unsupported distribution {d}")


def _to_skopt(d: BaseDistribution, value: Any) -> Any:
    return d.choices.index(value) if isinstance(d, CategoricalDistribution) else value


def _from_skopt(d: BaseDistribution, value: Any) -> Any:
    if isinstance(d, CategoricalDistribution):
        return d.choices[int(value)]
    if isinstance(d, IntDistribution):
        return int(value)
    return float(value)
