"""MLflow tracking of a study: one parent run per study, one nested run per trial and baseline.

The Optuna storage is the study's source of truth; MLflow mirrors it. After every trial the
tracker logs each finished trial or baseline that has no MLflow run yet, so a resumed study (even
after SIGKILL between a trial's end and its logging) fills in exactly what is missing and never
logs a trial twice. Each run is written with one ``log_batch`` per 1000 values plus its artifacts.

When the study finishes, its answer's run (a trial, or the baseline kept when nothing beat it) is
marked: tag ``answer = true``, a name starting ``answer:``, the re-validated gain as ``answer.*``
metrics and tags, and ``rank`` 1 (the measured trials rank 2, 3, … in the study's ranking), which
the study's saved view sorts by. Finishing again marks the same run the same way; a run that is no
longer the answer is logged afresh, without the marks.

Only the driver logs (pitfalls.md: SQLite with several writer processes races). A tracking
failure during a study never stops the measurements: it is reported once, tracking pauses, and
the next ``tune --study NAME`` logs what is missing.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from optuna.trial import FrozenTrial, TrialState

from tuner import ranking
from tuner.events import Observer
from tuner.fmt import AT_RATE_METRICS, fmt_ops
from tuner.model import Answer, StudySnapshot, TrackingConfig, TuneResult
from tuner.observers._mlflow_views import RANK, answer_view_tag, study_key, view_tags
from tuner.stats import tie_resolution
from tuner.summary import CapacityReport, Revalidation, ServedReport, Summary
from tuner.trials import BaselineRecord, TrialRecord

DEFAULT_DIR = "mlruns"
_PARENT = "mlflow.parentRunId"
_BATCH = 1000
_PARAMS_TAGS_BATCH = 100
_HEADLINE = ("ops_per_sec", "p99_us", "write_amp")


class TrackingError(ValueError):
    """The tracking store cannot be used; the message names the flag or variable."""


def default_uri(cwd: Path | None = None) -> str:
    """``sqlite:///<cwd>/mlruns/mlflow.db``: the project's store (artifacts go next to it)."""
    return f"sqlite:///{((cwd or Path.cwd()) / DEFAULT_DIR / 'mlflow.db').resolve()}"


def resolve_uri(explicit: str | None) -> tuple[str, str]:
    """(URI, where it came from): --mlflow-uri, else $MLFLOW_TRACKING_URI, else the default store."""
    if explicit:
        return explicit, "--mlflow-uri"
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return os.environ["MLFLOW_TRACKING_URI"], "MLFLOW_TRACKING_URI"
    return default_uri(), "default"


