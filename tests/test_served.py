"""tune --serve-rate: after the re-validation, the answer and rocksdb-default served open loop at a rate
(tuner.engine._served), what a service at that rate would see of a throughput study's answer; and tune
--slo on such a study: their capacities, searched open loop on the same served runs (tuner.engine._capacity)."""

from __future__ import annotations

import math
import re
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from scipy import stats as scipy_stats

from objectives.defaults import LIBRARY
from objectives.rates import Capacity, Rate, RateRun
from tests.conftest import leftovers
from tests.test_open_loop import _Store
from tuner.backends import BACKENDS, Config, Found, RunFailed, Setup
from tuner.backends._rate import driver_beside
from tuner.engine._capacity import capacities, search_start
from tuner.engine._prepare import check_backend
from tuner.engine._served import finalists_served, serve, serve_rate
from tuner.model import TuneConfig, UsageError
from tuner.observers._mlflow import _capacity_metrics, _served_metrics
from tuner.outputs._answer import capacity_line, served_line
from tuner.stats import paired_ratio
from tuner.summary import CapacityOf, CapacityProbe, CapacityReport, Ratio, Revalidation, ServedReport, Summary


def _stage(tmp_path: Path, rounds: int, serve_at: float | str | None = 40_000.0, start: str | None = None,
           ops: float | None = None) -> SimpleNamespace:
    """What serve() reads of a study: rocksdb-default and trial 5 (the named ``start`` it ran as, if any),
    --serve-rate, its rounds and length, and the re-validation's median ops/s of the defaults (``ops``)."""
    revalidation = SimpleNamespace(serve_rate=serve_at, serve_rounds=rounds, serve_duration=60.0)
    best = SimpleNamespace(number=5, params={"x": 1}, user_attrs={"enqueued": start} if start else {})
    reval = Revalidation.from_dict({"configurations": [{"name": "rocksdb-default", "median_ops_per_sec": ops}]}) \
        if ops else None
    return SimpleNamespace(
        parts=SimpleNamespace(config=SimpleNamespace(revalidation=revalidation, search=SimpleNamespace(seed=1, any_cost=False)),
                              out=tmp_path, space=SimpleNamespace(config=lambda params: Config.of({"x": params["x"]}),
                                                    config_of=Config.of)),
        snapshot=SimpleNamespace(baselines=[SimpleNamespace(name="rocksdb-default", flags={}, metrics={})],
                                 best=lambda: best, revalidation=reval),
        bus=SimpleNamespace(note=lambda line: None, study_stopped=lambda *a: None), store=_Store())


def test_served_rounds_pair_the_answers_tail_with_the_defaults_and_resume_where_they_stopped(tmp_path):
    """Synthetic runs with a known answer: the defaults' P99.99 is 10, 12 and 9 ms in rounds 1-3 (the
    host's drift), trial 5's 2.1, 1.92 and 2.11 times that: the paired ratio is their geometric mean with
    an interval above 1, and the line says the answer's tail is worse. A Ctrl-C in round 2 loses nothing
    measured: the resume runs only what is missing, each run logged in its own round's directory."""
    truth = {"rocksdb-default": [10_000.0, 12_000.0, 9_000.0], "trial 5": [31_000.0, 37_000.0, 28_000.0]}
    calls: list[tuple[str, str]] = []
    stop_at = [3]
    rates: list[tuple[float, float]] = []

    def at_rate(rate, duration):
        rates.append((rate, duration))

        def run(config, log_dir):
            flags = config.flags()
            name = "trial 5" if flags else "rocksdb-default"
            if len(calls) == stop_at[0]:
                raise KeyboardInterrupt
            r = sum(1 for n, _ in calls if n == name)
            calls.append((name, f"{log_dir.parent.name}/{log_dir.name}"))
            return {"delivered": 1.0, "p99.9_us": 2_000.0, "p99.99_us": truth[name][r], "stall_micros": 0.0}
        return run

    study = _stage(tmp_path, 3)
    with pytest.raises(KeyboardInterrupt):
        serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    stop_at[0] = -1
    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    assert rates == [(40_000.0, 60.0)] * 2 and len(calls) == 6
    assert sorted(where for _, where in calls) == sorted(f"{n.replace(' ', '-')}/round-{r}" for n in truth
                                                         for r in (1, 2, 3))
    report = study.store.kept["served"]
    assert report.names == ["rocksdb-default", "trial 5"] and len(report.runs) == 6
    assert report.median("trial 5", "p99.99_us") == 31_000.0
    ratio = report.vs_default["p99.99_us"]
    expected = math.exp(statistics.fmean(math.log(a / b) for a, b in zip(truth["trial 5"], truth["rocksdb-default"])))
    assert ratio.n == 3 and ratio.ratio == pytest.approx(expected) and ratio.ci95[0] > 1
    assert report.vs_default["stall_micros"].verdict == "not measured"  # no stalls in either: no ratio
    line = served_line(Summary.from_dict({"served": report.to_dict()}))
    assert line is not None and line.startswith("served at 40,000 writes/s, open loop (--serve-rate 40000; 60 s runs")
    assert "rocksdb-default delivered 100.0%, P99.9 2.0 ms, P99.99 10.0 ms, stalls 0.00 s" in line
    assert f"; the answer's P99.9 1.00x (95 % CI 1.00-1.00, p = 1, 3 paired rounds) and P99.99 {expected:.2f}x (95 % CI " \
        in line
    assert "medians of 3 paired rounds" in line and line.endswith(
        "its tail is WORSE than the defaults' (its median more than 3x theirs)")
    before = len(calls)
    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)  # all kept: nothing runs
    assert len(calls) == before and len(rates) == 2


