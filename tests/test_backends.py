"""Measurement backends (tuner.backends): a new one is a class and a registration line; the command
backend runs a program on each configuration's OPTIONS file, and each way the program can fail is
one clear line and a failed trial; the shipped rocksdict example is tuned end to end."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import optuna
import pytest
from mlflow import MlflowClient
from optuna.trial import FrozenTrial, TrialState

from objectives.contract import Task
from objectives.dbbench import DbBenchError, probe
from objectives.measurement import Measurement
from objectives.workdir import make_owned, remove_owned
from search_spaces import load_space
from tests.conftest import summary_of
from tests.test_cli import TUNER, tuner
from tuner import apply, options_file, tune
from tuner.backends import BACKENDS, STOPPED, Backend, Config, Found, RunFailed, Setup
from tuner.backends._command import CONTRACT_DOC, read_metrics, rocksdb_defaults
from tuner.engine._prepare import check_backend
from tuner.engine._storage import StudyStore
from tuner.executors import Job, LocalExecutor, Outcome
from tuner.model import ExecutionConfig, TuneConfig, UsageError, trial_log_dir
from tuner.observers import SilentProgress
from tuner.outputs import closing_table
from tuner.outputs._report import comparison_markdown
from tuner.summary import SCHEMA_VERSION, BaselineRun, Summary
from tuner.trials import TrialRecord

APP = Path(__file__).resolve().parents[1] / "examples" / "rocksdict_app" / "app.py"
# db_bench's words, which a program's study never prints: its tool, metrics and workloads
DB_BENCH_WORDS = re.compile(r"db_bench|benchmark\.sh|write amp|sustained|burst|drain|fillrandom|phases?\b|flags\b")


class Formula(Backend):
    """A backend of one's own, with its own set-up: ``prepare`` writes a table of coefficients in the work
    dir once per study, ``measure`` computes ops/s from it and the configuration, ``teardown`` removes it."""

    name = "formula"
    prepared: list[Path] = []

    def prepare(self, stop=None) -> None:
        self.table = self.setup.work_dir / "formula-table"
        self.table.write_text("1000 10")
        Formula.prepared.append(self.table)

    def _measure(self, config, log_dir, repeats, observer, workload) -> Measurement:
        base, per_job = (float(x) for x in self.table.read_text().split())
        jobs = config.values().get("max_background_jobs", 2)
        return Measurement({"ops_per_sec": base + per_job * int(jobs)}, [], "", [])

    def teardown(self) -> None:
        self.table.unlink(missing_ok=True)


@pytest.mark.dbbench
def test_a_new_backend_is_one_class_and_a_registration_line(tmp_path, monkeypatch, db_bench):
    """Its set-up is its own: prepared once per study before any run, torn down at the end."""
    monkeypatch.setitem(BACKENDS, "formula", Formula)  # the registration line
    monkeypatch.setattr(Formula, "prepared", [])
    result = tune(backend="formula", trials=4, sampler="random", seed=1, out=tmp_path / "out",
                  work_dir=tmp_path, mlflow=False, plots=False, revalidate=0, baselines=False, starts=False,
                  progress=SilentProgress())
    jobs = [t.params.get("max_background_jobs", 2) for t in result.trials if t.outcome == "complete"]
    assert len(jobs) == 4
    assert result.best_metrics["ops_per_sec"] == 1000.0 + 10 * max(jobs)
    assert str(result.summary.study).startswith("formula-")
    assert Formula.prepared == [tmp_path / "formula-table"] and not (tmp_path / "formula-table").exists()


class InProcess(Backend):
    """A third backend on the contract alone: it renders each configuration by its options' catalogue names
    (``tuner.apply``: rocksdict's calls), opens a RocksDB DB of its own with them in this process, writes
    keys and reports their rate with the OPTIONS file RocksDB wrote (which the study keeps in the run's logs)."""

    name = "in-process"

    def _measure(self, config, log_dir, repeats, observer, workload) -> Measurement:
        import rocksdict

        db = make_owned(self.setup.work_dir)
        try:
            store = rocksdict.Rdict(str(db / "db"), apply(config.values()))
            started = time.perf_counter()
            for i in range(2000):
                store[f"key{i:06d}".encode()] = os.urandom(100)
            store.close()
            ops = 2000 / (time.perf_counter() - started)
            written = max((db / "db").glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1])).read_text()
        finally:
            remove_owned(db)
        return Measurement({"ops_per_sec": ops}, [], written, [])


def test_a_third_backend_takes_the_configuration_by_its_options_names_alone(tmp_path, monkeypatch):
    """What crosses the contract is a Config: a backend that knows neither db_bench nor the space renders
    it by the catalogue's names, and RocksDB runs each trial and each re-validation round with its values."""
    monkeypatch.setitem(BACKENDS, "in-process", InProcess)
    result = tune(backend="in-process", trials=3, sampler="random", seed=2, out=tmp_path / "out", work_dir=tmp_path,
                  mlflow=False, plots=False, revalidate=2, revalidate_rounds=2, revalidate_max_rounds=2,
                  ablation=False, baselines=False, starts=False, progress=SilentProgress())
    trials = [t for t in result.trials if t.outcome == "complete"]
    assert len(trials) == 3 and result.summary.revalidation is not None
    assert_written_as_chosen(tmp_path / "out", [(t.number, t.params) for t in trials])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("rocksdb-tuner")]


def assert_written_as_chosen(out: Path, trials: list[tuple[int, dict[str, Any]]]) -> None:
    """Each trial's OPTIONS file (as RocksDB wrote it, in the study ``out``'s logs) holds the values its
    parameters were given (``trials``: number, params) under their OPTIONS keys."""
    space = load_space("default")
    for number, params in trials:
        written = options_file.parse_options((trial_log_dir(out, number) / "OPTIONS").read_text())
        for name, value in params.items():
            key = space.parameter(name).options_key
            if name not in ("cache_size", "bloom_bits"):  # RocksDB writes neither the cache's size nor the bits
                assert options_file.lookup(written, key) == options_file.encode(key, value), (number, name)


def _outcome(tmp_path: Path, script: str, flags: dict | None = None, timeout: float = 30.0,
             repeats: int = 1, needs: tuple[str, ...] = ("ops_per_sec",), memory_limit: int | None = None) -> Outcome:
    """What the local executor makes of ``python -c script {options} {db}`` run on ``flags``, for a
    study whose score ``needs`` those metrics (its runs within ``memory_limit``)."""
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{options}} {{db}}"
    executor = LocalExecutor()
    backend = BACKENDS["command"](Setup(tmp_path, timeout, 1, command=command, needs=needs,
                                        memory_limit=memory_limit))
    backend.prepare()
    executor.bind(backend)
    executor.submit(Job("trial 0", Config.of(flags or {}), tmp_path / "logs", repeats))
    (outcome,) = executor.wait(1.0)
    return outcome


