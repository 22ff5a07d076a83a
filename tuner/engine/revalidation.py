"""Re-validation: re-measure the top trials and the baselines, interleaved, and name the best by median.

The best of many single noisy runs is biased upwards (it is partly the luckiest). After the
search, the top ``--revalidate K`` configurations (:func:`tuner.ranking.top_k`) and every baseline
are measured again, in ``rounds`` interleaved rounds (A B C D, A B C D, ...) so that drift of the
machine hits all alike. The winner is the configuration with the highest median ops/s over those
rounds; the summary gives each one's median and spread, the noise (coefficient of variation of the
repeated ``rocksdb-default``) and a bootstrap 95 % interval for the winner's ratio to the default.

Each measurement is saved in the study storage as it is taken, so an interrupted re-validation
resumes where it stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from objectives.measurement import Measurement
from objectives.runner import RunFailed
from objectives.workloads import Flag
from tuner import ranking
from tuner.fmt import fmt_duration
from tuner.engine.storage import StudyStore
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.stats import bootstrap_ratio, sample_rows

ATTR = "revalidation"


@dataclass
class Remeasure:
    """Measures configurations again, one run each, in interleaved rounds saved in the study."""

    store: StudyStore
    measure: Callable[[str, dict[str, Flag], Path], Measurement]  # (job key, flags, log dir) -> one run
    note: Callable[[str], None]
    out: Path

    def revalidate(self, snapshot: StudySnapshot, k: int, rounds: int) -> dict[str, Any] | None:
        """Measure the baselines and the top ``k`` trials ``rounds`` times, interleaved; the summary."""
        top = ranking.top_k(snapshot.trials, snapshot.directions, k)
        if not top:
            return None
        entries: dict[str, dict[str, Any]] = {
            b["name"]: {"flags": b["flags"]} for b in snapshot.baselines if b["state"] == "COMPLETE"}
        entries.update({f"trial {t.number}": {"flags": snapshot.space.flags(t.params), "trial": t.number} for t in top})
        self.note(f"re-validating {len(top)} best trial(s) and {len(entries) - len(top)} baseline(s): "
                  f"{rounds} interleaved rounds of {len(entries)} runs")
        return summarize(self.interleaved(entries, rounds, ATTR, "re-validation"), entries)

    def interleaved(self, entries: dict[str, dict[str, Any]], rounds: int, attr: str, what: str) -> dict[str, Any]:
        """Measure each entry's ``flags`` once per round, all entries in each round (A B C, A B C, ...).

        Samples are saved in the study's user attribute ``attr`` as they are taken, so a resume goes
        on where it stopped; logs go to ``OUT/<attr>/<entry>/round-<i>``. An entry that fails once
        is dropped from later rounds (its reason is kept)."""
        saved = self.store.attr(attr, {})
        if saved.get("entries") != sorted(entries) or saved.get("rounds") != rounds:
            saved = {"entries": sorted(entries), "rounds": rounds, "samples": {name: [] for name in entries}, "failed": {}}
        todo = [(r, name) for r in range(rounds) for name in entries
                if len(saved["samples"][name]) <= r and name not in saved["failed"]]
        started = time.monotonic()
        for done, (round_, name) in enumerate(todo, start=1):
            if name in saved["failed"]:
                continue
            log_dir = self.out / attr / name.replace(" ", "-").replace(":", "-") / f"round-{round_}"
            try:
                m = self.measure(f"{what} {name} round {round_}", entries[name]["flags"], log_dir)
            except RunFailed as exc:
                saved["failed"][name] = exc.reason
                self.note(f"{what} round {round_ + 1}/{rounds}: {name}: FAILED: {exc.reason}")
            else:
                saved["samples"][name].append(m.metrics)
                eta = (time.monotonic() - started) / done * (len(todo) - done)
                self.note(f"{what} round {round_ + 1}/{rounds}: {name}: {m.metrics['ops_per_sec'] or 0:,.0f} ops/s "
                          f"(run {done} of {len(todo)}, ETA {fmt_duration(eta)})")
            self.store.set_attr(attr, saved)
        return saved


def summarize(saved: dict[str, Any], entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Medians, spreads, the winner and its bootstrap interval against rocksdb-default."""
    configurations = sample_rows(saved, entries)
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