class MlflowStore:
    """One MLflow tracking store (SQLite file or ``http(s)://`` server): experiments and runs."""

    def __init__(self, uri: str, source: str):
        flag = "--mlflow-uri" if source == "default" else source
        # MLflow retries an unreachable server for minutes by default; a tuner should say so quickly.
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
        # MLflow prints "View run ... at URL" to stdout for server runs, which would corrupt `tune --json`.
        os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        if uri.startswith(("http://", "https://")):
            _check_server(uri, flag)
        elif not uri.startswith("sqlite:///") and (uri.startswith("file:") or "://" not in uri):
            raise TrackingError(f"{flag}: {uri!r}: use sqlite:///PATH or http(s)://HOST:PORT "
                                "(MLflow's file store is deprecated)")
        self.uri, self.flag = uri, flag
        self.client: Any = None  # made in open(): MlflowClient creates a SQLite store as it opens it
        self.experiment_id: str | None = None
        self.runs_logged = 0

    def _artifact_location(self, experiment: str) -> str | None:
        """Beside a SQLite store: ``<store dir>/artifacts/<experiment>`` (MLflow's own default is
        ./mlruns of whatever directory the first run happened in). A server decides for itself."""
        if not self.uri.startswith("sqlite:///"):
            return None
        slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in experiment).strip(".") or "experiment"
        return str(Path(self.uri[len("sqlite:///"):]).parent.resolve() / "artifacts" / slug)

    def open(self, name: str, tags: dict[str, str]) -> None:
        """Connect, and find or create the MLflow experiment ``name``."""
        if self.uri.startswith("sqlite:///"):
            path = Path(self.uri[len("sqlite:///"):])
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise TrackingError(f"{self.flag}: cannot create {path.parent}: {exc.strerror}") from None
        from mlflow import MlflowClient

        logging.getLogger("mlflow").setLevel(logging.WARNING)  # after import: MLflow sets its own level
        logging.getLogger("alembic").setLevel(logging.WARNING)
        self.client = MlflowClient(tracking_uri=self.uri)
        experiment = self.client.get_experiment_by_name(name)
        if experiment is None:
            # "custom_model_development" makes MLflow 3's UI open the runs table, not its GenAI pages.
            self.experiment_id = self.client.create_experiment(
                name, artifact_location=self._artifact_location(name),
                tags={**tags, "mlflow.experimentKind": "custom_model_development"})
        elif experiment.lifecycle_stage == "deleted":
            raise TrackingError(f"--experiment: MLflow experiment {name!r} is deleted; restore it "
                                "(mlflow experiments restore) or choose another name")
        else:
            self.experiment_id = experiment.experiment_id

    def unusable(self, exc: Exception) -> TrackingError:
        return TrackingError(f"{self.flag}: MLflow store {self.uri} is not usable: {_short(exc)}")

    def log_comparison(self, experiment: str, name: str, tags: dict[str, str],
                       rows: list[tuple[str, dict[str, Any], dict[str, float | None]]], artifacts: list[Path]) -> str:
        """A run ``name`` (replacing an earlier one of that name) with one nested run per compared
        configuration (params, metrics) and the report files as artifacts; returns its run id."""
        try:
            self.open(experiment, {})
            for old in self.search(f"tags.comparison = '{name}'"):
                self.client.delete_run(old.info.run_id)
            parent = self.client.create_run(self.experiment_id, run_name=name, tags={**tags, "comparison": name})
            parent_id = parent.info.run_id
            now = int(time.time() * 1000)
            for config, params, metrics in rows:
                run = self.client.create_run(self.experiment_id, run_name=config, tags={
                    **tags, _PARENT: parent_id, "comparison": f"{name}/{config}", "configuration": config})
                self.batch(run.info.run_id, params=params, metrics=_metrics(metrics, timestamp=now))
                self.client.set_terminated(run.info.run_id, status="FINISHED")
            for path in artifacts:
                self.client.log_artifact(parent_id, str(path))
            self.client.set_terminated(parent_id, status="FINISHED")
            return parent_id
        except TrackingError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self.unusable(exc) from None

    def run(self, *, name: str, tags: dict[str, str], params: dict[str, Any], metrics: list[Any], start: int,
            end: int, status: str, artifacts: str | None, artifact_path: str = "db_bench") -> None:
        """A finished run with its params, metrics and the files of ``artifacts`` (under ``artifact_path``/:
        the backend's name, db_bench/ or command/)."""
        run = self.client.create_run(self.experiment_id, start_time=start, tags=tags, run_name=name)
        run_id = run.info.run_id
        self.batch(run_id, params=params, metrics=metrics)
        if artifacts and Path(artifacts).is_dir() and any(Path(artifacts).iterdir()):
            self.client.log_artifacts(run_id, artifacts, artifact_path=artifact_path)
        self.client.set_terminated(run_id, status=status, end_time=end)
        self.runs_logged += 1

    def batch(self, run_id: str, *, params: dict[str, Any] | None = None, tags: dict[str, str] | None = None,
              metrics: list[Any] | None = None) -> None:
        from mlflow.entities import Param, RunTag

        small = [Param(k, str(v)) for k, v in (params or {}).items()]
        small_tags = [RunTag(k, str(v)) for k, v in (tags or {}).items()]
        everything: list[Any] = [*small, *small_tags]
        for i in range(0, len(everything), _PARAMS_TAGS_BATCH):
            chunk = everything[i:i + _PARAMS_TAGS_BATCH]
            self.client.log_batch(run_id, params=[x for x in chunk if isinstance(x, Param)],
                                  tags=[x for x in chunk if isinstance(x, RunTag)], synchronous=True)
        metrics = metrics or []
        for i in range(0, len(metrics), _BATCH):
            self.client.log_batch(run_id, metrics=metrics[i:i + _BATCH], synchronous=True)

    def search(self, filter_string: str) -> list[Any]:
        runs, token = [], None
        while True:
            page = self.client.search_runs([self.experiment_id], filter_string, max_results=1000, page_token=token)
            runs.extend(page)
            token = page.token
            if not token:
                return runs


