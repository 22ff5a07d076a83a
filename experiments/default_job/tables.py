"""README's headline and first screen, made from the default job's records by `make record` (experiments/record.py):
what `make tune` as it runs now (the SLO study) answered, its capacity over RocksDB's defaults' in the paired rounds
that chose nothing and what it costs; and docs/results.md's throughput study (`make tune`'s before it): how much
faster than the defaults its answers ran in the job's paired rounds and held out in more, what a service at a rate
saw of them, and what the job answered on older code.

A job's summary.json names no commit: the one it ran from is taken as the last commit on this checkout's
first-parent line before its first trial started (as docs/results.md and experiments/default_job/README.md name
each job's). What measured it is the tuner itself
(:data:`CODE`), so its stamp names the top-level folders changed since rather than each file."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from experiments.headroom import tables as headroom
from experiments.record import commit_before, gathered, stamp
from objectives.defaults import LIBRARY
from tuner.model import DEFAULT_BASELINE
from tuner.outputs import answer as answer_now
from tuner.outputs import beyond_guard
from tuner.ranking import SERVED_MARGINS, served_beyond_words, served_over_cost
from tuner.stats import improvement
from tuner.summary import BestTrial, CapacityOf, Ratio, Summary

RESULTS = Path(__file__).with_name("results")
JOB = "default-slo-11.8.1-2026-12-07"  # `make tune` now: the SLO study, studies/default.toml
BY_HAND = Path(__file__).parents[1] / "service_level" / "results" / "tune-slo-placed-140k-11.8.1-2026-12-07"
# the throughput study, `make tune`'s until the SLO study (studies/throughput.toml): its last run as make tune ran it
THROUGHPUT, THROUGHPUT_HELD_OUT = "default-job-low-11.8.1-2026-12-06", "headroom-default-job-answer-low-11.8.1-2026-12-06"
FIRST, FIRST_HELD_OUT = "default-job-11.8.1-2026-11-29", "headroom-default-job-answer-11.8.1-2026-11-29"
RERUN, RERUN_HELD_OUT = "default-job-rerun-11.8.1-2026-12-01", "headroom-rerun-answer-11.8.1-2026-12-01"
SERVED, SERVED_HELD_OUT = "default-job-11.8.1-2026-12-04", "headroom-default-job-answer-11.8.1-2026-12-04"
STALLED, STALLED_HELD_OUT = "default-job-11.8.1-2026-12-05", "headroom-default-job-answer-11.8.1-2026-12-05"
GUARD, GUARD_HELD_OUT = "default-job-guard-11.8.1-2026-12-05", "headroom-default-job-answer-guard-11.8.1-2026-12-05"
CORES, CORES_HELD_OUT = "default-job-cores-11.8.1-2026-12-05", "headroom-default-job-answer-cores-11.8.1-2026-12-05"
CONFIG, CONFIG_HELD_OUT = "default-job-config-11.8.1-2026-12-05", "headroom-default-job-answer-config-11.8.1-2026-12-05"
TASK, TASK_HELD_OUT = "default-job-task-11.8.1-2026-12-05", "headroom-default-job-answer-task-11.8.1-2026-12-05"
SLO, SLO_HELD_OUT = "default-job-slo-11.8.1-2026-12-05", "headroom-default-job-answer-slo-11.8.1-2026-12-05"
EARLIER = ((FIRST, FIRST_HELD_OUT), (RERUN, RERUN_HELD_OUT), (SERVED, SERVED_HELD_OUT),
           (STALLED, STALLED_HELD_OUT), (GUARD, GUARD_HELD_OUT), (CORES, CORES_HELD_OUT),
           (CONFIG, CONFIG_HELD_OUT), (TASK, TASK_HELD_OUT), (SLO, SLO_HELD_OUT))  # on older code, oldest first
CODE = ("tuner", "objectives", "search_spaces", "studies/default.toml", "Makefile")  # what `make tune` runs
THROUGHPUT_CODE = ("tuner", "objectives", "search_spaces", "studies", "Makefile")  # what measured its runs
WORKLOADS = {"steady-overwrite": "steady-state random overwrites"}  # a workload as the headline words it
COMPRESSION = {"none": "no compression", "snappy": "Snappy", "lz4": "LZ4", "zstd": "ZSTD"}
WIDTH = 110  # README's lines


def fill(text: str) -> str:
    """``text`` wrapped to README's lines, a figure never parted from its unit (``0.77 s``, ``14.1 ms``)."""
    kept = re.sub(r"(\d) (s|ms|GiB|MiB|MB|%|x)(?=\W)", "\\1\u00a0\\2", text)
    wrap = textwrap.TextWrapper(WIDTH, break_long_words=False, break_on_hyphens=False)
    return wrap.fill(kept).replace("\u00a0", " ")


