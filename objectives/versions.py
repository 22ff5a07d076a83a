"""What "db_bench's defaults" means on every RocksDB version.

Some of db_bench's own defaults changed between the versions the tuner builds (7.8 to 9.11, read in
tools/db_bench_tool.cc of each), and others will (10.9 makes HyperClockCache the default block
cache). Every run passes these flags explicitly, pinned to 7.8.3's values, so that
``rocksdb-default`` and every configuration the tuner compares mean the same on every version. A
workload or a tuned parameter that sets one of them wins over the pin. Flags a build does not know
are not passed (it cannot have changed their default).
"""

from __future__ import annotations

from typing import Iterable

from objectives.workloads import Flag

MiB = 1024**2

# flag -> (pinned value, what changed)
PINNED: dict[str, tuple[Flag, str]] = {
    "cache_size": (8 * MiB, "8 MiB until 8.2, 32 MiB from 8.3"),
    "cache_type": ("lru_cache", "LRU up to 10.8, HyperClockCache from 10.9"),
    "compaction_readahead_size": (0, "0 in 7.8, 2 MiB (the Options default) in 9.x"),
    "format_version": (5, "5 in 7.8, 6 in 9.x (whose SST files RocksDB before 8.6 cannot read)"),
    "optimize_filters_for_memory": (False, "false in 7.8, true in 9.x"),
    "level_compaction_dynamic_level_bytes": (False, "false in db_bench of every version; the library "
                                             "default is true from 8.4"),
}


def pinned_defaults(known: Iterable[str]) -> dict[str, Flag]:
    """The pinned flags a db_bench whose --help lists ``known`` accepts."""
    known = set(known)
    return {flag: value for flag, (value, _) in PINNED.items() if flag in known}


def describe() -> dict[str, dict[str, object]]:
    """The pins as recorded in a study's summary."""
    return {flag: {"value": value, "changed": why} for flag, (value, why) in PINNED.items()}
