"""db_bench discovery: flag, env, release build from `make db_bench`, PATH; version and build kind."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from objectives import dbbench
from objectives.dbbench import DbBenchError, locate, probe, release_builds, version_matches

pytestmark = pytest.mark.dbbench


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(dbbench, "CACHE_DIR", tmp_path)
    monkeypatch.delenv(dbbench.ENV_VAR, raising=False)
    return tmp_path


def _fake_build(cache, version):
    path = cache / f"{version}-release" / "db_bench"
    path.parent.mkdir()
    path.symlink_to("/usr/bin/db_bench")
    return path


def test_discovery_order(cache, monkeypatch):
    assert locate() == ("/usr/bin/db_bench", "PATH")
    older, newer = _fake_build(cache, "7.8.3"), _fake_build(cache, "10.4.0")
    assert release_builds() == [newer, older]
    assert locate() == (str(newer), "release build made by 'make db_bench'")
    monkeypatch.setenv(dbbench.ENV_VAR, "/usr/bin/db_bench")
    assert locate() == ("/usr/bin/db_bench", dbbench.ENV_VAR)
    assert locate("/usr/bin/db_bench") == ("/usr/bin/db_bench", "--db-bench")
    monkeypatch.setenv(dbbench.ENV_VAR, "/nonexistent")
    with pytest.raises(DbBenchError, match="ROCKSDB_TUNER_DB_BENCH: /nonexistent is not an executable file"):
        locate()


def test_debian_build_is_reported_as_assertion_build():
    db = probe("/usr/bin/db_bench")
    assert db.version == "7.8.3" and db.assertions and "subcompactions" in db.flags


def test_missing_flag_is_named(db_bench):
    with pytest.raises(DbBenchError, match=r"does not support --turbo_mode \(needed by the study\)"):
        db_bench.check_flags(["subcompactions", "turbo_mode"])


@pytest.mark.release_build
def test_make_db_bench_built_a_release_build_and_doctor_prefers_it():
    """make db_bench built a stripped release db_bench of ROCKSDB_VERSION; doctor prefers the newest
    release build and lists every build with its version."""
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    wanted = re.search(r"^ROCKSDB_VERSION \?= (\S+)", makefile, re.MULTILINE)[1]
    builds = release_builds()
    (build,) = [b for b in builds if version_matches(b.parent.name[: -len("-release")], wanted)]
    db = probe(build)
    assert not db.assertions and build.parent.name == f"{db.version}-release"
    assert b".debug_info" not in build.read_bytes()  # stripped
    assert json.loads((build.parent / "BUILD_INFO.json").read_text())["version"] == db.version
    doctor = subprocess.run([sys.executable, "-m", "tuner.cli", "doctor"], capture_output=True, text=True)
    assert f"db_bench:     {builds[0]} (found via release build made by 'make db_bench'" in doctor.stdout
    assert "build:        release" in doctor.stdout
    for other in builds:
        assert f"{other.parent.name[: -len('-release')]:<9} release" in doctor.stdout and str(other) in doctor.stdout
    assert "assertions (debug checks on, slower)   /usr/bin/db_bench (PATH)" in doctor.stdout
