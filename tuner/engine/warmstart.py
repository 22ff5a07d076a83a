"""Starting a study from what is already known.

- ``--warm-start SOURCE`` copies the complete trials of an earlier study on the same workload,
  space, objective and scale, measured by the same db_bench version and build, into a new study
  (Optuna ``add_trial``): the sampler learns from them, but they are not this run's measurements,
  so they do not count toward ``--trials`` and cannot be named best. SOURCE is an earlier study's
  output directory or its ``summary.json``, or the name of another study in the same ``--storage``.
- Every new study first runs the workload's hand-found configurations (S0-S4), projected onto the
  search space (``enqueue_trial``; options outside the space or its ranges are left to the sampler).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState, create_trial

from tuner.engine.storage import StudyStore

OUTCOME = "warm-start"


class WarmStartError(ValueError):
    """The source cannot seed this study; the message names --warm-start."""


def _source(store: StudyStore, source: str) -> optuna.Study:
    path = Path(source)
    if path.is_dir():
        path = path / "summary.json"
    if path.suffix == ".json":
        try:
            summary = json.loads(path.read_text())
            return optuna.load_study(study_name=summary["study"], storage=summary["storage"])
        except (OSError, ValueError, KeyError) as exc:
            raise WarmStartError(f"--warm-start {source}: not an earlier study's summary.json ({exc})") from None
    try:
        return optuna.load_study(study_name=source, storage=store.parts.storage)
    except KeyError:
        raise WarmStartError(f"--warm-start {source}: no such study directory, summary.json, or study in "
                             f"{store.parts.storage}") from None


def warm_start(store: StudyStore, source: str) -> int:
    """Copy the source's complete trials into the (new) study; return how many were copied."""
    earlier = _source(store, source)
    mine = store.study.user_attrs
    space = store.parts.space
    for key in ("identity", "db_bench", "repeats"):
        theirs, ours = earlier.user_attrs.get(key), mine.get(key)
        if key == "db_bench" and theirs and ours:
            theirs, ours = (theirs["version"], theirs["assertions"]), (ours["version"], ours["assertions"])
        if key == "repeats":
            theirs, ours = theirs or 1, ours or 1
        if theirs != ours:
            raise WarmStartError(f"--warm-start {source}: study {earlier.study_name} has {key} {theirs}, this one "
                                 f"{ours}; its measurements would not compare")
    copied = 0
    for trial in earlier.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if not all(p.name in trial.params or not p.active(trial.params) for p in space.parameters):
            continue
        distributions = {name: space.parameter(name).distribution() for name in trial.params}
        attrs: dict[str, Any] = {k: v for k, v in trial.user_attrs.items() if k in ("metrics", "constraints")}
        attrs.update(outcome=OUTCOME, warm_start_from=f"{earlier.study_name}#{trial.number}")
        store.study.add_trial(create_trial(params=trial.params, distributions=distributions,
                                                  values=trial.values, user_attrs=attrs))
        copied += 1
    return copied


def enqueue_hand_found(store: StudyStore) -> list[str]:
    """Enqueue each hand-found baseline's configuration, projected onto the space; return their names."""
    by_flag = {p.flag: p for p in store.parts.space.parameters}
    names = []
    for baseline in store.parts.workload.baselines:
        params = {by_flag[f].name: v for f, v in baseline.flags.items() if f in by_flag and by_flag[f].contains(v)}
        if params:  # a projection that breaks a constraint is rejected and repaired like any proposal
            store.study.enqueue_trial(params, user_attrs={"enqueued": baseline.name})
            names.append(baseline.name)
    return names
