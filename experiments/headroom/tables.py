"""The headroom tables docs/results.md and experiments/headroom/README.md quote, made from this experiment's
records by `make record` (experiments/record.py): per configuration the medians of its rounds (ops/s, the
overwrites' burst, the drain, write amp) and its ratio to the defaults, paired by round."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from experiments.record import stamp
from tuner.summary import Ratio

RESULTS = Path(__file__).with_name("results")
REFERENCE = "rocksdb-default"
# What measured a headroom record: the script, the held-out rounds it runs and one db_bench run's measurement.
CODE = ("experiments/headroom/headroom.py", "experiments/held_out.py", "objectives/measurement.py", "objectives/runner.py")
# The configurations of configs.json (the answers found at the default job's target and what lies beyond the
# space) as the tables name them.
BEYOND = {REFERENCE: REFERENCE, "universal": "universal compaction (beyond the space)",
          "plain seed 1 + L0 trigger 8": "the plain script's seed-1 answer + L0 at 8 files",
          "plain seed 1": "the plain script's seed-1 answer",
          "plain seed 1 + universal": "the plain script's seed-1 answer + universal",
          "default job trial 47": "the default job's re-run answer (trial 47)",
          "L0 trigger 8": "L0 at 8 files (beyond the space)"}
EIGHT_GIB_ANSWER = {REFERENCE: REFERENCE, "plain seed 1 + universal": "the plain script's seed-1 answer + universal",
                    "default job 8 GiB trial 101 + universal": "trial 101 + universal",
                    "default job 8 GiB trial 101": "trial 101, the 8 GiB job's answer"}


def record(name: str) -> tuple[Path, dict[str, Any]]:
    """The headroom record ``name`` (its file name without ``.json``): its path and its contents."""
    path = RESULTS / f"{name}.json"
    return path, json.loads(path.read_text())


def median_of(measured: dict[str, Any], config: str, key: str) -> float:
    """The median of ``key`` over a headroom record's runs of ``config`` (its failed runs, empty, left out)."""
    return statistics.median(m[key] for m in measured["runs"][config] if m)


def ratio(compared: dict[str, Any]) -> str:
    """``1.21x (1.04-1.40)``: a paired ratio and its 95 % interval."""
    r = Ratio.from_dict(compared)
    assert r.ci95 is not None
    return f"{r.ratio:.2f}x ({r.ci95[0]:.2f}-{r.ci95[1]:.2f})"


def _stamp(path: Path, measured: dict[str, Any]) -> str:
    return stamp(path, measured["commit"], measured["when"], CODE)


def table(name: str, labels: Mapping[str, str] | None = None) -> str:
    """Record ``name``'s table: a row per configuration (``labels``: its name in the record -> its label, in
    the table's order; every configuration under its own name without), the medians of its rounds and its
    ratio to the defaults."""
    path, measured = record(name)
    rows = ["| configuration | ops/s | burst ops/s | drain, s | write amp | over the defaults |",
            "|---|---:|---:|---:|---:|---|"]
    for config, label in (labels or {c: c for c in measured["configs"]}).items():
        median = partial(median_of, measured, config)
        gain = measured["over_default"].get(config)
        rows.append(f"| {label} | {median('ops_per_sec'):,.0f} | {median('burst_ops_per_sec'):,.0f} | "
                    f"{median('drain_seconds'):.1f} | {median('write_amp'):.2f} |" + (f" {ratio(gain)} |" if gain else " |"))
    return "\n".join([*rows, "", _stamp(path, measured)])


def answer(name: str, trial: int, words: str = "the default job's answer", data: str = "2 GiB") -> str:
    """The table of a default job's answer (``trial``) beside the defaults, in record ``name``."""
    return table(name, {REFERENCE: REFERENCE, f"default job {data} trial {trial}": f"trial {trial}, {words}"})


def reads() -> str:
    """The read configurations at 2 GiB within 512 MiB: over the defaults on the DB built once with the
    defaults' options, then on each run's own DB, and that DB's size on disk (the median of its runs)."""
    once_path, once = record("headroom-reads-preloaded-once-11.8.1-2026-12-01")
    each_path, each = record("headroom-reads-each-run-11.8.1-2026-12-01")
    rows = ["| configuration | on the DB built once | on its own DB | its own DB on disk |", "|---|---|---|---|"]
    rows += [f"| {c} | {ratio(once['over_default'][c])} | {ratio(each['over_default'][c])} | "
             f"{median_of(each, c, 'db_size_bytes') / 2**30:.2f} GiB |" for c in once["configs"] if c != REFERENCE]
    return "\n".join([*rows, "", _stamp(once_path, once), "", _stamp(each_path, each)])


