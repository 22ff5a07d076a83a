"""Statistics of repeated measurements, one formula each: spread (min, max, coefficient of
variation), per-configuration sample rows, the ratio of two configurations measured in paired
rounds (its interval, p-value and verdict) and what rounds of its spread can resolve, the same over
search seeds, and the rank correlation of two orderings."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tuner.summary import Measured, Record


@dataclass(frozen=True)
class Rounds(Record):
    """Configurations measured again in interleaved rounds, as saved in the study: the entries' names,
    how many rounds were asked, each entry's metrics per round, why an entry failed (it runs no more)
    and each round's order."""

    entries: list[str] = field(default_factory=list)
    rounds: int = 0
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    order: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class Spread(Record):
    """How ``n`` values spread (:func:`spread`); ``to_dict()`` is its JSON object."""

    min: float
    max: float
    cv: float  # coefficient of variation
    n: int


@dataclass(frozen=True)
class Ratio(Record):
    """How many times one sample is another, paired by round (:func:`paired_ratio`); ``to_dict()`` is
    its JSON object, the interval a list."""

    n: int  # the rounds paired
    method: str
    ratio: float | None  # None: no round paired
    ci95: tuple[float, float] | None  # None: fewer than two rounds
    p_value: float | None
    verdict: str  # faster | tie | slower | not measured


@dataclass(frozen=True)
class SeedRatio(Ratio):
    """:class:`Ratio` over search seeds (:func:`across_seeds`): each seed's ratio and the worst."""

    seeds: list[float]
    worst: float | None


def spread(values: list[float]) -> Spread:
    """min, max and coefficient of variation (sample stdev / mean; 0 for a single value)."""
    mean = statistics.fmean(values)
    cv = statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
    return Spread(min(values), max(values), cv, len(values))


# What a run at a rate reports beyond the columns every row has: the disk the cost guard weighs for it, the tail,
# and the share delivered; a row keeps their medians when its runs reported them.
AT_A_RATE = ("sst_bytes", "p99.9_us", "p99.99_us", "max_us", "delivered")


def sample_rows(saved: Rounds, entries: dict[str, dict[str, Any]], metric: str = "ops_per_sec",
                also: Sequence[str] = ()) -> list[Measured]:
    """Per configuration measured in interleaved rounds: its samples of ``metric`` (the study's:
    ops/s, or the one --objective names) and of ops/s, their medians, the spread of ``metric``,
    median P99, write amp, DB size, stall time and memory peak, and, where the runs report them (a run at
    a rate), the medians of its SST files' size, tail and share delivered (:data:`AT_A_RATE`) and of the
    metrics in ``also`` (those the user's bounds name); and its failure if it had one, each a
    :class:`tuner.summary.Measured` as the summary keeps it."""
    out = []
    for name, entry in entries.items():
        samples = saved.samples[name]
        keys = dict.fromkeys((metric, "ops_per_sec", "p99_us", "write_amp", "write_amp_logical", "db_size_bytes",
                              "stall_micros", "memory_peak_bytes"))
        found = {key: [s[key] for s in samples if s.get(key) is not None] for key in keys}
        row: dict[str, Any] = {"name": name, "trial": entry.get("trial"), "flags": entry["flags"],
                               metric: found[metric], "ops_per_sec": found["ops_per_sec"]}
        if name in saved.failed:
            row["failed"] = saved.failed[name]
        if found[metric]:
            row["spread"] = spread(found[metric]).to_dict()
            row.update({f"median_{key}": statistics.median(v) if v else None for key, v in found.items()})
            rated = {key: [s[key] for s in samples if s.get(key) is not None] for key in (*AT_A_RATE, *also)
                     if key not in keys}
            row.update({f"median_{key}": statistics.median(v) for key, v in rated.items() if v})
        out.append(Measured.from_dict(row, name))
    return out


def improvement(a: float, b: float, maximize: bool = True) -> float:
    """How many times better one run ``a`` is than ``b``: a / b for a maximized metric, b / a for a
    minimized one (the defaults' P99 over the answer's), so that above 1 is better either way."""
    return a / b if maximize else b / a


def gain(a: list[float], b: list[float], maximize: bool = True) -> Ratio:
    """:func:`paired_ratio` oriented as :func:`improvement`: ``a`` over ``b`` for a maximized metric,
    ``b`` over ``a`` for a minimized one; its verdict ``faster`` then means better, ``slower`` worse."""
    return paired_ratio(a, b) if maximize else paired_ratio(b, a)


