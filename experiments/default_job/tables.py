"""README's headline, made from the default job's records by `make record` (experiments/record.py): what
`make tune` answered on 2026-11-29 and how much faster than RocksDB's defaults it ran, in the job's paired
rounds and held out in more, and what the same job answered when run again on 2026-12-01.

A job's summary.json names no commit: the one it ran from is taken as the last commit on this checkout's
first-parent line before its first trial started (799c44e and 1c08402 for the two jobs, as docs/results.md
and experiments/default_job/README.md name them). What measured it is the tuner itself (:data:`CODE`), so its
stamp names the top-level folders changed since rather than each file."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.headroom import tables as headroom
from experiments.record import commit_before, stamp
from objectives.defaults import LIBRARY
from tuner.model import DEFAULT_BASELINE
from tuner.stats import improvement
from tuner.summary import BestTrial, Ratio, Summary

RESULTS = Path(__file__).with_name("results")
JOB, JOB_HELD_OUT = "default-job-11.8.1-2026-11-29", "headroom-default-job-answer-11.8.1-2026-11-29"
RERUN, RERUN_HELD_OUT = "default-job-rerun-11.8.1-2026-12-01", "headroom-rerun-answer-11.8.1-2026-12-01"
CODE = ("tuner", "objectives", "search_spaces", "studies/default.toml", "Makefile")  # what `make tune` runs
WORKLOADS = {"steady-overwrite": "steady-state random overwrites"}  # a workload as the headline words it
COMPRESSION = {"none": "no compression", "snappy": "Snappy", "lz4": "LZ4", "zstd": "ZSTD"}
WIDTH = 110  # README's lines


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
    the defaults, a 317.2 MiB block cache and a 13-bit Bloom filter``."""
    assert summary.best is not None
    p, defaults = summary.best.params, summary.defaults.flags if summary.defaults else {}
    compression = COMPRESSION.get(p["compression_type"], p["compression_type"])
    bloom = f"a {p['bloom_bits']}-bit Bloom filter" if p["bloom_bits"] else "no Bloom filter"
    return (f"{p['max_background_jobs']} background jobs, {p['write_buffer_size'] / 1e6:.1f} MB memtables x "
            f"{p['max_write_buffer_number']} merged {p['min_write_buffer_number_to_merge']} at a time, {compression}"
            f"{' as the defaults' if defaults.get('compression_type') == p['compression_type'] else ''}, a "
            f"{p['cache_size'] / 2**20:.1f} MiB block cache and {bloom}")


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


def rerun_words(first: Ratio, again: Ratio, held: Ratio, rounds: int) -> str:
    """What the rerun's gains say beside the first job's: of the same size when each lies in the other's interval."""
    assert first.ratio is not None and again.ratio is not None and first.ci95 and again.ci95
    same = first.ci95[0] <= again.ratio <= first.ci95[1] and again.ci95[0] <= first.ratio <= again.ci95[1]
    size = "a gain of the same size" if same else "a smaller gain" if again.ratio < first.ratio else "a larger gain"
    if held.verdict == "tie":
        return f"{size} that {rounds} rounds could not tell from a tie"
    return f"{size}, held out {'too' if held.verdict == 'faster' else 'slower than the defaults'}"


def headline() -> str:
    """README's headline: `make tune`'s answer of 2026-11-29, its gain in the job's paired rounds and held out,
    and the same job's answer run again on 2026-12-01; then the stamps of the four records it reads."""
    job_path, summary = job(JOB)
    rerun_path, rerun = job(RERUN)
    assert summary.best is not None and rerun.best is not None
    if (rerun.workload, rerun.space, rerun.seed, rerun.target) != (summary.workload, summary.space, summary.seed,
                                                                   summary.target):
        raise ValueError(f"{rerun_path}: not the job of {job_path} run again")
    held_path, held, answer = held_out(JOB_HELD_OUT, summary.best)
    rerun_held_path, rerun_held, rerun_answer = held_out(RERUN_HELD_OUT, rerun.best)
    first, again = gain(summary), gain(rerun)
    kept, kept_again = (Ratio.from_dict(m["over_default"][a]) for m, a in ((held, answer), (rerun_held, rerun_answer)))
    assert first.ratio is not None and first.ci95 is not None
    started, started_again = (s.when.first_trial_started if s.when else None for s in (summary, rerun))
    assert started and started_again
    other = "another configuration" if rerun.best.params != summary.best.params else "the same configuration"
    text = (f"{where(summary)}, `make tune`'s answer ({answer_words(summary)}) ran **{first.ratio:.2f}x** RocksDB's "
            f"defaults at the target (95 % CI {first.ci95[0]:.2f}-{first.ci95[1]:.2f}, {first.n} paired rounds that "
            f"chose nothing); its search's single runs had said {search_gain(summary):.2f}x. Held out in "
            f"{held['rounds']} more rounds it ran {interval(kept)}{', a tie' if kept.verdict == 'tie' else ''}: "
            f"{held_out_words(held, answer)}. Run again on {started_again[:10]}, the same job "
            f"answered {other}, trial {rerun.best.trial}, which ran {interval(again)} the defaults in its paired "
            f"rounds and {interval(kept_again)} held out in {rerun_held['rounds']} more, "
            f"{rerun_words(first, again, kept_again, rerun_held['rounds'])}.")
    stamps = [stamp(job_path, commit_of(summary), started, CODE, brief=True),
              stamp(held_path, held["commit"], held["when"], headroom.CODE),
              stamp(rerun_path, commit_of(rerun), started_again, CODE, brief=True),
              stamp(rerun_held_path, rerun_held["commit"], rerun_held["when"], headroom.CODE)]
    wrap = textwrap.TextWrapper(WIDTH, break_long_words=False, break_on_hyphens=False)
    return "\n".join([wrap.fill(text), "", *stamps])


def expect() -> str:
    """README's first screen: what `make tune` answered on this project's host in the two runs of its job, and
    how to read a tie; the stamps of the two records."""
    job_path, summary = job(JOB)
    rerun_path, rerun = job(RERUN)
    first, again = gain(summary), gain(rerun)
    assert summary.host is not None and summary.build is not None and first.ci95 and again.ci95
    started, started_again = (s.when.first_trial_started if s.when else None for s in (summary, rerun))
    assert started and started_again
    ties = sum(r.verdict == "tie" for r in (first, again))
    text = (f"**What to expect.** On this project's {summary.host.cores}-core virtual machine (RocksDB "
            f"{summary.build.version}), `make tune` answered {first.ratio:.2f}x the defaults' sustained ops/s on "
            f"{started[:10]} (95 % CI {first.ci95[0]:.2f}-{first.ci95[1]:.2f}) and {again.ratio:.2f}x on "
            f"{started_again[:10]} ({again.ci95[0]:.2f}-{again.ci95[1]:.2f}), each in paired rounds beside the "
            f"defaults that chose nothing{f'; {ties} of the two a tie' if ties else ''}. A gain whose interval holds 1 "
            "is a tie: the rounds could not tell the answer from the defaults, the answer line then keeps them, and "
            "its `resolution:` line says how many rounds would tell. Another host, version or workload moves these "
            "figures: the study measures yours.")
    wrap = textwrap.TextWrapper(WIDTH, break_long_words=False, break_on_hyphens=False)
    return "\n".join([wrap.fill(text), "", stamp(job_path, commit_of(summary), started, CODE, brief=True),
                      stamp(rerun_path, commit_of(rerun), started_again, CODE, brief=True)])


TABLES: dict[str, Callable[[], str]] = {"headline": headline, "expect": expect}  # block name -> its generator