def reads_overwritten() -> str:
    """The read configurations on a DB grown by random writes: over the defaults, and each run's ops/s."""
    path, measured = record("headroom-reads-overwritten-11.8.1-2026-12-02")

    def runs(config: str) -> str:
        return ", ".join(f"{m['ops_per_sec']:,.0f}" for m in sorted(measured["runs"][config], key=lambda m: m["ops_per_sec"]))

    rows = ["| configuration | over the defaults | its runs, ops/s |", "|---|---|---|", f"| {REFERENCE} | | {runs(REFERENCE)} |"]
    rows += [f"| {c} | {ratio(g)} | {runs(c)} |" for c, g in measured["over_default"].items()]
    return "\n".join([*rows, "", _stamp(path, measured)])


TABLES: dict[str, Callable[[], str]] = {  # block name (after ``headroom.``) -> its generator
    "at_target": partial(table, "headroom-11.8.1-2026-11-28", BEYOND),
    "at_8GiB": partial(table, "headroom-8GiB-in-1GiB-11.8.1-2026-11-28", BEYOND),
    "answer_8GiB": partial(table, "headroom-8GiB-answer-11.8.1-2026-11-28", EIGHT_GIB_ANSWER),
    "default_job_answer_now": partial(answer, "headroom-default-job-answer-low-11.8.1-2026-12-06", 17,
                                      "the default job's best, kept from the answer by its capacity at the SLO"),
    "slo_answer": partial(answer, "headroom-default-job-answer-slo-11.8.1-2026-12-05", 101),
    "task_answer": partial(answer, "headroom-default-job-answer-task-11.8.1-2026-12-05", 41),
    "config_answer": partial(answer, "headroom-default-job-answer-config-11.8.1-2026-12-05", 52),
    "cores_answer": partial(answer, "headroom-default-job-answer-cores-11.8.1-2026-12-05", 59,
                            "the default job's fastest, kept from the answer by its served tail"),
    "guard_answer": partial(answer, "headroom-default-job-answer-guard-11.8.1-2026-12-05", 37),
    "stalled_answer": partial(answer, "headroom-default-job-answer-11.8.1-2026-12-05", 63,
                              "the default job's best, kept out by the cost guard"),
    "served_answer": partial(answer, "headroom-default-job-answer-11.8.1-2026-12-04", 74),
    "default_job_answer": partial(answer, "headroom-default-job-answer-11.8.1-2026-11-29", 63),
    "rerun_answer": partial(answer, "headroom-rerun-answer-11.8.1-2026-12-01", 89),
    "universal_answer": partial(answer, "headroom-universal-answer-11.8.1-2026-11-28", 67),
    "universal_answer_300s": partial(answer, "headroom-universal-answer-300s-11.8.1-2026-11-28", 67),
    "leveled_answer_300s": partial(table, "headroom-leveled-answer-300s-11.8.1-2026-11-29", {
        REFERENCE: REFERENCE, "default job 2 GiB trial 69 (leveled)": "trial 69 of 2026-11-27, leveled"}),
    "beyond_space": partial(table, "headroom-beyond-space-11.8.1-2026-11-29"),
    "direct_io": partial(table, "headroom-direct-io-11.8.1-2026-11-29"),
    "direct_io_8GiB": partial(table, "headroom-direct-io-8GiB-11.8.1-2026-11-29"),
    "ceiling": partial(table, "headroom-ceiling-11.8.1-2026-12-02"),
    "ceiling_8GiB": partial(table, "headroom-ceiling-8GiB-11.8.1-2026-12-02"),
    "ceiling_late": partial(table, "headroom-ceiling-late-11.8.1-2026-12-02"),
    "ceiling_8GiB_late": partial(table, "headroom-ceiling-8GiB-late-11.8.1-2026-12-02"),
    "reads": reads,
    "reads_overwritten": reads_overwritten,
}
