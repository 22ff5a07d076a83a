"""--objective METRIC and --constraint: any number the runs report is the score or a budget, ranked by
the one rule (tuner.ranking) and compared by the one gain (tuner.stats.gain); small real programs
print their metrics as a function of the OPTIONS file they are given."""

from __future__ import annotations

import shlex
import statistics
import sys
from pathlib import Path

import optuna
import pytest

from objectives.scores import Bound, Score, label
from tests.conftest import summary_of
from tests.test_backends import APP, summary_trials
from tests.test_cli import tuner
from tuner import ranking
from tuner.cli import build_parser
from tuner.fmt import fmt_value
from tuner.stats import gain, improvement
from tuner.summary import Summary

# Its numbers follow max_background_jobs (J): more jobs, more scanned rows per second; the lowest P99 at
# 9 jobs. On the grid 1, 6, 11, 16 (rocksdb-default runs 2): scan rows 100 to 1,600, P99 34, 19, 16, 31 (31).
PROGRAM = """\
import json, re, sys
jobs = int(re.search(r"max_background_jobs=(\\d+)", open(sys.argv[1]).read())[1])
print(json.dumps({"ops_per_sec": 1000.0, "scan_rows_per_sec": 100.0 * jobs, "p99_us": 10.0 + 3 * abs(jobs - 9)}))
"""
SPACE = '[parameters.max_background_jobs]\ntype = "int"\nlow = 1\nhigh = 16\n'  # its grid: 1, 6, 11, 16


def _study(tmp_path: Path, *args: str, program: str = PROGRAM) -> tuple[int, Summary | None, str]:
    """A command study of ``program`` over max_background_jobs (its 4 grid points): its exit code,
    summary (None when it wrote none) and output."""
    (tmp_path / "prog.py").write_text(program)
    (tmp_path / "space.toml").write_text(SPACE)
    (tmp_path / "work").mkdir(exist_ok=True)
    r = tuner("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} prog.py {{options}}",
              "--space", "space.toml", "--trials", "4", "--sampler", "grid", "--no-starts",
              "--out", "o", "--work-dir", str(tmp_path / "work"), "--no-mlflow", "--no-plots", *args, cwd=tmp_path)
    written = (tmp_path / "o" / "summary.json").is_file()
    return r.returncode, summary_of(tmp_path / "o") if written else None, r.stdout + r.stderr


@pytest.mark.parametrize("objective, pick", [("scan_rows_per_sec", max), ("p99_us", min), ("scan_rows_per_sec:min", min)])
def test_the_best_is_the_best_of_the_named_metric_in_its_direction(tmp_path, objective, pick):
    """maximized by name (scan_rows_per_sec), minimized where the metric is a latency (p99_us alone is
    p99_us:min) or where asked (:min); the trials differ, so the wrong direction would pick another."""
    code, summary, out = _study(tmp_path, "--objective", objective, "--revalidate", "0")
    assert code == 0, out
    metric = objective.split(":")[0]
    assert summary is not None and summary.best is not None
    values = [t["metrics"][metric] for t in summary_trials(summary)]
    assert len(values) == 4 and len(set(values)) == 4
    best = summary.best.metrics[metric]
    assert best == pick(values)
    assert summary.objective_metric == metric and summary.objective_maximize == (pick is max)
    assert f"best {fmt_value(best)} {label(metric)} (trial " in out  # by its name
    default = summary.baselines[0].metrics[metric]  # rocksdb-default's single run: 2 jobs
    assert summary.comparison[-1].vs_default == pytest.approx(best / default if pick is max else default / best)


