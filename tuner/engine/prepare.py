"""A tuning request checked and turned into the parts a study runs with, before anything is written.

Every bad value ends here with one :class:`UsageError` naming the flag or field: the study's
numbers, the score and pruner, the db_bench binary and its flags, the workload and space as scaled
to this host, the sampler, the work directory and its free space.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import optuna

from objectives import workdir
from objectives.dbbench import DbBench, probe
from objectives.runner import RUNNER_FLAGS
from objectives.scores import Score
from objectives.workloads import OUTSIDE_FLAGS, RESERVED_FLAGS, Workload, load_workload
from search_spaces import Context, GiB, SearchSpace, load_space
from tuner.model import TuneConfig, UsageError
from tuner.pruners import PrunerError, make_pruner
from tuner.samplers import choose, make_sampler


@dataclass(frozen=True)
class Prepared:
    """The parts of a study, built from its :class:`TuneConfig` and this host."""

    config: TuneConfig  # with the sampler ``auto`` stood for
    name: str
    score: Score
    pruner: optuna.pruners.BasePruner
    sampler: optuna.samplers.BaseSampler
    db_bench: DbBench
    workload: Workload
    space: SearchSpace
    trials_wanted: int
    repair_rejected: bool
    work_dir: Path
    out: Path
    storage: str
    db_bench_seed: int


def check_values(config: TuneConfig) -> None:
    """The plain numbers of a request."""
    if not isinstance(config.trials, int) or config.trials < 1:
        raise UsageError(f"--trials: must be a whole number >= 1, got {config.trials}")
    if not config.trial_timeout > 0:
        raise UsageError(f"--trial-timeout: must be > 0 seconds, got {config.trial_timeout}")
    if not config.scale > 0:
        raise UsageError(f"--scale: must be > 0, got {config.scale}")
    for flag, value, least in (("--repeats", config.repeats, 1), ("--revalidate", config.revalidate, 0),
                               ("--revalidate-rounds", config.revalidate_rounds, 2),
                               ("--parallel", config.parallel, 1)):
        if not isinstance(value, int) or value < least:
            raise UsageError(f"{flag}: must be a whole number >= {least}, got {value}")
    if config.cpus_per_trial is not None and (not isinstance(config.cpus_per_trial, int) or config.cpus_per_trial < 1):
        raise UsageError(f"--cpus-per-trial: must be a whole number >= 1, got {config.cpus_per_trial}")
    if config.pruner != "none" and config.on_ray:
        raise UsageError("--pruner: needs --parallel 1 without --ray-address (a pruner watches each run "
                         "second by second in this process)")


def score_of(config: TuneConfig) -> Score:
    try:
        return Score(config.objective, config.max_p99_us, config.max_write_amp)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def pruner_of(config: TuneConfig, score: Score) -> optuna.pruners.BasePruner:
    try:
        if not isinstance(config.pruner_warmup, int) or config.pruner_warmup < 0:
            raise PrunerError(f"--pruner-warmup: must be a whole number of seconds >= 0, got {config.pruner_warmup}")
        return make_pruner(config.pruner, score.directions, config.pruner_warmup)
    except PrunerError as exc:
        raise UsageError(str(exc)) from None


def prepare(config: TuneConfig, score: Score, pruner: optuna.pruners.BasePruner) -> Prepared:
    """Probe db_bench, scale workload and space to this host, check flags, build the sampler and
    the work directory."""
    db_bench = probe(config.db_bench, config.rocksdb_version)
    host = Context.of_host()
    budget = config.memory_budget if config.memory_budget is not None else host.ram // 4
    if budget <= 0:
        raise UsageError(f"--memory-budget: must be > 0 bytes, got {budget}")
    if budget > host.ram:
        raise UsageError(f"--memory-budget: {budget / GiB:,.1f} GiB is more than this machine's "
                         f"{host.ram / GiB:.1f} GiB of memory")
    workload = load_workload(config.workload).resolve(config.scale, host)
    ctx = Context(cores=host.cores, ram=host.ram, data=workload.data_bytes(), scale=config.scale, budget=budget)
    space = (config.space if isinstance(config.space, SearchSpace) else load_space(config.space)).resolve(ctx)
    check_flags(db_bench, workload, space)
    sampler_name = choose(config.sampler, multi_objective=len(score.directions) > 1,
                          constrained=score.constrained, parallel=config.on_ray)
    config = replace(config, sampler=sampler_name)
    sampler = make_sampler(sampler_name, seed=config.seed, directions=score.directions, grid=space.grid(),
                           constraints_func=_constraints_of if score.constrained else None, trials=config.trials)
    # A grid visits every feasible point by itself: no repairs, and no more trials than points.
    grid = sampler_name == "grid"
    wanted = min(config.trials, space.feasible_grid_size()) if grid else config.trials
    name = config.study or f"{workload.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        work_dir = workdir.prepare(Path(config.work_dir) if config.work_dir is not None else None)
        workdir.check_space(work_dir, workload.data_bytes(), f"workload {workload.name} at --scale {config.scale:g}")
    except workdir.WorkDirError as exc:
        raise UsageError(str(exc)) from None
    out = Path(config.out) if config.out else Path("runs") / name
    return Prepared(config=config, name=name, score=score, pruner=pruner, sampler=sampler, db_bench=db_bench,
                    workload=workload, space=space, trials_wanted=wanted, repair_rejected=not grid, work_dir=work_dir,
                    out=out, storage=config.storage or f"sqlite:///{(out / 'study.db').resolve()}",
                    db_bench_seed=config.seed if config.seed else 1)


def check_flags(db_bench: DbBench, workload: Workload, space: SearchSpace) -> None:
    """Tuned flags the tuner owns are refused; every flag must be known to this db_bench."""
    for p in space.parameters:
        if p.flag in RESERVED_FLAGS | OUTSIDE_FLAGS:
            raise UsageError(f"space {space.name}: parameters.{p.name}.flag: --{p.flag} is set by the tuner "
                             "or names a path outside the trial's DB directory; it cannot be tuned")
    flags = set(workload.all_flags()) | {p.flag for p in space.parameters} | RUNNER_FLAGS
    db_bench.check_flags(sorted(flags), where=f"workload {workload.name} / space {space.name}")
    db_bench.check_benchmarks([b for phase in workload.phases for b in phase.benchmarks],
                              where=f"workload {workload.name}")


def prepare_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_file = out / ".write-test"
        probe_file.write_text("")
        probe_file.unlink()
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out}: {exc.strerror}") from None


def _constraints_of(trial: optuna.trial.FrozenTrial) -> list[float]:
    return trial.user_attrs.get("constraints", [])
