"""Shared fixtures. Tests run the real db_bench (installed by `make test`) on tiny workloads."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from objectives.dbbench import DbBench, probe
from search_spaces import Context

DATA = Path(__file__).with_name("data")
TINY = 0.02  # --scale for test studies: 20k keys, well under a second per fillrandom trial

# A shell starts a background job (`pytest ... &`) with SIGINT ignored, and an ignored signal stays
# ignored across exec: the tuner processes the Ctrl-C tests interrupt would not see it. A handled
# signal is reset to the default on exec, so handling it here gives the children a normal Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def session_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session_store: str) -> None:
    """Each test runs in its own directory (the default ``mlruns/`` store lands there, never in the
    checkout), and studies are tracked in one MLflow store per session unless a test says otherwise."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", session_store)


@pytest.fixture(scope="session")
def db_bench() -> DbBench:
    return probe()


@pytest.fixture(scope="session")
def host() -> Context:
    return Context.of_host()


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def leftovers(work_dir: Path) -> list[str]:
    """Trial directories the runner left behind in a work dir."""
    return [p for p in os.listdir(work_dir) if p.startswith("rocksdb-tuner-")]
