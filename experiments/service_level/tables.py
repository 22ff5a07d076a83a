"""The tables docs/measure.md quotes from this experiment's records, made from them by `make record`
(experiments/record.py)."""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from scipy.stats import binomtest

from experiments.record import commit_before, cpu_name, gathered, stamp
from objectives.open_loop import parse
from objectives.options_ini import parse_options
from objectives.rates import RateRun, holds, missed, parse_slo
from objectives.scores import HELD
from tuner.backends import BACKENDS
from tuner.engine import saved_rounds
from tuner.measure import call_parts, kernel_waits
from tuner.model import TuneConfig
from tuner.outputs import answer as study_answer
from tuner.ranking import COST_NAMES, SERVED_MARGINS, over_cost, served_over_cost
from tuner.stats import paired_ratio
from tuner.summary import ServedReport, ServedRun, Summary
from tuner.trials import TrialRecord

RESULTS = Path(__file__).with_name("results")
ROOT = Path(__file__).resolve().parents[2]  # the record's configs name their OPTIONS files from here
# What measures a run at a rate: the driver, its Python side and `rocksdb-tuner measure`.
MEASURE_CODE = ("objectives/build/open_loop.cc", "objectives/build/latency_histogram.h", "objectives/open_loop.py",
                "objectives/rates.py", "tuner/measure.py")
WINDOWS_CODE = (*MEASURE_CODE, "experiments/service_level/service_level.py")


def _record(name: str) -> tuple[Path, dict[str, Any]]:
    path = RESULTS / name
    return path, json.loads(path.read_text())


def threads_or_memory() -> str:
    """"What held trial 5's tail": each measure run's P99.9 and write amp."""
    path, record = _record("threads-or-memory-60k-11.8.1-2026-12-04.json")
    runs = record["runs"]
    rows = [f"| {name} | {run['p99.9_us'] / 1e3:.1f} ms | {run['write_amp']:.2f} |" for name, run in runs.items()]
    date = next(iter(runs.values()))["date"]
    return "\n".join(["| configuration | P99.9 | write amp |", "|---|---|---|", *rows, "",
                      stamp(path, record["commit"], date, MEASURE_CODE)])


def _ms(us: float) -> str:
    return f"{us / 1e3:.1f} ms"


def windows() -> str:
    """"How long a run at a rate must be": for each rate, each window length's count of windows, how many
    held the SLO and their P99.9's spread; the whole run's P99.9; each 30 s window's P99.9 in order."""
    rows = ["| offered | window | windows | held the SLO | P99.9: lowest | median | highest | highest / lowest |",
            "|---|---|---|---|---|---|---|---|"]
    runs, orders, stamps = [], [], []
    for rate in ("60k", "40k"):
        path, record = _record(f"windows-{rate}-11.8.1-2026-12-04.json")
        run = record["runs"][0]
        offered = f"{float(record['arguments']['rate']):,.0f} writes/s"
        for length, w in record["windows"]["rocksdb-default"].items():
            tail = w["p999_us"]
            rows.append(f"| {offered} | {length} s | {w['windows']} | {w['held']} | {_ms(tail['min'])} | "
                        f"{_ms(tail['median'])} | {_ms(tail['max'])} | {tail['max'] / tail['min']:.1f}x |")
        runs.append(f"{_ms(run['p99.9_us'])} at {offered} ({run['seconds']:.0f} s, "
                    f"write stalls {run['stall_micros'] / 1e6:.2f} s, write amp {run['write_amp']:.2f})")
        thirty = [f"{w['p99.9_us'] / 1e3:.1f}" for w in run["windows"] if w["seconds"] == 30]
        orders.append(f"At {offered}, the P99.9 of each 30 s window in order (ms): " + ", ".join(thirty) + ".")
        # these two records carry no date of their own (the script wrote none before them): their names' date
        stamps.append(stamp(path, record["commit"], record.get("date") or path.stem[-10:], WINDOWS_CODE))
    return "\n".join([*rows, "", "The whole run's P99.9: " + "; ".join(runs) + ".", "", *orders, "", *stamps])


