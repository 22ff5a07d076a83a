"""scikit-optimize behind Optuna's sampler interface (optuna-integration 5 no longer ships one).

For each trial a fresh ``skopt.Optimizer`` over every parameter the study has seen (conditional ones
included: where a trial did not use one, e.g. the zstd level of an lz4 trial, its lower bound stands
in) is told the finished trials and asked for one point:

- complete trials with their value; a pruned trial with an estimate of the value it would have had
  (its ``value_estimate`` attribute: with ``--fidelity``, its smaller run's ops/s scaled as the audited
  configurations scale to the full size) with that estimate;
- trials that failed or broke a constraint (outcome ``failed`` or ``rejected``), complete ones whose run
  cost more than rocksdb-default's beyond the cost guard (``over_cost``: they cannot be the answer, and
  a throughput search spends most of its trials there otherwise) and pruned ones without an estimate as
  the worst value seen, so the model steers away from them; trials
  interrupted (Ctrl-C, or stopped by a full disk or another environment fault), abandoned or lost
  to a dead worker are not taught (they say nothing of the configuration);
- trials still running (``--parallel``) as the mean of the values seen: a constant liar, so that
  several proposals at once do not coincide.

A proposal that repeats a configuration already told is replaced by a random one not yet told (if
one of 64 draws is): on integer and categorical options the GP's acquisition can settle on a corner of
the space (the default job of 2026-11-23 measured one configuration 10 times and another corner 4 times
in trials 74-92, all below the defaults). A configuration is what a trial ran, its active parameters:
a proposal of ``compression_type=none`` repeats a measured none trial whatever zstd level skopt put
beside it (the experiments of 2026-11-24 ran one such configuration 13 times in S3 and in S4).

skopt fits and asks with one BLAS thread: its matrices have a few hundred rows at most, and OpenBLAS's
default of a thread per core busy-waits beside whatever else runs (a db_bench trial under
``--parallel``, another search of the sampler benchmark). Measured 2026-11-25 on 2 cores, 40 trials of
the write-heavy sampler benchmark, the same proposals either way: alone, 12.4 s with a thread per core
(23.5 s of CPU) and 11.3 s with one; beside two other searches, 118 s and 11.5 s.

skopt cannot honour Optuna's constraints (``--max-p99-us``, ``--max-write-amp``): such studies are
refused it (tuner.samplers). Only skopt's GP and ET estimators are offered: its GBRT path breaks with
numpy >= 2.4 (``np.in1d`` is gone).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState
from threadpoolctl import threadpool_limits

from tuner.samplers._startup import LEARNED_FAILURES
from tuner.trials import TrialRecord

ESTIMATORS = ("GP", "ET")
RANDOM_TRIES = 64  # random points drawn to replace a proposal already measured (a small space may have none)


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
        self._estimator = base_estimator
        self._n_initial = n_initial_points
        self._acq_func = acq_func
        # Imported now, while the study is built, not at the first proposal in the middle of the trials:
        # a Ctrl-C that lands inside scipy's C extensions' import is an ImportError, not a KeyboardInterrupt.
        import skopt  # noqa: F401

    def reseed_rng(self) -> None:
        self._rng.seed()
        self._independent.reseed_rng()

    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        """Every parameter any finished trial used (the union, not the intersection)."""
        space: dict[str, BaseDistribution] = {}
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)):
            space.update(t.distributions)
        return {k: d for k, d in space.items() if not d.single()}

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        if len(study.directions) > 1:
            raise ValueError("the skopt sampler supports single-objective studies only")
        names = sorted(search_space)
        xs, ys, told = _observations(study, trial, search_space, names)
        with threadpool_limits(limits=1, user_api="blas"):
            return self._propose(search_space, names, xs, ys, told)

    def _propose(self, search_space: dict[str, BaseDistribution], names: list[str], xs: list[list[Any]],
                 ys: list[float], told: list[dict[str, Any]]) -> dict[str, Any]:
        """skopt's next point for the told trials; one already told is replaced by a random one."""
        import skopt

        optimizer = skopt.Optimizer(
            [_dimension(search_space[n]) for n in names],
            base_estimator=self._estimator,
            n_initial_points=self._n_initial,
            acq_func=self._acq_func,
            random_state=self._rng.randint(2**31 - 1),
        )
        if xs:
            optimizer.tell(xs, ys)
        def params(point: list[Any]) -> dict[str, Any]:
            return {n: _from_skopt(search_space[n], v) for n, v in zip(names, point)}

        proposal = params(optimizer.ask())
        if _repeats(proposal, told):  # measured already: a second run teaches the model little, so explore
            fresh = (params(p) for p in optimizer.space.rvs(n_samples=RANDOM_TRIES, random_state=self._rng))
            proposal = next((p for p in fresh if not _repeats(p, told)), proposal)
        return proposal

    def sample_independent(
        self, study: optuna.Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Any:
        return self._independent.sample_independent(study, trial, param_name, param_distribution)


def _observations(study: optuna.Study, current: FrozenTrial, space: dict[str, BaseDistribution],
                  names: list[str]) -> tuple[list[list[Any]], list[float], list[dict[str, Any]]]:
    """(points, values to minimize) to tell skopt, and the told trials' parameters: see the module's
    docstring."""
    sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
    xs, ys, bad, running, told = [], [], [], [], []
    for t in study.get_trials(deepcopy=False):
        point = _point(t.params, space, names)
        if point is None or t.number == current.number:
            continue
        record = TrialRecord.of(t)
        # a pruned trial's full-size value as estimated from a smaller run: learnt instead of "worse than all"
        estimate = record.value_estimate if t.state == TrialState.PRUNED else None
        if t.state == TrialState.COMPLETE and record.over_cost:  # it cannot be the answer: steer away
            bad.append(point)
        elif t.state == TrialState.COMPLETE and t.values and math.isfinite(t.values[0]):
            xs.append(point)
            ys.append(sign * t.values[0])
        elif isinstance(estimate, (int, float)) and math.isfinite(estimate):
            xs.append(point)
            ys.append(sign * estimate)
        elif t.state == TrialState.PRUNED or (t.state == TrialState.FAIL
                                                and (record.outcome or "failed") in LEARNED_FAILURES):
            bad.append(point)
        elif t.state == TrialState.RUNNING:
            running.append(point)
        else:
            continue
        told.append(t.params)
    if ys:
        worst, mean = max(ys), sum(ys) / len(ys)
        xs, ys = xs + bad + running, ys + [worst + abs(worst) * 0.1 + 1e-9] * len(bad) + [mean] * len(running)
    return xs, ys, told


def _repeats(proposal: dict[str, Any], told: list[dict[str, Any]]) -> bool:
    """Whether ``proposal`` runs a configuration already told: one that agrees with a told trial on
    every parameter that trial used. Which parameters are active follows from the values of those
    before them, so a parameter the told trial did not use (a zstd level beside ``none``) is inactive
    in the proposal too."""
    return any(all(k in proposal and proposal[k] == v for k, v in params.items()) for params in told)


def _point(params: dict[str, Any], space: dict[str, BaseDistribution], names: list[str]) -> list[Any] | None:
    """A trial's parameters as a skopt point; an unused (conditional) one at its lower bound."""
    point = []
    for n in names:
        d = space[n]
        if n not in params:
            point.append(d.low if isinstance(d, (IntDistribution, FloatDistribution)) else 0)
        elif _contains(d, params[n]):
            point.append(_to_skopt(d, params[n]))
        else:
            return None
    return point


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