@pytest.mark.parametrize("tail, worse", [(40_000.0, True), (30_000.0, False)])
def test_one_round_says_worse_on_the_guards_rule(tail, worse):
    """With --serve-rounds 1 there is no paired ratio, but the served line says WORSE on the guard's rule all the
    same: the answer's P99.99 more than 3x the defaults' (10 ms here) and by more than 1 ms."""
    report = {"rate": 40_000.0, "how": "--serve-rate 40000", "duration": 60.0, "rounds": 1,
              "names": ["rocksdb-default", "trial 5"],
              "runs": [{"name": "rocksdb-default", "round": 1, "metrics": {"p99.99_us": 10_000.0}},
                       {"name": "trial 5", "round": 1, "metrics": {"p99.99_us": tail}}]}
    line = served_line(Summary.from_dict({"served": report})) or ""
    assert "one run each" in line
    assert line.endswith("; at this rate its tail is WORSE than the defaults' (its median more than 3x theirs)") \
        is worse and ("WORSE" in line) is worse


def test_auto_serves_at_a_share_of_the_defaults_sustained_ops_and_a_failed_run_is_said(tmp_path):
    """--serve-rate auto: 0.4 x the defaults' median ops/s in the re-validation, to two digits; a run that
    fails is kept with its reason, the study goes on."""
    study = _stage(tmp_path, 1, serve_at="auto", ops=142_345.0)
    assert serve_rate("auto", study.snapshot) == (57_000.0, "--serve-rate auto: 0.4 x rocksdb-default's 142,345 ops/s")

    def at_rate(rate, duration):
        def run(config, log_dir):
            flags = config.flags()
            if flags:
                raise RunFailed("phase run: killed by SIGKILL (out of memory)")
            return {"p99.99_us": 5_000.0}
        return run

    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    report = study.store.kept["served"]
    assert report.rate == 57_000.0 and report.vs_default == {}
    line = served_line(Summary.from_dict({"served": report.to_dict()})) or ""
    assert "trial 5 no figures (1 of 1 runs failed: phase run: killed by SIGKILL (out of memory))" in line
    assert "one run each" in line and "WORSE" not in line
    with pytest.raises(RunFailed, match="--serve-rate auto: rocksdb-default's ops/s was not measured"):
        serve_rate("auto", _stage(tmp_path, 1).snapshot)


def test_a_best_that_is_the_defaults_start_is_served_once(tmp_path):
    study = _stage(tmp_path, 1, start="rocksdb-default")
    served: list[dict] = []

    def at_rate(rate, duration):
        def run(config, log_dir):
            flags = config.flags()
            served.append(flags)
            return {"p99.99_us": 5_000.0}
        return run

    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    assert served == [{}] and study.store.kept["served"].names == ["rocksdb-default"]


