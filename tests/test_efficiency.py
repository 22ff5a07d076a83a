"""What makes a study efficient: a --budget of machine time, --fidelity (successive halving over
data sizes, judged by its rank agreement with the full size), and the scikit-optimize adapter's model of
failed, pruned and running trials."""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import optuna
import pytest
import scipy.stats
from optuna.distributions import CategoricalDistribution, IntDistribution
from optuna.trial import TrialState, create_trial

from objectives import runner as runner_module
from objectives.scores import Score
from search_spaces import Context, GiB, MiB, load_space
from search_spaces.config import Config
from tests.conftest import TINY, fast, printed_summary
from tests.test_cli import tuner
from tuner import rungs
from tuner.engine import _loop as engine_loop
from tuner.engine._budget import FEW_TRIALS, MIN_ROUNDS, MIN_SEARCH, Budget, Growth, usage
from tuner.engine._plan import Plan, Reference
from tuner.engine._proportion import few_trials
from tuner.engine._revalidation import Revalidator, _with_reference
from tuner.outputs import closing_table
from tuner.outputs._answer import answer
from tuner.samplers import (
    KINDS,
    RANKED,
    SamplerError,
    Startup,
    choose,
    make_sampler,
    provenance,
    startup_size,
    study_seed,
)
from tuner.samplers._skopt_sampler import _observations
from tuner.samplers._startup import MODEL, RANDOM
from tuner.stats import Rounds
from tuner.summary import BaselineRun, BestTrial, MachineSeconds, Revalidation, Summary
from tuner.trials import BaselineRecord, TrialRecord, record
from tuner.trials import attrs as trial_attrs

SPACE = {"level": IntDistribution(1, 19), "type": CategoricalDistribution(["lz4", "zstd"])}


def _study_with(*trials: optuna.trial.FrozenTrial) -> optuna.Study:
    study = optuna.create_study(direction="maximize")
    for t in trials:
        study.add_trial(t)
    return study


def _trial(state: TrialState, value: float | None = None, outcome: str | None = None, **params) -> optuna.trial.FrozenTrial:
    dists = {k: SPACE[k] for k in params}
    return create_trial(state=state, value=value, params=params, distributions=dists,
                        user_attrs={"outcome": outcome} if outcome else {})


def test_skopt_is_taught_failures_as_worst_running_trials_as_the_mean_and_nothing_of_interruptions():
    study = _study_with(
        _trial(TrialState.COMPLETE, 100.0, type="zstd", level=3),
        _trial(TrialState.COMPLETE, 300.0, type="lz4"),  # no zstd level: its lower bound stands in
        _trial(TrialState.FAIL, outcome="rejected", type="zstd", level=19),
        _trial(TrialState.PRUNED, type="zstd", level=18),
        _trial(TrialState.FAIL, outcome="interrupted", type="zstd", level=17),
        _trial(TrialState.RUNNING, type="zstd", level=5),
    )
    current = study.ask()
    xs, ys, told = _observations(study, study.trials[current.number], SPACE, ["level", "type"])
    taught = dict(zip(map(tuple, xs), ys))
    assert taught[(3, 1)] == -100.0 and taught[(1, 0)] == -300.0  # minimized
    assert taught[(19, 1)] == taught[(18, 1)] > -100.0  # worse than the worst seen
    assert taught[(5, 1)] == -200.0  # constant liar: the mean
    assert (17, 1) not in taught and len(taught) == 5
    assert {"type": "zstd", "level": 17} not in told and {"type": "lz4"} in told and len(told) == 5


def test_skopt_learns_a_pruned_trial_by_its_estimate_when_it_has_one():
    estimated = _trial(TrialState.PRUNED, type="zstd", level=9)
    record(estimated, value_estimate=150.0)
    study = _study_with(_trial(TrialState.COMPLETE, 100.0, type="zstd", level=3),
                        _trial(TrialState.COMPLETE, 300.0, type="lz4"), estimated,
                        _trial(TrialState.PRUNED, type="zstd", level=18))
    current = study.ask()
    xs, ys, _ = _observations(study, study.trials[current.number], SPACE, ["level", "type"])
    taught = dict(zip(map(tuple, xs), ys))
    assert taught[(9, 1)] == -150.0  # its estimate, between the two complete trials
    assert taught[(18, 1)] > -100.0  # no estimate: worse than the worst seen, as before


def test_skopt_learns_a_trial_beyond_the_cost_guard_as_a_failure():
    """A complete trial whose run cost more than rocksdb-default's beyond the cost guard (``over_cost``, which
    the engine records unless --any-cost) cannot be the answer: skopt is taught it as worse than the worst
    seen, however fast it ran, so the search spends its trials where an answer can come from."""
    costly = _trial(TrialState.COMPLETE, 500.0, type="zstd", level=9)
    record(costly, over_cost=["write_amp"])
    study = _study_with(_trial(TrialState.COMPLETE, 100.0, type="zstd", level=3),
                        _trial(TrialState.COMPLETE, 300.0, type="lz4"), costly)
    current = study.ask()
    xs, ys, told = _observations(study, study.trials[current.number], SPACE, ["level", "type"])
    taught = dict(zip(map(tuple, xs), ys))
    assert taught[(9, 1)] > -100.0 and {"type": "zstd", "level": 9} in told


def test_the_engine_marks_a_trial_beyond_the_cost_guard_unless_lifted(tmp_path):
    """The study store records which COST_MARGINS metrics a measured trial exceeded rocksdb-default's run by
    (its baseline, measured first); with --any-cost, or before the defaults ran, it records none."""
    from tuner.backends import Measurement
    from tuner.engine._storage import StudyStore

    default = BaselineRecord(name="rocksdb-default", flags={}, state="COMPLETE",
                             metrics={"ops_per_sec": 100.0, "write_amp": 2.0, "db_size_bytes": 100})

    def marked(any_cost: bool, baseline: BaselineRecord | None, metrics: dict) -> list[str] | None:
        parts = SimpleNamespace(score=Score(), space=SimpleNamespace(parameter=None),
                                config=SimpleNamespace(search=SimpleNamespace(any_cost=any_cost)))
        store = SimpleNamespace(parts=parts, study=optuna.create_study(direction="maximize"),
                                baseline=lambda name: baseline if name == "rocksdb-default" else None)
        trial = store.study.ask()
        run = SimpleNamespace(metrics=metrics, options_text="", details=None, commands=None, repeats=None)
        StudyStore.measured(cast(StudyStore, store), trial, {}, cast(Measurement, run), 1.0)
        return TrialRecord.of(store.study.trials[0]).over_cost

    costly = {"ops_per_sec": 300.0, "write_amp": 3.0, "db_size_bytes": 100}
    assert marked(False, default, costly) == ["write_amp"]
    assert marked(False, default, {"ops_per_sec": 300.0, "write_amp": 2.4, "db_size_bytes": 100}) is None
    assert marked(True, default, costly) is None and marked(False, None, costly) is None


def test_skopt_running_trials_keep_parallel_proposals_apart():
    sampler = make_sampler("skopt", seed=0, directions=["maximize"])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for i in range(12):
        study.add_trial(_trial(TrialState.COMPLETE, float(100 + i), type="zstd", level=1 + i % 19))
    first = study.ask(SPACE)  # left running
    second = study.ask(SPACE)
    assert first.params != second.params


def test_skopt_does_not_propose_a_configuration_it_has_measured_again(monkeypatch):
    """When skopt's acquisition lands on a point already measured (the default job of 2026-11-23 saw
    one configuration proposed 10 times), the adapter explores a random point instead."""
    import skopt

    sampler = make_sampler("skopt", seed=0, directions=["maximize"])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for level in range(1, 13):
        study.add_trial(_trial(TrialState.COMPLETE, 100.0 + level, type="zstd", level=level))
    monkeypatch.setattr(skopt.Optimizer, "ask", lambda self: [12, 1])  # the best so far: level 12, zstd
    measured = {t.params["level"] for t in study.trials}
    proposals = [study.ask(SPACE).params for _ in range(5)]
    assert all(p["type"] == "lz4" or p["level"] not in measured for p in proposals), proposals


