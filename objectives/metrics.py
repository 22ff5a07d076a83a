"""Trial metrics from the phases of one run.

Definitions (also in docs/metrics.md):

- ``ops_per_sec`` (sustained, the default score): over the scored phases' measured benchmarks, total
  operations / (their seconds + the seconds their drains took to flush the memtables and finish
  compaction). Without a drain (a workload with ``drain = false``) it equals the burst rate.
- ``burst_ops_per_sec``: total operations / total seconds of those benchmarks (db_bench's own
  ops/sec for one benchmark): deferred flushes and compactions cost nothing.
- ``drain_seconds``: the drains' seconds, summed over scored phases.
- ``pending_compaction_bytes`` (9.x only), ``l0_files``, ``memtable_bytes``: the LSM state the last
  scored phase left when its operations ended, before the drain.
- ``micros_per_op``: db_bench's micros/op, averaged over those benchmarks weighted by operations.
- ``p50_us`` … ``p99_9_us``: percentiles of the scored phases' ``--histogram=1`` buckets, all
  operation types merged, interpolated as RocksDB does.
- ``write_amp`` (stored): (``rocksdb.flush.write.bytes`` + ``rocksdb.compact.write.bytes``) /
  ``rocksdb.bytes.written``, summed over all phases, drains included: bytes RocksDB wrote to SST
  files per byte the application wrote (``bytes.written`` includes WriteBatch framing, ~15 B per
  key). WAL bytes are not counted; with compression it can be below 1.
- ``write_amp_logical``: uncompressed key and value bytes of every SST file flushes and compactions
  wrote, per uncompressed byte flushed (from the LOG's ``table_file_creation`` events): 1 when every
  flushed byte is written once; compression does not change it.
- ``stall_micros``, ``compaction_micros``: ``rocksdb.stall.micros`` and the SUM of
  ``rocksdb.compaction.times.micros``, summed over all phases.
- ``memory_peak_bytes``, ``oom_kills``: under a memory limit, the scored phases' cgroup peak
  (process and page cache) and the OOM killer's strikes.
- ``db_size_bytes`` after the last phase; ``peak_rss_bytes`` the largest phase's; ``wall_seconds``
  and ``cpu_seconds`` (user + system) summed over phases; ``checkpoint_seconds``: making the
  run's copy of a preloaded (or replayed) DB, before its first phase (None for a load workload).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from objectives.parser import BenchmarkResult, Histogram
from objectives.runner import PhaseRun, RunResult

PERCENTILES = {"p50_us": 50.0, "p95_us": 95.0, "p99_us": 99.0, "p99_9_us": 99.9}


def metrics_of(run: RunResult, operations: dict[str, int] | None = None) -> dict[str, float | None]:
    """The metrics of a run, as defined in this module's docstring. ``operations`` gives, per phase,
    how many operations a benchmark that cannot count them did (replay)."""
    scored_phases = [p for p in run.phases if p.scored]
    scored = [_counted(r, (operations or {}).get(p.name)) for p in scored_phases for r in p.output.results]
    burst = _ops_per_sec(scored)
    drain = sum(p.drain_seconds or 0.0 for p in scored_phases)
    metrics: dict[str, float | None] = {
        "ops_per_sec": _sustained(scored, drain) if burst else burst,
        "burst_ops_per_sec": burst,
        "drain_seconds": drain if any(p.drain_seconds is not None for p in scored_phases) else None,
        "micros_per_op": _weighted(scored, "micros_per_op"),
        "mb_per_sec": _mb_per_sec(scored),
    }
    metrics.update(_lsm_state(scored_phases[-1] if scored_phases else None))
    merged = Histogram.merge([h for r in scored for h in r.histograms.values()])
    for key, p in PERCENTILES.items():
        metrics[key] = merged.percentile(p) if merged.count else None
    written = sum(p.output.ticker("bytes.written") for p in run.phases)
    sst = sum(p.output.ticker("flush.write.bytes") + p.output.ticker("compact.write.bytes") for p in run.phases)
    metrics["write_amp"] = sst / written if written else None
    flushed = sum(p.log.flush_raw_bytes for p in run.phases)
    rewritten = sum(p.log.compaction_raw_bytes for p in run.phases)
    metrics["write_amp_logical"] = (flushed + rewritten) / flushed if flushed else None
    metrics["stall_micros"] = float(sum(p.output.ticker("stall.micros") for p in run.phases))
    metrics["compaction_micros"] = float(
        sum(p.output.stat_sums.get("rocksdb.compaction.times.micros", 0) for p in run.phases)
    )
    limited = [p.memory for p in run.phases if p.memory]
    metrics["memory_peak_bytes"] = float(max(m["memory_peak_bytes"] or 0 for m in limited)) if limited else None
    metrics["oom_kills"] = float(sum(m["oom_kills"] or 0 for m in limited)) if limited else None
    metrics["db_size_bytes"] = float(run.db_size_bytes)
    metrics["peak_rss_bytes"] = float(max((p.peak_rss_bytes for p in run.phases), default=0))
    metrics["wall_seconds"] = sum(p.wall_seconds for p in run.phases)
    metrics["checkpoint_seconds"] = run.checkpoint_seconds  # a preloaded or replayed DB's copy, else None
    metrics["cpu_seconds"] = sum(p.cpu_seconds for p in run.phases)
    return metrics


def _counted(result: BenchmarkResult, operations: int | None) -> BenchmarkResult:
    """A result whose operations db_bench could not count (replay prints 1), with the known count."""
    if operations is None or not result.seconds:
        return result
    return replace(result, operations=operations, ops_per_sec=operations / result.seconds)


def _lsm_state(phase: PhaseRun | None) -> dict[str, float | None]:
    """Pending compaction bytes, L0 files and memtable bytes when a scored phase's operations ended."""
    out = phase.output if phase else None
    levels = out.level_files[0] if out and out.level_files else None
    return {
        "pending_compaction_bytes": float(out.pending_compaction_bytes)
        if out and out.pending_compaction_bytes is not None else None,
        "l0_files": float(levels[0]) if levels else None,
        "memtable_bytes": float(out.memtables["cur-size-all-mem-tables"])
        if out and "cur-size-all-mem-tables" in out.memtables else None,
    }


