"""MLflow tracking of real studies, read back with MLflow's own client (issue 4)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import optuna
import pytest
from mlflow import MlflowClient
from mlflow.entities import Run

from tests.conftest import TINY, printed_summary, summary_of
from tests.test_cli import TUNER, _start_and_signal, tuner
from tuner.trials import TrialRecord

pytestmark = [pytest.mark.dbbench, pytest.mark.tracked]
TUNED = {"subcompactions", "max_background_jobs", "write_buffer_size", "max_write_buffer_number",
         "min_write_buffer_number_to_merge", "cache_size", "bloom_bits", "compression_type"}


def _runs(client: MlflowClient, experiment: str) -> tuple[Run, list[Run]]:
    """(parent run, nested runs) of the only study in an experiment."""
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, experiment
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    (parent,) = [r for r in runs if r.data.tags.get("role") == "study"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == len(runs) - 1
    return parent, children


def _key(run: Run) -> str:
    """A run's name without the figure trial runs carry or the answer's mark (``trial-0003 212k ops/s``,
    ``answer: trial-0003 212k ops/s (not re-validated)`` -> ``trial-0003``)."""
    return run.info.run_name.removeprefix("answer: ").split(" ")[0]


def _artifacts(client: MlflowClient, run_id: str, path: str | None = None) -> set[str]:
    return {a.path for a in client.list_artifacts(run_id, path)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _study_trials(out: Path, name: str) -> list[optuna.trial.FrozenTrial]:
    return optuna.load_study(study_name=name, storage=f"sqlite:///{out / 'study.db'}").trials


def test_default_store_parent_nested_runs_artifacts_and_resume(tmp_path, monkeypatch, db_bench):
    """`tune --trials 4` on the default store: one parent, trials + baselines nested, each complete."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    args = ["tune", "--workload", "S2", "--scale", "0.05", "--sampler", "random", "--seed", "4",
            "--study", "tracked", "--out", "out", "--trials", "4"]
    r = tuner(*args, cwd=tmp_path, plots=True)
    assert r.returncode == 0, r.stderr
    store = tmp_path / "mlruns" / "mlflow.db"
    assert store.is_file()
    client = MlflowClient(f"sqlite:///{store}")
    parent, children = _runs(client, "S2")
    assert parent.info.run_name == "tracked" and parent.info.status == "FINISHED"
    assert parent.data.params["db_bench.version"] == db_bench.version and parent.data.params["workload"] == "S2"
    assert {"host.cores", "host.ram_bytes", "host.disk_bytes", "space.write_buffer_size"} <= set(parent.data.params)
    assert parent.data.tags["sampler"] == "random" and parent.data.tags["seed"] == "4"
    summary = summary_of(tmp_path / "out")
    assert summary.mlflow is not None and summary.best is not None
    assert summary.mlflow.run_id == parent.info.run_id
    assert parent.data.metrics["best.ops_per_sec"] == summary.best.metrics["ops_per_sec"]
    assert parent.data.tags["best_trial"] == str(summary.best.trial)
    assert {"summary.json", "OPTIONS.ini", "comparison.md", "plots"} <= _artifacts(client, parent.info.run_id)
    plots = _artifacts(client, parent.info.run_id, "plots")
    assert {"plots/optimization_history.png", "plots/param_importances.png", "plots/plots.html"} <= plots
    comparison = Path(client.download_artifacts(parent.info.run_id, "comparison.md", str(tmp_path))).read_text()
    assert "| rocksdb-default |" in comparison and "| hand-found:S2 |" in comparison

    baselines = {r.data.tags["baseline"]: r for r in children if r.data.tags["role"] == "baseline"}
    every = sorted((r for r in children if r.data.tags["role"] == "trial"), key=_key)
    study_trials = _study_trials(tmp_path / "out", "tracked")
    assert set(baselines) == {"rocksdb-default", "hand-found:S2"}
    # one run per trial, a rejected proposal's too; 4 measured
    assert [_key(r) for r in every] == [f"trial-{t.number:04d}" for t in study_trials]
    trials = [r for r in every if r.data.tags["outcome"] == "complete"]
    measured = [t for t in study_trials if TrialRecord.of(t).outcome == "complete"]
    assert len(trials) == len(measured) == 4
    # without a re-validation the answer is the search's best trial: marked, and ranked first
    (answer,) = [r for r in children if r.data.tags.get("answer") == "true"]
    assert answer.data.tags["trial_number"] == str(summary.best.trial) and answer.data.metrics["rank"] == 1
    assert not [k for k in answer.data.metrics if k.startswith("answer.")]  # no re-validated gain to show
    for r in trials:
        name = f"{_key(r)} {r.data.metrics['ops_per_sec'] / 1000:,.0f}k ops/s"
        assert r.info.run_name == (f"answer: {name} (not re-validated)" if r is answer else name)
    assert sorted(r.data.metrics["rank"] for r in trials) == [1, 2, 3, 4]
    assert baselines["hand-found:S2"].data.params["max_write_buffer_number"] == "4"
    for run in [*baselines.values(), *trials]:
        assert run.info.status == "FINISHED" and run.data.tags["state"] == "COMPLETE"
        assert run.data.metrics["ops_per_sec"] > 0
        for key in ("p50_us", "p95_us", "p99_us", "p99_9_us", "write_amp", "stall_micros", "compaction_micros",
                    "db_size_bytes", "peak_rss_bytes", "wall_seconds", "cpu_seconds", "micros_per_op"):
            assert key in run.data.metrics, (run.info.run_name, key)
        logs = _artifacts(client, run.info.run_id, "db_bench")
        phases = {Path(p).stem for p in logs if p.endswith(".command")}
        assert phases and "db_bench/OPTIONS" in logs
        assert {f"db_bench/{p}.{ext}" for p in phases for ext in ("command", "stdout", "stderr")} <= logs
    for run, trial in zip(trials, measured):
        assert TUNED <= set(run.data.params)
        assert {k: str(v) for k, v in trial.params.items()} == run.data.params
        assert run.data.metrics["objective"] == trial.values[0]
        assert run.data.tags["trial_number"] == str(trial.number)

    # Resuming continues the same parent run and logs only the new trials.
    r = tuner(*[a if a != "4" else "6" for a in args], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    again, children = _runs(client, "S2")
    assert again.info.run_id == parent.info.run_id and again.info.status == "FINISHED"
    names = sorted(_key(r) for r in children if r.data.tags["role"] == "trial")
    assert names == [f"trial-{t.number:04d}" for t in _study_trials(tmp_path / "out", "tracked")]
    assert sum(r.data.tags["outcome"] == "complete" for r in children if r.data.tags["role"] == "trial") == 6
    assert again.data.tags["trials_requested"] == "6"
    (answer,) = [r for r in children if r.data.tags.get("answer") == "true"]
    best = summary_of(tmp_path / "out").best
    assert best is not None and answer.data.tags["trial_number"] == str(best.trial)


def test_the_kept_defaults_are_marked_as_the_answer_once(tmp_path):
    """When nothing beats the defaults (a space of memtables 500 times too small: every trial about half
    as fast), rocksdb-default's run is the answer: tagged, named, ranked 1, with the re-validated ratio
    and interval. Finishing again changes nothing; a run an earlier finish marked is logged afresh."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    (tmp_path / "slow.toml").write_text('[parameters.write_buffer_size]\ntype = "int"\nlow = 65536\nhigh = 131072\n')
    args = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(tmp_path / "slow.toml"),
            "--trials", "2", "--seed", "1", "--no-starts", "--study", "kept", "--out", "o", "--mlflow-uri", uri,
            "--revalidate", "1", "--revalidate-rounds", "2", "--revalidate-max-rounds", "2", "--no-ablation", "--any-cost"]
    r = tuner(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.answer is not None and summary.revalidation is not None
    assert summary.answer.recommend == "reference" and summary.answer.name == "rocksdb-default"
    gain, best = summary.revalidation.best_vs_reference, summary.revalidation.best
    assert gain is not None and gain.ci95 is not None
    client = MlflowClient(uri)
    _, children = _runs(client, "fillrandom")
    (answer,) = [r for r in children if r.data.tags.get("answer") == "true"]
    assert answer.data.tags["baseline"] == "rocksdb-default" and answer.data.metrics["rank"] == 1
    assert answer.info.run_name == (f"answer: keep rocksdb-default ({best} {gain.ratio:.2f}x, 95 % CI "
                                    f"{gain.ci95[0]:.2f}-{gain.ci95[1]:.2f}: {gain.verdict})")
    assert answer.data.metrics["answer.ratio"] == gain.ratio < 1
    assert (answer.data.metrics["answer.ci95_low"], answer.data.metrics["answer.ci95_high"]) == tuple(gain.ci95)
    assert answer.data.metrics["answer.rounds"] == gain.n == 2
    assert answer.data.tags["answer.verdict"] == gain.verdict
    assert answer.data.tags["answer.ratio_of"] == f"{best} / rocksdb-default"
    assert answer.data.tags["answer.why"] == summary.answer.why
    ranked = sorted((r for r in children if "rank" in r.data.metrics), key=lambda r: r.data.metrics["rank"])
    assert [r.data.metrics["rank"] for r in ranked] == [1, 2, 3] and ranked[0].info.run_id == answer.info.run_id
    assert sorted(_key(r) for r in ranked[1:]) == ["trial-0000", "trial-0001"]
    assert [r.data.metrics["ops_per_sec"] for r in ranked[1:]] == sorted((r.data.metrics["ops_per_sec"]
                                                                          for r in ranked[1:]), reverse=True)

    r = tuner(*args, cwd=tmp_path)  # finished again: the same runs, marked and ranked once
    assert r.returncode == 0, r.stderr
    _, again = _runs(client, "fillrandom")
    assert {x.info.run_id: x.info.run_name for x in again} == {x.info.run_id: x.info.run_name for x in children}
    assert all(len(client.get_metric_history(x.info.run_id, "rank")) == 1 for x in ranked)
    assert len(client.get_metric_history(answer.info.run_id, "answer.ratio")) == 1

    marked = next(x for x in children if _key(x) == "trial-0001")  # as if an earlier finish had chosen it
    client.set_tag(marked.info.run_id, "answer", "true")
    client.update_run(marked.info.run_id, name="answer: trial-0001")
    r = tuner(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _, again = _runs(client, "fillrandom")
    assert len(again) == len(children) and marked.info.run_id not in {x.info.run_id for x in again}
    relogged = next(x for x in again if _key(x) == "trial-0001")
    assert "answer" not in relogged.data.tags and relogged.info.run_name == marked.info.run_name
    assert relogged.data.metrics["rank"] in (2, 3)
    assert [x.info.run_id for x in again if x.data.tags.get("answer") == "true"] == [answer.info.run_id]


def test_failed_trials_interval_series_and_no_mlflow(tmp_path):
    """A FAILED trial carries db_bench's reason; a long enough phase logs throughput per second."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    space = tmp_path / "s.toml"
    space.write_text('[parameters.compression_type]\ntype = "categorical"\nchoices = ["snappy", "bogus"]\n'
                     'options_key = "CFOptions.compression"\n')
    r = tuner("tune", "--workload", "fillrandom", "--scale", "0.6", "--space", str(space), "--sampler", "grid",
              "--trials", "2", "--out", "o", "--mlflow-uri", uri, "--experiment", "failures", "--no-plots")
    assert r.returncode == 0, r.stderr
    client = MlflowClient(uri)
    parent, children = _runs(client, "failures")
    by_state = {r.data.tags["state"]: r for r in children if r.data.tags["role"] == "trial"}
    failed = by_state["FAILED"]
    assert failed.info.status == "FAILED" and failed.data.params == {"compression_type": "bogus"}
    assert failed.data.tags["fail_reason"] == "phase load: db_bench exit code 1: Cannot parse compression type 'bogus'"
    assert "db_bench/load.stderr" in _artifacts(client, failed.info.run_id, "db_bench")
    series = client.get_metric_history(by_state["COMPLETE"].info.run_id, "load/interval_ops_per_sec")
    assert len(series) >= 1 and all(m.value > 0 for m in series)
    assert [m.step for m in series] == list(range(1, len(series) + 1))
    assert "plots" not in _artifacts(client, parent.info.run_id)

    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "1", "--out", "quiet",
              "--no-mlflow", "--mlflow-uri", f"sqlite:///{tmp_path / 'never.db'}")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "never.db").exists() and not (tmp_path / "mlruns").exists()
    assert summary_of(tmp_path / "quiet").mlflow is None


