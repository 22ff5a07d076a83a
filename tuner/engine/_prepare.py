"""A tuning request checked and turned into the parts a study runs with, before anything is written.

Every bad value ends here with one :class:`UsageError` naming the flag or field: the study's
numbers, the score and pruner, the db_bench binary and its flags, the workload and space as scaled
to this host, the sampler, the work directory and its free space.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import optuna

from objectives import workdir
from objectives.contract import Task
from objectives.flags import Flag
from objectives.rates import Rate, parse_slo
from objectives.scores import Score
from objectives.workdir import SnapshotError, snapshot_files
from search_spaces import Context, GiB, MiB, SearchSpace, load_space
from search_spaces.catalogue import catalogue, held_bytes, holding
from search_spaces.parameters import flag_text
from search_spaces.space import without
from tuner.backends import BACKENDS, Backend, Found, default_config
from tuner.engine._baseline_file import NAME as BASELINE_NAME
from tuner.engine._baseline_file import load_baseline
from tuner.engine._budget import Growth
from tuner.engine._held import breaking, held
from tuner.engine._plan import Plan, Reference
from tuner.executors import Slot, executor_class
from tuner.fmt import fmt_bytes
from tuner.model import (
    DEFAULT_BASELINE,
    MeasurementConfig,
    RevalidationConfig,
    SearchConfig,
    TargetConfig,
    TuneConfig,
    UsageError,
)
from tuner.pruners import PrunerError, make_pruner
from tuner.samplers import choose, make_sampler, study_seed
from tuner.target import MIN_MEMORY_LIMIT, Target, check_memory, make_target
from tuner.trials import TrialRecord


@dataclass(frozen=True)
class Prepared:
    """The parts of a study, built from its :class:`TuneConfig` and the slot its trials run in."""

    config: TuneConfig  # with the sampler ``auto`` stood for
    name: str
    score: Score
    pruner: optuna.pruners.BasePruner
    sampler: optuna.samplers.BaseSampler
    found: Found  # what the backend found: its build (None when it runs no db_bench: nothing is probed), its defaults
    workload: Task  # what its trials run (the backend's: db_bench's workload, a program's run)
    space: SearchSpace
    trials_wanted: int
    repair_rejected: bool
    work_dir: Path
    out: Path
    storage: str
    run_seed: int  # the runs' --seed (--seed, else 1)
    slot: Slot
    memory_limit: int | None  # scored phases run in a memory cgroup of this size
    plan: Plan  # the re-validation's
    reference: Reference  # what gains are measured against
    user_baseline: tuple[dict[str, Flag], str] | None  # --baseline's flags and description
    rungs: tuple[Task, ...] = ()  # --fidelity: the task at each rung's data size, the last the full one
    target: Target | None = None  # what the study tunes for (tuner.target)
    widened: tuple[str, ...] = ()  # what of the space was widened to hold the references, in words
    breaks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # references breaking the user's constraints
    narrowed: tuple[str, ...] = ()  # what of the space the work dir cannot run, left out, in words
    memory_note: str | None = None  # rocksdb-default cannot fit the trials' memory: said before any run

    @property
    def stretch(self) -> float:
        """The re-validation's timed phases over the trials' (> 1 when it confirms the answer in longer
        ones, --search-duration), else 1."""
        confirm = self.plan.workload
        if confirm is None or not confirm.duration or not self.workload.duration:
            return 1.0
        return confirm.duration / self.workload.duration

    @property
    def growth(self) -> Growth:
        """How a re-validation run differs from a trial's: its phases' :attr:`stretch`, and its data over
        the trials' (> 1 when --scale trials are confirmed at the target)."""
        confirm, trials = self.plan.workload, self.workload.data_bytes()
        return Growth(self.stretch, confirm.data_bytes() / trials if confirm is not None and trials else 1.0)


def check_values(config: TuneConfig) -> None:
    """The plain numbers of a request, part by part; then what its executor and backend refuse."""
    _check_search(config.search)
    _check_measurement(config.measurement)
    _check_revalidation(config.revalidation)
    check_memory(config.target.target_memory)
    if config.revalidation.revalidation_time is not None and config.search.budget is not None:
        raise UsageError("--revalidation-time: only without --budget (a --budget holds the re-validation too, "
                         "at most half of it for choosing and the gain)")
    _at_least("--parallel", config.execution.parallel, 1)
    executor_class(config.execution).check(config)
    check_backend(config)


def _at_least(flag: str, value: object, least: int) -> None:
    if not isinstance(value, int) or value < least:
        raise UsageError(f"{flag}: must be a whole number >= {least}, got {value}")


