"""The open-loop driver (objectives/build/open_loop.cc, objectives/open_loop.py) and `rocksdb-tuner measure`:
its histogram against data of known percentiles, the correction a paused process proves (the requests
due while it stood still count, as they do for a service; db_bench's closed loop counts one slow
sample), a rate out of reach shown as not delivered, options applied, and the command's errors."""

from __future__ import annotations

import json
import math
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from experiments.service_level.service_level import capacity_rounds, never_compacts, paired, read_configs
from objectives.open_loop import OpenLoopError, find, parse, warm_up_runs
from objectives.parser import parse as parse_db_bench
from objectives.rates import (
    PERCENTILES,
    Capacity,
    Rate,
    RateRun,
    capacity,
    holds,
    missed,
    parse_latency,
    parse_slo,
    scaled,
    shared_start,
)
from objectives.scores import Score
from tests.conftest import leftovers
from tuner import options_file
from tuner.backends import BACKENDS, Config
from tuner.backends._rate import CAPACITY_RESOLUTION, CAPACITY_RUNS, START_FILE, STEP, TRIAL_RUNS, trial_start
from tuner.engine._capacity import capacities
from tuner.engine._prepare import check_backend
from tuner.measure import curve, kernel_stack, kernel_waits, slow_calls
from tuner.model import TuneConfig, UsageError
from tuner.outputs._answer import capacity_line
from tuner.summary import CapacityOf, CapacityProbe, CapacityReport, Summary
from tuner.trials import TrialRecord

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "objectives" / "build"
DATA = 48 * 2**20  # ~430k keys of db_bench's 16-byte keys and 100-byte values: a load of a second or two


