"""The start-up every model-based sampler shares: random initial points until the study holds
``size`` trials that ran, then the model's proposals.

The starts (db_bench's defaults, benchmark.sh, hand-found configurations), warm starts and trials
copied from an earlier study count among those ``size`` trials, so random points fill only what
they leave. ``size`` follows the trials a study is expected to run (:func:`startup_size`): with
``--budget`` that is known only after the baselines (the engine sets it then), so a 6-trial budget
does not spend itself on 10 random points. Trials still running count, so that parallel slots do
not draw more random points than the start-up holds.

The start-up counts in the unit ``--trials`` does (:func:`fills_startup`): a proposal rejected for
breaking a constraint never ran, and the nearest feasible configuration the engine runs in its place
fills its place. Counting both made the start-up depend on where a rejection fell: a rejected random
point took a place and its neighbour another (one configuration fewer ran), but when the last one was
rejected its neighbour ran after the start-up was full (one trial more before the model). The
models still learn from a rejected proposal (as bad: ``LEARNED_FAILURES``).

Each proposal's provenance is kept: ``random initial point`` or ``model proposal`` (see
:meth:`Startup.provenance`).
"""

from __future__ import annotations

from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial, TrialState

from tuner.trials import TrialRecord

RANDOM = "random initial point"
MODEL = "model proposal"
# Failed outcomes the models learn from (as bad); interrupted ones say nothing of the configuration.
LEARNED_FAILURES = ("failed", "rejected")


def startup_size(expected_trials: int) -> int:
    """Trials before the model proposes: a quarter of those expected, at least 3, at most 10."""
    return max(3, min(10, expected_trials // 4))


def fills_startup(trial: FrozenTrial) -> bool:
    """Whether this trial fills a place of the start-up: it ran (measured, pruned or failed, as
    ``--trials`` counts it) or runs, or was copied from an earlier study; not a proposal rejected for
    breaking a constraint (its neighbour runs in its place), nor one interrupted by the user or the
    machine."""
    if trial.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING):
        return True
    return trial.state == TrialState.FAIL and (TrialRecord.of(trial).outcome or "failed") == "failed"


class Startup(optuna.samplers.BaseSampler):
    """``model`` behind random initial points (drawn from ``seed``) until ``size`` trials fill the start-up."""

    def __init__(self, model: optuna.samplers.BaseSampler, size: int, seed: int | None = None) -> None:
        self.model, self.size = model, size
        self._random = optuna.samplers.RandomSampler(seed=seed)
        self._origin: dict[int, str] = {}

    def provenance(self, number: int) -> str | None:
        """How trial ``number``'s configuration was chosen, when this sampler chose it."""
        return self._origin.get(number)

    def _random_now(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        if trial.number not in self._origin:
            others = [t for t in study.get_trials(deepcopy=False) if t.number != trial.number]
            self._origin[trial.number] = RANDOM if sum(map(fills_startup, others)) < self.size else MODEL
        return self._origin[trial.number] == RANDOM

    def reseed_rng(self) -> None:
        self._random.reseed_rng()
        self.model.reseed_rng()

    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        if self._random_now(study, trial):
            return {}
        return self.model.infer_relative_search_space(study, trial)

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        if self._random_now(study, trial):
            return {}
        return self.model.sample_relative(study, trial, search_space)

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        source = self._random if self._random_now(study, trial) else self.model
        return source.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self.model.before_trial(study, trial)

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState,
                    values: Any) -> None:
        self.model.after_trial(study, trial, state, values)
