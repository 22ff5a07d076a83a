"""Tunable parameters: integer, float and categorical, each mapped to a db_bench flag and an OPTIONS key
(from the option catalogue, :mod:`search_spaces.catalogue`, unless the space file gives its own).

A parameter read from a file may carry expressions as bounds (see :mod:`search_spaces.context`);
:meth:`Parameter.resolve` turns them into numbers for one host and workload.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any, Self, SupportsFloat, cast

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from search_spaces.catalogue import by_flag
from search_spaces.context import Context, ExpressionError
from search_spaces.errors import SpaceError

Value = int | float | str


@dataclass(frozen=True)
class Parameter:
    """Fields shared by every parameter kind."""

    name: str
    flag: str
    options_key: str
    doc: str = ""
    when: dict[str, tuple[str, ...]] = field(default_factory=dict)
    grid_values: tuple[Value, ...] | None = None

    def active(self, params: dict[str, Value]) -> bool:
        """Whether this parameter applies given the values chosen so far (its ``when`` condition)."""
        return all(params.get(name) in values for name, values in self.when.items())

    def resolve(self, ctx: Context) -> Self:
        return self

    def distribution(self) -> BaseDistribution:
        raise NotImplementedError

    def contains(self, value: Value) -> bool:
        raise NotImplementedError

    def value_of(self, text: object) -> Value | None:
        """A db_bench flag's value (``text``) as this parameter's, whether or not it holds it; None
        when it is none (not a number for a numeric parameter)."""
        raise NotImplementedError

    def holding(self, value: Value, who: str) -> Self:
        """This parameter widened to hold ``value``, ``who``'s (itself when it holds it already)."""
        raise NotImplementedError

    def suggest(self, trial: optuna.Trial) -> Value:
        raise NotImplementedError

    def grid(self) -> tuple[Value, ...]:
        raise NotImplementedError

    def sample(self, rng: random.Random) -> Value:
        """A random value (log-uniform on log ranges)."""
        raise NotImplementedError

    def gap(self, a: Value, b: Value) -> float:
        """Distance between two values in [0, 1]: along the (log) range, or 0/1 for choices."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class _Numeric(Parameter):
    low: Any = 0
    high: Any = 0
    log: bool = False

    def resolve(self, ctx: Context) -> Self:
        try:
            low, high = ctx.evaluate(self.low), ctx.evaluate(self.high)
        except ExpressionError as exc:
            raise SpaceError(f"parameters.{self.name}: {exc}") from None
        low, high = self._cast(low), self._cast(high)
        if low > high:
            raise SpaceError(
                f"parameters.{self.name}: empty range, low {low} > high {high} on this host"
            )
        if self.log and low <= 0:
            raise SpaceError(f"parameters.{self.name}: a log range needs low > 0, got {low}")
        grid = self.grid_values
        if grid is not None:
            try:
                grid = tuple(dict.fromkeys(self._cast(ctx.evaluate(v)) for v in grid))
            except ExpressionError as exc:
                raise SpaceError(f"parameters.{self.name}.grid: {exc}") from None
            outside = [v for v in grid if not low <= v <= high]
            if outside:
                raise SpaceError(f"parameters.{self.name}.grid: {outside} outside [{low}, {high}] on this host")
        if (info := by_flag(self.flag)) is not None and info.memory:
            if low < 0:
                raise SpaceError(f"parameters.{self.name}: a size in bytes cannot be negative, got low {low}")
            if high > ctx.ram:
                raise SpaceError(f"parameters.{self.name}: high {high:,} bytes is more than this host's RAM "
                                 f"({ctx.ram:,} bytes); bound it, e.g. high = \"budget / 4\"")
        return replace(self, low=low, high=high, grid_values=grid)

    def _cast(self, value: Any) -> int | float:
        raise NotImplementedError

    def position(self, value: float) -> float:
        """Where ``value`` lies in the range, 0 to 1 (on a log scale for a log range)."""
        return self._unit(float(value))

    def _unit(self, value: float) -> float:
        if self.low == self.high:
            return 0.0
        if self.log:
            return (math.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (value - self.low) / (self.high - self.low)

    def gap(self, a: Value, b: Value) -> float:
        return abs(self._unit(float(a)) - self._unit(float(b)))

    def sample(self, rng: random.Random) -> int | float:
        if self.log:
            value = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        else:
            value = rng.uniform(self.low, self.high)
        return min(max(self._cast(value), self.low), self.high)

    def _spaced(self, count: int) -> list[float]:
        if self.low == self.high:
            return [self.low]
        if self.log:
            lo, hi = math.log(self.low), math.log(self.high)
            return [math.exp(lo + (hi - lo) * i / (count - 1)) for i in range(count)]
        return [self.low + (self.high - self.low) * i / (count - 1) for i in range(count)]

    def describe(self) -> str:
        scale = " log" if self.log else ""
        return f"[{self.low}, {self.high}]{scale}"

    def contains(self, value: Value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and self.low <= value <= self.high

    def value_of(self, text: object) -> int | float | None:
        if not isinstance(text, (str, SupportsFloat)):
            return None
        try:
            return self._cast(float(text))
        except (ValueError, OverflowError):
            return None

    def holding(self, value: Value, who: str) -> Self:
        """The range extended to ``value`` (as this parameter's type; on a log range only a value > 0),
        and an explicit grid given it."""
        number = self._cast(value)
        if self.contains(number):
            return self
        if self.log and number <= 0:
            raise SpaceError(f"parameters.{self.name}: a log range cannot hold {who}'s value {number} (it takes "
                             "values > 0 only); make it linear (log = false) or give it low > 0 and that value")
        grid = tuple(sorted({*self.grid_values, number})) if self.grid_values is not None else None
        return replace(self, low=min(self.low, number), high=max(self.high, number), grid_values=grid)


@dataclass(frozen=True)
class IntParam(_Numeric):
    """An integer in [low, high], optionally log-scaled."""

    def _cast(self, value: Any) -> int:
        return int(round(value))

    def distribution(self) -> IntDistribution:
        return IntDistribution(self.low, self.high, log=self.log)

    def suggest(self, trial: optuna.Trial) -> int:
        return trial.suggest_int(self.name, self.low, self.high, log=self.log)

    def grid(self) -> tuple[int, ...]:
        if self.grid_values is not None:
            return tuple(int(v) for v in self.grid_values)
        if self.high - self.low < 5 and not self.log:
            return tuple(range(self.low, self.high + 1))
        return tuple(sorted({int(round(v)) for v in self._spaced(4)}))


@dataclass(frozen=True)
class FloatParam(_Numeric):
    """A float in [low, high], optionally log-scaled."""

    def _cast(self, value: Any) -> float:
        return float(value)

    def distribution(self) -> FloatDistribution:
        return FloatDistribution(self.low, self.high, log=self.log)

    def suggest(self, trial: optuna.Trial) -> float:
        return trial.suggest_float(self.name, self.low, self.high, log=self.log)

    def grid(self) -> tuple[float, ...]:
        if self.grid_values is not None:
            return tuple(float(v) for v in self.grid_values)
        return tuple(self._spaced(4))


@dataclass(frozen=True)
class CategoricalParam(Parameter):
    """One of a fixed list of choices."""

    choices: tuple[Value, ...] = ()

    def resolve(self, ctx: Context) -> Self:
        """The choices (and grid) of a catalogued numeric option as numbers: an expression among them
        (``"3 * write_bytes"``) evaluated for this host and study, equal ones kept once."""
        info = by_flag(self.flag)
        if info is None or info.kind not in ("int", "float"):
            return self

        def numbers(values: tuple[Value, ...], where: str) -> tuple[Value, ...]:
            try:
                evaluated = (ctx.evaluate(v) if isinstance(v, str) else v for v in values)
                return tuple(dict.fromkeys(int(round(v)) if info.kind == "int" else float(v) for v in evaluated))
            except ExpressionError as exc:
                raise SpaceError(f"parameters.{self.name}.{where}: {exc}") from None

        grid = None if self.grid_values is None else numbers(self.grid_values, "grid")
        return replace(self, choices=numbers(self.choices, "choices"), grid_values=grid)

    def distribution(self) -> CategoricalDistribution:
        return CategoricalDistribution(self.choices)

    def contains(self, value: Value) -> bool:
        return value in self.choices

    def value_of(self, text: object) -> Value:
        """The choice db_bench's ``text`` names (a bool as true or false), else the text itself."""
        return next((c for c in self.choices if str(text) in (str(c), flag_text(c))), str(text))

    def holding(self, value: Value, who: str) -> Self:
        """The choices, and an explicit grid, given ``value`` when they lack it."""
        if value in self.choices:
            return self
        grid = (*self.grid_values, value) if self.grid_values is not None else None
        return replace(self, choices=(*self.choices, value), grid_values=grid)

    def suggest(self, trial: optuna.Trial) -> Value:
        return cast(Value, trial.suggest_categorical(self.name, self.choices))  # one of the choices

    def grid(self) -> tuple[Value, ...]:
        return tuple(self.grid_values) if self.grid_values is not None else self.choices

    def sample(self, rng: random.Random) -> Value:
        return rng.choice(self.choices)

    def gap(self, a: Value, b: Value) -> float:
        return 0.0 if a == b else 1.0

    def describe(self) -> str:
        return "{" + ", ".join(str(c) for c in self.choices) + "}"


def flag_text(value: Value) -> str:
    """A value as db_bench's flag takes it (a bool as true or false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


# what a space holds: isinstance(p, CategoricalParam) tells the kinds apart
AnyParam = IntParam | FloatParam | CategoricalParam
_KINDS: dict[str, type[Parameter]] = {"int": IntParam, "float": FloatParam, "categorical": CategoricalParam}
_COMMON = {"type", "flag", "options_key", "doc", "when", "grid"}
_OPTIONS_KEY = re.compile(r"^(DBOptions|CFOptions|TableOptions/BlockBasedTable)\.[A-Za-z_][\w.]*$")
_NUMERIC = _COMMON | {"low", "high", "log"}
_ALLOWED = {"int": _NUMERIC, "float": _NUMERIC, "categorical": _COMMON | {"choices"}}


def _bound(where: str, value: Any) -> int | float | str:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise SpaceError(f"{where}: expected a number or an expression string, got {value!r}")
    return value


def parameter_from_dict(name: str, spec: Any) -> AnyParam:
    """Build one parameter from its file entry, naming the field on any error."""
    where = f"parameters.{name}"
    if not isinstance(spec, dict):
        raise SpaceError(f"{where}: expected a table of fields, got {type(spec).__name__}")
    kind = spec.get("type")
    if kind not in _KINDS:
        raise SpaceError(f"{where}.type: expected one of {', '.join(_KINDS)}, got {kind!r}")
    unknown = sorted(set(spec) - _ALLOWED[kind])
    if unknown:
        raise SpaceError(f"{where}: unknown field(s) {', '.join(unknown)} for type {kind}")
    for text_field in ("flag", "options_key", "doc"):
        if text_field in spec and not isinstance(spec[text_field], str):
            raise SpaceError(f"{where}.{text_field}: expected a string")
    known = by_flag(spec.get("flag", name))  # a catalogued option's key and doc are the catalogue's
    spec = {"options_key": known.options_key, "doc": known.doc, **spec} if known and known.options_key else spec
    if "options_key" not in spec:
        raise SpaceError(f"{where}.options_key: missing, and {spec.get('flag', name)!r} is not in the option "
                         "catalogue (search_spaces/catalogue.toml); give one, e.g. 'CFOptions.write_buffer_size'")
    if not _OPTIONS_KEY.match(spec["options_key"]):
        raise SpaceError(f"{where}.options_key: {spec['options_key']!r} is not 'DBOptions.<key>', "
                         "'CFOptions.<key>' or 'TableOptions/BlockBasedTable.<key>'")
    flag = spec.get("flag", name)
    if not flag.replace("_", "").isalnum():
        raise SpaceError(f"{where}.flag: {flag!r} is not a db_bench flag name")
    when: dict[str, tuple[str, ...]] = {}
    raw_when = spec.get("when", {})
    if not isinstance(raw_when, dict):
        raise SpaceError(f"{where}.when: expected a table such as {{compression_type = 'zstd'}}")
    for other, values in raw_when.items():
        when[other] = tuple(values) if isinstance(values, list) else (values,)
    grid = spec.get("grid")
    if grid is not None and (not isinstance(grid, list) or not grid):
        raise SpaceError(f"{where}.grid: expected a non-empty list of values")
    common = dict(
        name=name,
        flag=flag,
        options_key=spec["options_key"],
        doc=spec.get("doc", ""),
        when=when,
        grid_values=tuple(grid) if grid is not None else None,
    )
    if kind == "categorical":
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices:
            raise SpaceError(f"{where}.choices: expected a non-empty list")
        if len(set(choices)) != len(choices):
            raise SpaceError(f"{where}.choices: duplicate values")
        return CategoricalParam(choices=tuple(choices), **common)
    for bound in ("low", "high"):
        if bound not in spec:
            raise SpaceError(f"{where}.{bound}: missing")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise SpaceError(f"{where}.log: expected true or false")
    numeric = IntParam if kind == "int" else FloatParam
    return numeric(
        low=_bound(f"{where}.low", spec["low"]),
        high=_bound(f"{where}.high", spec["high"]),
        log=log,
        **common,
    )
