"""What running a trial beside another costs at a target: one configuration (RocksDB's defaults, on the
library defaults of the newest release build) measured on one pinned core alone, and as a pair of runs at
once on two pinned cores (as ``--parallel 2`` runs trials on this host), in interleaved rounds, each run on
a hard-linked checkpoint of a DB preloaded once at the target's size, within the target's memory (a memory
cgroup per run), in the search's timed phases.

    .venv/bin/python -m experiments.parallel.side_by_side [--target-data 256MiB] [--target-memory 128MiB]
        [--rounds 5] [--duration 10] [--out experiments/parallel/results/side-by-side-256MiB.json]

Each round runs the pair and the single run in a fresh random order; the pair's score in a round is the
geometric mean of its two runs, and "beside / alone" is the geometric mean of the per-round ratios with
a 95 % t interval (tuner.stats.paired_ratio), P99 likewise. The record names the machine, db_bench, the
target and every run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from scipy.stats import gmean

from experiments._host import machine_info
from experiments._script import entry
from experiments.held_out import HELD_OUT_SEED, project_commit, shape, shown_ratio
from objectives.contract import Task
from objectives.defaults import LIBRARY
from objectives.workdir import make_owned, prepare, remove_owned
from search_spaces import Context, load_space
from tuner.backends import BACKENDS, Backend, Config, RunFailed, Setup
from tuner.cli import parse_size
from tuner.engine import target_workload
from tuner.model import TuneConfig
from tuner.stats import paired_ratio

RESULTS = Path(__file__).with_name("results")
Metrics = dict[str, float | None]


def on_core(backend: Backend, workload: Task, core: int, log_dir: Path, sink: dict[int, Metrics],
            errors: list[str]) -> None:
    """One run pinned to ``core`` (this thread's affinity, which db_bench inherits)."""
    os.sched_setaffinity(0, {core})
    try:
        sink[core] = backend.measure(Config(), log_dir, 1, workload=workload).metrics
    except RunFailed as exc:
        errors.append(f"core {core}: {exc.reason}")


def at_once(backend: Backend, workload: Task, cores: list[int], log_dir: Path) -> list[Metrics]:
    """Runs on ``cores`` at the same time; RunFailed when one fails."""
    sink: dict[int, Metrics] = {}
    errors: list[str] = []
    threads = [threading.Thread(target=on_core, args=(backend, workload, c, log_dir / f"core-{c}", sink, errors))
               for c in cores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RunFailed("; ".join(errors))
    return [sink[c] for c in cores]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--target-data", type=parse_size, default=parse_size("256MiB"))
    parser.add_argument("--target-memory", type=parse_size, default=parse_size("128MiB"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of each timed phase (the search's)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("needs at least 2 cores")
    if args.rounds < 2:
        parser.error(f"--rounds: at least 2 (a paired interval needs two rounds), got {args.rounds}")
    config = TuneConfig(workload="steady-overwrite", target_data=args.target_data, target_memory=args.target_memory,
                        duration=args.duration, defaults=LIBRARY)
    kind = BACKENDS["db_bench"]
    found = kind.find(config)
    assert found.db_bench is not None and found.defaults is not None
    host = Context.of_host()
    target, trials, _ = target_workload(config, load_space("default"), host, found.defaults.flags)
    workload = replace(trials, memory=target.memory, duration=args.duration)
    work = prepare(None)
    root = make_owned(work, "rocksdb-tuner-side-by-side-")
    rng, rounds = random.Random(1), []
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    backend: Backend | None = None
    try:
        path = kind.preload_path(found, root, workload, HELD_OUT_SEED)
        backend = kind(Setup(work_dir=root, timeout=3600.0, seed=HELD_OUT_SEED, workload=workload,
                             found=found, memory_limit=workload.memory, preloaded=(path,)))
        backend.prepare()
        done = backend.preload(workload, root / "logs" / "preload")
        workload = replace(workload, snapshot=str(done.path))
        print(f"db_bench {found.db_bench.version}, {shape(found.defaults)}; preloaded "
              f"{done.size_bytes / 2**30:.2f} GiB in {done.seconds:.0f} s; {args.duration:g} s phases within "
              f"{(workload.memory or 0) / 2**20:.0f} MiB per run", flush=True)
        for i in range(args.rounds):
            runs: dict[str, list[Metrics]] = {}
            for arm in rng.sample(["alone", "beside"], 2):
                cores = [0] if arm == "alone" else [0, 1]
                runs[arm] = at_once(backend, workload, cores, root / "logs" / f"round-{i + 1}" / arm)
            rounds.append(runs)
            print(f"round {i + 1}/{args.rounds}: alone {runs['alone'][0]['ops_per_sec']:,.0f} ops/s; beside "
                  + " and ".join(f"{m['ops_per_sec']:,.0f}" for m in runs["beside"]) + " ops/s", flush=True)
    finally:
        if backend is not None:
            backend.teardown()
        remove_owned(root)
    alone = [float(r["alone"][0]["ops_per_sec"] or 0.0) for r in rounds]
    beside = [float(gmean([float(m["ops_per_sec"] or 0.0) for m in r["beside"]])) for r in rounds]
    p99_alone = [float(r["alone"][0]["p99_us"] or 0.0) for r in rounds]
    p99_beside = [float(gmean([float(m["p99_us"] or 0.0) for m in r["beside"]])) for r in rounds]
    ops, p99 = paired_ratio(beside, alone), paired_ratio(p99_beside, p99_alone)
    record: dict[str, Any] = {
        "when": started, "ended": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": project_commit(),
        "machine": machine_info(host, work), "db_bench": found.db_bench.to_dict(), "defaults": found.defaults.to_dict(),
        "shape": shape(found.defaults), "workload": workload.name, "data_bytes": args.target_data,
        "memory_bytes": workload.memory, "duration_seconds": args.duration, "preload": {
            "seconds": round(done.seconds, 1), "size_bytes": done.size_bytes},
        "beside_over_alone": ops.to_dict(), "p99_beside_over_alone": p99.to_dict(),
        "rounds": rounds}
    out = args.out or RESULTS / f"side-by-side-{args.target_data // 2**20}MiB.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2, default=str) + "\n")
    print(f"beside / alone: ops/s {shown_ratio(ops)}, P99 {shown_ratio(p99)}\nwrote {out}")


if __name__ == "__main__":
    entry(main)
