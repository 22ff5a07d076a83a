"""Does a small run rank configurations as the full one does? The case for (or against) --fidelity.

    .venv/bin/python -m experiments.fidelity.fidelity

Reads experiments/record_space/results/space-write-fidelity.json(l) (experiments/record_space/record_space.py --fidelity N: N
random configurations of the default space, each measured at 1/8, 1/2 and the full data size) and
writes experiments/fidelity/results/fidelity.json: per low fidelity, the rank correlation of its ops/s with
the full size's (Spearman, Kendall, with scipy's p-values), how many of the full size's best third a
successive-halving rung keeping the best third at that fidelity would keep, how much the full-size
best configuration is worth against the best one the rung keeps, and the machine time of each
fidelity.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from scipy.stats import kendalltau, spearmanr

from experiments._script import entry
from experiments.record_space.surrogate import DATA

HERE = Path(__file__).parent
NAME = "space-write-fidelity"


def analyse(header: dict[str, Any], runs: list[dict[str, Any]]) -> dict[str, Any]:
    full = max(header["scales"])
    ops: dict[float, dict[str, float]] = {}
    seconds: dict[float, list[float]] = {}
    for r in runs:
        if "metrics" in r and r["metrics"]["ops_per_sec"]:
            ops.setdefault(r["scale"], {})[r["config"]] = r["metrics"]["ops_per_sec"]
            seconds.setdefault(r["scale"], []).append(r["metrics"]["wall_seconds"])
    top = ops[full]
    keep = max(1, len(top) // 3)
    best_third = set(sorted(top, key=lambda c: top[c], reverse=True)[:keep])
    out: dict[str, Any] = {"configurations": len(top), "full_scale": full,
                           "median_wall_seconds": {str(s): statistics.median(v) for s, v in sorted(seconds.items())},
                           "fidelities": {}}
    for scale in sorted(s for s in ops if s != full):
        both = [c for c in top if c in ops[scale]]
        low, high = [ops[scale][c] for c in both], [top[c] for c in both]
        rho, tau = spearmanr(low, high), kendalltau(low, high)
        kept = set(sorted(both, key=lambda c: ops[scale][c], reverse=True)[:keep])
        out["fidelities"][str(scale)] = {
            "fraction_of_full": scale / full, "configurations": len(both),
            "spearman": float(rho.statistic), "spearman_p": float(rho.pvalue),
            "kendall": float(tau.statistic), "kendall_p": float(tau.pvalue),
            "best_third_kept": len(kept & best_third) / len(best_third),
            "full_best_kept": max(top, key=lambda c: top[c]) in kept,
            "best_kept_vs_best": max(top[c] for c in kept) / max(top.values()),
        }
    return out


def main() -> None:
    header = json.loads((DATA / f"{NAME}.json").read_text())
    runs = [json.loads(line) for line in (DATA / f"{NAME}.jsonl").read_text().splitlines()]
    result = {"data": f"experiments/record_space/results/{NAME}.jsonl", "recorded": header["started"],
              "db_bench": header["db_bench"], "machine": header["machine"], "workload": header["description"],
              **analyse(header, runs)}
    out = HERE / "results" / "fidelity.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    for scale, f in result["fidelities"].items():
        print(f"scale {scale} vs {result['full_scale']:g}: Spearman {f['spearman']:.2f} (p {f['spearman_p']:.2g}), "
              f"Kendall {f['kendall']:.2f}; keeps {100 * f['best_third_kept']:.0f} % of the best third; "
              f"best kept = {f['best_kept_vs_best']:.3f} of the best")
    print(f"wrote {out}")


if __name__ == "__main__":
    entry(main)
