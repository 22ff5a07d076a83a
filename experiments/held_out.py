"""What the research scripts that re-measure a study's answer share (versus_plain_optuna,
version_transfer, scale_transfer): the answer and the target read back from the study's summary, the
workload at a target as tune runs it there, the shape the runs start from in words, the project's
commit, and held-out rounds: configurations measured in interleaved paired rounds that chose nothing,
every round each configuration once, in a fresh random order (tuner.stats.paired_ratio then pairs
them by round)."""

from __future__ import annotations

import random
import statistics
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from objectives.contract import RunFailed
from objectives.defaults import LIBRARY, PINNED_7_8, Defaults
from objectives.measurement import measure as measure_run
from objectives.runner import Runner
from objectives.workloads import Workload
from search_spaces import Context, SearchSpace, load_space
from tuner.backends import as_workload
from tuner.engine import target_workload
from tuner.model import TuneConfig
from tuner.stats import Ratio, paired_ratio
from tuner.summary import Summary, TargetInfo
from tuner.target import Target

HELD_OUT_SEED = 1000  # db_bench seeds of held-out rounds (1000 + round, or 1000): used by no search
Metrics = dict[str, float | None]
Measure = Callable[[str, int], Metrics]  # (configuration, round) -> its run's metrics; RunFailed when it fails


@dataclass
class Rounds:
    """What held-out rounds measured: per configuration, each round's metrics (None where its run
    failed; why, in ``failed``)."""

    metrics: dict[str, list[Metrics | None]]
    failed: dict[str, list[str]] = field(default_factory=dict)

    def ops(self, name: str) -> list[float]:
        """Each round's ops/s, 0.0 where the run failed (paired_ratio leaves that round out)."""
        return [float((m or {}).get("ops_per_sec") or 0.0) for m in self.metrics[name]]

    def measured(self, name: str) -> list[Metrics]:
        """The metrics of the runs that completed, in round order."""
        return [m for m in self.metrics[name] if m is not None]

    def median_ops(self) -> dict[str, float]:
        """Each configuration's median ops/s over the runs that completed."""
        return {name: statistics.median(done) for name in self.metrics if (done := [v for v in self.ops(name) if v])}

    def ratio(self, a: str, b: str) -> Ratio:
        """How many times ``a`` is ``b``, paired by round, with its 95 % interval (tuner.stats.paired_ratio)."""
        return paired_ratio(self.ops(a), self.ops(b))


def interleaved(names: Iterable[str], rounds: int, measure: Measure, rng: random.Random,
                label: str = "") -> Rounds:
    """Every configuration of ``names`` once per round, each round in a fresh random order drawn from
    ``rng``; a failed run is recorded (never retried). Each run's result goes to the console, prefixed
    with ``label``."""
    order = sorted(names)
    done = Rounds({name: [] for name in order})
    for i in range(rounds):
        for name in rng.sample(order, len(order)):
            try:
                metrics = measure(name, i)
            except RunFailed as exc:
                done.failed.setdefault(name, []).append(exc.reason)
                done.metrics[name].append(None)
                print(f"{label}round {i + 1}/{rounds} {name}: FAILED {exc.reason}", flush=True)
                continue
            done.metrics[name].append(metrics)
            print(f"{label}round {i + 1}/{rounds} {name}: {_shown(metrics)}", flush=True)
    return done


def measured_rounds(runner: Runner, workload: Workload, configs: dict[str, dict[str, Any]], rounds: int, logs: Path,
                    rng: random.Random, label: str = "") -> Rounds:
    """:func:`interleaved` rounds of ``configs`` (name -> db_bench flags), each run of ``workload`` once with
    db_bench seed HELD_OUT_SEED + its round, logging to ``logs/NAME-ROUND``."""
    return interleaved(configs, rounds, lambda name, i: measure_run(runner, workload, configs[name], logs / f"{name}-{i}",
                                                                    1, HELD_OUT_SEED + i).metrics, rng, label)


def shown_ratio(g: Ratio) -> str:
    """``1.120x (95 % CI 1.040-1.200, faster)``: a paired ratio as the scripts print it, or why it has no interval."""
    if not g.ci95:
        return f"not measured ({g.n} paired rounds)"
    return f"{g.ratio:.3f}x (95 % CI {g.ci95[0]:.3f}-{g.ci95[1]:.3f}, {g.verdict})"


