"""The replay objective and the sampler benchmark: a live recording with the real db_bench, and the
committed table of recorded real measurements (experiments/data/sampler-grid.json) as data."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest

from objectives.replay import ReplayError, ReplayTable
from search_spaces import Context, load_space
from tests.conftest import TINY

EXPERIMENTS = Path(__file__).parents[1] / "experiments"


def _script(name: str):  # experiments/ holds scripts, not a package
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_a_recorded_grid_replays_its_real_runs(tmp_path):
    space_file = tmp_path / "space.toml"
    space_file.write_text('[parameters.write_buffer_size]\ntype = "int"\nlow = "1 * MiB"\nhigh = "8 * MiB"\nlog = true\n'
                          'grid = ["1 * MiB", "8 * MiB"]\noptions_key = "CFOptions.write_buffer_size"\n')
    out = tmp_path / "grid.json"
    table = _script("record_grid").record(space_file, "fillrandom", TINY, 2, out)
    assert [len(p["ops_per_sec"]) for p in table["points"]] == [2, 2]
    assert all(ops > 0 for p in table["points"] for ops in p["ops_per_sec"])
    again = _script("record_grid").record(space_file, "fillrandom", TINY, 2, out)  # complete: nothing re-run
    assert again["points"] == table["points"]

    space = load_space(space_file).resolve(Context.of_host())
    replay = ReplayTable.load(out, space)
    mib = 1 << 20
    assert replay.snap({"write_buffer_size": 2 * mib}) == (mib,)  # log scale: 2 MiB is nearer 1 than 8
    assert replay.snap({"write_buffer_size": 4 * mib}) == (8 * mib,)
    rng = random.Random(0)
    runs = {p["params"]["write_buffer_size"]: p["ops_per_sec"] for p in table["points"]}
    assert replay.observe((8 * mib,), rng) in runs[8 * mib]
    assert replay.optimum() == max(sum(r) / 2 for r in runs.values())

    other = tmp_path / "other.toml"
    other.write_text('[parameters.subcompactions]\ntype = "int"\nlow = 1\nhigh = 2\noptions_key = "DBOptions.max_subcompactions"\n')
    with pytest.raises(ReplayError, match="subcompactions"):
        ReplayTable.load(out, load_space(other).resolve(Context.of_host()))


RECORDED = EXPERIMENTS / "data" / "sampler-grid.json"  # committed: recorded real runs


def test_the_recorded_table_covers_the_benchmark_space():
    data = json.loads(RECORDED.read_text())
    assert "not simulated" in data["about"] and data["db_bench"]["version"]
    bench = _script("sampler_benchmark")
    space = load_space(bench.SPACE).resolve(Context.of_host())
    table = ReplayTable.load(RECORDED, space)
    assert len(table.runs) == 216 and all(len(r) >= 2 for r in table.runs.values())


@pytest.mark.parametrize("sampler", ["tpe", "random", "flaml-cfo"])
def test_samplers_search_the_recorded_table(sampler):
    bench = _script("sampler_benchmark")
    space = load_space(bench.SPACE).resolve(Context.of_host())
    table = ReplayTable.load(RECORDED, space)
    proposed = bench.searches()[sampler](space, table, 0, 12)
    reached, regret = bench.score(table, proposed)
    assert len(proposed) == 12 and all(p in table.runs for p in proposed)
    assert regret == sorted(regret, reverse=True) and 0 <= regret[-1] < 1
    assert reached is None or 1 <= reached <= 12
