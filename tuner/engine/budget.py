"""A study's budget in machine time: db_bench wall time of baselines, trials (every rung and repeat)
and re-validation together. The search stops starting trials when the next one and the
re-validation it still owes would not fit."""

from __future__ import annotations

from dataclasses import dataclass

from tuner.engine.plan import Plan


@dataclass(frozen=True)
class Budget:
    """``seconds`` of machine time for everything; None: no budget (--trials alone decides)."""

    seconds: float | None
    plan: Plan
    configurations: int  # measured in each estimation round: baselines, the winner, its ablations

    def revalidation_runs(self) -> int:
        """Runs the re-validation needs at least (its minimal configuration's rounds included)."""
        if not self.plan.k:
            return 0
        select = self.plan.k * self.plan.select_rounds if self.plan.k > 1 else 0
        minimal = 3 * self.plan.min_rounds if self.plan.ablation else 0
        return select + self.configurations * self.plan.min_rounds + minimal

    def allows(self, spent: float, per_trial: float, running: int) -> bool:
        """Whether one more trial fits beside those running and the re-validation still owed."""
        if self.seconds is None:
            return True
        return spent + (running + 1) * per_trial + self.revalidation_runs() * per_trial <= self.seconds
