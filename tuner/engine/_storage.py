"""A study's storage: the Optuna study that holds trials (params, values, metrics as user
attributes), baselines and re-validation samples (study user attributes), so a study resumes
where it stopped. Opening checks that a resumed study measures the same thing, and repairs what a
killed tuner left half done."""

from __future__ import annotations

import gc
import uuid
from typing import Any, TypeVar

import optuna
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy.exc import SQLAlchemyError

from objectives.scores import ScoreError
from tuner import options_file, ranking
from tuner.backends import BACKENDS, Measurement
from tuner.engine._prepare import Prepared
from tuner.executors import Outcome, failure_reason
from tuner.model import DEFAULT_BASELINE, UsageError
from tuner.stats import Rounds, spread
from tuner.summary import Build, Record
from tuner.trials import BaselineRecord, PrunedAt, TrialRecord, origin, record
from tuner.trials import attrs as trial_attrs

R = TypeVar("R", bound=Record)


def saved_rounds(study: optuna.Study, stage: str) -> Rounds | None:
    """A stored study's re-validation rounds of ``stage`` (``select``, ``estimate``) as the re-validation saved
    them; None when it ran none."""
    value = study.user_attrs.get(f"revalidation:{stage}")
    return None if value is None else Rounds.from_dict(value, stage)


def stored_build(attrs: dict[str, Any]) -> Build | None:
    """What measured a study, from its user attributes: ``build``, or ``db_bench`` as versions before
    :class:`Build` kept it; None when nothing was probed."""
    if attrs.get("build") is not None:
        return Build.from_dict(attrs["build"], "build")
    return Build.probed(attrs["db_bench"]) if attrs.get("db_bench") is not None else None


