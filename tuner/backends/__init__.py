"""Measurement backends: what measures a configuration, behind one contract (tuner.backends.base).

``db_bench`` runs the study's workload on RocksDB's benchmark tool (objectives/); ``command`` runs the
user's own program on the configuration's OPTIONS file (--command); ``rate`` runs RocksDB at a fixed
offered rate, open loop (--rate). A new backend is a file with one
Backend subclass (:mod:`.base`, public) and a line here; the backends' own modules are private. The
contract's types (what a run returns or raises) are exported here, for the engine and the executors.
"""

from __future__ import annotations

from objectives.flags import Baseline
from tuner.backends._command import CommandBackend
from tuner.backends._db_bench import DbBenchBackend
from tuner.backends._db_bench import workload as as_workload
from tuner.backends._rate import RateBackend
from tuner.backends.base import (
    DISK_FULL,
    STOPPED,
    Backend,
    Config,
    ContractBroken,
    Description,
    EnvironmentFault,
    Found,
    IntervalObserver,
    Measurement,
    Node,
    Preloaded,
    RunFailed,
    RunStopped,
    Setup,
    Task,
    check_metrics,
    missing_metric,
)

BACKENDS: dict[str, type[Backend]] = {
    "db_bench": DbBenchBackend,
    "command": CommandBackend,
    "rate": RateBackend,
}


def hand_found(found: Found, workload: Task) -> tuple[Baseline, ...]:
    """The configurations found by hand for ``workload``, as the study's backend says (:meth:`Backend.hand_found`)."""
    return BACKENDS[found.backend].hand_found(workload)


def default_config(found: Found, task: Task, flags: list[str]) -> Config:
    """The configuration the rocksdb-default baseline runs, each of ``flags`` at its value, as the study's
    backend says (:meth:`Backend.default_config`, from what it ``found``): db_bench's defaults every run starts
    from under the ``task``'s own flags; a program's own defaults: none."""
    return BACKENDS[found.backend].default_config(found, task, flags)


__all__ = ["BACKENDS", "as_workload", "DISK_FULL", "STOPPED", "Backend", "Config", "ContractBroken", "Description",
           "EnvironmentFault", "Found", "IntervalObserver", "Measurement", "Node", "Preloaded", "RunFailed",
           "RunStopped", "Setup", "Task", "check_metrics", "default_config", "hand_found", "missing_metric"]
