"""What a study tells its observers as it goes, and the bus that hands each event to all of them.

The engine emits; observers (progress, MLflow) receive a read-only snapshot with each event and
never import the engine. An observer that wants to say something (a note) says it on the bus, so
every observer sees it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optuna.trial import FrozenTrial

from tuner.model import StudySnapshot, TuneResult
from tuner.trials import BaselineRecord


class Observer:
    """Receives a study's events; every method is optional (the base ignores them all)."""

    bus: EventBus | None = None

    def attach(self, bus: EventBus) -> None:
        self.bus = bus

    def study_started(self, snapshot: StudySnapshot) -> None: ...
    def note(self, text: str) -> None: ...
    def baseline_started(self, name: str) -> None: ...
    def baseline_done(self, snapshot: StudySnapshot, record: BaselineRecord) -> None: ...
    def trial_started(self, number: int, index: int, total: int, params: dict[str, Any]) -> None: ...
    def trial_rejected(self, snapshot: StudySnapshot, number: int, reason: str) -> None: ...
    def trial_done(self, snapshot: StudySnapshot, trial: FrozenTrial, seconds: float) -> None: ...
    def study_stopped(self, snapshot: StudySnapshot, status: str) -> None: ...
    def study_finished(self, snapshot: StudySnapshot, result: TuneResult, plots: Path | None) -> None: ...


class EventBus(Observer):
    """Hands every event to each observer, in the order given."""

    def __init__(self, observers: Iterable[Observer] = ()):
        self.observers = list(observers)
        for o in self.observers:
            o.attach(self)

    def study_started(self, snapshot: StudySnapshot) -> None:
        for o in self.observers:
            o.study_started(snapshot)

    def note(self, text: str) -> None:
        for o in self.observers:
            o.note(text)

    def baseline_started(self, name: str) -> None:
        for o in self.observers:
            o.baseline_started(name)

    def baseline_done(self, snapshot: StudySnapshot, record: BaselineRecord) -> None:
        for o in self.observers:
            o.baseline_done(snapshot, record)

    def trial_started(self, number: int, index: int, total: int, params: dict[str, Any]) -> None:
        for o in self.observers:
            o.trial_started(number, index, total, params)

    def trial_rejected(self, snapshot: StudySnapshot, number: int, reason: str) -> None:
        for o in self.observers:
            o.trial_rejected(snapshot, number, reason)

    def trial_done(self, snapshot: StudySnapshot, trial: FrozenTrial, seconds: float) -> None:
        for o in self.observers:
            o.trial_done(snapshot, trial, seconds)

    def study_stopped(self, snapshot: StudySnapshot, status: str) -> None:
        for o in self.observers:
            o.study_stopped(snapshot, status)

    def study_finished(self, snapshot: StudySnapshot, result: TuneResult, plots: Path | None) -> None:
        for o in self.observers:
            o.study_finished(snapshot, result, plots)