def test_the_program_gets_the_configurations_options_file_and_a_fresh_db(tmp_path):
    """The OPTIONS file carries the searched values; the DB directory is new and removed afterwards,
    and nothing the backend did not create is touched."""
    script = ("import json, re, sys, os; t = open(sys.argv[1]).read(); "
              "print('warming up'); assert os.listdir(sys.argv[2]) == []; "
              "print(json.dumps({'ops_per_sec': float(re.search(r'max_background_jobs=(\\d+)', t)[1]), "
              "'p99_us': 7, 'my_metric': 1.5}))")
    (tmp_path / "mine").mkdir()
    m = _outcome(tmp_path, script, {"max_background_jobs": 7, "write_buffer_size": 1 << 20}).measurement
    assert m is not None
    assert {k: v for k, v in m.metrics.items() if k != "wall_seconds"} == \
        {"ops_per_sec": 7.0, "p99_us": 7.0, "my_metric": 1.5}
    sections = options_file.parse_options(m.options_text)
    assert options_file.lookup(sections, "CFOptions.write_buffer_size") == str(1 << 20)
    assert (tmp_path / "logs" / "OPTIONS").read_text() == m.options_text
    assert sorted(os.listdir(tmp_path)) == ["logs", "mine"]


def test_a_program_is_given_each_setting_under_its_options_key_or_told_it_has_none(tmp_path):
    """The command backend renders a configuration by its settings' OPTIONS keys, whether or not the space
    searches them (a hand-found configuration's block size), over a user's OPTIONS file when it gives one; a
    setting with no OPTIONS key (a db_bench flag only) fails the run in one line naming it."""
    backend = BACKENDS["command"](Setup(tmp_path, 1.0, 1, command="python app.py {options}"))
    text = backend.options_text(Config.of({"write_buffer_size": "8388608", "block_size": "16384"}))
    sections = options_file.parse_options(text)
    assert options_file.lookup(sections, "CFOptions.write_buffer_size") == "8388608"
    assert options_file.lookup(sections, "TableOptions/BlockBasedTable.block_size") == "16384"
    mine = tmp_path / "OPTIONS-mine"
    mine.write_text(options_file.with_values(rocksdb_defaults(), {"CFOptions.max_write_buffer_number": 5}))
    over = options_file.parse_options(backend.options_text(Config.of({"options_file": str(mine), "block_size": 4096})))
    assert options_file.lookup(over, "CFOptions.max_write_buffer_number") == "5"
    assert options_file.lookup(over, "TableOptions/BlockBasedTable.block_size") == "4096"
    with pytest.raises(RunFailed) as failed:
        backend.options_text(Config.of({"num": "1000"}))
    assert failed.value.reason.startswith("--num: no OPTIONS key is known for it")


# --load's program: fills {db} with an SST file (and a CURRENT), and counts its loads in the work dir.
LOAD = ("import pathlib, sys; db = pathlib.Path(sys.argv[1]); (db / '000007.sst').write_bytes(b'rows' * 1000); "
        "(db / 'CURRENT').write_text('MANIFEST-000001\\n'); n = db.parents[1] / 'loads'; "
        "n.write_text(n.read_text() + 'x' if n.exists() else 'x')")
# The run: reports how many names the loaded SST has (2 or more: a hard link, not a copy), then writes
# over what it was given, as a compaction would delete the file and a program rewrite CURRENT.
ON_LOADED = ("import json, os, pathlib, sys; db = pathlib.Path(sys.argv[2]); sst = db / '000007.sst'; "
             "links = os.stat(sst).st_nlink; rows = len(sst.read_bytes()); sst.unlink(); "
             "(db / 'CURRENT').write_text('mine'); "
             "print(json.dumps({'ops_per_sec': 10, 'links': links, 'rows': rows}))")


def _loaded_backend(tmp_path: Path, load: str) -> tuple[Backend, Task]:
    """The backend of a command study with ``--load "python -c LOAD {db}"``, its runs ON_LOADED, and its
    workload (where the DB --load builds is, as the study prepares it)."""
    python = shlex.quote(sys.executable)
    config = TuneConfig(backend="command", command=f"{python} -c {shlex.quote(ON_LOADED)} {{options}} {{db}}",
                        load=f"{python} -c {shlex.quote(load)} {{db}}")
    command = BACKENDS["command"]
    workload = command.task(config)
    assert workload is not None and workload.kind == "preloaded"
    loaded = command.preload_path(Found("command"), tmp_path / "work", workload, 1)
    workload = replace(workload, snapshot=str(loaded))
    setup = Setup(tmp_path / "work", 30.0, 1, workload, config.measurement.command, load=config.measurement.load,
                  preloaded=(loaded,))
    return command(setup), workload


def test_load_builds_the_db_once_and_each_run_starts_on_a_hard_linked_copy(tmp_path):
    """--load runs once (Backend.preload, which the engine calls before the first run); every run gets a
    copy of what it built, its SST files hard-linked, so what a run writes or deletes never reaches the
    built DB; the backend's teardown removes it."""
    (tmp_path / "work").mkdir()
    backend, workload = _loaded_backend(tmp_path, LOAD)
    built = backend.preload(workload, tmp_path / "out" / "preload-trials")
    assert built.path == Path(workload.snapshot) and built.size_bytes > 4000 and not built.reused
    executor = LocalExecutor()
    executor.bind(backend)
    outcomes = []
    for i in range(3):
        executor.submit(Job(f"trial {i}", Config(), tmp_path / "logs" / str(i), 1))
        outcomes += executor.wait(1.0)
    assert [o.reason for o in outcomes] == [""] * 3
    assert [(o.measurement.metrics["links"], o.measurement.metrics["rows"]) for o in outcomes] == [(2.0, 4000.0)] * 3
    assert (tmp_path / "work" / "loads").read_text() == "x"  # one load for three runs
    assert (tmp_path / "out" / "preload-trials" / "load.command").read_text().startswith(shlex.quote(sys.executable))
    assert (built.path / "CURRENT").read_text() == "MANIFEST-000001\n" and (built.path / "000007.sst").is_file()
    executor.close()
    assert (built.path / "CURRENT").is_file()  # the study tears its backend down, not the executor
    backend.teardown()
    assert sorted(os.listdir(tmp_path / "work")) == ["loads"]


def test_a_failed_load_is_one_line_and_leaves_nothing(tmp_path):
    (tmp_path / "work").mkdir()
    backend, workload = _loaded_backend(tmp_path, LOAD + "; sys.exit('no space for the keys')")
    with pytest.raises(RunFailed) as failed:
        backend.preload(workload, tmp_path / "out")
    assert failed.value.reason == "load: exit code 1: no space for the keys"
    assert sorted(os.listdir(tmp_path / "work")) == ["loads"]  # nothing of the failed load is kept


