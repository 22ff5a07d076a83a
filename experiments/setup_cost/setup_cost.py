"""What set-up costs on a fresh clone: the virtualenv and the package, then the release db_bench.

    .venv/bin/python -m experiments.setup_cost.setup_cost [--out experiments/setup_cost/results/setup_cost.json]

Clones this checkout's HEAD into a temporary directory and runs there, as a new user would, the two
steps `make tune` and `make test` start with: `make setup` (the virtualenv and the package with its
test extras, from an empty pip cache) and `make db_bench` (the release db_bench, into an empty cache
directory, so it is built from Debian's source package, not reused). Debian packages already on the
machine are not reinstalled (apt's time is not in these figures). Records each step's wall time, the
virtualenv's size, the build's own BUILD_INFO.json (its build time, version and patches) and the
stripped binary's size, with the machine and the date. The temporary directory is removed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from search_spaces import Context

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).with_name("results")


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` (du's apparent size)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def _timed(step: list[str], cwd: Path, env: dict[str, str]) -> float:
    print("$ " + " ".join(step), flush=True)
    started = time.monotonic()
    subprocess.run(step, cwd=cwd, env=env, check=True)
    return round(time.monotonic() - started, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "setup_cost.json")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-setup-") as tmp:
        root = Path(tmp)
        clone, cache = root / "clone", root / "cache"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PIP_CACHE_DIR": str(root / "pip-cache")}
        env.pop("VIRTUAL_ENV", None)
        record: dict[str, Any] = {"when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": commit,
                                  "machine": machine_info(Context.of_host(), root)}
        record["setup_seconds"] = _timed(["make", "setup"], clone, env)
        record["venv_bytes"] = _size(clone / ".venv")
        record["db_bench_seconds"] = _timed(["make", "db_bench"], clone, env)
        (build,) = (cache / "rocksdb-tuner" / "db_bench").glob("*-release")
        record["db_bench_build"] = json.loads((build / "BUILD_INFO.json").read_text())
        record["db_bench_bytes"] = (build / "db_bench").stat().st_size
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2, default=str) + "\n")
    print(f"make setup {record['setup_seconds']:.0f} s (virtualenv {record['venv_bytes'] / 1e9:.1f} GB), "
          f"make db_bench {record['db_bench_seconds']:.0f} s (db_bench {record['db_bench_bytes'] / 1e6:.1f} MB)")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    entry(main)