def test_skopt_does_not_repeat_a_configuration_through_a_parameter_it_did_not_use(monkeypatch):
    """A proposal of lz4 repeats the measured lz4 trial whatever zstd level skopt puts beside it (S3
    and S4 of 2026-11-24 ran one compression=none configuration 13 times): the configuration, not the
    raw point, is what must be new."""
    import skopt

    sampler = make_sampler("skopt", seed=0, directions=["maximize"])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.add_trial(_trial(TrialState.COMPLETE, 300.0, type="lz4"))  # skopt was told level 1 (lower bound)
    for level in range(1, 12):
        study.add_trial(_trial(TrialState.COMPLETE, 100.0 + level, type="zstd", level=level))
    monkeypatch.setattr(skopt.Optimizer, "ask", lambda self: [7, 0])  # lz4 beside a level it will not use

    def ask() -> dict:  # define-by-run, as SearchSpace.suggest: the level only for zstd
        trial = study.ask()
        kind = trial.suggest_categorical("type", ["lz4", "zstd"])
        return {"type": kind, **({"level": trial.suggest_int("level", 1, 19)} if kind == "zstd" else {})}

    measured = [t.params for t in study.trials]
    proposals = [ask() for _ in range(5)]
    assert not [p for p in proposals if p in measured], proposals


@pytest.mark.parametrize("name", ["tpe", "skopt", "cmaes"])
def test_the_model_proposes_once_the_startup_holds_its_size_starts_and_running_trials_included(name):
    sampler = make_sampler(name, seed=3, directions=["maximize"], trials=16)
    assert isinstance(sampler, Startup) and sampler.size == startup_size(16) == 4
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.add_trial(_trial(TrialState.COMPLETE, 100.0, type="zstd", level=3))  # a start
    study.add_trial(_trial(TrialState.FAIL, outcome="interrupted", type="zstd", level=9))  # says nothing
    seen = []
    for value in (120.0, 90.0, 130.0, 110.0):
        trial = study.ask(SPACE)
        seen.append(sampler.provenance(trial.number))
        study.tell(trial, value)
    assert seen == [RANDOM, RANDOM, RANDOM, MODEL]
    running = study.ask(SPACE)  # a parallel slot: the running trial counts among the start-up
    sampler.size = 6
    assert sampler.provenance(running.number) == MODEL and sampler.provenance(study.ask(SPACE).number) == MODEL
    sampler.size = 8
    assert sampler.provenance(study.ask(SPACE).number) == RANDOM


NEIGHBOUR = "neighbour of a rejected proposal"


def _startup_with_a_rejection(rejected: int) -> list[tuple[str, str]]:
    """(provenance, outcome) of each trial up to the model's first proposal, in a study run as the
    engine runs it (tuner.engine._loop): two starts enqueued, then the sampler's proposals; random
    initial point number ``rejected`` (from 0) breaks a constraint, is told FAIL "rejected" and its
    neighbour (another level) is enqueued to run next; every other trial is measured."""
    sampler = make_sampler("tpe", seed=1, directions=["maximize"], trials=28)
    assert isinstance(sampler, Startup) and sampler.size == startup_size(28) == 7
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for start in ({"type": "lz4"}, {"type": "zstd", "level": 3}):
        study.enqueue_trial(start, user_attrs=trial_attrs(provenance="start"))
    seen: list[tuple[str, str]] = []
    randoms = 0
    while not seen or seen[-1][0] != MODEL:
        trial = study.ask()
        kind = trial.suggest_categorical("type", ["lz4", "zstd"])
        params = {"type": kind, **({"level": trial.suggest_int("level", 1, 19)} if kind == "zstd" else {})}
        how = TrialRecord.of(trial).provenance or provenance(sampler, "tpe", trial.number)
        if how == RANDOM:
            randoms += 1
        if how == RANDOM and randoms == rejected + 1:
            record(trial, provenance=how, outcome="rejected")
            study.tell(trial, state=TrialState.FAIL)
            study.enqueue_trial({"type": "zstd", "level": 1}, user_attrs=trial_attrs(repaired_from=trial.number,
                                                                                     provenance=NEIGHBOUR))
        else:
            record(trial, provenance=how, outcome="complete")
            study.tell(trial, float(len(params)))
        seen.append((how, TrialRecord.of(study.trials[trial.number]).outcome or ""))
    return seen


@pytest.mark.parametrize("rejected", range(5))
def test_the_startup_runs_its_size_wherever_a_random_point_is_rejected(rejected):
    """A start-up of 7 holds 7 configurations that ran (the two starts, random points and the
    neighbour that runs in a rejected point's place) before the model proposes, whichever of the 5
    random points breaks a constraint. A rejected point once took a place of its own: one
    configuration fewer ran, or, when the last random point was rejected, its neighbour ran after the
    start-up was full and the model proposed one trial late (the budget test failed 8 == 7 then)."""
    seen = _startup_with_a_rejection(rejected)
    before = seen[:-1]
    ran = [how for how, outcome in before if outcome == "complete"]
    assert len(ran) == 7 and ran.count("start") == 2 and ran.count(NEIGHBOUR) == 1, seen
    assert [how for how, outcome in before if outcome == "rejected"] == [RANDOM], seen
    assert len(before) == 8 and [how for how, _ in before].count(RANDOM) == 5, seen


def test_one_seed_draws_other_random_points_in_another_study_and_the_same_in_the_same():
    def first_points(study: str) -> list[dict]:
        sampler = make_sampler("tpe", seed=study_seed(1, study), directions=["maximize"], trials=40)
        s = optuna.create_study(direction="maximize", sampler=sampler)
        return [s.ask(SPACE).params for _ in range(3)]

    assert study_seed(1, "a") != study_seed(1, "b") and study_seed(None, "a") is None
    assert first_points("s0-seed1") == first_points("s0-seed1") != first_points("s1-seed1")


# The benchmark auto follows: experiments/sampler_benchmark/sampler_benchmark.py, one search per budget and seed.
BENCHMARK = Path(__file__).parents[1] / "experiments" / "sampler_benchmark" / "results" / "sampler-benchmark.json"


def test_skopt_fits_with_one_blas_thread(monkeypatch):
    """OpenBLAS's thread per core busy-waits beside a running db_bench (--parallel): the GP is
    fitted with one (a thread per core made two searches at once 10x slower)."""
    import skopt
    from threadpoolctl import threadpool_info, threadpool_limits

    seen: list[int] = []
    tell = skopt.Optimizer.tell

    def tell_noting_threads(self, *args, **kwargs):
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return tell(self, *args, **kwargs)

    monkeypatch.setattr(skopt.Optimizer, "tell", tell_noting_threads)
    sampler = make_sampler("skopt", seed=0, directions=["maximize"])
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for level in range(1, 12):
        study.add_trial(_trial(TrialState.COMPLETE, 100.0 + level, type="zstd", level=level))
    with threadpool_limits(limits=2, user_api="blas"):  # what OpenBLAS takes on 2 cores
        study.ask().suggest_int("level", 1, 19)
    assert seen and set(seen) == {1}


def test_auto_follows_the_sampler_benchmark():
    """The order ``auto`` chooses from is the committed benchmark's: median regret averaged over its
    recorded workloads and its budgets, 20 seeds or more."""
    report = json.loads(BENCHMARK.read_text())
    assert report["seeds"] >= 20 and report["workloads"] and set(report["workloads"]) <= {"space-write", "space-read"}
    assert report["budgets"] == [10, 20, 40, 80]

    def regret(name: str) -> float:
        return statistics.fmean(w["samplers"][name]["budgets"][str(n)]["median_regret"]
                                for w in report["workloads"].values() for n in report["budgets"])

    assert set(RANKED) == {"tpe", "skopt", "cmaes", "random"}  # the default install's model-free and model-based
    assert list(RANKED) == sorted(RANKED, key=regret)
    assert choose("auto", multi_objective=False, constrained=False) == RANKED[0]
    assert choose("auto", multi_objective=False, constrained=True) == next(n for n in RANKED if KINDS[n].constraints)
    assert choose("auto", multi_objective=True, constrained=False) == "tpe"
    assert choose("gp", multi_objective=False, constrained=False) == "gp"