class MlflowTracker(Observer):
    """Logs a study to an MLflow store as it goes: an observer of the study's events."""

    def __init__(self, uri: str, source: str, experiment: str | None = None):
        self.store = MlflowStore(uri, source)
        self.uri, self.experiment_name = uri, experiment
        self.parent_id: str | None = None
        self.logged: set[str] = set()
        self.paused: str | None = None
        # Seconds spent in MLflow calls per phase (experiments/tracking_overhead/tracking_overhead.py).
        self.seconds = {"start": 0.0, "record": 0.0, "finish": 0.0}

    @property
    def experiment_id(self) -> str | None:
        return self.store.experiment_id

    @property
    def runs_logged(self) -> int:
        return self.store.runs_logged

    def link(self, uid: str) -> dict[str, Any]:
        """Where the study is tracked, for its summary (``view``: the saved view of its trials)."""
        return {"uri": self.uri, "experiment_id": self.experiment_id, "run_id": self.parent_id, "view": study_key(uid)}

    # -- events -----------------------------------------------------------------------------------
    def study_started(self, snapshot: StudySnapshot) -> None:
        """Find or create the experiment and the study's parent run; log what a killed run did not."""
        started = time.monotonic()
        try:
            self.store.open(self.experiment_name or snapshot.workload.name, {"workload": snapshot.workload.name})
            parents = self.store.search(f"tags.study_uid = '{snapshot.uid}' and tags.role = 'study'")
            if parents:
                self.parent_id = parents[0].info.run_id
                self.store.client.update_run(self.parent_id, status="RUNNING")
                for run in self.store.search(f"tags.`{_PARENT}` = '{self.parent_id}'"):
                    key = run.data.tags.get("trial_key")
                    if run.info.status in ("FINISHED", "FAILED", "KILLED") and key:
                        self.logged.add(key)
                    else:  # logging of this trial was cut short: it is logged again in full
                        self.store.client.delete_run(run.info.run_id)
            else:
                run = self.store.client.create_run(self.experiment_id, run_name=snapshot.name,
                                                   tags=_study_tags(snapshot))
                self.parent_id = run.info.run_id
                self.store.batch(self.parent_id, params=_study_params(snapshot))
            self.store.batch(self.parent_id, tags=_study_mutable_tags(snapshot))
            for key, value in view_tags(snapshot.name, snapshot.uid, [p.name for p in snapshot.space.parameters]).items():
                self.store.client.set_experiment_tag(self.experiment_id, key, value)
        except TrackingError:
            raise
        except Exception as exc:  # noqa: BLE001 - any MLflow/SQL/HTTP failure means: cannot track
            raise self.store.unusable(exc) from None
        self.seconds["start"] += time.monotonic() - started
        if self.bus is not None:
            self.bus.note(f"tracking in MLflow: {self.uri} (experiment {self.experiment_id}, parent run {self.parent_id})")
        self._record(snapshot)  # trials a killed run finished but did not log

    def baseline_done(self, snapshot: StudySnapshot, record: BaselineRecord) -> None:
        self._record(snapshot)
        metrics = {f"baseline.{record.name}.{k}": v for k, v in record.metrics.items() if k in _HEADLINE}
        self._parent_metrics(snapshot, metrics, step=0)

    def trial_rejected(self, snapshot: StudySnapshot, number: int, reason: str) -> None:
        self._record(snapshot)

    def trial_done(self, snapshot: StudySnapshot, trial: FrozenTrial, seconds: float) -> None:
        self._record(snapshot)
        best = snapshot.best()
        if best is not None:
            self._parent_metrics(snapshot, {f"best_so_far.{snapshot.score.metric}": ranking.primary(best)},
                                 step=snapshot.counted())

    def _parent_metrics(self, snapshot: StudySnapshot, values: dict[str, Any], step: int) -> None:
        """Figures on the study's own run, so its row in the runs table shows them."""
        if self.paused or self.parent_id is None or not values:
            return
        try:
            self.store.batch(self.parent_id, metrics=_metrics(values, step=step))
        except Exception as exc:  # noqa: BLE001
            self._pause(snapshot, exc)

    def _record(self, snapshot: StudySnapshot) -> None:
        """Log every finished baseline and trial that has no run yet."""
        if self.paused or self.parent_id is None:
            return
        started = time.monotonic()
        try:
            for record in snapshot.baselines:
                key = f"baseline:{record.name}"
                if key not in self.logged:
                    self._log_baseline(snapshot, key, record)
                    self.logged.add(key)
            for trial in snapshot.trials:
                key = f"trial:{trial.number}"
                if trial.state.is_finished() and key not in self.logged:
                    self._log_trial(snapshot, key, trial)
                    self.logged.add(key)
        except Exception as exc:  # noqa: BLE001 - tracking must not stop the measurements
            self._pause(snapshot, exc)
        self.seconds["record"] += time.monotonic() - started

    def study_finished(self, snapshot: StudySnapshot, result: TuneResult, plots: Path | None) -> None:
        """Best configuration, summary, OPTIONS.ini, comparison and plots on the parent run."""
        self._record(snapshot)
        if self.paused or self.parent_id is None:
            return
        started = time.monotonic()
        try:
            self.store.batch(self.parent_id, tags=_finish_tags(result.summary),
                             metrics=_finish_metrics(result.summary))
            for name in ("summary.json", "OPTIONS.ini", "comparison.md"):
                if (snapshot.out / name).is_file():
                    self.store.client.log_artifact(self.parent_id, str(snapshot.out / name))
            if plots is not None and plots.is_dir():
                self.store.client.log_artifacts(self.parent_id, str(plots), artifact_path="plots")
            if result.answer is not None:
                self._mark_answer(snapshot, result.answer)
            self.store.client.set_terminated(self.parent_id, status="FINISHED")
        except Exception as exc:  # noqa: BLE001
            self._pause(snapshot, exc)
        self.seconds["finish"] += time.monotonic() - started

    def _mark_answer(self, snapshot: StudySnapshot, answer: Answer) -> None:
        """Mark the answer's run and rank the study's runs (the module's docstring); a run an earlier
        finish marked as the answer is logged afresh."""
        key = f"trial:{answer.trial}" if answer.trial is not None else f"baseline:{answer.kept}"
        runs = _children(self.store, self.parent_id)
        stale = [old for old, run in runs.items() if run.data.tags.get("answer") == "true" and old != key]
        for old in stale:
            self.store.client.delete_run(runs[old].info.run_id)
            self.logged.discard(old)
        if stale:
            self._record(snapshot)
            runs = _children(self.store, self.parent_id)
        if not self.paused and key in runs:  # (a kept baseline whose record was lost has no run)
            _mark(self.store, snapshot, answer, key, runs)

    def study_stopped(self, snapshot: StudySnapshot, status: str) -> None:
        """The study stopped early (KILLED on Ctrl-C/SIGTERM, FAILED on an error): log and close."""
        self._record(snapshot)
        if self.paused or self.parent_id is None:
            return
        try:
            self.store.client.set_terminated(self.parent_id, status=status)
        except Exception as exc:  # noqa: BLE001
            self._pause(snapshot, exc)

    # -- runs -------------------------------------------------------------------------------------
    def _log_trial(self, snapshot: StudySnapshot, key: str, trial: FrozenTrial) -> None:
        attrs = TrialRecord.of(trial)
        outcome = attrs.outcome or ("pruned" if trial.state == TrialState.PRUNED else trial.state.name.lower())
        state = {TrialState.COMPLETE: "COMPLETE", TrialState.PRUNED: "PRUNED"}.get(trial.state, "FAILED")
        status = {"COMPLETE": "FINISHED", "PRUNED": "KILLED"}.get(state, "FAILED")
        if outcome == "interrupted":
            status = "KILLED"
        tags: dict[str, Any] = {
            _PARENT: self.parent_id, "trial_key": key, "role": "trial", "study": snapshot.name,
            "study_uid": snapshot.uid,
            "trial_number": str(trial.number), "state": state, "outcome": outcome, **snapshot.config.tracking.tags,
            **_trial_tags(attrs),
        }
        start = _ms(trial.datetime_start)
        end = _ms(trial.datetime_complete) or start
        values = dict(attrs.metrics or {})
        if trial.values:
            values.update({"objective" if len(trial.values) == 1 else f"objective.{i}": v
                           for i, v in enumerate(trial.values)})
        metrics = _metrics(values, timestamp=end)
        metrics += _phase_metrics(attrs.phases or [], start)
        metrics += [_metric("intermediate_value", v, start, int(step)) for step, v in trial.intermediate_values.items()]
        self.store.run(name=_trial_run_name(trial.number, outcome, attrs), tags=tags, params=trial.params,
                       metrics=metrics, start=start, end=end, status=status, artifacts=attrs.log_dir,
                       artifact_path=snapshot.config.measurement.backend)

    def _log_baseline(self, snapshot: StudySnapshot, key: str, record: BaselineRecord) -> None:
        end = int((record.ended or time.time()) * 1000)
        start = end - int((record.seconds or 0) * 1000)
        tags: dict[str, Any] = {
            _PARENT: self.parent_id, "trial_key": key, "role": "baseline", "study": snapshot.name,
            "study_uid": snapshot.uid,
            "baseline": record.name, "state": "COMPLETE" if record.complete else "FAILED",
            "mlflow.note.content": record.doc, **snapshot.config.tracking.tags,
        }
        if record.reason is not None:
            tags["fail_reason"] = str(record.reason)[:5000]
        if record.neighbours:  # run beside other runs, as the trials of a --parallel study
            tags["neighbours"] = record.neighbours
        metrics = _metrics(record.metrics, timestamp=end) + _phase_metrics(record.phases or [], start)
        self.store.run(name=record.name, tags=tags, params=dict(record.flags), metrics=metrics,
                       start=start, end=end, status="FINISHED" if record.complete else "FAILED",
                       artifacts=record.log_dir, artifact_path=snapshot.config.measurement.backend)

    def _pause(self, snapshot: StudySnapshot, exc: Exception) -> None:
        self.paused = _short(exc)
        if self.bus is not None:
            self.bus.note(f"MLflow tracking paused ({self.uri}): {self.paused}. Measurements go on in the "
                          f"study storage; `rocksdb-tuner tune --study {snapshot.name}` logs what is missing.")


