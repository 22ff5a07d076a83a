"""How long the re-validation takes beside the search, tried as a new user would: ``tune --trials 6``
(no budget: the re-validation gets about the search's machine time) and ``tune --scale 0.25 --budget
60s`` (a small budget: it searches within it, or is refused before the first trial). Each command
runs as typed (``--json``, no MLflow or plots), in a temporary directory removed afterwards; the
record keeps the plan line the study printed before its first trial, its machine seconds per part
and the re-validation's plan.

    .venv/bin/python -m experiments.revalidation_share.revalidation_share
        [--out experiments/revalidation_share/results/revalidation_share.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry, run_child
from search_spaces import Context
from tuner.summary import Summary

RESULTS = Path(__file__).with_name("results")
COMMANDS = {
    "trials 6": ["--workload", "fillrandom", "--trials", "6", "--seed", "1"],
    "budget 60s at scale 0.25": ["--workload", "fillrandom", "--scale", "0.25", "--budget", "60s", "--seed", "1"],
}


def run(name: str, args: list[str], root: Path) -> dict[str, Any]:
    """One ``tune`` command line: what it printed first, and what it spent."""
    out = root / name.replace(" ", "-")
    command = [sys.executable, "-m", "tuner.cli", "tune", *args, "--out", str(out), "--json", "--no-mlflow",
               "--no-plots"]
    started = time.monotonic()
    done = run_child(command, capture_output=True, cwd=root)
    record: dict[str, Any] = {"args": args, "exit_code": done.returncode,
                              "wall_seconds": round(time.monotonic() - started, 1),
                              "plan": next((line for line in done.stderr.splitlines() if line.startswith("plan: ")), None)}
    if done.returncode != 0:
        record["error"] = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else None
        return record
    summary = Summary.from_dict(json.loads(done.stdout), "tune --json")
    seconds, reval = summary.machine_seconds, summary.revalidation
    record.update(machine_seconds=seconds.to_dict(), search_seconds=round(seconds.baselines + seconds.trials, 1),
                  trials=summary.trials.to_dict(), budget_seconds=summary.budget_seconds,
                  revalidation_plan=reval.plan if reval else None, revalidation_rounds=reval.rounds if reval else None,
                  db_bench=summary.build.details if summary.build else None)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "revalidation_share.json")
    args = parser.parse_args()
    record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commands": {}}
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-revalidation-share-") as tmp:
        root = Path(tmp)
        record["machine"] = machine_info(Context.of_host(), root)
        for name, command in COMMANDS.items():
            print(f"{name}: rocksdb-tuner tune {' '.join(command)}", flush=True)
            record["commands"][name] = result = run(name, command, root)
            print(f"  exit {result['exit_code']} after {result['wall_seconds']} s; {result['plan']}", flush=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
