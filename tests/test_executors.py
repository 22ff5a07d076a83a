"""Executors are plug-ins (tuner.executors): a new one is a class and a registration line, and the
worker's side of a remote executor (TaskSpec, measure_task, outcome_of) serves any of them, not only Ray."""

from __future__ import annotations

import concurrent.futures
import os

import optuna
import pytest

from tests.conftest import TINY
from tuner import tune
from tuner.backends import Backend
from tuner.executors import EXECUTORS, Job, Outcome, Slot, TaskSpec, measure_task, outcome_of
from tuner.model import ExecutionConfig, TuneConfig, UsageError
from tuner.observers import SilentProgress
from tuner.summary import SlotInfo, Summary
from tuner.trials import TrialRecord

pytestmark = pytest.mark.dbbench


def _in_worker(spec: TaskSpec) -> dict:
    """The task, run in a worker process, which names itself the node."""
    return measure_task(spec, {"node_id": f"process-of-{os.getpid()}"})


class Processes:
    """Jobs in two worker processes of this host, each pinned to a core: a stand-in for a batch
    system's executor (Slurm, Kubernetes), written against the protocol and the worker's side."""

    remote = True

    def __init__(self, execution: ExecutionConfig, found, note):
        self.execution = execution
        self.slots = 2
        self.pool = concurrent.futures.ProcessPoolExecutor(self.slots)
        self.running: dict[concurrent.futures.Future, Job] = {}
        self.backend: Backend | None = None

    @classmethod
    def check(cls, config: TuneConfig) -> None:
        if config.search.pruner != "none":
            raise UsageError("--pruner: not with --executor processes")

    def start(self) -> Slot:
        return Slot(1, 1 << 30, pinned=True)

    def bind(self, backend: Backend) -> None:
        self.backend = backend

    def submit(self, job: Job) -> None:
        assert self.backend is not None, "bind() comes first"
        spec = TaskSpec.of(job, self.backend, 1, self.execution)
        self.running[self.pool.submit(_in_worker, spec)] = job

    def wait(self, timeout: float) -> list[Outcome]:
        done, _ = concurrent.futures.wait(list(self.running), timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return [outcome_of(self.running.pop(f), f.result(), None) for f in done]

    def cancel(self) -> None:
        self.running.clear()

    def describe(self) -> str | None:
        return "2 trials at once in worker processes"

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


def test_a_new_executor_is_one_class_and_a_registration_line(tmp_path, monkeypatch, work_dir):
    monkeypatch.setitem(EXECUTORS, "processes", Processes)  # the registration line
    result = tune(executor="processes", workload="fillrandom", scale=TINY, trials=4, sampler="random", seed=3,
                  out=tmp_path / "o", work_dir=work_dir, mlflow=False, plots=False, revalidate=0, drain=False,
                  progress=SilentProgress())
    summary = result.summary
    assert summary.trials.complete >= 4 and summary.slot == SlotInfo(cores=1, ram_bytes=1 << 30, pinned=True)
    assert summary.study is not None and summary.storage is not None
    study = optuna.load_study(study_name=summary.study, storage=summary.storage)
    measured = [t for t in study.trials if TrialRecord.of(t).node is not None]
    nodes = [n for t in measured if (n := TrialRecord.of(t).node) is not None]
    assert nodes and all(str(n.node_id).startswith("process-of-") and len(n.cores_used or []) == 1 for n in nodes)
    assert len({n.node_id for n in nodes}) == 2  # both worker processes measured
    for t in measured:  # the workers' logs came back to the driver, the OPTIONS they ran with beside them
        logs = tmp_path / "o" / "trials" / f"{t.number:04d}"
        assert (logs / "OPTIONS").is_file() and any(logs.glob("*.stdout")), sorted(logs.iterdir())
    with pytest.raises(UsageError, match="--pruner: not with --executor processes"):
        tune(executor="processes", pruner="median", trials=1, out=tmp_path / "p", mlflow=False)
    with pytest.raises(UsageError, match=r"--executor: unknown 'slurm' \(choose from local, ray, processes\)"):
        tune(executor="slurm", trials=1, out=tmp_path / "q", mlflow=False)
    assert not (tmp_path / "p").exists() and not (tmp_path / "q").exists()
    assert Summary.load(tmp_path / "o" / "summary.json").study == summary.study