def _trial_run_name(number: int, outcome: str, attrs: TrialRecord) -> str:
    """``trial-0098 338k ops/s`` for a measured trial, ``trial-0012 failed`` for the others."""
    ops = attrs.metric("ops_per_sec")
    if outcome == "complete" and ops:
        figure = f"{ops / 1000:,.0f}k" if ops >= 10_000 else fmt_ops(ops)
        return f"trial-{number:04d} {figure} ops/s"
    return f"trial-{number:04d} {outcome}"


def _children(store: MlflowStore, parent_id: str | None) -> dict[str, Any]:
    """A study's trial and baseline runs by key (``trial:28``, ``baseline:rocksdb-default``)."""
    return {r.data.tags["trial_key"]: r for r in store.search(f"tags.`{_PARENT}` = '{parent_id}'")
            if "trial_key" in r.data.tags}


def _mark(store: MlflowStore, snapshot: StudySnapshot, answer: Answer, key: str, runs: dict[str, Any]) -> None:
    """Tags, name and figures on the answer's run ``key`` (once: not again when it has them), the
    ``rank`` of each ranked run where it changed, and the study's view that leads with the answer."""
    run = runs[key]
    tags, metrics = _answer_marks(answer)
    if any(run.data.tags.get(k) != v for k, v in tags.items()) or \
            any(run.data.metrics.get(k) != v for k, v in metrics.items() if v is not None):
        trial = answer.trial
        name = str(answer.kept) if trial is None else _trial_run_name(
            trial, run.data.tags["outcome"], next(TrialRecord.of(t) for t in snapshot.trials if t.number == trial))
        store.batch(run.info.run_id, tags=tags, metrics=_metrics(metrics))
        store.client.update_run(run.info.run_id, name=_answer_name(answer, name))
    order = [key, *(f"trial:{t.number}" for t in ranking.ranked(snapshot.trials, snapshot.directions, snapshot.weights)
                    if f"trial:{t.number}" != key)]
    for rank, name in enumerate(order, start=1):
        if name in runs and runs[name].data.metrics.get(RANK) != rank:
            store.batch(runs[name].info.run_id, metrics=_metrics({RANK: rank}, step=snapshot.counted()))
    for tag, value in answer_view_tag(snapshot.name, snapshot.uid, [p.name for p in snapshot.space.parameters]).items():
        store.client.set_experiment_tag(store.experiment_id, tag, value)


