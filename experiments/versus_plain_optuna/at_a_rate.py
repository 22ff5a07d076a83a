"""At a request rate, is the tuner worth more than a plain Optuna script? The comparison a user would
make: the same target, the same machine time, each search as it is written; both answers then served
open loop at the rate in paired rounds that chose nothing.

    .venv/bin/python -m experiments.versus_plain_optuna.at_a_rate --rate 40000 --budget 2400
        [--target-data 2GiB] [--target-memory 1GiB] [--seed 1] [--search-duration 60] [--duration 600]
        [--rounds 3] [--tuner-flags '--objective p99.99_us'] [--tuner-out DIR] [--slo 'p99.9<=10ms']
        [--background-priority low] --out experiments/versus_plain_optuna/results/NAME

1. The tuner, as a user runs it: ``rocksdb-tuner tune --rate R --target-data D --target-memory M --budget
   B --seed N --search-duration S --duration L`` (the service space, its open-loop runs, its re-validation
   within the budget); its answer is ``OUT/tuner/OPTIONS.ini``. ``--tuner-out DIR`` takes a study already run
   instead (its OUT, under the checkout: its ``summary.json`` and ``OPTIONS.ini``), as the record says.
2. The plain script gets the machine time the tuner spent: the few lines a user with db_bench would write
   (:func:`plain_search`): Optuna's default TPE over the same space (resolved as the tuner resolves it at
   that target and rate), each trial db_bench's ``overwrite`` at the rate (``--benchmark_write_rate_limit``,
   the offered writes' bytes per second) for S seconds on a copy of a DB db_bench loaded once at the
   target (``fillseq``, the library's defaults), scored by db_bench's own P99.9 per write; no memory limit,
   no repeats, no re-validation. It searches what the tuner searched: an option the tuner's study held (the
   read path, when the runs offer no reads) is held at the library's default here too. Its answer is its
   best trial, written as an OPTIONS file (the driver's library defaults with its values set):
   ``OUT/plain-OPTIONS.ini``.
3. Held out: ``experiments.service_level`` serves the defaults and both answers at the rate for L seconds
   each, in ``--rounds`` paired rounds in fresh random orders (open loop: each request timed from when it
   was due), into ``OUT/held-out.json``; with ``--slo`` it measures each one's capacity at that SLO instead, in
   ``--rounds`` paired rounds of capacity searches from the rate (one run of ``--duration`` per rate), as a
   capacity study's stage does. ``--background-priority low`` runs the three with RocksDB's flush and
   compaction threads at nice 19 (and gives the tuner that flag), so the held-out rounds compare options alone.

``OUT/record.json`` holds the machine, the build, the date, the commit, the arguments, the tuner's summary
figures and the plain search (every trial's flags and P99.9); it is written after each step, and a step
whose output is there is not run again (a stopped comparison resumes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import optuna

from experiments._host import machine_info
from experiments._script import entry, run_child
from experiments.held_out import project_commit
from experiments.versus_plain_optuna.versus_plain_optuna import tpe_until
from objectives.dbbench import DbBench, probe
from objectives.defaults import defaults_of
from objectives.flags import format_flag
from objectives.open_loop import KEY_SIZE, VALUE_SIZE
from objectives.parser import parse
from objectives.workdir import clone_snapshot
from search_spaces import Context, SearchSpace, load_space
from search_spaces.parameters import flag_text
from search_spaces.space import without
from tuner import options_file
from tuner.backends import BACKENDS, Found
from tuner.backends._rate import driver_beside, library_options
from tuner.cli import parse_size
from tuner.engine import space_for, target_workload
from tuner.executors import Slot
from tuner.model import TuneConfig
from tuner.summary import Summary

ROOT = Path(__file__).resolve().parents[2]
SCORED = "overwrite"


def service_space(rate: float, data: int, memory: int, found: Found, searched: Iterable[str] | None = None,
                  defaults: Mapping[str, str] | None = None) -> SearchSpace:
    """The space ``tune --rate`` searched at this target on this host, as the engine resolves it
    (:func:`tuner.engine.space_for`: its memory plan, the rate backend's names), the parameters the tuner's
    study did not search (``searched``: its summary's; None: it searched them all) held at their library defaults
    (``defaults``, by flag)."""
    config = TuneConfig(backend="rate", rate=rate, target_data=data, target_memory=memory)
    host, unresolved = Context.of_host(), load_space("service")
    target, workload, _ = target_workload(config, unresolved, host, {})
    space = space_for(config, unresolved, found, Slot(host.cores, host.ram), target, workload)[0]
    kept = set(searched) if searched is not None else {p.name for p in space.parameters}
    return without(space, {p.name: _number((defaults or {}).get(p.flag)) for p in space.parameters if p.name not in kept})


def _number(text: str | None) -> float | None:
    """A flag's value as a number, or None when it is not one (a constraint cannot read it)."""
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def plain_search(db_bench: DbBench, space: SearchSpace, rate: float, data: int, duration: float, budget: float,
                 seed: int, work: Path) -> dict[str, Any]:
    """A user's Optuna script: TPE with Optuna's defaults, until its machine time (the load's and every
    trial's wall time) reaches ``budget``; each trial a copy of the loaded DB, db_bench's overwrite at
    ``rate`` for ``duration`` seconds, scored by db_bench's P99.9 per write (lower is better)."""
    base = {**{k: flag_text(v) for k, v in defaults_of(db_bench).flags.items()},
            "key_size": str(KEY_SIZE), "value_size": str(VALUE_SIZE), "num": str(data // (KEY_SIZE + VALUE_SIZE))}
    loaded = work / "plain-load"
    started = time.monotonic()
    subprocess.run([str(db_bench.path), "--benchmarks=fillseq", f"--db={loaded}", "--disable_wal=1",
                    *(format_flag(k, v) for k, v in base.items())], check=True, capture_output=True, timeout=7200)
    spent = time.monotonic() - started
    trials: list[dict[str, Any]] = []

    def objective(trial: optuna.Trial) -> float:
        nonlocal spent
        params = space.suggest(trial)
        db = work / f"plain-db-{trial.number}"
        began = time.monotonic()
        try:
            clone_snapshot(loaded, db)
            ran = subprocess.run(
                [str(db_bench.path), f"--benchmarks={SCORED}", "--use_existing_db=1", f"--db={db}", f"--seed={seed}",
                 f"--duration={duration:g}", f"--benchmark_write_rate_limit={rate * (KEY_SIZE + VALUE_SIZE):.0f}",
                 "--histogram=1", *(format_flag(k, v) for k, v in {**base, **space.config(params).flags()}.items())],
                check=True, capture_output=True, text=True, timeout=duration * 4 + 600)
            scored = [r for r in parse(ran.stdout).results if r.name == SCORED]
            histogram = next(iter(scored[-1].histograms.values()), None) if scored else None
            if histogram is None:
                raise subprocess.SubprocessError(f"db_bench printed no {SCORED} histogram")
            p999 = histogram.percentile(99.9)
            trials.append({"trial": trial.number, "params": params, "p99.9_us": p999})
            return p999
        finally:
            spent += time.monotonic() - began
            shutil.rmtree(db, ignore_errors=True)

    def said(study: optuna.Study) -> None:
        print(f"  plain trial {len(study.trials) - 1}: {trials[-1]['p99.9_us'] if trials else '-'} us P99.9, "
              f"{spent:.0f} of {budget:.0f} s", flush=True)

    study = tpe_until(objective, "minimize", seed, lambda: spent < budget, said)
    return {"trials": trials, "failed": len(study.trials) - len(trials), "machine_seconds": round(spent, 1),
            "base_flags": base, "best": {"trial": study.best_trial.number, "params": study.best_params,
                                         "p99.9_us": study.best_value}}


def plain_options(driver: Path, space: SearchSpace, params: dict[str, Any]) -> str:
    """The plain answer as an OPTIONS file: the driver's library defaults with its values set."""
    keys = {p.name: p.options_key for p in space.parameters}
    return options_file.with_values(library_options(str(driver)), {keys[k]: v for k, v in params.items()})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rate", type=float, required=True, help="writes offered per second")
    p.add_argument("--budget", type=float, required=True, help="the tuner's --budget, seconds")
    p.add_argument("--target-data", type=parse_size, default=parse_size("2GiB"))
    p.add_argument("--target-memory", type=parse_size, default=parse_size("1GiB"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--search-duration", type=float, default=60.0, help="seconds of each search run, both searches'")
    p.add_argument("--duration", type=float, default=600.0, help="seconds of each held-out run (and the tuner's "
                                                                 "re-validation's)")
    p.add_argument("--rounds", type=int, default=3, help="held-out paired rounds")
    p.add_argument("--tuner-flags", type=shlex.split, default=[], metavar="FLAGS",
                   help="more flags for the tuner's tune command, e.g. --tuner-flags='--objective p99.99_us'")
    p.add_argument("--tuner-out", type=Path, help="a tune's OUT already run at this rate and target, under the "
                                                  "checkout: its answer and machine time, instead of running one")
    p.add_argument("--slo", help="held out: each configuration's capacity at this SLO (e.g. 'p99.9<=10ms') in "
                                 "--rounds paired rounds, instead of its tail at --rate")
    p.add_argument("--background-priority", choices=("normal", "low"), default="normal",
                   help="RocksDB's flush and compaction threads in the held-out runs (low: nice 19), and the "
                        "tuner's --background-priority")
    p.add_argument("--out", type=Path, required=True, help="a directory under the checkout")
    args = p.parse_args()
    out = args.out.resolve()
    if not out.is_relative_to(ROOT):
        p.error(f"--out: {args.out} is not under the checkout {ROOT} (the held-out step names files from its root)")
    out.mkdir(parents=True, exist_ok=True)
    db_bench = probe(None)
    driver = driver_beside(db_bench.path)
    path = out / "record.json"
    record: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), "commit": project_commit(),
        "arguments": sys.argv[1:], "db_bench": db_bench.to_dict(), "defaults": defaults_of(db_bench).to_dict(),
        "machine": machine_info(Context.of_host(), out)}

    def save() -> None:
        path.write_text(json.dumps(record, indent=2, default=str) + "\n")

    tuner = args.tuner_out.resolve() if args.tuner_out else out / "tuner"
    if args.tuner_out and not (tuner / "summary.json").is_file():
        p.error(f"--tuner-out: {args.tuner_out} has no summary.json (a tune's OUT)")
    if not tuner.is_relative_to(ROOT):
        p.error(f"--tuner-out: {args.tuner_out} is not under the checkout {ROOT}")
    if not (tuner / "summary.json").exists():
        command = [str(Path(sys.executable).with_name("rocksdb-tuner")), "tune", "--rate", f"{args.rate:g}",
                   "--target-data", str(args.target_data), "--target-memory", str(args.target_memory),
                   "--budget", f"{args.budget:g}s", "--seed", str(args.seed),
                   "--search-duration", f"{args.search_duration:g}s", "--duration", f"{args.duration:g}s",
                   "--study", f"versus-plain-at-a-rate-{args.seed}", "--out", str(tuner), "--no-mlflow",
                   "--background-priority", args.background_priority, *args.tuner_flags]
        print("$ " + shlex.join(command), flush=True)
        run_child(command, check=True)
    summary = Summary.load(tuner / "summary.json")
    record["tuner"] = {"machine_seconds": summary.machine_seconds.total, "answer": summary.answer.to_dict()
                       if summary.answer else None, "options": str((tuner / "OPTIONS.ini").relative_to(ROOT)),
                       "out": str(tuner.relative_to(ROOT)), "ran_here": args.tuner_out is None}
    save()
    found = BACKENDS["rate"].find(TuneConfig(backend="rate", rate=args.rate, db_bench=str(db_bench.path)))
    space = service_space(args.rate, args.target_data, args.target_memory, found,
                          (summary.space_searched or {}).get("parameters"),
                          {k: flag_text(v) for k, v in defaults_of(db_bench).flags.items()})
    if "plain" not in record:
        print(f"the tuner spent {summary.machine_seconds.total:.0f} s; the plain script gets as much", flush=True)
        with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-plain-at-a-rate-") as work:
            record["plain"] = plain_search(db_bench, space, args.rate, args.target_data, args.search_duration,
                                           summary.machine_seconds.total, args.seed, Path(work))
        (out / "plain-OPTIONS.ini").write_text(plain_options(driver, space, record["plain"]["best"]["params"]))
        save()
    configs = out / "configs.json"
    files = {"rocksdb-default": None, "tuner": record["tuner"]["options"],
             "plain": str((out / "plain-OPTIONS.ini").relative_to(ROOT))}
    configs.write_text(json.dumps({name: {"options": file, "background": args.background_priority}
                                   for name, file in files.items()}, indent=2) + "\n")
    rounds = ["--rounds", "0", "--capacity", "--capacity-rounds", str(args.rounds), "--slo", args.slo] if args.slo \
        else ["--rounds", str(args.rounds)]
    if not (out / "held-out.json").exists():
        run_child([sys.executable, "-m", "experiments.service_level.service_level", "--configs", str(configs),
                   "--target-data", str(args.target_data), "--target-memory", str(args.target_memory),
                   "--rate", f"{args.rate:g}", "--duration", f"{args.duration:g}", *rounds,
                   "--out", str(out / "held-out.json")], check=True)
    print(f"wrote {path} and {out / 'held-out.json'}")


if __name__ == "__main__":
    entry(main)
