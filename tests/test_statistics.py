"""The statistics behind every reported gain, on synthetic samples whose true answer is known: the
paired interval covers the true ratio about 95 % of the time, ties are called ties, and choosing the
winner on other rounds than those that estimate its gain removes the optimism of picking the luckiest."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest

from tuner.stats import (
    Ratio,
    Resolution,
    Rounds,
    across_seeds,
    kendall,
    paired_ratio,
    rank_correlation,
    relative_width,
    resolution,
    sample_rows,
    spread,
)

REPETITIONS = 200


def _rounds(rng: random.Random, true_ratio: float, n: int, cv: float = 0.06,
            drift: float = 0.08) -> tuple[list[float], list[float]]:
    """n rounds of (a, b): b's level 100k, a's true_ratio times it; each round shifts both by a
    shared machine drift, and each run has its own log-normal noise of coefficient of variation cv."""
    a, b = [], []
    for _ in range(n):
        shared = math.exp(rng.gauss(0.0, drift))
        a.append(100_000 * true_ratio * shared * math.exp(rng.gauss(0.0, cv)))
        b.append(100_000 * shared * math.exp(rng.gauss(0.0, cv)))
    return a, b


@pytest.mark.parametrize("true_ratio, n", [(1.3, 5), (1.05, 5), (1.0, 8), (0.9, 12)])
def test_the_interval_covers_the_true_ratio_about_95_percent_of_the_time(true_ratio, n):
    rng = random.Random(f"coverage-{true_ratio}-{n}")
    covered = 0
    for _ in range(REPETITIONS):
        low, high = paired_ratio(*_rounds(rng, true_ratio, n)).ci95
        covered += low <= true_ratio <= high
    # 200 repetitions: the binomial standard error of 95 % is 1.5 %
    assert 0.91 <= covered / REPETITIONS <= 0.99, covered


def test_a_tie_is_called_a_tie_and_a_real_gain_a_gain():
    rng = random.Random("ties")
    ties = [paired_ratio(*_rounds(rng, 1.0, 5)).verdict for _ in range(REPETITIONS)]
    assert ties.count("tie") / REPETITIONS >= 0.9  # "faster" or "slower" only as often as alpha allows
    gains = [paired_ratio(*_rounds(rng, 1.3, 5)).verdict for _ in range(REPETITIONS)]
    assert gains.count("faster") / REPETITIONS >= 0.95 and "slower" not in gains
    same = paired_ratio([100.0, 101.0, 99.0, 100.0, 100.5], [100.0, 101.0, 99.0, 100.0, 100.5])
    assert same.verdict == "tie" and same.ratio == 1.0


def test_pairing_by_round_cancels_the_machine_drift():
    """With a drift much larger than the difference, unpaired samples overlap; paired, the gain shows."""
    rng = random.Random("drift")
    a, b = _rounds(rng, 1.08, 6, cv=0.01, drift=0.25)
    assert max(b) > min(a)  # unpaired, the ranges overlap
    assert paired_ratio(a, b).verdict == "faster"


def test_choosing_on_other_rounds_removes_the_optimism_of_picking_the_luckiest():
    """Three candidates, all truly 1.10x the reference: picking the one with the best median on 3
    rounds and estimating its gain on those same rounds overstates it; estimating on 5 fresh rounds
    does not."""
    rng = random.Random("selection")
    truth = 1.10
    same, fresh = [], []
    for _ in range(REPETITIONS):
        candidates = [_rounds(rng, truth, 3, cv=0.08, drift=0.0) for _ in range(3)]
        winner = max(candidates, key=lambda ab: statistics.median(ab[0]) / statistics.median(ab[1]))
        same.append(paired_ratio(*winner).ratio - truth)
        fresh.append(paired_ratio(*_rounds(rng, truth, 5, cv=0.08, drift=0.0)).ratio - truth)
    assert statistics.fmean(same) > 0.02  # the luckiest of three looks better than it is
    assert abs(statistics.fmean(fresh)) < 0.01 < statistics.fmean(same) - statistics.fmean(fresh)


def _exact(mean: float, sd: float, n: int) -> list[float]:
    """n paired rounds (a over a reference at 1) whose log ratios have exactly this mean and standard deviation."""
    pattern = [(-1) ** i * (1 + i % 3) for i in range(n)]
    centre, scale = statistics.fmean(pattern), statistics.stdev(pattern)
    return [math.exp(mean + sd * (x - centre) / scale) for x in pattern]


@pytest.mark.parametrize("ratio, sd, n", [(1.13, 0.23, 3), (1.05, 0.06, 5), (0.9, 0.1, 4), (1.04, 0.15, 6)])
def test_the_resolution_of_a_tie_is_what_rounds_of_its_spread_would_tell(ratio, sd, n):
    """Read from a tie's interval, the rounds it would need: that many rounds of the same mean and spread
    clear 1, one fewer do not; and the smallest difference its n rounds tell apart is where a mean of that
    spread starts to clear 1."""
    one = [1.0] * 200
    tie = paired_ratio(_exact(math.log(ratio), sd, n), one[:n])
    assert tie.verdict == "tie"
    can = resolution(tie.ratio, tie.ci95, n)
    assert can.rounds_needed is not None and can.rounds_needed > n
    k = can.rounds_needed
    assert paired_ratio(_exact(math.log(ratio), sd, k), one[:k]).verdict == ("faster" if ratio > 1 else "slower")
    assert paired_ratio(_exact(math.log(ratio), sd, k - 1), one[:k - 1]).verdict == "tie"
    edge = math.log(can.smallest)
    assert paired_ratio(_exact(edge * 1.01, sd, n), one[:n]).verdict == "faster"
    assert paired_ratio(_exact(edge * 0.99, sd, n), one[:n]).verdict == "tie"
    assert paired_ratio(_exact(-edge * 1.01, sd, n), one[:n]).verdict == "slower"


def test_the_resolution_of_no_difference_is_never_reached():
    assert resolution(1.0, [0.9, 1.1], 5).rounds_needed is None
    assert resolution(1.001, [0.5, 2.0], 3, most=50).rounds_needed is None
    assert resolution(1.05, [1.05, 1.05], 4) == Resolution(smallest=1.0, rounds_needed=2)  # no spread: 2 rounds tell


def test_small_helpers():
    assert relative_width(Ratio(5, "paired t interval on log ratios", 1.05, (1.0, 1.1), 0.04, "faster")) == \
        pytest.approx(0.1)
    assert relative_width(paired_ratio([1.0], [1.0])) == math.inf
    assert rank_correlation([1, 2, 3], [10, 20, 30]) == 1.0 and rank_correlation([1, 2, 3], [3, 2, 1]) == -1.0
    # 5 untied values in the same order: 1 of the 5! orderings has tau = 1, so the exact two-sided p is 2/120
    assert kendall([1, 2, 3, 4, 5], [10, 20, 30, 40, 50]) == pytest.approx((1.0, 2 / 120))
    assert rank_correlation([1], [1]) is None and rank_correlation([1, 1, 1], [1, 2, 3]) is None  # undefined
    assert spread([100.0, 110.0]).cv == pytest.approx(statistics.stdev([100.0, 110.0]) / 105.0)
    assert paired_ratio([1.0], [1.0]).verdict == "not measured"


def test_the_records_write_the_json_objects_the_recorded_files_hold():
    """Summaries and result files keep these figures as JSON objects: the same keys, in the same order, the
    interval a list; a record read back is the one written."""
    ratio = paired_ratio([1.0, 1.2, 1.1], [1.0, 1.0, 1.0])
    assert list(ratio.to_dict()) == ["n", "method", "ratio", "ci95", "p_value", "verdict"]
    assert json.loads(json.dumps(ratio.to_dict())) == ratio.to_dict() and isinstance(ratio.to_dict()["ci95"], list)
    assert Ratio.from_dict(ratio.to_dict()) == ratio
    over = across_seeds([1.1, 0.9])
    assert list(over.to_dict()) == ["n", "method", "ratio", "ci95", "p_value", "verdict", "seeds", "worst"]
    assert over.method == "t interval on log ratios across seeds" and over.seeds == [1.1, 0.9] and over.worst == 0.9
    assert spread([1.0, 3.0]).to_dict() == {"min": 1.0, "max": 3.0, "cv": statistics.stdev([1.0, 3.0]) / 2.0, "n": 2}


def test_sample_rows_give_each_configuration_its_medians_disk_size_included():
    """The closing table's columns, the DB's size on disk among them, are medians of the rounds."""
    runs = [{"ops_per_sec": ops, "p99_us": 10.0, "write_amp": 2.0, "write_amp_logical": 4.0, "db_size_bytes": size}
            for ops, size in ((100.0, 3e9), (120.0, 1e9), (110.0, 2e9))]
    (row,) = sample_rows(Rounds(entries=["a"], rounds=3, samples={"a": runs}), {"a": {"flags": {}}})
    assert row.median("ops_per_sec") == 110.0 and row.median("db_size_bytes") == 2e9
    assert row.samples("ops_per_sec") == [100.0, 120.0, 110.0] and row.spread is not None and row.spread.n == 3
    assert row.median("sst_bytes") is None and "median_sst_bytes" not in row.to_dict()  # db_bench reports none


def test_sample_rows_keep_a_run_at_a_rates_disk_and_tail_for_the_cost_guard():
    """A rate study's rows keep the medians of its SST files' size (the disk the cost guard weighs at the target),
    its tail and the share delivered, which db_bench's runs do not report."""
    runs = [{"ops_per_sec": 40_000.0, "write_amp": 2.0, "sst_bytes": size, "p99.9_us": tail, "delivered": 1.0}
            for size, tail in ((1.2e9, 3_000.0), (1.4e9, 9_000.0), (1.3e9, 4_000.0))]
    (row,) = sample_rows(Rounds(entries=["a"], rounds=3, samples={"a": runs}), {"a": {"flags": {}}}, "write_amp")
    assert row.median("sst_bytes") == 1.3e9 and row.median("p99.9_us") == 4_000.0 and row.median("delivered") == 1.0
    assert row.median("p99.99_us") is None