def _answer_marks(answer: Answer) -> tuple[dict[str, str], dict[str, Any]]:
    """The answer's tags and metrics (``answer.*``): why, the re-validated gain when there is one and, for a
    tie, what its rounds could tell (``answer.resolution``, ``answer.rounds_needed``: :func:`resolution`)."""
    tags = {"answer": "true", "answer.why": answer.why[:5000]}
    metrics: dict[str, Any] = {}
    if answer.best is not None:
        tags.update({"answer.verdict": str(answer.verdict), "answer.ratio_of": f"{answer.best} / {answer.reference}"})
        metrics.update({"answer.ratio": answer.ratio, "answer.p_value": answer.p_value, "answer.rounds": answer.rounds})
    if answer.ci95 is not None:
        metrics.update({"answer.ci95_low": answer.ci95[0], "answer.ci95_high": answer.ci95[1]})
        can = tie_resolution(answer.verdict, answer.ratio, answer.ci95, answer.rounds)
        if can is not None:
            metrics.update({"answer.resolution": can.smallest, "answer.rounds_needed": can.rounds_needed})
    return tags, metrics


def _answer_name(answer: Answer, name: str) -> str:
    """``answer: trial-0069 1.12x rocksdb-default (95 % CI 1.04-1.20)``, ``answer: keep rocksdb-default
    (trial 2 1.10x, 95 % CI 0.85-1.43: tie)``, or ``answer: <name> (not re-validated)``."""
    if answer.ratio is None:
        return f"answer: {name} ({'not re-validated' if answer.best is None else f'gain {answer.verdict}'})"
    ci = f"95 % CI {answer.ci95[0]:.2f}-{answer.ci95[1]:.2f}" if answer.ci95 else ""
    if answer.trial is not None:
        return f"answer: trial-{answer.trial:04d} {answer.ratio:.2f}x {answer.reference}" + (f" ({ci})" if ci else "")
    return f"answer: keep {name} ({answer.best} {answer.ratio:.2f}x{', ' + ci if ci else ''}: {answer.verdict})"


