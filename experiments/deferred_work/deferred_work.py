"""What the measurement changes, measured: deferred work charged, and memory like production.

    .venv/bin/python -m experiments.deferred_work.deferred_work [--rocksdb-version 9.11] [--rounds 3]

1. fillrandom at scale 1 in interleaved rounds: db_bench's defaults, a configuration whose memtables
   hold all the data (nothing is flushed until the drain) and one with 4 MB memtables that flushes
   and compacts all along: burst and sustained ops/s, drain seconds, stored and logical write amp.
2. The reads-beyond-memory workload (an 80 MB DB of 400k x 400 B, 60k random reads) with a 4 MiB
   and a 32 MiB block cache, in a 48 MiB memory cgroup and without a limit.

Writes experiments/deferred_work/results/deferred_work.json with the machine, db_bench build and date.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from objectives.dbbench import probe
from objectives.measurement import measure
from objectives.runner import Runner
from objectives.workloads import load_workload
from search_spaces import Context, MiB

RESULTS = Path(__file__).with_name("results") / "deferred_work.json"
KEYS = ("ops_per_sec", "burst_ops_per_sec", "drain_seconds", "write_amp", "write_amp_logical", "l0_files",
        "memtable_bytes", "pending_compaction_bytes", "memory_peak_bytes")


def rounds(runner: Runner, workload: Any, configs: dict[str, dict], n: int, logs: Path) -> dict[str, list[dict]]:
    samples: dict[str, list[dict]] = {name: [] for name in configs}
    for i in range(n):
        for name, flags in configs.items():
            m = measure(runner, workload, flags, logs / name.replace(" ", "-") / str(i), 1, 1).metrics
            samples[name].append({k: m[k] for k in KEYS})
            print(f"round {i + 1}: {name}: {m['ops_per_sec']:,.0f} ops/s (burst {m['burst_ops_per_sec']:,.0f}, "
                  f"drain {m['drain_seconds'] or 0:.2f} s)", flush=True)
    return samples


def medians(samples: dict[str, list[dict]]) -> dict[str, dict[str, float | None]]:
    out = {}
    for name, runs in samples.items():
        out[name] = {k: statistics.median(r[k] for r in runs) if all(r[k] is not None for r in runs) else None
                     for k in KEYS}
        out[name]["ops_per_sec_range"] = [min(r["ops_per_sec"] for r in runs), max(r["ops_per_sec"] for r in runs)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rocksdb-version", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    db = probe(version=args.rocksdb_version)
    host = Context.of_host()
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-measurement-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        fill = load_workload("fillrandom").resolve(1.0, host)
        writes = rounds(Runner(db, root / "work"), fill, {
            "rocksdb-default": {},
            "memtables hold all data": {"write_buffer_size": 512 * MiB, "max_write_buffer_number": 2},
            "4 MB memtables": {"write_buffer_size": 4 * MiB, "max_write_buffer_number": 4}}, args.rounds, root / "w")
        reads_workload = load_workload("reads-beyond-memory").resolve(1.0, host)
        caches = {"4 MiB block cache": {"cache_size": 4 * MiB}, "32 MiB block cache": {"cache_size": 32 * MiB}}
        limited = rounds(Runner(db, root / "work", memory_limit=48 * MiB), reads_workload, caches, args.rounds,
                         root / "lim")
        free = rounds(Runner(db, root / "work"), reads_workload, caches, args.rounds, root / "free")
        record = {
            "when": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_info(host, root / "work"),
            "db_bench": db.to_dict(), "rounds": args.rounds,
            "fillrandom_scale_1": {"samples": writes, "medians": medians(writes)},
            "reads_400k_x_400B": {"within_48MiB": {"samples": limited, "medians": medians(limited)},
                                  "no_limit": {"samples": free, "medians": medians(free)}},
        }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    entry(main)
