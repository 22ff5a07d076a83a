"""A study's budget in machine time: db_bench wall time of baselines, trials (every rung and repeat)
and re-validation together. The search stops starting trials when the next one and the
re-validation it still owes would not fit. The re-validation is sized in proportion: while choosing
among the top K and measuring the gain would take more than ``SHARE`` of the budget, the finalists
are chosen among in fewer rounds (down to one, which needs no reference beside them), then the gain
is measured in fewer rounds (down to ``MIN_ROUNDS``), then fewer finalists are chosen among (down to
the best trial alone, whose gain paired rounds still measure afresh, in as many rounds as fit); the
ablation (the measured "why") is reserved for only while the whole re-validation fits ``SHARE``, so
that a small budget goes to the search and to an honest gain first; at the end it runs if it still fits.
The search also keeps ``SPARE_ROUNDS`` gain round spare (each configuration of a paired round once, at a
re-validation run's length): a last trial slower than the median, or re-validation runs longer than
counted, must not push the reserved re-validation out (the default job of 2026-11-25 lost its ablation
by 6 s after a 16 s last trial against a 10.8 s median, and 648 s of its budget went unspent; with a
spare of one trial's run, seed 2 of
experiments/versus_plain_optuna/results/versus_plain_optuna_target_universal_11.8.1_2026-11-28.json
measured its gain in 4 paired rounds where its plan asked for 5: its 30 s runs took longer than counted).
A spare round the re-validation does not need buys it one more gain round when undecided. Finalists come
before rounds because the search's single runs can rank wrongly, not only noisily: at the 2 GiB target,
the search's 10 s phases ranked 1 MB memtables above configurations that were faster in the 30 s
phases the gain is measured in (experiments/fidelity/results/phase_length.json); with one finalist, one such
run decided the answer (seed 1 of experiments/versus_plain_optuna/results/versus_plain_optuna_target_2026-11-27.json).

Without a budget the re-validation is fitted the same way to an allowance of its own (:meth:`Budget.within`):
the search's machine time unless --revalidation-time gives another, so that a 6-trial study does not
re-measure for five times as long as it searched."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import NamedTuple

from tuner import ranking
from tuner.engine._plan import Plan
from tuner.model import StudySnapshot, measured_here
from tuner.trials import TrialRecord

SHARE = 0.5  # the largest part of the budget reserved for the whole re-validation, ablation included
SPARE_ROUNDS = 1  # gain rounds the search leaves unspent beside the reserve, for runs longer than counted
MIN_ROUNDS = 3  # the fewest paired rounds a shrunk re-validation measures the gain in (2 degrees of freedom)
MIN_SEARCH = 3  # the fewest trials a --budget must hold: the two starts and one proposal
# Fewer trials than this leave a search mostly its start-up (the model proposes after a quarter of the trials
# expected, 3 at least: samplers.startup_size): the plan says so, and what budget would hold this many.
FEW_TRIALS = 12


class Usage(NamedTuple):
    """Machine seconds a study has spent (baselines, trials, stored re-validation); a trial's expected
    length: the median trial (a slow outlier, e.g. a zstd-19 start, must not starve the search), or
    before any the longest baseline; and a re-validation run's: the mean of that (or of the slowest
    finalist, when slower: :func:`usage`) and the baselines' runs, grown to the re-validation's phases
    and size, since its rounds measure the baselines beside the finalists (the defaults often run longer
    than tuned trials: counting them at a trial's length overran a 600 s budget by 21 s)."""

    spent: float
    per_run: float
    revalidation_run: float


class Growth(NamedTuple):
    """How a re-validation run differs from a trial's: its timed phases ``stretch`` times as long (it
    confirms the answer in longer ones, --search-duration), its data ``data`` times as large (it confirms
    at the target the --scale trials are smaller than)."""

    stretch: float = 1.0
    data: float = 1.0


SAME = Growth()  # a re-validation run as long as a trial's


def usage(snapshot: StudySnapshot, growth: Growth = SAME, finalists: int = 0) -> Usage:
    """What a study has spent and how long its runs take. In each run counted for the re-validation (the
    median trial's, each baseline's), the timed phases stretch by ``growth.stretch``, the drain they owe
    by the square root of the two growths, and the rest (load, checkpoint, open, cache drop) by the data's
    growth: the defaults' drain at the 2 GiB target grew 1.75x (18.8 s to 30-35 s) when their phase went
    from 10 to 30 s, the whole run from 35 to 66-71 s (2026-11-27, the first seed of
    experiments/versus_plain_optuna/results/versus_plain_optuna_target_2026-11-27.json); stretching the
    drain with the phase, that study counted its re-validation runs at 77 s, and they took 51 s on
    average. Each run grows by its own seconds, not by the baselines' ratio: a 12 s trial of 10 s phases
    cannot run 30 s phases in less than 30 s, and a 15 s baseline's ratio (with a 3 s drain) counted it
    at 29.8 s. At 4 times the data the runs' loads grow with it: counted at the trials' ~32 s, the
    re-validation of steady-readrandom at a 2 GiB target with --scale 0.25 trials ran 9 runs in 512 s and
    overran a 900 s budget by 70 s (seed 1 of
    experiments/versus_plain_optuna/results/versus_plain_optuna_target_readrandom_scaled_11.8.1_2026-12-02.json).

    With ``finalists`` (the plan's K), a trial's run in the re-validation is counted at the slowest of the K
    finalists it would choose among now (the revalidator's own choice, :func:`tuner.ranking.distinct_top`) when that
    is slower than the median trial: the winner runs in every gain round, and a finalist that loads slowly (zstd 13)
    ran each of them at the target. Counted at the median, seed 2 of
    experiments/versus_plain_optuna/results/versus_plain_optuna_target_readrandom_scale0.5_11.8.1_2026-12-02.json
    overran its 900 s budget by 106 s."""
    def run(records: list[TrialRecord]) -> list[tuple[float, float]]:  # each timed trial's seconds and drain
        return [(r.seconds, (r.metrics or {}).get("drain_seconds") or 0.0) for r in records if r.seconds is not None]

    trials = run([TrialRecord.of(t) for t in measured_here(snapshot.trials)])
    baselines = [(b.seconds, b.metrics.get("drain_seconds") or 0.0) for b in snapshot.baselines if b.seconds]
    grows = growth != SAME
    timed = (snapshot.workload.duration or 0.0) * snapshot.workload.timed_parts if grows else 0.0

    def longer(seconds: float, drain: float) -> float:
        rest = max(0.0, seconds - timed - drain)
        return timed * growth.stretch + drain * math.sqrt(growth.stretch * growth.data) + rest * growth.data

    per_run = statistics.median(s for s, _ in trials) if trials else max((s for s, _ in baselines), default=0.0)
    if not per_run:
        return Usage(snapshot.machine_seconds().total, 0.0, 0.0)
    trial_run = statistics.median(longer(*t) for t in trials) if trials else max(longer(*b) for b in baselines)
    if finalists and trials:
        top = ranking.distinct_top(snapshot.trials, snapshot.directions, finalists, snapshot.space.distance,
                                   prefer=snapshot.weights)
        trial_run = max([trial_run, *(longer(*t) for t in run([TrialRecord.of(t) for t in top]))])
    revalidation_run = statistics.mean([trial_run, *(longer(*b) for b in baselines)])
    return Usage(snapshot.machine_seconds().total, per_run, revalidation_run)


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
        select = 0 if plan.k < 2 else plan.k if plan.select_rounds == 1 else (plan.k + 1) * plan.select_rounds
        return select + self.configurations * plan.min_rounds

    def full_runs(self, plan: Plan | None = None) -> int:
        """Runs of the whole re-validation at least: ablations and the minimal configuration included."""
        plan = plan or self.plan
        if not plan.k or not plan.ablation:
            return self.core_runs(plan)
        return self.core_runs(plan) + (self.ablations + 3) * plan.min_rounds

    def scaled(self, per_run: float) -> Plan:
        """The plan in proportion to the budget: choosing and gain within ``SHARE`` of it (:meth:`shrunk`)."""
        if self.seconds is None:
            return self.plan
        return self.shrunk(per_run, SHARE * self.seconds)

    def shrunk(self, per_run: float, seconds: float) -> Plan:
        """The first plan whose choosing and gain take at most ``seconds`` (:func:`_smaller`: fewer
        choosing rounds, then fewer gain rounds, then fewer finalists); the smallest when none does."""
        plan = self.plan
        if per_run <= 0 or plan.k < 1:
            return plan
        for smaller in _smaller(plan):
            if self.core_runs(smaller) * per_run <= seconds:
                return smaller
        return smaller

    def reserve_runs(self, per_run: float) -> int:
        """Runs to keep for the re-validation while searching."""
        plan = self.scaled(per_run)
        if self.seconds is None or self.full_runs(plan) * per_run <= SHARE * self.seconds:
            return self.full_runs(plan)
        return self.core_runs(plan)

    def allows(self, spent: float, per_run: float, running: int, revalidation_run: float | None = None) -> bool:
        """Whether one more trial fits beside those running, the re-validation still owed and the
        spare round."""
        if self.seconds is None:
            return True
        left = self.trials_left(spent, per_run, running, revalidation_run)
        return spent <= self.seconds if left is None else left >= 1

    def trials_left(self, spent: float, per_run: float, running: int,
                    revalidation_run: float | None = None) -> int | None:
        """How many more trials of ``per_run`` seconds fit beside those running, the re-validation
        still owed (runs of ``revalidation_run`` seconds, a trial's by default) and the spare round;
        None when there is no budget or no run length known yet."""
        if self.seconds is None or per_run <= 0:
            return None
        spare = SPARE_ROUNDS * self.configurations * (revalidation_run or per_run)
        return max(0, math.floor((self._unreserved(spent, per_run, revalidation_run) - spare) / per_run) - running)

    def search_left(self, spent: float, per_run: float, revalidation_run: float | None = None) -> float:
        """Seconds the search has left: the budget less what is spent and the re-validation still
        owed, at least two typical runs (a trial started only when one fits with the spare round)."""
        return max(2 * per_run, self._unreserved(spent, per_run, revalidation_run))

    def _unreserved(self, spent: float, per_run: float, revalidation_run: float | None) -> float:
        """The budget less ``spent`` and the re-validation still owed (runs of ``revalidation_run``
        seconds, a trial's by default)."""
        assert self.seconds is not None
        again = revalidation_run or per_run
        return self.seconds - spent - self.reserve_runs(again) * again

    def fit(self, spent: float, per_run: float) -> Plan:
        """The re-validation plan for what is left: choosing and the gain within ``SHARE`` of the
        budget and within what the search left of it, the ablation only if all of it fits."""
        if self.seconds is None:
            return self.plan
        left = self.seconds - spent
        return self._fitted(per_run, min(SHARE * self.seconds, left), left)

    def within(self, seconds: float, per_run: float) -> Plan:
        """The re-validation plan for an allowance of ``seconds`` (a study without a budget):
        :meth:`shrunk` to it, without the ablation unless the whole re-validation fits."""
        return self._fitted(per_run, seconds, seconds)

    def _fitted(self, per_run: float, core: float, whole: float) -> Plan:
        """:meth:`shrunk` to ``core`` seconds, without the ablation unless all of it fits ``whole``."""
        plan = self.shrunk(per_run, core)
        if not plan.ablation or self.full_runs(plan) * per_run <= whole:
            return plan
        return replace(plan, ablation=False)

    def smallest(self, spent: float, per_run: float, revalidation_run: float, trials: int = MIN_SEARCH) -> float:
        """The smallest budget (in whole 5 s) that holds ``trials`` trials beside ``spent`` seconds and the
        re-validation it owes."""
        seconds = 5.0 * math.ceil((spent + per_run) / 5)
        while (replace(self, seconds=seconds).trials_left(spent, per_run, 0, revalidation_run) or 0) < trials:
            seconds += 5.0
        return seconds


def _smaller(plan: Plan) -> list[Plan]:
    """The plan and its smaller forms, largest first: for each number of finalists from the plan's K
    down to 2, the choosing rounds down to one, then the gain's rounds down to ``MIN_ROUNDS`` (the
    plan's own if fewer); then the best trial alone, its gain's rounds down the same way."""
    least = min(plan.min_rounds, MIN_ROUNDS)
    out = []
    for k in range(plan.k, 1, -1):
        out += [replace(plan, k=k, select_rounds=s) for s in range(plan.select_rounds, 0, -1)]
        out += [replace(plan, k=k, select_rounds=1, min_rounds=r) for r in range(plan.min_rounds - 1, least - 1, -1)]
    return out + [replace(plan, k=1, min_rounds=r) for r in range(plan.min_rounds, least - 1, -1)]