def listed(items: list[str], between: str = ";") -> str:
    """``a; b; and c`` (``a and b`` for two), for clauses that hold commas of their own; ``between=","``:
    ``a, b and c``."""
    if len(items) < 3:
        return " and ".join(items)
    return f"{(between + ' ').join(items[:-1])}{between if between == ';' else ''} and {items[-1]}"


def job(name: str) -> tuple[Path, Summary]:
    """The default job's record ``name`` (its folder under results/): its summary.json's path and the summary."""
    path = RESULTS / name / "summary.json"
    return path, Summary.load(path)


def held_out(name: str, best: BestTrial) -> tuple[Path, dict[str, Any], str]:
    """The headroom record ``name`` of a job's answer (``best``) beside the defaults in rounds of their own: its
    path, its contents and the answer's name there; a ValueError when it measured another configuration."""
    path, measured = headroom.record(name)
    (answer,) = (c for c in measured["configs"] if c != headroom.REFERENCE)
    if measured["configs"][answer] != best.flags or not answer.endswith(f" trial {best.trial}"):
        raise ValueError(f"{path}: {answer!r} is not trial {best.trial}'s configuration")
    return path, measured, answer


def arguments(folder: Path) -> str:
    """The tune command a job's record (``folder``) ran, as its console output's first line gives it, without --study
    and --out, which name a study and hold no setting."""
    command = (folder / "console.log").read_text().splitlines()[0]
    return re.sub(r" --(study|out) \S+", "", " ".join(command.split()))


def searched(command: str) -> str:
    """A job's arguments without those of the stages after its search (--slo, --capacity-rounds): what its
    search ran with."""
    return re.sub(r" --(slo|capacity-rounds) \S+", "", command)


def commit_of(summary: Summary) -> str | None:
    """The commit a job ran from: the last on this checkout's first-parent line before its first trial started
    (its summary names none); None without a start or such a commit."""
    started = summary.when.first_trial_started if summary.when else None
    return commit_before(started) if started else None


def gain(summary: Summary) -> Ratio:
    """A job's re-validated gain: its answer over the defaults, paired over rounds that chose nothing."""
    if summary.revalidation is None or summary.revalidation.best_vs_reference is None:
        raise ValueError(f"{summary.study}: its summary holds no re-validated gain")
    return summary.revalidation.best_vs_reference


def interval(r: Ratio) -> str:
    """``1.12x (1.01-1.23)``: a paired ratio and its 95 % interval."""
    assert r.ratio is not None and r.ci95 is not None
    return f"{r.ratio:.2f}x ({r.ci95[0]:.2f}-{r.ci95[1]:.2f})"


def answer_words(summary: Summary) -> str:
    """A job's answer by its key options: ``7 background jobs, 13.2 MB memtables x 7 merged 3 at a time, LZ4 as
    the defaults, a 317.2 MiB block cache and a 13-bit Bloom filter`` (``, with 2 subcompactions`` when not the
    defaults')."""
    assert summary.best is not None
    p, defaults = summary.best.params, summary.defaults.flags if summary.defaults else {}
    compression = COMPRESSION.get(p["compression_type"], p["compression_type"])
    an = "an" if str(p["bloom_bits"]).startswith("8") or str(p["bloom_bits"]) in ("11", "18") else "a"
    bloom = f"{an} {p['bloom_bits']}-bit Bloom filter" if p["bloom_bits"] else "no Bloom filter"
    return (f"{p['max_background_jobs']} background jobs, {p['write_buffer_size'] / 1e6:.1f} MB memtables x "
            f"{p['max_write_buffer_number']} merged {p['min_write_buffer_number_to_merge']} at a time, {compression}"
            f"{' as the defaults' if defaults.get('compression_type') == p['compression_type'] else ''}, a "
            f"{p['cache_size'] / 2**20:.1f} MiB block cache and {bloom}"
            + (f", with {p['subcompactions']} subcompactions" if int(p.get("subcompactions", 1)) !=
               int(defaults.get("subcompactions", 1)) else ""))


