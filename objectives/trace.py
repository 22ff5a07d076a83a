"""Tuning on your own traffic: a RocksDB query trace replayed on a copy of the DB it was recorded on.

Record a trace with RocksDB's tracing API (``DB::StartTrace`` / ``EndTrace``) in the application, or
run any db_bench benchmark with ``--trace_file=PATH``; keep a copy of the DB as it was when tracing
started (the snapshot). Each trial replays the trace with db_bench's ``replay`` benchmark on a fresh
copy of the snapshot (objectives.workdir.clone_snapshot), which is never written.

db_bench's replay prints one operation for the whole replay, so the score is the number of queries
in the trace (counted here from the file) over the replay's seconds. Its replayer gets column family
handles only when ``--num_column_families`` > 1 (7.8 to 9.11; with one it fails with "Invalid Column
Family ID"), so replays run with two: the second, empty one is created in the copy. The recorded
pace is compressed ``--trace_replay_fast_forward`` times (1000 here): a saturation test of the
recorded mix of writes, gets and seeks, not a replay of its timing.
"""

from __future__ import annotations

import struct
from pathlib import Path

from objectives.workdir import SnapshotError, snapshot_files
from objectives.workloads import Phase, Workload, WorkloadError

# TraceType values (include/rocksdb/trace_record.h, the same in 7.8 and 9.x) of queries
QUERIES = {3: "write", 4: "get", 5: "seek", 6: "seek_for_prev", 13: "multiget"}
FAST_FORWARD = 1000


def count_queries(trace: Path) -> dict[str, int]:
    """Queries in a trace file by kind. Records are ``ts (fixed64) type (1 byte) size (fixed32)
    payload``, little-endian (TracerHelper::EncodeTrace)."""
    counts = {kind: 0 for kind in QUERIES.values()}
    data = trace.read_bytes()
    pos = 0
    while pos + 13 <= len(data):
        kind, size = data[pos + 8], struct.unpack_from("<I", data, pos + 9)[0]
        pos += 13 + size
        if kind in QUERIES and pos <= len(data):
            counts[QUERIES[kind]] += 1
    return counts


def trace_workload(trace: Path, snapshot: Path) -> Workload:
    """The workload that replays ``trace`` on copies of ``snapshot``."""
    if not trace.is_file():
        raise WorkloadError(f"--workload trace:{trace}: no such trace file")
    try:
        size, _ = snapshot_files(snapshot)
    except SnapshotError as exc:
        raise WorkloadError(str(exc)) from None
    counts = count_queries(trace)
    total = sum(counts.values())
    if not total:
        raise WorkloadError(f"--workload trace:{trace}: the file holds no query of a RocksDB trace")
    mix = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    phase = Phase("replay", ("replay",), {"trace_file": str(trace.resolve()), "num_column_families": 2,
                                           "trace_replay_fast_forward": FAST_FORWARD}, scored=True, operations=total)
    return Workload(name=f"trace-{trace.stem}", phases=(phase,), snapshot=str(snapshot.resolve()), data=size,
                    description=f"replay of {trace} ({total} queries: {mix}) on copies of {snapshot} "
                                f"({size / 2**20:.0f} MiB), {FAST_FORWARD}x the recorded pace",
                    source=str(trace))
