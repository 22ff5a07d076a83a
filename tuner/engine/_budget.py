"""A study's budget in machine time: db_bench wall time of baselines, trials (every rung and repeat)
and re-validation together. The search stops starting trials when the next one and the
re-validation it still owes would not fit. The re-validation is sized in proportion: while choosing
among the top K and measuring the gain would take more than ``SHARE`` of the budget, fewer finalists
are chosen among (down to the best trial alone, whose gain paired rounds still measure afresh); the
ablation (the measured "why") is reserved for only while the whole re-validation fits ``SHARE``, so
that a small budget goes to the search and to an honest gain first; at the end it runs if it still fits.
The search also keeps ``SPARE_RUNS`` typical runs spare: a last trial slower than the median must not
push the reserved re-validation out (the default job of 2026-11-25 lost its ablation by 6 s after a
16 s last trial against a 10.8 s median, and 648 s of its budget went unspent)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import NamedTuple

from tuner.engine._plan import Plan
from tuner.model import StudySnapshot, measured_here

SHARE = 0.5  # the largest part of the budget reserved for the whole re-validation, ablation included
SPARE_RUNS = 1  # typical runs the search leaves unspent beside the reserve, for a slow last trial


class Usage(NamedTuple):
    """Machine seconds a study has spent (baselines, trials, stored re-validation); a trial's expected
    length: the median trial (a slow outlier, e.g. a zstd-19 start, must not starve the search), or
    before any the longest baseline; and a re-validation run's: the mean of that and the baselines'
    runs, since its rounds measure the baselines beside the finalists (the defaults often run longer
    than tuned trials: counting them at a trial's length overran a 600 s budget by 21 s)."""

    spent: float
    per_run: float
    revalidation_run: float


def usage(snapshot: StudySnapshot) -> Usage:
    """What a study has spent and how long its runs take."""
    trials = [t.user_attrs["seconds"] for t in measured_here(snapshot.trials) if "seconds" in t.user_attrs]
    baselines = [b["seconds"] for b in snapshot.baselines if b.get("seconds")]
    per_run = statistics.median(trials) if trials else max(baselines, default=0.0)
    return Usage(snapshot.machine_seconds()["total"], per_run,
                 statistics.mean([per_run, *baselines]) if per_run and baselines else per_run)


@dataclass(frozen=True)
class Budget:
    """``seconds`` of machine time for everything; None: no budget (--trials alone decides)."""

    seconds: float | None
    plan: Plan
    configurations: int  # measured in each estimation round besides the ablations: baselines, the winner
    ablations: int  # at most one per tuned option

    def core_runs(self, plan: Plan | None = None) -> int:
        """Runs of the re-validation without its ablation: choosing among the top K and the gain."""
        plan = plan or self.plan
        if not plan.k:
            return 0
        select = (plan.k + 1) * plan.select_rounds if plan.k > 1 else 0  # the finalists and the reference
        return select + self.configurations * plan.min_rounds

    def full_runs(self, plan: Plan | None = None) -> int:
        """Runs of the whole re-validation at least: ablations and the minimal configuration included."""
        plan = plan or self.plan
        if not plan.k or not plan.ablation:
            return self.core_runs(plan)
        return self.core_runs(plan) + (self.ablations + 3) * plan.min_rounds

    def scaled(self, per_run: float) -> Plan:
        """The plan in proportion to the budget: the most finalists (at most the plan's K) whose
        choosing and gain take at most ``SHARE`` of it, at least the best trial alone."""
        if self.seconds is None or per_run <= 0 or self.plan.k <= 1:
            return self.plan
        for k in range(self.plan.k, 1, -1):
            plan = replace(self.plan, k=k)
            if self.core_runs(plan) * per_run <= SHARE * self.seconds:
                return plan
        return replace(self.plan, k=1)

    def reserve_runs(self, per_run: float) -> int:
        """Runs to keep for the re-validation while searching."""
        plan = self.scaled(per_run)
        if self.seconds is None or self.full_runs(plan) * per_run <= SHARE * self.seconds:
            return self.full_runs(plan)
        return self.core_runs(plan)

    def allows(self, spent: float, per_run: float, running: int, revalidation_run: float | None = None) -> bool:
        """Whether one more trial fits beside those running, the re-validation still owed and the
        spare run."""
        if self.seconds is None:
            return True
        left = self.trials_left(spent, per_run, running, revalidation_run)
        return spent <= self.seconds if left is None else left >= 1

    def trials_left(self, spent: float, per_run: float, running: int,
                    revalidation_run: float | None = None) -> int | None:
        """How many more trials of ``per_run`` seconds fit beside those running, the re-validation
        still owed (runs of ``revalidation_run`` seconds, a trial's by default) and the spare run; None
        when there is no budget or no run length known yet."""
        if self.seconds is None or per_run <= 0:
            return None
        again = revalidation_run or per_run
        reserve = self.reserve_runs(again) * again
        return max(0, math.floor((self.seconds - spent - reserve) / per_run) - running - SPARE_RUNS)

    def fit(self, spent: float, per_run: float) -> Plan:
        """The re-validation plan for what is left: its finalists in proportion to the budget
        (:meth:`scaled`), without the ablation when it would not fit."""
        plan = self.scaled(per_run)
        if self.seconds is None or not plan.ablation or spent + self.full_runs(plan) * per_run <= self.seconds:
            return plan
        return replace(plan, ablation=False)