def where(summary: Summary, doing: str | None = None) -> str:
    """The host, day, build, defaults and target a job ran at, as the headline's first sentence words them;
    ``doing``: what its runs did to the DB (else its workload's words)."""
    assert summary.build is not None and summary.target is not None
    assert summary.when is not None and summary.when.first_trial_started and summary.host is not None
    built = "as `make db_bench` builds it" if "make db_bench" in (summary.build.details.get("source") or "") else \
        f"({summary.build.kind} build)"
    if summary.defaults is None:  # a study at a rate: open_loop, built with db_bench, opens its DB on them
        defaults = "on that version's library defaults, as a program opening a DB gets them"
    else:
        flags = summary.defaults.flags
        shape = [words for on, words in ((flags.get("level_compaction_dynamic_level_bytes") in (True, "true"),
                                          "dynamic level sizes"),
                                         (bool(flags.get("compression_type")),
                                          COMPRESSION.get(str(flags.get("compression_type")), ""))) if on]
        defaults = (f"on that version's library defaults, the deployed shape: {', '.join(shape)}"
                    if summary.defaults.mode == LIBRARY else f"on {summary.defaults.describe}")
    assert summary.target.data_bytes and summary.target.memory_bytes and (doing or summary.workload)
    what = doing or WORKLOADS.get(str(summary.workload), str(summary.workload))
    return (f"On this project's {summary.host.cores}-core machine ({summary.when.first_trial_started[:10]}, RocksDB "
            f"{summary.build.version} {built}, {defaults}), for {what} "
            f"of a {summary.target.data_bytes / 2**30:g} GiB DB within {summary.target.memory_bytes / 2**30:g} GiB")


def search_gain(summary: Summary) -> float:
    """How many times the defaults the answer's single run in the search ran (tuner.stats.improvement)."""
    default = summary.baseline(DEFAULT_BASELINE)
    assert summary.best is not None and default is not None
    metric = summary.objective_metric
    return improvement(summary.best.metrics[metric], default.metrics[metric], summary.objective_maximize)


def held_out_words(measured: dict[str, Any], answer: str) -> str:
    """How the answer's held-out runs differed from the defaults': its overwrites' speed and what it left owed."""
    def over(key: str) -> float:  # the answer's median over the defaults'
        return headroom.median_of(measured, answer, key) / headroom.median_of(measured, headroom.REFERENCE, key)

    burst = over("burst_ops_per_sec")
    speed = "as fast as" if abs(burst - 1) < 0.01 else "faster than" if burst > 1 else "slower than"
    owed = "less" if over("drain_seconds") < 1 else "more"
    return f"its overwrites ran {speed} the defaults', and it leaves {owed} compaction owed at the end of a window"


def tail(ratio: Ratio | None) -> str:
    """A served figure's ratio to the defaults' in words: ``0.80x (0.09-7.03), a tie``; higher or lower when
    its interval lies above or below 1."""
    if ratio is None or ratio.ratio is None or not ratio.ci95:
        return "no interval"
    return f"{interval(ratio)}, {side(ratio)}"


def side(ratio: Ratio) -> str:
    """Where a ratio's 95 % interval lies: ``a tie`` when it holds 1, else ``higher`` or ``lower``."""
    assert ratio.ci95 is not None
    low, high = ratio.ci95
    return "a tie" if low <= 1 <= high else "higher" if low > 1 else "lower"


