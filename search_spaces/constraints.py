"""Constraints checked on a configuration before it is run, never discovered by a crash."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, replace

from search_spaces.context import Context, ExpressionError, GiB, MiB, evaluate
from search_spaces.errors import SpaceError

_BELOW, _ABOVE = (ast.Lt, ast.LtE), (ast.Gt, ast.GtE)
_UNITS = {"KiB", "MiB", "GiB"}  # names of constants, not values a configuration or host gives


@dataclass(frozen=True)
class Constraint:
    """A named comparison over parameter values and context names, e.g.
    ``write_buffer_size * max_write_buffer_number + cache_size <= budget``."""

    name: str
    expr: str
    doc: str = ""
    declared: bool = False  # the user's (a space file of theirs, not a preset): never relaxed, a guard on the answer

    def names(self) -> set[str]:
        return {node.id for node in ast.walk(ast.parse(self.expr, mode="eval")) if isinstance(node, ast.Name)}

    def holds(self, params: Mapping[str, object], ctx: Context) -> bool:
        return bool(evaluate(self.expr, {**ctx.names(), **params}))

    def explain(self, params: Mapping[str, object], ctx: Context) -> str:
        """The constraint with the values it saw, for a rejection message."""
        shown = {n: params[n] for n in sorted(self.names()) if n in params}
        shown.update({n: ctx.names()[n] for n in sorted(self.names()) if n in ctx.names() and n not in _UNITS})
        values = ", ".join(f"{k}={v}" for k, v in shown.items())
        return f"{self.name}: {self.expr} is false for {values}"

    def relaxed(self, configurations: Mapping[str, Mapping[str, object]], ctx: Context) -> Constraint:
        """This constraint relaxed just enough that each named configuration meets it (itself when all
        do): ``a <= b`` or ``a < b``, which they break by up to ``d`` (the largest ``a - b`` among them),
        becomes ``a - b <= d``; ``a >= b`` or ``a > b`` becomes ``a - b >= -d``. A constraint of another
        form cannot be relaxed: SpaceError. A constraint the user ``declared`` is never relaxed: what
        breaks it is compared with, not an option."""
        broken = [who for who, params in configurations.items() if not self.holds(params, ctx)]
        if not broken or self.declared:
            return self
        tree = ast.parse(self.expr, mode="eval").body
        if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], _BELOW + _ABOVE)):
            raise SpaceError(f"constraints.{self.name}: {self.expr!r} cannot be relaxed to hold "
                             f"{' and '.join(broken)}'s values (only a single <, <=, > or >= comparison can be); "
                             "widen it in the space file")
        difference = f"{_side(self.expr, tree.left, False)} - {_side(self.expr, tree.comparators[0], True)}"
        gaps = [evaluate(difference, {**ctx.names(), **configurations[who]}) for who in broken]
        if isinstance(tree.ops[0], _BELOW):
            return replace(self, expr=f"{difference} <= {_literal(max(gaps))}")
        return replace(self, expr=f"{difference} >= {_literal(min(gaps))}")


def _side(expr: str, node: ast.expr, right: bool) -> str:
    """A side of a comparison as text, in parentheses where a subtraction would split it."""
    text = ast.get_source_segment(expr, node) or ast.unparse(node)
    bare = isinstance(node, (ast.Name, ast.Constant, ast.Call)) or not (
        right or isinstance(node, (ast.BoolOp, ast.Compare)))
    return text if bare else f"({text})"


def _literal(number: float) -> str:
    """``number`` as expression text that evaluates to exactly it: whole GiB or MiB in those units."""
    if not float(number).is_integer():
        return repr(float(number))
    whole = int(number)
    units = (f"{whole // size} * {name}" for name, size in (("GiB", GiB), ("MiB", MiB)) if whole and not whole % size)
    return next(units, str(whole))


def constraint_from_dict(index: int, spec: object, parameter_names: list[str], ctx_names: set[str]) -> Constraint:
    """Build one constraint from its file entry, checking it only names known parameters."""
    where = f"constraints[{index}]"
    if not isinstance(spec, dict):
        raise SpaceError(f"{where}: expected a table with 'name' and 'expr'")
    unknown = sorted(set(spec) - {"name", "expr", "doc"})
    if unknown:
        raise SpaceError(f"{where}: unknown field(s) {', '.join(unknown)}")
    expr = spec.get("expr")
    if not isinstance(expr, str):
        raise SpaceError(f"{where}.expr: expected an expression string")
    constraint = Constraint(name=str(spec.get("name", f"constraint{index}")), expr=expr, doc=str(spec.get("doc", "")))
    try:
        names = constraint.names()
        trial_values = {n: 1 for n in parameter_names}
        evaluate(expr, {**{n: 1 for n in ctx_names}, **trial_values})
    except (SyntaxError, ExpressionError) as exc:
        raise SpaceError(f"{where}.expr: {exc}") from None
    if not names & set(parameter_names):
        raise SpaceError(f"{where}.expr: {expr!r} names no parameter of the space")
    return constraint
