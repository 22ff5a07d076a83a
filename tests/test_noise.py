"""--repeats and --revalidate on the real db_bench (issue 7: noise handling)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import optuna
import pytest

from tests.conftest import TINY
from tests.test_cli import tuner
from tuner.stats import bootstrap_ratio

pytestmark = pytest.mark.dbbench


def test_repeats_score_the_median_and_revalidation_names_the_best_by_median(tmp_path):
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "3", "--seed", "8", "--sampler",
            "random", "--study", "noisy", "--out", "o", "--repeats", "2", "--revalidate", "2"]
    r = tuner(*args)
    assert r.returncode == 0, r.stderr
    assert "95 % bootstrap CI" in r.stdout and "re-validating 2 best trial(s) and 1 baseline(s)" in r.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["repeats"] == 2

    trials = optuna.load_study(study_name="noisy", storage=f"sqlite:///{tmp_path / 'o' / 'study.db'}").trials
    for t in trials:
        if t.user_attrs["outcome"] != "complete":
            continue
        runs = t.user_attrs["repeats"]
        assert len(runs) == 2
        assert t.user_attrs["metrics"]["ops_per_sec"] == statistics.median(x["ops_per_sec"] for x in runs)
        assert t.values[0] == t.user_attrs["metrics"]["ops_per_sec"]
        spread = t.user_attrs["spread_ops_per_sec"]
        assert spread["n"] == 2 and spread["min"] <= t.values[0] <= spread["max"]
        log = Path(t.user_attrs["log_dir"])
        assert (log / "repeat-0" / "load.stdout").is_file() and (log / "repeat-1" / "load.stdout").is_file()
        assert (log / "OPTIONS").is_file()

    reval = summary["revalidation"]
    assert reval["rounds"] == 3
    rows = {row["name"]: row for row in reval["configurations"]}
    ranked = sorted((t for t in trials if t.user_attrs["outcome"] == "complete"), key=lambda t: t.values[0])
    assert set(rows) == {"rocksdb-default", f"trial {ranked[-1].number}", f"trial {ranked[-2].number}"}
    for row in rows.values():
        assert len(row["ops_per_sec"]) == 3 and row["median_ops_per_sec"] == statistics.median(row["ops_per_sec"])
    winner = max((r for r in rows.values() if r["trial"] is not None), key=lambda r: r["median_ops_per_sec"])
    assert reval["best"] == winner["name"] and summary["best"]["trial"] == winner["trial"]
    ratio = reval["best_vs_default"]
    assert ratio["ratio"] == winner["median_ops_per_sec"] / rows["rocksdb-default"]["median_ops_per_sec"]
    assert ratio["ci95"][0] <= ratio["ratio"] <= ratio["ci95"][1]
    assert reval["noise_cv_default"] == statistics.stdev(rows["rocksdb-default"]["ops_per_sec"]) / statistics.fmean(
        rows["rocksdb-default"]["ops_per_sec"])
    best_row = summary["comparison"][-1]
    assert best_row["name"] == f"best (trial {winner['trial']})"
    assert best_row["ops_per_sec"] == winner["median_ops_per_sec"] and best_row["spread"]["n"] == 3

    # A resume keeps the finished re-validation; another --repeats would mix incomparable trials.
    again = tuner(*args)
    assert again.returncode == 0 and "re-validation round" not in again.stderr, again.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["revalidation"] == reval
    other = tuner(*[a if a != "2" else "3" for a in args])
    assert other.returncode == 2 and "--repeats: study noisy measures each trial 2 time(s), not 3" in other.stderr


def test_bootstrap_interval_brackets_the_ratio_of_medians():
    low, high = bootstrap_ratio([110.0, 112.0, 108.0], [100.0, 101.0, 99.0])
    assert 1.06 <= low <= 1.10 <= high <= 1.14
    assert bootstrap_ratio([5.0, 5.0], [5.0, 5.0]) == [1.0, 1.0]


def test_median_pruner_stops_a_hopeless_trial_early(tmp_path):
    """Five unthrottled trials (the median pruner's start-up), then one whose writer db_bench throttles
    to 3 MB/s (~25k ops/s, about 40 s to finish): the pruner stops it a few seconds in; it is PRUNED,
    counted, and logged. (A later unthrottled trial below the median could be pruned too, by design,
    so the throttled one is the only trial the pruner may judge.)"""
    from tuner.observers.progress import SilentProgress
    from tuner import Study, TuneConfig

    space = tmp_path / "throttle.toml"
    space.write_text('[parameters.benchmark_write_rate_limit]\ntype = "categorical"\nchoices = [0, 3000000]\n'
                     'options_key = "DBOptions.benchmark_write_rate_limit"\n'
                     '[parameters.bloom_bits]\ntype = "int"\nlow = 6\nhigh = 12\n'
                     'options_key = "TableOptions/BlockBasedTable.filter_policy"\n')
    study = Study(TuneConfig(workload="fillrandom", scale=0.7, space=space, trials=6, sampler="random", seed=1,
                             pruner="median", pruner_warmup=2, out=tmp_path / "o", mlflow=False, plots=False),
                  SilentProgress())
    for bits in range(6, 11):
        study.optuna_study.enqueue_trial({"benchmark_write_rate_limit": 0, "bloom_bits": bits})
    study.optuna_study.enqueue_trial({"benchmark_write_rate_limit": 3000000, "bloom_bits": 12})
    result = study.run()
    trials = study.optuna_study.trials
    assert [t.state.name for t in trials] == ["COMPLETE"] * 5 + ["PRUNED"]
    slow = trials[5]
    assert slow.user_attrs["outcome"] == "pruned" and slow.user_attrs["pruned_at"]["second"] >= 2  # warm-up
    assert slow.user_attrs["seconds"] < 15
    assert max(slow.intermediate_values.values()) < 0.5 * min(t.values[0] for t in trials[:5])
    assert result.summary["trials"]["pruned"] == 1 and result.summary["trials"]["complete"] == 5
    assert all(len(t.intermediate_values) >= 2 for t in trials[:5])


def test_pruning_needs_a_single_objective(tmp_path):
    r = tuner("tune", "--objective", "multi", "--pruner", "median", "--out", "never")
    assert r.returncode == 2 and "--pruner: Optuna cannot prune multi-objective studies" in r.stderr
    assert not (tmp_path / "never").exists()
