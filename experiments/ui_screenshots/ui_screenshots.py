"""Screenshots of the MLflow UI for docs/images/, taken from a real study's tracking store.

    .venv/bin/python -m experiments.ui_screenshots.ui_screenshots --mlflow-uri sqlite:///mlruns/mlflow.db [--study NAME]

Starts `rocksdb-tuner ui` on a free port, and with headless Chromium (a fresh profile, as a new
user's browser) photographs the addresses it prints: the study's trials (mlflow-trials.png), its
three best side by side (mlflow-compare.png) and its best trial's run page (mlflow-trial.png).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from experiments._script import entry

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def shoot(url: str, dest: Path, width: int = 1900, height: int = 900) -> None:
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", f"--window-size={width},{height}", "--hide-scrollbars",
                        "--virtual-time-budget=30000", f"--screenshot={dest}", url],
                       capture_output=True, text=True, timeout=180, check=True)
    print(f"wrote {dest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mlflow-uri", required=True)
    parser.add_argument("--study", help="the study to show (default the newest)")
    parser.add_argument("--out", type=Path, default=IMAGES)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ui = subprocess.Popen([sys.executable, "-m", "tuner.cli", "ui", "--mlflow-uri", args.mlflow_uri, "--port",
                           str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert ui.stdout is not None
    try:
        lines: list[str] = []
        while not lines or "every trial of experiment" not in lines[-1]:
            line = ui.stdout.readline()
            if not line:
                raise SystemExit(f"rocksdb-tuner ui ended: {lines}")
            lines.append(line.rstrip("\n"))
        links = [(line.strip()[: line.strip().index(": http")], line[line.index("http"):]) for line in lines[1:]]
        pick = [(what, url) for what, url in links if args.study is None or what.startswith(args.study + " (")]
        trials = next(url for what, url in pick if "its trials" in what)
        compare = next(url for what, url in pick if "side by side" in what)
        shoot(trials, args.out / "mlflow-trials.png", width=2300)  # a first load warms the server up
        shoot(trials, args.out / "mlflow-trials.png", width=2300)
        shoot(compare, args.out / "mlflow-compare.png", height=1300)
        best = compare.split("%5B%22", 1)[1].split("%22", 1)[0]
        experiment = trials.split("/experiments/", 1)[1].split("/", 1)[0]
        shoot(f"http://127.0.0.1:{port}/#/experiments/{experiment}/runs/{best}?workflowType=machine_learning",
              args.out / "mlflow-trial.png", height=1100)
    finally:
        os.kill(ui.pid, signal.SIGTERM)
        ui.wait(timeout=60)


if __name__ == "__main__":
    entry(main)
