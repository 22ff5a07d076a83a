"""Sampler construction by name: Optuna's samplers plus the scikit-optimize adapter; the
model-based ones behind one start-up (:mod:`._startup`). Its modules are private; what the engine,
the CLI and scripts use is here."""

from __future__ import annotations

import importlib.util
import warnings
import zlib
from collections.abc import Callable, Sequence

import optuna
from optuna.exceptions import ExperimentalWarning
from optuna.trial import FrozenTrial, TrialState

from tuner.samplers._skopt_sampler import SkoptSampler
from tuner.samplers._startup import MODEL, VALUE_ESTIMATE, Startup, startup_size

SAMPLERS = ("auto", "tpe", "gp", "cmaes", "random", "grid", "nsga2", "skopt")
SINGLE_OBJECTIVE_ONLY = ("cmaes", "skopt")
UNCONSTRAINED_ONLY = ("cmaes", "skopt")  # model-based samplers that would ignore Optuna's constraints_func
# Best first on the sampler benchmark (experiments/results/sampler-benchmark.json, README "Which
# sampler"): median regret averaged over its recorded workloads and budgets (10 to 80 trials), among the
# default install's samplers (gp needs PyTorch). tests/test_efficiency.py holds it to that file.
RANKED = ("skopt", "tpe", "random", "cmaes")
WITH_STARTUP = ("tpe", "gp", "cmaes", "skopt")  # model-based: random initial points first (tuner.samplers._startup)

__all__ = ["RANKED", "SAMPLERS", "UNCONSTRAINED_ONLY", "VALUE_ESTIMATE", "SamplerError", "Startup", "choose",
           "make_sampler", "provenance", "startup_size", "study_seed"]


class SamplerError(ValueError):
    """Unknown sampler, or one that cannot serve this study."""


class AskTellGridSampler(optuna.samplers.GridSampler):
    """Optuna's grid without its ``study.stop()`` at exhaustion (allowed only inside ``optimize()``);
    an ask/tell loop stops at the grid's size itself."""

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        pass


def choose(name: str, *, multi_objective: bool, constrained: bool) -> str:
    """The sampler ``auto`` stands for: the best of ``RANKED`` that can serve the study (skopt and
    CMA-ES cannot honour --max-p99-us / --max-write-amp); TPE for several objectives, which the
    benchmark does not cover."""
    if name != "auto":
        return name
    if multi_objective:
        return "tpe"
    return next(n for n in RANKED if not (constrained and n in UNCONSTRAINED_ONLY))


def make_sampler(
    name: str,
    *,
    seed: int | None,
    directions: Sequence[str],
    grid: dict[str, list] | None = None,
    constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    trials: int = 50,
) -> optuna.samplers.BaseSampler:
    """The sampler called ``name``; ``constraints_func`` is passed to those that support it. A
    model-based one proposes after a start-up sized to ``trials`` (:class:`._startup.Startup`)."""
    with warnings.catch_warnings():  # TPE's multivariate/group and constraints are "experimental" in Optuna
        warnings.simplefilter("ignore", ExperimentalWarning)
        sampler = _make(name, seed, directions, grid, constraints_func, trials)
    return Startup(sampler, startup_size(trials), seed) if name in WITH_STARTUP else sampler


def study_seed(seed: int | None, measures: str) -> int | None:
    """The samplers' seed of a study: ``--seed`` mixed with what the study measures (its workload,
    space, objective and size), so that studies of other workloads or spaces with one ``--seed`` draw
    different random points, and one command (or a resumed study) draws the same."""
    return None if seed is None else zlib.crc32(f"{measures}\0{seed}".encode())


def provenance(sampler: optuna.samplers.BaseSampler, name: str, number: int) -> str:
    """How the sampler ``name`` chose trial ``number``'s configuration."""
    if isinstance(sampler, Startup):
        return sampler.provenance(number) or MODEL
    return {"random": "random point", "grid": "grid point"}.get(name, f"{name} proposal")


def _make(
    name: str,
    seed: int | None,
    directions: Sequence[str],
    grid: dict[str, list] | None,
    constraints_func: Callable[[FrozenTrial], Sequence[float]] | None,
    trials: int,
) -> optuna.samplers.BaseSampler:
    if name not in SAMPLERS:
        raise SamplerError(f"--sampler: unknown {name!r} (choose from {', '.join(SAMPLERS)})")
    if len(directions) > 1 and name in SINGLE_OBJECTIVE_ONLY:
        raise SamplerError(f"--sampler {name} supports single-objective studies only; use tpe, nsga2, gp or random")
    if constraints_func is not None and name in UNCONSTRAINED_ONLY:
        raise SamplerError(f"--sampler {name} cannot honour --max-p99-us / --max-write-amp (it has no constraint "
                           "handling); use tpe, gp or nsga2")
    startup = 1  # the model's own: Startup draws the random initial points
    if name == "tpe":
        return optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=startup, multivariate=True, group=True,
            constant_liar=True, constraints_func=constraints_func,
        )
    if name == "gp":
        if importlib.util.find_spec("torch") is None:  # Optuna's GPSampler needs it
            raise SamplerError("--sampler gp needs PyTorch, which the default install leaves out: "
                               "pip install 'rocksdb-tuner[gp]' (or make EXTRAS=gp,test)")
        return optuna.samplers.GPSampler(
            seed=seed, n_startup_trials=startup, constraints_func=constraints_func, warn_independent_sampling=False
        )
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=startup, warn_independent_sampling=False)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":
        return AskTellGridSampler(grid or {}, seed=seed)
    if name == "nsga2":
        population = max(4, min(20, trials // 4))
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=population, constraints_func=constraints_func)
    return SkoptSampler(seed=seed, n_initial_points=startup)
