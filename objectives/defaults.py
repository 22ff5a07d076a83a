"""What every db_bench run starts from, beneath the workload's flags and the searched ones.

``library`` (the default): what an application that opens a DB with default options gets from the
RocksDB version that measures. db_bench's own defaults are not all the library's (dynamic level sizes
stay off in db_bench while the library turned them on in 8.4, for one). Each release build made by
``make db_bench`` has beside it ``library_defaults`` (objectives/build/library_defaults.cc), which opens a DB with
a default-constructed ``rocksdb::Options``; :func:`defaults_of` compares the OPTIONS file and LOG it
leaves with those of a DB db_bench made with no flag, sets each option that differs to the library's
value through the db_bench flag of its name (or :data:`ALIASES`), and checks that db_bench given those
flags writes the library's values. An option that still differs (no flag sets it) is named in
``unset``, never hidden.

``db_bench-7.8.3``: RocksDB 7.8.3's db_bench defaults pinned on every version (:data:`PINNED`), as the
studies before the library defaults ran, for comparing versions in one shape.
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from objectives.dbbench import DbBench
from objectives.flags import Flag, format_flag
from objectives.options_ini import parse_options
from objectives.rocksdb_log import block_cache

MiB = 1024**2
LIBRARY, PINNED_7_8 = "library", "db_bench-7.8.3"
MODES = (LIBRARY, PINNED_7_8)  # what --defaults takes
OWN = "db_bench"  # what a library study runs on a build that cannot tell its library's defaults
PROBE = "library_defaults"  # beside a release db_bench (objectives/build/build_db_bench.sh)

# flag -> (pinned value, what changed): RocksDB 7.8.3's db_bench defaults where later versions differ
PINNED: dict[str, tuple[Flag, str]] = {
    "cache_size": (8 * MiB, "8 MiB until 8.2, 32 MiB from 8.3"),
    "cache_type": ("lru_cache", "LRU up to 10.8, HyperClockCache from 10.9"),
    "compaction_readahead_size": (0, "0 in 7.8, 2 MiB (the Options default) in 9.x"),
    "format_version": (5, "5 in 7.8, 6 in 9.x (whose SST files RocksDB before 8.6 cannot read)"),
    "optimize_filters_for_memory": (False, "false in 7.8, true in 9.x"),
    "level_compaction_dynamic_level_bytes": (False, "false in db_bench of every version; the library "
                                             "default is true from 8.4"),
}
# OPTIONS (or LOG) key -> the db_bench flag that sets it, where the flag is not named as the option
ALIASES = {
    "DBOptions.max_subcompactions": "subcompactions",
    "DBOptions.max_open_files": "open_files",
    "CFOptions.compression": "compression_type",
    "BlockCache.capacity": "cache_size",
    "BlockCache.num_shard_bits": "cache_numshardbits",
    "BlockCache.high_pri_pool_ratio": "cache_high_pri_pool_ratio",
    "BlockCache.low_pri_pool_ratio": "cache_low_pri_pool_ratio",
    "BlockCache.name": "cache_type",
    "TableOptions/BlockBasedTable.index_shortening": "index_shortening_mode",
}
# An option's text in the OPTIONS file (or LOG) -> its flag's value, where they are not the same words
ENUMS: dict[str, dict[str, Flag]] = {
    "BlockCache.name": {"LRUCache": "lru_cache", "AutoHyperClockCache": "auto_hyper_clock_cache",
                        "FixedHyperClockCache": "fixed_hyper_clock_cache", "HyperClockCache": "hyper_clock_cache"},
    "CFOptions.compression": {"kNoCompression": "none", "kSnappyCompression": "snappy", "kLZ4Compression": "lz4",
                              "kZSTD": "zstd", "kZlibCompression": "zlib", "kLZ4HCCompression": "lz4hc",
                              "kBZip2Compression": "bzip2", "kXpressCompression": "xpress"},
    "CFOptions.compaction_style": {"kCompactionStyleLevel": 0, "kCompactionStyleUniversal": 1,
                                   "kCompactionStyleFIFO": 2},
    "TableOptions/BlockBasedTable.index_shortening": {"kNoShortening": 0, "kShortenSeparators": 1,
                                                      "kShortenSeparatorsAndSuccessor": 2},
}
# Keys that differ between any two DBs (paths, the hash seed, addresses): not options of a deployment
_IGNORED = ("DBOptions.db_host_id", "DBOptions.wal_dir", "DBOptions.db_log_dir", "DBOptions.db_paths",
            "BlockCache.hash_seed", "TableOptions/BlockBasedTable.block_cache")


# db_bench's --compression_level defaults to 32767, "the library's default level": zstd's is 3.
LIBRARY_DEFAULT_LEVEL, ZSTD_DEFAULT_LEVEL = "32767", "3"
# db_bench's --bloom_bits defaults to -1, "the library's default": no filter, which 0 also means.
LIBRARY_DEFAULT_BLOOM, NO_FILTER = "-1", "0"


class DefaultsError(RuntimeError):
    """The library's defaults cannot be read beside this db_bench."""


