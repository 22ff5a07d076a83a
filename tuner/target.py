"""The deployment a study tunes for: its data, its memory, and the options its DB runs with today.

``--target-data`` (raw bytes of the production DB), ``--target-memory`` (what RocksDB may use there,
page cache included) and ``--base-options OPTIONS`` (the user's current OPTIONS file; without it,
RocksDB's defaults). Trials keep the target's LSM shape: its file sizes, level sizes, L0 triggers
and level multiplier as the target has them, never scaled down with the trial's data; every other
option the base sets and db_bench can set stays as the user has it, and the options the space
searches start from the user's values (the ``current`` baseline).

Without a target a study tunes for what its workload assumes (its own data size and shape); the
presets of load workloads shrink file and level sizes so that a small load still builds a multi-level
LSM tree, and :func:`scaled` lists each such option against RocksDB's value, so the summary says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from search_spaces import MiB
from search_spaces.catalogue import catalogue
from search_spaces.config import OptionValue
from tuner import options_file
from tuner.fmt import fmt_bytes
from tuner.model import UsageError

# The least memory a trial is held to: a trial whose share of the target's memory:data ratio is smaller
# runs within this (tuner.engine._prepare.memory_plan).
MIN_MEMORY_LIMIT = 64 * MiB
# The least --target-memory a study or a measurement takes: a run at the target is held to it as given
# (a 64 MiB target's confirmation runs within 32 MiB in tests/test_target.py); 1 KiB had every trial held
# to MIN_MEMORY_LIMIT in silence and every run at the target killed for memory.
LEAST_TARGET_MEMORY = 32 * MiB

# The LSM shape as db_bench flags: flag -> (OPTIONS key, RocksDB's default), from the option
# catalogue's role = "shape" entries (search_spaces/catalogue.toml says why dynamic level bytes is there).
SHAPE: dict[str, tuple[str, OptionValue]] = {o.flag: (o.options_key, o.default) for o in catalogue().values()
                                      if o.role == "shape" and o.options_key and o.default is not None}
# Other options of a base OPTIONS file that db_bench can set: db_bench flag -> OPTIONS key, every other
# catalogued option with a key. The rest of the file (comparators, paths, column families, ...) is not
# carried into trials; the summary says so.
OTHER: dict[str, str] = {o.flag: o.options_key for o in catalogue().values() if o.role != "shape" and o.options_key}
# Why a load workload's preset shrinks a shape option (their TOML files say the same).
_WHY_SCALED = "the workload scales file and level sizes with its data so that a small load builds a multi-level LSM"


@dataclass(frozen=True)
class Target:
    """What the study tunes for. ``assumed``: no --target-data was given; the workload's own data."""

    data: int
    memory: int | None
    shape: dict[str, OptionValue]
    base: dict[str, OptionValue] = field(default_factory=dict)  # other options of --base-options, as db_bench flags
    source: str = "RocksDB's defaults"
    assumed: bool = False

    def levels(self, data: int | None = None) -> int:
        """Levels below L0 a DB of ``data`` raw bytes (the target's by default) fills with this shape."""
        return lsm_levels(data if data is not None else self.data, self.shape)

    def to_dict(self) -> dict[str, Any]:
        return {"data_bytes": self.data, "memory_bytes": self.memory, "shape": self.shape, "base": self.base,
                "source": self.source, "assumed": self.assumed, "levels": self.levels()}


def lsm_levels(data: int, shape: dict[str, OptionValue]) -> int:
    """Levels below L0 that ``data`` bytes fill with static level sizes: L1 holds
    max_bytes_for_level_base, each next level max_bytes_for_level_multiplier times more (raw bytes,
    before compression: an upper bound)."""
    base = float(shape.get("max_bytes_for_level_base", SHAPE["max_bytes_for_level_base"][1]))
    multiplier = float(shape.get("max_bytes_for_level_multiplier", SHAPE["max_bytes_for_level_multiplier"][1]))
    if data <= base or multiplier <= 1:
        return 1
    return 1 + math.ceil(math.log(data / base, multiplier) - 1e-9)