def test_histogram_percentiles_are_those_of_known_data(tmp_path):
    """latency_histogram.h, compiled alone: uniform, exponential and paused data within its bucket width."""
    binary = tmp_path / "latency_histogram_test"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Werror", f"-I{BUILD}", "-o", str(binary),
                    str(BUILD / "latency_histogram_test.cc")], check=True)
    done = subprocess.run([str(binary)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "all checks passed" in done.stdout


def test_parse_reads_the_series_and_the_metrics_line():
    out = ('{"series": [{"t": 1, "due": 10, "completed": 9, "p99_us": 5.5, "max_us": 7, "service_max_us": 3, '
           '"woke_max_us": 4, "stall_micros": 0, "l0_files": 1, "pending_compaction_bytes": 0, "flush_bytes": 0, '
           '"compaction_bytes": 5, "compactions_running": 1, "run_delay_ms": 0.5, "host_busy_ms": 20, '
           '"host_steal_ms": 0}], "rocksdb_version": "11.8.1"}\n'
           'noise\n{"ops_per_sec": 9, "delivered": 0.9, "p99.9_us": 7}\n')
    run = parse(out)
    assert run.rocksdb_version == "11.8.1" and run.series[0].completed == 9
    assert run.series[0].woke_max_us == 4 and run.series[0].run_delay_ms == 0.5
    assert run["p99.9_us"] == 7 and run["delivered"] == 0.9
    with pytest.raises(OpenLoopError, match="no metrics line"):
        parse('{"series": []}\n')


class _Threshold:
    """Stands where a loaded DB would for the capacity search's own logic: every offered rate up to
    ``limit`` holds P99.9 at 1 ms, every rate above it does not; the search must bracket ``limit``."""

    def __init__(self, limit: float):
        self.limit = limit
        self.offered: list[float] = []

    def run(self, rate: Rate) -> RateRun:
        offered = rate.writes + rate.reads
        self.offered.append(offered)
        tail = 1000.0 if offered <= self.limit else 50_000.0
        return RateRun({"delivered": 1.0, "p99.9_us": tail}, (), "synthetic")


@pytest.mark.parametrize("limit, start", [(73_000, 100_000), (73_000, 10_000), (1_234, 50_000)])
def test_capacity_brackets_a_known_threshold_within_its_resolution(limit, start):
    fake = _Threshold(limit)
    cap = capacity(fake, Rate(start * 0.8, start * 0.2), parse_slo("p99.9<=2ms"))
    assert cap.held is not None and cap.failed is not None
    assert cap.held <= limit < cap.failed and cap.failed / cap.held <= 1.1
    assert len(cap.probes) == len(fake.offered) <= 12


def test_capacity_says_when_no_rate_holds_or_none_fails():
    never = capacity(_Threshold(0.5), Rate(1000), parse_slo("p99.9<=2ms"))
    assert never.held is None and never.failed is not None
    always = capacity(_Threshold(1e12), Rate(1000), parse_slo("p99.9<=2ms"), most=4)
    assert always.failed is None and always.held == 8000


class _OnePause(_Threshold):
    """A threshold at ``limit`` whose ``nth`` run misses whatever its rate, as a run a host pause hit does."""

    def __init__(self, limit: float, nth: int):
        super().__init__(limit)
        self.nth = nth

    def run(self, rate: Rate) -> RateRun:
        run = super().run(rate)
        return RateRun({**run.metrics, "p99.9_us": 150_000.0}, (), "synthetic") if len(self.offered) == self.nth else run


def test_a_miss_far_below_a_rate_held_before_runs_again_and_counts_only_if_it_misses_again():
    """A configuration that holds up to 100,000 ops/s, one run paused: without held_before the pause's miss
    caps the search below it; with it (the configuration held 105,000 in an earlier round), 90,000 is more
    than the resolution below, so it runs again, holds, and the search brackets the true threshold, its
    held run's figures the score's. A miss within the resolution of held_before runs once, as any near a
    capacity; a real miss far below runs twice and counts; ``most`` counts rates, not runs."""
    slo = parse_slo("p99.9<=10ms")
    capped = capacity(_OnePause(100_000, 1), Rate(90_000), slo, CAPACITY_RESOLUTION, CAPACITY_RUNS, step=STEP)
    assert capped.held is not None and capped.held < 90_000 and capped.again == ()
    said: list[str] = []
    fake = _OnePause(100_000, 1)
    found = capacity(fake, Rate(90_000), slo, CAPACITY_RESOLUTION, CAPACITY_RUNS, said.append, STEP,
                     held_before=105_000)
    assert found.held is not None and found.failed is not None and found.held <= 100_000 < found.failed
    assert found.again == (90_000,) and fake.offered[:2] == [90_000, 90_000]
    assert said[0].endswith("; it held 105,000 ops/s in an earlier round: running it again") and "holds" in said[1]
    assert found.metrics()["p99.9_us"] == 1000 and found.to_dict()["again"] == [90_000]
    near = capacity(_OnePause(100_000, 1), Rate(100_000), slo, CAPACITY_RESOLUTION, CAPACITY_RUNS, step=STEP,
                    held_before=105_000)
    assert near.again == () and near.failed == 100_000  # within 0.1 of 105,000: its miss counts at once
    real = _Threshold(80_000)
    twice = capacity(real, Rate(90_000), slo, CAPACITY_RESOLUTION, CAPACITY_RUNS, step=STEP, held_before=105_000)
    assert real.offered[:3] == [90_000, 90_000, pytest.approx(90_000 / STEP)] and twice.again[0] == 90_000
    assert twice.held is not None and twice.failed is not None and twice.held <= 80_000 < twice.failed
    assert all([o for o, _ in twice.probes].count(rate) == 2 for rate in twice.again)
    above = _Threshold(80_000)
    capacity(above, Rate(110_000), slo, CAPACITY_RESOLUTION, 2, step=STEP, held_before=105_000)
    # 110,000, above what it held, once; 90,909 far below it twice, the rates (``most`` 2) counted once each
    assert above.offered == [110_000, pytest.approx(110_000 / STEP), pytest.approx(110_000 / STEP)]


def test_a_trials_capacity_search_is_one_runs_metrics_from_its_held_rate():
    """--objective capacity: from --rate by STEP, at most TRIAL_RUNS runs; the score is the rate held, the
    tail and costs are the held run's, and a search that held nothing scores 0 with the lowest rate's."""
    slo = parse_slo("p99.9<=2ms")
    near = capacity(_Threshold(26_000), Rate(20_000), slo, CAPACITY_RESOLUTION, TRIAL_RUNS, step=STEP)
    assert [round(o) for o, _ in near.probes] == [20_000, 24_200, 29_282]  # up, up, over: a bracket of STEP
    held = near.metrics()
    assert held["held_ops_per_sec"] == pytest.approx(24_200) and held["failed_ops_per_sec"] == pytest.approx(29_282)
    assert held["p99.9_us"] == 1000 and held["capacity_runs"] == TRIAL_RUNS == 3
    none = capacity(_Threshold(1.0), Rate(20_000), slo, CAPACITY_RESOLUTION, TRIAL_RUNS, step=STEP)
    assert none.metrics()["held_ops_per_sec"] == 0 and none.metrics()["p99.9_us"] == 50_000
    assert len(none.probes) == TRIAL_RUNS and none.metrics()["failed_ops_per_sec"] == pytest.approx(20_000 / STEP ** 2)
    score = Score("capacity")
    assert score.terms == (("held_ops_per_sec", "maximize"),) and score.values(near.metrics()) == [near.held]


@pytest.mark.parametrize("limit, rate", [(100_000, 20_000), (73_000, 150_000), (5_000, 60_000)])
def test_a_capacity_studys_trials_search_around_the_defaults_capacity_wherever_the_rate_lies(limit, rate):
    """The preload's search places a known capacity within a bracket of STEP from a --rate far off, and its
    middle is where the trials start: a trial of the defaults' capacity then places it within a STEP too, in
    TRIAL_RUNS runs at most, where one from --rate would hold every rate it tried (or none)."""
    slo = parse_slo("p99.9<=2ms")
    placed = capacity(_Threshold(limit), Rate(rate), slo, STEP - 1, CAPACITY_RUNS)
    assert placed.held is not None and placed.failed is not None
    assert placed.held <= limit < placed.failed and placed.failed / placed.held <= STEP
    start = trial_start(placed, rate)
    assert start == pytest.approx(math.sqrt(placed.held * placed.failed))
    trial = capacity(_Threshold(limit), scaled(Rate(rate), start), slo, CAPACITY_RESOLUTION, TRIAL_RUNS, step=STEP)
    assert trial.held is not None and trial.failed is not None and trial.held <= limit < trial.failed <= trial.held * STEP
    unplaced = capacity(_Threshold(limit), Rate(rate), slo, CAPACITY_RESOLUTION, TRIAL_RUNS, step=STEP)
    assert unplaced.held is None or unplaced.failed is None  # --rate 1.46 times off or more: no bracket


def test_where_trials_start_when_the_defaults_search_found_no_bracket():
    slo = parse_slo("p99.9<=2ms")
    none = capacity(_Threshold(1.0), Rate(20_000), slo, STEP - 1, CAPACITY_RUNS)
    assert trial_start(none, 20_000) == pytest.approx(none.failed / STEP)
    every = capacity(_Threshold(1e12), Rate(20_000), slo, STEP - 1, 2)
    assert trial_start(every, 20_000) == pytest.approx(40_000)  # the most it held
    assert trial_start(replace(every, held=None, probes=()), 20_000) == 20_000
    assert scaled(Rate(30_000, 10_000), 60_000) == Rate(45_000, 15_000)


def test_a_rounds_searches_start_where_the_round_befores_held_rates_meet():
    assert shared_start([100_000.0, 160_000.0]) == pytest.approx(126_491.1, abs=0.1)
    assert shared_start([None, 90_000.0]) == pytest.approx(90_000.0) and shared_start([None, None]) is None


def test_the_experiments_capacity_rounds_pair_a_known_ratio(monkeypatch):
    """Synthetic thresholds with a known answer: the defaults hold up to 80,000 ops/s, the bound up to
    1.3 times that. Every round's searches past the first start where the round before's held rates
    meet, and the paired ratio of the held rates lies within the searches' resolution of 1.3."""
    monkeypatch.setattr("random.shuffle", lambda order: None)
    loaded = {"rocksdb-default": _Threshold(80_000), "compaction off (a bound)": _Threshold(104_000)}
    found = capacity_rounds(loaded, {name: Rate(60_000) for name in loaded}, parse_slo("p99.9<=10ms"), 3)
    assert [(c["round"], c["config"]) for c in found] == [(r, n) for r in (1, 2, 3) for n in loaded]
    held = {(c["round"], c["config"]): c["held"] for c in found}
    assert [c["start"] for c in found[:2]] == [60_000, 60_000]
    assert found[2]["start"] == found[3]["start"] == pytest.approx(shared_start([held[(1, n)] for n in loaded]))
    assert loaded["rocksdb-default"].offered[len(found[0]["probes"])] == found[2]["start"]
    ratio = paired(found, list(loaded), ("held",))["compaction off (a bound)"]["held"]
    assert ratio["n"] == 3 and 1.3 / 1.1 <= ratio["ratio"] <= 1.3 * 1.1


def test_the_experiments_capacity_rounds_run_a_miss_far_below_an_earlier_rounds_capacity_again(monkeypatch):
    """The defaults hold up to 80,000 ops/s, the other configuration 160,000. Round 2's searches start near
    113,000; the defaults' second run there (near 56,000) is paused: far below what round 1 held, so it
    runs again and round 2 brackets the same threshold round 1 did, not half of it."""
    monkeypatch.setattr("random.shuffle", lambda order: None)
    slo = parse_slo("p99.9<=10ms")
    first = len(capacity(_Threshold(80_000), Rate(60_000), slo).probes)
    loaded = {"rocksdb-default": _OnePause(80_000, first + 2), "other": _Threshold(160_000)}
    found = capacity_rounds(loaded, {name: Rate(60_000) for name in loaded}, slo, 2)
    defaults = [c for c in found if c["config"] == "rocksdb-default"]
    assert defaults[0]["again"] == [] and defaults[1]["again"] == [pytest.approx(defaults[1]["start"] / 2)]
    assert defaults[1]["held"] is not None and defaults[1]["held"] >= defaults[0]["held"] / 1.1


def test_the_experiments_configs_name_options_files_and_which_run_their_background_at_nice_19(tmp_path):
    """A configuration is an OPTIONS file (or null: the library's defaults), or an object naming one and its
    background threads' priority; anything else is refused naming the entry."""
    path = tmp_path / "configs.json"
    path.write_text(json.dumps({"limiter": "experiments/service_level/levers/rate-limiter-128MiB.ini",
                                "defaults at nice 19": {"options": None, "background": "low"}}))
    configs, low = read_configs(path)
    assert list(configs) == ["rocksdb-default", "limiter", "defaults at nice 19"]
    assert configs["defaults at nice 19"] is None and low == {"defaults at nice 19"}
    path.write_text(json.dumps({"odd": {"options": None, "background": "idle"}}))
    with pytest.raises(SystemExit, match="odd: an object is"):
        read_configs(path)


def test_an_options_file_without_compaction_is_never_settled(tmp_path):
    off, on = tmp_path / "off.ini", tmp_path / "on.ini"
    off.write_text("[CFOptions \"default\"]\n  disable_auto_compactions = true\n")
    on.write_text("[CFOptions \"default\"]\n  disable_auto_compactions=false\n")
    assert never_compacts(off) and not never_compacts(on) and not never_compacts(None)


@pytest.mark.parametrize("text, metric, limit", [("p99.9<=2ms", "p99.9_us", 2000), ("p99 <= 500us", "p99_us", 500),
                                                 ("max<=1s", "max_us", 1e6), ("p99.99_us<=750", "p99.99_us", 750),
                                                 ("read_p99.9<=2ms", "read_p99.9_us", 2000),
                                                 ("write_max_us<=5000", "write_max_us", 5000)])
def test_an_slo_is_a_bound_in_microseconds(text, metric, limit):
    bound = parse_slo(text, Rate(1000, 500))
    assert (bound.metric, bound.limit, bound.upper) == (metric, limit, True)


def test_a_bound_on_the_reads_tail_needs_reads_beside_the_writes():
    with pytest.raises(ValueError, match="--slo: 'read_p99.9<=2ms' bounds the reads' own tail.*give --read-rate"):
        parse_slo("read_p99.9<=2ms", Rate(1000))
    assert parse_slo("p99.9<=2ms", Rate(1000)).metric == "p99.9_us"


def test_an_slo_that_is_not_a_latency_bound_is_refused_naming_the_flag():
    with pytest.raises(ValueError, match="--slo: 'ops>=5' is not a latency bound"):
        parse_slo("ops>=5")


def test_a_latency_is_read_in_microseconds_and_anything_else_is_refused():
    assert [parse_latency(t) for t in ("1ms", "500us", "0.5s", "2000", " 2 ms ")] == [1000, 500, 500_000, 2000, 2000]
    for bad in ("0", "fast", "-1ms", "1h", "1.2.3ms"):
        with pytest.raises(ValueError, match="is not a latency above 0 such as 1ms"):
            parse_latency(bad)


def test_a_slow_calls_line_gives_each_part_its_share_of_their_time():
    """Figures of known shares: 1 s of slow calls, 600 ms in the WAL (500 of them in write()), 300 ms switching
    memtables, 100 ms in the memtable, 5 ms delayed (under 1 %: left out), 200 ms on a CPU; the slowest call
    85 ms, 80 of them switching memtables, 79 opening a file."""
    metrics = {"slow_calls": 40, "slow_calls_us": 1e6, "slowest_call_us": 85e3,
               "slow_calls.write_wal_us": 6e5, "slow_calls.io_write_us": 5e5, "slow_calls.write_scheduling_us": 3e5,
               "slow_calls.write_memtable_us": 1e5, "slow_calls.write_delay_us": 5e3, "slow_calls.cpu_us": 2e5,
               "slowest_call.write_scheduling_us": 8e4, "slowest_call.io_open_us": 7.9e4, "slowest_call.cpu_us": 1e3}
    assert slow_calls(RateRun(metrics, (), "11.8.1"), 1000) == [
        "slow calls:  40 over 1.00 ms, 1.00 s in all: WAL 60%, switching memtables 30%, memtable 10% (within them: "
        "write() 50%); on a CPU 20%",
        "  the slowest, 85.00 ms: switching memtables 94% (within them: file opens 93%); on a CPU 1%"]
    assert slow_calls(RateRun({**metrics, "slow_calls": 0}, (), ""), 1000) == ["slow calls:  none over 1.00 ms"]
    untimed = {**metrics, "slowest_call.write_scheduling_us": 0.0, "slowest_call.io_open_us": 0.0}
    assert slow_calls(RateRun(untimed, (), ""), 1000)[1] == "  the slowest, 85.00 ms: outside RocksDB's timed parts; on a CPU 1%"
    assert slow_calls(RateRun(metrics, (), ""), 0) == []


def test_a_kernel_waits_line_groups_stacks_by_their_innermost_frames_and_system_call():
    """Samples of known counts: two stacks that differ only past their third frame are one wait (60 of 100
    samples), then a 5-frame stack of 30 cut to its 3 innermost frames and its system call, a short one of 6,
    and the rest (4) elsewhere."""
    journal = "wait_transaction_locked < add_transaction_credits < start_this_handle < jbd2__journal_start"
    samples = {f"{journal} < ext4_dirty_inode < __x64_sys_write": 45, f"{journal} < ext4_da_write_end < __x64_sys_write": 15,
               "folio_wait_bit_common < folio_wait_writeback < a < b < __x64_sys_write": 30,
               "futex_wait < __x64_sys_futex": 6, "(none)": 4}
    assert kernel_stack("a < b < c < d < e") == "a < b < c < .. < e" and kernel_stack("a < b < c < d") == "a < b < c < d"
    assert kernel_waits(samples) == ("60% wait_transaction_locked < add_transaction_credits < start_this_handle < .. < "
                                     "__x64_sys_write; 30% folio_wait_bit_common < folio_wait_writeback < a < .. < "
                                     "__x64_sys_write; 6% futex_wait < __x64_sys_futex; 4% elsewhere")
    assert kernel_waits({}) == ""
    metrics = {"slow_calls": 3, "slow_calls_us": 5e3, "slowest_call_us": 3e3, "slow_calls.cpu_us": 50.0}
    lines = slow_calls(RateRun(metrics, (), "", kernel_waits=samples), 1000)
    assert lines[-1] == "  in the kernel, 100 samples of 1.00 ms each: " + kernel_waits(samples)
    assert len(slow_calls(RateRun(metrics, (), ""), 1000)) == 2


def test_find_says_how_to_build_a_missing_driver():
    with pytest.raises(OpenLoopError, match=r"make db_bench ROCKSDB_VERSION=0\.1"):
        find("0.1")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DB of DATA bytes the driver loaded (the library's defaults); tests copy it."""
    db = tmp_path_factory.mktemp("open-loop") / "db"
    subprocess.run([str(find().path), "load", "--db", str(db), "--data", str(DATA)], check=True,
                   capture_output=True)
    return db


def _copy(db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "db"
    shutil.copytree(db, copy)
    return copy


def _paused(argv: list[str], after: float, pause: float) -> str:
    """Run ``argv``, stop it with SIGSTOP ``after`` seconds in for ``pause`` seconds, then SIGCONT; its stdout."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def pause_it() -> None:
        time.sleep(after)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(pause)
        proc.send_signal(signal.SIGCONT)

    thread = threading.Thread(target=pause_it)
    thread.start()
    out, err = proc.communicate(timeout=120)
    thread.join()
    assert proc.returncode == 0, err
    return out


@pytest.mark.release_build
def test_a_pause_counts_every_request_due_during_it(loaded, tmp_path, db_bench):
    """The correction, proven: a writer at 5,000 writes/s paused 1.5 s in an 8 s run. Open loop, the
    requests due during the pause waited up to 1.5 s: P99.9 is at least 0.5 s (1.49 s in the runs of
    2026-12-03), the schedule was caught up, and the series shows the pause as a late wake-up. db_bench's closed
    loop at the same rate, paused the same way, stays under 0.5 s (about 0.1 ms then: the pause fell in its rate
    limiter's wait, which a write's latency leaves out) and issued fewer writes: those the pause would have sent
    were never sent.
    """
    rate, seconds = 5000, 8
    driver = find()
    out = _paused([str(driver.path), "run", "--db", str(_copy(loaded, tmp_path / "a")), "--data", str(DATA),
                   "--rate", str(rate), "--duration", str(seconds)], after=2.0, pause=1.5)
    run = parse(out)
    assert run["p99.9_us"] >= 500_000, run.metrics
    assert run["max_us"] >= 1_400_000
    assert run["delivered"] > 0.99  # it caught up after the pause
    assert max(s.max_us for s in run.series) >= 1_400_000
    # the series tells what the pause was: a thread woken 1.5 s late (or a call that long), not a wait
    # for a CPU (a stopped process is off the run queue)
    assert max(max(s.woke_max_us, s.service_max_us) for s in run.series) >= 1_400_000
    assert sum(s.run_delay_ms for s in run.series) < 500

    keys = DATA // 116
    out = _paused([db_bench.path, f"--db={_copy(loaded, tmp_path / 'b')}", "--use_existing_db=1",
                   "--benchmarks=overwrite", f"--num={keys}", f"--duration={seconds}", "--histogram=1",
                   f"--benchmark_write_rate_limit={rate * 116}", "--threads=1"], after=2.0, pause=1.5)
    hist = next(iter(next(r for r in parse_db_bench(out).results if r.name == "overwrite").histograms.values()))
    assert hist.printed["P99.9"] < 500_000, hist.printed
    assert hist.count < 0.9 * rate * seconds, hist.count


@pytest.mark.release_build
def test_windows_put_a_pause_in_the_windows_it_fell_in(loaded, tmp_path):
    """--windows 2,4 on an 8 s run paused 1.5 s about 2 s in: four 2-s and two 4-s windows, their
    requests those of the run; the 4-s window holding the pause has a tail of at least 0.5 s and over a
    thousand requests slower than a second, the last one, after the writer caught up, neither."""
    out = _paused([str(find().path), "run", "--db", str(_copy(loaded, tmp_path)), "--data", str(DATA),
                   "--rate", "5000", "--duration", "8", "--windows", "2,4"], after=2.0, pause=1.5)
    run = parse(out)
    two = [w for w in run.windows if w.seconds == 2]
    four = [w for w in run.windows if w.seconds == 4]
    assert [w.start for w in two] == [0, 2, 4, 6] and [w.start for w in four] == [0, 4]
    assert sum(w.due for w in two) == sum(w.due for w in four) == run["due_ops"]
    assert four[0].p999_us >= 500_000 and four[0].max_us >= 1_400_000, four
    assert four[1].p999_us < 500_000, four
    # counts over a threshold add up across windows; about 2,500 requests fell due in the pause's first 0.5 s
    assert all(two[0].over_us[t] + two[1].over_us[t] == four[0].over_us[t] for t in four[0].over_us)
    assert four[0].over_us[1_000_000] > 1000 and four[1].over_us[1_000_000] == 0, four
    assert all(w.over_us[1000] >= w.over_us[10_000] >= w.over_us[1_000_000] for w in run.windows)


@pytest.mark.release_build
def test_a_rate_out_of_reach_is_not_delivered(loaded, tmp_path):
    """Offered far more than one writer can do, the run says so: most requests never completed, the
    schedule was seconds behind at the end, and the tail holds the wait."""
    run = parse(subprocess.run([str(find().path), "run", "--db", str(_copy(loaded, tmp_path)), "--data", str(DATA),
                                "--rate", "20000000", "--duration", "2"], capture_output=True, text=True,
                               check=True).stdout)
    assert run["delivered"] < 0.5
    assert run["unfinished_ops"] > 0 and run["late_at_end_s"] > 1.0
    assert run["p99_us"] > 1e6  # requests due early in the window and issued late waited a second or more


@pytest.mark.release_build
def test_the_settle_charges_what_the_window_left_unflushed(loaded, tmp_path):
    """Memtables larger than what a 3 s window writes at 5,000 writes/s (about 1.7 MB) never flush in
    the window; with --settle the load goes on while they flush, so the flush's bytes are in write_amp,
    the settle's requests in due_ops, and the run says how long it took. Without it, nothing flushed."""
    options = tmp_path / "OPTIONS"
    options.write_text("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n"
                       "[CFOptions \"default\"]\n  write_buffer_size=268435456\n")
    rate, seconds = 5000, 3

    def run(where: str, *settle: str) -> RateRun:
        argv = [str(find().path), "run", "--db", str(_copy(loaded, tmp_path / where)), "--data", str(DATA),
                "--options", str(options), "--rate", str(rate), "--duration", str(seconds), *settle]
        return parse(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)

    window = run("window")
    assert window["flush_bytes"] == 0 and "settle_s" not in window.metrics
    settled = run("settled", "--settle", str(seconds))
    assert settled["flush_bytes"] > 0 and settled["write_amp"] > 0.1
    assert settled["settled"] == 1 and 0 < settled["settle_s"] < seconds
    assert settled["due_ops"] > rate * seconds and settled["delivered"] > 0.99
    assert settled["seconds"] == pytest.approx(seconds + settled["settle_s"], abs=0.05)


@pytest.mark.release_build
def test_options_file_is_what_the_db_runs(tmp_path):
    """--options: the DB opens with the file's options (RocksDB's own OPTIONS file in the DB says so)."""
    options = tmp_path / "OPTIONS"
    options.write_text("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n"
                       "  max_background_jobs=3\n[CFOptions \"default\"]\n  write_buffer_size=5242880\n"
                       "[TableOptions/BlockBasedTable \"default\"]\n  block_size=8192\n")
    db = tmp_path / "db"
    subprocess.run([str(find().path), "load", "--db", str(db), "--data", str(2**20), "--options", str(options)],
                   check=True, capture_output=True)
    written = max(db.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1])).read_text()
    assert "write_buffer_size=5242880" in written and "max_background_jobs=3" in written
    assert "block_size=8192" in written


def test_a_rate_studys_long_run_is_given_the_time_its_settle_needs():
    """A 10-minute run may settle for 10 more: --trial-timeout's default (600 s) would kill it."""
    rate = BACKENDS["rate"]
    setup = SimpleNamespace(setup=SimpleNamespace(timeout=600.0))
    assert rate._timeout(setup, SimpleNamespace(duration=600.0)) == 1800.0
    assert rate._timeout(setup, SimpleNamespace(duration=30.0)) == 660.0
    assert rate._timeout(SimpleNamespace(setup=SimpleNamespace(timeout=9000.0)), None) == 9000.0  # the user's, if more


@pytest.mark.release_build
def test_a_rate_limiter_in_the_options_file_reaches_the_db(tmp_path):
    """rate_limiter_bytes_per_sec, which RocksDB reads from an OPTIONS file but does not write back: the
    DB's LOG names a limiter, and RocksDB then syncs every 1 MiB (bytes_per_sync, which it sets when a
    limiter is on); from a file that lacks it (how 0, "no limit", is written), neither."""
    base = ("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n  max_background_jobs=2\n"
            "[CFOptions \"default\"]\n  write_buffer_size=1048576\n")
    seen = {}
    for name, value in (("limited", 50_400_000), ("none", 0)):
        options = tmp_path / f"{name}.ini"
        options.write_text(options_file.with_values(base, {options_file.RATE_LIMITER_KEY: value}))
        db = tmp_path / name
        subprocess.run([str(find().path), "load", "--db", str(db), "--data", str(2**20), "--options", str(options)],
                       check=True, capture_output=True)
        written = max(db.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1])).read_text()
        limiter = next(line for line in (db / "LOG").read_text().splitlines() if "Options.rate_limiter:" in line)
        seen[name] = ("bytes_per_sync=1048576" in written, "(nil)" not in limiter)
    assert seen == {"limited": (True, True), "none": (False, False)}


