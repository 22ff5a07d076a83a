"""README's headline, made from the default job's records by `make record` (experiments/record.py): what
`make tune` as it runs now answered, how much faster than RocksDB's defaults it ran in the job's paired rounds
and held out in more, what a service at a rate saw of it, and what the job answered on older code.

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
from tuner.summary import BestTrial, Ratio, Summary

RESULTS = Path(__file__).with_name("results")
JOB, JOB_HELD_OUT = "default-job-low-11.8.1-2026-12-06", "headroom-default-job-answer-low-11.8.1-2026-12-06"  # now
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


def where(summary: Summary) -> str:
    """The host, day, build, defaults and target a job ran at, as the headline's first sentence words them."""
    assert summary.build is not None and summary.defaults is not None and summary.target is not None
    assert summary.when is not None and summary.when.first_trial_started and summary.host is not None
    built = "as `make db_bench` builds it" if "make db_bench" in (summary.build.details.get("source") or "") else \
        f"({summary.build.kind} build)"
    flags = summary.defaults.flags
    shape = [words for on, words in ((flags.get("level_compaction_dynamic_level_bytes") in (True, "true"),
                                      "dynamic level sizes"),
                                     (bool(flags.get("compression_type")),
                                      COMPRESSION.get(str(flags.get("compression_type")), ""))) if on]
    defaults = (f"on that version's library defaults, the deployed shape: {', '.join(shape)}"
                if summary.defaults.mode == LIBRARY else f"on {summary.defaults.describe}")
    assert summary.target.data_bytes and summary.target.memory_bytes and summary.workload
    return (f"On this project's {summary.host.cores}-core machine ({summary.when.first_trial_started[:10]}, RocksDB "
            f"{summary.build.version} {built}, {defaults}), for {WORKLOADS.get(summary.workload, summary.workload)} "
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
            [gathered(jobs, CODE), gathered(helds, headroom.CODE)])


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


def headline() -> str:
    """README's headline: `make tune`'s answer as it runs now (or the best it kept the defaults over, and why), its
    gain in the job's paired rounds and held out, what a service at a rate saw of it and of the other finalists
    served, and the job's answers on older code; then the stamps of the records it reads."""
    job_path, summary = job(JOB)
    assert summary.best is not None and summary.answer is not None
    held_path, held, answer = held_out(JOB_HELD_OUT, summary.best)
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
    stamps = [stamp(job_path, commit_of(summary), started, CODE, brief=True),
              stamp(held_path, held["commit"], held["when"], headroom.CODE), *earlier_stamps]
    return "\n".join([fill(text), "", *stamps])


