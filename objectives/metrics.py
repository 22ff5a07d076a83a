"""Trial metrics from the phases of one run.

Definitions (also in docs/metrics.md):

- ``ops_per_sec``: over the scored phases' measured benchmarks, total operations / total seconds
  (for one benchmark this is db_bench's own ops/sec).
- ``micros_per_op``: db_bench's micros/op, averaged over those benchmarks weighted by operations.
- ``p50_us`` … ``p99_9_us``: percentiles of the scored phases' ``--histogram=1`` buckets, all
  operation types merged, interpolated as RocksDB does.
- ``write_amp``: (``rocksdb.flush.write.bytes`` + ``rocksdb.compact.write.bytes``) /
  ``rocksdb.bytes.written``, summed over all phases: bytes RocksDB wrote to SST files per byte the
  application wrote (``bytes.written`` includes WriteBatch framing, ~15 B per key). WAL bytes are
  not counted; with compression it can be below 1.
- ``stall_micros``, ``compaction_micros``: ``rocksdb.stall.micros`` and the SUM of
  ``rocksdb.compaction.times.micros``, summed over all phases.
- ``db_size_bytes`` after the last phase; ``peak_rss_bytes`` the largest phase's; ``wall_seconds``
  and ``cpu_seconds`` (user + system) summed over phases.
"""

from __future__ import annotations

import statistics

from objectives.parser import BenchmarkResult, Histogram
from objectives.runner import RunResult

PERCENTILES = {"p50_us": 50.0, "p95_us": 95.0, "p99_us": 99.0, "p99_9_us": 99.9}


def summarize(run: RunResult) -> dict[str, float | None]:
    """The metrics of a run, as defined in this module's docstring."""
    scored = [r for p in run.phases if p.scored for r in p.output.results]
    metrics: dict[str, float | None] = {
        "ops_per_sec": _ops_per_sec(scored),
        "micros_per_op": _weighted(scored, "micros_per_op"),
        "mb_per_sec": _mb_per_sec(scored),
    }
    merged = Histogram.merge([h for r in scored for h in r.histograms.values()])
    for key, p in PERCENTILES.items():
        metrics[key] = merged.percentile(p) if merged.count else None
    written = sum(p.output.ticker("bytes.written") for p in run.phases)
    sst = sum(p.output.ticker("flush.write.bytes") + p.output.ticker("compact.write.bytes") for p in run.phases)
    metrics["write_amp"] = sst / written if written else None
    metrics["stall_micros"] = float(sum(p.output.ticker("stall.micros") for p in run.phases))
    metrics["compaction_micros"] = float(
        sum(p.output.stat_sums.get("rocksdb.compaction.times.micros", 0) for p in run.phases)
    )
    metrics["db_size_bytes"] = float(run.db_size_bytes)
    metrics["peak_rss_bytes"] = float(max((p.peak_rss_bytes for p in run.phases), default=0))
    metrics["wall_seconds"] = sum(p.wall_seconds for p in run.phases)
    metrics["cpu_seconds"] = sum(p.cpu_seconds for p in run.phases)
    return metrics


def phase_details(run: RunResult) -> list[dict[str, object]]:
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
                "intervals": [list(row) for row in phase.intervals],
            }
        )
    return details


def _ops_per_sec(results: list[BenchmarkResult]) -> float | None:
    """Total operations / total time, each benchmark's time being its operations / its ops/sec
    (exact where db_bench's printed seconds are rounded); without operation counts: mean ops/sec."""
    if not results:
        return None
    if all(r.operations and r.ops_per_sec for r in results):
        return sum(r.operations for r in results) / sum(r.operations / r.ops_per_sec for r in results)
    return sum(r.ops_per_sec for r in results) / len(results)


def _weighted(results: list[BenchmarkResult], attr: str) -> float | None:
    weights = [r.operations or 1 for r in results]
    if not results:
        return None
    return sum(getattr(r, attr) * w for r, w in zip(results, weights)) / sum(weights)


def _mb_per_sec(results: list[BenchmarkResult]) -> float | None:
    with_mb = [r for r in results if r.mb_per_sec is not None and r.seconds]
    if not with_mb:
        return None
    return sum(r.mb_per_sec * r.seconds for r in with_mb) / sum(r.seconds for r in with_mb)


def median_metrics(runs: list[dict[str, float | None]]) -> dict[str, float | None]:
    """Per metric, the median over repeated runs of one configuration (None where a run lacks it)."""
    keys = runs[0].keys()
    out: dict[str, float | None] = {}
    for key in keys:
        values = [r.get(key) for r in runs]
        out[key] = None if any(v is None for v in values) else float(statistics.median(values))  # type: ignore[arg-type]
    return out
