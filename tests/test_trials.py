"""A trial's record is written and read through tuner.trials only: a misspelt field fails where it
is written, and what is written reads back as typed attributes."""

from __future__ import annotations

import optuna
import pytest

from tuner.trials import TrialRecord, attrs, origin, record, record_lost_attempt, record_rung


def test_what_is_recorded_reads_back_as_attributes():
    study = optuna.create_study(direction="maximize")
    trial = study.ask()
    record(trial, outcome="complete", seconds=1.5, metrics={"ops_per_sec": 10.0}, provenance="start",
           enqueued="benchmark.sh", constraints=[-1.0])
    record_rung(trial, 0, {"scale": 0.125, "ops_per_sec": 20.0})
    record_lost_attempt(trial, 0, "the worker died")
    study.tell(trial, 10.0)
    r = TrialRecord.of(study.trials[0])
    assert (r.outcome, r.seconds, r.metric("ops_per_sec"), r.metric("p99_us")) == ("complete", 1.5, 10.0, None)
    assert r.rungs == {0: {"scale": 0.125, "ops_per_sec": 20.0}} and r.lost_attempts == {0: "the worker died"}
    assert r.constraints == [-1.0] and not r.audit and r.fail_reason is None
    assert origin(r) == {"enqueued": "benchmark.sh", "provenance": "start"}


def test_a_misspelt_field_fails_where_it_is_written():
    trial = optuna.create_study().ask()
    with pytest.raises(TypeError, match="not a TrialRecord field: outcom"):
        record(trial, outcom="complete")
    with pytest.raises(TypeError, match="provenence"):
        attrs(provenence="start")
    assert trial.user_attrs == {}


def test_attributes_of_other_versions_are_passed_over():
    study = optuna.create_study()
    study.enqueue_trial({}, user_attrs={"outcome": "failed", "an_attribute_of_another_version": 1})
    trial = study.ask()
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    assert TrialRecord.of(study.trials[0]) == TrialRecord(outcome="failed")
