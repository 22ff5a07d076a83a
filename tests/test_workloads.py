"""Workload presets and files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from objectives.runner import DRAIN, STEADY_DRAIN, phase_drain
from objectives.workloads import Workload, WorkloadError, load_workload, preset_names
from search_spaces import Context


def test_presets(host):
    names = preset_names()
    for required in ("fillrandom", "readrandom", "overwrite", "readwhilewriting", "ycsb-a", "S0", "S1", "S2", "S3", "S4"):
        assert required in names
    for name in names:
        w = load_workload(name).resolve(1.0, host)
        assert w.scored_phases and w.data_bytes() > 50e6
        for b in w.baselines:
            assert b.name.startswith("hand-found:") and all(not isinstance(v, dict) for v in b.flags.values())


def test_scale_and_host_expressions(host):
    w = load_workload("S0").resolve(0.5, host)
    assert w.flags["num"] == 1_000_000
    (hand,) = w.baselines
    assert hand.flags["subcompactions"] == max(1, round(1.5 * host.cores))
    s2 = load_workload("S2").resolve(1.0, host)
    assert s2.baselines[0].flags["write_buffer_size"] == int(s2.data_bytes() / 37.5)


def test_workload_file_yaml(tmp_path: Path, host):
    (tmp_path / "w.yaml").write_text(
        "name: mine\nflags: {num: {expr: '10_000 * scale'}, value_size: 400}\n"
        "phases:\n  - {name: load, benchmarks: [fillseq]}\n  - {name: scan, benchmarks: [readseq], scored: true}\n"
    )
    w = load_workload(tmp_path / "w.yaml").resolve(2.0, host)
    assert w.name == "mine" and w.flags == {"num": 20_000, "value_size": 400}
    assert [p.name for p in w.scored_phases] == ["scan"]


BAD = [
    ({"phases": []}, "phases: expected a non-empty list"),
    ({"phases": [{"benchmarks": ["fillrandom"]}]}, "no phase has 'scored = true'"),
    ({"phases": [{"benchmarks": ["fillrandom"], "scored": True}], "flags": {"db": "/"}}, "flags.db: set by the tuner"),
    ({"phases": [{"benchmarks": ["fillrandom; rm -rf ~"], "scored": True}]}, "phases[0].benchmarks"),
    ({"phases": [{"benchmarks": ["readrandom"], "scored": True}, {"benchmarks": ["fillrandom"]}]},
     "phases[1].benchmarks: fillrandom needs a fresh DB"),
    ({"phases": [{"benchmarks": ["waitforcompaction"], "scored": True}]}, "needs a benchmark that reports ops/sec"),
    ({"phases": [{"benchmarks": ["fillrandom"], "scored": "yes"}]}, "phases[0].scored"),
    ({"phases": [{"benchmarks": ["fillrandom"], "scored": True}], "flags": {"num": [1]}}, "flags.num"),
    ({"phases": [{"benchmarks": ["fillrandom"], "scored": True}], "flags": {"num": {"exp": "1"}}}, "flags.num"),
    ({"phases": [{"benchmarks": ["fillrandom"], "scored": True}], "colour": 1}, "unknown top-level field(s) colour"),
    ({"phases": [{"benchmarks": ["readrandom"], "scored": True}],
      "preload": {"benchmarks": ["fillseq"], "each_run": "yes"}}, "preload.each_run: expected true or false, got 'yes'"),
    ({"phases": [{"name": "preload", "benchmarks": ["readrandom"], "scored": True}],
      "preload": {"benchmarks": ["fillseq"], "each_run": True}}, "phases: a phase is named 'preload'"),
]


@pytest.mark.parametrize("data, message", BAD)
def test_invalid_workload_names_the_field(data, message):
    with pytest.raises(WorkloadError) as err:
        Workload.from_dict(data)
    assert message in str(err.value)


def test_a_study_table_is_no_field_of_a_workload():
    """A source study's definition (its sweep, scale and notes) lives with its runner, experiments/studies/, not
    in its workload: a workload file with a leftover [study] table is refused, as any unknown field is."""
    spec = {"phases": [{"benchmarks": ["fillrandom"], "scored": True}], "study": {"title": "t", "sweep": {}}}
    with pytest.raises(WorkloadError, match=r"unknown top-level field\(s\) study"):
        Workload.from_dict(spec)


def test_bad_expression_names_the_flag(host):
    w = Workload.from_dict({"phases": [{"benchmarks": ["fillrandom"], "scored": True}],
                            "flags": {"num": {"expr": "1000 * cpus"}}})
    with pytest.raises(WorkloadError, match=r"flags.num: unknown name 'cpus'"):
        w.resolve(1.0, host)


def test_unknown_workload():
    with pytest.raises(WorkloadError, match="unknown workload 'nope'"):
        load_workload("nope")


@pytest.mark.parametrize(("name", "reads"), [("steady-overwrite", None), ("fillrandom", None),
                                             ("steady-readwhilewriting", "readwhilewriting"),
                                             ("steady-readrandom", "readrandom")])
def test_a_plain_script_scores_the_phase_that_reads(name: str, reads: str | None) -> None:
    from experiments.versus_plain_optuna.versus_plain_optuna import read_phase

    phase = read_phase(load_workload(name).resolve(1.0, Context(cores=2, ram=2**34)))
    assert (phase and phase.benchmarks[-1]) == reads


def test_a_preload_each_run_runs_is_the_first_phase_of_a_load_workload(host):
    """[preload] each_run = true: a study runs the workload as a load one whose first phase is the
    preload (its flags, unscored), so each run's own options write the DB its scored phases read."""
    spec = {"flags": {"num": 1000}, "preload": {"benchmarks": ["fillseq"], "flags": {"disable_wal": True}},
            "phases": [{"name": "reads", "benchmarks": ["readrandom"], "scored": True}]}
    once = Workload.from_dict(spec)
    each = Workload.from_dict({**spec, "preload": {**spec["preload"], "each_run": True}})
    assert once.kind == each.kind == "preloaded" and once.loading_each_run() is once
    runs = each.loading_each_run().resolve(1.0, host)
    assert runs.kind == "load" and [p.name for p in runs.phases] == ["preload", "reads"]
    assert runs.phase_flags(0) == {"num": 1000, "disable_wal": True} and not runs.phases[0].scored
    assert runs.loading_each_run() is runs


def test_a_preload_each_run_runs_ends_as_one_built_once_and_the_phases_after_it_as_on_a_preloaded_db(host):
    """The preload in the run drains as Runner.preload does; the scored phase after it, as on a DB built once
    (benchmark.sh's steady state), also where --db-snapshot keeps the workload preloaded; a load workload's
    phases drain plainly."""
    preset = load_workload("steady-readrandom").resolve(1.0, host)
    runs = preset.loading_each_run()
    assert runs.runs_its_preload and not preset.runs_its_preload
    assert [phase_drain(runs, 0), phase_drain(runs, 1)] == [DRAIN, STEADY_DRAIN]
    assert phase_drain(preset, 0) == STEADY_DRAIN  # on the user's DB (--db-snapshot): its one phase is the reads
    assert [phase_drain(load_workload("readrandom"), i) for i in (0, 1)] == [DRAIN, DRAIN]
    assert phase_drain(replace(runs, drain=False), 0) == DRAIN and phase_drain(replace(runs, drain=False), 1) == ()
