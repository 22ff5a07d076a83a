"""The RocksDB you deploy and the workload you run (issue 17): every db_bench build on this machine
runs a real study on its own defaults, or on 7.8.3's pinned ones; production-like mixgraph workloads; a recorded
trace replayed on copies of its DB snapshot, which stays unchanged."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from objectives.dbbench import installed, probe_path
from objectives.defaults import PINNED
from objectives.flags import format_flag
from objectives.trace import count_queries
from tests.conftest import TINY, first_measured, summary_of
from tests.test_cli import tuner
from tuner.options_file import lookup, parse_options

pytestmark = pytest.mark.dbbench


def _versions() -> dict[str, str]:
    """One db_bench per RocksDB version on this machine (release builds first): version -> path."""
    found: dict[str, str] = {}
    for path, source in installed():
        found.setdefault(probe_path(path, source).version, path)
    return found


@pytest.mark.release_build  # CI's make test builds the release db_bench; Debian's 7.8.3 is the other
def test_a_study_runs_on_each_version_on_its_defaults_or_on_the_pins(tmp_path):
    """By default each version runs on what it gives an application (a release build's library
    defaults: dynamic level sizes from 8.4; Debian's build, which cannot tell them, on db_bench's own,
    said so); with --defaults db_bench-7.8.3 every version runs 7.8.3's pinned values."""
    versions = _versions()
    assert len(versions) >= 2, versions
    pinned = {}
    for version, path in versions.items():
        for mode in ("library", "db_bench-7.8.3"):
            out = tmp_path / version / mode
            r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "2", "--seed", "1",
                      "--sampler", "random", "--db-bench", path, "--out", str(out), "--no-mlflow", "--defaults", mode)
            assert r.returncode == 0, r.stderr
            summary = summary_of(out)
            assert summary.build is not None and summary.defaults is not None
            assert summary.build.version == version and summary.trials.complete == 2
            defaults = summary.defaults
            command = (out / "baselines" / "rocksdb-default" / "load.command").read_text()
            for flag, value in defaults.flags.items():
                assert f"{format_flag(flag, value)} " in command + " "
            sections = parse_options((out / "baselines" / "rocksdb-default" / "OPTIONS").read_text())
            shape = {key: lookup(sections, key) for key in (
                "TableOptions/BlockBasedTable.format_version",
                "TableOptions/BlockBasedTable.optimize_filters_for_memory",
                "CFOptions.level_compaction_dynamic_level_bytes", "DBOptions.compaction_readahead_size")}
            if mode == "db_bench-7.8.3":
                assert set(defaults.flags) <= set(PINNED)
                pinned[version] = shape
            elif summary.build.kind == "release":
                assert defaults.mode == "library" and version in (defaults.describe or "")
                dynamic = tuple(int(p) for p in version.split(".")[:2]) >= (8, 4)
                assert shape["CFOptions.level_compaction_dynamic_level_bytes"] == ("true" if dynamic else "false")
            else:
                assert defaults.mode == "db_bench" and "no library_defaults beside" in (defaults.describe or "")
    first = next(iter(pinned.values()))
    assert all(d == first for d in pinned.values()), pinned  # pinned "defaults" mean the same on every version
    assert first["TableOptions/BlockBasedTable.format_version"] == "5"


@pytest.mark.parametrize("workload", ["mixgraph-prefix", "mixgraph-allrandom", "ycsb-a"])
def test_mixgraph_workloads_run_end_to_end(tmp_path, workload):
    r = tuner("tune", "--workload", workload, "--scale", str(TINY), "--trials", "2", "--seed", "4", "--sampler",
              "random", "--out", "o", "--no-mlflow")
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.best is not None
    assert summary.trials.complete == 2 and summary.best.metrics["p99_us"] > 0
    stdout = (tmp_path / "o" / "baselines" / "rocksdb-default" / "run.stdout").read_text()
    gets, found = _mixgraph_reads(stdout)
    assert gets > 0 and found > 0  # skewed keys: reads find what was written (uniform ones never do)
    if workload.startswith("mixgraph"):
        assert summary.memory is not None and summary.memory.source == "workload data / 4 (data_to_memory)"


def _mixgraph_reads(stdout: str) -> tuple[int, int]:
    """(gets, found) from mixgraph's result line: "( Gets:N Puts:N Seek:N, reads F in G found, ..."."""
    line = next(line for line in stdout.splitlines() if line.startswith("mixgraph"))
    words = line.split("reads ", 1)[1].split()
    return int(words[2]), int(words[0])


def _checksums(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()}


def test_tuning_on_a_recorded_trace_leaves_the_snapshot_unchanged(tmp_path, db_bench):
    """Record a trace with db_bench itself on a copy of a small DB, then tune on it: each trial
    replays it on a fresh copy of the snapshot; the snapshot's files are byte for byte unchanged."""
    snapshot, recorded = tmp_path / "snapshot", tmp_path / "recorded"
    subprocess.run([db_bench.path, "--benchmarks=fillrandom,flush", "--num=30000", f"--db={snapshot}",
                    "--progress_reports=false"], check=True, capture_output=True)
    shutil.copytree(snapshot, recorded)
    trace = tmp_path / "app.trace"
    subprocess.run([db_bench.path, "--benchmarks=readrandomwriterandom", "--use_existing_db=1", "--num=30000",
                    "--reads=20000", "--readwritepercent=70", f"--db={recorded}", f"--trace_file={trace}",
                    "--progress_reports=false"], check=True, capture_output=True)
    assert count_queries(trace) == {"write": 6000, "get": 14000, "seek": 0, "seek_for_prev": 0, "multiget": 0}
    before = _checksums(snapshot)
    r = tuner("tune", "--workload", f"trace:{trace}", "--db-snapshot", str(snapshot), "--trials", "3", "--seed", "2",
              "--sampler", "random", "--out", "o", "--no-mlflow")
    assert r.returncode == 0, r.stderr
    assert _checksums(snapshot) == before
    summary = summary_of(tmp_path / "o")
    assert summary.trials.complete == 3 and summary.best is not None
    best = summary.best.metrics
    assert best["ops_per_sec"] > 0 and best["burst_ops_per_sec"] >= best["ops_per_sec"]
    stdout = (first_measured(tmp_path / "o") / "replay.stdout").read_text()
    assert "Replay completed" in stdout
    missing = tuner("tune", "--workload", f"trace:{trace}", "--out", "never")
    assert missing.returncode == 2 and "needs --db-snapshot DIR" in missing.stderr
