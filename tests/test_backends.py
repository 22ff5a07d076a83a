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
import time
from pathlib import Path

import pytest
from mlflow import MlflowClient

from objectives.dbbench import DbBenchError, probe
from objectives.measurement import Measurement
from search_spaces import load_space
from tests.conftest import summary_of
from tests.test_cli import TUNER, tuner
from tuner import options_file, tune
from tuner.backends import BACKENDS, Backend, Setup
from tuner.backends._command import rocksdb_defaults
from tuner.engine._prepare import check_backend
from tuner.executors import Job, LocalExecutor, Outcome
from tuner.model import TuneConfig, UsageError
from tuner.observers import SilentProgress
from tuner.summary import SCHEMA_VERSION, BaselineRun, Summary
from tuner.trials import TrialRecord

APP = Path(__file__).resolve().parents[1] / "examples" / "rocksdict_app" / "app.py"
KEYS = {"max_background_jobs": "DBOptions.max_background_jobs", "write_buffer_size": "CFOptions.write_buffer_size"}


class Formula(Backend):
    """A backend of one's own, with its own set-up: ``prepare`` writes a table of coefficients in the work
    dir once per study, ``measure`` computes ops/s from it and the configuration, ``teardown`` removes it."""

    name = "formula"
    prepared: list[Path] = []

    def prepare(self, stop=None) -> None:
        self.table = self.setup.work_dir / "formula-table"
        self.table.write_text("1000 10")
        Formula.prepared.append(self.table)

    def _measure(self, flags, log_dir, repeats, observer, workload) -> Measurement:
        base, per_job = (float(x) for x in self.table.read_text().split())
        return Measurement({"ops_per_sec": base + per_job * int(flags.get("max_background_jobs", 2))}, [], "", [])

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


def _outcome(tmp_path: Path, script: str, flags: dict | None = None, timeout: float = 30.0,
             repeats: int = 1, needs: tuple[str, ...] = ("ops_per_sec",)) -> Outcome:
    """What the local executor makes of ``python -c script {options} {db}`` run on ``flags``, for a
    study whose score ``needs`` those metrics."""
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{options}} {{db}}"
    executor = LocalExecutor()
    executor.bind(BACKENDS["command"](Setup(tmp_path, timeout, 1, KEYS, command=command, needs=needs)))
    executor.submit(Job("trial 0", flags or {}, tmp_path / "logs", repeats))
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


def _loaded_executor(tmp_path: Path, load: str) -> tuple[LocalExecutor, Backend]:
    """The local executor of a command study with ``--load "python -c LOAD {db}"``, its runs ON_LOADED,
    and its backend."""
    python = shlex.quote(sys.executable)
    executor = LocalExecutor()
    backend = BACKENDS["command"](Setup(tmp_path / "work", 30.0, 1, KEYS,
                                        command=f"{python} -c {shlex.quote(ON_LOADED)} {{options}} {{db}}",
                                        load=f"{python} -c {shlex.quote(load)} {{db}}", logs=tmp_path / "out"))
    executor.bind(backend)
    return executor, backend


def test_load_builds_the_db_once_and_each_run_starts_on_a_hard_linked_copy(tmp_path):
    """--load runs once, before the first run; every run gets a copy of what it built, its SST files
    hard-linked, so what a run writes or deletes never reaches the built DB; the backend's teardown
    removes it."""
    (tmp_path / "work").mkdir()
    executor, backend = _loaded_executor(tmp_path, LOAD)
    outcomes = []
    for i in range(3):
        executor.submit(Job(f"trial {i}", {}, tmp_path / "logs" / str(i), 1))
        outcomes += executor.wait(1.0)
    assert [o.reason for o in outcomes] == [""] * 3
    assert [(o.measurement.metrics["links"], o.measurement.metrics["rows"]) for o in outcomes] == [(2.0, 4000.0)] * 3
    assert (tmp_path / "work" / "loads").read_text() == "x"  # one load for three runs
    assert (tmp_path / "out" / "load" / "command.command").read_text().startswith(shlex.quote(sys.executable))
    (built,) = [p for p in (tmp_path / "work").iterdir() if p.name.startswith("rocksdb-tuner-preload-command-")]
    assert (built / "db" / "CURRENT").read_text() == "MANIFEST-000001\n" and (built / "db" / "000007.sst").is_file()
    executor.close()
    assert (built / "db" / "CURRENT").is_file()  # the study tears its backend down, not the executor
    backend.teardown()
    assert sorted(os.listdir(tmp_path / "work")) == ["loads"]


