"""Saved views of MLflow's runs table, so that one link opens a study's trials as a tuning user
wants them: model-training mode, trials only, best ops/s first, with the score, P99, write amp and
the tuned parameters as columns. Once the study has an answer, its view leads with it: the runs that
carry a ``rank`` (1 the answer, then the measured trials in the study's ranking), by rank, with the
answer's re-validated gain as columns.

MLflow 3.17 reads a shared view from the experiment tag ``mlflow.sharedViewState.<key>`` when the
runs page is opened with ``viewStateShareKey=<key>`` (the whole query after the ``#``, the path
ending in ``/runs``); ``workflowType=machine_learning`` selects the model-training UI instead of
the GenAI overview it defaults to. Checked in headless Chromium by tests/test_tracking.py.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterable

PREFIX = "mlflow.sharedViewState."
ALL_TRIALS = "trials"
METRICS = ("ops_per_sec", "p99_us", "write_amp")
RANK = "rank"  # 1: the study's answer; then its measured trials, best first (tuner.ranking)
ANSWER_METRICS = ("ratio", "ci95_low", "ci95_high")
ANSWER_NAME_WIDTH = 420  # pixels: the answer's name in full (``answer: keep rocksdb-default (trial 2 1.10x, …)``)


def study_key(uid: str) -> str:
    """The view of one study's trials (URL-safe: the study's uid, not its name)."""
    return f"study-{uid[:12]}"


def _column(kind: str, name: str) -> str:
    return f"{kind}.`{name}`"


def view_value(title: str, search: str, params: Iterable[str], order_by: str = "ops_per_sec",
               extra: Iterable[str] = (), name_width: int | None = None) -> str:
    """The tag value: MLflow's saved-view envelope around the runs table's state, sorted by the metric
    ``order_by`` (descending, but ascending for ``rank``), with the ``extra`` columns after the metrics
    and the run names ``name_width`` pixels wide (MLflow's own width when None)."""
    columns = [_column("metrics", m) for m in METRICS] + list(extra) + [_column("params", p) for p in params]
    name = _column("attributes", "Run Name")
    state = {"searchFilter": search, "orderByKey": _column("metrics", order_by), "orderByAsc": order_by == RANK,
             "selectedColumns": columns, "columnOrder": [name, *columns],
             "columnWidths": {name: name_width} if name_width else {}, "runsHiddenMode": "SHOW_ALL"}
    now = int(time.time() * 1000)
    return json.dumps({"name": title, "createdAt": now, "updatedAt": now,
                       "state": json.dumps(state, separators=(",", ":"))})


def view_tags(study: str, uid: str, params: Iterable[str]) -> dict[str, str]:
    """Experiment tags: a view of this study's trials and one of every trial in the experiment."""
    params = list(params)
    return {PREFIX + study_key(uid): view_value(f"{study}: trials by ops/s",
                                                f"tags.role = 'trial' and tags.study_uid = '{uid}'", params),
            PREFIX + ALL_TRIALS: view_value("All trials by ops/s", "tags.role = 'trial'", params)}


def answer_view_tag(study: str, uid: str, params: Iterable[str]) -> dict[str, str]:
    """The experiment tag of a study's view once it has an answer: its answer first, then its measured
    trials by rank, with the answer's gain and verdict as columns."""
    extra = [_column("metrics", RANK), *(_column("metrics", f"answer.{m}") for m in ANSWER_METRICS),
             _column("tags", "answer.verdict")]
    return {PREFIX + study_key(uid): view_value(f"{study}: its answer, then its trials by rank",
                                                f"tags.study_uid = '{uid}' and metrics.{RANK} >= 1", params,
                                                order_by=RANK, extra=extra, name_width=ANSWER_NAME_WIDTH)}


def leads_with_answer(value: str) -> bool:
    """Whether a saved view (an experiment tag's value) is a study's view that leads with its answer."""
    return json.loads(json.loads(value)["state"])["orderByKey"] == _column("metrics", RANK)


def view_url(base: str, experiment_id: str, key: str) -> str:
    """The address that opens a saved view (give this one out: the address bar's later form loses
    the columns)."""
    return (f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs?viewStateShareKey={key}"
            "&workflowType=machine_learning")


def compare_url(base: str, experiment_id: str, run_ids: list[str]) -> str:
    """MLflow's side-by-side comparison of runs (parallel coordinates, parameter diff)."""
    runs = urllib.parse.quote(json.dumps(run_ids, separators=(",", ":")))
    experiments = urllib.parse.quote(json.dumps([experiment_id]))
    return f"{base.rstrip('/')}/#/compare-runs?runs={runs}&experiments={experiments}&workflowType=machine_learning"
