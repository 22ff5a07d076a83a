"""The tables docs/measure.md quotes from this experiment's records, made from them by `make record`
(experiments/record.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from experiments.record import stamp

RESULTS = Path(__file__).with_name("results")
# What measures a run at a rate: the driver, its Python side and `rocksdb-tuner measure`.
MEASURE_CODE = ("objectives/build/open_loop.cc", "objectives/build/latency_histogram.h", "objectives/open_loop.py",
                "tuner/measure.py")
WINDOWS_CODE = (*MEASURE_CODE, "experiments/service_level/service_level.py")


def _record(name: str) -> tuple[Path, dict[str, Any]]:
    path = RESULTS / name
    return path, json.loads(path.read_text())


def threads_or_memory() -> str:
    """"What held trial 5's tail": each measure run's P99.9 and write amp."""
    path, record = _record("threads-or-memory-60k-11.8.1-2026-12-04.json")
    runs = record["runs"]
    rows = [f"| {name} | {run['p99.9_us'] / 1e3:.1f} ms | {run['write_amp']:.2f} |" for name, run in runs.items()]
    date = next(iter(runs.values()))["date"]
    return "\n".join(["| configuration | P99.9 | write amp |", "|---|---|---|", *rows, "",
                      stamp(path, record["commit"], date, MEASURE_CODE)])


def _ms(us: float) -> str:
    return f"{us / 1e3:.1f} ms"


def windows() -> str:
    """"How long a run must be": for each rate, each window length's count of windows, how many held
    the SLO and their P99.9's spread; then each 30 s window's P99.9 in order."""
    rows = ["| offered | window | windows | held the SLO | P99.9: lowest | median | highest |", "|---|---|---|---|---|---|---|"]
    orders, stamps = [], []
    for rate in ("60k", "40k"):
        path, record = _record(f"windows-{rate}-11.8.1-2026-12-04.json")
        run = record["runs"][0]
        for length, w in record["windows"]["rocksdb-default"].items():
            tail = w["p999_us"]
            rows.append(f"| {run['rate']['writes']:,.0f} writes/s | {length} s | {w['windows']} | {w['held']} | "
                        f"{_ms(tail['min'])} | {_ms(tail['median'])} | {_ms(tail['max'])} |")
        thirty = [_ms(w["p99.9_us"]).removesuffix(" ms") for w in run["windows"] if w["seconds"] == 30]
        orders.append(f"At {run['rate']['writes']:,.0f} writes/s, the P99.9 of each 30 s window in order (ms): "
                      + ", ".join(thirty) + ".")
        # these two records carry no date of their own (the script wrote none before them): their names' date
        stamps.append(stamp(path, record["commit"], record.get("date") or path.stem[-10:], WINDOWS_CODE))
    return "\n".join([*rows, "", *orders, "", *stamps])
