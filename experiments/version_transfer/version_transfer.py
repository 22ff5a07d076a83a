"""Does an answer survive an upgrade? A study's answer, tuned on one RocksDB version, against each
version's own defaults, measured on several release builds at the study's target.

    .venv/bin/python -m experiments.version_transfer.version_transfer --study runs/default-steady-overwrite-10.4
        --versions 10.4,11.8 [--rounds 5] [--out experiments/version_transfer/results/NAME.json] [--work-dir DIR]
    .venv/bin/python -m experiments.version_transfer.version_transfer --study STUDY --versions 10.4,11.8
        --target-data 64MiB --target-memory 256MiB --duration 2 --rounds 2 --out /tmp/smoke.json   (a smoke run)

Given a study made at a target (``make tune``'s: steady-overwrite, --target-data 2GiB --target-memory
1GiB), it measures the study's answer (what its summary tells the user to deploy: its best trial, or the
baseline it kept) and ``rocksdb-default`` on each build ``--versions`` names, each found as ``tune
--rocksdb-version`` finds it and run on its own library defaults (objectives/defaults.py: what an
application upgraded to that version gets, the deployed shape), at the study's target: its workload at
the target's data, in the target's LSM shape on that version's defaults, within the target's memory (a
memory cgroup per scored phase), in the timed phases the answer was confirmed in (the study's
re-validation's, 30 s for ``make tune``), on a DB the db_bench backend preloads once per build (as
tune does), every run on a hard-linked checkpoint of it. Each round runs every (build, configuration)
once, in a fresh random order, with db_bench seed 1000 (used by no search).

Per build: the answer over that build's rocksdb-default, the geometric mean of the per-round ratios
with a 95 % t interval (tuner.stats.paired_ratio); per configuration, each build over the study's own
(or the first named), paired alike. The record (``results/<study>.json`` unless ``--out``): the
machine, each build's version, path and BUILD_INFO.json, the defaults beneath it, the date, the commit
that last changed the study's directory (commit a study's outputs, as experiments/default_job/results/
holds them, before measuring it), the commit this ran from, and every run's metrics.

``--target-data`` (with ``--target-memory``, ``--duration``) measures at another target instead: a
smoke run at 64 MiB checks that everything runs in under a minute; it measures nothing. Ctrl-C (or a
SIGTERM) stops the running db_bench and removes the preloaded DBs and run directories it made.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from experiments.held_out import (
    HELD_OUT_SEED,
    Rounds,
    answer_of,
    at_target,
    git_commit,
    interleaved,
    project_commit,
    shape,
    shown_ratio,
    study_config,
)
from objectives.dbbench import DbBenchError, release_builds
from objectives.defaults import LIBRARY
from objectives.workdir import PRELOADED_FACTOR, WorkDirError, check_space, make_owned, prepare, remove_owned
from objectives.workloads import Workload
from search_spaces import Context, load_space
from tuner.backends import BACKENDS, Backend, Config, Found, RunFailed, Setup
from tuner.cli import parse_size
from tuner.model import TuneConfig, UsageError
from tuner.stats import Ratio
from tuner.summary import Summary

RESULTS = Path(__file__).with_name("results")
DEFAULT = "rocksdb-default"
MIN_MEMORY = 64 * 2**20  # tune's floor for a run's memory limit
TIMEOUT = 3600.0  # seconds a run may take


@dataclass(frozen=True)
class Build:
    """One db_bench build as ``tune --rocksdb-version`` finds it, its defaults, and the study's workload
    at the target on them."""

    asked: str  # the version as --versions names it, e.g. 11.8
    found: Found
    workload: Workload

    @property
    def version(self) -> str:
        assert self.found.db_bench is not None
        return self.found.db_bench.version

    def record(self) -> dict[str, Any]:
        """What the record says of the build: db_bench, BUILD_INFO.json, defaults, shape, the workload's run."""
        db, defaults = self.found.db_bench, self.found.defaults
        assert db is not None and defaults is not None
        info = Path(db.path).parent / "BUILD_INFO.json"
        w = self.workload
        return {"asked": self.asked, "db_bench": db.to_dict(),
                "build_info": json.loads(info.read_text()) if info.is_file() else None,
                "defaults": defaults.to_dict(), "shape": shape(defaults), "data_bytes": w.data_bytes(),
                "memory_bytes": w.memory, "duration_seconds": w.duration, "workload_flags": w.flags}


