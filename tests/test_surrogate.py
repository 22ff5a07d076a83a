"""The sampler benchmark's pieces: a live recording with the real db_bench (resumable), the surrogate
checked against a synthetic landscape whose truth is known, and every sampler searching it."""

from __future__ import annotations

import importlib
import json
import math
import random

import pytest

from tests.conftest import TINY

# experiments/ holds one folder per question; its scripts are modules of the experiments package
MODULES = {"record_space": "experiments.record_space.record_space", "surrogate": "experiments.record_space.surrogate",
           "sampler_benchmark": "experiments.sampler_benchmark.sampler_benchmark",
           "fidelity": "experiments.fidelity.fidelity"}


@pytest.fixture
def scripts():
    """A research script by its name."""
    return lambda name: importlib.import_module(MODULES[name])


@pytest.mark.dbbench
def test_a_recording_resumes_and_fits_a_surrogate(scripts, db_bench, tmp_path):
    record = scripts("record_space")
    out = record.record("write", 2, 2, 0, 3, db_bench, tmp_path, scale=TINY)
    runs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(runs) == (2 + 2) * 2  # defaults, benchmark.sh, 2 random; two passes
    assert all(r["metrics"]["ops_per_sec"] > 0 and r["metrics"]["write_amp"] > 0 for r in runs)
    header = json.loads((tmp_path / "space-write.json").read_text())
    assert [c["name"] for c in header["configurations"]][:2] == ["rocksdb-default", "benchmark.sh"]
    assert header["db_bench"]["version"] == db_bench.version and header["scale"] == TINY
    assert record.record("write", 2, 2, 0, 3, db_bench, tmp_path, scale=TINY).read_text() == out.read_text()

    surrogate = scripts("surrogate")
    header, runs = surrogate.load_recording("space-write", tmp_path)
    space = surrogate.space_of(header)
    params = {c["name"]: c["params"] for c in header["configurations"]}
    model = surrogate.Surrogate.fit(space, runs, params)
    assert model.noise > 0 and model.mean(params["rocksdb-default"]) > 0


def _landscape(space, n: int, noise: float, seed: int):
    """Synthetic runs: log ops/s peaks at a known point of the space; two repeats per configuration."""
    rng = random.Random(seed)
    numeric = [p for p in space.parameters if hasattr(p, "position") and not p.when]

    def truth(params):
        return 12.0 - sum((p.position(params[p.name]) - 0.7) ** 2 for p in numeric)

    configs: dict[str, dict] = {}
    runs = []
    while len(configs) < n:
        params = space.sample(rng)
        if not space.violations(params):
            configs[f"c{len(configs)}"] = params
    for name, params in configs.items():
        for repeat in range(2):
            runs.append({"config": name, "repeat": repeat,
                         "metrics": {"ops_per_sec": math.exp(truth(params) + rng.gauss(0, noise))}})
    return configs, runs, truth


@pytest.fixture
def space(scripts):
    return scripts("surrogate").space_of({"workload": "write"})  # as a recording at scale 1 resolves it


def test_the_surrogate_recovers_a_known_landscape_and_its_noise(scripts, space):
    surrogate = scripts("surrogate")
    configs, runs, truth = _landscape(space, 150, 0.05, 1)
    model = surrogate.Surrogate.fit(space, runs, configs)
    assert model.noise == pytest.approx(0.05, rel=0.2)  # pooled over 150 pairs
    check = surrogate.validate(space, runs, configs)
    assert check["spearman"] > 0.7 and check["configurations"] == 150
    best, where = surrogate.optimum(model, samples=3000)
    assert truth(where) > max(truth(p) for p in configs.values()) - 0.1  # near the best ever measured


def test_the_surrogate_sees_no_pattern_in_noise(scripts, space):
    surrogate = scripts("surrogate")
    configs, runs, _ = _landscape(space, 100, 0.05, 2)
    for r in runs:  # the same configurations, but every value pure noise
        r["metrics"]["ops_per_sec"] = math.exp(12.0 + random.Random(r["config"] + str(r["repeat"])).gauss(0, 0.1))
    assert abs(surrogate.validate(space, runs, configs)["spearman"]) < 0.35