def test_resume_logs_what_a_killed_run_left_unlogged_exactly_once(tmp_path):
    """Trials finished without tracking, or whose logging was cut short, are logged on resume, once."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    base = ["tune", "--workload", "fillrandom", "--scale", str(TINY), "--seed", "3", "--study", "gaps", "--out", "o",
            "--no-plots"]
    assert tuner(*base, "--trials", "1", "--no-mlflow").returncode == 0
    assert tuner(*base, "--trials", "2", "--mlflow-uri", uri).returncode == 0
    client = MlflowClient(uri)
    _, children = _runs(client, "fillrandom")
    assert sorted(_key(r) for r in children) == ["rocksdb-default", "trial-0000", "trial-0001"]
    cut = next(r for r in children if _key(r) == "trial-0001")
    client.update_run(cut.info.run_id, status="RUNNING")  # as if the tuner died while logging it
    r = tuner(*base, "--trials", "3", "--mlflow-uri", uri)
    assert r.returncode == 0, r.stderr
    parent, children = _runs(client, "fillrandom")
    assert sorted(_key(r) for r in children) == ["rocksdb-default", "trial-0000", "trial-0001", "trial-0002"]
    assert all(r.info.status == "FINISHED" for r in children)
    assert cut.info.run_id not in {r.info.run_id for r in children}


@pytest.mark.parametrize("sig, status", [(signal.SIGKILL, "RUNNING"), (signal.SIGINT, "KILLED")])
def test_killed_then_resumed_optuna_and_mlflow_agree(tmp_path, sig, status):
    """SIGKILL leaves the parent RUNNING (nobody could close it), Ctrl-C marks it KILLED; after the
    resume every Optuna trial has exactly one run with the same outcome, values or reason."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    work = tmp_path / "work"
    work.mkdir()
    args = ["tune", "--workload", "fillrandom", "--scale", "0.5", "--trials", "3", "--seed", "1", "--study", "k",
            "--out", str(tmp_path / "o"), "--mlflow-uri", uri, "--no-plots", "--work-dir", str(work)]
    proc = _start_and_signal(args, sig)
    proc.communicate(timeout=60)
    client = MlflowClient(uri)
    parent, _ = _runs(client, "fillrandom")
    assert parent.info.status == status
    assert tuner(*args).returncode == 0
    parent, children = _runs(client, "fillrandom")
    assert parent.info.status == "FINISHED"
    trials = {r.data.tags["trial_number"]: r for r in children if r.data.tags["role"] == "trial"}
    study = _study_trials(tmp_path / "o", "k")
    assert sorted(trials, key=int) == [str(t.number) for t in study]
    for t in study:
        run = trials[str(t.number)]
        assert run.data.tags["outcome"] == TrialRecord.of(t).outcome
        expected = {"complete": "FINISHED", "interrupted": "KILLED"}.get(TrialRecord.of(t).outcome, "FAILED")
        assert run.info.status == expected
        if t.values:
            assert run.data.metrics["objective"] == t.values[0]
        else:
            assert run.data.tags["fail_reason"] == TrialRecord.of(t).fail_reason
    assert sum(TrialRecord.of(t).outcome == "interrupted" for t in study) == 1