def test_a_failed_load_stops_the_study_before_any_run_in_one_line(tmp_path):
    """The engine builds the DB before the first run (the defaults' baseline): a load that fails stops
    the study with one line naming --load, and nothing is left in the work dir."""
    python = shlex.quote(sys.executable)
    r = tuner("tune", "--backend", "command", "--load", f"{python} -c 'import sys; sys.exit(\"disk quota\")' {{db}}",
              "--command", f"{python} -c 'print(1)' {{options}} {{db}}", "--trials", "2", "--out", "o",
              "--work-dir", str(tmp_path), "--no-mlflow", "--no-starts", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "--load: building the preloaded DB failed: load: exit code 1: disk quota (logs in o/preload-trials)" \
        in r.stderr
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


# A program at a target: --load fills {db} (counting its loads beside the work dir) and is told the data
# size; a run reports what it was told and how many names the loaded file has (2: hard-linked).
AT_SIZE_LOAD = """
import pathlib, sys
db, data, count = pathlib.Path(sys.argv[1]), int(sys.argv[2]), pathlib.Path(sys.argv[3])
(db / "000007.sst").write_bytes(b"k" * data)
(db / "CURRENT").write_text("MANIFEST-000001\\n")
count.write_text(count.read_text() + "x" if count.exists() else "x")
"""
AT_SIZE_RUN = """
import json, os, pathlib, re, sys
options, db, data, seconds = sys.argv[1:]
jobs = int(re.search(r"max_background_jobs=(\\d+)", pathlib.Path(options).read_text())[1])
links = os.stat(pathlib.Path(db) / "000007.sst").st_nlink
print(json.dumps({"ops_per_sec": 100 + jobs, "told_bytes": int(data), "told_seconds": float(seconds), "links": links}))
"""


def test_a_program_at_a_target_is_loaded_once_told_its_size_and_run_length_and_leaves_nothing(tmp_path):
    """--target-data and --duration / --search-duration with --backend command: the DB --load builds is
    built once for the study (the search's runs and the re-validation's at the target start from it),
    counted in its machine time, and removed at the end; the search's runs are told --search-duration
    and the re-validation's --duration ({duration}), every run the target's bytes ({data_bytes}); what the
    study prints of its target speaks of the program, not of db_bench's phases or LSM shape."""
    (tmp_path / "load.py").write_text(AT_SIZE_LOAD)
    (tmp_path / "run.py").write_text(AT_SIZE_RUN)
    (tmp_path / "work").mkdir()
    python = shlex.quote(sys.executable)
    r = tuner("tune", "--backend", "command", "--load", f"{python} load.py {{db}} {{data_bytes}} {tmp_path / 'loads'}",
              "--command", f"{python} run.py {{options}} {{db}} {{data_bytes}} {{duration}}", "--target-data", "64KiB",
              "--duration", "2s", "--search-duration", "1s", "--trials", "2", "--sampler", "random", "--seed", "1",
              "--no-starts", "--revalidate", "1", "--revalidate-rounds", "2", "--revalidate-max-rounds", "2",
              "--no-ablation", "--out", "o", "--work-dir", str(tmp_path / "work"), "--no-mlflow", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "loads").read_text() == "x"  # once, for the search and the re-validation at the target
    commands = [(path.relative_to(tmp_path / "o").parts[0], path.read_text().split()[-2:])
                for path in (tmp_path / "o").rglob("command.command")]
    wheres = {where for where, _ in commands}
    assert {"baselines", "trials"} <= wheres and any(w.startswith("revalidation") for w in wheres), wheres
    for where, told in commands:
        assert told == ["65536", "2" if where.startswith("revalidation") else "1"], (where, told)
    assert (tmp_path / "o" / "preload-trials" / "load.command").read_text().split()[-2] == "65536"
    summary = Summary.load(tmp_path / "o" / "summary.json")
    assert summary.preload is not None and summary.preload.trials is not None and summary.preload.builds == 1
    runs = [t["metrics"] for t in summary_trials(summary)]
    assert len(runs) == 2 and all(m["links"] == 2 and m["told_bytes"] == 65536 for m in runs)
    said = [line for line in (r.stdout + r.stderr).splitlines() if line.startswith(("target:", "runs:", "gain"))]
    assert "target: your program at 64 KiB of data ({data_bytes})" in said, said
    assert any(line.startswith("runs: each on a hard-linked checkpoint of the DB --load built once") and
               "1 s each ({duration}); the re-validation confirms the answer in 2 s runs" in line for line in said), said
    assert not [line for line in said if re.search(r"db_bench|phase|LSM|level", line)], said
    assert "preloading the DB every run starts from: --load (" in r.stderr
    assert not [p for p in os.listdir(tmp_path / "work") if p.startswith("rocksdb-tuner-")]


def test_a_ctrl_c_inside_a_read_of_the_study_stops_it_as_a_ctrl_c_and_tells_the_running_trial(tmp_path,
                                                                                                monkeypatch):
    """A Ctrl-C that lands inside a read of the study's storage leaves the read's cursor unfinished, and
    SQLite refuses every write while it lives ("database is locked"): the study still stops as Ctrl-C
    stops it, its running trial told interrupted."""
    reads = StudyStore.trials

    def stopped_mid_read(store: StudyStore) -> tuple[FrozenTrial, ...]:
        trials = reads(store)
        if any(t.state == TrialState.RUNNING for t in trials):  # the first read while trial 0 runs
            backend: Any = getattr(store.study._storage, "_backend", store.study._storage)  # Optuna's RDBStorage
            cursor = backend.engine.raw_connection().cursor()
            cursor.execute("SELECT * FROM trials, (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                           "WHERE i < 100) SELECT i FROM n)")
            cursor.fetchone()  # 99 rows left: its read transaction, and its lock, stay open
            raise KeyboardInterrupt
        return trials

    monkeypatch.setattr(StudyStore, "trials", stopped_mid_read)
    (tmp_path / "run.py").write_text("print('{\"ops_per_sec\": 1}')\n")
    (tmp_path / "work").mkdir()
    with pytest.raises(KeyboardInterrupt):
        tune(backend="command", command=f"{shlex.quote(sys.executable)} {tmp_path / 'run.py'} {{options}} {{db}}",
             trials=2, sampler="random", seed=1, out=tmp_path / "out", work_dir=tmp_path / "work", mlflow=False,
             plots=False, revalidate=0, baselines=False, starts=False, progress=SilentProgress())
    study = optuna.load_study(study_name=None, storage=f"sqlite:///{tmp_path / 'out' / 'study.db'}")
    told = [(t.state, TrialRecord.of(t).outcome) for t in study.trials]  # a rejected proposal may come first
    assert told[-1] == (TrialState.FAIL, "interrupted") and all(s != TrialState.RUNNING for s, _ in told), told


