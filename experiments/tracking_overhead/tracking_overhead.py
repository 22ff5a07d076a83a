"""MLflow tracking overhead per trial, against the trial's own db_bench time.

Runs the same real study (random sampler, fixed seed) on a SQLite store and on a local
`mlflow server` over HTTP, and times every MLflow call the tracker makes: per logged run (one
`create_run`, `log_batch` calls of up to 1000 values, the db_bench logs and OPTIONS as artifacts,
`set_terminated`), at start, and at the end (summary, OPTIONS.ini, plots). Prints a table and
writes experiments/tracking_overhead/results/tracking_overhead.json with the machine it ran on.

    .venv/bin/python -m experiments.tracking_overhead.tracking_overhead [--trials 10] [--scale 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from experiments._script import entry
from search_spaces import Context, GiB
from tuner import Study, TuneConfig
from tuner.observers import SilentProgress
from tuner.trials import TrialRecord

RESULTS = Path(__file__).with_name("results") / "tracking_overhead.json"


def _server(root: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{root / 'server.db'}",
         "--artifacts-destination", str(root / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.5)
    raise SystemExit("mlflow server did not start")


def _study(root: Path, name: str, uri: str | None, args: argparse.Namespace) -> dict[str, float]:
    config = TuneConfig(workload=args.workload, scale=args.scale, trials=args.trials, sampler="random", seed=7,
                        study=name, out=root / name, mlflow=uri is not None, mlflow_uri=uri)
    study = Study(config, SilentProgress())
    started = time.monotonic()
    result = study.run()
    wall = time.monotonic() - started
    measured = [r.metrics for r in map(TrialRecord.of, study.optuna_study.trials) if r.metrics is not None]
    trial_seconds = sum(m["wall_seconds"] for m in measured) / len(measured)
    row = {"study_seconds": wall, "trial_db_bench_seconds": trial_seconds, "trials": len(result.trials)}
    tracker = study.tracker
    if tracker is not None:
        per_run = tracker.seconds["record"] / tracker.runs_logged
        row.update(runs_logged=tracker.runs_logged, start_seconds=tracker.seconds["start"],
                   per_run_seconds=per_run, finish_seconds=tracker.seconds["finish"],
                   per_trial_overhead_pct=100 * per_run / trial_seconds)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workload", default="fillrandom")
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-tracking-") as tmp:
        root = Path(tmp)
        rows["none"] = _study(root, "none", None, args)
        rows["sqlite"] = _study(root, "sqlite", f"sqlite:///{root / 'mlruns' / 'mlflow.db'}", args)
        proc, url = _server(root)
        try:
            rows["server"] = _study(root, "server", url, args)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    print(f"{args.workload} scale {args.scale:g}, {args.trials} trials, "
          f"db_bench {rows['none']['trial_db_bench_seconds']:.2f} s per trial")
    print(f"{'store':<8} {'study s':>9} {'start s':>8} {'per run s':>10} {'vs trial':>9} {'finish s':>9}")
    for name, row in rows.items():
        if name == "none":
            print(f"{name:<8} {row['study_seconds']:>9.1f}")
            continue
        print(f"{name:<8} {row['study_seconds']:>9.1f} {row['start_seconds']:>8.2f} {row['per_run_seconds']:>10.3f} "
              f"{row['per_trial_overhead_pct']:>8.1f}% {row['finish_seconds']:>9.2f}")
    host = Context.of_host()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "args": vars(args), "results": rows,
        "machine": {"cores": host.cores, "ram_gib": round(host.ram / GiB, 1), "cpu": platform.processor() or platform.machine(),
                    "python": platform.python_version()},
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    entry(main)
