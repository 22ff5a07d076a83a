"""Which sampler finds a good configuration soonest: a benchmark on a surrogate of real db_bench runs.

For each recorded workload (experiments/record_space/record_space.py: the full default space, all 9 options with
the conditional zstd level, a write-heavy and a read-heavy one within a memory cgroup), a surrogate
(experiments/record_space/surrogate.py) fitted on the real runs, with their measured noise, answers the samplers'
proposals. Every sampler searches the same way the tuner does: it first measures the study's starts
(db_bench's defaults and the benchmark.sh-style configuration, as recorded), and a proposal that
breaks a constraint is told as rejected and its nearest feasible neighbour runs next (rejected ones
cost no budget). The configuration a search would report is its best *observed* run (noise
included); its regret is how far that configuration's true (noise-free) value falls below the
surrogate's optimum.

Each budget (10, 20, 40, 80 trials) is its own search, as a study with that budget runs it: the
tuner's samplers take random initial points sized to it (tuner.samplers.startup_size), so a 10-trial
search is not the first 10 trials of an 80-trial one.

Samplers: the tuner's TPE (multivariate, grouped, constant liar) and Optuna 5's default TPE (its own
10 random start-up trials), Optuna's GP (needs PyTorch), the tuner's scikit-optimize adapter, CMA-ES,
random search, and two peer optimizers from PyPI: FLAML's CFO and Nevergrad's NGOpt (peers get a
repaired proposal's value).

Prints, per budget, the median regret and the CPU per trial, and the chance that one sampler's
search ends better than another's with the same seed (ties left out) with its exact 95 % interval;
writes experiments/sampler_benchmark/results/sampler-benchmark.json and sampler-regret.png (a workload not re-run, e.g.
with --workloads space-read, keeps its results from the existing file when that has the same seeds
and budgets).

    .venv/bin/python -m experiments.sampler_benchmark.sampler_benchmark [--seeds 20] [--budgets 10,20,40,80]
        [--samplers tpe,gp,...] [--jobs N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import optuna
from scipy.stats import binomtest

from experiments._script import entry
from experiments.record_space.surrogate import Surrogate, load_recording, optimum, space_of, validate
from search_spaces import SearchSpace
from search_spaces.parameters import CategoricalParam
from tuner.samplers import make_sampler
from tuner.trials import record

RESULTS = Path(__file__).with_name("results")
WORKLOADS = ("space-write", "space-read")
SAMPLERS = ("tpe", "tpe-default", "gp", "skopt", "cmaes", "random", "flaml-cfo", "nevergrad")
BUDGETS = (10, 20, 40, 80)

# (space, surrogate, seed, trials, starts) -> the true value of the configuration the search reports
# after each measured trial (its best observed run so far); the starts are measured first
Search = Callable[[SearchSpace, Surrogate, int, int, Sequence[dict[str, Any]]], list[float]]


def _tracker(surrogate: Surrogate) -> tuple[Callable[[dict[str, Any], float], None], list[float]]:
    state: dict[str, Any] = {"best": -1.0, "true": 0.0}
    curve: list[float] = []

    def seen(params: dict[str, Any], observed: float) -> None:
        if observed > state["best"]:
            state["best"], state["true"] = observed, surrogate.mean(params)
        curve.append(state["true"])

    return seen, curve


def optuna_search(name: str) -> Search:
    def run(space: SearchSpace, surrogate: Surrogate, seed: int, trials: int,
            starts: Sequence[dict[str, Any]]) -> list[float]:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        if name == "tpe-default":  # Optuna 5's defaults: multivariate, constant liar, 10 start-up trials
            sampler: optuna.samplers.BaseSampler = optuna.samplers.TPESampler(seed=seed)
        else:
            sampler = make_sampler(name, seed=seed, directions=["maximize"], trials=trials)
        study = optuna.create_study(direction="maximize", sampler=sampler)
        for start in starts:
            study.enqueue_trial(start)
        rng, (seen, curve) = random.Random(seed), _tracker(surrogate)
        while len(curve) < trials:
            trial = study.ask()
            params = space.suggest(trial)
            broken = space.violations(params)
            if broken:  # as the tuner does: told rejected, its nearest feasible neighbour runs next
                record(trial, outcome="rejected")
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                study.enqueue_trial(space.repair(params, seed=trial.number))
                continue
            observed = surrogate.observe(params, rng)
            study.tell(trial, observed)
            seen(params, observed)
        return curve
    return run


def _feasible(space: SearchSpace, params: dict[str, Any], seed: int) -> dict[str, Any]:
    """A peer's proposal as the tuner would run it: inactive options dropped, constraints repaired."""
    active: dict[str, Any] = {}
    for p in space.parameters:
        if p.active(active) and p.name in params:
            active[p.name] = params[p.name]
    return space.repair(active, seed=seed) if space.violations(active) else active