def phase_details(run: RunResult) -> list[dict[str, Any]]:
    """Per phase and benchmark: throughput and percentiles, for the trial's record."""
    details = []
    for phase in run.phases:
        for r in phase.output.results:
            row: dict[str, object] = {
                "phase": phase.name,
                "benchmark": r.name,
                "scored": phase.scored,
                "ops_per_sec": r.ops_per_sec,
                "micros_per_op": r.micros_per_op,
                "mb_per_sec": r.mb_per_sec,
            }
            for op, h in r.histograms.items():
                row[f"{op}_p99_us"] = h.percentile(99.0)
            details.append(row)
        details.append(
            {
                "phase": phase.name,
                "wall_seconds": round(phase.wall_seconds, 3),
                "cpu_seconds": round(phase.cpu_seconds, 3),
                "peak_rss_bytes": phase.peak_rss_bytes,
                "drain_seconds": phase.drain_seconds,
                "memory": phase.memory,
                "intervals": [list(row) for row in phase.intervals],
            }
        )
    return details


def _counts(results: list[BenchmarkResult]) -> list[tuple[int, float]] | None:
    """Each benchmark's (operations, ops/sec) when every one has both, else None."""
    counts = [(r.operations, r.ops_per_sec) for r in results if r.operations and r.ops_per_sec]
    return counts if len(counts) == len(results) else None


def _sustained(results: list[BenchmarkResult], drain: float) -> float | None:
    """Operations / (their seconds + the drain's); the burst rate where operations are not counted."""
    if (counts := _counts(results)) is not None:
        seconds = sum(operations / rate for operations, rate in counts)
        return sum(operations for operations, _ in counts) / (seconds + drain)
    return _ops_per_sec(results)


def _ops_per_sec(results: list[BenchmarkResult]) -> float | None:
    """Total operations / total time, each benchmark's time being its operations / its ops/sec
    (exact where db_bench's printed seconds are rounded); without operation counts: mean ops/sec."""
    if not results:
        return None
    if (counts := _counts(results)) is not None:
        return sum(operations for operations, _ in counts) / sum(operations / rate for operations, rate in counts)
    return sum(r.ops_per_sec for r in results) / len(results)


def _weighted(results: list[BenchmarkResult], attr: str) -> float | None:
    weights = [r.operations or 1 for r in results]
    if not results:
        return None
    return sum(getattr(r, attr) * w for r, w in zip(results, weights)) / sum(weights)


def _mb_per_sec(results: list[BenchmarkResult]) -> float | None:
    with_mb = [(r.mb_per_sec, r.seconds) for r in results if r.mb_per_sec is not None and r.seconds]
    if not with_mb:
        return None
    return sum(mb_per_sec * seconds for mb_per_sec, seconds in with_mb) / sum(seconds for _, seconds in with_mb)
