"""Configurations as flags: ``name = value`` in db_bench's names, the form the study's records keep, --baseline
files, starts (objectives.configurations) and workload files give, and a backend renders a configuration from
(search_spaces.config.Config.flags). Checked here; each backend says what it takes of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from search_spaces.context import Context, ExpressionError

# Flags the runner owns: a workload may not set them.
RESERVED_FLAGS = frozenset(
    {"db", "benchmarks", "use_existing_db", "statistics", "histogram", "progress_reports", "seed", "options_file",
     "report_file", "report_interval_seconds"}
)
# Flags that make db_bench read or write paths outside the trial's own DB directory (which is the
# only place the tuner cleans up), or load more flags from a file: never from a workload or space.
OUTSIDE_FLAGS = frozenset(
    {"wal_dir", "flagfile", "backup_dir", "restore_dir", "secondary_path", "read_cache_path", "trace_file",
     "block_cache_trace_file", "simulate_hybrid_fs_file", "env_uri", "fs_uri", "hdfs", "secondary_cache_uri"}
)
Flag = bool | int | float | str


class FlagError(ValueError):
    """Flags that cannot be taken; the message names the field or flag."""


def format_flag(name: str, value: Flag) -> str:
    """``--name=value`` as db_bench takes it (booleans as true/false)."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    return f"--{name}={value}"


@dataclass(frozen=True)
class Baseline:
    """A reference configuration measured beside the tuned ones: db_bench flags on top of the workload's."""

    name: str
    flags: dict[str, Any]
    doc: str = ""


def check_flags(flags: Any, where: str) -> dict[str, Any]:
    if not isinstance(flags, dict):
        raise FlagError(f"{where}: expected a table of db_bench flag = value")
    for key, value in flags.items():
        if not key.replace("_", "").isalnum():
            raise FlagError(f"{where}.{key}: not a db_bench flag name")
        if key in RESERVED_FLAGS:
            raise FlagError(f"{where}.{key}: set by the tuner itself, a workload may not set it")
        if key in OUTSIDE_FLAGS:
            raise FlagError(f"{where}.{key}: names a path outside the trial's DB directory, which the "
                                "tuner could not clean up; not allowed")
        if isinstance(value, dict):
            if set(value) != {"expr"} or not isinstance(value["expr"], str):
                raise FlagError(f"{where}.{key}: a table value must be {{expr = \"...\"}}")
        elif not isinstance(value, (bool, int, float, str)):
            raise FlagError(f"{where}.{key}: expected a number, bool, string or {{expr = ...}}")
        elif isinstance(value, str) and any(ch in value for ch in "\n\0"):
            raise FlagError(f"{where}.{key}: value has a newline or NUL")
    return dict(flags)


def evaluate_flags(flags: dict[str, Any], ctx: Context, where: str) -> dict[str, Flag]:
    out: dict[str, Flag] = {}
    for key, value in flags.items():
        if isinstance(value, dict):
            try:
                number = ctx.evaluate(value["expr"])
            except ExpressionError as exc:
                raise FlagError(f"{where}.{key}: {exc}") from None
            value = int(round(number)) if abs(number - round(number)) < 1e-9 or abs(number) >= 1000 else number
        out[key] = value
    return out
