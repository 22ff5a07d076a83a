"""Workloads: db_bench phases with fixed flags, which phases are scored, and hand-found baselines.

Each phase is one db_bench invocation on the same DB directory (later phases reopen it with
``--use_existing_db=1``), so every phase has its own statistics, peak RSS and CPU time.
A flag value written as ``{expr = "1_000_000 * scale"}`` is evaluated against the host context
(and ``duration``, the seconds of a timed phase: the workload's ``duration`` or ``--duration``; the
search's trials may run shorter phases, its ``search_duration`` or ``--search-duration``, and the
re-validation confirms the answer at ``duration``).

Three kinds: a *load* workload fills its DB from empty in every run; a *preloaded* one builds its
DB once per study (its ``[preload]`` phase) and every run starts on a hard-linked checkpoint of it,
so a run costs its timed phases whatever the DB's size; a *replay* runs a trace on a copy of a DB.
A preload with ``each_run = true`` is instead run in every run with that run's options (its
compression, filters and memtables write the files the scored phases read): a study runs such a
workload as a load one (:meth:`Workload.loading_each_run`), but on the user's DB (--db-snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from objectives.flags import Baseline, Flag, FlagError, check_flags, evaluate_flags
from search_spaces import files
from search_spaces.context import Context

PRESET_DIR = Path(__file__).with_name("presets")
# Benchmarks that print no "name : X micros/op" result line.
UNMEASURED = frozenset(
    {"waitforcompaction", "stats", "levelstats", "sstables", "flush", "resetstats", "memstats", "count",
     "compactall", "compact0", "compact1"}
)
FRESH_DB = ("fill", "bulkload")  # db_bench skips these with --use_existing_db
_DB_BENCH_DEFAULTS = {"num": 1_000_000, "key_size": 16, "value_size": 100}


class WorkloadError(FlagError):
    """A workload file or preset is invalid; the message names the field."""


@dataclass(frozen=True)
class Phase:
    """One db_bench invocation: its benchmarks, extra flags, and whether its throughput is scored."""

    name: str
    benchmarks: tuple[str, ...]
    flags: dict[str, Any] = field(default_factory=dict)
    scored: bool = False
    operations: int | None = None  # what the phase does when db_bench cannot count it (replay: 1 op)

    def measured(self) -> tuple[str, ...]:
        """Benchmarks expected to print a result line."""
        return tuple(b for b in self.benchmarks if b not in UNMEASURED)


@dataclass(frozen=True)
class Workload:
    name: str
    phases: tuple[Phase, ...]
    flags: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    source: str = ""
    baselines: tuple[Baseline, ...] = ()
    scale: float = 1.0
    drain: bool = True  # every phase ends with flush + waitforcompaction; scored phases pay for it
    data_to_memory: float | None = None  # default memory limit: data / this (read-heavy workloads)
    snapshot: str | None = None  # each run starts on a copy of this DB (trace replay)
    data: int | None = None  # its raw data bytes when the flags do not say (a snapshot's size)
    preload: Phase | None = None  # builds the DB once per study; runs start on checkpoints of it
    preload_each_run: bool = False  # [preload] each_run: every run loads it with its own options (first phase)
    duration: float | None = None  # seconds of each timed phase (the name ``duration`` in expressions)
    search_duration: float | None = None  # the search's trials' timed phases, when shorter (confirmed at duration)
    memory: int | None = None  # bytes its scored phases run within (a cgroup), when not the runner's

    @property
    def kind(self) -> str:
        """``load`` (every run fills its DB from empty), ``preloaded`` (runs start on a checkpoint of
        a DB built once) or ``replay`` (a trace on a copy of a given DB)."""
        return "preloaded" if self.preload is not None else "replay" if self.snapshot else "load"

    def loading_each_run(self) -> Workload:
        """This workload as a study runs it when its preload is ``each_run``: a load workload whose first
        phase is the preload, run with each run's options (unscored); any other workload as it is."""
        if self.preload is None or not self.preload_each_run:
            return self
        return replace(self, phases=(self.preload, *self.phases), preload=None)

    @property
    def runs_its_preload(self) -> bool:
        """Whether its first phase is its preload, run with each run's options (:meth:`loading_each_run`)."""
        return self.preload_each_run and self.preload is None

    @property
    def scored_phases(self) -> tuple[Phase, ...]:
        return tuple(p for p in self.phases if p.scored)

    @property
    def timed_parts(self) -> int:
        """Its scored phases, each a timed part of a run (objectives.contract.Task)."""
        return len(self.scored_phases)

    def data_bytes(self) -> int:
        """Raw bytes the load writes: num x (key_size + value_size), db_bench defaults filling gaps
        (a snapshot's size for a workload that starts from one)."""
        if self.data is not None:
            return self.data
        merged = {**_DB_BENCH_DEFAULTS, **self.flags}
        return int(merged["num"]) * (int(merged["key_size"]) + int(merged["value_size"]))

    def phase_flags(self, index: int) -> dict[str, Flag]:
        """Workload flags overridden by the phase's own."""
        return {**self.flags, **self.phases[index].flags}

    def all_flags(self) -> set[str]:
        names = set(self.flags)
        for phase in self.phases:
            names |= set(phase.flags)
        for baseline in self.baselines:
            names |= set(baseline.flags)
        return names

    def resolve(self, scale: float, ctx: Context) -> Workload:
        """Evaluate ``{expr = ...}`` values for a scale and host (``data`` is known only after)."""
        if not scale > 0:
            raise WorkloadError(f"--scale must be > 0, got {scale}")
        base = replace(ctx, scale=scale, extra={**ctx.extra, "duration": self.duration or 0})
        flags = _evaluated(self.flags, base, "flags")
        phases = tuple(
            replace(p, flags=_evaluated(p.flags, base, f"phases.{p.name}.flags")) for p in self.phases
        )
        preload = self.preload and replace(self.preload, flags=_evaluated(self.preload.flags, base, "preload.flags"))
        resolved = replace(self, flags=flags, phases=phases, scale=scale, preload=preload)
        with_data = replace(base, data=resolved.data_bytes())
        baselines = tuple(
            replace(b, flags=_evaluated(b.flags, with_data, f"baselines.{b.name}.flags")) for b in self.baselines
        )
        return replace(resolved, baselines=baselines)

    @classmethod
    def from_dict(cls, data: Any, name: str = "workload") -> Workload:
        if not isinstance(data, dict):
            raise WorkloadError("workload: expected a table with 'phases'")
        unknown = sorted(set(data) - {"name", "description", "source", "flags", "phases", "baselines", "drain",
                                      "data_to_memory", "preload", "duration", "search_duration"})
        if unknown:
            raise WorkloadError(f"unknown top-level field(s) {', '.join(unknown)}")
        flags = _checked(data.get("flags", {}), "flags")
        raw_phases = data.get("phases")
        if not isinstance(raw_phases, list) or not raw_phases:
            raise WorkloadError("phases: expected a non-empty list of [[phases]] tables")
        phases = tuple(_phase(i, spec) for i, spec in enumerate(raw_phases))
        names = [p.name for p in phases]
        if len(set(names)) != len(names):
            raise WorkloadError(f"phases: duplicate phase names in {names}")
        for index, phase in enumerate(phases[1:], start=1):
            fresh = [b for b in phase.benchmarks if b.startswith(FRESH_DB)]
            if fresh:
                raise WorkloadError(
                    f"phases[{index}].benchmarks: {fresh[0]} needs a fresh DB; only the first phase may load"
                )
        preload, each_run = _preload(data["preload"]) if "preload" in data else (None, False)
        if preload is not None:
            fresh = [b for p in phases for b in p.benchmarks if b.startswith(FRESH_DB)]
            if fresh:
                raise WorkloadError(f"phases: {fresh[0]} loads a fresh DB; a preloaded workload loads in [preload]")
            if each_run and preload.name in names:
                raise WorkloadError(f"phases: a phase is named {preload.name!r}, the name of the preload each run runs")
        duration, search_duration = data.get("duration"), data.get("search_duration")
        for key, value in (("duration", duration), ("search_duration", search_duration)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
                raise WorkloadError(f"{key}: expected seconds > 0 for each timed phase, got {value!r}")
        if search_duration is not None and (duration is None or search_duration > duration):
            raise WorkloadError(f"search_duration: the search's timed phases, at most the workload's duration "
                                f"({duration!r}), got {search_duration!r}")
        if not any(p.scored for p in phases):
            raise WorkloadError("phases: no phase has 'scored = true'")
        for phase in phases:
            if phase.scored and not phase.measured():
                raise WorkloadError(f"phases.{phase.name}: a scored phase needs a benchmark that reports ops/sec")
        raw_baselines = data.get("baselines", {})
        if not isinstance(raw_baselines, dict):
            raise WorkloadError("baselines: expected a table of name -> {flags, doc}")
        baselines = []
        for bname, spec in raw_baselines.items():
            if not isinstance(spec, dict) or set(spec) - {"flags", "doc"}:
                raise WorkloadError(f"baselines.{bname}: expected a table with 'flags' and optional 'doc'")
            baselines.append(
                Baseline(bname, _checked(spec.get("flags", {}), f"baselines.{bname}.flags"), str(spec.get("doc", "")))
            )
        drain, ratio = data.get("drain", True), data.get("data_to_memory")
        if not isinstance(drain, bool):
            raise WorkloadError("drain: expected true or false")
        if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not ratio > 0):
            raise WorkloadError(f"data_to_memory: expected a number > 0 (data / memory), got {ratio!r}")
        return cls(
            name=str(data.get("name", name)),
            description=str(data.get("description", "")),
            source=str(data.get("source", "")),
            flags=flags,
            phases=phases,
            baselines=tuple(baselines),
            drain=drain,
            data_to_memory=float(ratio) if ratio is not None else None,
            preload=preload,
            preload_each_run=each_run,
            duration=float(duration) if duration is not None else None,
            search_duration=float(search_duration) if search_duration is not None else None,
        )