@pytest.mark.parametrize("name", [n for n in KINDS if n != "gp" or importlib.util.find_spec("torch")])
def test_each_sampler_serves_what_it_declares_and_refuses_the_rest(name):
    """A sampler's declared capabilities are what make_sampler allows: skopt and CMA-ES refuse constrained
    and multi-objective studies in one line; the rest build and propose for them."""
    kind = KINDS[name]
    for directions, constraints, serves in ((["maximize", "minimize"], None, kind.multi_objective),
                                            (["maximize"], lambda t: [0.0], kind.constraints)):
        if serves:
            with warnings.catch_warnings():  # a user's console shows no deprecation of Optuna's
                warnings.simplefilter("error", FutureWarning)
                sampler = make_sampler(name, seed=0, directions=directions, constraints_func=constraints,
                                       grid={"x": [1, 2]})
            study = optuna.create_study(directions=directions, sampler=sampler)
            trial = study.ask()
            assert trial.suggest_int("x", 1, 2) in (1, 2)
        else:
            wanted = "cannot honour --max-p99-us" if constraints else "supports single-objective studies only"
            with pytest.raises(SamplerError, match=f"--sampler {name} {wanted}"):
                make_sampler(name, seed=0, directions=directions, constraints_func=constraints)


def test_the_model_based_samplers_without_constraint_handling_are_declared_so():
    """skopt and CMA-ES would ignore Optuna's constraints_func: declared unconstrained, auto passes them over."""
    assert {n for n, k in KINDS.items() if not k.constraints} == {"skopt", "cmaes"}


def test_the_budget_keeps_room_for_the_revalidation_it_owes():
    plan = Plan(k=3, select_rounds=1, min_rounds=3, ablation=False)
    budget = Budget(seconds=100.0, plan=plan, configurations=2, ablations=4)
    assert budget.core_runs() == budget.full_runs() == 3 * 1 + 2 * 3  # one round needs no reference beside the top 3
    assert budget.reserve_runs(per_run=5.0) == 9  # 45 s: within half of the budget, so all three finalists
    # a trial runs while it, the 9 runs owed and one spare gain round (2 configurations: 2 runs) fit
    assert budget.allows(spent=0.0, per_run=5.0, running=0)  # 5 + 9 * 5 + 2 * 5 = 60 <= 100
    assert budget.allows(spent=40.0, per_run=5.0, running=0)  # 40 + 5 + 45 + 10 = 100
    assert not budget.allows(spent=41.0, per_run=5.0, running=0)  # 41 + 60 > 100: no room for the spare round
    assert budget.allows(spent=30.0, per_run=5.0, running=2)  # 30 + 10 + 5 + 45 + 10 = 100
    assert not budget.allows(spent=31.0, per_run=5.0, running=2)  # the running ones count
    assert Budget(None, plan, 2, 4).allows(spent=1e9, per_run=1e9, running=9)
    assert budget.trials_left(spent=10.0, per_run=5.0, running=0) == 7  # (100 - 10 - 9 owed x 5 - 2 spare x 5) / 5
    assert budget.trials_left(spent=10.0, per_run=5.0, running=8) == 0
    assert budget.trials_left(spent=30.0, per_run=0.0, running=0) is None  # no run length known yet
    # re-validation runs longer than trials (slow defaults among its configurations) reserve more, the
    # spare round too: on 200 s, (200 - 10 - 9 x 5 - 2 x 5) / 5 = 27 trials at a trial's 5 s; at 6 s,
    # (200 - 10 - 9 x 6 - 2 x 6) / 5 = 24.8: 24
    wider = Budget(seconds=200.0, plan=plan, configurations=2, ablations=4)
    assert wider.trials_left(spent=10.0, per_run=5.0, running=0) == 27
    assert wider.trials_left(spent=10.0, per_run=5.0, running=0, revalidation_run=6.0) == 24


def test_a_revalidation_run_is_counted_at_the_mean_of_a_trial_and_the_baselines(tmp_path):
    """The baselines run in every round of the re-validation; a trial's median alone undercounts
    them when the defaults run longer than tuned configurations."""
    trials = [create_trial(state=TrialState.COMPLETE, value=1.0, params={}, distributions={},
                           user_attrs={"outcome": "complete", "seconds": s}) for s in (4.0, 5.0, 6.0)]
    snapshot = SimpleNamespace(trials=trials, baselines=(BaselineRecord("a", seconds=9.0), BaselineRecord("b", seconds=10.0)),
                               machine_seconds=lambda: MachineSeconds(total=34.0))
    used = usage(snapshot)
    assert (used.spent, used.per_run, used.revalidation_run) == (34.0, 5.0, 8.0)  # mean of 5, 9 and 10
    before = SimpleNamespace(trials=[], baselines=(BaselineRecord("a", seconds=9.0),),
                             machine_seconds=lambda: MachineSeconds(total=9.0))
    assert usage(before).per_run == usage(before).revalidation_run == 9.0


def test_a_revalidation_in_longer_phases_is_counted_longer_by_its_timed_part_only():
    """--search-duration: trials of 10 s phases, the re-validation's of 25 s (2.5 times). A baseline's
    run of 40 s spent 10 s in its timed phase and 10 s draining what it wrote, the rest checkpoint, open
    and cache drop: its phase takes 2.5 times as long, its drain the square root of that, the rest the
    same; the median trial's run grows the same way, and a re-validation run is their mean."""
    trials = [create_trial(state=TrialState.COMPLETE, value=1.0, params={}, distributions={},
                           user_attrs={"outcome": "complete", "seconds": s}) for s in (20.0, 30.0, 40.0)]
    workload = SimpleNamespace(duration=10.0, timed_parts=1)
    baselines = (BaselineRecord("a", seconds=40.0, metrics={"drain_seconds": 10.0}),
                 BaselineRecord("b", seconds=50.0, metrics={"drain_seconds": 15.0}))
    snapshot = SimpleNamespace(trials=trials, baselines=baselines, workload=workload,
                               machine_seconds=lambda: MachineSeconds(total=180.0))
    plain = usage(snapshot)
    assert (plain.per_run, plain.revalidation_run) == (30.0, 40.0)  # mean of 30, 40 and 50
    longer = usage(snapshot, Growth(stretch=2.5))
    assert (longer.spent, longer.per_run) == (180.0, 30.0)  # the search's own runs do not change
    # 40 s: 20 + 10 x 2.5 + 10 x 1.58 = 60.8 s; 50 s: 25 + 25 + 15 x 1.58 = 73.7 s; the median trial
    # (no drain recorded): 30 + 15 = 45 s
    assert longer.revalidation_run == pytest.approx((45.0 + 60.81 + 73.72) / 3, rel=1e-3)


def test_a_fast_trials_run_in_longer_phases_is_counted_no_shorter_than_them():
    """Each run grows by its own timed seconds: trials of 12 s (10 s phases, 1 s drain) beside defaults
    of 15 s (3 s drain) confirmed in 30 s phases run at least 30 s; the baselines' ratio (2.48 for 15 s)
    counted the trials' 12 s at 29.8 s, and a re-validation of seed 2 of
    experiments/versus_plain_optuna/results/versus_plain_optuna_target_universal_11.8.1_2026-11-28.json ran
    longer than counted."""
    trials = [create_trial(state=TrialState.COMPLETE, value=1.0, params={}, distributions={},
                           user_attrs={"outcome": "complete", "seconds": s, "metrics": {"drain_seconds": 1.0}})
              for s in (11.0, 12.0, 13.0)]
    workload = SimpleNamespace(duration=10.0, timed_parts=1)
    snapshot = SimpleNamespace(trials=trials, baselines=(BaselineRecord("a", seconds=15.0, metrics={"drain_seconds": 3.0}),),
                               workload=workload, machine_seconds=lambda: MachineSeconds(total=51.0))
    used = usage(snapshot, Growth(stretch=3.0))
    trial, baseline = 12.0 + 20.0 + 1.0 * (3 ** 0.5 - 1), 15.0 + 20.0 + 3.0 * (3 ** 0.5 - 1)
    assert used.per_run == 12.0 and used.revalidation_run == pytest.approx((trial + baseline) / 2)
    assert trial > 30.0 > 12.0 * (1 + 10 / 15 * 2 + 3 / 15 * (3 ** 0.5 - 1))


