"""The references a study's space holds: what its gains are measured against (the rocksdb-default
baseline's configuration, and the user's, --baseline or --base-options) lie inside the space it
searches, as they run, so that the search can reach them and they run as its trials (their starts,
tuner.engine._warmstart). A space that excludes one is widened (:meth:`SearchSpace.holding`): a range
extended to its value, a categorical given its choice, a constraint it breaks relaxed just enough; a
space that cannot be is refused in one line. Another configuration (benchmark.sh's, a hand-found one,
another study's) is projected onto the space: clipped into it.
"""

from __future__ import annotations

from typing import Any

from objectives.contract import Task
from search_spaces import SearchSpace
from search_spaces.catalogue import by_flag
from search_spaces.parameters import CategoricalParam
from tuner.backends import Found, default_config
from tuner.engine._plan import Reference
from tuner.fmt import fmt_bytes
from tuner.model import DEFAULT_BASELINE


def project(space: SearchSpace, flags: dict[str, Any], clip: bool = True) -> dict[str, Any]:
    """db_bench flags as a configuration of the space: numbers clipped into their range and choices kept
    when the space has them (``clip``; else all as they are), the rest left out (the sampler picks those)."""
    params: dict[str, Any] = {}
    for p in space.parameters:
        if p.flag not in flags or not p.active(params):
            continue
        value = p.value_of(flags[p.flag])
        if value is None or (clip and isinstance(p, CategoricalParam) and not p.contains(value)):
            continue
        params[p.name] = value if not clip or isinstance(p, CategoricalParam) else min(max(value, p.low), p.high)
    return params


def references(space: SearchSpace, found: Found, workload: Task,
               user: Reference | None) -> list[tuple[str, dict[str, Any]]]:
    """The flags of what gains are measured against, as their starts run them: the rocksdb-default
    baseline's (:func:`tuner.backends.default_config` of the searched options), then the user's configuration's
    (``user``: its values of the searched options on top)."""
    defaults = default_config(found, workload, [p.flag for p in space.parameters]).flags()
    named = [(DEFAULT_BASELINE, defaults)]
    if user is not None:
        named.append((user.name, {**defaults, **space.config({k: v for k, v in user.values.items() if v is not None}).flags()}))
    return named


def held(space: SearchSpace, found: Found, workload: Task,
         user: Reference | None = None) -> tuple[SearchSpace, tuple[str, ...]]:
    """``space`` widened to hold the rocksdb-default baseline's and the ``user``'s configurations as
    their starts run them (:meth:`SearchSpace.holding`), so that the search can reach what it is
    compared with; and what was widened for which, one sentence each."""
    configurations: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    wider = space
    for name, flags in references(space, found, workload, user):
        configurations[name] = project(space, flags, clip=False)
        widest = space.holding(configurations)
        notes += _widened(wider, widest, name)
        wider = widest
    return wider, tuple(notes)


def breaking(space: SearchSpace, found: Found, workload: Task,
             user: Reference | None = None) -> dict[str, tuple[str, ...]]:
    """The references (:func:`references`) that break a constraint the user declared (never relaxed):
    each one's name and the constraints it breaks, with its values, in words."""
    assert space.context is not None  # a resolved space
    ctx, known = space.context, set(space.context.names())
    broken: dict[str, tuple[str, ...]] = {}
    for name, flags in references(space, found, workload, user):
        config = project(space, flags, clip=False)
        words = tuple(c.explain(config, ctx) for c in space.constraints
                      if c.declared and c.names() <= known | set(config) and not c.holds(config, ctx))
        if words:
            broken[name] = words
    return broken


def _widened(before: SearchSpace, after: SearchSpace, who: str) -> list[str]:
    """What ``after`` widened of ``before`` to hold ``who``'s configuration, in words."""
    notes = []
    for old, new in zip(before.parameters, after.parameters):
        if new == old:
            continue
        if isinstance(new, CategoricalParam):
            notes.append(f"{new.name} gains the choice {new.choices[-1]}, {who}'s")
        else:
            notes.append(f"{new.name}'s range widened to {_span(new)} (from {_span(old)}) to hold {who}'s value")
    return notes + [f"constraint {new.name} relaxed to {new.expr} (from {old.expr}) to hold {who}'s values"
                    for old, new in zip(before.constraints, after.constraints) if new != old]


def _span(p: Any) -> str:
    """A numeric parameter's range: low..high, in bytes for a memory size."""
    info = by_flag(p.flag)
    show = fmt_bytes if info is not None and info.memory else str
    return f"{show(p.low)}..{show(p.high)}"
