"""Is the tuner worth more than a plain Optuna script? Both get the same machine time on the same
workload; their answers then meet in interleaved paired rounds that chose nothing.

    .venv/bin/python benchmarks/versus_plain_optuna.py [--seeds 1,2] [--workload fillrandom] [--scale 2]
        [--budget 600] [--rounds 10] [--out benchmarks/results/versus_plain_optuna.json]

For each seed: ``rocksdb-tuner tune --workload W --scale S --budget B --seed N`` runs first, as a user
runs it (re-validation included in its budget); its answer is what it tells the user to deploy (its
best trial, or the configuration it recommends instead). Then the plain script gets the db_bench time
the tuner spent: the few lines a user would write (below, :func:`plain_search`), Optuna's default TPE
over the same search space, each trial a fresh ``fillrandom,flush,waitforcompaction`` run scored by
keys per second of its wall time, no repeats, no constraints, no re-validation; its answer is its best
trial. Held out: both answers and db_bench's defaults run the workload, as the tuner measures it
(sustained: the drain is charged), in ``--rounds`` rounds, each in a fresh random order, with db_bench
seeds neither search used; the tuner's answer over the plain one is the geometric mean of the
per-round ratios with a 95 % t interval (tuner.stats.paired_ratio). The record (machine, db_bench,
date, both searches, every sample) is rewritten after each seed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import optuna

from objectives.dbbench import probe
from objectives.measurement import measure
from objectives.runner import Runner, RunFailed
from objectives.workloads import load_workload
from search_spaces import Context, SearchSpace, load_space
from tuner.experiment import machine_info
from tuner.stats import paired_ratio

RESULTS = Path(__file__).with_name("results")
HELD_OUT_SEED = 1000  # db_bench seeds of the held-out rounds: 1000 + round, used by neither search


def plain_search(db_bench: str, space: SearchSpace, base: dict[str, str], keys: int, budget: float, seed: int,
                 work: Path) -> dict[str, Any]:
    """A user's Optuna script: TPE with Optuna's defaults, one fresh load per trial scored by keys per
    second of the fill + flush + waitforcompaction wall time, until its db_bench time reaches ``budget``."""
    spent = 0.0

    def objective(trial: optuna.Trial) -> float:
        nonlocal spent
        flags = {**base, **space.flags(space.suggest(trial))}
        db = work / f"plain-db-{trial.number}"
        command = [db_bench, "--benchmarks=fillrandom,flush,waitforcompaction", f"--db={db}", f"--seed={seed}",
                   *(f"--{k}={v}" for k, v in flags.items())]
        started = time.monotonic()
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=3600)
            return keys / (time.monotonic() - started)
        finally:
            spent += time.monotonic() - started
            shutil.rmtree(db, ignore_errors=True)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    while spent < budget:
        study.optimize(objective, n_trials=1, catch=(subprocess.CalledProcessError, subprocess.TimeoutExpired))
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    return {"trials": len(study.trials), "failed": len(study.trials) - len(done), "db_bench_seconds": round(spent, 1),
            "best": {"trial": study.best_trial.number, "params": study.best_params,
                     "flags": space.flags(study.best_params), "keys_per_second": study.best_value}}


def tuner_search(workload: str, scale: float, budget: float, seed: int, out: Path) -> dict[str, Any]:
    """``rocksdb-tuner tune`` as a user runs it; its summary's answer, provenance and machine time."""
    command = [str(Path(sys.executable).with_name("rocksdb-tuner")), "tune", "--workload", workload,
               "--scale", f"{scale:g}", "--budget", f"{budget:g}s", "--seed", str(seed), "--out", str(out),
               "--study", f"versus-plain-{seed}", "--no-mlflow"]
    print("$ " + " ".join(command), flush=True)
    started = time.monotonic()
    subprocess.run(command, check=True)
    summary = json.loads((out / "summary.json").read_text())
    answer = summary["answer"]
    if answer["recommend"] == "best":
        flags = summary["best"]["flags"]
    else:  # a baseline it recommends instead (db_bench's defaults are {})
        baseline = next(b for b in summary["baselines"] if b["name"] == answer["name"])
        flags = load_space(summary["space"]).flags(baseline["params"])
    return {"command": " ".join(command), "wall_seconds": round(time.monotonic() - started),
            "db_bench_seconds": round(summary["machine_seconds"]["total"], 1),
            "machine_seconds": summary["machine_seconds"], "trials": summary["trials"],
            "provenance": summary.get("provenance"), "answer": answer, "flags": flags,
            "reported_gain": (summary.get("revalidation") or {}).get("best_vs_reference")}