@pytest.mark.ray
def test_a_program_at_a_target_runs_two_at_once_on_ray_workers(tmp_path, memory_cgroup):
    """--parallel 2 with --backend command: Ray's workers run the program, two at once on cores of their
    own, each run on a hard-linked checkpoint of the DB --load built once on this host (the local
    cluster's workers see its work dir) and within the memory limit; nothing is left behind."""
    (tmp_path / "load.py").write_text(AT_SIZE_LOAD)
    (tmp_path / "run.py").write_text(AT_SIZE_RUN + "import time; time.sleep(float(seconds))\n")
    (tmp_path / "work").mkdir()
    python = shlex.quote(sys.executable)
    r = tuner("tune", "--backend", "command", "--load", f"{python} load.py {{db}} {{data_bytes}} {tmp_path / 'loads'}",
              "--command", f"{python} {tmp_path / 'run.py'} {{options}} {{db}} {{data_bytes}} {{duration}}",
              "--target-data", "64KiB", "--target-memory", "128MiB", "--duration", "2s", "--parallel", "2",
              "--trials", "4", "--sampler", "random", "--seed", "1", "--no-starts", "--out", "o",
              "--work-dir", str(tmp_path / "work"), "--no-mlflow", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "2 trials at once on Ray" in r.stderr
    assert (tmp_path / "loads").read_text() == "x"
    study = summary_of(tmp_path / "o").optuna_study()
    done = [t for t in study.trials if TrialRecord.of(t).outcome == "complete"]
    assert len(done) == 4 and all(TrialRecord.of(t).metric("links") >= 2 for t in done)  # 3: two copies at once
    nodes = [TrialRecord.of(t).node for t in done]
    assert all(n is not None and len(n.cores_used or []) == 1 for n in nodes)
    assert all(TrialRecord.of(t).phases[0]["memory"]["memory_limit_bytes"] == 128 << 20 for t in done)
    spans = sorted((n.measured_from, n.measured_to) for n in nodes if n is not None)
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:])), "no two runs at once"
    assert not [p for p in os.listdir(tmp_path / "work") if p.startswith("rocksdb-tuner-")]


@pytest.mark.parametrize("fields, message", [
    ({"command": "app {options} {data_bytes}"}, "--command: {data_bytes} is the target's data size in bytes: give "
                                                "--target-data SIZE"),
    ({"load": "app {db} {data_bytes}"}, "--load: {data_bytes} is the target's data size in bytes: give --target-data"),
    ({"target_data": 1 << 30}, "--target-data: your program is not told it: put {data_bytes} in --command or --load"),
    ({"command": "app {options} {duration}"}, "--command: {duration} is each run's length in seconds: give --duration"),
    ({"duration": 30.0}, "--duration: your program is not told it: put {duration} in --command"),
    ({"search_duration": 10.0}, "--search-duration: your program is not told it: put {duration} in --command"),
    ({"load": "app {db} {duration}", "command": "app {options} {duration}", "duration": 30.0},
     "--load: {duration} is a run's length; the load runs to its end: leave it out"),
])
def test_the_words_a_program_is_told_and_their_flags_go_together(fields, message):
    """{data_bytes} needs --target-data, {duration} --duration, and each flag its word (else the program
    would not be told): one line naming the flag."""
    with pytest.raises(UsageError) as refused:
        BACKENDS["command"].task(TuneConfig(**{"backend": "command", "command": "app {options}", **fields}))
    assert str(refused.value).startswith(message)


def test_a_program_runs_within_its_memory_limit_and_an_oom_kill_names_it(tmp_path, memory_cgroup):
    """With a memory limit each run (and what it starts) is in a memory cgroup of its own: the program
    finds itself there, limited; one that allocates past the limit is killed, and its failure says so."""
    where = ("import json, pathlib; line = [l for l in open('/proc/self/cgroup').read().splitlines() "
             "if l.split(':')[1] in ('memory', '')][0]; path = line.split(':', 2)[2]; "
             "mount = [l.split()[1] for l in open('/proc/self/mounts') if ' cgroup ' in l and 'memory' in l] or "
             "[l.split()[1] for l in open('/proc/self/mounts') if ' cgroup2 ' in l]; "
             "d = pathlib.Path(mount[0] + path); limit = d / 'memory.limit_in_bytes'; "
             "limit = limit if limit.exists() else d / 'memory.max'; "
             "print(json.dumps({'ops_per_sec': 1, 'limit': int(limit.read_text()), 'mine': int('rocksdb-tuner-' in path)}))")
    limit = 64 << 20
    m = _outcome(tmp_path, where, memory_limit=limit).measurement
    assert m is not None and m.metrics["mine"] and m.metrics["limit"] == limit
    assert m.details[0]["memory"]["memory_limit_bytes"] == limit and m.details[0]["memory_peak_bytes"] > 0
    hog = "x = b'x' * (256 << 20); print(len(x))"
    killed = _outcome(tmp_path, hog, memory_limit=limit)
    assert killed.reason == "command: killed by SIGKILL: no output (out of memory: its cgroup's limit is 64 MiB)"
    assert killed.broken is None  # the configuration's failure, not a broken contract: the study goes on
    assert os.listdir(tmp_path) == ["logs"]


def test_a_program_is_killed_when_the_study_stops(tmp_path):
    """A worker told to stop (its stop event set) kills the running program: the run fails as stopped."""
    command = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(60)' {{options}}"
    backend = BACKENDS["command"](Setup(tmp_path, 60.0, 1, command=command))
    stop = threading.Event()
    backend.prepare(stop)
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    with pytest.raises(RunFailed) as failed:
        backend.measure(Config(), tmp_path / "logs", 1)
    assert failed.value.reason == f"command: {STOPPED}" and time.monotonic() - started < 10


def test_repeats_each_run_on_a_fresh_db_and_the_median_stands_for_them(tmp_path):
    script = ("import json, os, sys; n = sys.argv[2] + '/../../n'; k = int(open(n).read()) if os.path.exists(n) "
              "else 0; open(n, 'w').write(str(k + 1)); print(json.dumps({'ops_per_sec': [30, 10, 20][k]}))")
    m = _outcome(tmp_path, script, repeats=3).measurement
    assert m is not None and [r["ops_per_sec"] for r in m.repeats] == [30.0, 10.0, 20.0]
    assert m.metrics["ops_per_sec"] == 20.0 and m.representative == 2
    assert sorted(os.listdir(tmp_path / "logs")) == ["OPTIONS", "repeat-0", "repeat-1", "repeat-2"]


def test_options_values_go_where_rocksdb_writes_them():
    values = {"CFOptions.compression": "zstd", "CFOptions.compression_opts.level": 9,
              "TableOptions/BlockBasedTable.filter_policy": 10, "TableOptions/BlockBasedTable.block_cache": 1 << 26,
              "DBOptions.max_subcompactions": 3}
    sections = options_file.parse_options(options_file.with_values(rocksdb_defaults(), values))
    for key, value in values.items():
        assert options_file.lookup(sections, key) == options_file.encode(key, value), key
    assert options_file.lookup(sections, "CFOptions.compression_opts.window_bits") == "-14"  # the struct's rest kept


@pytest.mark.parametrize("script, reason", [
    ("import sys; print('opening', file=sys.stderr); print('Invalid argument: bad option', file=sys.stderr); "
     "sys.exit(3)", "command: exit code 3: Invalid argument: bad option"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "command: killed by SIGSEGV: no output"),
    ("print('done')", 'command: no metrics: no JSON line with "ops_per_sec" on its stdout'),
    ("print('{\"ops_per_sec\": 12,')", "command: malformed JSON on stdout line 1: Expecting property name enclosed "
                                         "in double quotes: line 1 column 20 (char 19)"),
    ("print('{\"ops_per_sec\": \"fast\"}')", "command: stdout line 1: metric ops_per_sec is not a number: 'fast'"),
])
def test_each_failure_of_the_program_is_one_clear_line(tmp_path, script, reason):
    """A failed outcome (the engine tells it as a FAILED trial) with one line of reason; no DB left."""
    outcome = _outcome(tmp_path, script)
    assert outcome.measurement is None and outcome.fault is None
    assert outcome.reason == reason
    assert os.listdir(tmp_path) == ["logs"]


