"""`rocksdb-tuner` end to end on the real db_bench, and every bad input of issue 3."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import optuna
import pytest

from tests.conftest import TINY, fast, leftovers, printed_summary, summary_of
from tuner.samplers import KINDS, RANKED
from tuner.trials import TrialRecord

pytestmark = pytest.mark.dbbench
TUNER = [sys.executable, "-m", "tuner.cli"]


def tuner(*args: str, cwd: Path | None = None, timeout: float = 600, plots: bool = False, drain: bool = False,
          revalidate: bool = False) -> subprocess.CompletedProcess:
    """Run the CLI. Studies skip what costs time without being the test's subject, unless the test
    asks for it: plotting (~5 s; plots=True), the drain after each phase (--no-drain, see
    tests.conftest.fast; drain=True), the re-validation (--revalidate 0, unless the test passes
    --revalidate or revalidate=True) and MLflow tracking (unless the test is marked `tracked` or passes
    --mlflow-uri). Each is tested where it is the subject."""
    if args and args[0] == "tune":
        args = (*fast(args, drain, revalidate), *(() if plots else ("--no-plots",)))
    return subprocess.run([*TUNER, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def test_issue_example_fillrandom_random_six_trials(tmp_path, db_bench):
    """The issue's own command, at full default scale: real measurements and a valid OPTIONS.ini."""
    out = tmp_path / "out"
    work = tmp_path / "work"
    work.mkdir()
    r = tuner("tune", "--workload", "fillrandom", "--trials", "6", "--sampler", "random", "--out", str(out),
              "--work-dir", str(work), "--seed", "11")
    assert r.returncode == 0, r.stderr
    summary = summary_of(out)
    assert summary.trials.complete == 6 and summary.trials.failed == 0
    assert summary.build is not None and summary.build.details == db_bench.to_dict()
    assert summary.sampler == "random" and summary.workload == "fillrandom"
    best, (default,) = summary.best, summary.baselines
    assert best is not None
    assert default.name == "rocksdb-default" and default.params == {} and default.metrics["ops_per_sec"] > 0
    for key in ("ops_per_sec", "p99_us", "write_amp", "p50_us", "p95_us", "p99_9_us", "peak_rss_bytes", "db_size_bytes"):
        assert best.metrics[key] is not None, key
    trials = summary.optuna_study().trials
    ops = [t.values[0] for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert best.metrics["ops_per_sec"] == max(ops) and len(set(ops)) > 1
    assert "rocksdb-default" in r.stdout and f"best (trial {best.trial})" in r.stdout
    # Why: fANOVA importance over the 6 trials, and one line per tuned option against the default's OPTIONS.
    explanation = summary.explanation
    assert explanation is not None
    assert set(explanation.importance) <= set(best.params) and explanation.importance
    rows = {row.param: row for row in explanation.options}
    assert set(rows) == set(best.params)
    assert rows["write_buffer_size"].default == 67108864  # read back from rocksdb-default's OPTIONS file
    assert summary.defaults is not None
    ran = summary.defaults.flags.get("cache_size", db_bench.default("cache_size"))
    assert rows["cache_size"].default == int(ran)  # not in it: the block cache rocksdb-default ran
    assert rows["compression_type"].default in ("snappy", "lz4")  # not kSnappyCompression
    assert "why, option by option" in r.stdout and rows["subcompactions"].text in r.stdout
    assert all(row.text in r.stdout for row in rows.values())
    assert not re.search(r"nullptr|32767|k\w+Compression|n/a", "\n".join(row.text for row in rows.values()))
    assert leftovers(work) == []
    # OPTIONS.ini holds the best configuration and db_bench accepts it.
    options = (out / "OPTIONS.ini").read_text()
    assert f"write_buffer_size={best.params['write_buffer_size']}" in options
    assert f"block_cache={best.params['cache_size']}" in options
    check = subprocess.run([db_bench.path, f"--options_file={out / 'OPTIONS.ini'}", "--benchmarks=fillrandom",
                            "--num=1000", f"--db={work}/check", "--progress_reports=false"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert "fillrandom" in check.stdout


def test_resume_continues_the_same_study(tmp_path):
    out = tmp_path / "out"
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--sampler", "tpe", "--seed", "2",
            "--study", "resumable", "--out", str(out)]
    first = tuner(*args, "--trials", "3")
    assert first.returncode == 0, first.stderr
    second = tuner(*args, "--trials", "5")
    assert second.returncode == 0, second.stderr
    assert "resuming: 3 of 5 trials already measured" in second.stderr
    assert "baseline rocksdb-default" not in second.stderr  # measured once, kept in the study
    assert summary_of(out).trials.complete == 5
    other = tuner(*args[:2], "readrandom", *args[3:], "--trials", "5")
    assert other.returncode == 2 and "--study resumable: exists with" in other.stderr


@pytest.mark.parametrize("sampler", ["tpe", "gp", "cmaes", "nsga2", "skopt", "grid"])
def test_every_sampler_runs_a_real_study(tmp_path, sampler):
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "5", "--sampler", sampler,
              "--seed", "1", "--out", str(tmp_path / sampler), "--json")
    if sampler == "gp" and importlib.util.find_spec("torch") is None:
        # The light install has no PyTorch (make EXTRAS=gp,test adds it): one line says how to add it.
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [
            "rocksdb-tuner: error: --sampler gp needs PyTorch, which the default install leaves out: "
            "pip install 'rocksdb-tuner[gp]' (or make EXTRAS=gp,test)"], r.stderr
        assert not (tmp_path / sampler).exists()
        return
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.sampler == sampler and summary.trials.complete == 5
    assert summary.best is not None and summary.best.metrics["ops_per_sec"] > 0


@pytest.mark.parametrize("extra, sampler", [
    ([], RANKED[0]), (["--max-p99-us", "1000"], next(n for n in RANKED if KINDS[n].constraints)),
    (["--objective", "multi"], "tpe")])
def test_the_default_sampler_is_the_one_chosen_for_the_study(tmp_path, extra, sampler):
    """tests/test_efficiency.py holds RANKED to the sampler benchmark; here the CLI uses it."""
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "2", "--seed", "1",
              "--no-baselines", "--out", str(tmp_path / "out"), "--json", *extra)
    assert r.returncode == 0, r.stderr
    assert printed_summary(r).sampler == sampler