class StudyStore:
    """The Optuna study of a prepared study, and every write the engine makes to it."""

    def __init__(self, parts: Prepared):
        self.parts = parts
        self.study = self._open()

    def _open(self) -> optuna.Study:
        p = self.parts
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        try:
            storage = optuna.storages.get_storage(p.storage)
            study = optuna.create_study(study_name=p.name, storage=storage, sampler=p.sampler, pruner=p.pruner,
                                        directions=p.score.directions, load_if_exists=True)
        except ValueError as exc:  # e.g. resuming with other directions
            raise UsageError(f"--study {p.name}: {exc}") from None
        except SQLAlchemyError as exc:  # a corrupt, foreign or unreachable storage
            flag = "--storage" if p.config.tracking.storage else "--out"
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise UsageError(f"{flag}: cannot open the study storage {p.storage}: {reason}") from None
        self._check_identity(study)
        study_id = storage.get_study_id_from_name(p.name)
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):  # a killed tuner's
            trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
            for key, value in trial_attrs(outcome="interrupted",
                                          fail_reason="abandoned: the tuner stopped mid-trial").items():
                storage.set_trial_user_attr(trial_id, key, value)
            study.tell(trial.number, state=TrialState.FAIL)
            self._rerun(study, trial.params, TrialRecord.of(trial), always=False)
        return study

    def _check_identity(self, study: optuna.Study) -> None:
        """A new study records what it measures; a resumed one must measure the same."""
        p, measurement = self.parts, self.parts.config.measurement
        identity: dict[str, object] = {"workload": p.workload.name, "space": p.space.name, "objective": p.score.objective,
                    "scale": measurement.scale}
        if not BACKENDS[measurement.backend].workloads:  # another program measured is another question
            identity["backend"] = {"name": measurement.backend, "command": measurement.command,
                                   **({"load": measurement.load} if measurement.load else {})}
        if not p.workload.drain:  # burst ops/s do not compare with sustained ones
            identity["drain"] = False
        if p.target is not None and not p.target.assumed:  # another target is another question
            identity["target"] = {"data": p.target.data, "memory": p.target.memory, "source": p.target.source}
        if measurement.db_snapshot and p.workload.kind == "preloaded":  # the DB the runs start from
            identity["db_snapshot"] = p.workload.snapshot
        if p.found.defaults is not None and p.found.defaults.identity is not None:  # what every run started from
            identity["defaults"] = p.found.defaults.identity
        if not study.user_attrs.get("uid"):  # names the study in MLflow, whatever its storage URL
            study.set_user_attr("uid", uuid.uuid4().hex)
        if not study.user_attrs.get("identity"):
            study.set_user_attr("identity", identity)
            study.set_user_attr("space", p.space.describe()["parameters"])
            study.set_user_attr("constraints", p.space.describe()["constraints"])
            study.set_user_attr("widened", list(p.widened))  # to hold the references (tuner.engine._held)
            study.set_user_attr("build", p.found.build.to_dict() if p.found.build is not None else None)
            study.set_user_attr("repeats", measurement.repeats)
        elif study.user_attrs["identity"] != identity:
            raise UsageError(f"--study {p.name}: exists with {study.user_attrs['identity']}, not {identity}; "
                             "use another --study name to tune something else")
        elif (now := p.found.build) is not None and (before := stored_build(study.user_attrs)) is not None \
                and before.identity != now.identity:  # measured by another build: another version, say
            raise UsageError(f"--study {p.name}: was measured with {before.words()}, not {now.words()}; "
                             "measurements would not compare, use another --study name")
        self._check_duration(study)
        if study.user_attrs.get("repeats", 1) != measurement.repeats:
            raise UsageError(f"--repeats: study {p.name} measures each trial {study.user_attrs.get('repeats', 1)} "
                             f"time(s), not {measurement.repeats}; its trials would not compare")

    def _check_duration(self, study: optuna.Study) -> None:
        """A study of timed phases keeps their length: a 20 s and a 30 s run of one configuration differ
        (docs/scale.md, "How long a phase"). A study made before this was recorded takes its resume's."""
        duration = self.parts.workload.duration
        if duration is None:
            return
        confirm = self.parts.plan.workload
        for key, seconds, flag, what in (
                ("duration", duration, "--search-duration" if self.parts.stretch != 1.0 else "--duration", "trials"),
                ("confirm_duration", confirm.duration if confirm and confirm.duration else duration, "--duration",
                 "re-validation runs")):
            saved = study.user_attrs.get(key)
            if saved is None:
                study.set_user_attr(key, seconds)
            elif saved != seconds:
                raise UsageError(f"{flag}: study {self.parts.name}'s {what} run {saved:g} s phases, not {seconds:g} s; "
                                 f"they would not compare (give {flag} {saved:g}s, or another --study name)")

    def _rerun(self, study: optuna.Study, params: dict[str, Any], was: TrialRecord, always: bool) -> None:
        """Queue an interrupted configuration to run again, as the start or repair it was (``was``):
        ``always`` (an environment fault stopped it), and on the grid, which counts a failed point as
        visited."""
        if params and (always or self.parts.config.search.sampler == "grid"):
            study.enqueue_trial(params, user_attrs=origin(was))

    def after_interrupt(self) -> None:
        """Free a stopped read's cursor (once its traceback is gone), sessions, connections: their lock refuses writes."""
        gc.collect()
        backend = getattr(self.study._storage, "_backend", self.study._storage)
        session, engine = getattr(backend, "scoped_session", None), getattr(backend, "engine", None)
        if session is not None:
            session.remove()
        if engine is not None:
            engine.dispose()

    # -- reading ----------------------------------------------------------------------------------
    def trials(self) -> tuple[FrozenTrial, ...]:
        return tuple(self.study.get_trials(deepcopy=False))

    def attr(self, key: str, default: Any = None) -> Any:
        return self.study.user_attrs.get(key, default)

    def set_attr(self, key: str, value: Any) -> None:
        self.study.set_user_attr(key, value)

    def stored(self, key: str, kind: type[R]) -> R | None:
        """The record kept in study attribute ``key`` (as any version wrote it), None before one is."""
        value = self.attr(key)
        return None if value is None else kind.from_dict(value, key)

    def keep(self, key: str, value: Record) -> None:
        """Keep ``value`` in study attribute ``key`` (read back with :meth:`stored`)."""
        self.set_attr(key, value.to_dict())

    def baseline(self, name: str) -> BaselineRecord | None:
        """The baseline's run, once measured (study attribute ``baseline:<name>``)."""
        value = self.attr(f"baseline:{name}")
        return None if value is None else BaselineRecord.of(value)

    def set_baseline(self, run: BaselineRecord) -> None:
        self.set_attr(f"baseline:{run.name}", run.to_attr())

    # -- trials -----------------------------------------------------------------------------------
    def reject(self, trial: optuna.Trial, violations: list[str]) -> None:
        """A proposal that breaks a constraint: told FAIL with outcome "rejected", never run."""
        record(trial, outcome="rejected", fail_reason="; ".join(violations))
        self.study.tell(trial, state=TrialState.FAIL)

    def interrupted(self, trial: optuna.Trial, reason: str, rerun: bool) -> None:
        """Told FAIL with outcome "interrupted" (neither counted nor taught); ``rerun``: its
        configuration is queued to run again."""
        record(trial, outcome="interrupted", fail_reason=reason)
        self.study.tell(trial, state=TrialState.FAIL)
        self._rerun(self.study, trial.params, TrialRecord.of(trial), always=rerun)

    def pruned(self, trial: optuna.Trial, phase: str, second: int | None, seconds: float) -> None:
        """Told PRUNED: at ``second`` of ``phase`` by the pruner, or after a --fidelity rung (second None)."""
        record(trial, seconds=round(seconds, 3), outcome="pruned", pruned_at=PrunedAt(phase, second))
        self.study.tell(trial, state=TrialState.PRUNED)

    def failed(self, trial: optuna.Trial, reason: str, seconds: float) -> None:
        """Tell a trial FAILED with its reason."""
        record(trial, seconds=round(seconds, 3), outcome="failed", fail_reason=reason)
        self.study.tell(trial, state=TrialState.FAIL)

    def record(self, trial: optuna.Trial, params: dict[str, Any], outcome: Outcome, seconds: float) -> None:
        """Tell a trial's outcome: measured, failed or pruned, and where a worker ran it."""
        if outcome.node is not None:
            record(trial, node=outcome.node, attempts=outcome.job.attempt + 1)
        if outcome.build is not None:
            record(trial, build=outcome.build)
        if outcome.stopped is not None:
            self.pruned(trial, *outcome.stopped, seconds)
        elif outcome.measurement is None:
            self.failed(trial, failure_reason(outcome), seconds)
        else:
            self.measured(trial, params, outcome.measurement, seconds)

    def fidelity(self, fractions: tuple[float, ...] | None) -> None:
        """A study's rungs are part of what its trials measured: a resume must keep them."""
        if fractions is None:
            return
        saved = self.attr("fidelity")
        if saved is None:
            self.set_attr("fidelity", list(fractions))
        elif list(saved) != list(fractions):
            raise UsageError(f"--fidelity: study {self.parts.name} climbs the rungs {saved}, not {list(fractions)}")

    def measured(self, trial: optuna.Trial, params: dict[str, Any], m: Measurement, seconds: float) -> None:
        """Score a measured trial, keep its metrics and details, check its OPTIONS file, tell it."""
        p = self.parts
        try:
            values = p.score.values(m.metrics)
            constraints = p.score.constraints(m.metrics)
        except ScoreError as exc:
            self.failed(trial, str(exc), seconds)
            return
        expected = {name: (p.space.parameter(name).options_key, v) for name, v in params.items()}
        mismatch = options_file.mismatches(m.options_text, expected)
        record(trial, seconds=round(seconds, 3), metrics=m.metrics, phases=m.details, commands=m.commands)
        if m.repeats:
            record(trial, repeats=m.repeats, spread_ops_per_sec=spread([r["ops_per_sec"] or 0.0 for r in m.repeats]).to_dict())
        if mismatch:
            record(trial, options_mismatch=mismatch)
        if constraints:
            record(trial, constraints=constraints)
        default = None if p.config.search.any_cost else self.baseline(DEFAULT_BASELINE)
        if default is not None and default.complete and (over := ranking.over_cost(m.metrics, default.metrics)):
            record(trial, over_cost=over)  # beyond the cost guard: not a finalist, and skopt learns it as a failure
        record(trial, outcome="complete")
        self.study.tell(trial, values)