@pytest.fixture
def mlflow_server(tmp_path):
    """A real `mlflow server` on loopback that proxies artifacts (so clients need no shared disk)."""
    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
         "--artifacts-destination", str(tmp_path / "server-artifacts"), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.5)
    yield url, tmp_path / "server-artifacts"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    log.close()


def test_end_to_end_against_a_real_mlflow_server(tmp_path, mlflow_server):
    url, artifact_root = mlflow_server
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "3", "--seed", "5",
              "--study", "remote", "--out", "o", "--mlflow-uri", url, "--json", plots=True)
    assert r.returncode == 0, r.stderr
    tracking = printed_summary(r).mlflow  # stdout is the summary and nothing else
    assert tracking is not None and tracking.uri == url
    client = MlflowClient(url)
    parent, children = _runs(client, "fillrandom")
    assert parent.info.status == "FINISHED" and parent.info.run_name == "remote"
    assert sorted(_key(r) for r in children) == ["rocksdb-default", "trial-0000", "trial-0001", "trial-0002"]
    trial = next(r for r in children if _key(r) == "trial-0002")
    assert TUNED <= set(trial.data.params) and trial.data.metrics["ops_per_sec"] > 0
    stdout = Path(client.download_artifacts(trial.info.run_id, "db_bench/load.stdout", str(tmp_path)))
    assert "fillrandom   :" in stdout.read_text()
    assert any(artifact_root.rglob("load.stdout"))  # uploaded through the server, not written by the client
    assert "plots/plots.html" in _artifacts(client, parent.info.run_id, "plots")


