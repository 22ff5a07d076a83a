"""A search space: ordered parameters plus constraints, loaded from TOML/YAML and validated once."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import optuna

from search_spaces import files
from search_spaces.config import Config, OptionValue, Setting
from search_spaces.constraints import Constraint, constraint_from_dict
from search_spaces.context import Context
from search_spaces.errors import SpaceError
from search_spaces.parameters import AnyParam, CategoricalParam, Value, flag_text, parameter_from_dict

PRESET_DIR = Path(__file__).with_name("presets")
_TOP_LEVEL = {"name", "description", "parameters", "constraints"}


@dataclass(frozen=True)
class SearchSpace:
    """Parameters in suggestion order (a conditional one after the one it depends on) and constraints."""

    name: str
    parameters: tuple[AnyParam, ...]
    constraints: tuple[Constraint, ...] = ()
    description: str = ""
    context: Context | None = None

    # -- building ---------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any, name: str = "space") -> SearchSpace:
        if not isinstance(data, dict):
            raise SpaceError("space: expected a table with 'parameters' and optional 'constraints'")
        unknown = sorted(set(data) - _TOP_LEVEL)
        if unknown:
            raise SpaceError(f"unknown top-level field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_TOP_LEVEL))})")
        raw_params = data.get("parameters")
        if not isinstance(raw_params, dict) or not raw_params:
            raise SpaceError("parameters: expected a non-empty table of parameters")
        params: list[AnyParam] = []
        for pname, spec in raw_params.items():
            param = parameter_from_dict(pname, spec)
            earlier = {p.name: p for p in params}
            for other, values in param.when.items():
                parent = earlier.get(other)
                if not isinstance(parent, CategoricalParam):
                    raise SpaceError(
                        f"parameters.{pname}.when: {other!r} must be a categorical parameter declared before it"
                    )
                bad = [v for v in values if v not in parent.choices]
                if bad:
                    raise SpaceError(f"parameters.{pname}.when: {bad} not among {other}'s choices {list(parent.choices)}")
            params.append(param)
        flags = [p.flag for p in params]
        duplicate = {f for f in flags if flags.count(f) > 1}
        if duplicate:
            raise SpaceError(f"parameters: several parameters map to db_bench flag(s) {', '.join(sorted(duplicate))}")
        raw_constraints = data.get("constraints", [])
        if not isinstance(raw_constraints, list):
            raise SpaceError("constraints: expected a list of {name, expr} tables")
        unconditional = [p.name for p in params if not p.when]
        ctx_names = set(Context(cores=1, ram=1).names())
        constraints = tuple(
            constraint_from_dict(i, spec, unconditional, ctx_names) for i, spec in enumerate(raw_constraints)
        )
        return cls(
            name=str(data.get("name", name)),
            parameters=tuple(params),
            constraints=constraints,
            description=str(data.get("description", "")),
        )

    def resolve(self, ctx: Context) -> SearchSpace:
        """Bind bounds to a host/workload context and check that something is feasible."""
        resolved = replace(self, parameters=tuple(p.resolve(ctx) for p in self.parameters), context=ctx)
        resolved._check_feasible()
        return resolved

    def _check_feasible(self, samples: int = 2000) -> None:
        rng = random.Random(0)
        for _ in range(samples):
            params = self.sample(rng)
            if not self.violations(params):
                return
        raise SpaceError(
            f"space {self.name!r}: no configuration satisfies the constraints on this host "
            f"(tried {samples}); e.g. {self.violations(params)[0]}"
        )

    def sample(self, rng: random.Random, fixed: dict[str, Value] | None = None) -> dict[str, Value]:
        """A random configuration (half grid points, half random values), keeping ``fixed`` values."""
        fixed = fixed or {}
        params: dict[str, Value] = {}
        for p in self.parameters:
            if p.active(params):
                if p.name in fixed:
                    params[p.name] = fixed[p.name]
                else:
                    params[p.name] = rng.choice(p.grid()) if rng.random() < 0.5 else p.sample(rng)
        return params

    def repair(self, params: dict[str, Value], seed: int = 0, tries: int = 2000) -> dict[str, Value]:
        """The nearest feasible configuration found by re-drawing only the parameters named by the
        violated constraints (nearest: smallest summed distance along each parameter's range)."""
        ctx = self._ctx()
        involved = {n for c in self.constraints if not c.holds(params, ctx) for n in c.names()}
        keep = {k: v for k, v in params.items() if k not in involved}
        rng = random.Random(seed)
        best, best_gap = None, math.inf
        for _ in range(tries):
            candidate = self.sample(rng, keep)
            if self.violations(candidate):
                continue
            gap = sum(self.parameter(n).gap(candidate[n], params[n]) for n in involved if n in params)
            if gap < best_gap:
                best, best_gap = candidate, gap
        if best is None:
            raise SpaceError(f"space {self.name!r}: found no feasible configuration near {params}")
        return best

    def holding(self, configurations: dict[str, dict[str, Value]]) -> SearchSpace:
        """This space widened to hold each named configuration (``{who: {parameter: value}}``, e.g. the
        reference gains are measured against): a range extended to its value, a categorical given its
        choice, a constraint it breaks relaxed just enough (:meth:`Constraint.relaxed`). One SpaceError,
        naming the field, when that cannot be."""
        ctx, params = self._ctx(), []
        try:
            for p in self.parameters:
                for who, config in configurations.items():
                    if p.name in config and p.active(config):
                        p = p.holding(config[p.name], who)
                params.append(p)
            known = set(ctx.names())
            constraints = tuple(c.relaxed({who: config for who, config in configurations.items()
                                           if c.names() <= known | set(config)}, ctx) for c in self.constraints)
        except SpaceError as exc:
            raise SpaceError(f"space {self.name!r}: {exc}") from None
        return replace(self, parameters=tuple(params), constraints=constraints)

    def without_choice(self, name: str, value: Value) -> SearchSpace:
        """This space with categorical ``name`` no longer offering ``value`` (itself when it has no such
        parameter or choice); SpaceError when that leaves it no choice."""
        params = []
        for p in self.parameters:
            if p.name == name and isinstance(p, CategoricalParam) and value in p.choices:
                choices = tuple(c for c in p.choices if c != value)
                if not choices:
                    raise SpaceError(f"space {self.name!r}: {name} has no choice but {flag_text(value)}")
                grid = None if p.grid_values is None else tuple(v for v in p.grid_values if v != value)
                p = replace(p, choices=choices, grid_values=grid)
            params.append(p)
        return replace(self, parameters=tuple(params))

    def distance(self, a: dict[str, Value], b: dict[str, Value]) -> float:
        """How far apart two configurations are, 0 to 1: the mean over parameters of the gap along each
        one's (log) range, 0/1 for a choice; a parameter active in one only counts as 1."""
        gaps = []
        for p in self.parameters:
            if p.name in a and p.name in b:
                gaps.append(p.gap(a[p.name], b[p.name]))
            elif p.name in a or p.name in b:
                gaps.append(1.0)
        return sum(gaps) / len(gaps) if gaps else 0.0

    # -- using ------------------------------------------------------------------------------------
    def _ctx(self) -> Context:
        if self.context is None:
            raise RuntimeError("SearchSpace.resolve(context) must be called before use")
        return self.context

    def suggest(self, trial: optuna.Trial) -> dict[str, Value]:
        """Ask the trial for each active parameter, in order (define-by-run)."""
        params: dict[str, Value] = {}
        for p in self.parameters:
            if p.active(params):
                params[p.name] = p.suggest(trial)
        return params

    def violations(self, params: dict[str, Value]) -> list[str]:
        """Explanations of the constraints that ``params`` break (empty when feasible)."""
        ctx = self._ctx()
        return [c.explain(params, ctx) for c in self.constraints if not c.holds(params, ctx)]

    def config(self, params: dict[str, Value]) -> Config:
        """A configuration of this space (``{parameter: value}``) as the backends take it."""
        by_name = {p.name: p for p in self.parameters}
        return Config(tuple(Setting.of(by_name[k], v) for k, v in params.items() if k in by_name))

    def config_of(self, flags: Mapping[str, OptionValue]) -> Config:
        """A configuration as a study records what ran (db_bench's flag names, e.g. a baseline's), named
        by this space's parameters where they set those flags (:meth:`Config.of`)."""
        return Config.of(flags, self.parameters)

    def grid(self) -> dict[str, list[Value]]:
        return {p.name: list(p.grid()) for p in self.parameters}

    def feasible_grid_size(self, limit: int = 200_000) -> int:
        """How many grid points satisfy the constraints (the whole grid's size past ``limit``)."""
        grid = self.grid()
        size = math.prod(len(v) for v in grid.values())
        if size > limit:
            return size
        names = list(grid)
        return sum(1 for combo in itertools.product(*grid.values()) if not self.violations(dict(zip(names, combo))))

    def describe(self) -> dict[str, dict[str, str]]:
        """Each parameter's range or choices and each constraint's expression, as a study records them."""
        return {"parameters": {p.name: p.describe() for p in self.parameters},
                "constraints": {c.name: c.expr for c in self.constraints}}

    def parameter(self, name: str) -> AnyParam:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)