def test_a_revalidation_at_a_larger_target_is_counted_with_its_loads_grown_by_the_data():
    """--scale 0.25: trials on a quarter of the target's data, confirmed at the target (4 times the data).
    Each run's timed phase keeps its length, its load (or checkpoint) grows with the data, its drain by the
    square root: a 32 s run of 30 s of reads and a 2 s load counts 38 s at the target. Counted at the trials'
    own lengths, the re-validation of seed 1 of
    experiments/versus_plain_optuna/results/versus_plain_optuna_target_readrandom_scaled_11.8.1_2026-12-02.json
    overran its 900 s budget by 70 s."""
    trials = [create_trial(state=TrialState.COMPLETE, value=1.0, params={}, distributions={},
                           user_attrs={"outcome": "complete", "seconds": s}) for s in (33.0, 35.0, 40.0)]
    workload = SimpleNamespace(duration=30.0, timed_parts=1)
    baselines = (BaselineRecord("rocksdb-default", seconds=32.0),
                 BaselineRecord("written", seconds=44.0, metrics={"drain_seconds": 4.0}))
    snapshot = SimpleNamespace(trials=trials, baselines=baselines, workload=workload,
                               machine_seconds=lambda: MachineSeconds(total=184.0))
    assert usage(snapshot).revalidation_run == pytest.approx((35.0 + 32.0 + 44.0) / 3)
    at_target = usage(snapshot, Growth(data=4.0))
    assert (at_target.spent, at_target.per_run) == (184.0, 35.0)  # the search's own runs do not change
    # the median trial 30 + 5 x 4 = 50 s; the defaults 30 + 2 x 4 = 38 s; the other 30 + 4 x 2 + 10 x 4 = 78 s
    assert at_target.revalidation_run == pytest.approx((50.0 + 38.0 + 78.0) / 3)
    both = usage(snapshot, Growth(stretch=2.0, data=4.0))  # 60 s phases too: the drain by the root of 8
    assert both.revalidation_run == pytest.approx((80.0 + 68.0 + 60.0 + 4.0 * 8 ** 0.5 + 40.0) / 3)


@pytest.mark.parametrize("slow, counted", [(8.0, (150.0 + 30.0) / 2), (7.0, 30.0)])
def test_a_revalidation_run_is_counted_at_the_slowest_finalist_when_it_is_slower_than_the_median(slow, counted):
    """The winner runs in every gain round: a finalist that loads slowly (zstd 13) ran each of them at the target
    and overran the budget, counted at the median trial (seed 2 of
    experiments/versus_plain_optuna/results/versus_plain_optuna_target_readrandom_scale0.5_11.8.1_2026-12-02.json).
    Among five trials of 30 s, the one of 90 s counts (at twice the data: 30 s of reads and its 60 s load doubled)
    only while it is among the three finalists the re-validation would choose among."""
    trials = [create_trial(state=TrialState.COMPLETE, value=v, params={}, distributions={},
                           user_attrs={"outcome": "complete", "seconds": 90.0 if v == slow else 30.0})
              for v in (10.0, 9.0, 8.0, 7.0, 6.0)]
    snapshot = SimpleNamespace(trials=trials, baselines=(BaselineRecord("rocksdb-default", seconds=30.0),),
                               workload=SimpleNamespace(duration=30.0, timed_parts=1),
                               directions=["maximize"], space=SimpleNamespace(distance=lambda a, b: 1.0), weights=None,
                               machine_seconds=lambda: MachineSeconds(total=300.0))
    assert usage(snapshot, Growth(data=2.0)).revalidation_run == pytest.approx(30.0)  # the median trial's
    used = usage(snapshot, Growth(data=2.0), finalists=3)
    assert used.per_run == 30.0 and used.revalidation_run == pytest.approx(counted)


def test_the_revalidation_chooses_in_fewer_rounds_then_among_fewer_finalists_when_runs_are_long_for_the_budget():
    """Choosing among K costs (K + 1) x select_rounds runs, K in one round (no reference beside them):
    past half of the budget the choosing rounds shrink to one, then the gain's rounds, then K, down to
    the best trial alone, whose gain over the reference paired rounds still measure."""
    budget = Budget(seconds=100.0, plan=Plan(k=3, select_rounds=2, min_rounds=3, ablation=False), configurations=2,
                    ablations=4)
    assert budget.scaled(per_run=2.0) == budget.plan  # (4 x 2 + 2 x 3) x 2 s = 28 s <= 50 s
    assert budget.core_runs(replace(budget.plan, select_rounds=1)) == 3 + 2 * 3
    assert budget.scaled(per_run=4.0) == replace(budget.plan, select_rounds=1)  # 56 s > 50 s; 9 runs x 4 s = 36 s
    assert budget.scaled(per_run=5.0).k == 3  # 45 s
    assert budget.scaled(per_run=6.0) == replace(budget.plan, k=2, select_rounds=1)  # 54 s > 50 s; 8 runs x 6 s
    assert budget.scaled(per_run=8.0).k == 1  # 64 s > 50 s: the best alone, 6 runs
    assert budget.reserve_runs(per_run=5.0) == 9 and budget.fit(spent=0.0, per_run=5.0).k == 3
    assert budget.scaled(per_run=30.0).k == 1  # never fewer than one: its gain is what the study reports
    assert Budget(None, budget.plan, 2, 4).scaled(per_run=1e9).k == 3  # no budget: the plan as asked


def test_one_more_gain_round_is_counted_at_each_configurations_own_run_length():
    """Slow defaults beside a fast winner: one more round of the gain costs each one's own mean run,
    not twice the mean of every re-validation run (the fast finalists' too), which undercounted it."""
    select = {"samples": {"trial 15": [{"wall_seconds": 50.0}], "trial 14": [{"wall_seconds": 40.0}],
                          "trial 23": [{"wall_seconds": 42.0}]}, "failed": {}}
    estimate = {"samples": {"rocksdb-default": [{"wall_seconds": 70.0}, {"wall_seconds": 72.0}],
                            "trial 15": [{"wall_seconds": 50.0}, {"wall_seconds": 52.0}]}, "failed": {}}
    stages = {"revalidation:select": select, "revalidation:estimate": estimate}
    store = SimpleNamespace(attr=lambda name, default=None: stages.get(name, default))
    revalidator = Revalidator(store, measure=None, note=print, out=Path("."))
    entries = {"rocksdb-default": {"flags": {}}, "trial 15": {"flags": {}}}
    assert revalidator.run_length() == pytest.approx(376.0 / 7)  # 53.7 s: 2 runs of it would be 107 s
    saved = Rounds.from_dict(estimate)
    assert revalidator._round_seconds(saved, entries, owed=0) == 71.0 + 51.0
    assert revalidator._round_seconds(saved, entries, owed=3) == pytest.approx(122.0 + 3 * 376.0 / 7)
    failed = saved.updated(failed={"trial 15": "killed"})  # a configuration that failed runs no more
    assert revalidator._round_seconds(failed, entries, owed=0) == 71.0


def test_gain_rounds_past_the_least_run_only_while_they_fit_the_budget(tmp_path):
    """The plan's rounds were sized from estimated run lengths; measured runs that take longer must not
    push the study past its --budget: past MIN_ROUNDS a round runs only when it fits."""
    def store() -> SimpleNamespace:
        attrs: dict[str, object] = {}
        return SimpleNamespace(attr=lambda name, default=None: attrs.get(name, default), set_attr=attrs.__setitem__)

    spent = []
    ratios = iter([1.5, 2.5] * 10)  # noisy enough that the interval never gets within 10 %

    def measure(what, config, log_dir, workload):
        wall = 50.0 if config.settings else 70.0
        spent.append(wall)
        return SimpleNamespace(metrics={"ops_per_sec": 100.0 * (next(ratios) if config.settings else 1.0),
                                        "wall_seconds": wall})

    cap = 3 * 120.0 + 100.0  # three rounds of 120 s fit, a fourth does not
    revalidator = Revalidator(store(), measure, note=lambda line: None, out=tmp_path,
                          afford=lambda seconds: sum(spent) + seconds <= cap)
    snapshot = SimpleNamespace(space=SimpleNamespace(config=lambda params: Config.of({"write_buffer_size": "1"})),
                               baselines=[])
    plan = Plan(k=1, min_rounds=5, max_rounds=10, ablation=False)
    out = revalidator._estimate(snapshot, plan, Reference("rocksdb-default", {}), SimpleNamespace(number=15, params={}))
    assert out["rounds"] == MIN_ROUNDS == 3 and sum(spent) == 360.0
    unbounded = Revalidator(store(), measure, note=lambda line: None, out=tmp_path)
    assert unbounded._estimate(snapshot, plan, Reference("rocksdb-default", {}),
                               SimpleNamespace(number=15, params={}))["rounds"] == 10  # no budget: up to max_rounds


