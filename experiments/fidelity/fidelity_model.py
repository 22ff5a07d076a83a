"""Do smaller runs help the model? --fidelity's successive halving with the pruned configurations
taught to the sampler as their full-size estimate, against the same search teaching them as the
worst value seen, and against the search at the full size only, at equal machine time.

A semi-synthetic benchmark on real recordings: a configuration's full-size ops/s comes from the
surrogate of the write recording (experiments/record_space/surrogate.py on experiments/record_space/results/space-write: the same
fillrandom load of the default space at scale 1), with its measured run-to-run noise; its ops/s at a
smaller rung is the full-size mean times exp(mu_k + e), mu_k the mean and e ~ N(0, s_k) the scatter
of log(rung / full size) that experiments/record_space/results/space-write-fidelity measured over its 26
configurations at 1/8 and 1/2 of the data (s_k without the full-size run's own noise), so a rung
ranks configurations about as loosely as the real small runs did. A run costs the recording's median
wall seconds at its size.

Each search runs as the tuner runs ``--fidelity 0.125,0.5,1`` with the default sampler (skopt): the
study's starts and the first tuner.rungs.AUDITED configurations climb every rung; then each rung's
agreement with the full size is judged (tuner.rungs.agreement) and new configurations start at the
lowest agreeing rung; a configuration not among the best third of a rung is pruned
(tuner.rungs.promoted). Six noisy audited configurations often judge every smaller rung to disagree,
and a search that goes on at the full size prunes nothing, so each arm runs twice: ``audit``, judged
as the tuner judges (on its simulated audit), and ``kept``, going on at the rung the recording's own
26 configurations agree from (1/2: Kendall tau 0.66; 1/8: 0.40). Arms:

- ``estimate``: a pruned configuration is told to skopt as its full-size estimate
  (tuner.rungs.full_size_estimate: its rung ops/s times the audited configurations' median full-size /
  rung ratio), what the tuner does;
- ``worst``: a pruned configuration is told as the worst value seen (the tuner before 2026-11-26);
- ``full``: no rungs; every configuration at the full size.

A search stops when its machine time reaches the budget; it reports its best observed full-size run;
its regret is how far that configuration's true (noise-free) value falls below the surrogate's
optimum. For each pair of arms: the chance that one ends better than the other with the same seed
(ties left out) with its exact 95 % interval (experiments/sampler_benchmark/sampler_benchmark.py's versus).

    .venv/bin/python -m experiments.fidelity.fidelity_model [--seeds 20] [--budgets 200,400] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import optuna

from experiments._script import entry
from experiments.record_space.surrogate import Surrogate, load_recording, optimum, space_of
from experiments.sampler_benchmark.sampler_benchmark import versus
from search_spaces import SearchSpace
from tuner import rungs
from tuner.samplers import make_sampler
from tuner.summary import FidelityAgreement
from tuner.trials import record

RESULTS = Path(__file__).with_name("results")
ARMS = ("estimate/audit", "worst/audit", "estimate/kept", "worst/kept", "full")
SCALES = (0.125, 0.5, 1.0)


def rung_model(header: dict[str, Any], runs: list[dict[str, Any]], noise: float) -> dict[str, Any]:
    """Per smaller rung of the fidelity recording: the mean and the scatter of log(rung / full size)
    (the full-size run's own noise taken out); per rung the median wall seconds of a run."""
    full = max(header["scales"])
    by: dict[float, dict[str, float]] = {}
    seconds: dict[float, list[float]] = {}
    for r in runs:
        by.setdefault(r["scale"], {})[r["config"]] = r["metrics"]["ops_per_sec"]
        seconds.setdefault(r["scale"], []).append(r["metrics"]["wall_seconds"])
    rungs_out = []
    for scale in sorted(by):
        if scale == full:
            continue
        logs = [math.log(by[scale][c] / by[full][c]) for c in by[scale] if c in by[full]]
        sd = math.sqrt(max(statistics.variance(logs) - noise ** 2, 0.0))
        rungs_out.append({"scale": scale, "configurations": len(logs), "mu": statistics.fmean(logs), "sd": sd})
    pairs = [[(by[r["scale"]][c], by[full][c]) for c in by[r["scale"]] if c in by[full]] for r in rungs_out]
    recorded = rungs.agreement(pairs, [r["scale"] for r in rungs_out]).to_dict()
    return {"rungs": rungs_out, "seconds": [statistics.median(seconds[s]) for s in sorted(seconds)],
            "recorded_agreement": recorded}


def search(arm: str, space: SearchSpace, surrogate: Surrogate, model: dict[str, Any], best: float, seed: int,
           budget: float, starts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One search of ``budget`` machine seconds: the regret of the configuration it reports, the
    configurations it measured and how many it pruned, and its CPU seconds."""
    started = time.process_time()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    seconds = model["seconds"]
    sampler = make_sampler("skopt", seed=seed, directions=["maximize"], trials=int(budget // seconds[-1]))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for start in starts:
        study.enqueue_trial(start)
    rng = random.Random(seed)
    top = 0 if arm == "full" else len(model["rungs"])
    teach, judged = (arm.split("/") + ["audit"])[:2]
    measured: list[list[float]] = [[] for _ in range(top)]  # ops/s at each smaller rung
    pairs: list[list[tuple[float, float]]] = [[] for _ in range(top)]  # audited: (rung, full size)
    start_rung, audits, spent, pruned, configurations = 0, 0, 0.0, 0, 0
    reported, reported_true = -1.0, 0.0
    while spent < budget:
        trial = study.ask()
        params = space.suggest(trial)
        if space.violations(params):  # as the tuner does: told rejected, its nearest feasible neighbour next
            record(trial, outcome="rejected")
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            study.enqueue_trial(space.repair(params, seed=trial.number))
            continue
        configurations += 1
        audit = top > 0 and audits < rungs.AUDITED
        rung, seen = (0 if audit else start_rung), []
        while rung < top:
            r = model["rungs"][rung]
            value = surrogate.mean(params) * math.exp(rng.gauss(r["mu"], math.hypot(r["sd"], surrogate.noise)))
            spent += seconds[rung]
            seen.append(value)
            keep = audit or rungs.promoted(value, measured[rung])
            measured[rung].append(value)
            if not keep:
                break
            trial.report(value, rungs.REDUCTION ** rung)
            rung += 1
        if rung < top:  # pruned at ``rung``
            pruned += 1
            estimate = rungs.full_size_estimate(seen[-1], pairs[rung])
            if teach == "estimate" and estimate is not None:
                record(trial, value_estimate=estimate)
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            continue
        observed = surrogate.observe(params, rng)
        spent += seconds[-1]
        study.tell(trial, observed)
        if observed > reported:
            reported, reported_true = observed, surrogate.mean(params)
        if audit:
            audits += 1
            for k, small in enumerate(seen):
                pairs[k].append((small, observed))
            if audits == rungs.AUDITED:
                start_rung = (rungs.agreement(pairs, SCALES[:top]) if judged == "audit" else
                              FidelityAgreement.from_dict(model["recorded_agreement"])).start_rung
    return {"regret": 1 - reported_true / best, "configurations": configurations, "pruned": pruned,
            "start_scale": SCALES[start_rung] if top else 1.0, "cpu_seconds": time.process_time() - started}


def _run(*args: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search(*args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budgets", default="200,400", help="machine seconds of each search (a full-size run: ~10 s)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="searches run at once (default: cores)")
    parser.add_argument("--out", type=Path, default=RESULTS / "fidelity-model.json")
    args = parser.parse_args()
    try:
        budgets = sorted({float(b) for b in args.budgets.split(",")})
    except ValueError:
        raise SystemExit(f"--budgets: machine seconds, e.g. 200,400; got {args.budgets!r}") from None
    if args.seeds < 1 or not budgets or budgets[0] <= 0:
        raise SystemExit("--seeds and --budgets: at least one seed and budgets > 0 seconds")
    header, runs = load_recording("space-write")
    space = space_of(header)
    params = {c["name"]: c["params"] for c in header["configurations"]}
    surrogate = Surrogate.fit(space, runs, params)
    best, _ = optimum(surrogate)
    fidelity_header, fidelity_runs = load_recording("space-write-fidelity")
    if tuple(fidelity_header["scales"]) != SCALES:
        raise SystemExit(f"experiments/record_space/results/space-write-fidelity: scales {fidelity_header['scales']}, "
                         f"expected {SCALES}")
    model = rung_model(fidelity_header, fidelity_runs, surrogate.noise)
    starts = [c["params"] for c in header["configurations"] if not c["name"].startswith("random-")]
    described = ", ".join(f"1/{1 / r['scale']:g}: mu {r['mu']:+.2f}, sd {r['sd']:.2f}" for r in model["rungs"])
    print(f"rungs: {described} "
          f"(log rung / full size); run seconds {', '.join(f'{s:.1f}' for s in model['seconds'])}; "
          f"noise {surrogate.noise:.3f}", flush=True)
    started = time.monotonic()
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {(arm, b): [pool.submit(_run, arm, space, surrogate, model, best, seed, b, starts)
                              for seed in range(args.seeds)] for b in reversed(budgets) for arm in ARMS}
        results = {str(int(b)): {arm: [f.result() for f in futures[arm, b]] for arm in ARMS} for b in budgets}
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seeds": args.seeds, "budgets_seconds": budgets,
        "recordings": {"full_size": {k: header[k] for k in ("workload", "description", "db_bench", "machine", "started")},
                       "fidelity": {k: fidelity_header[k] for k in ("scales", "started")}},
        "rung_model": model, "noise_sd_log": surrogate.noise, "optimum_ops_per_sec": best, "budgets": {}}
    for b, arms in results.items():
        summary = {arm: {"regret": [r["regret"] for r in runs_],
                         "median_regret": statistics.median(r["regret"] for r in runs_),
                         "median_configurations": statistics.median(r["configurations"] for r in runs_),
                         "median_pruned": statistics.median(r["pruned"] for r in runs_),
                         "went_on_at": {str(x): sum(r["start_scale"] == x for r in runs_) for x in SCALES},
                         "cpu_seconds": sum(r["cpu_seconds"] for r in runs_)} for arm, runs_ in arms.items()}
        pairs_ = {a: {o: versus(summary[a]["regret"], summary[o]["regret"]) for o in ARMS if o != a} for a in ARMS}
        report["budgets"][b] = {"arms": summary, "versus": pairs_}
        for arm in ARMS:
            s = summary[arm]
            vs = "; ".join(f"beats {o} in {v['wins']}/{v['wins'] + v['losses']}"
                           + (f" (p {v['p']:.2f}, 95 % CI {v['ci95'][0]:.2f}-{v['ci95'][1]:.2f})" if "p" in v else "")
                           for o, v in pairs_[arm].items())
            print(f"{b} s {arm:<14}: median regret {100 * s['median_regret']:5.1f} %, {s['median_configurations']:g} "
                  f"configurations ({s['median_pruned']:g} pruned); {vs}", flush=True)
    report["wall_seconds"] = round(time.monotonic() - started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