def without(space: SearchSpace, held: Mapping[str, float | None]) -> SearchSpace:
    """The resolved ``space`` without the parameters ``held`` names, each held at its value there (None: not
    known here): a constraint that names one reads that value. SpaceError when a parameter kept depends on one."""
    ctx = space._ctx()
    dependent = next((p for p in space.parameters if p.name not in held and set(p.when) & set(held)), None)
    if dependent is not None:
        raise SpaceError(f"space {space.name!r}: {dependent.name} is searched only by a value of "
                         f"{', '.join(sorted(set(dependent.when) & set(held)))}, which would be held")
    return replace(space, parameters=tuple(p for p in space.parameters if p.name not in held),
                   context=replace(ctx, extra={**ctx.extra, **{k: v for k, v in held.items() if v is not None}}))


def preset_names() -> list[str]:
    return files.preset_names(PRESET_DIR)


def load_space(name_or_path: str | Path) -> SearchSpace:
    """A preset by name (see :func:`preset_names`) or a TOML/YAML file, whose constraints are the user's
    (declared: never relaxed to hold the references)."""
    path = files.preset_or_file(name_or_path, PRESET_DIR, "space", SpaceError)
    data = files.load_data_file(path, "space", SpaceError)
    try:
        space = SearchSpace.from_dict(data, name=path.stem)
    except SpaceError as exc:
        raise SpaceError(f"space file {path}: {exc}") from None
    if path.resolve().parent == PRESET_DIR.resolve():
        return space
    return replace(space, constraints=tuple(replace(c, declared=True) for c in space.constraints))