def log_comparison(uri: str | None, experiment: str, name: str, tags: dict[str, str],
                   rows: list[tuple[str, dict[str, Any], dict[str, float | None]]], artifacts: list[Path]) -> str:
    """Log a comparison of configurations (see :meth:`MlflowStore.log_comparison`) to the store."""
    resolved, source = resolve_uri(uri)
    return MlflowStore(resolved, source).log_comparison(experiment, name, tags, rows, artifacts)


def make_tracker(tracking: TrackingConfig) -> MlflowTracker | None:
    """The tracker for a study: MlflowTracker on the resolved URI, or None with --no-mlflow."""
    if not tracking.mlflow:
        return None
    resolved, source = resolve_uri(tracking.mlflow_uri)
    return MlflowTracker(resolved, source, tracking.experiment)


# -- what is logged ---------------------------------------------------------------------------------
def _study_params(s: StudySnapshot) -> dict[str, Any]:
    host = s.space.context
    assert host is not None
    build = s.build
    params: dict[str, Any] = {
        "workload": s.workload.name, "space": s.space.name, "objective": s.score.objective,
        "objective_description": s.score.describe(), "scale": s.config.measurement.scale,
        "data_bytes": s.workload.data_bytes(),
        **({f"{build.program}.version": build.version, f"{build.program}.build": build.kind} if build else {}),
        "host.cores": host.cores, "host.ram_bytes": host.ram, "memory_budget_bytes": host.budget,
        "storage": s.storage,
    }
    params.update({f"space.{p.name}": p.describe() for p in s.space.parameters})
    params.update({f"constraint.{c.name}": c.expr for c in s.space.constraints})
    params.update(_disk(s.work_dir))
    return params


def _study_mutable_tags(s: StudySnapshot) -> dict[str, str]:
    """Settings a resume may change (sampler, seed, trial count, db_bench's path): tags, not params."""
    search, execution = s.config.search, s.config.execution
    return {
        "role": "study", "study": s.name, "sampler": search.sampler,
        "seed": str(search.seed), "trials_requested": str(search.trials),
        "budget_seconds": str(search.budget),
        **({f"{s.build.program}.path": str(s.build.path)} if s.build is not None else {}), "out": str(s.out.resolve()),
        "work_dir": str(s.work_dir), "parallel": str(execution.parallel),
        "ray_address": str(execution.ray_address or ("local" if execution.on_ray else "none")),
        **s.config.tracking.tags,
    }


