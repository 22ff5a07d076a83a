"""tune --serve-rate: after the re-validation, the answer and rocksdb-default served open loop at a rate
(tuner.engine._served), what a service at that rate would see of a throughput study's answer."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import leftovers
from tests.test_open_loop import _Store
from tuner.backends import BACKENDS, RunFailed
from tuner.backends._rate import driver_beside
from tuner.engine._prepare import check_backend
from tuner.engine._served import serve, serve_rate
from tuner.model import TuneConfig, UsageError
from tuner.outputs._answer import served_line
from tuner.summary import Revalidation, Summary


def _stage(tmp_path: Path, rounds: int, serve_at: float | str = 40_000.0, start: str | None = None,
           ops: float | None = None) -> SimpleNamespace:
    """What serve() reads of a study: rocksdb-default and trial 5 (the named ``start`` it ran as, if any),
    --serve-rate, its rounds and length, and the re-validation's median ops/s of the defaults (``ops``)."""
    revalidation = SimpleNamespace(serve_rate=serve_at, serve_rounds=rounds, serve_duration=60.0)
    best = SimpleNamespace(number=5, params={"x": 1}, user_attrs={"enqueued": start} if start else {})
    reval = Revalidation.from_dict({"configurations": [{"name": "rocksdb-default", "median_ops_per_sec": ops}]}) \
        if ops else None
    return SimpleNamespace(
        parts=SimpleNamespace(config=SimpleNamespace(revalidation=revalidation, search=SimpleNamespace(seed=1)),
                              out=tmp_path, space=SimpleNamespace(flags=lambda params: {"x": params["x"]})),
        snapshot=SimpleNamespace(baselines=[SimpleNamespace(name="rocksdb-default", flags={}, metrics={})],
                                 best=lambda: best, revalidation=reval),
        bus=SimpleNamespace(note=lambda line: None, study_stopped=lambda *a: None), store=_Store())


def test_served_rounds_pair_the_answers_tail_with_the_defaults_and_resume_where_they_stopped(tmp_path):
    """Synthetic runs with a known answer: the defaults' P99.99 is 10, 12 and 9 ms in rounds 1-3 (the
    host's drift), trial 5's 2.1, 1.92 and 2.11 times that: the paired ratio is their geometric mean with
    an interval above 1, and the line says the answer's tail is worse. A Ctrl-C in round 2 loses nothing
    measured: the resume runs only what is missing, each run logged in its own round's directory."""
    truth = {"rocksdb-default": [10_000.0, 12_000.0, 9_000.0], "trial 5": [21_000.0, 23_000.0, 19_000.0]}
    calls: list[tuple[str, str]] = []
    stop_at = [3]
    rates: list[tuple[float, float]] = []

    def at_rate(rate, duration):
        rates.append((rate, duration))

        def run(flags, log_dir):
            name = "trial 5" if flags else "rocksdb-default"
            if len(calls) == stop_at[0]:
                raise KeyboardInterrupt
            r = sum(1 for n, _ in calls if n == name)
            calls.append((name, f"{log_dir.parent.name}/{log_dir.name}"))
            return {"delivered": 1.0, "p99.9_us": 2_000.0, "p99.99_us": truth[name][r], "stall_micros": 0.0}
        return run

    study = _stage(tmp_path, 3)
    with pytest.raises(KeyboardInterrupt):
        serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    stop_at[0] = -1
    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    assert rates == [(40_000.0, 60.0)] * 2 and len(calls) == 6
    assert sorted(where for _, where in calls) == sorted(f"{n.replace(' ', '-')}/round-{r}" for n in truth
                                                         for r in (1, 2, 3))
    report = study.store.kept["served"]
    assert report.names == ["rocksdb-default", "trial 5"] and len(report.runs) == 6
    assert report.median("trial 5", "p99.99_us") == 21_000.0
    ratio = report.vs_default["p99.99_us"]
    expected = math.exp(statistics.fmean(math.log(a / b) for a, b in zip(truth["trial 5"], truth["rocksdb-default"])))
    assert ratio.n == 3 and ratio.ratio == pytest.approx(expected) and ratio.ci95[0] > 1
    assert report.vs_default["stall_micros"].verdict == "not measured"  # no stalls in either: no ratio
    line = served_line(Summary.from_dict({"served": report.to_dict()}))
    assert line is not None and line.startswith("served at 40,000 writes/s, open loop (--serve-rate 40000; 60 s runs")
    assert "rocksdb-default delivered 100.0%, P99.9 2.0 ms, P99.99 10.0 ms, stalls 0.00 s" in line
    assert "medians of 3 paired rounds" in line and line.endswith("its tail is WORSE than the defaults'")
    before = len(calls)
    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)  # all kept: nothing runs
    assert len(calls) == before and len(rates) == 2


