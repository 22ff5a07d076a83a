"""How much is there to find at a target? The best answers any search found, and configurations an
engineer would try beyond the search space, against the defaults, in paired rounds that chose nothing.

    .venv/bin/python -m experiments.headroom.headroom --configs experiments/headroom/configs.json
        [--workload steady-overwrite] [--target-data 2GiB] [--target-memory 1GiB] [--rounds 3]
        [--defaults library] [--duration 300] [--out experiments/headroom/results/headroom.json]

``--configs`` is a JSON object of named configurations, each a map of db_bench flags set on top of the
defaults every run starts from (``--defaults``: by default the measuring build's library defaults, the
deployed shape); ``rocksdb-default`` (no flag) is always measured beside them. Each runs ``--workload``
at the target as tune confirms there (by default the default job's, steady-overwrite: random overwrites
for the re-validation's 30 s on a DB preloaded once, the drain charged, within the target's memory;
``--duration`` seconds instead, for a window long enough to hold the compactions a configuration
defers; a load workload loads its DB in every run), once per round in a fresh random order,
with db_bench seeds no search used. Per configuration: its ops/s each round and its ratio to
rocksdb-default (tuner.stats.paired_ratio). The record (machine, db_bench, defaults, date, commit,
every run's metrics) is written when the last round ends; Ctrl-C (or a SIGTERM) stops db_bench and
removes the preloaded DB.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from experiments.held_out import at_target, measured_rounds, project_commit, shape, shown_ratio
from objectives.dbbench import DbBenchError, probe
from objectives.defaults import LIBRARY, MODES, defaults_of
from objectives.runner import Runner
from objectives.workloads import WorkloadError
from search_spaces import Context, load_space
from search_spaces.parameters import flag_text
from tuner.cli import parse_size
from tuner.model import TuneConfig, UsageError

RESULTS = Path(__file__).with_name("results")
REFERENCE = "rocksdb-default"


def read_configs(path: Path) -> dict[str, dict[str, str]]:
    """The named configurations of ``path`` (name -> db_bench flag -> value), checked."""
    try:
        configs = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--configs: cannot read {path}: {exc}") from exc
    if not isinstance(configs, dict) or not all(isinstance(v, dict) for v in configs.values()):
        raise SystemExit(f"--configs: {path} must hold an object of named objects of db_bench flags")
    if REFERENCE in configs:
        raise SystemExit(f"--configs: {REFERENCE} is always measured; name no configuration so")
    return {name: {k: flag_text(v) for k, v in flags.items()}
            for name, flags in configs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=Path, required=True, help="JSON: name -> {db_bench flag: value}")
    parser.add_argument("--workload", default="steady-overwrite", help="a preset or workload file (tune --workload)")
    parser.add_argument("--target-data", type=parse_size, default=2 * 2**30)
    parser.add_argument("--target-memory", type=parse_size, default=2**30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--defaults", choices=MODES, default=LIBRARY)
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds of the timed phase (default: the re-validation's, the job's target window)")
    parser.add_argument("--out", type=Path, default=RESULTS / "headroom.json")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds: at least 1 (2 for an interval), got {args.rounds}")
    if args.duration is not None and not args.duration > 0:
        parser.error(f"--duration: seconds > 0, got {args.duration}")
    configs = {REFERENCE: {}, **read_configs(args.configs)}
    host, db_bench = Context.of_host(), probe(None)
    for name, flags in configs.items():
        try:
            db_bench.check_flags(flags, where=f"configuration {name!r} of {args.configs}")
        except DbBenchError as exc:
            raise SystemExit(f"--configs: {exc}") from None
    defaults = defaults_of(db_bench, args.defaults)
    config = TuneConfig(workload=args.workload, target_data=args.target_data, target_memory=args.target_memory,
                        duration=args.duration)
    try:
        _, workload = at_target(config, load_space("default"), host, defaults)
    except (UsageError, WorkloadError) as exc:
        raise SystemExit(f"--workload: {exc}") from None
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": project_commit(),
                              "db_bench": db_bench.to_dict(), "defaults": defaults.to_dict(), "shape": shape(defaults),
                              "workload": workload.name, "duration_seconds": workload.duration,
                              "target_data_bytes": args.target_data, "target_memory_bytes": workload.memory,
                              "rounds": args.rounds, "configs_from": str(args.configs), "configs": configs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-headroom-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        record["machine"] = machine_info(host, root / "work")
        runner = Runner(db_bench, root / "work", timeout=3600.0, memory_limit=workload.memory, defaults=defaults)
        print(shape(defaults), flush=True)
        if workload.kind == "preloaded":
            built = runner.preload(workload, root / "logs" / "preload")
            workload = replace(workload, snapshot=str(built.path))
            record["preload"] = {"seconds": built.seconds, "size_bytes": built.size_bytes}
            print(f"preloaded {built.size_bytes / 2**30:.2f} GiB in {built.seconds:.0f} s", flush=True)
        print(f"{workload.name}: {len(configs)} configurations x {args.rounds} rounds", flush=True)

        done = measured_rounds(runner, workload, configs, args.rounds, root / "logs", random.Random(1))
        record["runs"] = done.metrics
        record["failed"] = done.failed
        record["median_ops_per_sec"] = done.median_ops()
        over = {c: done.ratio(c, REFERENCE) for c in configs if c != REFERENCE}
        record["over_default"] = {c: g.to_dict() for c, g in over.items()}
    args.out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    for name, g in sorted(over.items(), key=lambda kv: -(kv[1].ratio or 0.0)):
        print(f"{name}: {shown_ratio(g)}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
