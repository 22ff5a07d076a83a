"""Starting a study from what is already known, without peeking at what it will be judged on.

- Every new study first measures, as trials the sampler learns from, the defaults the rocksdb-default
  baseline runs (none for a backend that runs no db_bench workload: its program's defaults are no
  configuration of the space), the user's configuration (--baseline, --base-options) and the RocksDB
  tuning guide's tools/benchmark.sh-style configuration (scaled), then the workload's hand-found
  configurations (S0-S4), each projected onto the search space (a numeric value outside its range is
  clipped to it, an option the space lacks is left out). The space is widened first to hold the
  defaults and the user's configuration (:func:`tuner.engine._held.held`): those run as they are,
  and the search can reach what it is compared with.
- ``--warm-start SOURCE`` copies the complete trials of an earlier study on the same workload,
  space, objective and scale, measured by the same db_bench version and build, into a new study
  (Optuna ``add_trial``): the sampler learns from them, but they are not this run's measurements,
  so they do not count toward ``--trials`` and cannot be named best. SOURCE is an earlier study's
  output directory or its ``summary.json``, or the name of another study in the same ``--storage``.
- ``--warm-start auto`` picks the most similar finished study of a library (``--library DIR``, the
  ``runs/`` studies by default): same space, objective and db_bench build (none, for a backend that
  runs no db_bench workload), then the same workload and scale (whose trials are copied as above) or
  else the nearest workload, whose five best configurations are measured after the starts, projected
  onto this space as above (their values, from another workload, are not copied; a range scaled to a
  larger data set may not hold them).
  Studies named by ``exclude`` are never picked (experiments leave their own source study out).

The configurations measured first are the study's *starts*, kept in order in the study (attribute
``starts``) and run one at a time as the trial loop asks (:func:`next_start`), so that a resumed
study goes on where it stopped. Another study's configurations are optional: they run only while
all starts together take at most ``STARTS_SHARE`` of the trials the study expects (``--trials``, or
what fits the ``--budget``), so that a small budget is not spent on starts alone (S1's 115 s once
went to 7 starts and the sampler never proposed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial, TrialState, create_trial

from objectives.configurations import benchmark_sh
from objectives.contract import Task
from search_spaces import SearchSpace
from tuner import ranking
from tuner.backends import Found
from tuner.backends import hand_found as hand_found_for
from tuner.engine._attrs import Start
from tuner.engine._held import project, references
from tuner.engine._plan import Reference
from tuner.engine._storage import StudyStore, stored_build
from tuner.model import WARM_START
from tuner.summary import Summary, SummaryError
from tuner.trials import TrialRecord
from tuner.trials import attrs as trial_attrs

STARTS_SHARE = 0.5  # the largest share of a study's expected trials its starts take, when optional ones remain


class WarmStartError(ValueError):
    """The source cannot seed this study; the message names --warm-start."""


def _source(store: StudyStore, source: str) -> optuna.Study:
    path = Path(source)
    if path.is_dir():
        path = path / "summary.json"
    if path.suffix == ".json":
        try:
            return _earlier(Summary.load(path), source)
        except SummaryError as exc:
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
    for key in ("identity", "build", "repeats"):
        theirs, ours = earlier.user_attrs.get(key), mine.get(key)
        if key == "build":  # what measured: the same build (its identity), unless nothing was probed here
            before, now = stored_build(earlier.user_attrs), stored_build(mine)
            if now is None:  # e.g. a program's study (its identity names the backend)
                continue
            theirs, ours = before.identity if before else None, now.identity
        if key == "repeats":
            theirs, ours = theirs or 1, ours or 1
        if theirs != ours:
            raise WarmStartError(f"--warm-start {source}: study {earlier.study_name} has {key} {theirs}, this one "
                                 f"{ours}; its measurements would not compare")
    copied = 0
    for trial in earlier.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if not all(p.name in trial.params or not p.active(trial.params) for p in space.parameters):
            continue
        if not all(space.parameter(n).contains(v) for n, v in trial.params.items()):  # its space held other references
            continue
        distributions: dict[str, BaseDistribution] = {name: space.parameter(name).distribution() for name in trial.params}
        record = TrialRecord.of(trial)
        attrs: dict[str, Any] = trial_attrs(
            metrics=record.metrics, constraints=record.constraints, outcome=WARM_START,
            warm_start_from=f"{earlier.study_name}#{trial.number}", provenance="copied from an earlier study")
        store.study.add_trial(create_trial(params=trial.params, distributions=distributions,
                                                  values=trial.values, user_attrs=attrs))
        copied += 1
    return copied


def starts(space: SearchSpace, found: Found, workload: Task,
           user: Reference | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The references (the rocksdb-default baseline's configuration; the ``user``'s, when given) and the
    benchmark.sh-style configuration on top of the first, projected onto ``space`` (which holds the
    references: :func:`tuner.engine._held.held`); one whose projection is empty is left out."""
    named = references(space, found, workload, user)
    assert space.context is not None  # a resolved space
    bsh, _ = benchmark_sh(space.context)
    named.append(("benchmark.sh", {**named[0][1], **bsh}))
    return [(name, params) for name, flags in named if (params := project(space, flags))]


