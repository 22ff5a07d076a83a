"""Does a study's answer hold when the DB grows? Its answer and the defaults it ran on measured at
several multiples of the data it was tuned on, in RocksDB's file and level sizes.

    .venv/bin/python -m experiments.scale_transfer.scale_transfer --study runs/default-steady-overwrite [--factors 1,4,16]
        [--rounds 5] [--out experiments/scale_transfer/results/default-job-11.8.1.json]
    .venv/bin/python -m experiments.scale_transfer.scale_transfer --experiment S0 [--factors 1,4,16] [--rounds 3]

    .venv/bin/python -m experiments.scale_transfer.scale_transfer --table

``--experiment SN`` takes an S0-S4 study's answer instead: of its tuned bests (one per seed, in
experiments/studies/results/SN/result.json), the one its head-to-head measured fastest against the defaults,
at its tuning data, without a memory limit (as the studies ran); ``--append`` adds sizes to its
record; ``--table`` prints the table of those records that README and the experiments overview show.

Every run starts from the defaults the study ran on: the library defaults of the study's db_bench
version for a study that ran on them (the deployed shape: dynamic level sizes from 8.4), 7.8.3's pins
for one that ran on those (the pinned shape, as every study before 2026-11-27 and S0-S4 did); the record
and the console name the shape. For each factor F: the study's workload at F times its trials' data, in
the target's LSM shape on those defaults (the study's --base-options, else RocksDB's: 64 MiB files, 256
MiB L1 x 10, dynamic or static as the defaults say; never the scaled-down sizes of a load preset, nor the
RocksDB options a preset scales with its data), within F times its trials' memory (the same memory:data
ratio), in the timed phases its answer was confirmed in (the re-validation's: 30 s for ``make tune``,
whose search ran 10 s ones; ``--duration`` overrides them). A preloaded workload's DB
is built once per size and every run starts on a checkpoint of it; a load workload loads from empty
in every run. Each round runs every configuration
once, in a fresh random order; the answer's gain over the defaults is the geometric mean of the
per-round ratios with a 95 % t interval (tuner.stats.paired_ratio). The record (machine, db_bench,
date, every sample) is rewritten after each size, so a long run shows its progress.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from experiments.held_out import Metrics, at_target, interleaved, shape, study_config, trial_size
from objectives.dbbench import probe
from objectives.defaults import LIBRARY, MODES, PINNED_7_8, Defaults, defaults_of
from objectives.measurement import measure
from objectives.runner import Runner, remove_owned
from objectives.workloads import Workload
from search_spaces import Context, load_space
from tuner.summary import Build, Summary

RESULTS = Path(__file__).with_name("results")
EXPERIMENTS = Path(__file__).parents[1] / "studies" / "results"


@dataclass(frozen=True)
class Studied:
    """What the sizes measure: a study (its summary gives the workload, data, target, space and
    db_bench), its best's name and flags, and what the record says of the study's answer."""

    summary: Summary
    best: str
    flags: dict[str, Any]
    answer: Any = None
    gain: dict[str, Any] | None = None

    def configurations(self) -> dict[str, dict[str, Any]]:
        """rocksdb-default (the defaults every run starts from) and the study's best."""
        return {"rocksdb-default": {}, self.best: self.flags}


def tune_studied(summary: Summary) -> Studied:
    """A tune study's best (the best tuned one, also when its answer kept the defaults) and its
    re-validated gain over the reference at the study's own size."""
    if summary.best is None:
        raise SystemExit(f"{summary.study}: no trial completed, no best to measure")
    gain = summary.revalidation.best_vs_reference if summary.revalidation else None
    return Studied(summary, f"best (trial {summary.best.trial})", summary.best.flags,
                   summary.answer.to_dict() if summary.answer else None, gain.to_dict() if gain else None)


