"""Answers for the size a user deploys (issue 30): a target (data, memory, base OPTIONS), trials in
its LSM shape, preloaded DBs and their checkpoints, confirmation at the target, and bad targets
refused before any run. The live tests run the real db_bench."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import optuna
import pytest

from objectives.measurement import measure
from objectives.runner import Runner
from objectives.workloads import load_workload
from search_spaces import Context, GiB, MiB
from tests.conftest import first_measured, leftovers, printed_summary, summary_of
from tests.test_cli import tuner
from tuner import options_file, ranking
from tuner.engine._prepare import _memory_note, memory_plan
from tuner.model import TargetConfig, UsageError
from tuner.target import (
    LEAST_TARGET_MEMORY,
    SHAPE,
    Target,
    check_memory,
    load_base_options,
    lsm_levels,
    make_target,
    scaled,
    shaped,
)
from tuner.trials import TrialRecord

OPTIONS = """[Version]
  rocksdb_version=9.11.2
[DBOptions]
  max_background_jobs=6
  bytes_per_sync=1048576
[CFOptions "default"]
  write_buffer_size=134217728
  target_file_size_base=33554432
  max_bytes_for_level_base=134217728
  max_bytes_for_level_multiplier=8.000000
  level0_file_num_compaction_trigger=2
  compression=kLZ4Compression
  comparator=leveldb.BytewiseComparator
[TableOptions/BlockBasedTable "default"]
  filter_policy=bloomfilter:10:false
  block_size=16384
