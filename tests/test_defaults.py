"""Each release build made by `make db_bench`: its version and source recorded, every flag the tuner
passes accepted, and its runs on what an application gets from that version's library (the OPTIONS
and LOG of a DB that objectives/build/library_defaults.cc opened with default options)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from objectives.dbbench import probe, release_builds
from objectives.defaults import LIBRARY, PINNED, PROBE, defaults_of
from objectives.options_ini import parse_options
from objectives.runner import RUNNER_FLAGS
from objectives.workloads import load_workload, preset_names
from search_spaces import load_space
from search_spaces.catalogue import catalogue

pytestmark = [pytest.mark.dbbench, pytest.mark.release_build]
BUILDS = release_builds()


def _options(db: Path) -> dict[str, str]:
    newest = max(db.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1]))
    return {f"{section}.{key}": value for section, values in parse_options(newest.read_text()).items()
            for key, value in values.items()}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


@pytest.mark.parametrize("build", BUILDS, ids=[b.parent.name for b in BUILDS])
def test_a_release_build_records_its_source_and_accepts_every_flag_the_tuner_passes(build: Path):
    db = probe(build)
    assert build.parent.name == f"{db.version}-release" and not db.assertions
    info = json.loads((build.parent / "BUILD_INFO.json").read_text())
    assert info["version"] == db.version and db.version in info["package"]
    assert re.fullmatch(r"[0-9a-f]{64}", info["source_sha256"]), info
    assert "waitforcompaction-no-sleep" in info["patches"] or _version(db.version) < (8, 7)
    passed = set(RUNNER_FLAGS) | set(defaults_of(db).flags) | {p.flag for p in load_space("default").parameters}
    passed |= {o.flag for o in catalogue().values() if o.role == "shape"}
    for workload in map(load_workload, preset_names()):
        passed |= workload.all_flags() | set(workload.preload.flags if workload.preload else ())
    db.check_flags(sorted(passed), where="tuner")
    assert set(PINNED) <= db.flags  # --defaults db_bench-7.8.3 runs on it too


@pytest.mark.parametrize("build", BUILDS, ids=[b.parent.name for b in BUILDS])
def test_a_release_build_runs_on_its_library_defaults(build: Path, tmp_path: Path):
    """db_bench given the library flags writes the OPTIONS of a DB the library opened with default
    options, but for the options it names as unset; from 8.4 the level sizes are dynamic."""
    db = probe(build)
    defaults = defaults_of(db)
    assert defaults.mode == LIBRARY and db.version == defaults.version
    subprocess.run([str(build.parent / PROBE), str(tmp_path / "library")], check=True, timeout=60)
    subprocess.run([str(build), "--benchmarks=fillseq", "--num=10", f"--db={tmp_path / 'bench'}",
                    *defaults.command_line().split()],
                   check=True, capture_output=True, timeout=60)
    library, bench = _options(tmp_path / "library"), _options(tmp_path / "bench")
    unset = {line.split(":", 1)[0] for line in defaults.unset}
    paths = {"DBOptions.wal_dir", "DBOptions.db_log_dir", "DBOptions.db_host_id", "DBOptions.db_paths"}
    differ = {k for k in library.keys() | bench.keys() if library.get(k) != bench.get(k)} - paths - unset
    assert not differ, {k: (library.get(k), bench.get(k)) for k in differ}
    dynamic = library["CFOptions.level_compaction_dynamic_level_bytes"]
    assert dynamic == ("true" if _version(db.version) >= (8, 4) else "false")
    if _version(db.version) >= (8, 4):  # db_bench's own default is false in every version
        assert defaults.flags["level_compaction_dynamic_level_bytes"] is True