def _check_search(search: SearchConfig) -> None:
    if search.trials is None and search.budget is None:
        raise UsageError("--trials: give a number of trials, a --budget, or both")
    if search.trials is not None and (not isinstance(search.trials, int) or search.trials < 1):
        raise UsageError(f"--trials: must be a whole number >= 1, got {search.trials}")
    if search.budget is not None and not search.budget > 0:
        raise UsageError(f"--budget: must be a time > 0 (e.g. 45m, 2h), got {search.budget} s")
    if search.fidelity is not None:
        f = list(search.fidelity)
        if len(f) < 2 or f != sorted(f) or f[-1] != 1.0 or f[0] <= 0 or len(set(f)) != len(f):
            raise UsageError(f"--fidelity: increasing fractions of the data size ending in 1, e.g. 0.125,0.5,1; "
                             f"got {','.join(f'{x:g}' for x in f)}")
        if search.pruner != "none":
            raise UsageError("--fidelity: prunes by its own rungs (successive halving); leave --pruner at none")
        if search.objective not in (None, "throughput"):
            raise UsageError("--fidelity: needs --objective throughput (Optuna cannot prune multi-objective studies)")
    if search.prefer is not None:
        if search.objective != "multi":
            raise UsageError("--prefer: weighs the objectives of --objective multi; this study has one objective")
        unknown = sorted(set(search.prefer) - {"ops_per_sec", "p99_us", "write_amp"})
        if unknown or any(not w >= 0 for w in search.prefer.values()) or not any(search.prefer.values()):
            raise UsageError(f"--prefer: weights >= 0 (not all 0) of ops_per_sec, p99_us, write_amp, got {search.prefer}")


def _check_measurement(measurement: MeasurementConfig) -> None:
    if not measurement.trial_timeout > 0:
        raise UsageError(f"--trial-timeout: must be > 0 seconds, got {measurement.trial_timeout}")
    if measurement.scale is not None and not measurement.scale > 0:
        raise UsageError(f"--scale: must be > 0, got {measurement.scale}")
    for flag, seconds in (("--duration", measurement.duration), ("--search-duration", measurement.search_duration)):
        if seconds is not None and not seconds > 0:
            raise UsageError(f"{flag}: must be > 0 seconds, got {seconds}")
    _at_least("--repeats", measurement.repeats, 1)


def _check_revalidation(revalidation: RevalidationConfig) -> None:
    _at_least("--revalidate", revalidation.revalidate, 0)
    _at_least("--revalidate-rounds", revalidation.revalidate_rounds, 2)
    _at_least("--revalidate-max-rounds", revalidation.revalidate_max_rounds, revalidation.revalidate_rounds)
    if not revalidation.interval_target > 0:
        raise UsageError("--interval-target: must be > 0 (high / low - 1 of the interval), got "
                         f"{revalidation.interval_target}")
    if revalidation.revalidation_time is not None and not revalidation.revalidation_time > 0:
        raise UsageError(f"--revalidation-time: must be a time > 0 (e.g. 10m), got {revalidation.revalidation_time} s")
    if revalidation.confirm_scale is not None and not revalidation.confirm_scale > 0:
        raise UsageError(f"--confirm-scale: must be > 0, got {revalidation.confirm_scale}")
    if revalidation.confirm_scale is not None and not revalidation.revalidate:
        raise UsageError("--confirm-scale: re-validates at that scale; it needs --revalidate K >= 1")