@pytest.mark.parametrize("sampler", ["tpe", "tpe-default", "skopt", "cmaes", "random", "flaml-cfo", "nevergrad"])
def test_every_sampler_searches_the_surrogate(scripts, space, sampler):
    surrogate = scripts("surrogate")
    bench = scripts("sampler_benchmark")
    configs, runs, _ = _landscape(space, 80, 0.05, 3)
    model = surrogate.Surrogate.fit(space, runs, configs)
    best, _ = surrogate.optimum(model, samples=2000)
    result = bench.summarise(sampler, [4, 8], {b: [bench.regret_curve(sampler, space, model, best, seed, b)
                                                   for seed in range(2)] for b in (4, 8)})
    assert len(result["median_regret_curve"]) == 8 and set(result["budgets"]) == {"4", "8"}
    assert all(-0.2 < r < 1 for b in result["budgets"].values() for r in b["regret"])
    assert all(b["cpu_ms_per_trial"] > 0 for b in result["budgets"].values())


def test_a_sampler_beats_another_as_often_as_its_seeds_say(scripts):
    """Synthetic: 14 wins, 4 losses, 2 ties; the chance among the seeds that differ is 14/18, its exact
    interval scipy's Clopper-Pearson one, and a sampler against itself has no chance at all (all ties)."""
    bench = scripts("sampler_benchmark")
    mine = [0.1] * 14 + [0.3] * 4 + [0.2] * 2
    theirs = [0.2] * 14 + [0.2] * 4 + [0.2] * 2
    got = bench.versus(mine, theirs)
    assert (got["wins"], got["losses"], got["ties"]) == (14, 4, 2) and got["p"] == pytest.approx(14 / 18)
    assert got["ci95"][0] == pytest.approx(0.5236, abs=1e-3) and got["ci95"][1] == pytest.approx(0.9359, abs=1e-3)
    assert bench.versus(mine, mine) == {"wins": 0, "losses": 0, "ties": 20}


@pytest.mark.parametrize("sampler", ["tpe", "skopt", "random", "flaml-cfo", "nevergrad"])
def test_every_sampler_measures_the_starts_first(scripts, space, sampler):
    """As the tuner does: db_bench's defaults and the benchmark.sh-style configuration come first."""
    surrogate = scripts("surrogate")
    bench = scripts("sampler_benchmark")
    configs, runs, _ = _landscape(space, 80, 0.0, 4)
    model = surrogate.Surrogate.fit(space, runs, configs)
    worst, second = sorted(configs.values(), key=model.mean)[:2]
    curve = bench.searches()[sampler](space, model, 0, 3, [worst, second])
    assert curve[:2] == [model.mean(worst), model.mean(second)]


def test_fidelity_analysis_on_known_rankings(scripts):
    fidelity = scripts("fidelity")
    header = {"scales": [0.125, 0.5, 1.0]}
    rng = random.Random(4)
    full = {f"c{i}": 100.0 + i for i in range(30)}
    runs = [{"config": c, "scale": 1.0, "metrics": {"ops_per_sec": v, "wall_seconds": 8.0}} for c, v in full.items()]
    runs += [{"config": c, "scale": 0.5, "metrics": {"ops_per_sec": 2 * v, "wall_seconds": 4.0}} for c, v in full.items()]
    shuffled = rng.sample(list(full.values()), len(full))  # no relation to the full size's order
    runs += [{"config": c, "scale": 0.125, "metrics": {"ops_per_sec": v, "wall_seconds": 1.0}}
             for c, v in zip(full, shuffled)]
    out = fidelity.analyse(header, runs)
    same, noise = out["fidelities"]["0.5"], out["fidelities"]["0.125"]
    assert same["spearman"] == pytest.approx(1.0) and same["best_third_kept"] == 1.0 and same["full_best_kept"]
    assert abs(noise["spearman"]) < 0.4 and noise["spearman_p"] > 0.05
    assert out["median_wall_seconds"] == {"0.125": 1.0, "0.5": 4.0, "1.0": 8.0}