def _complete(space: SearchSpace, params: dict[str, Any]) -> dict[str, Any]:
    """A start with a value for every option, as peers want it (an inactive one at its low end)."""
    return {p.name: params.get(p.name, p.choices[0] if isinstance(p, CategoricalParam) else p.low)
            for p in space.parameters}


def flaml_search(space: SearchSpace, surrogate: Surrogate, seed: int, trials: int,
                 starts: Sequence[dict[str, Any]]) -> list[float]:
    """FLAML's CFO (cost-frugal local search), through its suggest / on_trial_complete interface."""
    from flaml import CFO, tune

    config: dict[str, Any] = {}
    for p in space.parameters:
        if isinstance(p, CategoricalParam):
            config[p.name] = tune.choice(list(p.choices))
        elif getattr(p, "log", False):
            config[p.name] = tune.lograndint(p.low, p.high + 1)
        else:
            config[p.name] = tune.randint(p.low, p.high + 1)
    rng, (seen, curve), asked = random.Random(seed), _tracker(surrogate), 0
    told = []  # the starts, measured here and given to CFO as evaluated points
    for start in starts:
        told.append(surrogate.observe(start, rng))
        seen(start, told[-1])
    search = CFO(metric="ops_per_sec", mode="max", space=config, seed=seed,
                 points_to_evaluate=[_complete(space, s) for s in starts] or None, evaluated_rewards=told or None)
    while len(curve) < trials:
        asked += 1
        proposal = search.suggest(str(asked))
        if proposal is None:  # CFO declines to repeat a configuration it has measured; ask again
            if asked > 50 * trials:
                raise RuntimeError("FLAML CFO stopped proposing new configurations")
            continue
        params = _feasible(space, proposal, asked)
        observed = surrogate.observe(params, rng)
        search.on_trial_complete(str(asked), {"ops_per_sec": observed, "config": proposal})
        seen(params, observed)
    return curve


def nevergrad_search(space: SearchSpace, surrogate: Surrogate, seed: int, trials: int,
                     starts: Sequence[dict[str, Any]]) -> list[float]:
    """Nevergrad's NGOpt, its recommended default optimizer, through ask / tell (it minimizes)."""
    import nevergrad as ng

    kwargs: dict[str, Any] = {}
    for p in space.parameters:
        if isinstance(p, CategoricalParam):
            kwargs[p.name] = ng.p.Choice(list(p.choices))
        elif getattr(p, "log", False):
            kwargs[p.name] = ng.p.Log(lower=p.low, upper=p.high).set_integer_casting()
        else:
            kwargs[p.name] = ng.p.Scalar(lower=p.low, upper=p.high).set_integer_casting()
    parametrization = ng.p.Dict(**kwargs)
    parametrization.random_state.seed(seed)
    optimizer = ng.optimizers.NGOpt(parametrization=parametrization, budget=trials)
    for start in reversed(starts):  # asked last in, first out
        optimizer.suggest(_complete(space, start))
    rng, (seen, curve) = random.Random(seed), _tracker(surrogate)
    while len(curve) < trials:
        candidate = optimizer.ask()
        params = _feasible(space, dict(candidate.value), len(curve))
        observed = surrogate.observe(params, rng)
        optimizer.tell(candidate, -observed)
        seen(params, observed)
    return curve


def searches() -> dict[str, Search]:
    found: dict[str, Search] = {n: optuna_search(n) for n in SAMPLERS if n not in ("flaml-cfo", "nevergrad")}
    return {**found, "flaml-cfo": flaml_search, "nevergrad": nevergrad_search}


def regret_curve(name: str, space: SearchSpace, surrogate: Surrogate, best: float, seed: int, trials: int,
                 starts: Sequence[dict[str, Any]] = ()) -> tuple[list[float], float]:
    """One search: its regret after each measured trial, and the CPU seconds it took (this process's
    threads: the sampler's and the surrogate's, whatever else the machine runs)."""
    started = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = searches()[name](space, surrogate, seed, trials, starts)
    return [1 - v / best for v in curve], time.process_time() - started