def load_base_options(path: Path) -> tuple[dict[str, OptionValue], dict[str, OptionValue]]:
    """(the LSM shape, every other option db_bench can set) of an OPTIONS file, as db_bench flags; the
    shape's missing keys at RocksDB's defaults."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UsageError(f"--base-options {path}: cannot read it: {exc.strerror}") from None
    if "[CFOptions" not in text:
        raise UsageError(f"--base-options {path}: not a RocksDB OPTIONS file (no [CFOptions ...] section)")
    sections = options_file.parse_options(text)
    shape: dict[str, OptionValue] = {}
    for flag, (key, default) in SHAPE.items():
        value = _flag_value(key, options_file.lookup(sections, key))
        shape[flag] = default if value is None else value
    other: dict[str, OptionValue] = {}
    for flag, key in OTHER.items():
        value = _flag_value(key, options_file.lookup(sections, key))
        if value is not None:
            other[flag] = value
    return shape, other


def _flag_value(key: str, text: str | None) -> OptionValue | None:
    value = options_file.decode(key, text)
    if isinstance(value, str):
        if value in ("true", "false"):
            return value == "true"
        try:
            number = float(value)
        except ValueError:  # a name (e.g. lz4) is a flag value; a struct or a list is not: not carried over
            return value if value.replace("_", "").isalnum() else None
        return int(number) if number.is_integer() else number
    return value


def check_memory(memory: int | None, flag: str = "--target-memory") -> None:
    """UsageError naming ``flag`` when ``memory`` is below :data:`LEAST_TARGET_MEMORY` (tune's and
    measure's --target-memory, refused before any run)."""
    if memory is not None and memory < LEAST_TARGET_MEMORY:
        raise UsageError(f"{flag}: {fmt_bytes(memory)} is below the least a study or a measurement runs in "
                         f"({fmt_bytes(LEAST_TARGET_MEMORY)})")


def make_target(data: int | None, memory: int | None, base_options: Path | None, workload_data: int,
                ram: int, defaults: dict[str, OptionValue] | None = None) -> Target:
    """The target of a request: --target-data/--target-memory/--base-options, or, with no
    --target-data, the workload's own data (``assumed``); without --base-options its shape is
    ``defaults``' (what every run starts from: the measuring version's library defaults, whose level
    sizes are dynamic from 8.4), else the catalogue's."""
    if data is not None and data <= 0:
        raise UsageError(f"--target-data: must be > 0 bytes, got {data}")
    if memory is not None and not 0 < memory <= ram:
        raise UsageError(f"--target-memory: {memory / MiB:,.0f} MiB; this machine has {ram / MiB:,.0f} MiB "
                         "(a trial runs within the target's memory: more than 0, at most the machine's)")
    if memory is not None and data is None:
        raise UsageError("--target-memory: give the data it serves too (--target-data SIZE)")
    shape: dict[str, OptionValue] = {f: (defaults or {}).get(f, d) for f, (_, d) in SHAPE.items()}
    base: dict[str, OptionValue] = {}
    source = "RocksDB's defaults"  # of the version that measures, when ``defaults`` holds them
    if base_options is not None:
        shape, base = load_base_options(base_options)
        source = f"the OPTIONS file {base_options}"
    return Target(data=data if data is not None else workload_data, memory=memory, shape=shape, base=base,
                  source=source, assumed=data is None)


def shaped(flags: dict[str, OptionValue], target: Target, searched: set[str]) -> dict[str, OptionValue]:
    """A workload's flags as a target runs them: in the target's shape, with the base options the space
    does not search; a RocksDB option the preset sets (S0 scales its memtables with its data to imitate
    its study) gives way to the target's own value, or to RocksDB's default, as the target runs it."""
    workload = {f: v for f, v in flags.items() if f not in OTHER}
    return {**workload, **{f: v for f, v in target.base.items() if f not in searched}, **target.shape}


def scaled(flags: dict[str, OptionValue], target: Target) -> list[dict[str, Any]]:
    """The LSM shape options a workload's trials run with that differ from the target's, with why."""
    out = []
    for flag, target_value in target.shape.items():
        if flag in flags and str(flags[flag]) != str(target_value):
            out.append({"option": flag, "trial": flags[flag], "target": target_value, "why": _WHY_SCALED})
    return out
