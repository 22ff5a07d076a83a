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
from objectives.dbbench import DbBench
from objectives.runner import RUNNER_FLAGS
from objectives.scores import Score
from objectives.trace import trace_workload
from objectives.workloads import OUTSIDE_FLAGS, RESERVED_FLAGS, Workload, load_workload
from search_spaces import Context, GiB, MiB, SearchSpace, load_space
from objectives.workloads import Flag
from tuner.engine.baseline_file import NAME as BASELINE_NAME
from tuner.engine.baseline_file import load_baseline
from tuner.engine.plan import Plan, Reference
from tuner.model import DEFAULT_BASELINE, TuneConfig, UsageError
from tuner.pruners import PrunerError, make_pruner
from tuner.samplers import choose, make_sampler


@dataclass(frozen=True)
class Slot:
    """What one trial may use: the cores it is pinned to and its share of memory. A serial study's
    slot is the host; with --parallel, a worker's cores and its node's memory divided among trials."""

    cores: int
    ram: int
    pinned: bool = False  # the trial's db_bench is pinned to ``cores`` distinct cores

    def to_dict(self) -> dict[str, object]:
        return {"cores": self.cores, "ram_bytes": self.ram, "pinned": self.pinned}


@dataclass(frozen=True)
class Prepared:
    """The parts of a study, built from its :class:`TuneConfig` and the slot its trials run in."""

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
    slot: Slot
    memory_limit: int | None  # scored phases run in a memory cgroup of this size
    plan: Plan  # the re-validation's
    reference: Reference  # what gains are measured against
    user_baseline: tuple[dict[str, Flag], str] | None  # --baseline's flags and description
    rungs: tuple[Workload, ...] = ()  # --fidelity: the workload at each rung's data size, the last the full one


def check_values(config: TuneConfig) -> None:
    """The plain numbers of a request."""
    if config.trials is None and config.budget is None:
        raise UsageError("--trials: give a number of trials, a --budget, or both")
    if config.trials is not None and (not isinstance(config.trials, int) or config.trials < 1):
        raise UsageError(f"--trials: must be a whole number >= 1, got {config.trials}")
    if config.budget is not None and not config.budget > 0:
        raise UsageError(f"--budget: must be a time > 0 (e.g. 45m, 2h), got {config.budget} s")
    if config.fidelity is not None:
        f = list(config.fidelity)
        if len(f) < 2 or f != sorted(f) or f[-1] != 1.0 or f[0] <= 0 or len(set(f)) != len(f):
            raise UsageError(f"--fidelity: increasing fractions of the data size ending in 1, e.g. 0.125,0.5,1; "
                             f"got {','.join(f'{x:g}' for x in f)}")
        if config.pruner != "none":
            raise UsageError("--fidelity: prunes by its own rungs (successive halving); leave --pruner at none")
        if config.objective != "throughput":
            raise UsageError("--fidelity: needs --objective throughput (Optuna cannot prune multi-objective studies)")
    if not config.trial_timeout > 0:
        raise UsageError(f"--trial-timeout: must be > 0 seconds, got {config.trial_timeout}")
    if not config.scale > 0:
        raise UsageError(f"--scale: must be > 0, got {config.scale}")
    for flag, value, least in (("--repeats", config.repeats, 1), ("--revalidate", config.revalidate, 0),
                               ("--revalidate-rounds", config.revalidate_rounds, 2),
                               ("--revalidate-max-rounds", config.revalidate_max_rounds, config.revalidate_rounds),
                               ("--parallel", config.parallel, 1)):
        if not isinstance(value, int) or value < least:
            raise UsageError(f"{flag}: must be a whole number >= {least}, got {value}")
    if not config.interval_target > 0:
        raise UsageError(f"--interval-target: must be > 0 (high / low - 1 of the interval), got {config.interval_target}")
    if config.confirm_scale is not None and not config.confirm_scale > 0:
        raise UsageError(f"--confirm-scale: must be > 0, got {config.confirm_scale}")
    if config.confirm_scale is not None and not config.revalidate:
        raise UsageError("--confirm-scale: re-validates at that scale; it needs --revalidate K >= 1")
    if config.cpus_per_trial is not None and (not isinstance(config.cpus_per_trial, int) or config.cpus_per_trial < 1):
        raise UsageError(f"--cpus-per-trial: must be a whole number >= 1, got {config.cpus_per_trial}")
    if config.prefer is not None:
        if config.objective != "multi":
            raise UsageError("--prefer: weighs the objectives of --objective multi; this study has one objective")
        unknown = sorted(set(config.prefer) - {"ops_per_sec", "p99_us", "write_amp"})
        if unknown or any(not w >= 0 for w in config.prefer.values()) or not any(config.prefer.values()):
            raise UsageError(f"--prefer: weights >= 0 (not all 0) of ops_per_sec, p99_us, write_amp, got {config.prefer}")
    if config.pruner != "none" and config.on_ray:
        raise UsageError("--pruner: needs --parallel 1 without --ray-address (a pruner watches each run "
                         "second by second in this process)")


def score_of(config: TuneConfig) -> Score:
    try:
        return Score(config.objective, config.max_p99_us, config.max_write_amp)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def pruner_of(config: TuneConfig, score: Score) -> optuna.pruners.BasePruner:
    if config.fidelity:
        # rung i reports at step 3**i: the rungs this pruner compares (min resource 1, reduction factor 3)
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3, min_early_stopping_rate=0)
    try:
        if not isinstance(config.pruner_warmup, int) or config.pruner_warmup < 0:
            raise PrunerError(f"--pruner-warmup: must be a whole number of seconds >= 0, got {config.pruner_warmup}")
        return make_pruner(config.pruner, score.directions, config.pruner_warmup)
    except PrunerError as exc:
        raise UsageError(str(exc)) from None


