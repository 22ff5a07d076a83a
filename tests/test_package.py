"""The package outside the repository: the wheel, installed (not editable) in a fresh virtualenv,
run from a directory under /tmp. Presets ship as package data; the research (experiments/) does not ship."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, TINY

pytestmark = pytest.mark.dbbench


def _run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout + r.stderr


def _copy_of_checkout(dest: Path) -> Path:
    """The checkout's files (tracked and new, not ignored) copied, so that building writes no
    build/ or *.egg-info into the checkout itself."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=CHECKOUT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (CHECKOUT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, dest / name)
    return dest


def test_the_wheel_installs_and_runs_anywhere(tmp_path):
    dist = tmp_path / "dist"
    source = _copy_of_checkout(tmp_path / "source")
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", dist, source, cwd=tmp_path)
    assert "warning" not in built.lower(), built  # e.g. setuptools' "absent from the packages configuration"
    (wheel,) = dist.glob("rocksdb_tuner-*.whl")
    with zipfile.ZipFile(wheel) as shipped:
        assert "objectives/presets/S2.toml" in shipped.namelist()
        assert not [name for name in shipped.namelist() if name.startswith("experiments/")], "research in the wheel"
    venv = tmp_path / "venv"
    # no pip of its own (this one installs into it) and no bytecode compiled ahead: what runs compiles
    # what it imports; the wheel and its dependencies are installed all the same
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q", "--no-compile", wheel,
         cwd=tmp_path)
    with tempfile.TemporaryDirectory(prefix="rocksdb-tuner-elsewhere-", dir="/tmp") as elsewhere:
        here = Path(elsewhere)
        # bytecode is written (into the venv, under tmp_path) even under make test's PYTHONDONTWRITEBYTECODE:
        # each command after the first imports what the ones before compiled
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
        env.update(PATH=f"{venv / 'bin'}:{env['PATH']}", MLFLOW_TRACKING_URI=f"sqlite:///{here / 'mlflow.db'}")
        where = _run(venv / "bin" / "python", "-c", "import tuner, objectives; print(tuner.__file__, objectives.__file__)",
                     cwd=here, env=env)
        assert str(CHECKOUT) not in where and str(venv) in where, where
        tool = venv / "bin" / "rocksdb-tuner"
        assert "db_bench:" in _run(tool, "doctor", cwd=here, env=env)
        _run(tool, "tune", "--workload", "fillrandom", "--scale", TINY, "--trials", "2", "--seed", "3", "--out", "o",
             "--no-plots", "--no-drain", "--revalidate", "0", "--defaults", "db_bench-7.8.3", cwd=here, env=env)
        assert (here / "o" / "OPTIONS.ini").is_file()
        _run(tool, "export", "--summary", "o/summary.json", "--format", "flags", "--output", "flags.txt", cwd=here, env=env)
        assert "--write_buffer_size=" in (here / "flags.txt").read_text()
        assert "verified" in _run(tool, "verify", "o/OPTIONS.ini", cwd=here, env=env)
