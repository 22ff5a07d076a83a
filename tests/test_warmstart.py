"""--warm-start and hand-found configurations first (issue 7), on the real db_bench."""

from __future__ import annotations

import json

import optuna
import pytest

from tests.conftest import TINY
from tests.test_cli import tuner

pytestmark = pytest.mark.dbbench


def test_warm_start_learns_from_an_earlier_study_but_counts_and_names_only_its_own(tmp_path):
    base = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--sampler", "tpe", "--seed", "5"]
    assert tuner(*base, "--trials", "3", "--study", "first", "--out", "first").returncode == 0
    r = tuner(*base, "--trials", "2", "--study", "second", "--out", "second", "--warm-start", "first", "--json")
    assert r.returncode == 0, r.stderr
    assert "this new study learns from 3 trials of first" in r.stderr
    summary = json.loads(r.stdout)
    assert summary["trials"]["complete"] == 2 and summary["trials"]["warm-start"] == 3
    trials = optuna.load_study(study_name="second", storage=summary["storage"]).trials
    earlier = optuna.load_study(study_name="first", storage=f"sqlite:///{tmp_path / 'first' / 'study.db'}").trials
    assert [t.params for t in trials[:3]] == [t.params for t in earlier]
    assert [t.values for t in trials[:3]] == [t.values for t in earlier]
    assert all(t.user_attrs["outcome"] == "warm-start" for t in trials[:3])
    # the best is one of this study's own measured trials (a rejected proposal may take a number)
    assert trials[summary["best"]["trial"]].user_attrs["outcome"] == "complete"

    other = tuner("tune", "--workload", "fillrandom", "--scale", "0.03", "--trials", "1", "--out", "third",
                  "--warm-start", "first/summary.json")
    assert other.returncode == 2 and "--warm-start first/summary.json: study first has identity" in other.stderr
    missing = tuner(*base, "--trials", "1", "--out", "fourth", "--warm-start", "nosuch")
    assert missing.returncode == 2 and "--warm-start nosuch: no such study directory" in missing.stderr


def test_a_new_study_runs_the_hand_found_configuration_first(tmp_path):
    r = tuner("tune", "--workload", "S2", "--scale", "0.05", "--trials", "1", "--seed", "1", "--out", "o", "--json")
    assert r.returncode == 0, r.stderr
    assert "this new study runs hand-found:S2 first" in r.stderr
    summary = json.loads(r.stdout)
    trial = optuna.load_study(study_name=summary["study"], storage=summary["storage"]).trials[0]
    hand = next(b for b in summary["baselines"] if b["name"] == "hand-found:S2")["params"]
    assert trial.user_attrs["enqueued"] == "hand-found:S2"
    assert trial.params["max_write_buffer_number"] == hand["max_write_buffer_number"] == 4