def prepare(config: TuneConfig, score: Score, pruner: optuna.pruners.BasePruner, db_bench: DbBench,
            slot: Slot) -> Prepared:
    """Scale workload and space to the trials' slot, check flags, build the sampler and the work
    directory."""
    host = Context.of_host()
    workload = workload_of(config).resolve(config.scale, replace(host, cores=slot.cores, ram=slot.ram))
    workload = replace(workload, drain=workload.drain and config.drain)
    limit, budget = memory_plan(config, workload, slot)
    ctx = Context(cores=slot.cores, ram=limit or slot.ram, data=workload.data_bytes(), scale=config.scale,
                  budget=budget)
    space = (config.space if isinstance(config.space, SearchSpace) else load_space(config.space)).resolve(ctx)
    check_flags(db_bench, workload, space)
    sampler_name = choose(config.sampler, multi_objective=len(score.directions) > 1, constrained=score.constrained)
    config = replace(config, sampler=sampler_name)
    sampler = make_sampler(sampler_name, seed=config.seed, directions=score.directions, grid=space.grid(),
                           constraints_func=_constraints_of if score.constrained else None, trials=config.trials or 40)
    # A grid visits every feasible point by itself: no repairs, and no more trials than points.
    grid = sampler_name == "grid"
    trials = config.trials if config.trials is not None else 10**9  # a --budget alone: as many as fit
    wanted = min(trials, space.feasible_grid_size()) if grid else trials
    name = config.study or f"{workload.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    rungs = tuple(replace(workload_of(config).resolve(config.scale * f, replace(host, cores=slot.cores, ram=slot.ram)),
                          drain=workload.drain) for f in config.fidelity[:-1]) + (workload,) if config.fidelity else ()
    confirm = None
    if config.confirm_scale is not None:
        confirm = replace(workload_of(config).resolve(config.confirm_scale, replace(host, cores=slot.cores, ram=slot.ram)),
                          drain=workload.drain)
    try:
        work_dir = workdir.prepare(Path(config.work_dir) if config.work_dir is not None else None)
        largest = max(workload.data_bytes(), confirm.data_bytes() if confirm else 0)
        workdir.check_space(work_dir, largest, f"workload {workload.name} at --scale "
                            f"{max(config.scale, config.confirm_scale or 0):g}")
    except workdir.WorkDirError as exc:
        raise UsageError(str(exc)) from None
    user, reference = None, Reference(DEFAULT_BASELINE, {})
    if config.baseline is not None:
        flags, values, doc = load_baseline(Path(config.baseline), space)
        user, reference = (flags, doc), Reference(BASELINE_NAME, flags, values)
    plan = Plan(k=config.revalidate, min_rounds=config.revalidate_rounds, max_rounds=config.revalidate_max_rounds,
                target=config.interval_target, ablation=config.ablation, seed=config.seed or 0, workload=confirm,
                confirm_scale=config.confirm_scale)
    out = Path(config.out) if config.out else Path("runs") / name
    return Prepared(config=config, name=name, score=score, pruner=pruner, sampler=sampler, db_bench=db_bench,
                    workload=workload, space=space, trials_wanted=wanted, repair_rejected=not grid, work_dir=work_dir,
                    out=out, storage=config.storage or f"sqlite:///{(out / 'study.db').resolve()}",
                    db_bench_seed=config.seed if config.seed else 1, slot=slot, memory_limit=limit, plan=plan,
                    reference=reference, user_baseline=user, rungs=rungs)


MIN_MEMORY_LIMIT = 64 * MiB


def memory_plan(config: TuneConfig, workload: Workload, slot: Slot) -> tuple[int | None, int]:
    """(memory limit of the scored phases, memory budget of the space).

    The limit is --memory-limit, else the workload's data / data_to_memory (at least 64 MiB), else
    none. The budget (memtables + block cache) is --memory-budget, else 3/4 of the limit (the rest
    is db_bench itself and the page cache), else a quarter of the slot's memory."""
    limit = config.memory_limit
    if limit is None and workload.data_to_memory:
        limit = max(MIN_MEMORY_LIMIT, int(workload.data_bytes() / workload.data_to_memory))
    if limit is not None and not 0 < limit <= slot.ram:
        raise UsageError(f"--memory-limit: {limit / MiB:,.0f} MiB; a trial has {slot.ram / GiB:.1f} GiB of memory "
                         f"(more than 0, at most that)")
    budget = config.memory_budget if config.memory_budget is not None else (limit * 3 // 4 if limit else slot.ram // 4)
    if budget <= 0:
        raise UsageError(f"--memory-budget: must be > 0 bytes, got {budget}")
    if budget > (limit or slot.ram):
        what = f"the --memory-limit of {limit / MiB:,.0f} MiB" if limit else \
            f"this machine's {slot.ram / GiB:.1f} GiB of memory" if not slot.pinned else \
            f"a trial's {slot.ram / GiB:.1f} GiB share of memory"
        raise UsageError(f"--memory-budget: {budget / GiB:,.1f} GiB is more than {what}")
    return limit, budget


def workload_of(config: TuneConfig) -> Workload:
    """The workload a request names: a preset, a file, or ``trace:TRACE`` on --db-snapshot."""
    name = str(config.workload)
    if name.startswith("trace:"):
        if not config.db_snapshot:
            raise UsageError("--workload trace:TRACE needs --db-snapshot DIR: the DB the trace was recorded on")
        return trace_workload(Path(name[len("trace:"):]), Path(config.db_snapshot))
    if config.db_snapshot:
        raise UsageError("--db-snapshot: only a trace workload (--workload trace:TRACE) starts from a snapshot")
    return load_workload(config.workload)


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