def experiment_studied(study: str, db_bench: str) -> Studied:
    """An S0-S4 study's answer: its workload at its tuning data (no target: the loads ran as the preset
    shapes them), and of its seeds' tuned bests the one its head-to-head measured fastest against the
    defaults."""
    result = json.loads((EXPERIMENTS / study / "result.json").read_text())
    tuned = [c for c in result["head_to_head"]["configurations"] if c["name"].startswith("tuned best")]
    best = max(tuned, key=lambda c: c["vs_default"]["ratio"])
    summary = Summary(study=study, workload=result["workload"], data_bytes=result["data_bytes"],
                      space=result["tuner"]["seeds"][0]["space"], build=Build(program="db_bench", path=db_bench))
    return Studied(summary, best["name"], best["flags"],
                   answer=f"{best['name']} of experiments/studies/results/{study}/result.json, "
                          f"{best['vs_default']['ratio']:.2f}x the defaults in its head-to-head",
                   gain=best["vs_default"])


def workload_at(summary: Summary, factor: int, host: Context, defaults: Defaults,
                duration: float | None = None) -> tuple[Workload, int | None]:
    """The study's workload at ``factor`` times its trials' data, in the target's shape (on ``defaults``)
    and memory ratio, in the timed phases its answer was confirmed in (``duration`` overrides them), and
    its memory limit."""
    data, memory = trial_size(summary)
    config = study_config(summary, data * factor, memory * factor if memory else None, duration)
    _, workload = at_target(config, load_space(str(summary.space)), host, defaults)
    return workload, config.target.target_memory


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z")


def experiment_records() -> list[dict[str, Any]]:
    """The S0-S4 records measured so far, in study order."""
    return [json.loads(path.read_text()) for path in sorted(RESULTS.glob("S[0-4].json"))]


def _ratio(g: dict[str, Any]) -> str:
    """``1.37x (1.11-1.69)``, with ``, tie`` when the interval holds 1."""
    return f"{g['ratio']:.2f}x ({g['ci95'][0]:.2f}-{g['ci95'][1]:.2f}){', tie' if g['verdict'] == 'tie' else ''}"