@pytest.mark.tracked  # the MLflow observer on a Pareto study's trials
def test_multi_objective_pareto_study(tmp_path):
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "5", "--objective", "multi",
              "--sampler", "nsga2", "--seed", "4", "--out", str(tmp_path / "o"), "--json", plots=True)
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.objective == "multi" and summary.pareto
    plots = {p.name for p in (tmp_path / "o" / "plots").iterdir()}
    assert {"pareto_front.png", "optimization_history.png", "plots.html"} <= plots, plots
    assert ": Pareto front" in (tmp_path / "o" / "plots" / "plots.html").read_text()
    for row in summary.pareto:
        assert {"ops_per_sec", "p99_us", "write_amp"} <= set(row.metrics or {})


def test_budgets_are_constraints_not_penalties(tmp_path):
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "3", "--seed", "1",
              "--max-p99-us", "0.001", "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.best is not None and summary.best.feasible is False
    trials = summary.optuna_study().trials
    # the score is the raw throughput; the budget lives in the constraint values
    for t in (t for t in trials if t.state == optuna.trial.TrialState.COMPLETE):
        assert t.values[0] == TrialRecord.of(t).metric("ops_per_sec")
        assert TrialRecord.of(t).constraints[0] == pytest.approx(TrialRecord.of(t).metric("p99_us") - 0.001)


