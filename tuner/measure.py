"""``rocksdb-tuner measure``: one configuration at a fixed offered rate, open loop (objectives.open_loop).

How a user checks the OPTIONS file they run today, the defaults, or a study's answer (OUT/OPTIONS.ini)
against a service level: each request timed from when it was due, the share of the offered rate
delivered, write stalls, the LSM it left behind and what it wrote."""

from __future__ import annotations

import datetime
import json
import socket
import statistics
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

from objectives import workdir
from objectives.open_loop import KEY_SIZE, VALUE_SIZE, Driver, Loaded, OpenLoopError, find, warm_up_runs
from objectives.rates import PERCENTILES, Capacity, Rate, RateRun, capacity, missed, parse_slo
from search_spaces import Context, host_cpu
from tuner.fmt import fmt_bytes
from tuner.target import check_memory


def _us(value: float) -> str:
    """A latency in microseconds, in the unit that reads best."""
    if value >= 1e6:
        return f"{value / 1e6:.2f} s"
    if value >= 1e3:
        return f"{value / 1e3:.2f} ms"
    return f"{value:.0f} us"


def report(run: RateRun, rate: Rate, data: int, memory_limit: int | None, options: Path | None) -> str:
    """What a run at a rate showed, in a few lines."""
    m = run.metrics
    within = f" within {fmt_bytes(memory_limit)}" if memory_limit else " (no memory limit)"
    nice = ", flush and compaction at nice 19" if rate.background == "low" else ""
    reads = f" + {rate.reads:,.0f} reads/s" if rate.reads else ""
    lines = [
        f"open loop: {rate.writes:,.0f} writes/s{reads} offered ({rate.arrivals} arrivals), {rate.duration:g} s, "
        f"{fmt_bytes(data)}{within}, RocksDB {run.rocksdb_version}, "
        f"{'OPTIONS ' + str(options) if options else 'the library defaults'}{nice}",
        f"delivered:  {m['delivered']:.1%} of the requests due ({m['completed_ops']:,.0f} of {m['due_ops']:,.0f}), "
        f"{m['ops_per_sec']:,.0f} ops/s" + (f"; {m['late_at_end_s']:.2f} s behind schedule at the end"
                                           if m["unfinished_ops"] else ""),
        "latency from each request's due time: "
        + "  ".join(f"{name.removesuffix('_us')} {_us(m[name])}" for name in PERCENTILES),
    ]
    for kind in ("write", "read"):
        if f"{kind}_p99.9_us" in m:
            lines.append(f"  {kind}s: " + "  ".join(f"{n.removesuffix('_us')} {_us(m[kind + '_' + n])}"
                                                    for n in PERCENTILES))
    causes = ", ".join(f"{k.removeprefix('stalls.')} {v:.0f}" for k, v in m.items()
                       if k.startswith("stalls.") and v and not k.endswith(("total_slowdown", "total_stop")))
    lines.append(f"write stalls: {m['stall_micros'] / 1e6:.2f} s" + (f" ({causes})" if causes else ""))
    lines.append(f"at the end:  {m['l0_files']:.0f} L0 files, {fmt_bytes(int(m['pending_compaction_bytes']))} "
                 f"of compaction pending, {fmt_bytes(int(m['sst_bytes']))} of SST files")
    lines.append(f"written:     write amp {m['write_amp']:.2f} (flushes and compactions over the "
                 f"{fmt_bytes(int(m['user_bytes']))} written by requests)")
    lines += windows(run, rate.windows)
    lines += slow_calls(run, rate.slow_call_us)
    if run.memory.get("memory_peak_bytes"):
        lines.append(f"memory:      peak {fmt_bytes(int(run.memory['memory_peak_bytes'] or 0))}, page cache included")
    return "\n".join(lines)


def windows(run: RateRun, lengths: tuple[int, ...]) -> list[str]:
    """One line per window length asked for (--windows): its P99.9 over the run's windows."""
    lines = []
    for length in lengths:
        tails = sorted(w.p999_us for w in run.windows if w.seconds == length)
        if not tails:
            lines.append(f"{length} s windows: none whole in the run")
            continue
        lines.append(f"{length} s windows: {len(tails)}, p99.9 from {_us(tails[0])} to {_us(tails[-1])}, "
                     f"median {_us(statistics.median(tails))}")
    return lines


