"""The option catalogue (``catalogue.toml``): for each RocksDB option the tool knows, its db_bench
flag, OPTIONS key, rocksdict call, kind, unit, role and doc, read by spaces, memory checks, the
target, exports and reports."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from search_spaces.errors import SpaceError

FILE = Path(__file__).with_name("catalogue.toml")
KINDS = ("int", "float", "bool", "choice")
ROLES = ("option", "shape")
HOLDS = ("memtable", "memtables", "cache")  # what an option counts of the memory a configuration holds
SERVES = ("reads",)  # what an option's benefit is to, where it is one kind of request's alone
_FIELDS = {"flag", "options_key", "rocksdict", "kind", "unit", "memory", "holds", "role", "serves", "default", "doc"}
_ROCKSDICT = re.compile(r"^(options|table)\.(set_\w+)\((.*)\)$")


@dataclass(frozen=True)
class OptionInfo:
    """One catalogued option (see ``catalogue.toml`` for the fields)."""

    name: str
    flag: str
    kind: str
    unit: str
    doc: str
    options_key: str | None = None
    rocksdict: str | None = None
    memory: bool = False
    holds: str | None = None  # one of HOLDS
    role: str = "option"
    serves: str | None = None  # one of SERVES: a study that offers none of those requests holds it at the defaults'
    default: int | float | bool | None = None

    def rocksdict_call(self) -> tuple[str, str, str]:
        """(object, method, argument template) of the rocksdict call that sets it."""
        match = _ROCKSDICT.match(self.rocksdict or "")
        if match is None:
            raise SpaceError(f"{FILE.name}: {self.name} has no rocksdict call")
        return match[1], match[2], match[3]


@cache
def catalogue() -> dict[str, OptionInfo]:
    """Every catalogued option by name."""
    out = {}
    for name, spec in tomllib.loads(FILE.read_text()).items():
        unknown = set(spec) - _FIELDS
        if (unknown or spec.get("kind") not in KINDS or spec.get("role", "option") not in ROLES
                or spec.get("holds", HOLDS[0]) not in HOLDS or spec.get("serves", SERVES[0]) not in SERVES):
            raise SpaceError(f"{FILE.name}: {name}: bad entry (unknown fields {sorted(unknown)}, kind "
                             f"{spec.get('kind')!r}, role {spec.get('role')!r}, holds {spec.get('holds')!r}, "
                             f"serves {spec.get('serves')!r})")
        out[name] = OptionInfo(name=name, flag=spec.get("flag", name), kind=spec["kind"], unit=spec["unit"],
                               doc=spec["doc"], options_key=spec.get("options_key"), rocksdict=spec.get("rocksdict"),
                               memory=spec.get("memory", False), holds=spec.get("holds"), role=spec.get("role", "option"),
                               serves=spec.get("serves"), default=spec.get("default"))
    held = sorted(o.holds for o in out.values() if o.holds is not None)
    if held != sorted(HOLDS):
        raise SpaceError(f"{FILE.name}: holds: each of {', '.join(HOLDS)} must be one option's, got {held}")
    return out


def by_flag(flag: str) -> OptionInfo | None:
    """The catalogued option set by db_bench's ``--flag``, if any."""
    return next((o for o in catalogue().values() if o.flag == flag), None)


def holding(values: Mapping[str, object]) -> dict[str, int] | None:
    """What a configuration (``{option: value}``, by catalogue name) holds in memory, by each option's
    ``holds``: ``{"memtable": bytes of each, "memtables": how many, "cache": bytes}`` (negative values as 0);
    None when it does not give one of them as a number."""
    held = {}
    for info in catalogue().values():
        if info.holds is not None:
            try:
                held[info.holds] = max(0, int(float(str(values[info.name]))))
            except (KeyError, ValueError):
                return None
    return held


def held_bytes(held: Mapping[str, int]) -> int:
    """The bytes :func:`holding`'s parts add up to: memtable x memtables + cache."""
    return held["memtable"] * held["memtables"] + held["cache"]