@dataclass(frozen=True)
class Defaults:
    """The flags every run of one db_bench starts from, and where they come from."""

    mode: str  # LIBRARY, PINNED_7_8, or OWN where the library's could not be read
    version: str  # the RocksDB version whose defaults these are
    flags: dict[str, Flag] = field(default_factory=dict)
    unset: tuple[str, ...] = ()  # library options db_bench still runs otherwise (no flag sets them)
    source: str = ""  # how they were found, in words

    def describe(self) -> str:
        """One line for the console and the summary."""
        if self.mode == PINNED_7_8:
            return f"RocksDB 7.8.3's db_bench defaults, pinned (--defaults {PINNED_7_8})"
        if self.mode == OWN:
            return f"db_bench {self.version}'s own defaults, not the library's ({self.source})"
        return f"RocksDB {self.version}'s library defaults, as an application opening a DB gets them"

    @property
    def identity(self) -> str | None:
        """The mode as a study's identity records it (what a resume must run on): none for 7.8.3's pins,
        which every study ran on before the modes were recorded."""
        return None if self.mode == PINNED_7_8 else self.mode

    def command_line(self) -> str:
        """The flags as db_bench takes them."""
        return " ".join(format_flag(k, v) for k, v in self.flags.items())

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "version": self.version, "describe": self.describe(), "flags": self.flags,
                "unset": list(self.unset), "source": self.source}


def defaults_of(db: DbBench, mode: str = LIBRARY) -> Defaults:
    """The flags ``db``'s runs start from in ``mode``. A build without ``library_defaults`` beside it
    (Debian's db_bench, one of your own) runs with db_bench's own defaults, and says so in ``source``."""
    if mode not in MODES:
        raise DefaultsError(f"--defaults: unknown {mode!r} (choose from {', '.join(MODES)})")
    if mode == PINNED_7_8:
        pinned = {flag: value for flag, (value, _) in PINNED.items() if flag in db.flags}
        return Defaults(mode, "7.8.3", pinned, source="objectives/defaults.py PINNED")
    probe = Path(db.path).parent / PROBE
    if not os.access(probe, os.X_OK):
        return Defaults(OWN, db.version, source=f"no {PROBE} beside {db.path} to read them from; make db_bench "
                        "builds one")
    flags, unset = _library(db.path, str(probe), frozenset(db.flags), os.stat(db.path).st_mtime)
    return Defaults(mode, db.version, dict(flags), unset, source=f"{probe} compared with db_bench's own")


@functools.lru_cache(maxsize=8)
def _library(db_bench: str, probe: str, known: frozenset[str],
             _mtime: float) -> tuple[tuple[tuple[str, Flag], ...], tuple[str, ...]]:
    """(flags, unset) of one build, read once per process."""
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-defaults-") as tmp:
        library = _options_of([probe, f"{tmp}/library"], Path(tmp) / "library")
        own = _options_of(_db_bench(db_bench, Path(tmp) / "own", {}), Path(tmp) / "own")
        flags: dict[str, Flag] = {}
        for key in sorted(set(library) | set(own)):
            if library.get(key) == own.get(key) or key in _IGNORED:
                continue
            flag = ALIASES.get(key, key.rsplit(".", 1)[-1])
            value = _flag_value(key, library.get(key))
            if flag in known and value is not None:
                flags[flag] = value
        given = _options_of(_db_bench(db_bench, Path(tmp) / "given", flags), Path(tmp) / "given")
    kept = {flag: value for flag, value in flags.items()
            if all(given.get(k) == library.get(k) for k in library.keys() | given.keys()
                   if ALIASES.get(k, k.rsplit(".", 1)[-1]) == flag)}
    unset = tuple(f"{key}: library {library.get(key)}, db_bench {given.get(key)}"
                  for key in sorted(set(library) | set(given))
                  if key not in _IGNORED and library.get(key) != given.get(key))
    return tuple(sorted(kept.items())), unset


def _db_bench(path: str, db: Path, flags: dict[str, Flag]) -> list[str]:
    given = [format_flag(k, v) for k, v in flags.items()]
    return [path, "--benchmarks=fillseq", "--num=1", f"--db={db}", "--progress_reports=false", *given]


def _options_of(command: list[str], db: Path) -> dict[str, str]:
    """Run ``command`` (which makes a DB at ``db``) and read its newest OPTIONS file and the block cache
    its LOG describes, as ``{SECTION.key: text}`` (``BlockCache.*`` from the LOG)."""
    try:
        run = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DefaultsError(f"{command[0]} does not run: {exc}") from None
    files = sorted(db.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1]))
    if run.returncode != 0 or not files:
        last = (run.stdout + run.stderr).strip().splitlines()[-1:] or ["no output"]
        raise DefaultsError(f"{command[0]} made no DB with an OPTIONS file (exit {run.returncode}): {last[0]}")
    flat = {f"{section}.{key}": value for section, values in parse_options(files[-1].read_text()).items()
            for key, value in values.items()}
    flat.update(block_cache(db / "LOG"))
    return flat


def _flag_value(key: str, text: str | None) -> Flag | None:
    """The db_bench flag value of an option's text in an OPTIONS file or the LOG, where it has one."""
    if text is None:
        return None
    if key in ENUMS:
        return ENUMS[key].get(text)
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


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
