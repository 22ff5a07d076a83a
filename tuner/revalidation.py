"""Re-validation: re-measure the top trials and the baselines, interleaved, and name the best by median.

The best of many single noisy runs is biased upwards (it is partly the luckiest). After the
search, the top ``--revalidate K`` configurations and every baseline are measured again, in
``rounds`` interleaved rounds (A B C D, A B C D, ...) so that drift of the machine hits all alike.
The winner is the configuration with the highest median ops/s over those rounds; the summary gives
each one's median and spread, the noise (coefficient of variation of the repeated
``rocksdb-default``) and a bootstrap 95 % interval for the winner's ratio to the default.

Each measurement is saved in the study storage as it is taken, so an interrupted re-validation
resumes where it stopped.
"""

from __future__ import annotations

import random
import statistics
from typing import TYPE_CHECKING, Any

from optuna.trial import FrozenTrial

from objectives.metrics import spread
from objectives.runner import RunFailed

if TYPE_CHECKING:
    from tuner.study import Study

ATTR = "revalidation"
_BOOTSTRAP = 4000


def candidates(study: Study, k: int) -> list[FrozenTrial]:
    """The top ``k`` complete trials: by ops/s among those meeting the budgets (Pareto front first in
    multi-objective mode)."""
    complete = study.trials_by_outcome()["complete"]
    feasible = [t for t in complete if study.feasible(t)] or complete
    front = {t.number for t in study.pareto_front()} if len(study.score.directions) > 1 else set()
    ranked = sorted(feasible, key=lambda t: (t.number in front, t.user_attrs["metrics"]["ops_per_sec"] or 0.0),
                    reverse=True)
    return ranked[:k]


def revalidate(study: Study, k: int, rounds: int) -> dict[str, Any] | None:
    """Measure the baselines and the top ``k`` trials ``rounds`` times, interleaved; return the result."""
    top = candidates(study, k)
    if not top:
        return None
    entries: dict[str, dict[str, Any]] = {
        b["name"]: {"flags": b["flags"]} for b in study.baselines() if b["state"] == "COMPLETE"}
    entries.update({f"trial {t.number}": {"flags": study.space.flags(t.params), "trial": t.number} for t in top})
    study.progress.note(f"re-validating {len(top)} best trial(s) and {len(entries) - len(top)} baseline(s): "
                        f"{rounds} interleaved rounds of {len(entries)} runs")
    return summarize(measure_interleaved(study, entries, rounds, ATTR, "re-validation"), entries)


def measure_interleaved(study: Study, entries: dict[str, dict[str, Any]], rounds: int, attr: str,
                        what: str) -> dict[str, Any]:
    """Measure each entry's ``flags`` once per round, all entries in each round (A B C, A B C, ...).

    Samples are saved in the study's user attribute ``attr`` as they are taken, so a resume goes on
    where it stopped; logs go to ``OUT/<attr>/<entry>/round-<i>``. An entry that fails once is
    dropped from later rounds (its reason is kept)."""
    saved = study.optuna_study.user_attrs.get(attr, {})
    if saved.get("entries") != sorted(entries) or saved.get("rounds") != rounds:
        saved = {"entries": sorted(entries), "rounds": rounds, "samples": {name: [] for name in entries}, "failed": {}}
    for round_ in range(rounds):
        for name, entry in entries.items():
            if len(saved["samples"][name]) > round_ or name in saved["failed"]:
                continue
            log_dir = study.out / attr / name.replace(" ", "-").replace(":", "-") / f"round-{round_}"
            try:
                m = study.measure(entry["flags"], log_dir, repeats=1)
            except RunFailed as exc:
                saved["failed"][name] = exc.reason
            else:
                saved["samples"][name].append(m.metrics)
                study.progress.note(f"{what} round {round_ + 1}/{rounds}: {name}: "
                                    f"{m.metrics['ops_per_sec'] or 0:,.0f} ops/s")
            study.optuna_study.set_user_attr(attr, saved)
    return saved


def rows(saved: dict[str, Any], entries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per entry: its ops/s samples, median and spread, median P99 and write amp, failure if any."""
    out = []
    for name, entry in entries.items():
        samples = saved["samples"][name]
        ops = [s["ops_per_sec"] for s in samples if s.get("ops_per_sec")]
        row: dict[str, Any] = {"name": name, "trial": entry.get("trial"), "flags": entry["flags"], "ops_per_sec": ops}
        if name in saved["failed"]:
            row["failed"] = saved["failed"][name]
        if ops:
            row["median_ops_per_sec"] = statistics.median(ops)
            row["spread"] = spread(ops)
            for key in ("p99_us", "write_amp"):
                values = [s[key] for s in samples if s.get(key) is not None]
                row[f"median_{key}"] = statistics.median(values) if values else None
        out.append(row)
    return out


def summarize(saved: dict[str, Any], entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Medians, spreads, the winner and its bootstrap interval against rocksdb-default."""
    from tuner.study import DEFAULT_BASELINE

    configurations = rows(saved, entries)
    trials = [r for r in configurations if r["trial"] is not None and r.get("median_ops_per_sec") and "failed" not in r]
    default = next((r for r in configurations if r["name"] == DEFAULT_BASELINE and r.get("ops_per_sec")), None)
    result: dict[str, Any] = {"rounds": saved["rounds"], "configurations": configurations}
    if default is not None:
        result["noise_cv_default"] = default["spread"]["cv"]
    if trials:
        best = max(trials, key=lambda r: r["median_ops_per_sec"])
        result["best"] = best["name"]
        result["best_trial"] = best["trial"]
        if default is not None:
            result["best_vs_default"] = {
                "ratio": best["median_ops_per_sec"] / default["median_ops_per_sec"],
                "ci95": bootstrap_ratio(best["ops_per_sec"], default["ops_per_sec"]),
            }
    return result


def bootstrap_ratio(a: list[float], b: list[float], seed: int = 0) -> list[float]:
    """95 % percentile-bootstrap interval of median(a) / median(b), resampling each side."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.median(rng.choices(a, k=len(a))) / statistics.median(rng.choices(b, k=len(b)))
        for _ in range(_BOOTSTRAP)
    )
    return [ratios[int(0.025 * _BOOTSTRAP)], ratios[int(0.975 * _BOOTSTRAP) - 1]]
