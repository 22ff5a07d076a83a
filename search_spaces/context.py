"""Host facts and the safe arithmetic used to scale ranges, flags and baselines to them.

Bounds in a space file, flag values in a workload file and values in a hand-found baseline may be
numbers or expressions such as ``"4 * cores"``, ``"min(512 * MiB, data / 2)"`` or ``"ram / 4"``.
Expressions are parsed with :mod:`ast` and only arithmetic on the names below is allowed.
"""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

KiB = 1024
MiB = 1024**2
GiB = 1024**3

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {"min": min, "max": max, "round": round, "int": int}
# names only some studies give (Context.extra), and which
_ONLY = {"write_bytes": "a study at a rate's (tune --rate OPS, spaces show --rate OPS)"}


class ExpressionError(ValueError):
    """An expression uses something other than numbers, known names and arithmetic."""


def host_cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def host_ram_bytes() -> int:
    """Physical memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def host_cpu() -> str:
    """The CPU's model name as /proc/cpuinfo gives it ("" where it gives none)."""
    try:
        with open("/proc/cpuinfo") as info:
            return next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        return ""


@dataclass(frozen=True)
class Context:
    """What ranges scale with: host cores and RAM, the workload's data size, the memory budget."""

    cores: int
    ram: int
    data: int = 0
    scale: float = 1.0
    budget: int = 0
    extra: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of_host(cls) -> Context:
        return cls(cores=host_cores(), ram=host_ram_bytes())

    def names(self) -> dict[str, float]:
        return {
            "cores": self.cores,
            "ram": self.ram,
            "data": self.data,
            "scale": self.scale,
            "budget": self.budget,
            "KiB": KiB,
            "MiB": MiB,
            "GiB": GiB,
            **self.extra,
        }

    def evaluate(self, value: float | str) -> float:
        """Return ``value`` itself unless it is a string expression; then its number."""
        if not isinstance(value, str):
            return value
        return evaluate(value, self.names())


def evaluate(text: str, names: Mapping[str, object]) -> float:
    """Evaluate arithmetic (and comparisons) over ``names``; raise ExpressionError otherwise."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {text!r}") from exc

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
            node.value, bool
        ):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                only = f"; {node.id} is {_ONLY[node.id]}" if node.id in _ONLY else ""
                raise ExpressionError(
                    f"unknown name {node.id!r} in {text!r} (known: {', '.join(sorted(names))}){only}"
                )
            value = names[node.id]
            if not isinstance(value, (int, float)):
                raise ExpressionError(f"{node.id!r} in {text!r} is {value!r}, not a number")
            return value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            try:
                return _BINARY[type(node.op)](walk(node.left), walk(node.right))
            except ZeroDivisionError as exc:
                raise ExpressionError(f"division by zero in {text!r}") from exc
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            left = walk(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = walk(right_node)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            values = [walk(v) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
            and not node.keywords
        ):
            return _FUNCTIONS[node.func.id](*(walk(arg) for arg in node.args))
        raise ExpressionError(f"only numbers, names and arithmetic are allowed in {text!r}")

    return walk(tree)
