"""A snapshot's trials as an in-memory Optuna study, for Optuna's plots and importance evaluators."""

from __future__ import annotations

import optuna

from tuner.model import StudySnapshot


def as_optuna(snapshot: StudySnapshot) -> optuna.Study:
    """A read-only copy of the snapshot's trials (numbers kept) in an in-memory Optuna study."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=snapshot.name, directions=snapshot.directions)
    study.add_trials(snapshot.trials)
    return study
