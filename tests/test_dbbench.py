"""db_bench discovery: flag, env, release build from `make db_bench`, PATH; version and build kind."""

from __future__ import annotations

import subprocess
import sys

import pytest

from objectives import dbbench
from objectives.dbbench import DbBenchError, locate, probe, release_builds

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
    (build,) = release_builds()[:1]
    db = probe(build)
    assert not db.assertions and db.version == "7.8.3"
    doctor = subprocess.run([sys.executable, "-m", "tuner.cli", "doctor"], capture_output=True, text=True)
    assert f"db_bench:     {build} (found via release build made by 'make db_bench')" in doctor.stdout
    assert "build:        release" in doctor.stdout