def versus(mine: Sequence[float], theirs: Sequence[float]) -> dict[str, Any]:
    """How often a search ends with a smaller regret than another's with the same seed: wins, losses,
    ties (both reported the same configuration, e.g. a start), and the chance of a win among the
    seeds that differ with its exact (Clopper-Pearson) 95 % interval."""
    wins = sum(a < b for a, b in zip(mine, theirs))
    losses = sum(a > b for a, b in zip(mine, theirs))
    out: dict[str, Any] = {"wins": wins, "losses": losses, "ties": len(mine) - wins - losses}
    if wins + losses:
        ci = binomtest(wins, wins + losses).proportion_ci(0.95)
        out.update(p=wins / (wins + losses), ci95=[ci.low, ci.high])
    return out


def summarise(name: str, budgets: Sequence[int], searches_run: dict[int, list[tuple[list[float], float]]]) -> dict[str, Any]:
    """A sampler's searches: per budget, each seed's final regret, their median and the CPU per trial;
    the largest budget's regret curves (for the plot)."""
    top = max(budgets)
    out: dict[str, Any] = {"budgets": {}}
    for budget in budgets:
        runs = searches_run[budget]
        final = [curve[-1] for curve, _ in runs]
        out["budgets"][str(budget)] = {"regret": final, "median_regret": statistics.median(final),
                                       "cpu_ms_per_trial": 1000 * statistics.median(cpu / budget for _, cpu in runs)}
    curves = [curve for curve, _ in searches_run[top]]
    out["median_regret_curve"] = [statistics.median(c[i] for c in curves) for i in range(top)]
    return out


def compare(results: dict[str, Any], budgets: Sequence[int]) -> dict[str, Any]:
    """Every ordered pair of samplers at every budget (:func:`versus`)."""
    return {str(b): {a: {o: versus(results[a]["budgets"][str(b)]["regret"], results[o]["budgets"][str(b)]["regret"])
                         for o in results if o != a} for a in results} for b in budgets}


def run_workload(name: str, samplers: list[str], seeds: int, budgets: Sequence[int], jobs: int = 1) -> dict[str, Any]:
    header, runs = load_recording(name)
    space = space_of(header)
    params = {c["name"]: c["params"] for c in header["configurations"]}
    surrogate = Surrogate.fit(space, runs, params)
    check = validate(space, runs, params)
    best, where = optimum(surrogate)
    starts = [c["params"] for c in header["configurations"] if not c["name"].startswith("random-")]
    print(f"{name}: {len(runs)} real runs of {check['configurations']} configurations; noise (sd of log ops/s "
          f"between repeats) {surrogate.noise:.3f}; held-out rank agreement Spearman {check['spearman']:.2f}, "
          f"Kendall {check['kendall']:.2f}; surrogate optimum {best:,.0f} ops/s", flush=True)
    with ProcessPoolExecutor(jobs) as pool:  # one search (sampler, budget, seed) per task, the longest first
        futures = {(s, b): [pool.submit(regret_curve, s, space, surrogate, best, seed, b, starts) for seed in range(seeds)]
                   for b in sorted(budgets, reverse=True) for s in samplers}
        results = {s: summarise(s, budgets, {b: [f.result() for f in futures[s, b]] for b in budgets}) for s in samplers}
    pairs = compare(results, budgets)
    for sampler in samplers:
        r = results[sampler]["budgets"]
        at = ", ".join(f"{100 * r[str(b)]['median_regret']:5.1f} %" for b in budgets)
        cpu = ", ".join(f"{r[str(b)]['cpu_ms_per_trial']:6.1f}" for b in budgets)
        print(f"  {sampler:<12} median regret {at} | CPU ms per trial {cpu}", flush=True)
    return {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "recording": {k: header[k] for k in ("workload", "description", "memory_limit_bytes", "db_bench",
                                                  "machine", "started")},
            "runs": len(runs), "noise_sd_log": surrogate.noise, "validation": check, "optimum_ops_per_sec": best,
            "optimum": where, "samplers": results, "versus": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="trials of each search")
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="searches run at once (default: cores)")
    args = parser.parse_args()
    names = args.samplers.split(",")
    unknown = [n for n in names if n not in SAMPLERS]
    if unknown:
        raise SystemExit(f"--samplers: unknown {unknown} (choose from {', '.join(SAMPLERS)})")
    wanted = args.workloads.split(",")
    if set(wanted) - set(WORKLOADS):
        raise SystemExit(f"--workloads: unknown {sorted(set(wanted) - set(WORKLOADS))} (choose from {', '.join(WORKLOADS)})")
    try:
        budgets = sorted({int(b) for b in args.budgets.split(",")})
    except ValueError:
        raise SystemExit(f"--budgets: whole numbers of trials, e.g. 10,20,40,80; got {args.budgets!r}") from None
    if "gp" in names and importlib.util.find_spec("torch") is None:
        raise SystemExit("--samplers gp needs PyTorch (pip install 'rocksdb-tuner[gp]')")
    started = time.monotonic()
    report = {"seeds": args.seeds, "budgets": budgets, "optuna": optuna.__version__,
              "workloads": {w: run_workload(w, names, args.seeds, budgets, args.jobs) for w in wanted}}
    path = args.out / "sampler-benchmark.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    if (previous.get("seeds"), previous.get("budgets")) == (args.seeds, budgets):
        kept = {w: r for w, r in previous["workloads"].items() if w not in wanted}  # not re-run: kept as measured
        report["workloads"] = {**kept, **report["workloads"]}
    report["wall_seconds"] = round(time.monotonic() - started)
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
    plot(report, args.out / "sampler-regret.png")
    print(f"wrote {path} and {args.out / 'sampler-regret.png'}")