def test_auto_serves_at_a_share_of_the_defaults_sustained_ops_and_a_failed_run_is_said(tmp_path):
    """--serve-rate auto: 0.7 x the defaults' median ops/s in the re-validation, to two digits; a run that
    fails is kept with its reason, the study goes on."""
    study = _stage(tmp_path, 1, serve_at="auto", ops=142_345.0)
    assert serve_rate("auto", study.snapshot) == (100_000.0, "--serve-rate auto: 0.7 x rocksdb-default's 142,345 ops/s")

    def at_rate(rate, duration):
        def run(flags, log_dir):
            if flags:
                raise RunFailed("phase run: killed by SIGKILL (out of memory)")
            return {"p99.99_us": 5_000.0}
        return run

    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    report = study.store.kept["served"]
    assert report.rate == 100_000.0 and report.vs_default == {}
    line = served_line(Summary.from_dict({"served": report.to_dict()})) or ""
    assert "trial 5 no figures (1 of 1 runs failed: phase run: killed by SIGKILL (out of memory))" in line
    assert "one run each" in line and "WORSE" not in line
    with pytest.raises(RunFailed, match="--serve-rate auto: rocksdb-default's ops/s was not measured"):
        serve_rate("auto", _stage(tmp_path, 1).snapshot)


def test_a_best_that_is_the_defaults_start_is_served_once(tmp_path):
    study = _stage(tmp_path, 1, start="rocksdb-default")
    served: list[dict] = []

    def at_rate(rate, duration):
        def run(flags, log_dir):
            served.append(flags)
            return {"p99.99_us": 5_000.0}
        return run

    serve(study.parts, study.store, study.bus, study.snapshot, at_rate)
    assert served == [{}] and study.store.kept["served"].names == ["rocksdb-default"]


@pytest.mark.parametrize(("changes", "error"), [
    ({"backend": "rate", "rate": 2000.0, "serve_rate": 1000.0},
     "--serve-rate: a study at --rate runs every configuration at its rate"),
    ({"backend": "command", "command": "true {options} {db}", "serve_rate": "auto"},
     "--serve-rate: the command backend runs nothing at a rate"),
    ({"serve_rounds": 3}, "--serve-rounds: goes with --serve-rate"),
    ({"serve_duration": 10.0}, "--serve-duration: goes with --serve-rate"),
    ({"serve_rate": -5.0}, "--serve-rate: writes per second (> 0) or auto, got -5.0"),
    ({"serve_rate": 1000.0, "serve_rounds": 0}, "--serve-rounds / --serve-duration: 1 or more rounds"),
])
def test_serve_rate_is_refused_in_one_line_where_it_cannot_run(changes, error):
    with pytest.raises(UsageError, match=error.replace("(", r"\(").replace(")", r"\)")):
        check_backend(TuneConfig(**changes))


def test_no_driver_beside_the_db_bench_names_the_flag_that_needs_it(tmp_path):
    with pytest.raises(UsageError, match="^--serve-rate: no open_loop beside "):
        driver_beside(str(tmp_path / "db_bench"), "--serve-rate")
    assert BACKENDS["db_bench"].serves and not BACKENDS["rate"].serves and not BACKENDS["command"].serves


@pytest.mark.release_build
def test_a_throughput_study_serves_its_answer_and_the_defaults_at_a_rate(tmp_path, work_dir):
    """A db_bench study with --serve-rate: after the search, rocksdb-default and the best run open loop
    at the rate on a DB of the target's data (the driver beside the release db_bench), logged per round;
    the summary, the closing line and the work directory say so."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--workload", "fillrandom", "--scale", "0.05",
                        "--trials", "2", "--no-starts", "--sampler", "random", "--seed", "3", "--revalidate", "0",
                        "--no-drain", "--serve-rate", "2000", "--serve-duration", "2s", "--serve-rounds", "1",
                        "--no-mlflow", "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    served = summary.served
    assert served is not None and served.rate == 2000 and served.duration == 2 and summary.best is not None
    assert served.names == ["rocksdb-default", f"trial {summary.best.trial}"]
    assert all(run.failed is None and run.metrics["p99.99_us"] > 0 and run.metrics["delivered"] > 0.5
               for run in served.runs)
    command = (out / "served" / f"trial-{summary.best.trial}" / "round-1" / "command.command").read_text()
    assert " run " in command and "--rate 2000" in command
    assert "served at 2,000 writes/s, open loop (--serve-rate 2000; 2 s runs" in r.stdout
    assert leftovers(work_dir) == []
