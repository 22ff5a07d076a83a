"""Parsing db_bench stdout (7.8 to 9.11): result lines, ``--histogram=1`` blocks, ``--statistics=1``
tickers, and the LSM state that the ``levelstats``, ``memstats`` and ``stats`` benchmarks print.

Percentiles are recomputed from the histogram buckets with RocksDB's own interpolation
(``HistogramStat::Percentile``), which yields P95 (not printed) and lets the histograms of
several operation types (reads and writes of a mixed benchmark) be merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_RESULT_RE = re.compile(
    r"^(?P<name>\w+)\s+:\s+(?P<micros>[\d.]+) micros/op (?P<ops>[\d.]+) ops/sec"
    r"(?:[;\s]+(?P<seconds>[\d.]+) seconds (?P<operations>\d+) operations)?;?"
    r"(?:\s+(?P<mbps>[\d.]+) MB/s)?(?P<rest>.*)$"
)
_SKIPPED_RE = re.compile(r"^(\w+)\s+:\s+skipped(.*)$")
_HIST_HEAD_RE = re.compile(r"^Microseconds per (\w+):\s*$")
_COUNT_RE = re.compile(r"^Count: (\d+) Average: ([\d.]+)")
_MINMAX_RE = re.compile(r"^Min: ([\d.]+)\s+Median: ([\d.]+)\s+Max: ([\d.]+)")
_PERCENTILES_RE = re.compile(r"P([\d.]+): ([\d.]+)")
_BUCKET_RE = re.compile(r"^[\[(]\s*([\d.]+),\s*([\d.]+)\s*\]\s+(\d+)\s")
_TICKER_RE = re.compile(r"^(rocksdb\.[\w.]+) COUNT : (\d+)\s*$")
_STAT_HIST_RE = re.compile(r"^(rocksdb\.[\w.]+) P50 : .* COUNT : (\d+) SUM : (\d+)\s*$")
_LEVEL_ROW_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s*$")  # levelstats: level, files, size in MB
_MEMSTAT_RE = re.compile(r"^rocksdb\.(cur-size-all-mem-tables|num-immutable-mem-table|num-entries-active-mem-table): (\d+)$")
_PENDING_RE = re.compile(r"^Estimated pending compaction bytes: (\d+)$")  # `stats`, from 9.x on


class ParseError(ValueError):
    """db_bench output does not contain what the phase needs."""


@dataclass
class Histogram:
    """One ``Microseconds per <op>`` block: counts per bucket, min and max, printed percentiles."""

    count: int = 0
    average: float = 0.0
    minimum: float = 0.0
    maximum: float = 0.0
    printed: dict[str, float] = field(default_factory=dict)
    buckets: list[tuple[float, float, int]] = field(default_factory=list)

    def percentile(self, p: float) -> float:
        """RocksDB's linear interpolation inside the bucket that crosses p %."""
        total = sum(c for _, _, c in self.buckets)
        if total == 0:
            return 0.0
        threshold = total * p / 100.0
        cumulative = 0
        for left, right, count in self.buckets:
            cumulative += count
            if cumulative >= threshold:
                before = cumulative - count
                pos = (threshold - before) / count if count else 0.0
                value = left + (right - left) * pos
                return min(max(value, self.minimum), self.maximum)
        return self.maximum

    @staticmethod
    def merge(histograms: list[Histogram]) -> Histogram:
        merged: dict[tuple[float, float], int] = {}
        for h in histograms:
            for left, right, count in h.buckets:
                merged[(left, right)] = merged.get((left, right), 0) + count
        count = sum(h.count for h in histograms)
        return Histogram(
            count=count,
            average=sum(h.average * h.count for h in histograms) / count if count else 0.0,
            minimum=min((h.minimum for h in histograms), default=0.0),
            maximum=max((h.maximum for h in histograms), default=0.0),
            buckets=[(left, right, c) for (left, right), c in sorted(merged.items())],
        )


@dataclass
class BenchmarkResult:
    """One ``name : X micros/op Y ops/sec ...`` line and the histograms printed after it."""

    name: str
    micros_per_op: float
    ops_per_sec: float
    seconds: float | None
    operations: int | None
    mb_per_sec: float | None
    note: str = ""
    histograms: dict[str, Histogram] = field(default_factory=dict)


