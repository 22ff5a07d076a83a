"""Does the default job's own command run to its answer on a cluster of two nodes, each on its own
preloaded DB? A Ray head on this host and a worker node in a network namespace (the test suite's
``Cluster``, tests/test_parallel.py), each with its own $TMPDIR (so its own work dir and preloaded DB),
then ``make tune``'s command with ``--ray-address`` and two trials at once, one per node.

    .venv/bin/python -m experiments.parallel.two_node_default_job [--budget 40m] [--out DIR]

Needs root (network namespaces). Prints the tuner's output, then what each work dir holds at the end
(nothing but its marker when every preloaded DB was removed).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from experiments._script import entry, run_child
from tests.test_parallel import TUNER, Cluster

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="40m")
    parser.add_argument("--out", type=Path, help="the study's --out (default: in the run's temporary folder)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="dj-"))  # short: Ray's socket paths must stay under 108 bytes
    dirs = {n: root / n for n in ("driver", "head", "worker")}
    for d in dirs.values():
        d.mkdir()
    (root / "c").mkdir()
    os.environ["TMPDIR"] = str(dirs["head"])
    cluster = Cluster(root / "c", worker_env={"TMPDIR": str(dirs["worker"])})
    command = [*TUNER, "tune", "--workload", "steady-overwrite", "--target-data", "2GiB", "--target-memory", "1GiB",
               "--space", "default", "--budget", args.budget, "--seed", "1",
               "--study", "default-steady-overwrite-two-nodes", "--out", str(args.out or root / "out"),
               "--ray-address", cluster.address, "--parallel", "2", "--one-trial-per-node", "--no-mlflow"]
    try:
        cluster.start()
        os.environ["TMPDIR"] = str(dirs["driver"])
        print("$", " ".join(command), flush=True)
        code = run_child(command, env=cluster.env, cwd=ROOT).returncode
        print("exit", code, flush=True)
    finally:
        cluster.stop()
    for name, d in dirs.items():
        work = d / f"rocksdb-tuner-work-{os.getuid()}"
        print(name, sorted(p.name for p in work.glob("*")) if work.exists() else "no work dir")
    return code


if __name__ == "__main__":
    entry(lambda: sys.exit(main()))
