"""Does `--pruner median` find as good a configuration in less db_bench time? Measured, not assumed.

Runs the same TPE study (same seed, same trial count) twice on the real db_bench, without and with
the median pruner, adds up the time each spent running db_bench, then re-measures both studies'
best configurations and db_bench's defaults in interleaved rounds (A B C, A B C, ...) so the two
"bests" are compared on medians, not on their lucky single runs. Prints a table and writes
experiments/pruning/results/pruning.json with the machine it ran on.

    .venv/bin/python -m experiments.pruning.pruning [--trials 40] [--scale 2] [--seed 1] [--rounds 3] [--warmup 4]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments._script import entry
from objectives.measurement import measure
from objectives.runner import Runner
from search_spaces import Context, GiB
from tuner import Study, TuneConfig
from tuner.backends import as_workload
from tuner.observers import SilentProgress
from tuner.trials import TrialRecord

RESULTS = Path(__file__).with_name("results") / "pruning.json"


def _study(root: Path, pruner: str, args: argparse.Namespace) -> tuple[Study, dict[str, Any]]:
    config = TuneConfig(workload="fillrandom", scale=args.scale, sampler="tpe", seed=args.seed, trials=args.trials,
                        pruner=pruner, pruner_warmup=args.warmup, study=f"pruning-{pruner}", out=root / pruner,
                        mlflow=False, plots=False)
    study = Study(config, SilentProgress())
    started = time.monotonic()
    study.run()
    snapshot = study.snapshot()
    best = snapshot.best()
    assert best is not None, f"{pruner}: no trial completed"
    figures: dict[str, Any] = {
        "pruner": pruner,
        "wall_seconds": time.monotonic() - started,
        "db_bench_seconds": sum(TrialRecord.of(t).seconds or 0.0 for t in snapshot.trials)
        + sum(b.seconds or 0.0 for b in snapshot.baselines),
        "trials": {k: len(v) for k, v in snapshot.by_outcome().items()},
        "best_trial": best.number,
        "best_params": best.params,
        "best_single_run_ops_per_sec": TrialRecord.of(best).metric("ops_per_sec"),
    }
    print(f"{pruner:<7} {figures['db_bench_seconds']:8.0f} s of db_bench, best single run "
          f"{figures['best_single_run_ops_per_sec']:,.0f} ops/s (trial {figures['best_trial']}), "
          f"{figures['trials']}", flush=True)
    return study, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--scale", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=4, help="--pruner-warmup of the pruned study")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-pruning-") as tmp:
        root = Path(tmp)
        runs = {p: _study(root, p, args) for p in ("none", "median")}
        studies = {p: study for p, (study, _) in runs.items()}
        figures = {p: fig for p, (_, fig) in runs.items()}
        contenders: dict[str, dict[str, Any]] = {"rocksdb-default": {}}
        bests = {p: s.snapshot() for p, s in studies.items()}
        best_none, best_median = bests["none"].best(), bests["median"].best()
        assert best_none is not None and best_median is not None  # _study found them
        contenders.update({"best without pruner": bests["none"].space.config(best_none.params).flags(),
                           "best with median pruner": bests["median"].space.config(best_median.params).flags()})
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        parts, db_bench = studies["none"].parts, bests["none"].found.db_bench
        assert db_bench is not None  # db_bench's workload
        runner = Runner(db_bench, work_dir=parts.work_dir, timeout=parts.config.measurement.trial_timeout,
                        memory_limit=parts.memory_limit, defaults=parts.found.defaults)  # as the study's runs
        for round_ in range(args.rounds):
            for name, flags in contenders.items():
                m = measure(runner, as_workload(bests["none"].workload), flags,
                            root / "remeasure" / name.replace(" ", "-") / str(round_), 1, bests["none"].run_seed)
                ops = m.metrics["ops_per_sec"]
                assert ops is not None, name
                samples[name].append(ops)
                print(f"round {round_ + 1}: {name}: {samples[name][-1]:,.0f} ops/s", flush=True)
    default = statistics.median(samples["rocksdb-default"])
    rows: dict[str, dict[str, Any]] = {
        name: {"ops_per_sec": v, "median": statistics.median(v), "vs_default": statistics.median(v) / default}
            for name, v in samples.items()}
    saved = 1 - figures["median"]["db_bench_seconds"] / figures["none"]["db_bench_seconds"]
    print(f"\n{'configuration':<26} {'median ops/s':>13} {'range':>21} {'vs default':>11}")
    for name, row in rows.items():
        print(f"{name:<26} {row['median']:>13,.0f} {min(row['ops_per_sec']):>10,.0f}-{max(row['ops_per_sec']):<10,.0f}"
              f" {row['vs_default']:>10.2f}x")
    print(f"db_bench time: {figures['none']['db_bench_seconds']:.0f} s without pruner, "
          f"{figures['median']['db_bench_seconds']:.0f} s with ({100 * saved:.0f} % less)")
    host = Context.of_host()
    args.results.parent.mkdir(exist_ok=True)
    args.results.write_text(json.dumps({
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "args": {**vars(args), "results": str(args.results)},
        "db_bench": db_bench.to_dict(),
        "studies": figures,
        "remeasured": rows, "db_bench_time_saved_fraction": saved,
        "machine": {"cores": host.cores, "ram_gib": round(host.ram / GiB, 1), "python": platform.python_version()},
    }, indent=2) + "\n")
    print(f"wrote {args.results}")


if __name__ == "__main__":
    entry(main)