def test_a_failed_load_fails_every_run_in_one_line_and_is_not_retried(tmp_path):
    (tmp_path / "work").mkdir()
    executor, _ = _loaded_executor(tmp_path, LOAD + "; sys.exit('no space for the keys')")
    reasons = []
    for i in range(2):
        executor.submit(Job(f"trial {i}", {}, tmp_path / "logs" / str(i), 1))
        reasons += [o.reason for o in executor.wait(1.0)]
    assert reasons == [f"--load: command: exit code 1: no space for the keys (logs in {tmp_path / 'out' / 'load'})"] * 2
    assert (tmp_path / "work" / "loads").read_text() == "x"
    assert sorted(os.listdir(tmp_path / "work")) == ["loads"]  # nothing of the failed load is kept


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
    ({"backend": "nosuch"}, "--backend: unknown 'nosuch' (choose from db_bench, command)"),
    ({"backend": "command"}, "--command: the command backend runs your program: give it"),
    ({"command": "app {options}"}, "--command: goes with --backend command, not db_bench"),
    ({"backend": "command", "command": "x", "workload": "ycsb-a"}, "--workload: shapes db_bench's workloads"),
    ({"backend": "command", "command": "x", "pruner": "median"}, "--pruner: the command backend reports no "
                                                                   "per-second throughput"),
    ({"backend": "command", "command": "x", "parallel": 2}, "--parallel: shapes db_bench's workloads"),
    ({"backend": "command", "command": "x", "executor": "ray"}, "--executor: shapes db_bench's workloads"),
    ({"backend": "command", "command": "x", "db_bench": "/usr/bin/db_bench"}, "--db-bench: shapes db_bench's"),
    ({"backend": "command", "command": "x", "rocksdb_version": "9.11"}, "--rocksdb-version: shapes db_bench's"),
    ({"load": "app --load {db}"}, "--load: builds your program's DB; it goes with --backend command, not db_bench"),
])
def test_what_the_command_backend_cannot_do_is_refused(fields, message):
    with pytest.raises(UsageError) as refused:
        check_backend(TuneConfig(**fields))
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("command, message", [
    ("", "--command: give the program to run"),
    ("python app.py --db {db}", "--command: the program must be given the OPTIONS file: put {options} in it"),
    ("no-such-program-here {options}", "--command: no-such-program-here: no such program"),
    ("python 'app.py {options}", "--command: cannot split"),
])
def test_a_command_that_cannot_run_is_refused(tmp_path, command, message):
    with pytest.raises(ValueError) as refused:
        BACKENDS["command"](Setup(tmp_path, 1.0, 1, KEYS, command=command))
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("load, message", [
    ("", "--load: give the program to run, e.g. --load 'python app.py --load --options {options} --db {db}'"),
    ("python app.py --load --options {options}", "--load: the program must be given the DB directory to build: put "
                                                 "{db} in it"),
    ("no-such-loader {db}", "--load: no-such-loader: no such program"),
])
def test_a_load_that_cannot_run_is_refused(tmp_path, load, message):
    with pytest.raises(ValueError) as refused:
        BACKENDS["command"](Setup(tmp_path, 1.0, 1, KEYS, command="python app.py {options}", load=load))
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
    failed = [t.user_attrs["fail_reason"] for t in trials if t.user_attrs.get("outcome") == "failed"]
    assert failed == ["command: exit code 1: no such column family"] * 2
    assert len(re.findall(r"^trial \d+: FAILED: command: exit code 1: no such column family \(", r.stderr, re.M)) == 2
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


def test_a_command_study_needs_no_db_bench(tmp_path, monkeypatch):
    """With no db_bench to find ($ROCKSDB_TUNER_DB_BENCH names no file, none on PATH), a command study
    runs to its end: it probes none, and records, prints and tracks none (summary.json's db_bench is
    null); its starts have nothing of db_bench's defaults."""
    monkeypatch.setenv("ROCKSDB_TUNER_DB_BENCH", str(tmp_path / "no-db_bench"))
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                                               if not (Path(d) / "db_bench").exists()))
    with pytest.raises(DbBenchError):
        probe()
    script = ("import json, re, sys; t = open(sys.argv[1]).read(); "
              "print(json.dumps({'ops_per_sec': float(re.search(r'max_background_jobs=(\\d+)', t)[1])}))")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    r = tuner("tune", "--backend", "command", "--command", f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} "
              "{options}", "--trials", "3", "--sampler", "random", "--seed", "1", "--out", "o", "--work-dir",
              str(tmp_path), "--mlflow-uri", uri, "--experiment", "no-db_bench", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not [line for line in r.stderr.splitlines() if "db_bench" in line]
    # what is on disk, on purpose: the file carries the schema, and the typed summary writes it back as read
    stored = json.loads((tmp_path / "o" / "summary.json").read_text())
    summary = summary_of(tmp_path / "o")
    assert stored["schema"] == SCHEMA_VERSION and summary.to_dict() == stored
    assert summary.db_bench is None and summary.defaults is None
    assert summary.trials.complete == 3 and summary.baselines[0].state == "COMPLETE"
    trials = summary.optuna_study().trials
    assert [t.user_attrs.get("enqueued") for t in trials][:1] == ["benchmark.sh"]  # no rocksdb-default start
    assert summary.backend == "command" and (summary.command or "").endswith("{options}")
    title = (tmp_path / "o" / "comparison.md").read_text().splitlines()[0]
    assert "db_bench" not in title and "the program `" in title and str(summary.workload) not in title
    assert "best configuration (options, in OPTIONS.ini for the program): " in r.stdout + r.stderr
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("no-db_bench").experiment_id], max_results=100)
    (study,) = [run for run in runs if run.data.tags.get("role") == "study"]
    assert not [k for k in (*study.data.params, *study.data.tags) if k.startswith("db_bench")]
    trial = next(run for run in runs if run.data.tags.get("role") == "trial")
    assert [a.path for a in client.list_artifacts(trial.info.run_id)] == ["command"]  # the program's logs
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]


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
    assert json.loads((tmp_path / "o" / "load" / "command.stdout").read_text())["load_ops_per_sec"] > 0
    assert not [p for p in os.listdir(tmp_path) if p.startswith("rocksdb-tuner-")]  # the loaded DB removed too


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