@pytest.mark.release_build
def test_slow_calls_break_each_call_into_rocksdbs_parts_and_its_cpu_time(loaded, tmp_path):
    """--slow_call_us 0.001 takes every call as slow: as many as completed, RocksDB's disjoint parts of a write
    adding up to no more than their time, the WAL and the memtable in them, a CPU time no longer than the calls
    (but for the timer reads after a call, well under a microsecond each), the slowest call's parts within the
    sums. Without the flag, no such figures."""
    argv = [str(find().path), "run", "--db", str(_copy(loaded, tmp_path)), "--data", str(DATA), "--rate", "20000",
            "--duration", "2"]
    m = parse(subprocess.run([*argv, "--slow_call_us", "0.001"], check=True, capture_output=True, text=True).stdout).metrics
    calls, total = m["slow_calls"], m["slow_calls_us"]
    assert calls == m["completed_ops"] > 30_000
    writes = sum(m[f"slow_calls.{part}_us"] for part in ("write_wal", "write_memtable", "write_delay",
                                                          "write_scheduling", "write_pre_and_post", "write_thread_wait"))
    assert m["slow_calls.write_wal_us"] > 0 and m["slow_calls.write_memtable_us"] > 0 and 0 < writes <= total
    assert 0 < m["slow_calls.cpu_us"] <= total + 0.5 * calls
    assert m["slowest_call_us"] <= total
    assert all(m[f"slowest_call.{part}_us"] <= m[f"slow_calls.{part}_us"] for part in ("write_wal", "cpu", "io_write"))
    shutil.rmtree(tmp_path / "db")
    plain = [*argv[:3], str(_copy(loaded, tmp_path)), *argv[4:]]
    run = parse(subprocess.run(plain, check=True, capture_output=True, text=True).stdout)
    assert "slow_calls" not in run.metrics and run.kernel_waits == {}
    bad = subprocess.run([*argv, "--slow_call_us", "soon"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--slow_call_us: not a number >= 0: soon" in bad.stderr


def test_a_slow_calls_kernel_stacks_say_where_it_waited(loaded, tmp_path):
    """Two 1 MiB memtables filled at 8 MB/s and flushed at 1 MB/s (a rate limiter): writes stop for most of each
    second while the flush runs, the writer waiting on RocksDB's condition variable, a futex. Sampled at each
    whole millisecond of a call, the slow calls' kernel stacks are mostly that wait, a call of D ms giving
    floor(D) samples: between their time in ms past each one's first and that plus one a call (less where
    the watcher woke late)."""
    options = tmp_path / "OPTIONS"
    options.write_text("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n"
                       "  rate_limiter_bytes_per_sec=1048576\n[CFOptions \"default\"]\n  write_buffer_size=1048576\n"
                       "  max_write_buffer_number=2\n")
    run = parse(subprocess.run([str(find().path), "run", "--db", str(_copy(loaded, tmp_path)), "--data", str(DATA),
                                "--options", str(options), "--rate", "20000", "--duration", "3", "--slow_call_us", "1000"],
                               check=True, capture_output=True, text=True).stdout)
    waits, m = run.kernel_waits, run.metrics
    assert m["slow_calls"] > 0 and m["slow_calls.write_delay_us"] > 0.5 * m["slow_calls_us"]
    samples = sum(waits.values())
    futex = sum(n for stack, n in waits.items() if "futex" in stack)
    assert futex > 0.8 * samples, waits
    past_first_ms = (m["slow_calls_us"] - 1000 * m["slow_calls"]) / 1000
    assert 0.8 * past_first_ms <= samples <= past_first_ms + m["slow_calls"], (samples, past_first_ms)


def _nice_of_threads(pid: int) -> dict[str, int]:
    """Each thread's name -> its nice value (the lowest of threads that share a name), from /proc."""
    nice: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        nice[name] = max(nice.get(name, -20), int(fields[16]))  # field 19 of stat, 17 after "state"
    return nice


def test_a_configuration_that_recycles_wal_files_loads_with_the_wal_and_runs(tmp_path):
    """RocksDB refuses writes without a WAL where WAL files are recycled: the load writes with the WAL
    there (and says so), without it otherwise, and a run at a rate on the DB it made completes."""
    options = tmp_path / "OPTIONS"
    options.write_text("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n"
                       "  recycle_log_file_num=4\n[CFOptions \"default\"]\n  write_buffer_size=1048576\n")
    loads = {}
    for name, extra in (("recycled", ["--options", str(options)]), ("defaults", [])):
        r = subprocess.run([str(find().path), "load", "--db", str(tmp_path / name), "--data", str(4 << 20), *extra],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        loads[name] = json.loads(r.stdout)
    assert loads["recycled"]["wal"] is True and loads["defaults"]["wal"] is False
    run = subprocess.run([str(find().path), "run", "--db", str(tmp_path / "recycled"), "--data", str(4 << 20),
                          "--options", str(options), "--rate", "5000", "--duration", "2"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert parse(run.stdout)["delivered"] > 0.9


def test_low_background_priority_puts_flush_and_compaction_threads_at_nice_19(loaded, tmp_path):
    """--background_priority low: RocksDB lowers a pool's threads when they next take a job, so with 1 MiB
    memtables the flush thread is at nice 19 within a second or two; the request threads stay at 0.
    Anything else is refused in one line."""
    options = tmp_path / "OPTIONS"
    options.write_text("[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n"
                       "[CFOptions \"default\"]\n  write_buffer_size=1048576\n")
    argv = [str(find().path), "run", "--db", str(_copy(loaded, tmp_path)), "--data", str(DATA), "--options",
            str(options), "--rate", "20000", "--duration", "6"]
    proc = subprocess.Popen([*argv, "--background_priority", "low"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    seen: dict[str, int] = {}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and seen.get("rocksdb:high") != 19:
        time.sleep(0.2)
        seen = _nice_of_threads(proc.pid)
    proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert seen.get("rocksdb:high") == 19 and seen.get("open_loop") == 0, seen
    bad = subprocess.run([*argv, "--background_priority", "lowest"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--background_priority: normal or low, not lowest" in bad.stderr


@pytest.mark.release_build
@pytest.mark.parametrize("args, message", [
    (["--rate", "0"], "--rate: must be > 0"),
    (["--rate", "1000", "--options", "/nonexistent/OPTIONS"], "--options /nonexistent/OPTIONS: no such file"),
    (["--rate", "1000", "--rocksdb-version", "0.1"], "no open_loop driver of RocksDB 0.1"),
    (["--rate", "1000", "--windows", "1.5"], "--windows: whole seconds only, got '1.5'"),
    (["--rate", "1000", "--slow-calls", "fast"], "--slow-calls: 'fast' is not a latency above 0"),
])
def test_measure_refuses_bad_input_in_one_line(args, message):
    done = subprocess.run([sys.executable, "-m", "tuner.cli", "measure", *args], capture_output=True, text=True)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.release_build
def test_measure_within_a_memory_limit(memory_cgroup, work_dir):
    """`measure --json` at a rate within a memory cgroup: every figure, the series, the cgroup's peak,
    the stamp; its DB removed after."""
    done = subprocess.run([sys.executable, "-m", "tuner.cli", "measure", "--rate", "2000", "--read-rate", "1000",
                           "--duration", "3s", "--target-data", "16MiB", "--target-memory", "64MiB",
                           "--work-dir", str(work_dir), "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["rate"] == {**vars(Rate(2000, 1000, 3.0)), "windows": []}
    assert record["delivered"] > 0.95 and len(record["series"]) == 3
    for name in ("p99.9_us", "write_p99.9_us", "read_p99.99_us", "stall_micros", "l0_files", "write_amp"):
        assert name in record
    assert 0 < record["memory_peak_bytes"] <= 64 * 2**20 and record["oom_kills"] == 0
    assert record["host"]["cores"] >= 1 and record["rocksdb_version"]
    assert "loading" in done.stderr and "warming up: 4 runs of 3 s" in done.stderr and record["warm_up_runs"] == 4
    assert leftovers(work_dir) == []


@pytest.mark.release_build
def test_measure_stopped_with_ctrl_c_removes_its_db(work_dir):
    """Ctrl-C while the rate runs: the driver is killed, the DB and its checkpoint removed, exit 130."""
    proc = subprocess.Popen([sys.executable, "-m", "tuner.cli", "measure", "--rate", "2000", "--duration", "60s",
                             "--target-data", "16MiB", "--work-dir", str(work_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any((d / "run").is_dir() for d in work_dir.iterdir() if d.is_dir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert leftovers(work_dir) == []
    assert subprocess.run(["pgrep", "-f", f"open_loop run --db {work_dir}"], capture_output=True).returncode == 1


def test_a_warm_up_is_two_minutes_of_runs_in_one_to_four_runs():
    """Runs of 60 s warm up in 2, of 45 s in 3, of 30 s or less in 4, of 2 minutes or more in 1."""
    assert [warm_up_runs(d) for d in (600.0, 120.0, 60.0, 45.0, 40.0, 30.0, 3.0, 0.5)] == [1, 1, 2, 3, 3, 4, 4, 4]


def test_the_curve_says_the_capacity_in_the_slos_own_unit():
    """The capacity line and one row per rate tried, lowest first, from synthetic runs."""
    cap = capacity(_Threshold(73_000), Rate(100_000), parse_slo("p99.9<=2ms"))
    for run in (r for _, r in cap.probes):
        run.metrics.update({name: 1.0 for name in PERCENTILES} | {"stall_micros": 0.0, "l0_files": 0.0,
                                                                  "pending_compaction_bytes": 0.0})
    text = curve(cap)
    assert text.splitlines()[0] == f"holds p99.9 <= 2.00 ms up to {cap.held:,.0f} ops/s; {cap.failed:,.0f} ops/s did not"
    rates = [float(line.split()[0].replace(",", "")) for line in text.splitlines()[2:]]
    assert rates == sorted(float(round(r)) for r, _ in cap.probes)


def test_a_rate_not_held_says_why_in_the_search_and_the_curve():
    """A run whose tail is within the bound but whose compaction was still behind when its settle ended is
    not held, and the progress line and the curve name the settle; a short delivery and a tail beyond the
    bound are named too; a held run names nothing."""
    slo = parse_slo("p99.9<=10ms")
    base = {"delivered": 1.0, "p99.9_us": 3_000.0, "settled": 1.0, "settle_s": 4.0}
    runs = {"held": base, "settle": {**base, "settled": 0.0, "settle_s": 60.0},
            "short": {**base, "delivered": 0.95}, "tail": {**base, "p99.9_us": 20_000.0}}
    why = {name: missed(RateRun(dict(m), (), "synthetic"), slo) for name, m in runs.items()}
    assert why == {"held": [], "settle": ["compaction behind after a 60 s settle"], "short": ["delivered under 99%"],
                   "tail": ["p99.9_us over 10,000"]}
    assert [holds(RateRun(dict(m), (), "synthetic"), slo) for m in runs.values()] == [True, False, False, False]

    class _Settles:  # holds the tail at every rate; compaction keeps up to 50,000 ops/s only
        def run(self, rate: Rate) -> RateRun:
            behind = rate.writes > 50_000
            return RateRun({**base, "settled": 0.0 if behind else 1.0, "settle_s": 60.0 if behind else 4.0},
                           (), "synthetic")

    said: list[str] = []
    cap = capacity(_Settles(), Rate(40_000), slo, say=said.append)
    assert cap.held is not None and cap.failed is not None and cap.held <= 50_000 < cap.failed
    assert any(line.startswith(f"{cap.failed:,.0f} ops/s: does not hold") and
               line.endswith("; compaction behind after a 60 s settle)") for line in said)
    for _, run in cap.probes:
        run.metrics.update({name: 1.0 for name in PERCENTILES} | {"stall_micros": 0.0, "l0_files": 0.0,
                                                                  "pending_compaction_bytes": 0.0})
    rows = {line.split()[0]: line for line in curve(cap).splitlines()[2:]}
    assert rows[f"{cap.failed:,.0f}"].endswith("compaction behind after a 60 s settle")
    assert rows[f"{cap.held:,.0f}"].endswith("yes")


@pytest.mark.parametrize("metric, sense", [
    ("p99.9_us", "minimize"), ("write_p99_us", "minimize"), ("stall_micros", "minimize"), ("sst_bytes", "minimize"),
    ("late_at_end_s", "minimize"), ("write_amp", "minimize"), ("l0_files", "minimize"), ("delivered", "maximize"),
    ("ops_per_sec", "maximize"), ("scan_rows_per_sec", "maximize")])
def test_a_metric_named_alone_is_minimized_when_it_is_a_latency_a_time_or_a_size(metric, sense):
    assert Score(metric).directions == [sense]


@pytest.mark.parametrize("fields, message", [
    ({"rate": 1000.0}, "--rate: goes with --backend rate, not db_bench"),
    ({"backend": "rate"}, "--rate: the rate backend offers writes at a rate: give --rate OPS"),
    ({"read_rate": 10.0}, "--read-rate: goes with --rate"),
    ({"background_priority": "low"}, "--background-priority: goes with --rate"),
    ({"backend": "rate", "rate": 1000.0, "workload": "ycsb-a"},
     "--workload: shapes db_bench's workloads; the rate backend runs RocksDB at --rate, open loop"),
    ({"backend": "rate", "rate": 1000.0, "command": "x {options}"}, "--command: goes with --backend command, not rate"),
    ({"backend": "rate", "rate": 1000.0, "parallel": 2}, "--parallel: the rate backend runs on this host only"),
    ({"backend": "rate", "rate": 1000.0, "capacity_rounds": 3}, "--capacity-rounds: 3: goes with --slo"),
    ({"backend": "rate", "rate": 1000.0, "slo": "p99.9<=10ms", "capacity_rounds": 0}, "--capacity-rounds: 0: 1 or more"),
    ({"backend": "rate", "rate": 1000.0, "slo": "read_p99.9<=2ms"}, "--slo: 'read_p99.9<=2ms' bounds the reads'"),
    ({"backend": "rate", "rate": 1000.0, "objective": "capacity"},
     "--objective capacity: each trial's score is the highest rate it holds --slo at"),
    ({"objective": "capacity", "slo": "p99.9<=10ms"}, "--objective capacity: each trial's score"),
    ({"backend": "rate", "rate": 1000.0, "objective": "capacity", "slo": "p99.9<=10ms", "repeats": 3},
     "--repeats 3: with --objective capacity a trial is one search over rates"),
])
def test_what_the_rate_backend_cannot_take_is_refused_naming_the_flag(fields, message):
    with pytest.raises(UsageError) as refused:
        check_backend(TuneConfig(**fields))
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("fields, message", [
    ({"objective": "throughput"},
     "--objective throughput: at a fixed rate every configuration that keeps up delivers the same ops/s"),
    ({"objective": "p99.9_us", "arrivals": "bursty"}, "--arrivals: 'bursty' is not one of constant, poisson"),
    ({"objective": "p99.9_us", "background_priority": "idle"}, "--background-priority: 'idle' is not one of normal, low"),
    ({"objective": "p99.9_us", "defaults": "db_bench-7.8.3"}, "--defaults db_bench-7.8.3: the rate backend starts"),
])
def test_a_rate_study_refuses_what_it_cannot_measure(fields, message):
    with pytest.raises(UsageError) as refused:
        BACKENDS["rate"].task(TuneConfig(backend="rate", rate=1000.0, **fields))
    assert str(refused.value).startswith(message)


@pytest.mark.release_build
def test_tune_at_a_rate_minimizes_the_tail_of_runs_on_copies_of_one_load(tmp_path, work_dir):
    """`tune --rate`: the DB is loaded once, every run is open_loop at the rate on a copy of it with the
    configuration's OPTIONS (the driver's library defaults, the searched options set), its P99.9 the
    objective; the first trial is the library defaults the baseline runs (the sampler starts from
    them); --background-priority reaches every run; nothing is left in the work dir."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--rate", "2000", "--target-data", "64MiB",
                        "--duration", "3s", "--trials", "2", "--sampler", "random", "--seed", "3", "--revalidate", "0",
                        "--background-priority", "low",
                        "--no-mlflow", "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    assert summary.offered is not None and (summary.offered.writes, summary.offered.background) == (2000, "low")
    assert "open_loop load of 64 MiB" in r.stdout + r.stderr
    assert "minimize p99.9_us" in r.stderr + r.stdout
    best = summary.best
    assert best is not None and best.metrics["delivered"] > 0.99 and best.metrics["p99.9_us"] > 0
    first = min(summary.optuna_study().trials, key=lambda t: t.number)
    assert TrialRecord.of(first).enqueued == "rocksdb-default"
    assert (first.params["write_buffer_size"], first.params["max_write_buffer_number"], first.params["compression_type"],
            first.params["level0_file_num_compaction_trigger"]) == (64 * 2**20, 2, "lz4", 4)  # 11.8's library defaults
    commands = sorted(out.rglob("command.command"))
    assert commands and all("--rate 2000" in c.read_text() and " run " in c.read_text() for c in commands)
    assert all("--background_priority low" in c.read_text() for c in commands)
    warm = sorted((out / "preload-trials").glob("warm-up-*"))  # the defaults' runs before the baseline, not scored
    assert len(warm) == warm_up_runs(3.0) == 4 and all("--rate 2000" in (w / "command.command").read_text() for w in warm)
    assert "then 4 runs of them at the rate, not scored" in r.stdout + r.stderr
    assert leftovers(work_dir) == []


@pytest.mark.release_build
def test_a_trials_rate_limiter_reaches_its_run_and_the_answers_options_file(tmp_path, work_dir):
    """The service space's rate limiter, scaled to --rate (3 x 2,000 writes/s x 420 bytes): the trial
    that runs with it has RocksDB's limiter on (bytes_per_sync set to 1 MiB in the OPTIONS file its DB
    wrote) where rocksdb-default has none, and OPTIONS.ini, when it is the trial's, carries it, which
    RocksDB itself leaves out."""
    space = tmp_path / "limiter.toml"
    space.write_text('[parameters.rate_limiter_bytes_per_sec]\ntype = "categorical"\nchoices = ["3 * write_bytes"]\n')
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--rate", "2000", "--target-data", "64MiB",
                        "--duration", "3s", "--space", str(space), "--sampler", "grid", "--revalidate", "0",
                        "--no-mlflow", "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    trial = next(t for t in summary.optuna_study().trials)
    assert trial.params == {"rate_limiter_bytes_per_sec": 2_520_000}
    assert "bytes_per_sync=1048576" in (Path(TrialRecord.of(trial).log_dir) / "OPTIONS").read_text()
    assert "bytes_per_sync=0" in (out / "baselines" / "rocksdb-default" / "OPTIONS").read_text()
    kept = summary.answer is not None and summary.answer.recommend == "reference"  # the defaults' tail was lower
    assert ("rate_limiter_bytes_per_sec=2520000" in (out / "OPTIONS.ini").read_text()) is not kept
    assert leftovers(work_dir) == []


@pytest.mark.release_build
def test_the_reads_at_load_study_minimizes_the_reads_tail_beside_writes_at_a_rate(tmp_path, work_dir):
    """studies/reads-at-load.toml, shrunk by flags after it: every run offers reads beside writes, and
    the reads' own P99.9 is what the study minimizes."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--from", str(ROOT / "studies" / "reads-at-load.toml"),
                        "--target-data", "32MiB", "--target-memory", "256MiB", "--duration", "2s",
                        "--budget", "10m", "--trials", "2", "--revalidate", "0", "--study", "reads", "--no-mlflow",
                        "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    assert summary.objective_metric == "read_p99.9_us" and summary.objective_maximize is False
    best = summary.best
    assert best is not None and best.metrics["read_p99.9_us"] > 0 and best.metrics["read_ops"] > 0
    commands = sorted(out.rglob("command.command"))
    assert commands and all("--rate 30000 --read_rate 5000" in c.read_text() for c in commands if " run " in c.read_text())
    assert all({"cache_size", "bloom_bits"} <= set(t.params) for t in summary.optuna_study().trials)  # reads: searched
    assert "offer no reads" not in r.stderr
    assert leftovers(work_dir) == []


@pytest.mark.release_build
def test_tune_with_an_slo_measures_the_capacity_of_the_best_and_the_defaults(tmp_path, work_dir):
    """`tune --rate --slo`: after the search, rocksdb-default's and the best's capacity at the SLO, each
    from --rate down (no rate holds a P99.9 of 1 us on any host), every rate tried in the summary, the
    closing line and the curve's plot."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--rate", "2000", "--slo", "p99.9<=1us",
                        "--target-data", "16MiB", "--duration", "1s", "--trials", "1", "--no-starts", "--revalidate", "0",
                        "--no-mlflow", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = Summary.load(out / "summary.json")
    assert summary.capacity is not None and summary.capacity.metric == "p99.9_us" and summary.capacity.bound == 1
    names = [c.name for c in summary.capacity.configurations]
    assert names[0] == "rocksdb-default" and len(names) == 2
    for c in summary.capacity.configurations:
        assert c.held is None and c.failed is not None and len(c.probes) >= 2
        assert c.probes[0].offered == 2000 and c.probes[1].offered == 1000  # down from --rate, halving
        assert not any(p.held for p in c.probes) and all(p.value and p.value > 1 for p in c.probes)
    assert "capacity at p99.9<=1us" in r.stdout and "rocksdb-default held it at no rate tried" in r.stdout
    assert "space service: not searched, since the runs offer no reads: cache_size " in r.stderr
    assert not {"cache_size", "bloom_bits"} & {n for t in summary.optuna_study().trials for n in t.params}
    assert (out / "plots" / "slo_curve.png").is_file()
    assert sorted(p.name for p in (out / "capacity" / "rocksdb-default").iterdir())[:2] == ["1000", "125"]
    assert leftovers(work_dir) == []


@pytest.mark.release_build
def test_tune_for_capacity_scores_each_trial_by_the_rate_it_holds(tmp_path, work_dir):
    """`tune --objective capacity`: the preload places the library's defaults' capacity by a search from
    --rate (its runs logged in OUT/preload-trials/start/), and each trial is a capacity search from where it
    put them (up or down by STEP, at most TRIAL_RUNS runs of --search-duration), its score the highest rate
    held, each rate's logs in the trial's directory beside capacity.json; the capacity stage, without a
    re-validation, confirms at --duration; nothing is left in the work dir."""
    out = tmp_path / "out"
    # A space whose every point keeps the library's 64 MiB memtables: the settle after each 1 s run
    # flushes one small memtable, which a random point of small memtables and one job could not
    # always compact within that second (the trial held no rate: a test that failed 1 run in N).
    space = tmp_path / "jobs.yaml"
    space.write_text("parameters:\n  max_background_jobs: {type: int, low: 2, high: 4, "
                     "options_key: DBOptions.max_background_jobs}\n")
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "tune", "--rate", "2000", "--slo", "p99.9<=1s",
                        "--objective", "capacity", "--target-data", "16MiB", "--search-duration", "1s", "--duration",
                        "2s", "--trials", "1", "--no-starts", "--revalidate", "0", "--space", str(space),
                        "--no-mlflow", "--no-plots", "--out", str(out), "--work-dir", str(work_dir)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    placed = re.search(r"the library's defaults (held [\d,]+ ops/s|held no rate tried) at .+? \((\d) runs "
                       r"from --rate\): each trial searches from ([\d,]+) ops/s", r.stderr)
    assert placed is not None, r.stderr[-2000:]
    start = float(placed[3].replace(",", ""))
    searched = sorted(int(p.name) for p in (out / "preload-trials" / "start").iterdir() if p.is_dir())
    assert 2000 in searched and len(searched) == int(placed[2])  # from --rate, a run per rate
    kept = json.loads((out / "preload-trials" / "start" / "capacity.json").read_text())
    assert kept["start"] == pytest.approx(start, abs=0.5) and kept["probes"][0]["offered"] == 2000
    summary = Summary.load(out / "summary.json")
    assert summary.objective_metric == "held_ops_per_sec" and summary.objective_maximize
    best = summary.best
    assert best is not None
    logs = Path(best.log_dir)
    found = json.loads((logs / "capacity.json").read_text())
    offered = [p["offered"] for p in found["probes"]]
    assert offered[0] == pytest.approx(start, abs=0.5) and 1 <= len(offered) <= TRIAL_RUNS
    assert all(b / a == pytest.approx(STEP) or b / a == pytest.approx(1 / STEP) or b / a == pytest.approx(STEP ** -0.5)
               or b / a == pytest.approx(STEP ** 0.5) for a, b in zip(offered, offered[1:]))  # by STEP, or between
    assert best.metrics["held_ops_per_sec"] == (found["held"] or 0) and best.metrics["capacity_runs"] == len(offered)
    assert len((logs / "capacity.log").read_text().splitlines()) == len(offered)
    assert all(" --duration 1 " in c.read_text() for c in logs.rglob("command.command"))
    assert summary.capacity is not None and summary.capacity.placed  # the stage's first round starts there too
    assert summary.capacity.start == pytest.approx(start, abs=0.5)
    staged = list((out / "capacity").rglob("command.command"))
    assert staged and all(" --duration 2 " in c.read_text() for c in staged)
    assert leftovers(work_dir) == []


def test_the_capacity_line_says_each_bracket_and_the_ratio():
    probe = {"offered": 1.0, "held": True}
    summary = Summary.from_dict({"capacity": {"slo": "p99.9<=10ms", "metric": "p99.9_us", "bound": 10_000, "configurations": [
        {"name": "rocksdb-default", "held": 60_000, "failed": 66_000, "probes": [probe]},
        {"name": "trial 9", "held": 78_000, "failed": None, "probes": [probe]}]}})
    line = capacity_line(summary)
    assert line is not None and line.startswith("capacity at p99.9<=10ms")
    assert "rocksdb-default holds it up to 60,000 ops/s (66,000 did not)" in line
    assert "trial 9 holds it up to 78,000 ops/s (every rate tried): 1.30x the defaults' capacity" in line
    assert "(one run per offered rate" in line and line.endswith("'How long a run at a rate must be')")
    timed = capacity_line(Summary.from_dict({**summary.to_dict(), "target": {"confirm_duration_seconds": 60.0}}))
    assert timed is not None and "(one 60 s run per offered rate, each run and its settle" in timed
    assert capacity_line(Summary()) is None


class _Store:
    """The study storage's keep/stored, in memory."""

    def __init__(self) -> None:
        self.kept: dict[str, object] = {}

    def keep(self, attr: str, value: object) -> None:
        self.kept[attr] = value

    def stored(self, attr: str, kind: type) -> object:
        return self.kept.get(attr)


def _capacity_stage(tmp_path: Path, rounds: int, start: str | None = None,
                    placed: float | None = None) -> SimpleNamespace:
    """What tuner.engine._capacity.capacities reads of a study: rocksdb-default and trial 5 (the named
    ``start`` it ran as, if any), --slo, --rate, and a preloaded DB beside which the preload ``placed`` the
    defaults' capacity (ops/s; None: it placed nothing)."""
    measurement = SimpleNamespace(slo="p99.9<=10ms", capacity_rounds=rounds, rate=60_000.0, read_rate=0.0,
                                  backend="rate")
    snapshot = tmp_path / "preload" / "db"
    if placed is not None:
        snapshot.mkdir(parents=True)
        (snapshot.parent / START_FILE).write_text(json.dumps({"start": placed}))
    best = SimpleNamespace(number=5, params={"x": 1}, user_attrs={"enqueued": start} if start else {})
    return SimpleNamespace(
        parts=SimpleNamespace(config=SimpleNamespace(measurement=measurement, search=SimpleNamespace(seed=1)),
                              plan=SimpleNamespace(workload=None), out=tmp_path,
                              workload=SimpleNamespace(duration=30.0, snapshot=str(snapshot)),
                              space=SimpleNamespace(config=lambda params: Config.of({"x": params["x"]}),
                                                    config_of=Config.of)),
        snapshot=SimpleNamespace(baselines=[SimpleNamespace(name="rocksdb-default", flags={})], best=lambda: best),
        bus=SimpleNamespace(note=lambda line: None, study_stopped=lambda *a: None), store=_Store())


def test_capacity_rounds_pair_each_rounds_capacity_into_a_ratio_and_resume_where_they_stopped(tmp_path):
    """Synthetic capacities with a known answer: the defaults hold 100k, 90k and 110k ops/s in rounds
    1-3 (the host's drift), trial 5 1.3x, 1.344x and 1.273x that: the paired ratio is their geometric
    mean with an interval above 1. Every search of a round past the first starts from the same rate,
    the geometric mean of the round before's capacities, logs in round-<r>; a Ctrl-C in round 2 loses
    nothing measured: the resume runs only what is missing."""
    truth = {"rocksdb-default": [100_000, 90_000, 110_000], "trial 5": [130_000, 121_000, 140_000]}
    calls: list[tuple[str, float | None, str]] = []
    confirmed: dict[str, list[float | None]] = {name: [] for name in truth}
    stop_at: list[int] = [4]

    def measured(config, slo, log_dir, workload, say, start, held_before):
        flags = config.flags()
        name = "trial 5" if flags else "rocksdb-default"
        r = sum(1 for c in calls if c[0] == name)
        if len(calls) == stop_at[0]:
            raise KeyboardInterrupt
        calls.append((name, start, log_dir.name))
        confirmed[name].append(held_before)
        held = float(truth[name][r])
        return Capacity(slo, held, held * 1.1, ((held, RateRun({"delivered": 1.0, "p99.9_us": 5000.0}, (), "")),))

    study = _capacity_stage(tmp_path, 3)
    at: list[float] = []

    def capacity_at(start):
        at.append(start)
        return measured

    with pytest.raises(KeyboardInterrupt):
        capacities(study.parts, study.store, study.bus, study.snapshot, capacity_at)
    assert len(calls) == 4  # rounds 1 and 2 were both measured before the stop: kept
    stop_at[0] = -1
    capacities(study.parts, study.store, study.bus, study.snapshot, capacity_at)
    assert at == [60_000.0, 60_000.0]  # the study's rate, whatever round the resume starts in
    assert len(calls) == 6 and sorted(c[0] for c in calls) == ["rocksdb-default"] * 3 + ["trial 5"] * 3
    by_name = {n: [c for c in calls if c[0] == n] for n in truth}
    for name, runs in by_name.items():
        assert [start for _, start, _ in runs] == pytest.approx(
            [None, *(math.sqrt(truth["rocksdb-default"][r] * truth["trial 5"][r]) for r in (0, 1))])
        assert [d for _, _, d in runs] == [name.replace(" ", "-"), "round-2", "round-3"]
        # a miss at or below the most it held in an earlier round runs again: none in round 1, a resume included
        assert confirmed[name] == [None, truth[name][0], max(truth[name][:2])]
    report = study.store.kept["capacity"]
    assert report.rounds == 3 and report.of("trial 5").held_by_round == [130_000, 121_000, 140_000]
    assert report.of("rocksdb-default").held == 100_000 and [p.round for p in report.of("trial 5").probes] == [1, 2, 3]
    ratio = report.vs_default["trial 5"]
    expected = math.exp(statistics.fmean(math.log(b / a) for a, b in zip(*truth.values())))
    assert ratio.n == 3 and ratio.ratio == pytest.approx(expected) and ratio.verdict == "faster" and ratio.ci95[0] > 1
    line = capacity_line(Summary.from_dict({"capacity": report.to_dict()}))
    assert line is not None and "3 paired rounds" in line
    assert "one 30 s run per rate, each run and its settle, the first round from 60,000 ops/s (--rate 60000))" in line
    assert "rocksdb-default holds it up to 100,000 ops/s, the median of its rounds' (100,000, 90,000, 110,000)" in line
    assert f": {expected:.2f}x (95 % CI " in line and "3 paired rounds) the defaults' capacity, paired by round" in line


def test_the_capacity_line_says_which_rates_ran_again_and_how_many_held_then():
    """Round 2's search of the defaults missed 90,000 where round 1 held 100,000, ran it again and it held; a
    search that ran no rate again says nothing of it."""
    def probes(round_: int, *runs: tuple[float, bool]) -> list[CapacityProbe]:
        return [CapacityProbe(offered=o, value=1.0, held=h, round=round_) for o, h in runs]

    report = CapacityReport(slo="p99.9<=10ms", metric="p99.9_us", bound=10_000.0, rounds=2, duration=30.0,
                            start=100_000.0, how="--rate 100000", configurations=[CapacityOf(
                                name="rocksdb-default", held=100_000.0, held_by_round=[100_000.0, 100_000.0],
                                probes=probes(1, (100_000, True), (110_000, False))
                                + probes(2, (90_000, False), (90_000, True), (100_000, True)))])
    line = capacity_line(Summary.from_dict({"capacity": report.to_dict()})) or ""
    assert "; 1 rate missed far below what the configuration held in an earlier round ran again, 1 held then)" in line
    once = replace(report, configurations=[replace(report.configurations[0],
                                                   probes=report.configurations[0].probes[:2])])
    assert "ran again" not in (capacity_line(Summary.from_dict({"capacity": once.to_dict()})) or "")


def test_one_capacity_round_is_a_bracket_from_the_studys_rate_as_before(tmp_path):
    study = _capacity_stage(tmp_path, 1)
    starts: list[float | None] = []

    def measured(config, slo, log_dir, workload, say, start, held_before):
        starts.append(start)
        return Capacity(slo, 60_000.0, 66_000.0, ())

    capacities(study.parts, study.store, study.bus, study.snapshot, lambda start: measured)
    report = study.store.kept["capacity"]
    assert starts == [None, None] and report.vs_default == {} and report.of("trial 5").held == 60_000
    assert (report.start, report.how, report.duration) == (60_000.0, "--rate 60000", 30.0)
    line = capacity_line(Summary.from_dict({"capacity": report.to_dict()})) or ""
    assert "(one 30 s run per offered rate, each run and its settle, from 60,000 ops/s (--rate 60000); a bracket, " \
           "not an interval)" in line


def test_a_placed_capacity_stage_searches_its_first_round_near_the_placement(tmp_path):
    """The preload placed the defaults' capacity at 75,000 ops/s from --rate 60000: the first round's searches
    start near it, by STEP as a later round's do, and the capacity line says where that start came from."""
    study = _capacity_stage(tmp_path, 2, placed=75_000.0)
    starts: list[tuple[float | None, str]] = []

    def measured(config, slo, log_dir, workload, say, start, held_before):
        starts.append((start, log_dir.name))
        return Capacity(slo, 70_000.0, 80_000.0, ())

    at: list[float] = []
    capacities(study.parts, study.store, study.bus, study.snapshot, lambda start: at.append(start) or measured)
    report = study.store.kept["capacity"]
    assert at == [75_000.0] and report.placed and report.start == 75_000.0
    assert starts[:2] == [(75_000.0, "rocksdb-default"), (75_000.0, "trial-5")] or \
        starts[:2] == [(75_000.0, "trial-5"), (75_000.0, "rocksdb-default")]
    assert [s for s, _ in starts[2:]] == [pytest.approx(math.sqrt(70_000.0 * 70_000.0))] * 2  # round 2: the held ones'
    line = capacity_line(Summary.from_dict({"capacity": report.to_dict()})) or ""
    assert "the first round from 75,000 ops/s (where the preload placed rocksdb-default's capacity from --rate " \
           "60000))" in line
    unplaced = _capacity_stage(tmp_path / "unplaced", 1)
    capacities(unplaced.parts, unplaced.store, unplaced.bus, unplaced.snapshot, lambda start: measured)
    assert not unplaced.store.kept["capacity"].placed and starts[-1][0] is None  # no placement: from --rate


def test_a_best_that_is_the_defaults_start_is_measured_once(tmp_path):
    """The re-validated best is trial 0, rocksdb-default's own configuration as the search's first trial:
    its capacity is the defaults', not measured twice (an A/A comparison costing a capacity search)."""
    study = _capacity_stage(tmp_path, 1, start="rocksdb-default")
    measured: list[dict] = []

    def capacity_of(config, slo, log_dir, workload, say, start, held_before):
        measured.append(config.flags())
        return Capacity(slo, 60_000.0, 66_000.0, ())

    capacities(study.parts, study.store, study.bus, study.snapshot, lambda start: capacity_of)
    assert measured == [{}] and [c.name for c in study.store.kept["capacity"].configurations] == ["rocksdb-default"]


@pytest.mark.release_build
def test_the_plain_script_at_a_rate_searches_db_benchs_own_p99_9_within_its_time(tmp_path):
    """experiments/versus_plain_optuna/at_a_rate: the script a user would write, TPE over the service space
    scored by db_bench's P99.9 under --benchmark_write_rate_limit, stops once its time is spent; its best is
    its lowest P99.9, and its OPTIONS file sets the values it chose (a limiter only when it chose one)."""
    from experiments.versus_plain_optuna.at_a_rate import plain_options, plain_search, service_space
    from objectives.dbbench import probe
    from tuner.backends._rate import driver_beside

    db_bench = probe(None)
    space = service_space(2000, 8 * 2**20, 256 * 2**20, BACKENDS["rate"].find(TuneConfig(backend="rate", rate=2000)))
    plain = plain_search(db_bench, space, 2000, 8 * 2**20, 2.0, 12.0, 1, tmp_path)
    trials = plain["trials"]
    assert trials and plain["machine_seconds"] >= 12.0 and all(t["p99.9_us"] > 0 for t in trials)
    best = min(trials, key=lambda t: t["p99.9_us"])
    assert (plain["best"]["trial"], plain["best"]["p99.9_us"]) == (best["trial"], best["p99.9_us"])
    text = plain_options(driver_beside(db_bench.path), space, best["params"])
    assert f"max_background_jobs={best['params']['max_background_jobs']}" in text
    limiter = best["params"]["rate_limiter_bytes_per_sec"]
    assert (f"rate_limiter_bytes_per_sec={limiter}" in text) is (limiter != 0)
    assert not list(tmp_path.glob("plain-db-*"))  # each trial's copy removed