def _study_tags(s: StudySnapshot) -> dict[str, str]:
    return {**_study_mutable_tags(s), "study_uid": s.uid, "workload": s.workload.name,
            "mlflow.note.content": s.workload.description}


def _trial_tags(attrs: TrialRecord) -> dict[str, str]:
    """What a trial's record adds to its run's tags: how it was chosen, why it failed, where it ran."""
    tags: dict[str, str] = {}
    if attrs.fail_reason is not None:
        tags["fail_reason"] = str(attrs.fail_reason)[:5000]
    if attrs.repaired_from is not None:
        tags["repaired_from"] = str(attrs.repaired_from)
    if attrs.provenance is not None:  # how the configuration was chosen
        tags["provenance"] = str(attrs.provenance)
    if attrs.options_mismatch:
        tags["options_mismatch"] = json.dumps(attrs.options_mismatch)[:5000]
    if attrs.constraints:
        tags["feasible"] = str(all(c <= 0 for c in attrs.constraints))
    if attrs.node:  # --parallel: where the trial ran
        node = attrs.node
        tags.update(node_id=str(node.node_id), node_ip=str(node.ip), node_host=str(node.host),
                    cores_used=",".join(str(c) for c in node.cores_used or []),
                    attempts=str(attrs.attempts or 1))
    return tags


def _finish_tags(summary: Summary) -> dict[str, str]:
    tags = {f"trials.{k}": str(v) for k, v in summary.trials.counts().items()}
    best = summary.best
    if best:
        tags["best_trial"] = str(best.trial)
        tags.update({f"best.{k}": str(v) for k, v in best.params.items()})
    return tags


def _finish_metrics(summary: Summary) -> list[Any]:
    """The best trial's metrics and each configuration's ratio to the default (step = trials run),
    and the re-validation's series."""
    metrics: dict[str, float] = {}
    best = summary.best
    if best:
        metrics.update({f"best.{k}": v for k, v in best.metrics.items() if v is not None})
    for row in summary.comparison:
        if row.vs_default is not None:
            metrics[f"vs_default.{row.name.split(' (')[0]}"] = row.vs_default
    counts = summary.trials.counts()
    step = sum(counts.get(k, 0) for k in ranking.COUNTED)
    return (_metrics(metrics, step=step) + _revalidation_metrics(summary.revalidation)
            + _capacity_metrics(summary.capacity) + _served_metrics(summary.served)
            + [m for r in summary.served_guard for m in _served_metrics(r, f"served_guard/{r.names[-1]}")])


def _capacity_metrics(capacity: CapacityReport | None) -> list[Any]:
    """--slo: ``capacity/<configuration>/held_ops_per_sec`` (and ``failed_ops_per_sec``; medians over
    --capacity-rounds), ``capacity/<configuration>/vs_default`` (the paired ratio, 2+ rounds; for a tie, what its
    rounds could tell: ``.../vs_default.resolution``, ``.../vs_default.rounds_needed``), and the curve:
    ``capacity/<configuration>/<metric>`` at each offered rate tried (step = the rate in ops/s)."""
    if capacity is None:
        return []
    now = int(time.time() * 1000)
    out = []
    for c in capacity.configurations:
        out += [_metric(f"capacity/{c.name}/{key}_ops_per_sec", value, now) for key, value in
                (("held", c.held), ("failed", c.failed)) if value is not None]
        out += [_metric(f"capacity/{c.name}/{capacity.metric}", p.value, now, int(p.offered)) for p in c.probes
                if p.value is not None]
        ratio = capacity.vs_default.get(c.name)
        if ratio is not None and ratio.ratio is not None:
            out.append(_metric(f"capacity/{c.name}/vs_default", ratio.ratio, now))
            can = tie_resolution(ratio.verdict, ratio.ratio, ratio.ci95, ratio.n)
            if can is not None:
                out += [_metric(f"capacity/{c.name}/vs_default.{key}", value, now) for key, value in
                        (("resolution", can.smallest), ("rounds_needed", can.rounds_needed)) if value is not None]
    return out