# The driver's breakdown of a slow call (--slow_call_us), in words: the disjoint parts RocksDB times of a write
# (and a Get's two), what lies within them, and the thread's time on a CPU.
CALL_PARTS = {"write_wal": "WAL", "write_memtable": "memtable", "write_delay": "write delay or stop",
              "write_scheduling": "switching memtables", "write_pre_and_post": "the write's rest",
              "write_thread_wait": "waiting for its batch", "get_from_memtable": "memtable reads",
              "get_from_files": "SST reads"}
WITHIN_PARTS = {"db_mutex_lock": "DB mutex", "db_condition_wait": "DB condition wait", "block_read": "block reads",
                "io_write": "write()", "io_read": "read()", "io_fsync": "fsync", "io_range_sync": "range sync",
                "io_prepare_write": "preallocation", "io_allocate": "fallocate", "io_open": "file opens"}


def call_parts(metrics: Mapping[str, float], prefix: str, total_us: float) -> str:
    """Where ``total_us`` of calls went, from the driver's ``<prefix>.<part>_us`` figures: each part of at least
    1 %, what lies within them (or that none did), and the share on a CPU."""
    def shares(names: dict[str, str]) -> str:
        got = [(metrics.get(f"{prefix}.{k}_us", 0.0) / total_us, said) for k, said in names.items()]
        return ", ".join(f"{said} {share:.0%}" for share, said in sorted(got, reverse=True) if share >= 0.01) or "-"
    cpu = metrics.get(f"{prefix}.cpu_us", 0.0) / total_us
    parts = shares(CALL_PARTS)
    where = f"{parts} (within them: {shares(WITHIN_PARTS)})" if parts != "-" else "outside RocksDB's timed parts"
    return f"{where}; on a CPU {cpu:.0%}"


def slow_calls(run: RateRun, over_us: float) -> list[str]:
    """With --slow-calls: how many RocksDB calls took longer than ``over_us`` and where their time went, and
    the slowest's."""
    m = run.metrics
    if not over_us or "slow_calls" not in m:
        return []
    if not m["slow_calls"]:
        return [f"slow calls:  none over {_us(over_us)}"]
    waits = kernel_waits(run.kernel_waits)
    return [f"slow calls:  {m['slow_calls']:,.0f} over {_us(over_us)}, {_us(m['slow_calls_us'])} in all: "
            + call_parts(m, "slow_calls", m["slow_calls_us"]),
            f"  the slowest, {_us(m['slowest_call_us'])}: " + call_parts(m, "slowest_call", m["slowest_call_us"]),
            *([f"  in the kernel, {sum(run.kernel_waits.values()):,} samples of {_us(over_us)} each: {waits}"]
              if waits else [])]


def kernel_stack(stack: str, inner: int = 3) -> str:
    """A kernel stack of the driver's (innermost first, `` < `` between frames) cut to its ``inner`` innermost
    frames and its outermost (the system call)."""
    frames = stack.split(" < ")
    return " < ".join([*frames[:inner], "..", frames[-1]]) if len(frames) > inner + 1 else stack


def kernel_waits(samples: Mapping[str, int], top: int = 3) -> str:
    """The driver's samples of slow calls' kernel stacks (stack -> samples), grouped by :func:`kernel_stack`:
    the ``top`` commonest with their shares, and the share of the rest; empty without samples."""
    grouped: Counter[str] = Counter()
    for stack, n in samples.items():
        grouped[kernel_stack(stack)] += n
    total = grouped.total()
    if not total:
        return ""
    ranked = sorted(grouped.items(), key=lambda kv: (-kv[1], kv[0]))
    said = [f"{n / total:.0%} {stack}" for stack, n in ranked[:top]]
    rest = sum(n for _, n in ranked[top:])
    return "; ".join([*said, *([f"{rest / total:.0%} elsewhere"] if rest else [])])