def served_words(summary: Summary) -> str:
    """What a service at the job's --serve-rate saw of its best configuration beside the defaults: the rate and
    where it came from, the medians of the paired rounds' P99.99 (their ratio, within or beyond the served
    guard's margin), write stalls and write amp, and the P99.99's paired ratio with its interval."""
    s = summary.served
    assert s is not None and summary.best is not None
    answer = f"trial {summary.best.trial}"
    assert answer in s.names and DEFAULT_BASELINE in s.names

    def median(name: str, key: str) -> float:
        value = s.median(name, key)
        assert value is not None, f"{name}'s {key} was not served"
        return value

    stalls = [median(n, "stall_micros") / 1e6 for n in (answer, DEFAULT_BASELINE)]
    stalled = ("neither stalled writes" if not any(stalls) else
               f"writes stalled {stalls[0]:.2f} s against {stalls[1]:.2f} s")
    tails = [median(n, "p99.99_us") for n in (answer, DEFAULT_BASELINE)]
    share = SERVED_MARGINS["p99.99_us"][0]
    guard = "beyond" if "p99.99_us" in served_over_cost(s, answer, DEFAULT_BASELINE) else "within"
    return (f"Served open loop at {s.rate:,.0f} writes/s ({s.how.split(': ', 1)[-1]}; {s.rounds} paired rounds of "
            f"{s.duration:g} s), its P99.99 was {tails[0] / 1e3:.1f} ms against the defaults' {tails[1] / 1e3:.1f} ms "
            f"({tails[0] / tails[1]:.2f}x, {guard} the served guard's {1 + share:g}x; paired by round "
            f"{tail(s.vs_default.get('p99.99_us'))}), its "
            f"write amp {median(answer, 'write_amp'):.2f} against {median(DEFAULT_BASELINE, 'write_amp'):.2f}, and "
            f"{stalled} (medians)")


def slo_words(slo: str) -> str:
    """An SLO as a sentence says it: ``p99.9<=10ms`` is ``a P99.9 of 10 ms``."""
    return re.sub(r"^p([\d.]+)<=(\d+)(\w+)$", r"a P\1 of \2 \3", slo)


def capacity_words(summary: Summary) -> str:
    """How far its best and the defaults held the job's --slo, searched open loop in paired rounds: the medians of
    their rounds' capacities and their paired ratio, lower, higher or a tie; empty when the job measured none."""
    cap = summary.capacity
    if cap is None or summary.best is None:
        return ""
    answer = f"trial {summary.best.trial}"
    best, default, ratio = cap.of(answer), cap.of(DEFAULT_BASELINE), cap.vs_default.get(answer)
    assert best is not None and default is not None and best.held and default.held
    return (f"At {slo_words(cap.slo)} it held {best.held:,.0f} ops/s against the defaults' {default.held:,.0f} (the medians of "
            f"{cap.rounds} paired rounds of capacity searches open loop, one {cap.duration:g} s run per rate; paired "
            f"by round {tail(ratio)})")


def now_words(summary: Summary) -> str:
    """What the tuner as it is now answers on a job's measurements, when that is not what the job answered
    (the answer's rule changed since: the cost guard); empty when it is the same."""
    now, then = answer_now(replace(summary, answer=None)), summary.answer
    if now is None or then is None or (now.recommend, now.name) == (then.recommend, then.name):
        return ""
    return (f" The tuner as it is now answers {'use' if now.recommend == 'best' else 'keep'} {now.name} on the same "
            f"measurements: {now.why}.")


def earlier_words() -> tuple[str, list[str]]:
    """The job's answers on older code, each with its gain in its paired rounds and held out; and the stamps
    of the records read, one line for the jobs' and one for the held-out rounds' (:func:`gathered`)."""
    words, jobs, helds = [], [], []
    for name, held_name in EARLIER:
        path, summary = job(name)
        assert summary.best is not None and summary.when is not None and summary.when.first_trial_started
        held_path, held, answer = held_out(held_name, summary.best)
        kept = Ratio.from_dict(held["over_default"][answer])
        started = summary.when.first_trial_started
        said = f"{interval(gain(summary))} in its paired rounds and {interval(kept)} held out in {held['rounds']} more"
        used = summary.answer is None or summary.answer.recommend == "best"
        words.append(f"trial {summary.best.trial} on {started[:10]}, {said}" if used else
                     f"on {started[:10]} kept the defaults over its best, trial {summary.best.trial}, {said}")
        jobs.append((path, commit_of(summary), started))
        helds.append((held_path, held["commit"], held["when"]))
    return ("On older code the same job answered " + listed(words) + ".",
            [gathered(jobs, THROUGHPUT_CODE), gathered(helds, headroom.CODE)])