def aged() -> str:
    """The ordered load against one aged by random overwrites: each round's P99.9 and write amp, and the
    paired ratio of the aged DB's P99.9 to the ordered one's."""
    path, record = _record("aged-40k-11.8.1-2026-12-04.json")
    by, rounds, _ = _by_round(record, "runs")
    plain, old = "rocksdb-default", "rocksdb-default, aged"
    rows = ["| round | P99.9, loaded in key order | P99.9, aged | write amp, loaded in key order | write amp, aged |",
            "|---|---|---|---|---|"]
    rows += [f"| {i} | {_ms(by[(i, plain)]['p99.9_us'])} | {_ms(by[(i, old)]['p99.9_us'])} | "
             f"{by[(i, plain)]['write_amp']:.2f} | {by[(i, old)]['write_amp']:.2f} |" for i in rounds]
    ratio = record["paired"][old]["p99.9_us"]
    low, high = ratio["ci95"]
    line = (f"The aged DB's P99.9 over the ordered one's, paired by round: {ratio['ratio']:.2f}x (95 % CI "
            f"{low:.2f}-{high:.2f}, {ratio['n']} rounds): a {ratio['verdict']}.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def memory() -> str:
    """The defaults at 40,000 writes/s for 10 minutes within 1 GiB and within 4 GiB: the run's P99.9, its
    minutes' P99.9, the memory peak and write amp."""
    path, record = _record("memory-40k-11.8.1-2026-12-04.json")
    rows = ["| configuration | P99.9 over the run | minutes that held p99.9 <= 10 ms | a minute's P99.9: lowest | "
            "median | highest | memory peak | write amp |", "|---|---|---|---|---|---|---|---|"]
    for name, run in record["runs"].items():
        minutes = sorted(w["p99.9_us"] for w in run["windows"])
        held = sum(t <= 10_000 for t in minutes)
        rows.append(f"| {name} | {_ms(run['p99.9_us'])} | {held} of {len(minutes)} | {_ms(minutes[0])} | "
                    f"{_ms(statistics.median(minutes))} | {_ms(minutes[-1])} | "
                    f"{run['memory_peak_bytes'] / 2**30:.2f} GiB | {run['write_amp']:.2f} |")
    date = next(iter(record["runs"].values()))["date"]
    return "\n".join([*rows, "", stamp(path, record["commit"], date, MEASURE_CODE)])


def reads_at_load() -> str:
    """The defaults with reads beside writes, one 60 s run: each side's tail and what was delivered."""
    path, record = _record("reads-at-load-11.8.1-2026-12-04.json")
    run = record["run"]
    rows = ["| requests | offered | P99 | P99.9 | P99.99 |", "|---|---|---|---|---|"]
    for kind in ("write", "read"):
        rows.append(f"| {kind}s | {run['rate'][kind + 's']:,.0f}/s | {_ms(run[kind + '_p99_us'])} | "
                    f"{_ms(run[kind + '_p99.9_us'])} | {_ms(run[kind + '_p99.99_us'])} |")
    line = (f"Delivered {100 * run['delivered']:.2f} % of the requests due; RocksDB's own P99.9 per request "
            f"{_ms(run['service_p99.9_us'])}; write stalls {run['stall_micros'] / 1e6:.2f} s.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], run["date"], MEASURE_CODE)])


def _shares(run: dict[str, Any], seconds: int, bound_us: int) -> list[float]:
    """The share of the requests due in each ``seconds``-long window of ``run`` that took longer than
    ``bound_us`` (the driver's ``over_us`` count over the window's requests)."""
    return [w["over_us"][str(bound_us)] / w["due"] for w in run["windows"] if w["seconds"] == seconds]


def _share(run: dict[str, Any], seconds: int, bound_us: int) -> float:
    """The share of all the requests due in ``run``'s whole ``seconds``-long windows that took longer
    than ``bound_us``: the windows' counts added up, as a percentile's cannot be."""
    windows = [w for w in run["windows"] if w["seconds"] == seconds]
    return sum(w["over_us"][str(bound_us)] for w in windows) / sum(w["due"] for w in windows)


def pauses() -> str:
    """What paused the writer: the seconds of a 10-minute run whose slowest request waited over 10 ms,
    beside the others, by what the series saw in them (and the second before: a call issued late in one
    second delays the requests due in the next); and, per minute, the P99.9 beside the share of requests
    over 10 ms."""
    path, record = _record("pauses-40k-11.8.1-2026-12-04.json")
    run = record["runs"][0]
    series = run["series"]
    slow = [i for i, s in enumerate(series) if s["max_us"] > 10_000]
    rest = [i for i, s in enumerate(series) if s["max_us"] <= 10_000]

    def cause(i: int, key: str) -> bool:  # a call or a wake-up at least half the second's worst wait
        return any(series[j][key] >= series[i]["max_us"] / 2 for j in (i - 1, i) if j >= 0)

    def mean(of: list[int], key: str) -> float:
        return statistics.fmean(series[i][key] for i in of) if of else 0.0

    rows = ["| seconds | count | a RocksDB call >= half the wait | a wake-up >= half the wait | compactions running | "
            "compaction MB/s | flush MB/s | run-queue wait | host CPU busy | stolen |", "|---" * 10 + "|"]
    for label, of in (("whose slowest request waited over 10 ms", slow), ("the others", rest)):
        calls = sum(cause(i, "service_max_us") for i in of) if of is slow else "-"
        woke = sum(cause(i, "woke_max_us") for i in of) if of is slow else "-"
        rows.append(f"| {label} | {len(of)} | {calls} | {woke} | {mean(of, 'compactions_running'):.2f} | "
                    f"{mean(of, 'compaction_bytes') / 1e6:.1f} | {mean(of, 'flush_bytes') / 1e6:.1f} | "
                    f"{mean(of, 'run_delay_ms'):.1f} ms | {mean(of, 'host_busy_ms'):.0f} ms | "
                    f"{mean(of, 'host_steal_ms'):.1f} ms |")
    tails = [w["p99.9_us"] for w in run["windows"] if w["seconds"] == 60]
    shares = _shares(run, 60, 10_000)
    minutes = ["| minute | " + " | ".join(str(i + 1) for i in range(len(tails))) + " |",
               "|---|" + "---|" * len(tails),
               "| P99.9 | " + " | ".join(f"{t / 1e3:.1f} ms" for t in tails) + " |",
               "| share over 10 ms | " + " | ".join(f"{100 * s:.3f} %" for s in shares) + " |",
               "| host CPU busy | " + " | ".join(f"{statistics.fmean(s['host_busy_ms'] for s in series[60 * i:60 * i + 60]):.0f}"
                                               f" ms/s" for i in range(len(tails))) + " |"]
    spread = (f"Over the minutes, P99.9's highest / lowest {max(tails) / min(tails):.1f}x and its coefficient of "
              f"variation {statistics.stdev(tails) / statistics.fmean(tails):.2f}; the share over 10 ms's "
              f"{statistics.stdev(shares) / statistics.fmean(shares):.2f}. The whole run: P99.9 {_ms(run['p99.9_us'])}, "
              f"{100 * _share(run, 60, 10_000):.3f} % of requests over 10 ms (its whole minutes), write stalls "
              f"{run['stall_micros'] / 1e6:.2f} s, RocksDB's own P99.99 per call {_ms(run['service_p99.99_us'])} "
              f"and longest {_ms(run['service_max_us'])}, the latest wake-up {_ms(run['woke_max_us'])}.")
    return "\n".join([*rows, "", *minutes, "", spread, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def nice() -> str:
    """The defaults with their flush and compaction threads at the writer's CPU priority and at nice 19,
    10 minutes each: the run's tail, its minutes', the share over 10 ms, the writer's wait for a core."""
    path, record = _record("nice-40k-11.8.1-2026-12-04.json")
    label = {name: "at nice 19" if low else "at the writer's priority (the defaults)"
             for name, low in record["low_background"].items()}
    return "\n".join([*_served(record, label), "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _served(record: dict[str, Any], label: dict[str, str]) -> list[str]:
    """A row per run of a 10-minute record: its tail, its minutes', the share over 10 ms, and in the
    seconds whose slowest request waited over 10 ms, the writer's wait for a core and the CPU stolen."""
    rows = ["| configuration | P99.9 | P99.99 | minutes that held p99.9 <= 10 ms | a minute's P99.9: median | "
            "highest | requests over 10 ms | seconds with one over 10 ms | their writer's wait for a core | "
            "their CPU stolen | the others' | host CPU busy | write amp |", "|---" * 13 + "|"]
    for run in record["runs"]:
        minutes = sorted(w["p99.9_us"] for w in run["windows"] if w["seconds"] == 60)
        slow = [s for s in run["series"] if s["max_us"] > 10_000]
        rest = [s for s in run["series"] if s["max_us"] <= 10_000]
        rows.append(f"| {label[run['config']]} | {_ms(run['p99.9_us'])} | {_ms(run['p99.99_us'])} | "
                    f"{sum(t <= 10_000 for t in minutes)} of {len(minutes)} | {_ms(statistics.median(minutes))} | "
                    f"{_ms(minutes[-1])} | {100 * _share(run, 60, 10_000):.3f} % | {len(slow)} | "
                    f"{statistics.fmean(s['run_delay_ms'] for s in slow):.1f} ms/s | "
                    f"{statistics.fmean(s['host_steal_ms'] for s in slow):.1f} ms/s | "
                    f"{statistics.fmean(s['host_steal_ms'] for s in rest):.1f} ms/s | "
                    f"{statistics.fmean(s['host_busy_ms'] for s in run['series']):.0f} ms/s | {run['write_amp']:.2f} |")
    return rows


def smoothing() -> str:
    """The defaults beside the same with compaction's writes smoothed (a rate limiter, bytes_per_sync),
    10 minutes each: what :func:`nice` shows, per configuration."""
    path, record = _record("smoothing-40k-11.8.1-2026-12-04.json")
    label = {name: "the defaults" if name == "rocksdb-default" else f"the defaults + {name}" for name in record["configs"]}
    written = "; ".join(f"{label[run['config']]} {(run['flush_bytes'] + run['compaction_bytes']) / run['seconds'] / 2**20:.1f} "
                        f"MiB/s, settled in {run['settle_s']:.0f} s" for run in record["runs"])
    return "\n".join([*_served(record, label), "", f"Flushes and compactions wrote on average over the run: {written}.",
                      "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _paired(file: str, label: str) -> str:
    """One configuration and the defaults in paired rounds: each round's tail, what it wrote and left on
    disk, and its figures over the defaults', paired by round. ``label``: the configuration in words."""
    path, record = _record(file)
    name = next(n for n in record["configs"] if n != "rocksdb-default")
    by, rounds, _ = _by_round(record, "runs")
    rows = ["| round | configuration | P99.9 | P99.99 | max | minutes that held p99.9 <= 10 ms | delivered | write stalls | "
            "write amp | disk after | settle | host CPU busy |", "|---" * 12 + "|"]
    for i in rounds:
        for config, words in (("rocksdb-default", "the defaults"), (name, label)):
            run = by[(i, config)]
            minutes = [w["p99.9_us"] for w in run["windows"] if w["seconds"] == 60]
            busy = statistics.fmean(s["host_busy_ms"] for s in run["series"])
            rows.append(f"| {i} | {words} | {_ms(run['p99.9_us'])} | {_ms(run['p99.99_us'])} | {_ms(run['max_us'])} | "
                        f"{sum(t <= 10_000 for t in minutes)} of {len(minutes)} | {100 * run['delivered']:.2f} % | "
                        f"{run['stall_micros'] / 1e6:.2f} s | {run['write_amp']:.2f} | "
                        f"{run['sst_bytes'] / 2**30:.2f} GiB | {run['settle_s']:.0f} s | {busy:.0f} ms/s |")
    line = f"Over the defaults, paired by round ({len(rounds)} rounds): {_tail_ratios(record, name)}."
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _tail_ratios(record: dict[str, Any], name: str) -> str:
    """``name``'s P99.9, P99.99 and max over the defaults' in a record of paired rounds, each with its interval."""
    ratios = []
    for metric, words in (("p99.9_us", "P99.9"), ("p99.99_us", "P99.99"), ("max_us", "max")):
        r = record["paired"][name][metric]
        interval = f", 95 % CI {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}" if r["ci95"] else ""
        ratios.append(f"{words} {r['ratio']:.2f}x{interval}")
    return "; ".join(ratios)


def limiter() -> str:
    """The defaults and the defaults with a 48 MiB/s rate limiter in paired rounds of 10 minutes."""
    return _paired("limiter-40k-11.8.1-2026-12-04.json", "the defaults + rate limiter 48 MiB/s")


def stalls() -> str:
    """The 2026-12-05 default job's best (trial 63, its OPTIONS file as its search run wrote it), which stalled
    writes just past the cost guard's margin at full speed, and the defaults in paired rounds at a rate."""
    return _paired("stalls-160k-11.8.1-2026-12-05.json", "trial 63")


SERVED_GUARD = "served-guard-130k-11.8.1-2026-12-05.json"


def served_guard() -> str:
    """Trial 93 of make tune at 96595c6, the defaults, and the defaults again under another name in paired
    rounds at a rate: each round's P99.99 and its ratio to the defaults' that round; then, over every two of
    the rounds (what the served stage's two rounds see), the ratio of the medians, the guard's statistic."""
    path, record = _record(SERVED_GUARD)
    again, trial = "rocksdb-default, again", next(n for n in record["configs"] if n.startswith("make tune"))
    tail = {(r["round"], r["config"]): r["p99.99_us"] for r in record["runs"]}
    rounds = sorted({r["round"] for r in record["runs"]})
    rows = ["| round | the defaults | the defaults again | trial 93 | again / the defaults | trial 93 / the defaults |",
            "|---" * 6 + "|"]
    for i in rounds:
        d, a, t = (tail[(i, c)] for c in ("rocksdb-default", again, trial))
        rows.append(f"| {i} | {_ms(d)} | {_ms(a)} | {_ms(t)} | {a / d:.2f}x | {t / d:.2f}x |")
    pairs = list(itertools.combinations(rounds, 2))

    def medians(config: str) -> list[float]:
        return [statistics.median(tail[(i, config)] for i in two) / statistics.median(
            tail[(i, "rocksdb-default")] for i in two) for two in pairs]
    null, worse = medians(again), medians(trial)
    line = (f"The ratio of medians over two of the {len(rounds)} rounds (the served stage's statistic; all "
            f"{len(pairs)} pairs of rounds): the defaults again over the defaults {min(null):.2f}x-{max(null):.2f}x, "
            f"trial 93 over the defaults {min(worse):.2f}x-{max(worse):.2f}x.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


SERVED_LOW = "served-low-56k-11.8.1-2026-12-06.json"


def served_low() -> str:
    """make tune's answer at 4eb37f1 (trial 101), the defaults, and the defaults again at 0.4 x the defaults'
    sustained rate in paired rounds: each round's P99.9 and P99.99; then each one's paired ratio to the defaults
    (the record's own), and how many subsets of 3 rounds (--serve-rounds' default) the served guard calls beyond."""
    path, record = _record(SERVED_LOW)
    again, trial = "rocksdb-default, again", next(n for n in record["configs"] if n.startswith("make tune"))
    by, rounds, _ = _by_round(record, "runs")
    configs = ("rocksdb-default", again, trial)
    labels = ("the defaults", "the defaults again", "trial 101")
    rows = ["| round | " + " | ".join(f"{label}: P99.9 | P99.99" for label in labels) + " |", "|---" * 7 + "|"]
    rows += [f"| {i} | " + " | ".join(f"{_ms(by[(i, c)]['p99.9_us'])} | {_ms(by[(i, c)]['p99.99_us'])}"
                                      for c in configs) + " |" for i in rounds]
    subsets = list(itertools.combinations(rounds, SUBSETS[0]))
    side = {"faster": "above 1", "slower": "below 1"}  # paired_ratio's words are for ops/s; these ratios are a tail's
    lines = []
    for config, label in ((trial, "Trial 101"), (again, "The defaults again")):
        ratios = []
        for key, name in (("p99.9_us", "P99.9"), ("p99.99_us", "P99.99")):
            r = record["paired"][config][key]
            ratios.append(f"{name} {r['ratio']:.2f}x (95 % CI {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}, "
                          f"{side.get(r['verdict'], r['verdict'])})")
        called = sum(_beyond(by, config, s) for s in subsets)
        decided = sum(paired_ratio([by[(i, config)]["p99.9_us"] for i in s],
                                   [by[(i, "rocksdb-default")]["p99.9_us"] for i in s]).verdict != "tie" for s in subsets)
        lines.append(f"{label} over the defaults, paired by round ({len(rounds)} rounds): {'; '.join(ratios)}. Over "
                     f"the {len(subsets)} subsets of {SUBSETS[0]} of the rounds (--serve-rounds' default), the P99.9 ratio's "
                     f"interval excludes 1 in {decided}, and the served guard calls it beyond in {called}.")
    return "\n".join([*rows, "", *lines, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


BOUND_ROUNDS = "bound-rounds-10ms-11.8.1-2026-12-06.json"
GOAL = 1.3  # the capacity ratio issue 68 set for the SLO job (a goal, not a measurement)


def _rate(ops: float | None) -> str:
    return "-" if ops is None else f"{ops:,.0f}"


def _against_goal(low: float, high: float) -> str:
    """Where a capacity ratio's 95 % interval lies against GOAL: "above 1.3", "below 1.3" or "on both sides of 1.3"."""
    return f"{'above' if low > GOAL else 'below' if high < GOAL else 'on both sides of'} {GOAL:g}"


def bound_rounds() -> str:
    """The bound in paired rounds on the AMD EPYC host: :func:`_bound_rounds`."""
    return _bound_rounds(BOUND_ROUNDS)


BOUND_ROUNDS_INTEL = "bound-rounds-intel-130k-11.8.1-2026-12-06.json"


def bound_rounds_intel() -> str:
    """The bound in paired rounds on the Intel Xeon host: :func:`_bound_rounds`."""
    return _bound_rounds(BOUND_ROUNDS_INTEL)


def _bound_rounds(name: str) -> str:
    """The defaults' capacity at the SLO beside the compaction-off bound's, in paired rounds: each round's
    start, held and failed rates; the bound's held rates over the defaults' (the record's paired ratio), and
    where the interval lies against the goal."""
    path, record = _record(name)
    by, rounds, _ = _by_round(record)
    bound = next(name for name in record["configs"] if name != "rocksdb-default")
    rows = ["| round | searches from (ops/s) | the defaults held (ops/s) | did not hold | compaction off held | did not hold |",
            "|---" * 6 + "|"]
    rows += [f"| {i} | {_rate(by[(i, 'rocksdb-default')]['start'])} | "
             + " | ".join(f"{_rate(by[(i, c)]['held'])} | {_rate(by[(i, c)]['failed'])}" for c in ("rocksdb-default", bound))
             + " |" for i in rounds]
    r = record["capacity_paired"][bound]
    low, high = r["ci95"]
    line = (f"The bound's capacity over the defaults', paired by round ({r['n']} rounds): {r['ratio']:.2f}x "
            f"(95 % CI {low:.2f}-{high:.2f}); the interval lies {_against_goal(low, high)}.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


LEVERS = "levers-10ms-11.8.1-2026-12-06.json"


def _held_probe(found: dict[str, Any]) -> dict[str, Any] | None:
    """The run of a capacity search at the rate it held (None when it held none): the last at that rate, a
    rate run again after a miss holding in its second run."""
    at = [p for p in found["probes"] if p["offered"] == found["held"]]
    return at[-1] if at else None


def levers() -> str:
    """Known levers on the defaults' OPTIONS file beside the defaults, in paired capacity rounds."""
    return _paired_capacities(LEVERS)


def _by_round(record: dict[str, Any], kind: str = "capacity_rounds") -> tuple[dict[tuple[int, str], dict[str, Any]],
                                                                             list[int], list[str]]:
    """A record's capacity searches (or, with ``kind`` "runs", its runs at a rate) by (round, configuration), its
    rounds and its configurations' names."""
    found = record[kind]
    return {(c["round"], c["config"]): c for c in found}, sorted({c["round"] for c in found}), list(record["configs"])


def _capacity_rows(record: dict[str, Any]) -> list[str]:
    """A table of paired capacity rounds: each round's start and each configuration's held rate."""
    by, rounds, names = _by_round(record)
    rows = ["| round | searches from (ops/s) | " + " | ".join(f"{n} held (ops/s)" for n in names) + " |",
            "|---" * (len(names) + 2) + "|"]
    return rows + [f"| {i} | {_rate(by[(i, names[0])]['start'])} | "
                   + " | ".join(_rate(by[(i, n)]["held"]) for n in names) + " |" for i in rounds]


def _paired_capacities(name: str) -> str:
    """Configurations beside the defaults in paired capacity rounds: each round's start and each
    configuration's held rate; each one's held rates over the defaults' (the record's paired ratio) against
    the goal, and what the runs at the held rates wrote and kept (medians over the rounds)."""
    path, record = _record(name)
    return "\n".join([*_paired_lines(record), "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _paired_lines(record: dict[str, Any], more: tuple[str, ...] = ()) -> list[str]:
    """:func:`_paired_capacities`' table and lines (``more`` after them), without the stamp."""
    by, rounds, names = _by_round(record)
    rows = _capacity_rows(record)
    lines = []
    for name in names:
        probes = [p for p in (_held_probe(by[(i, name)]) for i in rounds) if p is not None]
        cost = (f"write amp {statistics.median(p['write_amp'] for p in probes):.2f}, disk after "
                f"{statistics.median(p['sst_bytes'] for p in probes) / 2**30:.2f} GiB") if probes else "no run held"
        if name == "rocksdb-default":
            lines.append(f"- {name}: at its held rates {cost}.")
            continue
        r = record["capacity_paired"][name]
        low, high = r["ci95"]
        lines.append(f"- {name}: capacity over the defaults', paired by round ({r['n']} rounds), {r['ratio']:.2f}x "
                     f"(95 % CI {low:.2f}-{high:.2f}; the interval lies {_against_goal(low, high)}); at its held "
                     f"rates {cost}.")
    return [*rows, "", *lines, *more, *_run_again(record)]


def _run_again(record: dict[str, Any]) -> list[str]:
    """A line on the rates the record's searches ran again after a miss where the configuration held more in an
    earlier round, and how many of them held the second time (none for a record made before it)."""
    slo = parse_slo(record["arguments"]["slo"])
    second = [next(p for p in reversed(c["probes"]) if p["offered"] == rate)
              for c in record["capacity_rounds"] for rate in c.get("again", [])]
    if not any("again" in c for c in record["capacity_rounds"]):
        return []
    runs = sum(len(c["probes"]) for c in record["capacity_rounds"])
    if not second:
        return [f"No rate was run again after a miss (none missed far below what its configuration held in an "
                f"earlier round; {runs} runs in all)."]
    held = sum(holds(_run_of(p), slo) for p in second)
    if len(second) == 1:
        return [f"1 rate was run again after a miss where its configuration held more in an earlier round ({runs} runs "
                f"in all); it {'held' if held else 'missed again'} the second time."]
    return [f"{len(second)} rates were run again after a miss where their configuration held more in an earlier round "
            f"({runs} runs in all); {held} of them held the second time."]


def _run_of(probe: dict[str, Any]) -> RateRun:
    """A recorded capacity run's figures as the run objectives.rates judges (holds, missed)."""
    return RateRun({k: v for k, v in probe.items() if isinstance(v, int | float)}, (), "")


FINALIST_CAPACITY = "finalist-capacity-110k-11.8.1-2026-12-06.json"


def finalist_capacity() -> str:
    """The capacity study's runner-up (trial 12) beside the defaults, in paired capacity rounds."""
    return _paired_capacities(FINALIST_CAPACITY)


COMPACTION_WORK = "compaction-work-30s-130k-11.8.1-2026-12-06.json"


def compaction_work() -> str:
    """Two ways to compact less per byte written (L0 compaction at 8 files, 128 MiB memtables), each on the
    defaults' OPTIONS file, beside the defaults in paired capacity rounds of 30 s runs."""
    return _paired_capacities(COMPACTION_WORK)


def _seconds_rows(record: dict[str, Any], bound_us: float) -> list[str]:
    """Over every run of a record's capacity searches, per configuration: the seconds whose slowest request
    waited over ``bound_us`` beside the others, by what the runs' series saw in them (a compaction running at
    the second's end, flush and compaction writes, the request threads' wait for a core, the host's CPU)."""
    rows = ["| configuration | seconds | count | with a compaction running | flush MB/s | compaction MB/s | "
            "request threads' wait for a core | host CPU busy | stolen |", "|---" * 9 + "|"]
    for name in record["configs"]:
        series = [second for c in record["capacity_rounds"] if c["config"] == name for p in c["probes"]
                  for second in p["series"]]
        for label, of in ((f"a request over {bound_us / 1e3:g} ms", [x for x in series if x["max_us"] > bound_us]),
                          ("the others", [x for x in series if x["max_us"] <= bound_us])):
            def mean(key: str, of: list[dict[str, Any]] = of) -> float:
                return statistics.fmean(x[key] for x in of) if of else 0.0
            running = 100 * statistics.fmean(x["compactions_running"] > 0 for x in of) if of else 0.0
            rows.append(f"| {name} | {label} | {len(of)} | {running:.0f} % | "
                        f"{mean('flush_bytes') / 1e6:.1f} | {mean('compaction_bytes') / 1e6:.1f} | "
                        f"{mean('run_delay_ms'):.0f} ms/s | {mean('host_busy_ms'):.0f} ms/s | "
                        f"{mean('host_steal_ms'):.1f} ms/s |")
    return rows


def compaction_work_seconds() -> str:
    """The compaction-work record's seconds with a request over the SLO's bound beside the others
    (:func:`_seconds_rows`)."""
    path, record = _record(COMPACTION_WORK)
    bound = parse_slo(record["arguments"]["slo"]).limit
    return "\n".join([*_seconds_rows(record, bound), "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


NICE_CAPACITY = "nice-capacity-30s-130k-11.8.1-2026-12-06.json"


def nice_capacity() -> str:
    """The defaults with their flush and compaction threads at nice 19 beside the defaults in paired capacity
    rounds of 30 s runs: :func:`_capacity_why`."""
    return _capacity_why(NICE_CAPACITY)


AT_NICE_19 = "at-nice-19-30s-130k-11.8.1-2026-12-06.json"


def at_nice_19() -> str:
    """128 MiB memtables, 2 subcompactions and 4 background jobs at nice 19 beside the defaults in paired
    capacity rounds of 30 s runs: :func:`_capacity_why`."""
    return _capacity_why(AT_NICE_19)


BOUND_AT_NICE_19 = "bound-at-nice-19-60s-120k-11.8.1-2026-12-07.json"


def bound_at_nice_19() -> str:
    """The bound with flushes at nice 19 (compaction off) and the at-nice-19 configuration beside the defaults in
    paired capacity rounds of 60 s runs (:func:`_capacity_why`), and the configuration's capacity over the
    bound's, paired by round: how much of what the bound leaves the writer it holds."""
    _, record = _record(BOUND_AT_NICE_19)
    by, rounds, names = _by_round(record)
    bound, config = (n for n in names if n != "rocksdb-default")
    r = paired_ratio([by[(i, config)]["held"] for i in rounds], [by[(i, bound)]["held"] for i in rounds])
    assert r.ci95 is not None and r.ratio is not None, "a record of two rounds or more"
    return _capacity_why(BOUND_AT_NICE_19, (f"{config} over {bound}, paired by round ({r.n} rounds): {r.ratio:.2f}x "
                                            f"(95 % CI {r.ci95[0]:.2f}-{r.ci95[1]:.2f}).",))


SLOW_CALLS = "slow-calls-120k-11.8.1-2026-12-07.json"
SLOW_CALLS_NO_FALLOCATE = "slow-calls-no-fallocate-120k-11.8.1-2026-12-07.json"


def slow_calls() -> str:
    """The three configurations of the bound-at-nice-19 record with --slow_call_us: :func:`_slow_calls`."""
    return _slow_calls(SLOW_CALLS)


def slow_calls_no_fallocate() -> str:
    """The defaults and their OPTIONS file with WAL space not preallocated, with --slow_call_us: :func:`_slow_calls`."""
    return _slow_calls(SLOW_CALLS_NO_FALLOCATE)


def _slow_calls(file: str) -> str:
    """Paired rounds at one rate with the driver's --slow_call_us: per configuration and round, the tail, the
    calls over the threshold and where their time went (tuner.measure.call_parts), and the slowest call's; then
    each configuration's slow calls over all its rounds (and the kernel stacks they waited in, where the record
    has them: tuner.measure.kernel_waits), and RocksDB's time per call with the timers and without them (the
    bound-at-nice-19 record's runs at the same rate)."""
    path, record = _record(file)
    over = _ms(float(record["arguments"]["slow_calls"]))
    rows = [f"| configuration | round | P99.9 | calls over {over} | their time | where it went | the slowest | "
            "where it went |", "|---" * 8 + "|"]
    lines = []
    for name in record["configs"]:
        runs = sorted((r for r in record["runs"] if r["config"] == name), key=lambda r: r["round"])
        for r in runs:
            went = ((call_parts(r, "slow_calls", r["slow_calls_us"]), call_parts(r, "slowest_call", r["slowest_call_us"]))
                    if r["slow_calls"] else ("-", "-"))
            rows.append(f"| {name} | {r['round']} | {_ms(r['p99.9_us'])} | {r['slow_calls']:,.0f} | "
                        f"{_ms(r['slow_calls_us'])} | {went[0]} | {_ms(r['slowest_call_us'])} | {went[1]} |")
        summed = {k: sum(r[k] for r in runs) for k in runs[0] if k.startswith("slow_calls")}
        if summed["slow_calls"]:
            lines.append(f"- {name}, its {summed['slow_calls']:,.0f} calls over {over} in {len(runs)} runs, "
                         f"{_ms(summed['slow_calls_us'])} in all: {call_parts(summed, 'slow_calls', summed['slow_calls_us'])}.")
        stacks: Counter[str] = sum((Counter(r.get("kernel_waits", {})) for r in runs), Counter())
        if stacks:
            lines.append(f"- {name}, in the kernel: {sum(stacks.values()):,} samples of {over} each, {kernel_waits(stacks)}.")
    rate = float(record["arguments"]["rate"])
    _, before = _record(BOUND_AT_NICE_19)
    plain = [p["service_mean_us"] for c in before["capacity_rounds"] for p in c["probes"] if p["offered"] == rate]
    timed = [r["service_mean_us"] for r in record["runs"]]
    lines.append(f"RocksDB's mean time per call, median over the runs: {statistics.median(timed):.2f} us here, with the "
                 f"timers; {statistics.median(plain):.2f} us without them in the `bound-at-nice-19` record's "
                 f"{len(plain)} runs at {_rate(rate)} ops/s.")
    return "\n".join([*rows, "", *lines, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


WAL_SPACE = "wal-space-120k-11.8.1-2026-12-07.json"


def wal_space() -> str:
    """The defaults, and their OPTIONS file with WAL space not preallocated, in paired rounds at one rate:
    :func:`_tails`."""
    return _tails(WAL_SPACE)


DIRECT_IO = "direct-io-120k-11.8.1-2026-12-07.json"


def direct_io() -> str:
    """The defaults, and their OPTIONS file with flushes and compactions past the page cache, in paired rounds at
    one rate: :func:`_tails`."""
    return _tails(DIRECT_IO)


def _tails(file: str) -> str:
    """Configurations beside the defaults in paired rounds at one rate: each run's tail and its longest RocksDB
    call, and each one's tail over the defaults'."""
    path, record = _record(file)
    by, rounds, names = _by_round(record, "runs")
    rows = ["| round | configuration | P99.9 | P99.99 | max | longest RocksDB call | write stalls | write amp |",
            "|---" * 8 + "|"]
    for i in rounds:
        for name in names:
            run = by[(i, name)]
            rows.append(f"| {i} | {name} | {_ms(run['p99.9_us'])} | {_ms(run['p99.99_us'])} | {_ms(run['max_us'])} | "
                        f"{_ms(run['service_max_us'])} | {run['stall_micros'] / 1e6:.2f} s | {run['write_amp']:.2f} |")
    lines = []
    for name in names[1:]:
        lines.append(f"- {name} over the defaults, paired by round ({len(rounds)} rounds; above 1: a worse tail): "
                     f"{_tail_ratios(record, name)}.")
    return "\n".join([*rows, "", *lines, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


WAL_SPACE_CAPACITY = "wal-space-capacity-60s-120k-11.8.1-2026-12-07.json"


def wal_space_capacity() -> str:
    """The defaults, and their OPTIONS file with WAL space not preallocated, in paired capacity rounds of 60 s
    runs: :func:`_capacity_why`."""
    return _capacity_why(WAL_SPACE_CAPACITY)


WAL_WAITS = "wal-waits-120k-11.8.1-2026-12-07.json"


def wal_waits() -> str:
    """The defaults, with flushes and compactions past the page cache, and with 4 WAL files recycled, with
    --slow_call_us: :func:`_slow_calls`."""
    return _slow_calls(WAL_WAITS)


DIRECT_IO_CAPACITY = "direct-io-capacity-60s-120k-11.8.1-2026-12-07.json"


def direct_io_capacity() -> str:
    """The defaults, and their OPTIONS file with flushes and compactions past the page cache, alone and with
    the background at nice 19, in paired capacity rounds of 60 s runs: :func:`_capacity_why`."""
    return _capacity_why(DIRECT_IO_CAPACITY)


DIRECT_IO_LEVERS = "direct-io-levers-175k-11.8.1-2026-12-07.json"


def direct_io_levers() -> str:
    """The defaults, direct I/O at nice 19, and that with less compaction work or more threads, in paired rounds
    at one rate: :func:`_held_at_rate`."""
    return _held_at_rate(DIRECT_IO_LEVERS)


LESS_WORK_CAPACITY = "less-work-capacity-60s-150k-11.8.1-2026-12-07.json"


def less_work_capacity() -> str:
    """The direct-io-levers screen's winner (direct I/O, 128 MiB memtables, L0 compaction at 8 files, at nice 19),
    the same without direct I/O, and the defaults, in paired capacity rounds of 60 s runs: :func:`_capacity_why`."""
    return _capacity_why(LESS_WORK_CAPACITY)


def _held_at_rate(file: str) -> str:
    """Configurations beside the defaults in paired rounds at one rate, judged as a capacity search judges a rate
    (objectives.rates.missed): each run's tail, its settle and whether it held, and in how many rounds each held."""
    path, record = _record(file)
    slo = parse_slo(record["arguments"]["slo"])
    by, rounds, names = _by_round(record, "runs")
    rows = ["| round | configuration | P99.9 | P99.99 | max | settle | held | write amp |", "|---" * 8 + "|"]
    held: dict[str, int] = {name: 0 for name in names}
    for i in rounds:
        for name in names:
            run = by[(i, name)]
            why = missed(_run_of(run), slo)
            held[name] += not why
            settle = f"{run['settle_s']:.0f} s" if run["settled"] > 0 else f"behind after {run['settle_s']:.0f} s"
            rows.append(f"| {i} | {name} | {_ms(run['p99.9_us'])} | {_ms(run['p99.99_us'])} | {_ms(run['max_us'])} | "
                        f"{settle} | {'yes' if not why else 'no: ' + ', '.join(why)} | {run['write_amp']:.2f} |")
    at = f"{record['arguments']['slo']} at {_rate(float(record['arguments']['rate']))} ops/s"
    lines = [f"- {name}: held {at} in {held[name]} of {len(rounds)} rounds." for name in names]
    return "\n".join([*rows, "", *lines, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _capacity_why(name: str, more: tuple[str, ...] = ()) -> str:
    """Configurations beside the defaults in paired capacity rounds (:func:`_paired_lines`), why their runs
    missed (:func:`_misses`; ``more`` lines after them), and their seconds with a request over the bound beside
    the others (:func:`_seconds_rows`)."""
    path, record = _record(name)
    bound = parse_slo(record["arguments"]["slo"]).limit
    return "\n".join([*_paired_lines(record, (*_misses(record), *more)), "", *_seconds_rows(record, bound), "",
                      stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _misses(record: dict[str, Any]) -> list[str]:
    """Per configuration of a record's capacity rounds: the median tail at its held rates, and of its runs that
    missed, how many ran a tail beyond the bound and how many held the tail but not the settle."""
    slo = parse_slo(record["arguments"]["slo"])
    by, rounds, names = _by_round(record)
    lines = []
    for name in names:
        held = [p[slo.metric] for p in (_held_probe(by[(i, name)]) for i in rounds) if p is not None]
        why = [missed(_run_of(p), slo) for i in rounds for p in by[(i, name)]["probes"]]
        over = sum(any(w.startswith(slo.metric) for w in ws) for ws in why)
        settle = sum(bool(ws) and not any(w.startswith(("delivered", slo.metric)) for w in ws) for ws in why)
        lines.append(f"- {name}: {slo.metric.removesuffix('_us').upper()} at its held rates, median "
                     f"{_ms(statistics.median(held)) if held else '-'}; of its {sum(bool(w) for w in why)} runs that "
                     f"missed, {over} ran a tail beyond the bound, {settle} held the tail and all requests but not "
                     "the settle (compaction behind when it ended).")
    return lines


CAPACITY_AA = "capacity-aa-30s-110k-11.8.1-2026-12-06.json"


def _log_spread(held: list[float]) -> float:
    """The standard deviation of the natural logs of capacities (a relative spread)."""
    return statistics.stdev(math.log(h) for h in held)


def capacity_aa() -> str:
    """The defaults beside themselves in paired capacity rounds of 30 s runs: each round's held rates, what the
    first search (right after the loads) held against the others, their paired ratio (an A/A: the truth is 1),
    how far one round's two searches were apart at most, and each one's spread over the rounds beside the
    defaults' in the 60 s runs of the finalist-capacity record."""
    path, record = _record(CAPACITY_AA)
    by, rounds, names = _by_round(record)
    again = next(n for n in names if n != "rocksdb-default")
    held = {key: c["held"] for key, c in by.items()}
    if None in held.values():
        raise ValueError(f"{CAPACITY_AA}: a round held no rate tried; the spread of logs needs each round's capacity")
    rows = _capacity_rows(record)
    r = record["capacity_paired"][again]
    apart = max(max(held[(i, again)], held[(i, "rocksdb-default")]) / min(held[(i, again)], held[(i, "rocksdb-default")])
                for i in rounds)
    _, longer = _record(FINALIST_CAPACITY)
    sixty = [c["held"] for c in longer["capacity_rounds"] if c["config"] == "rocksdb-default"]
    first, rest = record["capacity_rounds"][0], record["capacity_rounds"][1:]  # in the order they ran
    lines = [f"The record's first search ({first['config']}, round {first['round']}), the first runs after its loads, "
             f"held {_rate(first['held'])}; the other {len(rest)} held {_rate(min(c['held'] for c in rest))}-"
             f"{_rate(max(c['held'] for c in rest))}.",
             f"The defaults again over the defaults, paired by round ({r['n']} rounds): {r['ratio']:.2f}x (95 % CI "
             f"{r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}); the same configuration's two searches of one round were up to "
             f"{apart:.2f} times apart.",
             f"Spread of the log capacities over the rounds (standard deviation): in these 30 s runs rocksdb-default "
             f"{_log_spread([held[(i, 'rocksdb-default')] for i in rounds]):.2f}, the defaults again "
             f"{_log_spread([held[(i, again)] for i in rounds]):.2f}; in the 60 s runs of the `finalist-capacity` "
             f"record, measured just before, rocksdb-default {_log_spread(sixty):.2f}."]
    return "\n".join([*rows, "", *lines, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


WARM_UP_AA = "warm-up-aa-30s-110k-11.8.1-2026-12-06.json"


def _on_the_db(record: dict[str, Any], name: str) -> list[tuple[str, dict[str, Any]]]:
    """The runs on one configuration's DB in the order they ran: its --warm-up runs ("warm-up"), then each of
    its capacity searches' runs ("round N")."""
    warm = [("warm-up", run) for run in record.get("warm_up", []) if run["config"] == name]
    return warm + [(f"round {c['round']}", probe) for c in record["capacity_rounds"] if c["config"] == name
                   for probe in c["probes"]]


def warm_up_aa() -> str:
    """The defaults on two DBs loaded alike, one given 4 runs after the loads before the capacity rounds: each
    DB's runs up to the end of its first search in the order they ran (rate and P99.9), and what each round's
    searches held."""
    path, record = _record(WARM_UP_AA)
    by, _, names = _by_round(record)
    slo = parse_slo(record["arguments"]["slo"])
    rows = ["| DB | runs on it in the order they ran: rate (ops/s), P99.9 (ms) |", "|---|---|"]
    for name in names:
        runs = _on_the_db(record, name)
        rows.append(f"| {name} | " + "; ".join(
            f"{'*' if part == 'warm-up' else ''}{_rate(run['offered_ops_per_sec'])} {run['p99.9_us'] / 1e3:.1f}"
            + ("" if slo.excess(run[slo.metric]) <= 0 else " (over)") for part, run in runs
            if part in ("warm-up", "round 1")) + " |")
    first = [by[(1, name)] for name in names]
    rest = [c for c in record["capacity_rounds"] if c["round"] > 1]
    lines = [f"Starred: the {record['arguments']['warm_up']} runs after the loads (`--warm-up`), on "
             f"{record['warm_up'][0]['config']}'s DB only, kept apart; then each DB's first capacity search "
             f"(round 1), from {_rate(first[0]['start'])} ops/s; \"(over)\": P99.9 over the bound of "
             f"{slo.limit / 1e3:g} ms.",
             "Round 1's searches held: " + ", ".join(f"{c['config']} {_rate(c['held'])}" for c in first)
             + f"; the later rounds' {len(rest)} held {_rate(min(c['held'] for c in rest))}-"
             f"{_rate(max(c['held'] for c in rest))}."]
    return "\n".join([*rows, "", *_capacity_rows(record), "", *lines, "",
                      stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


FIRST_RUNS_READ_ONCE = "first-runs-read-once-110k-11.8.1-2026-12-06.json"


def first_runs_read_once() -> str:
    """Four DBs of the defaults loaded alike, two of them read once from the disk after the load, each given
    its runs in a row, one DB after another: when each DB's first run started after the loads, and every run's
    P99.9 in order."""
    path, record = _record(FIRST_RUNS_READ_ONCE)
    slo = parse_slo(record["arguments"]["slo"])
    rows = ["| DB | read once after its load | its first run started after the loads | P99.9 of its runs in order (ms) |",
            "|---|---|---|---|"]
    for name in record["configs"]:
        runs = [r for r in record["warm_up"] if r["config"] == name]
        rows.append(f"| {name} | {'yes' if record['read_once'][name] else 'no'} | {runs[0]['after_loads_s']:.0f} s | "
                    + ", ".join(f"{r['p99.9_us'] / 1e3:.1f}" + ("" if slo.excess(r[slo.metric]) <= 0 else " (over)")
                                for r in runs) + " |")
    rate = record["warm_up"][0]["offered_ops_per_sec"]
    settle = "its window alone" if record["arguments"]["no_settle"] == "True" else "with its settle"
    line = (f"Each run {float(record['arguments']['duration']):g} s at {_rate(rate)} ops/s, {settle}; \"(over)\": "
            f"P99.9 over {slo.limit / 1e3:g} ms.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _first_run_ratios(record: dict[str, Any]) -> dict[str, float]:
    """Per configuration of a record of paired rounds at a rate with 3 rounds or more and no --warm-up: its
    round 1 run's P99.9 (its first run on its DB after the load) over the median of its later rounds'."""
    tails: dict[str, dict[int, float]] = {}
    for run in record.get("runs", []):
        tails.setdefault(run["config"], {})[run["round"]] = run["p99.9_us"]
    return {name: by[1] / statistics.median(v for i, v in by.items() if i != 1) for name, by in tails.items()
            if len(by) >= 3 and 1 in by and not record.get("warm_up")}


def first_runs() -> str:
    """Across the records of paired rounds at a rate: each configuration's first run on its DB against its
    later rounds (P99.9), per record, and how many of them ran their first run above the median of their later
    rounds, with the sign test's p (were the first run like the others, half would)."""
    found = []
    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        if isinstance(record.get("runs"), list) and (ratios := _first_run_ratios(record)):
            found.append((path, record, ratios))
    rows = ["| record | CPU | rate (ops/s) | first run's P99.9 over the median of the later rounds', per configuration |",
            "|---|---|---|---|"]
    every: list[float] = []
    for path, record, ratios in found:
        every += ratios.values()
        rows.append(f"| `{path.name.removesuffix('.json')}` | {cpu_name(record.get('machine', {}).get('cpu', ''))} | "
                    f"{_rate(float(record['arguments']['rate']))} | "
                    + ", ".join(f"{r:.2f}" for r in ratios.values()) + " |")
    above = sum(r > 1 for r in every)
    p = binomtest(above, len(every)).pvalue
    lines = [f"{above} of {len(every)} configurations ran their first run's P99.9 above the median of their later "
             f"rounds' (median ratio {statistics.median(every):.2f}); were a first run like the later ones, about half "
             f"would (sign test, two-sided p = {p:.3f})."]
    dated = [(path, record.get("commit"), record.get("date") or _named_day(path)) for path, record, _ in found]
    return "\n".join([*rows, "", *lines, "", gathered(dated, WINDOWS_CODE)])


FAR_BELOW = 0.9  # a rate at most this share of its configuration's median capacity over the rounds


def _far_below(record: dict[str, Any]) -> list[tuple[int, float, bool]]:
    """A record's capacity runs at rates at most FAR_BELOW of their configuration's median capacity over its
    rounds (a configuration with a round that held no rate has no median): each one's round, its rate over
    that median and whether it held the record's SLO (a rate run again counted as its first run)."""
    slo = parse_slo(record["arguments"]["slo"])
    held: dict[str, list[float | None]] = {}
    for c in record["capacity_rounds"]:
        held.setdefault(c["config"], []).append(c["held"])
    medians = {name: statistics.median(h for h in rounds if h is not None) for name, rounds in held.items()
               if None not in rounds and len(rounds) >= 2}
    found = []
    for c in record["capacity_rounds"]:
        median, seen = medians.get(c["config"]), set()
        for probe in c["probes"]:
            if median is None or probe["offered"] > FAR_BELOW * median or probe["offered"] in seen:
                continue
            seen.add(probe["offered"])
            found.append((c["round"], probe["offered"] / median, holds(_run_of(probe), slo)))
    return found


def far_misses() -> str:
    """Across the records of paired capacity rounds: how many runs at rates far below their configuration's
    median capacity missed the SLO, and in which round (round 1: the first search on the configuration's DB)."""
    found = []
    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        if isinstance(record.get("capacity_rounds"), list) and (runs := _far_below(record)):
            found.append((path, record, runs))
    rows = [f"| record | CPU | rounds | runs at or below {FAR_BELOW:g}x the median capacity | missed | of them in round 1 |",
            "|---|---|---|---|---|---|"]
    every: list[tuple[int, float, bool]] = []
    for path, record, runs in found:
        every += runs
        misses = [r for r in runs if not r[2]]
        rows.append(f"| `{path.name.removesuffix('.json')}` | {cpu_name(record.get('machine', {}).get('cpu', ''))} | "
                    f"{max(c['round'] for c in record['capacity_rounds'])} | {len(runs)} | {len(misses)} | "
                    f"{sum(r[0] == 1 for r in misses)} |")
    misses = [r for r in every if not r[2]]
    lines = [f"Of {len(every)} runs at rates at or below {FAR_BELOW:g} times their configuration's median capacity, "
             f"{len(misses)} missed the SLO ({sum(r[0] == 1 for r in misses)} of them in round 1), at "
             + ", ".join(f"{share:.2f}" for _, share, _ in sorted(misses, key=lambda r: r[1]))
             + " times that median; a search takes each such miss as the highest rate it may try."]
    dated = [(path, record.get("commit"), record.get("date") or _named_day(path)) for path, record, _ in found]
    return "\n".join([*rows, "", *lines, "", gathered(dated, WINDOWS_CODE)])


def _named_day(path: Path) -> str:
    """The day a record's name gives (those written before the script kept a date)."""
    day = re.search(r"\d{4}-\d{2}-\d{2}", path.name)
    if day is None:
        raise ValueError(f"{path}: no date in the record nor in its name")
    return day[0]


GOAL_STUDY = "slo-goal-97k-11.8.1-2026-12-06"


def goal_study() -> str:
    """The study at the rate its answer must hold: each configuration's capacity by round ("-" where a round
    held no rate) and their median, the best tuned configuration's tail and capacity over the defaults' as the
    study reports them, and the defaults' capacities beside those of the bound-rounds record, measured the hour
    before."""
    path = RESULTS / GOAL_STUDY / "summary.json"
    summary = Summary.load(path)
    cap, reval = summary.capacity, summary.revalidation
    answer = summary.answer
    assert cap is not None and reval is not None and reval.best and summary.when is not None and answer is not None
    best = next(c.name for c in cap.configurations if c.name != "rocksdb-default")
    by = {c.name: c.held_by_round for c in cap.configurations}
    held = {name: sorted(h for h in rounds if h is not None) for name, rounds in by.items()}
    rows = ["| configuration | capacity by round (ops/s) | median |", "|---|---|---|"]
    for name in ("rocksdb-default", best):
        rows.append(f"| {name} | {', '.join(_rate(h) for h in by[name])} | {statistics.median(held[name]):,.0f} |")
    tail, ratio = reval.best_vs_reference, cap.vs_default[best]
    assert tail is not None and tail.ci95 and ratio.ci95
    _, bound = _record(BOUND_ROUNDS)
    before = sorted(c["held"] for c in bound["capacity_rounds"] if c["config"] == "rocksdb-default" and c["held"])
    now = held["rocksdb-default"]
    said = f"keep {answer.name}" if answer.recommend == "reference" else f"use {reval.best}"
    lines = [f"The study's answer: {said} ({answer.why}). Its best, {reval.best}: P99.9 over the defaults' in the "
             f"re-validation, as the study reports it (above 1: a lower tail), {tail.ratio:.2f}x (95 % CI "
             f"{tail.ci95[0]:.2f}-{tail.ci95[1]:.2f}, {tail.n} paired rounds); capacity over the defaults' "
             f"{ratio.ratio:.2f}x (95 % CI {ratio.ci95[0]:.2f}-{ratio.ci95[1]:.2f}, {ratio.n} paired rounds).",
             f"The defaults held {now[0]:,.0f}-{now[-1]:,.0f} ops/s here; {before[0]:,.0f}-{before[-1]:,.0f} "
             f"(median {statistics.median(before):,.0f}) in the `bound-rounds` record the hour before."]
    started = summary.when.first_trial_started or ""
    return "\n".join([*rows, "", *lines, "", stamp(path, commit_before(started), started, STUDY_CODE, brief=True)])


CAPACITY_STUDY = "slo-capacity-130k-11.8.1-2026-12-06"


def capacity_study() -> str:
    """The first study that scored each trial by its capacity (--objective capacity): :func:`_capacity_study`."""
    return _capacity_study(CAPACITY_STUDY)


WARM_STUDY = "warm-capacity-120k-11.8.1-2026-12-06"


def warm_study() -> str:
    """A capacity study whose preload was warmed up: the warm-up runs' P99.9, then :func:`_capacity_study`, and
    the ratio of the defaults' two searches in it beside that in the first capacity study, whose was not."""
    folder = RESULTS / WARM_STUDY
    warm = [parse((d / "command.stdout").read_text()).metrics for d in sorted((folder / "preload-trials").glob("warm-up-*"))]
    offered = {w["offered_ops_per_sec"] for w in warm}
    lines = [f"The preload's warm-up, {len(warm)} runs at {_rate(offered.pop())} ops/s, not scored: P99.9 "
             + ", ".join(f"{w['p99.9_us'] / 1e3:.1f}" for w in warm) + " ms."]
    ratios = []
    for name in (WARM_STUDY, CAPACITY_STUDY):
        path = RESULTS / name / "summary.json"
        base, _, again = _defaults_searches(Summary.load(path), path.parent)
        ratios.append(f"{again / base:.2f}")
    lines.append(f"The defaults' second search (trial 0) over their first (the baseline's): {ratios[0]} here; "
                 f"{ratios[1]} in the `slo-capacity-130k` study, whose preload had no warm-up.")
    return "\n".join([*lines, "", _capacity_study(WARM_STUDY)])


def _defaults_searches(summary: Summary, folder: Path) -> tuple[float, int, float]:
    """A capacity study's two searches of the defaults: the baseline's held rate, and the number and held rate
    of the first complete trial that ran rocksdb-default's start."""
    default = summary.baseline("rocksdb-default")
    assert default is not None
    numbered = {t.number: TrialRecord.of(t) for t in summary.optuna_study(folder).trials}
    first = min(n for n, t in numbered.items() if t.outcome == "complete" and t.enqueued == "rocksdb-default")
    return default.metrics["held_ops_per_sec"], first, (numbered[first].metrics or {})["held_ops_per_sec"]


def _capacity_study(name: str) -> str:
    """A study that scored each trial by its capacity (--objective capacity): the defaults' two searches in it
    (the baseline's and trial 0's, one configuration), the trials' held rates against them and what the best's
    search run cost beside the baseline's; then its capacity stage: each configuration's capacity by round and
    the median of the rounds that held, the paired ratio against the goal, and the study's answer."""
    path = RESULTS / name / "summary.json"
    summary = Summary.load(path)
    cap, default, best, target = summary.capacity, summary.baseline("rocksdb-default"), summary.best, summary.target
    assert cap is not None and default is not None and best is not None and target is not None
    assert summary.when is not None
    numbered = {t.number: TrialRecord.of(t) for t in summary.optuna_study(path.parent).trials}
    complete = {n: t for n, t in numbered.items() if t.outcome == "complete" and t.metrics}
    base, first, again = _defaults_searches(summary, path.parent)
    held = sorted((t.metrics or {})["held_ops_per_sec"] for t in complete.values())
    top = max(complete, key=lambda n: ((complete[n].metrics or {})["held_ops_per_sec"], -n))

    def cost(metrics: dict[str, Any]) -> str:
        return f"write amp {metrics['write_amp']:.2f}, disk after {metrics['sst_bytes'] / 2**30:.2f} GiB"
    searched = json.loads((path.parent / "baselines" / "rocksdb-default" / "capacity.json").read_text())
    start = searched["probes"][0]["offered"]  # --rate, or where the preload placed the defaults' capacity
    lines = [f"The search: {len(complete)} of {len(numbered)} trials complete, each a capacity search of "
             f"{target.duration_seconds:g} s runs from {start:,.0f} ops/s; the defaults' own searches held "
             f"{base:,.0f} (the baseline) and {again:,.0f} (trial {first}, the same configuration); "
             f"{sum(h > base for h in held)} trials held more than the baseline, {sum(h > again for h in held)} more "
             f"than trial {first}, {sum(h == 0 for h in held)} held no rate tried; the most any held, {held[-1]:,.0f} "
             f"(trial {top}: at its held rate {cost(complete[top].metrics or {})}; the baseline at its own, "
             f"{cost(default.metrics)})."]
    rows = ["| configuration | capacity by round (ops/s) | median of the rounds that held |", "|---|---|---|"]
    for c in cap.configurations:
        rounds = c.held_by_round or [c.held]
        held_ones = [h for h in rounds if h is not None]
        rows.append(f"| {c.name} | {', '.join(_rate(h) for h in rounds)} | "
                    f"{_rate(statistics.median(held_ones) if held_ones else None)} |")
    named = next((c.name for c in cap.configurations if c.name != "rocksdb-default"), None)
    if best.trial == first:
        lines.append(f"The search's best, trial {first}, is rocksdb-default's own start: the capacity stage "
                     f"({cap.duration:g} s runs, each with its settle, from {cap.start:,.0f} ops/s) measured the "
                     f"defaults alone, in {cap.rounds} round{'s' if cap.rounds != 1 else ''}.")
    if named is not None and named in cap.vs_default:
        ratio = cap.vs_default[named]
        assert ratio.ci95
        low, high = ratio.ci95
        lines.append(f"The capacity stage ({cap.duration:g} s runs, each with its settle, {ratio.n} paired rounds "
                     f"that chose nothing): {named}'s capacity over the defaults' {ratio.ratio:.2f}x (95 % CI "
                     f"{low:.2f}-{high:.2f}; the interval lies {_against_goal(low, high)}).")
    if summary.answer is not None:
        said = f"keep {summary.answer.name}" if summary.answer.recommend == "reference" else f"use {summary.answer.name}"
        lines.append(f"The study's answer: {said} ({summary.answer.why}).")
    started = summary.when.first_trial_started or ""
    return "\n".join([*rows, "", *lines, "", stamp(path, commit_before(started), started, STUDY_CODE, brief=True)])


SLO_JOB = "tune-slo-capacity-60k-11.8.1-2026-12-07"


def slo_job() -> str:
    """The SLO job as a user runs it (--objective capacity, --revalidate 2, --background-priority low) on the
    service space with direct I/O and L0 compaction up to 16 files: the finalists the re-validation chose among,
    its choice's capacity over the defaults' in its own paired rounds, each round's held rates, then
    :func:`_capacity_study`."""
    path = RESULTS / SLO_JOB / "summary.json"
    summary = Summary.load(path)
    reval = summary.revalidation
    assert reval is not None and reval.select is not None and reval.best_vs_reference is not None
    gain, metric = reval.best_vs_reference, reval.metric or HELD
    assert gain.ci95 is not None
    chosen = ", ".join(f"{c.name} {_rate(c.median(metric))}" for c in reval.select.configurations)
    rounds = "; ".join(f"{c.name} {', '.join(_rate(v) for v in c.samples(metric))}" for c in reval.configurations)
    start = next(t for t in summary.optuna_study(path.parent).trials  # the defaults' own start, as the space holds it
                 if TrialRecord.of(t).enqueued == "rocksdb-default")
    best = next(c.flags for c in reval.configurations if c.name == reval.best)
    changed = ", ".join(f"{k} {v}" for k, v in best.items() if str(start.params.get(k)).lower() != v.lower())
    lines = [f"The re-validation: finalists in {reval.select.rounds} round ({chosen} ops/s held), the choice "
             f"{reval.best}; beside the defaults in {gain.n} paired rounds of capacity searches ({rounds} ops/s "
             f"held), {gain.ratio:.2f}x their capacity (95 % CI {gain.ci95[0]:.2f}-{gain.ci95[1]:.2f}).",
             f"{reval.best} sets, where the defaults' start in the space differs: {changed}."]
    again = study_answer(replace(summary, answer=None))  # the tuner's rule as it is now, on the same measurements
    assert again is not None
    said = f"keep {again.name}" if again.recommend == "reference" else f"use {again.name}"
    lines.append(f"The tuner as it is now, on the same measurements (the study's own answer is under the table): "
                 f"{said} ({again.why}).")
    return "\n".join([*lines, "", _capacity_study(SLO_JOB)])


SLO_PLACED = "tune-slo-placed-140k-11.8.1-2026-12-07"


def slo_placed() -> str:
    """The SLO job with its trials placed (each 3 runs from where the preload's search placed the library
    defaults' capacity; the block cache and bloom filter held at the defaults' values) and no re-validation:
    that search's runs, rate by rate, then :func:`_capacity_study`."""
    folder = RESULTS / SLO_PLACED
    summary = Summary.load(folder / "summary.json")
    assert summary.capacity is not None
    slo = parse_slo(summary.capacity.slo)
    metrics = {float(d.name): parse((d / "command.stdout").read_text()).metrics
               for d in (folder / "preload-trials" / "start").iterdir() if d.is_dir()}
    runs = [(rate, RateRun({k: v for k, v in m.items() if v is not None}, (), "")) for rate, m in sorted(metrics.items())]
    said = "; ".join(f"{rate:,.0f} {'held' if holds(run, slo) else 'did not hold'} (P99.9 {run['p99.9_us'] / 1e3:,.1f} ms)"
                     for rate, run in runs)
    lines = [f"The preload's search of the library's defaults, one run per rate, from --rate: {said}."]
    return "\n".join([*lines, "", _capacity_study(SLO_PLACED)])


STALL_PREDICT = "stall-predict-140k-11.8.1-2026-12-05.json"


def _served_rows(record: dict[str, Any]) -> tuple[list[str], dict[str, list[str]]]:
    """A row per configuration of a served record, the defaults first: its P99.99 by round, their median and
    its ratio to the defaults' median, its write stalls' median, and the served guard's verdict on those
    medians (ranking.served_over_cost); then the metrics each configuration served beyond the guard on."""
    by, rounds, _ = _by_round(record, "runs")

    def median(config: str, metric: str) -> float:
        return statistics.median(by[(i, config)][metric] for i in rounds)
    default = {key: median("rocksdb-default", key) for key in SERVED_MARGINS}
    rows = ["| configuration | P99.99 by round | median | over the defaults' | write stalls, median | the served guard |",
            "|---" * 6 + "|"]
    beyond: dict[str, list[str]] = {}
    for config in record["configs"]:
        medians = {key: median(config, key) for key in SERVED_MARGINS}
        beyond[config] = [] if config == "rocksdb-default" else \
            served_over_cost(_as_served(by, config, tuple(rounds)), config, "rocksdb-default")
        verdict = "-" if config == "rocksdb-default" else \
            f"beyond ({', '.join(COST_NAMES.get(k, 'P99.99') for k in beyond[config])})" if beyond[config] else "within"
        rows.append(f"| {config} | {', '.join(_ms(by[(i, config)]['p99.99_us']) for i in rounds)} | "
                    f"{_ms(medians['p99.99_us'])} | {medians['p99.99_us'] / default['p99.99_us']:.2f}x | "
                    f"{medians['stall_micros'] / 1e6:.2f} s | {verdict} |")
    return rows, beyond


def stall_predict() -> str:
    """Six trials of make tune at 3c6b445, four that its cost guard kept out for write stalls at full speed and
    two that never stalled, beside the defaults in paired rounds at a rate: what the served guard makes of each."""
    path, record = _record(STALL_PREDICT)
    rows, beyond = _served_rows(record)
    tuned = [c for c in record["configs"] if c != "rocksdb-default"]
    stalled = [c for c in tuned if not c.endswith("(0.00 s stalls at full speed)")]
    line = (f"Beyond the served guard: {sum(bool(beyond[c]) for c in stalled)} of the {len(stalled)} that stalled at "
            f"full speed, {sum(bool(beyond[c]) for c in tuned if c not in stalled)} of the {len(tuned) - len(stalled)} "
            f"that did not; by their write stalls at the rate: {sum('stall_micros' in beyond[c] for c in tuned)}. "
            f"The least any run delivered: {100 * min(r['delivered'] for r in record['runs']):.2f} % of the rate.")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def background_jobs() -> str:
    """The defaults (from their OPTIONS file, and with 8 background jobs) and trial 79 of make tune at 3c6b445
    (with its 8 background jobs, and with 2) beside the defaults in paired rounds at a rate."""
    path, record = _record("background-jobs-140k-11.8.1-2026-12-05.json")
    rows, _ = _served_rows(record)
    line = _differs(record, "trial 79 (8 background jobs)", "Trial 79")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def _differs(record: dict[str, Any], config: str, said: str) -> str:
    """How ``config``'s OPTIONS file in a served record differs from the defaults' (their baseline run's), in a
    line: ``Trial 79's OPTIONS file against the defaults' (theirs in brackets): max_background_jobs 8 (2), ...``."""
    configs = record["configs"]
    ours, theirs = (parse_options((ROOT / configs[n]).read_text()) for n in
                    (config, "rocksdb-default, from its OPTIONS file"))
    differ = [f"{name} {value} ({theirs.get(section, {}).get(name, 'not set')})"
              for section, options in ours.items() for name, value in options.items()
              if theirs.get(section, {}).get(name) != value]
    return f"{said}'s OPTIONS file against the defaults' (theirs in brackets): " + ", ".join(differ) + "."


def subcompactions_or_cache() -> str:
    """The defaults from their OPTIONS file, with 8 subcompactions, and with a 4 MiB block cache, each beside the
    defaults in paired rounds at a rate."""
    path, record = _record("subcompactions-or-cache-140k-11.8.1-2026-12-05.json")
    rows, _ = _served_rows(record)
    return "\n".join([*rows, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def memtables() -> str:
    """Trial 59 of make tune at 8e62c3f, and the defaults from their OPTIONS file with its memtables (merged as it
    merges them, and one at a time) or its Snappy, each beside the defaults in paired rounds at a rate."""
    path, record = _record("memtables-130k-11.8.1-2026-12-05.json")
    rows, _ = _served_rows(record)
    line = _differs(record, "trial 59 of make tune at 8e62c3f", "Trial 59")
    return "\n".join([*rows, "", line, "", stamp(path, record["commit"], record["date"], WINDOWS_CODE)])


def defaults_thrice() -> str:
    """The defaults beside themselves twice (again, and from their OPTIONS file) in paired rounds at a rate: each
    round's P99.99; then, for each copy and each number of rounds, how many of the subsets of that many rounds the
    served guard (ranking.SERVED_MARGINS on the medians, as tuner.outputs.beyond_guard judges them) calls beyond:
    how often it calls a configuration like the defaults worse; then its verdict on each copy of the defaults that a
    served record holds, over all its rounds."""
    path, record = _record(DEFAULTS_THRICE)
    copies = [c for c in record["configs"] if c != "rocksdb-default"]
    by, rounds, _ = _by_round(record, "runs")
    rows = ["| round | " + " | ".join(["the defaults", *copies]) + " |", "|---" * (len(copies) + 2) + "|"]
    rows += [f"| {i} | " + " | ".join(_ms(by[(i, c)]["p99.99_us"]) for c in ["rocksdb-default", *copies]) + " |"
             for i in rounds]
    share = ["| copy | " + " | ".join(f"{n} rounds" for n in SUBSETS) + " |", "|---" * (len(SUBSETS) + 1) + "|"]
    for config in copies:
        cells = []
        for n in SUBSETS:
            subsets = list(itertools.combinations(rounds, n))
            called = sum(_beyond(by, config, s) for s in subsets)
            cells.append(f"{called} of {len(subsets)} ({100 * called / len(subsets):.0f} %)")
        share.append(f"| {config} | " + " | ".join(cells) + " |")
    beyond, served, stamps = [], 0, []
    for name in COPIES:
        other_path, other = _record(name)
        stamps.append(stamp(other_path, other["commit"], other["date"], WINDOWS_CODE))
        every = tuple(sorted({r["round"] for r in other["runs"]}))
        runs = {(r["round"], r["config"]): r for r in other["runs"]}
        for config in (c for c in other["configs"] if c in COPY_NAMES):
            served += 1
            short = re.sub(r"-\d+k-.*$", "", name)  # the record's name without its rate, version and day
            beyond += [f"`{short}`'s {config.split(', ', 1)[1]}"] if _beyond(runs, config, every) else []
    line = (f"Over all their rounds, in each record that served a copy of the defaults beside them ({served} copies in "
            f"{len(COPIES)} records), the guard called the copy beyond in {len(beyond)}"
            + (f": {', '.join(beyond)}." if beyond else "."))
    return "\n".join([*rows, "", "The served guard's verdict over every subset of the rounds (its medians of that many "
                      "rounds, the copy against the defaults), how many it calls beyond:", "", *share, "", line, "",
                      *stamps])


def _beyond(by: dict[tuple[int, str], dict[str, Any]], config: str, rounds: tuple[int, ...]) -> bool:
    """Whether the served guard (ranking.served_over_cost) calls ``config`` beyond the defaults over ``rounds`` of a
    served record's runs (``by``: (round, configuration) -> run)."""
    return bool(served_over_cost(_as_served(by, config, rounds), config, "rocksdb-default"))


def _as_served(by: dict[tuple[int, str], dict[str, Any]], config: str, rounds: tuple[int, ...]) -> ServedReport:
    """``config`` and the defaults in ``rounds`` of a served record's runs as the tuner's served report holds them."""
    runs = [ServedRun(name=c, round=i, metrics={k: v for k, v in by[(i, c)].items() if isinstance(v, (int, float))})
            for i in rounds for c in ("rocksdb-default", config)]
    return ServedReport(rounds=len(rounds), names=["rocksdb-default", config], runs=runs)


DEFAULTS_THRICE = "defaults-thrice-130k-11.8.1-2026-12-05.json"
SUBSETS = (3, 5)  # --serve-rounds' default, and two more
COPIES = ("served-guard-130k-11.8.1-2026-12-05.json", "background-jobs-140k-11.8.1-2026-12-05.json",
          "subcompactions-or-cache-140k-11.8.1-2026-12-05.json", "memtables-130k-11.8.1-2026-12-05.json",
          DEFAULTS_THRICE, SERVED_LOW)  # the records that served a copy of the defaults beside them
COPY_NAMES = ("rocksdb-default, again", "rocksdb-default, from its OPTIONS file")


def finalist() -> str:
    """The limiter study's finalist (trial 2, its OPTIONS file as its run wrote it) and the defaults in
    paired rounds of 10 minutes that chose nothing."""
    return _paired("finalist-40k-11.8.1-2026-12-04.json", "trial 2")


# What a study at a rate runs: the engine, its rate backend, the service space, the driver.
STUDY_CODE = ("tuner", "search_spaces", *MEASURE_CODE)
LIMITER_STUDY = "tune-limiter-40k-11.8.1-2026-12-04"


def _limiter_words(value: int, write_bytes: float) -> str:
    return "none" if not value else f"{value / write_bytes:g} x write_bytes ({value / 2**20:.0f} MiB/s)"


def limiter_study() -> str:
    """The first study with the rate limiter in its space: its search's trials by limiter (how many ran, their
    best P99.99, how many the cost guard left as finalists), then its answer and the defaults in the
    re-validation's paired rounds of the full duration."""
    path = RESULTS / LIMITER_STUDY / "summary.json"
    summary = Summary.load(path)
    trials = [t for t in summary.optuna_study(path.parent).trials if TrialRecord.of(t).outcome == "complete"]
    default = summary.baseline("rocksdb-default")
    assert default is not None and summary.revalidation is not None and summary.when is not None
    rate = default.metrics["offered_ops_per_sec"]  # writes only: the study offered no reads
    write_bytes = BACKENDS["rate"].context_names(TuneConfig(rate=rate))["write_bytes"]
    metric = summary.revalidation.metric or "p99.99_us"
    by: dict[int, list[dict[str, Any]]] = {}  # each limiter's trials' metrics
    for t in trials:
        by.setdefault(int(t.params["rate_limiter_bytes_per_sec"]), []).append(TrialRecord.of(t).metrics or {})
    rows = ["| rate limiter | trials | best P99.99 in the search | within the cost guard |", "|---|---|---|---|"]
    for value in sorted(by):
        runs = by[value]
        best = min(m[metric] for m in runs)
        kept = sum(not over_cost(m, default.metrics) for m in runs)
        rows.append(f"| {_limiter_words(value, write_bytes)} | {len(runs)} | {_ms(best)} | {kept} |")
    reval = summary.revalidation
    answer = next(c for c in reval.configurations if c.name == reval.best)
    reference = next(c for c in reval.configurations if c.name == reval.reference)
    limit = int(answer.flags.get("rate_limiter_bytes_per_sec", 0))
    table = [f"| configuration | rate limiter | {metric.removesuffix('_us').upper()} by round | write amp |",
             "|---|---|---|---|"]
    for c, label, value in ((reference, "the defaults", 0), (answer, reval.best, limit)):
        table.append(f"| {label} | {_limiter_words(value, write_bytes)} | "
                     f"{', '.join(_ms(v) for v in c.samples(metric))} | {c.median('write_amp') or 0:.2f} |")
    r = reval.best_vs_reference
    assert r is not None and r.ratio is not None
    interval = f" (95 % CI {r.ci95[0]:.2f}-{r.ci95[1]:.2f}, {r.verdict})" if r.ci95 else ""
    gain = (f"The finalist's {metric} over the defaults', as the study reports it (above 1: a lower tail): "
            f"{r.ratio:.2f}x{interval}.")
    return "\n".join([*rows, "", *table, "", gain, "",
                      stamp(path, commit_before(summary.when.first_trial_started or ""), summary.when.first_trial_started
                            or "", STUDY_CODE, brief=True)])


WRITE_AMP_STUDY = "tune-write-amp-40k-11.8.1-2026-12-04"


def write_amp_study() -> str:
    """The study at a rate that minimized write amp with the tail as a bound: its answer and the defaults in
    the re-validation's paired rounds (write amp and P99.9 by round, read from the rounds as the study saved
    them, and the medians of P99), and the gain as the study reports it."""
    path = RESULTS / WRITE_AMP_STUDY / "summary.json"
    summary = Summary.load(path)
    reval = summary.revalidation
    assert reval is not None and reval.best and reval.reference and summary.when is not None
    saved = saved_rounds(summary.optuna_study(path.parent), "estimate")
    assert saved is not None
    rows = {c.name: c for c in reval.configurations}

    def latency(us: float) -> str:
        return _ms(us) if us >= 1000 else f"{us:.0f} us"

    table = ["| configuration | write amp by round | P99.9 by round | P99 (median) |", "|---|---|---|---|"]
    for name, label in ((reval.reference, "the defaults"), (reval.best, reval.best)):
        c = rows[name]
        table.append(f"| {label} | {', '.join(f'{v:.2f}' for v in c.samples('write_amp'))} | "
                     f"{', '.join(latency(run['p99.9_us']) for run in saved.samples[name])} | "
                     f"{latency(c.median('p99_us') or 0.0)} |")
    r = reval.best_vs_reference
    assert r is not None and r.ratio is not None and r.ci95
    gain = (f"The answer's write amp over the defaults', as the study reports it (above 1: less written): "
            f"{r.ratio:.2f}x (95 % CI {r.ci95[0]:.2f}-{r.ci95[1]:.2f}, {r.n} paired rounds).")
    started = summary.when.first_trial_started or ""
    return "\n".join([*table, "", gain, "", stamp(path, commit_before(started), started, STUDY_CODE, brief=True)])


TABLES: dict[str, Callable[[], str]] = {  # block name (after ``service_level.``) -> its generator
    "threads_or_memory": threads_or_memory, "windows": windows, "aged": aged, "memory": memory,
    "reads_at_load": reads_at_load, "pauses": pauses, "nice": nice, "smoothing": smoothing, "limiter": limiter,
    "limiter_study": limiter_study, "finalist": finalist, "write_amp_study": write_amp_study,
    "stalls": stalls, "served_guard": served_guard, "stall_predict": stall_predict,
    "background_jobs": background_jobs, "subcompactions_or_cache": subcompactions_or_cache, "memtables": memtables,
    "defaults_thrice": defaults_thrice, "served_low": served_low, "bound_rounds": bound_rounds,
    "goal_study": goal_study, "levers": levers, "capacity_study": capacity_study,
    "finalist_capacity": finalist_capacity, "capacity_aa": capacity_aa, "warm_up_aa": warm_up_aa,
    "first_runs": first_runs, "first_runs_read_once": first_runs_read_once, "warm_study": warm_study,
    "bound_rounds_intel": bound_rounds_intel, "far_misses": far_misses, "compaction_work": compaction_work,
    "compaction_work_seconds": compaction_work_seconds, "nice_capacity": nice_capacity,
    "at_nice_19": at_nice_19, "bound_at_nice_19": bound_at_nice_19, "slow_calls": slow_calls, "wal_space": wal_space,
    "slow_calls_no_fallocate": slow_calls_no_fallocate, "wal_space_capacity": wal_space_capacity, "wal_waits": wal_waits,
    "direct_io": direct_io, "direct_io_capacity": direct_io_capacity, "direct_io_levers": direct_io_levers,
    "less_work_capacity": less_work_capacity, "slo_job": slo_job, "slo_placed": slo_placed}
