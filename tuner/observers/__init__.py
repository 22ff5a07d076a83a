"""Observers of a study's events: progress on the console (:mod:`._progress`) and MLflow tracking
(:mod:`._mlflow`, its saved views in :mod:`._mlflow_views`). They read the snapshot each event carries
and never import the engine. Their modules are private; what the apps use is here."""

from tuner.observers._mlflow import DEFAULT_DIR, TrackingError, log_comparison, make_tracker, resolve_uri
from tuner.observers._mlflow_views import ALL_TRIALS, PREFIX, RANK, compare_url, leads_with_answer, study_key, view_url
from tuner.observers._progress import ConsoleProgress, SilentProgress

__all__ = ["ALL_TRIALS", "DEFAULT_DIR", "PREFIX", "RANK", "ConsoleProgress", "SilentProgress", "TrackingError",
           "compare_url", "leads_with_answer", "log_comparison", "make_tracker", "resolve_uri", "study_key", "view_url"]