_TO_A_PROGRAM = {"benchmark.sh": "RocksDB's tuning-guide configuration (zstd, 10 bloom bits, memtables sized to the memory; "
                                "what of it the space searches)"}


def start_words(name: str, program: bool) -> str:
    """A start as the console names it: by its name, or to a user's ``program`` (which knows no db_bench
    tool) by what it is."""
    return _TO_A_PROGRAM.get(name, name) if program else name


def named_starts(space: SearchSpace, found: Found, workload: Task, *, defaults: bool, hand_found: bool,
                 user: Reference | None = None) -> list[Start]:
    """The required starts, in order: the defaults (as the backend ``found`` them), the ``user``'s configuration and the
    benchmark.sh style (``defaults``), then each hand-found baseline's configuration (``hand_found``),
    projected onto ``space``."""
    named = starts(space, found, workload, user) if defaults else []
    if hand_found:
        named += [(b.name, project(space, b.flags)) for b in hand_found_for(found, workload)]
    return [Start(name, params) for name, params in named if params]


def next_start(queue: Sequence[Start], trials: Sequence[FrozenTrial],
               expected: int | None) -> tuple[Start | None, list[str]]:
    """The start to run next, and the optional starts left out now (named once, when the sampler
    takes over from them). Starts already asked for (by name) are passed. An optional start runs
    only before the sampler's first proposal and while the starts, it included, are at most
    ``STARTS_SHARE`` of the ``expected`` trials (None: not known yet, it runs)."""
    records = [TrialRecord.of(t) for t in trials]
    ran = {r.enqueued for r in records if r.enqueued is not None}
    sampled = any(r.enqueued is None and r.repaired_from is None and r.outcome != WARM_START for r in records)
    pending = [s for s in queue if s.name not in ran]
    if not pending:
        return None, []
    first = pending[0]
    if not first.optional:
        return first, []
    if sampled:
        return None, []
    if expected is None or len(ran) + 1 <= STARTS_SHARE * expected:
        return first, []
    return None, [s.name for s in pending]


def _earlier(summary: Summary, source: str) -> optuna.Study:
    """The earlier study a summary names (``source``: where it was found, for the error)."""
    try:
        return summary.optuna_study()
    except (ValueError, KeyError) as exc:
        raise WarmStartError(f"--warm-start {source}: not an earlier study's summary.json ({exc})") from None


def most_similar(store: StudyStore, library: Path, exclude: tuple[str, ...] = ()) -> Path | None:
    """The summary.json of the library's finished study most like this one (see the module's doc)."""
    parts = store.parts
    version = parts.found.build.version if parts.found.build is not None else None  # None: studies that probe nothing
    best: tuple[tuple[int, float], Path] | None = None
    for path in sorted(library.rglob("summary.json")) if library.is_dir() else []:
        try:
            s = Summary.load(path)
        except SummaryError:
            continue
        if (s.study == parts.name or any(x and x in (s.study or "") for x in exclude) or not s.best
                or s.space != parts.space.name or s.objective != parts.score.objective
                or (s.build.version if s.build else None) != version):
            continue
        same = s.workload == parts.workload.name
        distance = abs(math.log(max(1, s.data_bytes or 1) / max(1, parts.workload.data_bytes())))
        key = (0 if same and s.scale == parts.config.measurement.scale else 1 if same else 2, distance)
        if best is None or key < best[0]:
            best = (key, path)
    return best[1] if best else None


def warm_start_auto(store: StudyStore, library: Path,
                    exclude: tuple[str, ...] = ()) -> tuple[str, list[Start]]:
    """--warm-start auto: copy the trials of the same study kind, or return another workload's five
    best configurations as optional starts; with what was done, in words."""
    found = most_similar(store, library, exclude)
    if found is None:
        return f"found no finished study like it in {library} to learn from", []
    summary = Summary.load(found)
    scale = store.parts.config.measurement.scale
    if summary.workload == store.parts.workload.name and summary.scale == scale:
        return f"learns from {warm_start(store, str(found))} trials of {found.parent} (not counted, never named best)", []
    earlier = _earlier(summary, str(found))
    top = ranking.top_k(earlier.get_trials(deepcopy=False), [d.name.lower() for d in earlier.directions], 5)
    space = store.parts.space
    configurations = [Start(f"{summary.study}#{t.number}", project(space, {p.flag: t.params[p.name] for p in
                                                                          space.parameters if p.name in t.params}),
                            optional=True) for t in top]
    return (f"then runs the {len(top)} best configurations of {summary.study} ({summary.workload} at scale "
            f"{summary.scale:g}, {found.parent}) while the starts take at most "
            f"{100 * STARTS_SHARE:.0f} % of the trials"), configurations