def held_out(runner: Runner, workload: Any, configs: dict[str, dict[str, str]], rounds: int, logs: Path,
             rng: random.Random) -> dict[str, Any]:
    """Every configuration once per round, in a fresh random order; sustained ops/s as the tuner measures."""
    samples: dict[str, list[float]] = {c: [] for c in configs}
    failed: dict[str, list[str]] = {}
    for i in range(rounds):
        for name in rng.sample(sorted(configs), len(configs)):
            try:
                m = measure(runner, workload, configs[name], logs, 1, HELD_OUT_SEED + i).metrics
            except RunFailed as exc:
                failed.setdefault(name, []).append(exc.reason)
                samples[name].append(0.0)  # paired_ratio leaves out a round with a failed side
                continue
            samples[name].append(m["ops_per_sec"])
            print(f"  round {i + 1}/{rounds} {name}: {m['ops_per_sec']:,.0f} ops/s", flush=True)
    return {"ops_per_sec": samples, "failed": failed,
            "median_ops_per_sec": {c: statistics.median(v) for c, v in samples.items()},
            "tuner_over_plain": paired_ratio(samples["tuner"], samples["plain"]),
            "over_default": {c: paired_ratio(samples[c], samples["rocksdb-default"]) for c in ("tuner", "plain")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1", help="comma-separated seeds, one comparison each")
    parser.add_argument("--workload", default="fillrandom")
    parser.add_argument("--scale", type=float, default=2.0)
    parser.add_argument("--budget", type=float, default=600.0, help="the tuner's --budget, seconds")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS / "versus_plain_optuna.json")
    args = parser.parse_args()
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise SystemExit(f"--seeds: whole numbers, e.g. 1,2,3; got {args.seeds!r}") from None
    db_bench = probe(None)
    host = Context.of_host()
    workload = load_workload(args.workload).resolve(args.scale, host)
    if workload.kind != "load":
        raise SystemExit(f"--workload: the plain script loads from empty; {args.workload} is a {workload.kind} workload")
    space = load_space("default").resolve(Context(cores=host.cores, ram=host.ram, data=workload.data_bytes(),
                                                  scale=args.scale, budget=host.ram // 4))
    base = {k: str(v) for k, v in workload.flags.items()}
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "workload": args.workload,
                              "scale": args.scale, "data_bytes": workload.data_bytes(), "budget_seconds": args.budget,
                              "rounds": args.rounds, "db_bench": db_bench.to_dict(), "seeds": []}
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-versus-plain-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        for seed in seeds:
            tuner = tuner_search(args.workload, args.scale, args.budget, seed, root / f"tuner-{seed}")
            print(f"seed {seed}: the tuner spent {tuner['db_bench_seconds']:.0f} s of db_bench; the plain script "
                  "gets as much", flush=True)
            plain = plain_search(str(db_bench.path), space, base, int(workload.flags["num"]),
                                 tuner["db_bench_seconds"], seed, root / "work")
            print(f"seed {seed}: the plain script ran {plain['trials']} trials in {plain['db_bench_seconds']:.0f} s",
                  flush=True)
            configs = {"rocksdb-default": {}, "tuner": tuner["flags"], "plain": plain["best"]["flags"]}
            rounds = held_out(Runner(db_bench, root / "work"), workload, configs, args.rounds,
                              root / "logs" / f"held-out-{seed}", rng)
            record["seeds"].append({"seed": seed, "tuner": tuner, "plain": plain, "held_out": rounds})
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(record, indent=2, default=str) + "\n")
            g = rounds["tuner_over_plain"]
            print(f"seed {seed}: tuner / plain {g['ratio']:.3f}x (95 % CI {g['ci95'][0]:.3f}-{g['ci95'][1]:.3f}, "
                  f"{g['verdict']})", flush=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