def experiments_table(records: list[dict[str, Any]]) -> str:
    """The S0-S4 answers at each factor of their tuning data (the records of ``--experiment``), as README
    and the experiments overview show them: the answer's ratio to the defaults with its 95 % interval
    over paired rounds, at each size measured."""
    factors = sorted({size["factor"] for r in records for size in r["sizes"]})
    lines = ["| study (its answer) | in its head-to-head (scaled-down files and levels) | "
             + " | ".join(f"{f}x the tuning data" for f in factors) + " |",
             "|---|---|" + "---|" * len(factors)]
    for record in records:
        (answer,) = (c for c in record["configurations"] if c != "rocksdb-default")
        cells = {size["factor"]: size for size in record["sizes"]}
        h2h = record["study_gain"]
        row = [f"{record['study']}: {answer}", f"{_ratio(h2h)}, {h2h['n']} rounds"]
        for f in factors:
            size = cells.get(f)
            g = size["over_default"].get(answer) if size else None
            if size is None or not g or not g.get("ci95"):
                row.append("not measured" if size is None else "too few rounds")
                continue
            row.append(f"{_ratio(g)}, {size['data_bytes'] / 2**30:.1f} GiB, {g['n']} rounds")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--study", type=Path, help="a finished study's --out directory")
    which.add_argument("--experiment", choices=[f"S{i}" for i in range(5)],
                       help="an S0-S4 study's answer (experiments/studies/results/SN/result.json)")
    release = Path.home() / ".cache/rocksdb-tuner/db_bench/9.11.2-release/db_bench"
    parser.add_argument("--db-bench", default=str(release),
                        help="with --experiment: the db_bench to run (default the release build)")
    parser.add_argument("--factors", default="1,4,16")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--table", action="store_true",
                        help="print the table of the S0-S4 records (experiments/scale_transfer/results/S*.json)")
    parser.add_argument("--append", action="store_true",
                        help="keep the sizes --out already holds for these configurations (a factor measured again "
                             "replaces its own)")
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds of each timed phase (default those the study's answer was confirmed in; "
                             "summaries before 2026-11-25 20:00 UTC did not record them: give the study's --duration)")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=SUMMARY",
                        help="another study's best (its summary.json) measured beside them, e.g. the answer of a "
                             "study tuned on another workload or size")
    args = parser.parse_args()
    if args.table:
        print(experiments_table(experiment_records()))
        return
    if not (args.study or args.experiment):
        parser.error("give --study DIR or --experiment SN (or --table)")
    studied = (experiment_studied(args.experiment, args.db_bench) if args.experiment else
               tune_studied(Summary.load(args.study / "summary.json")))
    summary = studied.summary
    if summary.build is None:
        parser.error(f"{args.study}: the study measured no db_bench workload")
    db_bench = probe(summary.build.path)
    mode = summary.defaults.mode if summary.defaults else PINNED_7_8  # what the study ran on (before: the pins)
    defaults = defaults_of(db_bench, mode if mode in MODES else LIBRARY)
    configs = studied.configurations()
    for item in args.also:
        name, _, path = item.partition("=")
        configs[name] = tune_studied(Summary.load(path)).flags
    host = Context.of_host()
    out = args.out or RESULTS / f"{summary.study}.json"
    record: dict[str, Any] = {"when": _now(), "study": summary.study,
                              "workload": summary.workload, "db_bench": db_bench.to_dict(),
                              "defaults": defaults.to_dict(), "shape": shape(defaults),
                              "study_answer": studied.answer, "study_gain": studied.gain,
                              "configurations": configs, "sizes": []}
    if args.append and out.exists():
        before = json.loads(out.read_text())
        if before["configurations"] != configs:
            parser.error(f"--append: {out} measured other configurations")
        if before.get("shape") != record["shape"]:
            parser.error(f"--append: {out} was measured in another shape than {record['shape']}")
        factors = {int(f) for f in args.factors.split(",")}
        record["sizes"] = [size for size in before["sizes"] if size["factor"] not in factors]
        record["when"] = before["when"]  # the first sizes'; each size says when it ran
    print(f"{summary.study}: db_bench {db_bench.version} ({db_bench.path}), in {shape(defaults)}", flush=True)
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-transfer-", dir=args.work_dir) as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        for factor in (int(f) for f in args.factors.split(",")):
            workload, memory = workload_at(summary, factor, host, defaults, args.duration)
            runner = Runner(db_bench, root / "work", timeout=3600.0, memory_limit=memory, defaults=defaults)
            size: dict[str, Any] = {"factor": factor, "rounds": args.rounds, "started": _now(),
                                    "data_bytes": workload.data_bytes(),
                                    "memory_bytes": memory,
                                    "duration_seconds": workload.duration,
                                    "flags": workload.flags}
            if workload.kind == "preloaded":
                built = runner.preload(workload, root / "logs" / f"preload-{factor}")
                workload = replace(workload, snapshot=str(built.path))
                size["preload"] = {"seconds": built.seconds, "size_bytes": built.size_bytes}
                print(f"{factor}x: preloaded {built.size_bytes / 2**30:.1f} GiB in {built.seconds:.0f} s", flush=True)
            def run(name: str, _: int, runner: Runner = runner, workload: Workload = workload) -> Metrics:
                return measure(runner, workload, configs[name], root / "logs" / "run", 1, 1).metrics

            try:
                done = interleaved(configs, args.rounds, run, rng, f"{factor}x ")
            finally:
                if workload.kind == "preloaded" and workload.snapshot is not None:
                    remove_owned(Path(workload.snapshot).parent)
            size["samples"] = {c: done.measured(c) for c in configs}
            size["failed"] = done.failed
            best = next(c for c in configs if c != "rocksdb-default")
            size["median_ops_per_sec"] = done.median_ops()
            amps = {c: [a for m in done.measured(c) if (a := m.get("write_amp")) is not None] for c in configs}
            size["median_write_amp"] = {c: statistics.median(v) for c, v in amps.items() if v}
            over = {c: done.ratio(c, "rocksdb-default") for c in configs if c != "rocksdb-default"}
            size["best_over_default"] = over[best].to_dict()
            size["over_default"] = {c: g.to_dict() for c, g in over.items()}
            size["ended"] = _now()
            record["sizes"] = sorted([*record["sizes"], size], key=lambda s: s["factor"])
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(record, indent=2, default=str) + "\n")
            for name, g in over.items():
                print(f"{factor}x ({workload.data_bytes() / 2**30:.1f} GiB): {name} / defaults {g.ratio:.2f}x "
                      f"(95 % CI {g.ci95[0]:.2f}-{g.ci95[1]:.2f}, {g.verdict})" if g.ci95 else
                      f"{factor}x: {name}: not enough rounds", flush=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    entry(main)
