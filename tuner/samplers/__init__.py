"""Sampler construction by name: Optuna's samplers plus the scikit-optimize adapter; the
model-based ones behind one start-up (:mod:`._startup`). Its modules are private; what the engine,
the CLI and scripts use is here."""

from __future__ import annotations

import importlib.util
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import optuna
from optuna.exceptions import ExperimentalWarning
from optuna.trial import FrozenTrial, TrialState

from tuner.samplers._skopt_sampler import SkoptSampler
from tuner.samplers._startup import MODEL, Startup, startup_size

__all__ = ["KINDS", "RANKED", "SAMPLERS", "SamplerError", "SamplerKind", "Startup", "choose",
           "make_sampler", "provenance", "startup_size", "study_seed"]


class SamplerError(ValueError):
    """Unknown sampler, or one that cannot serve this study."""


class AskTellGridSampler(optuna.samplers.GridSampler):
    """Optuna's grid without its ``study.stop()`` at exhaustion (allowed only inside ``optimize()``);
    an ask/tell loop stops at the grid's size itself."""

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        pass


@dataclass(frozen=True)
class SamplerArgs:
    """What a study gives the sampler it builds."""

    seed: int | None
    directions: Sequence[str]
    grid: dict[str, list] | None
    constraints_func: Callable[[FrozenTrial], Sequence[float]] | None
    trials: int


@dataclass(frozen=True)
class SamplerKind:
    """A sampler ``--sampler`` offers by name, with what it can serve (as Optuna's samplers declare theirs)."""

    name: str
    build: Callable[[SamplerArgs], optuna.samplers.BaseSampler]
    multi_objective: bool  # serves several objectives
    constraints: bool  # serves budgets (--max-p99-us, --max-write-amp, --constraint): honours constraints_func
    model_based: bool  # proposes from a model after random initial points (tuner.samplers._startup)
    needs: tuple[str, str] | None = None  # (module, its name) that the default install leaves out


_STARTUP = 1  # the model's own start-up: Startup draws the random initial points


def _tpe(a: SamplerArgs) -> optuna.samplers.BaseSampler:
    return optuna.samplers.TPESampler(seed=a.seed, n_startup_trials=_STARTUP, multivariate=True, group=True,
                                      constant_liar=True, constraints_func=a.constraints_func)


def _gp(a: SamplerArgs) -> optuna.samplers.BaseSampler:
    return optuna.samplers.GPSampler(seed=a.seed, n_startup_trials=_STARTUP, constraints_func=a.constraints_func,
                                     warn_independent_sampling=False)


def _cmaes(a: SamplerArgs) -> optuna.samplers.BaseSampler:
    return optuna.samplers.CmaEsSampler(seed=a.seed, n_startup_trials=_STARTUP, warn_independent_sampling=False)


def _nsga2(a: SamplerArgs) -> optuna.samplers.BaseSampler:
    return optuna.samplers.NSGAIISampler(seed=a.seed, population_size=max(4, min(20, a.trials // 4)),
                                         constraints_func=a.constraints_func)


KINDS: dict[str, SamplerKind] = {k.name: k for k in (
    SamplerKind("tpe", _tpe, multi_objective=True, constraints=True, model_based=True),
    SamplerKind("gp", _gp, multi_objective=True, constraints=True, model_based=True, needs=("torch", "PyTorch")),
    SamplerKind("cmaes", _cmaes, multi_objective=False, constraints=False, model_based=True),
    SamplerKind("random", lambda a: optuna.samplers.RandomSampler(seed=a.seed), multi_objective=True,
                constraints=True, model_based=False),
    SamplerKind("grid", lambda a: AskTellGridSampler(a.grid or {}, seed=a.seed), multi_objective=True,
                constraints=True, model_based=False),
    SamplerKind("nsga2", _nsga2, multi_objective=True, constraints=True, model_based=False),
    SamplerKind("skopt", lambda a: SkoptSampler(seed=a.seed, n_initial_points=_STARTUP), multi_objective=False,
                constraints=False, model_based=True),
)}
SAMPLERS = ("auto", *KINDS)
# Best first on the sampler benchmark (experiments/sampler_benchmark/results/sampler-benchmark.json, docs/search.md "Which
# sampler"): median regret averaged over its recorded workloads and budgets (10 to 80 trials), among the
# default install's samplers (gp needs PyTorch). tests/test_efficiency.py holds it to that file.
RANKED = ("skopt", "tpe", "random", "cmaes")


def choose(name: str, *, multi_objective: bool, constrained: bool) -> str:
    """The sampler ``auto`` stands for: the best of ``RANKED`` that can serve the study (skopt and
    CMA-ES cannot honour budgets: --max-p99-us, --max-write-amp, --constraint); TPE for several
    objectives, which the benchmark does not cover."""
    if name != "auto":
        return name
    if multi_objective:
        return "tpe"
    return next(n for n in RANKED if KINDS[n].constraints or not constrained)


def make_sampler(
    name: str,
    *,
    seed: int | None,
    directions: Sequence[str],
    grid: dict[str, list] | None = None,
    constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    trials: int = 50,
) -> optuna.samplers.BaseSampler:
    """The sampler called ``name``, refused with one line where it cannot serve the study;
    ``constraints_func`` is passed to those that support it. A model-based one proposes after a
    start-up sized to ``trials`` (:class:`._startup.Startup`)."""
    kind = KINDS.get(name)
    if kind is None:
        raise SamplerError(f"--sampler: unknown {name!r} (choose from {', '.join(SAMPLERS)})")
    if len(directions) > 1 and not kind.multi_objective:
        serve = ", ".join(k.name for k in KINDS.values() if k.multi_objective and k.name != "grid")
        raise SamplerError(f"--sampler {name} supports single-objective studies only; use {serve}")
    if constraints_func is not None and not kind.constraints:
        serve = ", ".join(k.name for k in KINDS.values() if k.constraints)
        raise SamplerError(f"--sampler {name} cannot honour --max-p99-us, --max-write-amp or --constraint (it has "
                           f"no constraint handling); use {serve}")
    if kind.needs is not None and importlib.util.find_spec(kind.needs[0]) is None:
        raise SamplerError(f"--sampler {name} needs {kind.needs[1]}, which the default install leaves out: "
                           "pip install 'rocksdb-tuner[gp]' (or make EXTRAS=gp,test)")
    with warnings.catch_warnings():  # TPE's multivariate/group and constraints are "experimental" in Optuna
        warnings.simplefilter("ignore", ExperimentalWarning)
        # Optuna 5 deprecates constraints_func for Trial.set_constraint, to be removed in 7 (setup.cfg: optuna<7)
        warnings.filterwarnings("ignore", message="`constraints_func` has been deprecated", category=FutureWarning)
        sampler = kind.build(SamplerArgs(seed, directions, grid, constraints_func, trials))
    return Startup(sampler, startup_size(trials), seed) if kind.model_based else sampler


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