def passed_over(folder: Path, summary: Summary) -> list[str]:
    """The finalists other than its best that the job's re-validation served and passed over, in the order served,
    each with what it served beyond the guard: from the summary's served_guard (ranking.served_beyond_words), or, in
    a summary from before it kept them, from the job's console output in its record's ``folder``; a median P99.99 in brief:
    ``trial 105 (61.6 ms against 7.9 ms, 7.80x)``. Empty when it served only its best."""
    select = summary.revalidation.select if summary.revalidation else None
    assert summary.best is not None
    kept = {r.names[-1]: r for r in summary.served_guard}
    log = "" if kept else (folder / "console.log").read_text()
    words = []
    for name in (n for n in (select.served_out if select else []) if n != f"trial {summary.best.trial}"):
        if kept:
            said = "; ".join(served_beyond_words(kept[name], name, DEFAULT_BASELINE))
        else:
            found = re.search(rf"^re-validation: {name} served at [\d,]+ writes/s beyond the served guard: (.+?): "
                              "(?:the next finalist|no finalist)", log, re.MULTILINE)
            assert found is not None, f"{folder}/console.log: no served line for {name}"
            said = found[1]
        words.append(f"{name} ({re.sub(BRIEF, BRIEFLY, said)})")
    return words


def costly_words(folder: Path, summary: Summary) -> list[str]:
    """The finalists that led the selection's rounds but that the cost guard passed over (those beyond it that ran
    faster there than the winner), each with its gain there and what it cost beyond the guard, from the job's console
    output in its record's ``folder``: ``trial 68 (1.16x the defaults there), passed over for its write stalls beyond
    the cost guard``. Empty when none was."""
    select = summary.revalidation.select if summary.revalidation else None
    if select is None or not select.costly or select.winner is None:
        return []
    log, words, won = (folder / "console.log").read_text(), [], select.vs_reference[select.winner].ratio or 0.0
    for name in (n for n in select.costly if (select.vs_reference[n].ratio or 0.0) > won):
        found = re.search(rf"^re-validation: {name} led the selection's rounds but cost more than {DEFAULT_BASELINE} in "
                          r"them beyond the cost guard \((.+?)\)", log, re.MULTILINE)
        assert found is not None, f"{folder}/console.log: no cost guard line for {name}"
        ratio = select.vs_reference[name].ratio
        words.append(f"{name} ({ratio:.2f}x the defaults there), passed over for its {found[1]} beyond the cost guard")
    return words


BRIEF, BRIEFLY = r"^P99\.99 ([\d.]+ ms against [\d.]+ ms) \(([\d.]+x)\), .*$", r"\1, \2"  # a served P99.99, in brief