class _Attrs(_Store):
    """The study storage's attributes too (the re-validation's rounds), in memory."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, object] = {}

    def attr(self, name: str, default: object = None) -> object:
        return self.attrs.get(name, default)

    def set_attr(self, name: str, value: object) -> None:
        self.attrs[name] = value


def _selection(tmp_path: Path, tails: dict[str, float], guard: bool = True) -> SimpleNamespace:
    """Synthetic finalists beside rocksdb-default (P99.99 10 ms at the rate in every round): trial 0 is the
    fastest in the choosing rounds, then trial 1, then trial 2; their P99.99 at the rate ``tails``. The
    re-validation with the served guard of --serve-rate auto (0.4 x the defaults' 100 ops/s in the choosing rounds)."""
    from optuna.trial import TrialState, create_trial

    from objectives.scores import Score
    from tests.test_efficiency import SPACE
    from tuner.engine._plan import Plan, Reference
    from tuner.engine._revalidation import Revalidator
    from tuner.engine._served import finalist_server
    from tuner.trials import BaselineRecord
    from tuner.trials import attrs as trial_attrs

    ops = {"0": 130.0, "1": 120.0, "2": 115.0, None: 100.0}

    def measure(what, config, log_dir, workload):
        flags = config.flags()
        return SimpleNamespace(metrics={"ops_per_sec": ops[flags.get("level")], "wall_seconds": 1.0})

    served: list[str] = []

    def at_rate(rate, duration):
        assert (rate, duration) == (40.0, 60.0)

        def run(config, log_dir):
            flags = config.flags()
            level = flags.get("level")
            served.append(f"{log_dir.parent.parent.name}/{log_dir.parent.name}/{log_dir.name}")
            return {"delivered": 1.0, "p99.99_us": tails[level] if level else 10_000.0, "stall_micros": 0.0}
        return run

    def trial(number: int) -> object:
        t = create_trial(state=TrialState.COMPLETE, value=ops[str(number)], params={"level": number + 1},
                         distributions={"level": SPACE["level"]},
                         user_attrs=trial_attrs(outcome="complete", metrics={"ops_per_sec": ops[str(number)]}))
        t.number = number
        return t

    study = _stage(tmp_path, 3, serve_at="auto")
    store: Any = _Attrs()  # the study storage's, bus's and snapshot's parts these stages read
    space = SimpleNamespace(config=lambda params: Config.of({"level": str(params["level"] - 1)}), config_of=Config.of,
                            distance=lambda a, b: 1.0)
    study.parts.space = space
    default = BaselineRecord(name="rocksdb-default", flags={}, state="COMPLETE", metrics={"ops_per_sec": 100.0})
    snapshot: Any = SimpleNamespace(trials=(trial(0), trial(1), trial(2)), baselines=[default], space=space,
                               directions=("maximize",), weights=None, out=tmp_path, revalidation=None)
    notes: list[str] = []
    bus: Any = SimpleNamespace(note=notes.append, study_stopped=lambda *a: None)
    from tuner.engine._engine import Engine

    chosen_from: Any = SimpleNamespace(store=store)  # auto's rate: the defaults' median in the choosing rounds, 100 ops/s
    serve_one = finalist_server(study.parts, store, bus, snapshot, at_rate, lambda: Engine._select_ops(chosen_from))
    reval = Revalidator(store, measure, notes.append, tmp_path, score=Score(), guard=guard).revalidate(
        snapshot, Plan(k=3, select_rounds=2, min_rounds=2, max_rounds=2, ablation=False),
        Reference("rocksdb-default", cast(Any, {"level": None})), serve_one)
    assert reval is not None and reval.select is not None
    return SimpleNamespace(reval=reval, served=served, store=store, notes=notes, bus=bus, parts=study.parts,
                           snapshot=snapshot, at_rate=at_rate)


@pytest.mark.parametrize(("tails", "winner", "passed_over"), [
    ({"0": 120_000.0, "1": 35_000.0, "2": 15_000.0}, "trial 2", ["trial 0", "trial 1"]),
    ({"0": 29_000.0, "1": 35_000.0, "2": 15_000.0}, "trial 0", []),
    ({"0": 120_000.0, "1": 35_000.0, "2": 31_000.0}, "trial 0", ["trial 0", "trial 1", "trial 2"]),
])
def test_a_finalist_that_serves_a_worse_tail_does_not_win_the_selection(tmp_path, tails, winner, passed_over):
    """The finalists are served in their turn, best first, beside the defaults, until one serves within the
    served guard (a median at most 3x theirs): that one wins and the served stage at the end measures nothing
    more; when none does, the fastest goes on (the answer's guard then keeps the defaults)."""
    found = _selection(tmp_path, tails)
    reval = found.reval
    assert (reval.select.winner, reval.best, reval.select.served_out) == (winner, winner, passed_over)
    order = ["trial 0", "trial 1", "trial 2"]
    tried = order[:len(passed_over) + 1] if len(passed_over) < 3 else order
    assert sorted(found.served) == sorted(f"{t.replace(' ', '-')}/{n.replace(' ', '-')}/round-{r}" for t in tried
                                          for n in ("rocksdb-default", t) for r in (1, 2, 3))
    assert set(found.store.kept) == {f"served:{t}" for t in tried}
    kept = finalists_served(found.parts, found.store, reval)  # the summary's served_guard: each finalist's, as served
    assert [r.names for r in kept] == [["rocksdb-default", t] for t in tried]
    logged = {m.key for m in _served_metrics(kept[-1], f"served_guard/{tried[-1]}")}
    assert f"served_guard/{tried[-1]}/{tried[-1]}/p99.99_us" in logged
    said = [n for n in found.notes if "beyond the served guard" in n]
    assert len(said) == len(passed_over)
    if passed_over:
        assert said[0].startswith("re-validation: trial 0 served at 40 writes/s beyond the served guard: P99.99 120.0 "
                                  "ms against 10.0 ms (12.00x), medians of 3 paired rounds, beyond in 3 of them: ")
        assert said[-1].endswith("the next finalist is served" if len(passed_over) < 3 else
                                 "no finalist served within it; the best goes on, and the answer keeps rocksdb-default "
                                 "(--any-cost lifts the guard)")
    before = len(found.served)  # the stage at the end: the winner's report is kept, nothing runs again
    number = int(winner.split()[1])
    best = SimpleNamespace(number=number, params={"level": number + 1}, user_attrs={})
    serve(found.parts, found.store, found.bus, SimpleNamespace(baselines=found.snapshot.baselines, best=lambda: best,
                                                               revalidation=None), found.at_rate)
    assert len(found.served) == before and found.store.kept["served"] == found.store.kept[f"served:{winner}"]


def test_without_the_cost_guard_the_selection_serves_no_finalist(tmp_path):
    """--any-cost lifts the served guard with the others: the fastest finalist wins, though it serves a tail 12x
    the defaults', and nothing is served before the stage at the end."""
    found = _selection(tmp_path, {"0": 120_000.0, "1": 15_000.0, "2": 15_000.0}, guard=False)
    assert (found.reval.select.winner, found.reval.select.served_out, found.served) == ("trial 0", [], [])
    found.store.keep("served:trial 0", ServedReport(rate=70.0, duration=60.0, rounds=3,  # left by an earlier run
                                                    names=["rocksdb-default", "trial 0"]))
    found.parts.config.search.any_cost = True
    assert finalists_served(found.parts, found.store, found.reval) == ()


@pytest.mark.parametrize(("changes", "error"), [
    ({"backend": "rate", "rate": 2000.0, "serve_rate": 1000.0},
     "--serve-rate: a study at --rate runs every configuration at its rate"),
    ({"backend": "command", "command": "true {options} {db}", "serve_rate": "auto"},
     "--serve-rate: the command backend runs nothing at a rate"),
    ({"serve_rounds": 4}, "--serve-rounds: goes with --serve-rate"),
    ({"serve_duration": 10.0}, "--serve-duration: goes with --serve-rate"),
    ({"serve_rate": -5.0}, "--serve-rate: writes per second (> 0) or auto, got -5.0"),
    ({"serve_rate": 1000.0, "serve_rounds": 0}, "--serve-rounds / --serve-duration: 1 or more rounds"),
])
def test_serve_rate_is_refused_in_one_line_where_it_cannot_run(changes, error):
    with pytest.raises(UsageError, match=error.replace("(", r"\(").replace(")", r"\)")):
        check_backend(TuneConfig(**changes))


def test_no_driver_beside_the_db_bench_names_the_flag_that_needs_it(tmp_path):
    with pytest.raises(UsageError, match="^--serve-rate: no open_loop beside "):
        driver_beside(str(tmp_path / "db_bench"), "--serve-rate")
    assert BACKENDS["db_bench"].serves and not BACKENDS["rate"].serves and not BACKENDS["command"].serves


@pytest.mark.release_build
def test_a_throughput_study_serves_its_answer_and_the_defaults_at_a_rate(tmp_path, work_dir):
    """A db_bench study with --serve-rate: after the choosing rounds of the re-validation, its finalists in turn
    and rocksdb-default beside each run open loop at the rate on a DB of the target's data (the driver beside
    the release db_bench), logged per finalist and round, until one serves within the served guard; that one
    wins, and the stage at the end keeps its runs; the summary, the closing line and the work directory say so."""
    out, space = tmp_path / "out", tmp_path / "cache.toml"
    space.write_text('name = "cache"\n[parameters.cache_size]\ntype = "int"\nlow = "4 * MiB"\nhigh = "64 * MiB"\n')
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--workload", "fillrandom", "--scale", "0.05",
                        "--space", str(space),  # what it writes and leaves on disk is the defaults': within the guard
                        "--trials", "2", "--no-starts", "--sampler", "random", "--seed", "3", "--revalidate", "2",
                        "--revalidate-rounds", "2", "--revalidate-max-rounds", "2", "--no-ablation",
                        "--no-drain", "--serve-rate", "2000", "--serve-duration", "2s", "--serve-rounds", "1",
                        "--no-mlflow", "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    served, reval = summary.served, summary.revalidation
    assert reval is not None and reval.select is not None and summary.best is not None
    winner = reval.select.winner
    assert winner == reval.best and (winner not in reval.select.served_out or
                                     len(reval.select.served_out) == len(reval.select.configurations) - 1)
    assert served is not None and served.rate == 2000 and served.duration == 2
    assert served.names == ["rocksdb-default", winner]
    assert all(run.failed is None and run.metrics["p99.99_us"] > 0 and run.metrics["delivered"] > 0.5
               for run in served.runs)
    tried = {p.name for p in (out / "served").iterdir()} - {"load"}  # the served DB's load has its own logs
    assert tried == {f"{t.replace(' ', '-')}" for t in [*reval.select.served_out, winner]}
    guard = [*reval.select.served_out, *([winner] if winner not in reval.select.served_out else [])]
    assert [s.names for s in summary.served_guard] == [["rocksdb-default", t] for t in guard]
    winner_dir = out / "served" / winner.replace(" ", "-")
    assert {p.name for p in winner_dir.iterdir()} == {"rocksdb-default", winner.replace(" ", "-")}
    command = (winner_dir / winner.replace(" ", "-") / "round-1" / "command.command").read_text()
    assert " run " in command and "--rate 2000" in command
    assert "served at 2,000 writes/s, open loop (--serve-rate 2000; 2 s runs" in r.stdout
    assert leftovers(work_dir) == []


def _capacity_study(tmp_path: Path, rounds: int, serve_at: float | str | None = None,
                    ops: float | None = 142_345.0) -> SimpleNamespace:
    """What capacities() reads of a db_bench study with --slo (no --rate): rocksdb-default and trial 5, its
    db_bench workload (which must not reach the capacity searches), --serve-rate and --serve-duration, and
    the re-validation's median ops/s of the defaults (``ops``)."""
    study = _stage(tmp_path, 1, serve_at, ops=ops)
    study.parts.config.revalidation.serve_duration = 5.0
    study.parts.config.measurement = SimpleNamespace(slo="p99.9<=50ms", capacity_rounds=rounds, rate=None, read_rate=0.0)
    study.parts.workload, study.parts.plan = SimpleNamespace(name="fillrandom", duration=None), SimpleNamespace(workload=None)
    return study


def test_a_db_bench_studys_capacities_start_at_auto_pair_by_round_and_resume_where_they_stopped(tmp_path):
    """Synthetic searches with a known answer: rocksdb-default holds 90k and 110k ops/s in rounds 1 and 2,
    trial 5 120k and 150k. The searches start from auto (0.4 x the defaults' 142,345 ops/s in the
    re-validation: 57,000), round 2 near the geometric mean of round 1's capacities, every run 5 s
    (--serve-duration), never on the study's db_bench workload. A Ctrl-C in round 2 loses nothing measured;
    the resume measures only the missing search; a resume at another --serve-duration measures all again."""
    truth = {"rocksdb-default": [90_000.0, 110_000.0], "trial 5": [120_000.0, 150_000.0]}
    calls: list[tuple[str, float | None, object, str]] = []
    at: list[float] = []
    stop_at = [3]

    def capacity_at(start):
        at.append(start)

        def search(config, slo, log_dir, workload, say, last, held_before):
            flags = config.flags()
            name = "trial 5" if flags else "rocksdb-default"
            if len(calls) == stop_at[0]:
                raise KeyboardInterrupt
            r = sum(1 for c in calls if c[0] == name)
            calls.append((name, last, workload, log_dir.name))
            held = truth[name][r]
            return Capacity(slo, held, held * 1.1, ((held, RateRun({"delivered": 1.0, "p99.9_us": 9_000.0}, (), "")),
                                                    (held * 1.1, RateRun({"delivered": 0.9, "p99.9_us": 80_000.0},
                                                                         (), ""))))
        return search

    study = _capacity_study(tmp_path, 2)
    with pytest.raises(KeyboardInterrupt):
        capacities(study.parts, study.store, study.bus, study.snapshot, capacity_at)
    assert len(calls) == 3
    stop_at[0] = -1
    capacities(study.parts, study.store, study.bus, study.snapshot, capacity_at)
    assert len(calls) == 4 and at == [57_000.0, 57_000.0]
    assert all(workload is None for _, _, workload, _ in calls)
    shared = math.sqrt(truth["rocksdb-default"][0] * truth["trial 5"][0])
    assert {(n, d): last for n, last, _, d in calls} == {
        ("rocksdb-default", "rocksdb-default"): None, ("trial 5", "trial-5"): None,
        ("rocksdb-default", "round-2"): pytest.approx(shared), ("trial 5", "round-2"): pytest.approx(shared)}
    report = study.store.kept["capacity"]
    assert (report.start, report.duration, report.rounds) == (57_000.0, 5.0, 2)
    assert report.how == "auto: 0.4 x rocksdb-default's 142,345 ops/s"
    assert report.of("rocksdb-default").held_by_round == truth["rocksdb-default"]
    assert report.of("trial 5").held == statistics.median(truth["trial 5"])
    probes = report.of("trial 5").probes
    assert [p.offered for p in probes] == pytest.approx([120_000.0, 132_000.0, 150_000.0, 165_000.0])
    assert [(p.held, p.round) for p in probes] == [(True, 1), (False, 1), (True, 2), (False, 2)]
    ratio = report.vs_default["trial 5"]
    expected = math.exp(statistics.fmean(math.log(b / a) for a, b in zip(*truth.values())))
    assert ratio.n == 2 and ratio.ratio == pytest.approx(expected)
    line = capacity_line(Summary.from_dict({"capacity": report.to_dict()}))
    assert line is not None and line.startswith(
        "capacity at p99.9<=50ms (2 paired rounds, in each a search over offered rates, one 5 s run per rate, each "
        "run and its settle, the first round from 57,000 ops/s (auto: 0.4 x rocksdb-default's 142,345 ops/s)): ")
    assert f"trial 5 holds it up to 135,000 ops/s, the median of its rounds' (120,000, 150,000): {expected:.2f}x" in line
    capacities(study.parts, study.store, study.bus, study.snapshot, capacity_at)  # all kept: nothing runs
    assert len(calls) == 4 and len(at) == 2
    study.parts.config.revalidation.serve_duration = 10.0  # runs of another length: measured again
    calls.clear()
    capacities(study.parts, study.store, study.bus, study.snapshot, capacity_at)
    assert len(calls) == 4 and study.store.kept["capacity"].duration == 10.0


def test_a_db_bench_studys_capacities_start_at_a_given_serve_rate_and_a_failed_run_stops_the_stage(tmp_path):
    """--serve-rate 2000 is where the searches start; a run that fails (rocksdb-default's, second in round 1
    of seed 1) stops the stage, said, keeping the search measured before it (trial 5's); without the
    defaults' ops/s, auto says so and measures nothing."""
    study = _capacity_study(tmp_path, 1, serve_at=2000.0)
    notes: list[str] = []
    study.bus.note = notes.append
    assert search_start(study.parts, study.snapshot, None) == (2000.0, "--serve-rate 2000", False)

    def search(config, slo, log_dir, workload, say, last, held_before):
        flags = config.flags()
        if not flags:
            raise RunFailed("phase run: killed by SIGKILL (out of memory)")
        return Capacity(slo, 4000.0, 4400.0, ())

    capacities(study.parts, study.store, study.bus, study.snapshot, lambda start: search)
    report = study.store.kept["capacity"]
    assert report.start == 2000.0 and report.of("trial 5").held == 4000.0
    assert report.of("rocksdb-default").held_by_round == []
    assert "capacity of rocksdb-default: a run failed (phase run: killed by SIGKILL (out of memory)): the capacity stage " \
           "stops; a resume measures what is missing" in notes
    unmeasured = _capacity_study(tmp_path, 1, ops=None)
    unmeasured.bus.note = notes.append
    capacities(unmeasured.parts, unmeasured.store, unmeasured.bus, unmeasured.snapshot, lambda start: search)
    assert "capacity" not in unmeasured.store.kept
    assert notes[-1] == "--serve-rate auto: rocksdb-default's ops/s was not measured; give --serve-rate OPS"


@pytest.mark.parametrize(("changes", "error"), [
    ({"backend": "command", "command": "true {options} {db}", "slo": "p99.9<=10ms"},
     "--slo: the command backend runs nothing at a rate (the db_bench and rate backends do)"),
    ({"slo": "p99.9<=10ms", "base_options": Path("OPTIONS-000042")},
     "--slo: its runs start from the library's defaults, not --base-options' file"),
    ({"slo": "read_p99.9<=2ms"}, "--slo: 'read_p99.9<=2ms' bounds the reads' own tail; the db_bench backend's "
                                 "capacity runs offer writes alone"),
    ({"slo": "p99.9<=10ms", "read_rate": 100.0}, "--read-rate: goes with --rate"),
    ({"slo": "p99.9<=10ms", "serve_rounds": 4}, "--serve-rounds: goes with --serve-rate"),
    ({"slo": "p99.9<=10ms", "serve_duration": 0.0}, "--serve-duration: more than 0 s, got 0 s"),
    ({"backend": "rate", "rate": 1000.0, "slo": "p99.9<=10ms", "serve_duration": 10.0},
     "--serve-duration: goes with --serve-rate (the runs at a rate after the study), or with --slo on the "
     "db_bench backend"),
])
def test_slo_on_a_db_bench_study_is_refused_in_one_line_where_it_cannot_run(changes, error):
    with pytest.raises(UsageError, match=error.replace("(", r"\(").replace(")", r"\)")):
        check_backend(TuneConfig(**changes))


def test_slo_on_a_db_bench_study_takes_the_serve_duration_and_capacity_rounds():
    check_backend(TuneConfig(slo="p99.9<=10ms", serve_duration=10.0, capacity_rounds=3))  # refuses nothing


@pytest.mark.parametrize(("mode", "error"), [
    ("db_bench-7.8.3", "--slo: the driver runs on its RocksDB's library defaults; this study's runs start from "
                       "another's (--defaults db_bench-7.8.3)"),
    (LIBRARY, "--slo: no open_loop beside "),
])
def test_the_served_backend_names_slo_when_it_cannot_run_it(tmp_path, mode, error):
    found = Found("db_bench", SimpleNamespace(path=str(tmp_path / "db_bench")), None, mode)
    backend = BACKENDS["db_bench"](Setup(tmp_path, 60.0, 1, found=found))
    with pytest.raises(UsageError, match=error.replace("(", r"\(").replace(")", r"\)")):
        backend.at_rate(Rate(1.0), 60.0, 2**20, None, "--slo")


@pytest.mark.release_build
def test_slo_with_defaults_of_another_db_bench_is_refused_before_the_study(tmp_path, work_dir):
    """--slo --defaults db_bench-7.8.3: refused in one line by the study's eager check, before any run."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--workload", "fillrandom", "--scale", "0.05",
                        "--trials", "1", "--defaults", "db_bench-7.8.3", "--slo", "p99.9<=50ms", "--no-mlflow",
                        "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "--slo: the driver runs on its RocksDB's library defaults; this study's runs start from another's " \
           "(--defaults db_bench-7.8.3)" in r.stderr
    assert not (out / "summary.json").exists() and not (out / "baselines").exists()


@pytest.mark.release_build
def test_a_throughput_study_finds_the_capacity_of_its_answer_and_the_defaults_at_an_slo(tmp_path, work_dir):
    """A db_bench study with --slo and --serve-rate auto: after the search, rocksdb-default's and the best's
    capacity at the SLO, searched open loop from the served rate (auto) with 2 s runs on one DB of the
    target's data, which the served runs after it reuse (loaded once, by the capacity stage); the summary,
    the closing line and the logs say so."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--workload", "fillrandom", "--scale", "0.05",
                        "--trials", "2", "--no-starts", "--sampler", "random", "--seed", "3", "--revalidate", "0",
                        "--no-drain", "--slo", "p99.9<=50ms", "--serve-rate", "auto", "--serve-duration", "2s",
                        "--serve-rounds", "1", "--no-mlflow", "--no-plots", "--out", str(out),
                        "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    cap, served = summary.capacity, summary.served
    assert cap is not None and served is not None and summary.best is not None
    assert [c.name for c in cap.configurations] == ["rocksdb-default", f"trial {summary.best.trial}"]
    assert cap.duration == 2 and cap.start == served.rate > 0 and cap.how == served.how
    assert cap.how.startswith("--serve-rate auto: 0.4 x rocksdb-default's ")
    for c in cap.configurations:
        assert c.probes[0].offered == cap.start and len(c.probes) >= 2 and (c.held or c.failed)
        assert all(p.value and p.value > 0 and p.delivered is not None for p in c.probes)
        assert c.held is None or any(p.held and p.offered == c.held for p in c.probes)
    first = out / "capacity" / "rocksdb-default" / f"{cap.start:.0f}" / "command.command"
    command = first.read_text()
    assert "open_loop run " in command and f"--rate {cap.start:g} " in command and "--duration 2 " in command
    assert (out / "capacity" / "load").is_dir() and not (out / "served" / "load").exists()  # one DB, loaded once
    assert f"capacity at p99.9<=50ms (one 2 s run per offered rate, each run and its settle, from {cap.start:,.0f} " \
           f"ops/s ({cap.how}); a bracket, not an interval): rocksdb-default " in r.stdout
    assert leftovers(work_dir) == []


def test_a_capacity_ratio_that_is_a_tie_says_what_its_rounds_could_tell():
    """A capacity ratio over rounds whose interval holds 1 says, as the gain's tie does, the smallest ratio those
    rounds of that spread tell from 1 and how many rounds would tell its estimate (synthetic rounds: the t
    interval's half-width on the log ratios, worked out here from their standard deviation)."""
    defaults, best = [100_000.0, 83_000.0, 100_000.0], [118_000.0, 120_000.0, 104_000.0]
    logs = [math.log(b / a) for a, b in zip(defaults, best)]
    sd, estimate = statistics.stdev(logs), math.exp(statistics.fmean(logs))

    def half(k: int) -> float:
        return scipy_stats.t.ppf(0.975, k - 1) * sd / math.sqrt(k)

    assert math.exp(statistics.fmean(logs) - half(3)) < 1  # a tie in 3 rounds
    needed = next(k for k in range(2, 200) if half(k) < math.log(estimate))
    report = CapacityReport(slo="p99.9<=10ms", metric="p99.9_us", bound=10_000.0, rounds=3, duration=60.0,
                            configurations=[CapacityOf("rocksdb-default", statistics.median(defaults), None, [],
                                                       list(defaults)),
                                            CapacityOf("trial 5", statistics.median(best), None, [], list(best))],
                            vs_default={"trial 5": Ratio.from_dict({"against": "rocksdb-default",
                                                                    **paired_ratio(best, defaults).to_dict()})})
    line = capacity_line(Summary.from_dict({"capacity": report.to_dict()}))
    assert line is not None
    assert (f"the defaults' capacity, paired by round; resolution: 3 paired rounds of this spread tell apart only "
            f"differences of {math.exp(half(3)):.2f}x or more; an estimate of {estimate:.2f}x would need about "
            f"{needed} rounds of this spread to tell (--capacity-rounds {needed}). A tail") in line
    logged = {m.key: m.value for m in _capacity_metrics(report)}
    assert logged["capacity/trial 5/vs_default.resolution"] == pytest.approx(math.exp(half(3)))
    assert logged["capacity/trial 5/vs_default.rounds_needed"] == needed
    clear = replace(report, vs_default={"trial 5": Ratio.from_dict({"against": "rocksdb-default", **paired_ratio(
        [2 * d * (1 + i / 100) for i, d in enumerate(defaults)], defaults).to_dict()})})
    assert "resolution" not in (capacity_line(Summary.from_dict({"capacity": clear.to_dict()})) or "")
    assert not any("resolution" in m.key for m in _capacity_metrics(clear))


def test_the_slo_curve_draws_each_round_of_each_configuration_as_a_line_of_its_own(tmp_path):
    """The latency-vs-rate curve of --capacity-rounds: one trace per configuration and round, in the plotly page
    grouped by configuration, and the PNG beside it (synthetic probes: rounds try other rates, so a line joined
    across rounds would jump at a rate two rounds tried)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tuner.outputs._plots import CURVE, _capacity_curve

    def probes(values: dict[int, list[tuple[float, float]]]) -> list[CapacityProbe]:
        return [CapacityProbe(offered=rate, value=value, held=value <= 10_000, round=r)
                for r, pairs in values.items() for rate, value in pairs]

    report = CapacityReport(slo="p99.9<=10ms", metric="p99.9_us", bound=10_000.0, rounds=2, configurations=[
        CapacityOf("rocksdb-default", 60_000.0, None, probes({1: [(42_000.0, 2_700.0), (84_000.0, 31_000.0)],
                                                              2: [(62_000.0, 5_800.0), (68_000.0, 11_900.0)]})),
        CapacityOf("trial 5", 50_000.0, None, probes({1: [(42_000.0, 7_900.0), (50_000.0, 8_300.0)],
                                                      2: [(62_000.0, 8_000.0), (68_000.0, 14_200.0)]}))])
    html = _capacity_curve(cast(Any, SimpleNamespace(name="s", capacity=report)), tmp_path, plt, include_plotlyjs=False)
    assert (tmp_path / f"{CURVE}.png").stat().st_size > 0
    for name in ("rocksdb-default", "trial 5"):
        assert html.count(f'"legendgroup":"{name}"') == 2
        assert all(f'"name":"{name}, round {r}"' in html for r in (1, 2))
    assert "a line per round of 2" in html
    colours = re.findall(r'"legendgroup":"([^"]+)","line":\{"color":"([^"]+)"\}', html)
    assert len(colours) == 4 and len(set(colours)) == 2  # a colour per configuration, its rounds alike
