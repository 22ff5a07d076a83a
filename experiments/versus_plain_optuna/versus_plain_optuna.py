"""Is the tuner worth more than a plain Optuna script? Both get the same machine time on the same
workload; their answers then meet in interleaved paired rounds that chose nothing.

    .venv/bin/python -m experiments.versus_plain_optuna.versus_plain_optuna [--seeds 1,2] [--workload fillrandom] [--scale 2]
        [--budget 600] [--rounds 10] [--out experiments/versus_plain_optuna/results/versus_plain_optuna.json]
    .venv/bin/python -m experiments.versus_plain_optuna.versus_plain_optuna --target-data 2GiB --target-memory 1GiB --budget 1200
        [--seeds 1,2] [--rounds 5] [--tuner-flags='--duration 10s'] [--append] [--plain-from RECORD]
        [--out experiments/versus_plain_optuna/results/versus_plain_optuna_target.json]

For each seed: ``rocksdb-tuner tune --workload W --scale S --budget B --seed N`` runs first, as a user
runs it (re-validation included in its budget); its answer is what it tells the user to deploy (its
best trial, or the configuration it recommends instead). Then the plain script gets the db_bench time
the tuner spent: the few lines a user would write (below, :func:`plain_search`), Optuna's default TPE
over the same search space, each trial a fresh ``fillrandom,flush,waitforcompaction`` run scored by
keys per second of its wall time, no repeats, no constraints, no re-validation; its answer is its best
trial. Held out: both answers and db_bench's defaults run the workload, as the tuner measures it
(sustained: the drain is charged), in ``--rounds`` rounds, each in a fresh random order, with db_bench
seeds neither search used; the tuner's answer over the plain one is the geometric mean of the
per-round ratios with a 95 % t interval (tuner.stats.paired_ratio). The record (machine, db_bench,
date, both searches, every sample, the project's commit the tuner ran from) is rewritten after each seed.

``--plain-from RECORD`` compares a changed tuner with the plain answers an earlier record found at
the same settings and seeds, without searching again: each seed's plain search (its answer, trials
and db_bench time) is copied from RECORD and marked ``reused_from`` (a seed RECORD does not hold is
searched as without the flag); the held-out rounds measure it
afresh beside the new tuner's answer. The plain script does not change between tuner versions, so this
isolates the tuner's change (and halves the time a seed takes); its machine time is then the earlier
tuner's, not necessarily this one's (both are recorded).

With ``--target-data`` (and ``--target-memory``) the comparison is at a deployment, as the default job
tunes: the tuner runs ``tune --target-data D --target-memory M`` on its workload (default
``steady-overwrite``: random overwrites on a preloaded DB of that size, within that memory); the plain
script loads the target's keys and values from empty (``fillrandom``, no memory limit: what a user's
script runs), over the same search space resolved for that memory; when the workload's scored phase
reads (``steady-readwhilewriting``, ``steady-readrandom``), each plain trial then runs that phase on its
fresh load, as a second db_bench with the phase's flags, and is scored by its ops/s (``plain_scores``
in the record; a write-only phase scores the load). Both searches and the held-out
rounds run on the same defaults (``--defaults``, as ``tune --defaults``: by default the library's of the
measuring version, so the plain script searches the shape an application deploys);
the held-out rounds run the tuner's workload at the target as tune confirms there (on a DB preloaded
once; the read presets load each run's DB with its own options), within the target's memory.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import optuna

from experiments._host import machine_info
from experiments._script import entry, run_child
from experiments.held_out import answer_of, at_target, measured_rounds, project_commit, shown_ratio
from objectives.dbbench import probe
from objectives.defaults import LIBRARY, MODES, Defaults, defaults_of
from objectives.flags import format_flag
from objectives.parser import parse
from objectives.runner import Runner
from objectives.workloads import Phase, Workload, load_workload
from search_spaces import Context, SearchSpace, load_space
from search_spaces.parameters import flag_text
from tuner.cli import parse_size
from tuner.engine import memory_plan
from tuner.executors import Slot
from tuner.model import TuneConfig
from tuner.stats import Ratio
from tuner.summary import Summary

RESULTS = Path(__file__).with_name("results")


def plain_search(db_bench: str, space: SearchSpace, base: dict[str, str], keys: int, budget: float, seed: int,
                 work: Path, then: Phase | None = None) -> dict[str, Any]:
    """A user's Optuna script: TPE with Optuna's defaults, one fresh load per trial, until its db_bench
    time reaches ``budget``. Each trial is scored by keys per second of the fill + flush +
    waitforcompaction wall time or, given ``then`` (a workload's scored phase that reads), by db_bench's
    ops/s of that phase run on the fresh load with its own flags (a second db_bench on the loaded DB)."""
    spent = 0.0

    def objective(trial: optuna.Trial) -> float:
        nonlocal spent
        flags = {**base, **space.config(space.suggest(trial)).flags()}
        db = work / f"plain-db-{trial.number}"
        options = [f"--db={db}", f"--seed={seed}", *(format_flag(k, v) for k, v in flags.items())]
        started = time.monotonic()
        try:
            subprocess.run([db_bench, "--benchmarks=fillrandom,flush,waitforcompaction", *options], check=True,
                           capture_output=True, timeout=3600)
            if then is None:
                return keys / (time.monotonic() - started)
            phase = [format_flag(k, v) for k, v in then.flags.items()]
            ran = subprocess.run([db_bench, f"--benchmarks={','.join(then.benchmarks)}", "--use_existing_db=1",
                                  *options, *phase], check=True, capture_output=True, text=True, timeout=3600)
            scored = [r for r in parse(ran.stdout).results if r.name == then.benchmarks[-1]]
            if not scored:
                raise subprocess.SubprocessError(f"db_bench printed no {then.benchmarks[-1]} result")
            return scored[-1].ops_per_sec
        finally:
            spent += time.monotonic() - started
            shutil.rmtree(db, ignore_errors=True)

    study = tpe_until(objective, "maximize", seed, lambda: spent < budget)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    return {"trials": len(study.trials), "failed": len(study.trials) - len(done), "db_bench_seconds": round(spent, 1),
            "best": {"trial": study.best_trial.number, "params": study.best_params,
                     "flags": space.config(study.best_params).flags(),
                     ("keys_per_second" if then is None else "ops_per_second"): study.best_value}}


def tpe_until(objective: Callable[[optuna.Trial], float], direction: Literal["minimize", "maximize"], seed: int,
              going: Callable[[], bool], each: Callable[[optuna.Study], None] = lambda _: None) -> optuna.Study:
    """The loop of a user's Optuna script: TPE with Optuna's defaults, one trial at a time while ``going()``
    (its time is not spent), a trial that failed, timed out or printed no result passed over; ``each``
    after every trial."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction=direction, sampler=optuna.samplers.TPESampler(seed=seed))
    while going():
        study.optimize(objective, n_trials=1, catch=(subprocess.SubprocessError,))
        each(study)
    return study


def tuner_search(workload: str, size: list[str], budget: float, seed: int, out: Path,
                 extra: Sequence[str] = ()) -> dict[str, Any]:
    """``rocksdb-tuner tune`` as a user runs it (``size``: its --scale or --target-* flags, ``extra``:
    any other); its summary's answer, provenance and machine time."""
    command = [str(Path(sys.executable).with_name("rocksdb-tuner")), "tune", "--workload", workload, *size,
               "--budget", f"{budget:g}s", "--seed", str(seed), "--out", str(out),
               "--study", f"versus-plain-{seed}", "--no-mlflow", *extra]
    print("$ " + " ".join(command), flush=True)
    started = time.monotonic()
    run_child(command, check=True)
    summary = Summary.load(out / "summary.json")
    _, flags = answer_of(summary)
    answer, target, reval = summary.answer, summary.target, summary.revalidation
    assert answer is not None  # answer_of has it
    gain = reval.best_vs_reference if reval else None
    return {"command": " ".join(command), "wall_seconds": round(time.monotonic() - started),
            "db_bench_seconds": round(summary.machine_seconds.total, 1),
            "machine_seconds": summary.machine_seconds.to_dict(), "trials": summary.trials.to_dict(),
            "provenance": summary.provenance, "answer": answer.to_dict(), "flags": flags,
            "reported_gain": gain.to_dict() if gain else None,
            "phase_seconds": {"search": target.duration_seconds if target else None,
                              "revalidation": target.confirm_duration_seconds if target else None}}


def held_out(runner: Runner, workload: Workload, configs: dict[str, dict[str, str]], rounds: int, logs: Path,
             rng: random.Random) -> dict[str, Any]:
    """Every configuration once per round, in a fresh random order; sustained ops/s as the tuner measures."""
    done = measured_rounds(runner, workload, configs, rounds, logs, rng, "  ")
    return {"ops_per_sec": {c: done.ops(c) for c in done.metrics}, "failed": done.failed,
            "median_ops_per_sec": done.median_ops(), "tuner_over_plain": done.ratio("tuner", "plain").to_dict(),
            "over_default": {c: done.ratio(c, "rocksdb-default").to_dict() for c in ("tuner", "plain")}}


def read_phase(workload: Workload) -> Phase | None:
    """The phase a plain script runs after its load and scores: the workload's scored phase when it
    reads; None when it only writes (fill*, overwrite), where the load itself is scored."""
    scored = next(p for p in workload.phases if p.scored)
    return None if all(b.startswith(("fill", "overwrite")) for b in scored.benchmarks) else scored


def setting(args: argparse.Namespace, host: Context,
            defaults: Defaults) -> tuple[Workload, SearchSpace, dict[str, str], list[str]]:
    """The held-out workload, the space both searches search, the plain script's db_bench flags and the
    tuner's size flags."""
    default = load_space("default")
    if args.target_data is None:
        workload = load_workload(args.workload or "fillrandom").resolve(args.scale, host)
        if workload.kind != "load":
            raise SystemExit(f"--workload: the plain script loads from empty; {workload.name} is a {workload.kind} "
                             "workload (give --target-data to compare at a deployment)")
        space = default.resolve(Context(cores=host.cores, ram=host.ram, data=workload.data_bytes(), scale=args.scale,
                                        budget=host.ram // 4))
        return workload, space, {k: str(v) for k, v in workload.flags.items()}, ["--scale", f"{args.scale:g}"]
    config = TuneConfig(workload=args.workload or "steady-overwrite", target_data=args.target_data,
                        target_memory=args.target_memory, duration=args.duration)
    target, workload = at_target(config, default, host, defaults)  # held out where the tuner confirms: full phases
    limit, budget = memory_plan(config.target, workload, Slot(host.cores, host.ram), target)  # the tuner's
    space = default.resolve(Context(cores=host.cores, ram=limit or host.ram, data=target.data, scale=workload.scale,
                                    budget=budget))
    plain: dict[str, str] = {k: str(workload.flags[k]) for k in ("num", "key_size", "value_size") if k in workload.flags}
    memory = ["--target-memory", str(workload.memory)] if args.target_memory else []
    duration = ["--duration", f"{args.duration:g}s"] if args.duration else []
    return workload, space, plain, ["--target-data", str(args.target_data), *memory, *duration]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1", help="comma-separated seeds, one comparison each")
    parser.add_argument("--workload", default=None,
                        help="default fillrandom; with --target-data steady-overwrite (the tuner's workload)")
    parser.add_argument("--scale", type=float, default=2.0, help="without --target-data: the workload's size factor")
    parser.add_argument("--target-data", type=parse_size, default=None,
                        help="compare at a deployment of this much data, e.g. 2GiB (as tune --target-data)")
    parser.add_argument("--target-memory", type=parse_size, default=None,
                        help="with --target-data: its memory, page cache included, e.g. 1GiB")
    parser.add_argument("--duration", type=float, default=None,
                        help="with --target-data: seconds of each timed phase, the tuner's and the held-out rounds' "
                             "(default the workload's)")
    parser.add_argument("--budget", type=float, default=600.0, help="the tuner's --budget, seconds")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--defaults", choices=MODES, default=LIBRARY,
                        help="what every run of both searches and the held-out rounds starts from (tune --defaults)")
    parser.add_argument("--out", type=Path, default=RESULTS / "versus_plain_optuna.json")
    parser.add_argument("--tuner-flags", type=shlex.split, default=[], metavar="FLAGS",
                        help="more flags for the tuner's tune command, e.g. --tuner-flags='--duration 10s' (the "
                             "held-out rounds keep the workload's duration)")
    parser.add_argument("--plain-from", type=Path, default=None, metavar="RECORD",
                        help="take each seed's plain search from this earlier record (same settings and seeds) "
                             "instead of running it again; the held-out rounds still measure its answer afresh")
    parser.add_argument("--append", action="store_true",
                        help="keep the seeds --out already holds (measured with the same settings); a seed run again "
                             "replaces its own")
    args = parser.parse_args()
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds: whole numbers, e.g. 1,2,3; got {args.seeds!r}")
    for flag, value in (("--target-memory", args.target_memory), ("--duration", args.duration)):
        if value is not None and args.target_data is None:
            parser.error(f"{flag}: only with --target-data")
    db_bench = probe(None)
    defaults = defaults_of(db_bench, args.defaults)
    host = Context.of_host()
    workload, space, plain_flags, size = setting(args, host, defaults)
    # the plain script runs db_bench in the shape the tuner measures: on the same defaults
    base = {**{k: flag_text(v) for k, v in defaults.flags.items()}, **plain_flags}
    size += ["--defaults", args.defaults]
    then = read_phase(workload) if args.target_data is not None else None
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "workload": workload.name,
                              "scale": None if args.target_data else args.scale, "target_data_bytes": args.target_data,
                              "target_memory_bytes": workload.memory, "data_bytes": workload.data_bytes(),
                              "plain_flags": base, "plain_scores": ",".join(then.benchmarks) if then else "fill",
                              "tuner_flags": args.tuner_flags, "budget_seconds": args.budget,
                              "rounds": args.rounds, "tuner_commit": project_commit(), "defaults": defaults.to_dict(),
                              "db_bench": db_bench.to_dict(), "seeds": []}
    reused: dict[int, dict[str, Any]] = {}
    if args.plain_from is not None:
        try:
            earlier = json.loads(args.plain_from.read_text())
        except (OSError, ValueError) as exc:
            parser.error(f"--plain-from: cannot read {args.plain_from}: {exc}")
        searched = ("workload", "scale", "target_data_bytes", "target_memory_bytes", "budget_seconds", "defaults")
        if any(earlier.get(k) != record[k] for k in searched) or earlier.get("db_bench") != record["db_bench"]:
            parser.error(f"--plain-from: {args.plain_from} searched at other settings or with another db_bench")
        reused = {s["seed"]: {**s["plain"], "reused_from": {"record": str(args.plain_from), "started": s.get("started")}}
                  for s in earlier.get("seeds", [])}
        record["plain_from"] = str(args.plain_from)
    if args.append and args.out.exists():
        before = json.loads(args.out.read_text())
        same = ("workload", "scale", "target_data_bytes", "target_memory_bytes", "budget_seconds", "rounds", "defaults",
                "tuner_flags", "plain_from", "plain_scores")
        settings = {"tuner_flags": [], "plain_from": None, "plain_scores": "fill", **before}  # older records: these
        if any(settings.get(k) != record.get(k) for k in same) or before["db_bench"] != record["db_bench"]:
            parser.error(f"--append: {args.out} was measured with other settings or another db_bench")
        record["when"] = before["when"]  # the first seeds'; each seed says when it ran and from which commit
        record["tuner_commit"] = before.get("tuner_commit")
        record["seeds"] = [s for s in before["seeds"] if s["seed"] not in seeds]
    rng = random.Random(1 + len(record["seeds"]))  # another order of rounds than the seeds kept
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-versus-plain-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        runner = Runner(db_bench, root / "work", timeout=3600.0, memory_limit=workload.memory, defaults=defaults)
        if workload.kind == "preloaded":
            built = runner.preload(workload, root / "logs" / "preload")
            workload = replace(workload, snapshot=str(built.path))
            record["preload"] = {"seconds": built.seconds, "size_bytes": built.size_bytes}
            print(f"held-out DB preloaded: {built.size_bytes / 2**30:.1f} GiB in {built.seconds:.0f} s", flush=True)
        for seed in seeds:
            started, commit = time.strftime("%Y-%m-%d %H:%M:%S %Z"), project_commit()  # what the tuner runs from
            tuner = tuner_search(workload.name, size, args.budget, seed, root / f"tuner-{seed}", args.tuner_flags)
            print(f"seed {seed}: the tuner spent {tuner['db_bench_seconds']:.0f} s of db_bench"
                  + ("" if seed in reused else "; the plain script gets as much"), flush=True)
            if seed in reused:
                plain = reused[seed]
                print(f"seed {seed}: the plain script's search of {plain['reused_from']['started']} "
                      f"({plain['trials']} trials in {plain['db_bench_seconds']:.0f} s) from {args.plain_from}", flush=True)
            else:
                plain = plain_search(str(db_bench.path), space, base, int(base["num"]), tuner["db_bench_seconds"],
                                     seed, root / "work", then)
                print(f"seed {seed}: the plain script ran {plain['trials']} trials in {plain['db_bench_seconds']:.0f} s",
                      flush=True)
            configs = {"rocksdb-default": {}, "tuner": tuner["flags"], "plain": plain["best"]["flags"]}
            rounds = held_out(runner, workload, configs, args.rounds, root / "logs" / f"held-out-{seed}", rng)
            record["seeds"].append({"seed": seed, "started": started, "tuner_commit": commit, "tuner": tuner,
                                    "plain": plain, "held_out": rounds})
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(record, indent=2, default=str) + "\n")
            print(f"seed {seed}: tuner / plain {shown_ratio(Ratio.from_dict(rounds['tuner_over_plain']))}", flush=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