def test_a_minimized_metric_is_re_validated_as_defaults_over_the_answer(tmp_path):
    """The re-validation chooses by the lowest median P99 and reports its gain as rocksdb-default's
    P99 over the answer's (above 1: better), paired by round, in the metric's own words."""
    code, summary, out = _study(tmp_path, "--objective", "p99_us:min", "--revalidate", "2", "--revalidate-rounds", "2",
                                "--revalidate-max-rounds", "2", "--no-ablation")
    assert code == 0, out
    assert summary is not None and summary.revalidation is not None
    reval = summary.revalidation
    assert reval.select is not None and reval.best is not None and reval.best_vs_reference is not None
    rows = {r.name: r for r in reval.configurations}
    best, default = rows[reval.best], rows["rocksdb-default"]
    assert reval.metric == "p99_us" and reval.maximize is False
    finalists = [r for r in reval.select.configurations if r.trial is not None]
    assert best.median("p99_us") == min(r.median("p99_us") or 0.0 for r in finalists)
    ratio = statistics.median(default.samples("p99_us")) / statistics.median(best.samples("p99_us"))  # exact
    assert reval.best_vs_reference.ratio == pytest.approx(ratio) and ratio > 1
    assert reval.best_vs_reference.verdict == "faster"  # above 1 in every round: better
    assert "better p99_us." in out and "gain in p99_us over rocksdb-default" in out
    header = next(line for line in out.splitlines() if line.startswith("configuration "))
    assert header.split()[1:4] == ["P99", "us", "range"]  # its column first, its range beside it


def test_a_constraint_excludes_the_trials_that_break_it(tmp_path):
    """--constraint p99_us<=20 (6 or 11 jobs of the grid) against maximizing scan rows, which wants many
    jobs: the best is the best that keeps it, though a trial that breaks it (16 jobs) scanned more."""
    code, summary, out = _study(tmp_path, "--objective", "scan_rows_per_sec", "--constraint", "p99_us<=20",
                                "--revalidate", "0")
    assert code == 0, out
    assert summary is not None and summary.best is not None
    complete = summary_trials(summary)
    keep = [t["metrics"]["scan_rows_per_sec"] for t in complete if t["metrics"]["p99_us"] <= 20]
    broke = [t["metrics"]["scan_rows_per_sec"] for t in complete if t["metrics"]["p99_us"] > 20]
    assert keep and broke and max(broke) > max(keep)
    assert summary.best.metrics["scan_rows_per_sec"] == max(keep) and summary.best.feasible
    assert summary.objective_description == "maximize scan_rows_per_sec, p99_us <= 20"


@pytest.mark.parametrize("args, flag", [(("--objective", "scan_rows"), "--objective"),
                                        (("--constraint", "p999_us<=5"), "--constraint"),
                                        (("--max-write-amp", "3"), "--max-write-amp")])
def test_a_metric_the_program_does_not_report_is_one_clear_error(tmp_path, args, flag):
    """Named for the score but absent from the first run's output: exit 2, one line naming the flag and
    the metric, and what the run did report; no trial runs."""
    code, summary, out = _study(tmp_path, *args, "--revalidate", "0")
    metric = {"--objective": "scan_rows", "--constraint": "p999_us", "--max-write-amp": "write_amp"}[flag]
    assert code == 2, out
    (line,) = [line for line in out.splitlines() if "error" in line]
    assert line == (f"rocksdb-tuner: error: {flag}: rocksdb-default's run has no such metric: {metric}: missing, and "
                    "the study's score needs it (the run reported ops_per_sec, p99_us, scan_rows_per_sec, wall_seconds)")
    assert "Traceback" not in out and "trial 0" not in out


