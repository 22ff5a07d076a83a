"""Pruners by name. Trials report their throughput so far once per second of the scored phases
(db_bench's --report_file); a pruner stops clearly hopeless ones early."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import optuna


class PrunerError(ValueError):
    """Unknown pruner, or one that cannot serve this study."""


@dataclass(frozen=True)
class PrunerKind:
    """A pruner ``--pruner`` offers by name, built from the second it may prune from, with what it can serve."""

    name: str
    build: Callable[[int], optuna.pruners.BasePruner]
    multi_objective: bool  # Optuna prunes single-objective studies only


KINDS: dict[str, PrunerKind] = {k.name: k for k in (
    PrunerKind("none", lambda warmup: optuna.pruners.NopPruner(), multi_objective=True),
    # stop a trial whose throughput so far is below the median of earlier trials at the same second, after
    # 5 complete trials
    PrunerKind("median", lambda warmup: optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=warmup),
               multi_objective=False),
    # successive halving over seconds of the run
    PrunerKind("hyperband", lambda warmup: optuna.pruners.HyperbandPruner(min_resource=max(1, warmup),
                                                                         reduction_factor=3),
               multi_objective=False),
)}
PRUNERS = tuple(KINDS)


def make_pruner(name: str, directions: Sequence[str], warmup: int = 4) -> optuna.pruners.BasePruner:
    """The pruner called ``name``, pruning from second ``warmup`` of the scored phases on; refused with
    one line where it cannot serve the study."""
    kind = KINDS.get(name)
    if kind is None:
        raise PrunerError(f"--pruner: unknown {name!r} (choose from {', '.join(PRUNERS)})")
    if len(directions) > 1 and not kind.multi_objective:
        raise PrunerError("--pruner: Optuna cannot prune multi-objective studies; use --objective throughput "
                          "or --pruner none")
    return kind.build(warmup)