NO_METRICS = ("--command", f'no JSON line with "ops_per_sec" on its stdout ({CONTRACT_DOC})')


@pytest.mark.parametrize("script, timeout, broken", [
    ("print('done')", 30.0, NO_METRICS),
    ("import sys; print('sh: 1: app: not found', file=sys.stderr); sys.exit(127)", 30.0,
     ("--command", "exit code 127, a program it runs was not found: sh: 1: app: not found")),
    # what depends on the configuration: a crash, a non-zero exit after its metrics, a timeout
    ("import sys; sys.exit('Invalid argument: bad option')", 30.0, None),
    ("import sys; print('{\"ops_per_sec\": 5}'); sys.exit(127)", 30.0, None),
    ("import sys; print('{\"ops_per_sec\": 5}'); sys.exit(3)", 30.0, None),
    ("import time; time.sleep(30)", 0.5, None),
])
def test_only_a_program_that_breaks_the_contract_is_told_apart_from_a_failed_run(tmp_path, script, timeout, broken):
    """No metrics line (or exit code 127 and none: a program it runs not found) is the program's, whatever
    the configuration: the outcome says so (ContractBroken, naming --command), for the engine to stop
    at rocksdb-default's run; every other failure is the configuration's (broken: None)."""
    outcome = _outcome(tmp_path, script, timeout=timeout)
    assert outcome.measurement is None and outcome.fault is None and outcome.reason
    assert outcome.broken == broken


def test_a_run_of_the_tuners_own_program_without_metrics_fails_as_any_run():
    """The rate backend's program is open_loop (Backend.program None): no metrics fails that run only."""
    with pytest.raises(RunFailed) as failed:
        read_metrics("done\n")
    assert failed.value.broken is None
    with pytest.raises(RunFailed) as failed:
        read_metrics("done\n", "--command")
    assert failed.value.broken == NO_METRICS
    assert BACKENDS["command"].program == "--command" and BACKENDS["rate"].program is None