def test_choosing_rounds_past_the_first_run_only_while_they_and_the_gains_least_rounds_fit(tmp_path):
    """The finalists' rounds were sized from estimated run lengths too: once a round shows them longer,
    no further choosing round runs that would leave the gain's least rounds (MIN_ROUNDS) out of the budget."""
    def store() -> SimpleNamespace:
        attrs: dict[str, object] = {}
        return SimpleNamespace(attr=lambda name, default=None: attrs.get(name, default), set_attr=attrs.__setitem__)

    spent: list[float] = []

    def measure(what, config, log_dir, workload):
        spent.append(60.0)
        return SimpleNamespace(metrics={"ops_per_sec": 100.0, "wall_seconds": 60.0})

    entries = {"trial 1": {"flags": {"a": "1"}, "trial": 1}, "trial 2": {"flags": {"a": "2"}, "trial": 2},
               "rocksdb-default": {"flags": {}}}
    snapshot = SimpleNamespace(baselines=[SimpleNamespace(name="rocksdb-default", complete=True)])
    plan = Plan(k=2, select_rounds=3, min_rounds=5, max_rounds=10, ablation=False)
    owed = 2 * MIN_ROUNDS * 60.0  # the winner and the defaults, in the gain's least rounds
    for cap, rounds in ((3 * 180.0 + owed, 3), (2 * 180.0 + owed, 2), (180.0 + owed - 1, 1)):
        spent.clear()
        revalidator = Revalidator(store(), measure, note=lambda line: None, out=tmp_path,
                                  afford=lambda seconds, cap=cap: sum(spent) + seconds <= cap)
        saved = revalidator._select(snapshot, entries, plan, Reference("rocksdb-default", {}))
        assert saved.rounds == rounds and sum(spent) == 180.0 * rounds
    unbounded = Revalidator(store(), measure, note=lambda line: None, out=tmp_path)
    assert unbounded._select(snapshot, entries, plan, Reference("rocksdb-default", {})).rounds == 3


def test_the_minimal_configurations_flags_come_in_one_order():
    """The options put back to the reference's values are taken in one order, not a set's: a set of
    names iterates in an order that changes with the interpreter's hash seed, and two reports of one
    study wrote the minimal configuration's flags in two orders."""
    class Ordered(set):  # names iterated in a given order, as two hash seeds may
        backwards = False

        def __iter__(self):
            return iter(sorted(set(super().__iter__()), reverse=self.backwards))

    class Backwards(Ordered):
        backwards = True

    space = load_space("default").resolve(Context(cores=4, ram=16 * GiB, data=GiB, budget=4 * GiB))
    params = {"write_buffer_size": 8 * MiB, "max_write_buffer_number": 4, "compression_type": "zstd", "bloom_bits": 12}
    reference = Reference("rocksdb-default", {}, {"write_buffer_size": 64 * MiB, "max_write_buffer_number": 2,
                                                  "compression_type": "lz4", "bloom_bits": 0})
    names = {"write_buffer_size", "max_write_buffer_number", "bloom_bits"}
    forwards = _with_reference(space, params, Ordered(names), reference)
    assert list(_with_reference(space, params, Backwards(names), reference).items()) == list(forwards.items())


def test_a_small_budget_reserves_no_ablation_and_drops_it_when_it_does_not_fit():
    plan = Plan(k=3, select_rounds=2, min_rounds=3, ablation=True)
    budget = Budget(seconds=100.0, plan=plan, configurations=2, ablations=4)
    assert budget.full_runs() == 14 + (4 + 3) * 3  # 35 runs: the ablations and the minimal configuration
    assert budget.reserve_runs(per_run=1.0) == 35  # 35 s <= half of the budget: all of it is reserved
    assert budget.reserve_runs(per_run=2.0) == 14  # 70 s > 50 s: only choosing and the gain
    assert budget.fit(spent=10.0, per_run=2.0).ablation  # 10 + 70 <= 100: it still fits at the end
    assert not budget.fit(spent=60.0, per_run=2.0).ablation  # 60 + 70 > 100: skipped
    assert Budget(None, plan, 2, 4).fit(spent=1e9, per_run=1e9).ablation
    # a search that left less than half of the budget: the plan fits what is left (seed 2 of the target
    # comparison planned 11 runs for half of 1200 s when 554 s were left, and spent 1243 s)
    wide = Budget(1200.0, Plan(k=3, select_rounds=3, min_rounds=5, ablation=False), configurations=2, ablations=8)
    assert wide.fit(spent=500.0, per_run=50.0) == replace(wide.plan, select_rounds=1, min_rounds=4)  # 550 s <= 600 s
    assert wide.fit(spent=660.0, per_run=50.0) == replace(wide.plan, select_rounds=1, min_rounds=3)  # 540 s left


def test_a_revalidation_fits_its_allowance_by_choosing_rounds_then_gain_rounds_then_finalists():
    """Without a --budget the re-validation gets an allowance (the search's machine time): fewer
    choosing rounds first, then fewer gain rounds down to MIN_ROUNDS, then fewer finalists, then for the
    best alone fewer rounds; the ablation only if all fits."""
    plan = Plan(k=3, select_rounds=3, min_rounds=5, ablation=True)
    budget = Budget(None, plan, configurations=2, ablations=4)
    # core runs: K=3: 4 x 3 + 2 x 5 = 22, K=2: 3 x 3 + 10 = 19, in one round K + 2 x 5, K=1: 2 per round;
    # the ablation adds 7 per round
    assert budget.within(600.0, per_run=10.0) == plan  # (22 + 35) x 10 s = 570 s
    assert budget.within(300.0, per_run=10.0) == replace(plan, ablation=False)  # 220 s, but 570 s with it
    assert budget.within(200.0, per_run=10.0) == replace(plan, select_rounds=2, ablation=False)  # 4 x 2 + 10: 180 s
    # K=3 in one round with 3 gain rounds takes 9 runs, K=2 8
    assert budget.within(80.0, per_run=10.0) == replace(plan, k=2, select_rounds=1, min_rounds=3, ablation=False)
    assert budget.within(60.0, per_run=10.0) == replace(plan, k=1, min_rounds=3, ablation=False)  # 6 runs
    assert budget.within(30.0, per_run=10.0) == replace(plan, k=1, min_rounds=MIN_ROUNDS, ablation=False)  # the least
    fewer = replace(plan, min_rounds=2)  # asked for fewer rounds than MIN_ROUNDS: never raised
    assert Budget(None, fewer, 2, 4).within(1.0, per_run=10.0).min_rounds == 2
    # with a --budget the same shrinking applies to half of it
    assert Budget(160.0, plan, 2, 4).scaled(per_run=10.0) == replace(plan, k=2, select_rounds=1, min_rounds=3)


@pytest.mark.parametrize("per_run, spent", [(0.3, 0.3), (5.0, 5.0), (6.0, 14.0), (40.0, 75.0)])
def test_the_smallest_budget_is_the_first_that_holds_a_search_and_its_revalidation(per_run, spent):
    plan = Plan(k=3, select_rounds=3, min_rounds=5, ablation=True)
    budget = Budget(1.0, plan, configurations=2, ablations=9)
    least = budget.smallest(spent, per_run, revalidation_run=per_run * 1.2)
    assert least % 5 == 0
    holds = [replace(budget, seconds=s).trials_left(spent, per_run, 0, per_run * 1.2) for s in (least - 5, least)]
    assert holds[0] < MIN_SEARCH <= holds[1]
    more = budget.smallest(spent, per_run, revalidation_run=per_run * 1.2, trials=FEW_TRIALS)
    holds = [replace(budget, seconds=s).trials_left(spent, per_run, 0, per_run * 1.2) for s in (more - 5, more)]
    assert more > least and holds[0] < FEW_TRIALS <= holds[1]
    said = few_trials(4, more)
    assert said.startswith("the plan's 4 trials leave the search mostly its start-up") and f"--budget {more:g}s holds " \
        f"{FEW_TRIALS} with the re-validation they owe, or --revalidate 0 gives the search all of it" in said


@pytest.mark.dbbench
def test_without_a_budget_the_revalidation_takes_about_the_search_time_and_the_plan_comes_first(tmp_path):
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "6", "--seed", "2", "--sampler",
              "random", "--out", str(tmp_path / "o"), "--json", revalidate=True)
    assert r.returncode == 0, r.stderr
    spent = printed_summary(r).machine_seconds
    search = spent.baselines + spent.trials
    # the plan as asked (3 finalists, 5-10 rounds, the ablation) would take 5-10 times the search here
    assert 0 < spent.revalidation <= 1.5 * search, spent
    lines = r.stderr.splitlines()
    plan = next(i for i, line in enumerate(lines) if line.startswith("plan: 6 trials of ~"))
    assert plan < next(i for i, line in enumerate(lines) if line.startswith("trial 0:"))
    assert "fitted to" in lines[plan] and "(the search's machine time)" in lines[plan]