def stamp(rate: Rate, driver: Driver, data: int, memory_limit: int | None, options: Path | None,
          sizes: tuple[int, int] = (KEY_SIZE, VALUE_SIZE)) -> dict[str, object]:
    """What ran, where and when, for a record of one run or of a capacity search."""
    host = Context.of_host()
    return {"rate": asdict(rate), "data_bytes": data, "key_size": sizes[0], "value_size": sizes[1],
            "memory_limit_bytes": memory_limit, "warm_up_runs": warm_up_runs(rate.duration),
            "options": str(options) if options else None, "driver": str(driver.path),
            "rocksdb_version": driver.version,
            "host": {"name": socket.gethostname(), "cpu": host_cpu(), "cores": host.cores, "memory_bytes": host.ram},
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}


def curve(cap: Capacity) -> str:
    """The capacity line and every rate tried, lowest first: the latency-vs-offered-rate curve."""
    slo = f"{cap.slo.metric.removesuffix('_us')} <= {_us(cap.slo.limit)}"
    if cap.held is None:
        head = f"no rate tried held {slo} (the lowest, {min(r for r, _ in cap.probes):,.0f} ops/s, did not)"
    elif cap.failed is None:
        head = f"holds {slo} at every rate tried, up to {cap.held:,.0f} ops/s (none failed: raise --rate)"
    else:
        head = f"holds {slo} up to {cap.held:,.0f} ops/s; {cap.failed:,.0f} ops/s did not"
    rows = [f"{'offered ops/s':>14} {'delivered':>9} " + " ".join(f"{n.removesuffix('_us'):>9}" for n in PERCENTILES)
            + f" {'stalls':>8} {'L0':>4} {'pending':>9}  held, or why not"]
    for offered, run in sorted(cap.probes, key=lambda p: p[0]):
        m = run.metrics
        rows.append(f"{offered:>14,.0f} {m['delivered']:>9.1%} " + " ".join(f"{_us(m[n]):>9}" for n in PERCENTILES)
                    + f" {m['stall_micros'] / 1e6:>7.2f}s {m['l0_files']:>4.0f} "
                    f"{fmt_bytes(int(m['pending_compaction_bytes'])):>9}  {', '.join(missed(run, cap.slo)) or 'yes'}")
    return "\n".join([head, *rows])


def measure_command(options: Path | None, rate: Rate, data: int, memory_limit: int | None,
                    rocksdb_version: str | None, work_dir: Path | None, as_json: bool, slo: str | None = None,
                    sizes: tuple[int, int] = (KEY_SIZE, VALUE_SIZE)) -> int:
    """Run it and print what it showed (``--json``: every figure and the per-second series); with ``slo``,
    search for the highest offered rate that holds it, from ``rate``; a ``memory_limit`` below the least a
    run can work in (tuner.target.LEAST_TARGET_MEMORY) is refused naming --target-memory."""
    check_memory(memory_limit)
    bound = parse_slo(slo, rate) if slo is not None else None
    if options is not None and not options.is_file():
        raise OpenLoopError(f"--options {options}: no such file")
    driver = find(rocksdb_version)
    where = workdir.prepare(work_dir)
    workdir.check_space(where, data, "measure")
    say = (lambda line: print(line, file=sys.stderr)) if as_json else print
    with Loaded(driver, where, data, options.resolve() if options else None, memory_limit, say, *sizes) as loaded:
        loaded.warm_up(rate)
        if bound is not None:
            cap = capacity(loaded, rate, bound, say=say)
            if as_json:
                json.dump({**stamp(rate, driver, data, memory_limit, options, sizes), **cap.to_dict()}, sys.stdout)
                sys.stdout.write("\n")
            else:
                print(curve(cap))
            return 0
        say(f"running {rate.writes + rate.reads:,.0f} ops/s for {rate.duration:g} s")
        run = loaded.run(rate)
    if as_json:
        json.dump({**stamp(rate, driver, data, memory_limit, options, sizes), **run.to_dict()}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(report(run, rate, data, memory_limit, options))
    return 0 if run.metrics.get("errors", 0) == 0 else 1
