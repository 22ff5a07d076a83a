"""Fidelity that knows when small runs lie: with --fidelity, configurations climb rungs (fractions of
the data size) under successive halving, and the rank agreement between each smaller rung and the
full size, measured within the study, decides where new configurations start.

At a rung, a configuration goes on when its throughput is among the best third of all measured
there (the best alone while fewer than three were), the rule of Optuna's SuccessiveHalvingPruner
with reduction factor 3; it is applied here because the rung a configuration starts at can change
during the study, which Optuna's pruner, counting rungs from a trial's first report, cannot follow.

The first AUDITED configurations climb every rung unpruned (an unbiased sample: successive halving
would otherwise show the full size only the configurations the small rung already liked). Once they
are measured, each lower rung's throughput is ranked against the full size's (Kendall's tau): a rung
agrees when tau >= AGREEMENT. The search then starts new configurations at the lowest rung from which
every rung agrees, and at the full size when none does: a small rung that disagrees would prune the
configurations that win at the size the answer is for.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from optuna.trial import FrozenTrial, TrialState

from tuner.stats import kendall
from tuner.summary import FidelityAgreement, RungAgreement
from tuner.trials import TrialRecord

# Successive halving keeps the best 1/REDUCTION of the configurations measured at a rung.
REDUCTION = 3
# Configurations that climb every rung unpruned before the agreement is judged.
AUDITED = 6
# Kendall's tau at or above which a rung ranks configurations as the full size does. Successive
# halving keeps a third at each rung; at tau 0.6 the full size's best is usually among them.
AGREEMENT = 0.6


def promoted(value: float, rivals: Sequence[float]) -> bool:
    """Whether ``value`` (ops/s at a rung) is among the best 1/REDUCTION of it and its ``rivals`` there
    (the best alone while they are fewer than REDUCTION)."""
    ranked = sorted([*rivals, value], reverse=True)
    return value >= ranked[max(1, len(ranked) // REDUCTION) - 1]


def rivals(trials: Sequence[FrozenTrial], rung: int, number: int) -> list[float]:
    """The ops/s every other configuration measured at ``rung``."""
    records = [TrialRecord.of(t) for t in trials if t.number != number]
    return [ops for r in records if rung in r.rungs and (ops := r.rungs[rung].ops_per_sec) is not None]


def audited(trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
    """The audit configurations measured at the full size."""
    return [t for t in trials if TrialRecord.of(t).audit and t.state == TrialState.COMPLETE]


def auditing(trials: Sequence[FrozenTrial]) -> int:
    """Audit configurations measured or still climbing (failed and interrupted ones do not count)."""
    return sum(1 for t in trials if TrialRecord.of(t).audit and t.state in (TrialState.COMPLETE, TrialState.RUNNING))


def agreement(pairs: Sequence[Sequence[tuple[float, float]]], scales: Sequence[float]) -> FidelityAgreement:
    """Each lower rung's rank agreement with the full size and the rung new configurations start at
    (which trials were audited left out: :func:`judge` adds them).

    ``pairs[k]``: (rung k's ops/s, the full size's ops/s) of each audited configuration."""
    rungs, start = [], 0
    for k, (scale, rung) in enumerate(zip(scales, pairs)):
        small, full = [p[0] for p in rung], [p[1] for p in rung]
        tau, p = kendall(small, full) if len(rung) >= 3 else (math.nan, math.nan)
        agrees = bool(tau >= AGREEMENT)  # NaN (too few, or all tied): no evidence of agreement
        rungs.append(RungAgreement(scale=scale, n=len(rung), kendall_tau=None if math.isnan(tau) else float(tau),
                                   p_value=None if math.isnan(p) else float(p), agrees=agrees))
        if not agrees:
            start = k + 1  # every rung from the start up agrees with the full size
    return FidelityAgreement.from_dict({"rungs": rungs, "threshold": AGREEMENT, "start_rung": start,
                                        "start_scale": scales[start] if start < len(scales) else 1.0}, "agreement")


def audit_pairs(trials: Sequence[FrozenTrial], rung: int) -> list[tuple[float, float]]:
    """(ops/s at ``rung``, ops/s at the full size) of each audited configuration measured at both."""
    records = [TrialRecord.of(t) for t in audited(trials)]
    return [(ops, (r.metrics or {})["ops_per_sec"]) for r in records
            if rung in r.rungs and (ops := r.rungs[rung].ops_per_sec) is not None]


def judge(trials: Sequence[FrozenTrial], scales: Sequence[float]) -> FidelityAgreement:
    """The agreement of the audited configurations (rung k's ops/s from its ``rung_k`` attribute, the
    full size's from its value)."""
    pairs = [audit_pairs(trials, k) for k in range(len(scales))]
    return agreement(pairs, scales).updated(audited=[t.number for t in audited(trials)])


def full_size_estimate(value: float, pairs: Sequence[tuple[float, float]]) -> float | None:
    """What a configuration measured ``value`` ops/s at a rung would run at the full size: ``value``
    times the median full-size / rung ratio of the audited configurations there (``pairs``); None
    without any. Successive halving prunes a configuration whose rung ranks it low; this estimate lets
    the model learn how low, rather than only that it was pruned."""
    ratios = [full / small for small, full in pairs if small > 0]
    return value * statistics.median(ratios) if ratios and value > 0 else None


def describe(decided: FidelityAgreement) -> str:
    """One line: each rung's agreement and where the search goes on."""
    parts = [f"scale {r.scale:g}: tau {r.kendall_tau:.2f}" if r.kendall_tau is not None else
             f"scale {r.scale:g}: tau n/a" for r in decided.rungs]
    n = len(decided.audited)
    where = ("keeps every rung" if decided.start_rung == 0 else
             f"starts new configurations at scale {decided.start_scale:g}" if decided.start_scale < 1 else
             "moves to the full size (no smaller rung ranks as it does)")
    return (f"rank agreement with the full size over {n} configurations run at every rung ({', '.join(parts)}; "
            f"agrees at tau >= {AGREEMENT:g}): the search {where}")
