"""The measurement contract's types: what any backend's run is given to watch it, returns, or raises
(docs/architecture.md, "Measurement backends"). Nothing here knows db_bench: its runner
(objectives.runner) and the command backend raise these alike, and the engine and the executors read
only these (through tuner.backends)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

# Called with (phase, second, ops/s of that second) as a scored phase reports, then with (phase, second,
# None) for each second after its operations ended (its drain: flushes and compactions, which db_bench
# does not report); and with (phase, second, None) for each second of an unscored phase (a load), whose
# operations are not scored. True stops the run.
IntervalObserver = Callable[[str, int, float | None], bool]

DISK_FULL = "the disk is full"
STOPPED = "stopped: the study is stopping"  # a run ended because the study is stopping (a worker told to stop)


class RunStopped(RuntimeError):
    """An interval observer asked to stop the run (e.g. a pruner) in ``phase`` after ``second`` s."""

    def __init__(self, phase: str, second: int):
        super().__init__(f"stopped in phase {phase} after {second} s")
        self.phase, self.second = phase, second


class RunFailed(RuntimeError):
    """The configuration's run failed: the program failed, timed out, or printed what does not parse,
    or a metric is missing or not a number; ``reason`` says which, in one line."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason

    @property
    def broken(self) -> tuple[str, str] | None:
        """(flag, what the program did not do) when the run broke its backend's contract
        (:class:`ContractBroken`), else None: the failure may be the configuration's."""
        return None


class ContractBroken(RunFailed):
    """The user's program (given by ``flag``, e.g. --command) broke its backend's contract: ``broke``
    says what it did not do (e.g. print a metrics line). Unlike a crash, a kill for memory or a timeout,
    no configuration changes that, so the engine stops the study at the first run's (rocksdb-default's)."""

    def __init__(self, reason: str, flag: str, broke: str):
        super().__init__(reason)
        self.flag, self.broke = flag, broke

    @property
    def broken(self) -> tuple[str, str] | None:
        return self.flag, self.broke


class EnvironmentFault(RuntimeError):
    """The run failed for a reason outside the configuration (``fault``: a full disk, a vanished work
    directory or preloaded DB, the program killed from outside); ``reason`` is the failure as seen.
    The study stops."""

    def __init__(self, fault: str, reason: str):
        super().__init__(f"{fault}: {reason}")
        self.fault, self.reason = fault, reason


@dataclass
class Measurement:
    """The representative run's metrics, phase details, OPTIONS file and commands; each repeat's metrics."""

    metrics: dict[str, float | None]
    details: list[dict[str, Any]]
    options_text: str
    commands: list[list[str]]
    repeats: list[dict[str, float | None]] = field(default_factory=list)
    representative: int = 0  # which repeat the metrics are from


@dataclass(frozen=True)
class Preloaded:
    """A DB built once per study and node that runs start from: where (a RocksDB directory), how long
    it took and its size; what its build found beside it, in words (``said``)."""

    path: Path
    seconds: float
    size_bytes: int
    reused: bool = False
    said: str = ""


class Task(Protocol):
    """What a backend runs for each configuration, as the engine reads it whatever the backend: a frozen dataclass
    of the backend's own (db_bench's :class:`objectives.workloads.Workload`, a program's or the open-loop
    driver's :class:`RunTask`), whose fields below the engine may replace (``dataclasses.replace``); the rest
    only its backend reads."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def name(self) -> str:
        """What it is called (a workload's name, the backend's for a program)."""

    @property
    def kind(self) -> str:
        """``load`` (every run builds its DB from empty), ``preloaded`` (runs start on a checkpoint of a DB
        built once per study and node) or ``replay`` (runs start on a copy of a given DB)."""

    @property
    def scale(self) -> float:
        """Its size as a share of its own at scale 1 (of the target's data, with one)."""

    @property
    def description(self) -> str:
        """What it does, in words."""

    @property
    def duration(self) -> float | None:
        """Seconds of each timed part of a run (None: its parts run a set amount of work)."""

    @property
    def search_duration(self) -> float | None:
        """Seconds of the search's trials' timed parts when shorter than :attr:`duration`."""

    @property
    def drain(self) -> bool:
        """Whether a run ends with the flushes and compactions it owes, charged to its timed parts."""

    @property
    def memory(self) -> int | None:
        """Bytes its runs run within (a cgroup), when not the study's."""

    @property
    def data_to_memory(self) -> float | None:
        """Its data over the memory its runs run within, when it sets that."""

    @property
    def snapshot(self) -> str | None:
        """The DB its runs start from (a copy or checkpoint of it), when they start from one."""

    @property
    def timed_parts(self) -> int:
        """How many timed parts a run has, each :attr:`duration` long."""

    def data_bytes(self) -> int:
        """Raw bytes of data its DB holds."""


@dataclass(frozen=True)
class RunTask:
    """A :class:`Task` of one timed run per configuration, with no phases of its own: a user's program
    (the command backend) or the open-loop driver (the rate backend)."""

    name: str
    description: str = ""
    data: int = 0  # raw bytes of data (--target-data), 0 when not known
    duration: float | None = None
    preloaded: bool = False  # runs start on a checkpoint of a DB built once (--load; the driver's load)
    scale: float = 1.0
    search_duration: float | None = None
    drain: bool = True
    memory: int | None = None
    data_to_memory: float | None = None
    snapshot: str | None = None
    timed_parts: int = 1

    @property
    def kind(self) -> str:
        return "preloaded" if self.preloaded else "load"

    def data_bytes(self) -> int:
        return self.data


def representative(each: list[dict[str, float | None]], metric: str = "ops_per_sec") -> int:
    """Which repeat stands for all: the one with the median ``metric`` (the lower middle one of an even
    count; a NaN, which the backend's check then refuses, is found as itself; a missing value counts 0)."""
    values = [m.get(metric) or 0.0 for m in each]
    return values.index(statistics.median_low(values))