def check_backend(config: TuneConfig) -> None:
    """The backend a request names; what it does not declare it can do (``Backend.workloads``, ``targets``,
    ``distributed``, ``finds_build``, ``per_second``, ``needs_command``) is refused, naming the flag."""
    m, d, x = config.measurement, config.target, config.execution
    backend = BACKENDS.get(m.backend)
    if backend is None:
        raise UsageError(f"--backend: unknown {m.backend!r} (choose from {', '.join(BACKENDS)})")
    if backend.needs_command and m.command is None:
        raise UsageError(f"--command: the {backend.name} backend runs your program: give it, e.g. --command "
                         "'python app.py --options {options} --db {db}'")
    if not backend.needs_command and m.command is not None:
        raise UsageError(f"--command: goes with --backend command, not {backend.name}")
    if not backend.needs_command and m.load is not None:
        raise UsageError(f"--load: builds your program's DB; it goes with --backend command, not {backend.name} "
                         "(db_bench's preloaded workloads build their own)")
    if backend.needs_rate != (m.rate is not None):
        raise UsageError(f"--rate: the {backend.name} backend offers writes at a rate: give --rate OPS" if backend.needs_rate
                         else f"--rate: goes with --backend rate, not {backend.name}")
    for flag, offered in (("--read-rate", m.read_rate > 0), ("--arrivals", m.arrivals != MeasurementConfig.arrivals),
                          ("--background-priority", m.background_priority != MeasurementConfig.background_priority)):
        if offered and not backend.needs_rate:
            raise UsageError(f"{flag}: goes with --rate (the rate backend)")
    if m.slo is not None:
        _check_slo(m, backend, d.base_options is not None)
    if config.search.objective == "capacity" and (not backend.needs_rate or m.slo is None):
        raise UsageError("--objective capacity: each trial's score is the highest rate it holds --slo at, from "
                         "--rate up or down (the rate backend): give --rate OPS and --slo BOUND (e.g. 'p99.9<=10ms')")
    if config.search.objective == "capacity" and m.repeats > 1:
        raise UsageError(f"--repeats {m.repeats}: with --objective capacity a trial is one search over rates; the "
                         "capacity stage's --capacity-rounds repeat the best's and the defaults'")
    if m.capacity_rounds != MeasurementConfig.capacity_rounds and (m.slo is None or m.capacity_rounds < 1):
        raise UsageError(f"--capacity-rounds: {m.capacity_rounds}: " + (
            "goes with --slo (the capacity searches it repeats)" if m.slo is None else "1 or more"))
    _check_serve(config.revalidation, backend, d.base_options is not None, m.slo is not None)
    if not backend.per_second and config.search.pruner != "none":
        raise UsageError(f"--pruner: the {backend.name} backend reports no per-second throughput to prune on")
    name = backend.name  # each capability: whether it has it, and why a flag that needs it is refused without it
    runs = "your program (--command)" if backend.needs_command else "RocksDB at --rate, open loop"
    workloads = (backend.workloads, f"shapes db_bench's workloads; the {name} backend runs {runs}")
    targets = (backend.targets, f"the {name} backend runs at no target size, memory or phase length")
    distributed = (backend.distributed, f"the {name} backend runs on this host only")
    build = (backend.finds_build, f"the {name} backend runs no db_bench")
    for flag, given, (can, why) in (
            ("--workload", m.workload, workloads), ("--fidelity", config.search.fidelity, workloads),
            ("--scale", m.scale, workloads), ("--base-options", d.base_options, workloads),
            ("--db-snapshot", m.db_snapshot, workloads), ("--confirm-scale", config.revalidation.confirm_scale, workloads),
            ("--target-data", d.target_data, targets), ("--target-memory", d.target_memory, targets),
            ("--memory-limit", d.memory_limit, targets), ("--duration", m.duration, targets),
            ("--search-duration", m.search_duration, targets),
            ("--parallel", x.parallel > 1, distributed), ("--ray-address", x.ray_address, distributed),
            ("--executor", x.on_ray, distributed), ("--db-bench", x.db_bench, build),
            ("--rocksdb-version", x.rocksdb_version, build),
            ("--defaults", m.defaults != MeasurementConfig.defaults, build)):  # another than the library's
        if given and not can:
            raise UsageError(f"{flag}: {why}")


