"""Do a target's short search phases rank configurations as its full phases do? Each configuration
runs the target's workload (steady-overwrite, drain charged) in the search's phases (10 s) and in the
re-validation's (30 s), on hard-linked checkpoints of one preloaded DB, within the target's memory,
in rounds of random order; sustained and burst ops/s, the drain and the LSM state per run.

    .venv/bin/python benchmarks/phase_length.py [--target-data 2GiB] [--target-memory 1GiB] [--rounds 2]
        [--configs benchmarks/results/versus_plain_optuna_target_2026-11-27.json]
        [--out benchmarks/results/phase_length.json]

The configurations: db_bench's defaults and, per seed of ``--configs`` (a record of
benchmarks/versus_plain_optuna.py), the tuner's and the plain script's answers.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from objectives.dbbench import probe
from objectives.measurement import measure
from objectives.runner import Runner
from search_spaces import Context, load_space
from tuner.cli import parse_size
from tuner.engine import target_workload
from tuner.experiment import machine_info
from tuner.model import TuneConfig

RESULTS = Path(__file__).with_name("results")
KEPT = ("ops_per_sec", "burst_ops_per_sec", "drain_seconds", "wall_seconds", "stall_micros", "l0_files",
        "pending_compaction_bytes", "write_amp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-data", type=parse_size, default=2 * 2**30)
    parser.add_argument("--target-memory", type=parse_size, default=2**30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--configs", type=Path, default=RESULTS / "versus_plain_optuna_target_2026-11-27.json")
    parser.add_argument("--out", type=Path, default=RESULTS / "phase_length.json")
    args = parser.parse_args()
    host = Context.of_host()
    config = TuneConfig(workload="steady-overwrite", target_data=args.target_data, target_memory=args.target_memory)
    target, search, confirm = target_workload(config, load_space("default"), host)
    if confirm is None:
        raise SystemExit("steady-overwrite searches and confirms in phases of one length here: nothing to compare")
    configs: dict[str, dict[str, str]] = {"rocksdb-default": {}}
    for seed in json.loads(args.configs.read_text())["seeds"]:
        configs[f"tuner seed {seed['seed']}"] = seed["tuner"]["flags"]
        configs[f"plain seed {seed['seed']}"] = seed["plain"]["best"]["flags"]
    db_bench = probe(None)
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "db_bench": db_bench.to_dict(),
                              "target_data_bytes": target.data, "target_memory_bytes": target.memory,
                              "phase_seconds": [search.duration, confirm.duration], "configs_from": str(args.configs),
                              "configs": configs, "runs": []}
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-phase-length-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        runner = Runner(db_bench, root / "work", timeout=3600.0, memory_limit=target.memory)
        built = runner.preload(replace(confirm, memory=target.memory), root / "logs" / "preload")
        rng = random.Random(7)
        for i in range(args.rounds):
            for name in rng.sample(sorted(configs), len(configs)):
                for workload in (search, confirm):
                    run = replace(workload, snapshot=str(built.path), memory=target.memory)
                    m = measure(runner, run, configs[name], root / "logs" / f"{name}-{workload.duration}-{i}".replace(" ", "-"),
                                1, 2000 + i).metrics
                    row = {"config": name, "duration": workload.duration, "round": i, **{k: m.get(k) for k in KEPT}}
                    record["runs"].append(row)
                    print(f"round {i + 1}/{args.rounds} {name}, {workload.duration:g} s: {m['ops_per_sec']:,.0f} ops/s "
                          f"(drain {m['drain_seconds'] or 0:.1f} s)", flush=True)
                    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
