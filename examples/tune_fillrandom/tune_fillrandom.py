"""A tuning script: tune fillrandom with TPE, then print the best configuration against the default.

    .venv/bin/python examples/tune_fillrandom/tune_fillrandom.py [--trials 20] [--scale 0.2]
"""

from __future__ import annotations

import argparse

from tuner import tune


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--scale", type=float, default=0.2)
    args = parser.parse_args()

    result = tune(workload="fillrandom", space="default", trials=args.trials, sampler="tpe", seed=1,
                  scale=args.scale, study="example-fillrandom", out="runs/example-fillrandom")

    default = next(b for b in result.baselines if b.name == "rocksdb-default")
    best_ops, default_ops = result.best_metrics["ops_per_sec"], default.metrics["ops_per_sec"]
    print(f"best {best_ops:,.0f} ops/s vs default {default_ops:,.0f} ops/s ({best_ops / default_ops:.2f}x)")
    for name, value in result.best_params.items():
        print(f"  {name} = {value}")
    complete = [t for t in result.trials if t.outcome == "complete"]
    print(f"{len(complete)} trials measured; summary in {result.out / 'summary.json'}")


if __name__ == "__main__":
    main()
