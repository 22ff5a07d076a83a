"""Sampler benchmark on recorded real measurements: which sampler finds a good configuration soonest.

Each sampler the tuner offers (tpe, gp, skopt, cmaes, random) and one peer optimizer from PyPI
(FLAML's CFO) searches the sub-space of experiments/data/sampler-space.toml for --trials trials, with
--seeds seeds. The objective replays experiments/data/sampler-grid.json (objectives/replay.py): each
proposal is answered with one of the real runs recorded for its nearest grid point, so the samplers
meet the real noise. A sampler is scored on the true value (mean of the recorded runs) of the points
it proposed: trials until one is within 2 % of the table's optimum, and the regret curve.

Prints a table, writes experiments/results/sampler-benchmark.json and sampler-regret.png.

    .venv/bin/python experiments/sampler_benchmark.py [--seeds 10] [--trials 60] [--samplers tpe,gp,...]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import warnings
from pathlib import Path
from typing import Callable

import optuna

from objectives.replay import Point, ReplayTable
from search_spaces import Context, SearchSpace, load_space
from tuner.samplers import make_sampler

HERE = Path(__file__).parent
SPACE = HERE / "data" / "sampler-space.toml"
TABLE = HERE / "data" / "sampler-grid.json"
RESULTS = HERE / "results"
SAMPLERS = ("tpe", "gp", "skopt", "cmaes", "random", "flaml-cfo")
WITHIN = 0.02
CHECKPOINTS = (10, 20, 30, 60)

Search = Callable[[SearchSpace, ReplayTable, int, int], list[Point]]


def optuna_search(name: str) -> Search:
    def run(space: SearchSpace, table: ReplayTable, seed: int, trials: int) -> list[Point]:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = make_sampler(name, seed=seed, directions=["maximize"], trials=trials)
        study = optuna.create_study(direction="maximize", sampler=sampler)
        rng, proposed = random.Random(seed), []
        for _ in range(trials):
            trial = study.ask()
            point = table.snap(space.suggest(trial))
            study.tell(trial, table.observe(point, rng))
            proposed.append(point)
        return proposed
    return run


def flaml_search(space: SearchSpace, table: ReplayTable, seed: int, trials: int) -> list[Point]:
    """FLAML's CFO (cost-frugal local search), through its suggest / on_trial_complete interface."""
    from flaml import CFO, tune

    config = {}
    for p in space.parameters:
        if getattr(p, "log", False):
            config[p.name] = tune.lograndint(p.low, p.high + 1)
        else:
            config[p.name] = tune.randint(p.low, p.high + 1)
    search = CFO(metric="ops_per_sec", mode="max", space=config, seed=seed)
    rng, proposed, asked = random.Random(seed), [], 0
    while len(proposed) < trials:
        asked += 1
        params = search.suggest(str(asked))
        if params is None:  # CFO declines to repeat a configuration it has measured; ask again
            if asked > 50 * trials:
                raise RuntimeError("FLAML CFO stopped proposing new configurations")
            continue
        point = table.snap(params)
        search.on_trial_complete(str(asked), {"ops_per_sec": table.observe(point, rng), "config": params})
        proposed.append(point)
    return proposed


def searches() -> dict[str, Search]:
    return {**{n: optuna_search(n) for n in SAMPLERS if n != "flaml-cfo"}, "flaml-cfo": flaml_search}


def score(table: ReplayTable, proposed: list[Point]) -> tuple[int | None, list[float]]:
    """Trials until a proposal within WITHIN of the optimum (None: never), and the regret curve:
    1 - (highest true value among the proposals so far) / optimum."""
    best, regret, reached = 0.0, [], None
    optimum = table.optimum()
    for i, point in enumerate(proposed, 1):
        best = max(best, table.mean(point))
        regret.append(1 - best / optimum)
        if reached is None and best >= (1 - WITHIN) * optimum:
            reached = i
    return reached, regret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    names = args.samplers.split(",")
    unknown = [n for n in names if n not in SAMPLERS]
    if unknown:
        raise SystemExit(f"--samplers: unknown {unknown} (choose from {', '.join(SAMPLERS)})")
    space = load_space(SPACE).resolve(Context.of_host())
    table = ReplayTable.load(args.table, space)
    near = sum(table.mean(p) >= (1 - WITHIN) * table.optimum() for p in table.runs)
    print(f"{len(table.runs)} recorded points, optimum {table.optimum():,.0f} ops/s ({near} points within 2 % of it), "
          f"median run-to-run CV {100 * table.noise_cv():.1f} %; {args.seeds} seeds x {args.trials} trials")
    results = {}
    for name in names:
        started, reached, curves, search = time.monotonic(), [], [], searches()[name]
        for seed in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                proposed = search(space, table, seed, args.trials)
            r, curve = score(table, proposed)
            reached.append(r)
            curves.append(curve)
        results[name] = summarize(reached, curves, args.trials, time.monotonic() - started)
        s = results[name]
        at = ", ".join(f"{100 * s['median_regret'][n - 1]:.1f} %" for n in CHECKPOINTS if n <= args.trials)
        print(f"{name:<10} within 2 %: {s['reached']}/{args.seeds} seeds, median trials {s['median_trials_to_2pct']}; "
              f"median regret after {'/'.join(str(n) for n in CHECKPOINTS if n <= args.trials)} trials: {at} "
              f"({s['seconds']:.0f} s)", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "table": str(args.table),
              "points": len(table.runs), "points_within": near, "optimum_ops_per_sec": table.optimum(), "noise_cv": table.noise_cv(),
              "seeds": args.seeds, "trials": args.trials, "within": WITHIN, "samplers": results}
    (args.out / "sampler-benchmark.json").write_text(json.dumps(report, indent=1) + "\n")
    plot(results, args.out / "sampler-regret.png", args.seeds)
    print(f"wrote {args.out / 'sampler-benchmark.json'} and {args.out / 'sampler-regret.png'}")


def summarize(reached: list[int | None], curves: list[list[float]], trials: int, seconds: float) -> dict:
    """Median trials to within 2 % (a seed that never got there counts as trials + 1, i.e. "> trials")."""
    counted = sorted(r if r is not None else trials + 1 for r in reached)
    median = statistics.median(counted)
    return {
        "reached": sum(r is not None for r in reached),
        "median_trials_to_2pct": median if median <= trials else f"> {trials}",
        "trials_to_2pct": reached,
        "median_regret": [statistics.median(c[i] for c in curves) for i in range(trials)],
        "median_final_regret": statistics.median(c[-1] for c in curves),
        "seconds": round(seconds, 1),
    }


def plot(results: dict, path: Path, seeds: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, s in results.items():
        ax.plot(range(1, len(s["median_regret"]) + 1), [100 * r for r in s["median_regret"]], label=name)
    ax.axhline(100 * WITHIN, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("trial")
    ax.set_ylabel("regret, % below the optimum (median of seeds)")
    ax.set_title(f"Samplers on recorded db_bench runs ({seeds} seeds)")
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
