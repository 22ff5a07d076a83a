"""Shared fixtures. Tests run the real db_bench (installed by `make test`) on tiny workloads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from objectives.dbbench import ENV_VAR, DbBench, probe
from objectives.memory import Cgroups, MemoryLimitError
from search_spaces import Context
from tuner.summary import Summary

DATA = Path(__file__).with_name("data")
TINY = 0.02  # --scale for test studies: 20k keys, well under a second per fillrandom trial

# A shell starts a background job (`pytest ... &`) with SIGINT ignored, and an ignored signal stays
# ignored across exec: the tuner processes the Ctrl-C tests interrupt would not see it. A handled
# signal is reset to the default on exec, so handling it here gives the children a normal Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


CHECKOUT = Path(__file__).resolve().parents[1]
_NOT_OURS = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache"}  # the linters' caches: make lint's


def _files(root: Path) -> dict[str, tuple[float, int]]:
    """Every file of the checkout (but .git, .venv, bytecode, the linters' caches) with its mtime and size."""
    found = {}
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _NOT_OURS]
        for name in names:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            found[os.path.relpath(path, root)] = (st.st_mtime, st.st_size)
    return found


@pytest.fixture(scope="session", autouse=True)
def session_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Before any fixture of any scope: the tests run in a temporary directory and track in a
    temporary MLflow store, so a study never lands in the user's ./mlruns or runs/. Afterwards the
    checkout must be as it was: no test writes into it."""
    before = _files(CHECKOUT)
    home = tmp_path_factory.mktemp("session")
    store = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"
    saved = {k: os.environ.get(k) for k in ("MLFLOW_TRACKING_URI",)}
    cwd = os.getcwd()
    os.environ["MLFLOW_TRACKING_URI"] = store
    os.chdir(home)
    yield store
    os.chdir(cwd)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    after = _files(CHECKOUT)
    changed = sorted(k for k in after if before.get(k) != after[k]) + sorted(set(before) - set(after))
    assert not changed, f"the tests wrote into the checkout {CHECKOUT}: {changed[:10]}"


# Set for a test marked `tracked`: the `tune` command lines of :func:`fast` keep MLflow tracking on.
TRACKED = "ROCKSDB_TUNER_TESTS_TRACKED"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session_store: str,
             request: pytest.FixtureRequest) -> None:
    """Each test runs in its own directory (the default ``mlruns/`` store lands there, never in the
    checkout), and studies it tracks go to one MLflow store per session unless the test says otherwise."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", session_store)
    if request.node.get_closest_marker("tracked"):
        monkeypatch.setenv(TRACKED, "1")
    else:
        monkeypatch.delenv(TRACKED, raising=False)


RUNS_DB_BENCH = ("dbbench", "ray", "faults", "release_build")  # markers of tests that may run db_bench
UNMARKED = "/nonexistent/a-test-that-runs-db_bench-is-marked-dbbench/db_bench"


@pytest.fixture(autouse=True)
def db_bench_only_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test without one of RUNS_DB_BENCH finds no db_bench ($ROCKSDB_TUNER_DB_BENCH leads discovery),
    so ``-m "not dbbench and not ray and not faults"`` selects exactly the tests that need none."""
    if not any(request.node.get_closest_marker(name) for name in RUNS_DB_BENCH):
        monkeypatch.setenv(ENV_VAR, UNMARKED)


@pytest.fixture(scope="session")
def db_bench() -> DbBench:
    return probe()


@pytest.fixture(scope="session")
def host() -> Context:
    return Context.of_host()


def need_memory_cgroup() -> None:
    """Skips a test that runs within a memory limit on a host without a usable memory cgroup; fails it
    under CI (``$CI`` set, as `.ci/run` sets it): there a skip would pass the suite untested."""
    try:
        Cgroups.detect()
    except MemoryLimitError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI: no usable memory cgroup here, so the memory-limit tests cannot run: {exc}")
        pytest.skip(f"no usable memory cgroup here: {exc}")


@pytest.fixture
def memory_cgroup() -> None:
    """:func:`need_memory_cgroup` for a test that runs within a memory limit."""
    need_memory_cgroup()


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def fast(args: list[str] | tuple[str, ...], drain: bool = False, revalidate: bool = False) -> list[str]:
    """A `tune` command line without what costs time unless it is the test's subject: the drain after
    each phase (a flush and waitforcompaction per phase: a fraction of a second on tiny loads with the
    patched release build, at least 5 s with Debian's 7.8.3 or an unpatched 9.x), the re-validation, and
    MLflow tracking (importing MLflow and opening its store: docs/reliability.md) unless
    the test is marked `tracked` or names its own store (--mlflow-uri)."""
    args = list(args)
    if "tune" not in args[:1]:
        return args
    if not drain and "--no-drain" not in args:
        args.append("--no-drain")
    if not revalidate and "--revalidate" not in args:
        args += ["--revalidate", "0"]
    if os.environ.get(TRACKED) != "1" and not {"--no-mlflow", "--mlflow-uri"} & set(args):
        args.append("--no-mlflow")
    return args


def leftovers(work_dir: Path) -> list[str]:
    """Trial directories the runner left behind in a work dir."""
    return [p for p in os.listdir(work_dir) if p.startswith("rocksdb-tuner-")]


def first_measured(out: Path) -> Path:
    """A study's first trial directory that holds a measured run (its DB's OPTIONS file); a proposal
    rejected by a constraint has none."""
    return next(d for d in sorted((out / "trials").iterdir()) if (d / "OPTIONS").is_file())


def summary_of(out: Path) -> Summary:
    """The summary.json a study wrote in ``out``, typed: tests read its attributes, not its keys."""
    return Summary.load(out / "summary.json")


def printed_summary(run: subprocess.CompletedProcess) -> Summary:
    """The summary ``tune --json`` printed on stdout, typed."""
    return Summary.from_dict(json.loads(run.stdout), "tune --json")