def test_a_program_that_breaks_the_contract_at_the_first_run_stops_the_study_in_one_line(tmp_path):
    """rocksdb-default's run prints no metrics: one line naming --command and what is missing, exit 2,
    no trial run (not a study of trials failing alike), nothing left in the work dir."""
    r = tuner("tune", "--backend", "command", "--command", "true {options} {db}", "--trials", "3", "--out", "o",
              "--work-dir", str(tmp_path), "--no-mlflow", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    (line,) = [line for line in r.stderr.splitlines() if "error" in line]
    assert line == ("rocksdb-tuner: error: --command: the program broke the contract at rocksdb-default's run: "
                    f'no JSON line with "ops_per_sec" on its stdout ({CONTRACT_DOC})')
    assert not re.search(r"^trial \d+", r.stderr, re.M) and "Traceback" not in r.stderr
    assert "no trial completed" not in r.stdout + r.stderr
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


@pytest.mark.parametrize("printed, needs, reason", [
    ('{"ops_per_sec": Infinity}', (), "ops_per_sec = inf: not a finite number"),
    ('{"ops_per_sec": 1e999}', (), "ops_per_sec = inf: not a finite number"),
    ('{"ops_per_sec": NaN}', (), "ops_per_sec = nan: not a finite number"),
    ('{"ops_per_sec": -5}', (), "ops_per_sec = -5: must be > 0"),
    ('{"ops_per_sec": 0}', (), "ops_per_sec = 0: must be > 0"),
    ('{"ops_per_sec": null, "p99_us": 3}', (), "ops_per_sec: missing, and the study's score needs it (the run "
                                                "reported p99_us, wall_seconds)"),
    ('{"ops_per_sec": 10, "p99_us": -Infinity}', (), "p99_us = -inf: not a finite number"),
    ('{"ops_per_sec": 10, "scan_rows": -1}', (), "scan_rows = -1: must be >= 0"),
    ('{"ops_per_sec": 10, "p99_us": 3}', ("write_amp",), "write_amp: missing, and the study's score needs it (the "
                                                         "run reported ops_per_sec, p99_us, wall_seconds)"),
    ('{"ops_per_sec": 10, "p99_us": null}', ("p99_us",), "p99_us: missing, and the study's score needs it (the run "
                                                        "reported ops_per_sec, wall_seconds)"),
])
def test_a_metric_that_is_not_a_finite_number_or_missing_fails_the_run_naming_it(tmp_path, printed, needs, reason):
    """Every backend's metrics pass one check (tuner.backends.base.check_metrics): a metric that is
    not finite, a negative one, or one the score needs and lacks fails the run in one line naming it."""
    outcome = _outcome(tmp_path, f"print({printed!r})", needs=("ops_per_sec", *needs))
    assert outcome.measurement is None and outcome.fault is None
    assert outcome.reason == reason
    assert os.listdir(tmp_path) == ["logs"]


def test_a_repeat_that_is_not_a_finite_number_fails_the_run(tmp_path):
    """Each repeat is checked, not only the median one that stands for all (here the first, 30)."""
    script = ("import json, os, sys; n = sys.argv[2] + '/../../n'; k = int(open(n).read()) if os.path.exists(n) "
              "else 0; open(n, 'w').write(str(k + 1)); print(json.dumps({'ops_per_sec': [30, 40, float('nan')][k]}))")
    assert _outcome(tmp_path, script, repeats=3).reason == "ops_per_sec = nan: not a finite number"


def test_a_hung_program_is_killed_with_its_children_at_the_timeout(tmp_path):
    script = ("import subprocess, sys, time; child = subprocess.Popen([sys.executable, '-c', 'import time; "
              "time.sleep(60)']); open(sys.argv[2] + '/../../child', 'w').write(str(child.pid)); time.sleep(60)")
    started = time.monotonic()
    outcome = _outcome(tmp_path, script, timeout=1.0)
    assert outcome.reason == "command: timeout, killed after the trial's 1 s limit (--trial-timeout)"
    assert time.monotonic() - started < 10
    child = int((tmp_path / "child").read_text())
    time.sleep(0.5)
    try:
        state = Path(f"/proc/{child}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z")


@pytest.mark.parametrize("fields, message", [
    ({"backend": "nosuch"}, "--backend: unknown 'nosuch' (choose from db_bench, command, rate)"),
    ({"backend": "command"}, "--command: the command backend runs your program: give it"),
    ({"command": "app {options}"}, "--command: goes with --backend command, not db_bench"),
    ({"backend": "command", "command": "x", "workload": "ycsb-a"},
     "--workload: shapes db_bench's workloads; the command backend runs your program (--command)"),
    ({"backend": "command", "command": "x", "scale": 0.5}, "--scale: shapes db_bench's workloads"),
    ({"backend": "command", "command": "x", "base_options": "OPTIONS-1"}, "--base-options: shapes db_bench's"),
    ({"backend": "command", "command": "x", "pruner": "median"}, "--pruner: the command backend reports no "
                                                                   "per-second throughput"),
    ({"backend": "command", "command": "x", "db_bench": "/usr/bin/db_bench"}, "--db-bench: the command backend runs "
                                                                               "no db_bench"),
    ({"backend": "command", "command": "x", "rocksdb_version": "9.11"}, "--rocksdb-version: the command backend runs "
                                                                         "no db_bench"),
    ({"load": "app --load {db}"}, "--load: builds your program's DB; it goes with --backend command, not db_bench"),
])
def test_what_the_command_backend_cannot_do_is_refused(fields, message):
    with pytest.raises(UsageError) as refused:
        check_backend(TuneConfig(**fields))
    assert str(refused.value).startswith(message)


def test_the_command_backend_takes_a_target_its_memory_run_lengths_and_ray():
    check_backend(TuneConfig(backend="command", command="x", target_data=1 << 30, target_memory=256 << 20,
                             duration=30.0, search_duration=10.0))
    check_backend(TuneConfig(backend="command", command="x", memory_limit=256 << 20, parallel=2))
    check_backend(TuneConfig(backend="command", command="x", executor="ray"))


def test_a_node_that_cannot_run_the_program_says_why():
    """A worker asks the backend what its node has (Backend.on_node): the program must be found there."""
    setup = Setup(Path("/nonexistent"), 1.0, 1, command="python app.py {options}")
    assert BACKENDS["command"].on_node(setup, ExecutionConfig()).setup == setup
    missing = BACKENDS["command"].on_node(replace(setup, load="no-such-loader {db}"), ExecutionConfig())
    assert missing.setup is None and missing.error == "--load: no-such-loader: no such program (not a path to an " \
                                                      "executable, nor on PATH)"


@pytest.mark.parametrize("command, message", [
    ("", "--command: give the program to run"),
    ("python app.py --db {db}", "--command: the program must be given the OPTIONS file: put {options} in it"),
    ("no-such-program-here {options}", "--command: no-such-program-here: no such program"),
    ("python 'app.py {options}", "--command: cannot split"),
])
def test_a_command_that_cannot_run_is_refused(tmp_path, command, message):
    with pytest.raises(ValueError) as refused:
        BACKENDS["command"](Setup(tmp_path, 1.0, 1, command=command))
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("load, message", [
    ("", "--load: give the program to run, e.g. --load 'python app.py --load --options {options} --db {db}'"),
    ("python app.py --load --options {options}", "--load: the program must be given the DB directory to build: put "
                                                 "{db} in it"),
    ("no-such-loader {db}", "--load: no-such-loader: no such program"),
])
def test_a_load_that_cannot_run_is_refused(tmp_path, load, message):
    with pytest.raises(ValueError) as refused:
        BACKENDS["command"](Setup(tmp_path, 1.0, 1, command="python app.py {options}", load=load))
    assert str(refused.value).startswith(message)


@pytest.mark.dbbench
def test_a_failing_program_fails_its_trials_with_one_line(tmp_path):
    command = f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(\"no such column family\")' {{options}}"
    r = tuner("tune", "--backend", "command", "--command", command, "--trials", "2", "--out", "o", "--work-dir",
              str(tmp_path), "--no-mlflow", "--no-baselines", "--no-starts", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.trials.failed == 2 and summary.best is None
    trials = summary.optuna_study().trials
    failed = [TrialRecord.of(t).fail_reason for t in trials if TrialRecord.of(t).outcome == "failed"]
    assert failed == ["command: exit code 1: no such column family"] * 2
    assert len(re.findall(r"^trial \d+: FAILED: command: exit code 1: no such column family \(", r.stderr, re.M)) == 2
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


def test_a_command_study_needs_no_db_bench(tmp_path, monkeypatch):
    """With no db_bench to find ($ROCKSDB_TUNER_DB_BENCH names no file, none on PATH), a command study
    runs to its end: it probes none, and records, prints and tracks none (summary.json's db_bench is
    null); its starts have nothing of db_bench's defaults. What it prints speaks of the program: its
    metrics by their names, no column or word of db_bench's (write amp, sustained ops/s, benchmark.sh)."""
    monkeypatch.setenv("ROCKSDB_TUNER_DB_BENCH", str(tmp_path / "no-db_bench"))
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                                               if not (Path(d) / "db_bench").exists()))
    with pytest.raises(DbBenchError):
        probe()
    script = ("import json, re, sys; t = open(sys.argv[1]).read(); "
              "print(json.dumps({'ops_per_sec': float(re.search(r'max_background_jobs=(\\d+)', t)[1]), 'p50_us': 2.5}))")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    r = tuner("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} "
              "{options}", "--trials", "3", "--sampler", "random", "--seed", "1", "--out", "o", "--work-dir",
              str(tmp_path), "--mlflow-uri", uri, "--experiment", "no-db_bench", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    printed = r.stdout + r.stderr + (tmp_path / "o" / "comparison.md").read_text()
    assert not DB_BENCH_WORDS.findall(printed)
    assert re.search(r"^trial 0: ops_per_sec \d+, p50_us 2\.5 \(", r.stderr, re.M)
    # what is on disk, on purpose: the file carries the schema, and the typed summary writes it back as read
    stored = json.loads((tmp_path / "o" / "summary.json").read_text())
    summary = summary_of(tmp_path / "o")
    assert stored["schema"] == SCHEMA_VERSION and summary.to_dict() == stored
    assert summary.build is None and summary.defaults is None
    assert summary.trials.complete == 3 and summary.baselines[0].state == "COMPLETE"
    trials = summary.optuna_study().trials
    assert [TrialRecord.of(t).enqueued for t in trials][:1] == ["benchmark.sh"]  # no rocksdb-default start
    assert summary.backend == "command" and (summary.command or "").endswith("{options}")
    title = (tmp_path / "o" / "comparison.md").read_text().splitlines()[0]
    assert summary.workload == "command"  # the program is the study's workload, no db_bench preset
    assert "db_bench" not in title and "the program `" in title and "fillrandom" not in title
    assert "best configuration (options, in OPTIONS.ini for the program): " in r.stdout + r.stderr
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("no-db_bench").experiment_id], max_results=100)
    (study,) = [run for run in runs if run.data.tags.get("role") == "study"]
    assert not [k for k in (*study.data.params, *study.data.tags) if k.startswith("db_bench")]
    trial = next(run for run in runs if run.data.tags.get("role") == "trial")
    assert [a.path for a in client.list_artifacts(trial.info.run_id)] == ["command"]  # the program's logs
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