def _served_metrics(served: ServedReport | None, prefix: str = "served") -> list[Any]:
    """--serve-rate: ``served/<configuration>/<metric>``, each run's (step = its round), and
    ``served/vs_default/<metric>``, the answer's over the defaults' paired by round (2+ rounds); ``prefix``
    ``served_guard/<finalist>`` for a finalist the re-validation served."""
    if served is None:
        return []
    now = int(time.time() * 1000)
    out = [_metric(f"{prefix}/{r.name}/{key}", value, now, r.round) for r in served.runs
           for key, value in r.metrics.items() if key in AT_RATE_METRICS]
    out += [_metric(f"{prefix}/vs_default/{key}", ratio.ratio, now) for key, ratio in served.vs_default.items()
            if ratio.ratio is not None]
    return out


def _disk(path: Path) -> dict[str, Any]:
    """Size and filesystem of the disk trial DBs are written to."""
    out: dict[str, Any] = {}
    try:
        out["host.disk_bytes"] = shutil.disk_usage(path).total
    except OSError:
        pass
    best = ""
    try:
        real = str(Path(path).resolve())
        for line in Path("/proc/mounts").read_text().splitlines():
            device, mount, fstype = line.split()[:3]
            if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best):
                best, out["host.disk_fs"], out["host.disk_device"] = mount, fstype, device
    except OSError:
        pass
    return out


def _metric(key: str, value: float, timestamp: int, step: int = 0) -> Any:
    from mlflow.entities import Metric

    return Metric(key, float(value), timestamp, step)


def _metrics(values: dict[str, Any], timestamp: int | None = None, step: int = 0) -> list[Any]:
    ts = timestamp or int(time.time() * 1000)
    return [_metric(k, v, ts, step) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _phase_metrics(phases: Iterable[dict[str, Any]], start: int) -> list[Any]:
    """``<phase>/<benchmark>/ops_per_sec`` …, ``<phase>/wall_seconds`` …, and the per-second series
    ``<phase>/interval_ops_per_sec`` (step = second of the phase) from db_bench's --report_file."""
    out = []
    for row in phases:
        prefix = f"{row['phase']}/{row['benchmark']}/" if "benchmark" in row else f"{row['phase']}/"
        for k, v in row.items():
            if k in ("phase", "benchmark", "scored", "intervals") or v is None:
                continue
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append(_metric(prefix + k, v, start))
        for second, qps in row.get("intervals", []):
            out.append(_metric(f"{row['phase']}/interval_ops_per_sec", qps, start + int(second) * 1000, int(second)))
    return out


def _revalidation_metrics(revalidation: Revalidation | None) -> list[Any]:
    """``revalidation/<configuration>/ops_per_sec`` per estimation round (step = round), the best's
    ratio to the reference with its interval and p-value, the noise, and each ablated option's ratio."""
    if not revalidation or not revalidation.best:
        return []
    now = int(time.time() * 1000)
    out = [_metric(f"revalidation/{row.name}/ops_per_sec", ops, now, step)
           for row in revalidation.configurations for step, ops in enumerate(row.samples("ops_per_sec"))]
    gain = revalidation.best_vs_reference
    if gain and gain.ci95 and gain.ratio is not None and gain.p_value is not None:
        out += [_metric("revalidation/best_vs_reference", gain.ratio, now),
                _metric("revalidation/best_vs_reference_ci95_low", gain.ci95[0], now),
                _metric("revalidation/best_vs_reference_ci95_high", gain.ci95[1], now),
                _metric("revalidation/best_vs_reference_p_value", gain.p_value, now)]
    if revalidation.noise_cv_reference is not None:
        out.append(_metric("revalidation/noise_cv_reference", revalidation.noise_cv_reference, now))
    out += [_metric(f"revalidation/ablation/{a.param}", a.ratio, now) for a in revalidation.ablation
            if a.ratio is not None]
    return out


def _ms(moment: datetime | None) -> int:
    return int(moment.timestamp() * 1000) if moment else int(time.time() * 1000)


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"


def _check_server(uri: str, flag: str) -> None:
    """Fail fast (seconds, not MLflow's minutes of retries) when the server does not answer."""
    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=5) as reply:
            if reply.status != 200:
                raise TrackingError(f"{flag}: MLflow server {uri} answered {reply.status} on /health")
    except urllib.error.HTTPError as exc:
        raise TrackingError(f"{flag}: MLflow server {uri} answered {exc.code} on /health") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TrackingError(f"{flag}: cannot reach MLflow server {uri}: {reason}") from None