def expect() -> str:
    """README's first screen: what `make tune` answered on this project's host as it runs now (and, when it kept the
    defaults, what its fastest configuration would have cost), what the job's best ran in each run on older code,
    what that says for a host like it, and how to read a tie; the stamps of the records."""
    runs = [job(name) for name in (*(n for n, _ in EARLIER), JOB)]
    said, records, ties, rates = [], [], 0, []
    for path, summary in runs:
        r, baseline = gain(summary), summary.baseline(DEFAULT_BASELINE)
        assert baseline is not None
        if searched(arguments(path.parent)) == searched(arguments(runs[-1][0].parent)):
            rates.append(baseline.metrics[summary.objective_metric])
        assert summary.when is not None and summary.when.first_trial_started and r.ci95
        started = summary.when.first_trial_started
        said.append((f"{r.ratio:.2f}x", started[:10], f"({r.ci95[0]:.2f}-{r.ci95[1]:.2f})"))
        records.append((path, commit_of(summary), started))
        ties += r.verdict == "tie"
    now_path, now = runs[-1]
    assert now.host is not None and now.build is not None and now.answer is not None and now.revalidation
    ratio, day, interval_ = said[-1]
    if now.answer.recommend == "reference" and now.revalidation.best:
        best, served = now.revalidation.best, now.served
        costs = [o for o in beyond_guard(now, best) if not o.startswith("served at")]
        others = passed_over(now_path.parent, now)
        worse = ""
        if served is not None and "p99.99_us" in served_over_cost(served, best, DEFAULT_BASELINE):
            a, b = (served.median(n, "p99.99_us") or 0.0 for n in (best, DEFAULT_BASELINE))
            worse = (f"served open loop at {served.rate:,.0f} writes/s its P99.99 was {a / b:.2f}x theirs ({a / 1e3:.1f} "
                    f"ms against {b / 1e3:.1f} ms, medians of {served.rounds} paired rounds), beyond the served guard"
                    + (f", and so was each of its other {len(others)} finalists'" if others else ""))
        why = [*([worse] if worse else []), *([f"it cost more than the cost guard allows: {'; '.join(costs)}"]
                                           if costs else [])]
        lead = (f"`make tune` kept RocksDB's defaults on {day}: its fastest tuned configuration ran {ratio} their "
                f"sustained ops/s {interval_}, but {'; and '.join(why) or now.answer.why}")
    else:
        rows = {c.name: c for c in now.revalidation.configurations if c.failed is None}
        answered, defaults = rows[now.answer.name], rows[DEFAULT_BASELINE]
        disk, amp = ((answered.median(k) or 0.0) / (defaults.median(k) or 1.0) for k in ("db_size_bytes", "write_amp"))
        cap = now.capacity.vs_default.get(now.answer.name) if now.capacity is not None else None
        held = f", and held {interval(cap)} their capacity at {slo_words(now.capacity.slo)}, " \
            f"{side(cap)}" if now.capacity is not None and cap is not None else ""
        lead = (f"`make tune`'s answer ran {ratio} the defaults' sustained ops/s on {day} {interval_}, at {disk:.2f}x "
                f"their disk and {amp:.2f}x their bytes written{held}")
    older = listed([f"{r} on {d} {i}" for r, d, i in said[:-1]], ",")
    gains = sorted(float(r.rstrip("x")) for r, _, _ in said)
    text = (f"**What to expect.** On this project's {now.host.cores}-core virtual machine (RocksDB "
            f"{now.build.version}), {lead}. On older code the same job's best ran {older}; each figure comes from "
            f"paired rounds beside the defaults that chose nothing{f', {ties} of the {len(said)} a tie' if ties else ''}; "
            f"the defaults themselves ran {min(rates):,.0f}-{max(rates):,.0f} ops/s in the searches of the {len(rates)} "
            "runs whose search had its arguments as now, on machines of the same kind. "
            f"So on a host like this one a configuration {gains[0]:.2f}x-{gains[-1]:.2f}x faster than the defaults at "
            "full speed is there to find, and what it costs a service at a fixed rate decides whether the tuner "
            "recommends it. A gain whose interval holds 1 is a tie: the rounds could not tell the answer from the "
            "defaults, the answer line then keeps them, and its `resolution:` line says how many rounds would tell. "
            "When the answer keeps the defaults there is nothing to change: `OPTIONS.ini` holds RocksDB's defaults, "
            "the answer line says why, and the `cost of` line beneath it what the best tuned configuration would "
            "cost. Under the table the `served at` line says what a service at a fixed rate would see of the answer "
            f"beside the defaults; an answer that is faster but serves a tail there more than "
            f"{1 + SERVED_MARGINS['p99.99_us'][0]:g}x the defaults' (or stalls there), holds measurably less of a "
            "rate than they do at its P99.9 bound (the `capacity at` line), or costs more than the cost guard allows, "
            "is not recommended (`--any-cost` recommends the fastest). Another host, version or "
            "workload moves these figures: the study measures yours.")
    return "\n".join([fill(text), "", gathered(records, CODE)])


TABLES: dict[str, Callable[[], str]] = {"headline": headline, "expect": expect}  # block name -> its generator
