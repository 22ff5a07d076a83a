"""Throughput of the release db_bench (`make db_bench`) against Debian's assertion build.

Both binaries run the same workload presets with db_bench's default options, interleaved
(A B A B ...) so drift hits both alike, each `--repeats` times. Prints a table and writes
experiments/release_vs_debian/results/release_vs_debian.json with the machine it ran on.

    .venv/bin/python -m experiments.release_vs_debian.release_vs_debian [--repeats 3] [--scale 1]
        [--workloads fillrandom readrandom]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

from experiments._script import entry
from objectives.dbbench import probe, release_builds
from objectives.metrics import metrics_of
from objectives.runner import Runner
from objectives.workloads import load_workload
from search_spaces import Context, GiB

RESULTS = Path(__file__).with_name("results") / "release_vs_debian.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workloads", nargs="+", default=["fillrandom", "readrandom"])
    parser.add_argument("--debian", default="/usr/bin/db_bench")
    parser.add_argument("--release", help="default: the newest build made by 'make db_bench'")
    args = parser.parse_args()

    builds = release_builds()
    if not args.release and not builds:
        raise SystemExit("no release build: run 'make db_bench' first (or pass --release PATH)")
    binaries = {"debian": probe(args.debian), "release": probe(args.release or builds[0])}
    host = Context.of_host()
    rows = []
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-bench-") as logs:
        for name in args.workloads:
            workload = load_workload(name).resolve(args.scale, host)
            ops: dict[str, list[float]] = {k: [] for k in binaries}
            for repeat in range(args.repeats):
                for kind, db_bench in binaries.items():
                    run = Runner(db_bench).run(workload, {}, Path(logs) / f"{name}-{kind}-{repeat}")
                    ops_per_sec = metrics_of(run)["ops_per_sec"]
                    assert ops_per_sec is not None, f"{name} {kind}"
                    ops[kind].append(ops_per_sec)
                    print(f"{name:<12} {kind:<8} repeat {repeat}: {ops[kind][-1]:>12,.0f} ops/s", flush=True)
            med = {k: statistics.median(v) for k, v in ops.items()}
            rows.append({"workload": name, "ops_per_sec": ops, "median": med, "ratio": med["release"] / med["debian"]})

    print(f"\n{'workload':<12} {'debian ops/s':>14} {'release ops/s':>14} {'release/debian':>15}")
    for row in rows:
        spread = {k: f"{min(v):,.0f}-{max(v):,.0f}" for k, v in row["ops_per_sec"].items()}
        print(f"{row['workload']:<12} {row['median']['debian']:>14,.0f} {row['median']['release']:>14,.0f} "
              f"{row['ratio']:>14.2f}x   (ranges: debian {spread['debian']}, release {spread['release']})")
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cores": host.cores, "ram_gib": round(host.ram / GiB, 1), "cpu": platform.processor() or
                    platform.machine(), "kernel": platform.release()},
        "db_bench": {k: b.to_dict() for k, b in binaries.items()},
        "scale": args.scale,
        "repeats": args.repeats,
        "rows": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    entry(main)