"""


def test_lsm_levels_follow_the_level_sizes():
    shape = {f: d for f, (_, d) in SHAPE.items()}  # RocksDB's: L1 256 MiB, x10
    assert lsm_levels(200 * MiB, shape) == 1
    assert lsm_levels(1 * GiB, shape) == 2  # L1 full, L2 partly
    assert lsm_levels(2 * GiB + 512 * MiB, shape) == 2  # L1 + L2 hold 2.75 GiB
    assert lsm_levels(4 * GiB, shape) == 3
    assert lsm_levels(64 * GiB, shape) == 4
    # the toy default job: 232 MB with L1 scaled to 64 MiB has two levels, at RocksDB's sizes one
    assert lsm_levels(232_000_000, {**shape, "max_bytes_for_level_base": 64 * MiB}) == 2
    assert lsm_levels(232_000_000, shape) == 1


def test_at_a_target_a_presets_scaled_options_give_way_to_the_targets(tmp_path):
    # S0 scales its memtables with its data to imitate its study; at a target they are the target's
    s0 = load_workload("S0").resolve(1.0, Context(cores=2, ram=24 * GiB))
    assert "write_buffer_size" in s0.flags
    target = make_target(4 * GiB, None, None, s0.data_bytes(), 24 * GiB)
    flags = shaped(s0.flags, target, {"write_buffer_size"})
    assert "write_buffer_size" not in flags  # RocksDB's default, as the baseline "rocksdb-default" runs it
    assert flags["target_file_size_base"] == 64 * MiB and flags["num"] == s0.flags["num"]
    path = tmp_path / "OPTIONS"
    path.write_text(OPTIONS)
    users = make_target(4 * GiB, None, path, s0.data_bytes(), 24 * GiB)
    assert shaped(s0.flags, users, set())["write_buffer_size"] == users.base["write_buffer_size"]


def test_base_options_keep_the_users_shape_and_options(tmp_path):
    path = tmp_path / "OPTIONS"
    path.write_text(OPTIONS)
    shape, other = load_base_options(path)
    assert shape["target_file_size_base"] == 32 * MiB and shape["max_bytes_for_level_base"] == 128 * MiB
    assert shape["max_bytes_for_level_multiplier"] == 8 and shape["level0_file_num_compaction_trigger"] == 2
    assert shape["level0_stop_writes_trigger"] == 36  # not in the file: RocksDB's default
    assert other == {"write_buffer_size": 128 * MiB, "compression_type": "lz4", "max_background_jobs": 6,
                     "bytes_per_sync": 1048576, "bloom_bits": 10, "block_size": 16384}
    target = make_target(4 * GiB, 1 * GiB, path, 0, ram=8 * GiB)
    assert target.levels() == 3 and not target.assumed and str(path) in target.source
    # what a load preset scales down is listed against the target's value
    rows = scaled({"target_file_size_base": 8 * MiB, "num": 5}, target)
    assert [(r["option"], r["trial"], r["target"]) for r in rows] == [("target_file_size_base", 8 * MiB, 32 * MiB)]


@pytest.mark.parametrize("data, memory, base, ram, match", [
    (4 * GiB, 32 * GiB, None, 24 * GiB, "--target-memory: 32,768 MiB; this machine has 24,576 MiB"),
    (None, 1 * GiB, None, 24 * GiB, "--target-memory: give the data it serves too"),
    (0, None, None, 24 * GiB, "--target-data: must be > 0"),
    (4 * GiB, None, "missing.ini", 24 * GiB, "--base-options missing.ini: cannot read it"),
])
def test_bad_targets_are_refused_with_the_flag_named(data, memory, base, ram, match):
    with pytest.raises(UsageError, match=match):
        make_target(data, memory, Path(base) if base else None, 0, ram)


@pytest.mark.parametrize("command", [
    ("tune", "--target-data", "2GiB", "--trials", "1", "--no-mlflow", "--out", "o2"),
    ("measure", "--rate", "100"),
])
def test_a_target_memory_below_what_a_run_can_work_in_is_refused_before_any_run(tmp_path, command):
    """Not held to 64 MiB in silence (tune: the trials' floor) nor killed for memory at every run
    (measure): one line naming the flag, exit 2, nothing run or written."""
    r = tuner(*command, "--target-memory", "1KiB", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == \
        "rocksdb-tuner: error: --target-memory: 1.0 KiB is below the least a study or a measurement runs in (32 MiB)"
    assert os.listdir(tmp_path) == []


def test_the_least_target_memory_is_taken_and_a_byte_less_is_not():
    check_memory(None)
    check_memory(LEAST_TARGET_MEMORY)  # the confirmation test below runs its target within it
    with pytest.raises(UsageError, match=r"^--target-memory: 32 MiB is below the least a study or a measurement runs "
                                         r"in \(32 MiB\)"):
        check_memory(LEAST_TARGET_MEMORY - 1)


def test_finalists_come_from_distinct_regions():
    """Three near-identical configurations lead by a hair; a distinct one close behind is a finalist."""
    dist = optuna.distributions.FloatDistribution(0, 1)

    def trial(number: int, ops: float, x: float) -> optuna.trial.FrozenTrial:
        return optuna.trial.create_trial(params={"x": x}, distributions={"x": dist}, values=[ops],
                                         user_attrs={"outcome": "complete", "metrics": {"ops_per_sec": ops}})

    trials = [trial(0, 100, 0.50), trial(1, 99, 0.51), trial(2, 98, 0.52), trial(3, 97, 0.95), trial(4, 10, 0.0)]
    for i, t in enumerate(trials):
        t.number = i
    chosen = ranking.distinct_top(trials, ["maximize"], 3, lambda a, b: abs(a["x"] - b["x"]))
    assert [t.number for t in chosen] == [0, 1, 3]  # the best, the distinct one, then the next best
    assert len(ranking.distinct_top(trials, ["maximize"], 3, lambda a, b: 0.0)) == 3  # all alike: the top 3


def _files(db: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(db.iterdir()) if p.is_file()}


@pytest.mark.dbbench
def test_checkpoints_leave_the_preloaded_db_untouched(db_bench, host, work_dir, tmp_path):
    """Two runs write and compact on checkpoints of one preloaded DB; its files stay byte for byte."""
    workload = replace(load_workload("steady-overwrite"), duration=2.0).resolve(0.01, host)  # 50k keys, 21 MB
    runner = Runner(db_bench, work_dir)
    built = runner.preload(workload, tmp_path / "logs", seed=1)
    assert (built.path / "CURRENT").is_file() and not built.reused and built.size_bytes > 5 * MiB
    before = _files(built.path)
    workload = replace(workload, snapshot=str(built.path))
    for flags in ({}, {"write_buffer_size": 1 * MiB, "compression_type": "none"}):
        m = measure(runner, workload, flags, tmp_path / "run", 1, 1)
        assert m.metrics["ops_per_sec"] > 0 and m.metrics["checkpoint_seconds"] < 2.0
        assert m.metrics["write_amp"] > 0  # it wrote: flushes and compactions on the checkpoint
    assert _files(built.path) == before
    assert runner.preload(workload, tmp_path / "logs", seed=1).reused  # a resumed study finds it
    assert leftovers(work_dir) == [built.path.parent.name]  # the runs' checkpoints are gone


@pytest.mark.dbbench
def test_a_preload_each_run_runs_is_written_by_each_runs_options(db_bench, host, work_dir, tmp_path):
    """steady-readrandom loads its DB in every run with that run's options: without compression its DB
    is larger than with zstd; on a DB preloaded once with the base options both read the same files."""
    named = replace(load_workload("steady-readrandom"), duration=1.0)
    assert named.preload_each_run
    runner = Runner(db_bench, work_dir)
    plain, packed = {"compression_type": "none"}, {"compression_type": "zstd", "bloom_bits": 10}
    each = named.loading_each_run().resolve(0.01, host)  # 50k keys, 21 MB
    sizes = [measure(runner, each, flags, tmp_path / f"each-{i}", 1, 1).metrics["db_size_bytes"]
             for i, flags in enumerate((plain, packed))]
    assert sizes[0] > 1.5 * sizes[1]
    once = replace(named, preload_each_run=False).resolve(0.01, host)
    once = replace(once, snapshot=str(runner.preload(once, tmp_path / "logs", seed=1).path))
    sizes = [measure(runner, once, flags, tmp_path / f"once-{i}", 1, 1).metrics["db_size_bytes"]
             for i, flags in enumerate((plain, packed))]
    assert abs(sizes[0] - sizes[1]) < 0.05 * sizes[0]
    assert leftovers(work_dir) == [Path(once.snapshot).parent.name]  # the runs' DBs are gone


@pytest.mark.dbbench
def test_a_target_shaped_trial_runs_in_the_targets_lsm_shape(tmp_path):
    """--target-data on a preloaded workload: the trials' OPTIONS files have RocksDB's file and level
    sizes (never scaled down); with --base-options, the user's; the summary says what the target is."""
    r = tuner("tune", "--workload", "steady-overwrite", "--target-data", "24MiB", "--duration", "2s", "--trials",
              "1", "--no-starts", "--sampler", "random", "--seed", "1", "--out", "o", "--no-mlflow", "--no-plots",
              drain=True)
    assert r.returncode == 0, r.stderr
    sections = options_file.parse_options((first_measured(tmp_path / "o") / "OPTIONS").read_text())
    assert options_file.lookup(sections, "CFOptions.target_file_size_base") == str(64 * MiB)
    assert options_file.lookup(sections, "CFOptions.max_bytes_for_level_base") == str(256 * MiB)
    summary = summary_of(tmp_path / "o")
    target = summary.target
    assert target is not None and target.trial_data_bytes is not None
    assert target.data_bytes == 24 * MiB and not target.assumed and target.scaled == []
    assert abs(target.trial_data_bytes - 24 * MiB) < 1000 and target.kind == "preloaded"
    assert target.duration_seconds == 2 and "2 s per timed phase" in r.stdout
    assert "target: 24 MiB of data" in r.stdout and "scaled: nothing" in r.stdout
    command = (first_measured(tmp_path / "o") / "overwrite.command").read_text()
    assert "--use_existing_db=true" in command and "--duration=2" in command
    assert summary.preload is not None and summary.preload.trials is not None
    preloads = Path(str(summary.preload.trials.path)).parents[1]
    assert not any(n.startswith("rocksdb-tuner-preload") for n in os.listdir(preloads))

    base = tmp_path / "OPTIONS"
    base.write_text(OPTIONS)
    r = tuner("tune", "--workload", "steady-overwrite", "--target-data", "24MiB", "--duration", "2s", "--trials",
              "1", "--no-starts", "--sampler", "random", "--seed", "1", "--out", "b", "--no-mlflow", "--no-plots",
              "--base-options", str(base), "--target-memory", "512MiB", drain=True)  # the memory its memtables need
    assert r.returncode == 0, r.stderr
    sections = options_file.parse_options((first_measured(tmp_path / "b") / "OPTIONS").read_text())
    assert options_file.lookup(sections, "CFOptions.target_file_size_base") == str(32 * MiB)
    assert options_file.lookup(sections, "CFOptions.level0_file_num_compaction_trigger") == "2"
    assert options_file.lookup(sections, "DBOptions.bytes_per_sync") == "1048576"  # not searched: the user's
    baselines = {b.name: b for b in summary_of(tmp_path / "b").baselines}
    assert baselines["current"].params["write_buffer_size"] == 128 * MiB  # searched: the user's, as a baseline


@pytest.mark.dbbench
def test_the_search_runs_shorter_phases_and_the_revalidation_confirms_in_the_workloads(tmp_path):
    """--search-duration 1s beside --duration 3s: the trials and baselines overwrite for 1 s, the
    re-validation's runs for 3 s, all on checkpoints of the one preloaded DB; the summary and the
    closing table say both; a resume in other phases is refused with the flag to give."""
    r = tuner("tune", "--workload", "steady-overwrite", "--target-data", "24MiB", "--target-memory", "512MiB",
              "--duration", "3s", "--search-duration", "1s", "--trials", "2", "--no-starts", "--sampler", "random", "--seed", "1",
              "--revalidate", "1", "--revalidate-rounds", "2", "--revalidate-max-rounds", "2", "--no-ablation", "--any-cost",
              "--out", "o", "--no-mlflow", "--no-plots", drain=True)
    assert r.returncode == 0, r.stderr
    searched = [(first_measured(tmp_path / "o") / "overwrite.command").read_text(),
                *(p.read_text() for p in (tmp_path / "o" / "baselines").rglob("overwrite.command"))]
    confirmed = [p.read_text() for p in (tmp_path / "o").glob("revalidation*/**/overwrite.command")]
    assert len(searched) >= 2 and all("--duration=1 " in c or c.rstrip().endswith("--duration=1") for c in searched)
    assert len(confirmed) == 4 and all("--duration=3" in c for c in confirmed)  # 2 rounds of the best and the defaults
    summary = summary_of(tmp_path / "o")
    assert summary.target is not None and summary.preload is not None and summary.study is not None
    assert summary.target.duration_seconds == 1 and summary.target.confirm_duration_seconds == 3
    assert summary.preload.builds == 1  # the re-validation starts from the trials' DB
    assert "1 s per timed phase" in r.stdout and "confirms the answer in 3 s phases" in r.stdout
    assert "paired rounds of 3 s phases" in r.stderr  # the plan, before the first trial
    again = tuner("tune", "--workload", "steady-overwrite", "--target-data", "24MiB", "--target-memory", "512MiB",
                  "--duration", "3s",
                  "--search-duration", "2s", "--trials", "3", "--revalidate", "1", "--out", "o", "--no-mlflow",
                  "--study", summary.study, drain=True)
    assert again.returncode == 2 and "--search-duration: study" in again.stderr
    assert "trials run 1 s phases, not 2 s" in again.stderr and "give --search-duration 1s" in again.stderr


@pytest.mark.dbbench
def test_fidelity_rungs_at_a_target_keep_its_shape_and_memory_ratio(tmp_path):
    """--fidelity with --target-data on a load workload: every rung runs in the target's LSM shape,
    within its fraction of the trials' memory (here more than rocksdb-default needs, the least a rung
    gets), and the study judges the rungs' agreement."""
    r = tuner("tune", "--workload", "fillrandom", "--target-data", "16MiB", "--target-memory", "1GiB",
              "--fidelity", "0.25,1", "--trials", "7", "--no-starts", "--no-baselines", "--revalidate", "0",
              "--sampler", "random", "--seed", "1", "--out", "o", "--no-mlflow", "--no-plots", "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    decided = summary.fidelity_agreement
    assert decided is not None and decided.rungs[0].n == 6
    audit = tmp_path / "o" / "trials" / f"{decided.audited[0]:04d}"
    nums = {}
    for rung in ("rung-0", "rung-1"):
        sections = options_file.parse_options((audit / rung / "OPTIONS").read_text())
        assert options_file.lookup(sections, "CFOptions.target_file_size_base") == str(64 * MiB), rung
        assert options_file.lookup(sections, "CFOptions.max_bytes_for_level_base") == str(256 * MiB), rung
        nums[rung] = int(re.search(r"--num=(\d+)", (audit / rung / "load.command").read_text())[1])
    assert nums["rung-0"] * 4 == pytest.approx(nums["rung-1"], rel=0.01)
    trial = next(t for t in summary.optuna_study().trials if t.number == decided.audited[0])
    full = max(d["memory"]["memory_limit_bytes"] for d in TrialRecord.of(trial).phases if d.get("memory"))
    # the cgroup rounds its limit down to whole pages
    assert full == pytest.approx(1024 * MiB, abs=MiB)
    assert TrialRecord.of(trial).rungs[0].memory_limit_bytes == pytest.approx(256 * MiB, abs=MiB)


@pytest.mark.dbbench
def test_a_preloaded_workload_starts_from_the_users_db_snapshot(tmp_path, db_bench):
    """--db-snapshot: runs start on hard-linked copies of the user's DB (never written, never removed),
    whose size is the target's data and whose OPTIONS file is the base; no DB is built."""
    mine = tmp_path / "mine"
    subprocess.run([db_bench.path, "--benchmarks=fillseq,flush", "--num=40000", "--key_size=20", "--value_size=400",
                    "--target_file_size_base=33554432", "--level0_file_num_compaction_trigger=2", f"--db={mine}",
                    "--progress_reports=false", "--disable_wal=true"], check=True, capture_output=True)
    before = _files(mine)
    r = tuner("tune", "--workload", "steady-overwrite", "--db-snapshot", str(mine), "--duration", "2s", "--trials", "1",
              "--no-starts", "--sampler", "random", "--seed", "1", "--out", "o", "--no-mlflow", "--no-plots",
              drain=True)
    assert r.returncode == 0, r.stderr
    assert _files(mine) == before and "hard-linked copy of --db-snapshot" in r.stderr
    sections = options_file.parse_options((first_measured(tmp_path / "o") / "OPTIONS").read_text())
    assert options_file.lookup(sections, "CFOptions.target_file_size_base") == str(32 * MiB)  # the snapshot's
    assert options_file.lookup(sections, "CFOptions.level0_file_num_compaction_trigger") == "2"
    summary = summary_of(tmp_path / "o")
    assert summary.target is not None and summary.study is not None
    assert summary.target.data_bytes == sum(f.stat().st_size for f in mine.iterdir() if f.is_file())
    assert summary.preload is None and summary.trials.complete == 1
    assert not (tmp_path / "o" / "preload-trials").exists()
    longer = tuner("tune", "--workload", "steady-overwrite", "--db-snapshot", str(mine), "--duration", "3s", "--trials",
                   "2", "--no-starts", "--sampler", "random", "--seed", "1", "--out", "o", "--no-mlflow",
                   "--study", summary.study, drain=True)
    assert longer.returncode == 2 and "--duration: study" in longer.stderr and "trials run 2 s phases, not 3 s" in longer.stderr
    for args, match in ((["--workload", "fillrandom"], "--db-snapshot: workload fillrandom loads its DB from empty"),
                        (["--workload", "steady-overwrite", "--scale", "0.5"], "--scale: the runs start from --db-snapshot"),
                        (["--workload", "steady-overwrite", "--db-snapshot", str(tmp_path)], "not a RocksDB directory")):
        bad = tuner("tune", "--db-snapshot", str(mine), *args, "--trials", "1", "--out", "never", "--no-mlflow")
        assert bad.returncode == 2 and match in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert _files(mine) == before


@pytest.mark.dbbench
def test_scaled_trials_keep_the_memory_the_defaults_need_and_a_target_with_less_is_said_first(tmp_path):
    """Trials on 0.1 of a 32 MiB target with 256 MiB of memory would get 64 MiB by its memory:data ratio,
    where RocksDB's defaults (two 64 MiB memtables) are killed for memory (issue 42): they get what
    rocksdb-default's memtables and block cache need, with a quarter for db_bench and the page cache,
    still less than the target's. Where the target's memory is less than that, one line says so before
    any run."""
    common = ("tune", "--workload", "fillrandom", "--scale", "0.1", "--target-data", "32MiB", "--trials", "1",
              "--no-starts", "--sampler", "random", "--seed", "1", "--no-mlflow")
    r = tuner(*common, "--target-memory", "256MiB", "--out", "o")
    assert r.returncode == 0, r.stderr
    memory = summary_of(tmp_path / "o").memory
    assert memory is not None and memory.limit_bytes is not None
    limit = memory.limit_bytes
    default = options_file.parse_options((tmp_path / "o" / "baselines" / "rocksdb-default" / "OPTIONS").read_text())
    memtables = int(options_file.lookup(default, "CFOptions.write_buffer_size")) * \
        int(options_file.lookup(default, "CFOptions.max_write_buffer_number"))
    assert memtables < limit * 3 // 4 and limit < 256 * MiB and "does not fit" not in r.stderr
    small = tuner(*common, "--target-memory", "96MiB", "--out", "small")
    assert small.returncode == 0, small.stderr
    lines = small.stderr.splitlines()
    said = next(i for i, line in enumerate(lines)
                if line.startswith("rocksdb-default does not fit the trials' 96 MiB (--target-memory): its 2 x "))
    assert said < lines.index("baseline rocksdb-default: running")


def test_scaled_trials_in_more_memory_than_the_targets_ratio_are_told_so_before_any_run():
    """--scale 0.25 of 2 GiB within 512 MiB: the target's ratio gives the trials 128 MiB, rocksdb-default's
    memtables and block cache need 214 MiB, and they get it; one line says what that costs and which --scale
    keeps the ratio. At --scale 0.5 the ratio's 256 MiB holds the defaults: no line."""
    target = Target(data=2 * GiB, memory=512 * MiB, shape={})
    deployment = TargetConfig(target_data=2 * GiB, target_memory=512 * MiB)
    needs = (214 * MiB, "2 x 64 MiB memtables + 32 MiB block cache")
    slot = SimpleNamespace(ram=24 * GiB)
    limit, _ = memory_plan(deployment, SimpleNamespace(data_bytes=lambda: 512 * MiB), slot, target, needs[0])
    assert limit == 214 * MiB
    assert _memory_note(deployment, limit, needs, target, 512 * MiB) == (
        "the trials run within 214 MiB, more than the target's memory:data ratio gives their data (128 MiB): "
        "rocksdb-default's 2 x 64 MiB memtables + 32 MiB block cache need it. They hold more of their data in memory "
        "than the target does, so what they rank (reads above all) may not carry to the target; --scale 0.42 or "
        "more keeps the ratio")
    limit, _ = memory_plan(deployment, SimpleNamespace(data_bytes=lambda: GiB), slot, target, needs[0])
    assert limit == 256 * MiB and _memory_note(deployment, limit, needs, target, GiB) is None
    assert _memory_note(deployment, 214 * MiB, needs, target, 2 * GiB) is None  # trials at the target's size
    tiny = Target(data=256 * MiB, memory=128 * MiB, shape={})  # 0.1 of it: 12.8 MiB by the ratio, 64 MiB at least
    note = _memory_note(TargetConfig(target_data=256 * MiB, target_memory=128 * MiB), 64 * MiB, None, tiny,
                        int(25.6 * MiB))
    assert note is not None and "(13 MiB): 64 MiB is the least a trial runs in." in note and note.endswith(
        "--scale 0.5 or more keeps the ratio")


@pytest.mark.dbbench
def test_without_a_target_the_summary_says_what_was_assumed_and_scaled(tmp_path):
    r = tuner("tune", "--workload", "fillrandom", "--scale", "0.02", "--trials", "1", "--no-starts", "--sampler",
              "random", "--out", "o", "--no-mlflow", "--no-plots")
    assert r.returncode == 0, r.stderr
    target = summary_of(tmp_path / "o").target
    assert target is not None and target.assumed
    assert {s.option for s in target.scaled} == {"target_file_size_base", "max_bytes_for_level_base"}
    assert "target: none given" in r.stdout and "scaled: target_file_size_base 256 KiB (RocksDB's default: 64 MiB)" \
        in r.stdout


@pytest.mark.parametrize("args, match", [
    (["--target-data", "4GiB", "--target-memory", "1TiB"], "--target-memory: 1,048,576 MiB; this machine has"),
    (["--target-data", "900TiB"], "--target-data: 921,600.0 GiB does not fit this machine"),
    (["--target-data", "4GiB", "--confirm-scale", "2", "--revalidate", "1"], "--confirm-scale: not with"),
    (["--target-data", "4GiB", "--fidelity", "0.25,1"], "--fidelity: not with a preloaded workload"),
    (["--workload", "fillrandom", "--duration", "30s"], "--duration: workload fillrandom has no timed phase"),
    (["--workload", "fillrandom", "--search-duration", "5s"], "--search-duration: workload fillrandom has no timed"),
    (["--search-duration", "40s", "--revalidate", "1"], "--search-duration: at most the 30 s phases the answer is confirmed in"),
    (["--search-duration", "0s"], "argument --search-duration: must be > 0"),
    (["--search-duration", "5s", "--revalidate", "0"], "--search-duration: the re-validation confirms the answer"),
    (["--target-data", "4GiB", "--target-memory", "1GiB", "--memory-limit", "1GiB"], "--memory-limit: --target-memory"),
    (["--target-data", "4GiB", "--scale", "2"], "--scale: with --target-data, the trials' share of the target's data"),
])
@pytest.mark.dbbench
def test_bad_targets_get_one_line_before_any_run(tmp_path, args, match):
    full = ["tune", "--trials", "1", "--out", "never", "--no-mlflow", *args]
    if "--workload" not in args:
        full += ["--workload", "steady-overwrite"]
    r = tuner(*full)
    assert r.returncode == 2 and match in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "never").exists()


TWO_MEMTABLES = """name = "two-memtables"
[parameters.write_buffer_size]
type = "categorical"
choices = [65536, 100663296]
options_key = "CFOptions.write_buffer_size"
"""


@pytest.mark.dbbench
def test_confirmation_at_the_target_changes_the_answer_when_the_toy_winner_loses_there(tmp_path, db_bench):
    """Trials on 2.6 MiB (0.04 of the target): a 96 MiB memtable never flushes and wins easily over 64 KiB ones (36 flushes).
    At the target, 64 MiB of data within 32 MiB of memory, the 96 MiB memtable does not fit (nor does
    the defaults' 64 MiB one): the confirmation at the target reports the small memtables instead."""
    space = tmp_path / "two.toml"
    space.write_text(TWO_MEMTABLES)
    r = tuner("tune", "--workload", "fillrandom", "--scale", "0.04", "--target-data", "64MiB", "--target-memory",
              "32MiB", "--space", str(space), "--sampler", "grid", "--trials", "2", "--no-starts", "--seed", "1",
              "--revalidate", "2", "--revalidate-rounds", "2", "--revalidate-max-rounds", "2", "--no-ablation", "--any-cost",
              "--out", "o", "--no-mlflow", "--no-plots", drain=True)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    study = summary.optuna_study()
    trials = {t.params["write_buffer_size"]: t for t in study.trials if TrialRecord.of(t).outcome == "complete"}
    big, small = trials[100663296], trials[65536]
    assert big.values[0] > small.values[0]  # the toy winner
    assert summary.revalidation is not None and summary.revalidation.select is not None
    change = summary.revalidation.select.rank_correlation
    assert change is not None and change.confirm_data_bytes is not None
    assert change.search_best == f"trial {big.number}" and change.confirmed_best == f"trial {small.number}"
    assert change.changed and change.confirm_data_bytes >= 64 * MiB * 0.99
    assert summary.best is not None and summary.answer is not None
    assert summary.best.params["write_buffer_size"] == 65536 and summary.answer.recommend == "best"
    assert "the answer changed" in r.stdout and "scaled: data 2.6 MiB (the target's: 64 MiB)" in r.stdout
    options = options_file.parse_options((tmp_path / "o" / "OPTIONS.ini").read_text())
    assert options_file.lookup(options, "CFOptions.write_buffer_size") == "65536"
    assert options_file.lookup(options, "CFOptions.max_bytes_for_level_base") == str(256 * MiB)  # the target's shape
    minimal = (tmp_path / "o" / "OPTIONS.minimal.ini").read_text()  # no ablation: what the answer changed
    assert minimal.startswith(f"# The options trial {small.number} sets to other values than rocksdb-default ran "
                              "with (1 of the 1 searched).\n# Which of them matter was not measured")
    assert options_file.parse_options(minimal)["CFOptions"] == {"write_buffer_size": "65536"}
    loads = subprocess.run([db_bench.path, f"--options_file={tmp_path / 'o' / 'OPTIONS.minimal.ini'}",
                            "--benchmarks=fillrandom", "--num=100", f"--db={tmp_path / 'check'}"],
                           capture_output=True, text=True)
    assert loads.returncode == 0, loads.stderr
    confirm = next((tmp_path / "o" / "revalidation-select").rglob("load.command")).read_text()
    assert "--num=578" in confirm  # 64 MiB / 116 B: the runs at the target load its data