@dataclass
class Output:
    """Everything parsed from one db_bench invocation."""

    results: list[BenchmarkResult] = field(default_factory=list)
    tickers: dict[str, int] = field(default_factory=dict)
    stat_sums: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    assertions: bool = False
    level_files: list[list[int]] = field(default_factory=list)  # files per level, one list per levelstats
    memtables: dict[str, int] = field(default_factory=dict)  # the first memstats: cur-size-all-mem-tables, ...
    pending_compaction_bytes: int | None = None  # the first `stats` that prints it (9.x)

    def ticker(self, name: str) -> int:
        return self.tickers.get(f"rocksdb.{name}", 0)


def parse(text: str) -> Output:
    """Parse db_bench stdout. Progress lines (carriage returns) are tolerated."""
    out = Output()
    hist: Histogram | None = None
    for raw in text.replace("\r", "\n").splitlines():
        line = raw.strip()
        if "Assertions are enabled" in line:
            out.assertions = True
        if match := _RESULT_RE.match(line):
            out.results.append(
                BenchmarkResult(
                    name=match["name"],
                    micros_per_op=float(match["micros"]),
                    ops_per_sec=float(match["ops"]),
                    seconds=float(match["seconds"]) if match["seconds"] else None,
                    operations=int(match["operations"]) if match["operations"] else None,
                    mb_per_sec=float(match["mbps"]) if match["mbps"] else None,
                    note=match["rest"].strip(),
                )
            )
            hist = None
        elif match := _SKIPPED_RE.match(line):
            out.skipped.append(f"{match[1]}: skipped{match[2]}")
        elif hist is not None and (line.startswith("**") or (not line and hist.buckets)):
            hist = None  # the block ended: a `stats` report's histograms are not the benchmark's
        elif match := _HIST_HEAD_RE.match(line):
            hist = Histogram()
            if out.results:
                out.results[-1].histograms[match[1]] = hist
        elif hist is not None and (match := _COUNT_RE.match(line)):
            hist.count, hist.average = int(match[1]), float(match[2])
        elif hist is not None and (match := _MINMAX_RE.match(line)):
            hist.minimum, hist.maximum = float(match[1]), float(match[3])
        elif hist is not None and line.startswith("Percentiles:"):
            hist.printed = {f"P{p}": float(v) for p, v in _PERCENTILES_RE.findall(line)}
        elif hist is not None and (match := _BUCKET_RE.match(line)):
            hist.buckets.append((float(match[1]), float(match[2]), int(match[3])))
        elif match := _TICKER_RE.match(line):
            out.tickers[match[1]] = int(match[2])
        elif match := _STAT_HIST_RE.match(line):
            out.stat_sums[match[1]] = int(match[3])
        else:
            _lsm_line(out, line)
    return out


def _lsm_line(out: Output, line: str) -> None:
    """levelstats ("Level Files Size(MB)" and a row per level), memstats and stats' pending bytes."""
    if line == "Level Files Size(MB)":
        out.level_files.append([])
    elif out.level_files and (match := _LEVEL_ROW_RE.match(line)) and int(match[1]) == len(out.level_files[-1]):
        out.level_files[-1].append(int(match[2]))
    elif (match := _MEMSTAT_RE.match(line)) and match[1] not in out.memtables:
        out.memtables[match[1]] = int(match[2])
    elif (match := _PENDING_RE.match(line)) and out.pending_compaction_bytes is None:
        out.pending_compaction_bytes = int(match[1])


def require(out: Output, benchmarks: tuple[str, ...], statistics: bool = True) -> None:
    """Raise ParseError unless every benchmark printed a result line (and statistics, if asked)."""
    if out.skipped:
        raise ParseError(f"db_bench skipped a benchmark: {out.skipped[0]}")
    names = [r.name for r in out.results]
    missing = [b for b in benchmarks if b not in names]
    if missing:
        raise ParseError(f"no result line for benchmark {missing[0]} in db_bench output (truncated or garbled?)")
    if statistics and "rocksdb.bytes.written" not in out.tickers:
        raise ParseError("no --statistics block (rocksdb.bytes.written) in db_bench output")


def parse_report(text: str) -> list[tuple[int, float]]:
    """``--report_file`` CSV (``secs_elapsed,interval_qps``) as (second, ops/s) pairs.

    The reporter thread writes it while db_bench runs, so a killed run may end mid-line: rows that
    do not parse are skipped rather than failing the trial (the interval series is informative only).
    """
    rows = []
    for line in text.splitlines()[1:]:
        parts = line.split(",")
        if len(parts) == 2 and parts[0].strip().isdigit():
            try:
                rows.append((int(parts[0]), float(parts[1])))
            except ValueError:
                continue
    return rows
