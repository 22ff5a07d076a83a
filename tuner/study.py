"""A tuning study: Optuna ask/tell over a search space, each trial measured by the runner.

The optimizer never knows how a trial runs and the runner never knows which sampler chose it.
Everything a study learns lives in its Optuna storage: trials (params, values, metrics as user
attributes) and baselines (study user attributes), so a study resumes where it stopped.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy.exc import SQLAlchemyError

from objectives.dbbench import DbBench, probe
from objectives.measurement import Measurement, measure
from objectives.metrics import spread
from objectives.runner import RUNNER_FLAGS, IntervalObserver, Runner, RunFailed, RunStopped
from objectives.scores import Score, ScoreError
from objectives import workdir
from objectives.workloads import OUTSIDE_FLAGS, RESERVED_FLAGS, Workload, load_workload
from search_spaces import Context, SearchSpace, load_space
from tuner import options_file
from tuner.lock import StudyBusy, StudyLock
from tuner.parallel import ParallelError, RayPool, run_parallel
from tuner.progress import Progress, SilentProgress
from tuner.pruners import PrunerError, make_pruner
from tuner.report import write_outputs
from tuner.revalidation import revalidate
from tuner.warmstart import WarmStartError, enqueue_hand_found, warm_start
from tuner.samplers import choose, make_sampler
from tuner.tracking import TrackingError, make_tracker

DEFAULT_BASELINE = "rocksdb-default"
# Trial outcomes (user attribute "outcome"). Only "complete" and "failed" count toward --trials.
COUNTED = ("complete", "failed")


class UsageError(ValueError):
    """A tuning request that cannot start; the message names the flag or field."""


@dataclass
class TuneConfig:
    """Everything a study needs; the CLI flags map one to one onto these fields."""

    workload: str | Path = "fillrandom"
    space: str | Path | SearchSpace = "default"  # a preset name, a file, or a space built in code
    trials: int = 20
    sampler: str = "auto"  # see tuner.samplers.choose
    objective: str = "throughput"
    study: str | None = None
    storage: str | None = None
    out: Path | None = None
    db_bench: str | None = None
    seed: int | None = None
    trial_timeout: float = 600.0
    work_dir: Path | None = None
    max_p99_us: float | None = None
    max_write_amp: float | None = None
    scale: float = 1.0
    memory_budget: int | None = None
    baselines: bool = True
    mlflow: bool = True
    mlflow_uri: str | None = None
    experiment: str | None = None
    plots: bool = True
    repeats: int = 1
    pruner: str = "none"
    pruner_warmup: int = 4  # experiments/results/pruning*.json: 2 s pruned too eagerly on fillrandom
    warm_start: str | None = None
    revalidate: int = 0
    revalidate_rounds: int = 3
    parallel: int = 1  # trials at once, on Ray workers when > 1 (tuner.parallel)
    ray_address: str | None = None  # an existing Ray cluster ("auto", "HOST:PORT", "ray://HOST:PORT")
    cpus_per_trial: int | None = None  # default: the cluster's CPUs / --parallel, at least 1
    one_trial_per_node: bool = False
    allow_mixed_db_bench: bool = False
    hand_found_first: bool = True  # a new study runs the workload's hand-found configurations first
    tags: dict[str, str] = field(default_factory=dict)  # extra MLflow tags on every run of the study


@dataclass
class TuneResult:
    """What a study found: best configuration, baselines, every trial, and the written summary."""

    study_name: str
    out: Path
    best_params: dict[str, Any]
    best_metrics: dict[str, float | None]
    baselines: list[dict[str, Any]]
    trials: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)


class Study:
    """A prepared study: inputs validated, db_bench probed, storage opened. ``run()`` measures."""

    def __init__(self, config: TuneConfig, progress: Progress | None = None):
        self.config = config
        self.progress = progress or SilentProgress()
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
        if config.pruner != "none" and (config.parallel > 1 or config.ray_address):
            raise UsageError("--pruner: needs --parallel 1 without --ray-address (a pruner watches each run "
                             "second by second in this process)")
        self.score = _score(config)
        try:
            self.tracker = make_tracker(config.mlflow, config.mlflow_uri, config.experiment)
        except TrackingError as exc:
            raise UsageError(str(exc)) from None
        try:
            if not isinstance(config.pruner_warmup, int) or config.pruner_warmup < 0:
                raise PrunerError(f"--pruner-warmup: must be a whole number of seconds >= 0, got {config.pruner_warmup}")
            self.pruner = make_pruner(config.pruner, self.score.directions, config.pruner_warmup)
        except PrunerError as exc:
            raise UsageError(str(exc)) from None
        self.db_bench: DbBench = probe(config.db_bench)
        host = Context.of_host()
        budget = config.memory_budget if config.memory_budget is not None else host.ram // 4
        if budget <= 0:
            raise UsageError(f"--memory-budget: must be > 0 bytes, got {budget}")
        self.workload: Workload = load_workload(config.workload).resolve(config.scale, host)
        ctx = Context(cores=host.cores, ram=host.ram, data=self.workload.data_bytes(), scale=config.scale, budget=budget)
        space = config.space if isinstance(config.space, SearchSpace) else load_space(config.space)
        self.space: SearchSpace = space.resolve(ctx)
        self._check_flags()
        sampler = choose(config.sampler, multi_objective=len(self.score.directions) > 1,
                         constrained=self.score.constrained, parallel=config.parallel > 1 or bool(config.ray_address))
        self.config = config = replace(config, sampler=sampler)
        self.sampler = make_sampler(
            config.sampler,
            seed=config.seed,
            directions=self.score.directions,
            grid=self.space.grid(),
            constraints_func=_constraints_of if self.score.constrained else None,
            trials=config.trials,
        )
        self.trials_wanted = config.trials
        # A grid visits every feasible point by itself: no repairs, and no more trials than points.
        self.repair_rejected = config.sampler != "grid"
        if config.sampler == "grid":
            self.trials_wanted = min(config.trials, self.space.feasible_grid_size())
        self.name = config.study or f"{self.workload.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            work_dir = workdir.prepare(Path(config.work_dir) if config.work_dir is not None else None)
            workdir.check_space(work_dir, self.workload.data_bytes(),
                                f"workload {self.workload.name} at --scale {config.scale:g}")
        except workdir.WorkDirError as exc:
            raise UsageError(str(exc)) from None
        self.runner = Runner(self.db_bench, work_dir=work_dir, timeout=config.trial_timeout)
        self.out = Path(config.out) if config.out else Path("runs") / self.name
        self.storage = config.storage or f"sqlite:///{(self.out / 'study.db').resolve()}"
        self.lock = StudyLock(self.storage, self.name)
        try:
            self.lock.acquire()
        except StudyBusy as exc:
            raise UsageError(str(exc)) from None
        self.db_bench_seed = config.seed if config.seed else 1
        self.revalidation: dict[str, Any] | None = None
        self.pool: RayPool | None = None
        try:
            if config.parallel > 1 or config.ray_address:  # before anything is written: Ray may refuse
                self.pool = RayPool(self)
                try:
                    self.pool.start()
                except ParallelError as exc:
                    raise UsageError(str(exc)) from None
            _prepare_out(self.out)
            self.optuna_study = self._open()
            self.seeded = self._seed() if not self.optuna_study.trials else []
        except WarmStartError as exc:
            self.close()
            raise UsageError(str(exc)) from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the study lock and, with --parallel, let go of Ray."""
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        self.lock.release()

    # -- set-up -----------------------------------------------------------------------------------
    def _check_flags(self) -> None:
        for p in self.space.parameters:
            if p.flag in RESERVED_FLAGS | OUTSIDE_FLAGS:
                raise UsageError(f"space {self.space.name}: parameters.{p.name}.flag: --{p.flag} is set by the tuner "
                                 "or names a path outside the trial's DB directory; it cannot be tuned")
        flags = set(self.workload.all_flags()) | {p.flag for p in self.space.parameters} | RUNNER_FLAGS
        self.db_bench.check_flags(sorted(flags), where=f"workload {self.workload.name} / space {self.space.name}")

    def _open(self) -> optuna.Study:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        try:
            study = optuna.create_study(
                study_name=self.name,
                storage=self.storage,
                sampler=self.sampler,
                pruner=self.pruner,
                directions=self.score.directions,
                load_if_exists=True,
            )
        except ValueError as exc:  # e.g. resuming with other directions
            raise UsageError(f"--study {self.name}: {exc}") from None
        except SQLAlchemyError as exc:  # a corrupt, foreign or unreachable storage
            flag = "--storage" if self.config.storage else "--out"
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise UsageError(f"{flag}: cannot open the study storage {self.storage}: {reason}") from None
        identity = {
            "workload": self.workload.name,
            "space": self.space.name,
            "objective": self.score.objective,
            "scale": self.config.scale,
        }
        if not study.user_attrs.get("uid"):  # names the study in MLflow, whatever its storage URL
            study.set_user_attr("uid", uuid.uuid4().hex)
        if not study.user_attrs.get("identity"):
            study.set_user_attr("identity", identity)
            study.set_user_attr("space", {p.name: p.describe() for p in self.space.parameters})
            study.set_user_attr("db_bench", self.db_bench.to_dict())
            study.set_user_attr("repeats", self.config.repeats)
        elif study.user_attrs["identity"] != identity:
            raise UsageError(
                f"--study {self.name}: exists with {study.user_attrs['identity']}, not {identity}; "
                "use another --study name to tune something else"
            )
        else:
            before, now = study.user_attrs["db_bench"], self.db_bench.to_dict()
            if (before["version"], before["assertions"]) != (now["version"], now["assertions"]):
                raise UsageError(
                    f"--study {self.name}: was measured with db_bench {before['version']} "
                    f"(assertions={before['assertions']}) at {before['path']}, not {now['version']} "
                    f"(assertions={now['assertions']}) at {now['path']}; measurements would not compare, "
                    "use another --study name"
                )
        if study.user_attrs.get("repeats", 1) != self.config.repeats:
            raise UsageError(f"--repeats: study {self.name} measures each trial {study.user_attrs.get('repeats', 1)} "
                             f"time(s), not {self.config.repeats}; its trials would not compare")
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            study._storage.set_trial_user_attr(trial._trial_id, "outcome", "interrupted")
            study._storage.set_trial_user_attr(trial._trial_id, "fail_reason", "abandoned: the tuner stopped mid-trial")
            study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
            self._rerun_grid_point(study, trial.params)
        return study

    def _rerun_grid_point(self, study: optuna.Study, params: dict[str, Any]) -> None:
        """Optuna's grid counts a failed point as visited: an interrupted one is queued to run again."""
        if self.config.sampler == "grid" and params:
            study.enqueue_trial(params)

    def _seed(self) -> list[str]:
        """A new study runs the hand-found configurations first and learns from --warm-start's trials."""
        notes = [f"runs {name} first" for name in enqueue_hand_found(self)] if self.config.hand_found_first else []
        if self.config.warm_start:
            copied = warm_start(self, self.config.warm_start)
            notes.append(f"learns from {copied} trials of {self.config.warm_start} (not counted, never named best)")
        return notes

    # -- measuring --------------------------------------------------------------------------------
    def measure(self, flags: dict[str, Any], log_dir: Path, repeats: int | None = None,
                observer: IntervalObserver | None = None) -> Measurement:
        """Run the workload ``repeats`` (default --repeats) times, here or (with --parallel) on a Ray
        worker; see :func:`objectives.measurement.measure`."""
        if self.pool is not None:
            return self.pool.measure(flags, log_dir, repeats or self.config.repeats)
        return measure(self.runner, self.workload, flags, log_dir, repeats or self.config.repeats,
                       self.db_bench_seed, observer)

    def _baselines(self) -> list[tuple[str, dict[str, Any], str]]:
        items = [(DEFAULT_BASELINE, {}, "db_bench with none of the tuned flags (its own defaults)")]
        if self.config.baselines:
            items += [(b.name, b.flags, b.doc) for b in self.workload.baselines]
        return items

    def run_baselines(self) -> None:
        """Measure each baseline once per study (kept in the study, so a resume skips them)."""
        for name, flags, doc in self._baselines():
            key = f"baseline:{name}"
            if key in self.optuna_study.user_attrs:
                continue
            self.progress.baseline_started(name)
            log_dir = self.out / "baselines" / name.replace(":", "-")
            record: dict[str, Any] = {"name": name, "flags": flags, "doc": doc, "log_dir": str(log_dir)}
            started = time.monotonic()
            try:
                m = self.measure(flags, log_dir)
                record.update(state="COMPLETE", metrics=m.metrics, phases=m.details, commands=m.commands)
                if m.repeats:
                    record.update(repeats=m.repeats, spread_ops_per_sec=spread([r["ops_per_sec"] or 0.0 for r in m.repeats]))
            except RunFailed as exc:
                record.update(state="FAIL", reason=exc.reason, metrics={})
            record["seconds"] = round(time.monotonic() - started, 2)
            record["ended"] = time.time()
            self.optuna_study.set_user_attr(key, record)
            self.progress.baseline_done(record)
            self.tracker.record(self)

    def run_trials(self) -> None:
        """Ask, check constraints, measure, tell, until --trials trials are measured: here one at a
        time, or on Ray workers with --parallel N / --ray-address (tuner.parallel)."""
        if self.pool is not None:
            run_parallel(self, self.pool)
            return
        while (done := self.counted_trials()) < self.trials_wanted:
            asked = self.ask()
            if asked is None:
                continue
            trial, params = asked
            self.progress.trial_started(trial.number, done + 1, self.trials_wanted, params)
            started = time.monotonic()
            try:
                self._measure_trial(trial, params)
            except KeyboardInterrupt:
                self.interrupted(trial)
                raise
            self.trial_finished(trial.number, time.monotonic() - started)

    def ask(self) -> tuple[optuna.Trial, dict[str, Any]] | None:
        """The sampler's next configuration, or None when it broke a constraint.

        A proposal that breaks a constraint is never run: it is told as a FAIL with outcome
        "rejected", and the nearest feasible configuration (see SearchSpace.repair) is enqueued as
        the next trial. Samplers that ignore failed trials (GP) would otherwise propose it forever.
        """
        trial = self.optuna_study.ask()
        params = self.space.suggest(trial)
        violations = self.space.violations(params)
        if not violations:
            trial.set_user_attr("log_dir", str(self.trial_log_dir(trial.number)))
            return trial, params
        trial.set_user_attr("outcome", "rejected")
        trial.set_user_attr("fail_reason", "; ".join(violations))
        self.optuna_study.tell(trial, state=TrialState.FAIL)
        self.progress.trial_rejected(trial.number, violations[0])
        if self.repair_rejected:
            repaired = self.space.repair(params, seed=trial.number)
            self.optuna_study.enqueue_trial(repaired, user_attrs={"repaired_from": trial.number})
        self.tracker.record(self)
        return None

    def interrupted(self, trial: optuna.Trial) -> None:
        trial.set_user_attr("outcome", "interrupted")
        trial.set_user_attr("fail_reason", "interrupted by the user (Ctrl-C)")
        self.optuna_study.tell(trial, state=TrialState.FAIL)
        self._rerun_grid_point(self.optuna_study, trial.params)

    def trial_finished(self, number: int, seconds: float) -> None:
        frozen = self.optuna_study.trials[number]
        self.progress.trial_done(frozen, seconds, self.best_trial(), self.trials_wanted)
        self.tracker.record(self)

    def trial_log_dir(self, number: int) -> Path:
        return self.out / "trials" / f"{number:04d}"

    def _measure_trial(self, trial: optuna.Trial, params: dict[str, Any]) -> None:
        log_dir = self.trial_log_dir(trial.number)
        observer = _pruning_observer(trial) if self.config.pruner != "none" else None
        started = time.monotonic()
        try:
            m = self.measure(self.space.flags(params), log_dir, observer=observer)
        except RunStopped as exc:
            trial.set_user_attr("seconds", round(time.monotonic() - started, 3))
            trial.set_user_attr("outcome", "pruned")
            trial.set_user_attr("pruned_at", {"phase": exc.phase, "second": exc.second})
            self.optuna_study.tell(trial, state=TrialState.PRUNED)
            return
        except RunFailed as exc:
            self.record_failure(trial, exc.reason, time.monotonic() - started)
            return
        self.record_measurement(trial, params, m, time.monotonic() - started)

    def record_failure(self, trial: optuna.Trial, reason: str, seconds: float) -> None:
        """Tell a trial FAILED with its reason."""
        trial.set_user_attr("seconds", round(seconds, 3))
        trial.set_user_attr("outcome", "failed")
        trial.set_user_attr("fail_reason", reason)
        self.optuna_study.tell(trial, state=TrialState.FAIL)

    def record_measurement(self, trial: optuna.Trial, params: dict[str, Any], m: Measurement, seconds: float) -> None:
        """Score a measured trial, keep its metrics and details, check its OPTIONS file, tell it."""
        try:
            values = self.score.values(m.metrics)
            constraints = self.score.constraints(m.metrics)
        except ScoreError as exc:
            self.record_failure(trial, str(exc), seconds)
            return
        trial.set_user_attr("seconds", round(seconds, 3))
        expected = {p: (self.space.parameter(p).options_key, v) for p, v in params.items()}
        mismatch = options_file.mismatches(m.options_text, expected)
        trial.set_user_attr("metrics", m.metrics)
        if m.repeats:
            trial.set_user_attr("repeats", m.repeats)
            trial.set_user_attr("spread_ops_per_sec", spread([r["ops_per_sec"] or 0.0 for r in m.repeats]))
        trial.set_user_attr("phases", m.details)
        trial.set_user_attr("commands", m.commands)
        if mismatch:
            trial.set_user_attr("options_mismatch", mismatch)
        if constraints:
            trial.set_user_attr("constraints", constraints)
        trial.set_user_attr("outcome", "complete")
        self.optuna_study.tell(trial, values)

    # -- results ----------------------------------------------------------------------------------
    def trials_by_outcome(self) -> dict[str, list[FrozenTrial]]:
        groups: dict[str, list[FrozenTrial]] = {k: [] for k in ("complete", "failed", "pruned", "rejected", "interrupted")}
        for t in self.optuna_study.get_trials(deepcopy=False):
            if t.state == TrialState.PRUNED:
                groups["pruned"].append(t)
            elif t.state in (TrialState.COMPLETE, TrialState.FAIL):
                groups.setdefault(t.user_attrs.get("outcome", "failed"), []).append(t)
        return groups

    def counted_trials(self) -> int:
        groups = self.trials_by_outcome()
        return sum(len(groups[k]) for k in (*COUNTED, "pruned"))

    def feasible(self, trial: FrozenTrial) -> bool:
        return all(c <= 0 for c in trial.user_attrs.get("constraints", []))

    def pareto_front(self) -> list[FrozenTrial]:
        complete = self.trials_by_outcome()["complete"]
        pool = [t for t in complete if self.feasible(t)] or complete
        signs = [1 if d == "maximize" else -1 for d in self.score.directions]

        def dominates(a: FrozenTrial, b: FrozenTrial) -> bool:
            pairs = [(s * x, s * y) for s, x, y in zip(signs, a.values, b.values)]
            return all(x >= y for x, y in pairs) and any(x > y for x, y in pairs)

        return [t for t in pool if not any(dominates(o, t) for o in pool if o is not t)]

    def best_trial(self) -> FrozenTrial | None:
        """The re-validated winner after --revalidate; before (or without) it, the highest ops/s among
        trials meeting the budgets (else the least-violating one)."""
        if self.revalidation and self.revalidation.get("best_trial") is not None:
            return self.optuna_study.trials[self.revalidation["best_trial"]]
        complete = self.trials_by_outcome()["complete"]
        if not complete:
            return None
        feasible = [t for t in complete if self.feasible(t)]
        if not feasible:
            return min(complete, key=lambda t: sum(max(0.0, c) for c in t.user_attrs.get("constraints", [])))
        pool = self.pareto_front() if len(self.score.directions) > 1 else feasible
        return max(pool, key=lambda t: t.user_attrs["metrics"]["ops_per_sec"] or 0.0)

    def baselines(self) -> list[dict[str, Any]]:
        attrs = self.optuna_study.user_attrs
        return [attrs[f"baseline:{n}"] for n, _, _ in self._baselines() if f"baseline:{n}" in attrs]

    def run(self) -> TuneResult:
        """Baselines first, then trials up to --trials counted ones; then write the outputs."""
        try:
            return self._run()
        finally:
            self.close()

    def _run(self) -> TuneResult:
        self.progress.study_started(self)
        try:
            self.tracker.start(self)
        except TrackingError as exc:
            raise UsageError(str(exc)) from None
        for note in self.seeded:
            self.progress.note(f"this new study {note}")
        if self.pool is not None:
            self.progress.note(self.pool.describe())
        if self.tracker.uri:
            self.progress.note(f"tracking in MLflow: {self.tracker.uri} (experiment "
                               f"{self.tracker.experiment_id}, parent run {self.tracker.parent_id})")
        stale = self.runner.sweep_stale()
        if stale:
            self.progress.note(f"removed {len(stale)} trial directories left by killed tuner runs in {self.runner.work_dir}")
        try:
            self.tracker.record(self)  # trials a killed run finished but did not log
            self.run_baselines()
            self.run_trials()
            if self.config.revalidate:
                self.revalidation = revalidate(self, self.config.revalidate, self.config.revalidate_rounds)
            result = write_outputs(self)
            plots = self._plots()
        except KeyboardInterrupt:
            self.tracker.stop(self, "KILLED")
            raise
        except BaseException:
            self.tracker.stop(self, "FAILED")
            raise
        self.tracker.finish(self, result, plots)
        self.progress.study_done(result)
        return result

    def _plots(self) -> Path | None:
        if not self.config.plots:
            return None
        from tuner.plots import write_plots

        dest, notes = write_plots(self)
        for note in notes:
            self.progress.note(f"plot {note}")
        return dest


def _score(config: TuneConfig) -> Score:
    try:
        return Score(config.objective, config.max_p99_us, config.max_write_amp)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _pruning_observer(trial: optuna.Trial) -> IntervalObserver:
    """Reports the scored phases' mean ops/s so far at each second; True when the pruner says stop."""
    seen: list[float] = []

    def observe(_phase: str, _second: int, qps: float) -> bool:
        seen.append(qps)
        trial.report(sum(seen) / len(seen), len(seen))
        return trial.should_prune()

    return observe


def _constraints_of(trial: FrozenTrial) -> list[float]:
    return trial.user_attrs.get("constraints", [])


def _prepare_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_file = out / ".write-test"
        probe_file.write_text("")
        probe_file.unlink()
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out}: {exc.strerror}") from None


def tune(**kwargs: Any) -> TuneResult:
    """Run a study from a tuning script: ``tune(workload="fillrandom", trials=20, sampler="tpe")``.

    Keyword arguments are the fields of :class:`TuneConfig`; progress goes to stderr.
    """
    from tuner.progress import ConsoleProgress

    progress = kwargs.pop("progress", None) or ConsoleProgress()
    return Study(TuneConfig(**kwargs), progress).run()