@pytest.mark.parametrize("args, message", [
    (("--objective", "p99 us"), "argument --objective: 'p99 us' is not throughput, multi, capacity or a metric"),
    (("--objective", "p99_us:down"), "argument --objective: 'p99_us:down' is not throughput, multi, capacity or a metric"),
    (("--constraint", "p99_us<500"), "argument --constraint: 'p99_us<500' is not METRIC<=NUMBER or METRIC>=NUMBER"),
    (("--constraint", "p99_us<=fast"), "argument --constraint: 'p99_us<=fast' is not METRIC<=NUMBER"),
])
def test_bad_objectives_and_constraints_are_refused_naming_the_flag(tmp_path, args, message):
    r = tuner("tune", *args, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("given, taken", [("p99_us", "p99_us:min"), ("scan_rows_per_sec", "scan_rows_per_sec:max"),
                                          ("ops_per_sec", "throughput"), ("ops_per_sec:max", "throughput"),
                                          ("ops_per_sec:min", "ops_per_sec:min"), ("multi", "multi"),
                                          ("held_ops_per_sec", "capacity"), ("capacity", "capacity")])
def test_the_objective_is_recorded_with_its_direction(given, taken):
    assert build_parser().parse_args(["tune", "--objective", given]).objective == taken


def test_a_named_objective_takes_its_direction_and_budgets_are_one_list():
    assert Score("p99_us").directions == ["minimize"] and Score("write_amp").directions == ["minimize"]
    assert Score("scan_rows_per_sec").directions == ["maximize"] and Score("p99_us:max").directions == ["maximize"]
    score = Score("throughput", max_p99_us=100, bounds=(Bound.parse("ops_per_sec >= 5e4"), Bound.parse("x<=2")))
    assert score.needed == ("ops_per_sec", "p99_us", "x")
    assert score.constraints({"ops_per_sec": 4e4, "p99_us": 90, "x": 3}) == [-10, 1e4, 1]
    assert [score.flag_of(m) for m in ("ops_per_sec", "p99_us", "x", "y")] == ["--constraint", "--max-p99-us",
                                                                               "--constraint", None]
    assert Score("p99_us").flag_of("p99_us") == "--objective" and Score().flag_of("ops_per_sec") is None


def test_one_ranking_rule_and_one_gain_whichever_the_direction():
    dist = optuna.distributions.IntDistribution(1, 9)
    trials = [optuna.trial.create_trial(params={"j": j}, distributions={"j": dist}, values=[v],
                                        user_attrs={"outcome": "complete", "constraints": c})
              for j, v, c in ((1, 30.0, [0.0]), (2, 10.0, [5.0]), (3, 20.0, [-1.0]))]
    for number, t in enumerate(trials):
        t.number = number
    assert [t.number for t in ranking.ranked(trials, ["minimize"])] == [2, 0, 1]  # budgets first, then lowest
    assert [t.number for t in ranking.ranked(trials, ["maximize"])] == [0, 2, 1]
    assert improvement(20.0, 10.0) == 2.0 and improvement(10.0, 20.0, maximize=False) == 2.0
    assert gain([10.0, 11.0], [20.0, 22.0], maximize=False).ratio == pytest.approx(2.0)
    assert gain([10.0, 11.0], [20.0, 22.0]).ratio == pytest.approx(0.5)


def test_the_rocksdict_example_is_tuned_for_its_p99(tmp_path):
    """The shipped example, as it measures itself (each operation timed), tuned to minimize its P99 for a
    few trials: the best is the lowest P99 of the trials, and the output speaks of P99."""
    command = f"{shlex.quote(sys.executable)} {APP} --options {{options}} --db {{db}} --keys 2000 --ops 2000"
    r = tuner("tune", "--backend", "command", "--command", command, "--objective", "p99_us", "--trials", "3",
              "--sampler", "random", "--seed", "2", "--no-starts", "--revalidate", "0", "--out", "o", "--work-dir",
              str(tmp_path), "--no-mlflow", "--no-plots", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.objective == "p99_us:min" and summary.objective_description == "minimize P99 us"
    p99 = [t["metrics"]["p99_us"] for t in summary_trials(summary)]
    assert len(p99) == 3 and all(v > 0 for v in p99)
    assert summary.best is not None and summary.best.metrics["p99_us"] == min(p99)
    assert "(trial " in r.stderr and " P99 us (trial " in r.stderr  # "best 41.3 P99 us (trial 2)"
