"""The tables docs/measure.md quotes from this experiment's records, made from them by `make record`
(experiments/record.py)."""

from __future__ import annotations

import json
import statistics
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
    """"How long a run at a rate must be": for each rate, each window length's count of windows, how many
    held the SLO and their P99.9's spread; the whole run's P99.9; each 30 s window's P99.9 in order."""
    rows = ["| offered | window | windows | held the SLO | P99.9: lowest | median | highest | highest / lowest |",
            "|---|---|---|---|---|---|---|---|"]
    runs, orders, stamps = [], [], []
    for rate in ("60k", "40k"):
        path, record = _record(f"windows-{rate}-11.8.1-2026-12-04.json")
        run = record["runs"][0]
        offered = f"{float(record['arguments']['rate']):,.0f} writes/s"
        for length, w in record["windows"]["rocksdb-default"].items():
            tail = w["p999_us"]
            rows.append(f"| {offered} | {length} s | {w['windows']} | {w['held']} | {_ms(tail['min'])} | "
                        f"{_ms(tail['median'])} | {_ms(tail['max'])} | {tail['max'] / tail['min']:.1f}x |")
        runs.append(f"{_ms(run['p99.9_us'])} at {offered} ({run['seconds']:.0f} s, "
                    f"write stalls {run['stall_micros'] / 1e6:.2f} s, write amp {run['write_amp']:.2f})")
        thirty = [f"{w['p99.9_us'] / 1e3:.1f}" for w in run["windows"] if w["seconds"] == 30]
        orders.append(f"At {offered}, the P99.9 of each 30 s window in order (ms): " + ", ".join(thirty) + ".")
        # these two records carry no date of their own (the script wrote none before them): their names' date
        stamps.append(stamp(path, record["commit"], record.get("date") or path.stem[-10:], WINDOWS_CODE))
    return "\n".join([*rows, "", "The whole run's P99.9: " + "; ".join(runs) + ".", "", *orders, "", *stamps])


def aged() -> str:
    """The ordered load against one aged by random overwrites: each round's P99.9 and write amp, and the
    paired ratio of the aged DB's P99.9 to the ordered one's."""
    path, record = _record("aged-40k-11.8.1-2026-12-04.json")
    by = {(r["round"], r["config"]): r for r in record["runs"]}
    rounds = sorted({r["round"] for r in record["runs"]})
    plain, old = "rocksdb-default", "rocksdb-default, aged"
    rows = ["| round | P99.9, loaded in key order | P99.9, aged | write amp, loaded in key order | write amp, aged |",
            "|---|---|---|---|---|"]
    rows += [f"| {i} | {_ms(by[(i, plain)]['p99.9_us'])} | {_ms(by[(i, old)]['p99.9_us'])} | "
             f"{by[(i, plain)]['write_amp']:.2f} | {by[(i, old)]['write_amp']:.2f} |" for i in rounds]
    ratio = record["paired"][old]["p99.9_us"]
    low, high = ratio["ci95"]
    line = (f"The aged DB's P99.9 over the ordered one's, paired by round: {ratio['ratio']:.2f}x (95 % CI "
            f"{low:.2f}-{high:.2f}, {ratio['n']} rounds): a {ratio['verdict']}.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def memory() -> str:
    """The defaults at 40,000 writes/s for 10 minutes within 1 GiB and within 4 GiB: the run's P99.9, its
    minutes' P99.9, the memory peak and write amp."""
    path, record = _record("memory-40k-11.8.1-2026-12-04.json")
    rows = ["| configuration | P99.9 over the run | minutes that held p99.9 <= 10 ms | a minute's P99.9: lowest | "
            "median | highest | memory peak | write amp |", "|---|---|---|---|---|---|---|---|"]
    for name, run in record["runs"].items():
        minutes = sorted(w["p99.9_us"] for w in run["windows"])
        held = sum(t <= 10_000 for t in minutes)
        rows.append(f"| {name} | {_ms(run['p99.9_us'])} | {held} of {len(minutes)} | {_ms(minutes[0])} | "
                    f"{_ms(statistics.median(minutes))} | {_ms(minutes[-1])} | "
                    f"{run['memory_peak_bytes'] / 2**30:.2f} GiB | {run['write_amp']:.2f} |")
    date = next(iter(record["runs"].values()))["date"]
    return "\n".join([*rows, "", stamp(path, record["commit"], date, MEASURE_CODE)])


def reads_at_load() -> str:
    """The defaults with reads beside writes, one 60 s run: each side's tail and what was delivered."""
    path, record = _record("reads-at-load-11.8.1-2026-12-04.json")
    run = record["run"]
    rows = ["| requests | offered | P99 | P99.9 | P99.99 |", "|---|---|---|---|---|"]
    for kind in ("write", "read"):
        rows.append(f"| {kind}s | {run['rate'][kind + 's']:,.0f}/s | {_ms(run[kind + '_p99_us'])} | "
                    f"{_ms(run[kind + '_p99.9_us'])} | {_ms(run[kind + '_p99.99_us'])} |")
    line = (f"Delivered {100 * run['delivered']:.2f} % of the requests due; RocksDB's own P99.9 per request "
            f"{_ms(run['service_p99.9_us'])}; write stalls {run['stall_micros'] / 1e6:.2f} s.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], run["date"], MEASURE_CODE)])