@pytest.mark.parametrize("write_amp", [None, 1.5])
def test_a_programs_comparison_has_a_column_for_a_metric_only_when_it_printed_it(write_amp):
    """A committed db_bench study's comparison keeps its write amp column (stored / logical); the same
    rows as a program's have one only when the program printed write_amp, named by it alone."""
    data = Summary.load(Path(__file__).resolve().parents[1] / "experiments" / "default_job" / "results" /
                        "default-job-11.8.1-2026-11-27" / "summary.json").to_dict()
    assert "write amp (stored / logical)" in comparison_markdown(Summary.from_dict(data))
    rows = [{**{k: v for k, v in row.items() if not k.startswith("write_amp")},
             **({"write_amp": write_amp} if write_amp else {})} for row in data["comparison"]]
    program = Summary.from_dict({**data, "backend": "command", "command": "app {options}", "comparison": rows})
    header = next(line for line in closing_table(program).splitlines() if line.startswith("configuration"))
    table = comparison_markdown(program)
    assert ("write amp" in header) == bool(write_amp) and ("write amp" in table) == bool(write_amp)
    assert "stored / logical" not in table
    head, rule = (line for line in table.splitlines() if line.startswith("| configuration") or line.startswith("|---"))
    assert head.count("|") == rule.count("|")