def throughput() -> str:
    """docs/results.md's throughput study (`make tune`'s until the SLO study): its last run's answer (or the best it
    kept the defaults over, and why), its gain in the job's paired rounds and held out, what a service at a rate saw
    of it and of the other finalists served, and the job's answers on older code; then the stamps of the records it
    reads."""
    job_path, summary = job(THROUGHPUT)
    assert summary.best is not None and summary.answer is not None
    held_path, held, answer = held_out(THROUGHPUT_HELD_OUT, summary.best)
    first = gain(summary)
    kept = Ratio.from_dict(held["over_default"][answer])
    assert first.ratio is not None and first.ci95 is not None and summary.when is not None
    started = summary.when.first_trial_started
    assert started
    tie = first.verdict == "tie"
    lead = (f"`make tune` answered trial {summary.best.trial} ({answer_words(summary)}), which ran **{first.ratio:.2f}x** "
            "RocksDB's defaults" if summary.answer.recommend == "best" else
            f"`make tune` kept RocksDB's defaults: its best tuned configuration, trial {summary.best.trial} "
            f"({answer_words(summary)}), ran **{first.ratio:.2f}x** them{', a tie,' if tie else ''}")
    best = f"trial {summary.best.trial}"
    over = beyond_guard(summary, best) if summary.answer.recommend == "reference" else []
    costs = [o for o in over if not o.startswith("served at")]
    guarded = (f" It kept the defaults for {best}'s tail{' and for ' + '; '.join(costs) if costs else ''}."
               if len(costs) < len(over) else
               f" It kept the defaults for what {best} cost: {'; '.join(costs)}, beyond the cost guard." if costs else
               f" It kept the defaults: {summary.answer.why}." if summary.answer.recommend == "reference" else "")
    others = passed_over(job_path.parent, summary)
    select = summary.revalidation.select if summary.revalidation else None
    served_too = ("" if not others else
                  " The re-validation serves its finalists one at a time, fastest first, to answer the first within "
                  f"the guard: its other {len(others)} were beyond it too, {listed(others, ',')}."
                  if select is not None and best in select.served_out else
                  f" Before {best} the re-validation served {listed(others, ',')}, each beyond the guard.")
    costly = costly_words(job_path.parent, summary)
    led = f" The selection's rounds had led with {listed(costly)}." if costly else ""
    earlier, earlier_stamps = earlier_words()
    capacity = f" {capacity_words(summary)}." if summary.capacity is not None else ""
    text = (f"{where(summary)}, {lead} at the target (95 % CI {first.ci95[0]:.2f}-{first.ci95[1]:.2f}, {first.n} "
            f"paired rounds that chose nothing); its search's single runs had said {search_gain(summary):.2f}x. "
            f"Held out in {held['rounds']} more rounds it ran {interval(kept)}"
            f"{', a tie' if kept.verdict == 'tie' else ''}: {held_out_words(held, answer)}. "
            f"{served_words(summary)}.{capacity}{led}{guarded}{served_too}{now_words(summary)} {earlier}")
    stamps = [stamp(job_path, commit_of(summary), started, THROUGHPUT_CODE, brief=True),
              stamp(held_path, held["commit"], held["when"], headroom.CODE), *earlier_stamps]
    return "\n".join([fill(text), "", *stamps])


SERVICE = {  # an option of the service space as the headline words its value (the memtables are worded together)
    "max_background_jobs": lambda v: f"{v} background jobs",
    "subcompactions": lambda v: f"{v} subcompactions",
    "compression_type": lambda v: COMPRESSION.get(str(v), str(v)),
    "compression_level": lambda v: f"level {v}",
    "use_direct_io_for_flush_and_compaction": lambda v: "flush and compaction past the page cache (direct I/O)"
    if str(v).lower() == "true" else "flush and compaction through the page cache",
    "level0_file_num_compaction_trigger": lambda v: f"L0 compaction at {v} files",
    "level0_slowdown_writes_trigger": lambda v: f"writes slowed at {v} L0 files",
    "level0_stop_writes_trigger": lambda v: f"stopped at {v}",
    "soft_pending_compaction_bytes_limit": lambda v: f"slowed at {float(v) / 2**30:.1f} GiB of compaction debt",
    "delayed_write_rate": lambda v: f"to {float(v) / 2**20:.1f} MiB/s when slowed",
    "rate_limiter_bytes_per_sec": lambda v: f"flush and compaction limited to {float(v) / 2**20:.0f} MiB/s"
    if float(v) else "no rate limit on flush and compaction",
}
MEMTABLES = ("write_buffer_size", "max_write_buffer_number", "min_write_buffer_number_to_merge")


def service_words(summary: Summary) -> str:
    """An SLO study's best by what it sets apart from the defaults' values (the study's explanation): its memtables
    beside theirs, then each other option it changed, in the space's order."""
    assert summary.best is not None and summary.explanation is not None
    p, defaults = summary.best.params, {o.param: o.default for o in summary.explanation.options}
    size, number, merged = (p[k] for k in MEMTABLES)
    their_size, their_number, their_merged = (defaults[k] for k in MEMTABLES)
    merge = f", merged {merged} at a time (theirs {their_merged})" if str(merged) != str(their_merged) else ""
    changed = [SERVICE[k](v) for k, v in p.items()
               if k in SERVICE and str(v).lower() != str(defaults.get(k)).lower()]
    return (f"{number} memtables of {float(size) / 2**20:.1f} MiB where the defaults keep {their_number} of "
            f"{float(their_size) / 2**20:.1f} MiB{merge}" + (f"; {', '.join(changed)}" if changed else ""))


