"""Saved views of MLflow's runs table, so that one link opens a study's trials as a tuning user
wants them: model-training mode, trials only, best ops/s first, with the score, P99, write amp and
the tuned parameters as columns.

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


def study_key(uid: str) -> str:
    """The view of one study's trials (URL-safe: the study's uid, not its name)."""
    return f"study-{uid[:12]}"


def _column(kind: str, name: str) -> str:
    return f"{kind}.`{name}`"


def view_value(title: str, search: str, params: Iterable[str]) -> str:
    """The tag value: MLflow's saved-view envelope around the runs table's state."""
    columns = [_column("metrics", m) for m in METRICS] + [_column("params", p) for p in params]
    state = {"searchFilter": search, "orderByKey": _column("metrics", "ops_per_sec"), "orderByAsc": False,
             "selectedColumns": columns, "columnOrder": [_column("attributes", "Run Name"), *columns],
             "runsHiddenMode": "SHOW_ALL"}
    now = int(time.time() * 1000)
    return json.dumps({"name": title, "createdAt": now, "updatedAt": now,
                       "state": json.dumps(state, separators=(",", ":"))})


def view_tags(study: str, uid: str, params: Iterable[str]) -> dict[str, str]:
    """Experiment tags: a view of this study's trials and one of every trial in the experiment."""
    params = list(params)
    return {PREFIX + study_key(uid): view_value(f"{study}: trials by ops/s",
                                                f"tags.role = 'trial' and tags.study_uid = '{uid}'", params),
            PREFIX + ALL_TRIALS: view_value("All trials by ops/s", "tags.role = 'trial'", params)}


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
