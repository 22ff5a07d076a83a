"""Do a target's short search phases rank configurations as its full phases do? Each configuration
runs the target's workload (steady-overwrite, drain charged) in phases of each of ``--durations`` (the
last is the re-validation's), on hard-linked checkpoints of one preloaded DB, within the target's
memory, in rounds of random order; sustained and burst ops/s, the drain and the LSM state per run.
Then, per duration, how its ranking (median of the rounds) agrees with the last's: Kendall's tau and
Spearman's rho (scipy.stats), and the share of pairs ordered alike.

    .venv/bin/python -m experiments.fidelity.phase_length [--target-data 2GiB] [--target-memory 1GiB] [--rounds 2]
        [--durations 10,20,30] [--sample 8 --seed 1] [--configs RECORD] [--defaults library]
        [--out experiments/fidelity/results/phase_length.json]

The configurations: rocksdb-default (the defaults every run starts from, --defaults), ``--sample``
configurations drawn at random from the default space at the target (repaired to meet its constraints), and, per
seed of ``--configs`` (a record of experiments/versus_plain_optuna/versus_plain_optuna.py), the tuner's and the plain
script's answers.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Any

from scipy import stats

from experiments._host import machine_info
from experiments._script import entry
from objectives.dbbench import probe
from objectives.defaults import LIBRARY, MODES, defaults_of
from objectives.measurement import measure
from objectives.runner import Runner
from search_spaces import Context, load_space
from tuner.backends import as_workload
from tuner.cli import parse_size
from tuner.engine import memory_plan, target_workload
from tuner.executors import Slot
from tuner.model import TuneConfig

RESULTS = Path(__file__).with_name("results")
KEPT = ("ops_per_sec", "burst_ops_per_sec", "drain_seconds", "wall_seconds", "stall_micros", "l0_files",
        "pending_compaction_bytes", "write_amp")


def agreement(runs: list[dict[str, Any]], durations: list[float]) -> list[dict[str, Any]]:
    """Per duration, how the ranking by median ops/s agrees with the last duration's."""
    medians = {d: {c: statistics.median(r["ops_per_sec"] for r in runs if r["duration"] == d and r["config"] == c)
                   for c in {r["config"] for r in runs if r["duration"] == d}} for d in durations}
    reference = medians[durations[-1]]
    rows = []
    for d in durations[:-1]:
        names = sorted(set(medians[d]) & set(reference))
        short, full = [medians[d][n] for n in names], [reference[n] for n in names]
        pairs = list(combinations(range(len(names)), 2))
        alike = sum((short[i] - short[j]) * (full[i] - full[j]) > 0 for i, j in pairs)
        rows.append({"duration": d, "against": durations[-1], "configs": len(names),
                     "kendall_tau": stats.kendalltau(short, full).statistic,
                     "spearman_rho": stats.spearmanr(short, full).statistic,
                     "pairs_alike": alike, "pairs": len(pairs),
                     "best_short": max(names, key=lambda n: medians[d][n]),
                     "best_full": max(names, key=lambda n: reference[n])})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-data", type=parse_size, default=2 * 2**30)
    parser.add_argument("--target-memory", type=parse_size, default=2**30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--durations", default="10,30", help="phase lengths in seconds, the last the reference")
    parser.add_argument("--sample", type=int, default=0, help="configurations drawn from the default space")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--configs", type=Path, help="a record of experiments/versus_plain_optuna/versus_plain_optuna.py")
    parser.add_argument("--defaults", choices=MODES, default=LIBRARY)
    parser.add_argument("--out", type=Path, default=RESULTS / "phase_length.json")
    args = parser.parse_args()
    durations = [float(d) for d in args.durations.split(",")]
    host = Context.of_host()
    db_bench = probe(None)
    defaults = defaults_of(db_bench, args.defaults)
    config = TuneConfig(workload="steady-overwrite", target_data=args.target_data, target_memory=args.target_memory)
    space = load_space("default")
    target, search, confirm = target_workload(config, space, host, defaults.flags)
    workload = as_workload(confirm or search)
    _, budget = memory_plan(config.target, workload, Slot(host.cores, host.ram), target)
    resolved = space.resolve(Context(cores=host.cores, ram=target.memory or host.ram, data=target.data,
                                     scale=workload.scale, budget=budget))
    configs: dict[str, dict[str, Any]] = {"rocksdb-default": {}}
    rng = random.Random(args.seed)
    for i in range(args.sample):  # as the tuner's random points are: a draw, repaired when a constraint fails
        drawn = resolved.sample(rng)
        feasible = resolved.repair(drawn, seed=i) if resolved.violations(drawn) else drawn
        configs[f"sample {i + 1}"] = resolved.config(feasible).flags()
    for seed in json.loads(args.configs.read_text())["seeds"] if args.configs else ():
        configs[f"tuner seed {seed['seed']}"] = seed["tuner"]["flags"]
        configs[f"plain seed {seed['seed']}"] = seed["plain"]["best"]["flags"]
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "db_bench": db_bench.to_dict(),
                              "defaults": defaults.to_dict(), "target_data_bytes": target.data,
                              "target_memory_bytes": target.memory, "phase_seconds": durations,
                              "configs_from": str(args.configs) if args.configs else None,
                              "sample": {"count": args.sample, "seed": args.seed, "space": "default"},
                              "configs": configs, "runs": []}
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-phase-length-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        runner = Runner(db_bench, root / "work", timeout=3600.0, memory_limit=target.memory, defaults=defaults)
        built = runner.preload(replace(workload, memory=target.memory), root / "logs" / "preload")
        order = random.Random(7)
        for i in range(args.rounds):
            for name in order.sample(sorted(configs), len(configs)):
                for seconds in durations:
                    run = replace(workload, duration=seconds, snapshot=str(built.path), memory=target.memory)
                    logs = root / "logs" / f"{name}-{seconds:g}-{i}".replace(" ", "-")
                    m = measure(runner, run, configs[name], logs, 1, 2000 + i).metrics
                    record["runs"].append({"config": name, "duration": seconds, "round": i,
                                           **{k: m.get(k) for k in KEPT}})
                    print(f"round {i + 1}/{args.rounds} {name}, {seconds:g} s: {m['ops_per_sec']:,.0f} ops/s "
                          f"(drain {m['drain_seconds'] or 0:.1f} s)", flush=True)
                    args.out.write_text(json.dumps(record, indent=1) + "\n")
    record["agreement"] = agreement(record["runs"], durations)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    for row in record["agreement"]:
        print(f"{row['duration']:g} s against {row['against']:g} s: Kendall tau {row['kendall_tau']:.2f}, Spearman rho "
              f"{row['spearman_rho']:.2f}, {row['pairs_alike']}/{row['pairs']} pairs alike; best {row['best_short']} "
              f"vs {row['best_full']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
