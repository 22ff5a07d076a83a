"""Named configurations beside the tuned ones: RocksDB's tools/benchmark.sh style, as a preset
(presets/configurations/benchmark-sh.toml), scaled to the host and the data like a workload's flags,
whichever backend measures it. (What each tuned flag runs with by default is db_bench's:
objectives.defaults.db_bench_defaults.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from objectives.flags import Flag, FlagError, check_flags, evaluate_flags
from search_spaces import Context, files

BENCHMARK_SH = Path(__file__).with_name("presets") / "configurations" / "benchmark-sh.toml"
def benchmark_sh(ctx: Context) -> tuple[dict[str, Flag], str]:
    """The benchmark.sh-style flags for this host and data set, and their description."""
    data: Any = files.load_data_file(BENCHMARK_SH, "benchmark.sh configuration", FlagError)
    try:
        flags = evaluate_flags(check_flags(data.get("flags", {}), "flags"), ctx, "flags")
    except FlagError as exc:
        raise FlagError(f"{BENCHMARK_SH}: {exc}") from None
    return flags, str(data.get("doc", ""))
