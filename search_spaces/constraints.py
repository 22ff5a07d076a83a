"""Constraints checked on a configuration before it is run, never discovered by a crash."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from search_spaces.context import Context, ExpressionError, evaluate
from search_spaces.errors import SpaceError


@dataclass(frozen=True)
class Constraint:
    """A named comparison over parameter values and context names, e.g.
    ``write_buffer_size * max_write_buffer_number + cache_size <= budget``."""

    name: str
    expr: str
    doc: str = ""

    def names(self) -> set[str]:
        return {node.id for node in ast.walk(ast.parse(self.expr, mode="eval")) if isinstance(node, ast.Name)}

    def holds(self, params: dict[str, object], ctx: Context) -> bool:
        return bool(evaluate(self.expr, {**ctx.names(), **params}))

    def explain(self, params: dict[str, object], ctx: Context) -> str:
        """The constraint with the values it saw, for a rejection message."""
        shown = {n: params[n] for n in sorted(self.names()) if n in params}
        shown.update({n: ctx.names()[n] for n in sorted(self.names()) if n in ctx.names()})
        values = ", ".join(f"{k}={v}" for k, v in shown.items())
        return f"{self.name}: {self.expr} is false for {values}"


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