def test_hand_found_baseline_is_measured_and_compared(tmp_path):
    r = tuner("tune", "--workload", "S2", "--scale", "0.05", "--trials", "1", "--seed", "1",
              "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    names = [b.name for b in summary.baselines]
    assert names == ["rocksdb-default", "hand-found:S2"]
    hand = summary.baselines[1]
    assert hand.params["max_write_buffer_number"] == 4 and hand.metrics["ops_per_sec"] > 0
    assert [row.name for row in summary.comparison][:2] == names


def test_python_api(tmp_path):
    from tuner import tune
    from tuner.observers import SilentProgress

    result = tune(workload="fillrandom", scale=TINY, trials=3, sampler="random", seed=9, out=tmp_path / "api",
                  progress=SilentProgress(), revalidate=0, drain=False)
    assert result.best_metrics["ops_per_sec"] > 0 and set(result.best_params) >= {"subcompactions", "cache_size"}
    assert len([t for t in result.trials if t.outcome == "complete"]) == 3
    assert (tmp_path / "api" / "summary.json").exists()


def _start_and_signal(args: list[str], sig: int) -> subprocess.Popen:
    """Start `tune`, wait until trial 0 finished and the next trial's db_bench runs, then send ``sig``.
    (A fixed delay could land between trials, e.g. while MLflow logs trial 0 on a slow machine.)"""
    work = Path(args[args.index("--work-dir") + 1])
    proc = subprocess.Popen([*TUNER, *fast(args)], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    signal_once_running(proc, proc.stderr, "trial 0:", work, sig, settle=0.3)
    return proc


def signal_once_running(proc: subprocess.Popen, lines: Iterable[str], marker: str, work: Path, sig: int,
                        settle: float) -> None:
    """Read ``lines`` (the process's output) up to one that starts with ``marker``, wait until a db_bench
    runs in ``work`` (at most 60 s) and ``settle`` seconds more, then send ``sig`` to ``proc``."""
    for line in lines:
        if line.startswith(marker):
            deadline = time.monotonic() + 60
            while not _db_bench_running(work) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(settle)
            proc.send_signal(sig)
            return


def _db_bench_running(work: Path) -> bool:
    return subprocess.run(["pgrep", "-f", "--", f"--db={work}"], capture_output=True).returncode == 0


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_keeps_finished_trials_and_resume_completes(tmp_path, sig, code):
    out, work = tmp_path / "out", tmp_path / "work"
    work.mkdir()
    args = ["tune", "--workload", "fillrandom", "--scale", "0.5", "--trials", "3", "--seed", "1",
            "--study", "interrupted", "--out", str(out), "--work-dir", str(work)]
    proc = _start_and_signal(args, sig)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode == code, rest
    assert "Resume with: rocksdb-tuner tune --study interrupted" in rest
    assert leftovers(work) == [] and not _db_bench_running(work)
    resumed = tuner(*args)
    assert resumed.returncode == 0, resumed.stderr
    summary = summary_of(out)
    assert summary.trials.complete == 3 and summary.trials.interrupted == 1
    assert leftovers(work) == []


def test_sigkill_takes_db_bench_down_and_the_next_run_cleans_up(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    work.mkdir()
    args = ["tune", "--workload", "fillrandom", "--scale", "0.5", "--trials", "3", "--seed", "1",
            "--study", "killed", "--out", str(out), "--work-dir", str(work)]
    proc = _start_and_signal(args, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    time.sleep(0.5)
    assert not _db_bench_running(work)  # PR_SET_PDEATHSIG via setpriv
    assert len(leftovers(work)) == 1  # nothing could clean up after SIGKILL...
    resumed = tuner(*args)  # ...so the next run does, and marks the abandoned trial
    assert resumed.returncode == 0, resumed.stderr
    assert "removed 1 trial directories left by killed tuner runs" in resumed.stderr
    summary = summary_of(out)
    assert summary.trials.complete == 3 and summary.trials.interrupted == 1
    assert leftovers(work) == []


# -- bad input: one line, exit code 2, nothing created --------------------------------------------------------

def _bad(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "never"
    r = tuner("tune", "--out", str(out), *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    assert not out.exists()
    return r.stderr


def test_bad_sampler(tmp_path):
    assert "--sampler: unknown 'bayes'" in _bad(tmp_path, "--sampler", "bayes")


def test_bad_workload(tmp_path):
    assert "unknown workload 'nosuch'" in _bad(tmp_path, "--workload", "nosuch")


def test_unknown_parameter_field(tmp_path):
    space = tmp_path / "s.toml"
    space.write_text('[parameters.subcompactions]\ntype = "int"\nlow = 1\nhigh = 4\n'
                     'options_key = "DBOptions.max_subcompactions"\nstep_size = 2\n')
    assert "parameters.subcompactions: unknown field(s) step_size" in _bad(tmp_path, "--space", str(space))


def test_parameter_db_bench_does_not_know(tmp_path):
    space = tmp_path / "s.toml"
    space.write_text('[parameters.turbo]\ntype = "int"\nlow = 1\nhigh = 4\noptions_key = "DBOptions.turbo"\n')
    assert "does not support --turbo" in _bad(tmp_path, "--space", str(space))


def test_range_low_above_high(tmp_path):
    space = tmp_path / "s.yaml"
    space.write_text("parameters:\n"
                     "  bloom_bits: {type: int, low: 12, high: 2, options_key: TableOptions/BlockBasedTable.filter_policy}\n")
    assert "parameters.bloom_bits: empty range, low 12 > high 2" in _bad(tmp_path, "--space", str(space))


def test_infeasible_constraints(tmp_path):
    assert "no configuration satisfies" in _bad(tmp_path, "--memory-budget", "1MiB")


def test_db_bench_missing(tmp_path):
    assert "--db-bench: /nonexistent/db_bench is not an executable file" in _bad(
        tmp_path, "--db-bench", "/nonexistent/db_bench")
    env = {**os.environ, "PATH": "/nonexistent", "XDG_CACHE_HOME": str(tmp_path / "empty-cache")}
    env.pop("ROCKSDB_TUNER_DB_BENCH", None)
    r = subprocess.run([*TUNER, "tune", "--out", str(tmp_path / "x")], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "db_bench not found" in r.stderr and not (tmp_path / "x").exists()


def test_not_a_db_bench(tmp_path):
    assert "does not behave like db_bench" in _bad(tmp_path, "--db-bench", "/bin/true")


def test_zero_trials(tmp_path):
    assert "--trials: must be a whole number >= 1, got '0'" in _bad(tmp_path, "--trials", "0")


@pytest.mark.parametrize("flag, value", [("--trial-timeout", "-1"), ("--scale", "0"), ("--max-p99-us", "abc"),
                                         ("--memory-budget", "lots")])
def test_flags_out_of_range(tmp_path, flag, value):
    assert flag in _bad(tmp_path, flag, value)


# The input corpus of issue 9: each file or flag yields one line naming the field, exit 2, nothing created.
_WB = 'options_key = "CFOptions.write_buffer_size"\n'
BAD_FILES = [
    ("space", "s.toml", '[parameters.write_buffer_size]\ntype = "int"\nlow = "1 * GiB * 1024"\nhigh = "2 * GiB * 1024"\n' + _WB,
     "parameters.write_buffer_size: high 2,199,023,255,552 bytes is more than this host's RAM"),
    ("space", "s.toml", '[parameters.cache_size]\ntype = "int"\nlow = -5\nhigh = 100\n'
     'options_key = "TableOptions/BlockBasedTable.block_cache"\n', "parameters.cache_size: a size in bytes cannot be negative"),
    ("space", "s.toml", '[parameters.write_buffer_size]\ntype = "int"\nlow = "abc"\nhigh = 100\n' + _WB,
     "parameters.write_buffer_size: unknown name 'abc' in 'abc'"),
    ("space", "s.toml", '[parameters.write_buffer_size\ntype = "int"\n', "space file s.toml: not valid TOML"),
    ("space", "s.yaml", "parameters: [1, 2\n", "space file s.yaml: not valid YAML"),
    ("space", "s.toml", '[parameters.wal_dir]\ntype = "categorical"\nchoices = ["/tmp/x"]\noptions_key = "DBOptions.wal_dir"\n',
     "parameters.wal_dir.flag: --wal_dir is set by the tuner or names a path outside"),
    ("space", "s.toml", '[parameters.seed]\ntype = "int"\nlow = 1\nhigh = 4\noptions_key = "DBOptions.seed"\n',
     "parameters.seed.flag: --seed is set by the tuner"),
    ("workload", "w.toml", 'name = "w"\nsurprise = 1\n[[phases]]\nname = "load"\nbenchmarks = ["fillrandom"]\n',
     "unknown top-level field(s) surprise"),
    ("workload", "w.toml", 'name = "w"\n[[phases]]\nname = "load"\nbenchmarks = ["fillrandom"]\n'
     '[phases.flags]\nwal_dir = "/tmp/elsewhere"\n',
     "phases[0].flags.wal_dir: names a path outside the trial's DB directory"),
    ("workload", "w.toml", 'name = "w"\n[[phases]]\nname = "load"\nbenchmarks = ["fillrandom"]\n'
     '[phases.flags]\nflagfile = "/etc/passwd"\n',
     "phases[0].flags.flagfile: names a path outside"),
    ("workload", "w.toml", 'name = "w"\n[[phases]]\nname = "load"\nbenchmarks = ["fillrandom"]\n[phases.flags]\ndb = "/"\n',
     "phases[0].flags.db: set by the tuner itself"),
    ("workload", "w.toml", 'name = "w"\n[[phases]]\nname = "load"\nbenchmarks = ["fillrandom"]\n'
     '[phases.flags]\n"num; rm -rf ~" = 1\n',
     "phases[0].flags.num; rm -rf ~: not a db_bench flag name"),
]


@pytest.mark.parametrize("kind, name, text, message", BAD_FILES)
def test_bad_input_files(tmp_path, kind, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    assert message in _bad(tmp_path, f"--{kind}", name)  # relative: the test runs in tmp_path


def test_corrupt_study_storage(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "study.db").write_text("not a database, edited by hand\n")
    r = tuner("tune", "--out", str(out), "--study", "s")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"--out: cannot open the study storage sqlite:///{out / 'study.db'}: file is not a database" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["study.db"]


@pytest.mark.parametrize("args, message", [
    (("--work-dir", "/"), "--work-dir /: refusing /, a system or home directory"),
    (("--work-dir", str(Path.home())), "a system or home directory"),
    (("--work-dir", "/nonexistent/work"), "--work-dir /nonexistent/work: not an existing directory"),
])
def test_unsafe_work_dirs_are_refused(tmp_path, args, message):
    assert message in _bad(tmp_path, *args)


def test_a_non_empty_work_dir_not_ours_is_refused_and_left_alone(tmp_path):
    work = tmp_path / "precious"
    work.mkdir()
    (work / "data.txt").write_text("keep me")
    (work / "rocksdb-tuner-lookalike").mkdir()
    assert "not empty and not a rocksdb-tuner work directory" in _bad(tmp_path, "--work-dir", str(work))
    assert sorted(p.name for p in work.iterdir()) == ["data.txt", "rocksdb-tuner-lookalike"]


def test_shell_metacharacters_are_only_ever_literal(tmp_path):
    """Names, paths and flag values with shell syntax reach db_bench as plain argv strings."""
    pwned = tmp_path / "pwned"
    out = tmp_path / f"out $(touch {pwned}); `touch {pwned}`"
    workload = tmp_path / "w.toml"
    workload.write_text('name = "w"\n[[phases]]\nname = "load"\nbenchmarks = ["fillrandom"]\nscored = true\n'
                        f'[phases.flags]\nnum = "2000; touch {pwned}"\n')
    r = tuner("tune", "--workload", str(workload), "--study", f"s; touch {pwned}", "--out", str(out), "--trials", "1",
              "--no-baselines", "--space", "default", "--json")
    assert r.returncode == 1, r.stderr  # no trial can complete: db_bench rejects the literal value
    assert not pwned.exists()
    summary = printed_summary(r)
    assert summary.study == f"s; touch {pwned}"
    assert f"illegal value '2000; touch {pwned}'" in summary.failures[0].reason


def test_unwritable_out(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = tuner("tune", "--out", str(blocker / "sub"))
    assert r.returncode == 2 and r.stderr.startswith("rocksdb-tuner: error: --out: cannot write to")
    r = tuner("tune", "--out", str(blocker))
    assert r.returncode == 2 and "--out: " in r.stderr and "is not a directory" in r.stderr


def test_doctor_workloads_spaces():
    doctor = tuner("doctor")
    assert doctor.returncode == 0
    for word in ("db_bench:", "version:", "build:", "cores:", "memory:", "free disk:"):
        assert word in doctor.stdout
    workloads = tuner("workloads")
    assert workloads.returncode == 0 and "ycsb-a" in workloads.stdout and "S4" in workloads.stdout
    spaces = tuner("spaces", "show", "default", "--workload", "S1")
    assert spaces.returncode == 0 and "CFOptions.compression_opts.level" in spaces.stdout


def _trio_space(tmp_path: Path) -> Path:
    space = tmp_path / "trio.toml"
    space.write_text(
        '[parameters.max_write_buffer_number]\ntype = "int"\nlow = 2\nhigh = 3\n'
        'options_key = "CFOptions.max_write_buffer_number"\n'
        '[parameters.min_write_buffer_number_to_merge]\ntype = "int"\nlow = 1\nhigh = 3\n'
        'options_key = "CFOptions.min_write_buffer_number_to_merge"\n'
        '[[constraints]]\nname = "merge_below_max"\nexpr = "min_write_buffer_number_to_merge < max_write_buffer_number"\n'
    )
    return space


def test_grid_runs_each_feasible_point_once(tmp_path):
    """A 2 x 3 grid where 3 points break merge < max: those are rejected, the 3 others run, then it stops."""
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(_trio_space(tmp_path)),
              "--sampler", "grid", "--trials", "10", "--seed", "3", "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.trials.complete == 3 and summary.trials.rejected <= 3
    study = summary.optuna_study()
    points = {(t.params["max_write_buffer_number"], t.params["min_write_buffer_number_to_merge"])
              for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE}
    assert points == {(2, 1), (3, 1), (3, 2)}


def test_infeasible_proposals_are_repaired_not_run(tmp_path):
    """Random proposals with merge >= max are rejected; their nearest feasible neighbours run instead."""
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(_trio_space(tmp_path)),
              "--sampler", "random", "--trials", "6", "--seed", "3", "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.trials.rejected >= 1 and "not run, breaks merge_below_max" in r.stderr
    study = summary.optuna_study()
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert all(t.params["min_write_buffer_number_to_merge"] < t.params["max_write_buffer_number"] for t in complete)
    assert any(TrialRecord.of(t).repaired_from is not None for t in complete)


def test_failed_trials_are_recorded_and_the_study_goes_on(tmp_path):
    """A choice db_bench rejects at run time makes those trials FAILED with db_bench's own reason."""
    space = tmp_path / "s.toml"
    space.write_text('[parameters.compression_type]\ntype = "categorical"\nchoices = ["snappy", "bogus"]\n'
                     'options_key = "CFOptions.compression"\n')
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(space), "--sampler", "grid",
              "--trials", "2", "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    summary = printed_summary(r)
    assert summary.trials.complete == 1 and summary.trials.failed == 1
    assert summary.failures[0].reason == "phase load: db_bench exit code 1: Cannot parse compression type 'bogus'"
    assert summary.best is not None and summary.best.params == {"compression_type": "snappy"}
    assert "FAILED: phase load: db_bench exit code 1" in r.stderr


def test_every_trial_timing_out_ends_with_exit_1(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    r = tuner("tune", "--workload", "fillrandom", "--trials", "2", "--trial-timeout", "0.2", "--out",
              str(tmp_path / "o"), "--work-dir", str(work), "--json")
    assert r.returncode == 1, r.stderr
    summary = printed_summary(r)
    assert summary.best is None and summary.trials.failed == 2
    assert all("timeout, killed after the trial's 0.2 s limit" in f.reason for f in summary.failures)
    assert summary.baselines[0].state == "FAIL"
    assert not (tmp_path / "o" / "OPTIONS.ini").exists()
    assert leftovers(work) == []


def test_storage_url(tmp_path):
    storage = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "2", "--study", "s1",
              "--storage", storage, "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    assert printed_summary(r).storage == storage
    assert not (tmp_path / "o" / "study.db").exists()
    assert len(optuna.load_study(study_name="s1", storage=storage).trials) >= 2


def test_resume_refuses_another_db_bench_build(tmp_path):
    """A resumed study is measured by a build of the same identity (db_bench's version and assertions), as
    the study stored it (``build``), or as a study an earlier version began stored it (``db_bench``)."""
    out = tmp_path / "out"
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "1", "--study", "s",
            "--out", str(out)]
    assert tuner(*args).returncode == 0
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{out / 'study.db'}")
    recorded, before = study.user_attrs["build"], len(study.trials)
    flipped = {**recorded["details"], "assertions": not recorded["details"]["assertions"]}
    study.set_user_attr("build", {**recorded, "identity": {**recorded["identity"], "assertions": flipped["assertions"]}})
    r = tuner(*args[:-4], "--trials", "2", "--study", "s", "--out", str(out))
    assert r.returncode == 2 and "measurements would not compare" in r.stderr
    study.set_user_attr("build", None)  # as an earlier version stored it
    study.set_user_attr("db_bench", flipped)
    r = tuner(*args[:-4], "--trials", "2", "--study", "s", "--out", str(out))
    assert r.returncode == 2 and "measurements would not compare" in r.stderr
    assert len(optuna.load_study(study_name="s", storage=f"sqlite:///{out / 'study.db'}").trials) == before
    study.set_user_attr("db_bench", recorded["details"])  # its own build: the study resumes
    r = tuner(*args[:-4], "--trials", "2", "--study", "s", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert len(optuna.load_study(study_name="s", storage=f"sqlite:///{out / 'study.db'}").trials) > before


def test_an_interrupted_grid_point_runs_again_on_resume(tmp_path):
    space = tmp_path / "grid.toml"
    space.write_text('[parameters.subcompactions]\ntype = "int"\nlow = 1\nhigh = 3\n'
                     'options_key = "DBOptions.max_subcompactions"\n')
    out, work = tmp_path / "out", tmp_path / "work"
    work.mkdir()
    args = ["tune", "--workload", "fillrandom", "--scale", "0.5", "--space", str(space), "--sampler", "grid",
            "--trials", "3", "--seed", "1", "--study", "grid", "--out", str(out), "--work-dir", str(work)]
    proc = _start_and_signal(args, signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    resumed = tuner(*args)
    assert resumed.returncode == 0, resumed.stderr
    trials = optuna.load_study(study_name="grid", storage=f"sqlite:///{out / 'study.db'}").trials
    done = sorted(t.params["subcompactions"] for t in trials if TrialRecord.of(t).outcome == "complete")
    assert done == [1, 2, 3]  # every grid point measured once, the interrupted one included