def held_words(name: str, summary: Summary) -> str:
    """What a configuration's held run in an SLO study's search cost: ``write amp 2.50, 1.42 GiB on disk after, no
    write stall``."""
    if name == DEFAULT_BASELINE:
        baseline = summary.baseline(DEFAULT_BASELINE)
        assert baseline is not None
        m = baseline.metrics
    else:
        assert summary.best is not None
        m = summary.best.metrics
    stall = m.get("stall_micros") or 0.0
    return (f"write amp {m['write_amp']:.2f}, {m['sst_bytes'] / 2**30:.2f} GiB on disk after, "
            + ("no write stall" if not stall else f"writes stalled {stall / 1e6:.2f} s"))


def capacities(summary: Summary) -> tuple[str, float, float, Ratio]:
    """An SLO study's best (its name) and the defaults' capacities in its capacity stage (medians of the rounds)
    and their paired ratio."""
    cap, best = summary.capacity, summary.best
    assert cap is not None and best is not None
    name = f"trial {best.trial}"
    ours, theirs, ratio = cap.of(name), cap.of(DEFAULT_BASELINE), cap.vs_default.get(name)
    assert ours is not None and theirs is not None and ours.held and theirs.held and ratio is not None
    return name, ours.held, theirs.held, ratio


def headline() -> str:
    """README's headline: `make tune`'s answer as it runs now (the SLO study: capacity at a P99.9 bound, open loop),
    or the best it kept the defaults over: its capacity over the defaults' in the capacity stage's paired rounds,
    what its search had said, what it costs at its held rate beside the defaults, and the throughput study that
    was the default before; then the stamps of the records it reads."""
    job_path, summary = job(JOB)
    assert summary.answer is not None and summary.capacity is not None and summary.when is not None
    started = summary.when.first_trial_started
    assert started
    cap = summary.capacity
    name, ours, theirs, ratio = capacities(summary)
    assert ratio.ratio is not None and ratio.ci95 is not None and ratio.p_value is not None
    rounds = {c: ", ".join(f"{h:,.0f}" if h else "none held" for h in (cap.of(c) or CapacityOf()).held_by_round)
              for c in (name, DEFAULT_BASELINE)}
    said = (f"held **{ratio.ratio:.2f}x** the defaults' capacity at {slo_words(cap.slo)} (95 % CI {ratio.ci95[0]:.2f}-"
            f"{ratio.ci95[1]:.2f}, p = {ratio.p_value:.3f}, {ratio.n} paired rounds of capacity searches that chose "
            f"nothing, one {cap.duration:g} s run per rate and its settle): {ours:,.0f} ops/s against their "
            f"{theirs:,.0f}, the medians of its rounds' ({rounds[name]}) and theirs ({rounds[DEFAULT_BASELINE]})")
    lead = (f"`make tune` answered {name} ({service_words(summary)}), which {said}"
            if summary.answer.recommend == "best" else
            f"`make tune` kept RocksDB's defaults ({summary.answer.why}): its best, {name} "
            f"({service_words(summary)}), {said}")
    default = summary.baseline(DEFAULT_BASELINE)
    assert default is not None and summary.best is not None and summary.target is not None and summary.budget_seconds
    searched_ = (f"Its search ({summary.trials.complete} trials in {summary.budget_seconds / 60:.0f} minutes of runs, "
                 f"each a capacity search of {summary.target.duration_seconds:g} s runs) had said "
                 f"{search_gain(summary):.2f}x: {summary.best.metrics['held_ops_per_sec']:,.0f} ops/s held against "
                 f"the defaults' {default.metrics['held_ops_per_sec']:,.0f}; at those held rates {held_words(name, summary)}, "
                 f"against the defaults' {held_words(DEFAULT_BASELINE, summary)}.")
    t_path, t = job(THROUGHPUT)
    assert t.when is not None and t.when.first_trial_started and t.best is not None
    t_name, _, _, t_ratio = capacities(t)
    before = (f"The throughput study, `make tune`'s before it (`studies/throughput.toml`: the sustained ops/s of one "
              f"writer at full speed, closed loop), kept the defaults on {t.when.first_trial_started[:10]}: its fastest "
              f"configuration, {t_name}, ran {interval(gain(t))} them at full speed but held {interval(t_ratio)} their "
              f"capacity at {slo_words(t.capacity.slo if t.capacity else cap.slo)}.")
    doing = where(summary, "random overwrites offered open loop")
    text = f"{doing}, flush and compaction at nice 19, {lead}. {searched_} {before}"
    return "\n".join([fill(text), "", stamp(job_path, commit_of(summary), started, CODE, brief=True),
                      stamp(t_path, commit_of(t), t.when.first_trial_started, THROUGHPUT_CODE, brief=True)])


