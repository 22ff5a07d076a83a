"""Same question, two RocksDB versions: does a study's answer hold on another db_bench build?

    .venv/bin/python -m experiments.version_transfer.version_transfer [--study runs/default-fillrandom] [--rounds 5] [--top 5]

Takes a finished study's best configurations (its ``--top`` ranked trials, the reported best
first) and the defaults, and measures every one on every release build in the cache, each version on
its own library defaults as an upgraded application gets them (objectives/defaults.py), in interleaved rounds (each round
visits every version and configuration in a fresh random order), on the study's own workload.
Per version: each configuration's median ops/s, the best's gain over the defaults as the geometric
mean of the paired per-round ratios with a 95 % t interval (tuner.stats.paired_ratio), and Kendall's tau between the
configurations' order on the two versions.

Writes experiments/version_transfer/results/version_transfer.json with the machine, the builds and the date.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from objectives.dbbench import DbBench, probe, release_builds
from objectives.measurement import measure
from objectives.runner import Runner
from objectives.workloads import load_workload
from search_spaces import Context, load_space
from tuner import ranking
from tuner.experiment import machine_info
from tuner.stats import paired_ratio, rank_correlation
from tuner.summary import Summary

RESULTS = Path(__file__).with_name("results") / "version_transfer.json"


def configurations(study_dir: Path, top: int) -> tuple[Summary, dict[str, dict[str, str]]]:
    """(the study's summary, name -> db_bench flags): the defaults and the study's ``top`` best."""
    summary = Summary.load(study_dir / "summary.json")
    study = summary.optuna_study()
    host, data, scale = summary.host, summary.data_bytes, summary.scale
    if (host is None or host.cores is None or host.ram_bytes is None or host.memory_budget_bytes is None
            or data is None or scale is None or summary.space is None or summary.best is None):
        raise SystemExit(f"{study_dir}: its summary gives no host, data size, scale, space or best")
    ctx = Context(cores=host.cores, ram=host.ram_bytes, data=data, scale=scale, budget=host.memory_budget_bytes)
    space = load_space(summary.space).resolve(ctx)
    best = summary.best.trial
    order = ranking.top_k(study.trials, ["maximize"], top)
    order = [t for t in order if t.number == best] + [t for t in order if t.number != best][:top - 1]
    configs: dict[str, dict[str, str]] = {"rocksdb-default": {}}
    for t in order:
        configs[f"trial {t.number}" + (" (best)" if t.number == best else "")] = space.flags(t.params)
    return summary, configs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", type=Path, default=Path("runs/default-fillrandom"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--versions", default=None, help="comma-separated (default: every release build)")
    args = parser.parse_args()
    summary, configs = configurations(args.study, args.top)
    versions = args.versions.split(",") if args.versions else [b.parent.name[:-8] for b in reversed(release_builds())]
    builds: dict[str, DbBench] = {v: probe(version=v) for v in versions}
    host = Context.of_host()
    workload = load_workload(str(summary.workload)).resolve(summary.scale or 1.0, host)
    samples: dict[str, dict[str, list[float]]] = {v: {c: [] for c in configs} for v in versions}
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-versions-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        runners = {v: Runner(db, root / "work") for v, db in builds.items()}
        for i in range(args.rounds):
            for v, name in rng.sample([(v, c) for v in versions for c in configs], len(versions) * len(configs)):
                m = measure(runners[v], workload, configs[name], root / "logs", 1, 1).metrics
                assert m["ops_per_sec"] is not None, f"{v} {name}"
                samples[v][name].append(m["ops_per_sec"])
                print(f"round {i + 1}/{args.rounds} {v} {name}: {m['ops_per_sec']:,.0f} ops/s", flush=True)
        machine = machine_info(host, root / "work")
    best = next(c for c in configs if c.endswith("(best)"))
    per_version: dict[str, dict[str, Any]] = {v: {"db_bench": builds[v].to_dict(),
                       "median_ops_per_sec": {c: statistics.median(s) for c, s in samples[v].items()},
                       "best_over_default": paired_ratio(samples[v][best], samples[v]["rocksdb-default"])}
                   for v in versions}
    tau = {}
    for a, b in zip(versions, versions[1:]):
        ma, mb = per_version[a]["median_ops_per_sec"], per_version[b]["median_ops_per_sec"]
        tau[f"{a} vs {b}"] = rank_correlation([ma[c] for c in configs], [mb[c] for c in configs])
    record = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine, "study": summary.study,
              "workload": workload.description, "scale": summary.scale, "rounds": args.rounds,
              "configurations": configs, "samples": samples, "versions": per_version, "kendall_tau": tau}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    for v in versions:
        g = per_version[v]["best_over_default"]
        print(f"{v}: best / defaults {g['ratio']:.2f}x (95 % {g['ci95'][0]:.2f}-{g['ci95'][1]:.2f}, {g['verdict']})")
    print(f"Kendall tau of the {len(configs)} configurations' order: {tau}\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
