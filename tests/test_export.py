"""Export, apply and verify, on the result of a real (tiny) study."""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import rocksdict

from objectives.dbbench import probe, release_builds
from tests.conftest import TINY, fast
from tuner import apply
from tuner.options_file import encode, lookup, parse_options
from tuner.outputs import verify
from tuner.summary import BestTrial, Summary

pytestmark = pytest.mark.dbbench
SPACE = """
[parameters.subcompactions]
type = "int"
low = 1
high = 4
options_key = "DBOptions.max_subcompactions"
[parameters.max_background_jobs]
type = "int"
low = 2
high = 6
options_key = "DBOptions.max_background_jobs"
[parameters.write_buffer_size]
type = "int"
low = "256 * KiB"
high = "2 * MiB"
options_key = "CFOptions.write_buffer_size"
[parameters.max_write_buffer_number]
type = "int"
low = 3
high = 6
options_key = "CFOptions.max_write_buffer_number"
[parameters.min_write_buffer_number_to_merge]
type = "int"
low = 1
high = 2
options_key = "CFOptions.min_write_buffer_number_to_merge"
[parameters.cache_size]
type = "int"
low = "8 * MiB"
high = "32 * MiB"
options_key = "TableOptions/BlockBasedTable.block_cache"
[parameters.bloom_bits]
type = "int"
low = 6
high = 14
options_key = "TableOptions/BlockBasedTable.filter_policy"
[parameters.compression_type]
type = "categorical"
choices = ["zstd"]
options_key = "CFOptions.compression"
[parameters.compression_level]
type = "int"
low = 2
high = 9
when = { compression_type = "zstd" }
options_key = "CFOptions.compression_opts.level"
[parameters.compaction_style]
type = "categorical"
choices = [1]
"""
KEYS = {"subcompactions": "DBOptions.max_subcompactions", "max_background_jobs": "DBOptions.max_background_jobs",
        "write_buffer_size": "CFOptions.write_buffer_size", "max_write_buffer_number": "CFOptions.max_write_buffer_number",
        "min_write_buffer_number_to_merge": "CFOptions.min_write_buffer_number_to_merge",
        "compression_type": "CFOptions.compression", "compression_level": "CFOptions.compression_opts.level",
        "compaction_style": "CFOptions.compaction_style"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tuner.cli", *fast(args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("export")
    (root / "space.toml").write_text(SPACE)
    # rocksdict 0.3.29's RocksDB cannot open format_version 7, 11.x's library default: the round trip
    # through it is checked on 7.8.3's pinned defaults (format 5), which every version it has can open
    # --no-starts: the defaults (snappy) do not run as a trial, so the space is not widened to hold them
    # and every trial, the best among them, is a zstd one with a level
    r = cli("tune", "--workload", "fillrandom", "--scale", str(TINY), "--space", str(root / "space.toml"),
            "--trials", "2", "--sampler", "random", "--seed", "5", "--out", str(root / "out"),
            "--defaults", "db_bench-7.8.3", "--no-starts")
    assert r.returncode == 0, r.stderr
    return root / "out" / "summary.json"


def _db_options(options: rocksdict.Options, path: Path) -> dict:
    options.create_if_missing(True)
    db = rocksdict.Rdict(str(path), options)
    db[b"k"] = b"v"
    db.close()
    return parse_options(Path(sorted(glob.glob(f"{path}/OPTIONS-*"))[-1]).read_text())


def _assert_tuned_values(sections: dict, params: dict) -> None:
    for name, key in KEYS.items():
        assert lookup(sections, key) == encode(key, params[name]), name
    # RocksDB 9.x writes a filter made through the API as "bloomfilter" without its bits per key
    assert (lookup(sections, "TableOptions/BlockBasedTable.filter_policy") or "").startswith("bloomfilter")


def _best(study: Path) -> BestTrial:
    best = Summary.load(study).best
    assert best is not None
    return best


def test_options_export_round_trips_through_rocksdict_and_db_bench(study, tmp_path):
    params = _best(study).params
    assert params["compression_type"] == "zstd" and "compression_level" in params
    out = tmp_path / "best.ini"
    assert cli("export", "--summary", str(study), "--format", "options", "--output", str(out)).returncode == 0
    sections = parse_options(out.read_text())
    for name, key in KEYS.items():
        assert lookup(sections, key) == encode(key, params[name]), name
    assert f"block_cache={params['cache_size']}" in out.read_text()
    r = cli("verify", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "with --options_file: accepted" in r.stdout and r.stdout.rstrip().endswith("verified")
    assert f"bloomfilter:{params['bloom_bits']}:false" in r.stdout  # read back with its bits


def test_python_export_executes_and_yields_the_same_values(study, tmp_path):
    params = _best(study).params
    code = cli("export", "--summary", str(study), "--format", "python").stdout
    namespace: dict = {}
    exec(compile(code, "exported.py", "exec"), namespace)
    _assert_tuned_values(_db_options(namespace["options"], tmp_path / "db"), params)


def test_apply_sets_the_same_values(study, tmp_path):
    params = _best(study).params
    _assert_tuned_values(_db_options(apply(params, rocksdict.Options()), tmp_path / "db"), params)


def test_flags_export_runs_in_db_bench(study, tmp_path, db_bench):
    flags = cli("export", "--summary", str(study), "--format", "flags").stdout.split()
    assert flags == [f"--{k}={v}" for k, v in _best(study).flags.items()]
    run = subprocess.run([db_bench.path, *flags, "--benchmarks=fillrandom", "--num=1000",
                          f"--db={tmp_path / 'db'}", "--progress_reports=false"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_bad_input(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({"best": None}))
    r = cli("export", "--summary", str(tmp_path / "summary.json"))
    assert r.returncode == 2 and "no best configuration" in r.stderr
    r = cli("verify", str(tmp_path / "missing.ini"))
    assert r.returncode == 2 and "no such file" in r.stderr
    (tmp_path / "bad.ini").write_text("[DBOptions]\n  max_background_jobs=lots\n")
    r = cli("verify", str(tmp_path / "bad.ini"))
    assert r.returncode == 2 and "RocksDB cannot load it" in r.stderr


def test_every_default_parameter_has_a_rocksdict_mapping():
    from search_spaces import load_space
    from search_spaces.catalogue import catalogue

    assert not [p.name for p in load_space("default").parameters if catalogue()[p.name].rocksdict is None]


@pytest.mark.release_build
def test_verify_says_in_one_line_when_rocksdict_cannot_open_a_newer_versions_file(tmp_path):
    """An OPTIONS file of RocksDB 11.x (format_version 7), made by the 11.x release build `make test`
    builds, is beyond rocksdict 0.3.29's RocksDB: verify says so in one line naming the version, not
    with a traceback."""
    builds = [db for db in map(probe, release_builds()) if int(db.version.split(".")[0]) >= 11]
    assert builds, "no 11.x release build: make db_bench ROCKSDB_VERSION=11.8"
    db_bench = builds[0]
    run = subprocess.run([db_bench.path, "--benchmarks=fillrandom", "--num=100", f"--db={tmp_path / 'db'}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    options = Path(sorted(glob.glob(f"{tmp_path / 'db'}/OPTIONS-*"))[-1])
    assert "format_version=7" in options.read_text()
    r = cli("verify", str(options))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert "rocksdict's RocksDB cannot open a DB with it" in line and f"from RocksDB {db_bench.version}" in line


def test_export_gives_the_answer_and_best_the_configuration_it_kept_the_defaults_over(tmp_path):
    """make tune at 8e62c3f kept the defaults over trial 59 (its recorded summary and OPTIONS.ini): export's flags are
    none to set, with a note saying why; --best exports trial 59's, saying it is not recommended; its OPTIONS file
    is not kept, so --best --format options is refused in one line."""
    record = Path(__file__).parents[1] / "experiments/default_job/results/default-job-cores-11.8.1-2026-12-05"
    for name in ("summary.json", "OPTIONS.ini"):
        (tmp_path / name).write_text((record / name).read_text())
    summary = str(tmp_path / "summary.json")
    kept = cli("export", "--summary", summary, "--format", "flags")
    assert kept.returncode == 0 and kept.stdout == ""
    assert kept.stderr.startswith("note: the answer keeps rocksdb-default: nothing to set (trial 59 beat") and \
        "--best exports trial 59" in kept.stderr
    options = cli("export", "--summary", summary)
    assert options.returncode == 0 and options.stdout == (record / "OPTIONS.ini").read_text()
    best = cli("export", "--summary", summary, "--format", "flags", "--best")
    assert best.returncode == 0 and "--subcompactions=2\n" in best.stdout and "--compression_type=snappy\n" in best.stdout
    assert "not recommend" in best.stderr
    refused = cli("export", "--summary", summary, "--best")
    assert refused.returncode != 0 and refused.stderr.strip().splitlines()[-1].startswith(
        "rocksdb-tuner: error: --format options: no OPTIONS.ini next to the summary for this configuration")
    unkept = replace(Summary.load(tmp_path / "summary.json"), answer=None)  # as before summaries kept an answer
    (tmp_path / "summary.json").write_text(json.dumps(unkept.to_dict()))
    unanswered = cli("export", "--summary", summary, "--format", "flags")
    assert unanswered.returncode == 0 and unanswered.stdout == best.stdout and unanswered.stderr == ""


def test_verify_checks_every_catalogued_option_not_only_the_default_spaces():
    """An answer of a study at a rate sets the service space's options: verify reads each of them back
    (here from a 9.11.2 study's answer, which rocksdict's RocksDB opens), the default space's too."""
    answer = Path(__file__).resolve().parents[1] / "experiments/default_job/results/default-job-9.11.2-2026-11-28/OPTIONS.ini"
    checks, verdict, _ = verify(answer)
    checked = {c.key: c for c in checks}
    for key in ("CFOptions.level0_slowdown_writes_trigger", "CFOptions.soft_pending_compaction_bytes_limit",
                "DBOptions.delayed_write_rate", "DBOptions.max_background_jobs", "CFOptions.write_buffer_size"):
        assert checked[key].ok and checked[key].read_back is not None, key
    assert verdict == "not run" and all(c.ok for c in checks)
