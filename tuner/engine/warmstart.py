"""Starting a study from what is already known, without peeking at what it will be judged on.

- Every new study first measures, as trials the sampler learns from, db_bench's defaults and the
  RocksDB tuning guide's tools/benchmark.sh-style configuration (scaled), then the workload's
  hand-found configurations (S0-S4), each projected onto the search space (``enqueue_trial``: a
  numeric value outside its range is clipped to it, an option the space lacks is left out).
- ``--warm-start SOURCE`` copies the complete trials of an earlier study on the same workload,
  space, objective and scale, measured by the same db_bench version and build, into a new study
  (Optuna ``add_trial``): the sampler learns from them, but they are not this run's measurements,
  so they do not count toward ``--trials`` and cannot be named best. SOURCE is an earlier study's
  output directory or its ``summary.json``, or the name of another study in the same ``--storage``.
- ``--warm-start auto`` picks the most similar finished study of a library (``--library DIR``, the
  ``runs/`` studies by default): same space, objective and db_bench build, then the same workload
  and scale (whose trials are copied as above) or else the nearest workload, whose five best
  configurations are measured first here, projected onto this space as above (their values, from
  another workload, are not copied; a range scaled to a larger data set may not hold them).
  Studies named by ``exclude`` are never picked (experiments leave their own source study out).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState, create_trial

from objectives.configurations import benchmark_sh, db_bench_defaults
from objectives.dbbench import DbBench
from search_spaces import SearchSpace
from search_spaces.parameters import CategoricalParam
from tuner import ranking
from tuner.engine.storage import StudyStore
from tuner.model import DEFAULT_BASELINE, WARM_START


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
        attrs.update(outcome=WARM_START, warm_start_from=f"{earlier.study_name}#{trial.number}")
        store.study.add_trial(create_trial(params=trial.params, distributions=distributions,
                                                  values=trial.values, user_attrs=attrs))
        copied += 1
    return copied


def project(space: SearchSpace, flags: dict[str, Any]) -> dict[str, Any]:
    """db_bench flags as a configuration of the space: numbers clipped into their range, choices kept
    when the space has them, the rest left out (the sampler picks those)."""
    params: dict[str, Any] = {}
    for p in space.parameters:
        if p.flag not in flags or not p.active(params):
            continue
        value = flags[p.flag]
        if isinstance(p, CategoricalParam):
            choice = next((c for c in p.choices if str(c) == str(value)), None)
            if choice is not None:
                params[p.name] = choice
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        params[p.name] = type(p.low)(min(max(number, p.low), p.high))
    return params


def starts(space: SearchSpace, db: DbBench) -> list[tuple[str, dict[str, Any]]]:
    """db_bench's defaults and the benchmark.sh-style configuration (unset options at db_bench's
    defaults), projected onto ``space``; one whose projection is empty is left out."""
    defaults = db_bench_defaults([p.flag for p in space.parameters], db)
    bsh, _ = benchmark_sh(space.context)  # type: ignore[arg-type]
    named = ((DEFAULT_BASELINE, project(space, defaults)), ("benchmark.sh", project(space, {**defaults, **bsh})))
    return [(name, params) for name, params in named if params]


def enqueue_starts(store: StudyStore) -> list[str]:
    """Enqueue the ``starts`` (a projection that breaks a constraint is rejected and repaired like any
    proposal); return their names."""
    names = []
    for name, params in starts(store.parts.space, store.parts.db_bench):
        store.study.enqueue_trial(params, user_attrs={"enqueued": name})
        names.append(name)
    return names


def enqueue_hand_found(store: StudyStore) -> list[str]:
    """Enqueue each hand-found baseline's configuration, projected onto the space; return their names."""
    names = []
    for baseline in store.parts.workload.baselines:
        params = project(store.parts.space, baseline.flags)
        if params:
            store.study.enqueue_trial(params, user_attrs={"enqueued": baseline.name})
            names.append(baseline.name)
    return names


def most_similar(store: StudyStore, library: Path, exclude: tuple[str, ...] = ()) -> Path | None:
    """The summary.json of the library's finished study most like this one (see the module's doc)."""
    parts = store.parts
    best: tuple[tuple[int, float], Path] | None = None
    for path in sorted(library.rglob("summary.json")) if library.is_dir() else []:
        try:
            s = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if (s.get("study") == parts.name or any(x and x in (s.get("study") or "") for x in exclude) or not s.get("best")
                or s.get("space") != parts.space.name or s.get("objective") != parts.score.objective
                or (s.get("db_bench") or {}).get("version") != parts.db_bench.version):
            continue
        same = s.get("workload") == parts.workload.name
        distance = abs(math.log(max(1, s.get("data_bytes") or 1) / max(1, parts.workload.data_bytes())))
        key = (0 if same and s.get("scale") == parts.config.scale else 1 if same else 2, distance)
        if best is None or key < best[0]:
            best = (key, path)
    return best[1] if best else None


def warm_start_auto(store: StudyStore, library: Path, exclude: tuple[str, ...] = ()) -> str:
    """--warm-start auto: copy the trials of the same study kind, or measure another workload's five
    best configurations first; return what was done, in words."""
    found = most_similar(store, library, exclude)
    if found is None:
        return f"found no finished study like it in {library} to learn from"
    summary = json.loads(found.read_text())
    if summary["workload"] == store.parts.workload.name and summary["scale"] == store.parts.config.scale:
        return f"learns from {warm_start(store, str(found))} trials of {found.parent} (not counted, never named best)"
    earlier = optuna.load_study(study_name=summary["study"], storage=summary["storage"])
    top = ranking.top_k(earlier.get_trials(deepcopy=False), [d.name.lower() for d in earlier.directions], 5)
    space = store.parts.space
    for t in top:
        flags = {p.flag: t.params[p.name] for p in space.parameters if p.name in t.params}
        store.study.enqueue_trial(project(space, flags), user_attrs={"enqueued": f"{summary['study']}#{t.number}"})
    return (f"runs first the {len(top)} best configurations of {summary['study']} ({summary['workload']} at scale "
            f"{summary['scale']:g}, {found.parent})")
