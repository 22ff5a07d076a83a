"""The runner and metrics on the real db_bench: tiny workloads, failures, timeouts, cleanup."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from objectives import workdir as workdir_module
from objectives.metrics import metrics_of
from objectives.runner import EnvironmentFault, RunFailed, Runner
from objectives.workdir import MARKER, proc_stat, process_started, remove_owned
from objectives.workloads import load_workload
from tests.conftest import TINY, leftovers
from tuner.options_file import mismatches

pytestmark = pytest.mark.dbbench


def test_fillrandom_run_measures_and_cleans_up(db_bench, host, work_dir, tmp_path):
    workload = load_workload("fillrandom").resolve(TINY, host)
    flags = {"write_buffer_size": "262144", "compression_type": "zstd", "compression_level": "5", "bloom_bits": "10",
             "max_background_jobs": "3", "subcompactions": "2"}
    run = Runner(db_bench, work_dir).run(workload, flags, tmp_path / "log", seed=5)
    m = metrics_of(run)
    # db_bench's own figure is the burst rate; the score charges the drain that followed
    assert m["burst_ops_per_sec"] == pytest.approx(run.phases[0].output.results[0].ops_per_sec)
    assert 0 < m["ops_per_sec"] <= m["burst_ops_per_sec"] and m["drain_seconds"] >= 0
    assert 0 < m["p50_us"] <= m["p95_us"] <= m["p99_us"] <= m["p99_9_us"]
    assert m["write_amp"] > 0 and m["compaction_micros"] >= 0 and m["stall_micros"] >= 0
    assert m["db_size_bytes"] > 0 and m["peak_rss_bytes"] > 1e6 and m["cpu_seconds"] > 0 and m["wall_seconds"] > 0
    command = (tmp_path / "log" / "load.command").read_text()
    assert "--compression_level=5" in command and "--seed=5" in command and "--num=20000" in command
    assert (tmp_path / "log" / "load.stdout").stat().st_size > 1000
    expected = {k: (key, v) for k, key, v in [
        ("write_buffer_size", "CFOptions.write_buffer_size", 262144),
        ("compression_type", "CFOptions.compression", "zstd"),
        ("compression_level", "CFOptions.compression_opts.level", 5),
        ("bloom_bits", "TableOptions/BlockBasedTable.filter_policy", 10),
        ("subcompactions", "DBOptions.max_subcompactions", 2),
        ("max_background_jobs", "DBOptions.max_background_jobs", 3)]}
    assert mismatches(run.options_text, expected) == []
    wrong = {"write_buffer_size": ("CFOptions.write_buffer_size", 999)}
    assert mismatches(run.options_text, wrong) == ["write_buffer_size: asked 999, the DB's OPTIONS file has "
                                                   "CFOptions.write_buffer_size=262144"]
    assert leftovers(work_dir) == []


def test_two_phase_workload_scores_only_the_read_phase(db_bench, host, work_dir, tmp_path):
    workload = load_workload("readrandom").resolve(TINY, host)
    run = Runner(db_bench, work_dir).run(workload, {"bloom_bits": "10"}, tmp_path / "log")
    assert [p.name for p in run.phases] == ["load", "read"]
    assert "--use_existing_db=true" in run.phases[1].command
    m = metrics_of(run)
    assert m["burst_ops_per_sec"] == pytest.approx(run.phases[1].output.results[0].ops_per_sec)
    assert m["write_amp"] is not None  # from the load phase's tickers
    assert leftovers(work_dir) == []


def test_failing_db_bench_names_the_cause(db_bench, host, work_dir, tmp_path):
    workload = load_workload("fillrandom").resolve(TINY, host)
    with pytest.raises(RunFailed) as err:
        Runner(db_bench, work_dir).run(workload, {"compression_type": "bogus"}, tmp_path / "log")
    assert err.value.reason == "phase load: db_bench exit code 1: Cannot parse compression type 'bogus'"
    assert leftovers(work_dir) == []


def test_a_vanished_work_dir_or_start_db_is_an_environment_fault(db_bench, host, work_dir, tmp_path):
    """Not the configuration's failure (issue 31): the work directory removed, or the DB a run starts
    from (a preloaded one, a snapshot) gone."""
    workload = load_workload("fillrandom").resolve(TINY, host)
    runner = Runner(db_bench, work_dir)
    gone = replace(workload, snapshot=str(tmp_path / "preloaded" / "db"))
    with pytest.raises(EnvironmentFault) as err:
        runner.run(gone, {}, tmp_path / "log")
    assert err.value.fault == f"the DB {tmp_path / 'preloaded' / 'db'} the run starts from vanished"
    assert "No such file or directory" in err.value.reason and leftovers(work_dir) == []
    shutil.rmtree(work_dir)
    with pytest.raises(EnvironmentFault) as err:
        runner.run(workload, {}, tmp_path / "log")
    assert err.value.fault == f"the work directory {work_dir} vanished"


def test_timeout_kills_db_bench(db_bench, host, work_dir, tmp_path):
    workload = load_workload("fillrandom").resolve(1.0, host)
    with pytest.raises(RunFailed, match=r"phase load: timeout, killed after the trial's 0.5 s limit"):
        Runner(db_bench, work_dir, timeout=0.5).run(workload, {}, tmp_path / "log")
    assert leftovers(work_dir) == []
    alive = subprocess.run(["pgrep", "-f", str(work_dir)], capture_output=True, text=True).stdout
    assert alive == ""


def test_stop_kills_db_bench_and_removes_its_db(db_bench, host, work_dir, tmp_path):
    """A remote executor's worker told to stop (Ctrl-C on the driver): the running db_bench is killed,
    its DB removed, and the run fails with a reason saying so."""
    workload = load_workload("fillrandom").resolve(1.0, host)
    stop = threading.Event()

    def once_started() -> None:
        while not (tmp_path / "log" / "load.command").is_file():
            time.sleep(0.05)
        stop.set()

    threading.Thread(target=once_started, daemon=True).start()
    with pytest.raises(RunFailed, match=r"^phase load: stopped: the study is stopping$"):
        Runner(db_bench, work_dir, stop=stop).run(workload, {}, tmp_path / "log")
    assert leftovers(work_dir) == []
    assert subprocess.run(["pgrep", "-f", str(work_dir)], capture_output=True, text=True).stdout == ""


def test_only_marked_directories_are_removed(tmp_path):
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for d in (mine, theirs):
        d.mkdir()
        (d / "data").write_text("x")
    (mine / MARKER).write_text("")
    remove_owned(mine)
    remove_owned(theirs)
    assert not mine.exists() and (theirs / "data").exists()


def test_a_removal_stopped_halfway_leaves_the_marker_for_the_sweeps(tmp_path, monkeypatch):
    """The marker is removed last: a worker killed while it cleans up leaves a directory the sweeps
    of stale directories still remove, not an unmarked one they must keep."""
    mine = tmp_path / "mine"
    (mine / "db").mkdir(parents=True)
    (mine / "db" / "000001.sst").write_text("x")
    (mine / "LOCK").write_text("")
    (mine / MARKER).write_text("")
    removed = []

    def stop_after_the_first(path, *args, **kwargs):
        removed.append(Path(path).name)
        raise KeyboardInterrupt  # the worker is interrupted here

    monkeypatch.setattr(workdir_module.shutil, "rmtree", stop_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        remove_owned(mine)
    assert removed == ["db"] and (mine / MARKER).is_file()
    monkeypatch.undo()
    remove_owned(mine)
    assert not mine.exists()


def test_nothing_runs_through_a_shell(db_bench, host, work_dir, tmp_path):
    """A flag value with shell metacharacters reaches db_bench verbatim (and db_bench rejects it)."""
    workload = load_workload("fillrandom").resolve(TINY, host)
    canary = tmp_path / "canary"
    with pytest.raises(RunFailed):
        Runner(db_bench, work_dir).run(workload, {"compression_type": f"zstd; touch {canary}"}, tmp_path / "log")
    assert not canary.exists()
    assert os.listdir(work_dir) == []


def test_sweep_removes_only_dead_tuners_directories_on_this_host(db_bench, work_dir):
    import socket

    dead = subprocess.Popen(["true"])
    dead.wait()
    zombie = subprocess.Popen(["true"])  # exited, not reaped yet: its pid still answers kill(pid, 0)
    while proc_stat(zombie.pid)[0] != "Z":
        time.sleep(0.01)
    cases = {
        "rocksdb-tuner-dead": f"host={socket.gethostname()}\npid={dead.pid}\n",
        "rocksdb-tuner-zombie": f"host={socket.gethostname()}\npid={zombie.pid}\nstarted={process_started(zombie.pid)}\n",
        "rocksdb-tuner-alive": f"host={socket.gethostname()}\npid={os.getpid()}\n",
        "rocksdb-tuner-alive-since": f"host={socket.gethostname()}\npid={os.getpid()}\nstarted={process_started(os.getpid())}\n",
        # the pid runs, but a later process than the one that marked it (pids are reused)
        "rocksdb-tuner-reused": f"host={socket.gethostname()}\npid={os.getpid()}\nstarted=1{process_started(os.getpid())}\n",
        "rocksdb-tuner-elsewhere": f"host=not-{socket.gethostname()}\npid={dead.pid}\n",
        "rocksdb-tuner-unmarked": None,
    }
    for name, marker in cases.items():
        (work_dir / name / "db").mkdir(parents=True)
        if marker is not None:
            (work_dir / name / MARKER).write_text(marker)
    removed = Runner(db_bench, work_dir).sweep_stale()
    zombie.wait()
    assert sorted(p.name for p in removed) == ["rocksdb-tuner-dead", "rocksdb-tuner-reused", "rocksdb-tuner-zombie"]
    assert sorted(os.listdir(work_dir)) == ["rocksdb-tuner-alive", "rocksdb-tuner-alive-since", "rocksdb-tuner-elsewhere",
                                            "rocksdb-tuner-unmarked"]
