"""The study engine: a request checked and prepared (:mod:`._prepare`), its storage (:mod:`._storage`),
the one trial loop (:mod:`._engine`), re-validation, warm starts and the study lock. Its modules are
private; what the apps and scripts use is here."""

from tuner.engine._capacity import CapacityOfConfig
from tuner.engine._engine import Engine
from tuner.engine._prepare import (
    Prepared,
    check_values,
    memory_plan,
    prepare,
    pruner_of,
    score_of,
    space_for,
    target_workload,
)
from tuner.engine._served import ServeConfig
from tuner.engine._signals import STOPS, stop_exit, stop_signals, stopped_by
from tuner.engine._storage import saved_rounds
from tuner.engine._warmstart import starts

__all__ = ["STOPS", "CapacityOfConfig", "Engine", "Prepared", "ServeConfig", "check_values", "memory_plan", "prepare",
           "pruner_of", "saved_rounds", "score_of", "space_for", "starts", "stop_exit", "stop_signals", "stopped_by",
           "target_workload"]