LABELS = {"tpe": "tpe (the tuner's: multivariate, grouped)", "tpe-default": "Optuna 5's default TPE", "gp": "Optuna's GP",
          "skopt": "skopt (GP)", "cmaes": "CMA-ES", "random": "random", "flaml-cfo": "FLAML CFO", "nevergrad": "Nevergrad NGOpt"}


def readme_tables(report: dict[str, Any], against: str) -> str:
    """README's "Which sampler" tables, generated from the benchmark's JSON: per budget the median
    regret and the CPU per trial; then per budget the chance of ending better than ``against`` (wins
    among the seeds that differ, with the exact 95 % interval; "tie" when every seed ended alike)."""
    workloads, budgets = report["workloads"], report["budgets"]
    names = list(next(iter(workloads.values()))["samplers"])
    short = {"space-write": "write", "space-read": "read"}
    cols = [f"{short[w]}: {b}" for w in workloads for b in budgets]
    head = "| sampler | " + " | ".join(cols) + f" | CPU ms per trial ({budgets[0]} → {budgets[-1]} trials), " + \
        " / ".join(short[w] for w in workloads) + " |"
    lines = [head, "|---" * (len(cols) + 2) + "|"]
    for name in names:
        regret = [f"{100 * w['samplers'][name]['budgets'][str(b)]['median_regret']:.1f} %" for w in workloads.values()
                  for b in budgets]
        cpu = " / ".join(" → ".join(f"{w['samplers'][name]['budgets'][str(b)]['cpu_ms_per_trial']:.0f}"
                                  for b in (budgets[0], budgets[-1])) for w in workloads.values())
        lines.append(f"| {LABELS[name]} | " + " | ".join(regret) + f" | {cpu} |")
    lines += ["", f"| chance of ending better than {LABELS[against]} | " + " | ".join(cols) + " |",
              "|---" * (len(cols) + 1) + "|"]
    for name in (n for n in names if n != against):
        cells = []
        for w in workloads.values():
            for b in budgets:
                v = w["versus"][str(b)][name][against]
                cells.append(f"{v['p']:.2f} ({v['ci95'][0]:.2f}-{v['ci95'][1]:.2f})" if "p" in v else "tie")
        lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = report["workloads"]
    names = sorted({s for w in workloads.values() for s in w["samplers"]})
    color = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(names)}  # one colour per sampler in all panels
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.5 * len(workloads), 4.2), squeeze=False)
    for ax, (name, w) in zip(axes[0], workloads.items()):
        for sampler, r in w["samplers"].items():
            steps = range(1, len(r["median_regret_curve"]) + 1)
            ax.plot(steps, [100 * x for x in r["median_regret_curve"]], label=sampler, color=color[sampler])
            budgets = [int(b) for b in r["budgets"]]
            ax.scatter(budgets, [100 * r["budgets"][str(b)]["median_regret"] for b in budgets], color=color[sampler], s=14)
        ax.set_xlabel(f"measured trials (line: the {max(report['budgets'])}-trial searches; dots: a search of that budget)")
        ax.set_ylabel("regret, % below the optimum (median of seeds)")
        ax.set_title(f"{name} ({report['seeds']} seeds)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    entry(main)