def _check_slo(m: MeasurementConfig, backend: type[Backend], base_options: bool) -> None:
    """--slo: a rate study's capacity searches at its rate, or a serving backend's (db_bench) open loop on
    --serve-rate's backend, with --serve-rate's refusals; UsageError naming the flag."""
    assert m.slo is not None
    if not backend.needs_rate and not backend.serves:
        raise UsageError(f"--slo: the {backend.name} backend runs nothing at a rate (the db_bench and rate "
                         "backends do)")
    if not backend.needs_rate and base_options:
        raise UsageError("--slo: its runs start from the library's defaults, not --base-options' file")
    try:
        bound = parse_slo(m.slo, Rate(m.rate or 0.0, m.read_rate) if backend.needs_rate else None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not backend.needs_rate and bound.metric.startswith(("read_", "write_")):
        raise UsageError(f"--slo: {m.slo!r} bounds the {bound.metric.split('_')[0]}s' own tail; the {backend.name} "
                         "backend's capacity runs offer writes alone: bound their tail (e.g. p99.9<=10ms)")


def _check_serve(m: RevalidationConfig, backend: type[Backend], base_options: bool, slo: bool) -> None:
    """--serve-rate and its --serve-rounds and --serve-duration (also the length of the capacity runs of
    --slo on a serving backend); UsageError naming the flag."""
    capacity = slo and backend.serves  # --slo on the backend --serve-rate runs on
    if m.serve_rate is None:
        for flag, changed, also in (
                ("--serve-rounds", m.serve_rounds != RevalidationConfig.serve_rounds, ""),
                ("--serve-duration", m.serve_duration != RevalidationConfig.serve_duration and not capacity,
                 ", or with --slo on the db_bench backend (its capacity runs' length)")):
            if changed:
                raise UsageError(f"{flag}: goes with --serve-rate (the runs at a rate after the study){also}")
        if capacity and not m.serve_duration > 0:
            raise UsageError(f"--serve-duration: more than 0 s, got {m.serve_duration:g} s")
        return
    if not backend.serves:
        raise UsageError("--serve-rate: " + ("a study at --rate runs every configuration at its rate already"
                                              if backend.needs_rate else f"the {backend.name} backend runs nothing "
                                              "at a rate (the db_bench backend does)"))
    if base_options:
        raise UsageError("--serve-rate: its runs start from the library's defaults, not --base-options' file")
    if m.serve_rate != "auto" and not (isinstance(m.serve_rate, (int, float)) and m.serve_rate > 0):
        raise UsageError(f"--serve-rate: writes per second (> 0) or auto, got {m.serve_rate!r}")
    if m.serve_rounds < 1 or not m.serve_duration > 0:
        raise UsageError(f"--serve-rounds / --serve-duration: 1 or more rounds of more than 0 s, got "
                         f"{m.serve_rounds} and {m.serve_duration:g} s")


def score_of(search: SearchConfig, backend: type[Backend]) -> Score:
    """The study's score: --objective, else its backend's (:attr:`Backend.objective`), with its budgets."""
    try:
        return Score(search.objective or backend.objective, search.max_p99_us, search.max_write_amp,
                     tuple(search.constraints))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def pruner_of(search: SearchConfig, score: Score) -> optuna.pruners.BasePruner:
    if search.fidelity:  # the rungs are judged by tuner.rungs' successive halving
        return optuna.pruners.NopPruner()
    if search.pruner != "none" and len(score.terms) == 1 and score.terms != (("ops_per_sec", "maximize"),):
        raise UsageError(f"--pruner: stops trials on their per-second ops/s; this study optimizes "
                         f"{score.describe()} (--objective {score.objective})")
    try:
        if not isinstance(search.pruner_warmup, int) or search.pruner_warmup < 0:
            raise PrunerError(f"--pruner-warmup: must be a whole number of seconds >= 0, got {search.pruner_warmup}")
        return make_pruner(search.pruner, score.directions, search.pruner_warmup)
    except PrunerError as exc:
        raise UsageError(str(exc)) from None


def prepare(config: TuneConfig, score: Score, pruner: optuna.pruners.BasePruner, found: Found,
            slot: Slot) -> Prepared:
    """Scale workload and space to the trials' slot, have the backend check them (against what it
    ``found``: db_bench, None when the backend runs none, and the defaults its runs start from), build
    the sampler and the work directory."""
    backend, defaults = BACKENDS[config.measurement.backend], found.defaults
    host = replace(Context.of_host(), cores=slot.cores, ram=slot.ram)
    search, confirm_scale = config.search, config.revalidation.confirm_scale
    given = search.space if search.space is not None else backend.space
    unresolved = given if isinstance(given, SearchSpace) else load_space(given)
    target, workload, confirm = target_workload(config, unresolved, host, defaults.flags if defaults else {})
    config = replace(config, measurement=replace(
        config.measurement, scale=workload.scale,
        workload=config.measurement.workload if config.measurement.workload is not None else workload.name))
    measurement = config.measurement
    workload = replace(workload, drain=workload.drain and measurement.drain)
    if confirm_scale is not None:
        confirm = replace(backend.sized(backend.task(config), confirm_scale, host), drain=workload.drain)
    elif confirm is not None:  # at the target, in its memory
        confirm = replace(confirm, drain=workload.drain, memory=target.memory or (max(
            MIN_MEMORY_LIMIT, int(confirm.data_bytes() / confirm.data_to_memory)) if confirm.data_to_memory else None))
    work_dir, workload, confirm = _work_dir(config, found, target, workload, confirm)
    resolved, limit, needs = space_for(config, unresolved, found, slot, target, workload)
    floor = needs[0] if needs else 0
    space, narrowed = _direct_io(resolved, work_dir)
    if not backend.offers_reads(config):
        space, unread = _unread(space, found, workload)
        narrowed += unread
    backend.check(found, workload, space)
    user, reference = _reference(config, space, target)
    sampler_name = choose(search.sampler, multi_objective=len(score.directions) > 1, constrained=score.constrained)
    config = replace(config, search=replace(config.search, sampler=sampler_name))
    widened: tuple[str, ...] = ()
    if search.starts and sampler_name != "grid":  # the references run as starts: the space holds them
        space, widened = held(space, found, workload, reference if user is not None else None)
    breaks = breaking(space, found, workload, reference if user is not None else None)
    what = backend.describe(workload, measurement).name
    tracking = config.tracking
    name = tracking.study or f"{what}-{time.strftime('%Y%m%d-%H%M%S')}"
    # the start-up is sized to --trials here, and to what a --budget allows once the baselines ran (TrialLoop);
    # the random stream follows --seed and what the study measures (one command, one stream)
    measures = f"{what}|{space.name}|{score.objective}|{workload.data_bytes()}"
    sampler = make_sampler(sampler_name, seed=study_seed(search.seed, measures), directions=score.directions,
                           grid=space.grid(), constraints_func=_constraints_of if score.constrained else None,
                           trials=search.trials or 40)
    # A grid visits every feasible point by itself: no repairs, and no more trials than points.
    grid = sampler_name == "grid"
    trials = search.trials if search.trials is not None else 10**9  # a --budget alone: as many as fit
    wanted = min(trials, space.feasible_grid_size()) if grid else trials
    rungs = _rungs(config, workload, target, {p.flag for p in space.parameters}, host, limit, floor)
    plan = Plan.of(config.revalidation, search.seed or 0, confirm)
    out = Path(tracking.out) if tracking.out else Path("runs") / name
    return Prepared(config=config, name=name, score=score, pruner=pruner, sampler=sampler, found=found,
                    workload=workload, space=space, trials_wanted=wanted, repair_rejected=not grid, work_dir=work_dir,
                    out=out, storage=tracking.storage or f"sqlite:///{(out / 'study.db').resolve()}",
                    run_seed=search.seed if search.seed else 1, slot=slot, memory_limit=limit, plan=plan,
                    reference=reference, user_baseline=user, rungs=rungs, target=target,
                    widened=widened, breaks=breaks, narrowed=narrowed,
                    memory_note=_memory_note(config.target, limit, needs, target, workload.data_bytes()))


def space_for(config: TuneConfig, unresolved: SearchSpace, found: Found, slot: Slot, target: Target,
              workload: Task) -> tuple[SearchSpace, int | None, tuple[int, str] | None]:
    """The space as a study's trials search it (the slot's cores, the trials' memory, the target's data,
    :func:`memory_plan`'s budget, the backend's names), with the trials' memory limit and what
    rocksdb-default needs of it (:func:`baseline_memory`)."""
    needs = baseline_memory(found, workload)
    limit, budget = memory_plan(config.target, workload, slot, target, needs[0] if needs else 0)
    ctx = Context(cores=slot.cores, ram=limit or slot.ram, data=target.data, scale=workload.scale, budget=budget,
                  extra=BACKENDS[config.measurement.backend].context_names(config))
    return unresolved.resolve(ctx), limit, needs


def _direct_io(space: SearchSpace, work_dir: Path) -> tuple[SearchSpace, tuple[str, ...]]:
    """The space without direct I/O on when the work dir's filesystem refuses O_DIRECT, and that, in words."""
    names = [p.name for p in space.parameters if p.name in workdir.DIRECT_IO_OPTIONS]
    if not names or workdir.takes_direct_io(work_dir):
        return space, ()
    for name in names:
        space = space.without_choice(name, True)
    return space, (f"{', '.join(names)} left off: the work dir {work_dir} refuses O_DIRECT "
                   "(give --work-dir on a disk filesystem such as ext4 or xfs to search it)",)


def _unread(space: SearchSpace, found: Found, workload: Task) -> tuple[SearchSpace, tuple[str, ...]]:
    """The space without the options that serve reads alone (the catalogue's ``serves = "reads"``), each held
    at rocksdb-default's value, for a study whose runs read nothing: a search would see only their cost (a
    filter's build, a cache's memory) and answer the cheapest, which a service's reads would pay for; and
    that, in words. One whose default value is not known stays searched when a constraint names it."""
    options = catalogue()
    reads = [p for p in space.parameters if (info := options.get(p.name)) is not None and info.serves == "reads"]
    given = {s.flag: s.value for s in default_config(found, workload, [p.flag for p in reads]).settings}
    values = {p.name: given.get(p.flag) for p in reads}
    named = {n for c in space.constraints for n in c.names()}
    held = {name: v for name, v in values.items() if isinstance(v, (int, float)) or name not in named}
    if not held:
        return space, ()
    said = ", ".join(f"{name} {'at its default' if v is None else flag_text(v)}" for name, v in held.items())
    return without(space, {k: float(v) if isinstance(v, (int, float)) else None for k, v in held.items()}), (
        f"not searched, since the runs offer no reads: {said} (rocksdb-default's; a search would see only what "
        "they cost the writes)",)


def _work_dir(config: TuneConfig, found: Found, target: Target, workload: Task,
              confirm: Task | None) -> tuple[Path, Task, Task | None]:
    """The work dir, checked to hold the trials' DBs; preloaded workloads with their DB's place in it
    (where the backend builds it, else --db-snapshot's)."""
    try:
        given_dir = config.execution.work_dir
        work_dir = workdir.prepare(Path(given_dir) if given_dir is not None else None)
    except workdir.WorkDirError as exc:
        raise UsageError(str(exc)) from None
    check_disk(work_dir, workload, target, confirm)
    seed = config.search.seed if config.search.seed else 1
    snapshot = config.measurement.db_snapshot
    given = Path(snapshot).resolve() if snapshot else None  # the user's DB, never written: the target

    def preloaded(w: Task) -> Task:
        return replace(w, snapshot=str(given or BACKENDS[config.measurement.backend].preload_path(found, work_dir, w,
                                                                                                   seed)))

    if workload.kind == "preloaded":
        workload = preloaded(workload)
    if confirm is not None and confirm.kind == "preloaded":
        confirm = preloaded(confirm)
    return work_dir, workload, confirm


def _reference(config: TuneConfig, space: SearchSpace,
               target: Target) -> tuple[tuple[dict[str, Flag], str] | None, Reference]:
    """(the user's configuration as a baseline: --baseline, else --base-options' searched options; what
    gains are measured against: it, else rocksdb-default)."""
    baseline, base_options = config.revalidation.baseline, config.target.base_options
    if baseline is not None:
        flags, values, doc = load_baseline(Path(baseline), space)
        return (flags, doc), Reference(BASELINE_NAME, flags, values)
    if base_options is not None:
        searched = {p.flag: p for p in space.parameters}
        flags = {f: v for f, v in target.base.items() if f in searched}
        values = {searched[f].name: v for f, v in flags.items()}
        return ((flags, f"your configuration: the OPTIONS file {base_options} (--base-options)"),
                Reference(BASELINE_NAME, flags, values))
    return None, Reference(DEFAULT_BASELINE, {})


def baseline_memory(found: Found, workload: Task) -> tuple[int, str] | None:
    """(the trials' memory rocksdb-default needs, what it holds in words): its memtables and block cache
    as it runs them (:func:`tuner.backends.default_config`), as the memory budget's 3/4 of the trials'
    memory (the rest db_bench itself and the page cache: :func:`memory_plan`); None with no db_bench, or
    where its flags do not say."""
    options = [o.flag for o in catalogue().values() if o.holds is not None]  # what the catalogue says holds memory
    held = holding(default_config(found, workload, options).values())
    if held is None:
        return None
    whole_mib = -(-held_bytes(held) * 4 // (3 * MiB))
    return whole_mib * MiB, (f"{held['memtables']} x {fmt_bytes(held['memtable'])} memtables + "
                             f"{fmt_bytes(held['cache'])} block cache")


def _memory_note(deployment: TargetConfig, limit: int | None, needs: tuple[int, str] | None,
                 target: Target | None = None, trial_data: int = 0) -> str | None:
    """One line when rocksdb-default cannot fit the trials' memory as the user set it (--target-memory or
    --memory-limit; a workload's data_to_memory is its design): its runs may be killed for memory; or when
    --scale trials run in more memory than the target's memory:data ratio gives them (what rocksdb-default
    needs, or the least the trials run in): they hold more of their data in memory than the target does
    (steady-readrandom at --scale 0.25 of 2 GiB within 512 MiB ran in 214 MiB, not 128 MiB, and what its
    trials ranked did not carry to the target: docs/results.md)."""
    flag = "--memory-limit" if deployment.memory_limit else "--target-memory" if deployment.target_memory else None
    if flag is None or limit is None:
        return None
    if target is not None and target.memory and deployment.target_memory and trial_data < 0.99 * target.data:
        ratio = int(target.memory * trial_data / target.data)
        if limit > 1.01 * ratio and (needs is None or needs[0] <= limit):
            why = (f"rocksdb-default's {needs[1]} need it" if needs and needs[0] == limit else
                   f"{fmt_bytes(MIN_MEMORY_LIMIT)} is the least a trial runs in")
            least = math.ceil(100 * limit / target.memory) / 100
            keep = f"; --scale {least:g} or more keeps the ratio" if least < 1 else ""
            return (f"the trials run within {fmt_bytes(limit)}, more than the target's memory:data ratio gives their "
                    f"data ({fmt_bytes(ratio)}): {why}. They hold more of their data in memory than the target does, "
                    f"so what they rank (reads above all) may not carry to the target{keep}")
    if needs is None or needs[0] <= limit:
        return None
    return (f"rocksdb-default does not fit the trials' {fmt_bytes(limit)} ({flag}): its {needs[1]} need about "
            f"{fmt_bytes(needs[0])}, a quarter of it left to db_bench and the page cache; where its memtables fill, "
            "its runs may be killed for memory, and it is then reported as failed")


def memory_plan(deployment: TargetConfig, workload: Task, slot: Slot,
                target: Target | None = None, floor: int = 0) -> tuple[int | None, int]:
    """(memory limit of the scored phases, memory budget of the space).

    The limit is --target-memory (or --memory-limit), else the workload's data / data_to_memory (at
    least 64 MiB), else none; trials smaller than the target run in its memory:data ratio, at least 64
    MiB and at least ``floor`` (what rocksdb-default needs: :func:`baseline_memory`) up to the target's
    memory. The budget (memtables + block cache) is --memory-budget, else 3/4 of the limit (the rest is
    db_bench itself and the page cache), else a quarter of the slot's memory."""
    if deployment.memory_limit is not None and deployment.target_memory is not None:
        raise UsageError("--memory-limit: --target-memory already sets the memory the trials run in; give one")
    limit = deployment.memory_limit
    if deployment.target_memory is not None and target is not None and target.memory is not None:  # its memory:data ratio
        limit = max(MIN_MEMORY_LIMIT, min(floor, target.memory),
                    int(target.memory * min(1.0, workload.data_bytes() / target.data)))
    if limit is None and workload.data_to_memory:
        limit = max(MIN_MEMORY_LIMIT, int(workload.data_bytes() / workload.data_to_memory))
    if limit is not None and not 0 < limit <= slot.ram:
        flag = "--memory-limit" if deployment.memory_limit else "--target-memory" if deployment.target_memory else \
            "--target-data" if deployment.target_data else "--scale"
        raise UsageError(f"{flag}: the trials' memory would be {limit / MiB:,.0f} MiB; a trial has "
                         f"{slot.ram / GiB:.1f} GiB of memory (more than 0, at most that)"
                         + ("" if flag == "--memory-limit" else f"; the workload's data / {workload.data_to_memory:g}"
                            " sets it: give --target-memory" if not deployment.target_memory else ""))
    budget = deployment.memory_budget if deployment.memory_budget is not None else \
        (limit * 3 // 4 if limit else slot.ram // 4)
    if budget <= 0:
        raise UsageError(f"--memory-budget: must be > 0 bytes, got {budget}")
    if budget > (limit or slot.ram):
        what = f"the --memory-limit of {limit / MiB:,.0f} MiB" if limit else \
            f"this machine's {slot.ram / GiB:.1f} GiB of memory" if not slot.pinned else \
            f"a trial's {slot.ram / GiB:.1f} GiB share of memory"
        raise UsageError(f"--memory-budget: {budget / GiB:,.1f} GiB is more than {what}")
    return limit, budget


def target_workload(config: TuneConfig, space: SearchSpace, host: Context,
                    defaults: dict[str, Flag]) -> tuple[Target, Task, Task | None]:
    """What the study tunes for; its workload as the trials run it: at the target's data (or at
    --scale times it) in the target's LSM shape with the base options the space does not search, or,
    with no --target-data, at --scale as the workload itself is shaped; and, when the trials are
    smaller than the target, the workload at the target, where the re-validation confirms (its
    memory the target's); when the search runs shorter phases (--search-duration), the workload in
    the full ones, at the target or at the trials' size without one. ``defaults``: the flags every
    run starts from (the target's shape follows them)."""
    m, d, backend = config.measurement, config.target, BACKENDS[config.measurement.backend]
    named = backend.task(config)
    for flag, given in (("--duration", m.duration), ("--search-duration", m.search_duration)):
        if given is not None and not backend.timed(named):
            raise UsageError(f"{flag}: workload {named.name} has no timed phase (its phases run a set number "
                             "of operations); the preloaded workloads (rocksdb-tuner workloads) have")
    if m.duration is not None:
        named = replace(named, duration=m.duration)
    # what confirms at --duration: the re-validation, or a capacity study's capacity stage (--slo)
    seconds = _search_duration(m, named, bool(config.revalidation.revalidate) or config.search.objective == "capacity")
    short = replace(named, duration=seconds) if seconds else named  # the search's trials' phases
    if d.target_data is not None and named.kind == "replay":
        raise UsageError("--target-data: a trace replays on its --db-snapshot as it is; the snapshot is the target")
    if named.kind == "preloaded" or d.target_data is not None:
        for flag, value, why in (
                ("--fidelity", config.search.fidelity, "runs of a preloaded DB cost their timed phase whatever its "
                 "size"),
                ("--confirm-scale", config.revalidation.confirm_scale, "a target is confirmed at --target-data")):
            if value and (flag != "--fidelity" or named.kind == "preloaded"):
                raise UsageError(f"{flag}: not with {'a preloaded workload' if named.kind == 'preloaded' else '--target-data'}"
                                 f" ({why})")
    one = backend.sized(named, 1.0, host)
    data, base_options = d.target_data, d.base_options
    if m.db_snapshot and named.kind == "preloaded":  # the user's DB: the target, its OPTIONS the base
        data, base_options = _snapshot_target(m, d)
    target = make_target(data, d.target_memory, base_options, int(one.data_bytes() * (m.scale or 1.0)), host.ram,
                         defaults)
    if target.assumed:  # with shorter search phases, confirmed at the workload's own
        scale = m.scale or 1.0
        return target, backend.sized(short, scale, host), backend.sized(named, scale, host) if seconds else None
    searched = frozenset(p.flag for p in space.parameters)

    def there(task: Task, share: float) -> Task:  # at a share of the target's data, in its shape
        return backend.sized(task, share * target.data / one.data_bytes(), host, target, searched)

    at_target = replace(there(named, 1.0), memory=target.memory)
    if m.scale is not None and m.scale > 1:
        raise UsageError(f"--scale: with --target-data, the trials' share of the target's data (at most 1), got "
                         f"{m.scale:g}")
    if m.scale is None or m.scale > 0.99:
        return target, there(short, 1.0), at_target if seconds else None
    # smaller than the target, in its shape; confirmed at the target
    return target, there(short, m.scale), at_target


def _search_duration(m: MeasurementConfig, workload: Task, confirms: bool) -> float | None:
    """The seconds of the search's trials' timed phases when shorter than those the answer is
    confirmed in (--search-duration, else the workload's ``search_duration``); None when the same, or
    when nothing confirms (``confirms``: a re-validation, or a capacity study's capacity searches, runs)."""
    if not confirms:
        if m.search_duration is not None:
            raise UsageError("--search-duration: the re-validation confirms the answer at --duration (or, with "
                             "--objective capacity, --slo's capacity searches); with --revalidate 0 nothing would (give "
                             "--duration alone)")
        return None
    if m.search_duration is not None and workload.duration is not None and m.search_duration > workload.duration:
        raise UsageError(f"--search-duration: at most the {workload.duration:g} s phases the answer is confirmed in "
                         f"(--duration), got {m.search_duration:g} s")
    seconds = m.search_duration if m.search_duration is not None else workload.search_duration
    if seconds is None or workload.duration is None or seconds >= workload.duration:
        return None
    return seconds


def _rungs(config: TuneConfig, workload: Task, target: Target, searched: set[str], host: Context,
           limit: int | None, floor: int) -> tuple[Task, ...]:
    """--fidelity: the workload at each rung's fraction of the trials' data, the last the trials' own;
    with a target, each in the target's shape and within the same fraction of the trials' memory (the
    target's memory:data ratio at every size), at least 64 MiB and ``floor`` (what rocksdb-default
    needs) up to the trials' memory."""
    fractions = config.search.fidelity
    if not fractions:
        return ()
    backend, rungs = BACKENDS[config.measurement.backend], []
    for f in fractions[:-1]:
        shape = (None, frozenset()) if target.assumed else (target, frozenset(searched))
        rung = replace(backend.sized(backend.task(config), workload.scale * f, host, *shape), drain=workload.drain)
        if not target.assumed:
            rung = replace(rung, memory=max(MIN_MEMORY_LIMIT, min(floor, limit), int(limit * f)) if limit else None)
        rungs.append(rung)
    return (*rungs, workload)


def _snapshot_target(m: MeasurementConfig, d: TargetConfig) -> tuple[int, Path | None]:
    """A preloaded workload on --db-snapshot: (the target's data, its base OPTIONS): --target-data, else
    the snapshot's bytes on disk; --base-options, else the snapshot's own latest OPTIONS file."""
    assert m.db_snapshot is not None
    if m.scale is not None and m.scale <= 0.99:
        raise UsageError(f"--scale: the runs start from --db-snapshot {m.db_snapshot} as it is (its size is the "
                         f"target's), not from {m.scale:g} of it")
    try:
        size, options = snapshot_files(Path(m.db_snapshot))
    except SnapshotError as exc:
        raise UsageError(str(exc)) from None
    return (d.target_data if d.target_data is not None else size,
            d.base_options if d.base_options is not None else options)


def check_disk(work_dir: Path, workload: Task, target: Target, confirm: Task | None) -> None:
    """The work dir's disk holds a trial's DB (and a preloaded one), else one line naming the flag."""
    largest = max(workload.data_bytes(), confirm.data_bytes() if confirm else 0)
    factor = workdir.PRELOADED_FACTOR if workload.kind == "preloaded" else workdir.SPACE_FACTOR
    try:
        workdir.check_space(work_dir, largest, f"workload {workload.name} with {fmt_bytes(largest)} of data", factor)
    except workdir.WorkDirError as exc:
        if target.assumed:
            raise UsageError(str(exc)) from None
        fits = workdir.largest_data(work_dir, factor)
        raise UsageError(f"--target-data: {target.data / GiB:,.1f} GiB does not fit this machine: {exc}; the "
                         f"largest target its disk holds is about {fits / GiB:,.1f} GiB (or give a --work-dir "
                         "on a bigger disk)") from None


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
    return TrialRecord.of(trial).constraints