@pytest.mark.parametrize("flag, value, message", [
    ("--mlflow-uri", "http://127.0.0.1:{port}", "--mlflow-uri: cannot reach MLflow server http://127.0.0.1:"),
    ("--mlflow-uri", "file:///tmp/x", "--mlflow-uri: 'file:///tmp/x': use sqlite:///PATH or http(s)://HOST:PORT"),
    ("MLFLOW_TRACKING_URI", "mlruns", "MLFLOW_TRACKING_URI: 'mlruns': use sqlite:///PATH"),
])
def test_bad_tracking_uri_is_one_clear_error(tmp_path, monkeypatch, flag, value, message):
    value = value.format(port=_free_port())
    extra: list[str] = []
    if flag.startswith("--"):
        extra = [flag, value]
    else:
        monkeypatch.setenv(flag, value)
    started = time.monotonic()
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--out", "never", *extra)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "never").exists()
    assert time.monotonic() - started < 30


def _chromium_dom(url: str, width: int = 1600) -> str:
    """The page as headless Chromium renders it, in a fresh profile (as a new user's browser: the
    GenAI / model-training choice MLflow keeps in the browser is not set)."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={profile}", f"--window-size={width},1000", "--virtual-time-budget=30000",
                            "--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


class _Grid(HTMLParser):
    """MLflow's runs table (ag-grid) in a dumped DOM: row id -> (row index, cell text by column id),
    and the column ids of the header."""

    VOID = {"input", "img", "br", "hr", "meta", "link", "source", "path", "rect", "circle", "use", "col"}

    def __init__(self, dom: str):
        super().__init__()
        self.rows: dict[str, tuple[int, dict[str, str]]] = {}
        self.headers: list[str] = []
        self.widths: dict[str, int] = {}  # column id -> its cells' width in pixels
        self.stack: list[tuple[str, str | None, str | None]] = []
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if a.get("role") == "columnheader" and a.get("col-id"):
            self.headers.append(a["col-id"])
        row = a.get("row-id") if "row-index" in a else None
        if row and row not in self.rows:
            self.rows[row] = (int(a["row-index"]), {})
        col = a.get("col-id") if a.get("role") == "gridcell" else None
        width = re.search(r"width: (\d+)px", a.get("style") or "")
        if col and width:
            self.widths[col] = int(width.group(1))
        if tag not in self.VOID:
            self.stack.append((tag, row, col))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID or tag not in (t for t, _, _ in self.stack):  # an SVG's </path>: never pushed
            return
        while self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        row = next((r for _, r, _ in reversed(self.stack) if r), None)
        col = next((c for _, _, c in reversed(self.stack) if c), None)
        if row and col and data.strip():
            cells = self.rows[row][1]
            cells[col] = cells.get(col, "") + data.strip()


def _ui_lines(ui: subprocess.Popen, until: str) -> list[str]:
    lines: list[str] = []
    assert ui.stdout is not None
    while True:
        line = ui.stdout.readline()
        assert line, f"ui ended early: {lines}"
        lines.append(line.rstrip("\n"))
        if until in line:
            return lines


def test_ui_opens_on_the_studys_answer_then_its_trials_in_headless_chromium(tmp_path, monkeypatch):
    """The address `ui` prints lands on the runs table in model-training mode (not the GenAI
    overview), with this study's answer in the first row, marked (its name, its re-validated ratio),
    then its measured trials best ops/s first, and the score, P99, write amp and tuned parameters as
    columns. SIGTERM stops the server with all its workers."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    r = tuner("ui", "--port", str(_free_port()), cwd=tmp_path)
    assert r.returncode == 2 and "no MLflow store at" in r.stderr and "rocksdb-tuner tune" in r.stderr
    r = tuner("tune", "--workload", "fillrandom", "--scale", str(TINY), "--trials", "3", "--seed", "6",
              "--study", "shown-in-ui", "--out", "o", "--no-plots", "--revalidate", "2", "--revalidate-rounds", "2",
              "--revalidate-max-rounds", "2", "--no-ablation", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = summary_of(tmp_path / "o")
    assert summary.answer is not None and summary.revalidation is not None
    gain = summary.revalidation.best_vs_reference
    assert gain is not None
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    parent, children = _runs(client, "fillrandom")
    trials = {t.info.run_id: t for t in children if t.data.tags["role"] == "trial"}
    assert len(trials) == 3 and all(t.data.tags["outcome"] == "complete" for t in trials.values())
    (answer,) = [t for t in children if t.data.tags.get("answer") == "true"]
    kept = summary.answer.recommend == "reference"  # the defaults, or the re-validated best trial
    assert answer.data.tags.get("baseline" if kept else "trial_number") == \
        ("rocksdb-default" if kept else str(summary.revalidation.best_trial))
    assert {"baseline.rocksdb-default.ops_per_sec", "best.ops_per_sec"} <= set(parent.data.metrics)
    port = _free_port()
    ui = subprocess.Popen([*TUNER, "ui", "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    try:
        lines = _ui_lines(ui, "every trial of experiment fillrandom")
        assert f"http://127.0.0.1:{port}" in lines[0], lines
        (link,) = [line[line.index("http"):] for line in lines
                   if f"shown-in-ui (experiment fillrandom): its {answer.info.run_name}, then its trials" in line]
        assert "workflowType=machine_learning" in link and "viewStateShareKey=study-" in link
        grid = _Grid("")
        for _ in range(3):  # the first page a fresh server renders can take longer than the time budget
            dom = _chromium_dom(link, width=3400)
            grid = _Grid(dom)
            if grid.rows:
                break
        assert re.search(r"<h2[^>]*>Runs</h2>", dom) and "Token Usage" not in dom and "Training runs" not in dom
        assert set(grid.rows) == {answer.info.run_id, *trials}, (sorted(grid.rows), sorted(trials))  # no parent
        rows = [(run_id, cells) for run_id, (_, cells) in sorted(grid.rows.items(), key=lambda r: r[1][0])]
        first, cells = rows[0]
        name = "attributes.`Run Name`"  # its cell begins with the run's colour: #e65b77answer: …
        assert first == answer.info.run_id and cells[name].endswith(answer.info.run_name), cells
        assert grid.widths[name] == 420 >= 5.5 * len(answer.info.run_name)  # the name in full (5.3 px a character)
        assert answer.info.run_name.startswith("answer: keep rocksdb-default (" if kept else "answer: trial-")
        assert float(cells["metrics.`answer.ratio`"]) == pytest.approx(gain.ratio, rel=1e-3)
        assert cells["tags.`answer.verdict`"] == gain.verdict
        ops_col = "metrics.`ops_per_sec`"
        shown = [float(cells[ops_col]) for _, cells in rows[1:]]
        rest = [t.data.metrics["ops_per_sec"] for run_id, t in trials.items() if run_id != answer.info.run_id]
        assert shown == sorted(rest, reverse=True) and all(v > 0 for v in shown)
        assert not any("answer" in cells[name] for _, cells in rows[1:])
        expected = {"metrics.`p99_us`", "metrics.`write_amp`", "params.`write_buffer_size`", "params.`bloom_bits`"}
        assert expected <= set(grid.headers), grid.headers
    finally:
        ui.send_signal(signal.SIGTERM)
        assert ui.wait(timeout=60) == 0
    left = subprocess.run(["pgrep", "-f", "--", f"--port {port}"], capture_output=True, text=True)
    assert left.returncode == 1, f"the MLflow server or a worker survived SIGTERM: {left.stdout}"
