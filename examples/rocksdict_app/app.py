"""A small YCSB-style application on RocksDB through rocksdict: what rocksdb-tuner's command backend
tunes in examples/rocksdict_app/README.md. It knows nothing of the tuner: it is given an OPTIONS file.

    python app.py --options OPTIONS --db DIR [--keys 20000] [--ops 20000] [--reads 0.5] [--seed 1]

opens a new DB at DIR with the OPTIONS file, loads --keys keys, then runs --ops operations on keys
drawn from a Zipfian distribution (YCSB's, theta 0.99, the hot keys scattered over the key space):
reads with probability --reads, else updates. Each operation is timed; the last line on stdout is
one JSON object of metrics: ops_per_sec and the latency percentiles of the run phase, and how many
keys the DB held when it ended (``keys``).

    python app.py --load --options OPTIONS --db DIR [--keys 20000]

only loads the keys into a new DB at DIR (what rocksdb-tuner's ``--load`` runs once per study), and

    python app.py --loaded --options OPTIONS --db DIR [--keys 20000] [--ops 20000] ...

runs the operations on a DB a --load built (its copy, as the tuner gives it), loading nothing.

    python app.py --report-options OPTIONS

opens a scratch DB with the OPTIONS file and prints, as one JSON object, what RocksDB got: the
options of the DB's own OPTIONS file by section, and the block cache's capacity.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import random
import re
import shutil
import sys
import tempfile
import time
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


def zipfian(n: int, count: int, rng: random.Random, theta: float = 0.99) -> list[int]:
    """``count`` key indexes in [0, n), Zipfian-skewed, the hottest ones at random places."""
    cumulative = list(itertools.accumulate(1.0 / (i + 1) ** theta for i in range(n)))
    ranks = rng.choices(range(n), cum_weights=cumulative, k=count)
    place = list(range(n))
    rng.shuffle(place)
    return [place[r] for r in ranks]


def percentile(sorted_values: list[float], p: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(p / 100 * len(sorted_values)))]


def run(args: argparse.Namespace) -> dict[str, float]:
    rng = random.Random(args.seed)
    value = rng.randbytes(args.value_size * 2)
    keys = [f"user{i:012d}".encode() for i in range(args.keys)]
    db = open_db(args.options, args.db)
    try:
        started = time.perf_counter()
        for i, key in enumerate([] if args.loaded else keys):
            db[key] = value[i % args.value_size:][:args.value_size]
        load_seconds = time.perf_counter() - started
        if args.load:
            return {"load_ops_per_sec": args.keys / load_seconds}
        latencies = []
        started = time.perf_counter()
        for index in zipfian(args.keys, args.ops, rng):
            t0 = time.perf_counter_ns()
            if rng.random() < args.reads:
                db.get(keys[index])
            else:
                db[keys[index]] = value[index % args.value_size:][:args.value_size]
            latencies.append((time.perf_counter_ns() - t0) / 1000)
        seconds = time.perf_counter() - started
        held = sum(1 for _ in db.keys())
    finally:
        db.close()
    latencies.sort()
    return {"ops_per_sec": args.ops / seconds, "p50_us": percentile(latencies, 50),
            "p99_us": percentile(latencies, 99), "keys": held,
            **({} if args.loaded else {"load_ops_per_sec": args.keys / load_seconds})}


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
    parser.add_argument("--ops", type=int, default=20_000)
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
