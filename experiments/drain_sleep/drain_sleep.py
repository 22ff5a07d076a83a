"""What db_bench's fixed 5 s sleep before ``waitforcompaction`` costs a study: the same runs (db_bench's
defaults) with a build that has it and one without (objectives/build/build_db_bench.sh's patch), in rounds of
random order; each run's wall time (what a --budget pays), its score, its drain, and the seconds no
score counts (wall time less the scored phase and the drain: opening the DB, the checkpoint, the
sleep), and the runs an hour of machine time then holds.

    .venv/bin/python -m experiments.drain_sleep.drain_sleep --before /path/to/unpatched/db_bench \
        [--study runs/default-steady-overwrite] [--rounds 3] [--out experiments/drain_sleep/results/drain_sleep.json]

Two workloads: the default job's (its summary: steady-state overwrites on a preloaded DB at its
target) and the toy load the default job ran until 2026-11-25 (fillrandom, scale 1, from empty).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from experiments.scale_transfer.scale_transfer import workload_at
from objectives.dbbench import probe, probe_path
from objectives.defaults import defaults_of
from objectives.measurement import measure
from objectives.runner import Runner, remove_owned
from objectives.workloads import load_workload
from search_spaces import Context
from tuner.summary import Summary

RESULTS = Path(__file__).with_name("results")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a db_bench with the sleep (the same version)")
    parser.add_argument("--after", default=None, help="one without it (default: the tuner's own)")
    parser.add_argument("--study", type=Path, default=Path("runs/default-steady-overwrite"))
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS / "drain_sleep.json")
    args = parser.parse_args()
    builds = {"with the sleep": probe_path(args.before, "--before"),
              "without it": probe_path(args.after, "--after") if args.after else probe(None)}
    if len({(b.version, b.assertions) for b in builds.values()}) != 1:
        raise SystemExit("--before and --after must be the same version and build kind")
    host = Context.of_host()
    summary = Summary.load(args.study / "summary.json")
    defaults = defaults_of(builds["without it"])  # both builds run on the same (the tuner's own build's)
    steady, memory = workload_at(summary, 1, host, defaults)
    workloads = {"default job (steady-overwrite at its target)": (steady, memory),
                 "toy load (fillrandom, scale 1)": (load_workload("fillrandom").resolve(1.0, host), None)}
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                              "db_bench": {k: b.to_dict() for k, b in builds.items()}, "rounds": args.rounds,
                              "workloads": {}}
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-drain-sleep-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        for label, (workload, limit) in workloads.items():
            runners = {k: Runner(b, root / "work", timeout=3600.0, memory_limit=limit, defaults=defaults)
                       for k, b in builds.items()}
            if workload.kind == "preloaded":
                built = runners["without it"].preload(workload, root / "logs" / "preload")
                workload = replace(workload, snapshot=str(built.path))
            samples: dict[str, list[dict[str, Any]]] = {k: [] for k in builds}
            for i in range(args.rounds):
                for name in rng.sample(sorted(builds), len(builds)):
                    m: dict[str, Any] = measure(runners[name], workload, {}, root / "logs" / "run", 1, 1).metrics
                    scored = workload.duration or int(workload.flags["num"]) / m["burst_ops_per_sec"]
                    samples[name].append({**{k: m.get(k) for k in ("wall_seconds", "ops_per_sec", "burst_ops_per_sec",
                                                                   "drain_seconds")},
                                          "uncharged_seconds": m["wall_seconds"] - scored - (m.get("drain_seconds") or 0)})
                    print(f"{label} round {i + 1}/{args.rounds} {name}: {m['wall_seconds']:.1f} s wall, "
                          f"{m['ops_per_sec']:,.0f} ops/s, drain {m.get('drain_seconds') or 0:.1f} s", flush=True)
            if workload.kind == "preloaded" and workload.snapshot is not None:
                remove_owned(Path(workload.snapshot).parent)
            wall = {k: statistics.median(s["wall_seconds"] for s in v) for k, v in samples.items()}
            uncharged = {k: statistics.median(s["uncharged_seconds"] for s in v) for k, v in samples.items()}
            record["workloads"][label] = {
                "samples": samples, "median_wall_seconds": wall,
                "runs_per_hour": {k: round(3600 / w, 1) for k, w in wall.items()},
                "median_ops_per_sec": {k: statistics.median(s["ops_per_sec"] for s in v) for k, v in samples.items()},
                "median_uncharged_seconds": uncharged,
                "saved_seconds_per_run": round(uncharged["with the sleep"] - uncharged["without it"], 2)}
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(record, indent=2, default=str) + "\n")
    for label, w in record["workloads"].items():
        print(f"{label}: {w['runs_per_hour']['with the sleep']} -> {w['runs_per_hour']['without it']} runs an hour; "
              f"uncharged seconds per run {w['median_uncharged_seconds']['with the sleep']:.1f} -> "
              f"{w['median_uncharged_seconds']['without it']:.1f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
