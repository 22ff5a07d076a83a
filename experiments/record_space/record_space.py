"""Record real db_bench runs over the whole default space: the data behind the sampler benchmark.

    .venv/bin/python -m experiments.record_space.record_space --workload write --configs 250 --repeats 2
    .venv/bin/python -m experiments.record_space.record_space --workload read --configs 150 --repeats 2
    .venv/bin/python -m experiments.record_space.record_space --workload write --fidelity 60

Configurations are drawn at random from the default space (all 9 options, the conditional zstd level
included; constraints respected), plus db_bench's defaults and the benchmark.sh-style configuration.
Each repeat is a pass over all of them in a fresh random order, so the noise includes the machine's
drift over hours, as a real study's does. Measured with the tuner's own runner (sustained ops/s: the
drain charged; the read workload within a memory cgroup). Every run is appended to a JSON-lines file
as it is taken, so an interrupted recording resumes.

``--fidelity N`` measures N of the configurations at 1/8, 1/2 and the full data size, for the rank
correlation between fidelities (experiments/fidelity/results/fidelity.json).

Workloads: ``write`` is fillrandom at scale 1 (1M x 116 B); ``read`` is reads-beyond-memory at scale 1
(400k x 400 B, an 80 MB DB, 60k random reads) within a 48 MiB memory cgroup.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments._host import machine_info
from experiments._script import entry
from experiments.record_space.surrogate import SPACE
from objectives.dbbench import DbBench, probe
from objectives.measurement import measure
from objectives.runner import RunFailed, Runner
from objectives.workloads import Workload, load_workload
from search_spaces import Context, MiB, load_space
from tuner.backends import Found
from tuner.engine import starts

DATA = Path(__file__).with_name("results")
WORKLOADS = {"write": ("fillrandom", None), "read": ("reads-beyond-memory", 48 * MiB)}
KEYS = ("ops_per_sec", "burst_ops_per_sec", "drain_seconds", "p99_us", "write_amp", "write_amp_logical",
        "wall_seconds")


def workload(kind: str, scale: float) -> tuple[Workload, int | None]:
    spec, limit = WORKLOADS[kind]
    return load_workload(spec).resolve(scale, Context.of_host()), limit


def configurations(w: Workload, count: int, seed: int, budget: int | None, db: DbBench) -> list[dict[str, Any]]:
    """``count`` random feasible configurations of the default space, after db_bench's defaults and
    the benchmark.sh-style one (projected onto the space, as a study's first trials are)."""
    host = Context.of_host()
    ctx = Context(cores=host.cores, ram=host.ram, data=w.data_bytes(), scale=w.scale,
                  budget=budget if budget else host.ram // 4)
    space = load_space(SPACE).resolve(ctx)
    rng = random.Random(seed)
    configs: list[dict[str, Any]] = [{"name": name, "params": params} for name, params in starts(space, Found("db_bench", db), w)]
    first = len(configs)
    while len(configs) < count + first:
        params = space.sample(rng)
        if not space.violations(params):
            configs.append({"name": f"random-{len(configs) - first:03d}", "params": params})
    for c in configs:
        c["flags"] = space.config(c["params"]).flags()
    return configs


def record(kind: str, count: int, repeats: int, fidelity: int, seed: int, db: DbBench, data: Path = DATA,
           scale: float = 1.0) -> Path:
    """Measure (or resume measuring) one recording into ``data``; returns its JSON-lines file.
    ``scale`` is the full data size (1 for the committed recordings; tests use a tiny one)."""
    data.mkdir(parents=True, exist_ok=True)
    scales = tuple(f * scale for f in (0.125, 0.5, 1.0)) if fidelity else (scale,)
    name = f"space-{kind}" + ("-fidelity" if fidelity else "")
    out = data / f"{name}.jsonl"
    done = {(r["config"], r["scale"], r["repeat"]) for r in map(json.loads, out.read_text().splitlines())} \
        if out.exists() else set()
    passes = 1 if fidelity else repeats
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-record-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        full, limit = workload(kind, scale)
        budget = limit * 3 // 4 if limit else None
        configs = configurations(full, fidelity or count, seed, budget, db)
        header = data / f"{name}.json"
        began = (json.loads(header.read_text())["started"] if done and header.exists()  # a resume keeps it
                 else time.strftime("%Y-%m-%d %H:%M:%S"))
        header.write_text(json.dumps({
            "what": __doc__.splitlines()[0], "workload": kind, "scale": scale,
            "description": full.description + (f" Recorded within a {limit // MiB} MiB memory cgroup instead (the "
                                               f"memory_limit_bytes)." if limit else ""),
            "memory_limit_bytes": limit, "memory_budget_bytes": budget, "scales": scales, "repeats": passes,
            "db_bench": db.to_dict(), "machine": machine_info(Context.of_host(), root / "work"),
            "started": began, "configurations": configs}, indent=1) + "\n")
        runner = Runner(db, root / "work", memory_limit=limit)
        total = len(configs) * len(scales) * passes
        count, started = len(done), time.monotonic()
        for repeat in range(passes):
            order = random.Random(f"{seed}:{repeat}").sample(configs, len(configs))
            for s in scales:
                w = full if s == scale else workload(kind, s)[0]
                for c in order:
                    if (c["name"], s, repeat) in done:
                        continue
                    entry: dict[str, Any] = {"config": c["name"], "scale": s, "repeat": repeat, "when": time.time()}
                    try:
                        m = measure(runner, w, c["flags"], root / "logs", 1, 1).metrics
                        entry["metrics"] = {k: m[k] for k in KEYS}
                    except RunFailed as exc:
                        entry["failed"] = exc.reason
                    with out.open("a") as f:
                        f.write(json.dumps(entry) + "\n")
                    count += 1
                    rate = (time.monotonic() - started) / max(1, count - len(done))
                    print(f"{count}/{total} {c['name']} scale {s:g} repeat {repeat}: "
                          f"{(entry.get('metrics') or {}).get('ops_per_sec') or 0:,.0f} ops/s "
                          f"(ETA {(total - count) * rate / 60:.0f} min)", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    parser.add_argument("--configs", type=int, default=250)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--fidelity", type=int, default=0, metavar="N",
                        help="instead: N configurations at 1/8, 1/2 and the full data size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rocksdb-version", default=None)
    args = parser.parse_args()
    record(args.workload, args.configs, args.repeats, args.fidelity, args.seed, probe(version=args.rocksdb_version))


if __name__ == "__main__":
    entry(main)