def find_builds(versions: list[str], config: TuneConfig, summary: Summary, host: Context) -> list[Build]:
    """Each version's build (as tune finds it), on its library defaults, with the workload at the target."""
    space = load_space(str(summary.space))
    builds = []
    for version in versions:
        try:
            asked = replace(config, execution=replace(config.execution, rocksdb_version=version),
                            measurement=replace(config.measurement, defaults=LIBRARY))
            found = BACKENDS["db_bench"].find(asked)
        except (DbBenchError, UsageError) as exc:
            raise SystemExit(f"--versions: {exc}") from None
        assert found.defaults is not None
        builds.append(Build(version, found, at_target(config, space, host, found.defaults)[1]))
    return builds


def target_of(args: argparse.Namespace, summary: Summary) -> TuneConfig:
    """The study's workload at its target (or at --target-data, within --target-memory, default the
    study's memory:data ratio), in the phases its answer was confirmed in (or --duration)."""
    target = summary.target
    if target is None or target.data_bytes is None or target.assumed:
        raise SystemExit(f"--study {args.study}: not made at a target (tune --target-data); nothing to measure at")
    if args.target_data is None:
        return study_config(summary, target.data_bytes, target.memory_bytes, args.duration)
    memory = args.target_memory or (max(MIN_MEMORY, int(target.memory_bytes * args.target_data / target.data_bytes))
                                    if target.memory_bytes else None)
    return study_config(summary, args.target_data, memory, args.duration)


def measure_builds(builds: list[Build], configs: dict[str, dict[str, Any]], rounds: int, work: Path,
                   rng: random.Random) -> tuple[Rounds, dict[str, dict[str, Any]]]:
    """Preload each build's DB (its backend, as tune does), then the interleaved rounds over every
    (build, configuration); the backends' preloaded DBs are removed whatever happens."""
    backends: dict[str, tuple[Backend, Workload]] = {}
    preloads: dict[str, dict[str, Any]] = {}
    try:
        for build in builds:
            kind = BACKENDS["db_bench"]
            path = kind.preload_path(build.found, work, build.workload, HELD_OUT_SEED)
            backend = kind(Setup(work_dir=work, timeout=TIMEOUT, seed=HELD_OUT_SEED,
                                 workload=build.workload, found=build.found, memory_limit=build.workload.memory,
                                 preloaded=(path,)))
            backends[build.version] = (backend, build.workload)
            backend.prepare()
            print(f"{build.version}: preloading {build.workload.data_bytes() / 2**30:.2f} GiB ...", flush=True)
            try:
                done = backend.preload(build.workload, work / "logs" / f"preload-{build.version}")
            except RunFailed as exc:
                raise SystemExit(f"{build.version}: building the preloaded DB failed: {exc.reason}") from None
            backends[build.version] = (backend, replace(build.workload, snapshot=str(done.path)))
            preloads[build.version] = {"seconds": round(done.seconds, 1), "size_bytes": done.size_bytes}
            print(f"{build.version}: preloaded {done.size_bytes / 2**30:.2f} GiB in {done.seconds:.0f} s", flush=True)
        arms = {f"{b.version} {c}": (b.version, c) for b in builds for c in configs}

        def run(arm: str, i: int) -> dict[str, float | None]:
            version, config = arms[arm]
            backend, workload = backends[version]
            return backend.measure(Config.of(configs[config]), work / "logs" / f"round-{i + 1}" / arm.replace(" ", "_"),
                                   1, workload=workload).metrics

        return interleaved(arms, rounds, run, rng), preloads
    finally:
        for backend, _ in backends.values():
            backend.teardown()


