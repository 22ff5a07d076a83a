"""Named configurations beside the tuned ones: the defaults of the tuned flags every run starts from, and RocksDB's
tools/benchmark.sh style, as a preset (presets/configurations/benchmark-sh.toml), scaled to the host
and the data like a workload's flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from objectives.dbbench import DbBench
from objectives.defaults import Defaults
from objectives.workloads import Flag, WorkloadError, check_flags, evaluate_flags
from search_spaces import Context, files

BENCHMARK_SH = Path(__file__).with_name("presets") / "configurations" / "benchmark-sh.toml"
# db_bench's --compression_level defaults to 32767, "the library's default level": zstd's is 3.
LIBRARY_DEFAULT_LEVEL, ZSTD_DEFAULT_LEVEL = "32767", "3"
# db_bench's --bloom_bits defaults to -1, "the library's default": no filter, which 0 also means.
LIBRARY_DEFAULT_BLOOM, NO_FILTER = "-1", "0"


def db_bench_defaults(flags: list[str], db: DbBench, base: Defaults) -> dict[str, str]:
    """What each of ``flags`` runs with when no configuration sets it: the value every run starts from
    (``base``, objectives/defaults.py), else db_bench's --help default; the library's default
    compression level as zstd's, and its default filter (none) as 0 bits per key."""
    defaults: dict[str, object] = {f: db.default(f) for f in flags if db.default(f) is not None}
    defaults.update({f: v for f, v in base.flags.items() if f in flags})
    if defaults.get("compression_level") == LIBRARY_DEFAULT_LEVEL:
        defaults["compression_level"] = ZSTD_DEFAULT_LEVEL
    if defaults.get("bloom_bits") == LIBRARY_DEFAULT_BLOOM:
        defaults["bloom_bits"] = NO_FILTER
    return {f: str(v) for f, v in defaults.items()}


def benchmark_sh(ctx: Context) -> tuple[dict[str, Flag], str]:
    """The benchmark.sh-style flags for this host and data set, and their description."""
    data: Any = files.load_data_file(BENCHMARK_SH, "benchmark.sh configuration", WorkloadError)
    try:
        flags = evaluate_flags(check_flags(data.get("flags", {}), "flags"), ctx, "flags")
    except WorkloadError as exc:
        raise WorkloadError(f"{BENCHMARK_SH}: {exc}") from None
    return flags, str(data.get("doc", ""))
