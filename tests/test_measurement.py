"""What a trial measures, on the real db_bench (issue 18): deferred work charged, memory like
production, each parallel trial tuned for its own slot, one recommendation from a Pareto front."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from objectives.measurement import measure
from objectives.memory import Cgroups
from objectives.rocksdb_log import read_log
from objectives.runner import Runner
from objectives.workloads import load_workload
from search_spaces import Context, MiB
from tests.conftest import TINY, summary_of
from tests.test_cli import tuner
from tuner.summary import SlotInfo
from tuner.trials import TrialRecord

pytestmark = pytest.mark.dbbench



def _interleaved(runner: Runner, workload, configs: dict[str, dict], rounds: int, logs: Path) -> dict[str, list]:
    samples: dict[str, list] = {name: [] for name in configs}
    for i in range(rounds):
        for name, flags in configs.items():
            samples[name].append(measure(runner, workload, flags, logs / name / str(i), 1, 1).metrics)
    return samples


def test_the_drain_is_charged_and_a_memtable_hoard_does_not_win(db_bench, work_dir, tmp_path):
    """A configuration whose memtables hold all the data writes nothing during the load; the drain
    flushes it afterwards, is timed from the LOG, and is charged: it no longer beats one that flushes."""
    workload = load_workload("fillrandom").resolve(0.5, Context.of_host())  # 58 MB
    configs = {"hoard": {"write_buffer_size": 256 * MiB, "max_write_buffer_number": 2},
               "flushes": {"write_buffer_size": 4 * MiB, "max_write_buffer_number": 4}}
    samples = _interleaved(Runner(db_bench, work_dir), workload, configs, 3, tmp_path)
    for m in samples["hoard"]:
        assert m["l0_files"] == 0 and m["memtable_bytes"] > 0.9 * workload.data_bytes()  # nothing flushed yet
        assert m["drain_seconds"] > 0 and m["write_amp"] > 0 and m["write_amp_logical"] == pytest.approx(1.0)
        ops = 500_000  # scale 0.5
        assert m["ops_per_sec"] == pytest.approx(ops / (ops / m["burst_ops_per_sec"] + m["drain_seconds"]))
        assert m["ops_per_sec"] < m["burst_ops_per_sec"]
    for m in samples["flushes"]:
        assert m["write_amp_logical"] > 1.5 and m["l0_files"] is not None
    hoard, flushes = (statistics.median(m["ops_per_sec"] for m in samples[k]) for k in ("hoard", "flushes"))
    assert hoard <= flushes, (hoard, flushes)


def test_the_drain_is_timed_from_the_log_not_from_the_sleeps(db_bench, work_dir, tmp_path):
    """Unpatched, waitforcompaction sleeps at least 5 s (the phase's wall shows it) while the drain of a
    small load is a fraction of a second; `make db_bench` removes that sleep from 9.x builds, and then
    the phase's wall is short too."""
    workload = load_workload("fillrandom").resolve(TINY * 5, Context.of_host())
    m = measure(Runner(db_bench, work_dir), workload, {}, tmp_path / "logs", 1, 1)
    (phase,) = [p for p in m.details if "wall_seconds" in p]
    assert 0 <= m.metrics["drain_seconds"] < 2
    if "waitforcompaction-no-sleep" in db_bench.patches:
        assert phase["wall_seconds"] < 5
    else:
        assert phase["wall_seconds"] > 5
    assert "flush,waitforcompaction" in (tmp_path / "logs" / "load.command").read_text()


@pytest.mark.parametrize("scale", [0.01, TINY, 0.2])
def test_the_defaults_write_amp_is_above_zero_at_every_scale(db_bench, work_dir, tmp_path, scale):
    workload = load_workload("fillrandom").resolve(scale, Context.of_host())
    m = measure(Runner(db_bench, work_dir), workload, {}, tmp_path / "logs", 1, 1).metrics
    assert m["write_amp"] > 0 and m["write_amp_logical"] >= 1


def test_within_a_memory_limit_a_small_block_cache_reads_faster_than_a_large_one(db_bench, work_dir, tmp_path):
    """400k x 400 B (an 80 MB DB): in a 48 MiB memory cgroup a 4 MiB block cache reads faster than a
    32 MiB one in every round (the larger cache crowds the compressed blocks out of the page cache
    within the same memory), and the limit is real: reads run at less than half the rate they reach
    without it, within the cgroup's memory and never killed. How the two compare without a limit
    depends on the host and is not asserted: the small cache's median edge there was 0.86x-1.08x
    over 12 repeats on one 2-core host (up to 1.24x against a 40 MiB cache) and 1.10x-1.22x in three
    CI runs, one of which (2026-12-02) saw 1.22x beside 1.20x under the limit, so "the edge exists
    only under a limit" does not hold on every host (hand runs, not recorded here)."""
    Cgroups.detect()  # this machine has a usable memory cgroup (cgroup v1 here)
    workload = load_workload("reads-beyond-memory").resolve(1.0, Context.of_host())
    configs = {"small": {"cache_size": 4 * MiB}, "large": {"cache_size": 32 * MiB}}
    limited = _interleaved(Runner(db_bench, work_dir, memory_limit=48 * MiB), workload, configs, 3, tmp_path / "lim")
    free = _interleaved(Runner(db_bench, work_dir), workload, {"small": configs["small"]}, 2, tmp_path / "free")
    small, large = ([m["ops_per_sec"] for m in limited[name]] for name in configs)
    assert min(small) > max(large), (small, large)  # every round
    assert statistics.median(s / b for s, b in zip(small, large)) > 1.1, (small, large)
    assert statistics.median(small) < 0.5 * statistics.median(m["ops_per_sec"] for m in free["small"])
    for m in limited["small"] + limited["large"]:
        assert m["memory_peak_bytes"] <= 48 * MiB and m["oom_kills"] == 0


def test_a_memory_limit_runs_the_study_in_cgroups_and_budgets_follow_it(tmp_path):
    r = tuner("tune", "--workload", "readrandom", "--scale", str(TINY), "--trials", "2", "--seed", "2",
              "--sampler", "random", "--memory-limit", "96M", "--out", "o", "--no-mlflow")
    assert r.returncode == 0, r.stderr
    assert "scored phases run within 96 MiB: a memory cgroup per scored phase" in r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.memory is not None and summary.host is not None
    assert summary.memory.limit_bytes == 96 * MiB and summary.host.memory_budget_bytes == 72 * MiB
    default = summary.baselines[0].metrics
    assert 0 < default["memory_peak_bytes"] <= 96 * MiB
    too_much = tuner("tune", "--workload", "readrandom", "--memory-limit", "64M", "--memory-budget", "80M",
                     "--out", "never")
    assert too_much.returncode == 2 and "--memory-budget: 0.1 GiB is more than the --memory-limit of 64 MiB" \
        in too_much.stderr


@pytest.mark.ray
def test_parallel_trials_are_tuned_for_their_slot(tmp_path, work_dir, host):
    """--parallel 2 on a 2-core host: each trial is pinned to 1 core, so the space's `cores` is 1
    (subcompactions <= 4 x 1) and its memory is half the host's; the baselines run in the same slot,
    beside another run as each trial is (issue 43)."""
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "4", "--seed", "3",
              "--sampler", "random", "--parallel", "2", "--out", "o", "--work-dir", str(work_dir), "--no-mlflow",
              "--revalidate", "0")
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    cores = max(1, host.cores // 2)
    assert summary.slot == SlotInfo(cores=cores, ram_bytes=host.ram // (host.cores // cores), pinned=True, neighbours=1)
    assert summary.baselines and all(b.neighbours == 1 for b in summary.baselines)
    assert "beside 1 other run(s) as a trial" in r.stderr
    assert "vs default: single runs, each beside 1 other run(s) at once (--parallel), rocksdb-default's as the " \
        "trials'" in r.stdout
    study = summary.optuna_study()
    assert study.user_attrs["space"]["subcompactions"] == f"[1, {cores}]"
    assert all(t.params["subcompactions"] <= cores for t in study.trials if t.params)
    nodes = [n for t in study.trials if (n := TrialRecord.of(t).node) is not None]
    assert nodes and all(len(n.cores_used or []) == cores for n in nodes)


def test_one_recommendation_from_a_pareto_front(tmp_path):
    """--objective multi keeps the front; OPTIONS.ini holds the member --prefer's weights pick."""
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "6", "--seed", "5", "--sampler",
            "random", "--objective", "multi", "--no-mlflow"]
    picks = {}
    for name, prefer in (("ops", "ops=1,p99=0,write_amp=0"), ("wa", "ops=0,p99=0,write_amp=1")):
        r = tuner(*args, "--prefer", prefer, "--study", name, "--out", name)
        assert r.returncode == 0, r.stderr
        summary = summary_of(tmp_path / name)
        assert summary.best is not None and summary.pareto is not None and summary.recommendation is not None
        front = {row.number: row.metrics or {} for row in summary.pareto}
        assert summary.best.trial in front and "(--prefer)" in summary.recommendation
        picks[name] = summary.best.trial
        key, pick = ("ops_per_sec", max) if name == "ops" else ("write_amp", min)
        assert front[picks[name]][key] == pick(m[key] for m in front.values())
        options = (tmp_path / name / "OPTIONS.ini").read_text()
        assert f"write_buffer_size={summary.best.params['write_buffer_size']}" in options
    bad = tuner("tune", "--prefer", "ops=1", "--out", "never")
    assert bad.returncode == 2 and "--prefer: weighs the objectives of --objective multi" in bad.stderr


def test_a_drain_reads_the_events_of_the_log_it_ran(db_bench, work_dir, tmp_path):
    """The LOG facts behind the drain: an open time, background job ends, flushed bytes."""
    workload = load_workload("fillrandom").resolve(TINY, Context.of_host())
    runner = Runner(db_bench, work_dir)
    result = runner.run(workload, {"write_buffer_size": 1 * MiB}, tmp_path / "logs")
    (phase,) = result.phases
    assert phase.log.opened and phase.log.background_ends and phase.log.flush_raw_bytes > 0
    assert phase.started_at <= phase.log.opened <= phase.operations_end() <= max(phase.log.background_ends) + 1
    assert read_log(tmp_path / "absent").opened is None
