"""`python -m experiments.studies`: definitions checked, and the whole pipeline (sweep, tuner,
interleaved head-to-head, report, MLflow) run for real on a tiny data set (--quick)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import optuna
import pytest
from mlflow import MlflowClient

from experiments.studies import runner
from experiments.studies.runner import DEFINITIONS, ExperimentRun
from experiments.studies.writeup import write_overview
from objectives.workloads import load_workload
from search_spaces import Context, SearchSpace, SpaceError, load_space
from tuner.engine._attrs import Start
from tuner.engine._warmstart import warm_start_auto
from tuner.events import Observer
from tuner.model import TuneConfig

STUDIES = [sys.executable, "-m", "experiments.studies"]


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*STUDIES, *args], capture_output=True, text=True, timeout=timeout)


def test_every_experiment_file_loads_and_its_sweep_resolves_here(host):
    for name in runner.names():
        e = runner.load(name)
        assert e.id == name and e.finding and e.scale_note and e.sweep_note
        space = e.sweep.resolve(Context(cores=host.cores, ram=host.ram, data=200_000_000, budget=host.ram // 4))
        assert 4 <= space.feasible_grid_size() <= 40, name


def test_grid_values_may_be_expressions_and_must_lie_in_the_range():
    spec = {"parameters": {"write_buffer_size": {"type": "int", "low": "data / 64", "high": "data / 2",
                                                 "grid": ["data / 64", "data / 2", "data / 2"],
                                                 "options_key": "CFOptions.write_buffer_size"}}}
    ctx = Context(cores=2, ram=8 << 30, data=64 << 20)
    space = SearchSpace.from_dict(spec).resolve(ctx)
    assert space.grid() == {"write_buffer_size": [1 << 20, 32 << 20]}  # duplicates dropped
    spec["parameters"]["write_buffer_size"]["grid"] = ["data"]
    with pytest.raises(SpaceError, match=r"write_buffer_size\.grid: \[67108864\] outside"):
        SearchSpace.from_dict(spec).resolve(ctx)


def test_an_experiments_tuner_learns_from_no_experiments_study():
    """S3's tuner once warm-started from S1's: a result would depend on which experiment ran first."""
    excluded = ExperimentRun(runner.load("S3"), Observer()).tuner_config(1, 60.0).search.library_exclude
    assert {f"{x}-" for x in runner.names()} | {"-quick-"} == set(excluded)


def test_another_workloads_best_configurations_are_clipped_into_this_space(tmp_path, host):
    """A study over a larger data set has a larger block cache range; its best configuration runs here
    with the cache clipped to this space's range (S1 once ran 232 MB outside its 208 MB range, and
    its plots then refused the trial)."""
    ctx = Context(cores=2, ram=host.ram, data=208_000_000, budget=host.ram // 4)
    small, big = (load_space("default").resolve(replace(ctx, data=d)) for d in (208_000_000, 464_000_000))
    storage = f"sqlite:///{tmp_path / 'lib.db'}"
    earlier = optuna.create_study(study_name="lib", storage=storage, direction="maximize")
    top = {"cache_size": 232_000_000, "compression_type": "zstd", "compression_level": 7, "bloom_bits": 10}
    earlier.add_trial(optuna.trial.create_trial(
        params=top, values=[1.0], distributions={k: big.parameter(k).distribution() for k in top},
        user_attrs={"outcome": "complete"}))
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "summary.json").write_text(json.dumps(
        {"study": "lib", "storage": storage, "best": {"trial": 0}, "space": "default", "objective": "throughput",
         "db_bench": {"version": "9.11.2"}, "workload": "fillrandom", "scale": 2.0, "data_bytes": 464_000_000}))
    parts = SimpleNamespace(name="new", space=small, score=SimpleNamespace(objective="throughput"),
                            found=SimpleNamespace(build=SimpleNamespace(version="9.11.2")), config=TuneConfig(scale=1.0),
                            workload=SimpleNamespace(name="S1", data_bytes=lambda: 208_000_000))
    store = SimpleNamespace(parts=parts, study=optuna.create_study(direction="maximize"))
    note, configurations = warm_start_auto(store, tmp_path)
    assert "then runs the 1 best configurations of lib" in note
    assert configurations == [Start("lib#0", {**top, "cache_size": small.parameter("cache_size").high}, optional=True)]


_STUDY = 'workload = "fillrandom"\n'
_BAD_WORKLOAD = 'name = "X"\n'  # no phases: the workload's own error, which names its file


@pytest.mark.parametrize("text, message", [
    (_STUDY + '[sweep.parameters.subcompactions]\ntype = "int"\nlow = 1\nhigh = 4\n'
     'options_key = "DBOptions.max_subcompactions"\n', "sweep.parameters.subcompactions: needs a 'grid'"),
    (_STUDY + 'budget = 3\nsweep = {}\n', "bad.toml: unknown field(s) budget"),
    ('sweep = {}\n', "bad.toml: workload: missing"),
    (_STUDY + 'scale = -1\nsweep = {}\n', "bad.toml: scale: expected a number > 0"),
    (_STUDY + 'sweep = 3\n', "bad.toml: sweep: missing, or not a table"),
    ('workload = "WORKLOAD"\nsweep = {}\n', "workload.toml: phases: expected a non-empty list"),
])
def test_bad_experiment_file_is_one_clear_error(tmp_path, text, message):
    path, workload = tmp_path / "bad.toml", tmp_path / "workload.toml"
    workload.write_text(_BAD_WORKLOAD)
    path.write_text(text.replace("WORKLOAD", str(workload)))
    result = _cli(str(path), "--quick", "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "runs").exists()


def test_a_study_is_defined_once_beside_its_runner_and_runs_its_workload_preset():
    """S0-S4 are the study files of experiments/studies/: each runs the workload preset of its name, whose
    baseline is the study's hand-found configuration (what `--workload S2` runs in an ordinary `tune`);
    a workload preset is no experiment."""
    assert runner.names() == ["S0", "S1", "S2", "S3", "S4"]
    for name in runner.names():
        e = runner.load(name)
        assert e.path == DEFINITIONS / f"{name}.toml" and e.id == name and e.workload == name
        assert [b.name for b in load_workload(e.workload).baselines] == [f"hand-found:{name}"]
    with pytest.raises(runner.ExperimentError, match=r"unknown experiment 'fillrandom': not a study \(S0, S1"):
        runner.load("fillrandom")


@pytest.mark.parametrize("args, message", [
    (["S0", "--rerun", "../elsewhere"], "argument --rerun: a label of letters, digits, '.', '-' and '_'"),
    (["S0", "--rerun", "10.4.2", "--quick"], "--rerun: not with --quick"),
    (["S0", "S1", "--rerun", "10.4.2", "--results", "r"], "--results: names one report directory"),
    (["S0", "--rerun", "10.4.2", "--report-only"],
     "--report-only: experiments/studies/results/S0/rerun-10.4.2/result.json does not exist"),
])
def test_a_rerun_is_kept_beside_the_committed_results_and_bad_uses_are_one_clear_error(args, message):
    result = _cli(*args)
    assert result.returncode == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1, \
        result.stderr


def test_a_tie_over_seeds_says_what_that_many_seeds_could_tell_and_a_clear_verdict_does_not():
    """The write-up's verdict on a tie over seeds carries the resolution the closing table gives a tie over
    rounds (tuner.stats.resolution, with the seed as the unit); a verdict whose interval clears 1 has none."""
    from experiments.studies.writeup import _verdict_lines
    from tuner.stats import across_seeds, resolution

    def result(vs_default: dict) -> dict:
        return {"head_to_head": {"configurations": []}, "hand_found": None,
                "tuner": {"across_seeds": {"vs_default": vs_default}}, "defaults": None}

    tie = across_seeds([1.30, 0.95, 1.10])
    assert tie.verdict == "tie"
    can = resolution(tie.ratio, tie.ci95, 3)
    lines = _verdict_lines(result(tie.to_dict()))
    assert (f"  - resolution: 3 seeds of this spread tell apart only differences of {can.smallest:.2f}x or more; "
            f"an estimate of {tie.ratio:.2f}x would need about {can.rounds_needed} seeds of this spread to tell."
            in lines)
    clear = across_seeds([1.20, 1.22, 1.18])
    assert clear.verdict == "faster"
    assert not [line for line in _verdict_lines(result(clear.to_dict())) if "resolution" in line]


@pytest.mark.dbbench
def test_quick_experiment_runs_the_three_steps_and_reports(tmp_path, session_store, work_dir):
    runs = tmp_path / "runs"
    result = _cli("S2", "--quick", "--runs-dir", str(runs), "--work-dir", str(work_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    out = runs / "S2-quick" / "results"
    r = json.loads((out / "result.json").read_text())
    assert r["quick"] and r["sweep"]["runs"] == 3
    seeds = r["tuner"]["seeds"]
    assert [(t["seed"], t["runs"]) for t in seeds] == [(1, 3), (2, 3)]  # two searches, 3 trials each
    assert all(t["seeded"][0] == "runs rocksdb-default, benchmark.sh first" for t in seeds)
    assert all(t["outcome"] in ("complete", "rejected") for t in r["sweep"]["trials"])  # an infeasible grid point
    assert all(t["provenance"] == "grid point" for t in r["sweep"]["trials"])
    h2h = {c["name"]: c for c in r["head_to_head"]["configurations"]}
    assert list(h2h) == ["rocksdb-default", "benchmark.sh", "hand-found:S2", "sweep best", "tuned best (seed 1)",
                         "tuned best (seed 2)"]
    for c in h2h.values():
        assert len(c["ops_per_sec"]) == 2 and c["median_ops_per_sec"] > 0, c
    assert h2h["rocksdb-default"]["vs_default"]["ci95"] == [1.0, 1.0]  # paired by round: itself, exactly
    verdicts = r["tuner"]["across_seeds"]
    per_seed = [h2h[f"tuned best (seed {s})"]["vs_hand_found"]["ratio"] for s in (1, 2)]
    assert verdicts["vs_hand_found"]["seeds"] == per_seed
    assert verdicts["vs_hand_found"]["worst"] == min(per_seed)
    assert h2h["rocksdb-default"]["doc"] == r["defaults"]["describe"] and r["defaults"]["version"] == r["db_bench"]["version"]
    assert f"{r['db_bench']['path']}), every run on {r['defaults']['describe']}." in (out / "report.md").read_text()
    assert h2h["benchmark.sh"]["flags"]["compression_type"] == "zstd"
    assert h2h["hand-found:S2"]["flags"]["max_write_buffer_number"] == 4
    # interleaved: round 0 of every configuration was measured before any round 1
    logs = runs / "S2-quick" / "tuner-seed1" / "head_to_head"
    first_rounds = [(logs / n.replace(" ", "-").replace(":", "-") / "round-0") for n in h2h]
    second_rounds = [(logs / n.replace(" ", "-").replace(":", "-") / "round-1") for n in h2h]
    assert max(p.stat().st_mtime for p in first_rounds) <= min(p.stat().st_mtime for p in second_rounds)
    report = (out / "report.md").read_text()
    assert "## 3. Head-to-head: 2 interleaved rounds" in report and "## 2. The tuner: 2 searches (seeds)" in report
    assert {p.name for p in out.glob("*.png")} == {"sweep.png", "history.png", "head_to_head.png"}
    assert not [p for p in work_dir.iterdir() if p.name.startswith("rocksdb-tuner-")]

    client = MlflowClient(session_store)
    exp = client.get_experiment_by_name("experiment-S2")
    found = client.search_runs([exp.experiment_id], "tags.experiment = 'S2'", max_results=500)
    steps = {run.data.tags.get("experiment_step") for run in found}
    assert steps == {"sweep", "tuner", "head-to-head"}
    assert {run.data.tags.get("study") for run in found if run.data.tags.get("role") == "study"} >= {
        "S2-quick-tuner-seed1", "S2-quick-tuner-seed2"}
    h2h_runs = [run for run in found if run.data.tags.get("configuration")]
    assert sorted(run.data.tags["configuration"] for run in h2h_runs) == sorted(h2h)
    assert all("median_ops_per_sec" in run.data.metrics for run in h2h_runs)

    again = _cli("S2", "--quick", "--runs-dir", str(runs), "--work-dir", str(work_dir))
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((out / "result.json").read_text())["head_to_head"] == r["head_to_head"]  # resumed, not re-run

    overview = tmp_path / "results"  # S2's run, and a re-run of S0 kept beside S0's (absent) report
    for where, result in (("S2", r), ("S0/rerun-elsewhere", {**r, "id": "S0"})):
        (overview / where).mkdir(parents=True)
        (overview / where / "result.json").write_text(json.dumps({**result, "quick": False}))
    table = write_overview(overview).read_text()
    main, reruns = table.split("## Re-runs: elsewhere")
    assert "| [S2](S2/report.md)" in main and "[S0]" not in main
    assert "| [S0](S0/rerun-elsewhere/report.md)" in reruns and "[S2]" not in reruns