def _preload(spec: Any) -> tuple[Phase, bool]:
    """The ``[preload]`` table: benchmarks that build the DB once (the first must load it), flags, and
    ``each_run`` (true: every run builds it with its own options)."""
    if not isinstance(spec, dict) or set(spec) - {"benchmarks", "flags", "each_run"}:
        raise WorkloadError("preload: expected a table with 'benchmarks' and optional 'flags' and 'each_run'")
    each_run = spec.get("each_run", False)
    if not isinstance(each_run, bool):
        raise WorkloadError(f"preload.each_run: expected true or false, got {each_run!r}")
    phase = _phase(0, {"name": "preload", **{k: v for k, v in spec.items() if k != "each_run"}}, "preload")
    if not phase.benchmarks[0].startswith(FRESH_DB):
        raise WorkloadError(f"preload.benchmarks: the first must load the DB (fillseq, fillrandom, ...), "
                            f"not {phase.benchmarks[0]}")
    return phase, each_run


def _phase(index: int, spec: Any, where: str = "") -> Phase:
    where = where or f"phases[{index}]"
    if not isinstance(spec, dict):
        raise WorkloadError(f"{where}: expected a table")
    unknown = sorted(set(spec) - {"name", "benchmarks", "flags", "scored"})
    if unknown:
        raise WorkloadError(f"{where}: unknown field(s) {', '.join(unknown)}")
    benchmarks = spec.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks or not all(
        isinstance(b, str) and b.replace("_", "").isalnum() for b in benchmarks
    ):
        raise WorkloadError(f"{where}.benchmarks: expected a non-empty list of db_bench benchmark names")
    scored = spec.get("scored", False)
    if not isinstance(scored, bool):
        raise WorkloadError(f"{where}.scored: expected true or false")
    name = spec.get("name", f"phase{index}")
    if not isinstance(name, str) or not name.replace("-", "").replace("_", "").isalnum():
        raise WorkloadError(f"{where}.name: expected letters, digits, '-' or '_'")
    return Phase(name, tuple(benchmarks), _checked(spec.get("flags", {}), f"{where}.flags"), scored)


