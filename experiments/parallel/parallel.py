"""Parallel trials: trials per hour with --parallel 1 vs 2, and how much parallel trials disturb each other.

1. Throughput of the tuner: the same seeded random-sampler study (so the same configurations) run
   with --parallel 1 (one trial at a time, in-process) on both cores and pinned to one core, and with
   --parallel 2 (Ray, 1 pinned core each); trials per hour = trials / wall time of the trial loop.
2. Interference: one fixed configuration (db_bench defaults) measured --repeats times alone on one
   pinned core, and --repeats times as a pair running at once on two pinned cores (as --parallel 2
   runs them), interleaved (alone, pair, alone, pair, ...). Median and spread of ops/s for each.

Prints a table and writes experiments/parallel/results/parallel.json with the machine it ran on.

    .venv/bin/python -m experiments.parallel.parallel [--trials 12] [--repeats 5] [--workload fillrandom] [--scale 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from experiments._host import machine_info
from experiments._script import entry, run_child
from objectives.dbbench import probe
from objectives.metrics import metrics_of
from objectives.runner import Runner
from objectives.workdir import default_work_dir
from objectives.workloads import load_workload
from search_spaces import Context
from tuner.stats import spread
from tuner.summary import Summary

RESULTS = Path(__file__).with_name("results") / "parallel.json"


def study(args: argparse.Namespace, parallel: int, root: Path, cores: int | None = None) -> dict[str, float]:
    """One study; ``cores`` pins the whole tune process (and so db_bench) to that many cores."""
    out = root / f"parallel-{parallel}-{cores or 'all'}"
    cmd = [sys.executable, "-m", "tuner.cli", "tune", "--workload", args.workload, "--scale", str(args.scale),
           "--trials", str(args.trials), "--sampler", "random", "--seed", "7", "--out", str(out),
           "--no-mlflow", "--no-plots", "--no-baselines", "--parallel", str(parallel)]
    if parallel > 1:
        cmd += ["--cpus-per-trial", "1"]
    started = time.monotonic()
    pin = (lambda: os.sched_setaffinity(0, set(range(cores)))) if cores else None
    run_child(cmd, check=True, capture_output=True, preexec_fn=pin)
    wall = time.monotonic() - started
    counts = Summary.load(out / "summary.json").trials
    loop = _trial_loop_seconds(out)
    trials = counts.complete + counts.failed
    return {"trials": trials, "wall_seconds": wall, "trial_loop_seconds": loop, "trials_per_hour": 3600 * trials / loop}


def _trial_loop_seconds(out: Path) -> float:
    """From the first trial's start to the last trial's end, as Optuna recorded them."""
    trials = Summary.load(out / "summary.json").optuna_study(out).trials
    starts = [t.datetime_start for t in trials if t.datetime_start]
    ends = [t.datetime_complete for t in trials if t.datetime_complete]
    return (max(ends) - min(starts)).total_seconds()


def interference(args: argparse.Namespace, root: Path) -> dict[str, list[float]]:
    db_bench = probe()
    workload = load_workload(args.workload).resolve(args.scale, Context.of_host())
    runner = Runner(db_bench)
    before = os.sched_getaffinity(0)
    results: dict[str, list[float]] = {"alone": [], "in_pair": []}

    def one(core: int, where: Path, sink: list[float]) -> None:
        os.sched_setaffinity(0, {core})  # this thread only: db_bench inherits it
        ops = metrics_of(runner.run(workload, {}, where))["ops_per_sec"]
        assert ops is not None, where
        sink.append(ops)

    for i in range(args.repeats):
        alone: list[float] = []
        t = threading.Thread(target=one, args=(0, root / f"alone-{i}", alone))
        t.start()
        t.join()
        results["alone"] += alone
        pair: list[float] = []
        threads = [threading.Thread(target=one, args=(c, root / f"pair-{i}-{c}", pair)) for c in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results["in_pair"] += pair
        print(f"round {i}: alone {alone[0]:,.0f} ops/s, in a pair {pair[0]:,.0f} and {pair[1]:,.0f} ops/s", flush=True)
    os.sched_setaffinity(0, before)
    return results


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), **spread(values).to_dict()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workload", default="fillrandom")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("needs at least 2 cores")
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-bench-") as tmp:
        root = Path(tmp)
        rates = {"--parallel 1 (2 cores)": study(args, 1, root), "--parallel 1 (1 core)": study(args, 1, root, 1),
                 "--parallel 2 (1 core each)": study(args, 2, root)}
        for name, r in rates.items():
            print(f"{name}: {r['trials']} trials in {r['trial_loop_seconds']:.0f} s: "
                  f"{r['trials_per_hour']:.0f} trials/hour", flush=True)
        spread = interference(args, root)
    stats = {k: _stats(v) for k, v in spread.items()}
    speedup = rates["--parallel 2 (1 core each)"]["trials_per_hour"] / rates["--parallel 1 (1 core)"]["trials_per_hour"]
    slowdown = stats["in_pair"]["median"] / stats["alone"]["median"]
    print(f"\n{'':<28} {'trials/hour':>12}")
    for name, r in rates.items():
        print(f"{name:<28} {r['trials_per_hour']:>12.0f}")
    print(f"speed-up of --parallel 2 over --parallel 1 at one core per trial: {speedup:.2f}x")
    print(f"\none configuration ({args.workload}, db_bench defaults), ops/s over {args.repeats} rounds:")
    for k, s in stats.items():
        print(f"  {k:<10} median {s['median']:>10,.0f}  range {s['min']:,.0f}-{s['max']:,.0f}  CV {100 * s['cv']:.1f} %")
    print(f"  a trial running beside another measures {slowdown:.2f}x of its throughput alone")
    host = Context.of_host()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine_info(host, default_work_dir()),
        "db_bench": probe().to_dict(), "workload": args.workload, "scale": args.scale, "trials": args.trials,
        "studies": rates, "speedup": speedup, "interference": {"ops_per_sec": spread, "stats": stats,
                                                               "pair_vs_alone": slowdown},
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    entry(main)
