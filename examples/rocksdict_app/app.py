"""A small YCSB-style application on RocksDB through rocksdict: what rocksdb-tuner's command backend
tunes in examples/rocksdict_app/README.md. It knows nothing of the tuner: it is given an OPTIONS file.

    python app.py --options OPTIONS --db DIR [--keys 20000 | --data-bytes N] [--ops 20000 | --duration S]
                  [--reads 0.5] [--seed 1]

opens a new DB at DIR with the OPTIONS file, loads --keys keys (or as many as --data-bytes of keys and
values hold: 16-byte keys, --value-size values), then runs --ops operations (or as many as --duration
seconds allow) on keys drawn from a Zipfian distribution (YCSB's scrambled Zipfian, theta 0.99: the
hot keys scattered over the key space, in constant memory whatever the key count): reads with
probability --reads, else updates. Each operation is timed; the last line on stdout is one JSON
object of metrics: ops_per_sec and the latency percentiles of the run phase, and how many keys the
DB held when it ended (``keys``).

    python app.py --load --options OPTIONS --db DIR [--keys 20000 | --data-bytes N]

only loads the keys into a new DB at DIR (what rocksdb-tuner's ``--load`` runs once per study), and

    python app.py --loaded --options OPTIONS --db DIR [--keys 20000 | --data-bytes N] [--ops 20000 | --duration S]

runs the operations on a DB a --load built (its copy, as the tuner gives it), loading nothing. Given
rocksdb-tuner's ``{data_bytes}`` and ``{duration}``, it runs at the study's target and for as long as
each run is meant to.

    python app.py --report-options OPTIONS

opens a scratch DB with the OPTIONS file and prints, as one JSON object, what RocksDB got: the
options of the DB's own OPTIONS file by section, and the block cache's capacity.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import rocksdict

SECTIONS = {"DBOptions": "DBOptions", 'CFOptions "default"': "CFOptions",
            'TableOptions/BlockBasedTable "default"': "TableOptions/BlockBasedTable"}


def open_db(options_file: str, db: str) -> rocksdict.Rdict:
    """The DB at ``db`` opened with the options of ``options_file``. RocksDB loads the file from a
    directory; its block cache is given apart (rocksdict's load_latest puts a small one of its own
    otherwise)."""
    text = Path(options_file).read_text()
    capacity = re.search(r"^\s*block_cache=(\d+)\s*$", text, re.M)
    cache = rocksdict.Cache(int(capacity[1]) if capacity else 32 << 20)  # RocksDB's default: 32 MiB
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(options_file, Path(tmp) / "OPTIONS-000001")
        options, families = rocksdict.Options.load_latest(tmp, cache=cache)
    options.create_if_missing(True)
    return rocksdict.Rdict(db, options, column_families=families)


KEY_SIZE = 16  # b"user%012d"


def key(index: int) -> bytes:
    return b"user%012d" % index


def value(rng: random.Random, size: int) -> bytes:
    """``size`` bytes, about half of them compressible (random bytes, then a repeat of them), as db_bench's
    values are by default (--compression_ratio 0.5): the DB on disk is about half its data."""
    half = rng.randbytes(size - size // 2)
    return half + half[:size // 2]


class Zipfian:
    """Key indexes in [0, n), Zipfian-skewed (Gray et al.'s generator, as YCSB's ZipfianGenerator), the
    hottest ones scattered over the key space by a hash of their rank (YCSB's ScrambledZipfianGenerator):
    constant memory, whatever ``n``."""

    def __init__(self, n: int, rng: random.Random, theta: float = 0.99):
        self.n, self.rng, self.theta = n, rng, theta
        self.zetan = sum(1.0 / (i + 1) ** theta for i in range(n))
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = (1 - (2.0 / n) ** (1 - theta)) / (1 - (1 + 0.5 ** theta) / self.zetan) if n > 1 else 0.0

    def rank(self) -> int:
        uz = self.rng.random() * self.zetan
        if uz < 1.0 or self.n == 1:
            return 0
        if uz < 1.0 + 0.5 ** self.theta:
            return 1
        u = uz / self.zetan
        return min(self.n - 1, int(self.n * (self.eta * u - self.eta + 1) ** self.alpha))

    def __next__(self) -> int:
        h = 0xCBF29CE484222325  # FNV-1a over the rank's 8 bytes
        for b in self.rank().to_bytes(8, "little"):
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        return h % self.n


class Latencies:
    """Operation latencies in microseconds, counted in buckets 1 % wide (constant memory, however long
    the run): a percentile within 1 % of the exact one."""

    STEP = math.log(1.01)

    def __init__(self) -> None:
        self.buckets: Counter[int] = Counter()
        self.count = 0

    def add(self, us: float) -> None:
        self.buckets[math.floor(math.log(max(us, 1e-3)) / self.STEP)] += 1
        self.count += 1

    def percentile(self, p: float) -> float:
        """The upper edge of the bucket holding the ``p``-th percentile."""
        rank, seen = p / 100 * self.count, 0
        for bucket in sorted(self.buckets):
            seen += self.buckets[bucket]
            if seen >= rank:
                return math.exp((bucket + 1) * self.STEP)
        return 0.0


def run(args: argparse.Namespace) -> dict[str, float]:
    rng = random.Random(args.seed)
    n = args.data_bytes // (KEY_SIZE + args.value_size) if args.data_bytes else args.keys
    db = open_db(args.options, args.db)
    try:
        started = time.perf_counter()
        for i in range(0 if args.loaded else n):
            db[key(i)] = value(rng, args.value_size)
        load_seconds = time.perf_counter() - started
        if args.load:
            return {"load_ops_per_sec": n / load_seconds, "keys": n}
        latencies = Latencies()
        keys = Zipfian(n, rng)
        started = time.perf_counter()
        end = started + args.duration if args.duration else None
        while latencies.count < args.ops if end is None else latencies.count % 256 or time.perf_counter() < end:
            index = next(keys)
            t0 = time.perf_counter_ns()
            if rng.random() < args.reads:
                db.get(key(index))
            else:
                db[key(index)] = value(rng, args.value_size)
            latencies.add((time.perf_counter_ns() - t0) / 1000)
        seconds = time.perf_counter() - started
        held = sum(1 for _ in db.keys())
    finally:
        db.close()
    return {"ops_per_sec": latencies.count / seconds, "p50_us": latencies.percentile(50),
            "p99_us": latencies.percentile(99), "keys": held,
            **({} if args.loaded else {"load_ops_per_sec": n / load_seconds})}


def report_options(options_file: str) -> dict[str, object]:
    """What RocksDB got from ``options_file``: the DB's own OPTIONS file, by section, and its block cache."""
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(options_file, f"{tmp}/db")
        db[b"key"] = b"value"
        capacity = db.property_int_value("rocksdb.block-cache-capacity")
        db.close()
        written = Path(sorted(glob.glob(f"{tmp}/db/OPTIONS-*"))[-1]).read_text()
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in written.splitlines():
        line = line.strip()
        if line.startswith("["):
            name = SECTIONS.get(line.strip("[]"))
            current = sections.setdefault(name, {}) if name else None
        elif current is not None and "=" in line:
            key, text = line.split("=", 1)
            current[key] = text
    return {"options": sections, "block_cache_capacity": capacity}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--options", help="the RocksDB OPTIONS file to open the DB with")
    parser.add_argument("--db", help="the DB directory (new or empty)")
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--data-bytes", type=int, help="load as many keys as this many bytes of keys and values hold "
                                                       "(instead of --keys): rocksdb-tuner's {data_bytes}")
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--duration", type=float, help="run operations for this many seconds (instead of --ops): "
                                                       "rocksdb-tuner's {duration}")
    parser.add_argument("--reads", type=float, default=0.5, help="share of reads; the rest are updates")
    parser.add_argument("--value-size", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--load", action="store_true", help="only load the keys into a new DB")
    parser.add_argument("--loaded", action="store_true", help="the DB holds the keys already (a --load built it)")
    parser.add_argument("--report-options", metavar="OPTIONS", help="print what RocksDB got from this OPTIONS file")
    args = parser.parse_args()
    if args.report_options:
        print(json.dumps(report_options(args.report_options), indent=2))
        return 0
    if not (args.options and args.db):
        parser.error("give --options and --db (or --report-options)")
    print(json.dumps(run(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
