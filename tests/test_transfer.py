"""The scripts that re-measure an answer elsewhere, run for real at a tiny target (issue 42):
experiments/version_transfer (does an answer survive an upgrade?) on versions `make test` always has:
the release 11.8 on its library defaults and 7.8 (Debian's 7.8.3, with no library defaults of its own to
read: its db_bench defaults, said as neither shape), and Ctrl-C leaving no db_bench and no preloaded DB;
experiments/scale_transfer in the deployed shape of the study's version, which it names; and the
held-out rounds they share with versus_plain_optuna."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.held_out import answer_of, interleaved, shape
from objectives.contract import RunFailed
from objectives.defaults import LIBRARY, PINNED_7_8, Defaults
from tests.conftest import leftovers
from tests.test_cli import _db_bench_running, signal_once_running, tuner
from tuner.summary import Summary

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = [sys.executable, "-m", "experiments.version_transfer.version_transfer"]
# make tune's answer on 11.8.1 (its target: 2 GiB within 1 GiB, 30 s phases), committed with its outputs
STUDY = ROOT / "experiments" / "default_job" / "results" / "default-job-11.8.1-rerun-2026-11-27"
TINY = ["--target-data", "64MiB", "--target-memory", "256MiB"]
MiB = 2**20


def _script(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*SCRIPT, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.mark.dbbench
@pytest.mark.release_build
def test_the_answer_and_each_versions_defaults_are_measured_on_each_build_at_a_tiny_target(tmp_path):
    work, out = tmp_path / "work", tmp_path / "record.json"
    work.mkdir()
    r = _script("--study", str(STUDY), "--versions", "7.8,11.8", *TINY, "--duration", "2", "--rounds", "2",
                "--work-dir", str(work), "--out", str(out))
    assert r.returncode == 0, r.stderr + r.stdout
    record = json.loads(out.read_text())
    summary = Summary.load(STUDY / "summary.json")
    answer, flags = answer_of(summary)
    assert record["configurations"] == {"rocksdb-default": {}, answer: flags} and answer == "answer: trial 47"
    assert set(record["builds"]) == {"7.8.3", "11.8.1"} and not record["at_the_study_target"]
    assert record["study"]["commit"] and record["study"]["db_bench"]["version"] == "11.8.1"
    assert record["builds"]["11.8.1"]["build_info"] is not None  # make test's release build
    for version, build in record["builds"].items():
        assert build["db_bench"]["version"] == version
        if build["build_info"] is not None:  # a release build: its library defaults, the deployed shape
            assert build["build_info"]["version"] == version
            assert build["defaults"]["mode"] == LIBRARY and build["defaults"]["version"] == version
            assert build["shape"].startswith("the deployed shape: RocksDB " + version)
            assert build["workload_flags"]["level_compaction_dynamic_level_bytes"] is True  # the library's from 8.4
        else:  # Debian's 7.8.3 (unless a release 7.8 was built here): no library defaults to read
            assert build["defaults"]["mode"] == "db_bench"
            assert build["shape"].startswith("neither the deployed nor the pinned shape")
        assert abs(build["data_bytes"] - 64 * MiB) < MiB and build["memory_bytes"] == 256 * MiB
        assert build["duration_seconds"] == 2 and build["preload"]["size_bytes"] > 0
        for config, runs in record["samples"][version].items():
            assert len(runs) == 2 and all(run and run["ops_per_sec"] > 0 for run in runs), (version, config)
            assert all((run.get("memory_peak_bytes") or 0) <= 256 * MiB for run in runs)
        gain = record["answer_over_default"][version]
        assert gain["n"] == 2 and gain["ci95"] is not None
    assert set(record["over_study_version"]) == {"7.8.3 / 11.8.1"}
    assert "round 2/2 7.8.3 rocksdb-default:" in r.stdout and "wrote " + str(out) in r.stdout
    assert leftovers(work) == []  # the preloaded DBs and every run's directory removed


@pytest.mark.dbbench
@pytest.mark.release_build
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_a_sigterm_stops_db_bench_and_removes_the_preloaded_dbs(tmp_path, sig):
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.Popen([*SCRIPT, "--study", str(STUDY), "--versions", "11.8,7.8", *TINY, "--duration", "5",
                             "--rounds", "3", "--work-dir", str(work), "--out", str(tmp_path / "never.json")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    # both DBs built ("7.8.3: preloaded"); the rounds' first db_bench next
    signal_once_running(proc, proc.stdout, "7.8.3: preloaded", work, sig, settle=0.5)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted ({sig.name})" in err and not (tmp_path / "never.json").exists()
    assert not _db_bench_running(work) and leftovers(work) == []


@pytest.mark.dbbench
@pytest.mark.release_build
def test_scale_transfer_runs_in_the_deployed_shape_of_the_studys_version_and_names_it(tmp_path):
    study, out, work = tmp_path / "study", tmp_path / "scale.json", tmp_path / "work"
    work.mkdir()
    r = tuner("tune", "--workload", "steady-overwrite", *TINY, "--duration", "2", "--trials", "2", "--seed", "1",
              "--sampler", "random", "--rocksdb-version", "11.8", "--out", str(study), "--no-mlflow")
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "experiments.scale_transfer.scale_transfer", "--study", str(study),
                        "--factors", "1", "--rounds", "2", "--work-dir", str(work), "--out", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr + r.stdout
    record = json.loads(out.read_text())
    named = "the deployed shape: RocksDB 11.8.1's library defaults"
    assert record["shape"].startswith(named) and named in r.stdout.splitlines()[0]
    assert record["defaults"]["mode"] == LIBRARY and record["db_bench"]["version"] == "11.8.1"
    (size,) = record["sizes"]
    assert size["duration_seconds"] == 2 and abs(size["memory_bytes"] - 256 * MiB) < MiB  # the trials' share of it
    assert size["flags"]["level_compaction_dynamic_level_bytes"] is True
    assert all(len(runs) == 2 for runs in size["samples"].values()) and size["best_over_default"]["n"] == 2
    assert leftovers(work) == []


def test_a_study_not_made_at_a_target_and_a_memory_without_data_are_refused_in_one_line(tmp_path):
    study = tmp_path / "study"
    study.mkdir()
    summary = Summary.load(STUDY / "summary.json")
    assert summary.target is not None
    (study / "summary.json").write_text(summary.updated(target=summary.target.updated(assumed=True)).to_json())
    r = _script("--study", str(study), "--versions", "11.8")
    assert r.returncode == 1 and r.stderr.strip().endswith("not made at a target (tune --target-data); nothing to "
                                                           "measure at"), r.stderr
    r = _script("--study", str(STUDY), "--target-memory", "256MiB")
    assert r.returncode == 2 and "--target-memory: only with --target-data" in r.stderr


def test_held_out_rounds_run_each_configuration_once_a_round_in_fresh_orders_and_pair_around_a_failure():
    orders: list[list[str]] = [[]]

    def run(name: str, i: int) -> dict[str, float | None]:
        if len(orders) <= i:
            orders.append([])
        orders[i].append(name)
        if name == "b" and i == 1:
            raise RunFailed("phase overwrite: db_bench exit code 1")
        return {"ops_per_sec": {"a": 200.0, "b": 100.0, "c": 50.0}[name] * (1 + i)}

    done = interleaved(["c", "a", "b"], 4, run, random.Random(3))
    assert [sorted(o) for o in orders] == [["a", "b", "c"]] * 4 and len({tuple(o) for o in orders}) > 1
    assert done.metrics["b"][1] is None and done.failed == {"b": ["phase overwrite: db_bench exit code 1"]}
    assert done.ops("b") == [100.0, 0.0, 300.0, 400.0] and len(done.measured("b")) == 3
    gain = done.ratio("a", "b")
    assert gain.n == 3 and gain.ratio == pytest.approx(2.0)  # the failed round left out, not paired
    assert done.median_ops()["b"] == 300.0


def test_the_shape_is_named_as_the_docs_name_it():
    assert shape(Defaults(LIBRARY, "11.8.1")).startswith("the deployed shape: RocksDB 11.8.1's library defaults")
    assert shape(Defaults(PINNED_7_8, "7.8.3")).startswith("the pinned shape: RocksDB 7.8.3's db_bench defaults")
