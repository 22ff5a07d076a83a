"""Record real db_bench measurements over the sampler benchmark's grid, for the replay objective.

Every point of the grid in experiments/data/sampler-space.toml (4 x 3 x 6 x 3 = 216 points) is
measured --repeats times with the real db_bench on the fillrandom workload. Each repeat is a full
pass over the grid in its own shuffled order, so slow drift of the machine spreads over all points.
The file is saved after every run and a second call continues where the first stopped.

    .venv/bin/python experiments/record_grid.py [--repeats 2] [--scale 0.5] [--out experiments/data/sampler-grid.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import tempfile
import time
from pathlib import Path

from objectives.dbbench import probe
from objectives.metrics import summarize
from objectives.runner import Runner, RunFailed
from objectives.workloads import load_workload
from search_spaces import Context, load_space
from tuner.experiment import machine_info

HERE = Path(__file__).parent
SPACE = HERE / "data" / "sampler-space.toml"
FIXED = {"max_write_buffer_number": "4"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--scale", type=float, default=0.5)
    parser.add_argument("--workload", default="fillrandom")
    parser.add_argument("--space", type=Path, default=SPACE)
    parser.add_argument("--out", type=Path, default=HERE / "data" / "sampler-grid.json")
    args = parser.parse_args()
    record(args.space, args.workload, args.scale, args.repeats, args.out)


def record(space_path: Path, workload_name: str, scale: float, repeats: int, out: Path) -> dict:
    """Measure every grid point ``repeats`` times (resuming ``out`` if it exists); returns the table."""
    host = Context.of_host()
    space = load_space(space_path).resolve(host)
    grid = space.grid()
    names = list(grid)
    points = [dict(zip(names, values)) for values in itertools.product(*grid.values())]
    db_bench = probe()
    workload = load_workload(workload_name).resolve(scale, host)
    runner = Runner(db_bench)
    table = json.loads(out.read_text()) if out.exists() else {
        "about": "Recorded real db_bench measurements (not simulated): ops/s of each run of each grid point. "
                 "Data for the replay objective of the sampler benchmark (objectives/replay.py).",
        "workload": workload_name, "scale": scale, "fixed_flags": FIXED, "parameters": names,
        "db_bench": db_bench.to_dict(),
        "machine": machine_info(host, runner.work_dir),
        "points": [{"params": p, "ops_per_sec": []} for p in points],
    }
    if table["parameters"] != names or (table["workload"], table["scale"]) != (workload_name, scale):
        raise SystemExit(f"{out} was recorded for another grid or workload; pass another --out")
    by_key = {json.dumps(p["params"], sort_keys=True): p for p in table["points"]}
    todo = [(r, p) for r in range(repeats)
            for p in random.Random(r).sample(points, len(points))
            if len(by_key[json.dumps(p, sort_keys=True)]["ops_per_sec"]) <= r]
    started, total = time.monotonic(), len(todo)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-grid-") as logs:
        for i, (r, params) in enumerate(todo, 1):
            flags = {**FIXED, **space.flags(params)}
            try:
                ops = summarize(runner.run(workload, flags, Path(logs) / f"{i}"))["ops_per_sec"]
            except RunFailed as exc:
                raise SystemExit(f"{params}: {exc.reason}") from None
            by_key[json.dumps(params, sort_keys=True)]["ops_per_sec"].append(ops)
            table["recorded"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(table, indent=1) + "\n")
            os.replace(tmp, out)
            eta = (time.monotonic() - started) / i * (total - i)
            print(f"[{i}/{total}] repeat {r + 1}: {params}: {ops:,.0f} ops/s (ETA {eta / 60:.0f} min)", flush=True)
    return table


if __name__ == "__main__":
    main()
