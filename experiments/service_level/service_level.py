"""Do the throughput answers hold a service's tail at a rate? Named configurations (OPTIONS files, and
the library's defaults) measured open loop (objectives.open_loop): requests offered at a fixed rate,
each timed from when it was due.

    .venv/bin/python -m experiments.service_level.service_level --configs experiments/service_level/configs.json
        [--target-data 2GiB] [--target-memory 1GiB] [--rate 100000] [--duration 60] [--rounds 3]
        [--slo 'p99.9<=2ms'] [--capacity [--capacity-rounds 5]] [--no-settle] [--windows 30,60,120] [--age 2GiB [--age-beside]]
        [--warm-up 4] [--read-once-beside] [--slow-calls 1ms]
        [--out experiments/service_level/results/NAME.json]

``--configs`` is a JSON object: name -> an OPTIONS file (a path from the checkout's root), or null for
the library's defaults (``rocksdb-default``, always measured). Each configuration's DB is loaded once at
the target with its own options. Then ``--rounds`` paired rounds at ``--rate``: each round every
configuration once, in a fresh random order, on a fresh checkpoint of its DB within the target's memory;
per configuration its figures per round and, for P99.9, P99.99 and the stall time, its ratio to the
defaults' (tuner.stats.paired_ratio: above 1 is a worse tail). With ``--capacity``, each configuration's
capacity at ``--slo`` after the rounds (objectives.rates.capacity, from ``--rate``); with
``--capacity-rounds R`` in R paired rounds, the configurations in a fresh random order each round, every
search of a round past the first starting where the round before's held rates meet
(objectives.rates.shared_start, as a study's capacity stage does), and each configuration's held rates
over the defaults', paired by round (above 1: a higher capacity). Every run settles (the load goes on
while RocksDB catches up with what the window left) unless ``--no-settle``; a configuration whose
OPTIONS file switches compaction off (``disable_auto_compactions=true``, a bound) never catches up, so
its runs are their window alone. With ``--read-once-beside`` each configuration also runs on a DB whose
files were read once after its load (objectives.memory.read_through), as "<name>, read once", next to it in
the order. ``--age``
ages each DB after its ordered load with random overwrites of that much data (``open_loop load
--age``); with ``--age-beside`` each configuration runs on both, the aged one named "<name>, aged". With
``--windows`` each run also reports the tail of each consecutive window of those lengths (seconds), and the record
says, per configuration and length, how many windows held ``--slo`` and how their P99.9 spread: how long a run
must be for its tail to rank configurations. With ``--slow-calls 1ms`` each run also says where the time of its
RocksDB calls slower than that went and the kernel stacks they waited in (the driver's ``--slow_call_us``).
After the loads and before the rounds, ``--warm-up N`` runs at ``--rate`` on each configuration's DB in turn, in
the order they were loaded (by default as many as the tool runs to warm a DB up, objectives.open_loop.warm_up_runs;
0 for none), whose figures the record keeps apart (``warm_up``, each with when it started after the loads) and
pairs with nothing. The record (machine, RocksDB, date, commit, arguments, every run) is written when the last run
ends; Ctrl-C stops the driver and removes the DBs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from experiments.held_out import project_commit
from objectives import workdir
from objectives.open_loop import Loaded, find, warm_up_runs
from objectives.rates import Rate, capacity, parse_slo, shared_start
from objectives.scores import Bound
from search_spaces import Context
from tuner.cli import parse_latency_arg, parse_size
from tuner.stats import paired_ratio

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).with_name("results")
REFERENCE = "rocksdb-default"
READ = "read once"  # --read-once-beside's configurations: "<name>, read once"
LOW = "background at nice 19"  # --low-background-beside's configurations: "<name>, background at nice 19"
COMPARED = ("p99.9_us", "p99.99_us", "max_us", "stall_micros")


def read_configs(path: Path) -> tuple[dict[str, Path | None], set[str]]:
    """name -> OPTIONS file (None: the library's defaults), the defaults first; and the names whose entry is
    ``{"options": FILE or null, "background": "low"}``: run with RocksDB's flush and compaction threads at
    nice 19 (open_loop run --background_priority low)."""
    raw = json.loads(path.read_text())
    if not isinstance(raw, dict):
        raise SystemExit(f"--configs {path}: a JSON object of name -> OPTIONS file (or null)")
    configs: dict[str, Path | None] = {REFERENCE: None}
    low: set[str] = set()
    for name, given in raw.items():
        file = given
        if isinstance(given, dict):
            if set(given) != {"options", "background"} or given["background"] not in ("normal", "low"):
                raise SystemExit(f"--configs {path}: {name}: an object is {{\"options\": FILE or null, "
                                 "\"background\": \"normal\" or \"low\"}")
            file = given["options"]
            if given["background"] == "low":
                low.add(name)
        if file is not None and not (ROOT / file).is_file():
            raise SystemExit(f"--configs {path}: {name}: {file}: no such file")
        configs[name] = ROOT / file if file is not None else None
    return configs, low


def never_compacts(options: Path | None) -> bool:
    """Whether an OPTIONS file switches compaction off: its runs cannot settle."""
    return options is not None and any(line.replace(" ", "").lower() == "disable_auto_compactions=true"
                                       for line in options.read_text().splitlines())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", type=Path, required=True)
    p.add_argument("--target-data", type=parse_size, default=parse_size("2GiB"))
    p.add_argument("--target-memory", type=parse_size, default=parse_size("1GiB"))
    p.add_argument("--rate", type=float, default=100_000.0, help="writes offered per second")
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--slo", default="p99.9<=2ms")
    p.add_argument("--capacity", action="store_true", help="each configuration's capacity at --slo, after the rounds")
    p.add_argument("--capacity-rounds", type=int, default=1,
                   help="with --capacity: that many paired rounds of the capacity searches")
    p.add_argument("--no-settle", action="store_true", help="each run is its window alone")
    p.add_argument("--age", type=parse_size, default=0,
                   help="after the ordered load, random overwrites of this much data (open_loop load --age)")
    p.add_argument("--age-beside", action="store_true",
                   help="measure each configuration on a DB loaded in order and beside it on one aged by --age")
    p.add_argument("--low-background-beside", action="store_true",
                   help="measure each configuration also with RocksDB's flush and compaction threads at nice 19 "
                        "(open_loop run --background_priority low)")
    p.add_argument("--read-once-beside", action="store_true",
                   help="measure each configuration also on a DB whose files were read once after its load, "
                        "\"<name>, read once\" (objectives.memory.read_through)")
    p.add_argument("--windows", type=lambda t: tuple(int(x) for x in t.split(",")), default=(),
                   help="lengths in seconds of the windows whose tails each run reports, e.g. 30,60,120")
    p.add_argument("--slow-calls", type=parse_latency_arg, default=0.0, metavar="TIME",
                   help="where the time of each RocksDB call slower than TIME (e.g. 1ms) went (open_loop run "
                        "--slow_call_us): RocksDB's PerfContext, and on a CPU or waiting")
    p.add_argument("--warm-up", type=int, metavar="N",
                   help="after the loads, N runs at --rate on each configuration's DB, kept apart in the record "
                        "(warm_up); default: as the tool warms a DB up (objectives.open_loop.warm_up_runs), 0: none")
    p.add_argument("--work-dir", type=Path)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    if args.capacity_rounds < 1 or (args.capacity_rounds > 1 and not args.capacity):
        p.error("--capacity-rounds: at least 1, and with --capacity")
    if args.warm_up is None:
        args.warm_up = warm_up_runs(args.duration)
    if args.warm_up < 0:
        p.error("--warm-up: a number of runs, 0 or more")
    configs, low_named = read_configs(args.configs)
    ages = {name: 0 if args.age_beside else args.age for name in configs}
    if args.age_beside:  # each configuration also on a DB aged by --age, as "<name>, aged"
        configs.update({f"{name}, aged": path for name, path in list(configs.items())})
        ages.update({f"{name}, aged": args.age for name in list(ages)})
    low = {name: name in low_named for name in configs}
    if args.low_background_beside:  # each configuration also with its background threads at nice 19
        for name, path in list(configs.items()):
            configs[f"{name}, {LOW}"], ages[f"{name}, {LOW}"], low[f"{name}, {LOW}"] = path, ages[name], True
    read = {name: False for name in configs}
    if args.read_once_beside:  # each configuration also on a DB read once after its load, next to it in the order
        configs = {k: v for name, path in configs.items() for k, v in ((name, path), (f"{name}, {READ}", path))}
        for name in list(ages):
            ages[f"{name}, {READ}"], low[f"{name}, {READ}"], read[f"{name}, {READ}"] = ages[name], low[name], True
    slo = parse_slo(args.slo)
    driver = find()
    where = workdir.prepare(args.work_dir)
    rate = Rate(args.rate, duration=args.duration, settle=not args.no_settle, windows=args.windows,
                slow_call_us=args.slow_calls)
    rates = {name: replace(rate, background="low" if low[name] else rate.background,
                           settle=rate.settle and not never_compacts(path)) for name, path in configs.items()}
    record: dict[str, Any] = {
        "question": "open loop at a fixed offered rate: the answers' tail, stalls and capacity against the defaults'",
        "commit": project_commit(), "machine": machine_info(Context.of_host(), where), "driver": str(driver.path),
        "rocksdb_version": driver.version, "arguments": {k: str(v) for k, v in vars(args).items()},
        "configs": {name: str(path.relative_to(ROOT)) if path else None for name, path in configs.items()},
        "age_bytes": ages, "low_background": low, "read_once": read,
        "warm_up": [], "runs": [], "capacity": {}}
    with ExitStack() as stack:
        loaded: dict[str, Loaded] = {}
        for name, options in configs.items():
            print(f"[{name}] ", end="", flush=True)
            loaded[name] = stack.enter_context(Loaded(driver, where, args.target_data, options, args.target_memory, print,
                                                      age=ages[name], read_once=read[name]))
        loads_ended = time.monotonic()
        for name in configs:  # --warm-up runs on each DB, kept apart: paired with nothing
            for i in range(1, args.warm_up + 1):
                since = time.monotonic() - loads_ended  # when it started, in seconds after the last load ended
                run = loaded[name].run(rates[name])
                print(f"warm-up {i}/{args.warm_up} {name}, {since:.0f} s after the loads: {said(run.metrics)}", flush=True)
                record["warm_up"].append({"warm_up": i, "config": name, "after_loads_s": since, **run.to_dict()})
        for round_ in range(1, args.rounds + 1):
            order = list(configs)
            random.shuffle(order)
            for name in order:
                run = loaded[name].run(rates[name])
                print(f"round {round_} {name}: {said(run.metrics)}", flush=True)
                record["runs"].append({"round": round_, "config": name, **run.to_dict()})
        record["paired"] = paired(record["runs"], list(configs))
        if args.windows:
            record["windows"] = windows(record["runs"], slo)
        if args.capacity_rounds > 1:
            record["capacity_rounds"] = capacity_rounds(loaded, rates, slo, args.capacity_rounds)
            record["capacity_paired"] = {name: ratios["held"] for name, ratios in
                                         paired(record["capacity_rounds"], list(configs), ("held",)).items()}
        elif args.capacity:
            for name in configs:
                print(f"[{name}] capacity at {slo.describe()}", flush=True)
                record["capacity"][name] = capacity(loaded[name], rates[name], slo, say=print).to_dict()
    record["date"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")  # when the last run ended
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")


def said(m: dict[str, float]) -> str:
    """A run's figures in a progress line."""
    return (f"delivered {m['delivered']:.1%}, p99.9 {m['p99.9_us']:,.0f} us, p99.99 {m['p99.99_us']:,.0f} us, "
            f"max {m['max_us']:,.0f} us, stalls {m['stall_micros'] / 1e6:.2f} s, L0 {m['l0_files']:.0f}, "
            f"write amp {m['write_amp']:.2f}")


def capacity_rounds(loaded: dict[str, Loaded], rates: dict[str, Rate], slo: Bound, rounds: int) -> list[dict[str, Any]]:
    """Each configuration's capacity at ``slo`` in ``rounds`` paired rounds (the first round's searches
    from its rate, the later ones' from the round before's :func:`shared_start`), a search per round and
    configuration, a miss far below the most it held in an earlier round run again before it counts (as a
    study's capacity stage does)."""
    found: list[dict[str, Any]] = []
    for round_ in range(1, rounds + 1):
        start = shared_start([c["held"] for c in found if c["round"] == round_ - 1])
        order = list(loaded)
        random.shuffle(order)
        for name in order:
            rate = rates[name] if start is None else replace(rates[name], writes=start)
            print(f"[{name}] capacity at {slo.describe()}, round {round_}/{rounds}, from {rate.writes:,.0f} "
                  "writes/s", flush=True)
            before = [c["held"] for c in found if c["config"] == name and c["held"] is not None]
            found.append({"round": round_, "config": name, "start": rate.writes,
                          **capacity(loaded[name], rate, slo, say=print,
                                     held_before=max(before) if before else None).to_dict()})
    return found


def windows(runs: list[dict[str, Any]], slo: Bound) -> dict[str, dict[str, dict[str, Any]]]:
    """Per configuration and window length: how many windows there were, how many held ``slo`` (its
    bound on their tail; delivery and the settle are the run's, not a window's), and their P99.9's
    quartiles and extremes, over all its runs."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for run in runs:
        for w in run.get("windows", []):
            out.setdefault(run["config"], {}).setdefault(str(w["seconds"]), {"tails": []})["tails"].append(
                w[slo.metric])
    for lengths in out.values():
        for of_length in lengths.values():
            tails = sorted(of_length.pop("tails"))
            q = statistics.quantiles(tails, n=4, method="inclusive") if len(tails) > 1 else tails * 3
            of_length.update(windows=len(tails), held=sum(slo.excess(t) <= 0 for t in tails),
                         p999_us={"min": tails[0], "q1": q[0], "median": q[1], "q3": q[2], "max": tails[-1]})
    return out


def paired(runs: list[dict[str, Any]], names: list[str],
           metrics: tuple[str, ...] = COMPARED) -> dict[str, dict[str, Any]]:
    """Each configuration's ``metrics`` over the defaults', paired by round (above 1: more than the defaults')."""
    by = {(r["round"], r["config"]): r for r in runs}
    rounds = sorted({r["round"] for r in runs})
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        if name == REFERENCE:
            continue
        out[name] = {metric: paired_ratio([by[(i, name)][metric] for i in rounds],
                                          [by[(i, REFERENCE)][metric] for i in rounds]).to_dict() for metric in metrics}
    return out


if __name__ == "__main__":
    entry(main)