def _shown(m: Metrics) -> str:
    """``153,937 ops/s, write amp 6.44, 45 s``: what a run's metrics report of those."""
    parts = [f"{m.get('ops_per_sec') or 0:,.0f} ops/s"]
    if m.get("write_amp") is not None:
        parts.append(f"write amp {m['write_amp']:.2f}")
    if m.get("wall_seconds") is not None:
        parts.append(f"{m['wall_seconds']:.0f} s")
    return ", ".join(parts)


def answer_of(summary: Summary) -> tuple[str, dict[str, Any]]:
    """A study's answer (what its summary tells the user to deploy) as (name, db_bench flags): its
    best trial, or the baseline it recommends instead (db_bench's defaults are no flag)."""
    answer, best = summary.answer, summary.best
    if answer is None or best is None:
        raise SystemExit(f"{summary.study}: the study has no re-validated answer (its summary gives none)")
    if answer.recommend == "best":
        return f"answer: trial {best.trial}", dict(best.flags)
    baseline = summary.baseline(answer.name)
    if baseline is None:
        raise SystemExit(f"{summary.study}: its answer names the baseline {answer.name}, which it does not hold")
    return f"answer: {answer.name}", load_space(str(summary.space)).config(baseline.params).flags()


def trial_size(summary: Summary) -> tuple[int, int | None]:
    """(data, memory limit) of the study's trials, in bytes (no memory limit: None)."""
    target = summary.target or TargetInfo()
    data = target.trial_data_bytes or summary.data_bytes
    if data is None:
        raise SystemExit(f"{summary.study}: its summary gives no data size")
    return int(data), target.trial_memory_bytes or (summary.memory.limit_bytes if summary.memory else None)


def study_config(summary: Summary, data: int, memory: int | None, duration: float | None = None) -> TuneConfig:
    """The study's workload as tune takes it at a target of ``data`` bytes within ``memory``, on its
    --base-options, in timed phases of ``duration`` seconds (default those its answer was confirmed in)."""
    target = summary.target or TargetInfo()
    if summary.workload is None or summary.space is None:
        raise SystemExit(f"{summary.study}: its summary gives no workload or space")
    source = target.source or ""
    return TuneConfig(workload=summary.workload, target_data=int(data), target_memory=int(memory) if memory else None,
                      duration=duration or target.confirm_duration_seconds or target.duration_seconds,
                      base_options=Path(source.removeprefix("the OPTIONS file ")) if
                      source.startswith("the OPTIONS file ") else None)


def at_target(config: TuneConfig, space: SearchSpace, host: Context, defaults: Defaults) -> tuple[Target, Workload]:
    """``config``'s target, and its workload as tune runs it there (on ``defaults``, in the target's LSM
    shape, within its memory) in the full phases the answer is confirmed in (not the search's shorter ones)."""
    target, trials, confirm = target_workload(config, space, host, defaults.flags)
    return target, replace(as_workload(confirm or trials), memory=target.memory)


def shape(defaults: Defaults) -> str:
    """The shape runs on ``defaults`` measure, as the docs name it (docs/versions.md)."""
    if defaults.mode == LIBRARY:
        return f"the deployed shape: {defaults.describe()}"
    if defaults.mode == PINNED_7_8:
        return f"the pinned shape: {defaults.describe()}"
    return f"neither the deployed nor the pinned shape: {defaults.describe()}"


def project_commit() -> str | None:
    """The project's git commit this code runs from (``+`` when its tree had changes), if in a clone."""
    return git_commit(Path(__file__).resolve().parent)


def git_commit(path: Path, last_change: bool = False) -> str | None:
    """The commit of the clone ``path`` lies in (``+`` when its tracked files had changes); with
    ``last_change``, the last commit that changed ``path`` itself (``+`` when it has changed since;
    None when git tracks none of it)."""
    where, what = (path if path.is_dir() else path.parent), ["--", str(path.resolve())]
    head = ["git", "log", "-1", "--format=%h", *what] if last_change else ["git", "rev-parse", "--short", "HEAD"]
    try:
        commit = subprocess.run(head, cwd=where, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", *(what if last_change else [])],
                               cwd=where, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+" if dirty else "") if commit else None