@pytest.mark.dbbench
def test_a_budget_too_small_for_a_search_is_refused_before_the_first_trial_with_the_least_that_holds_one(tmp_path):
    out = tmp_path / "o"
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--seed", "2", "--sampler", "random",
            "--study", "small", "--out", str(out)]
    r = tuner(*args, "--budget", "1s", revalidate=True)
    assert r.returncode == 2, r.stderr
    error = r.stderr.strip().splitlines()[-1]
    assert error.startswith("rocksdb-tuner: error: --budget 1s: holds no search here: runs take about "), error
    least = re.search(r"need --budget (\d+)s at least", error)
    assert least and f"--study small --out {out} --budget {least[1]}s resumes" in error
    assert not optuna.load_study(study_name="small", storage=f"sqlite:///{out / 'study.db'}").trials
    again = tuner(*args, "--budget", f"{least[1]}s", "--json", revalidate=True)
    assert again.returncode == 0, again.stderr
    assert "baseline rocksdb-default: running" not in again.stderr  # kept from the refused run
    assert printed_summary(again).trials.complete >= 1


def _thirty_seconds_left(monkeypatch: pytest.MonkeyPatch) -> tuple[Budget, SimpleNamespace, list[float]]:
    """A 100 s --budget with 40 s spent and the re-validation owed (2 configurations x 3 rounds x 5 s): 30 s
    left to the search; the study's snapshot, and the loop's clock (seconds, moved by hand)."""
    trials = [create_trial(state=TrialState.COMPLETE, value=1.0, params={}, distributions={},
                           user_attrs={"outcome": "complete", "seconds": 5.0}) for _ in range(3)]
    snapshot = SimpleNamespace(trials=trials, baselines=(BaselineRecord("a", seconds=5.0),),
                               directions=["maximize"], space=SimpleNamespace(distance=lambda a, b: 1.0), weights=None,
                               machine_seconds=lambda: MachineSeconds(total=40.0))
    clock = [1000.0]
    monkeypatch.setattr(engine_loop.time, "monotonic", lambda: clock[0])
    return Budget(100.0, Plan(k=1, min_rounds=3, ablation=False), configurations=2, ablations=0), snapshot, clock


def test_a_trial_running_past_the_searchs_share_of_the_budget_is_stopped_and_learnt_as_bad(monkeypatch):
    """With a --budget, a trial still running when the budget left, less the re-validation owed, is
    spent is stopped (told pruned, its mean ops/s so far reported); without one nothing watches it."""
    budget, snapshot, clock = _thirty_seconds_left(monkeypatch)
    unlimited = replace(budget, seconds=None)
    assert engine_loop._observer(optuna.create_study().ask(), False, unlimited, lambda: snapshot, False, Growth()) is None
    trial = optuna.create_study(direction="maximize").ask()
    observe = engine_loop._observer(trial, False, budget, lambda: snapshot, False, Growth())
    clock[0] += 29.0
    assert not observe("fill", 1, 100.0)
    clock[0] += 2.0
    assert observe("fill", 2, 50.0)
    assert TrialRecord.of(trial).pruned_by == "the --budget: ran past the 30 s the search had left"
    assert optuna.load_study(study_name=trial.study.study_name, storage=trial.study._storage).trials[0] \
        .intermediate_values == {1: 100.0, 2: 75.0}


def test_the_budget_guard_watches_a_load_but_reports_and_floors_only_the_scored_phases(monkeypatch):
    """An unscored phase (a load, each second as None) is stopped by the --budget's guard when the search's
    share runs out, but adds nothing to the reported mean and is never held to the drain's floor."""
    budget, snapshot, clock = _thirty_seconds_left(monkeypatch)
    trial = optuna.create_study(direction="maximize").ask()
    observe = engine_loop._observer(trial, False, budget, lambda: snapshot, False, Growth(), hopeless=50.0)
    assert observe is not None
    for second in range(1, 31):  # a load (no ops/s) for the 30 s the search has left: no floor, no report
        clock[0] += 1.0
        assert not observe("preload", second, None)
    clock[0] += 1.0
    assert observe("preload", 31, None)
    assert TrialRecord.of(trial).pruned_by == "the --budget: ran past the 30 s the search had left"
    assert not optuna.load_study(study_name=trial.study.study_name, storage=trial.study._storage).trials[0] \
        .intermediate_values


def test_an_unscored_phase_hands_each_second_to_the_observer(monkeypatch):
    clock, seen = [100.0], []
    monkeypatch.setattr(runner_module.time, "monotonic", lambda: clock[0])
    watch = runner_module._ClockWatch("preload", lambda _, second, qps: seen.append((second, qps)) or second == 3)
    clock[0] += 0.9
    assert watch.poll() is None and seen == []
    clock[0] += 1.2
    assert watch.poll() is None and seen == [(1, None), (2, None)]
    clock[0] += 5.0
    assert watch.poll() == 3 and seen[2:] == [(3, None)]


def test_a_trial_whose_drain_holds_it_under_half_the_defaults_is_stopped_there_and_learnt_as_bad():
    """With a floor (half rocksdb-default's ops/s), a trial is stopped at the first second of its drain at which
    its operations over the seconds it has run fall under it (its score can only fall further), told pruned
    with its mean so far, drain seconds as 0; its operations' seconds never stop it, and a pruner never
    sees the drain's."""
    unlimited = Budget(None, Plan(k=1, min_rounds=3, ablation=False), configurations=2, ablations=0)
    trial = optuna.create_study(direction="maximize").ask()
    observe = engine_loop._observer(trial, False, unlimited, lambda: None, False, Growth(), hopeless=50.0)
    assert observe is not None
    assert not any(observe("overwrite", second, 10.0 if second < 10 else 910.0) for second in range(1, 11))
    assert not any(observe("overwrite", second, None) for second in range(11, 21))  # 1,000 ops / 20 s: not under 50
    assert observe("overwrite", 21, None)  # 1,000 / 21 = 47.6
    assert TrialRecord.of(trial).pruned_by == "its drain: under 0.5 of rocksdb-default's 100 ops/s"
    reported = optuna.load_study(study_name=trial.study.study_name, storage=trial.study._storage).trials[0]
    assert reported.intermediate_values[21] == pytest.approx(1000 / 21)
    pruned = optuna.create_study(direction="maximize", pruner=optuna.pruners.ThresholdPruner(lower=1e9))
    pruning = engine_loop._observer(pruned.ask(), True, unlimited, lambda: None, False, Growth())
    assert pruning is not None and not pruning("overwrite", 11, None) and pruning("overwrite", 1, 10.0)


def test_only_a_study_maximizing_ops_per_sec_on_runs_of_one_size_cuts_drains():
    """The floor is half rocksdb-default's ops/s in the search; none for another objective, for --fidelity's
    rungs (runs of other sizes), or before the defaults have a complete run."""
    def parts(objective: str = "throughput", rungs: tuple[str, ...] = ()) -> SimpleNamespace:
        return SimpleNamespace(score=SimpleNamespace(objective=objective), rungs=rungs)

    def store(record: BaselineRecord | None) -> SimpleNamespace:
        return SimpleNamespace(baseline=lambda name: record if name == "rocksdb-default" else None)

    ran = BaselineRecord("rocksdb-default", state="COMPLETE", metrics={"ops_per_sec": 1000.0})
    assert engine_loop._hopeless(parts(), store(ran)) == 500.0
    assert engine_loop._hopeless(parts("p99_us:min"), store(ran)) is None
    assert engine_loop._hopeless(parts(rungs=("1/8",)), store(ran)) is None
    assert engine_loop._hopeless(parts(), store(None)) is None
    assert engine_loop._hopeless(parts(), store(BaselineRecord("rocksdb-default", state="FAIL", reason="oom"))) is None


def test_a_phases_report_gone_quiet_hands_each_second_of_its_drain_to_the_observer(tmp_path, monkeypatch):
    """db_bench's reporter writes a line each second while the operations run and stops with them: once none
    has come for 2 s, each further second of the phase goes to the observer as None, until it says stop."""
    clock = [100.0]
    monkeypatch.setattr(runner_module.time, "monotonic", lambda: clock[0])
    report, seen = tmp_path / "overwrite.report.csv", []
    report.write_text("secs_elapsed,interval_qps\n1,500\n2,700\n")
    watch = runner_module._ReportWatch("overwrite", report, lambda _, second, qps: seen.append((second, qps)) or second == 6)
    assert watch.poll() is None and seen == [(1, 500.0), (2, 700.0)]
    clock[0] += 1.9
    assert watch.poll() is None and len(seen) == 2  # 1.9 s without a line: the operations may still run
    clock[0] += 0.6
    assert watch.poll() is None and seen[2:] == [(3, None), (4, None)]
    clock[0] += 2.0
    assert watch.poll() == 6 and seen[4:] == [(5, None), (6, None)]


