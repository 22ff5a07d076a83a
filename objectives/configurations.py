"""Named configurations beside the tuned ones: db_bench's own defaults of the tuned flags, and RocksDB's
tools/benchmark.sh style, as a preset (presets/configurations/benchmark-sh.toml), scaled to the host
and the data like a workload's flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from objectives.dbbench import DbBench
from objectives.versions import PINNED
from objectives.workloads import Flag, WorkloadError, check_flags, evaluate_flags
from search_spaces import Context, files

BENCHMARK_SH = Path(__file__).with_name("presets") / "configurations" / "benchmark-sh.toml"
# db_bench's --compression_level defaults to 32767, "the library's default level": zstd's is 3.
LIBRARY_DEFAULT_LEVEL, ZSTD_DEFAULT_LEVEL = "32767", "3"


def db_bench_defaults(flags: list[str], db: DbBench) -> dict[str, str]:
    """What db_bench runs each of ``flags`` with when it is not passed: its --help default, or the
    value every run pins (objectives/versions.py), the library's default compression level as zstd's."""
    defaults = {f: db.default(f) for f in flags if db.default(f) is not None}
    defaults.update({f: v for f, (v, _) in PINNED.items() if f in defaults})
    if defaults.get("compression_level") == LIBRARY_DEFAULT_LEVEL:
        defaults["compression_level"] = ZSTD_DEFAULT_LEVEL
    return {f: str(v) for f, v in defaults.items()}


def benchmark_sh(ctx: Context) -> tuple[dict[str, Flag], str]:
    """The benchmark.sh-style flags for this host and data set, and their description."""
    data: Any = files.load_data_file(BENCHMARK_SH, "benchmark.sh configuration", WorkloadError)
    try:
        flags = evaluate_flags(check_flags(data.get("flags", {}), "flags"), ctx, "flags")
    except WorkloadError as exc:
        raise WorkloadError(f"{BENCHMARK_SH}: {exc}") from None
    return flags, str(data.get("doc", ""))