def paired_ratio(a: list[float], b: list[float], confidence: float = 0.95) -> Ratio:
    """How many times ``a`` is ``b``, from samples paired by round (``a[i]`` and ``b[i]`` measured in
    the same round): the geometric mean of the per-round ratios, Student's t interval of the mean of
    their logarithms (exact for log-normal noise; scipy.stats.ttest_1samp), the two-sided p-value of
    "no difference", and the verdict: ``faster`` / ``slower`` when the interval excludes 1, else
    ``tie``. A shared round effect (machine drift) cancels in each ratio."""
    logs = [math.log(x / y) for x, y in zip(a, b) if x and y]
    n, method = len(logs), "paired t interval on log ratios"
    if n < 2:
        return Ratio(n, method, math.exp(logs[0]) if logs else None, None, None, "not measured")
    mean = statistics.fmean(logs)
    if max(logs) == min(logs):  # no spread at all: the interval is the point
        low = high = mean
        p_value = 1.0 if mean == 0 else 0.0
    else:
        import scipy.stats  # here, not at import: it costs every command line a second

        test = scipy.stats.ttest_1samp(logs, 0.0)
        interval = test.confidence_interval(confidence)
        low, high, p_value = interval.low, interval.high, float(test.pvalue)
    return Ratio(n, method, math.exp(mean), (math.exp(low), math.exp(high)), p_value,
                 "faster" if low > 0 else "slower" if high < 0 else "tie")


def across_seeds(ratios: list[float], confidence: float = 0.95) -> SeedRatio:
    """The tuner as a procedure, from one ratio per search seed (each paired by round): their
    geometric mean and Student's t interval over seeds, as :func:`paired_ratio` computes it with the
    seed as the unit, so the interval holds the search's variance as well as the measurement's; and
    the worst seed."""
    r = paired_ratio(ratios, [1.0] * len(ratios), confidence)
    return SeedRatio(r.n, "t interval on log ratios across seeds", r.ratio, r.ci95, r.p_value, r.verdict,
                     seeds=ratios, worst=min(ratios) if ratios else None)


def relative_width(ratio: Ratio) -> float:
    """How wide its interval is: high / low - 1 (0.10: the upper end is 10 % above the lower; inf: none)."""
    if not ratio.ci95:
        return math.inf
    low, high = ratio.ci95
    return high / low - 1.0


@dataclass(frozen=True)
class Resolution:
    """What paired rounds of one spread can tell (:func:`resolution`)."""

    smallest: float  # the smallest ratio (or its inverse) whose interval clears 1 in these rounds
    rounds_needed: int | None  # rounds of this spread the estimate would need to clear 1; None: more than asked


MOST_ROUNDS = 200  # what :func:`resolution` counts up to


def tie_resolution(verdict: str | None, ratio: float | None, ci95: list[float] | tuple[float, float] | None,
                   n: int | None) -> Resolution | None:
    """:func:`resolution` of a tie (None for any other verdict, or without an interval)."""
    if verdict != "tie" or not ci95 or not ratio or not n:
        return None
    return resolution(ratio, list(ci95), n)


def resolution(ratio: float, ci95: list[float], n: int, confidence: float = 0.95,
               most: int = MOST_ROUNDS) -> Resolution:
    """:func:`paired_ratio`'s interval read backwards: from its ``n`` rounds' spread (the standard
    deviation of their log ratios, which the interval's width gives), the smallest difference either way
    whose interval would clear 1 in ``n`` rounds, and how many rounds of that spread an estimate of
    ``ratio`` would need for its interval to clear 1 (None when more than ``most``)."""
    import scipy.stats

    def half_width(k: int) -> float:  # of the interval on the mean log ratio, per unit standard deviation
        return float(scipy.stats.t.ppf((1 + confidence) / 2, k - 1)) / math.sqrt(k)

    sd = (math.log(ci95[1]) - math.log(ci95[0])) / (2 * half_width(n))
    effect = abs(math.log(ratio))
    needed = next((k for k in range(2, most + 1) if sd * half_width(k) < effect), None)
    return Resolution(smallest=math.exp(sd * half_width(n)), rounds_needed=needed)


def kendall(first: list[float], second: list[float]) -> tuple[float, float]:
    """Kendall's tau between two rankings of the same configurations (1: the same order) and its
    two-sided p-value; NaN where undefined (fewer than two, or all tied)."""
    if len(first) < 2:
        return math.nan, math.nan
    import scipy.stats

    result = scipy.stats.kendalltau(first, second)
    return float(result.statistic), float(result.pvalue)


def rank_correlation(first: list[float], second: list[float]) -> float | None:
    """Kendall's tau (:func:`kendall`), None where undefined."""
    tau, _ = kendall(first, second)
    return None if math.isnan(tau) else tau
