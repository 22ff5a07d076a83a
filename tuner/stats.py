"""Statistics of repeated measurements, one formula each: spread (min, max, coefficient of
variation), the bootstrap interval of a ratio of medians, and per-configuration sample rows."""

from __future__ import annotations

import random
import statistics
from typing import Any

_BOOTSTRAP = 4000


def spread(values: list[float]) -> dict[str, float]:
    """min, max and coefficient of variation (sample stdev / mean; 0 for a single value)."""
    mean = statistics.fmean(values)
    cv = statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
    return {"min": min(values), "max": max(values), "cv": cv, "n": len(values)}


def bootstrap_ratio(a: list[float], b: list[float], seed: int = 0) -> list[float]:
    """95 % percentile-bootstrap interval of median(a) / median(b), resampling each side."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.median(rng.choices(a, k=len(a))) / statistics.median(rng.choices(b, k=len(b)))
        for _ in range(_BOOTSTRAP)
    )
    return [ratios[int(0.025 * _BOOTSTRAP)], ratios[int(0.975 * _BOOTSTRAP) - 1]]


def sample_rows(saved: dict[str, Any], entries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per configuration measured in interleaved rounds: its ops/s samples, median and spread,
    median P99 and write amp, and its failure if it had one."""
    out = []
    for name, entry in entries.items():
        samples = saved["samples"][name]
        ops = [s["ops_per_sec"] for s in samples if s.get("ops_per_sec")]
        row: dict[str, Any] = {"name": name, "trial": entry.get("trial"), "flags": entry["flags"], "ops_per_sec": ops}
        if name in saved["failed"]:
            row["failed"] = saved["failed"][name]
        if ops:
            row["median_ops_per_sec"] = statistics.median(ops)
            row["spread"] = spread(ops)
            for key in ("p99_us", "write_amp"):
                values = [s[key] for s in samples if s.get(key) is not None]
                row[f"median_{key}"] = statistics.median(values) if values else None
        out.append(row)
    return out
