"""What a db_bench process's RocksDB ``LOG`` says: when the DB was opened, when its background
flushes and compactions ended, and how many bytes they wrote, before compression and after.

RocksDB writes each event as ``EVENT_LOG_v1 {json}``, whose ``time_micros`` is wall-clock time since
the epoch (``std::chrono::system_clock``, the clock of :func:`time.time`); the line prefix is local
time with microseconds. Both formats are the same in 7.8 and 9.x. Events after ``Shutdown:
canceling all background work`` belong to work the close aborted and are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

_EVENT = "EVENT_LOG_v1 "
_SHUTDOWN = "Shutdown: canceling all background work"
_OPENED = " DB pointer "  # DBImpl logs it as DB::Open returns
_BACKGROUND_ENDS = ("flush_finished", "compaction_finished", "trivial_move")


@dataclass
class LogFacts:
    """One process's LOG: open time, end times of background jobs, bytes written to SST files."""

    opened: float | None = None  # epoch seconds of the last DB open
    background_ends: list[float] = field(default_factory=list)
    flush_raw_bytes: int = 0  # key + value bytes (uncompressed) of the SST files flushes wrote
    compaction_raw_bytes: int = 0  # ... that compactions wrote
    flush_file_bytes: int = 0  # bytes of those files on disk (compressed)
    compaction_file_bytes: int = 0

    def drain_seconds(self, since: float) -> float:
        """Seconds from ``since`` (the end of the scored operations) until the last flush or
        compaction ended; 0 when none ran after it."""
        later = [t for t in self.background_ends if t > since]
        return max(later) - since if later else 0.0


def _local_time(prefix: str) -> float | None:
    try:
        return datetime.strptime(prefix[:26], "%Y/%m/%d-%H:%M:%S.%f").timestamp()
    except ValueError:
        return None


def read_log(path: Path) -> LogFacts:
    """The facts of the LOG at ``path`` (empty facts when there is none)."""
    facts = LogFacts()
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return facts
    events: list[dict] = []
    for line in lines:
        if _SHUTDOWN in line:
            break
        if _OPENED in line:
            facts.opened = _local_time(line) or facts.opened
        at = line.find(_EVENT)
        if at >= 0:
            try:
                events.append(json.loads(line[at + len(_EVENT):]))
            except ValueError:
                continue  # a line cut short by a killed process
    compaction_jobs = {e.get("job") for e in events if e.get("event") == "compaction_started"}
    for e in events:
        if e.get("event") in _BACKGROUND_ENDS and "time_micros" in e:
            facts.background_ends.append(e["time_micros"] / 1e6)
        elif e.get("event") == "table_file_creation":
            props = e.get("table_properties", {})
            raw = int(props.get("raw_key_size", 0)) + int(props.get("raw_value_size", 0))
            if e.get("job") in compaction_jobs:
                facts.compaction_raw_bytes += raw
                facts.compaction_file_bytes += int(e.get("file_size", 0))
            else:  # a flush, or the WAL written out while the DB opens
                facts.flush_raw_bytes += raw
                facts.flush_file_bytes += int(e.get("file_size", 0))
    return facts


def block_cache(log: Path) -> dict[str, str]:
    """The block cache as the LOG prints the table options: its class name (``block_cache_name``) and
    the indented lines of ``block_cache_options`` (capacity, shard bits, pool ratios)."""
    found: dict[str, str] = {}
    inside = False
    if not log.is_file():
        return found
    for line in log.read_text(errors="replace").splitlines():
        if line.strip().startswith("block_cache_name:"):
            found["BlockCache.name"] = line.split(":", 1)[1].strip()
        elif line.strip() == "block_cache_options:":
            inside = True
        elif inside and line.startswith("    ") and ":" in line:
            key, value = line.split(":", 1)
            found[f"BlockCache.{key.strip()}"] = value.strip()
        elif inside:
            break
    return found
