"""A trial's record is written and read through tuner.trials only: a misspelt field fails where it
is written, and what is written reads back as typed attributes; so do the records a study keeps of
itself, as any version stored them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import optuna
import pytest

from tuner.engine import _attrs as attributes
from tuner.engine._warmstart import WarmStartError, warm_start
from tuner.model import machine_seconds
from tuner.summary import Build, FidelityAgreement, Preload, Startup
from tuner.trials import (
    BaselineRecord,
    PrunedAt,
    RungRun,
    TrialNode,
    TrialRecord,
    attrs,
    origin,
    record,
    record_lost_attempt,
    record_rung,
)


def test_what_is_recorded_reads_back_as_attributes():
    study = optuna.create_study(direction="maximize")
    trial = study.ask()
    record(trial, outcome="complete", seconds=1.5, metrics={"ops_per_sec": 10.0}, provenance="start",
           enqueued="benchmark.sh", constraints=[-1.0])
    record_rung(trial, 0, RungRun(0.125, ops_per_sec=20.0))
    record(trial, node=TrialNode("n1", "host-a", "10.0.0.2", [1], 1.0, 2.0), attempts=1)
    record_lost_attempt(trial, 0, "the worker died")
    study.tell(trial, 10.0)
    r = TrialRecord.of(study.trials[0])
    assert (r.outcome, r.seconds, r.metric("ops_per_sec"), r.metric("p99_us")) == ("complete", 1.5, 10.0, None)
    assert r.rungs == {0: RungRun(0.125, ops_per_sec=20.0)} and r.lost_attempts == {0: "the worker died"}
    assert r.node is not None and (r.node.host, r.node.cores_used, r.node.measured_to) == ("host-a", [1], 2.0)
    assert r.constraints == [-1.0] and not r.audit and r.fail_reason is None
    assert origin(r) == {"enqueued": "benchmark.sh", "provenance": "start"}


def test_what_measured_reads_back_as_a_build_as_any_version_stored_it():
    """A worker's build is stored whole (``build``); a trial an earlier version ran kept its db_bench's path,
    version and assertions as ``db_bench``, which reads as the same record."""
    study = optuna.create_study()
    worker = {"path": "/usr/bin/db_bench", "version": "7.8.3", "assertions": True}
    trial = study.ask()
    record(trial, build=Build.probed(worker))
    study.tell(trial, 1.0)
    study.enqueue_trial({}, user_attrs={"db_bench": worker})  # as versions before Build stored it
    study.tell(study.ask(), 1.0)
    new, old = (TrialRecord.of(t).build for t in study.trials)
    assert new == old and new is not None and new.program == "db_bench" and new.path == "/usr/bin/db_bench"
    assert new.identity == {"version": "7.8.3", "assertions": True} and new.warning


def test_a_warm_start_compares_the_builds_as_any_version_stored_them(tmp_path, monkeypatch):
    """An earlier study's build, as it stored it (``build``) or as a version before Build did (``db_bench``),
    must have this study's identity: db_bench's version and assertions, not its path."""
    monkeypatch.chdir(tmp_path)
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    release = {"path": "/a/db_bench", "version": "9.11.2", "assertions": False, "build": "release"}
    kept = {"identity": {"workload": "w"}, "repeats": 1}
    mine = optuna.create_study(study_name="new", storage=storage)
    for key, value in {**kept, "build": Build.probed({**release, "path": "/b/db_bench"}).to_dict()}.items():
        mine.set_user_attr(key, value)
    store = SimpleNamespace(parts=SimpleNamespace(storage=storage, space=None), study=mine)
    for name, build in (("old", {"db_bench": release}), ("debug", {"db_bench": {**release, "assertions": True}}),
                        ("newer", {"build": Build.probed({**release, "version": "11.8.1"}).to_dict()})):
        earlier = optuna.create_study(study_name=name, storage=storage)
        for key, value in {**kept, **build}.items():
            earlier.set_user_attr(key, value)
    assert warm_start(store, "old") == 0  # nothing to copy, and nothing refused
    for name in ("debug", "newer"):
        with pytest.raises(WarmStartError, match=f"study {name} has build .*; its measurements would not compare"):
            warm_start(store, name)


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


def test_what_a_study_stored_before_its_records_were_typed_reads_back_as_records():
    """A study keeps its baselines, preloaded DB, sampler start-up and rungs' agreement as attributes: as
    earlier versions stored them (the first version's baseline had no phases nor end time; a key of
    another version is passed over), they read as the typed records, and write back the same."""
    first = {"name": "rocksdb-default", "flags": {}, "doc": "the defaults", "log_dir": "/o/baselines/rocksdb-default",
             "state": "COMPLETE", "metrics": {"ops_per_sec": 900.0}, "commands": [["db_bench"]], "seconds": 12.5}
    failed = {"name": "hand-found:S2", "flags": {"max_write_buffer_number": 4}, "doc": "", "log_dir": "/o/b",
              "state": "FAIL", "reason": "phase load: killed", "metrics": {}, "seconds": 3.0, "ended": 1.7e9,
              "a_key_of_another_version": 1}
    baselines = (BaselineRecord.of(first), BaselineRecord.of(failed))
    assert baselines[0].complete and baselines[0].metrics == {"ops_per_sec": 900.0} and baselines[0].ended is None
    assert not baselines[1].complete and baselines[1].reason == "phase load: killed"
    assert baselines[0].to_attr() == first and baselines[1].to_attr() == {
        k: v for k, v in failed.items() if k != "a_key_of_another_version"}
    stored = {"preload": {"seconds": 40.25, "builds": 1, "trials": {"path": "/w/db", "size_bytes": 9, "seconds": 40.25,
                                                                      "data_bytes": 8}},
              "startup": {"expected_trials": 20, "size": 5},
              "fidelity_agreement": {"rungs": [{"scale": 0.25, "n": 6, "kendall_tau": 0.73, "p_value": 0.06,
                                                "agrees": True}], "threshold": 0.6, "start_rung": 0,
                                     "start_scale": 0.25, "audited": [0, 1, 2, 3, 4, 5]}}
    preload, startup = Preload.from_dict(stored["preload"]), Startup.from_dict(stored["startup"])
    agreement = FidelityAgreement.from_dict(stored["fidelity_agreement"])
    assert preload.trials is not None and preload.trials.path == "/w/db" and preload.target is None
    assert startup.size == 5 and agreement.rungs[0].agrees and agreement.start_rung == 0
    assert [preload.to_dict(), startup.to_dict(), agreement.to_dict()] == list(stored.values())
    at_target = preload.updated(builds=2, target=preload.trials).to_dict()  # a key it was stored without comes last
    assert at_target == {**stored["preload"], "builds": 2, "target": stored["preload"]["trials"]}
    assert list(at_target) == ["seconds", "builds", "trials", "target"]
    seconds = machine_seconds([], baselines, None, preload)
    assert (seconds.preload, seconds.baselines, seconds.trials, seconds.revalidation, seconds.total) == (
        40.25, 15.5, 0, 0.0, 55.75)


def test_where_a_trial_was_pruned_reads_back_typed_and_is_stored_as_before():
    study = optuna.create_study()
    trial = study.ask()
    record(trial, outcome="pruned", pruned_at=PrunedAt("overwrite", 4))
    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    assert study.trials[0].user_attrs["pruned_at"] == {"phase": "overwrite", "second": 4}  # the stored form, on purpose
    assert TrialRecord.of(study.trials[0]).pruned_at == PrunedAt("overwrite", 4)


def test_a_trials_rungs_and_node_as_earlier_versions_stored_them_read_back_typed_and_are_stored_as_before():
    """A rung's run and the node a worker ran a trial on are JSON objects under ``rung_<n>`` and ``node``:
    as the last untyped version wrote them they read back as RungRun and TrialNode and are written the
    same; an earlier rung without the burst ops/s nor memory limit, and a node without its measuring
    times and with a key of another version, read back with those None."""
    rung = {"scale": 0.25, "ops_per_sec": 20.0, "burst_ops_per_sec": 25.0, "p99_us": 80.5, "write_amp": 3.1,
            "memory_limit_bytes": 1 << 30}
    node = {"node_id": "ab12", "host": "worker-1", "ip": "10.0.0.3", "cores_used": [0], "measured_from": 1.7e9,
            "measured_to": 1.7e9 + 12}
    older_rung = {"scale": 0.5, "ops_per_sec": 30.0, "p99_us": 70.0, "write_amp": 2.9}
    older_node = {"node_id": "cd34", "ip": "10.0.0.4", "host": "worker-2", "cores_used": None, "cores": 2}
    study = optuna.create_study(direction="maximize")
    study.enqueue_trial({}, user_attrs={"rung_0": rung, "rung_1": older_rung, "node": node})
    study.enqueue_trial({}, user_attrs={"node": older_node})
    for _ in range(2):
        study.tell(study.ask(), 1.0)
    first, second = (TrialRecord.of(t) for t in study.trials)
    assert first.rungs[0] == RungRun(**rung) and first.rungs[0].to_dict() == rung
    assert (first.rungs[1].ops_per_sec, first.rungs[1].burst_ops_per_sec, first.rungs[1].memory_limit_bytes) == (
        30.0, None, None)
    assert first.node == TrialNode(**node) and first.node.to_dict() == node
    assert second.node == TrialNode(node_id="cd34", host="worker-2", ip="10.0.0.4")
    again = optuna.create_study().ask()
    record_rung(again, 0, first.rungs[0])
    record(again, node=first.node)
    assert again.user_attrs == {"rung_0": rung, "node": node}


def test_the_engines_study_attributes_read_back_typed_as_every_version_stored_them():
    """The re-validation's plan, decided once, is an attribute a field (``revalidation:<field>``; a study
    from before K was kept has only some) and its rounds one object a stage: they read back typed and are
    written as before; the starts' notes and the options not applied read as lists, empty before any."""
    stored: dict[str, Any] = {"revalidation:ablation": True, "revalidation:allowance": 600.0}
    store = SimpleNamespace(attr=lambda key, default=None: stored.get(key, default), set_attr=stored.__setitem__)
    assert attributes.saved_plan(store) == attributes.SavedPlan(True, allowance=600.0)
    assert attributes.seeded(store) == [] and attributes.options_not_applied(store) == []
    attributes.save_plan(store, attributes.SavedPlan(False, 3, 4, 2))
    assert stored == {"revalidation:ablation": False, "revalidation:allowance": 600.0, "revalidation:k": 3,
                      "revalidation:min_rounds": 4, "revalidation:select_rounds": 2}
    rounds = {"entries": ["rocksdb-default", "trial 3"], "rounds": 2, "failed": {"trial 3": "killed"},
              "samples": {"rocksdb-default": [{"ops_per_sec": 9.0}], "trial 3": []}, "order": [["trial 3", "rocksdb-default"]]}
    stored["revalidation:estimate"] = rounds
    saved = attributes.rounds(store, "revalidation:estimate")
    assert saved is not None and saved.failed == {"trial 3": "killed"}
    assert saved.samples["rocksdb-default"] == [{"ops_per_sec": 9.0}] and saved.order == [["trial 3", "rocksdb-default"]]
    attributes.keep_rounds(store, "revalidation:estimate", saved)
    assert list(stored["revalidation:estimate"].items()) == list(rounds.items())  # its keys, in their order
