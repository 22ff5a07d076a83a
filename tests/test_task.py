"""A remote executor's worker (tuner.executors._task): a run's logs live in a marked directory of the
node's work dir, so that what a killed worker leaves is removed by the node's next run, or at the
study's end, and nothing the tuner did not make."""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from objectives import workdir
from objectives.contract import IntervalObserver, Measurement, Task
from tuner.backends import Backend, Config, Setup
from tuner.executors import TaskSpec, measure_task
from tuner.executors._task import LOGS_PREFIX, remove_node_copies
from tuner.model import ExecutionConfig


class Logger(Backend):
    """Writes a log line, then, for a configuration with ``hang``, says so in ``running`` and waits to be killed."""

    name = "logger"
    running: ClassVar[Path]

    def _measure(self, config: Config, log_dir: Path, repeats: int, observer: IntervalObserver | None,
                 workload: Task | None) -> Measurement:
        (log_dir / "run.log").write_text("measured\n")
        if config.values().get("hang"):
            self.running.write_text(str(log_dir))
            time.sleep(60)
        return Measurement({"ops_per_sec": 1.0}, [], "", [])


def _task(work_dir: Path, hang: bool = False) -> dict[str, Any]:
    spec = TaskSpec(Logger, Setup(work_dir, 60.0, 1), Config.of({"hang": True} if hang else {}), 1, None, 1,
                    ExecutionConfig(work_dir=work_dir))
    return measure_task(spec, {"node_id": "this process"})


def _killed_mid_run(work_dir: Path) -> Path:
    """A worker killed (SIGKILL) while its run logs: the log directory it leaves."""
    Logger.running.unlink(missing_ok=True)
    worker = multiprocessing.get_context("fork").Process(target=_task, args=(work_dir, True))
    worker.start()
    deadline = time.monotonic() + 30
    while not Logger.running.exists():
        assert time.monotonic() < deadline and worker.is_alive(), "the worker did not start its run"
        time.sleep(0.05)
    os.kill(worker.pid or 0, signal.SIGKILL)
    worker.join()
    return Path(Logger.running.read_text())


def test_a_killed_workers_logs_are_removed_by_the_next_run_and_at_the_studys_end(tmp_path, monkeypatch):
    monkeypatch.setattr(Logger, "running", tmp_path / "running", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the core leases' lock files, and formerly the logs
    (tmp_path / "tmp").mkdir()
    work_dir = tmp_path / "work"
    work_dir.mkdir()
    workdir.prepare(work_dir)  # the tuner's work dir, where another's directory may stand
    theirs = work_dir / f"{LOGS_PREFIX}not-the-tuners"  # unmarked: kept whatever its name
    theirs.mkdir()

    left = _killed_mid_run(work_dir)
    assert left.parent == work_dir.resolve() and left.name.startswith(LOGS_PREFIX) and (left / "run.log").is_file()
    result = _task(work_dir)  # the node's next run
    assert result["ok"] and result["logs"] == {"run.log": b"measured\n"}
    assert sorted(p.name for p in work_dir.iterdir() if not p.name.startswith(".")) == [theirs.name]

    left = _killed_mid_run(work_dir)
    assert left.is_dir()
    assert remove_node_copies(ExecutionConfig(work_dir=work_dir), []) == []  # the study's end, on the node
    assert not left.exists() and theirs.is_dir()
    assert not list((tmp_path / "tmp").glob("rocksdb-tuner-*"))
