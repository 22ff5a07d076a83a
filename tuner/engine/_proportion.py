"""A study's machine time in proportion, with its state (tuner.engine._budget does the arithmetic):
the plan printed before the first trial, a --budget too small for a search refused there, the
re-validation's plan fitted to the --budget or, without one, to an allowance of about the search's
own machine time (--revalidation-time gives another), and whether more re-validation rounds fit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from tuner import ranking
from tuner.backends import BACKENDS
from tuner.engine import _attrs as attrs
from tuner.engine._budget import FEW_TRIALS, MIN_SEARCH, Budget, usage
from tuner.engine._plan import Plan
from tuner.engine._prepare import Prepared
from tuner.engine._revalidation import Revalidator
from tuner.engine._storage import StudyStore
from tuner.fmt import fmt_duration, fmt_seconds
from tuner.model import StudySnapshot, UsageError


@dataclass
class Proportion:
    """The search's and the re-validation's shares of a study's machine time."""

    parts: Prepared
    store: StudyStore
    budget: Budget
    revalidator: Revalidator
    note: Callable[[str], None]
    snapshot: Callable[[], StudySnapshot]
    spent: Callable[[], tuple[float, float]]  # seconds spent, re-validation included; a re-validation run's length

    def afford(self, seconds: float) -> bool:
        """Whether ``seconds`` more of re-validation runs fit the --budget, or without one its allowance."""
        if self.parts.config.search.budget is not None:
            return self.spent()[0] + seconds <= self.parts.config.search.budget
        allowance = attrs.allowance(self.store)
        return allowance is None or self.revalidator.seconds() + seconds <= allowance

    def plan(self) -> Plan:
        """The re-validation's plan in proportion to the --budget, or without one to its allowance
        (:meth:`_allowance`): fewer choosing rounds, then gain rounds, then finalists, when choosing
        and the gain would take more (tuner.engine._budget); no ablation when it does not fit.
        Decided once and saved, so that a resume goes on with the same configurations."""
        base, saved = self.parts.plan, attrs.saved_plan(self.store)
        if saved is not None:  # decided before this resume (a study from before it kept its K has that None)
            return replace(base, ablation=base.ablation and saved.ablation, k=min(base.k, _or(saved.k, base.k)),
                           min_rounds=min(base.min_rounds, _or(saved.min_rounds, base.min_rounds)),
                           select_rounds=min(base.select_rounds, _or(saved.select_rounds, base.select_rounds)))
        spent, per_run = self.spent()
        plan, fitted_to = self._fitted(spent, per_run)
        allowance = self._allowance(spent)
        attrs.save_plan(self.store, attrs.SavedPlan(
            plan.ablation, plan.k, plan.min_rounds, plan.select_rounds,
            allowance if self.parts.config.search.budget is None else None))
        if plan.k > 1 and plan.select_rounds != base.select_rounds:
            self.note(f"re-validation: chooses among its finalists in {_rounds(plan.select_rounds)}, not "
                      f"{base.select_rounds}, to fit {fitted_to}")
        if plan.k != base.k:
            self.note(f"re-validation: chooses among {plan.k} finalist{'s' if plan.k > 1 else ''}, not {base.k}: with "
                      f"runs of {fmt_seconds(per_run)}, choosing among {base.k} would take more than {fitted_to}")
        if plan.min_rounds != base.min_rounds:
            self.note(f"re-validation: measures the gain in {plan.min_rounds} paired rounds at least, not "
                      f"{base.min_rounds}, to fit {fitted_to}")
        if plan.ablation != base.ablation:
            self.note(f"re-validation: the ablation (the measured why) does not fit {fitted_to}; skipped, the why is "
                      "then the trials' correlations" + ("" if self.parts.config.search.budget else
                                                          "; --revalidation-time gives it more time"))
        return plan

    def announce(self) -> None:
        """Before the first trial: the plan (search and re-validation, in runs and machine time). A
        --budget that holds fewer than ``MIN_SEARCH`` trials beside the re-validation they owe is
        refused here, once the baselines have measured how long a run takes, with the smallest that would."""
        used = usage(self.snapshot(), self.parts.growth, self.budget.plan.k)
        if not used.per_run:
            return
        counted = ranking.counted(self.store.trials())
        wanted = self.parts.trials_wanted - counted
        budget = self.parts.config.search.budget
        if budget is not None:
            left = self.budget.trials_left(used.spent, used.per_run, 0, used.revalidation_run) or 0
            if not counted and left < min(MIN_SEARCH, wanted):
                least = self.budget.smallest(used.spent, used.per_run, used.revalidation_run)
                raise UsageError(f"--budget {fmt_duration(budget)}: holds no search here: runs take about "
                                 f"{fmt_seconds(used.per_run)}, and {MIN_SEARCH} trials with the re-validation they owe "
                                 f"need --budget {least:g}s at least; the baselines are kept: --study {self.parts.name} "
                                 f"--out {self.parts.out} --budget {least:g}s resumes the study with it")
            wanted = min(wanted, left)
        if wanted <= 0:  # a resume with nothing left to search
            return
        plan, fitted_to = self._fitted(used.spent + wanted * used.per_run, used.revalidation_run)
        runs = self.budget.full_runs(plan) if plan.ablation else self.budget.core_runs(plan)
        what = ("no re-validation (--revalidate 0): single runs" if not plan.k else
                (f"choosing among {plan.k} finalists in {_rounds(plan.select_rounds)}, then " if plan.k > 1 else "")
                + f"the gain against {self.parts.reference.name} in {plan.min_rounds}-{plan.max_rounds} paired rounds"
                + (f" of {self.parts.plan.workload.duration:g} s {self._runs}" if self.parts.stretch != 1.0
                   and self.parts.plan.workload else "")
                + (" and the ablation" if plan.ablation else ", no ablation")
                + f": {runs} runs at least, ~{fmt_duration(runs * used.revalidation_run)}, fitted to {fitted_to}")
        self.note(f"plan: {wanted} trial{'s' if wanted != 1 else ''} of ~{fmt_seconds(used.per_run)} "
                  f"(~{fmt_duration(wanted * used.per_run)}), then {what}")
        if budget is not None and plan.k and not counted and wanted < min(FEW_TRIALS, self.parts.trials_wanted):
            self.note(few_trials(wanted, self.budget.smallest(used.spent, used.per_run, used.revalidation_run, FEW_TRIALS)))

    @property
    def _runs(self) -> str:
        """What a timed run is called: db_bench's phases, or a program's runs."""
        return "phases" if BACKENDS[self.parts.config.measurement.backend].workloads else "runs"

    def _allowance(self, search_seconds: float) -> float | None:
        """Without a --budget, the machine time the re-validation may take: --revalidation-time, else
        none when its sizes were given, else about the search's own."""
        revalidation = self.parts.config.revalidation
        return revalidation.revalidation_time or (None if revalidation.revalidate_as_asked else search_seconds)

    def _fitted(self, spent: float, per_run: float) -> tuple[Plan, str]:
        """The re-validation's plan after ``spent`` seconds of search, and what it was fitted to."""
        if self.parts.config.search.budget is not None:
            return self.budget.fit(spent, per_run), "half of the --budget"
        allowance = self._allowance(spent)
        if allowance is None:
            return self.parts.plan, "the sizes given (--revalidate, --revalidate-rounds, --revalidate-max-rounds)"
        given = "--revalidation-time" if self.parts.config.revalidation.revalidation_time else "the search's machine time"
        return self.budget.within(allowance, per_run), f"{fmt_duration(allowance)} ({given})"


def few_trials(wanted: int, more: float) -> str:
    """What the plan says of a --budget that leaves the search ``wanted`` trials, fewer than FEW_TRIALS, beside its
    re-validation, and the budget (``more`` seconds) that would hold FEW_TRIALS."""
    return (f"the plan's {wanted} trials leave the search mostly its start-up (the sampler's model proposes after a "
            f"quarter of them, {MIN_SEARCH} at least): --budget {more:g}s holds {FEW_TRIALS} with the re-validation "
            "they owe, or --revalidate 0 gives the search all of it (with --slo and 2 or more --capacity-rounds the "
            "capacity stage still measures the best against the defaults)")


def _rounds(n: int) -> str:
    return "one round" if n == 1 else f"{n} rounds"


def _or(saved: int | None, asked: int) -> int:
    """A size the saved plan has, else the one asked (a study from before it was kept)."""
    return asked if saved is None else saved
