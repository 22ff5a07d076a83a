"""Observers of a study's events: progress on the console (:mod:`.progress`) and MLflow tracking
(:mod:`.mlflow`). They read the snapshot each event carries and never import the engine."""