def _checked(flags: Any, where: str) -> dict[str, Any]:
    """objectives.flags.check_flags, its refusal a workload's (WorkloadError)."""
    try:
        return check_flags(flags, where)
    except FlagError as exc:
        raise WorkloadError(str(exc)) from None


def _evaluated(flags: dict[str, Any], ctx: Context, where: str) -> dict[str, Flag]:
    """objectives.flags.evaluate_flags, its refusal a workload's (WorkloadError)."""
    try:
        return evaluate_flags(flags, ctx, where)
    except FlagError as exc:
        raise WorkloadError(str(exc)) from None


def preset_names() -> list[str]:
    return files.preset_names(PRESET_DIR)


def workload_file(name_or_path: str | Path) -> Path:
    """The file of a preset by name (see :func:`preset_names`), or the TOML/YAML file at a path."""
    return files.preset_or_file(name_or_path, PRESET_DIR, "workload", WorkloadError)


def load_workload(name_or_path: str | Path) -> Workload:
    """A preset by name (see :func:`preset_names`) or a TOML/YAML file."""
    path = workload_file(name_or_path)
    data = files.load_data_file(path, "workload", WorkloadError)
    try:
        return Workload.from_dict(data, name=path.stem)
    except WorkloadError as exc:
        raise WorkloadError(f"workload file {path}: {exc}") from None