def analysis(done: Rounds, builds: list[Build], configs: dict[str, Any], base: str) -> dict[str, Any]:
    """Per build, the answer over its defaults; per configuration, each build over ``base``'s; medians."""
    answer = next(c for c in configs if c != DEFAULT)
    versions = [b.version for b in builds]
    return {"median_ops_per_sec": {v: {c: done.median_ops().get(f"{v} {c}") for c in configs} for v in versions},
            "answer_over_default": {v: done.ratio(f"{v} {answer}", f"{v} {DEFAULT}").to_dict() for v in versions},
            "over_study_version": {f"{v} / {base}": {c: done.ratio(f"{v} {c}", f"{base} {c}").to_dict() for c in configs}
                                   for v in versions if v != base}}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--study", type=Path, required=True, help="a finished study's --out directory, made at a target")
    parser.add_argument("--versions", default=None,
                        help="comma-separated RocksDB versions, each as tune --rocksdb-version takes it, e.g. "
                             "10.4,11.8 (default: every release build made by make db_bench)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--target-data", type=parse_size, default=None,
                        help="measure at this much data instead of the study's target, e.g. 64MiB for a smoke run")
    parser.add_argument("--target-memory", type=parse_size, default=None,
                        help="with --target-data: its memory (default the study's memory:data ratio, at least 64 MiB)")
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds of each timed phase (default those the study's answer was confirmed in)")
    parser.add_argument("--work-dir", type=Path, default=None, help="where the DBs are made (default tune's)")
    parser.add_argument("--out", type=Path, default=None, help="the record (default results/<study>.json)")
    return parser


def checked_builds(args: argparse.Namespace, parser: argparse.ArgumentParser, summary: Summary,
                   flags: dict[str, Any], answer: str) -> list[Build]:
    """The builds --versions names, each distinct and taking every flag of the answer."""
    versions = args.versions.split(",") if args.versions else [b.parent.name.removesuffix("-release")
                                                               for b in release_builds()]
    builds = find_builds([v.strip() for v in versions], target_of(args, summary), summary, Context.of_host())
    if len({b.version for b in builds}) < len(builds):
        parser.error(f"--versions: {args.versions} names a build twice ({', '.join(b.version for b in builds)})")
    for b in builds:
        assert b.found.db_bench is not None and b.found.defaults is not None
        try:
            b.found.db_bench.check_flags(flags, where=answer)
        except DbBenchError as exc:
            raise SystemExit(f"--versions: {exc}") from None
        print(f"{b.version} ({b.found.db_bench.path}): {b.workload.data_bytes() / 2**30:.2f} GiB within "
              f"{(b.workload.memory or 0) / 2**30:.2f} GiB, {b.workload.duration:g} s phases, in "
              f"{shape(b.found.defaults)}", flush=True)
    return builds


def study_record(args: argparse.Namespace, summary: Summary, work: Path, configs: dict[str, Any],
                 builds: list[Build]) -> dict[str, Any]:
    """What the record says before anything is measured: when, where, from which commits, what and how."""
    return {
        "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": machine_info(Context.of_host(), work),
        "commit": project_commit(),
        "study": {"name": summary.study, "path": str(args.study), "commit": git_commit(args.study, last_change=True),
                  "db_bench": summary.build.details if summary.build else None,
                  "defaults": summary.defaults.to_dict() if summary.defaults else None,
                  "answer": summary.answer.to_dict() if summary.answer else None,
                  "target": summary.target.to_dict() if summary.target else None},
        "at_the_study_target": args.target_data is None and args.duration is None, "workload": summary.workload,
        "rounds": args.rounds, "db_bench_seed": HELD_OUT_SEED, "configurations": configs,
        "builds": {b.version: b.record() for b in builds}}


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error(f"--rounds: at least 2 (a paired interval needs two rounds), got {args.rounds}")
    if args.target_memory is not None and args.target_data is None:
        parser.error("--target-memory: only with --target-data (the study's target has its own)")
    summary = Summary.load(args.study / "summary.json")
    answer, flags = answer_of(summary)
    if not flags:
        raise SystemExit(f"--study {args.study}: its answer is db_bench's defaults; nothing to set against them")
    configs: dict[str, dict[str, Any]] = {DEFAULT: {}, answer: flags}
    study_version = summary.build.version if summary.build else None
    print(f"study {summary.study} ({args.study}), tuned on db_bench {study_version}: {answer} {flags}", flush=True)
    builds = checked_builds(args, parser, summary, flags, answer)
    base = study_version if study_version in [b.version for b in builds] else builds[0].version
    try:
        work = prepare(args.work_dir)
        check_space(work, builds[0].workload.data_bytes(), "a preloaded DB per build",
                    factor=PRELOADED_FACTOR * len(builds))
    except WorkDirError as exc:
        raise SystemExit(str(exc)) from None
    record = study_record(args, summary, work, configs, builds)
    root = make_owned(work, "rocksdb-tuner-versions-")
    try:  # stopped (experiments._script.entry): nothing recorded
        done, preloads = measure_builds(builds, configs, args.rounds, root, random.Random(1))
    finally:
        remove_owned(root)  # the runs' logs, and the preloaded DBs a failed teardown left
    for version, preload in preloads.items():
        record["builds"][version]["preload"] = preload
    record.update(ended=time.strftime("%Y-%m-%d %H:%M:%S %Z"), **analysis(done, builds, configs, base),
                  failed=done.failed,
                  samples={b.version: {c: done.metrics[f"{b.version} {c}"] for c in configs} for b in builds})
    out = args.out or RESULTS / f"{summary.study}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2, default=str) + "\n")
    for version, g in record["answer_over_default"].items():
        print(f"{version}: {answer} / {version}'s defaults {shown_ratio(Ratio.from_dict(g))}", flush=True)
    for pair, ratios in record["over_study_version"].items():
        print(f"{pair}: " + "; ".join(f"{c} {shown_ratio(Ratio.from_dict(g))}" for c, g in ratios.items()), flush=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    entry(main)