@pytest.mark.dbbench
def test_a_budget_alone_runs_as_many_trials_as_fit(tmp_path):
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--budget", "8s", "--sampler", "random",
            "--seed", "1", "--study", "budget", "--out", str(tmp_path / "o"), "--json"]
    r = tuner(*args)
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    spent = summary.machine_seconds
    assert summary.budget_seconds == 8.0 and spent.total <= 8.0 + 2.0  # at most one run's overshoot
    assert summary.trials.complete >= 2 and spent.baselines > 0 and spent.trials > 0
    assert "of the 8s budget spent" in r.stderr
    again = tuner(*args)  # the budget is spent: a resume measures nothing more, re-validation included
    assert again.returncode == 0, again.stderr
    assert printed_summary(again).machine_seconds == spent


@pytest.mark.dbbench
def test_a_budget_sizes_the_startup_once_the_baselines_ran_and_every_trial_says_how_it_was_chosen(tmp_path):
    r = tuner(*fast(["tune", "--workload", "fillrandom", "--scale", str(TINY), "--budget", "10s", "--sampler", "tpe",
                     "--seed", "1", "--study", "startup", "--out", str(tmp_path / "o"), "--json"]))
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    startup = summary.startup
    assert startup is not None and startup.expected_trials is not None and summary.best is not None
    assert startup.size == startup_size(startup.expected_trials)  # what the budget allows, not 40 trials
    assert f"proposes after {startup.size} trials" in r.stderr
    trials = optuna.load_study(study_name="startup", storage=f"sqlite:///{tmp_path / 'o' / 'study.db'}").trials
    # what the start-up counts (tuner.samplers._startup.fills_startup) before the model's first proposal: trials
    # that ran, as --trials counts them; a rejected proposal never ran (its neighbour runs in its place)
    first_model = next(t.number for t in trials if TrialRecord.of(t).provenance == MODEL)
    ran = [TrialRecord.of(t).provenance for t in trials[:first_model]
           if TrialRecord.of(t).outcome in ("complete", "failed", "pruned")]
    seen = [(t.number, t.state.name, TrialRecord.of(t).outcome, TrialRecord.of(t).provenance) for t in trials]
    assert len(ran) == startup.size, seen
    assert ran[0] == "start" and RANDOM in ran
    assert set(ran) <= {"start", RANDOM, NEIGHBOUR}
    complete = [TrialRecord.of(t).provenance for t in trials if TrialRecord.of(t).outcome == "complete"]
    assert summary.provenance == {k: complete.count(k) for k in set(complete)}
    assert summary.best.provenance in complete
    when = summary.when  # the trials' first start and last end, from the storage
    assert when is not None and when.first_trial_started is not None and when.last_trial_ended is not None
    assert when.first_trial_started < when.last_trial_ended and when.last_trial_ended.endswith(" UTC")
    assert f"chosen as: {summary.best.provenance} (the trials counted: " in closing_table(summary)


def test_successive_halving_keeps_the_best_third_of_a_rung():
    assert rungs.promoted(5.0, []) and rungs.promoted(5.0, [4.0, 1.0]) and not rungs.promoted(4.0, [5.0])
    rivals = [float(v) for v in range(1, 9)]  # 9 values: the best 3 go on
    assert rungs.promoted(6.5, rivals) and not rungs.promoted(5.5, rivals)


def test_a_pruned_configuration_is_estimated_at_the_full_size_from_the_audited_ratio():
    """Synthetic audit: the full size runs 3x, 4x and 10x the rung; the estimate scales by the median, 4x."""
    assert rungs.full_size_estimate(50.0, [(10.0, 30.0), (20.0, 80.0), (5.0, 50.0)]) == pytest.approx(200.0)
    assert rungs.full_size_estimate(50.0, []) is None  # nothing audited at this rung yet
    assert rungs.full_size_estimate(0.0, [(10.0, 30.0)]) is None  # a failed rung run says nothing


def test_a_rung_that_ranks_unlike_the_full_size_is_skipped_and_one_that_agrees_kept():
    full = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    agrees = list(zip([1.0, 2.0, 3.0, 4.0, 6.0, 5.0], full))  # one swap in 15 pairs: tau = 13/15
    reversed_ = list(zip([6.0, 5.0, 4.0, 3.0, 1.0, 2.0], full))  # tau = -13/15
    both = rungs.agreement([reversed_, agrees], [0.125, 0.5])
    assert [r.agrees for r in both.rungs] == [False, True]
    assert both.rungs[1].kendall_tau == pytest.approx(13 / 15)
    assert both.start_rung == 1 and both.start_scale == 0.5
    # a lower rung that agrees while a higher one does not gives no way round the higher one
    assert rungs.agreement([agrees, reversed_], [0.125, 0.5]).start_rung == 2
    assert rungs.agreement([agrees, agrees], [0.125, 0.5]).start_rung == 0
    none = rungs.agreement([reversed_], [0.25])
    assert none.start_rung == 1 and none.start_scale == 1.0
    assert "moves to the full size" in rungs.describe(none.updated(audited=list(range(6))))
    # fewer than three pairs, or all tied: no evidence that the rung agrees
    assert not rungs.agreement([agrees[:2]], [0.25]).rungs[0].agrees
    assert not rungs.agreement([[(1.0, v) for v in full]], [0.25]).rungs[0].agrees


@pytest.mark.dbbench
def test_fidelity_audits_then_climbs_rungs_where_they_agree_with_the_full_size(tmp_path):
    out = tmp_path / "o"
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "12", "--fidelity", "0.25,1",
              "--sampler", "random", "--seed", "3", "--no-baselines", "--study", "rungs", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.best is not None
    assert summary.best.log_dir.endswith("rung-1")  # reported figures are at full size
    trials = sorted(optuna.load_study(study_name="rungs", storage=f"sqlite:///{out / 'study.db'}").trials,
                    key=lambda t: t.number)
    audit = [t for t in trials if TrialRecord.of(t).audit]
    assert len(audit) == rungs.AUDITED and all(t.state == TrialState.COMPLETE for t in audit)
    assert all((out / "trials" / f"{t.number:04d}" / "rung-0" / "load.stdout").exists() for t in audit)
    decided = summary.fidelity_agreement
    assert decided is not None
    assert decided.audited == [t.number for t in audit] and decided.rungs[0].n == rungs.AUDITED
    small = [TrialRecord.of(t).rungs[0].ops_per_sec for t in audit]
    full = [TrialRecord.of(t).metric("ops_per_sec") for t in audit]
    tau = decided.rungs[0].kendall_tau
    assert tau == pytest.approx(scipy.stats.kendalltau(small, full)[0])
    assert decided.rungs[0].agrees == (tau >= rungs.AGREEMENT)
    after = [t for t in trials if t.number > max(decided.audited) and TrialRecord.of(t).outcome != "rejected"]
    assert after, "the study went on after the audit"
    for t in after:  # where the judgement sent them: rung 0 when it agrees, else the full size only
        ran_small = (out / "trials" / f"{t.number:04d}" / "rung-0").exists()
        assert ran_small == (decided.start_rung == 0), (t.number, decided)
    assert summary.trials.pruned == sum(t.state == TrialState.PRUNED for t in trials)
    ratio = statistics.median(f / s for s, f in zip(small, full))
    for t in trials:  # a pruned configuration: the model learns its full-size estimate
        if t.state == TrialState.PRUNED:
            r = TrialRecord.of(t)
            assert r.value_estimate == pytest.approx((r.rungs[0].ops_per_sec or 0) * ratio)
    if decided.start_rung == 1:
        assert summary.trials.pruned == 0
    again = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "8", "--fidelity", "0.5,1",
                  "--sampler", "random", "--seed", "3", "--no-baselines", "--study", "rungs", "--out", str(out))
    assert again.returncode == 2 and "--fidelity: study" in again.stderr


