"""The output parser, on db_bench 7.8.3 output captured from real runs (tests/data/README.md)."""

from __future__ import annotations

import pytest

from objectives.parser import Histogram, ParseError, parse, require
from tests.conftest import DATA


@pytest.fixture(scope="module")
def fill():
    return parse((DATA / "fillrandom-7.8.3.txt").read_text())


@pytest.fixture(scope="module")
def mixed():
    return parse((DATA / "readrandomwriterandom-7.8.3.txt").read_text())


def test_result_line(fill):
    (r,) = fill.results
    assert (r.name, r.micros_per_op, r.ops_per_sec) == ("fillrandom", 4.139, 240861.0)
    assert (r.seconds, r.operations, r.mb_per_sec) == (0.125, 30000, 26.6)
    assert fill.assertions


def test_percentiles_from_buckets_match_the_printed_ones(fill, mixed):
    histograms = [h for out in (fill, mixed) for r in out.results for h in r.histograms.values()]
    assert len(histograms) == 3
    for h in histograms:
        assert h.count == sum(c for _, _, c in h.buckets)
        for p in ("50", "75", "99", "99.9"):
            assert h.percentile(float(p)) == pytest.approx(h.printed[f"P{p}"], abs=0.006), p
        assert h.printed["P75"] <= h.percentile(95) <= h.printed["P99"]


def test_statistics(fill):
    # user bytes plus WriteBatch framing: 131 B per 116 B key + value here
    assert 30000 * (16 + 100) < fill.ticker("bytes.written") < 30000 * (16 + 100 + 32)
    assert fill.ticker("flush.write.bytes") > 0
    assert "rocksdb.compaction.times.micros" in fill.stat_sums
    assert fill.ticker("no.such.ticker") == 0


def test_mixed_workload_has_one_histogram_per_operation(mixed):
    (r,) = mixed.results
    assert set(r.histograms) == {"read", "write"}
    assert r.mb_per_sec is None and "reads:" in r.note
    merged = Histogram.merge(list(r.histograms.values()))
    assert merged.count == r.histograms["read"].count + r.histograms["write"].count
    p99s = sorted(h.percentile(99) for h in r.histograms.values())
    assert p99s[0] <= merged.percentile(99) <= p99s[1]


def test_older_result_line_format():
    out = parse("fillrandom   :       3.503 micros/op 285414 ops/sec;   31.6 MB/s\n")
    (r,) = out.results
    assert (r.ops_per_sec, r.mb_per_sec, r.seconds, r.operations) == (285414.0, 31.6, None, None)


def test_progress_carriage_returns_are_tolerated():
    text = "... finished 100 ops\r... finished 200 ops\rfillrandom   :  1.0 micros/op 1000 ops/sec 1.0 seconds 1000 operations;\n"
    assert parse(text).results[0].operations == 1000


def test_truncated_output_is_an_error():
    text = (DATA / "fillrandom-7.8.3.txt").read_text()
    head = text[: text.index("fillrandom   :")]
    with pytest.raises(ParseError, match="no result line for benchmark fillrandom"):
        require(parse(head), ("fillrandom",))
    stats_cut = text[: text.index("STATISTICS:")]
    with pytest.raises(ParseError, match="statistics"):
        require(parse(stats_cut), ("fillrandom",))
    require(parse(text), ("fillrandom",))


def test_skipped_benchmark_is_an_error():
    out = parse("fillrandom   : skipped (--use_existing_db is true)\n")
    with pytest.raises(ParseError, match="skipped"):
        require(out, ())


def test_garbage_is_an_error():
    with pytest.raises(ParseError):
        require(parse("\x00\x01 segfault garbage\n" * 10), ("fillrandom",))
