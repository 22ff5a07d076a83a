"""The generated blocks (experiments/record.py) made from this experiment's records at a rate."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.record import stamp
from experiments.service_level.tables import MEASURE_CODE, _by_round, _paired_lines, _rate
from tuner.stats import paired_ratio

RESULTS = Path(__file__).with_name("results")
# What made the comparison: this script, the held-out rounds' and the runs at a rate.
CODE = ("experiments/versus_plain_optuna/at_a_rate.py", "experiments/service_level/service_level.py", *MEASURE_CODE)
SLO_PLACED = "plain-slo-placed-140k-11.8.1-2026-12-07"


def slo_placed() -> str:
    """The SLO job's answer (tune-slo-placed-140k, trial 5) against a plain Optuna script's, given the study's
    machine time, and the defaults: the plain search, then the three's capacities in paired rounds."""
    folder = RESULTS / SLO_PLACED
    record = json.loads((folder / "record.json").read_text())
    held = json.loads((folder / "held-out.json").read_text())
    plain = record["plain"]
    scores = [t["p99.9_us"] for t in plain["trials"]]
    best = plain["best"]
    search = (f"The plain script's search: {len(plain['trials'])} trials of db_bench's overwrite at the rate "
              f"(`--benchmark_write_rate_limit`) in {plain['machine_seconds']:,.0f} s of the tuner's "
              f"{record['tuner']['machine_seconds']:,.0f} ({plain['failed']} failed); their P99.9 per write by "
              f"db_bench, median {statistics.median(scores):,.0f} us, best {best['p99.9_us']:,.0f} us (trial "
              f"{best['trial']}: {_params(best['params'])}).")
    by, rounds, _ = _by_round(held)
    tuner = [by[(r, "tuner")]["held"] for r in rounds]
    plains = [by[(r, "plain")]["held"] for r in rounds]
    r = paired_ratio([x or 0.0 for x in tuner], [x or 0.0 for x in plains])
    p = "p < 0.001" if r.p_value is not None and r.p_value < 0.001 else f"p = {r.p_value:.3f}"
    versus = (f"- the tuner's answer over the plain script's, paired by round ({r.n} rounds): {r.ratio:.2f}x "
              + (f"(95 % CI {r.ci95[0]:.2f}-{r.ci95[1]:.2f}, {p})." if r.ci95 else "(no interval).")
              if r.ratio is not None else "- the tuner's answer over the plain script's: no round where both held a rate.")
    rate = float(record["arguments"][record["arguments"].index("--rate") + 1])
    warm = [w for w in held.get("warm_up", []) if w["config"] == "plain"]  # at the rate, before the rounds
    at = warm + [q for c in held["capacity_rounds"] if c["config"] == "plain" for q in c["probes"] if q["offered"] == rate]
    searched = (f"- at {rate:,.0f} ops/s, the rate its search ran at, the plain answer's {len(at)} runs of "
                f"{_seconds(held)} s ({len(warm)} of them warm-ups) had open-loop P99.9s of "
                f"{_span([q['p99.9_us'] / 1e3 for q in at], ' ms')} and write stalls of "
                f"{_span([q['stall_micros'] / 1e6 for q in at], ' s', 1)} each; db_bench had timed its writes' P99.9 at "
                f"{best['p99.9_us']:,.0f} us.") if at else ""
    held_at = ", ".join(f"{name} {_rate(statistics.median(x for x in (by[(i, name)]['held'] for i in rounds) if x))}"
                        for name in held["configs"] if any(by[(i, name)]["held"] for i in rounds))
    more = (versus, f"- medians of the rounds that held: {held_at}.", *([searched] if searched else []))
    return "\n".join([search, "", *_paired_lines(held, more), "",
                      stamp(folder / "record.json", record["commit"], record["date"], CODE)])


def _span(values: list[float], unit: str, digits: int = 0) -> str:
    """The least and the most of ``values``, or the one value."""
    low, high = f"{min(values):,.{digits}f}", f"{max(values):,.{digits}f}"
    return f"{low}{unit}" if low == high else f"{low}-{high}{unit}"


def _seconds(record: dict[str, Any]) -> str:
    """The held-out runs' length, as its arguments gave it."""
    return f"{float(record['arguments']['duration']):g}"


def _params(params: dict[str, Any]) -> str:
    """A trial's values, as its flags read."""
    return ", ".join(f"{k} {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k} {v}"
                     for k, v in params.items())


TABLES: dict[str, Callable[[], str]] = {"slo_placed": slo_placed}  # block name (after ``versus_plain_optuna.``)
