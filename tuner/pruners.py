"""Pruner construction by name. Trials report their throughput so far once per second of the
scored phases (db_bench's --report_file); a pruner stops clearly hopeless ones early."""

from __future__ import annotations

from collections.abc import Sequence

import optuna

PRUNERS = ("none", "median", "hyperband")


class PrunerError(ValueError):
    """Unknown pruner, or one that cannot serve this study."""


def make_pruner(name: str, directions: Sequence[str], warmup: int = 4) -> optuna.pruners.BasePruner:
    """``median``: stop a trial whose throughput so far is below the median of earlier trials at the
    same second (after 5 complete trials; from second ``warmup`` on); ``hyperband``: successive
    halving over seconds of the run, starting at ``warmup`` seconds; ``none``: run every trial to the end."""
    if name not in PRUNERS:
        raise PrunerError(f"--pruner: unknown {name!r} (choose from {', '.join(PRUNERS)})")
    if name != "none" and len(directions) > 1:
        raise PrunerError("--pruner: Optuna cannot prune multi-objective studies; use --objective throughput "
                          "or --pruner none")
    if name == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=warmup)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=max(1, warmup), reduction_factor=3)
    return optuna.pruners.NopPruner()