def slo_output() -> str:
    """docs/results.md's SLO study as `make tune` printed it: its closing table, answer and capacity lines from the
    record's console output (the last report in it: the re-report by the code that answers from the capacity
    stage), as a block of output; then the record's stamp."""
    job_path, summary = job(JOB)
    assert summary.when is not None and summary.when.first_trial_started
    lines = (job_path.parent / "console.log").read_text().splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("configuration "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("capacity at "))
    block = ["```", *lines[start:end + 1], "```"]
    return "\n".join([*block, "", stamp(job_path, commit_of(summary), summary.when.first_trial_started, CODE,
                                         brief=True)])


def expect() -> str:
    """README's first screen: what `make tune` (the SLO study) answered on this project's host as it runs now, and
    the same study's arguments run by hand the day before, the defaults' capacity in each (the host's as much as
    RocksDB's), how to read a tie and what the answer asks of a service; the stamps of the records."""
    runs = [(BY_HAND / "summary.json", Summary.load(BY_HAND / "summary.json")), job(JOB)]
    said, records, held = [], [], []
    for path, summary in runs:
        assert summary.when is not None and summary.when.first_trial_started and summary.capacity is not None
        name, ours, theirs, ratio = capacities(summary)
        said.append(f"{interval(ratio)} on {summary.when.first_trial_started[:10]}")
        held.append(theirs)
        records.append((path, commit_of(summary), summary.when.first_trial_started))
    now_path, now = runs[-1]
    assert now.host is not None and now.build is not None and now.answer is not None and now.capacity is not None
    name, ours, theirs, ratio = capacities(now)
    days = [s.when.first_trial_started[:10] for _, s in runs if s.when and s.when.first_trial_started]
    earlier = "earlier the same day" if days[0] == days[-1] else f"on {days[0]}"
    default = now.baseline(DEFAULT_BASELINE)
    assert default is not None and now.best is not None
    amp, disk = (now.best.metrics[k] / default.metrics[k] for k in ("write_amp", "sst_bytes"))
    answered = (f"`make tune` answered a configuration that held {interval(ratio)} the defaults' capacity at "
                f"{slo_words(now.capacity.slo)}, the most writes per second served with every request's latency "
                f"timed from when it was due, at {amp:.2f}x their write amp and {disk:.2f}x their disk"
                if now.answer.recommend == "best" else
                f"`make tune` kept RocksDB's defaults ({now.answer.why})")
    text = (f"**What to expect.** On this project's {now.host.cores}-core virtual machine (RocksDB {now.build.version}, "
            f"on {now.when.first_trial_started[:10] if now.when and now.when.first_trial_started else ''}), {answered}. "
            f"Its capacity over the defaults' comes from {ratio.n} paired rounds that chose nothing; the same study's "
            f"arguments run by hand {earlier} answered {said[0].split(' on ')[0]}. The defaults themselves held "
            f"{min(held):,.0f}-{max(held):,.0f} ops/s across the two, on machines of the same kind: a host's capacity "
            "is the host's as much as RocksDB's, and the study measures yours. A ratio whose interval holds 1 is a "
            "tie: the rounds could not tell the answer from the defaults, the answer line then keeps them "
            "(`OPTIONS.ini` holds RocksDB's defaults) and says why. The `runs:` line says what the figures ask of "
            "your service: its own flush and compaction at the lowest CPU priority, as the study ran them. Another "
            "host, version or workload moves these figures.")
    return "\n".join([fill(text), "", gathered(records, CODE)])


TABLES: dict[str, Callable[[], str]] = {"headline": headline, "expect": expect,
                                         "throughput": throughput, "slo_output": slo_output}  # block -> generator