@pytest.mark.parametrize("args, message", [
    (["--fidelity", "0.5,0.25"], "--fidelity: increasing fractions"),
    (["--fidelity", "0.5"], "--fidelity: increasing fractions"),
    (["--fidelity", "0.5,1", "--pruner", "median"], "--fidelity: prunes by its own rungs"),
    (["--fidelity", "0.5,1", "--objective", "multi"], "--fidelity: needs --objective throughput"),
    (["--budget", "soon"], "--budget: not a duration"),
    (["--revalidation-time", "soon"], "--revalidation-time: not a duration"),
    (["--revalidation-time", "0s"], "--revalidation-time: must be > 0"),
    (["--revalidation-time", "5m", "--budget", "20m"], "--revalidation-time: only without --budget"),
])
def test_bad_efficiency_flags(tmp_path, args, message):
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "2", "--out", str(tmp_path / "o"),
              *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_a_best_that_failed_every_revalidation_run_is_reported_from_its_single_runs():
    """A re-validation whose runs all failed (e.g. killed out of memory at the target) leaves the
    comparison to the search's single runs instead of failing the study's report."""
    from tuner.outputs._report import comparison

    baselines = [{"name": "rocksdb-default", "metrics": {"ops_per_sec": 100.0}}]
    best = {"trial": 2, "metrics": {"ops_per_sec": 150.0}}
    failed = {"best": "trial 2", "configurations": [
        {"name": "rocksdb-default", "trial": None, "ops_per_sec": [], "failed": "out of memory"},
        {"name": "trial 2", "trial": 2, "ops_per_sec": [], "failed": "out of memory"}]}
    rows = comparison([BaselineRun.from_dict(b) for b in baselines], BestTrial.from_dict(best),
                      Revalidation.from_dict(failed))
    assert [(r["name"], r["vs_default"]) for r in rows] == [("rocksdb-default", 1.0), ("best (trial 2)", 1.5)]


def test_the_cost_guard_keeps_costly_trials_from_the_finalists_unless_lifted():
    """Synthetic trials beside rocksdb-default's run (disk 100, write amp 2): the fastest writes 3x the
    bytes, so the finalists come from the others; --any-cost (guard off) lets it in; no default run, no guard."""
    def trial(number: int, ops: float, write_amp: float) -> optuna.trial.FrozenTrial:
        t = create_trial(state=TrialState.COMPLETE, value=ops, params={"level": number + 1},
                         distributions={"level": SPACE["level"]},
                         user_attrs=trial_attrs(outcome="complete", metrics={"ops_per_sec": ops, "db_size_bytes": 100,
                                                                               "write_amp": write_amp}))
        t.number = number
        return t

    trials = (trial(0, 300.0, 6.0), trial(1, 200.0, 2.4), trial(2, 150.0, 1.9))
    default = BaselineRecord(name="rocksdb-default", flags={}, state="COMPLETE",
                             metrics={"ops_per_sec": 100.0, "db_size_bytes": 100, "write_amp": 2.0})
    snapshot = SimpleNamespace(trials=trials, baselines=[default])
    notes: list[str] = []
    guarded = Revalidator(None, None, notes.append, Path("."))
    within, kept_out = guarded._affordable(snapshot)
    assert [t.number for t in within] == [1, 2] and kept_out == 1
    assert notes == ["re-validation: 1 of 3 trials cost more than rocksdb-default beyond the cost guard (disk +10 %, "
                     "write amp +25 %, write stalls +0.1 s) in their search runs: not finalists (--any-cost lifts the "
                     "guard)"]
    assert Revalidator(None, None, notes.append, Path("."), guard=False)._affordable(snapshot) == (trials, 0)
    assert guarded._affordable(SimpleNamespace(trials=trials, baselines=[])) == (trials, 0)


@pytest.mark.parametrize("guard, bound, winner, passed_over", [
    (True, None, "trial 1", (["trial 0"], [])), (False, None, "trial 0", ([], [])),
    (False, 9.0, "trial 1", ([], ["trial 0"])), (True, 8.0, "trial 1", (["trial 0"], ["trial 0", "trial 1"]))])
def test_a_finalist_that_stalls_in_the_selections_rounds_does_not_win_them(tmp_path, guard, bound, winner,
                                                                          passed_over):
    """Synthetic finalists beside rocksdb-default: trial 0 is the fastest in the choosing rounds but stalls
    writes 0.9 s a run there (the defaults never stall) and runs a P99 of 10 us, trial 1 is within the cost
    guard at 9 us: trial 1 wins them, and goes on to the gain's rounds; --any-cost (guard off) lets the
    fastest win, unless the user's --max-p99-us 9 keeps it out; when every finalist breaks the bound, the
    cost guard still chooses among them."""
    attrs: dict[str, object] = {}
    store = SimpleNamespace(attr=lambda name, default=None: attrs.get(name, default), set_attr=attrs.__setitem__)
    runs = {"0": (130.0, 900_000.0, 10.0), "1": (115.0, 0.0, 9.0), None: (100.0, 0.0, 7.0)}

    def measure(what, config, log_dir, workload):
        ops, stalls, p99 = runs[config.flags().get("level")]
        return SimpleNamespace(metrics={"ops_per_sec": ops, "stall_micros": stalls, "p99_us": p99, "wall_seconds": 1.0})

    def trial(number: int, ops: float) -> optuna.trial.FrozenTrial:
        t = create_trial(state=TrialState.COMPLETE, value=ops, params={"level": number + 1},
                         distributions={"level": SPACE["level"]},
                         user_attrs=trial_attrs(outcome="complete", metrics={"ops_per_sec": ops}))
        t.number = number
        return t

    space = SimpleNamespace(config=lambda params: Config.of({"level": str(params["level"] - 1)}),
                            distance=lambda a, b: 1.0)
    snapshot = SimpleNamespace(trials=(trial(0, 140.0), trial(1, 120.0)), baselines=[], space=space,
                               directions=("maximize",), weights=None, out=tmp_path)
    notes: list[str] = []
    reval = Revalidator(store, measure, notes.append, tmp_path, score=Score(max_p99_us=bound), guard=guard).revalidate(
        snapshot, Plan(k=2, select_rounds=2, min_rounds=2, max_rounds=2, ablation=False),
        Reference("rocksdb-default", {"level": None}))
    assert reval is not None and reval.select is not None
    assert (reval.select.winner, (reval.select.costly, reval.select.breaking), reval.best) == (winner, passed_over, winner)
    said = [n for n in notes if "led the selection's rounds" in n]
    costly_note = ["re-validation: trial 0 led the selection's rounds but cost more than rocksdb-default in them beyond "
                   "the cost guard (write stalls): the best finalist within it goes on (--any-cost lifts the guard)"]
    assert said == {(True, None): costly_note, (True, 8.0): costly_note,
                    (False, 9.0): ["re-validation: trial 0 led the selection's rounds but its medians there break your "
                                   "bound p99_us <= 9: the best finalist within it goes on"]}.get((guard, bound), [])


def test_when_the_cost_guard_keeps_every_trial_out_the_defaults_are_the_answer():
    """Every synthetic trial writes 3x rocksdb-default's bytes: no finalist is re-measured, the
    re-validation says how many the guard kept out, and the answer keeps the defaults, saying why."""
    trial = create_trial(state=TrialState.COMPLETE, value=300.0, params={"level": 1}, distributions={"level": SPACE["level"]},
                         user_attrs=trial_attrs(outcome="complete", metrics={"ops_per_sec": 300.0, "write_amp": 6.0}))
    default = BaselineRecord(name="rocksdb-default", flags={}, state="COMPLETE",
                             metrics={"ops_per_sec": 100.0, "write_amp": 2.0})
    snapshot = SimpleNamespace(trials=(trial,), baselines=[default], space=SimpleNamespace(distance=None),
                               directions=("maximize",), weights=None)
    notes: list[str] = []
    reval = Revalidator(None, None, notes.append, Path(".")).revalidate(
        snapshot, Plan(k=2, select_rounds=1, min_rounds=2, max_rounds=2), Reference("rocksdb-default", {}))
    assert reval is not None and reval.best is None and reval.kept_out == 1
    assert notes[-1].endswith("none is left to re-validate: the answer is rocksdb-default")
    summary = Summary.from_dict({"objective_metric": "ops_per_sec", "best": {"trial": 0}, "revalidation": reval.to_dict()})
    found = answer(summary)
    assert found is not None and (found.recommend, found.name) == ("reference", "rocksdb-default")
    assert found.why.startswith("every trial's search run cost more than rocksdb-default's beyond the cost guard")