def test_a_study_an_earlier_version_stored_resumes_and_reports_what_it_stored(tmp_path):
    """A baseline's run is a study attribute; in a study an earlier version began it is as that version
    stored it (here the first one's: no phases, no end time; and a key this version does not know). The
    study resumes on it: the baseline is not measured again, and the summary reports it as stored."""
    script = "import json; print(json.dumps({'ops_per_sec': 100.0}))"
    args = ("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} "
            "{options}", "--sampler", "random", "--seed", "1", "--no-starts", "--no-baselines", "--study", "old",
            "--out", "o", "--work-dir", str(tmp_path), "--no-mlflow", "--no-plots")
    r = tuner(*args, "--trials", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    stored = {"name": "rocksdb-default", "flags": {}, "doc": "the defaults", "log_dir": str(tmp_path / "gone"),
              "state": "COMPLETE", "metrics": {"ops_per_sec": 90.0}, "commands": [["prog"]], "seconds": 12.5,
              "a_key_of_another_version": True}
    summary_of(tmp_path / "o").optuna_study().set_user_attr("baseline:rocksdb-default", stored)
    again = tuner(*args, "--trials", "2", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "baseline rocksdb-default: running" not in again.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.trials.complete == 2 and summary.machine_seconds.baselines == 12.5
    assert summary.baselines == [BaselineRun(name="rocksdb-default", doc="the defaults", state="COMPLETE",
                                             metrics={"ops_per_sec": 90.0})]
    assert summary.comparison[0].value("ops_per_sec") == 90.0 and summary.comparison[-1].vs_default == pytest.approx(
        100.0 / 90.0)


def test_a_baseline_given_as_an_options_file_runs_the_program_on_that_file(tmp_path):
    """--baseline FILE (an OPTIONS file) with the command backend: the program is handed that file, its searched
    options as the file sets them, not the defaults' file with an "options_file" flag it cannot set."""
    (tmp_path / "cache.toml").write_text('name = "cache"\n[parameters.cache_size]\ntype = "int"\nlow = "4 * MiB"\n'
                                         'high = "8 * MiB"\n')
    mine = options_file.with_values(rocksdb_defaults(), {"CFOptions.write_buffer_size": 12345678})
    (tmp_path / "mine.ini").write_text(options_file.with_block_cache(mine, 5 * 2**20))
    script = ("import json, sys; t = open(sys.argv[1]).read(); "
              "print(json.dumps({'ops_per_sec': 200 if 'write_buffer_size=12345678' in t else 100}))")
    (tmp_path / "work").mkdir()
    r = tuner("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} "
              "{options}", "--space", str(tmp_path / "cache.toml"), "--baseline", str(tmp_path / "mine.ini"),
              "--trials", "1", "--seed", "1", "--revalidate", "0", "--out", "o", "--work-dir", str(tmp_path / "work"),
              "--no-mlflow", "--no-plots", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = {b.name: b for b in summary_of(tmp_path / "o").baselines}
    assert runs["rocksdb-default"].metrics["ops_per_sec"] == 100.0
    yours = next(b for name, b in runs.items() if name != "rocksdb-default")
    assert yours.state == "COMPLETE" and yours.metrics["ops_per_sec"] == 200.0


def test_the_why_shows_the_defaults_as_the_options_values(tmp_path):
    """The closing why block sets each option against rocksdb-default's value in the option's own terms
    (snappy, 0 bits per key: no filter, the library's default level), never as the OPTIONS file writes it
    (kSnappyCompression, nullptr, 32767); the block cache, which the file does not hold, is said to be
    missing from it."""
    (tmp_path / "why.toml").write_text(
        'name = "why"\n'
        '[parameters.compression_type]\ntype = "categorical"\nchoices = ["zstd"]\n'
        '[parameters.compression_level]\ntype = "int"\nlow = 1\nhigh = 19\nwhen = { compression_type = "zstd" }\n'
        '[parameters.bloom_bits]\ntype = "int"\nlow = 1\nhigh = 16\n'
        '[parameters.cache_size]\ntype = "int"\nlow = "4 * MiB"\nhigh = "8 * MiB"\n')
    script = "import json; print(json.dumps({'ops_per_sec': 100}))"
    (tmp_path / "work").mkdir()
    r = tuner("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} "
              "{options}", "--space", str(tmp_path / "why.toml"), "--trials", "1", "--seed", "1", "--out", "o",
              "--work-dir", str(tmp_path / "work"), "--no-mlflow", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.explanation is not None and summary.best is not None
    rows = {row.param: row for row in summary.explanation.options}
    best = summary.best.params
    assert {name: row.default for name, row in rows.items()} == \
        {"compression_type": "snappy", "compression_level": None, "bloom_bits": 0, "cache_size": None}
    assert [rows[name].text.split(";")[0] for name in ("compression_type", "compression_level", "bloom_bits",
                                                           "cache_size")] == [
        "compression_type = zstd (default snappy): changed",
        f"compression_level = {best['compression_level']} (default the library's default level): set",
        f"bloom_bits = {best['bloom_bits']} (default 0: no filter): higher",
        f"cache_size = {best['cache_size']} (default not in its OPTIONS file): set"]
    assert all(row.text in r.stdout for row in rows.values())
    assert not re.search(r"nullptr|32767|k\w+Compression|n/a", "\n".join(row.text for row in rows.values()))


@pytest.mark.dbbench
def test_the_rocksdict_example_is_tuned_exported_and_loaded_back(tmp_path):
    """--backend command on examples/rocksdict_app: trials tracked in MLflow, the best re-validated,
    its OPTIONS exported, and the application, opening a DB with that file, reports the tuned values."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    command = f"{shlex.quote(sys.executable)} {APP} --options {{options}} --db {{db}} --keys 3000 --ops 3000"
    r = tuner("tune", "--backend", "command", "--command", command, "--trials", "4", "--sampler", "random",
              "--seed", "3", "--out", "out", "--work-dir", str(tmp_path), "--mlflow-uri", uri, "--experiment", "app",
              "--no-baselines", "--no-starts", "--revalidate", "1", "--revalidate-rounds", "2",
              "--revalidate-max-rounds", "2", "--no-ablation", cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "out")
    assert summary.trials.complete == 4 and summary.trials.failed == 0
    assert summary.revalidation is not None
    best = summary.best
    assert best is not None and best.metrics["ops_per_sec"] > 0 and best.metrics["p99_us"] > 0
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("app").experiment_id], max_results=100)
    trials = [r for r in runs if r.data.tags.get("role") == "trial" and r.data.tags.get("state") == "COMPLETE"]
    assert len(trials) == 4 and all(r.data.metrics["ops_per_sec"] > 0 for r in trials)

    exported = tmp_path / "tuned.ini"
    r = subprocess.run([*TUNER, "export", "--summary", str(tmp_path / "out" / "summary.json"), "--output",
                        str(exported)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = subprocess.run([sys.executable, str(APP), "--report-options", str(exported)], capture_output=True,
                            text=True, check=True)
    got = json.loads(report.stdout)
    # The export is the recommended configuration: the best, or the reference when the re-validation
    # found no gain over it (rocksdb-default: RocksDB's defaults, no block_cache line).
    kept = summary.answer is not None and summary.answer.recommend == "reference"
    params = {} if kept else best.params
    defaults = options_file.parse_options(rocksdb_defaults())
    in_best_run = options_file.parse_options((Path(best.log_dir) / "OPTIONS").read_text())
    for p in load_space("default").parameters:
        if p.name not in best.params:
            continue
        want = options_file.encode(p.options_key, params[p.name]) if p.name in params else None
        if p.options_key == options_file.BLOCK_CACHE_KEY:
            assert got["block_cache_capacity"] == (int(want) if want else 32 << 20)
            continue
        want = want or options_file.lookup(defaults, p.options_key)
        assert options_file.lookup(got["options"], p.options_key) == want, p.name
        # and the app ran the best trial with its tuned values: the OPTIONS file RocksDB wrote into its DB
        assert options_file.lookup(in_best_run, p.options_key) == options_file.encode(p.options_key,
                                                                                       best.params[p.name]), p.name


def test_the_rocksdict_example_loads_its_db_once_and_runs_on_copies_of_it(tmp_path):
    """The example with --load: its keys are loaded once into a real RocksDB DB; each run opens a
    hard-linked copy with its configuration's OPTIONS file, loads nothing and finds every key there."""
    python = shlex.quote(sys.executable)
    r = tuner("tune", "--backend", "command", "--load", f"{python} {APP} --load --options {{options}} --db {{db}} "
              "--keys 2000", "--command", f"{python} {APP} --loaded --options {{options}} --db {{db}} --keys 2000 "
              "--ops 2000", "--trials", "2", "--sampler", "random", "--seed", "1", "--no-starts", "--revalidate", "0",
              "--out", "o", "--work-dir", str(tmp_path), "--no-mlflow", "--no-plots", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    runs = [summary.baselines[0].metrics, *(t["metrics"] for t in summary_trials(summary))]
    assert len(runs) == 3 and all(m["keys"] == 2000 and "load_ops_per_sec" not in m for m in runs)
    assert json.loads((tmp_path / "o" / "preload-trials" / "load.stdout").read_text())["load_ops_per_sec"] > 0
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]  # the loaded DB removed too


def test_the_rocksdict_example_at_a_target_is_loaded_once_and_runs_within_its_memory(tmp_path, memory_cgroup):
    """The at-size form README shows first: the example told the target's bytes ({data_bytes}: its key
    count) and each run's seconds ({duration}), its DB loaded once, every run within --target-memory (a
    memory cgroup), tuned for its P99."""
    python = shlex.quote(sys.executable)
    r = tuner("tune", "--backend", "command",
              "--load", f"{python} {APP} --load --options {{options}} --db {{db}} --data-bytes {{data_bytes}}",
              "--command", f"{python} {APP} --loaded --options {{options}} --db {{db}} --data-bytes {{data_bytes}} "
              "--duration {duration}", "--target-data", "2MiB", "--target-memory", "128MiB", "--duration", "1s",
              "--objective", "p99_us", "--trials", "2", "--sampler", "random", "--seed", "1", "--no-starts",
              "--out", "o", "--work-dir", str(tmp_path), "--no-mlflow", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "your program runs within 128 MiB: a memory cgroup per run (cgroup v" in r.stderr
    summary = summary_of(tmp_path / "o")
    keys = (2 << 20) // (16 + 400)  # the app's 16-byte keys and 400-byte values in 2 MiB
    assert json.loads((tmp_path / "o" / "preload-trials" / "load.stdout").read_text())["keys"] == keys
    study = summary.optuna_study()
    runs = [t for t in study.trials if TrialRecord.of(t).outcome == "complete"]
    assert len(runs) == 2 and all(TrialRecord.of(t).metric("keys") == keys for t in runs)
    assert all(TrialRecord.of(t).phases[0]["memory"]["memory_limit_bytes"] == 128 << 20 for t in runs)
    assert summary.best is not None and summary.best.metrics["p99_us"] > 0 and summary.objective_metric == "p99_us"
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


def summary_trials(summary: Summary) -> list[dict]:
    """The complete trials of a finished study, as its storage holds them."""
    records = [(t.number, TrialRecord.of(t)) for t in summary.optuna_study().trials]
    return [{"number": number, "metrics": r.metrics} for number, r in records if r.outcome == "complete"]


NO_CACHE_PROGRAM = '''
import json, shutil, sys, tempfile
from pathlib import Path
import rocksdict
options_file, db = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:  # the OPTIONS file's options, but not its block cache
    shutil.copy(options_file, Path(tmp) / "OPTIONS-000001")
    options, families = rocksdict.Options.load_latest(tmp, cache=rocksdict.Cache(7 << 20))
options.create_if_missing(True)
d = rocksdict.Rdict(db, options, column_families=families)
d[b"k"] = b"v"
d.close()
print(json.dumps({"ops_per_sec": 100 + options_file.count("1")}))
'''


def test_an_option_the_program_did_not_apply_is_named_once_and_left_out_of_the_why(tmp_path):
    """The block cache's capacity is read from the DB's LOG (RocksDB leaves it out of the OPTIONS file):
    a program that opens its DB with a cache of its own is told, once, that cache_size was not applied,
    and cache_size is left out of the importance and the why."""
    (tmp_path / "prog.py").write_text(NO_CACHE_PROGRAM)
    (tmp_path / "space.toml").write_text(
        '[parameters.cache_size]\ntype = "int"\nlow = "16 * MiB"\nhigh = "64 * MiB"\n'
        '[parameters.max_background_jobs]\ntype = "int"\nlow = 2\nhigh = 8\n')
    (tmp_path / "work").mkdir()
    r = tuner("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} prog.py {{options}} {{db}}",
              "--space", "space.toml", "--trials", "3", "--seed", "1", "--no-starts", "--out", "o",
              "--work-dir", str(tmp_path / "work"), "--no-mlflow", "--no-plots", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "not applied as asked" in line]
    assert len(notes) == 1 and "cache_size: asked " in notes[0] and "the DB's LOG has its capacity 7340032" in notes[0]
    assert "max_background_jobs" not in notes[0]
    explanation = summary_of(tmp_path / "o").explanation
    assert explanation is not None and [row.param for row in explanation.options] == ["max_background_jobs"]
    assert "cache_size" not in explanation.importance
