"""One source study (S0-S4) reproduced on this machine, side by side with the tuner.

A study is defined once, in its file beside this module (``experiments/studies/<id>.toml``): the
workload it runs (a preset, ``objectives/presets/<id>.toml`` for S0-S4: the flags, phases and the
hand-found configuration as a baseline), the scale its runs use, the options the study swept by hand (a
search space whose parameters carry ``grid`` values), and what the study found. Running it takes three
steps, all on this machine in one session:

1. **sweep**: the study's own grid, one run per point (sampler ``grid``): its "hand" optimum here,
   and the machine time a hand sweep costs;
2. **tuner**, once per seed (3 by default): a study over the default space as a user would run it
   (sampler ``auto``, db_bench's defaults and the benchmark.sh-style configuration first,
   ``--warm-start auto`` from the finished studies under ``runs/``), with a ``--budget`` equal to
   the sweep's machine time. It never sees the hand-found configuration, nor any experiment's study:
   not this one's (leave-one-out), nor another's (a result would depend on which ran first);
3. **head-to-head**: RocksDB defaults, the benchmark.sh-style configuration, the study's hand-found
   configuration (scaled), the sweep's best and each seed's best, each measured once per round for
   ``rounds`` rounds, every round in a fresh random order, so that drift and order effects hit all
   alike. A seed's ratio is paired by round (tuner.stats.paired_ratio); the tuner's verdict comes
   from the spread of the seeds' ratios (tuner.stats.across_seeds): one search cannot carry one.

Steps 1 and 2 are ordinary studies in ``runs/experiments/<id>/studies.db``; every step resumes after
an interruption. The result (``result.json``) and the report (:mod:`experiments.studies.writeup`) go to
``experiments/studies/results/<id>/``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments.studies.writeup import write_report
from objectives.configurations import benchmark_sh
from objectives.workloads import load_workload
from search_spaces import SearchSpace, SpaceError, files
from tuner.api import Study
from tuner.backends import as_workload
from tuner.events import Observer
from tuner.model import DEFAULT_BASELINE, StudySnapshot, TuneConfig
from tuner.stats import Rounds, across_seeds, paired_ratio, sample_rows
from tuner.trials import TrialRecord

DEFINITIONS = Path(__file__).parent  # <id>.toml: one study each
RUNS_DIR = Path("runs") / "experiments"  # the studies' storage and db_bench logs
RESULTS = Path("experiments") / "studies" / "results"  # reports go under the current directory (the repository's root)
SEEDS = 3
HEAD_TO_HEAD = "head_to_head"
_FIELDS = {"workload", "title", "scale", "scale_note", "finding", "sweep_note", "seed", "sweep"}  # of a study file
# --quick: the whole pipeline on a tiny data set, to check that an experiment runs (not to measure).
# Its tuner runs a fixed 3 trials per seed: at that size a budget in seconds would be a lottery.
QUICK = {"scale": 0.02, "sweep_runs": 3, "tuner_trials": 3, "rounds": 2, "seeds": 2}


class ExperimentError(ValueError):
    """An experiment that cannot run; the message names the file and field."""


@dataclass(frozen=True)
class Experiment:
    """A source study as its file declares it."""

    id: str  # the file's name
    title: str
    workload: str  # what --workload takes: a preset's name, or a workload file's path
    scale: float
    sweep: SearchSpace
    seed: int
    scale_note: str = ""
    finding: str = ""
    sweep_note: str = ""
    path: Path = field(default=Path())  # the study file that defines it


def names() -> list[str]:
    """The studies defined beside this module (``<id>.toml``): S0-S4."""
    return files.preset_names(DEFINITIONS)


def load(name_or_path: str | Path) -> Experiment:
    """A study by id (see :func:`names`), or a study file of one's own."""
    known = names()
    if str(name_or_path) not in known and not Path(name_or_path).exists():
        raise ExperimentError(f"unknown experiment {str(name_or_path)!r}: not a study ({', '.join(known)}) nor a file")
    path = files.preset_or_file(name_or_path, DEFINITIONS, "study", ExperimentError)
    where = f"study file {path}"
    study = files.load_data_file(path, "study", ExperimentError)
    if not isinstance(study, dict):
        raise ExperimentError(f"{where}: expected a table")
    unknown = sorted(set(study) - _FIELDS)
    if unknown:
        raise ExperimentError(f"{where}: unknown field(s) {', '.join(unknown)}")
    if not isinstance(study.get("workload"), str) or not study["workload"]:
        raise ExperimentError(f"{where}: workload: missing, or not a workload preset's name or a file's path")
    if not isinstance(study.get("sweep"), dict):
        raise ExperimentError(f"{where}: sweep: missing, or not a table (a search space with grids)")
    scale, seed = study.get("scale", 1), study.get("seed", 1)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise ExperimentError(f"{where}: scale: expected a number > 0, got {scale!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ExperimentError(f"{where}: seed: expected a whole number, got {seed!r}")
    if not path.stem.replace("-", "").isalnum():
        raise ExperimentError(f"{where}: the file's name is the study's id, expected letters, digits and '-', "
                              f"got {path.stem!r}")
    try:
        load_workload(study["workload"])
        sweep = SearchSpace.from_dict({"name": f"{path.stem}-sweep", **study["sweep"]})
    except SpaceError as exc:
        raise ExperimentError(f"{where}: sweep: {exc}") from None
    except ValueError as exc:
        raise ExperimentError(str(exc)) from None  # the workload's error names its file
    for p in sweep.parameters:
        if p.grid_values is None and getattr(p, "low", None) != getattr(p, "high", None):
            raise ExperimentError(f"{where}: sweep.parameters.{p.name}: needs a 'grid' (the values the "
                                  "study tried), or low = high for a value held fixed")
    text = {k: str(study.get(k, "")) for k in ("title", "scale_note", "finding", "sweep_note")}
    return Experiment(id=path.stem, workload=study["workload"], scale=float(scale), sweep=sweep, seed=seed, path=path,
                      **text)


@dataclass
class ExperimentRun:
    """One experiment on this machine: settings shared by its steps, and the steps themselves."""

    experiment: Experiment
    progress: Observer
    quick: bool = False
    rounds: int = 5
    seeds: int = SEEDS
    library: Path = Path("runs")  # finished studies the tuner may warm-start from (never this experiment's)
    db_bench: str | None = None
    rocksdb_version: str | None = None
    work_dir: Path | None = None
    runs_dir: Path = RUNS_DIR
    results_dir: Path | None = None
    mlflow: bool = True
    mlflow_uri: str | None = None

    def __post_init__(self) -> None:
        suffix = "-quick" if self.quick else ""
        self.key = f"{self.experiment.id}{suffix}"
        self.out = self.runs_dir / self.key
        self.storage = f"sqlite:///{(self.out / 'studies.db').resolve()}"
        if self.results_dir is None:
            self.results_dir = (self.out / "results") if self.quick else RESULTS / self.experiment.id
        if self.quick:
            self.rounds, self.seeds = int(QUICK["rounds"]), int(QUICK["seeds"])

    def _config(self, step: str, **kwargs: Any) -> TuneConfig:
        e = self.experiment
        return TuneConfig(
            workload=e.workload, study=f"{self.key}-{step}", storage=self.storage, out=self.out / step,
            db_bench=self.db_bench, rocksdb_version=self.rocksdb_version, work_dir=self.work_dir,
            scale=QUICK["scale"] if self.quick else e.scale, baselines=False, hand_found_first=False,
            plots=not self.quick, mlflow=self.mlflow, mlflow_uri=self.mlflow_uri, revalidate=0, drain=not self.quick,
            experiment=f"experiment-{e.id}", tags={"experiment": e.id, "experiment_step": step.split("-")[0]},
            **kwargs)

    def sweep_config(self) -> TuneConfig:
        return self._config("sweep", space=self.experiment.sweep, sampler="grid", seed=self.experiment.seed,
                            trials=QUICK["sweep_runs"] if self.quick else 100_000)

    def tuner_config(self, seed: int, budget: float) -> TuneConfig:
        """The tuner as a user runs it, for ``budget`` seconds of machine time."""
        return self._config(f"tuner-seed{seed}", space="default", sampler="auto", seed=seed,
                            trials=QUICK["tuner_trials"] if self.quick else None,
                            budget=None if self.quick else budget, warm_start="auto", library=self.library,
                            library_exclude=(*sorted({f"{x}-" for x in (*names(), self.experiment.id)}), "-quick-"))

    def run(self) -> dict[str, Any]:
        """Sweep, tuner per seed, head-to-head; write result.json and the report; return the result."""
        started = time.time()
        self.progress.note(f"experiment {self.key}: step 1/3, the study's sweep")
        sweep = Study(self.sweep_config(), self.progress)
        sweep_result = sweep.run()
        budget = sweep.snapshot().machine_seconds().total
        seeds = [self.experiment.seed + i for i in range(self.seeds)]
        tuners: list[tuple[StudySnapshot, dict[str, Any]]] = []
        for i, seed in enumerate(seeds):
            self.progress.note(f"experiment {self.key}: step 2/3, the tuner, seed {seed} ({i + 1} of {len(seeds)}): "
                               + (f"{QUICK['tuner_trials']} trials" if self.quick else
                                  f"{budget:.0f} s of machine time, as the sweep took"))
            tuner = Study(self.tuner_config(seed, budget), self.progress)
            best = tuner.run().best_params
            tuners.append((tuner.snapshot(), best))
        self.progress.note(f"experiment {self.key}: step 3/3, head-to-head: {self.rounds} interleaved rounds")
        final = Study(self.tuner_config(seeds[0], budget), self.progress)  # seed 1's study again: runs nothing new
        try:
            entries = self._entries(final.snapshot(), sweep.snapshot(), sweep_result.best_params,
                                    [(t.config.search.seed, best) for t, best in tuners])
            saved = final.measure_interleaved(entries, self.rounds, HEAD_TO_HEAD, "head-to-head")
        finally:
            final.close()
        result = self._result(final.snapshot(), sweep.snapshot(), tuners, entries, saved, budget, started)
        assert self.results_dir is not None
        written = write_report(result, self.results_dir)
        self._track(result, written)
        return result

    def _entries(self, study: StudySnapshot, sweep: StudySnapshot, sweep_best: dict[str, Any],
                 tuned: list[tuple[int | None, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
        ctx = study.space.context
        assert ctx is not None
        bsh, bsh_doc = benchmark_sh(ctx)
        entries: dict[str, dict[str, Any]] = {
            DEFAULT_BASELINE: {"flags": {},
                               "doc": study.defaults.describe() if study.defaults else "db_bench's own defaults"},
            "benchmark.sh": {"flags": bsh, "doc": bsh_doc},
        }
        for b in as_workload(study.workload).baselines:
            entries[b.name] = {"flags": b.flags, "doc": b.doc}
        if sweep_best:
            entries["sweep best"] = {"flags": sweep.space.config(sweep_best).flags(), "params": sweep_best,
                                     "doc": "the best point of the study's grid, measured here (one run each)"}
        for seed, best in tuned:
            if best:
                entries[tuned_name(seed)] = {"flags": study.space.config(best).flags(), "params": best, "seed": seed,
                                             "doc": f"the tuner's best trial with seed {seed} (one run each)"}
        return entries

    def _result(self, final: StudySnapshot, sweep: StudySnapshot, tuners: list[tuple[StudySnapshot, dict[str, Any]]],
                entries: dict[str, dict[str, Any]], saved: Rounds, budget: float,
                started: float) -> dict[str, Any]:
        e = self.experiment
        rows = {r.name: r for r in sample_rows(saved, entries)}
        hand = next((b.name for b in as_workload(final.workload).baselines), None)
        measured: list[dict[str, Any]] = []
        seeds: dict[str, list[float]] = {}  # per key, each seed's best's ratio
        for name, row in rows.items():
            seed = entries[name].get("seed")
            out = {**row.to_dict(), "doc": entries[name].get("doc", ""), "params": entries[name].get("params"),
                   "seed": seed}
            for ref, key in ((DEFAULT_BASELINE, "vs_default"), (hand, "vs_hand_found")):
                other = rows.get(ref) if ref else None
                if row.median("ops_per_sec") and other and other.median("ops_per_sec"):
                    found = paired_ratio(row.samples("ops_per_sec"), other.samples("ops_per_sec"))
                    out[key] = found.to_dict()
                    if seed is not None and found.ratio is not None:
                        seeds.setdefault(key, []).append(found.ratio)
            measured.append(out)
        verdicts = {key: across_seeds(seeds[key]).to_dict() for key in ("vs_default", "vs_hand_found") if key in seeds}
        db = final.found.db_bench
        assert db is not None  # an experiment's studies run db_bench's workloads
        ctx = final.space.context
        assert ctx is not None
        return {
            "id": e.id, "title": e.title, "quick": self.quick, "finding": e.finding, "scale_note": e.scale_note,
            "sweep_note": e.sweep_note, "workload": final.workload.name,
            "workload_description": final.workload.description, "scale": final.config.measurement.scale,
            "data_bytes": final.workload.data_bytes(), "hand_found": hand,
            "machine": machine_info(ctx, final.work_dir),
            "db_bench": {"version": db.version, "build": db.build, "assertions": db.assertions, "path": db.path},
            "defaults": final.defaults.to_dict() if final.defaults else None,  # what every run started from
            "sweep": _study_part(sweep),
            "tuner": {"budget_seconds": None if self.quick else budget,
                      "trials_per_seed": QUICK["tuner_trials"] if self.quick else None, "hand_found_first": False,
                      "seeds": [{**_study_part(t), "seed": t.config.search.seed, "sampler": t.config.search.sampler,
                                 "seeded": list(t.seeded)} for t, _ in tuners],
                      "across_seeds": verdicts},
            "head_to_head": {"rounds": saved.rounds, "order": list(entries), "configurations": measured},
            "started": started, "finished": time.time(),
        }

    def _track(self, result: dict[str, Any], written: list[Path]) -> None:
        if not self.mlflow:
            return
        from tuner.observers import TrackingError, log_comparison

        rows_ = [(r["name"], r.get("params") or r["flags"],
                  {"median_ops_per_sec": r.get("median_ops_per_sec"), "min_ops_per_sec": (r.get("spread") or {}).get("min"),
                   "max_ops_per_sec": (r.get("spread") or {}).get("max"), "median_p99_us": r.get("median_p99_us"),
                   "median_write_amp": r.get("median_write_amp"),
                   "vs_default": (r.get("vs_default") or {}).get("ratio"),
                   "vs_hand_found": (r.get("vs_hand_found") or {}).get("ratio")})
                 for r in result["head_to_head"]["configurations"]]
        try:
            log_comparison(self.mlflow_uri, f"experiment-{self.experiment.id}", f"{self.key} head-to-head",
                           {"experiment": self.experiment.id, "experiment_step": "head-to-head",
                            "role": "head-to-head"}, rows_, written)
        except TrackingError as exc:
            self.progress.note(f"MLflow: the head-to-head was not logged: {exc}")


def tuned_name(seed: int | None) -> str:
    """The head-to-head name of a seed's best."""
    return f"tuned best (seed {seed})"


def _study_part(study: StudySnapshot) -> dict[str, Any]:
    """A study's trials (params, ops/s, P99, write amp, outcome) and its best trial, for the report."""
    trials = []
    for t in study.trials:
        r = TrialRecord.of(t)
        m = r.metrics or {}
        trials.append({"number": t.number, "outcome": r.outcome or t.state.name.lower(),
                       "params": t.params, "ops_per_sec": m.get("ops_per_sec"), "p99_us": m.get("p99_us"),
                       "write_amp": m.get("write_amp"), "compaction_micros": m.get("compaction_micros"),
                       "seconds": r.seconds, "enqueued": r.enqueued, "provenance": r.provenance})
    best = study.best()
    default = next((b for b in study.baselines if b.name == DEFAULT_BASELINE), None)
    return {"study": study.name, "space": study.space.name, "trials": trials,
            "runs": study.counted(), "best_trial": best.number if best else None,
            "best_params": best.params if best else None,
            "default_ops_per_sec": default.metrics.get("ops_per_sec") if default else None,
            "machine_seconds": study.machine_seconds().to_dict()}
